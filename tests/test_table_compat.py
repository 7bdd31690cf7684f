"""Table compatibility, both ways: tables written by hyperslab open in PyTables (and h5py)
exactly as the same tables written by PyTables, and PyTables' tables open in hyperslab with
the same values and descriptions, and take changes, appends and growth from the other
library.

Every table is built twice from one script (:func:`build_table`), once by each library, with
the same columns (every Col type, defaults, positions, multidimensional cells, two levels of
nesting, enums, times, full-length strings), filters, byte order and small chunks (many of
them, and a partial last one).  The PyTables build is the oracle: whatever any reader says of
the hyperslab build must be what it says of the PyTables build.  Where PyTables is wrong
(its bugs are named where they matter), the values written are the oracle.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import types
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from compat_kit import LEGACY_PRINT, assert_same_value, describe_hdf5

LIBS = {"hyperslab": hyperslab, "tables": tables}

# ---------------------------------------------------------------------------------- specs
# A column is (Col class name, keyword arguments); a nested description is a dict (with an
# optional "_v_pos").  Enum columns give their enum as a list or dict of names.
ColSpec = tuple[str, dict[str, Any]]

FLAT: dict[str, Any] = {
    "i8": ("Int8Col", {"dflt": -1, "pos": 0}),
    "i16": ("Int16Col", {"pos": 1}),
    "f64": ("Float64Col", {"dflt": 3.5, "pos": 2}),
    "i32": ("Int32Col", {"dflt": 2**31 - 1}),
    "i64": ("Int64Col", {"dflt": -(2**63)}),
    "u8": ("UInt8Col", {"dflt": 255}),
    "u16": ("UInt16Col", {}),
    "u32": ("UInt32Col", {"dflt": 7}),
    "u64": ("UInt64Col", {"dflt": 2**64 - 1}),
    "f16": ("Float16Col", {"dflt": 0.5}),
    "f32": ("Float32Col", {"dflt": -1.25}),
    "c64": ("ComplexCol", {"itemsize": 8, "dflt": 1 + 2j}),
    "c128": ("ComplexCol", {"itemsize": 16, "dflt": -0.5j}),
    "flag": ("BoolCol", {"dflt": True}),
    "name": ("StringCol", {"itemsize": 6, "dflt": b"abc"}),
    "full": ("StringCol", {"itemsize": 3, "dflt": b"xyz"}),  # full-length default, no NUL
    "color": ("EnumCol", {"enum": ["red", "green", "blue"], "dflt": "green", "base": "uint8"}),
    "level": ("EnumCol", {"enum": {"low": -5, "mid": 0, "high": 100}, "dflt": "high",
                          "base": "int16"}),
    "t32": ("Time32Col", {"dflt": 1_000_000}),
    "t64": ("Time64Col", {"dflt": 1.5}),
    "gint": ("IntCol", {"itemsize": 2, "dflt": 9}),
    "gfloat": ("FloatCol", {"itemsize": 4}),
}
"""Every Col type, flat."""

NESTED: dict[str, Any] = {
    "id": ("UInt32Col", {"pos": 0}),
    "cells": ("Int16Col", {"shape": (2, 3), "dflt": -2, "pos": 1}),
    "info": {
        "_v_pos": 2,
        "x": ("Float64Col", {"dflt": 1.5, "pos": 0}),
        "flags": ("BoolCol", {"shape": (2,)}),
        "mat": ("Float32Col", {"shape": (2, 3), "dflt": 0.25}),
        "detail": {
            "label": ("StringCol", {"itemsize": 4, "shape": (2,), "dflt": b"ab"}),
            "kind": ("EnumCol", {"enum": ["a", "b", "c"], "dflt": "c", "base": "uint8",
                                 "shape": (2,)}),
            "z": ("ComplexCol", {"itemsize": 16, "dflt": 2 - 1j}),
            "h": ("Float16Col", {"shape": (3,)}),
            "when": ("Time64Col", {"dflt": -2.5}),
            "tick": ("Time32Col", {}),
        },
        "u": ("UInt64Col", {"dflt": 12345678901234567890}),
    },
    "tail": ("StringCol", {"itemsize": 5, "dflt": b"tail!"}),
    "b": ("BoolCol", {"dflt": True}),
}
"""Multidimensional cells and two levels of nesting, with every kind of column inside."""

PLAIN: dict[str, Any] = {
    "a": ("Int32Col", {"dflt": -4}),
    "flag": ("BoolCol", {"shape": (3,), "dflt": True}),
    "nested": {
        "e": ("EnumCol", {"enum": {"off": 0, "on": 1}, "dflt": "on", "base": "int8"}),
        "s": ("StringCol", {"itemsize": 2, "dflt": b"zz"}),
        "deep": {"c": ("ComplexCol", {"itemsize": 8}), "f": ("Float16Col", {"dflt": -1.0})},
    },
    "v": ("UInt64Col", {"shape": (2,)}),
}
"""No time columns: h5py reads these tables whole."""

FLAT_BE = {**FLAT, "level": ("EnumCol", {"enum": {"low": -5, "mid": 0, "high": 100},
                                         "dflt": "high", "base": "int8"})}
"""FLAT for big-endian tables: PyTables writes multi-byte enum columns of big-endian tables
in native byte order under a big-endian enum type (members included), so that h5py reads
other numbers, and PyTables itself reads them back byte-swapped."""

SPECS = {"flat": FLAT, "nested": NESTED, "plain": PLAIN, "flat_be": FLAT_BE}

FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "zlib": {"complevel": 1, "complib": "zlib", "shuffle": True},
    "blosc2-lz4": {"complevel": 5, "complib": "blosc2:lz4", "shuffle": True},
    "blosc2-zstd": {"complevel": 5, "complib": "blosc2:zstd", "shuffle": True},
}

NROWS = 37
CHUNKROWS = 5  # 7 full chunks and a partial one of 2 rows
TITLE = "a table ✓"
USER_ATTRS: dict[str, Any] = {
    "note": "some text",
    "count": np.int32(3),
    "values": np.arange(4.0),
    "flag": True,
}


@dataclasses.dataclass(frozen=True)
class Case:
    """One table: a column spec, filters and a byte order."""

    spec: str
    filters: str
    byteorder: str | None = None

    @property
    def id(self) -> str:
        return "-".join([self.spec, self.filters] + ([self.byteorder] if self.byteorder else []))

    @property
    def columns(self) -> dict[str, Any]:
        return SPECS[self.spec]


CASES = [Case(spec, filters) for spec in ("flat", "nested", "plain") for filters in FILTERS] + [
    Case("flat_be", "zlib", "big"),
    Case("nested", "blosc2-zstd", "big"),
    Case("plain", "none", "big"),
]


# ---------------------------------------------------------------------------------- building
def make_col(lib: ModuleType, spec: ColSpec) -> Any:
    """The Col of library ``lib`` for a column spec."""
    clsname, kwargs = spec
    kwargs = dict(kwargs)
    if "enum" in kwargs:
        kwargs["enum"] = lib.Enum(kwargs["enum"])
    return getattr(lib, clsname)(**kwargs)


def make_description(lib: ModuleType, spec: dict[str, Any], name: str = "Record",
                     level: int = 0) -> type:
    """An IsDescription subclass of ``lib`` for a spec.

    Nested descriptions are given as a class at the first level and as an instance at the
    second (PyTables accepts both).
    """
    namespace: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "_v_pos":
            namespace[key] = value
        elif isinstance(value, dict):
            nested = make_description(lib, value, f"{name}_{key}", level + 1)
            namespace[key] = nested if level == 0 else nested()
        else:
            namespace[key] = make_col(lib, value)
    return types.new_class(name, (lib.IsDescription,), exec_body=lambda ns: ns.update(namespace))


def leaf_specs(spec: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, ColSpec]]:
    """(pathname, column spec) of every leaf column of a spec."""
    for key, value in spec.items():
        if key == "_v_pos":
            continue
        if isinstance(value, dict):
            yield from leaf_specs(value, f"{prefix}{key}/")
        else:
            yield prefix + key, value


def enum_values(spec: ColSpec) -> list[int] | None:
    """The values of an enum column spec, or None."""
    enum = spec[1].get("enum")
    if enum is None:
        return None
    return list(range(len(enum))) if isinstance(enum, list) else list(enum.values())


def spec_default(spec: ColSpec) -> Any:
    """The default a column spec gives its cells (enum names as their values)."""
    kwargs = spec[1]
    if "enum" in kwargs:
        enum = kwargs["enum"]
        names = enum if isinstance(enum, list) else list(enum)
        return enum_values(spec)[names.index(kwargs["dflt"])]  # type: ignore[index]
    if "dflt" in kwargs:
        return kwargs["dflt"]
    return b"" if spec[0] == "StringCol" else 0


def special_columns(case: Case) -> tuple[dict[str, list[int]], frozenset[str]]:
    """(values of each enum column, the time columns) of a case, by pathname."""
    leaves = dict(leaf_specs(case.columns))
    enums = {p: v for p, spec in leaves.items() if (v := enum_values(spec)) is not None}
    times = frozenset(p for p, spec in leaves.items() if spec[0].startswith("Time"))
    return enums, times


def field(records: np.ndarray, path: str) -> np.ndarray:
    """A (nested) column of a structured array, by pathname (a view)."""
    for name in path.split("/"):
        records = records[name]
    return records


def leaf_paths(dtype: np.dtype[Any], prefix: str = "") -> Iterator[str]:
    """Pathnames of the leaf fields of a structured dtype, in order."""
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        if sub.names is not None:
            yield from leaf_paths(sub, f"{prefix}{name}/")
        else:
            yield prefix + name


def leaf_values(dtype: np.dtype[Any], n: int, seed: int, choices: list[int] | None,
                time: bool = False) -> Any:
    """Deterministic, varied cells for one leaf column (extremes, full-length strings).

    Time64 cells hold whole microseconds and no infinity: PyTables stores them as a pair of
    int32 (seconds, microseconds), not as IEEE doubles.
    """
    base, shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
    count = n * math.prod(shape)
    k = np.arange(count, dtype=np.int64) * 7 + seed % 101
    if choices is not None:
        values: Any = np.array(choices)[k % len(choices)]
    elif base.kind == "b":
        values = k % 3 == 0
    elif base.kind == "S":
        size = base.itemsize
        values = [bytes(97 + (v + j) % 26 for j in range(v % (size + 1))) for v in k]
    elif base.kind in "iu":
        info = np.iinfo(base)
        values = (k % 200) - (100 if base.kind == "i" else 0)
        values = values.astype(object)
        values[0], values[1] = info.min, info.max
    elif base.kind == "f":
        values = (k % 97) / 4 - 10
        if not time:
            values[1] = np.inf
    else:
        values = (k % 97) / 4 + 1j * ((k % 13) - 6)
    return np.array(values, dtype=base).reshape((n, *shape))


def make_rows(dtype: np.dtype[Any], n: int, enums: dict[str, list[int]],
              times: frozenset[str] = frozenset()) -> np.ndarray:
    """``n`` records of ``dtype`` (native order) with :func:`leaf_values` in every leaf
    (``enums``: values of the enum columns; ``times``: the time columns)."""
    records = np.zeros(n, dtype=dtype)
    for path in leaf_paths(dtype):
        column = field(records, path)
        seed = zlib.crc32(path.encode())
        column[...] = leaf_values(column.dtype if column.ndim == 1 else np.dtype(
            (column.dtype, column.shape[1:])), n, seed, enums.get(path), path in times)
    return records


def native(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """A (structured) dtype with every field in native byte order."""
    if dtype.names is None:
        if dtype.subdtype is not None:
            return np.dtype((native(dtype.subdtype[0]), dtype.subdtype[1]))
        return dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype
    return np.dtype({
        "names": list(dtype.names),
        "formats": [native(dtype.fields[n][0]) for n in dtype.names],  # type: ignore[index]
        "offsets": [dtype.fields[n][1] for n in dtype.names],  # type: ignore[index]
        "itemsize": dtype.itemsize,
    })


def build_table(lib: ModuleType, path: Path, case: Case) -> np.ndarray:
    """One table written with ``lib``; returns the records it must hold.

    Rows go in as a structured array, a list of tuples, ``row.append()`` with every field
    set (Python and NumPy values), ``row.append()`` leaving fields at their defaults, and a
    last structured array ending in a partial chunk; with flushes in between so that
    appends start in the middle of chunks.
    """
    leaves = dict(leaf_specs(case.columns))
    kwargs = FILTERS[case.filters]
    filters = lib.Filters(**kwargs) if kwargs is not None else None
    with lib.open_file(str(path), "w") as f:
        t = f.create_table("/", "table", make_description(lib, case.columns), TITLE,
                           filters=filters, chunkshape=(CHUNKROWS,), byteorder=case.byteorder)
        data = make_rows(native(t.dtype), NROWS, *special_columns(case))
        paths = list(leaves)
        first = data[:12].copy()
        t.append(first)
        # PyTables converts time columns in place in the array it is given; hyperslab must
        # not (the check is skipped when this file runs with PyTables as both libraries).
        if lib is not tables:
            assert_records_equal(first, data[:12], "appended array afterwards")
        t.append(data[12:15].tolist())
        t.flush()
        row = t.row
        for i in range(15, 28):
            for p in paths:
                value = field(data, p)[i]
                row[p] = value.tolist() if i % 2 else value
            row.append()
            if i == 20:
                t.flush()
        for i in range(28, 32):  # only the first column set: the others take their defaults
            row[paths[0]] = field(data, paths[0])[i]
            row.append()
            for p in paths[1:]:
                field(data, p)[i] = spec_default(leaves[p])
        t.flush()
        t.append(data[32:].copy())
        for name, value in USER_ATTRS.items():
            setattr(t.attrs, name, value)
    return data


Built = tuple[Path, np.ndarray]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, Case], Built]]:
    """Build each (library, case) table once; return (path, records it must hold)."""
    cache: dict[tuple[str, str], Built] = {}
    folder = tmp_path_factory.mktemp("table_compat")

    def get(libname: str, case: Case) -> Built:
        key = (libname, case.id)
        if key not in cache:
            path = folder / f"{case.id}-{libname}.h5"
            cache[key] = (path, build_table(LIBS[libname], path, case))
        return cache[key]

    yield get


# ---------------------------------------------------------------------------------- comparing
def plain(value: Any) -> Any:
    """A value as (type name, Python value) so that types are compared too."""
    return type(value).__name__, np.asarray(value).tolist()


def describe_table(t: Any) -> dict[str, Any]:
    """What the PyTables API (of either library) says about a table."""
    d = t.description
    with np.printoptions(**LEGACY_PRINT):
        info: dict[str, Any] = {
            "repr": repr(d),
            "str": str(d),
            "coldflts": repr(t.coldflts),
            "enums": {c._v_pathname: repr(c.enum)
                      for c in d._f_walk("Col") if c.kind == "enum"},
        }
    info.update(
        cls=type(t).__name__,
        title=t.title,
        nrows=int(t.nrows),
        shape=tuple(int(n) for n in t.shape),
        chunkshape=tuple(int(n) for n in t.chunkshape),
        filters=repr(t.filters),
        byteorder=t.byteorder,
        dtype=t.dtype,
        rowsize=int(t.rowsize),
        colnames=list(t.colnames),
        colpathnames=list(t.colpathnames),
        coldtypes=dict(t.coldtypes),
        coltypes=dict(t.coltypes),
        coldflts_values={k: plain(v) for k, v in t.coldflts.items()},
        sys_attrs=sorted(t.attrs._f_list("sys")),
        user_attrs=sorted(t.attrs._f_list("user")),
        columns=[
            {"class": type(c).__name__, "pathname": c._v_pathname, "name": c._v_name,
             "pos": int(c._v_pos), "dtype": c.dtype, "shape": tuple(int(n) for n in c.shape),
             "type": c.type, "kind": c.kind, "itemsize": int(c.itemsize),
             "dflt": plain(c.dflt)}
            for c in d._f_walk("Col")
        ],
        groups=[
            {"pathname": g._v_pathname, "name": g._v_name, "pos": getattr(g, "_v_pos", None),
             "names": list(g._v_names), "nested_names": g._v_nested_names,
             "dtype": g._v_dtype, "dtypes": dict(g._v_dtypes), "types": dict(g._v_types),
             "itemsize": int(g._v_itemsize), "is_nested": bool(g._v_is_nested),
             "nested_formats": g._v_nested_formats, "nested_descr": g._v_nested_descr}
            for g in d._f_walk("Description")
        ],
    )
    return info


def assert_same_description(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Two :func:`describe_table` results are equal, key by key (clear messages)."""
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        assert ours[key] == theirs[key], key


