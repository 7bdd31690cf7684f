"""Column index storage (hyperslab.nodes.indexstore) and its out-of-core sort
(hyperslab.nodes.indexsort), checked against NumPy's stable argsort and comparisons, with
PyTables as the oracle that the hidden index nodes disturb nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.lib.recfunctions import repack_fields

import hyperslab
from hyperslab.errors import FileModeError, HDF5ExtError
from hyperslab.nodes import indexstore
from hyperslab.nodes.indexsort import (
    progress_total,
    run_rows_for,
    sorted_pieces,
    stable_argsort,
)
from hyperslab.nodes.indexstore import (
    ColumnIndex,
    auto_index,
    chunk_rows_for,
    column_key,
    index_group_name,
    remove_table_indexes,
    set_auto_index,
    table_indexes,
)
from hyperslab.storage.vectors import Vector

SORT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?", "S3"]


def _column(dtype: str) -> st.SearchStrategy[np.ndarray]:
    """Short columns with many ties (and NaNs, infinities, -0.0 for floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        elements: st.SearchStrategy[Any] = st.sampled_from(
            [0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 1e-300, 3.0, 65504.0]
        ) | st.floats(width=8 * dt.itemsize, allow_nan=True)
    elif dt.kind == "S":
        elements = st.binary(max_size=3).map(lambda b: b.rstrip(b"\0"))
    else:
        elements = hnp.from_dtype(dt)
    return hnp.arrays(dt, st.integers(0, 60), elements=elements)


def _sorted_all(column: np.ndarray, **options: Any) -> tuple[np.ndarray, np.ndarray]:
    pieces = list(sorted_pieces(lambda lo, hi: column[lo:hi], len(column), **options))
    if not pieces:
        return column[:0], np.empty(0, dtype=np.int64)
    return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])


# ---------------------------------------------------------------------- the sort
@settings(max_examples=120, deadline=None)
@given(dtype=st.sampled_from(SORT_DTYPES), data=st.data())
def test_sorted_pieces_is_a_stable_argsort(dtype: str, data: st.DataObject) -> None:
    column = data.draw(_column(dtype))
    run_rows = data.draw(st.integers(1, 70))
    piece_rows = data.draw(st.integers(1, 70))
    values, rows = _sorted_all(column, run_rows=run_rows, piece_rows=piece_rows)
    expected = np.argsort(column, kind="stable")
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(rows, expected)
    assert values.dtype == column.dtype
    np.testing.assert_array_equal(values, column[expected])  # NaNs compare equal here


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from(SORT_DTYPES), data=st.data())
def test_stable_argsort_equals_numpy(dtype: str, data: st.DataObject) -> None:
    column = data.draw(_column(dtype))
    np.testing.assert_array_equal(stable_argsort(column),
                                  np.argsort(column, kind="stable"))


