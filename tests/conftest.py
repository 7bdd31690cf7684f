"""Shared fixtures: every file lives in pytest's tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
def indexed_queries(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Always take the indexed path where an index applies (never fall back to a scan
    for many candidates), and count the queries that took it (one item each)."""
    monkeypatch.setattr(indexed, "SCAN_SHARE", float("inf"))
    taken: list[int] = []
    real = indexed.candidate_batches

    def spy(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        if result is not None:
            taken.append(1)
        return result

    monkeypatch.setattr(indexed, "candidate_batches", spy)
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