def assert_records_equal(got: Any, want: np.ndarray, what: str = "records") -> None:
    """Same structured dtype and shape, and equal values in every leaf field."""
    assert isinstance(got, np.ndarray), f"{what}: {type(got)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    for path in leaf_paths(want.dtype):
        np.testing.assert_array_equal(field(got, path), field(want, path),
                                      err_msg=f"{what}[{path!r}]")


def assert_same_attrs(ours: Any, theirs: Any) -> None:
    """Every attribute (system and user) has the same value and type."""
    names = ours.attrs._f_list("all")
    assert names == theirs.attrs._f_list("all")
    for name in names:
        assert_same_value(ours.attrs[name], theirs.attrs[name], name)


def row_values(t: Any, paths: list[str], *args: int) -> list[Any]:
    """Every value iteration (``iterrows(*args)``) yields, with nrow and types."""
    seen = []
    for row in t.iterrows(*args):
        seen.append((row.nrow, [plain(row[p]) for p in paths]))
    return seen


def top_paths(dtype: np.dtype[Any]) -> list[str]:
    return list(dtype.names or ())


# ---------------------------------------------------------------------------------- (a)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_ours_open_in_pytables(built: Callable[[str, Case], Built], case: Case) -> None:
    """A table written by hyperslab reads in PyTables like the one PyTables wrote: data,
    description, defaults, title, attributes, nrows, chunkshape and filters."""
    ours, expected = built("hyperslab", case)
    ref, ref_expected = built("tables", case)
    assert_records_equal(expected, ref_expected, "generated data")
    with tables.open_file(str(ours)) as fo, tables.open_file(str(ref)) as fr:
        to, tr = fo.root.table, fr.root.table
        assert_same_description(describe_table(to), describe_table(tr))
        assert to.nrows == NROWS
        assert to.chunkshape == (CHUNKROWS,)
        assert_records_equal(to.read(), expected)
        assert_records_equal(to.read(), tr.read(), "PyTables' own table")
        assert_same_attrs(to, tr)
        for name, value in USER_ATTRS.items():
            np.testing.assert_array_equal(to.attrs[name], value, err_msg=name)
        assert int(to.attrs.NROWS) == NROWS
        paths = list(leaf_paths(expected.dtype))
        assert row_values(to, paths) == row_values(tr, paths)
        for path in paths:
            np.testing.assert_array_equal(to.cols._f_col(path)[:], field(expected, path))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_ours_open_alike_in_both(built: Callable[[str, Case], Built], case: Case) -> None:
    """hyperslab describes its own table as PyTables does."""
    ours, expected = built("hyperslab", case)
    with hyperslab.open_file(ours) as fh, tables.open_file(str(ours)) as ft:
        assert_same_description(describe_table(fh.root.table), describe_table(ft.root.table))
        assert_records_equal(fh.root.table.read(), expected)
        assert_same_attrs(fh.root.table, ft.root.table)


