"""``arr[c]`` of whole chunks (a stack of images stored one per chunk) through the chunk
engine's shortest path: no selection planned, the stored frame read into a per-thread
scratch buffer, the block-ordered bytes of frames whose blocks are not C-ordered slabs
decompressed into another.

Every read is compared with NumPy, on files written by hyperslab, PyTables, h5py +
hdf5plugin and as direct frames of python-blosc2; each new path has a test that fails if it
is broken or not taken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.chunked import scratch
from hyperslab.codecs import cframe, cframe_blocks
from hyperslab.nodes.leaves import leaf as leaf_module
from hyperslab.storage.preads import SparseChunk

SHAPE = (4, 64, 96)
WRITERS = ["hyperslab", "pytables", "h5py", "direct", "direct-blocks"]


def _images() -> np.ndarray:
    rng = np.random.default_rng(22)
    base = np.linspace(0, 3000, SHAPE[1] * SHAPE[2]).reshape(SHAPE[1:])
    return (base + rng.integers(0, 50, SHAPE)).astype(np.uint16)


def _write(path: Path, writer: str, images: np.ndarray) -> None:
    """One image per chunk, Blosc2 + Zstd, as each writer stores it."""
    _, height, width = images.shape
    if writer in ("hyperslab", "pytables"):
        lib: Any = hyperslab if writer == "hyperslab" else tables
        with lib.open_file(path, "w") as f:
            arr = f.create_earray("/", "images", lib.UInt16Atom(), shape=(0, height, width),
                                  chunkshape=(1, height, width),
                                  filters=lib.Filters(5, "blosc2:zstd"))
            for image in images:
                arr.append(image[None])
        return
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("images", shape=images.shape, chunks=(1, height, width),
                                dtype=images.dtype, maxshape=(None, height, width),
                                **hdf5plugin.Blosc2(cname="zstd", clevel=5))
        if writer == "h5py":
            dset[...] = images
            return
        blocks = (1, 16, 32) if writer == "direct-blocks" else None  # not C-ordered slabs
        for c, image in enumerate(images):
            frame = blosc2.asarray(image[None], chunks=(1, height, width), blocks=blocks,
                                   cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD))
            dset.id.write_direct_chunk((c, 0, 0), frame.to_cframe())


def _refuse_planning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any read that plans a selection fail the test."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a selection was planned: {args[1:]!r}")
    monkeypatch.setattr(leaf_module, "read_selection", refuse)


@pytest.mark.parametrize("mode", ["r", "a"])
@pytest.mark.parametrize("writer", WRITERS)
def test_whole_chunks_are_read_without_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str, mode: str
) -> None:
    images = _images()
    path = tmp_path / f"{writer}.h5"
    _write(path, writer, images)
    with hyperslab.open_file(path, mode) as f:
        arr = f.root.images
        with monkeypatch.context() as m:
            _refuse_planning(m)
            got = [arr[c] for c in range(len(images))] + [arr[-1], arr[-len(images)]]
        with pytest.raises(AssertionError, match="planned"), monkeypatch.context() as m:
            _refuse_planning(m)
            arr[1:2]  # a slice takes the general path
    for image, expected in zip(got, [*images, images[-1], images[0]], strict=True):
        assert image.shape == SHAPE[1:] and image.dtype == np.uint16
        np.testing.assert_array_equal(image, expected)
    # every result is new memory of its own (not the scratch the frames went through)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(got[:4]) for b in got[i + 1:4])
    got[0][...] = 0
    np.testing.assert_array_equal(got[1], images[1])


def test_the_layouts_tested_include_blocks_that_need_reordering(tmp_path: Path) -> None:
    """The writers above give frames of C-ordered slabs and of blocks to reorder."""
    orders = set()
    for writer in WRITERS:
        path = tmp_path / f"{writer}.h5"
        _write(path, writer, _images())
        with h5py.File(path) as f:
            orders.add(cframe.parse_frame(f["images"].id.read_direct_chunk((0, 0, 0))[1])
                       .c_order)
    assert orders == {True, False}


@pytest.mark.parametrize("threads", [1, 2])
def test_frames_and_blocks_go_through_kept_buffers(tmp_path: Path, threads: int) -> None:
    """On a read-only file, the stored frame of each chunk read whole is read into the
    thread's scratch buffer, and blocks not in C order are decompressed one by one into
    the thread's block buffer (small chunks: one Blosc2 thread, see cframe_blocks)."""
    images = _images()
    path = tmp_path / "blocks.h5"
    _write(path, "direct-blocks", images)
    stored, blocked = [], []
    with hyperslab.open_file(path, max_threads=threads) as f:
        for c in range(len(images)):
            got = f.root.images[c]
            np.testing.assert_array_equal(got, images[c])
            stored.append(scratch._chunk_scratch.stored)
            blocked.append(cframe_blocks._scratch.buffer)
            assert not np.shares_memory(got, blocked[-1])  # the result is its own
        np.testing.assert_array_equal(f.root.images[1:3], images[1:3])  # the general path
        assert scratch._chunk_scratch.stored is stored[0]
    assert all(buffer is stored[0] for buffer in stored)
    assert all(buffer is blocked[0] for buffer in blocked)