@pytest.mark.parametrize("name", ["wide", "colliding", "narrow", "ints", "sorted", "nan"])
def test_stable_argsort_on_bigger_arrays(name: str) -> None:
    """The packed-key paths: collisions of shortened keys, re-sorted groups, presorted."""
    rng = np.random.default_rng(7)
    n = 50_000
    column = {
        "wide": rng.normal(size=n) * 1e300,
        "colliding": np.concatenate([1.0 + rng.integers(0, 50, n) * 2.2e-16, [0.0, np.inf]]),
        "narrow": rng.integers(0, 5, n).astype("f8"),
        "ints": np.concatenate([rng.integers(-(2**63), 2**63 - 1, n // 2),
                                rng.integers(0, 100, n // 2)]),
        "sorted": np.arange(n, dtype="i8"),
        "nan": np.where(rng.random(n) < 0.3, np.nan, rng.random(n).astype("f4")),
    }[name]
    np.testing.assert_array_equal(stable_argsort(column), np.argsort(column, kind="stable"))


@pytest.mark.parametrize("nrows", [0, 1])
@pytest.mark.parametrize("run_rows", [1, 5])
def test_sorted_pieces_tiny(nrows: int, run_rows: int) -> None:
    column = np.array([2.5])[:nrows]
    values, rows = _sorted_all(column, run_rows=run_rows)
    assert rows.tolist() == list(range(nrows))
    assert values.tolist() == column.tolist()


def test_sorted_pieces_many_runs_and_progress(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    column = rng.integers(0, 100, 5000).astype("f8")
    column[rng.integers(0, 5000, 300)] = np.nan
    spill = tmp_path / "spill"
    spill.mkdir()
    seen: list[int] = []
    _, rows = _sorted_all(column, run_rows=450, piece_rows=256, tmp_dir=str(spill),
                          progress=seen.append)
    np.testing.assert_array_equal(rows, np.argsort(column, kind="stable"))
    assert seen == sorted(seen) and seen[-1] == progress_total(5000, 450) == 10000
    assert os.listdir(spill) == []


def test_sorted_pieces_spills_and_cleans_up_when_abandoned(tmp_path: Path) -> None:
    column = np.arange(1000, 0, -1, dtype="i4")
    pieces = sorted_pieces(lambda lo, hi: column[lo:hi], 1000, run_rows=100,
                           piece_rows=10, tmp_dir=str(tmp_path))
    first = next(pieces)
    assert first[0].tolist() == list(range(1, 11))
    assert len(os.listdir(tmp_path)) == 1  # the runs' directory
    assert len(os.listdir(tmp_path / os.listdir(tmp_path)[0])) == 20  # 10 runs x 2 files
    pieces.close()
    assert os.listdir(tmp_path) == []


def test_sorted_pieces_cleans_up_on_error(tmp_path: Path) -> None:
    def read(lo: int, hi: int) -> np.ndarray:
        if lo >= 300:
            raise OSError(f"cannot read rows {lo}..{hi}")
        return np.zeros(hi - lo)

    with pytest.raises(OSError, match=r"cannot read rows 300\.\.400"):
        list(sorted_pieces(read, 1000, run_rows=100, tmp_dir=str(tmp_path)))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"nrows": -1}, ValueError, "nrows must be at least 0, not -1"),
    ({"run_rows": 0}, ValueError, "run_rows must be at least 1, not 0"),
    ({"piece_rows": True}, TypeError, "piece_rows must be an integer, not True"),
    ({"tmp_dir": "/no/such/dir"}, ValueError, "'/no/such/dir'"),
])
def test_sorted_pieces_rejects_bad_arguments(kwargs: dict[str, Any], error: type,
                                             match: str) -> None:
    options: dict[str, Any] = {"nrows": 10} | kwargs
    nrows = options.pop("nrows")
    with pytest.raises(error, match=match):
        sorted_pieces(lambda lo, hi: np.zeros(hi - lo), nrows, **options)


def test_sorted_pieces_rejects_a_bad_read() -> None:
    with pytest.raises(ValueError, match=r"read\(0, 10\) must return a 1-D array of 10"):
        list(sorted_pieces(lambda lo, hi: np.zeros(3), 10))
    with pytest.raises(TypeError, match="complex128"):
        list(sorted_pieces(lambda lo, hi: np.zeros(hi - lo, complex), 10))


def test_run_rows_and_chunk_rows_scale_with_itemsize() -> None:
    assert run_rows_for(np.dtype("S1000")) < run_rows_for(np.dtype("f8"))
    assert run_rows_for(np.dtype("f8"), budget=1) == 1024
    assert chunk_rows_for(8) == 4096 and chunk_rows_for(10**6) == 4096


# ---------------------------------------------------------------------- tables
ROWS = 700


def _records(n: int, seed: int = 0) -> np.ndarray:
    """Rows with ties, NaNs, extremes, strings, bools and a nested column."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype([
        ("f8", "f8"), ("f4", "f4"), ("f2", "f2"), ("i1", "i1"), ("i4", "i4"), ("i8", "i8"),
        ("u1", "u1"), ("u8", "u8"), ("b", "?"), ("s", "S3"), ("nest", [("x", "i2")]),
        ("c", "c16"), ("m", "f4", (2,)),
    ])
    rec = np.zeros(n, dtype)
    floats = rng.choice([0.0, -0.0, 0.5, 1.0, 2.5, -3.0, np.inf, -np.inf, np.nan], n)
    rec["f8"] = np.where(rng.random(n) < 0.5, floats, rng.normal(size=n))
    rec["f4"] = floats
    rec["f2"] = rng.choice([0.1, 0.2, np.nan, 65504.0, -1.0], n)
    rec["i1"] = rng.choice([-128, -1, 0, 1, 127], n)
    rec["i4"] = rng.integers(-50, 50, n)
    rec["i8"] = rng.choice([-(2**63), -1, 0, 2**53 + 1, 2**63 - 1], n)
    rec["u1"] = rng.integers(0, 256, n)
    rec["u8"] = rng.choice(np.array([0, 1, 2**63, 2**64 - 1], dtype="u8"), n)
    rec["b"] = rng.random(n) < 0.3
    rec["s"] = rng.choice([b"", b"a", b"ab", b"abc", b"b", b"ba"], n)
    rec["nest"]["x"] = rng.integers(-5, 5, n)
    return rec


INDEXABLE = ["f8", "f4", "f2", "i1", "i4", "i8", "u1", "u8", "b", "s", "nest/x"]


def _field(records: np.ndarray, colpath: str) -> np.ndarray:
    for part in colpath.split("/"):
        records = records[part]
    return records


def _stored_firsts(index: ColumnIndex) -> np.ndarray:
    """The firsts as stored: the FIRSTS attribute up to FIRSTS_ATTRIBUTE_BYTES, else the
    ``firsts`` array (never both)."""
    group = index._group
    in_attribute = "FIRSTS" in group._v_attrs._f_list("all")
    assert in_attribute != ("firsts" in group)
    firsts = group._v_attrs["FIRSTS"] if in_attribute else group._f_get_child("firsts")[:]
    assert in_attribute == (firsts.nbytes <= indexstore.FIRSTS_ATTRIBUTE_BYTES)
    return np.asarray(firsts)


def _check_index(index: ColumnIndex, column: np.ndarray) -> None:
    """The stored index is the stable argsort of the column, with consistent metadata."""
    order = np.argsort(column, kind="stable")
    assert index.nelements == len(column)
    np.testing.assert_array_equal(index.rows(0, index.nelements), order)
    np.testing.assert_array_equal(index.values(0, index.nelements), column[order])
    nans = int(np.isnan(column).sum()) if column.dtype.kind == "f" else 0
    assert index.nan_start == len(column) - nans
    np.testing.assert_array_equal(_stored_firsts(index), column[order][::index.chunkrows])
    # The stored row numbers too (rows() answers the positions holding their own row
    # without reading them), and the state counts exactly those positions.
    np.testing.assert_array_equal(index._rows[:], order)
    strays = np.flatnonzero(order != np.arange(len(order)))
    in_order = int(strays[0]) if len(strays) else len(order)
    assert index._in_order == in_order
    state = index._group._v_attrs["HS_INDEX"]
    assert state.tolist() == [2, index._table_address, int(index.dirty), len(column),
                              index.nan_start, in_order]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, np.ndarray]]:
    """A table of ROWS rows with an index (chunks of 16 values) on every indexable column."""
    path = tmp_path_factory.mktemp("indexed") / "indexed.h5"
    records = _records(ROWS)
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", records)
        for colpath in INDEXABLE:
            ColumnIndex.build(table, colpath, chunkrows=16)
        yield table, records


@pytest.fixture(scope="module")
def indexes(indexed: tuple[Any, np.ndarray]) -> dict[str, ColumnIndex]:
    """The indexes of the ``indexed`` table, as found by table_indexes."""
    return table_indexes(indexed[0])


@pytest.mark.parametrize("colpath", INDEXABLE)
def test_build_sorts_every_dtype(indexed: tuple[Any, np.ndarray], colpath: str) -> None:
    table, records = indexed
    index = ColumnIndex.open(table, colpath)
    assert index is not None and index.colpath == colpath
    _check_index(index, _field(records, colpath))
    assert index._rows.dtype == np.uint32 and index.chunkrows == 16
    assert index.dtype == _field(records, colpath).dtype


def _bounds(kind: str) -> st.SearchStrategy[Any]:
    """Bounds of many types: NumPy's comparison rules decide what they select."""
    if kind == "S":
        return st.none() | st.binary(max_size=4) | st.binary(max_size=2).map(np.bytes_)
    numbers = (st.integers(-(2**70), 2**70) | st.integers(-200, 200)
               | st.floats(allow_nan=True) | st.sampled_from([0.5, -0.0, 2.5, 0.1, 65504.0])
               | st.sampled_from([np.float32(0.1), np.float16(2.5), np.int8(-1),
                                  np.uint64(2**63), np.float64(np.nan), True, False]))
    return st.none() | numbers


def _check_positions(indexes: dict[str, ColumnIndex], records: np.ndarray, colpath: str,
                     lo: Any, lo_inc: bool, hi: Any, hi_inc: bool) -> None:
    column = _field(records, colpath)
    mask = ~np.isnan(column) if column.dtype.kind == "f" else np.ones(len(column), bool)
    index = indexes[colpath]
    try:
        with np.errstate(all="ignore"):  # 2**70 cast to float16: inf (NumPy warns)
            if lo is not None:
                mask &= (column >= lo) if lo_inc else (column > lo)
            if hi is not None:
                mask &= (column <= hi) if hi_inc else (column < hi)
    except OverflowError:  # e.g. a bool column against 2**63: NumPy cannot compare
        with pytest.raises((OverflowError, TypeError)):
            index.positions(lo, lo_inc, hi, hi_inc)
        return
    p0, p1 = index.positions(lo, lo_inc, hi, hi_inc)
    assert 0 <= p0 <= p1 <= index.nan_start
    np.testing.assert_array_equal(np.sort(index.rows(p0, p1)), np.flatnonzero(mask))


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colpath=st.sampled_from([c for c in INDEXABLE if c != "s"]), lo=_bounds("f"),
       hi=_bounds("f"), lo_inc=st.booleans(), hi_inc=st.booleans())