@pytest.mark.parametrize("filters", ["none", "zlib"])
@pytest.mark.parametrize("spec", ["flat", "nested"])
def test_auto_chunkshape_matches(tmp_path: Path, spec: str, filters: str) -> None:
    """Without a chunkshape, hyperslab picks PyTables' (expectedrows, rowsize).

    Blosc2 chunkshapes depend on the host's cache sizes in PyTables (docs/format.md §3.6).
    """
    shapes = []
    kwargs = FILTERS[filters]
    for name, lib in LIBS.items():
        path = tmp_path / f"{name}.h5"
        with lib.open_file(str(path), "w") as f:
            f.create_table("/", "t", make_description(lib, SPECS[spec]), expectedrows=123_456,
                           filters=lib.Filters(**kwargs) if kwargs else None)
        with tables.open_file(str(path)) as f:
            shapes.append(f.root.t.chunkshape)
    assert shapes[0] == shapes[1]


def _descriptions(lib: ModuleType) -> dict[str, Any]:
    """Descriptions given as a dict of Cols (nested dicts), a dtype and an array."""
    big_nested = np.dtype([("b", ">i4", (2,)), ("n", [("x", ">f8"), ("s", "S3")]),
                           ("flag", "?"), ("c", ">c16")])
    return {
        "from_dict": {"b": lib.BoolCol(pos=0), "a": lib.Int16Col(dflt=3),
                      "n": {"y": lib.StringCol(2, dflt=b"q"), "x": lib.Float32Col(),
                            "m": {"t": lib.Time32Col(), "k": lib.UInt8Col(shape=(2, 2))}}},
        "from_dtype": big_nested,
        "from_obj": np.array([(1, [2, 3], (0.5, b"abc"), True, 1j)],
                             dtype=[("a", ">u2"), *big_nested.descr]),
    }


