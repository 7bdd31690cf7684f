"""The exceptions PyTables code catches are the ones hyperslab raises.

Every operation below runs on the same file built by each library, with PyTables as the
oracle: a bad value stored in a row, every kind of write on a file opened ``'r'``, and
nodes used after their file (or the node itself) was closed.  hyperslab must raise
exactly PyTables' exception type, except where PyTables' type is an accident of its
implementation; those differences are listed in :data:`DIFFERENCES` with the reason, and
checked too (so that a change on either side shows up here).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import tables

import hyperslab

LIBS: dict[str, ModuleType] = {"tables": tables, "hyperslab": hyperslab}

Operation = Callable[[Any], Any]


def _build(lib: ModuleType, path: Path) -> None:
    with lib.open_file(path, "w") as f:
        class Record(lib.IsDescription):
            i = lib.Int32Col()
            x = lib.Float64Col()

        table = f.create_table("/", "t", Record)
        table.append([(k, k / 2) for k in range(10)])
        table.cols.x.create_index()
        f.create_array("/", "a", np.arange(5))
        f.create_carray("/", "c", obj=np.arange(10.0), chunkshape=(5,))
        f.create_earray("/", "e", lib.Int64Atom(), (0,), obj=np.arange(5))
        group = f.create_group("/", "g")
        f.create_array(group, "inner", np.arange(3))
        f.root.a.attrs.u = 1


def _row_set(column: str, value: Any) -> Operation:
    def run(f: Any) -> None:
        row = f.root.t.row
        row[column] = value
    return run


def _append_row(f: Any) -> None:
    row = f.root.t.row
    row["i"] = 1
    row.append()
    f.root.t.flush()


def _update_rows(f: Any) -> None:
    for row in f.root.t:
        row["i"] = 3
        row.update()


BAD_VALUES: dict[str, Operation] = {
    "row['i'] = 'x'": _row_set("i", "x"),
    "row['i'] = '1.5'": _row_set("i", "1.5"),
    "row['x'] = 'x'": _row_set("x", "x"),
    "row['i'] = None": _row_set("i", None),
    "row['i'] = [1, 2]": _row_set("i", [1, 2]),
    "row['i'] = 2**40": _row_set("i", 2**40),
    "row['nope'] = 1": _row_set("nope", 1),
    "array[0] = 'x'": lambda f: f.root.a.__setitem__(0, "x"),
    "array[:2] = '3'": lambda f: f.root.a.__setitem__(slice(0, 2), "3"),
    "array[0] = None": lambda f: f.root.a.__setitem__(0, None),
    "carray[0] = None": lambda f: f.root.c.__setitem__(0, None),
    "array[0] = object()": lambda f: f.root.a.__setitem__(0, object()),
    "array[0] = [1, 2]": lambda f: f.root.a.__setitem__(0, [1, 2]),
    "array[0] = 2**70": lambda f: f.root.a.__setitem__(0, 2**70),
    "earray.append('x')": lambda f: f.root.e.append("x"),
    "earray.append(None)": lambda f: f.root.e.append(None),
    "create_carray without shape": lambda f: f.create_carray("/", "c3", f.root.c.atom),
    "create_earray without shape": lambda f: f.create_earray("/", "e3", f.root.c.atom),
    "create_array without obj": lambda f: f.create_array("/", "a3"),
}

WRITES: dict[str, Operation] = {
    "table append": lambda f: f.root.t.append([(1, 1.0)]),
    "row append and flush": _append_row,
    "row update": _update_rows,
    "modify_rows": lambda f: f.root.t.modify_rows(0, 1, rows=[(1, 1.0)]),
    "modify_column": lambda f: f.root.t.modify_column(0, 1, 1, [5], "i"),
    "modify_coordinates": lambda f: f.root.t.modify_coordinates([0], [(1, 1.0)]),
    "column setitem": lambda f: f.root.t.cols.i.__setitem__(0, 5),
    "table setitem": lambda f: f.root.t.__setitem__(0, (1, 1.0)),
    "remove_rows": lambda f: f.root.t.remove_rows(0, 1),
    "remove_row": lambda f: f.root.t.remove_row(0),
    "table truncate": lambda f: f.root.t.truncate(0),
    "create_index": lambda f: f.root.t.cols.i.create_index(),
    "remove_index": lambda f: f.root.t.cols.x.remove_index(),
    "reindex": lambda f: f.root.t.reindex(),
    "column reindex": lambda f: f.root.t.cols.x.reindex(),
    "array setitem": lambda f: f.root.a.__setitem__(0, 9),
    "carray setitem": lambda f: f.root.c.__setitem__(slice(0, 5), 1.0),
    "earray append": lambda f: f.root.e.append([1]),
    "earray truncate": lambda f: f.root.e.truncate(0),
    "attrs set": lambda f: setattr(f.root.a.attrs, "v", 1),
    "attrs setitem": lambda f: f.root.a.attrs.__setitem__("v", 1),
    "root attrs set": lambda f: setattr(f.root._v_attrs, "v", 1),
    "set_node_attr": lambda f: f.set_node_attr("/a", "v", 1),
    "attrs delete": lambda f: delattr(f.root.a.attrs, "u"),
    "del_node_attr": lambda f: f.del_node_attr("/a", "u"),
    "attrs rename": lambda f: f.root.a.attrs._f_rename("u", "w"),
    "title set": lambda f: setattr(f.root.a, "title", "x"),
    "create_group": lambda f: f.create_group("/", "g2"),
    "create_array": lambda f: f.create_array("/", "a2", np.arange(3)),
    "create_carray": lambda f: f.create_carray("/", "c2", f.root.c.atom, (4,)),
    "create_earray": lambda f: f.create_earray("/", "e2", f.root.c.atom, (0,)),
    "create_table": lambda f: f.create_table("/", "t2", f.root.t.description),
    "remove_node": lambda f: f.remove_node("/a"),
    "leaf remove": lambda f: f.root.a.remove(),
    "group remove": lambda f: f.root.g._f_remove(recursive=True),
    "rename_node": lambda f: f.rename_node("/a", "b"),
    "leaf rename": lambda f: f.root.a.rename("b"),
    "move_node": lambda f: f.move_node("/a", "/g"),
    "leaf move": lambda f: f.root.a.move("/g"),
    "copy_node": lambda f: f.copy_node("/a", "/g"),
    "leaf copy": lambda f: f.root.a.copy("/g", "a3"),
    "file flush": lambda f: f.flush(),
    "leaf flush": lambda f: f.root.t.flush(),
}

# Used after the file was closed: ``n`` holds the nodes (and an attribute set, columns)
# taken while it was open.
CLOSED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "table read": lambda n: n["t"].read(),
    "table getitem": lambda n: n["t"][0],
    "table nrows": lambda n: n["t"].nrows,
    "table len": lambda n: len(n["t"]),
    "table shape": lambda n: n["t"].shape,
    "table iteration": lambda n: list(n["t"]),
    "table where": lambda n: list(n["t"].where("i > 2")),
    "table read_where": lambda n: n["t"].read_where("i > 2"),
    "table col": lambda n: n["t"].col("i"),
    "table append": lambda n: n["t"].append([(1, 1.0)]),
    "table modify_rows": lambda n: n["t"].modify_rows(0, 1, rows=[(1, 1.0)]),
    "table row": lambda n: n["t"].row,
    "table description": lambda n: n["t"].description,
    "table colnames": lambda n: n["t"].colnames,
    "table attrs": lambda n: n["t"].attrs,
    "table _v_attrs": lambda n: n["t"]._v_attrs,
    "table flush": lambda n: n["t"].flush(),
    "table repr": lambda n: repr(n["t"]),
    "table str": lambda n: str(n["t"]),
    "columns taken before": lambda n: n["cols"].i[:],
    "column taken before": lambda n: n["col"][:],
    "array read": lambda n: n["a"].read(),
    "array getitem": lambda n: n["a"][0],
    "array setitem": lambda n: n["a"].__setitem__(0, 1),
    "array shape": lambda n: n["a"].shape,
    "array iteration": lambda n: list(n["a"]),
    "earray append": lambda n: n["e"].append([1]),
    "array repr": lambda n: repr(n["a"]),
    "array str": lambda n: str(n["a"]),
    "array name": lambda n: n["a"].name,
    "array title": lambda n: n["a"].title,
    "array close": lambda n: n["a"].close(),
    "attrs taken before: get": lambda n: n["attrs"].u,
    "attrs taken before: set": lambda n: setattr(n["attrs"], "v", 1),
    "attrs taken before: names": lambda n: n["attrs"]._v_attrnames,
    "attrs taken before: contains": lambda n: "u" in n["attrs"],
    "group iteration": lambda n: list(n["g"]),
    "group _v_children": lambda n: n["g"]._v_children,
    "group natural naming": lambda n: n["g"].inner,
    "group repr": lambda n: repr(n["g"]),
    "file root": lambda n: n["f"].root,
    "file get_node": lambda n: n["f"].get_node("/a"),
    "file walk_nodes": lambda n: list(n["f"].walk_nodes("/")),
    "file create_group": lambda n: n["f"].create_group("/", "x"),
    "file flush": lambda n: n["f"].flush(),
    "file repr": lambda n: repr(n["f"]),
}

# Used after the node itself was closed (the file stays open).
NODE_CLOSED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "table read": lambda n: n["t"].read(),
    "table append": lambda n: n["t"].append([(1, 1.0)]),
    "array read": lambda n: n["a"][:],
    "array attrs": lambda n: n["a"].attrs,
    "array title set": lambda n: setattr(n["a"], "title", "x"),
    "array setitem": lambda n: n["a"].__setitem__(0, 1),
    "array repr": lambda n: repr(n["a"]),
    "array str": lambda n: str(n["a"]),
}

_PYTABLES_DELETES = ("PyTables deletes a closed node's instance attributes: what they held "
                     "raises AttributeError; hyperslab says ClosedNodeError (a ValueError)")
_HDF5_REFUSES = ("PyTables lets HDF5 refuse the write (HDF5ExtError, or OSError from its row "
                 "buffer); hyperslab checks the mode first, as PyTables does for most writes")

DIFFERENCES: dict[str, tuple[str, str, str]] = {
    # operation: (PyTables' outcome, hyperslab's, why)
    **{f"read-only: {op}": ("HDF5ExtError", "FileModeError", _HDF5_REFUSES) for op in (
        "modify_rows", "modify_coordinates", "remove_rows", "remove_row", "array setitem",
        "carray setitem")},
    **{f"read-only: {op}": ("OSError", "FileModeError", _HDF5_REFUSES)
       for op in ("row append and flush", "row update")},
    **{f"read-only: {op}": ("ok", "FileModeError",
                            "PyTables' truncate of a read-only file silently does nothing")
       for op in ("table truncate", "earray truncate")},
    **{f"closed file: {op}": ("AttributeError", "ClosedNodeError", _PYTABLES_DELETES)
       for op in ("table nrows", "table len", "table shape", "table iteration", "table where",
                  "table modify_rows", "table row", "table description", "table colnames",
                  "columns taken before", "column taken before", "array shape",
                  "array iteration")},
    **{f"closed file: {op}": ("AttributeError", "ok", _PYTABLES_DELETES + "; hyperslab "
                              "still answers what needs no file")
       for op in ("table flush", "array name", "file root")},
    **{f"closed file: attrs taken before: {op}": (
        "ok", "ClosedNodeError", "PyTables' attribute sets copy every value when made, so "
        "they still answer; hyperslab's read the file") for op in ("get", "names", "contains")},
    "closed file: attrs taken before: set": ("AttributeError", "ClosedNodeError",
                                             _PYTABLES_DELETES),
}


def _outcome(action: Callable[[], Any]) -> str:
    try:
        action()
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def _collect(lib: ModuleType, folder: Path) -> dict[str, str]:
    """Every operation's outcome with ``lib``: ``'ok'`` or the exception's class name."""
    path = folder / f"{lib.__name__}.h5"
    results: dict[str, str] = {}
    _build(lib, path)
    with lib.open_file(path, "a") as f:
        for name, operation in BAD_VALUES.items():
            results[f"bad value: {name}"] = _outcome(lambda op=operation: op(f))
    for name, operation in WRITES.items():
        _build(lib, path)
        with lib.open_file(path, "r") as f:
            results[f"read-only: {name}"] = _outcome(lambda op=operation: op(f))
    _build(lib, path)
    f = lib.open_file(path, "a")
    nodes = {"f": f, "t": f.root.t, "a": f.root.a, "e": f.root.e, "g": f.root.g,
             "attrs": f.root.a.attrs, "cols": f.root.t.cols, "col": f.root.t.cols.i}
    f.close()
    for name, use in CLOSED.items():
        results[f"closed file: {name}"] = _outcome(lambda use=use: use(nodes))
    with lib.open_file(path, "a") as f:
        nodes = {"t": f.root.t, "a": f.root.a}
        nodes["t"].close()
        nodes["a"].close()
        for name, use in NODE_CLOSED.items():
            results[f"closed node: {name}"] = _outcome(lambda use=use: use(nodes))
    return results


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("error_types")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTables' warnings (closing, flavors...)
        yield {name: _collect(lib, folder) for name, lib in LIBS.items()}


ALL = ([f"bad value: {n}" for n in BAD_VALUES] + [f"read-only: {n}" for n in WRITES]
       + [f"closed file: {n}" for n in CLOSED] + [f"closed node: {n}" for n in NODE_CLOSED])


@pytest.mark.parametrize("operation", ALL)
def test_exception_type_is_pytables(outcomes: dict[str, dict[str, str]],
                                    operation: str) -> None:
    pytables, ours = outcomes["tables"][operation], outcomes["hyperslab"][operation]
    if operation in DIFFERENCES:
        expected_pytables, expected_ours, _why = DIFFERENCES[operation]
        assert (pytables, ours) == (expected_pytables, expected_ours)
    else:
        assert ours == pytables


def test_every_write_on_a_read_only_file_is_a_filemodeerror(
        outcomes: dict[str, dict[str, str]]) -> None:
    writes = {n: outcomes["hyperslab"][f"read-only: {n}"] for n in WRITES
              if n not in ("file flush", "leaf flush")}
    assert set(writes.values()) == {"FileModeError"}, writes
    assert outcomes["hyperslab"]["read-only: file flush"] == "ok"  # nothing to write


def test_the_messages_name_what_went_wrong(tmp_path: Path) -> None:
    path = tmp_path / "m.h5"
    _build(hyperslab, path)
    with hyperslab.open_file(path, "a") as f:
        with pytest.raises(ValueError, match=r"value 'x' cannot be stored in field 'i' of "
                                             r"/t \(dtype int32\)"):
            f.root.t.row["i"] = "x"
        table = f.root.t
    with pytest.raises(hyperslab.ClosedNodeError, match="'/t' is closed"):
        table.append([(1, 1.0)])
    assert str(table).startswith("<closed hyperslab.nodes.tables.table.Table at")