def test_positions_match_numpy_comparisons(indexed: tuple[Any, np.ndarray],
                                           indexes: dict[str, ColumnIndex], colpath: str,
                                           lo: Any, hi: Any, lo_inc: bool,
                                           hi_inc: bool) -> None:
    _check_positions(indexes, indexed[1], colpath, lo, lo_inc, hi, hi_inc)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lo=_bounds("S"), hi=_bounds("S"), lo_inc=st.booleans(), hi_inc=st.booleans())
def test_string_positions_match_numpy_comparisons(indexed: tuple[Any, np.ndarray],
                                                  indexes: dict[str, ColumnIndex], lo: Any,
                                                  hi: Any, lo_inc: bool,
                                                  hi_inc: bool) -> None:
    _check_positions(indexes, indexed[1], "s", lo, lo_inc, hi, hi_inc)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colpath=st.sampled_from(INDEXABLE), picks=st.tuples(st.integers(0, ROWS - 1),
                                                          st.integers(0, ROWS - 1)),
       lo_none=st.booleans(), hi_none=st.booleans(), lo_inc=st.booleans(),
       hi_inc=st.booleans())
def test_positions_of_bounds_of_the_column_dtype(indexed: tuple[Any, np.ndarray],
                                                 indexes: dict[str, ColumnIndex], colpath: str,
                                                 picks: tuple[int, int], lo_none: bool,
                                                 hi_none: bool, lo_inc: bool,
                                                 hi_inc: bool) -> None:
    """Bounds of the column's own dtype (what the planner gives) take the binary-search
    path: the same rows as NumPy comparisons."""
    column = _field(indexed[1], colpath)
    lo = None if lo_none else column[picks[0]]
    hi = None if hi_none else column[picks[1]]
    assert lo is None or lo.dtype == column.dtype or column.dtype.kind == "S"
    _check_positions(indexes, indexed[1], colpath, lo, lo_inc, hi, hi_inc)


