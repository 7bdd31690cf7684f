"""Folds of other writers' blocks along axis 0, against NumPy on h5py's reading.

hdf5plugin's ``(2, 128, 256)`` blocks of ``(2, 500, 500)`` chunks summed along axis 0:
each block's two rows are combined by the binary ufunc into the thread's buffer
(:func:`hyperslab.compute.reductions._reduce_into`), and each ``(1, 128, 256)`` partial,
which lands on a strided part of the result, is accumulated in a contiguous array of its
own (:class:`hyperslab.compute.reductions._ThreadSums`).  Integers, ``min`` and ``max``
stay exact, float sums within NumPy's rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperslab
from hyperslab.chunked import tiles
from hyperslab.compute import reductions


def _spy_parts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Record the shapes of the arrays each thread's accumulator hands back."""
    shapes: list[tuple[int, ...]] = []
    original = reductions._ThreadSums.parts

    def spy(self: Any) -> Any:
        found = original(self)
        shapes.extend(array.shape for _, array in found)
        return found

    monkeypatch.setattr(reductions._ThreadSums, "parts", spy)
    return shapes


def _spy_folds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[int, ...], int]]:
    """Record the reduced axes and rows of every partial reduced into a thread's buffer."""
    calls: list[tuple[tuple[int, ...], int]] = []
    original = reductions._reduce_into

    def spy(ufunc: np.ufunc, data: np.ndarray, axes: tuple[int, ...],
            out: np.ndarray) -> np.ndarray:
        calls.append((axes, data.shape[0]))
        return original(ufunc, data, axes, out)

    monkeypatch.setattr(reductions, "_reduce_into", spy)
    return calls


@pytest.mark.parametrize("dtype", ["<f8", "<i8", "<f4"])
def test_two_row_blocks_along_axis0_accumulate_contiguously(
        plugin_file: Any,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    rng = np.random.default_rng(22)
    data = (rng.normal(scale=50, size=(9, 130, 620)) + 60).astype(dtype)
    read = plugin_file(tmp_path / "p.h5", data, (2, 130, 310))  # (2, 128, 256) blocks
    shapes = _spy_parts(monkeypatch)
    folds = _spy_folds(monkeypatch)
    monkeypatch.setattr(tiles, "TILE_BYTES", 2 * 130 * 620 * 8)
    with hyperslab.open_file(tmp_path / "p.h5", MAX_THREADS=3) as f, \
            np.errstate(over="ignore"):
        node = f.root.a
        for op in ("sum", "min", "max", "prod"):
            for keepdims in (False, True):
                got = getattr(node, op)(axis=0, keepdims=keepdims)
                want = getattr(np, op)(read, axis=0, keepdims=keepdims)
                assert got.dtype == want.dtype and got.shape == want.shape
                if op in ("sum", "prod") and read.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "<f4"
                                               else 1e-12, err_msg=op)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=op)
    # (1, 128, 256) partials in arrays of their own; two rows added by the binary ufunc
    assert (1, 128, 256) in shapes
    assert ((0,), 2) in folds and ((0,), 1) in folds  # the last chunk holds one row


def test_axis0_fold_of_hdf5plugins_bench_chunks_equals_numpy(
        plugin_file: Any,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's layout, smaller: chunks (2, 500, 500), float64 ``linspace``."""
    data = np.linspace(0.0, 1000.0, 6 * 500 * 500).reshape(6, 500, 500)
    read = plugin_file(tmp_path / "b.h5", data, (2, 500, 500))
    shapes = _spy_parts(monkeypatch)
    with hyperslab.open_file(tmp_path / "b.h5", MAX_THREADS=2) as f:
        np.testing.assert_allclose(f.root.a.sum(axis=0), read.sum(axis=0), rtol=1e-12)
        np.testing.assert_array_equal(f.root.a.max(axis=0), read.max(axis=0))
    assert shapes.count((1, 128, 256)) >= 3


@pytest.mark.parametrize("dtype", ["<f8", "<i8", "<u1"])
def test_every_strided_partial_apart_until_the_result_size(
        plugin_file: Any,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """With no minimum size, every partial landing on a strided part gets an array of
    its own until they hold as many bytes as the result, then the result-shaped one
    takes the rest: any axes, any fold, equal to NumPy."""
    rng = np.random.default_rng(7)
    data = (rng.normal(scale=50, size=(9, 130, 620)) + 60).astype(dtype)
    if data.dtype.kind != "f":  # a float 0 times an overflowed inf depends on the order
        data[3, 5, 7] = 0
    read = plugin_file(tmp_path / "s.h5", data, (2, 130, 310))
    monkeypatch.setattr(reductions, "BLOCK_SUMS_MIN_BYTES", 0)
    shapes = _spy_parts(monkeypatch)
    with hyperslab.open_file(tmp_path / "s.h5", MAX_THREADS=2) as f, \
            np.errstate(over="ignore", invalid="ignore"):
        for axis in (0, 1, 2, (0, 2), None):
            for op in ("sum", "min", "max", "any", "all", "prod"):
                got = getattr(f.root.a, op)(axis=axis)
                want = getattr(np, op)(read, axis=axis)
                assert np.asarray(got).dtype == np.asarray(want).dtype, (op, axis)
                if op in ("sum", "prod") and read.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=1e-12,
                                               err_msg=f"{op} {axis}")
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{op} {axis}")
    assert (2, 128, 1) in shapes and (9, 130, 1) in shapes  # some apart, then the rest


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.minimum, np.maximum])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_reduce_into_equals_numpys_reduction(ufunc: np.ufunc, dtype: Any) -> None:
    rng = np.random.default_rng(1)
    for rows in range(1, 7):
        data = (rng.normal(scale=10, size=(rows, 5, 7)) * 3).astype(dtype)
        if dtype != np.int64:
            data[rows // 2, 1, 2] = np.nan
        for axes in ((0,), (1,), (0, 2), (0, 1, 2)):
            view = data[:, 1:, :6]  # not contiguous, as blocks cut at an edge are
            kept = tuple(1 if d in axes else n for d, n in enumerate(view.shape))
            out = np.full(kept, 99, dtype=dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                got = reductions._reduce_into(ufunc, view, axes, out)
                want = ufunc.reduce(view, axis=axes, keepdims=True)
            assert got is out
            np.testing.assert_array_equal(got, want, err_msg=f"{rows} rows, {axes}")
