"""Every kind of selection of Blosc2 datasets, through the fast path and through HDF5.

The fast path reads raw chunks and decodes, of each chunk, only the b2nd blocks the
selection touches (:mod:`hyperslab.codecs.cframe_region`); the fallback is h5py's filter
pipeline.  Both are compared with NumPy on the same data, for random shapes, chunk and
block shapes, dtypes (big-endian included), codecs and selections: ints (negative too),
slices of any step (negative too), Ellipsis, new axes, and integer or boolean arrays along
one axis.  Chunks are tiny (up to 13 items a side, most stored uncompressed) or of 64 to
256 KiB cut in several blocks, written by hyperslab (its own or given block shapes), by
python-blosc2 with random block shapes through the direct chunking API, by PyTables or by
h5py + hdf5plugin, some left unwritten (the fill value); every selection read "through
the fast path" is checked to have been served by the chunk engine, without HDF5's
pipeline.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import math
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.chunked.engine import _RAW_READ_MIN_BYTES, ChunkEngine
from hyperslab.codecs.cframe import FrameError, parse_frame
from hyperslab.codecs.cframe_item import MEMCPYED
from hyperslab.codecs.cframe_region import (
    decode_items,
    decode_region,
    frame_blocks,
    slabs_shape,
)
from hyperslab.errors import HDF5ExtError
from hyperslab.storage.datasets import Dataset

DTYPES = ["<i8", ">i4", "<f4", ">f8", "u1", "<c16", "S3"]
# N-D compound datasets are UnImplemented nodes (as in PyTables); compound records of
# Blosc2 tables go through the same engine (see test_table.py, with every codec).
CODECS = {"lz4": blosc2.Codec.LZ4, "zstd": blosc2.Codec.ZSTD}
FILL = 7


def _data(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.indices(shape).sum(axis=0) + rng.integers(0, 3, size=shape)
    if np.dtype(dtype).kind == "S":
        return (values % 1000).astype(dtype)
    return values.astype(dtype)


def _atom_and_order(dtype: np.dtype[Any]) -> tuple[Any, str | None]:
    order = {"<": "little", ">": "big"}.get(dtype.byteorder)
    return hyperslab.Atom.from_dtype(dtype.newbyteorder("=")), order


def _chunk_frame(data: np.ndarray, start: tuple[int, ...], chunkshape: tuple[int, ...],
                 blockshape: tuple[int, ...], codec: str) -> bytes:
    """A full-chunkshape b2nd frame of the chunk at ``start`` (edges padded)."""
    chunk = np.zeros(chunkshape, dtype=data.dtype)
    part = data[tuple(slice(s, s + c) for s, c in zip(start, chunkshape, strict=True))]
    chunk[tuple(slice(0, n) for n in part.shape)] = part
    cparams = {"codec": CODECS[codec], "clevel": 5, "filters": [blosc2.Filter.SHUFFLE]}
    return bytes(blosc2.asarray(chunk, chunks=chunkshape, blocks=blockshape,
                                cparams=cparams).to_cframe())


def _chunk_regions(shape: tuple[int, ...], chunkshape: tuple[int, ...], skip: int
                   ) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...], bool]]:
    """Each chunk's start, region and whether it is written (every ``skip``-th is not)."""
    grid = [range(0, n, c) for n, c in zip(shape, chunkshape, strict=True)]
    for number, start in enumerate(itertools.product(*grid)):
        region = tuple(slice(s, s + c) for s, c in zip(start, chunkshape, strict=True))
        yield start, region, not (skip and number % skip == 0)


def _write(path: Path, data: np.ndarray, chunkshape: tuple[int, ...],
           blockshape: tuple[int, ...], codec: str, skip: int) -> np.ndarray:
    """Write ``data`` in python-blosc2 frames of ``blockshape``; return what the dataset
    holds (chunks skipped read as FILL)."""
    return _write_case(path, data, {"writer": "blosc2", "chunkshape": chunkshape,
                                    "blockshape": blockshape, "codec": codec, "skip": skip})


Chunks = list[tuple[tuple[int, ...], tuple[slice, ...]]]
"""The chunks to write: their starts and regions."""


def _write_h5py(path: Path, data: np.ndarray, case: dict[str, Any], chunks: Chunks) -> Any:
    """Write with h5py + hdf5plugin; return the fill value."""
    fill = np.array(FILL).astype(data.dtype)
    with h5py.File(path, "w") as h5:
        dataset = h5.create_dataset(
            "a", shape=data.shape, dtype=data.dtype, chunks=case["chunkshape"],
            fillvalue=fill,
            maxshape=tuple(None if c > n else n  # (chunks bigger than the shape)
                           for n, c in zip(data.shape, case["chunkshape"], strict=True)),
            **hdf5plugin.Blosc2(cname=case["codec"], clevel=5,
                                filters=hdf5plugin.Blosc2.SHUFFLE))
        for _, region in chunks:
            dataset[region] = data[region]
    return fill


def _write_pytables(path: Path, data: np.ndarray, case: dict[str, Any],
                    chunks: Chunks) -> Any:
    """Write with PyTables; return the fill value."""
    native = data.dtype.newbyteorder("=")
    atom = tables.Atom.from_dtype(native, dflt=np.array(FILL).astype(native))
    filters = tables.Filters(complevel=5, complib=f"blosc2:{case['codec']}", shuffle=True)
    with tables.open_file(path, "w") as t:
        carray = t.create_carray("/", "a", atom, data.shape, chunkshape=case["chunkshape"],
                                 filters=filters, byteorder=_atom_and_order(data.dtype)[1])
        for _, region in chunks:
            carray[region] = data[region]
    with tables.open_file(path) as t:
        # PyTables stores the dflt of a non-native byte order unswapped: the file's fill
        # value is then what it (and h5py) reads back.
        return np.array(t.root.a.atom.dflt).astype(data.dtype)


def _write_hyperslab(path: Path, data: np.ndarray, case: dict[str, Any],
                     chunks: Chunks) -> Any:
    """Write with hyperslab (its writer "hyperslab") or python-blosc2 frames (any other);
    return the fill value."""
    chunkshape, blockshape, codec = case["chunkshape"], case["blockshape"], case["codec"]
    own = case["writer"] == "hyperslab"
    filters = hyperslab.Filters(5, f"blosc2:{codec}", shuffle=True)
    with hyperslab.open_file(path, "w") as f:
        atom, order = _atom_and_order(data.dtype)
        atom.dflt = np.array(FILL).astype(atom.dtype)
        carray = f.create_carray("/", "a", atom, data.shape, chunkshape=chunkshape,
                                 filters=filters, byteorder=order,
                                 blockshape=blockshape if own else None)
        for start, region in chunks:
            if own:
                carray[region] = data[region]
            else:
                carray.write_chunk(start, _chunk_frame(data, start, chunkshape,
                                                       blockshape or chunkshape, codec))
    return np.array(FILL).astype(data.dtype)


_WRITERS = {"h5py": _write_h5py, "pytables": _write_pytables,
            "hyperslab": _write_hyperslab, "blosc2": _write_hyperslab}


def _write_case(path: Path, data: np.ndarray, case: dict[str, Any]) -> np.ndarray:
    """Write ``data`` with ``case["writer"]``; return what the dataset holds (chunks
    skipped read as the fill value)."""
    regions = list(_chunk_regions(data.shape, case["chunkshape"], case["skip"]))
    fill = _WRITERS[case["writer"]](path, data, case,
                                    [(start, region) for start, region, w in regions if w])
    expected = data.copy()
    for _, region, written in regions:
        if not written:
            expected[region] = fill  # never written: the fill value
    return expected