def test_positions_read_one_chunk_per_bound(indexed: tuple[Any, np.ndarray],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    table, records = indexed
    index = ColumnIndex.open(table, "i4")
    assert index is not None
    reads: list[tuple[int, int]] = []
    array = index._open_arrays()[0]
    real_read = Vector.read

    def spy(self: Vector, start: int, stop: int) -> np.ndarray:
        if self is array:
            reads.append((start, stop))
        return real_read(self, start, stop)

    index._chunks.clear()
    monkeypatch.setattr(Vector, "read", spy)
    p0, p1 = index.positions(-10, True, 10, False)
    assert p1 - p0 == int(((records["i4"] >= -10) & (records["i4"] < 10)).sum())
    assert len(reads) == 2 and all(b - a <= 16 for a, b in reads)


def test_positions_errors_name_the_bound(indexed: tuple[Any, np.ndarray]) -> None:
    table, _ = indexed
    index = table_indexes(table)["s"]
    with pytest.raises(TypeError, match=r"column 's' \(\|S3\) cannot be compared with 5"):
        index.positions(5, True, None, True)
    with pytest.raises(TypeError, match=r"scalars, not \[1, 2\]"):
        table_indexes(table)["f8"].positions([1, 2], True, None, True)
    with pytest.raises(IndexError, match=r"positions 5\.\.4"):
        index.rows(5, 4)
    with pytest.raises(IndexError, match=rf"positions 0\.\.{ROWS + 1}"):
        index.values(0, ROWS + 1)


@pytest.mark.parametrize("complevel", [0, 5])
def test_build_on_blosc2_and_plain_tables_out_of_core(tmp_path: Path, complevel: int) -> None:
    records = _records(3000, seed=1)
    spill = tmp_path / "spill"
    spill.mkdir()
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records,
                               filters=hyperslab.Filters(complevel, "blosc2:lz4"),
                               chunkshape=(100,))
        for colpath in ("f8", "s", "i8"):
            seen: list[int] = []
            index = ColumnIndex.build(table, colpath, run_rows=257, chunkrows=64,
                                      tmp_dir=str(spill), progress=seen.append,
                                      filters=hyperslab.Filters(complevel, "blosc2:zstd"))
            _check_index(index, records[colpath])
            assert index.filters.complevel == complevel
            assert seen == sorted(seen) and seen[-1] == 3000 and len(seen) > 12
    assert os.listdir(spill) == []


