"""Every kind of selection of Blosc2 datasets, through the fast path and through HDF5.

The fast path reads raw chunks and decodes, of each chunk, only the b2nd blocks the
selection touches (:mod:`hyperslab.codecs.cframe_region`); the fallback is h5py's filter
pipeline.  Both are compared with NumPy on the same data, for random shapes, chunk and
block shapes, dtypes (big-endian and compound included), codecs and selections: ints
(negative too), slices of any step (negative too), Ellipsis, new axes, and integer or
boolean arrays along one axis.  Chunks are written by hyperslab (its own block shapes) or
by python-blosc2 with random block shapes through the direct chunking API, some left
unwritten (the fill value).
"""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin  # noqa: F401  (h5py reads the Blosc2 filter)
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.chunked.engine import ChunkEngine
from hyperslab.codecs.cframe_region import decode_items, decode_region
from hyperslab.errors import HDF5ExtError

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


def _write(path: Path, data: np.ndarray, chunkshape: tuple[int, ...],
           blockshape: tuple[int, ...] | None, codec: str, skip: int) -> np.ndarray:
    """Write ``data``; return what the dataset holds (chunks skipped read as FILL)."""
    expected = data.copy()
    filters = hyperslab.Filters(5, f"blosc2:{codec}", shuffle=True)
    with hyperslab.open_file(path, "w") as f:
        if blockshape is None:
            f.create_carray("/", "a", obj=data, chunkshape=chunkshape, filters=filters)
            return expected
        atom, order = _atom_and_order(data.dtype)
        atom.dflt = np.array(FILL).astype(atom.dtype)
        carray = f.create_carray("/", "a", atom, data.shape, chunkshape=chunkshape,
                                 filters=filters, byteorder=order)
        grid = [range(0, n, c) for n, c in zip(data.shape, chunkshape, strict=True)]
        for number, start in enumerate(itertools.product(*grid)):
            region = tuple(slice(s, s + c) for s, c in zip(start, chunkshape, strict=True))
            if skip and number % skip == 0:
                expected[region] = carray.atom.dflt  # never written: the fill value
                continue
            carray.write_chunk(start, _chunk_frame(data, start, chunkshape, blockshape, codec))
    return expected


@st.composite
def _axis_key(draw: st.DrawFn, length: int, allow_array: bool) -> Any:
    kind = draw(st.sampled_from(["int", "slice", "slice", "array", "mask"] if allow_array
                                else ["int", "slice", "slice"]))
    if kind == "int":
        return draw(st.integers(-length, length - 1))
    if kind == "slice":
        bound = st.none() | st.integers(-length - 2, length + 2)
        step = draw(st.none() | st.integers(-4, 4).filter(bool))
        return slice(draw(bound), draw(bound), step)
    if kind == "array":
        return np.array(draw(st.lists(st.integers(-length, length - 1), min_size=1,
                                      max_size=6)), dtype=np.int64)
    return np.array(draw(st.lists(st.booleans(), min_size=length, max_size=length)))


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
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 13), min_size=ndim, max_size=ndim)))
    chunkshape = tuple(draw(st.integers(1, max(1, n))) for n in shape)
    blockshape = draw(st.none() | st.tuples(*(st.integers(1, c) for c in chunkshape)))
    return {
        "shape": shape, "chunkshape": chunkshape, "blockshape": blockshape,
        "dtype": draw(st.sampled_from(DTYPES)), "codec": draw(st.sampled_from(list(CODECS))),
        "skip": draw(st.sampled_from([0, 0, 3])),
        "keys": draw(st.lists(_selections(shape), min_size=1, max_size=6)),
        "seed": draw(st.integers(0, 1000)),
    }


def _read_all(path: Path, keys: list[tuple[Any, ...]], fast: bool) -> list[Any]:
    """``a[key]`` for each key, through the fast path or (``fast`` False) through HDF5."""
    results: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        if not fast:
            patch.setattr(ChunkEngine, "serves_key", lambda self, key: False)
        with hyperslab.open_file(path) as f:
            for key in keys:
                try:
                    results.append(f.root.a[key])
                except IndexError as exc:
                    results.append(exc)
    return results


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_cases())
def test_every_selection_matches_numpy(tmp_path_factory: pytest.TempPathFactory,
                                       case: dict[str, Any]) -> None:
    path = tmp_path_factory.mktemp("slicing") / "a.h5"
    data = _data(case["shape"], case["dtype"], case["seed"])
    expected = _write(path, data, case["chunkshape"], case["blockshape"], case["codec"],
                      case["skip"])
    native = expected.astype(expected.dtype.newbyteorder("="))
    for fast in (True, False):
        for key, got in zip(case["keys"], _read_all(path, case["keys"], fast), strict=True):
            try:
                want = native[key]
            except IndexError:
                assert isinstance(got, IndexError), (key, fast)
                continue
            assert not isinstance(got, Exception), (key, fast, got)
            assert got.shape == want.shape, (key, fast)
            assert got.dtype == want.dtype, (key, fast)
            np.testing.assert_array_equal(got, want, err_msg=f"{key!r} fast={fast}")
    with h5py.File(path) as h5:  # the filter's own reader agrees with the data written
        np.testing.assert_array_equal(h5["a"][...], expected)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_decode_region_matches_the_chunk(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 4))
    chunkshape = tuple(data.draw(st.lists(st.integers(1, 12), min_size=ndim, max_size=ndim)))
    blockshape = tuple(data.draw(st.integers(1, c)) for c in chunkshape)
    dtype = data.draw(st.sampled_from(["<i8", ">i4", "<f2", "u1"]))
    chunk = (np.indices(chunkshape).sum(axis=0) % 50).astype(dtype)
    frame = _chunk_frame(chunk, (0,) * ndim, chunkshape, blockshape,
                         data.draw(st.sampled_from(list(CODECS))))
    bounds = []
    for c in chunkshape:
        lo = data.draw(st.integers(0, c - 1))
        bounds.append(slice(lo, data.draw(st.integers(lo + 1, c))))
    part = decode_region(frame, tuple(bounds), dtype, max_share=1.0)
    if part is not None:  # None: the frame's layout does not allow it (then never wrong)
        np.testing.assert_array_equal(part, chunk[tuple(bounds)])
        assert part.dtype == np.dtype(dtype)


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
        calls["blocks"] += 1
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
    if got is not None:  # None: the frame's layout does not allow it (then never wrong)
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
        if not load_frame_structure(sparse, load):
            return  # a layout it does not know: the caller reads the whole frame
    blocks = frame_blocks(sparse, dtype)
    assert (blocks is None) == (frame_blocks(frame, dtype) is None)
    if blocks is None:
        return
    positions = np.unique(data.draw(st.lists(st.integers(0, size - 1), min_size=1,
                                             max_size=20))).astype(np.int64)
    for number in np.unique(positions // blocks.blockshape[0]).tolist():
        load(*blocks.stream_range(number))
    got = decode_items(blocks, positions, dtype, max_share=1.0)
    if got is not None:
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

    for method in ("read_raw_chunk", "sparse_chunk_looked_up"):  # with or without index
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