def test_descriptions_from_dict_and_dtype(tmp_path: Path) -> None:
    """Tables described by a dict, a dtype or an array (obj=) come out as PyTables' (empty
    ones too), and PyTables' open alike in hyperslab.

    PyTables stores the rows of a big-endian ``obj`` byte-swapped (a PyTables bug): the
    rows are checked against ``obj`` itself.
    """
    paths = {}
    for name, lib in LIBS.items():
        paths[name] = tmp_path / f"{name}.h5"
        with lib.open_file(str(paths[name]), "w") as f:
            for node, descr in _descriptions(lib).items():
                if node == "from_obj":
                    f.create_table("/", node, obj=descr, chunkshape=2)
                else:
                    f.create_table("/", node, descr, chunkshape=2)
    obj = _descriptions(tables)["from_obj"]
    with tables.open_file(str(paths["hyperslab"])) as fo, \
            tables.open_file(str(paths["tables"])) as fr:
        for node in _descriptions(tables):
            to, tr = fo.get_node("/", node), fr.get_node("/", node)
            assert_same_description(describe_table(to), describe_table(tr))
            assert_same_attrs(to, tr)
            if node == "from_obj":
                assert_records_equal(to.read(), obj.astype(native(obj.dtype)), node)
            else:
                assert_records_equal(to.read(), tr.read(), node)
                assert to.nrows == 0
    with hyperslab.open_file(paths["tables"]) as fh, tables.open_file(str(paths["tables"])) as ft:
        for node in _descriptions(tables):
            th, tt = fh.get_node("/", node), ft.get_node("/", node)
            assert_same_description(describe_table(th), describe_table(tt))
            assert_same_attrs(th, tt)
            assert_records_equal(th.read(), tt.read(), node)
            assert [r.fetch_all_fields() for r in th] == [r.fetch_all_fields() for r in tt]


