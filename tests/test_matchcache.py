"""The match cache: the rows an indexed query matched on a read-only file, read again
without the index when the same query repeats (PyTables' sequence cache).

The oracle is NumPy over the table's data in memory; a spy on the indexed path shows
which queries went through the index and which were served from the cache.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hyperslab
from hyperslab.compute.indexing import matchcache
from hyperslab.compute.indexing.matchcache import MatchCache, match_cache

DTYPE = np.dtype([("i", "<i4"), ("f", "<f8"), ("s", "S2")])
FILTERS = {"none": None, "blosc2": hyperslab.Filters(5, "blosc2:lz4", shuffle=True)}
CONDITION = "(lo <= i) & (i < hi)"


def _data(n: int = 3000) -> np.ndarray:
    rng = np.random.default_rng(7)
    data = np.zeros(n, DTYPE)
    data["i"] = rng.integers(0, 1000, n)
    data["f"] = rng.random(n)
    data["s"] = rng.choice([b"a", b"b", b"cd"], n)
    return data


@pytest.fixture(params=sorted(FILTERS))
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A file with table ``/t`` (chunks of 256 rows) indexed on ``i``."""
    file_path = tmp_path / "t.h5"
    with hyperslab.open_file(file_path, "w") as f:
        table = f.create_table("/", "t", DTYPE, filters=FILTERS[request.param],
                               chunkshape=(256,))
        table.append(_data())
        table.cols.i.create_index()
    return file_path


def _expected(lo: int, hi: int, window: slice = slice(None)) -> np.ndarray:
    data = _data()
    rows = np.arange(len(data))[window]
    return rows[(lo <= data["i"][rows]) & (data["i"][rows] < hi)]


def test_repeated_query_reads_the_kept_rows(path: Path, indexed_queries: list[int]) -> None:
    data = _data()
    limits = {"lo": 100, "hi": 130}
    expected = _expected(100, 130)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        np.testing.assert_array_equal(table.get_where_list(CONDITION, limits), expected)
        assert len(indexed_queries) == 1
        cache = match_cache(table)
        assert cache is not None and len(cache) == 1 and cache.rows == len(expected)
        # Served from the cache: the index is not searched again, and every kind of
        # query gets the rows it would have read.
        records = table.read_where(CONDITION, limits)
        np.testing.assert_array_equal(records, data[expected])
        np.testing.assert_array_equal(table.read_where(CONDITION, limits, field="s"),
                                      data["s"][expected])
        assert [row.nrow for row in table.where(CONDITION, limits)] == expected.tolist()
        got = table.get_where_list(CONDITION, limits)
        np.testing.assert_array_equal(got, expected)
        assert len(indexed_queries) == 1
        # Results are the caller's own arrays: changing one changes nothing kept.
        got[:] = -1
        records["i"] = -1
        np.testing.assert_array_equal(table.get_where_list(CONDITION, limits), expected)
        assert len(indexed_queries) == 1


def test_other_values_or_windows_are_other_queries(path: Path,
                                                   indexed_queries: list[int]) -> None:
    with hyperslab.open_file(path) as f:
        table = f.root.t
        table.get_where_list(CONDITION, {"lo": 100, "hi": 130})
        cases = [({"lo": 100, "hi": 131}, slice(None)),
                 ({"lo": 100.0, "hi": 130.5}, slice(None)),  # other types, other key
                 ({"lo": 100, "hi": 130}, slice(10, 2000)),
                 ({"lo": 100, "hi": 130}, slice(0, 3000, 3))]
        for limits, window in cases:
            got = table.get_where_list(CONDITION, limits, start=window.start,
                                       stop=window.stop, step=window.step)
            lo, hi = limits["lo"], limits["hi"]
            np.testing.assert_array_equal(got, _expected(lo, hi, window))  # type: ignore[arg-type]
        assert len(indexed_queries) == 1 + len(cases)
        # Each one again: all from the cache (array values are keyed by their bytes).
        for limits, window in cases:
            table.get_where_list(CONDITION, limits, start=window.start, stop=window.stop,
                                 step=window.step)
        assert len(indexed_queries) == 1 + len(cases)
        assert len(match_cache(table)) == 1 + len(cases)  # type: ignore[arg-type]
        # NumPy values of the same types and values are the same query.
        np.testing.assert_array_equal(
            table.get_where_list(CONDITION, {"lo": np.int64(100), "hi": np.array(130)}),
            _expected(100, 130))
        assert len(indexed_queries) == 1 + len(cases)


