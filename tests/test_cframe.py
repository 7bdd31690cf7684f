"""Blosc2 chunk frames without python-blosc2 objects (codecs/cframe.py, codecs/blockshape.py).

Oracles: python-blosc2's NDArray/SChunk frames (same bytes, same data), the HDF5 Blosc2
filter of hdf5plugin (its frames decode here, ours read back through it), PyTables, NumPy.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import math
import mmap
import sys
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin
import numpy as np
import pytest
import tables
import tables.leaf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperslab.codecs import blockshape, cframe, cframe_blocks, cframe_item
from hyperslab.codecs.blockshape import (
    blocks_are_c_order,
    choose_blockshape,
    from_block_order,
    to_block_order,
)
from hyperslab.codecs.blosc2_filter import Blosc2Params
from hyperslab.codecs.cframe import FrameEncoder, FrameError, decode_into, decode_item, parse_frame

CODECS = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
COMPOUND = np.dtype([("a", "<i2"), ("b", "<f8"), ("c", "S3")])
WIDE = np.dtype([("a", "S300")])  # past Blosc2's 255-byte typesize
DTYPES = [np.dtype(t) for t in ("u1", "<u2", "<i4", "<f8", "?")] + [COMPOUND]
# (chunk shape, block shape): None is a plain super-chunk frame (the filter's rank-1 chunks).
LAYOUTS = [
    ((100,), None),
    ((37,), None),
    ((100,), (16,)),
    ((4, 4), (4, 4)),
    ((4, 4), (2, 4)),
    ((9, 7), (4, 3)),
    ((10, 6, 5), (3, 6, 5)),
    ((10, 6, 5), (4, 4, 2)),
    ((2, 3, 4, 5), (1, 1, 4, 5)),
    ((3, 5, 7, 2), (2, 2, 3, 2)),
]


@pytest.fixture(autouse=True)
def _no_host_cache_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep PyTables from sizing chunks by this host's caches (and writing ~/.pytables-*)."""
    monkeypatch.setattr(tables.leaf, "get_cpu_info", lambda: {})


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray[Any, Any]:
    """Compressible data of any dtype: random small bytes (bools made valid)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 20, size=math.prod(shape) * dt.itemsize, dtype=np.uint8)
    if dt.kind == "b":
        raw %= 2
    return raw.view(dt).reshape(shape)


def reference_frame(
    data: np.ndarray[Any, Any], blocks: tuple[int, ...] | None, codec: int, clevel: int,
    filter_code: int, blocksize: int = 0,
) -> bytes:
    """The frame python-blosc2's objects build for the same parameters."""
    typesize = data.dtype.itemsize
    cparams = blosc2.CParams(
        codec=codec, clevel=clevel, typesize=typesize, nthreads=1,
        blocksize=blocksize if blocks is None else math.prod(blocks) * typesize,
        splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
        filters=[0, 0, 0, 0, 0, filter_code], filters_meta=[0] * 6,
    )
    if blocks is None:
        schunk = blosc2.SChunk(chunksize=data.nbytes, data=data.reshape(-1).view(np.uint8),
                               cparams=cparams)
        return bytes(schunk.to_cframe())
    nd = blosc2.frombuffer(data.tobytes(), data.shape, dtype=np.dtype(f"V{typesize}"),
                           chunks=data.shape, blocks=blocks, cparams=cparams)
    return bytes(nd.to_cframe())


def encoder_for(data: np.ndarray[Any, Any], blocks: tuple[int, ...] | None, codec: int,
                clevel: int, filter_code: int, blocksize: int = 0) -> FrameEncoder:
    return FrameEncoder(data.shape, data.dtype.itemsize, codec=codec, clevel=clevel,
                        filter_code=filter_code, blockshape=blocks, blocksize=blocksize)


def blosc2_decoded(frame: bytes, data: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """python-blosc2's reading of a frame, as `data`'s dtype and shape."""
    obj = blosc2.from_cframe(frame)
    if isinstance(obj, blosc2.NDArray):
        return np.asarray(obj[...]).view(data.dtype).reshape(data.shape)
    return np.frombuffer(obj.decompress_chunk(0), dtype=data.dtype).reshape(data.shape)


def check_items(frame: bytes, data: np.ndarray[Any, Any], count: int = 12) -> None:
    rng = np.random.default_rng(len(frame))
    chunkshape = None if parse_frame(frame).blockshape is not None else data.shape
    for flat in {0, data.size - 1, *rng.integers(0, data.size, count).tolist()}:
        index = np.unravel_index(flat, data.shape)
        got = decode_item(frame, index, data.dtype, chunkshape=chunkshape)
        assert got == data[index], (index, got, data[index])


# ---------------------------------------------------------------- frames vs python-blosc2
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from(DTYPES),
    codec=st.sampled_from(sorted(CODECS.values())),
    clevel=st.sampled_from([0, 1, 5, 9]),
    filter_code=st.sampled_from([0, 1, 2]),
    seed=st.integers(0, 3),
)
def test_frames_are_python_blosc2_frames(
    layout: tuple[tuple[int, ...], tuple[int, ...] | None], dtype: np.dtype[Any], codec: int,
    clevel: int, filter_code: int, seed: int,
) -> None:
    """Our frames are byte for byte python-blosc2's; each side decodes the other's."""
    shape, blocks = layout
    data = sample(shape, dtype, seed)
    ours = encoder_for(data, blocks, codec, clevel, filter_code).encode(data)
    theirs = reference_frame(data, blocks, codec, clevel, filter_code)
    assert ours == theirs
    np.testing.assert_array_equal(blosc2_decoded(ours, data), data)
    out = np.empty_like(data)
    decode_into(theirs, out)
    np.testing.assert_array_equal(out, data)
    check_items(theirs, data, count=4)


