"""Column indexes in PyTables' own layout (hyperslab.nodes.indexes.store and its builders),
checked node by node against the indexes PyTables writes, invariant by invariant against
NumPy, and query by query with PyTables itself as the oracle in both directions."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.errors import FileModeError, HDF5ExtError, OldIndexWarning
from hyperslab.nodes.indexes import build as indexbuild
from hyperslab.nodes.indexes import progress as indexprogress
from hyperslab.nodes.indexes.build import build_index, segments
from hyperslab.nodes.indexes.layout import decode_buckets
from hyperslab.nodes.indexes.sizes import Geometry
from hyperslab.nodes.indexes.store import TABLE_ADDRESS, ColumnIndex, open_index
from hyperslab.storage.vectors import Matrix, Vector

KINDS = ["ultralight", "light", "medium", "full"]
SMALL = (3072, 768, 192, 24)  # superblock, block, slice and chunk sizes: many slices
ROWS = 1000  # 5 full slices of SMALL and a last row of 40


def _records(n: int, seed: int = 0, nan: bool = True) -> np.ndarray:
    """Rows with ties, extremes, strings, bools, a nested column and columns that cannot
    be indexed."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype([
        ("f8", "f8"), ("f4", "f4"), ("f2", "f2"), ("i1", "i1"), ("i4", "i4"), ("i8", "i8"),
        ("u1", "u1"), ("u4", "u4"), ("b", "?"), ("s", "S3"), ("nest", [("x", "i2")]),
        ("c", "c16"), ("m", "f4", (2,)),
    ])
    rec = np.zeros(n, dtype)
    special = [0.0, -0.0, 0.5, 1.0, 2.5, -3.0, np.inf, -np.inf] + ([np.nan] if nan else [])
    floats = rng.choice(special, n)
    rec["f8"] = np.where(rng.random(n) < 0.5, floats, rng.normal(size=n))
    rec["f4"] = floats
    rec["f2"] = rng.choice([0.1, 0.2, 65504.0, -1.0] + ([np.nan] if nan else []), n)
    rec["i1"] = rng.choice([-128, -1, 0, 1, 127], n)
    rec["i4"] = rng.integers(-50, 50, n)
    rec["i8"] = rng.choice([-(2**63), -1, 0, 2**53 + 1, 2**63 - 1], n)
    rec["u1"] = rng.integers(0, 256, n)
    rec["u4"] = rng.choice(np.array([0, 1, 2**31, 2**32 - 1], dtype="u4"), n)
    rec["b"] = rng.random(n) < 0.3
    rec["s"] = rng.choice([b"", b"a", b"ab", b"abc", b"b", b"ba"], n)
    rec["nest"]["x"] = rng.integers(-5, 5, n)
    return rec


INDEXABLE = ["f8", "f4", "f2", "i1", "i4", "i8", "u1", "u4", "b", "s", "nest/x"]


def _field(records: np.ndarray, colpath: str) -> np.ndarray:
    for part in colpath.split("/"):
        records = records[part]
    return records


def _eq(a: Any, b: Any) -> bool:
    """Equal arrays (NaNs equal to NaNs)."""
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f"))


def _index(table: Any, colpath: str) -> ColumnIndex:
    index = open_index(table, colpath)
    assert index is not None
    return index


# ---------------------------------------------------------------------- the layout
def _describe(h5: h5py.File, path: str) -> dict[str, Any]:
    """Everything PyTables could look at in an index container, but the values of the
    data and of ``is_csi``."""
    found: dict[str, Any] = {}

    def attrs(obj: Any) -> dict[str, Any]:
        out = {}
        for name in obj.attrs:
            aid = h5py.h5a.open(obj.id, name.encode())
            ftype = aid.get_type()
            value = obj.attrs[name]
            if name == "is_csi":
                value = "bool"
            elif isinstance(value, bytes):
                value = value.decode()
            out[name] = (type(ftype).__name__, ftype.get_size(),
                         ftype.get_cset() if isinstance(ftype, h5py.h5t.TypeStringID) else 0,
                         value if np.ndim(value) == 0 else tuple(value))
        return out

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset):
            dcpl = obj.id.get_create_plist()
            pipeline = [dcpl.get_filter(i)[:3] for i in range(dcpl.get_nfilters())]
            found[name] = (obj.maxshape, obj.chunks, obj.dtype.str, pipeline,
                           obj.fillvalue.tolist(), dcpl.get_fill_time(), attrs(obj))
        else:
            found[name] = attrs(obj)

    found["."] = attrs(h5[path])
    h5[path].visititems(visit)
    return found


