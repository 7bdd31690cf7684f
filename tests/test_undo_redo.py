"""Undo/redo: PyTables' action log, with PyTables and h5py as oracles in both directions.

Files whose log one library wrote are undone and redone by the other; the same actions
write the same ``/_p_transactions`` (groups, attributes, log table layout and rows) in both.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab import Filters, UndoRedoError, UndoRedoWarning
from hyperslab.errors import FileModeError, NodeError

LIBS = {"hyperslab": hyperslab, "pytables": tables}


def _setup(lib: Any, f: Any) -> None:
    """A tree to change: arrays, a group, an indexed table, attributes."""
    f.create_array("/", "keep", [1, 2], "Keep")
    g = f.create_group("/", "g", "G")
    f.create_array(g, "inner", [3], "Inner")
    t = f.create_table("/", "tab", {"a": lib.Int32Col(pos=0), "b": lib.Float64Col(pos=1)},
                       "Tab")
    t.append([(i, i / 2) for i in range(50)])
    t.flush()
    t.cols.a.create_index()
    f.root._v_attrs.x = 1
    f.root.keep.attrs.unit = "m"


def _changes(lib: Any, f: Any) -> None:
    """Every kind of logged action, over three marks, with undos and a forgotten future."""
    f.create_array("/", "a", [1, 2], "A")
    f.root._v_attrs.x = 2
    f.mark("m1")
    f.create_group("/", "h", "H")
    f.move_node("/a", "/h", "b")
    f.rename_node("/g", "g2")
    f.remove_node("/keep")
    f.remove_node("/tab")
    del f.root._v_attrs.x
    f.root.h._v_title = "H2"
    f.mark("m2")
    f.copy_node("/g2", "/", "g3", recursive=True)
    f.copy_node("/h/b", "/g2", "bcopy")
    f.root.g2.inner.attrs.unit = "s"
    f.undo()
    f.undo("m1")
    f.redo("m2")
    f.undo(0)
    f.redo(-1)
    f.undo("m2")
    f.create_group("/", "after")


def _write(lib: Any, path: Path, *, undo_filters: Any = None, root_filters: Any = None) -> None:
    with lib.open_file(path, "w", filters=root_filters) as f:
        _setup(lib, f)
        if undo_filters is None:
            f.enable_undo()
        else:
            f.enable_undo(filters=undo_filters)
        _changes(lib, f)


def _log_layout(path: Path) -> dict[str, Any]:
    """``/_p_transactions`` as h5py reads it: every object's attributes (values and
    types), the log table's layout and rows (index nodes kept with a table: names only)."""
    out: dict[str, Any] = {}
    with h5py.File(path, "r") as h:
        def visit(name: str, obj: Any) -> None:
            if "_i_" in name:  # a kept table's indexes: their own layout is not tested here
                out[name] = type(obj).__name__
                return
            attrs = {k: (repr(v), getattr(v, "dtype", None)) for k, v in obj.attrs.items()}
            entry: dict[str, Any] = {"attrs": attrs, "kind": type(obj).__name__}
            if isinstance(obj, h5py.Dataset):
                entry.update(dtype=obj.dtype, chunks=obj.chunks, compression=obj.compression,
                             opts=obj.compression_opts, shuffle=obj.shuffle,
                             maxshape=obj.maxshape, fill=obj.fillvalue)
                if name.endswith("actionlog"):
                    entry["rows"] = obj[:].tolist()
            out[name] = entry
        h["_p_transactions"].visititems(visit)
        visit("_p_transactions", h["_p_transactions"])
    return out


def _tree(lib: Any, path: Path) -> dict[str, Any]:
    """What a library sees of the visible tree: nodes, titles, user attributes."""
    with lib.open_file(path, "r") as f:
        return {
            n._v_pathname: (type(n).__name__, n._v_title,
                            {k: np.asarray(n._v_attrs[k]).tolist()
                             for k in n._v_attrs._f_list("user")})
            for n in f.walk_nodes("/")
        }


@pytest.mark.parametrize("filters", [None, "none", "root"])
def test_same_log_as_pytables(tmp_path: Path, filters: str | None) -> None:
    """The same actions write the same log, groups and kept nodes in both libraries."""
    results = {}
    for name, lib in LIBS.items():
        path = tmp_path / f"{name}.h5"
        _write(lib, path, undo_filters=lib.Filters(complevel=0) if filters == "none" else None,
               root_filters=lib.Filters(complevel=5) if filters == "root" else None)
        results[name] = (_log_layout(path), _tree(tables, path), _tree(hyperslab, path))
    ours, theirs = results["hyperslab"], results["pytables"]
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert ours[1] == ours[2]  # and hyperslab reads the tree as PyTables does