def test_frames_of_wide_items() -> None:
    """Items over 255 bytes (Blosc2 compresses them as bytes) go in plain frames."""
    data = sample((7, 4), WIDE)
    frame = FrameEncoder((28,), 300, codec=1, clevel=5, filter_code=1).encode(data)
    assert frame == reference_frame(data.reshape(-1), None, 1, 5, 1)
    np.testing.assert_array_equal(blosc2_decoded(frame, data), data)
    out = np.empty_like(data)
    decode_into(frame, out)
    np.testing.assert_array_equal(out, data)
    check_items(frame, data, count=3)
    assert parse_frame(frame).typesize == 1  # as Blosc2 records it
    with pytest.raises(ValueError, match="blockshape=None"):
        encoder_for(data, (3, 4), 1, 5, 1)
    # b2nd frames of wide items (the filter writes them, cannot read them) decode here.
    wide = reference_frame(data, (3, 4), 1, 5, 1)
    assert parse_frame(wide).typesize == 300
    decode_into(wide, out)
    np.testing.assert_array_equal(out, data)
    check_items(wide, data, count=3)


def test_plain_frame_block_size_and_any_shaped_input() -> None:
    """Plain frames honour `blocksize`; encode takes any C-contiguous array of the size."""
    data = sample((40, 25), "<f8")
    encoder = FrameEncoder((1000,), 8, codec=1, clevel=5, filter_code=1, blocksize=1600)
    frame = encoder.encode(data)
    assert frame == reference_frame(data.reshape(-1), None, 1, 5, 1, blocksize=1600)
    assert parse_frame(frame).blocksize == 1600
    assert encoder.encode(np.asfortranarray(data).T.T) == frame
    out = np.empty((40, 25))
    decode_into(frame, out)
    np.testing.assert_array_equal(out, data)
    assert decode_item(frame, (3, 7), "<f8", chunkshape=(40, 25)) == data[3, 7]
    assert decode_item(frame, (-1,), "<f8") == data[-1, -1]
    with pytest.raises(ValueError, match="does not fill"):
        decode_item(frame, (3, 7), "<f8", chunkshape=(40, 24))


# ---------------------------------------------------------------- the HDF5 filter's frames
FILTER_CASES = [
    ((10, 10), (5, 5), "<f8", {"cname": "zstd", "clevel": 5, "filters": 2}),
    ((300, 120), (200, 64), "<i4", {"cname": "lz4", "clevel": 3, "filters": 1}),
    ((40, 30, 20), (16, 30, 7), "<f4", {"cname": "blosclz", "clevel": 9, "filters": 0}),
    ((3, 2, 50, 4), (2, 2, 32, 4), "<u2", {"cname": "zlib", "clevel": 1, "filters": 3}),
    ((6, 6), (4, 4), COMPOUND, {"cname": "lz4hc", "clevel": 4, "filters": 1}),
    ((7, 5), (4, 4), "?", {"cname": "zstd", "clevel": 0, "filters": 1}),
    ((100,), (64,), "u1", {"cname": "blosclz", "clevel": 1, "filters": 1}),
    ((5000,), (3000,), "<f8", {"cname": "zstd", "clevel": 2, "filters": 2}),
    ((30,), (16,), WIDE, {"cname": "lz4", "clevel": 5, "filters": 1}),
    ((6, 4), (4, 4), WIDE, {"cname": "zstd", "clevel": 5, "filters": 1}),
]