def test_no_match_is_kept_too(path: Path, indexed_queries: list[int]) -> None:
    with hyperslab.open_file(path) as f:
        table = f.root.t
        for _ in range(2):
            assert len(table.read_where(CONDITION, {"lo": 5000, "hi": 6000})) == 0
        assert len(indexed_queries) == 1


def test_writable_files_keep_nothing(path: Path, indexed_queries: list[int]) -> None:
    data = _data()
    limits = {"lo": 100, "hi": 130}
    with hyperslab.open_file(path, "a") as f:
        table = f.root.t
        assert match_cache(table) is None
        np.testing.assert_array_equal(table.get_where_list(CONDITION, limits),
                                      _expected(100, 130))
        # A change of the matched rows must show in the next query.
        first = int(_expected(100, 130)[0])
        table.modify_column(first, first + 1, column=[5000], colname="i")
        data["i"][first] = 5000
        rows = np.flatnonzero((data["i"] >= 100) & (data["i"] < 130))
        np.testing.assert_array_equal(table.get_where_list(CONDITION, limits), rows)
        assert len(indexed_queries) == 2


def test_a_query_stopped_early_keeps_nothing(path: Path, indexed_queries: list[int]) -> None:
    limits = {"lo": 100, "hi": 300}
    with hyperslab.open_file(path) as f:
        table = f.root.t
        iterator = table.where(CONDITION, limits)
        next(iterator)
        del iterator
        assert len(match_cache(table)) == 0  # type: ignore[arg-type]
        expected = _expected(100, 300)
        assert [row.nrow for row in table.where(CONDITION, limits)] == expected.tolist()
        np.testing.assert_array_equal(table.get_where_list(CONDITION, limits), expected)
        assert len(indexed_queries) == 2


def test_large_results_are_not_kept(path: Path, indexed_queries: list[int],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matchcache, "MATCH_ENTRY_ROWS", 10)
    limits = {"lo": 100, "hi": 200}  # about 300 rows
    with hyperslab.open_file(path) as f:
        table = f.root.t
        for _ in range(2):
            np.testing.assert_array_equal(table.get_where_list(CONDITION, limits),
                                          _expected(100, 200))
        assert len(indexed_queries) == 2
        assert len(match_cache(table)) == 0  # type: ignore[arg-type]


def test_scans_keep_nothing(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        table = f.root.t
        expected = np.flatnonzero(_data()["f"] < 0.01)
        for _ in range(2):
            np.testing.assert_array_equal(table.get_where_list("f < 0.01"), expected)
        assert len(match_cache(table)) == 0  # type: ignore[arg-type]


def test_match_cache_keeps_copies_and_drops_the_least_recent() -> None:
    cache = MatchCache(capacity=10, entry_limit=6)
    rows = np.arange(4, dtype=np.int64)
    assert cache.put("a", rows)
    rows[0] = 99  # the caller's array: the kept one is a copy
    kept = cache.get("a")
    assert kept is not None and kept.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="read-only"):
        kept[0] = 5
    assert not cache.put("big", np.arange(7))  # over entry_limit: nothing kept
    assert cache.get("big") is None and cache.rows == 4
    assert cache.put("b", np.arange(5))
    cache.get("a")  # "a" is now the most recent: "b" goes first
    assert cache.put("c", np.arange(3))
    kept = cache.get("a")
    assert cache.get("b") is None and kept is not None and kept.tolist() == [0, 1, 2, 3]
    assert cache.rows == 7 and len(cache) == 2
    assert cache.put("a", np.arange(2))  # replaced, counted once
    assert cache.rows == 5
    cache.clear()
    assert len(cache) == 0 and cache.rows == 0 and cache.get("c") is None
