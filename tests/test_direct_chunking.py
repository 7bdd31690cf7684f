"""The direct chunking API: chunk_info, read_chunk, write_chunk and truncate (spec 003/000)."""

from __future__ import annotations

import doctest
from pathlib import Path

import blosc2
import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter for h5py)
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.errors import NoSuchChunkError, NotChunkAlignedError, NotChunkedError

SESSIONS = Path(__file__).parent / "sessions"
B2 = hyperslab.Filters(complib="blosc2:zstd", complevel=5)


@pytest.mark.parametrize("session", ["direct_chunking_post.txt", "direct_chunking_guide.txt"])
def test_spec_sessions_print_the_same(session: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(
        str(SESSIONS / session), module_relative=False, verbose=False, report=True,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 10
    assert result.failed == 0


def _frame(chunk: np.ndarray) -> bytes:
    return bytes(blosc2.asarray(chunk, chunks=chunk.shape).to_cframe())


@pytest.fixture
def carray_file(tmp_path: Path) -> Path:
    path = tmp_path / "c.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "c", obj=np.arange(60.0).reshape(6, 10), chunkshape=(4, 4),
                        filters=B2)
        f.create_carray("/", "empty", hyperslab.Int16Atom(dflt=7), shape=(8, 8),
                        chunkshape=(4, 4), filters=B2)
        f.create_array("/", "contiguous", np.arange(10))
        f.create_earray("/", "e", hyperslab.Float64Atom(), shape=(0, 10), chunkshape=(4, 4),
                        filters=B2)
    return path


def test_chunk_info_matches_h5py(carray_file: Path) -> None:
    with hyperslab.open_file(carray_file) as f, h5py.File(carray_file) as h:
        carray = f.root.c
        for coords in [(0, 0), (5, 9), (3, 7), (4, 8)]:
            info = carray.chunk_info(coords)
            start = tuple(c // 4 * 4 for c in coords)
            oracle = h["c"].id.get_chunk_info_by_coord(start)
            assert info == hyperslab.ChunkInfo(start, oracle.filter_mask, oracle.byte_offset,
                                               oracle.size)


def test_chunk_info_of_a_chunk_never_written(carray_file: Path) -> None:
    with hyperslab.open_file(carray_file) as f:
        assert f.root.empty.chunk_info((5, 6)) == (( 4, 4), None, None, None)


def test_errors_name_the_coordinates(carray_file: Path) -> None:
    with hyperslab.open_file(carray_file, "a") as f:
        carray = f.root.c
        with pytest.raises(NotChunkedError):
            f.root.contiguous.chunk_info((0,))
        with pytest.raises(NotChunkedError):
            f.root.contiguous.read_chunk((0,))
        with pytest.raises(NotChunkAlignedError, match=r"\(1, 4\)"):
            carray.read_chunk((1, 4))
        with pytest.raises(NotChunkAlignedError, match=r"\(4, 3\)"):
            carray.write_chunk((4, 3), b"x")
        with pytest.raises(IndexError, match=r"\(8, 0\)"):
            carray.chunk_info((8, 0))
        with pytest.raises(IndexError, match=r"\(0, -4\)"):
            carray.read_chunk((0, -4))
        with pytest.raises(ValueError, match="do not match"):
            carray.chunk_info((0,))
        with pytest.raises(NoSuchChunkError, match=r"\(4, 4\)"):
            f.root.empty.read_chunk((4, 4))
        with pytest.raises(KeyError):  # NoSuchChunkError is a KeyError too
            f.root.empty.read_chunk((0, 0))
        with pytest.raises(TypeError, match="non-enlargeable"):
            carray.truncate(3)
        with pytest.raises(ValueError, match="-1"):
            f.root.e.truncate(-1)
    with hyperslab.open_file(carray_file) as f:
        with pytest.raises(hyperslab.FileModeError):
            f.root.c.write_chunk((0, 0), b"x")
        np.testing.assert_array_equal(f.root.c[:], np.arange(60.0).reshape(6, 10))


def test_read_chunk_returns_stored_bytes(carray_file: Path) -> None:
    with hyperslab.open_file(carray_file) as f, h5py.File(carray_file) as h:
        raw = f.root.c.read_chunk((4, 8))
        assert raw == h["c"].id.read_direct_chunk((4, 8))[1]
        chunk = blosc2.ndarray_from_cframe(raw)[:].view("f8")
        np.testing.assert_array_equal(chunk[:2, :2], [[48.0, 49.0], [58.0, 59.0]])
        out = bytearray(len(raw) + 10)
        view = f.root.c.read_chunk((4, 8), out=out)
        assert isinstance(view, memoryview)
        assert bytes(view[: len(raw)]) == raw
        with pytest.raises(ValueError, match="too small"):
            f.root.c.read_chunk((4, 8), out=bytearray(3))


def test_write_chunk_then_read_everywhere(carray_file: Path) -> None:
    block = np.arange(16, dtype="i2").reshape(4, 4) + 100
    with hyperslab.open_file(carray_file, "a") as f:
        empty = f.root.empty
        empty.write_chunk((4, 0), _frame(block))
        assert empty.chunk_info((4, 0)).size == len(_frame(block))
        np.testing.assert_array_equal(empty[4:8, 0:4], block)
        np.testing.assert_array_equal(empty[0:4, 0:4], np.full((4, 4), 7, "i2"))
        assert empty[5, 1] == block[1, 1]
    expected = np.full((8, 8), 7, "i2")
    expected[4:8, 0:4] = block
    with h5py.File(carray_file) as h:
        np.testing.assert_array_equal(h["empty"][:], expected)
    with tables.open_file(carray_file) as t:
        np.testing.assert_array_equal(t.root.empty[:], expected)
    with hyperslab.open_file(carray_file) as f:
        np.testing.assert_array_equal(f.root.empty[:], expected)


def test_truncate_grows_without_writing_chunks(carray_file: Path) -> None:
    with hyperslab.open_file(carray_file, "a") as f:
        earray = f.root.e
        earray.truncate(9)
        assert earray.shape == (9, 10)
        assert earray.chunk_info((8, 9)) == ((8, 8), None, None, None)
        assert earray.size_on_disk == 0
        np.testing.assert_array_equal(earray[:], np.zeros((9, 10)))
        block = np.arange(16.0).reshape(4, 4)
        earray.write_chunk((8, 4), _frame(block))
        assert earray[8, 5] == 1.0
        earray.truncate(2)
        assert earray.shape == (2, 10)
        with pytest.raises(IndexError):
            earray.chunk_info((8, 4))
        earray.truncate((12,))
        assert earray[8, 5] == 0.0  # the chunk was dropped by the shrink
    with tables.open_file(carray_file) as t:
        assert t.root.e.shape == (12, 10)


def test_pytables_reads_what_we_write_and_we_read_pytables(tmp_path: Path) -> None:
    path = tmp_path / "pt.h5"
    data = np.arange(200, dtype="u2").reshape(20, 10)
    with tables.open_file(path, "w") as t:
        t.create_earray("/", "e", tables.UInt16Atom(), shape=(0, 10), chunkshape=(5, 10),
                        filters=tables.Filters(complib="blosc2:lz4", complevel=3))
        t.root.e.truncate(20)
        for start in range(0, 20, 5):
            t.root.e.write_chunk((start, 0), _frame(data[start:start + 5]))
    with tables.open_file(path) as t:
        theirs = [t.root.e.read_chunk((start, 0)) for start in range(0, 20, 5)]
    with hyperslab.open_file(path, "a") as f:
        earray = f.root.e
        np.testing.assert_array_equal(earray[:], data)
        assert [earray.read_chunk((start, 0)) for start in range(0, 20, 5)] == theirs
        earray.write_chunk((5, 0), _frame(data[5:10] + 1))
    with tables.open_file(path) as t:
        np.testing.assert_array_equal(t.root.e[5:10], data[5:10] + 1)
        info = t.root.e.chunk_info((5, 0))
    with hyperslab.open_file(path) as f:
        assert f.root.e.chunk_info((7, 3)) == info


def test_the_api_serves_pytables_tables(tmp_path: Path) -> None:
    """Tables open as UnImplemented until issue 4, but their chunks are reachable already."""
    path = tmp_path / "table.h5"

    class Record(tables.IsDescription):
        x = tables.Int32Col()
        y = tables.Float64Col()

    with tables.open_file(path, "w") as t:
        table = t.create_table("/", "t", Record, chunkshape=(16,),
                               filters=tables.Filters(5, "blosc2:lz4"))
        table.append([(i, i / 2) for i in range(40)])
        infos = [table.chunk_info((i,)) for i in (0, 17, 39)]
        raws = [table.read_chunk((i,)) for i in (0, 16, 32)]
    with hyperslab.open_file(path, "a") as f:
        table = f.root.t
        assert [table.chunk_info((i,)) for i in (0, 17, 39)] == infos
        assert [table.read_chunk((i,)) for i in (0, 16, 32)] == raws
        table.write_chunk((16,), raws[0])  # rows 0..15 again in place of 16..31
    with tables.open_file(path) as t:
        np.testing.assert_array_equal(t.root.t.cols.x[16:32], np.arange(16))