def test_index_metadata_persists_and_repr(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", _records(100))
        assert ColumnIndex.open(table, "f8") is None and table_indexes(table) == {}
        ColumnIndex.build(table, "f8", kind="full", optlevel=9)
        index = ColumnIndex.build(table, "i4", kind="light", optlevel=2,
                                  filters=hyperslab.Filters(0))
        assert str(index) == repr(index) == "Index(2, light).is_csi=False"
        index.dirty = True
    with hyperslab.open_file(path, "r") as f:
        table = f.root.t
        indexes = table_indexes(table)
        assert sorted(indexes) == ["f8", "i4"]
        full, light = indexes["f8"], indexes["i4"]
        assert (full.kind, full.optlevel, full.is_csi, full.dirty) == ("full", 9, True, False)
        assert str(full) == "Index(9, full, shuffle, blosc2:lz4(5)).is_csi=True"
        assert (light.kind, light.optlevel, light.is_csi, light.dirty) == ("light", 2, False,
                                                                         True)
        assert full.nelements == 100 and not full.stale
        group = f.get_node("/_p_hsindex_t/f8")
        assert group._v_attrs["HS_INDEX"][0] == 2 and group._v_attrs["COLPATH"] == "f8"
        assert "HS_INDEX_VERSION" not in group._v_attrs
        assert full.positions(None, True, None, True) == (0, full.nan_start)
        with pytest.raises(FileModeError):
            light.dirty = False
        with pytest.raises(FileModeError):
            ColumnIndex.build(table, "i8")
        with pytest.raises(FileModeError):
            full.append_rows(100, [1.0])


def test_build_replaces_an_index_and_failures_leave_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records(200)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records)
        ColumnIndex.build(table, "i4", kind="ultralight")
        rebuilt = ColumnIndex.build(table, "i4", kind="full", optlevel=9)
        assert rebuilt.is_csi and table_indexes(table)["i4"].kind == "full"

        def broken(*args: Any, **kwargs: Any) -> Iterator[Any]:
            yield np.zeros(3, "i4"), np.zeros(3, "i8")
            raise OSError("disk full while indexing")

        monkeypatch.setattr(indexstore, "sorted_pieces", broken)
        with pytest.raises(OSError, match="disk full"):
            ColumnIndex.build(table, "i4", kind="light")
        with pytest.raises(OSError, match="disk full"):
            ColumnIndex.build(table, "f8")
        assert list(f.get_node("/_p_hsindex_t")._g_link_table()) == ["i4"]
        kept = table_indexes(table)["i4"]
        assert kept.kind == "full"
        _check_index(kept, records["i4"])


@pytest.mark.parametrize(("args", "error", "match"), [
    ({"kind": "heavy"}, ValueError, "'heavy'"),
    ({"optlevel": 10}, ValueError, "not 10"),
    ({"optlevel": 2.5}, ValueError, "not 2.5"),
    ({"optlevel": True}, ValueError, "not True"),
    ({"filters": "zlib"}, TypeError, "'zlib'"),
    ({"tmp_dir": "/no/such/dir"}, ValueError, "'/no/such/dir'"),
    ({"chunkrows": 0}, ValueError, "not 0"),
    ({"progress": "yes"}, TypeError, "'yes'"),
    ({"colpath": "c"}, TypeError, r"column 'c' .* complex \(complex128\)"),
    ({"colpath": "m"}, TypeError, r"column 'm' .* multidimensional cells \(2,\)"),
    ({"colpath": "nest"}, TypeError, "column 'nest' .* nested group"),
    ({"colpath": "nope"}, KeyError, "'nope'"),
])
def test_build_rejects_bad_arguments(tmp_path: Path, args: dict[str, Any], error: type,
                                     match: str) -> None:
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", _records(10))
        options: dict[str, Any] = {"colpath": "f8"} | args
        with pytest.raises(error, match=match):
            ColumnIndex.build(table, options.pop("colpath"), **options)
        assert "_p_hsindex_t" not in f.root


