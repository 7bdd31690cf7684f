"""Regular reads and writes through the chunk engine (raw chunks, parallel Blosc2).

Every test compares with NumPy on the same data, and files written through the fast path are
read back by h5py + hdf5plugin and PyTables.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.chunked.engine import RawKind
from hyperslab.errors import HDF5ExtError
from hyperslab.storage.datasets import Dataset

CODECS = ["blosc2", "blosc2:blosclz", "blosc2:lz4", "blosc2:lz4hc", "blosc2:zlib", "blosc2:zstd"]


def _no_pipeline_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any write through HDF5's filter pipeline fail the test."""
    def refuse(self: Dataset, key: Any, value: Any) -> None:
        raise AssertionError(f"unexpected pipeline write at {key!r}")
    monkeypatch.setattr(Dataset, "write", refuse)


def _cross_read(path: Path, name: str, expected: np.ndarray) -> None:
    with h5py.File(path) as h:
        np.testing.assert_array_equal(h[name][...], expected)
    with tables.open_file(path) as t:
        np.testing.assert_array_equal(t.get_node("/" + name)[...], expected)


@pytest.mark.parametrize("complib", CODECS)
@pytest.mark.parametrize("shuffle,bitshuffle", [(False, False), (True, False), (False, True)])
def test_whole_chunks_are_written_raw_with_every_codec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complib: str, shuffle: bool,
    bitshuffle: bool,
) -> None:
    path = tmp_path / "w.h5"
    data = np.arange(7 * 9 * 5, dtype="f4").reshape(7, 9, 5) / 3
    filters = hyperslab.Filters(complevel=4, complib=complib, shuffle=shuffle,
                                bitshuffle=bitshuffle)
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", hyperslab.Float32Atom(), shape=data.shape,
                                 chunkshape=(3, 4, 5), filters=filters)
        assert carray._engine.kind is RawKind.BLOSC2
        with monkeypatch.context() as m:
            _no_pipeline_writes(m)
            carray[...] = data  # edge chunks are whole too (padded)
        np.testing.assert_array_equal(carray[...], data)
    _cross_read(path, "c", data)


@pytest.mark.parametrize("dtype", ["i1", "u2", ">i4", "<f8", ">f8", "?", "S3", "c16"])
def test_dtypes_round_trip(tmp_path: Path, dtype: str) -> None:
    path = tmp_path / "d.h5"
    rng = np.random.default_rng(1)
    data = rng.integers(0, 100, size=(10, 6)).astype(dtype)
    filters = hyperslab.Filters(complevel=5, complib="blosc2:lz4")
    with hyperslab.open_file(path, "w") as f:
        atom = hyperslab.Atom.from_dtype(np.dtype(dtype))
        carray = f.create_carray("/", "c", atom, shape=data.shape, chunkshape=(4, 3),
                                 filters=filters)
        carray[...] = data
        np.testing.assert_array_equal(carray[...], data)
        np.testing.assert_array_equal(carray[3:9, 1:5], data[3:9, 1:5])
        assert carray[7, 2] == data[7, 2]
    _cross_read(path, "c", data)


def test_partial_chunks_mix_with_whole_ones(tmp_path: Path) -> None:
    path = tmp_path / "p.h5"
    rng = np.random.default_rng(2)
    model = np.zeros((23, 17), dtype="i8")
    filters = hyperslab.Filters(complevel=1, complib="blosc2:zstd")
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", hyperslab.Int64Atom(), shape=model.shape,
                                 chunkshape=(5, 4), filters=filters)
        for _ in range(40):
            r0, c0 = rng.integers(0, 23), rng.integers(0, 17)
            r1, c1 = rng.integers(r0 + 1, 24), rng.integers(c0 + 1, 18)
            value = rng.integers(-1000, 1000, size=(r1 - r0, c1 - c0))
            carray[r0:r1, c0:c1] = value
            model[r0:r1, c0:c1] = value
            np.testing.assert_array_equal(carray[...], model)
            r, c = rng.integers(0, 23), rng.integers(0, 17)
            assert carray[r, c] == model[r, c]
            assert carray[-r - 1, -c - 1] == model[-r - 1, -c - 1]
    _cross_read(path, "c", model)
    with hyperslab.open_file(path) as f:  # read-only: raw chunks come from os.pread
        np.testing.assert_array_equal(f.root.c[...], model)
        np.testing.assert_array_equal(f.root.c[3:19, 2:11], model[3:19, 2:11])
        for r, c in rng.integers(0, 17, size=(20, 2)):
            assert f.root.c[r, c] == model[r, c]