# ---------------------------------------------------------------------------------- (b)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_theirs_open_in_hyperslab(built: Callable[[str, Case], Built], case: Case) -> None:
    """A table written by PyTables reads in hyperslab as in PyTables: description,
    defaults, attributes, and every way of reading rows and columns."""
    ref, expected = built("tables", case)
    with hyperslab.open_file(ref) as fh, tables.open_file(str(ref)) as ft:
        th, tt = fh.root.table, ft.root.table
        assert_same_description(describe_table(th), describe_table(tt))
        assert_same_attrs(th, tt)
        assert_records_equal(th.read(), expected)
        for col in tt.description._f_walk("Col"):
            if col.kind == "enum":
                with np.printoptions(**LEGACY_PRINT):
                    assert repr(th.get_enum(col._v_pathname)) == \
                        repr(tt.get_enum(col._v_pathname))
        for key in (slice(None, None, 3), slice(4, 33, 5), slice(-7, None), slice(30, 5, 1)):
            assert_records_equal(th[key], tt[key], f"table[{key}]")
        assert_records_equal(th.read(2, 30, 4), tt.read(2, 30, 4), "read(2, 30, 4)")
        coords = [0, 7, 36, 5]
        assert_records_equal(th.read_coordinates(coords), tt.read_coordinates(coords))
        assert_records_equal(th[[1, 3, 36]], tt[[1, 3, 36]], "fancy")
        mask = np.arange(NROWS) % 4 == 1
        assert_records_equal(th[mask], tt[mask], "boolean")
        for i in (0, 5, -1):
            assert_records_equal(np.asarray(th[i]), np.asarray(tt[i]), f"table[{i}]")
        paths = list(leaf_paths(expected.dtype))
        for path in paths + top_paths(expected.dtype):
            assert_same_value(th.cols._f_col(path)[:], tt.cols._f_col(path)[:], path)
            assert_same_value(th.cols._f_col(path)[3:30:7], tt.cols._f_col(path)[3:30:7], path)
            assert_same_value(th.read(field=path), tt.read(field=path), path)
            assert_same_value(th.col(path), tt.col(path), path)
        assert row_values(th, paths) == row_values(tt, paths)
        assert row_values(th, paths, 3, 30, 4) == row_values(tt, paths, 3, 30, 4)
        first = paths[0]
        assert [r[first] for r in th] == [r[first] for r in tt]
        assert [r.fetch_all_fields() for r in th.iterrows(0, 3)] == \
            [r.fetch_all_fields() for r in tt.iterrows(0, 3)]