@st.composite
def _axis_key(draw: st.DrawFn, length: int, allow_array: bool) -> Any:
    kind = draw(st.sampled_from(["int", "slice", "slice", "array", "mask"] if allow_array
                                else ["int", "slice", "slice"]))
    if kind == "int":
        return draw(st.integers(-length, length - 1))
    if kind == "slice":
        bound = st.none() | st.integers(-length - 2, length + 2)
        step = draw(st.none() | st.integers(1, 4) | st.integers(-4, -1))
        return slice(draw(bound), draw(bound), step)
    if kind == "array":
        return np.array(draw(st.lists(st.integers(-length, length - 1), min_size=1,
                                      max_size=6)), dtype=np.int64)
    if length <= 16:
        return np.array(draw(st.lists(st.booleans(), min_size=length, max_size=length)))
    share = draw(st.sampled_from([0.0, 0.001, 0.1, 0.9, 1.0]))
    return np.random.default_rng(draw(st.integers(0, 1000))).random(length) < share


@st.composite
def _selections(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    array_axis = draw(st.sampled_from([None, *range(len(shape))]))
    key: list[Any] = [draw(_axis_key(n, axis == array_axis)) for axis, n in enumerate(shape)]
    if draw(st.booleans()):  # trailing full slices as an Ellipsis
        while key and isinstance(key[-1], slice) and key[-1] == slice(None):
            key.pop()
        cut = draw(st.integers(0, len(key)))
        key = [*key[:cut], Ellipsis]
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), np.newaxis)
    return tuple(key)


@st.composite
def _small_layout(draw: st.DrawFn) -> tuple[tuple[int, ...], ...]:
    """Tiny shapes and chunks (edge cases; most chunks are stored uncompressed)."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 13), min_size=ndim, max_size=ndim)))
    chunkshape = tuple(draw(st.integers(1, max(1, n))) for n in shape)
    return shape, chunkshape, tuple(draw(st.integers(1, c)) for c in chunkshape)


@st.composite
def _big_layout(draw: st.DrawFn, itemsize: int) -> tuple[tuple[int, ...], ...]:
    """Chunks of 64 to 256 KiB (compressed, the slow side of the engine's size threshold
    and the fast one), datasets of a few chunks, blocks of up to 4 per axis."""
    ndim = draw(st.integers(1, 3))
    lead = [draw(st.integers(1, 6)) for _ in range(ndim - 1)]
    items = draw(st.integers(64 << 10, 256 << 10)) // itemsize
    chunkshape = (*lead, -(-items // math.prod(lead)))
    shape = tuple(draw(st.integers(1, 2 * c)) for c in chunkshape)
    cut = draw(st.sampled_from([axis for axis, c in enumerate(chunkshape) if c > 1]))
    blockshape = tuple(-(-c // draw(st.integers(2 if axis == cut else 1, 4)))
                       for axis, c in enumerate(chunkshape))
    return shape, chunkshape, blockshape


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    dtype = draw(st.sampled_from(DTYPES))
    writer = draw(st.sampled_from(sorted(_WRITERS)))
    big = draw(st.booleans())
    shape, chunkshape, blockshape = draw(_big_layout(np.dtype(dtype).itemsize) if big
                                         else _small_layout())
    if writer in ("hyperslab", "blosc2") and not big and draw(st.booleans()):
        blockshape = None  # hyperslab's own block shape, or one block a chunk
    return {
        "shape": shape, "chunkshape": chunkshape,
        "blockshape": blockshape if writer in ("hyperslab", "blosc2") else None,
        "dtype": dtype, "codec": draw(st.sampled_from(list(CODECS))), "writer": writer,
        "skip": draw(st.sampled_from([0, 0, 3])),
        "keys": draw(st.lists(_selections(shape), min_size=1, max_size=6)),
        "seed": draw(st.integers(0, 1000)),
    }


def _read_all(path: Path, keys: list[tuple[Any, ...]], fast: bool | None
              ) -> list[tuple[Any, bool]]:
    """``a[key]`` for each key, and whether the chunk engine served it without HDF5's
    pipeline: through the fast path where the engine chooses it (``fast`` None), always
    (True) or never (False: through HDF5)."""
    results: list[tuple[Any, bool]] = []
    calls = {"engine": 0, "pipeline": 0}

    def counted(method: Any, kind: str) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            calls[kind] += 1
            return method(*args, **kwargs)
        return spy

    with pytest.MonkeyPatch.context() as patch:
        for cls, name, kind in [(ChunkEngine, "read_gather", "engine"),
                                (ChunkEngine, "read_item", "engine"),
                                (Dataset, "read", "pipeline"),
                                (Dataset, "read_elements", "pipeline")]:
            patch.setattr(cls, name, counted(getattr(cls, name), kind))
        if fast is not None:
            patch.setattr(ChunkEngine, "serves_key", lambda self, key: fast)
        with hyperslab.open_file(path) as f:
            for key in keys:
                calls.update(engine=0, pipeline=0)
                try:
                    got: Any = f.root.a[key]
                except IndexError as exc:
                    got = exc
                results.append((got, calls["engine"] > 0 and calls["pipeline"] == 0))
    return results


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_cases())
def test_every_selection_matches_numpy(tmp_path_factory: pytest.TempPathFactory,
                                       case: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("slicing") / "a.h5"
    data = _data(case["shape"], case["dtype"], case["seed"])
    expected = _write_case(path, data, case)
    native = expected.astype(expected.dtype.newbyteorder("="))
    chunk_nbytes = math.prod(case["chunkshape"]) * data.dtype.itemsize
    # Chunks this big are always read through the fast path (the engine's own choice);
    # smaller ones are sent there, to compare both paths on them too.
    fast = None if chunk_nbytes >= _RAW_READ_MIN_BYTES else True
    for mode in (fast, False):
        for key, (got, served) in zip(case["keys"], _read_all(path, case["keys"], mode),
                                      strict=True):
            try:
                want = native[key]
            except IndexError:
                assert isinstance(got, IndexError), (key, mode)
                continue
            assert not isinstance(got, Exception), (key, mode, got)
            assert got.shape == want.shape, (key, mode)
            assert got.dtype == want.dtype, (key, mode)
            np.testing.assert_array_equal(got, want, err_msg=f"{key!r} mode={mode}")
            if mode is not False and want.size:
                assert served, f"{key!r} was not served by the chunk engine"
    with h5py.File(path) as h5:  # the filter's own reader agrees with the data written
        np.testing.assert_array_equal(h5["a"][...], expected)


_MIN_BLOCK_BYTES = 128
"""Blocks this big of the data below compress (smaller ones may be stored as they are)."""


def _memcpyed(frame: bytes) -> bool:
    """Whether Blosc2 stored the frame's chunk uncompressed (its blocks are not streams)."""
    layout = parse_frame(frame)
    return bool(frame[layout.chunk_start + 2] & MEMCPYED)


