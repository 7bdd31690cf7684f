"""The chunk index and raw chunk I/O of storage datasets, against h5py's own chunk queries.

The oracle is HDF5 itself: ``get_chunk_info_by_coord`` for every cell of the chunk grid and
``get_chunk_info`` for every written chunk.  The staleness tests change a dataset after its
index was built, through every write path of :class:`Dataset`, and compare again: each one
fails if the matching bookkeeping is skipped.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
from h5py import h5d, h5p, h5s, h5t

from hyperslab.errors import (
    ClosedNodeError,
    FileModeError,
    NoSuchChunkError,
    NotChunkedError,
)
from hyperslab.storage import chunkindex, rawchunks
from hyperslab.storage.chunkindex import (
    ChunkIndex,
    ChunkLocation,
    chunk_keys,
    grid_shape,
    touched_chunks,
    uses_dense_map,
)
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.preads import file_access

FILTERS: dict[str, dict[str, Any]] = {
    "none": {},
    "zlib": {"compression": "gzip", "compression_opts": 1},
    "blosc2": dict(hdf5plugin.Blosc2(cname="lz4", clevel=5)),
}

LAYOUTS = [  # shape, chunks, the region written (an h5py key)
    ((23,), (5,), np.s_[3:12]),
    ((10, 7), (3, 4), np.s_[1:5, 2:7]),
    ((7, 6, 5), (2, 4, 3), np.s_[0:3, 3:6, 1:2]),
]


# ----------------------------------------------------------------------------- oracles


def oracle(dsid: h5d.DatasetID, shape: tuple[int, ...], chunks: tuple[int, ...]) -> dict:
    """``{grid coords: ChunkLocation}`` of the written chunks, asked cell by cell."""
    found = {}
    for coords in itertools.product(*(range(g) for g in grid_shape(shape, chunks))):
        start = tuple(c * s for c, s in zip(coords, chunks, strict=True))
        info = dsid.get_chunk_info_by_coord(start)
        if info.byte_offset is not None:
            found[coords] = ChunkLocation(info.byte_offset, info.size, info.filter_mask)
    return found


def oracle_by_number(dsid: h5d.DatasetID, chunks: tuple[int, ...]) -> dict:
    """The same, from ``get_chunk_info(i)`` for i < get_num_chunks()."""
    found = {}
    for i in range(dsid.get_num_chunks()):
        info = dsid.get_chunk_info(i)
        coords = tuple(o // c for o, c in zip(info.chunk_offset, chunks, strict=True))
        found[coords] = ChunkLocation(info.byte_offset, info.size, info.filter_mask)
    return found


def assert_exact(ds: Dataset) -> None:
    """Every look-up of ``ds`` agrees with HDF5, cell by cell and as a snapshot."""
    shape, chunks = ds.shape, ds.chunks
    assert chunks is not None
    expected = oracle(ds.dsid, shape, chunks)
    grid = grid_shape(shape, chunks)
    assert ds.chunk_grid == grid
    for coords in itertools.product(*(range(g) for g in grid)):
        assert ds.chunk_is_written(coords) == (coords in expected), coords
        assert ds.chunk_location(coords) == expected.get(coords), coords
    index = ds.chunk_index()
    assert index.grid == grid
    assert dict(iter(index)) == expected == oracle_by_number(ds.dsid, chunks)
    assert index.nwritten == len(expected)


@pytest.fixture
def h5(tmp_path: Path) -> Iterator[h5py.File]:
    with h5py.File(tmp_path / "chunks.h5", "w") as f:
        yield f


def make(
    f: h5py.File, shape: tuple[int, ...], chunks: tuple[int, ...], filt: str = "none", **kw: Any
) -> Dataset:
    kw.setdefault("maxshape", (None,) * len(shape))
    d = f.create_dataset("d", shape=shape, chunks=chunks, dtype="f8", **FILTERS[filt], **kw)
    return Dataset(d.id)


def values(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Data that compresses differently for every seed (so filtered chunks change size)."""
    rng = np.random.default_rng(seed)
    return np.round(rng.random(shape), seed % 5 + 1)