def _extra_rows(case: Case, dtype: np.dtype[Any], n: int) -> np.ndarray:
    """``n`` more records (other values than the table's first rows)."""
    return make_rows(dtype, n, *special_columns(case))[::-1].copy()


def _default_rows(case: Case, dtype: np.dtype[Any], n: int) -> np.ndarray:
    """``n`` records with every column at its default."""
    records = np.zeros(n, dtype=dtype)
    for path, spec in leaf_specs(case.columns):
        field(records, path)[...] = spec_default(spec)
    return records


GROWN = 10  # rows added by truncate(): two whole chunks that are never written


def _change_with(lib: ModuleType, path: Path, extra: np.ndarray, grow: int) -> None:
    """Change /table with ``lib``: overwrite rows 3-7 (``table[3:8] = ...``), update the
    first column of rows 20-22 through the Row, append ``extra`` (half with append(), half
    with the Row), then grow the table by ``grow`` rows with truncate() (they take the
    default row).  :func:`_changed` gives the records the table then holds."""
    first = next(leaf_paths(extra.dtype))
    with lib.open_file(str(path), "a") as f:
        t = f.root.table
        t[3:8] = extra[:5].copy()
        for row in t.iterrows(20, 23):
            row[first] = field(extra, first)[5]
            row.update()
        t.append(extra[:4].copy())
        row = t.row
        for record in extra[4:]:
            for p in leaf_paths(extra.dtype):
                row[p] = field(record, p)
            row.append()
        t.flush()
        if grow:
            t.truncate(t.nrows + grow)