def chunk_starts(shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[tuple[int, ...]]:
    grid = [range(0, n, c) for n, c in zip(shape, chunks, strict=True)]
    return [tuple(g[i] for g, i in zip(grid, idx, strict=True))
            for idx in np.ndindex(*(len(g) for g in grid))]


def padded_chunk(data: np.ndarray[Any, Any], start: tuple[int, ...],
                 chunks: tuple[int, ...]) -> np.ndarray[Any, Any]:
    part = data[tuple(slice(s, s + c) for s, c in zip(start, chunks, strict=True))]
    chunk = np.zeros(chunks, dtype=data.dtype)
    chunk[tuple(slice(0, n) for n in part.shape)] = part
    return chunk


def blosc2_params(dset: h5py.Dataset) -> Blosc2Params:
    dcpl = dset.id.get_create_plist()
    return Blosc2Params.from_cd_values(dcpl.get_filter(0)[2])


@pytest.mark.parametrize(("shape", "chunks", "dtype", "kw"), FILTER_CASES)
def test_hdf5_filter_frames_decode(
    tmp_path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: Any,
    kw: dict[str, Any],
) -> None:
    data = sample(shape, dtype, seed=1)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        dset = f.create_dataset("x", data=data, chunks=chunks, **hdf5plugin.Blosc2(**kw))
        for start in chunk_starts(shape, chunks):
            frame = dset.id.read_direct_chunk(start)[1]
            expected = padded_chunk(data, start, chunks)
            out = np.empty(chunks, dtype=data.dtype)
            decode_into(frame, out)
            np.testing.assert_array_equal(out, expected)
            check_items(frame, expected, count=6)


@pytest.mark.parametrize(("shape", "chunks", "dtype", "kw"), FILTER_CASES)
def test_our_frames_read_back_through_the_filter(
    tmp_path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: Any,
    kw: dict[str, Any],
) -> None:
    """Frames written raw read back through HDF5's filter path (PyTables for some)."""
    data = sample(shape, dtype, seed=2)
    path = tmp_path / "ours.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("x", shape=shape, dtype=dtype, chunks=chunks,
                                **hdf5plugin.Blosc2(**kw))
        params = blosc2_params(dset)
        itemsize = np.dtype(dtype).itemsize
        wide = params.typesize > 255  # the filter cannot read b2nd frames of those
        blocks = choose_blockshape(chunks, itemsize, 4096) if params.is_b2nd and not wide else None
        encoder = FrameEncoder(chunks, params.typesize, codec=params.effective_compcode,
                               clevel=params.clevel, filter_code=params.filter_code,
                               blockshape=blocks, blocksize=params.blocksize)
        for start in chunk_starts(shape, chunks):
            dset.id.write_direct_chunk(start, encoder.encode(padded_chunk(data, start, chunks)))
    with h5py.File(path, "r") as f:  # a fresh chunk cache: every chunk goes through the filter
        np.testing.assert_array_equal(f["x"][...], data)
    if len(shape) > 1 and np.dtype(dtype).kind in "iuf":
        with tables.open_file(path, "r") as h5:  # PyTables' own b2nd reader
            np.testing.assert_array_equal(h5.root.x[...], data)


# ---------------------------------------------------------------- other writers' blocks
BLOCKWISE = [((40, 30, 20), (16, 16, 8)), ((90, 70), (40, 30)), ((100, 40), (30, 40)),
             ((64, 64), (32, 32))]


