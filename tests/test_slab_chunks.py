"""Chunks whose b2nd blocks are slabs, read where a selection touches most of their blocks.

Blocks that are 1 item long along the axes before some axis and as long as the chunk along
those after it (hyperslab's own blocks, ``(1, 13, 50, 50)`` of a ``(10, 25, 50, 50)``
chunk) decode, all together, into the chunk's items in C order: padding only lengthens
that one axis.  A selection touching most of them (``a[:, :, :, 50]``) decodes the chunk
whole in one Blosc2 call into a buffer kept per thread and copies its items out, instead
of decoding each block on its own (a one-block chunk and a Blosc2 context each).  h5py +
hdf5plugin read the same files as the oracle.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin
import numpy as np
import pytest

import hyperslab
from hyperslab.codecs import cframe_region
from hyperslab.codecs.cframe import parse_frame
from hyperslab.codecs.cframe_region import decode_region, slabs_shape


def _frame(chunk: np.ndarray, blockshape: tuple[int, ...]) -> bytes:
    cparams = {"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}
    return bytes(blosc2.asarray(chunk, chunks=chunk.shape, blocks=blockshape,
                                cparams=cparams).to_cframe())


def _count_decompress(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes of every ``_decompress`` call of :mod:`cframe_region`, in order."""
    sizes: list[int] = []
    real = cframe_region._decompress

    def counted(src: Any, dst: Any, nthreads: int) -> None:
        sizes.append(memoryview(dst).nbytes)
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe_region, "_decompress", counted)
    return sizes


