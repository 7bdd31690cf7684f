"""``table.to_dask(index=...)``: a column as the dataframe's index, with divisions known
exactly when the column's CSI index proves the rows stored in its order.

Oracles: PyTables writes most tables and their indexes (its unstable sort puts the rows of
equal values out of order in the index), h5py appends rows behind an index's back, pandas
builds the expected frames (``set_index``) and the expected divisions are worked out here
from the column's values, boundary by boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pandas as pd
import pytest
import tables

import hyperslab
from hyperslab.nodes.files import pickling
from hyperslab.nodes.indexes.order import stored_in_order

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")
pytest.importorskip("distributed")

N = 2_000
CHUNK = 64
DTYPE = np.dtype([("key", "i8"), ("b", "f8"), ("info", [("x", "f4"), ("k", "i2")]),
                  ("vec", "f8", (2,)), ("name", "S6")])


def _records(key: Any) -> np.ndarray:
    rec = np.zeros(len(key), DTYPE)
    rec["key"] = key
    rec["b"] = np.arange(len(key)) * 0.5
    rec["info"]["x"] = np.arange(len(key)) % 11
    rec["info"]["k"] = np.arange(len(key)) % 7
    rec["vec"] = np.arange(2 * len(key)).reshape(-1, 2)
    rec["name"] = [b"n%05d" % (v // 2) for v in range(len(key))]
    return rec


def _sorted_keys() -> np.ndarray:
    """Sorted, with runs of equal values, some across chunk boundaries."""
    return np.sort(np.random.default_rng(3).integers(0, N // 5, N))


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    pickling.close_reopened_files()


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tables and CSI indexes written by PyTables: ``/sorted`` (keys in order, with ties),
    ``/unsorted`` (the same keys shuffled), ``/plain`` (sorted, its keys without an index,
    its sorted names with one), ``/nan`` (a sorted float column ending in NaN)."""
    path = tmp_path_factory.mktemp("indexed") / "t.h5"
    keys = _sorted_keys()
    shuffled = np.random.default_rng(4).permutation(keys)
    filters = tables.Filters(5, "blosc2:lz4")
    with tables.open_file(path, "w") as f:
        for name, key in [("sorted", keys), ("unsorted", shuffled), ("plain", keys)]:
            t = f.create_table("/", name, _records(key), chunkshape=(CHUNK,),
                               filters=filters)
            if name != "plain":
                t.cols.key.create_csindex()
            else:
                t.cols.name.create_csindex()
        rec = _records(keys)
        rec["b"][N - 5:] = np.nan
        f.create_table("/", "nan", rec, chunkshape=(CHUNK,)).cols.b.create_csindex()
    return path


def _expected_frame(path: Path, name: str, index: str, columns: list[str],
                    where: str | None = None) -> pd.DataFrame:
    """The table read by PyTables into pandas, indexed with ``set_index``."""
    with tables.open_file(path) as f:
        t = f.get_node("/", name)
        records = t.read() if where is None else t.read_where(where)
    flat = {"key": records["key"], "b": records["b"], "info/x": records["info"]["x"],
            "info/k": records["info"]["k"], "name": records["name"]}
    return pd.DataFrame(flat).set_index(index)[columns]


def _expected_divisions(values: np.ndarray, bounds: list[int]) -> tuple[Any, ...]:
    """Each boundary's value, a boundary inside a run of equal values moved to the run's
    end (dropped if that is not before the next one), and the last row's value."""
    starts = [0]
    for first in bounds[1:-1]:
        if values[first - 1] == values[first]:
            first = int(np.searchsorted(values, values[first], side="right"))
        if starts[-1] < first < len(values):
            starts.append(first)
    return (*(values[b].item() for b in starts), values[-1].item())