def runs(shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
    """Data of any dtype that Blosc2 compresses (runs of equal bytes, bools made valid)."""
    dt = np.dtype(dtype)
    raw = (np.arange(math.prod(shape) * dt.itemsize) // 16 % 5).astype(np.uint8)
    if dt.kind == "b":
        raw %= 2
    return raw.view(dt).reshape(shape)


@pytest.mark.parametrize(("chunks", "blocks"), BLOCKWISE)
@pytest.mark.parametrize("dtype", ["<u2", "<f8", "?", COMPOUND])
def test_blocks_not_in_c_order_are_decoded_without_reordering(
    monkeypatch: pytest.MonkeyPatch, chunks: tuple[int, ...], blocks: tuple[int, ...],
    dtype: Any,
) -> None:
    """Chunks whose blocks are not their C order (padded, or not whole rows) decode a
    group of blocks at a time through a per-thread buffer; with several Blosc2 threads,
    and for chunks whose blocks do not decode alone (stored uncompressed), whole as
    before."""
    calls: list[bool] = []

    def spy(*args: Any) -> bool:
        calls.append(cframe_blocks.decode_blocks_into(*args))
        return calls[-1]

    monkeypatch.setattr(cframe, "decode_blocks_into", spy)
    data = runs(chunks, dtype)
    frame = reference_frame(data, blocks, CODECS["lz4"], 5, 1)
    layout = parse_frame(frame)
    assert not layout.c_order or layout.chunk_nbytes != layout.nbytes
    for nthreads, taken in ((1, [True]), (2, [])):
        calls.clear()
        out = np.full_like(data, 1)
        decode_into(frame, out, nthreads=nthreads)
        np.testing.assert_array_equal(out, data)
        assert calls == taken
    calls.clear()
    stored = reference_frame(data, blocks, CODECS["lz4"], 0, 1)  # memcpyed: whole
    out = np.full_like(data, 1)
    decode_into(stored, out)
    np.testing.assert_array_equal(out, data)
    assert calls == [False]


def test_hdf5plugin_blocks_decode_without_reordering(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """hdf5plugin's (32, 32, 50) blocks of (50, 50, 50) chunks (a (64, 64, 50) padded
    chunk) decode without the whole-chunk reordering, as h5py reads them."""
    data = np.arange(100 * 50 * 50, dtype="<f8").reshape(100, 50, 50) / 7
    with h5py.File(tmp_path / "p.h5", "w") as f:
        dset = f.create_dataset("x", data=data, chunks=(50, 50, 50),
                                **hdf5plugin.Blosc2(cname="lz4", filters=1))
        frames = [dset.id.read_direct_chunk((i, 0, 0))[1] for i in (0, 50)]
    layout = parse_frame(frames[0])
    assert layout.blockshape == (32, 32, 50) and not layout.c_order

    def whole(*args: Any) -> None:
        raise AssertionError("decoded whole and reordered")

    monkeypatch.setattr(cframe, "from_block_order", whole)
    for i, frame in enumerate(frames):
        out = np.empty((50, 50, 50))
        decode_into(frame, out, chunkshape=(50, 50, 50))
        np.testing.assert_array_equal(out, data[50 * i : 50 * (i + 1)])


@pytest.mark.parametrize(("blocks", "calls_per_chunk"), [
    ((1, 64, 64), 2),  # 16 blocks of 8 KiB, TOGETHER_MAX_BYTES held to 64 KiB: 8 a call
    ((1, 128, 128), 2),  # 4 blocks of 32 KiB: 2 a call
    ((1, 256, 256), 1),  # the chunk is one C-ordered block: straight into the output
])
def test_blocks_not_in_c_order_are_decoded_a_group_at_a_time(
        monkeypatch: pytest.MonkeyPatch, blocks: tuple[int, ...],
        calls_per_chunk: int) -> None:
    """PyTables' (1, 256, 256) blocks of an image: decoding them a block a Blosc2 call
    cost a context each; up to TOGETHER_MAX_BYTES of them are decoded in one call, and
    each copied to its place.  Exact against NumPy, in the calls counted."""
    monkeypatch.setattr(cframe_blocks, "TOGETHER_MAX_BYTES", 2 * 128 * 128 * 2)
    data = (np.arange(256 * 256, dtype="<u2") * 7 % 1000).reshape(1, 256, 256)
    frame = reference_frame(data, blocks, CODECS["lz4"], 5, 1)
    calls: list[int] = []
    real = cframe._decompress

    def spy(src: Any, dst: Any, nthreads: int) -> None:
        calls.append(np.asarray(dst).nbytes)
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe, "_decompress", spy)
    out = np.full_like(data, 1)
    decode_into(frame, out, nthreads=1)
    np.testing.assert_array_equal(out, data)
    assert len(calls) == calls_per_chunk and sum(calls) == data.nbytes


# ---------------------------------------------------------------- special chunks, partial reads
@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: blosc2.zeros((6, 5), chunks=(6, 5), blocks=(2, 5)), np.zeros((6, 5))),
        (lambda: blosc2.nans((6, 5), chunks=(6, 5), blocks=(2, 5)), np.full((6, 5), np.nan)),
        (lambda: blosc2.full((6, 5), 3.5, chunks=(6, 5), blocks=(2, 5)), np.full((6, 5), 3.5)),
        (lambda: blosc2.full((50,), 7, dtype="<i4", chunks=(50,), blocks=(16,)),
         np.full(50, 7, dtype="<i4")),
        (lambda: blosc2.uninit((6, 5), chunks=(6, 5), blocks=(2, 5)), np.zeros((6, 5))),
    ],
)
def test_special_chunks(make: Any, expected: np.ndarray[Any, Any]) -> None:
    frame = bytes(make().to_cframe())
    out = np.empty_like(expected)
    decode_into(frame, out)
    np.testing.assert_array_equal(out, expected)
    index = (expected.shape[0] - 1,) + (1,) * (expected.ndim - 1)
    np.testing.assert_array_equal(decode_item(frame, index, expected.dtype), expected[index])


@pytest.mark.parametrize("typesize", [4, 8])
def test_encoder_stores_zero_chunks_as_special_offsets(typesize: int) -> None:
    data = np.zeros((64, 8), dtype=f"<f{typesize}")
    frame = FrameEncoder((64, 8), typesize, codec=5, clevel=5, filter_code=1,
                         blockshape=(16, 8)).encode(data)
    assert parse_frame(frame).special == cframe.SPECIAL_ZERO
    assert frame == reference_frame(data, (16, 8), 5, 5, 1)
    np.testing.assert_array_equal(blosc2_decoded(frame, data), data)


@pytest.mark.parametrize(("filter_code", "partial"), [(0, True), (1, True), (2, True),
                                                      (3, False)])
def test_decode_item_decompresses_one_block(
    monkeypatch: pytest.MonkeyPatch, filter_code: int, partial: bool
) -> None:
    """Items come from a one-block decompression (not for delta, whose blocks chain)."""
    data = np.arange(1003, dtype="<i4") // 16  # compressible; 1003 items: short last block
    frame = FrameEncoder((1003,), 4, codec=1, clevel=5, filter_code=filter_code,
                         blocksize=256).encode(data)
    seen: list[int] = []
    real = cframe._decompress

    def spy(src: Any, dst: Any, nthreads: int) -> None:
        seen.append(len(dst))
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe, "_decompress", spy)
    for i in [0, 63, 64, 500, 959, 960, 1002]:
        assert decode_item(frame, (i,), "<i4") == data[i]
    assert (max(seen) <= 256) is partial
    b2nd = FrameEncoder((20, 30), 4, codec=5, clevel=5, filter_code=filter_code,
                        blockshape=(4, 5)).encode(data[:600].reshape(20, 30))
    seen.clear()
    check_items(b2nd, data[:600].reshape(20, 30), count=20)
    assert (max(seen) <= 80) is partial