def _state(f: Any) -> tuple[int, int]:
    return int(f._curmark), int(f._curaction)


@pytest.mark.parametrize("writer", ["hyperslab", "pytables"])
def test_other_library_undoes_and_redoes(tmp_path: Path, writer: str) -> None:
    """A log one library wrote is walked by the other, to the same trees at every mark."""
    reader = "pytables" if writer == "hyperslab" else "hyperslab"
    ref = tmp_path / "ref.h5"
    path = tmp_path / "f.h5"
    trees: dict[Any, Any] = {}
    # The reference: the writer itself walks its log, recording the tree at each mark.
    _write(LIBS[writer], ref)
    for mark in [0, "m1", "m2", -1, "m1", 0]:
        with LIBS[writer].open_file(ref, "a") as f:
            f.goto(mark)
        trees[mark] = _tree(tables, ref)
    _write(LIBS[writer], path)
    for mark in [0, "m1", "m2", -1, "m1", 0]:
        with LIBS[reader].open_file(path, "a") as f:
            assert f.is_undo_enabled()
            f.goto(mark)
            state = _state(f)
        with LIBS[writer].open_file(path, "a") as f:  # the writer takes up where it is
            assert _state(f) == state
        assert _tree(tables, path) == trees[mark]
        assert _tree(hyperslab, path) == trees[mark]


@pytest.mark.parametrize("first", ["hyperslab", "pytables"])
def test_log_shared_between_sessions(tmp_path: Path, first: str) -> None:
    """Sessions of both libraries add to one log; each undoes the other's actions."""
    second = "pytables" if first == "hyperslab" else "hyperslab"
    path = tmp_path / "f.h5"
    with LIBS[first].open_file(path, "w") as f:
        f.create_array("/", "base", [0])
        f.enable_undo()
        f.create_array("/", "one", [1])
        f.root.base.attrs.note = "first"
        f.mark("first")
    with LIBS[second].open_file(path, "a") as f:
        f.create_group("/", "two")
        f.move_node("/one", "/two")
        f.root.base.attrs.note = "second"
        f.mark("second")
        f.undo("first")
        assert "/two" not in f and "/one" in f
        assert f.root.base.attrs.note == "first"
    with LIBS[first].open_file(path, "a") as f:
        assert f.get_current_mark() == 1
        f.redo("second")
        assert "/two/one" in f and "/one" not in f
        assert f.root.base.attrs.note == "second"
        f.undo(0)
        assert sorted(f.root._v_children) == ["base"]
        assert "note" not in f.root.base.attrs
    with LIBS[second].open_file(path, "a") as f:
        f.goto("second")
        assert f.root.two.one.read() == [1]
        assert f.get_current_mark() == 2


# ---------------------------------------------------------------------- behaviour
@pytest.fixture
def f(tmp_path: Path) -> Any:
    with hyperslab.open_file(tmp_path / "b.h5", "w") as h5:
        _setup(hyperslab, h5)
        yield h5


def test_switching(f: Any) -> None:
    assert not f.is_undo_enabled()
    with pytest.raises(UndoRedoError, match="currently disabled"):
        f.mark()
    for call in (f.undo, f.redo, f.get_current_mark):
        with pytest.raises(UndoRedoError, match="currently disabled"):
            call()
    with pytest.raises(UndoRedoError, match="already disabled"):
        f.disable_undo()
    f.enable_undo()
    assert f.is_undo_enabled() and f.get_current_mark() == 0
    assert "/_p_transactions" in f and not f.root._p_transactions._f_isvisible()
    with pytest.raises(UndoRedoError, match="already enabled"):
        f.enable_undo()
    f.create_array("/", "new", [1])
    f.disable_undo()
    assert "/_p_transactions" not in f and "/new" in f
    assert not f.is_undo_enabled()


def test_persistence_and_read_only(tmp_path: Path) -> None:
    path = tmp_path / "p.h5"
    with hyperslab.open_file(path, "w") as f:
        f.enable_undo()
        f.create_array("/", "a", [1])
    with hyperslab.open_file(path, "r") as f:
        assert not f.is_undo_enabled()  # as PyTables: not taken up read-only
        f.enable_undo()  # the log is read
        assert f.get_current_mark() == 0 and f._curaction == 1
        with pytest.raises(FileModeError):
            f.undo()
    with hyperslab.open_file(path, "a") as f:
        assert f.is_undo_enabled()
        f.undo()
        assert "/a" not in f
    with hyperslab.open_file(path, "r+") as f:
        assert f._curaction == 0
        f.redo()
        assert f.root.a.read() == [1]


