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

from collections import Counter
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)
import numpy as np
import pytest

import hyperslab
from hyperslab.chunked import scratch
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


@pytest.mark.parametrize("blockshape", [(1, 13, 8, 8), (1, 5, 8, 8), (2, 25, 8, 8)])
@pytest.mark.parametrize("region", [
    (slice(0, 10), slice(0, 25), slice(0, 8), slice(5, 6)),
    (slice(1, 10, 3), slice(2, 25, 4), slice(0, 8, 7), slice(0, 8, 2)),
    (slice(0, 10), slice(24, 25), slice(0, 8), slice(0, 8)),
])
def test_decode_region_decodes_slabs_whole_into_the_lent_buffer(
        blockshape: tuple[int, ...], region: tuple[slice, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``work``, a region touching most slabs decodes the chunk in one call into the
    lent buffer; exact against NumPy, whatever the steps and the padding."""
    chunk = np.random.default_rng(1).integers(-10**6, 10**6, (10, 25, 8, 8))
    frame = _frame(chunk, blockshape)
    lent: list[np.ndarray] = []

    def work(nbytes: int) -> np.ndarray:
        lent.append(np.empty(nbytes, dtype=np.uint8))
        return lent[-1]

    sizes = _count_decompress(monkeypatch)
    part = decode_region(frame, region, "<i8", max_share=0.5, work=work)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[region])
    nbytes = parse_frame(frame).chunk_nbytes
    blocksize = int(np.prod(blockshape)) * 8
    touched = _touched_blocks(chunk.shape, blockshape, region)
    nblocks = nbytes // blocksize
    # one call: the whole chunk where most blocks are touched, else the touched ones
    assert sizes == [nbytes if touched > nblocks / 2 else touched * blocksize]
    assert [a.nbytes for a in lent] == sizes


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


def test_without_a_buffer_slabs_are_not_decoded_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``work``: small slabs not at all (the caller decodes the chunk whole), big ones
    as any big blocks, all the touched ones in one call."""
    chunk = np.arange(10 * 25 * 8 * 8, dtype="<i8").reshape(10, 25, 8, 8)
    region = (slice(0, 10), slice(0, 25), slice(0, 8), slice(5, 6))
    frame = _frame(chunk, (1, 13, 8, 8))
    sizes = _count_decompress(monkeypatch)
    assert decode_region(frame, region, "<i8", max_share=0.5) is None
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
    16)`` chunks) all hold selected items: one whole-chunk Blosc2 call per chunk, into the
    thread's kept buffer (the same memory on the next read); exact against h5py +
    hdf5plugin on the same file, edge chunks and other byte orders included."""
    data = np.random.default_rng(3).integers(0, 5000, (10, 50, 16, 40)).astype(dtype)
    path = tmp_path / "slabs.h5"
    _write(path, data, (4, 25, 16, 16), (1, 13, 16, 16))
    keys = [np.s_[..., 5], np.s_[:, :, 7], np.s_[1:9:2, ::3, :, 33]]
    with h5py.File(path) as h5:
        expected = [h5["a"][key] for key in keys]
    sizes = _count_decompress(monkeypatch)
    chunk_nbytes = 4 * 26 * 16 * 16 * data.itemsize
    with hyperslab.open_file(path, max_threads=1) as f:
        np.testing.assert_array_equal(f.root.a[..., 5], expected[0])
        # 2 x 2 chunks of the first column decoded whole; the 2 edge chunks (2 rows of
        # 4) hold selected items in half of their slabs only: those 4, in one call
        assert Counter(sizes) == {chunk_nbytes: 4, 4 * 13 * 16 * 16 * data.itemsize: 2}
        kept = scratch._chunk_scratch.blocked
        for key, values in zip(keys, expected, strict=True):
            np.testing.assert_array_equal(f.root.a[key], values)
        assert scratch._chunk_scratch.blocked is kept


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