class _Prefix:
    """The first ``nrows`` rows of a stored table, as the index sees a table: appending
    rows is raising ``nrows``.  (A real table would bring its indexes up to date by
    itself when it writes appended rows, which is what this test does by hand.)"""

    def __init__(self, table: Any, nrows: int) -> None:
        self._table = table
        self.nrows = nrows
        self._v_file, self._v_pathname = table._v_file, table._v_pathname
        self._g_h5id = table._g_h5id
        self.name, self.cols = table.name, table.cols

    @property
    def parent(self) -> Any:
        return self._table.parent

    def _ready(self) -> None:
        pass


@pytest.mark.parametrize("colpath", ["f8", "f2", "i8", "u8", "s", "b", "nest/x"])
@pytest.mark.parametrize("in_memory", [True, False])
def test_append_rows_keeps_the_index_sorted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            colpath: str, in_memory: bool) -> None:
    if not in_memory:
        monkeypatch.setattr(indexstore, "IN_MEMORY_MERGE_ROWS", 10)  # rebuild instead
    records = _records(400, seed=5)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        stored = f.create_table("/", "t", records)
        stored.flush()
        table = _Prefix(stored, 0)
        index = ColumnIndex.build(table, colpath, chunkrows=8)  # type: ignore[arg-type]
        for lo, hi in [(0, 0), (0, 150), (150, 151), (151, 290), (290, 400)]:
            table.nrows = hi
            index.append_rows(lo, _field(records[lo:hi], colpath))
            _check_index(index, _field(records[:hi], colpath))
            assert not index.dirty and not index.stale
        reopened = ColumnIndex.open(stored, colpath)
        assert reopened is not None
        _check_index(reopened, _field(records, colpath))
        assert reopened.nan_start == index.nan_start


def test_append_rows_only_rewrites_the_tail(tmp_path: Path) -> None:
    """Values above every indexed one (time stamps) are appended without moving others."""
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("t", "i8")]))
        table.append(np.arange(1000).astype([("t", "i8")]))
        index = ColumnIndex.build(table, "t", chunkrows=100)
        table.append(np.arange(1000, 1050).astype([("t", "i8")]))
        old = index.values

        def values(p0: int, p1: int) -> np.ndarray:
            assert p0 == 1000, "only the tail is read"
            return old(p0, p1)

        index.values = values  # type: ignore[method-assign]
        index.append_rows(1000, np.arange(1000, 1050))
        del index.values
        _check_index(index, np.arange(1050))


def test_rows_in_order_in_a_sorted_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """In a table sorted by the column every position holds its own row: lookups answer
    rows without opening the ``rows`` array.  Appends keep the count exact: values above
    every indexed one extend it, a smaller one cuts it at its place."""
    values = np.repeat(np.arange(100, dtype="i8"), 3)  # ties keep their row order
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("v", "i8")]))
        table.append(values.astype([("v", "i8")]))
        index = ColumnIndex.build(table, "v", chunkrows=16)
        _check_index(index, values)
        assert index._in_order == 300
        for new in (np.arange(100, 110), np.array([50, 7]), np.arange(200, 230)):
            table.append(new.astype([("v", "i8")]))
            values = np.concatenate([values, new])
            index.append_rows(len(values) - len(new), new)
            _check_index(index, values)  # 310; 24 (the new 7 follows the three old); 24
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        index = ColumnIndex.open(f.root.t, "v")
        assert index is not None and index._in_order == 24

        def no_rows_array() -> Vector:
            raise AssertionError("the rows array was opened")

        monkeypatch.setattr(index, "_rows_vector", no_rows_array)
        p0, p1 = index.positions(np.int64(2), True, np.int64(5), False)
        np.testing.assert_array_equal(index.rows(p0, p1), np.arange(6, 15))
        with pytest.raises(AssertionError, match="rows array was opened"):
            index.rows(0, 25)  # one past the positions in order