def test_marks(f: Any) -> None:
    f.enable_undo()
    assert f.mark("one") == 1
    f.create_array("/", "a", [1])
    assert f.mark() == 2
    with pytest.raises(UndoRedoError, match="Name 'one' is already used as a marker name"):
        f.mark("one")
    with pytest.raises(TypeError, match="Only strings are allowed as mark names"):
        f.mark(3)  # type: ignore[arg-type]
    with pytest.raises(UndoRedoError, match="has not been found in the internal marker list"):
        f.undo("nope")
    with pytest.raises(TypeError, match="Parameter mark can only be an integer or a string"):
        f.undo(1.5)  # type: ignore[arg-type]
    with pytest.raises(UndoRedoError, match="is newer than the current mark"):
        f.undo(3)
    f.undo("one")
    assert "/a" not in f and f.get_current_mark() == 1
    with pytest.raises(UndoRedoError, match="is older than the current mark"):
        f.redo(0)
    f.goto(2)
    assert "/a" in f and f.get_current_mark() == 2
    f.goto(0)
    assert f.get_current_mark() == 0
    f.redo()  # up to the next mark only
    assert f.get_current_mark() == 1 and "/a" not in f
    f.goto(-1)
    assert "/a" in f
    f.redo()  # at the end of the log: nothing to do
    assert f.get_current_mark() == 2


def test_new_action_forgets_the_future(f: Any) -> None:
    f.enable_undo()
    f.mark("one")
    f.remove_node("/keep")
    f.mark("two")
    f.create_array("/", "later", [1])
    f.undo("one")
    assert "/keep" in f
    f.create_group("/", "other")  # the removal, mark two and what it kept are forgotten
    assert f._nmarks == 2
    assert "/_p_transactions/t0/m2" not in f
    assert list(f.get_node("/_p_transactions/t0/m1")._v_children) == []
    with pytest.raises(UndoRedoError, match="not been found"):
        f.goto("two")
    assert f.mark("two") == 2  # the name is free again
    f.undo("one")
    assert "/other" not in f and "/keep" in f
    f.goto(-1)
    assert "/other" in f and "/keep" in f and "/later" not in f


def test_removed_node_comes_back_as_the_same_object(f: Any) -> None:
    f.enable_undo()
    keep, inner = f.root.keep, f.root.g.inner
    f.remove_node("/g", recursive=True)
    f.remove_node(keep)
    assert "/g" not in f and "/keep" not in f
    f.undo()
    assert f.root.keep is keep and f.root.g.inner is inner
    assert keep.attrs.unit == "m" and inner.read() == [3] and keep.title == "Keep"
    with pytest.raises(NodeError, match="has child nodes"):  # refused, as without undo
        f.remove_node("/g")
    f.redo()
    assert "/keep" not in f and "/g" not in f


def test_indexed_table_removed_and_restored(f: Any) -> None:
    f.enable_undo()
    f.remove_node("/tab")
    assert "/_i_tab" not in f
    f.undo()
    tab = f.root.tab
    assert tab.cols.a.index is not None and tab.cols.a.index.nelements == 50
    assert tab.read_where("a > 45")["a"].tolist() == [46, 47, 48, 49]
    f.redo()
    assert "/tab" not in f and "/_i_tab" not in f
    f.undo()
    f.rename_node("/tab", "tab2")
    f.undo()
    assert f.root.tab.cols.a.index is not None and "/_i_tab2" not in f


def test_attributes(f: Any) -> None:
    keep = f.root.keep
    f.enable_undo()
    keep.attrs.unit = "s"
    keep.attrs.new = np.arange(3)
    del f.root._v_attrs.x
    keep.attrs._f_rename("unit", "units")
    f.root._v_attrs.obj = {"a": 1}  # pickled
    f.root.g._v_title = "G2"
    f.root.g._v_filters = Filters(complevel=3)
    keep.attrs._f_copy(f.root.g)
    f.undo()
    assert f.root._v_attrs.x == 1 and "obj" not in f.root._v_attrs
    assert keep.attrs.unit == "m" and "units" not in keep.attrs and "new" not in keep.attrs
    assert f.root.g._v_title == "G" and "FILTERS" not in f.root.g._v_attrs
    assert "unit" not in f.root.g._v_attrs
    f.redo()
    assert keep.attrs.units == "s" and keep.attrs.new.tolist() == [0, 1, 2]
    assert "x" not in f.root._v_attrs and f.root._v_attrs.obj == {"a": 1}
    assert f.root.g._v_title == "G2" and f.root.g._v_filters.complevel == 3
    assert f.root.g._v_attrs.units == "s"