def _write_both(tmp_path: Path, records: np.ndarray, columns: list[str], kind: str,
                optlevel: int, blocksizes: tuple[int, int, int, int] | None,
                filters: Any = None) -> tuple[Path, Path]:
    """The same table indexed by PyTables and by hyperslab, in two files."""
    paths = tmp_path / "pytables.h5", tmp_path / "hyperslab.h5"
    for module, path in zip((tables, hyperslab), paths, strict=True):
        with module.open_file(str(path), "w") as f:
            table = f.create_table("/", "t", records, expectedrows=len(records),
                                   chunkshape=(50,))
            for colpath in columns:
                column = table.cols._f_col(colpath)
                options: dict[str, Any] = {"kind": kind, "optlevel": optlevel,
                                           "_blocksizes": blocksizes}
                if filters is not None:
                    options["filters"] = module.Filters(**filters)
                column.create_index(**options)
    return paths


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("optlevel", [0, 3, 6, 9])
def test_nodes_are_those_pytables_writes(tmp_path: Path, kind: str, optlevel: int) -> None:
    """Groups, arrays, classes, titles, versions, attribute types and values, shapes,
    chunk shapes, dtypes, filters and fill values: all as PyTables writes them."""
    records = _records(ROWS, nan=False)
    paths = _write_both(tmp_path, records, ["f8", "i4", "s", "nest/x"], kind, optlevel,
                        SMALL)
    with h5py.File(paths[0], "r") as ours_pt, h5py.File(paths[1], "r") as ours_hs:
        theirs, ours = _describe(ours_pt, "_i_t"), _describe(ours_hs, "_i_t")
    ours["f8"].pop(TABLE_ADDRESS[0:0] or TABLE_ADDRESS)  # hyperslab's one addition
    for colpath in ("i4", "s", "nest/x"):
        ours[colpath].pop(TABLE_ADDRESS)
    assert ours == theirs


@pytest.mark.parametrize("kind", KINDS)
def test_sizes_are_those_pytables_computes(tmp_path: Path, kind: str) -> None:
    """Without ``_blocksizes``, the sizes come from the rows expected, as in PyTables."""
    records = _records(3000, nan=False)
    paths = _write_both(tmp_path, records, ["i4"], kind, 6, None,
                        filters={"complevel": 5, "complib": "blosc2:lz4", "shuffle": True})
    with h5py.File(paths[0], "r") as theirs_h5, h5py.File(paths[1], "r") as ours_h5:
        theirs, ours = _describe(theirs_h5, "_i_t"), _describe(ours_h5, "_i_t")
    ours["i4"].pop(TABLE_ADDRESS)
    assert ours == theirs


@pytest.mark.parametrize("optlevel", [0, 6])
def test_ultralight_values_equal_pytables(tmp_path: Path, optlevel: int) -> None:
    """PyTables never reorders an ultralight index: each slice holds its own rows, sorted,
    so the stored values (and the buckets, as multisets) are PyTables' exactly."""
    records = _records(ROWS, nan=False)
    paths = _write_both(tmp_path, records, ["i4"], "ultralight", optlevel, SMALL)
    with h5py.File(paths[0], "r") as theirs, h5py.File(paths[1], "r") as ours:
        for name in ("sorted", "ranges", "bounds", "abounds", "zbounds", "mbounds",
                     "mranges", "sortedLR"):
            np.testing.assert_array_equal(ours[f"_i_t/i4/{name}"][:],
                                          theirs[f"_i_t/i4/{name}"][:], err_msg=name)
        for name in ("indices", "indicesLR"):
            np.testing.assert_array_equal(np.sort(ours[f"_i_t/i4/{name}"][:], axis=-1),
                                          np.sort(theirs[f"_i_t/i4/{name}"][:], axis=-1))