# ----------------------------------------------------------------------------- the index


@pytest.mark.parametrize("filt", list(FILTERS))
@pytest.mark.parametrize(("shape", "chunks", "region"), LAYOUTS)
def test_index_matches_hdf5(h5: h5py.File, filt: str, shape, chunks, region) -> None:
    ds = make(h5, shape, chunks, filt)
    ds.write(region, values(shape)[region])
    assert_exact(ds)
    index = ds.chunk_index()
    assert 0 < index.nwritten < np.prod(index.grid)  # some chunks written, some not
    assert index.dense


def test_hash_map_for_sparse_grid(h5: h5py.File) -> None:
    ds = make(h5, (10**6,), (4,))
    for at in (0, 4096, 999_999):
        ds.write(np.s_[at], 1.0)
    index = ds.chunk_index()
    assert not index.dense and index.nwritten == 3
    assert dict(iter(index)) == oracle_by_number(ds.dsid, (4,))
    assert ds.chunk_is_written((1024,)) and not ds.chunk_is_written((1025,))
    offsets, sizes, masks = index.lookup([(0,), (1,), (249_999,)])
    assert masks.tolist() == [0, 0, 0]
    assert offsets.tolist()[1] == -1 and sizes.tolist()[1] == -1
    assert offsets[0] == index.locate((0,)).offset and sizes[2] == 32


def test_dense_rule() -> None:
    assert uses_dense_map((chunkindex.DENSE_MIN_CELLS,), 0)
    assert not uses_dense_map((chunkindex.DENSE_MIN_CELLS + 1,), 0)
    assert uses_dense_map((10**6,), 250_000) and not uses_dense_map((10**6,), 249_999)


def test_from_arrays_sorts_and_keeps_last() -> None:
    coords = [(2, 0), (0, 1), (2, 0), (5, 5)]  # unsorted, a duplicate, one outside
    index = ChunkIndex.from_arrays((2, 2), (3, 2), coords, [10, 20, 30, 40], [1, 2, 3, 4], 0)
    assert index.coords.tolist() == [[0, 1], [2, 0]]
    assert index.locate((2, 0)) == ChunkLocation(30, 3, 0)
    assert index.locate((1, 1)) is None
    assert index.dense_offsets().tolist() == [[-1, 20], [-1, -1], [30, -1]]
    assert index.rows_of([(0, 1), (1, 0)]).tolist() == [0, -1]
    with pytest.raises(IndexError, match=r"\(3, 0\)"):
        index.locate((3, 0))
    with pytest.raises(IndexError):
        index.rows_of([(0, 2)])
    with pytest.raises(ValueError, match="dimension"):
        index.locate((1,))
    assert not index.coords.flags.writeable


def test_updated_merges_and_regrids() -> None:
    index = ChunkIndex.from_arrays((1, 1), (2, 2), [(0, 0), (1, 1)], [1, 2], [8, 8], [0, 0])
    new = index.updated({(0, 0): None, (2, 3): ChunkLocation(7, 9, 1)}, (3, 4))
    assert dict(iter(new)) == {(1, 1): ChunkLocation(2, 8, 0), (2, 3): ChunkLocation(7, 9, 1)}
    limited = index.updated({}, (3, 4), limit=(1, 4))  # row 1 was cut off by a shrink
    assert limited.nwritten == 1 and limited.locate((1, 1)) is None


def test_one_chunk_iter_pass_for_100k_chunks(h5: h5py.File, monkeypatch) -> None:
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((2,))
    dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)  # allocates every chunk at once: fast
    dcpl.set_fill_time(h5d.FILL_TIME_NEVER)
    space = h5s.create_simple((200_000,), (h5s.UNLIMITED,))
    dsid = h5d.create(h5.id, b"big", h5t.NATIVE_INT8, space, dcpl=dcpl)

    class Spy:
        """Lets chunk_iter through (counted) and nothing that looks chunks up one by one."""

        calls = 0

        def chunk_iter(self, callback: Any) -> None:
            Spy.calls += 1
            dsid.chunk_iter(callback)

        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the index build called {name}")

    index = ChunkIndex.build(Spy(), (200_000,), (2,))
    assert Spy.calls == 1 and index.nwritten == 100_000
    last = dsid.get_chunk_info(99_999)
    assert index.locate((99_999,)) == (last.byte_offset, last.size, last.filter_mask)

    builds = []
    real_build = ChunkIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        ChunkIndex, "build", classmethod(lambda cls, *a: builds.append(1) or real_build(cls, *a))
    )
    ds = Dataset(dsid)
    assert all(ds.chunk_is_written((i,)) for i in range(0, 100_000, 997))
    assert ds.chunk_location((12_345,)) == index.locate((12_345,))
    ds.chunk_index()
    assert len(builds) == 1