def test_keys_of_other_shapes_take_the_general_path(tmp_path: Path) -> None:
    """Chunks holding part of a row, or more than one, NumPy ints, and out-of-bounds ints
    are read (or refused) by the general path, as before."""
    images = _images()
    path = tmp_path / "other.h5"
    with hyperslab.open_file(path, "w") as f:
        filters = hyperslab.Filters(5, "blosc2:zstd")
        f.create_carray("/", "half", obj=images, chunkshape=(1, 32, 96), filters=filters)
        f.create_carray("/", "pairs", obj=images, chunkshape=(2, 64, 96), filters=filters)
        f.create_carray("/", "rows", obj=images, chunkshape=(1, 1, 96), filters=filters)
    with hyperslab.open_file(path) as f:
        for name in ("half", "pairs"):
            node = f.get_node("/" + name)
            assert node._engine.read_whole_chunk(1) is None
            np.testing.assert_array_equal(node[1], images[1])
        rows = f.root.rows
        np.testing.assert_array_equal(rows._engine.read_whole_chunk((2, -1)), images[2, -1])
        np.testing.assert_array_equal(rows[2, -1], images[2, -1])
        np.testing.assert_array_equal(rows[np.int64(3)], images[3])
        assert rows._engine.read_whole_chunk(np.int64(3)) is None
        assert rows._engine.read_whole_chunk(True) is None
        with pytest.raises(IndexError, match="4"):
            rows[4]
        with pytest.raises(IndexError, match="-5"):
            rows[-5]


def test_unwritten_chunks_and_swapped_bytes(tmp_path: Path) -> None:
    """A chunk never written reads as the fill value; big-endian data comes back native."""
    images = _images()
    path = tmp_path / "fill.h5"
    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "e", hyperslab.UInt16Atom(dflt=7), shape=(0, 64, 96),
                                 chunkshape=(1, 64, 96), filters=hyperslab.Filters(5, "blosc2"))
        earray.truncate(3)
        earray[1] = images[1]
        f.create_carray("/", "big", obj=images.astype(">u2"), chunkshape=(1, 64, 96),
                        filters=hyperslab.Filters(5, "blosc2"))
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.e[0], np.full((64, 96), 7, "u2"))
        np.testing.assert_array_equal(f.root.e[1], images[1])
        big = f.root.big
        assert big._engine.read_whole_chunk(2) is not None
        assert big[2].dtype == np.dtype("=u2")
        np.testing.assert_array_equal(big[2], images[2])
    with tables.open_file(path) as t:
        np.testing.assert_array_equal(t.root.big[2], images[2])


def test_decode_into_decompresses_blocks_to_reorder_into_the_work_buffer() -> None:
    image = _images()[0][None]
    blocked = blosc2.asarray(image, chunks=image.shape, blocks=(1, 16, 32)).to_cframe()
    slabs = blosc2.asarray(image, chunks=image.shape, blocks=(1, 16, 96)).to_cframe()
    asked = []

    def work(nbytes: int) -> np.ndarray:
        asked.append(nbytes)
        return np.empty(nbytes, dtype=np.uint8)

    # With Blosc2 threads, blocks to reorder are decoded whole into the work buffer; with
    # one, one by one into a block buffer (cframe_blocks); C-ordered slabs go straight.
    for frame, nthreads, calls in ((blocked, 2, [image.nbytes]), (blocked, 1, []),
                                   (slabs, 2, [])):
        out = np.empty_like(image)
        asked.clear()
        cframe.decode_into(frame, out, nthreads=nthreads, work=work)
        np.testing.assert_array_equal(out, image)
        assert asked == calls


def test_load_all_into_reads_the_chunk_into_the_buffer_given(tmp_path: Path) -> None:
    path = tmp_path / "raw.bin"
    path.write_bytes(bytes(range(200)))
    from hyperslab.storage.chunkindex import ChunkLocation

    with path.open("rb") as handle:
        sparse = SparseChunk(handle.fileno(), ChunkLocation(10, 50, 0))
        sparse.load(0, 4)
        buffer = np.zeros(50, dtype=np.uint8)
        sparse.load_all_into(buffer)
        assert sparse.buffer is buffer
        assert buffer.tobytes() == bytes(range(10, 60))
        for bad in (np.zeros(49, np.uint8), np.zeros(50, np.int8), b"x" * 50):
            with pytest.raises(ValueError, match="50 stored bytes"):
                sparse.load_all_into(bad)  # type: ignore[arg-type]


def test_scratch_slots_are_checked() -> None:
    with pytest.raises(ValueError, match="'frame'"):
        scratch.scratch_bytes(8, "frame")
    kept = getattr(scratch._chunk_scratch, "stored", None)
    big = scratch.scratch_bytes(scratch.CHUNK_SCRATCH_MAX + 1, "stored")
    assert big.base is None  # new memory, not kept
    assert getattr(scratch._chunk_scratch, "stored", None) is kept


@pytest.mark.parametrize("filters", [None, hyperslab.Filters(5, "blosc2:lz4")])
def test_whole_chunks_of_a_box_go_through_the_chunk_buffer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: Any) -> None:
    """Chunks a box covers whole, but whose place in the result is not contiguous (the box
    is wider than a chunk), are read (unfiltered) or decoded (Blosc2) whole into the
    thread's chunk buffer and copied: no bytes object per chunk, no Blosc2 call per block
    (fresh memory where freed memory goes back to the system at once)."""
    from hyperslab.chunked.engine import ChunkEngine

    data = np.arange(8 * 64 * 96, dtype=np.float64).reshape(8, 64, 96)
    path = tmp_path / "box.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 32, 48), filters=filters)
    with hyperslab.open_file(path) as f:
        def fail(self: Any, grid: Any, in_part: bool) -> Any:
            raise AssertionError(f"chunk {grid} read as a bytes object")

        monkeypatch.setattr(ChunkEngine, "_stored_bytes", fail)
        leaf = f.root.a
        for key in [np.s_[0:4, 0:64, 0:96], np.s_[4:8, 0:64, 48:96], np.s_[:, 32:64, :]]:
            np.testing.assert_array_equal(leaf._engine.read_gather(key), data[key])
