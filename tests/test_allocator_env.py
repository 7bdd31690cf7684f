"""Processes whose allocator returns freed memory at once (``MALLOC_TRIM_THRESHOLD_``, as in
dask.distributed's workers): decoding takes no route that allocates a block-sized buffer
per block (codecs/allocator.py, cframe._decompress).

Oracle: the data written with h5py + hdf5plugin (whose b2nd blocks are not the chunk's C
order, so chunks are decoded block by block).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperslab
from hyperslab.codecs import allocator

h5py = pytest.importorskip("h5py")
hdf5plugin = pytest.importorskip("hdf5plugin")
blosc2 = pytest.importorskip("blosc2")

DATA = np.random.default_rng(3).random((32, 128, 256))


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("allocator") / "plugin.h5"
    with h5py.File(path, "w") as f:  # blocks of (16, 64, 64): 512 KiB, 8 per chunk
        f.create_dataset("a", data=DATA, chunks=(16, 128, 256),
                         **hdf5plugin.Blosc2(cname="lz4", filters=1))
    return path


def _count_contexts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"global": 0, "own": 0}
    real_global, real_own = blosc2.decompress, blosc2.decompress2

    def in_global(*args: Any, **kwargs: Any) -> Any:
        counts["global"] += 1
        return real_global(*args, **kwargs)

    def in_own(*args: Any, **kwargs: Any) -> Any:
        counts["own"] += 1
        return real_own(*args, **kwargs)

    monkeypatch.setattr(blosc2, "decompress", in_global)
    monkeypatch.setattr(blosc2, "decompress2", in_own)
    return counts


@pytest.mark.parametrize("variable", ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"])
def test_blocks_decode_in_the_global_context(path: Path, monkeypatch: pytest.MonkeyPatch,
                                             variable: str) -> None:
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv(variable, "65536")
    assert allocator.allocator_returns_memory()
    counts = _count_contexts(monkeypatch)
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.a[...], DATA)
        np.testing.assert_allclose(f.root.a.sum(axis=0), DATA.sum(axis=0), rtol=1e-12)
    assert counts["global"] > 0
    assert counts["own"] == 0


def test_blocks_decode_in_their_own_context_elsewhere(path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Elsewhere big blocks keep a context of their own (it releases the GIL)."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert not allocator.allocator_returns_memory()
    counts = _count_contexts(monkeypatch)
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.a[...], DATA)
    assert counts["own"] > 0
    assert counts["global"] == 0