def test_collect_in_batches(h5: h5py.File, monkeypatch) -> None:
    monkeypatch.setattr(chunkindex, "COLLECT_BATCH", 3)
    ds = make(h5, (5, 6), (1, 2))
    ds.write((), values((5, 6)))
    assert_exact(ds)


# ----------------------------------------------------------------------------- staleness

WRITE_KEYS = [  # 2-D dataset (10, 7), chunks (3, 4): keys of every kind h5py accepts
    np.s_[4, 5],
    np.s_[-1, 0:2],
    np.s_[0:10:4, 5],  # step > chunk: rows 0, 4, 8 -> chunk rows 0, 1, 2
    np.s_[1:10:7, :],  # step > chunk: chunk rows 0 and 2, not 1
    np.s_[..., 6],
    np.s_[[1, 7, 9], 1:3],
    np.s_[np.array([False, True] * 5), 4],
    np.s_[2:2, :],  # empty: nothing written
]


@pytest.mark.parametrize("key", WRITE_KEYS, ids=repr)
def test_pipeline_write_is_tracked(h5: h5py.File, key: Any) -> None:
    ds = make(h5, (10, 7), (3, 4))
    ds.write(np.s_[9, 6], 1.0)
    assert_exact(ds)  # the index is built
    target = np.zeros((10, 7))
    target[key] = 1.0
    ds.write(key, target[key])
    assert_exact(ds)


def test_pipeline_write_with_a_mask(h5: h5py.File) -> None:
    ds = make(h5, (10, 7), (3, 4))
    ds.write(np.s_[0, 0], 1.0)
    assert ds.chunk_index().nwritten == 1
    mask = np.zeros((10, 7), dtype=bool)
    mask[[4, 9], [6, 0]] = True
    ds.write(mask, np.ones(2))
    assert_exact(ds)


def test_pipeline_rewrite_moves_filtered_chunks(h5: h5py.File) -> None:
    ds = make(h5, (40,), (10,), "zlib")
    ds.write((), values((40,), 0))
    before = ds.chunk_location((1,))
    ds.write(np.s_[12:18], np.zeros(6))  # compresses better: the chunk shrinks
    assert_exact(ds)
    assert ds.chunk_location((1,)) != before


def test_write_all_is_tracked(h5: h5py.File) -> None:
    ds = make(h5, (6, 6), (4, 4), "zlib")
    assert ds.chunk_index().nwritten == 0
    ds.write_all(values((6, 6), 3))
    assert_exact(ds)


def test_raw_write_is_tracked(h5: h5py.File) -> None:
    ds = make(h5, (12, 5), (4, 5), "zlib")
    ds.write(np.s_[0:4], values((4, 5)))
    before = ds.chunk_location((0, 0))
    assert ds.chunk_index().nwritten == 1 and before is not None
    new = zlib.compress(values((4, 5), 2).tobytes(), 1)  # what HDF5's deflate filter stores
    bigger = zlib.compress(values((4, 5), 4).tobytes(), 1)
    assert len(bigger) > before.size
    ds.write_raw_chunk((2, 0), new)
    ds.write_raw_chunk((0, 0), bigger)
    assert_exact(ds)
    assert ds.read_raw_chunk((0, 0)) == (bigger, 0)
    np.testing.assert_array_equal(ds.read(np.s_[8:12]), values((4, 5), 2))
    np.testing.assert_array_equal(ds.read(np.s_[0:4]), values((4, 5), 4))