# ---------------------------------------------------------------------- invariants
def _check_invariants(h5path: Path, table_path: str, colpath: str, column: np.ndarray,
                      chunkrows: int, *, built_here: bool = True) -> None:
    """What PyTables relies on in an index, read with h5py: sorted slices, ranges and
    bounds of them, and entries that locate every row once (for an index built here:
    within the rows the kind lets them move in)."""
    from hyperslab.nodes.indexes.layout import index_path
    from hyperslab.nodes.indexes.sizes import bucket_rows

    with h5py.File(h5path, "r") as h5:
        group = h5[index_path(table_path, colpath)]
        attrs = {k: int(group.attrs[k]) for k in ("superblocksize", "blocksize", "slicesize",
                                                  "chunksize", "reduction")}
        sorted_, indices = group["sorted"][:], group["indices"][:]
        indsize = indices.dtype.itemsize
        g = Geometry(attrs["superblocksize"], attrs["blocksize"], attrs["slicesize"],
                     attrs["chunksize"], attrs["reduction"], indsize,
                     bucket_rows(indsize, chunkrows, attrs["chunksize"],
                                 attrs["slicesize"], attrs["blocksize"]))
        nslr = int(group["sortedLR"].attrs["nelements"])
        nilr = int(group["indicesLR"].attrs["nelements"])
        lr_values = group["sortedLR"][:]
        rcs = g.rchunksize
        slices = [row for row in sorted_]
        if nilr:
            slices.append(lr_values[:nslr])
        entries = [row for row in indices]
        if nilr:
            entries.append(group["indicesLR"][:nilr])
        assert group.attrs["DIRTY"] == 0
        assert g.slicesize * len(sorted_) + nilr == len(column)
        for number, values in enumerate(slices):
            assert _eq(np.sort(values), values)
            if number < len(sorted_):
                assert _eq(group["ranges"][number][:1], values[:1])
                assert _eq(group["bounds"][number], values[rcs::rcs])
            else:
                edges = lr_values[nslr : nslr + (nslr - 1) // rcs + 2]
                assert _eq(edges[:-1], values[::rcs])
        nb = g.nbounds + 1
        assert _eq(group["abounds"][:], np.concatenate(
            [s[0::rcs] for s in sorted_]) if len(sorted_) else [])
        assert len(group["zbounds"]) == len(group["mbounds"]) == nb * len(sorted_)
        # Every row is located once: rows (full) or buckets (the other kinds).
        if indsize == 8:
            located = np.concatenate(entries).astype(np.int64) if entries else []
            assert sorted(located) == list(range(len(column)))
            if g.reduction == 1 and entries:
                values = np.concatenate(slices)
                assert _eq(values, column[located])
        else:
            buckets = np.concatenate([decode_buckets(e, n, g)[: len(e)]
                                      for n, e in enumerate(entries)]) if entries else []
            assert sorted(buckets) == sorted(np.arange(len(column)) // g.lbucket)
        if built_here and g.reduction == 1 and indsize < 8 and entries:
            # Each entry's value is that of a row of its bucket.
            for first, lo, hi in segments(len(column), g):
                count = (hi - lo + g.slicesize - 1) // g.slicesize
                values = np.concatenate(slices[first : first + count])
                assert _eq(values, np.sort(column[lo:hi]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("optlevel", [0, 5, 9])
def test_built_indexes_keep_pytables_invariants(tmp_path: Path, kind: str,
                                                optlevel: int) -> None:
    records = _records(ROWS)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", records, chunkshape=(50,))
        for colpath in INDEXABLE:
            build_index(table, colpath, kind=kind, optlevel=optlevel, blocksizes=SMALL)
    for colpath in INDEXABLE:
        _check_invariants(path, "/t", colpath, _field(records, colpath), 50)


@pytest.mark.parametrize("kind", KINDS)
def test_full_indexes_are_completely_sorted(tmp_path: Path, kind: str) -> None:
    records = _records(ROWS, nan=False)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records, chunkshape=(50,))
        index = build_index(table, "f8", kind=kind, optlevel=3, blocksizes=SMALL)
        assert index.is_csi == (kind == "full")
        if kind in ("full", "medium"):  # the slices never overlap (the last row may)
            assert index.overlaps() <= (0 if kind == "full" else 5)
    with tables.open_file(str(tmp_path / "t.h5")) as f:
        assert f.root.t.cols.f8.index.is_csi == (kind == "full")


# ---------------------------------------------------------------------- lookups
@pytest.fixture(scope="module", params=[("full", 9), ("medium", 6), ("light", 0),
                                        ("ultralight", 0), ("ultralight", 9)])
def indexed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Any, np.ndarray]]:
    """A table of ROWS rows in chunks of 50 with an index of each kind on every indexable
    column, in small slices (light:0 and ultralight:0 keep one sorted value in 4 and 8)."""
    kind, optlevel = request.param
    path = tmp_path_factory.mktemp("indexed") / f"{kind}.h5"
    records = _records(ROWS)
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", records, chunkshape=(50,))
        for colpath in INDEXABLE:
            build_index(table, colpath, kind=kind, optlevel=optlevel, blocksizes=SMALL)
    with hyperslab.open_file(path) as f:
        yield f.root.t, records


def _check_lookup(table: Any, records: np.ndarray, colpath: str, lo: Any, lo_inc: bool,
                  hi: Any, hi_inc: bool) -> None:
    column = _field(records, colpath)
    index = _index(table, colpath)
    mask = ~np.isnan(column) if column.dtype.kind == "f" else np.ones(len(column), bool)
    if lo is not None:
        mask &= (column >= lo) if lo_inc else (column > lo)
    if hi is not None:
        mask &= (column <= hi) if hi_inc else (column < hi)
    runs = index.search(lo, lo_inc, hi, hi_inc)
    rows = index.candidate_rows(runs)
    assert np.all(np.diff(rows) > 0)
    matching = np.flatnonzero(mask)
    if index.exact:
        np.testing.assert_array_equal(rows, matching)
        assert ColumnIndex.entries(runs) == len(matching)
    else:
        assert np.isin(matching, rows).all()


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colpath=st.sampled_from(INDEXABLE), picks=st.tuples(st.integers(0, ROWS - 1),
                                                          st.integers(0, ROWS - 1)),
       lo_none=st.booleans(), hi_none=st.booleans(), lo_inc=st.booleans(),
       hi_inc=st.booleans())