@pytest.mark.parametrize(("blockshape", "chunkshape", "expected"), [
    ((1, 13, 50, 50), (10, 25, 50, 50), (10, 26, 50, 50)),  # padded along axis 1
    ((1, 10, 50, 50), (25, 50, 50, 50), (25, 50, 50, 50)),
    ((4, 64, 64), (10, 64, 64), (12, 64, 64)),  # padded along axis 0
    ((1, 1, 7), (3, 4, 20), (3, 4, 21)),
    ((8,), (20,), (24,)),
    ((2, 128, 256), (2, 500, 500), None),  # hdf5plugin's blocks
    ((10, 25, 32, 32), (10, 25, 50, 50), None),  # PyTables' blocks
    ((1, 13, 50, 25), (10, 25, 50, 50), None),
])
def test_slabs_shape(blockshape: tuple[int, ...], chunkshape: tuple[int, ...],
                     expected: tuple[int, ...] | None) -> None:
    blocks = [-(-c // b) for c, b in zip(chunkshape, blockshape, strict=True)]
    nbytes = int(np.prod([n * b for n, b in zip(blocks, blockshape, strict=True)])) * 8
    blocksize = int(np.prod(blockshape)) * 8
    assert slabs_shape(blockshape, chunkshape, blocksize, nbytes) == expected
    # bytes that are not those of the padded blocks: not slabs of that chunk
    assert slabs_shape(blockshape, chunkshape, blocksize, nbytes + 8 * blocksize) is None


@pytest.mark.parametrize("blockshape", [(1, 13, 8, 8), (1, 5, 8, 8), (2, 25, 8, 8),
                                        (1, 1, 3, 8)])
@pytest.mark.parametrize("region", [
    (slice(0, 10), slice(0, 25), slice(0, 8), slice(5, 6)),
    (slice(1, 10, 3), slice(2, 25, 4), slice(0, 8, 7), slice(0, 8, 2)),
    (slice(0, 10), slice(24, 25), slice(0, 8), slice(0, 8)),
    (slice(3, 9, 5), slice(0, 25, 2), slice(1, 8), slice(2, 7)),
])
def test_decode_region_decodes_slabs_in_groups_of_rows(
        blockshape: tuple[int, ...], region: tuple[slice, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A region touching most slabs decodes the rows (along axis 0) from its first to
    its last in one call (a chunk of less than SLAB_GROUP_BYTES), padding included; one
    touching few decodes those blocks, in one call; exact against NumPy."""
    chunk = np.random.default_rng(1).integers(-10**6, 10**6, (10, 25, 8, 8))
    frame = _frame(chunk, blockshape)
    sizes = _count_decompress(monkeypatch)
    part = decode_region(frame, region, "<i8", max_share=0.5)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[region])
    nbytes = parse_frame(frame).chunk_nbytes
    blocksize = int(np.prod(blockshape)) * 8
    touched = _touched_blocks(chunk.shape, blockshape, region)
    if touched > nbytes // blocksize / 2:
        # the units of blocks holding selected rows, each run of consecutive ones a call
        unit = blockshape[0]  # rows a unit holds
        unit_bytes = nbytes // -(-10 // unit)
        units = sorted({row // unit for row in range(10)[region[0]]})
        runs = 1 + sum(b != a + 1 for a, b in itertools.pairwise(units))
        assert len(sizes) == runs and sum(sizes) == len(units) * unit_bytes
    else:
        assert sizes == [touched * blocksize]


def _touched_blocks(shape: tuple[int, ...], blockshape: tuple[int, ...],
                    region: tuple[slice, ...]) -> int:
    """How many blocks of a chunk of ``shape`` hold items ``region`` selects."""
    selected = np.zeros(shape, dtype=bool)
    selected[region] = True
    grid = [-(-n // b) for n, b in zip(shape, blockshape, strict=True)]
    padded = np.zeros([g * b for g, b in zip(grid, blockshape, strict=True)], dtype=bool)
    padded[tuple(slice(0, n) for n in shape)] = selected
    split = padded.reshape([x for g, b in zip(grid, blockshape, strict=True) for x in (g, b)])
    return int(split.any(axis=tuple(range(1, 2 * len(shape), 2))).sum())


def test_slabs_go_a_group_of_rows_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of slabs bigger than SLAB_GROUP_BYTES is decoded a group of whole rows at
    a time, never more than a group at once; rows between selected ones (a step) that
    fill a group are not decoded."""
    chunk = np.random.default_rng(2).integers(0, 1000, (40, 20, 64, 8))  # 80 KiB rows
    frame = _frame(chunk, (1, 10, 64, 8))
    monkeypatch.setattr(cframe_region, "SLAB_GROUP_BYTES", 3 * 20 * 64 * 8 * 8)
    sizes = _count_decompress(monkeypatch)
    region = (slice(0, 40), slice(0, 20, 3), slice(5, 6), slice(0, 8))
    part = decode_region(frame, region, "<i8", max_share=0.5)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[region])
    row = 20 * 64 * 8 * 8
    assert sizes == [3 * row] * 13 + [row]
    sizes.clear()
    region = (slice(0, 40, 10), slice(0, 20), slice(0, 64, 9), slice(0, 8))
    part = decode_region(frame, region, "<i8", max_share=0.0)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[region])
    assert sizes == [row] * 4  # rows 0, 10, 20 and 30, each the only one of its group


def test_big_slabs_touched_all_over_are_decoded_in_groups_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Slabs of at least ``big_blocks`` bytes take the same route (no block on its own)."""
    chunk = np.arange(10 * 25 * 8 * 8, dtype="<i8").reshape(10, 25, 8, 8)
    region = (slice(0, 10), slice(0, 25), slice(0, 8), slice(5, 6))
    frame = _frame(chunk, (1, 13, 8, 8))
    sizes = _count_decompress(monkeypatch)
    part = decode_region(frame, region, "<i8", max_share=0.5, big_blocks=13 * 64 * 8)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[region])
    assert sizes == [13 * 64 * 8 * 20]


def _write(path: Path, data: np.ndarray, chunkshape: tuple[int, ...],
           blockshape: tuple[int, ...]) -> None:
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=chunkshape, blockshape=blockshape,
                        filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True))
    with h5py.File(path) as h5:
        assert parse_frame(h5["a"].id.read_direct_chunk((0,) * data.ndim)[1]).blockshape \
            == blockshape


@pytest.mark.parametrize("dtype", ["<i8", ">f8", ">i8"])
def test_reads_touching_most_slabs_decode_each_chunk_once(
        tmp_path: Path, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a[..., k]`` of a file whose padded slabs (``(1, 13, 16, 16)`` of ``(4, 25, 16,
    16)`` chunks) all hold selected items: one Blosc2 call per chunk, for all its rows;
    exact against h5py + hdf5plugin on the same file, edge chunks and other byte orders
    included."""
    data = np.random.default_rng(3).integers(0, 5000, (10, 50, 16, 40)).astype(dtype)
    path = tmp_path / "slabs.h5"
    _write(path, data, (4, 25, 16, 16), (1, 13, 16, 16))
    keys = [np.s_[..., 5], np.s_[:, :, 7], np.s_[1:9:2, ::3, :, 33]]
    with h5py.File(path) as h5:
        expected = [h5["a"][key] for key in keys]
    sizes = _count_decompress(monkeypatch)
    row = 26 * 16 * 16 * data.itemsize
    with hyperslab.open_file(path, max_threads=1) as f:
        np.testing.assert_array_equal(f.root.a[..., 5], expected[0])
        # 2 x 2 chunks of the first column, 4 rows each; the 2 edge chunks hold 2 rows
        assert Counter(sizes) == {4 * row: 4, 2 * row: 2}
        for key, values in zip(keys, expected, strict=True):
            np.testing.assert_array_equal(f.root.a[key], values)


def test_reads_touching_few_slabs_still_decode_only_those(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a[2]`` touches 2 of a chunk's 8 slabs: only those are decoded, in one call."""
    data = np.random.default_rng(4).integers(0, 5000, (8, 50, 16, 16)).astype("<i8")
    path = tmp_path / "few.h5"
    _write(path, data, (4, 25, 16, 16), (1, 13, 16, 16))
    sizes = _count_decompress(monkeypatch)
    with hyperslab.open_file(path, max_threads=1) as f:
        np.testing.assert_array_equal(f.root.a[2], data[2])
    assert sizes == [2 * 13 * 16 * 16 * 8] * 2


def test_pieces_leaving_nothing_to_decode_later(tmp_path: Path) -> None:
    """Edge chunks read whole by the pieces themselves leave the split decoding nothing to
    run (found by ``test_slicing::test_every_selection_matches_numpy``)."""
    data = np.arange(7, dtype=">i4").reshape(7, 1)
    path = tmp_path / "edges.h5"
    with h5py.File(path, "w") as h5:
        h5.create_dataset("a", data=data, chunks=(6, 10923), maxshape=(None, None),
                          **hdf5plugin.Blosc2(cname="lz4", clevel=5))
    with hyperslab.open_file(path, max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[...], data)
        np.testing.assert_array_equal(f.root.a[1:7], data[1:7])


def test_chunks_decoded_whole_in_a_split_read_use_both_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks that are not slabs, touched all over (a strided read), decode their
    chunks whole: in a read of several chunks that work is split between the calling
    thread and the pool like any other; exact against h5py + hdf5plugin."""
    import threading

    from hyperslab.chunked import engine

    data = np.random.default_rng(5).integers(0, 9000, (16, 64, 128)).astype("<i8")
    path = tmp_path / "tiles.h5"
    _write(path, data, (8, 64, 64), (4, 16, 16))  # 256 KiB chunks of 8 KiB tiles
    key = np.s_[::3, 1::2, ::5]
    with h5py.File(path) as h5:
        expected = h5["a"][key]
    threads: list[str] = []
    real = engine.ChunkEngine._copy_decoded
    pool_took_its_part = threading.Event()

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        # The calling thread waits until the pool's task has taken its part: on a busy
        # machine the task may start only once the caller is done, and the caller then
        # reads that part itself (by design), which would say nothing about the split.
        if threading.current_thread() is threading.main_thread():
            if not pool_took_its_part.wait(timeout=10):
                pool_took_its_part.set()  # (no split: the assertion below says so)
        else:
            pool_took_its_part.set()
        threads.append(threading.current_thread().name)
        real(self, *args, **kwargs)

    monkeypatch.setattr(engine.ChunkEngine, "_copy_decoded", spy)
    with hyperslab.open_file(path, max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[key], expected)
    assert len(threads) == 4 and len(set(threads)) == 2