def test_invalidate_after_outside_write(h5: h5py.File) -> None:
    ds = make(h5, (12, 5), (4, 5))
    assert ds.chunk_index().nwritten == 0
    h5py.Dataset(ds.dsid)[4] = 1.0  # bypasses ds
    assert not ds.chunk_is_written((1, 0))  # ds cannot know...
    ds.invalidate_chunk_index()  # ...until told
    assert_exact(ds)


def test_grow_then_write(h5: h5py.File) -> None:
    ds = make(h5, (5, 5), (2, 2), "zlib")
    ds.write(np.s_[0:5, 0:5], values((5, 5)))
    assert_exact(ds)
    ds.resize((9, 8))  # grows along both axes: the grid's strides change
    assert ds.chunk_is_written((2, 2)) and not ds.chunk_is_written((4, 3))
    ds.write(np.s_[8, 7], 2.0)
    assert_exact(ds)


def test_shrink_deletes_and_rewrites(h5: h5py.File) -> None:
    ds = make(h5, (40,), (10,), "zlib")
    ds.write((), values((40,), 1))
    before = ds.chunk_index()
    ds.resize((25,))  # chunk 3 deleted, chunk 2 cut: HDF5 rewrites it
    assert ds.chunk_grid == (3,)
    with pytest.raises(IndexError):
        ds.chunk_is_written((3,))
    assert_exact(ds)
    assert ds.chunk_location((2,)) != before.locate((2,))
    ds.resize((40,))  # deleted chunks stay deleted when the grid grows back
    assert not ds.chunk_is_written((3,))
    assert ds.chunk_location((3,)) is None
    assert_exact(ds)


def test_shrink_grow_without_snapshot(h5: h5py.File) -> None:
    ds = make(h5, (6, 6), (2, 2))
    ds.write((), values((6, 6)))
    assert ds.chunk_is_written((2, 2))
    ds.resize((3, 6))
    ds.resize((6, 6))
    assert not ds.chunk_is_written((2, 2)) and ds.chunk_is_written((1, 2))
    ds.write(np.s_[5, 5], 1.0)
    assert ds.chunk_is_written((2, 2)) and not ds.chunk_is_written((2, 1))
    assert_exact(ds)
    ds.write(np.s_[5, 0], 1.0)  # known only to the bookkeeping, then deleted
    ds.resize((4, 6))
    ds.resize((6, 6))
    assert not ds.chunk_is_written((2, 0))
    assert_exact(ds)


def test_resize_of_early_allocated_dataset(h5: h5py.File) -> None:
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((4,))
    dcpl.set_alloc_time(h5d.ALLOC_TIME_EARLY)
    space = h5s.create_simple((8,), (h5s.UNLIMITED,))
    ds = Dataset(h5d.create(h5.id, b"early", h5t.NATIVE_DOUBLE, space, dcpl=dcpl))
    assert ds.chunk_is_written((1,))
    ds.resize((20,))  # HDF5 allocates the new chunks at once
    assert ds.chunk_is_written((4,))
    assert_exact(ds)


def test_big_write_drops_the_index(h5: h5py.File, monkeypatch) -> None:
    monkeypatch.setattr(rawchunks, "OVERLAY_MIN", 2)
    ds = make(h5, (40,), (4,), "zlib")
    ds.write(np.s_[0:4], values((4,)))
    assert ds.chunk_index().nwritten == 1
    ds.write(np.s_[4:40], values((36,), 2))  # 9 chunks > the overlay's bound
    assert ds.raw_chunks()._base is None
    assert_exact(ds)


def test_resolve_budget_then_rebuild(h5: h5py.File, monkeypatch) -> None:
    monkeypatch.setattr(rawchunks, "RESOLVE_BUDGET", 2)
    ds = make(h5, (40,), (4,), "zlib")
    ds.write((), values((40,), 4))
    index = ds.chunk_index()
    for i in range(10):
        ds.write(np.s_[4 * i : 4 * i + 4], np.zeros(4))  # compresses better: chunks move
    calls = []
    real = ChunkIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        ChunkIndex, "build", classmethod(lambda cls, *a: calls.append(1) or real(cls, *a))
    )
    assert ds.chunk_location((0,)) != index.locate((0,))  # resolved one by one
    ds.chunk_location((1,))
    assert not calls
    ds.chunk_location((2,))  # over budget: one rebuild instead
    assert len(calls) == 1
    assert_exact(ds)
    assert len(calls) == 1