def test_a_direct_write_replaces_a_chunk_cached_by_hdf5(tmp_path: Path) -> None:
    path = tmp_path / "cache.h5"
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", hyperslab.Int32Atom(), shape=(8,), chunkshape=(4,),
                                 filters=hyperslab.Filters(complevel=5, complib="blosc2"))
        carray[1:3] = [1, 2]  # partial: through HDF5, which keeps the chunk in its cache
        carray[0:4] = [5, 6, 7, 8]  # whole: written raw
        np.testing.assert_array_equal(carray[0:4], [5, 6, 7, 8])
        carray[2:3] = [9]
        np.testing.assert_array_equal(carray[:], [5, 6, 9, 8, 0, 0, 0, 0])
        assert carray[2] == 9
    _cross_read(path, "c", np.array([5, 6, 9, 8, 0, 0, 0, 0], "i4"))


def test_unwritten_chunks_read_as_the_fill_value(tmp_path: Path) -> None:
    path = tmp_path / "fill.h5"
    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "e", hyperslab.Int16Atom(dflt=-3), shape=(0, 6),
                                 chunkshape=(4, 3), filters=hyperslab.Filters(5, "blosc2"))
        earray.truncate(10)
        earray[4:8, 0:3] = np.ones((4, 3))
        expected = np.full((10, 6), -3, "i2")
        expected[4:8, 0:3] = 1
        np.testing.assert_array_equal(earray[:], expected)
        assert earray[9, 5] == -3
        assert earray[5, 1] == 1
    _cross_read(path, "e", expected)


@pytest.mark.parametrize("complib", ["blosc2:lz4", "zlib", None])
def test_appends_go_through_the_engine(tmp_path: Path, complib: str | None) -> None:
    path = tmp_path / "a.h5"
    rng = np.random.default_rng(3)
    filters = hyperslab.Filters(5, complib) if complib else hyperslab.Filters()
    rows = []
    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "e", hyperslab.Float64Atom(), shape=(0, 7),
                                 chunkshape=(6, 7), filters=filters)
        for n in [1, 5, 6, 13, 2, 30]:
            block = rng.normal(size=(n, 7))
            earray.append(block)
            rows.append(block)
            model = np.concatenate(rows)
            np.testing.assert_array_equal(earray[:], model)
            assert earray[-1, 3] == model[-1, 3]
    _cross_read(path, "e", model)


def _two_at_a_time(monkeypatch: pytest.MonkeyPatch, cls: Any, name: str) -> set[int]:
    """Make each call of ``cls.name`` wait (at most 20 s) until another call runs at the
    same time, and return the threads the calls run in (filled as they run).

    Calls made one after the other, or in the caller's thread, fail the test.
    """
    barrier = threading.Barrier(2, timeout=20)
    threads: set[int] = set()
    real = getattr(cls, name)

    def paired(*args: Any, **kwargs: Any) -> Any:
        threads.add(threading.get_ident())
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pytest.fail(f"{name} ran alone: not two chunks at a time")
        return real(*args, **kwargs)

    monkeypatch.setattr(cls, name, paired)
    return threads