def _check(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


COLUMNS = ["b", "info/x", "info/k"]


def test_sorted_table_indexed_by_pytables_has_known_divisions(path: Path) -> None:
    keys = _sorted_keys()
    with tables.open_file(path) as f:
        indices = f.root.sorted.cols.key.index.read_indices()
    # PyTables' index lists the rows of equal values out of order: ties are checked.
    assert not np.array_equal(indices, np.arange(N))
    with hyperslab.open_file(path) as f:
        df = f.root.sorted.to_dask(index="key", columns=COLUMNS, chunksize=CHUNK)
        assert df.known_divisions
        bounds = [*range(0, N, CHUNK), N]
        assert any(keys[b - 1] == keys[b] for b in bounds[1:-1])  # runs across boundaries
        assert df.divisions == _expected_divisions(keys, bounds)
        assert df.npartitions == len(bounds) - 1  # runs of ~5 rows: boundaries moved
        expected = _expected_frame(path, "sorted", "key", COLUMNS)
        _check(df.compute(scheduler="threads"), expected)
        # Dask's loc trusts the divisions: every row of a value is in one partition.
        for value in [keys[CHUNK], keys[5 * CHUNK - 1], keys[0], keys[-1]]:
            _check(df.loc[value].compute(scheduler="threads"), expected.loc[[value]])
        lo, hi = keys[300], keys[1500]
        _check(df.loc[lo:hi].compute(scheduler="threads"), expected.loc[lo:hi])


def test_where_keeps_the_divisions(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        whole = f.root.sorted.to_dask(index="key", columns=["b"], chunksize=3 * CHUNK)
        df = f.root.sorted.to_dask(index="key", columns=["b"], chunksize=3 * CHUNK,
                                   where="(b % 3 == 0) & (key > 40)")
        assert df.known_divisions and df.divisions == whole.divisions
        _check(df.compute(scheduler="threads"),
               _expected_frame(path, "sorted", "key", ["b"], "(b % 3 == 0) & (key > 40)"))


def test_index_column_is_a_data_column_only_when_asked(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        t = f.root.sorted
        with pytest.raises(ValueError, match="vec"):  # the default columns: all but key
            t.to_dask(index="key")
        df = t.to_dask(index="key", columns=["key", "b"])
        assert list(df.columns) == ["key", "b"] and df.index.name == "key"
        got = df.compute(scheduler="threads")
    np.testing.assert_array_equal(got.index.to_numpy(), got["key"].to_numpy())


def test_copy_sorted_by_hyperslab(tmp_path: Path, path: Path) -> None:
    copy = tmp_path / "copy.h5"
    with hyperslab.open_file(path) as src, hyperslab.open_file(copy, "w") as dst:
        src.root.unsorted.copy(dst.root, "bykey", sortby="key", propindexes=True)
    with hyperslab.open_file(copy) as f:
        t = f.root.bykey
        assert t.cols.key.index.is_csi
        df = t.to_dask(index="key", columns=["b", "info"], chunksize=5 * CHUNK)
        assert df.known_divisions
        assert df.divisions == _expected_divisions(_sorted_keys(),
                                                   [*range(0, N, 5 * CHUNK), N])
        got = df.compute(scheduler="threads")
    with tables.open_file(copy) as f:  # PyTables reads the copy as the oracle
        records = f.root.bykey.read()
    expected = pd.DataFrame({"key": records["key"], "b": records["b"],
                             "info/x": records["info"]["x"],
                             "info/k": records["info"]["k"]}).set_index("key")
    _check(got, expected)


@pytest.mark.parametrize(("name", "column"), [("unsorted", "key"), ("plain", "key"),
                                              ("nan", "b")])
def test_divisions_unknown_without_proof(path: Path, name: str, column: str) -> None:
    columns = [c for c in ["key", "b", "info/x"] if c != column]
    with hyperslab.open_file(path) as f:
        df = f.get_node("/", name).to_dask(index=column, columns=columns, chunksize=CHUNK)
        assert not df.known_divisions
        assert df.npartitions == -(-N // CHUNK)
        _check(df.compute(scheduler="threads"),
               _expected_frame(path, name, column, columns))


def test_stale_or_dirty_index_is_not_used(tmp_path: Path) -> None:
    keys = _sorted_keys()
    stale, dirty = tmp_path / "stale.h5", tmp_path / "dirty.h5"
    for target in (stale, dirty):
        with tables.open_file(target, "w") as f:
            t = f.create_table("/", "t", _records(keys), chunkshape=(CHUNK,))
            t.cols.key.create_csindex()
    # h5py appends rows behind the index's back (in order: only the proof is missing).
    more = _records(np.full(10, keys[-1] + 1))
    with h5py.File(stale, "a") as f:
        f["t"].resize((N + 10,))
        f["t"][N:] = more.astype(f["t"].dtype)
    with hyperslab.open_file(dirty, "a") as f:  # autoindex off: the append dirties it
        f.root.t.autoindex = False
        f.root.t.append(more)
    for target in (stale, dirty):
        with hyperslab.open_file(target) as f:
            index = f.root.t.cols.key.index
            assert index.stale or index.dirty
            df = f.root.t.to_dask(index="key", columns=["b"], chunksize=4 * CHUNK)
            assert not df.known_divisions
            got = df.compute(scheduler="threads")
        assert got.index.tolist() == [*keys.tolist(), *[keys[-1] + 1] * 10]


def test_runs_longer_than_a_partition_drop_its_boundaries(tmp_path: Path) -> None:
    keys = np.repeat([1, 2, 3, 4], [10, 3 * CHUNK + 5, 2 * CHUNK, N - 5 * CHUNK - 15])
    target = tmp_path / "runs.h5"
    with tables.open_file(target, "w") as f:
        f.create_table("/", "t", _records(keys), chunkshape=(CHUNK,)).cols.key \
            .create_csindex()
    with hyperslab.open_file(target) as f:
        df = f.root.t.to_dask(index="key", columns=["b"], chunksize=CHUNK)
        # 64 moves to 207 (the end of the 2s), 128 and 192 are dropped, 256 moves to 335,
        # 384 would move to the end: dropped.
        assert df.divisions == (1, 3, 4, 4)
        expected = _expected_frame(target, "t", "key", ["b"])
        _check(df.compute(scheduler="threads"), expected)
        for key in (1, 2, 3, 4):
            _check(df.loc[key].compute(scheduler="threads"), expected.loc[[key]])
        assert [len(part) for part in df.partitions] \
            == [10 + 3 * CHUNK + 5, 2 * CHUNK, N - 5 * CHUNK - 15]


def test_appended_in_order_with_autoindex_keeps_divisions(tmp_path: Path) -> None:
    keys = _sorted_keys()
    target = tmp_path / "grown.h5"
    with hyperslab.open_file(target, "w") as f:
        t = f.create_table("/", "t", _records(keys[:N // 2]), chunkshape=(CHUNK,))
        t.cols.key.create_csindex()
        t.append(_records(keys[N // 2:]))  # autoindex: the index takes the new rows
    with hyperslab.open_file(target) as f:
        df = f.root.t.to_dask(index="key", columns=["b"], chunksize=CHUNK)
        assert df.divisions == _expected_divisions(keys, [*range(0, N, CHUNK), N])
        assert df.compute(scheduler="threads").index.tolist() == keys.tolist()


def test_bytes_index_follows_dasks_string_conversion(path: Path) -> None:
    names = np.array([b"n%05d" % (v // 2) for v in range(N)])
    with hyperslab.open_file(path) as f:
        for convert in (True, False):
            with dask.config.set({"dataframe.convert-string": convert}):
                df = f.root.plain.to_dask(index="name", columns=["b"], chunksize=CHUNK)
                expected = _expected_divisions(names, [*range(0, N, CHUNK), N])
                if convert:
                    expected = tuple(v.decode() for v in expected)
                assert df.divisions == expected
                got = df.loc[expected[3]].compute(scheduler="threads")
                assert got.b.tolist() == [(3 * CHUNK) * 0.5, (3 * CHUNK + 1) * 0.5]


def test_bad_index_says_what(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        t = f.root.sorted
        with pytest.raises(KeyError, match="nope"):
            t.to_dask(index="nope", columns=["b"])
        with pytest.raises(ValueError, match="info"):
            t.to_dask(index="info", columns=["b"])
        with pytest.raises(ValueError, match="vec"):
            t.to_dask(index="vec", columns=["b"])
        with pytest.raises(TypeError, match="3"):
            t.to_dask(index=3, columns=["b"])  # type: ignore[arg-type]


@pytest.mark.parametrize("window", [7, 64, 1 << 20])
def test_stored_in_order_windows(path: Path, tmp_path: Path, window: int) -> None:
    keys = np.arange(N) * 2
    swapped = keys.copy()
    swapped[[100, 1800]] = swapped[[1800, 100]]  # far apart: outside any small window
    near = keys.copy()
    near[[501, 502]] = near[[502, 501]]
    target = tmp_path / "w.h5"
    with tables.open_file(target, "w") as f:
        for name, key in [("ok", keys), ("far", swapped), ("near", near)]:
            f.create_table("/", name, _records(key), chunkshape=(CHUNK,)).cols.key \
                .create_csindex()
    with hyperslab.open_file(target) as f:
        assert stored_in_order(f.root.ok.cols.key.index, window)
        assert not stored_in_order(f.root.far.cols.key.index, window)
        assert not stored_in_order(f.root.near.cols.key.index, window)
    with hyperslab.open_file(path) as f:
        assert stored_in_order(f.root.sorted.cols.key.index, window)  # ties moved around
        assert not stored_in_order(f.root.unsorted.cols.key.index, window)
        assert not stored_in_order(f.root.nan.cols.b.index, window)


def test_on_a_cluster_of_processes(path: Path, client: Any) -> None:
    keys = _sorted_keys()
    with hyperslab.open_file(path) as f:
        df = f.root.sorted.to_dask(index="key", columns=COLUMNS, chunksize=2 * CHUNK)
        assert df.divisions == _expected_divisions(keys, [*range(0, N, 2 * CHUNK), N])
        part = df.loc[keys[700]:keys[900]]
        got, got_part = client.compute([df, part], sync=True)
    expected = _expected_frame(path, "sorted", "key", COLUMNS)
    _check(got, expected)
    _check(got_part, expected.loc[keys[700]:keys[900]])
