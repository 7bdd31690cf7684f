"""Shared fixtures: every file lives in pytest's tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperslab
from hyperslab.compute.indexing import search as indexed


@pytest.fixture
def h5path(tmp_path: Path) -> Path:
    """A fresh file name in a temporary directory."""
    return tmp_path / "test.h5"


@pytest.fixture
def h5file(h5path: Path) -> Iterator[hyperslab.File]:
    """A new writable hyperslab file, closed after the test."""
    f = hyperslab.open_file(h5path, "w", title="test file")
    try:
        yield f
    finally:
        f.close()


@pytest.fixture
def plugin_file() -> Callable[[Path, np.ndarray, tuple[int, ...]], np.ndarray]:
    """Write ``data`` as ``/a`` of ``path`` with h5py + hdf5plugin's Blosc2 filter (LZ4,
    shuffle; the filter picks blocks that are not the chunks' C order) and return h5py's
    reading of it: ``plugin_file(path, data, chunks)``."""
    h5py = pytest.importorskip("h5py")
    hdf5plugin = pytest.importorskip("hdf5plugin")

    def write(path: Path, data: np.ndarray, chunks: tuple[int, ...]) -> np.ndarray:
        with h5py.File(path, "w") as f:
            f.create_dataset("a", data=data, chunks=chunks,
                             **hdf5plugin.Blosc2(cname="lz4", filters=hdf5plugin.Blosc2.SHUFFLE))
        with h5py.File(path, "r") as f:
            return np.asarray(f["a"][...])

    return write


def _spy_index_reads(monkeypatch: pytest.MonkeyPatch, record: Callable[[bool], None]) -> None:
    """Call ``record`` for each query planned with an index: True if it read its
    candidates through the index, False if it scanned."""
    real = indexed.candidate_batches

    def spy(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        record(result is not None)
        return result

    monkeypatch.setattr(indexed, "candidate_batches", spy)


@pytest.fixture
def index_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per query planned with an index, whether it read its candidates through the index
    (True) or scanned (False)."""
    reads: list[bool] = []
    _spy_index_reads(monkeypatch, reads.append)
    return reads


@pytest.fixture
def indexed_queries(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Always take the indexed path where an index applies (never fall back to a scan
    for many candidates), and count the queries that took it (one item each)."""
    monkeypatch.setattr(indexed, "SCAN_SHARE", float("inf"))
    monkeypatch.setattr(indexed, "FEW_CHUNKS_SCAN_SHARE", float("inf"))
    taken: list[int] = []

    def record(through_index: bool) -> None:
        if through_index:
            taken.append(1)

    _spy_index_reads(monkeypatch, record)
    return taken


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A dask.distributed client of a ``LocalCluster`` of two worker processes of one
    thread each, shared by a module's cluster tests (distributed imported here only)."""
    import distributed
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client