def test_lookups_find_every_matching_row(indexed: tuple[Any, np.ndarray], colpath: str,
                                         picks: tuple[int, int], lo_none: bool,
                                         hi_none: bool, lo_inc: bool, hi_inc: bool) -> None:
    """Bounds of the column's dtype (what the planner gives): full indexes give exactly
    the matching rows, the others whole buckets that hold them all."""
    table, records = indexed
    column = _field(records, colpath)
    lo = None if lo_none else column[picks[0]]
    hi = None if hi_none else column[picks[1]]
    if column.dtype.kind == "f" and ((lo is not None and np.isnan(lo))
                                     or (hi is not None and np.isnan(hi))):
        lo = None if lo is not None and np.isnan(lo) else lo
        hi = None if hi is not None and np.isnan(hi) else hi
    _check_lookup(table, records, colpath, lo, lo_inc, hi, hi_inc)


@pytest.mark.parametrize("colpath", ["f8", "f4", "f2"])
def test_nan_runs_hold_every_nan(indexed: tuple[Any, np.ndarray], colpath: str) -> None:
    table, records = indexed
    index = _index(table, colpath)
    rows = index.candidate_rows(index.nan_runs())
    nans = np.flatnonzero(np.isnan(_field(records, colpath)))
    assert len(nans) and np.isin(nans, rows).all()
    if index.exact:
        np.testing.assert_array_equal(rows, nans)
    assert _index(table, "i4").nan_runs() == []