def test_uncompressed_chunks_are_read_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    data = sample((12, 10), "<f8")
    frame = FrameEncoder((12, 10), 8, codec=1, clevel=0, filter_code=1,
                         blockshape=(5, 3)).encode(data)
    monkeypatch.setattr(cframe, "_decompress", None)  # never called for single items
    check_items(frame, data, count=30)


# ---------------------------------------------------------------- errors
def test_decode_argument_errors() -> None:
    data = sample((6, 4), "<i8")
    frame = FrameEncoder((6, 4), 8, codec=1, clevel=5, filter_code=1,
                         blockshape=(3, 2)).encode(data)
    with pytest.raises(ValueError, match="192 bytes, out has 96"):
        decode_into(frame, np.empty((6, 4), "<i4"))
    with pytest.raises(ValueError, match="C-contiguous"):
        decode_into(frame, np.empty((4, 6), "<i8").T)
    readonly = np.empty((6, 4), "<i8")
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        decode_into(frame, readonly)
    out = np.empty(24, "<u8")  # any dtype and shape of the right size
    decode_into(memoryview(frame), out)
    np.testing.assert_array_equal(out, data.reshape(-1).view("<u8"))
    with pytest.raises(IndexError, match="out of bounds"):
        decode_item(frame, (6, 0), "<i8")
    with pytest.raises(IndexError, match="1 dims"):
        decode_item(frame, (1,), "<i8")
    with pytest.raises(ValueError, match="8-byte items, not 4"):
        decode_item(frame, (1, 1), "<i4")
    assert decode_item(frame, (-1, -2), "<i8") == data[-1, -2]


def test_encoder_argument_errors() -> None:
    with pytest.raises(ValueError, match="clevel"):
        FrameEncoder((4, 4), 8, codec=1, clevel=10, filter_code=1, blockshape=(2, 2))
    with pytest.raises(ValueError, match="does not fit"):
        FrameEncoder((4, 4), 8, codec=1, clevel=1, filter_code=1, blockshape=(8, 2))
    with pytest.raises(ValueError, match="at most"):
        FrameEncoder((2**20, 2**9), 8, codec=1, clevel=1, filter_code=1, blockshape=(2, 2))
    encoder = FrameEncoder((4, 4), 8, codec=1, clevel=1, filter_code=1, blockshape=(2, 2))
    with pytest.raises(ValueError, match="128 bytes"):
        encoder.encode(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="codec=77"):
        FrameEncoder((4, 4), 8, codec=77, clevel=1, filter_code=1).encode(np.arange(16.0))


def _mutations(frame: bytes, count: int) -> list[bytes]:
    rng = np.random.default_rng(7)
    out = [frame[:n] for n in range(0, len(frame), 7)] + [frame + b"\x00", b"", b"\x9e" * 200]
    for _ in range(count):
        buf = bytearray(frame)
        for pos in rng.integers(0, len(buf), rng.integers(1, 4)):
            buf[pos] = int(rng.integers(0, 256))
        out.append(bytes(buf))
    return out


@pytest.mark.parametrize("blocks", [None, (2, 5), (4, 5)])
def test_malformed_frames_raise_frame_error(blocks: tuple[int, ...] | None) -> None:
    """Truncated, extended, garbage and corrupted frames never crash the interpreter."""
    data = sample((8, 5), "<f8")
    chunkshape = data.shape if blocks is not None else (40,)
    frame = FrameEncoder(chunkshape, 8, codec=5, clevel=5, filter_code=1,
                         blockshape=blocks, blocksize=64).encode(data)
    out = np.empty_like(data)
    last = tuple(n - 1 for n in chunkshape)
    for bad in _mutations(frame, 400):
        try:
            parse_frame(bad)
        except FrameError:
            continue
        for call in (lambda b=bad: decode_into(b, out),
                     lambda b=bad: decode_item(b, last, "<f8")):
            try:
                call()
            except (FrameError, IndexError, ValueError):
                pass
    for bad in _mutations(frame, 0):
        with pytest.raises(FrameError):
            parse_frame(bad)
    with pytest.raises(FrameError, match="bytes-like"):
        parse_frame(np.zeros((4, 4), "u1")[:, ::2])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect via libc")
