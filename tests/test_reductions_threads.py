"""Reductions whose tiles are combined in the pool's threads, against NumPy.

sum, prod, min, max, any and all of results up to
:data:`hyperslab.compute.reductions.PER_THREAD_MAX_BYTES` accumulate each tile's partial in
the thread that reduced it (one accumulator per thread), and the calling thread combines
the few accumulators: exact for integers (which wrap as NumPy's do), ``min``/``max`` and
booleans, within NumPy's own rounding for float sums.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperslab
from hyperslab.chunked import tiles
from hyperslab.compute import reductions

BLOSC2 = hyperslab.Filters(5, "blosc2:lz4", shuffle=True)


def _write(path: Path, data: np.ndarray, chunkshape: tuple[int, ...]) -> None:
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=chunkshape, filters=BLOSC2)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record how many accumulators (threads) each per-thread reduction used."""
    calls: list[int] = []
    original = reductions._per_thread

    def spy(*args: Any, **kwargs: Any) -> list[np.ndarray]:
        accumulators = original(*args, **kwargs)
        calls.append(len(accumulators))
        return accumulators

    monkeypatch.setattr(reductions, "_per_thread", spy)
    return calls


@pytest.mark.parametrize("axis", [0, 1, 2, None, (0, 2)])
def test_float_sums_combined_in_the_pools_threads_match_numpy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, axis: Any) -> None:
    rng = np.random.default_rng(5)
    data = rng.normal(scale=100, size=(64, 30, 40))
    _write(tmp_path / "f.h5", data, (4, 30, 40))
    calls = _spy(monkeypatch)
    monkeypatch.setattr(tiles, "TILE_BYTES", 40_000)  # 16 tiles of one chunk
    with hyperslab.open_file(tmp_path / "f.h5", MAX_THREADS=4) as f:
        got = f.root.a.sum(axis=axis)
        got_max = f.root.a.max(axis=axis)
    np.testing.assert_allclose(got, np.sum(data, axis=axis), rtol=1e-12)
    np.testing.assert_array_equal(got_max, np.max(data, axis=axis))
    assert len(calls) == 2 and all(n >= 1 for n in calls)


@pytest.mark.parametrize("per_thread_max", [reductions.PER_THREAD_MAX_BYTES, 0])
@pytest.mark.parametrize(("op", "kwargs"), [
    ("sum", {}), ("sum", {"dtype": np.int8}), ("prod", {}), ("prod", {"initial": 3}),
    ("min", {}), ("max", {"initial": 40}), ("any", {}), ("all", {}),
    ("sum", {"where": "mask"}), ("min", {"where": "mask", "initial": 100}),
])
def test_integer_folds_are_exact_in_either_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_thread_max: int, op: str,
        kwargs: dict[str, Any]) -> None:
    """Integer sums and products that wrap, min/max with ``initial`` (taken once), masks:
    equal to NumPy's whether tiles are combined per thread or in the caller, in order."""
    rng = np.random.default_rng(11)
    data = rng.integers(-60, 60, size=(48, 20, 24)).astype(np.int8)
    _write(tmp_path / "i.h5", data, (3, 20, 24))
    mask = rng.random((1, 20, 24)) < 0.5
    kwargs = {k: mask if v == "mask" else v for k, v in kwargs.items()}
    calls = _spy(monkeypatch)
    monkeypatch.setattr(reductions, "PER_THREAD_MAX_BYTES", per_thread_max)
    monkeypatch.setattr(tiles, "TILE_BYTES", 3 * 20 * 24)
    with hyperslab.open_file(tmp_path / "i.h5", MAX_THREADS=3) as f, \
            np.errstate(over="ignore"):
        for axis in (0, 2, None):
            got = getattr(f.root.a, op)(axis=axis, **kwargs)
            want = getattr(np, op)(data, axis=axis, **kwargs)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {kwargs} axis {axis}")
    assert len(calls) == (3 if per_thread_max else 0)