def test_big_chunks_are_compressed_in_parallel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperslab.codecs import cframe
    from hyperslab.nodes.files import file as file_module

    path = tmp_path / "big.h5"
    rng = np.random.default_rng(4)
    images = (rng.poisson(50, size=(6, 256, 512))).astype("u2")  # 256 KiB chunks: the pool
    # Two workers whatever the machine (six chunks then use the pool), each compressing
    # its chunk while the other one does.
    monkeypatch.setattr(file_module, "default_workers", lambda _limit=None: 2)
    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "img", hyperslab.UInt16Atom(), shape=(0, 256, 512),
                                 chunkshape=(1, 256, 512),
                                 filters=hyperslab.Filters(5, "blosc2:zstd"))
        with monkeypatch.context() as m:
            _no_pipeline_writes(m)
            m.setattr(Dataset, "read", lambda self, key=(): pytest.fail("pipeline read"))
            with monkeypatch.context() as paired:
                threads = _two_at_a_time(paired, cframe.FrameEncoder, "encode")
                earray.append(images)
            assert len(threads) == 2 and threading.get_ident() not in threads
            np.testing.assert_array_equal(earray.read(), images)
            np.testing.assert_array_equal(earray[1:5, 7:100, 3:], images[1:5, 7:100, 3:])
            buffer = np.zeros((4, 256, 512), dtype="u2")
            assert earray.read(1, 5, out=buffer) is buffer  # decoded straight into it
            np.testing.assert_array_equal(buffer, images[1:5])
            with pytest.raises(ValueError, match="does not match"):
                earray.read(1, 4, out=buffer)
        np.testing.assert_array_equal(earray[2], images[2])
        for c in range(6):
            earray[c] = images[5 - c]
        np.testing.assert_array_equal(earray[:], images[::-1])
    _cross_read(path, "img", images[::-1])


def test_many_small_chunks_are_read_through_hdf5(tmp_path: Path) -> None:
    """Below 128 KiB a chunk costs more in Python than in HDF5's C loop (measured)."""
    path = tmp_path / "small.h5"
    data = np.arange(4000.0).reshape(40, 100)
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", obj=data, chunkshape=(10, 10),
                                 filters=hyperslab.Filters(5, "blosc2"))
        engine = carray._engine
        assert not engine.serves_read(((0, 40), (0, 100)))
        assert engine.serves_read(((0, 20), (0, 20)))  # four chunks: the raw path
        np.testing.assert_array_equal(carray[...], data)
        np.testing.assert_array_equal(carray[3:17, 5:19], data[3:17, 5:19])


def test_bad_values_leave_the_data_intact(tmp_path: Path) -> None:
    path = tmp_path / "bad.h5"
    data = np.arange(40).reshape(8, 5)
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", obj=data, chunkshape=(4, 5),
                                 filters=hyperslab.Filters(5, "blosc2"))
        with pytest.raises(ValueError, match="broadcast"):
            carray[0:8] = np.ones((3, 5))
        with pytest.raises(ValueError, match="cannot be converted"):
            carray[0:4] = [["x"] * 5] * 4
        np.testing.assert_array_equal(carray[:], data)


def test_a_corrupt_chunk_raises_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.h5"
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", obj=np.arange(20.0), chunkshape=(10,),
                                 filters=hyperslab.Filters(5, "blosc2"))
        carray.write_chunk((10,), b"this is not a blosc2 frame at all" * 3)
        with pytest.raises(HDF5ExtError, match=r"\(10,\)"):
            carray[:]
        with pytest.raises(HDF5ExtError, match=r"\(10,\)"):
            carray[12]
        np.testing.assert_array_equal(carray[:10], np.arange(10.0))


@pytest.mark.parametrize("mode", ["r", "a"])
@pytest.mark.parametrize("complib", [None, "blosc2:lz4", "zlib"])
def test_single_items_match_numpy(tmp_path: Path, mode: str, complib: str | None) -> None:
    path = tmp_path / "items.h5"
    rng = np.random.default_rng(5)
    data = rng.normal(size=(13, 7, 3)).astype(">f8")
    filters = hyperslab.Filters(5, complib) if complib else hyperslab.Filters()
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "c", obj=data, chunkshape=(4, 2, 3), filters=filters)
    with hyperslab.open_file(path, mode) as f:
        carray = f.root.c
        for index in rng.integers(-3, 3, size=(30, 3)) * np.array([4, 2, 1]):
            key = tuple(int(i) for i in index)
            value = carray[key]
            assert value == data[key]
            assert value.dtype == np.dtype("f8")  # native byte order, as PyTables
        with pytest.raises(IndexError):
            carray[13, 0, 0]
        with pytest.raises(IndexError):
            carray[0, -8, 0]