def _changed(case: Case, expected: np.ndarray, extra: np.ndarray, grow: int) -> np.ndarray:
    """The records of a table after :func:`_change_with`."""
    first = next(leaf_paths(extra.dtype))
    records = expected.copy()
    records[3:8] = extra[:5]
    field(records, first)[20:23] = field(extra, first)[5]
    return np.concatenate([records, extra, _default_rows(case, expected.dtype, grow)])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hyperslab_appends_to_theirs(built: Callable[[str, Case], Built], case: Case,
                                     tmp_path: Path) -> None:
    """hyperslab changes, appends to and grows a PyTables table; PyTables reads every row
    back."""
    ref, expected = built("tables", case)
    path = tmp_path / "appended.h5"
    shutil.copy(ref, path)
    with tables.open_file(str(path)) as f:
        before = describe_table(f.root.table)
    extra = _extra_rows(case, expected.dtype, 9)
    # PyTables stores the fill value of big-endian tables byte-swapped (a PyTables bug):
    # growing one of them through HDF5 gives other rows than the defaults.
    grow = GROWN if case.byteorder is None else 0
    _change_with(hyperslab, path, extra, grow)
    with tables.open_file(str(path)) as f:
        t = f.root.table
        after = describe_table(t)
        nrows = NROWS + 9 + grow
        assert after.pop("nrows") == nrows
        assert after.pop("shape") == (nrows,)
        before.pop("nrows"), before.pop("shape")
        assert_same_description(after, before)
        assert int(t.attrs.NROWS) == nrows
        assert_records_equal(t.read(), _changed(case, expected, extra, grow))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_pytables_appends_to_ours(built: Callable[[str, Case], Built], case: Case,
                                  tmp_path: Path) -> None:
    """PyTables changes, appends to and grows a hyperslab table; hyperslab reads every row
    back: the grown rows, never written, hold the table's fill value (the default row).

    (PyTables itself fails this on its own tables with Time64 columns: it stores their
    defaults in the fill value as IEEE doubles, while its rows hold them as (seconds,
    microseconds) pairs of int32; and on big-endian ones, whose fill value it stores
    byte-swapped.)"""
    ours, expected = built("hyperslab", case)
    path = tmp_path / "appended.h5"
    shutil.copy(ours, path)
    extra = _extra_rows(case, expected.dtype, 9)
    _change_with(tables, path, extra, GROWN)
    with hyperslab.open_file(path) as f:
        t = f.root.table
        assert t.nrows == NROWS + 9 + GROWN
        want = _changed(case, expected, extra, GROWN)
        assert_records_equal(t.read(), want)
        assert_records_equal(t[-GROWN:], want[-GROWN:], "grown rows")


# ---------------------------------------------------------------------------------- (c)
def _type_info(htype: Any) -> tuple[Any, ...]:
    """An HDF5 type, in full (members, offsets, byte orders, enum members, padding)."""
    cls = htype.get_class()
    info: list[Any] = [cls, htype.get_size()]
    if cls == h5py.h5t.COMPOUND:
        info += [(htype.get_member_name(i), htype.get_member_offset(i),
                  _type_info(htype.get_member_type(i))) for i in range(htype.get_nmembers())]
    elif cls == h5py.h5t.ARRAY:
        info += [htype.get_array_dims(), _type_info(htype.get_super())]
    elif cls == h5py.h5t.ENUM:
        info += [_type_info(htype.get_super()),
                 [(htype.get_member_name(i), htype.get_member_value(i))
                  for i in range(htype.get_nmembers())]]
    elif cls == h5py.h5t.STRING:
        info += [htype.get_strpad(), htype.get_cset(), htype.is_variable_str()]
    else:  # INTEGER, FLOAT, BITFIELD, TIME
        info += [htype.get_order() if cls != h5py.h5t.TIME else _time_type_name(htype)]
    return tuple(info)


def _time_type_name(htype: Any) -> str | None:
    """The name of a TIME type (h5py has no get_order for them)."""
    names = ("UNIX_D32LE", "UNIX_D32BE", "UNIX_D64LE", "UNIX_D64BE")
    return next((n for n in names if htype.equal(getattr(h5py.h5t, n))), None)


def _has_time(htype: Any) -> bool:
    cls = htype.get_class()
    if cls == h5py.h5t.TIME:
        return True
    if cls == h5py.h5t.COMPOUND:
        return any(_has_time(htype.get_member_type(i)) for i in range(htype.get_nmembers()))
    if cls == h5py.h5t.ARRAY:
        return _has_time(htype.get_super())
    return False


