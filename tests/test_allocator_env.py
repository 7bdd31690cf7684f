"""Processes whose allocator returns freed memory at once (``MALLOC_TRIM_THRESHOLD_``, as in
dask.distributed's workers): decoding takes no route that allocates a block-sized buffer
per block (codecs/allocator.py, cframe._decompress).

Oracle: the data written with h5py + hdf5plugin (whose b2nd blocks are not the chunk's C
order, so chunks are decoded block by block).
"""

from __future__ import annotations

import os
import subprocess
import sys
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


@pytest.mark.parametrize("environment", [
    {"MALLOC_TRIM_THRESHOLD_": "65536"}, {"MALLOC_MMAP_THRESHOLD_": "131072"},
    {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=65536"}])
def test_blocks_decode_in_the_global_context(path: Path, monkeypatch: pytest.MonkeyPatch,
                                             environment: dict[str, str]) -> None:
    monkeypatch.setattr(allocator, "_start_environment", lambda: environment)
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
    monkeypatch.setattr(allocator, "_start_environment", lambda: {"GLIBC_TUNABLES": ""})
    assert not allocator.allocator_returns_memory()
    counts = _count_contexts(monkeypatch)
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.a[...], DATA)
    assert counts["own"] > 0
    assert counts["global"] == 0


@pytest.mark.parametrize("environment,expected", [
    ({}, False), ({"MALLOC_TRIM_THRESHOLD_": "65536"}, True),
    ({"MALLOC_MMAP_THRESHOLD_": "4194304"}, True),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"}, True),
    ({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"}, False)])
def test_the_environment_a_process_starts_with_counts(environment: dict[str, str],
                                                      expected: bool) -> None:
    """A process started with the variable (as distributed's workers are) sees it."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    env.update(environment)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    code = ("from hyperslab.codecs.allocator import allocator_returns_memory as f; "
            "print(f())")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    assert done.stdout.strip() == str(expected)


def test_setting_the_variable_later_does_not_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """glibc reads it at start only: a LocalCluster sets it in its own process for the
    workers it spawns, which leaves that process's allocator as it was."""
    before = allocator.allocator_returns_memory()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    assert allocator.allocator_returns_memory() is before