@st.composite
def _compressed_chunks(draw: st.DrawFn) -> tuple[np.ndarray, bytes, tuple[int, ...]]:
    """A chunk, its b2nd frame of compressed blocks of at least ``_MIN_BLOCK_BYTES`` (one
    or many), and its block shape."""
    ndim = draw(st.integers(1, 4))
    dtype = np.dtype(draw(st.sampled_from(["<i8", ">i4", "<f2", "u1"])))
    side = {1: 3000, 2: 60, 3: 16, 4: 9}[ndim]
    chunkshape = tuple(draw(st.lists(st.integers(1, side), min_size=ndim, max_size=ndim)
                            .filter(lambda s: math.prod(s) * dtype.itemsize
                                    >= _MIN_BLOCK_BYTES)))
    blockshape = list(chunkshape)
    for axis in draw(st.permutations(range(ndim))):  # cut, keeping blocks big enough
        others = math.prod(blockshape) // blockshape[axis] * dtype.itemsize
        blockshape[axis] = draw(st.integers(-(-_MIN_BLOCK_BYTES // others), chunkshape[axis]))
    chunk = (np.indices(chunkshape).sum(axis=0) % 50).astype(dtype)
    frame = _chunk_frame(chunk, (0,) * ndim, chunkshape, tuple(blockshape),
                         draw(st.sampled_from(list(CODECS))))
    assume(not _memcpyed(frame))  # rare: data that happen not to compress
    return chunk, frame, tuple(blockshape)


@settings(max_examples=150, deadline=None)
@given(drawn=_compressed_chunks(), data=st.data())
def test_decode_region_matches_the_chunk(drawn: tuple[np.ndarray, bytes, tuple[int, ...]],
                                         data: st.DataObject) -> None:
    chunk, frame, blockshape = drawn
    bounds = []
    for c in chunk.shape:
        lo = data.draw(st.integers(0, c - 1))
        bounds.append(slice(lo, data.draw(st.integers(lo + 1, c))))
    part = decode_region(frame, tuple(bounds), chunk.dtype, max_share=1.0)
    assert part is not None, (chunk.shape, blockshape, bounds)
    np.testing.assert_array_equal(part, chunk[tuple(bounds)])
    assert part.dtype == chunk.dtype
    out = np.full(part.shape, 3, dtype=chunk.dtype)
    assert decode_region(frame, tuple(bounds), chunk.dtype, max_share=1.0, out=out) is out
    np.testing.assert_array_equal(out, part)
    # More blocks than the share allows: None (the caller decodes the whole chunk),
    # unless the blocks are slabs of a chunk of 2 or more dimensions (decoded a group of
    # rows at a time).
    touched = math.prod((b.stop - 1) // n - b.start // n + 1
                        for b, n in zip(bounds, blockshape, strict=True))
    nblocks = math.prod(-(-c // n) for c, n in zip(chunk.shape, blockshape, strict=True))
    share = data.draw(st.sampled_from([0.0, 0.25, 0.5]))
    layout = parse_frame(frame)
    slabs = None if chunk.ndim < 2 else slabs_shape(blockshape, chunk.shape, layout.blocksize,
                                                    layout.chunk_nbytes)
    got = decode_region(frame, tuple(bounds), chunk.dtype, max_share=share)
    if touched > share * nblocks and slabs is None:
        assert got is None
    else:
        assert got is not None
        np.testing.assert_array_equal(got, chunk[tuple(bounds)])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # cleared per example
@given(drawn=_compressed_chunks(), data=st.data())
def test_decode_region_with_steps_decodes_the_blocks_holding_selected_items(
        drawn: tuple[np.ndarray, bytes, tuple[int, ...]], data: st.DataObject,
        monkeypatch_blocks: list[int]) -> None:
    """Slices with steps (strided reads) decode only the blocks that hold a selected item,
    not every block of their bounding box, and give NumPy's items."""
    chunk, frame, blockshape = drawn
    bounds = []
    for c in chunk.shape:
        lo = data.draw(st.integers(0, c - 1))
        step = data.draw(st.integers(1, max(1, c)))
        bounds.append(slice(lo, data.draw(st.integers(lo + 1, c)), step))
    monkeypatch_blocks.clear()
    part = decode_region(frame, tuple(bounds), chunk.dtype, max_share=1.0)
    assert part is not None
    np.testing.assert_array_equal(part, chunk[tuple(bounds)])
    holding = math.prod(len({i // n for i in range(b.start, b.stop, b.step)})
                        for b, n in zip(bounds, blockshape, strict=True))
    assert len(monkeypatch_blocks) == holding


@pytest.fixture
def monkeypatch_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The numbers of the blocks ``FrameBlocks.decode`` and ``decode_many`` decode
    (cleared by the test)."""
    from hyperslab.codecs import cframe_region

    decoded: list[int] = []
    real, real_many = cframe_region.FrameBlocks.decode, cframe_region.FrameBlocks.decode_many

    def spy(self: Any, number: int, flat: Any) -> bool:
        decoded.append(number)
        return real(self, number, flat)

    def spy_many(self: Any, numbers: Any, flat: Any) -> None:
        decoded.extend(numbers)
        real_many(self, numbers, flat)

    monkeypatch.setattr(cframe_region.FrameBlocks, "decode", spy)
    monkeypatch.setattr(cframe_region.FrameBlocks, "decode_many", spy_many)
    return decoded


def test_a_strided_read_of_a_file_decodes_half_the_blocks_of_every_other_row(
        tmp_path: Path, monkeypatch_blocks: list[int]) -> None:
    """``a[::2]`` of chunks with one-row blocks decodes the even rows' blocks only."""
    data = np.random.default_rng(1).integers(0, 1000, (8, 64, 64)).astype(np.float64)
    path = tmp_path / "a.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(8, 64, 64), blockshape=(1, 64, 64),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    with hyperslab.open_file(path) as f:
        monkeypatch_blocks.clear()
        np.testing.assert_array_equal(f.root.a[::2, ::3, 1::5], data[::2, ::3, 1::5])
    assert sorted(monkeypatch_blocks) == [0, 2, 4, 6]


def test_partial_reads_decode_whole_chunks_into_reused_memory(tmp_path: Path) -> None:
    """A strided read whose chunks must be decoded whole (every block holds a selected
    item, and the blocks are not slabs, which are decoded a group of rows at a time)
    decodes them into one buffer kept per thread, not fresh memory each time."""
    from hyperslab.chunked import scratch

    data = np.random.default_rng(2).integers(0, 1000, (8, 64, 64)).astype(np.float64)
    path = tmp_path / "a.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 64, 64), blockshape=(2, 32, 64),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    if hasattr(scratch._chunk_scratch, "buffer"):  # left by an earlier test in this thread
        del scratch._chunk_scratch.buffer
    with hyperslab.open_file(path, max_threads=1) as f:
        for _ in range(3):
            np.testing.assert_array_equal(f.root.a[::2, ::2, ::2], data[::2, ::2, ::2])
            first = scratch._chunk_scratch.buffer
            np.testing.assert_array_equal(f.root.a[1::2, 1::2], data[1::2, 1::2])
            assert scratch._chunk_scratch.buffer is first


def test_decode_region_answers_none_where_documented() -> None:
    """Frames whose blocks cannot be decoded alone: None, and the caller decodes the whole
    chunk (the module docstring lists them)."""
    region = (slice(1, 3), slice(0, 2))
    noise = np.random.default_rng(0).integers(0, 256, (8, 8), dtype=np.uint8)
    stored = _chunk_frame(noise, (0, 0), (8, 8), (4, 4), "lz4")  # does not compress
    assert _memcpyed(stored)
    assert decode_region(stored, region, "u1", max_share=1.0) is None
    zeros = bytes(blosc2.zeros((64, 64), dtype="<i4", chunks=(64, 64), blocks=(8, 64))
                  .to_cframe())  # a special chunk: no blocks stored
    assert parse_frame(zeros).special
    assert decode_region(zeros, region, "<i4", max_share=1.0) is None
    items = np.arange(4096, dtype="<i4").reshape(64, 64)
    plain = bytes(blosc2.SChunk(chunksize=items.nbytes, data=items, cparams={
        "typesize": 4, "blocksize": 1024}).to_cframe())  # a plain frame of a 2-D chunk
    assert decode_region(plain, region, "<i4", max_share=1.0) is None
    framed = _chunk_frame(items, (0, 0), (64, 64), (8, 64), "lz4")
    assert decode_region(framed, region, "<i2", max_share=1.0) is None  # not its items
    part = decode_region(framed, region, "<i4", max_share=1.0)  # the same frame: decoded
    assert part is not None
    np.testing.assert_array_equal(part, items[region])


def test_only_the_touched_blocks_are_decoded(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A thin slice of chunks with many blocks decodes a few blocks, not whole chunks."""
    from hyperslab.codecs import cframe, cframe_region

    shape, chunkshape, blockshape = (8, 40, 40), (8, 40, 40), (2, 10, 10)
    data = _data(shape, "<i8", 1)
    path = tmp_path / "blocks.h5"
    _write(path, data, chunkshape, blockshape, "lz4", 0)
    calls = {"blocks": 0, "whole": 0}
    real_decompress = cframe_region._decompress

    def count_blocks(src: Any, dst: Any, nthreads: int) -> None:
        calls["blocks"] += memoryview(dst).nbytes // (math.prod(blockshape) * 8)
        real_decompress(src, dst, nthreads)

    real_decode_into = cframe.decode_into

    def count_whole(*args: Any, **kwargs: Any) -> None:
        calls["whole"] += 1
        real_decode_into(*args, **kwargs)

    monkeypatch.setattr(cframe_region, "_decompress", count_blocks)
    monkeypatch.setattr(cframe, "decode_into", count_whole)
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.a[:, :, 13], data[:, :, 13])
        np.testing.assert_array_equal(f.root.a[3, 5:25:7], data[3, 5:25:7])
    # [:, :, 13]: 4 x 4 blocks of the 4 x 4 x 4 grid; [3, 5:25:7] (rows 5, 12, 19):
    # 1 x 2 x 4 blocks
    assert calls == {"blocks": 16 + 8, "whole": 0}
    assert math.prod(chunkshape) // math.prod(blockshape) == 64


@pytest.mark.parametrize(("bounds", "runs"), [
    # a[:, k] of blocks one row long: the chunk's 24 blocks holding row k, one copy
    ((slice(0, 24), slice(13, 14), slice(0, 40)), 1),
    # two rows of blocks: rows 0-9 and 10-19 of axis 1 are two runs per row of axis 0...
    ((slice(0, 24), slice(5, 15), slice(0, 40)), 48),
    # ... but whole blocks along axis 1 join in one run per row of axis 0
    ((slice(3, 9), slice(0, 30), slice(8, 32, 3)), 6),
])
def test_blocks_in_a_run_along_an_axis_are_copied_at_once(
        monkeypatch: pytest.MonkeyPatch, bounds: tuple[slice, ...], runs: int) -> None:
    """The blocks a region takes the same items of, one after another along one axis, are
    copied into the region by one NumPy copy (each copy holds the GIL ~3 us), and the
    region is NumPy's."""
    from hyperslab.codecs import cframe_region

    chunk = np.random.default_rng(5).integers(0, 100, (24, 30, 40)).astype(np.int64)
    frame = _chunk_frame(chunk, (0, 0, 0), chunk.shape, (1, 10, 40), "lz4")
    copied: list[int] = []
    real = cframe_region._copy_run

    def spy(decoded: np.ndarray, *args: Any) -> None:
        copied.append(len(decoded))
        real(decoded, *args)

    monkeypatch.setattr(cframe_region, "_copy_run", spy)
    out = np.full(chunk[bounds].shape, -1, dtype=np.int64)
    jobs: list[Any] = []
    assert decode_region(frame, bounds, np.int64, max_share=1.0, out=out, jobs=jobs) is out
    for job in jobs:
        job.run()
    np.testing.assert_array_equal(out, chunk[bounds])
    assert len(copied) == runs
    touched = math.prod(len({i // n for i in range(b.start, b.stop, b.step or 1)})
                        for b, n in zip(bounds, (1, 10, 40), strict=True))
    assert sum(copied) == touched


def _slab_blocks(frame: bytearray | bytes) -> Any:
    """The :class:`FrameBlocks` of a ``(24, 30, 40)`` int64 chunk frame of ``(1, 10, 40)``
    blocks (block ``n`` holds rows ``n // 3``, ``10 * (n % 3)`` on)."""
    blocks = frame_blocks(memoryview(frame), np.int64, chunkshape=(24, 30, 40))
    assert blocks is not None and blocks.blockshape == (1, 10, 40)
    return blocks


def _expected_blocks(chunk: np.ndarray, numbers: list[int]) -> np.ndarray:
    return np.stack([chunk[n // 3, 10 * (n % 3) : 10 * (n % 3) + 10] for n in numbers])


def test_blocks_of_a_writable_chunk_are_decoded_where_their_streams_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Several blocks of a chunk read into writable memory are decoded without copying
    their compressed streams into a chunk of their own (``cut_blocks``): the chunk's head
    is rewritten for them and put back.  Read-only bytes are still cut out.  Either way
    the blocks are NumPy's, in the order asked for."""
    from hyperslab.codecs import cframe_region

    chunk = np.random.default_rng(8).integers(0, 1000, (24, 30, 40)).astype(np.int64)
    frame = _chunk_frame(chunk, (0, 0, 0), chunk.shape, (1, 10, 40), "lz4")
    numbers = [7, 2, 30, 71]
    cut: list[int] = []
    real_cut = cframe_region.cut_blocks

    def counted_cut(*args: Any) -> Any:
        cut.append(len(args[1]))
        return real_cut(*args)

    monkeypatch.setattr(cframe_region, "cut_blocks", counted_cut)
    writable = bytearray(frame)
    flat = np.empty(len(numbers) * 10 * 40, dtype=np.int64)
    _slab_blocks(writable).decode_many(numbers, flat.view(np.uint8))
    np.testing.assert_array_equal(flat.reshape(-1, 10, 40), _expected_blocks(chunk, numbers))
    assert cut == []
    assert bytes(writable) == frame  # the head put back

    flat[:] = -1
    _slab_blocks(frame).decode_many(numbers, flat.view(np.uint8))
    np.testing.assert_array_equal(flat.reshape(-1, 10, 40), _expected_blocks(chunk, numbers))
    assert cut == [len(numbers)]


def test_a_chunk_whose_blocks_do_not_decode_keeps_its_bytes() -> None:
    """A block that does not decompress raises FrameError, and the chunk's head rewritten
    for the decoding is put back all the same."""
    chunk = np.random.default_rng(9).integers(0, 1000, (24, 30, 40)).astype(np.int64)
    writable = bytearray(_chunk_frame(chunk, (0, 0, 0), chunk.shape, (1, 10, 40), "lz4"))
    blocks = _slab_blocks(writable)
    start, _ = blocks.stream_range(4)
    writable[start : start + 4] = (1 << 30).to_bytes(4, "little")  # a stream past the end
    before = bytes(writable)
    flat = np.empty(2 * 10 * 40, dtype=np.int64)
    with pytest.raises(FrameError):
        blocks.decode_many([3, 4], flat.view(np.uint8))
    assert bytes(writable) == before


def test_threads_decoding_blocks_of_one_chunk_each_get_their_own() -> None:
    """Threads decoding groups of blocks of one chunk at once each get theirs (one
    rewrites the chunk's head at a time; the others cut their blocks out meanwhile), and
    the chunk's bytes are as read at the end."""
    chunk = np.random.default_rng(10).integers(0, 1000, (24, 30, 40)).astype(np.int64)
    frame = _chunk_frame(chunk, (0, 0, 0), chunk.shape, (1, 10, 40), "lz4")
    writable = bytearray(frame)
    blocks = _slab_blocks(writable)
    rng = np.random.default_rng(11)
    groups = [rng.choice(72, size=int(rng.integers(2, 12)), replace=False).tolist()
              for _ in range(400)]

    def decode(numbers: list[int]) -> bool:
        flat = np.empty(len(numbers) * 10 * 40, dtype=np.int64)
        blocks.decode_many(numbers, flat.view(np.uint8))
        return bool(np.array_equal(flat.reshape(-1, 10, 40), _expected_blocks(chunk, numbers)))

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert all(pool.map(decode, groups))
    assert bytes(writable) == frame


def test_the_blocks_a_region_touches_are_worked_out_once_for_every_chunk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks a selection takes the same region of (``a[25]``: all but the edges) share
    the working out of which blocks it touches; each chunk still gives its own items.
    Chunks of more blocks than the kept layouts may have (bounded memory) have theirs
    worked out at each read."""
    from hyperslab.codecs import cframe_region

    data = np.random.default_rng(6).integers(0, 100, (20, 30, 40)).astype(np.int64)
    frames = [_chunk_frame(data, (start, 0, 0), (10, 30, 40), (1, 10, 40), "lz4")
              for start in (0, 10)]
    worked: list[slice] = []
    real = cframe_region._axis_blocks

    def spy(bound: slice, *args: Any) -> Any:
        worked.append(bound)
        return real(bound, *args)

    monkeypatch.setattr(cframe_region, "_axis_blocks", spy)
    bounds = (slice(4, 5), slice(0, 30, 2), slice(3, 40))
    for kept_max, workings in ((30, 3), (29, 6)):  # the chunks have 10 x 3 blocks
        cframe_region._kept_layout.cache_clear()
        monkeypatch.setattr(cframe_region, "LAYOUT_CACHE_MAX_BLOCKS", kept_max)
        worked.clear()
        for start, frame in zip((0, 10), frames, strict=True):
            part = decode_region(frame, bounds, np.int64, max_share=1.0)
            assert part is not None
            np.testing.assert_array_equal(part, data[start:start + 10][bounds])
        assert len(worked) == workings  # one per axis, for the first chunk only if kept


@pytest.mark.parametrize("listed", [True, False])
def test_block_ends_find_each_blocks_streams_in_any_order(
        monkeypatch: pytest.MonkeyPatch, listed: bool) -> None:
    """Each block's streams end where the next greater start is, whatever the blocks'
    order in the chunk and blocks sharing their streams; with Python lists for small
    offsets tables (the usual chunk) and NumPy for big ones, the same answers."""
    import struct

    from hyperslab.codecs import cframe_item
    from hyperslab.codecs.cframe_item import CHUNK_EXTLEN, block_ends

    if not listed:
        monkeypatch.setattr(cframe_item, "LISTED_BLOCKS_MAX", 0)

    def chunk_of(starts: list[int], size: int) -> bytes:
        table = struct.pack(f"<{len(starts)}i", *starts)
        return bytes(CHUNK_EXTLEN) + table + bytes(size - CHUNK_EXTLEN - len(table))

    first = CHUNK_EXTLEN + 4 * 4
    cases = [
        ([first, first + 10, first + 25, first + 40], [first + 10, first + 25, first + 40, 100]),
        ([first + 40, first, first + 25, first + 10], [100, first + 10, first + 40, first + 25]),
        ([first, first + 30, first, first + 30], [first + 30, 100, first + 30, 100]),
    ]
    for starts, ends in cases:
        got = block_ends(chunk_of(starts, 100), 4)
        assert got is not None
        assert [int(x) for x in got[0]] == starts
        assert [int(x) for x in got[1]] == ends
    assert block_ends(chunk_of([first, first - 1, first + 5, first + 9], 100), 4) is None
    assert block_ends(chunk_of([first, first + 5, first + 9, 100], 100), 4) is None
    assert block_ends(chunk_of([first] * 4, 100)[:first - 1], 4) is None


def test_decode_region_decodes_big_blocks_one_by_one_whatever_the_share() -> None:
    """Blocks of ``big_blocks`` bytes or more are decoded one by one even when the region
    touches more of them than ``max_share`` allows (no whole chunk to reorder).  Blocks
    that are slabs are decoded a group of rows at a time instead, whatever their size
    (``tests/test_slab_chunks.py``)."""
    items = np.arange(64 * 64, dtype="<i8").reshape(64, 64)
    frame = _chunk_frame(items, (0, 0), (64, 64), (16, 32), "lz4")  # 8 blocks of 4 KiB
    region = (slice(0, 64, 3), slice(5, 6))  # every block of the first column of blocks
    assert decode_region(frame, region, "<i8", max_share=0.4) is None
    assert decode_region(frame, region, "<i8", max_share=0.4, big_blocks=4097) is None
    part = decode_region(frame, region, "<i8", max_share=0.4, big_blocks=4096)
    assert part is not None
    np.testing.assert_array_equal(part, items[region])
    slabs = _chunk_frame(items, (0, 0), (64, 64), (16, 64), "lz4")  # 4 slabs of 8 KiB
    part = decode_region(slabs, region, "<i8", max_share=0.5)
    assert part is not None
    np.testing.assert_array_equal(part, items[region])


def test_a_slab_of_big_blocks_is_decoded_block_by_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a[:, 5]`` touches every block of its chunks; blocks of at least BIG_BLOCK_BYTES
    are decoded one by one and their items copied out, the chunks never decoded whole
    (and reordered from block order); h5py + hdf5plugin read the same file as the oracle."""
    from hyperslab.codecs import cframe, cframe_region

    data = _data((16, 64, 64), "<f8", 3)
    path = tmp_path / "big.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(8, 64, 64), blockshape=(4, 64, 64),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    with h5py.File(path) as h5:
        expected = h5["a"][:, 5]
        assert parse_frame(h5["a"].id.read_direct_chunk((0, 0, 0))[1]).blockshape == (4, 64, 64)
    np.testing.assert_array_equal(expected, data[:, 5])
    assert 4 * 64 * 64 * 8 >= cframe_region.BIG_BLOCK_BYTES

    def whole(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a chunk was decoded whole")

    monkeypatch.setattr(cframe, "decode_into", whole)
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.a[:, 5], expected)
        np.testing.assert_array_equal(f.root.a[3:13, 1::7, ::9], data[3:13, 1::7, ::9])


def test_chunks_decoded_in_part_share_one_pool_task(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of chunks decoded in part have their streams loaded in the calling thread
    and their decoding run by it and one pool task per other worker, for the whole read:
    light chunks DEFERRED_BATCH at a time, split between the threads; chunks with much to
    decode handed to the task one by one as they are planned.  With one worker, no task;
    whole chunks a pool task each.  Exact against h5py + hdf5plugin."""
    from concurrent.futures import ThreadPoolExecutor

    from hyperslab.chunked import deferred, engine

    data = _data((8, 128, 256), "<f8", 4)
    path = tmp_path / "few.h5"
    with hyperslab.open_file(path, "w") as f:  # 256 KiB chunks of 16 KiB blocks
        f.create_carray("/", "a", obj=data, chunkshape=(4, 64, 128), blockshape=(1, 16, 128),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    with h5py.File(path) as h5:
        expected = h5["a"][1]
    np.testing.assert_array_equal(expected, data[1])
    submitted: list[Any] = []
    real = ThreadPoolExecutor.submit

    def spy(self: Any, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        submitted.append(getattr(fn, "__name__", fn))
        return real(self, fn, *args, **kwargs)

    handed: list[int] = []
    real_hand = deferred._Tasks.hand

    def hand(self: Any, planned: Any) -> None:
        handed.append(len(planned))
        real_hand(self, planned)

    monkeypatch.setattr(ThreadPoolExecutor, "submit", spy)
    monkeypatch.setattr(deferred._Tasks, "hand", hand)
    with hyperslab.open_file(path, max_threads=2) as f:
        for _ in range(2):  # 4 chunks of 4 blocks (64 KiB) each
            np.testing.assert_array_equal(f.root.a[1], expected)
        assert submitted == ["_serve"] * 2 and handed == [2, 2]  # the last 2 of 4 pieces
        submitted.clear()
        np.testing.assert_array_equal(f.root.a[:4], data[:4])  # 4 whole chunks
        assert submitted == ["_read_piece"] * 4
    submitted.clear()
    handed.clear()
    with hyperslab.open_file(path, max_threads=1) as f:
        np.testing.assert_array_equal(f.root.a[1], expected)
    assert submitted == [] and handed == []
    monkeypatch.setattr(engine, "DEFERRED_BATCH", 2)
    with hyperslab.open_file(path, max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[1], expected)
        assert submitted == ["_serve"] and handed == [1, 1]  # 2 batches of 2 pieces
        np.testing.assert_array_equal(f.root.a[2:7:3, 5:120:7, ::9], data[2:7:3, 5:120:7, ::9])
    submitted.clear()
    handed.clear()
    monkeypatch.setattr(deferred, "EAGER_MIN_BYTES", 4 * 16 * 128 * 8)  # a piece's 4 blocks
    with hyperslab.open_file(path, max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[1], expected)
        assert submitted == ["_serve"] and handed == [1, 1, 1, 1]  # each as it is planned
        np.testing.assert_array_equal(f.root.a[2:7:3, 5:120:7, ::9], data[2:7:3, 5:120:7, ::9])


def _read_both(node: Any, into: list[Any]) -> None:
    into.extend([node[1], node[::3, 5:120:7, 1::9]])


def test_a_read_whose_pool_task_never_starts_is_done_by_the_calling_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work handed to a pool task that never starts (a pool busy with other reads) is run
    by the calling thread, whose read neither waits for the task nor loses a chunk."""
    from concurrent.futures import Future

    from hyperslab.chunked import deferred, engine

    data = _data((8, 128, 256), "<f8", 4)
    path = tmp_path / "busy.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 64, 128), blockshape=(1, 16, 128),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))

    class BusyPool:
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            return Future()  # never run

    for eager in (1 << 40, 1):
        with monkeypatch.context() as patch:
            patch.setattr(deferred, "EAGER_MIN_BYTES", eager)
            patch.setattr(engine, "DEFERRED_BATCH", 1)  # at most 1 piece waits
            with hyperslab.open_file(path, max_threads=2) as f:
                patch.setattr(f.root.a._engine, "_executor", BusyPool)
                got: list[Any] = []
                reader = threading.Thread(target=_read_both, args=(f.root.a, got),
                                          daemon=True)
                reader.start()
                reader.join(60)
                assert not reader.is_alive(), "the read waits for a task that never starts"
                np.testing.assert_array_equal(got[0], data[1])
                np.testing.assert_array_equal(got[1], data[::3, 5:120:7, 1::9])


def test_deferred_decoding_of_a_damaged_block_names_its_chunk(tmp_path: Path) -> None:
    """A block that does not decompress in the split decoding is read again in the
    usual way, which reports its chunk (HDF5ExtError), as the serial read does."""
    data = _data((8, 128, 256), "<f8", 4)
    path = tmp_path / "damaged.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 64, 128), blockshape=(1, 16, 128),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    with h5py.File(path, "r+") as h5:
        dset = h5["a"]
        mask, frame = dset.id.read_direct_chunk((0, 64, 128))
        layout = parse_frame(frame)
        damaged = bytearray(frame)
        # the first stream of block 5 (row 1 of the chunk) claims more bytes than there are
        table = layout.chunk_start + 32
        start = layout.chunk_start + int.from_bytes(damaged[table + 20:table + 24], "little")
        damaged[start:start + 4] = b"\xff\xff\xff\x7f"
        dset.id.write_direct_chunk((0, 64, 128), bytes(damaged), mask)
    for threads in (1, 2):
        with hyperslab.open_file(path, max_threads=threads) as f:
            np.testing.assert_array_equal(f.root.a[1, :64], data[1, :64])
            with pytest.raises(HDF5ExtError, match=r"\(0, 64, 128\)"):
                f.root.a[1]


def test_a_corrupt_block_names_its_chunk(tmp_path: Path) -> None:
    shape, chunkshape, blockshape = (20, 30), (10, 30), (2, 30)
    data = _data(shape, "<f4", 2)
    path = tmp_path / "corrupt.h5"
    _write(path, data, chunkshape, blockshape, "lz4", 0)
    frame = bytearray(_chunk_frame(data, (10, 0), chunkshape, blockshape, "lz4"))
    frame[len(frame) // 2 : len(frame) // 2 + 40] = b"\xff" * 40  # inside the blocks
    with hyperslab.open_file(path, "a") as f:
        f.root.a.write_chunk((10, 0), bytes(frame))
        np.testing.assert_array_equal(f.root.a[:10, ::3], data[:10, ::3])
        with pytest.raises(HDF5ExtError, match=r"\(10, 0\)"):
            f.root.a[10:, 4]
        with pytest.raises(HDF5ExtError, match=r"\(10, 0\)"):
            f.root.a[::3, [1, 2]]


def _frame_blockshape(node: Any, grid: tuple[int, ...]) -> tuple[int, ...] | None:
    from hyperslab.codecs import cframe

    return cframe.parse_frame(node.read_chunk(
        tuple(g * c for g, c in zip(grid, node.chunkshape, strict=True)))).blockshape


@pytest.mark.parametrize("kind", ["carray", "earray"])
def test_blockshape_is_used_kept_and_readable_everywhere(tmp_path: Path, kind: str) -> None:
    import tables

    path = tmp_path / "blocks.h5"
    data = _data((12, 30, 20), "<f8", 3)
    filters = hyperslab.Filters(5, "blosc2:zstd", shuffle=True)
    with hyperslab.open_file(path, "w") as f:
        if kind == "carray":
            node = f.create_carray("/", "a", obj=data, chunkshape=(6, 15, 20),
                                   filters=filters, blockshape=(3, 5, 10))
        else:
            node = f.create_earray("/", "a", hyperslab.Float64Atom(), (0, 30, 20),
                                   chunkshape=(6, 15, 20), filters=filters,
                                   blockshape=(3, 5, 10))
            node.append(data)
        assert _frame_blockshape(node, (1, 1, 0)) == (3, 5, 10)
    with hyperslab.open_file(path, "a") as f:  # chunks written later keep the blocks
        f.root.a[6:12] = data[6:12] * 2
        assert _frame_blockshape(f.root.a, (1, 0, 0)) == (3, 5, 10)
        np.testing.assert_array_equal(f.root.a[:, 7, ::3], np.concatenate(
            [data[:6], data[6:12] * 2])[:, 7, ::3])
    expected = np.concatenate([data[:6], data[6:12] * 2])
    with h5py.File(path) as h5:
        np.testing.assert_array_equal(h5["a"][...], expected)
    with tables.open_file(path) as t:
        np.testing.assert_array_equal(t.root.a[...], expected)


@pytest.mark.parametrize(("filters", "blockshape", "match"), [
    (hyperslab.Filters(5, "zlib"), (2, 2), "Blosc2 compression as the only filter"),
    (hyperslab.Filters(5, "blosc2", fletcher32=True), (2, 2), "only filter"),
    (hyperslab.Filters(5, "blosc2"), (2,), "one dimension per chunk dimension"),
    (hyperslab.Filters(5, "blosc2"), (2, 9), "from 1 to the chunk's"),
    (hyperslab.Filters(5, "blosc2"), (0, 2), "from 1 to the chunk's"),
    (hyperslab.Filters(5, "blosc2"), "ab", "sequence of ints"),
])
def test_bad_blockshapes_create_nothing(tmp_path: Path, filters: Any, blockshape: Any,
                                        match: str) -> None:
    with hyperslab.open_file(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match=match):
            f.create_carray("/", "a", hyperslab.Int32Atom(), (10, 10), chunkshape=(5, 5),
                            filters=filters, blockshape=blockshape)
        assert "a" not in f.root


@pytest.mark.parametrize("dtype", ["<i8", ">f4", "u1"])
def test_decode_region_of_plain_one_dimensional_frames(dtype: str) -> None:
    """Frames of 1-D chunks written by the filter itself are super-chunk frames, whose
    blocks are runs of items: only the runs a range touches are decoded."""
    chunk = (np.arange(50_000) % 251).astype(dtype)
    itemsize = chunk.dtype.itemsize
    schunk = blosc2.SChunk(chunksize=chunk.nbytes, data=chunk, cparams={
        "typesize": itemsize, "blocksize": 1000 * itemsize, "codec": blosc2.Codec.LZ4})
    frame = bytes(schunk.to_cframe())
    for lo, hi in [(0, 1), (999, 1001), (12_345, 12_400), (49_990, 50_000), (1000, 4000),
                   (2500, 9001)]:
        part = decode_region(frame, (slice(lo, hi),), dtype)
        assert part is not None
        np.testing.assert_array_equal(part, chunk[lo:hi])
        # Into a given array (whole blocks are decompressed straight into it).
        out = np.full(hi - lo, 7, dtype=dtype)
        assert decode_region(frame, (slice(lo, hi),), dtype, out=out) is out
        np.testing.assert_array_equal(out, chunk[lo:hi])
    assert decode_region(frame, (slice(0, 50_000),), dtype) is None  # all blocks: not worth it
    with pytest.raises(ValueError, match="shape \\(5,\\)"):
        decode_region(frame, (slice(0, 5),), dtype, out=np.empty(6, dtype=dtype))
    with pytest.raises(ValueError, match="writable"):
        decode_region(frame, (slice(0, 5),), dtype, out=np.empty(5, dtype=">f8"))


def _one_dimensional_frame(data: st.DataObject) -> tuple[str, np.ndarray, int, bytes]:
    """A drawn 1-D chunk: (dtype, its items, items per block, its frame), b2nd or plain."""
    dtype = data.draw(st.sampled_from(["<i8", ">f4", "u1", "V24"]))
    size = data.draw(st.integers(1, 3000))
    items = np.frombuffer(np.random.default_rng(size).integers(
        0, 5, size * np.dtype(dtype).itemsize, dtype=np.uint8).tobytes(), dtype=dtype)
    per_block = data.draw(st.integers(1, size))
    if data.draw(st.booleans()):
        return dtype, items, per_block, _chunk_frame(items, (0,), (size,), (per_block,), "lz4")
    itemsize = items.dtype.itemsize
    frame = bytes(blosc2.SChunk(chunksize=items.nbytes, data=items, cparams={
        "typesize": min(itemsize, 255), "blocksize": per_block * itemsize,
        "codec": blosc2.Codec.LZ4}).to_cframe())
    return dtype, items, per_block, frame


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_decode_items_of_one_dimensional_frames(data: st.DataObject) -> None:
    """Items at sorted positions of a 1-D chunk (b2nd or plain frame): only the blocks
    holding them are decoded; None (decode it all) when they lie in too many blocks."""
    dtype, items, per_block, frame = _one_dimensional_frame(data)
    size = len(items)
    positions = np.unique(data.draw(st.lists(st.integers(0, size - 1), min_size=1,
                                             max_size=20))).astype(np.int64)
    got = decode_items(frame, positions, dtype, max_share=1.0)
    # None exactly where documented: a chunk Blosc2 stored uncompressed (about half of
    # these small, random ones); the others are decoded block by block.
    assert (got is None) == _memcpyed(frame)
    if got is not None:
        assert got.tobytes() == items[positions].tobytes() and got.dtype == items.dtype
    blocks = len(np.unique(positions // per_block))
    if blocks > 0.5 * -(-size // per_block):
        assert decode_items(frame, positions, dtype) is None


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_items_from_a_frame_read_only_where_needed(data: st.DataObject) -> None:
    """load_frame_structure plus the streams of the wanted blocks are all decode_items
    reads: bytes never loaded (poisoned here) do not change the items."""
    from hyperslab.codecs.cframe_region import frame_blocks, load_frame_structure

    dtype, items, _, frame = _one_dimensional_frame(data)
    size = len(items)
    sparse = np.full(len(frame), 0xA5, dtype=np.uint8)
    loaded: list[tuple[int, int]] = []

    def load(start: int, stop: int) -> None:
        assert 0 <= start <= stop <= len(frame)
        loaded.append((start, stop))
        sparse[start:stop] = np.frombuffer(frame, dtype=np.uint8)[start:stop]

    from unittest import mock

    from hyperslab.codecs import cframe_region

    head = data.draw(st.sampled_from([112, 300, 4096]))  # what is read first
    with mock.patch.object(cframe_region, "FRAME_HEAD_BYTES", head):
        known = load_frame_structure(sparse, load)
    # A frame of a layout it does not know: the caller reads the whole frame.  Those
    # drawn here are chunks stored uncompressed, whose blocks cannot be decoded alone.
    assert known or _memcpyed(frame)
    if not known:
        return
    blocks = frame_blocks(sparse, dtype)
    assert (blocks is None) == (frame_blocks(frame, dtype) is None) == _memcpyed(frame)
    if blocks is None:
        return
    positions = np.unique(data.draw(st.lists(st.integers(0, size - 1), min_size=1,
                                             max_size=20))).astype(np.int64)
    for number in np.unique(positions // blocks.blockshape[0]).tolist():
        load(*blocks.stream_range(number))
    got = decode_items(blocks, positions, dtype, max_share=1.0)
    assert got is not None
    assert got.tobytes() == items[positions].tobytes()


def test_frame_structure_of_malformed_frames_is_refused_or_checked() -> None:
    """Truncated or corrupted frames: load_frame_structure answers False, or the parse
    of what it loaded raises FrameError; it never reads outside the frame."""
    from hyperslab.codecs.cframe import FrameError
    from hyperslab.codecs.cframe_region import frame_blocks, load_frame_structure

    items = np.arange(3000, dtype="<i8") // 7
    frame = bytes(blosc2.SChunk(chunksize=items.nbytes, data=items, cparams={
        "typesize": 8, "blocksize": 4000, "codec": blosc2.Codec.LZ4}).to_cframe())
    rng = np.random.default_rng(3)
    bads = [frame[:n] for n in range(0, len(frame), 97)]
    for _ in range(300):
        bad = bytearray(frame)
        for pos in rng.integers(0, 200, 2).tolist() + rng.integers(0, len(bad), 1).tolist():
            bad[pos] = int(rng.integers(0, 256))
        bads.append(bytes(bad))
    for bad in bads:
        view = np.frombuffer(bad, dtype=np.uint8)

        def load(start: int, stop: int, size: int = len(bad)) -> None:
            assert 0 <= start <= stop <= size

        if load_frame_structure(view, load):
            try:
                frame_blocks(view, "<i8")
            except FrameError:
                pass


def test_table_rows_by_coordinates_decode_only_their_blocks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few rows of a Blosc2 table with big chunks cost one block each, not a chunk."""
    from hyperslab.codecs import cframe, cframe_region

    dtype = np.dtype([("a", "<i8"), ("b", "<f8"), ("c", "S8")])
    rows = np.zeros(40_000, dtype)
    rows["a"] = np.arange(40_000)
    rows["b"] = rows["a"] / 3
    rows["c"] = [b"x%d" % i for i in range(40_000)]
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        f.create_table("/", "t", rows, filters=hyperslab.Filters(5, "blosc2:lz4"),
                       chunkshape=(20_000,))
    calls = {"blocks": 0, "whole": 0}
    real_decompress, real_decode_into = cframe_region._decompress, cframe.decode_into

    def count_blocks(src: Any, dst: Any, nthreads: int) -> None:
        calls["blocks"] += 1
        real_decompress(src, dst, nthreads)

    def count_whole(*args: Any, **kwargs: Any) -> None:
        calls["whole"] += 1
        real_decode_into(*args, **kwargs)

    monkeypatch.setattr(cframe_region, "_decompress", count_blocks)
    monkeypatch.setattr(cframe, "decode_into", count_whole)
    coords = [39_999, 3, 20_000, 4, 17_000, 3]  # any order, repeats
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        got = f.root.t.read_coordinates(coords)
    assert got.tobytes() == rows[coords].tobytes()
    assert calls["whole"] == 0 and 0 < calls["blocks"] <= 5  # 3 and 4 share a block


def test_table_rows_right_after_opening_read_only_their_blocks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few rows of a read-only Blosc2 table read from the file the frame's structure and
    their blocks, not the whole frame; later rows in other blocks read those blocks, and
    a whole-chunk decode reads the rest first."""
    from hyperslab.storage import preads

    rows = np.zeros(200_000, [("a", "<i4"), ("b", "<i4"), ("c", "<f8"), ("d", "<f8")])
    rows["a"] = np.arange(200_000)
    rows["c"] = np.sin(rows["a"])  # poorly compressible: a frame of about a megabyte,
    rows["d"] = np.cos(rows["a"])  # in ~20 blocks
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", rows, chunkshape=(100_000,),
                       filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True))
    read: list[int] = []
    real = preads.SparseChunk.load

    def counted(self: Any, start: int, stop: int) -> None:
        before = len(self._loaded)
        real(self, start, stop)
        if len(self._loaded) > before:
            read.append(stop - start)

    monkeypatch.setattr(preads.SparseChunk, "load", counted)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        frame = table._dataset.raw_chunks()._look_up_one((1,)).size
        got = table.read_coordinates([150_000, 150_001])
        assert got.tobytes() == rows[[150_000, 150_001]].tobytes()
        first = sum(read)
        assert 0 < first < frame / 4
        got = table.read_coordinates([199_999, 100_000])  # other blocks of the chunk
        assert got.tobytes() == rows[[199_999, 100_000]].tobytes()
        assert first < sum(read) < frame / 2
        many = np.arange(100_000, 200_000, 97)  # most blocks: the chunk is decoded whole
        assert table.read_coordinates(many).tobytes() == rows[many].tobytes()
        assert sum(read) > frame
    read.clear()
    with hyperslab.open_file(path) as f:  # slices (a sorted table's hits) too
        assert f.root.t.read(150_000, 150_500).tobytes() == rows[150_000:150_500].tobytes()
        assert 0 < sum(read) < frame / 4
        assert f.root.t.read(100_000, 199_000).tobytes() == rows[100_000:199_000].tobytes()
        assert sum(read) > frame


def test_a_sparse_chunk_past_the_end_of_the_file_is_a_clear_error(tmp_path: Path) -> None:
    """Reading stored bytes the file does not have (a truncated file) raises HDF5ExtError,
    as reading a whole chunk does; ranges outside the chunk are refused."""
    from hyperslab.errors import ClosedNodeError, HDF5ExtError
    from hyperslab.storage.chunkindex import ChunkLocation
    from hyperslab.storage.preads import SparseChunk

    path = tmp_path / "short.bin"
    path.write_bytes(b"x" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        chunk = SparseChunk(fd, ChunkLocation(900, 400, 0))
        chunk.load(0, 100)
        assert chunk.buffer[:100].tobytes() == b"x" * 100
        with pytest.raises(HDF5ExtError, match="shorter than the chunk"):
            chunk.load(0, 400)
        with pytest.raises(ValueError, match="not within a chunk of 400 bytes"):
            chunk.load(300, 401)

        def closed() -> None:
            raise ClosedNodeError("closed")

        with pytest.raises(ClosedNodeError):  # once its file is closed, nothing is read
            SparseChunk(fd, ChunkLocation(0, 10, 0), check_open=closed).load(0, 5)
    finally:
        os.close(fd)


def test_a_sparse_chunk_reads_a_range_an_earlier_load_covered_no_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame's chunk header and block starts usually lie in the 4 KiB loaded with its
    header: loading them costs no second system call, and they hold the file's bytes."""
    from hyperslab.storage.chunkindex import ChunkLocation
    from hyperslab.storage.preads import SparseChunk

    path = tmp_path / "bytes.bin"
    content = bytes(range(256)) * 40
    path.write_bytes(content)
    calls: list[tuple[int, int]] = []
    real = os.preadv

    def counted(fd: int, buffers: Any, offset: int) -> int:
        calls.append((offset, sum(memoryview(b).nbytes for b in buffers)))
        return real(fd, buffers, offset)

    monkeypatch.setattr(os, "preadv", counted)
    fd = os.open(path, os.O_RDONLY)
    try:
        chunk = SparseChunk(fd, ChunkLocation(100, 10_000, 0))
        chunk.load(0, 4096)
        chunk.load(200, 232)
        chunk.load(232, 4096)
        assert calls == [(100, 4096)]
        chunk.load(4000, 5000)  # only partly covered: read
        chunk.load(9000, 10_000)
        chunk.load(9500, 9600)
        assert calls == [(100, 4096), (4100, 1000), (9100, 1000)]
        for start, stop in [(0, 5000), (9000, 10_000)]:
            assert chunk.buffer[start:stop].tobytes() == content[100 + start : 100 + stop]
    finally:
        os.close(fd)


def test_point_reads_keep_parsed_chunks_of_read_only_files_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated row fetches (indexed queries) of a read-only file read and parse each
    chunk once; on a writable file every fetch sees the rows as they are now."""
    from hyperslab.storage.datasets import Dataset

    rows = np.zeros(30_000, [("a", "<i8"), ("b", "<f4")])
    rows["a"] = np.arange(30_000)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", rows, filters=hyperslab.Filters(5, "blosc2:lz4"),
                               chunkshape=(10_000,))
        assert table.read_coordinates([5, 25_000])["a"].tolist() == [5, 25_000]
        table.modify_column(5, 6, 1, np.array([-5]), "a")
        assert table.read_coordinates([5, 25_000])["a"].tolist() == [-5, 25_000]
    reads: list[Any] = []

    def counting(method: str) -> Any:
        real = getattr(Dataset, method)

        def counted(self: Dataset, grid: Any) -> Any:
            stored = real(self, grid)
            if stored is not None:
                reads.append(tuple(grid))
            return stored

        return counted

    for method in ("read_raw_chunk", "sparse_chunk_looked_up", "sparse_chunk"):
        monkeypatch.setattr(Dataset, method, counting(method))
    with hyperslab.open_file(path) as f:
        for _ in range(3):
            got = f.root.t.read_coordinates([5, 6, 25_000, 12_000])
            assert got["a"].tolist() == [-5, 6, 25_000, 12_000]
    assert sorted(reads) == [(0,), (1,), (2,)]


def test_point_reads_keep_the_last_decoded_blocks(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rows fetched again from a read-only file decode nothing."""
    from hyperslab.codecs import cframe_region

    rows = np.zeros(300_000, [("a", "<i8")])
    rows["a"] = np.arange(300_000)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        f.create_table("/", "t", rows, filters=hyperslab.Filters(5, "blosc2:lz4"),
                       chunkshape=(300_000,))  # 2.4 MB: many blocks
    decoded: list[int] = []
    real = cframe_region.FrameBlocks.decode

    def counted(self: Any, number: int, flat: Any) -> bool:
        decoded.append(number)
        return bool(real(self, number, flat))

    monkeypatch.setattr(cframe_region.FrameBlocks, "decode", counted)
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        for _ in range(3):
            assert f.root.t.read_coordinates([7, 290_000])["a"].tolist() == [7, 290_000]
    assert len(decoded) == 2


def test_an_ellipsis_gives_a_zero_dimensional_array_as_numpy(tmp_path: Path) -> None:
    data = np.array([b"ab", b"cde", b"f"], dtype="S3")
    with hyperslab.open_file(tmp_path / "s.h5", "w") as f:
        arr = f.create_carray("/", "s", obj=data, filters=hyperslab.Filters(5, "blosc2"))
        for key in [(0,), 0, (0, Ellipsis), (Ellipsis, 1)]:
            got, want = arr[key], data[key]
            assert type(got) is type(want), key
            assert got.dtype == want.dtype and got == want, key


def test_a_region_reads_only_the_blocks_it_decodes_once_the_index_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a whole read built the chunk index, one index along the first axis of big
    multi-block chunks reads their frames' structure and the blocks it needs, not the
    whole stored chunks (less to read, no fresh memory the size of the chunks)."""
    import os

    data = np.arange(8 * 64 * 64, dtype=np.float64).reshape(8, 64, 64)
    data += np.random.default_rng(0).random(data.shape)  # not too compressible
    path = tmp_path / "a.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(8, 64, 64), blockshape=(1, 64, 64),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    with hyperslab.open_file(path) as f:
        a = f.root.a
        np.testing.assert_array_equal(a[:], data)  # builds the chunk index
        stored = a._engine._dataset.chunk_location((0, 0, 0)).size
        read: list[int] = []
        real = os.preadv

        def counting(fd: int, buffers: Any, offset: int) -> int:
            n = real(fd, buffers, offset)
            read.append(n)
            return n

        monkeypatch.setattr(os, "preadv", counting)
        np.testing.assert_array_equal(a[3], data[3])
        assert 0 < sum(read) < stored / 4, (sum(read), stored)