def _without_time(htype: Any) -> tuple[Any, np.dtype[Any]]:
    """A packed memory compound type (and its dtype) of the members that are not TIME."""
    members = []
    for i in range(htype.get_nmembers()):
        mtype = htype.get_member_type(i)
        if mtype.get_class() == h5py.h5t.TIME:
            continue
        if _has_time(mtype):
            members.append((htype.get_member_name(i), *_without_time(mtype)))
        else:
            members.append((htype.get_member_name(i), mtype, mtype.dtype))
    dtype = np.dtype([(name.decode(), dt) for name, _, dt in members])
    compound = h5py.h5t.create(h5py.h5t.COMPOUND, dtype.itemsize)
    for name, mtype, _ in members:
        compound.insert(name, dtype.fields[name.decode()][1], mtype)
    return compound, dtype


def h5py_read(path: Path) -> np.ndarray:
    """/table read by h5py: whole when h5py maps its type; without the time columns
    (through a compound memory type of the others) when it does not."""
    with h5py.File(path, "r") as h:
        dset = h["table"]
        htype = dset.id.get_type()
        if not _has_time(htype):
            return dset[...]
        with pytest.raises(TypeError, match="No NumPy equivalent for TypeTimeID"):
            dset.dtype  # noqa: B018
        with pytest.raises(TypeError, match="No NumPy equivalent for TypeTimeID"):
            dset[...]
        mtype, dtype = _without_time(htype)
        out = np.empty(dset.shape, dtype=dtype)
        dset.id.read(h5py.h5s.ALL, h5py.h5s.ALL, out, mtype=mtype)
        return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_h5py_reads_ours(built: Callable[[str, Case], Built], case: Case) -> None:
    """h5py + hdf5plugin read our tables as PyTables' (and as written); time columns make
    h5py's type mapping fail for both alike, and the other columns still read."""
    ours, expected = built("hyperslab", case)
    ref, _ = built("tables", case)
    got, theirs = h5py_read(ours), h5py_read(ref)
    assert_records_equal(got, theirs, "h5py")
    time_columns = special_columns(case)[1]
    assert sorted(leaf_paths(got.dtype)) == sorted(set(leaf_paths(expected.dtype))
                                                   - time_columns)
    for path in leaf_paths(got.dtype):
        np.testing.assert_array_equal(field(got, path), field(expected, path), err_msg=path)
    for path in leaf_paths(got.dtype):
        assert h5py.check_enum_dtype(field(got, path).dtype) == \
            h5py.check_enum_dtype(field(theirs, path).dtype), path


def _dataset_layout(path: Path, fill: bool) -> dict[str, Any]:
    with h5py.File(path, "r") as h:
        dsid = h["table"].id
        dcpl = dsid.get_create_plist()
        pipeline = []
        for i in range(dcpl.get_nfilters()):
            code, flags, cd_values, _ = dcpl.get_filter(i)
            if code == hdf5plugin.BLOSC2_ID:  # cd_values[1], the blocksize, is free
                cd_values = (*cd_values[:1], *cd_values[2:])
            pipeline.append((code, flags, cd_values))
        space = dsid.get_space()
        layout = {
            "type": _type_info(dsid.get_type()),
            "dims": space.get_simple_extent_dims(),
            "maxdims": space.get_simple_extent_dims(True),
            "layout": dcpl.get_layout(),
            "chunk": dcpl.get_chunk(),
            "pipeline": pipeline,
            "fill_defined": dcpl.fill_value_defined(),
            "fill_time": dcpl.get_fill_time(),
            "alloc_time": dcpl.get_alloc_time(),
        }
        if fill:
            value = np.zeros((), dtype=h["table"].dtype)
            dcpl.get_fill_value(value)
            layout["fill"] = value.tobytes()
    layout["attrs"] = describe_hdf5(path)["/table"]["attrs"]
    return layout


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_same_hdf5_layout(built: Callable[[str, Case], Built], case: Case) -> None:
    """Our table dataset is PyTables': compound type member by member (TIME, ENUM,
    BITFIELD, NULLTERM strings, byte orders, offsets), chunks, pipeline, fill value and
    attribute types."""
    # The fill value is compared where PyTables writes it right: not with time columns (h5py
    # cannot read it, and PyTables stores Time64 defaults as IEEE doubles), not in
    # big-endian tables (PyTables stores it byte-swapped).  test_pytables_appends_to_ours
    # checks ours through the rows it gives.
    fill = case.byteorder is None and not special_columns(case)[1]
    ours = _dataset_layout(built("hyperslab", case)[0], fill)
    theirs = _dataset_layout(built("tables", case)[0], fill)
    assert sorted(ours) == sorted(theirs)
    for key in ours:
        assert ours[key] == theirs[key], key