def test_lookups_read_one_chunk_per_bound_and_slice(indexed: tuple[Any, np.ndarray],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup reads at most one chunk of sorted values per bound in each slice whose range
    holds the bound, each chunk once; the same lookup again reads none."""
    table, _ = indexed
    index = _index(table, "i4")
    index._chunks.clear()
    reads: list[tuple[Any, ...]] = []
    real_row, real_read = Matrix.read_row, Vector.read

    def row_spy(self: Matrix, row: int, start: int, stop: int) -> np.ndarray:
        reads.append((row, start, stop))
        return real_row(self, row, start, stop)

    def spy(self: Vector, start: int, stop: int) -> np.ndarray:
        reads.append((start, stop))
        return real_read(self, start, stop)

    monkeypatch.setattr(Matrix, "read_row", row_spy)
    monkeypatch.setattr(Vector, "read", spy)
    index.search(np.int32(-10), True, np.int32(10), False)
    assert 0 < len(reads) <= 2 * (index.nslices + 1)
    assert len(set(reads)) == len(reads)
    assert all(stop - start <= index.geometry.rchunksize for *_, start, stop in reads)
    reads.clear()
    index.search(np.int32(-10), True, np.int32(10), False)
    assert reads == []


def test_lookup_errors_name_the_bound(indexed: tuple[Any, np.ndarray]) -> None:
    table, _ = indexed
    with pytest.raises(TypeError, match=r"column 'i4' must be scalars of its dtype int32"):
        _index(table, "i4").search(5, True, None, True)
    with pytest.raises(TypeError, match=r"not array\(\[1\., 2\.\]\)"):
        _index(table, "f8").search(np.array([1.0, 2.0]), True, None, True)
    with pytest.raises(IndexError, match=r"positions 5\.\.4"):
        _index(table, "i4").indices_at(5, 4)


# ---------------------------------------------------------------------- PyTables' indexes
def _pytables_indexed(path: Path, records: np.ndarray, kind: str, optlevel: int,
                      blocksizes: Any = SMALL) -> None:
    with tables.open_file(str(path), "w") as f, warnings.catch_warnings():
        # PyTables' optimizer does not always reach a complete sort in tiny slices.
        warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
        table = f.create_table("/", "t", records, chunkshape=(50,))
        for colpath in INDEXABLE:
            table.cols._f_col(colpath).create_index(kind=kind, optlevel=optlevel,
                                                    _blocksizes=blocksizes)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("optlevel", [0, 6, 9])
def test_pytables_indexes_are_used(tmp_path: Path, kind: str, optlevel: int,
                                   indexed_queries: list[int]) -> None:
    """Indexes PyTables built (and optimized: values swapped between slices) answer
    hyperslab's lookups and queries like a scan."""
    records = _records(ROWS, seed=5)
    path = tmp_path / "t.h5"
    _pytables_indexed(path, records, kind, optlevel)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        assert table.colindexed == dict.fromkeys(table.colpathnames, False) | dict.fromkeys(
            INDEXABLE, True)
        rng = np.random.default_rng(optlevel)
        assert not table.cols.f2.index.searchable  # PyTables sorts them by bit patterns
        for colpath in (c for c in INDEXABLE if c != "f2"):
            column = _field(records, colpath)
            for _ in range(6):
                lo, hi = np.sort(rng.choice(column, 2)) if column.dtype.kind != "f" else (
                    column[rng.integers(ROWS)], column[rng.integers(ROWS)])
                _check_lookup(table, records, colpath, lo, True, hi, rng.random() < .5)
        for condition in ("(i4 > -10) & (i4 < 3)", "s == b'ab'", "b", "(u4 >= 2147483648)",
                          "(f8 > 0.2) & (f8 <= 1.0)", "x == 3"):
            condvars = {"x": table.cols.nest.x} if "x" in condition else None
            got = table.get_where_list(condition, condvars)
            expected = np.flatnonzero(_scan(records, condition))
            np.testing.assert_array_equal(got, expected, err_msg=condition)
    assert len(indexed_queries) == 6


def _scan(records: np.ndarray, condition: str) -> np.ndarray:
    names = {name: records[name] for name in records.dtype.names or ()}
    names["x"] = records["nest"]["x"]
    import numexpr

    return numexpr.evaluate(condition, names)


def test_legacy_pytables_index_files(indexed_queries: list[int]) -> None:
    """PyTables 2.0 and 2.1 index files (from PyTables' own test data): found, read and
    used, with the results of a scan."""
    data = Path(tables.__file__).parent / "tests"
    for name, version, kinds in (("indexes_2_0.h5", "2.0", ["full"] * 4),
                                 ("indexes_2_1.h5", "2.1",
                                  ["ultralight"] * 3 + ["full"])):  # as PyTables says
        with hyperslab.open_file(data / name) as f:
            table1, table2 = f.root.table1, f.root.table2
            assert table1.indexed and not table2.indexed
            found = [table1.cols._f_col(f"var{i}").index for i in range(1, 5)]
            assert [index.state.version for index in found] == [version] * 4
            assert [index.kind for index in found] == kinds
            assert all(index.current for index in found)
            for condition in ("(var3 >= 0) & (var3 <= 100)", "var2 == True",
                              "(var4 > 10.0) & (var4 < 200.0)", "var1 <= b'500'"):
                got = table1.read_where(condition)
                expected = table2.read_where(condition)
                np.testing.assert_array_equal(np.sort(got, order="var3"),
                                              np.sort(expected, order="var3"))
    assert len(indexed_queries) == 8


def test_index_api_equals_pytables(tmp_path: Path) -> None:
    records = _records(ROWS, nan=False)
    path = tmp_path / "t.h5"
    _pytables_indexed(path, records, "full", 6)
    with tables.open_file(str(path)) as f:
        theirs = f.root.t.cols.i4.index
        expected = (theirs.read_sorted(), theirs.read_indices(), theirs.read_sorted(3),
                    theirs.read_indices(10, 500, 7), theirs.read_sorted(2, 900, -3),
                    theirs[17], theirs[-1], theirs[5:40:4], len(theirs), theirs.nelements,
                    theirs.is_csi, theirs.dirty, theirs.kind, theirs.optlevel)
        assert str(theirs) == "Index(6, fullshuffle, zlib(1)).is_csi=False"
    with hyperslab.open_file(path) as f:
        ours = f.root.t.cols.i4.index
        got = (ours.read_sorted(), ours.read_indices(), ours.read_sorted(3),
               ours.read_indices(10, 500, 7), ours.read_sorted(2, 900, -3),
               ours[17], ours[-1], ours[5:40:4], len(ours), ours.nelements,
               ours.is_csi, ours.dirty, ours.kind, ours.optlevel)
        assert str(ours) == "Index(6, full, shuffle, zlib(1)).is_csi=False"  # a comma more
        assert ours.column is f.root.t.cols.i4 and ours.table is f.root.t
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- changes
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", ["hyperslab", "pytables"])
def test_appends_keep_the_index_in_step_both_ways(tmp_path: Path, kind: str,
                                                  writer: str) -> None:
    """Rows appended by either library (a few, then past slice boundaries) reach the
    other's index: both libraries' queries still equal a scan, the invariants hold."""
    records = _records(3 * ROWS, seed=8, nan=False)
    path = tmp_path / "t.h5"
    first = hyperslab if writer == "hyperslab" else tables
    with first.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", records[:ROWS], chunkshape=(50,))
        table.cols.i4.create_index(kind=kind, optlevel=6, _blocksizes=SMALL)
        table.cols.s.create_index(kind=kind, optlevel=6, _blocksizes=SMALL)
    for step, (lo, hi) in enumerate([(ROWS, ROWS + 7), (ROWS + 7, ROWS + 500),
                                     (ROWS + 500, 3 * ROWS)]):
        module = (tables, hyperslab)[step % 2] if writer == "pytables" else (
            hyperslab, tables)[step % 2]
        with module.open_file(str(path), "a") as f:
            f.root.t.append(records[lo:hi])
        for reader in (tables, hyperslab):
            with reader.open_file(str(path)) as f:
                table = f.root.t
                for condition in ("(i4 > -10) & (i4 < 3)", "s == b'ab'"):
                    got = np.sort(table.get_where_list(condition))
                    expected = np.flatnonzero(_scan(records[:hi], condition))
                    np.testing.assert_array_equal(got, expected, err_msg=f"{reader} {hi}")
                    assert table.will_query_use_indexing(condition)
        for colpath in ("i4", "s"):
            _check_invariants(path, "/t", colpath, _field(records[:hi], colpath), 50,
                              built_here=False)


def test_full_index_appends_keep_its_last_row(tmp_path: Path) -> None:
    """A complete sort puts the largest values in the last row, whatever their rows: an
    append keeps those entries and adds the new rows (PyTables' rule for full indexes)."""
    records = _records(ROWS + 300, seed=2, nan=False)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", records[:ROWS], chunkshape=(50,))
        index = build_index(table, "i4", kind="full", optlevel=9, blocksizes=SMALL)
        assert index.is_csi
        table.append(records[ROWS:])
        table.flush()
        index = _index(table, "i4")
        assert not index.is_csi and index.nelements == ROWS + 300 and not index.dirty
    _check_invariants(path, "/t", "i4", records["i4"], 50, built_here=False)
    with tables.open_file(str(path)) as f:
        assert not f.root.t.cols.i4.index.is_csi
        np.testing.assert_array_equal(np.sort(f.root.t.read_sorted("i4", field="i4")),
                                      np.sort(records["i4"]))


def test_a_dirty_or_stale_index_is_never_used(tmp_path: Path,
                                              indexed_queries: list[int]) -> None:
    records = _records(ROWS, nan=False)
    path = tmp_path / "t.h5"
    _pytables_indexed(path, records, "medium", 6)
    with h5py.File(path, "a") as h5:  # another program appends without the index
        table = h5["t"]
        table.resize((ROWS + 10,))
        table[ROWS:] = records[:10]
        table.attrs["NROWS"] = ROWS + 10
    both = np.concatenate([records, records[:10]])
    with hyperslab.open_file(path) as f:
        index = f.root.t.cols.i4.index
        assert index.stale and not index.current
        np.testing.assert_array_equal(f.root.t.get_where_list("i4 == 3"),
                                      np.flatnonzero(both["i4"] == 3))
    assert indexed_queries == []
    with hyperslab.open_file(path, "a") as f:  # autoindex: brought up to date
        np.testing.assert_array_equal(f.root.t.get_where_list("i4 == 3"),
                                      np.flatnonzero(both["i4"] == 3))
        assert f.root.t.cols.i4.index.current
    assert len(indexed_queries) == 1
    with h5py.File(path, "a") as h5:
        h5["_i_t/i4"].attrs["DIRTY"] = np.int32(1)
    with hyperslab.open_file(path) as f:
        assert f.root.t.cols.i4.index.dirty
        f.root.t.get_where_list("i4 == 3")
    assert len(indexed_queries) == 1


def test_an_index_never_serves_another_table(tmp_path: Path,
                                             indexed_queries: list[int]) -> None:
    """h5py renames an indexed table (its index stays behind) and a new table of as many
    rows takes the name: the index hyperslab built for the first is never used for it."""
    records = _records(ROWS, nan=False)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        build_index(f.create_table("/", "t", records), "i4")
    with h5py.File(path, "a") as h5:
        h5.move("t", "renamed")
        h5.copy(h5["renamed"], "t")
        h5["t"][:] = np.ascontiguousarray(records[::-1])
    with hyperslab.open_file(path) as f:
        index = f.root.t.cols.i4.index
        assert index.foreign and not index.current
        np.testing.assert_array_equal(f.root.t.get_where_list("i4 > 3"),
                                      np.flatnonzero(records["i4"][::-1] > 3))
    assert indexed_queries == []


# ---------------------------------------------------------------------- building
@pytest.mark.parametrize("complevel", [0, 5])
def test_build_out_of_core_with_progress(tmp_path: Path, complevel: int) -> None:
    records = _records(3000, seed=1)
    spill = tmp_path / "spill"
    spill.mkdir()
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records,
                               filters=hyperslab.Filters(complevel, "blosc2:lz4"),
                               chunkshape=(100,))
        for colpath, kind in (("f8", "full"), ("s", "medium"), ("i8", "light")):
            seen: list[int] = []
            index = build_index(table, colpath, kind=kind, run_rows=257, tmp_dir=str(spill),
                                progress=seen.append, blocksizes=SMALL,
                                filters=hyperslab.Filters(complevel, "blosc2:zstd"))
            assert index.filters.complevel == complevel
            assert seen == sorted(seen) and seen[-1] == 3000 and len(seen) > 12
    for colpath in ("f8", "s", "i8"):
        _check_invariants(tmp_path / "t.h5", "/t", colpath, records[colpath], 100)
    assert os.listdir(spill) == []