def test_firsts_move_between_attribute_and_array(tmp_path: Path) -> None:
    """Firsts up to FIRSTS_ATTRIBUTE_BYTES are an attribute, more are an array: an index
    whose firsts outgrow the attribute (appends) moves them, and both forms read back."""
    limit = indexstore.FIRSTS_ATTRIBUTE_BYTES // 8  # firsts of one-value chunks, f8
    values = np.random.default_rng(3).normal(size=limit + 40)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        stored = f.create_table("/", "t", values.astype([("v", "f8")]))
        table = _Prefix(stored, limit - 10)
        index = ColumnIndex.build(table, "v", chunkrows=1)  # type: ignore[arg-type]
        _check_index(index, values[: limit - 10])
        assert "firsts" not in index._group
        table.nrows = len(values)
        index.append_rows(limit - 10, values[limit - 10 :])
        _check_index(index, values)
        assert "firsts" in index._group
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        index = ColumnIndex.open(f.root.t, "v")
        assert index is not None
        p0, p1 = index.positions(np.float64(0.0), True, None, False)
        np.testing.assert_array_equal(np.sort(index.rows(p0, p1)), np.flatnonzero(values >= 0))


LAYOUT_1 = ("HS_INDEX_VERSION", "TABLE_ADDRESS", "DIRTY", "NELEMENTS", "NAN_START")


def _to_layout_1(group: h5py.Group) -> None:
    """Rewrite a column index group as layout 1 wrote it: the state as separate
    attributes, without the positions in order; firsts always an array."""
    version, address, dirty, nelements, nan_start, _ = group.attrs["HS_INDEX"].tolist()
    assert version == 2
    for name, value in zip(LAYOUT_1, (1, address, dirty, nelements, nan_start), strict=True):
        group.attrs[name] = np.int32(value) if name == "DIRTY" else np.int64(value)
    del group.attrs["HS_INDEX"]
    group.create_dataset("firsts", data=group.attrs["FIRSTS"])
    del group.attrs["FIRSTS"]


def test_a_version_1_index_is_still_read(tmp_path: Path) -> None:
    """Indexes of layout 1 answer queries as before; a change rewrites them as layout 2,
    and an index of a later layout is ignored."""
    records = _records(300, seed=9)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records)
        ColumnIndex.build(table, "f8", chunkrows=16)
    with h5py.File(tmp_path / "t.h5", "a") as h5:
        _to_layout_1(h5["_p_hsindex_t/f8"])
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        index = ColumnIndex.open(f.root.t, "f8")
        assert index is not None and index._in_order == 0
        p0, p1 = index.positions(np.float64(-1.0), False, np.float64(1.0), True)
        expected = np.flatnonzero((records["f8"] > -1) & (records["f8"] <= 1))
        np.testing.assert_array_equal(np.sort(index.rows(p0, p1)), expected)
    with hyperslab.open_file(tmp_path / "t.h5", "a") as f:  # a change writes version 2
        table = f.root.t
        table.append(records[:5])
        table.flush()
        index = ColumnIndex.open(table, "f8")
        assert index is not None and index.current
        _check_index(index, np.concatenate([records["f8"], records["f8"][:5]]))
        assert not set(LAYOUT_1) & set(index._group._v_attrs._f_list("all"))
    with h5py.File(tmp_path / "t.h5", "a") as h5:
        attrs = h5["_p_hsindex_t/f8"].attrs
        attrs["HS_INDEX"] = [3, *attrs["HS_INDEX"][1:]]  # a layout not known here
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        assert ColumnIndex.open(f.root.t, "f8") is None


@pytest.mark.parametrize("stored", [np.zeros((2, 2)), np.array([1 + 2j])])
def test_malformed_firsts_are_a_clear_error(tmp_path: Path, stored: np.ndarray) -> None:
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", _records(50))
        ColumnIndex.build(table, "f8")
    with h5py.File(tmp_path / "t.h5", "a") as h5:
        h5["_p_hsindex_t/f8"].attrs["FIRSTS"] = stored
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        index = ColumnIndex.open(f.root.t, "f8")
        assert index is not None
        with pytest.raises(HDF5ExtError, match=r"_p_hsindex_t/f8 is malformed: .*FIRSTS"):
            index.positions(np.float64(0.0), True, None, False)


@pytest.mark.parametrize("state", [
    lambda good: good[:5],  # too short
    lambda good: np.array([b"not numbers"]),
    lambda good: good.astype("f8"),
    lambda good: [*good[:3], 4, 9, 0],  # first NaN after the rows indexed
])
def test_a_malformed_state_is_no_index(tmp_path: Path, state: Any) -> None:
    """A column group whose HS_INDEX is malformed holds no index: queries scan."""
    values = np.array([3, 1, 2, 0], dtype="i4")
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("v", "i4")]))
        table.append(values.astype([("v", "i4")]))
        ColumnIndex.build(table, "v")
    with h5py.File(tmp_path / "t.h5", "a") as h5:
        attrs = h5["_p_hsindex_t/v"].attrs
        attrs["HS_INDEX"] = state(attrs["HS_INDEX"])
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        assert ColumnIndex.open(f.root.t, "v") is None
        assert f.root.t.get_where_list("v > 1").tolist() == [0, 2]