def test_frames_of_other_layouts_are_read_as_the_filter_reads_them(tmp_path: Path) -> None:
    import blosc2

    path = tmp_path / "layouts.h5"
    block = np.arange(200.0).reshape(10, 20)
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", hyperslab.Float64Atom(), shape=(20, 20),
                                 chunkshape=(10, 20), filters=hyperslab.Filters(5, "blosc2"))
        # several inner chunks in one frame: valid for the filter, not a one-chunk frame
        frame = blosc2.asarray(block, chunks=(5, 10), blocks=(5, 5)).to_cframe()
        carray.write_chunk((10, 0), frame)
        carray.write_chunk((0, 0), blosc2.asarray(block + 1, chunks=(10, 20)).to_cframe())
        np.testing.assert_array_equal(carray[10:], block)
        assert carray[13, 7] == block[3, 7]
        np.testing.assert_array_equal(carray[:10], block + 1)
    _cross_read(path, "c", np.concatenate([block + 1, block]))


def test_compound_records_through_the_engine(tmp_path: Path) -> None:
    """Table rows (compound elements) take the same raw path as arrays."""
    from concurrent.futures import ThreadPoolExecutor

    from hyperslab.chunked.access import read_selection, write_selection
    from hyperslab.chunked.engine import ChunkEngine

    path = tmp_path / "records.h5"
    dtype = np.dtype([("x", "<i4"), ("y", ">f8"), ("name", "S5")])
    rows = np.zeros(50, dtype=dtype)
    rows["x"] = np.arange(50)
    rows["y"] = np.arange(50) / 7
    rows["name"] = [f"r{i}".encode() for i in range(50)]
    with h5py.File(path, "w") as h:
        h.create_dataset("t", shape=(50,), maxshape=(None,), chunks=(8,), dtype=dtype,
                         **hdf5plugin.Blosc2(cname="lz4"))
    with h5py.File(path, "a") as h, ThreadPoolExecutor(2) as pool:
        dataset = Dataset(h["t"].id)
        engine = ChunkEngine(dataset, lambda: pool, 2)
        assert engine.kind is RawKind.BLOSC2
        write_selection(dataset, slice(0, 50), rows, engine)
        np.testing.assert_array_equal(read_selection(dataset, slice(3, 45), engine), rows[3:45])
        assert engine.read_item((17,)) == rows[17]
    with h5py.File(path) as h:
        np.testing.assert_array_equal(h["t"][:], rows)


def test_chunks_stored_without_the_filter_are_read_as_such(tmp_path: Path) -> None:
    """A chunk whose filter mask says Blosc2 was skipped holds the plain bytes."""
    path = tmp_path / "mask.h5"
    with hyperslab.open_file(path, "w") as f:
        carray = f.create_carray("/", "c", hyperslab.Int32Atom(), shape=(4, 6),
                                 chunkshape=(2, 6), filters=hyperslab.Filters(5, "blosc2"))
        carray[0:2] = np.ones((2, 6))
        plain = np.arange(12, dtype="<i4").reshape(2, 6)
        carray.write_chunk((2, 0), plain.tobytes(), filter_mask=1)
        assert carray.chunk_info((3, 5)).filter_mask == 1
        np.testing.assert_array_equal(carray[2:4], plain)
        assert carray[3, 4] == plain[1, 4]
    _cross_read(path, "c", np.concatenate([np.ones((2, 6), "i4"), plain]))


def test_chunks_too_big_for_hdf5s_cache_are_updated_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HDF5 would recompress such a chunk on every partial write, single-threaded."""
    path = tmp_path / "update.h5"
    rng = np.random.default_rng(6)
    model = np.full((5, 12), -1, dtype="i4")
    with hyperslab.open_file(path, "w", CHUNK_CACHE_SIZE=16) as f:  # 40-byte chunks
        carray = f.create_carray("/", "c", hyperslab.Int32Atom(dflt=-1), shape=model.shape,
                                 chunkshape=(2, 5), filters=hyperslab.Filters(3, "blosc2"))
        with monkeypatch.context() as m:
            _no_pipeline_writes(m)
            for _ in range(25):
                r0, c0 = rng.integers(0, 5), rng.integers(0, 12)
                r1, c1 = rng.integers(r0 + 1, 6), rng.integers(c0 + 1, 13)
                value = rng.integers(0, 100, size=(r1 - r0, c1 - c0))
                carray[r0:r1, c0:c1] = value
                model[r0:r1, c0:c1] = value
                np.testing.assert_array_equal(carray[...], model)
    _cross_read(path, "c", model)
