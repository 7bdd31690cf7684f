"""Indexed queries on small tables and the reading of their candidate rows.

* A table whose rows lie in fewer than ``1 / SCAN_CHUNK_SHARE`` chunks (one chunk here)
  reads the candidates of an index up to ``FEW_CHUNKS_SCAN_SHARE`` of its rows, and scans
  above it (:func:`hyperslab.compute.indexing.search._few_chunks_candidates`).
* A table without Blosc2 reads rows at dense sorted coordinates as the span around them
  (:meth:`hyperslab.nodes.tables.recordio.RecordIO._points_from_hdf5`), sparse ones as
  points.

Oracles: NumPy on the rows in memory, and PyTables querying the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.storage.datasets import Dataset

CONDITION = "(lim1 <= col4) & (col4 < lim2)"
NROWS = 2000


def _records() -> np.ndarray:
    """Rows in table order, col4 roughly increasing with noise (the benchmark's data)."""
    rng = np.random.default_rng(7)
    records = np.empty(NROWS, [("col1", "i4"), ("col2", "i4"), ("col3", "f8"), ("col4", "f8")])
    values = np.arange(NROWS, dtype=np.float64) + rng.normal(0.0, NROWS * 0.1, NROWS)
    records["col3"] = records["col4"] = values
    records["col1"] = records["col2"] = values.astype(np.int32)
    return records


def _limits(records: np.ndarray, hits: int) -> dict[str, float]:
    ordered = np.sort(records["col4"])
    first = int(0.3 * NROWS)
    return {"lim1": float(ordered[first]), "lim2": float(ordered[first + hits])}


@pytest.fixture(params=["hyperslab", "PyTables"])
def table_file(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, np.ndarray]:
    """A one-chunk table (no filters) with a full index on col4, written by either
    library."""
    records = _records()
    path = tmp_path / "t.h5"
    lib: Any = hyperslab if request.param == "hyperslab" else tables
    with lib.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", records, chunkshape=(4096,))
        table.cols.col4.create_index(optlevel=9, kind="full")
    return path, records


@pytest.mark.parametrize(("hits", "through_index"), [(100, True), (400, True), (1000, False)])
def test_one_chunk_table_reads_candidates_up_to_a_share(
        table_file: tuple[Path, np.ndarray], index_reads: list[bool], hits: int,
        through_index: bool) -> None:
    """5% and 20% of a one-chunk table's rows are read through the index, 50% scanned
    (the old rule scanned all three: their one chunk was "most of the chunks"); the rows
    are NumPy's and PyTables', in row order."""
    path, records = table_file
    limits = _limits(records, hits)
    mask = (limits["lim1"] <= records["col4"]) & (records["col4"] < limits["lim2"])
    assert mask.sum() == hits
    with hyperslab.open_file(path) as f:
        got = f.root.t.read_where(CONDITION, limits, field="col2")
        coords = f.root.t.get_where_list(CONDITION, limits)
    assert index_reads and all(t == through_index for t in index_reads)
    np.testing.assert_array_equal(coords, np.flatnonzero(mask))
    np.testing.assert_array_equal(got, records["col2"][mask])
    with tables.open_file(str(path)) as f:
        np.testing.assert_array_equal(got, f.root.t.read_where(CONDITION, limits,
                                                               field="col2"))


def test_many_chunks_keep_the_chunk_rule(tmp_path: Path, index_reads: list[bool]) -> None:
    """Over 4 chunks and more, candidates spread over most of them are still scanned."""
    records = _records()
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", records, chunkshape=(100,))
        table.cols.col4.create_index(optlevel=9, kind="full")
    limits = _limits(records, 400)
    with hyperslab.open_file(path) as f:
        got = f.root.t.read_where(CONDITION, limits, field="col2")
    assert index_reads == [False]
    mask = (limits["lim1"] <= records["col4"]) & (records["col4"] < limits["lim2"])
    np.testing.assert_array_equal(got, records["col2"][mask])


def _refuse_points(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read as points")

    monkeypatch.setattr(Dataset, "read_points", refuse)


@pytest.mark.parametrize("mode", ["r", "a"])
def test_dense_coordinates_of_an_unfiltered_table_read_as_a_span(
        table_file: tuple[Path, np.ndarray], monkeypatch: pytest.MonkeyPatch,
        mode: str) -> None:
    """100 scattered rows (read-only: a pread each) and 1,000 (a point selection) among
    a few thousand are taken from the span around them, never read as points (in a
    writable file, 100 rows are a point selection: cheap enough)."""
    path, records = table_file
    rng = np.random.default_rng(3)
    with hyperslab.open_file(path, mode) as f:
        table = f.root.t
        _refuse_points(monkeypatch)
        for count in (100, 1000) if mode == "r" else (1000,):
            coords = np.sort(rng.choice(NROWS, count, replace=False))
            got = table.read_coordinates(coords)
            assert got.tobytes() == records[coords].tobytes()
            assert table.read_coordinates(coords[::-1], field="col3").tolist() == \
                records["col3"][coords[::-1]].tolist()


def test_sparse_coordinates_are_still_read_as_points(
        table_file: tuple[Path, np.ndarray], monkeypatch: pytest.MonkeyPatch) -> None:
    """Few rows, or rows far apart, are read as points (the span is not read)."""
    path, records = table_file
    calls: list[int] = []
    real = Dataset.read_points

    def counted(self: Dataset, coords: Any, out: Any = None) -> Any:
        calls.append(len(coords))
        return real(self, coords, out)

    monkeypatch.setattr(Dataset, "read_points", counted)
    with hyperslab.open_file(path) as f:
        for coords in (np.array([5, 900, 1999]), np.arange(0, NROWS, 80),
                       np.arange(300, 340)):  # few; 25 far apart; one run of 40
            got = f.root.t.read_coordinates(coords)
            assert got.tobytes() == records[coords].tobytes()
    assert calls == [3, 25, 40]