def test_rows_in_order_out_of_range_or_of_layout_1(tmp_path: Path) -> None:
    """A count of positions in order below 0 (or absent: layout 1) reads the rows array;
    one above the positions indexed counts as all of them."""
    values = np.array([3, 1, 2, 0], dtype="i4")
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("v", "i4")]))
        table.append(values.astype([("v", "i4")]))
        ColumnIndex.build(table, "v")
    for stored, expected in ((-5, 0), (99, 4), (None, 0)):
        with h5py.File(tmp_path / "t.h5", "a") as h5:
            group = h5["_p_hsindex_t/v"]
            if stored is None:
                _to_layout_1(group)
            else:
                group.attrs["HS_INDEX"] = [*group.attrs["HS_INDEX"][:5], stored]
        with hyperslab.open_file(tmp_path / "t.h5") as f:
            index = ColumnIndex.open(f.root.t, "v")
            assert index is not None and index._in_order == expected
            if expected == 0:
                np.testing.assert_array_equal(index.rows(0, 4), [3, 1, 2, 0])


def test_append_rows_rejects_a_gap_or_bad_values(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", _records(10))
        index = ColumnIndex.build(table, "i4")
        with pytest.raises(ValueError, match=r"must start at row 10 .* not 12"):
            index.append_rows(12, np.zeros(2, "i4"))
        with pytest.raises(ValueError, match="1-D, not of shape"):
            index.append_rows(10, np.zeros((2, 2), "i4"))
        with pytest.raises(ValueError, match="do not convert to int32"):
            index.append_rows(10, ["x"])
        _check_index(index, _records(10)["i4"])
        table.append(_records(3))
        assert index.stale and not index.dirty


def test_remove_and_auto_index(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        table = f.create_table("/g", "t", _records(50))
        assert auto_index(table)
        a = ColumnIndex.build(table, "i4")
        b = ColumnIndex.build(table, "nest/x")
        assert f.get_node(f"/g/{index_group_name('t')}/{column_key('nest/x')}/sorted")
        a.remove()
        assert list(table_indexes(table)) == ["nest/x"]
        b.remove()
        assert "_p_hsindex_t" not in f.root.g  # empty: removed
        set_auto_index(table, False)
        ColumnIndex.build(table, "f8").remove()
        assert "_p_hsindex_t" in f.root.g  # kept for its AUTO_INDEX setting
    with hyperslab.open_file(path, "a") as f:
        table = f.root.g.t
        assert not auto_index(table)
        ColumnIndex.build(table, "f8")
        remove_table_indexes(table)
        assert "_p_hsindex_t" not in f.root.g and auto_index(table)


def test_progress_bar_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    clock = iter(range(0, 10_000, 2))
    monkeypatch.setattr(indexstore, "_now", lambda: next(clock))
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", _records(500))
        ColumnIndex.build(table, "f8", run_rows=100, progress=True)
    err = capsys.readouterr().err
    assert "indexing /t.cols.f8:" in err and "100% (1000/1000)" in err
    assert err.endswith("\n")


def test_indexes_are_hidden_from_hyperslab_and_pytables(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    records = _records(300)
    with hyperslab.open_file(path, "w") as f:
        group = f.create_group("/", "g")
        table = f.create_table(group, "t", repack_fields(records[["f8", "i4", "s", "nest"]]))
        for colpath in ("f8", "s", "nest/x"):
            ColumnIndex.build(table, colpath)
        assert [n._v_pathname for n in f.list_nodes("/g")] == ["/g/t"]
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/g", "/g/t"]
    with tables.open_file(path) as f:  # warnings are errors here
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/g", "/g/t"]
        assert [n._v_pathname for n in f.list_nodes("/g")] == ["/g/t"]
        assert "_p_hsindex_t" in f.root.g._v_hidden
        table = f.root.g.t
        assert not table.indexed
        np.testing.assert_array_equal(table.read(field="f8"), records["f8"])
        assert table.read_where("i4 > 0").shape == ((records["i4"] > 0).sum(),)
        # Even read directly, the index arrays are ordinary PyTables leaves.
        sorted_x = f.get_node("/g/_p_hsindex_t/nest.x/sorted").read()
        np.testing.assert_array_equal(sorted_x, np.sort(records["nest"]["x"]))