def test_nans_and_infs_propagate_from_any_thread(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    data = np.arange(40 * 6 * 5, dtype=np.float64).reshape(40, 6, 5)
    data[33, 2, 1] = np.nan
    data[7, 4, 4] = np.inf
    data[21, 4, 4] = -np.inf
    _write(tmp_path / "n.h5", data, (2, 6, 5))
    monkeypatch.setattr(tiles, "TILE_BYTES", 2 * 6 * 5 * 8)
    with hyperslab.open_file(tmp_path / "n.h5", MAX_THREADS=4) as f, \
            np.errstate(invalid="ignore", over="ignore"):
        for op in ("sum", "min", "max", "prod"):
            for axis in (0, 1, None):
                got, want = getattr(f.root.a, op)(axis=axis), getattr(np, op)(data, axis=axis)
                if op in ("min", "max"):
                    np.testing.assert_array_equal(got, want, err_msg=f"{op} axis {axis}")
                else:  # products of this range overflow to inf in any order
                    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{op} {axis}")


def test_a_big_result_is_combined_in_the_caller(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Results above PER_THREAD_MAX_BYTES keep no copy per thread."""
    data = np.arange(8 * 50 * 40, dtype=np.int64).reshape(8, 50, 40)
    _write(tmp_path / "b.h5", data, (2, 50, 40))
    calls = _spy(monkeypatch)
    monkeypatch.setattr(reductions, "PER_THREAD_MAX_BYTES", 50 * 40 * 8 - 1)
    with hyperslab.open_file(tmp_path / "b.h5", MAX_THREADS=2) as f:
        np.testing.assert_array_equal(f.root.a.sum(axis=0), data.sum(axis=0))
        assert calls == []
        np.testing.assert_array_equal(f.root.a.sum(axis=(1, 2)), data.sum(axis=(1, 2)))
    assert len(calls) == 1


def _no_tiles(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Fail any chunk decoded whole or block by block into a tile; record the chunks
    visited block by block."""
    from hyperslab.codecs import cframe

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a chunk decoded into a tile, not visited block by block")

    monkeypatch.setattr(cframe, "decode_blocks_into", refuse)
    monkeypatch.setattr(cframe, "from_block_order", refuse)
    return _spy_visits(monkeypatch)


def _spy_visits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Record the chunks visited block by block."""
    from hyperslab.chunked import blockvisit

    visited: list[tuple[int, ...]] = []
    original = blockvisit._visit_blocks

    def spy(engine: Any, grid: tuple[int, ...], *args: Any) -> bool:
        visited.append(grid)
        return original(engine, grid, *args)

    monkeypatch.setattr(blockvisit, "_visit_blocks", spy)
    return visited


@pytest.mark.parametrize("dtype", ["<f8", "<i4", "<u1"])
def test_folds_of_hdf5plugins_file_visit_its_blocks(
        plugin_file: Any,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """hdf5plugin's (blocks not in C order) chunks, edge chunks cut by the dataset's
    shape: each block reduced as it is decoded, never copied into a tile; the results
    equal NumPy's on h5py's reading (floats within NumPy's rounding)."""
    rng = np.random.default_rng(3)
    data = (rng.normal(scale=50, size=(18, 130, 310)) + 60).astype(dtype)
    read = plugin_file(tmp_path / "p.h5", data, (4, 100, 300))  # (4, 100, 128) blocks
    visited = _no_tiles(monkeypatch)
    monkeypatch.setattr(tiles, "TILE_BYTES", 4 * 100 * 300 * 8)
    with hyperslab.open_file(tmp_path / "p.h5", MAX_THREADS=3) as f, \
            np.errstate(over="ignore"):
        node = f.root.a
        for axis in (0, 1, 2, None, (0, 2)):
            for op in ("sum", "min", "max", "any", "all", "prod"):
                got, want = getattr(node, op)(axis=axis), getattr(np, op)(read, axis=axis)
                assert np.asarray(got).dtype == np.asarray(want).dtype, (op, axis)
                if op in ("sum", "prod") and read.dtype.kind == "f":
                    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{op} {axis}")
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{op} {axis}")
    assert sorted(set(visited)) == [(i, j, k) for i in range(5) for j in range(2)
                                    for k in range(2)]


def test_unwritten_and_c_ordered_chunks_are_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks never written (the fill value) and hyperslab's own chunks (blocks that are
    C-ordered slabs, decoded in one call) are read the usual way beside visited ones."""
    h5py = pytest.importorskip("h5py")
    hdf5plugin = pytest.importorskip("hdf5plugin")
    from hyperslab.chunked import blockvisit

    data = np.arange(12 * 100 * 300, dtype=np.float64).reshape(12, 100, 300)
    with h5py.File(tmp_path / "u.h5", "w") as f:
        dset = f.create_dataset("a", shape=data.shape, dtype=data.dtype,
                                chunks=(4, 100, 300), fillvalue=2.5,
                                **hdf5plugin.Blosc2(cname="lz4"))
        dset[:4] = data[:4]
        dset[8:] = data[8:]
    want = data.copy()
    want[4:8] = 2.5
    visited = _spy_visits(monkeypatch)
    with hyperslab.open_file(tmp_path / "u.h5", MAX_THREADS=2) as f:
        np.testing.assert_allclose(f.root.a.sum(axis=0), want.sum(axis=0), rtol=1e-12)
        assert f.root.a.max() == want.max()
    assert sorted(set(visited)) == [(0, 0, 0), (2, 0, 0)]
    _write(tmp_path / "own.h5", data, (4, 100, 300))

    def refuse(*args: Any) -> None:
        raise AssertionError("a chunk of C-ordered blocks read for a visit")

    monkeypatch.setattr(blockvisit, "_block_plan", refuse)  # not even tried
    with hyperslab.open_file(tmp_path / "own.h5", MAX_THREADS=2) as f:
        np.testing.assert_allclose(f.root.a.sum(axis=1), data.sum(axis=1), rtol=1e-12)


def test_a_block_that_does_not_decompress_names_its_chunk(
        plugin_file: Any,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hyperslab.chunked import blockvisit
    from hyperslab.codecs import cframe, cframe_blocks, cframe_visit

    data = np.arange(8 * 100 * 300, dtype=np.float64).reshape(8, 100, 300)
    plugin_file(tmp_path / "c.h5", data, (4, 100, 300))
    calls: list[int] = []
    original = cframe_visit.decompress_blocks

    def second_fails(plan: Any, numbers: Any, into: np.ndarray) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise cframe.FrameError("damaged block")
        original(plan, numbers, into)

    monkeypatch.setattr(blockvisit, "decompress_blocks", second_fails)
    monkeypatch.setattr(cframe_blocks, "TOGETHER_MAX_BYTES", 1)  # a block a call
    with hyperslab.open_file(tmp_path / "c.h5", MAX_THREADS=1) as f, \
            pytest.raises(hyperslab.HDF5ExtError, match="damaged block"):
        f.root.a.sum()


def test_the_blocks_of_a_chunk_are_visited_a_group_a_call(
        plugin_file: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Blosc2 call per block cost a context each: the blocks of a visited chunk are
    decoded up to TOGETHER_MAX_BYTES a call (the 3 blocks of a chunk; 2 and 1 with a
    smaller limit), and blocks wholly past the dataset's edge not at all.  Exact against
    NumPy on h5py's reading."""
    from hyperslab.chunked import blockvisit
    from hyperslab.codecs import cframe_blocks, cframe_visit

    calls: list[list[int]] = []
    original = cframe_visit.decompress_blocks

    def spy(plan: Any, numbers: Any, into: np.ndarray) -> None:
        assert plan.blocks.blockshape == (4, 100, 128)
        calls.append(list(numbers))
        original(plan, numbers, into)

    monkeypatch.setattr(blockvisit, "decompress_blocks", spy)
    block = 4 * 100 * 128 * 8
    # (the second column of chunks of 550 columns ends at 550: its block 2, columns 556
    # to 683, is past the edge)
    for columns, limit, per_chunk in [(300, None, [[0, 1, 2]]), (300, 2 * block, [[0, 1], [2]]),
                                      (550, None, [[0, 1, 2], [0, 1]])]:
        data = np.arange(10 * 100 * columns, dtype=np.float64).reshape(10, 100, columns)
        read = plugin_file(tmp_path / "g.h5", data, (4, 100, 300))  # (4, 100, 128) blocks
        calls.clear()
        with monkeypatch.context() as patch:
            if limit is not None:
                patch.setattr(cframe_blocks, "TOGETHER_MAX_BYTES", limit)
            with hyperslab.open_file(tmp_path / "g.h5", MAX_THREADS=1) as f:
                np.testing.assert_allclose(f.root.a.sum(axis=1), read.sum(axis=1),
                                           rtol=1e-12)
        assert sorted(calls) == sorted(per_chunk * 3), columns  # 3 chunks along axis 0