def test_metadata_persists_and_repr(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", _records(100))
        assert open_index(table, "f8") is None
        build_index(table, "f8", kind="full", optlevel=9)
        index = build_index(table, "i4", kind="light", optlevel=2,
                            filters=hyperslab.Filters(0))
        assert str(index) == repr(index) == "Index(2, light).is_csi=False"
        index.dirty = True
    with hyperslab.open_file(path, "r") as f:
        table = f.root.t
        full, light = table.cols.f8.index, table.cols.i4.index
        assert (full.kind, full.optlevel, full.is_csi, full.dirty) == ("full", 9, True, False)
        assert str(full) == "Index(9, full, shuffle, zlib(1)).is_csi=True"
        assert (light.kind, light.optlevel, light.dirty) == ("light", 2, True)
        assert full.nelements == 100 and not full.stale and full.current
        with pytest.raises(FileModeError):
            light.dirty = False
        with pytest.raises(FileModeError):
            build_index(table, "i8")


def test_build_replaces_an_index_and_failures_leave_the_old_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records(200)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", records)
        build_index(table, "i4", kind="ultralight")
        assert build_index(table, "i4", kind="full", optlevel=9).is_csi

        def broken(*args: Any, **kwargs: Any) -> Iterator[Any]:
            yield np.zeros(3, "i4"), np.zeros(3, "i8")
            raise OSError("disk full while indexing")

        monkeypatch.setattr(indexbuild, "sorted_pieces", broken)
        with pytest.raises(OSError, match="disk full"):
            build_index(table, "i4", kind="light")
        with pytest.raises(OSError, match="disk full"):
            build_index(table, "f8")
        assert sorted(f.get_node("/_i_t")._g_link_table()) == ["i4"]
        assert _index(table, "i4").kind == "full"
    _check_invariants(tmp_path / "t.h5", "/t", "i4", records["i4"], 200)


@pytest.mark.parametrize(("args", "error", "match"), [
    ({"kind": "heavy"}, ValueError, "'heavy'"),
    ({"optlevel": 10}, ValueError, "not 10"),
    ({"optlevel": 2.5}, ValueError, "not 2.5"),
    ({"optlevel": True}, ValueError, "not True"),
    ({"filters": "zlib"}, TypeError, "'zlib'"),
    ({"tmp_dir": "/no/such/dir"}, ValueError, "'/no/such/dir'"),
    ({"blocksizes": (8, 4, 2, 2)}, ValueError, r"\(8, 4, 2, 2\)"),
    ({"blocksizes": [96, 24, 6, 3]}, ValueError, r"\[96, 24, 6, 3\]"),
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
            build_index(table, options.pop("colpath"), **options)
        assert "_i_t" not in f.root  # refused before anything is written


def test_progress_bar_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # progress=True draws the bar (tqdm's) even where stderr is not a terminal.
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", _records(500))
        build_index(table, "f8", kind="full", run_rows=100, progress=True)
    err = capsys.readouterr().err
    assert "indexing /t.cols.f8:" in err and "100%" in err and "500/500" in err
    assert err.endswith("\n")


def test_progress_bar_counts_rows_and_closes_once(capsys: pytest.CaptureFixture[str]) -> None:
    report = indexprogress.StderrProgress("job", 500, 1000)
    for done in (0, 200, 1000, 1000):
        report(done)
    err = capsys.readouterr().err
    assert err.count("500/500") == 1 and err.endswith("\n")  # closed at the end, once


# ---------------------------------------------------------------------- bad files
@pytest.mark.parametrize(("damage", "match"), [
    (lambda g: g.__delitem__("indices"), "no 'indices' dataset"),
    (lambda g: g.__delitem__("ranges"), "no 'ranges' dataset"),
    (lambda g: g["sortedLR"].attrs.__setitem__("nelements", np.int64(10**6)),
     "last row holds"),
    (lambda g: g.attrs.__setitem__("slicesize", np.uint32(7)), "sizes"),
    (lambda g: g.attrs.__delitem__("chunksize"), "no 'chunksize' attribute"),
    (lambda g: g.attrs.__setitem__("optlevel", "six"), "'optlevel' attribute is not"),
])
def test_a_malformed_index_is_a_clear_error(tmp_path: Path, damage: Any, match: str) -> None:
    records = _records(ROWS)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        build_index(f.create_table("/", "t", records), "i4", kind="full",
                    blocksizes=SMALL)
    with h5py.File(tmp_path / "t.h5", "a") as h5:
        damage(h5["_i_t/i4"])
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        with pytest.raises(HDF5ExtError, match=match):
            f.root.t.get_where_list("i4 > 3")
        np.testing.assert_array_equal(f.root.t.read(field="i4"), records["i4"])


@pytest.mark.parametrize("kind", ["full", "medium"])
@pytest.mark.parametrize(("array", "change"), [
    ("ranges", lambda a: a[::-1]),  # a damaged header can point ranges at other data
    ("ranges", lambda a: np.zeros_like(a)),
    ("bounds", lambda a: a + 1),
    ("abounds", lambda a: a[::-1]),
    ("zbounds", lambda a: np.full_like(a, a.max())),
])
def test_an_index_whose_slice_edges_disagree_is_not_used(
        tmp_path: Path, kind: str, array: str, change: Any) -> None:
    """ranges, bounds and abounds/zbounds are three copies of each slice's edges written
    apart: when a damaged file makes them disagree, queries scan (results equal a scan's,
    where the damaged index would miss rows)."""
    records = _records(ROWS, nan=False)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        build_index(f.create_table("/", "t", records), "i4", kind=kind, blocksizes=SMALL)
    with h5py.File(path, "a") as h5:
        dataset = h5[f"_i_t/i4/{array}"]
        dataset[...] = change(dataset[...])
    with hyperslab.open_file(path) as f:
        table = f.root.t
        assert not table.cols.i4.index.searchable
        assert table.will_query_use_indexing("i4 > 3") == frozenset()
        np.testing.assert_array_equal(table.get_where_list("(i4 > 3) & (i4 < 500)"),
                                      np.flatnonzero((records["i4"] > 3)
                                                     & (records["i4"] < 500)))


def test_an_index_in_order_is_searchable(tmp_path: Path) -> None:
    records = _records(ROWS)  # NaNs too: they sort last in every copy of the edges
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        build_index(f.create_table("/", "t", records), "f8", kind="medium", blocksizes=SMALL)
    with tables.open_file(path, "a") as f:
        f.root.t.cols.i4.create_index(kind="light", optlevel=2)
    with hyperslab.open_file(path) as f:
        assert f.root.t.cols.f8.index.searchable and f.root.t.cols.i4.index.searchable


def test_old_layouts_are_ignored_with_a_warning(tmp_path: Path) -> None:
    """hyperslab's own earlier layout (``_p_hsindex_``, never released) and PyTables
    1.x's (``CINDEX``) are no indexes: queries scan."""
    records = _records(100, nan=False)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", records)
    with h5py.File(path, "a") as h5:
        h5.create_group("_p_hsindex_t/i4")
        h5.create_group("_i_t/f8").attrs["CLASS"] = np.bytes_(b"CINDEX")
    with hyperslab.open_file(path) as f:
        table = f.root.t
        with pytest.warns(OldIndexWarning, match="_p_hsindex_t"):
            assert not table.indexed
        np.testing.assert_array_equal(table.get_where_list("f8 > 0"),
                                      np.flatnonzero(records["f8"] > 0))


def test_indexes_are_hidden_from_hyperslab_and_pytables(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    records = _records(300, nan=False)
    with hyperslab.open_file(path, "w") as f:
        group = f.create_group("/", "g")
        table = f.create_table(group, "t", records[["f8", "i4", "s", "nest"]])
        for colpath in ("f8", "s", "nest/x"):
            build_index(table, colpath)
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/g", "/g/t"]
    with tables.open_file(str(path)) as f:  # warnings are errors here
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/g", "/g/t"]
        assert "_i_t" in f.root.g._v_hidden
        table = f.root.g.t
        assert table.indexed and table.colindexed == {"f8": True, "i4": False, "s": True,
                                                      "nest/x": True}
        assert isinstance(f.get_node("/g/_i_t/nest"), tables.index.IndexesDescG)
        np.testing.assert_array_equal(f.get_node("/g/_i_t/nest/x").read_sorted(),
                                      np.sort(records["nest"]["x"]))
        np.testing.assert_array_equal(np.sort(table.get_where_list("x < 0", {
            "x": table.cols.nest.x})), np.flatnonzero(records["nest"]["x"] < 0))


def test_sorted_reads_follow_pytables_indexes(tmp_path: Path) -> None:
    """read_sorted, itersorted and copy(sortby=) on a full index PyTables built (in small
    slices, so not completely sorted): the order PyTables reads."""
    records = _records(ROWS, seed=11, nan=False)
    path = tmp_path / "t.h5"
    _pytables_indexed(path, records, "full", 3)
    with tables.open_file(str(path), "a") as f:
        table = f.root.t
        theirs = (table.read_sorted("i4"), table.read_sorted("f8", start=5, stop=600, step=7),
                  [row["u4"] for row in table.itersorted("s", step=3)], table.cols.i4.index.is_csi)
        table.copy(newname="by_pytables", sortby="f8")
    with hyperslab.open_file(path, "a") as f:
        table = f.root.t
        ours = (table.read_sorted("i4"), table.read_sorted("f8", start=5, stop=600, step=7),
                [row["u4"] for row in table.itersorted("s", step=3)], table.cols.i4.index.is_csi)
        copy = table.copy(newname="by_hyperslab", sortby="f8")
        np.testing.assert_array_equal(copy.read(), f.root.by_pytables.read())
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_sizes_equal_pytables_arithmetic() -> None:
    """calc_blocksizes and reduction_level give PyTables' idxutils' answers."""
    from tables import idxutils

    from hyperslab.nodes.indexes.sizes import calc_blocksizes, reduction_level

    for expected in (0, 999, 10**5, 300_000, 10**7, 5 * 10**10, 10**13):
        for optlevel in range(10):
            for indsize in (1, 2, 4, 8):
                sizes = idxutils.calc_chunksize(expected, optlevel, indsize)
                assert calc_blocksizes(expected, optlevel, indsize, 8) == sizes
                assert reduction_level(indsize, optlevel, sizes[2], sizes[3]) == \
                    idxutils.get_reduction_level(indsize, optlevel, sizes[2], sizes[3])