def test_corrupt_chunks_never_read_past_their_end() -> None:
    """Corrupted inner chunks placed just before an unreadable page decode or raise.

    A read past the chunk's last byte would kill the interpreter (SIGSEGV) here.
    """
    page = mmap.PAGESIZE
    area = mmap.mmap(-1, 3 * page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(area))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(address + 2 * page), page, 0) == 0
    view = memoryview(area)
    chunks = []
    for codec in (0, 1, 4, 5):
        for filter_code, typesize in ((0, 4), (1, 8), (2, 2)):
            data = (np.arange(4096 // typesize) // 3).astype(f"<u{typesize}")
            frame = FrameEncoder(data.shape, typesize, codec=codec, clevel=5,
                                 filter_code=filter_code).encode(data)
            layout = parse_frame(frame)
            chunks.append(frame[layout.chunk_start:layout.chunk_stop])
    rng = np.random.default_rng(11)
    try:
        for n in range(3000):
            chunk = bytearray(chunks[n % len(chunks)])
            for pos in rng.integers(0, len(chunk), rng.integers(1, 4)):
                chunk[pos] = int(rng.integers(0, 256))
            if n % 5 == 0:
                chunk = chunk[: rng.integers(1, len(chunk))]
            start = 2 * page - len(chunk)
            view[start : 2 * page] = chunk
            target = bytearray(4096)
            if int.from_bytes(chunk[4:8], "little") != 4096:
                continue  # decode_into checks the size against its output first
            with contextlib.suppress(FrameError):
                cframe._decompress(view[start : 2 * page], target, 1)
    finally:
        view.release()
        area.close()


def test_frame_error_is_a_value_error_naming_the_problem() -> None:
    frame = FrameEncoder((16,), 8, codec=1, clevel=5, filter_code=1).encode(np.arange(16.0))
    assert issubclass(FrameError, ValueError)
    with pytest.raises(FrameError, match=f"{len(frame) + 1}"):
        parse_frame(frame + b"\x00")
    with pytest.raises(FrameError, match="not a Blosc2 frame"):
        parse_frame(b"x" * 200)
    layout = parse_frame(frame)
    assert (layout.nbytes, layout.typesize, layout.blockshape, layout.codec, layout.clevel) == (
        128, 8, None, 1, 5)


# ---------------------------------------------------------------- threads
def test_encode_and_decode_in_a_thread_pool() -> None:
    data = sample((16, 64, 64), "<u2")
    encoder = FrameEncoder((64, 64), 2, codec=5, clevel=5, filter_code=2, blockshape=(8, 64))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(encoder.encode, data))
        outs = [np.empty((64, 64), "<u2") for _ in frames]
        list(pool.map(decode_into, frames, outs))
    np.testing.assert_array_equal(np.stack(outs), data)
    assert blosc2.set_releasegil(True) is True  # switched on by the module
    # Blosc2's own threads may store the blocks out of order: items still come right.
    image = data.reshape(1024, 64)
    threaded = FrameEncoder((1024, 64), 2, codec=1, clevel=5, filter_code=1,
                            blockshape=(16, 64), nthreads=4).encode(image)
    out = np.empty_like(image)
    decode_into(threaded, out, nthreads=4)
    np.testing.assert_array_equal(out, image)
    check_items(threaded, image, count=40)


# ---------------------------------------------------------------- block shapes
def test_l2_cache_and_default_target(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert blockshape.l2_cache_bytes() > 0
    blockshape.l2_cache_bytes.cache_clear()
    monkeypatch.setattr(blockshape, "_CACHE_DIR", tmp_path)
    try:
        assert blockshape.l2_cache_bytes() == blockshape.DEFAULT_L2_BYTES
        index = tmp_path / "index2"
        index.mkdir()
        (index / "level").write_text("2\n")
        (index / "type").write_text("Unified\n")
        (index / "size").write_text("2048K\n")
        blockshape.l2_cache_bytes.cache_clear()
        assert blockshape.l2_cache_bytes() == 2 * 1024 * 1024
        assert blockshape.default_block_bytes() == 512 * 1024
        assert choose_blockshape((1000, 1000), 8) == (50, 1000)
    finally:
        blockshape.l2_cache_bytes.cache_clear()


@pytest.mark.parametrize(
    ("chunks", "itemsize", "target", "expected"),
    [
        ((4, 4), 8, 65536, (4, 4)),
        ((1000, 100), 8, 65536, (50, 100)),
        ((1310, 100), 8, 524288, (655, 100)),
        ((1, 4096, 4096), 2, 131072, (1, 16, 4096)),
        ((7, 1009), 8, 4096, (1, 505)),  # prime trailing dim: equal blocks, padded
        ((10**6,), 8, 131072, (15625,)),
        ((3, 3), 1, 1, (1, 1)),
    ],
)
def test_choose_blockshape_examples(
    chunks: tuple[int, ...], itemsize: int, target: int, expected: tuple[int, ...]
) -> None:
    assert choose_blockshape(chunks, itemsize, target) == expected


@settings(max_examples=80, deadline=None)
@given(
    chunks=st.lists(st.integers(1, 300), min_size=1, max_size=4).map(tuple),
    itemsize=st.sampled_from([1, 2, 8, 25]),
    target=st.integers(1, 2**18),
)
def test_choose_blockshape_rules(chunks: tuple[int, ...], itemsize: int, target: int) -> None:
    blocks = choose_blockshape(chunks, itemsize, target)
    assert len(blocks) == len(chunks)
    assert all(1 <= b <= c for b, c in zip(blocks, chunks, strict=True))
    assert math.prod(blocks) * itemsize <= max(target, itemsize)
    if math.prod(chunks) * itemsize <= target:
        assert blocks == chunks
    # Slabs: ones, then one free dim k, then the chunk's trailing dims in full.
    k = next(i for i in range(len(chunks))
             if set(blocks[:i]) <= {1} and blocks[i + 1:] == chunks[i + 1:])
    if k == 0 or chunks[k] % blocks[k] == 0:
        assert blocks_are_c_order(chunks, chunks, blocks)
    assert choose_blockshape(list(chunks), itemsize, target) == blocks


def reference_block_order(chunk: np.ndarray[Any, Any], blocks: tuple[int, ...]) -> bytes:
    """Block order, block by block with a Python loop (edge blocks zero-padded)."""
    grid = [-(-c // b) for c, b in zip(chunk.shape, blocks, strict=True)]
    parts = []
    for g in np.ndindex(*grid):
        block = np.zeros(blocks, dtype=chunk.dtype)
        part = chunk[tuple(slice(i * b, (i + 1) * b) for i, b in zip(g, blocks, strict=True))]
        block[tuple(slice(0, n) for n in part.shape)] = part
        parts.append(block.tobytes())
    return b"".join(parts)


@pytest.mark.parametrize(("chunks", "blocks"), [
    ((4, 4), (2, 4)), ((9, 7), (4, 3)), ((10, 6, 5), (4, 4, 2)), ((3, 5, 7, 2), (2, 2, 3, 2)),
    ((10, 4), (3, 4)), ((2, 3, 4, 5), (1, 1, 4, 5)), ((7, 3), (7, 3)), ((50,), (16,)),
])
@pytest.mark.parametrize("dtype", ["u1", "<f8", COMPOUND])
def test_block_order_round_trip(chunks: tuple[int, ...], blocks: tuple[int, ...],
                                dtype: Any) -> None:
    chunk = sample(chunks, dtype, seed=3)
    blocked = to_block_order(chunk, blocks)
    assert blocked.tobytes() == reference_block_order(chunk, blocks)
    out = np.empty_like(chunk)
    from_block_order(blocked, out, chunks, blocks)
    np.testing.assert_array_equal(out, chunk)
    smaller = tuple(max(1, c - 1) for c in chunks)  # an array smaller than its chunk
    part = np.empty(smaller, dtype=chunk.dtype)
    from_block_order(blocked, part, chunks, blocks, smaller)
    np.testing.assert_array_equal(part, chunk[tuple(slice(0, n) for n in smaller)])


# ---------------------------------------------------------------- the layout memo
def _memo_frames(tmp_path: Path) -> dict[str, list[bytes]]:
    """Frames of two filter datasets (1-D plain, 2-D b2nd) and of two encoders."""
    out: dict[str, list[bytes]] = {}
    with h5py.File(tmp_path / "m.h5", "w") as f:
        one = f.create_dataset("one", data=np.arange(160.0), chunks=(16,),
                               **hdf5plugin.Blosc2(cname="lz4"))
        out["one"] = [one.id.read_direct_chunk((16 * i,))[1] for i in range(10)]
        two = f.create_dataset("two", data=np.arange(256.0).reshape(16, 16), chunks=(8, 8),
                               **hdf5plugin.Blosc2(cname="zstd"))
        out["two"] = [two.id.read_direct_chunk((8 * i, 8 * j))[1]
                      for i in range(2) for j in range(2)]
    wide = FrameEncoder((32,), 4, codec=1, clevel=5, filter_code=1)
    out["i4"] = [wide.encode(np.arange(32, dtype="<i4") * k) for k in range(1, 4)]
    narrow = FrameEncoder((16,), 8, codec=5, clevel=3, filter_code=2)
    out["f8"] = [narrow.encode(np.arange(16.0) + k) for k in range(3)]
    return out


def test_layout_memo_serves_a_dataset_and_keeps_datasets_apart(tmp_path: Path) -> None:
    frames = _memo_frames(tmp_path)
    cframe._LAYOUTS.clear()
    for k, frame in enumerate(frames["one"]):
        assert decode_item(frame, (3,), "<f8", chunkshape=(16,)) == 16 * k + 3
    assert len(cframe._LAYOUTS) == 1  # a dataset's frames share one layout
    for k, frame in enumerate(frames["two"]):
        i, j = divmod(k, 2)
        assert decode_item(frame, (5, -1), "<f8") == (8 * i + 5) * 16 + 8 * j + 7
    for k, frame in enumerate(frames["i4"], 1):
        assert decode_item(frame, (-1,), "<i4") == 31 * k
    for k, frame in enumerate(frames["f8"]):
        assert decode_item(frame, (15,), "<f8") == 15 + k
    assert len(cframe._LAYOUTS) == 4  # same sizes (128 bytes) or not: never mixed
    # Our encoder writes the filter's own frames: those share the filter's layout.
    ours = FrameEncoder((16,), 8, codec=1, clevel=5, filter_code=1).encode(np.arange(16.0) * 2)
    assert decode_item(ours, (7,), "<f8") == 14.0
    assert len(cframe._LAYOUTS) == 4
    # Served from the memo, each still reads its own chunk and bounds.
    assert [decode_item(f, (0,), "<i4") for f in frames["i4"]] == [0, 0, 0]
    assert decode_item(frames["i4"][2], (1,), "<i4") == 3
    with pytest.raises(IndexError, match="out of bounds"):
        decode_item(frames["f8"][0], (16,), "<f8")
    with pytest.raises(IndexError, match="out of bounds"):
        decode_item(frames["f8"][0], (-17,), "<f8")
    with pytest.raises(ValueError, match="does not fill"):
        decode_item(frames["f8"][0], (1,), "<f8", chunkshape=(15,))
    with pytest.raises(ValueError, match="8-byte items, not 4"):
        decode_item(frames["two"][0], (1, 1), "<i4")
    assert decode_item(frames["f8"][1], (2, 3), "<f8", chunkshape=(4, 4)) == 12.0
    # bytearray and memoryview frames take the general path.
    assert decode_item(bytearray(frames["f8"][2]), (4,), "<f8") == 6.0
    assert decode_item(memoryview(frames["one"][1]), (4,), "<f8") == 20.0


def _with_size(frame: bytes, at: int, value: int) -> bytes:
    buf = bytearray(frame)
    buf[at : at + 8] = value.to_bytes(8, "big", signed=True)
    return bytes(buf)


@pytest.mark.parametrize("blocks", [None, (4, 4)])
def test_layout_memo_still_checks_each_frames_sizes(blocks: tuple[int, ...] | None) -> None:
    """After a memo hit, frames whose sizes disagree with their length raise FrameError."""
    data = np.arange(64.0).reshape(8, 8)
    shape = (64,) if blocks is None else (8, 8)
    encoder = FrameEncoder(shape, 8, codec=1, clevel=5, filter_code=1, blockshape=blocks)
    frame = encoder.encode(data)
    last = (63,) if blocks is None else (7, 7)
    cframe._LAYOUTS.clear()
    assert decode_item(frame, last, "<f8") == 63.0
    assert len(cframe._LAYOUTS) == 1
    layout = parse_frame(frame)
    cbytes = layout.chunk_stop - layout.chunk_start
    bad = [
        frame[:-1], frame + b"\x00", frame[:50] + frame[51:],
        _with_size(frame, 16, len(frame) + 1), _with_size(frame, 16, len(frame) - 1),
        _with_size(frame, 39, cbytes + 1), _with_size(frame, 39, cbytes - 1),
        _with_size(frame, 39, -1), _with_size(frame, 39, 2**40),
        # The inner chunk's own sizes (not part of the memo key).
        frame[: layout.chunk_start + 12] + (cbytes + 1).to_bytes(4, "little")
        + frame[layout.chunk_start + 16 :],
        frame[: layout.chunk_start + 4] + (512 + 8).to_bytes(4, "little")
        + frame[layout.chunk_start + 8 :],
        frame[: layout.chunk_start + 12] + (4).to_bytes(4, "little")
        + frame[layout.chunk_start + 16 :],
    ]
    # A shorter frame of the same layout: its compressed size and length shrink alike
    # (so the memo key matches) but its chunk says it is longer than the data.
    short = bytearray(frame[: layout.chunk_start + 20] + frame[layout.chunk_stop :])
    short[16:24] = len(short).to_bytes(8, "big")
    short[39:47] = (20).to_bytes(8, "big")
    bad.append(bytes(short))
    key = cframe_item.frame_key(frame)
    assert key is not None
    for buf in bad[-4:]:  # these match the memo: only the per-frame checks catch them
        hit = cframe_item.frame_key(buf)
        assert hit is not None and hit[0] == key[0]
    for buf in bad:
        with pytest.raises(FrameError):
            decode_item(buf, last, "<f8")
    assert len(cframe._LAYOUTS) == 1
    assert decode_item(frame, last, "<f8") == 63.0


def test_layout_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    memo = cframe_item.LayoutMemo[int](3)
    for k in range(5):
        memo.put(bytes([k]), k)
    assert list(memo.items()) == [(b"\x02", 2), (b"\x03", 3), (b"\x04", 4)]
    memo.put(b"\x03", 33)  # replacing keeps the others
    assert len(memo) == 3 and memo[b"\x03"] == 33
    monkeypatch.setattr(cframe, "_LAYOUTS", cframe_item.LayoutMemo[cframe.FrameLayout](2))
    encoders = [FrameEncoder((n,), 8, codec=1, clevel=5, filter_code=1) for n in (8, 9, 10)]
    frames = [e.encode(np.arange(float(e.chunkshape[0]))) for e in encoders]
    for _ in range(2):
        assert [decode_item(f, (-1,), "<f8") for f in frames] == [7.0, 8.0, 9.0]
    assert len(cframe._LAYOUTS) == 2


def test_frame_key_only_for_frames_whose_sizes_fit() -> None:
    frame = FrameEncoder((16,), 8, codec=1, clevel=5, filter_code=1).encode(np.arange(16.0))
    key = cframe_item.frame_key(frame)
    assert key is not None and key[1] == len(frame) - 75  # offsets chunk and trailer
    other = FrameEncoder((16,), 8, codec=1, clevel=5, filter_code=1).encode(np.ones(16))
    assert cframe_item.frame_key(other) is not None
    assert cframe_item.frame_key(other)[0] == key[0]  # type: ignore[index]
    assert cframe_item.frame_key(frame[:-1]) is None
    assert cframe_item.frame_key(frame[:100]) is None
    assert cframe_item.frame_key(_with_size(frame, 39, -5)) is None
    assert cframe_item.frame_key(_with_size(frame, 39, len(frame))) is None