def test_kept_attribute_values_are_byte_for_byte(tmp_path: Path) -> None:
    """A value kept by the log comes back with its stored type (h5py as the oracle)."""
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as h:
        h.attrs.create("v", np.array([1, 2], dtype=">u2"))
    with hyperslab.open_file(path, "a") as f:
        f.enable_undo()
        f.root._v_attrs.v = 5
        f.undo()
    with h5py.File(path, "r") as h:
        assert h.attrs["v"].dtype == np.dtype(">u2") and h.attrs["v"].tolist() == [1, 2]


def test_copies(f: Any, tmp_path: Path) -> None:
    f.enable_undo()
    copy = f.copy_node("/g", newname="gc", recursive=True)
    f.copy_node("/keep", "/g", overwrite=False)
    f.copy_node("/keep", newname="g", overwrite=True)  # replaces /g (logged removal)
    f.copy_children("/gc", "/deep/er", createparents=True)
    # CREATE gc (its children not logged), CREATE g/keep, REMOVE g, CREATE g, CREATE the
    # parents deep and deep/er, CREATE deep/er/inner
    assert f._actionlog.read()["opcode"].tolist() == [0, 1, 1, 2, 1, 1, 1, 1]
    f.undo(0)
    assert sorted(f.root._v_children) == ["g", "keep", "tab"]
    assert f.root.g.inner.read() == [3]
    f.redo()
    assert f.root.gc is copy and f.root.gc.inner.read() == [3]
    assert f.root.deep.er.inner.read() == [3] and f.root.g.read() == [1, 2]
    with hyperslab.open_file(tmp_path / "other.h5", "w") as other:
        with pytest.warns(UndoRedoWarning, match="copying across databases"):
            f.copy_node("/keep", other.root)
        assert "/keep" in other


def test_links_and_data(f: Any) -> None:
    f.enable_undo()
    f.create_soft_link("/", "soft", "/keep")  # not logged, as PyTables
    f.root.keep[0] = 10  # data is not logged
    assert f._curaction == 0
    f.remove_node("/soft")
    f.undo()
    assert f.root.soft().read() == [10, 2]


def test_not_logged_nodes(f: Any) -> None:
    f.enable_undo()
    keep = f.root.keep
    keep._c_logged = False  # as a class with NotLoggedMixin
    keep.attrs.flag = True
    f.move_node("/keep", "/g")
    assert f._curaction == 0
    f.remove_node("/g/keep")
    f.undo()
    assert "/g/keep" not in f and "/keep" not in f


def test_too_long_path(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "l.h5", "w", max_undo_path_length=16) as f:
        f.enable_undo()
        with pytest.raises(UndoRedoError, match="too long"):
            f.create_group("/", "a_rather_long_group_name")
        assert f._curaction == 0


def test_log_written_on_flush(tmp_path: Path) -> None:
    """CURMARK and CURACTION are in the file after a flush (a later crash keeps them)."""
    path = tmp_path / "fl.h5"
    with hyperslab.open_file(path, "w") as f:
        f.enable_undo()
        f.create_array("/", "a", [1])
        f.undo()
        f.flush()
        shutil.copy(path, tmp_path / "copy.h5")  # what a crash now would leave
    with h5py.File(tmp_path / "copy.h5", "r") as h:
        attrs = h["/_p_transactions/actionlog"].attrs
        assert (attrs["CURMARK"], attrs["CURACTION"]) == (0, 0)


def test_pytables_file_without_state_warns(tmp_path: Path) -> None:
    path = tmp_path / "w.h5"
    with tables.open_file(path, "w") as f:
        f.enable_undo()
        f.create_array("/", "a", [1])
    with h5py.File(path, "a") as h:
        del h["/_p_transactions/actionlog"].attrs["CURMARK"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with hyperslab.open_file(path, "a") as f:
            assert (f._curmark, f._curaction) == (0, 1)
    assert any(issubclass(w.category, UndoRedoWarning) for w in caught)