def test_cached_pipeline_write_is_read_raw(h5: h5py.File) -> None:
    ds = make(h5, (20,), (5,))
    assert not ds.chunk_is_written((1,))
    ds.write(np.s_[5:10], np.arange(5.0))  # may sit in HDF5's chunk cache
    data, mask = ds.read_raw_chunk((1,))
    assert mask == 0 and np.frombuffer(data, "<f8").tolist() == [0, 1, 2, 3, 4]
    assert ds.read_raw_range((1,), 16, 8) == np.float64(2).tobytes()


# ----------------------------------------------------------------------------- reads


def filled(path: Path, filt: str, **kw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape, chunks = (9, 10), (4, 3)
    with h5py.File(path, "w", **kw) as f:
        d = f.create_dataset("d", shape=shape, chunks=chunks, dtype="<f8", **FILTERS[filt])
        d[0:8, 2:10] = values((8, 8), 4)
    return shape, chunks


@pytest.mark.parametrize("filt", list(FILTERS))
@pytest.mark.parametrize("userblock", [0, 1024])
def test_pread_equals_read_direct_chunk(tmp_path: Path, filt: str, userblock: int) -> None:
    path = tmp_path / "r.h5"
    shape, chunks = filled(path, filt, userblock_size=userblock)
    with h5py.File(path, "r") as f, h5py.File(path, "r", driver="core") as g:
        ds, core = Dataset(f["d"].id), Dataset(g["d"].id)
        assert ds.raw_chunks().uses_pread and not core.raw_chunks().uses_pread
        for coords in itertools.product(*(range(n) for n in grid_shape(shape, chunks))):
            start = tuple(c * s for c, s in zip(coords, chunks, strict=True))
            if not ds.dsid.get_chunk_info_by_coord(start).size:
                for reader in (ds, core):
                    with pytest.raises(NoSuchChunkError, match=rf"\({coords[0]}, {coords[1]}\)"):
                        reader.read_raw_chunk(coords)
                continue
            mask, expected = ds.dsid.read_direct_chunk(start)
            assert ds.read_raw_chunk(coords) == core.read_raw_chunk(coords) == (expected, mask)
            part = slice(3, min(len(expected), 19))
            for reader in (ds, core):
                got = reader.read_raw_range(coords, part.start, part.stop - part.start)
                assert got == expected[part]
                assert reader.read_raw_range(coords, len(expected), 0) == b""


@pytest.mark.parametrize("filt", list(FILTERS))
def test_read_raw_chunk_into(tmp_path: Path, filt: str) -> None:
    path = tmp_path / "r.h5"
    shape, chunks = filled(path, filt)
    with h5py.File(path, "r") as f, h5py.File(path, "r", driver="core") as g:
        ds, core = Dataset(f["d"].id), Dataset(g["d"].id)
        for coords in itertools.product(*(range(n) for n in grid_shape(shape, chunks))):
            start = tuple(c * s for c, s in zip(coords, chunks, strict=True))
            size = ds.dsid.get_chunk_info_by_coord(start).size
            buffer = bytearray(max(size, 1))
            if not size:  # unwritten: nothing to read straight
                assert ds.read_raw_chunk_into(coords, buffer) is None
                continue
            mask, expected = ds.dsid.read_direct_chunk(start)
            assert ds.read_raw_chunk_into(coords, buffer) == mask
            assert bytes(buffer) == expected
            # Another size than the stored one, or no pread (core driver): the caller's job.
            assert ds.read_raw_chunk_into(coords, bytearray(size + 1)) is None
            assert core.read_raw_chunk_into(coords, bytearray(size)) is None


def test_file_access_given_or_asked(tmp_path: Path) -> None:
    path = tmp_path / "r.h5"
    filled(path, "none")
    with h5py.File(path, "r") as f, h5py.File(path, "r", driver="core") as g:
        access = file_access(f.id)
        assert not access.writable and access.fd is not None
        assert not file_access(g.id).writable and file_access(g.id).fd is None
        # Handed down (a File asks once for all its datasets) or asked of HDF5: the same.
        given, asked = Dataset(f["d"].id, access), Dataset(f["d"].id)
        assert given.raw_chunks().uses_pread and asked.raw_chunks().uses_pread
        assert given.read_raw_chunk((1, 2)) == asked.read_raw_chunk((1, 2))
    with h5py.File(path, "r+") as f:
        access = file_access(f.id)
        assert access.writable and access.fd is None
        assert not Dataset(f["d"].id, access).raw_chunks().uses_pread


def test_writable_file_reads_through_hdf5(tmp_path: Path) -> None:
    path = tmp_path / "w.h5"
    filled(path, "none")
    with h5py.File(path, "r+") as f:
        ds = Dataset(f["d"].id)
        assert not ds.raw_chunks().uses_pread
        data, mask = ds.read_raw_chunk((1, 2))
        assert mask == 0 and np.frombuffer(data, "<f8").reshape(4, 3)[0, 0] == f["d"][4, 6]


def test_fast_and_general_paths_agree(tmp_path: Path) -> None:
    path = tmp_path / "r.h5"
    filled(path, "none")
    with h5py.File(path, "r") as f:
        ds = Dataset(f["d"].id)
        raw = ds.raw_chunks()
        raw.index()
        assert raw.read is not raw._read  # the fast closures are installed
        for coords in [(0, 1), (np.int64(0), 1), [0, 1], (1, 0)]:
            assert raw.location(coords) == raw._location(coords)
            assert raw.is_written(coords) == raw._is_written(coords)
        assert raw.read((0, 1)) == raw._read([0, 1])
        assert raw.read_range((0, 1), 8, 8) == raw._read_range((0, 1), 8, 8)


# ----------------------------------------------------------------------------- errors


def test_errors(tmp_path: Path) -> None:
    path = tmp_path / "e.h5"
    filled(path, "none")
    with h5py.File(path, "r") as f:
        ds = Dataset(f["d"].id)
        for bad in [(3, 0), (0, 4), (-1, 0)]:
            with pytest.raises(IndexError, match=rf"\({bad[0]}, {bad[1]}\).*\(3, 4\)"):
                ds.chunk_location(bad)
            with pytest.raises(IndexError):
                ds.read_raw_range(bad, 0, 8)
        with pytest.raises(ValueError, match="dimension"):
            ds.chunk_is_written((0,))
        with pytest.raises(TypeError, match="ints"):
            ds.read_raw_chunk((0.5, 1))
        with pytest.raises(ValueError, match=r"\[90, 98\).*96 stored bytes"):
            ds.read_raw_range((0, 1), 90, 8)
        with pytest.raises(ValueError, match="outside chunk"):
            ds.read_raw_range((0, 1), -1, 8)
        with pytest.raises(FileModeError, match=r"\(0, 1\).*read-only"):
            ds.write_raw_chunk((0, 1), b"\0" * 96)
    with h5py.File(path, "r+") as f:
        ds = Dataset(f["d"].id)
        with pytest.raises(ValueError, match=r"must be 96 bytes, not 95"):
            ds.write_raw_chunk((0, 1), b"\0" * 95)
        with pytest.raises(ValueError, match="empty"):
            ds.write_raw_chunk((0, 1), b"")
        with pytest.raises(TypeError, match="bytes-like"):
            ds.write_raw_chunk((0, 1), "text")
        with pytest.raises(ValueError, match="contiguous"):
            ds.write_raw_chunk((0, 1), np.zeros((24, 2))[:, 0])
        with pytest.raises(IndexError):
            ds.write_raw_chunk((2, 4), b"\0" * 96)
        with pytest.raises(NoSuchChunkError, match=r"\(2, 0\)"):
            ds.read_raw_range((2, 0), 0, 8)
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_layout(h5d.COMPACT)
        h5d.create(f.id, b"compact", h5t.NATIVE_DOUBLE, h5s.create_simple((3,)), dcpl=dcpl)
        f.create_dataset("contiguous", data=np.arange(3.0))
        for name in ("compact", "contiguous"):
            plain = Dataset(f[name].id)
            with pytest.raises(NotChunkedError, match=name):
                plain.chunk_index()
            with pytest.raises(NotChunkedError):
                plain.read_raw_chunk((0,))


def test_closed_file(tmp_path: Path) -> None:
    path = tmp_path / "c.h5"
    filled(path, "none")
    f = h5py.File(path, "r")
    ds = Dataset(f["d"].id)
    assert ds.read_raw_range((0, 1), 0, 8)
    f.close()
    with pytest.raises(ClosedNodeError):
        ds.read_raw_range((0, 1), 0, 8)
    with pytest.raises(ClosedNodeError):
        ds.read_raw_chunk((0, 1))


# ----------------------------------------------------------------------------- selections

SELECTIONS = [
    np.s_[()],
    np.s_[...],
    np.s_[3],
    np.s_[-2, 1:6:2],
    np.s_[1:9:5, ::7],
    np.s_[::-3, 2],
    np.s_[[0, 5, 8], ...],
    np.s_[..., [1, 2, 9]],
    np.s_[np.arange(9) % 4 == 0, 3:4],
    np.s_[4:4],
    np.s_[[], 1],
    np.s_["field", 2:7],
]


@pytest.mark.parametrize("key", SELECTIONS, ids=repr)
def test_touched_chunks_match_numpy(key: Any) -> None:
    shape, chunks = (9, 10), (2, 3)
    marked = np.zeros(shape, dtype=bool)
    plain = tuple(k for k in (key if isinstance(key, tuple) else (key,)) if not isinstance(k, str))
    marked[plain] = True
    expected = {tuple(p) for p in (np.argwhere(marked) // chunks).tolist()}
    found = touched_chunks(key, shape, chunks)
    assert found is not None
    assert set(chunk_keys(found)) == expected


def test_touched_chunks_mask_and_unknown() -> None:
    mask = np.zeros((4, 4), dtype=bool)
    mask[3, 0] = mask[0, 3] = True
    found = touched_chunks(mask, (4, 4), (2, 2))
    assert set(chunk_keys(found)) == {(1, 0), (0, 1)}
    assert touched_chunks((Ellipsis, Ellipsis), (4, 4), (2, 2)) is None
    assert touched_chunks((0, 0, 0), (4, 4), (2, 2)) is None
    assert touched_chunks(np.zeros((2, 2), dtype=int), (4, 4), (2, 2)) is None


def test_threads_share_one_lazy_build(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.h5"
    filled(path, "none")
    builds = []
    real = rawchunks.RawChunks._build
    monkeypatch.setattr(rawchunks.RawChunks, "_build",
                        lambda self: builds.append(1) or real(self))
    with h5py.File(path, "r") as f:
        ds = Dataset(f["d"].id)
        expected = {c: ds.dsid.read_direct_chunk((c[0] * 4, c[1] * 3))[1] for c in [(0, 1), (1, 3)]}
        ds = Dataset(f["d"].id)  # fresh: nothing built yet
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda c: ds.read_raw_chunk(c)[0], [(0, 1), (1, 3)] * 50))
    assert got == [expected[(0, 1)], expected[(1, 3)]] * 50
    assert len(builds) == 1


def test_shape_is_cached_only_for_read_only_files(tmp_path: Path) -> None:
    path = tmp_path / "s.h5"
    filled(path, "none")
    with h5py.File(path, "r") as f:
        ds = Dataset(f["d"].id)
        assert ds.shape == (9, 10) and ds.chunks == (4, 3)
        assert ds._shape == (9, 10)  # a read-only file cannot change
    with h5py.File(path, "r+") as f:
        f.create_dataset("e", shape=(2,), maxshape=(None,), chunks=(2,), dtype="f8")
        ds = Dataset(f["e"].id)
        assert ds.shape == (2,)
        f["e"].resize((5,))  # through another object
        assert ds.shape == (5,)
