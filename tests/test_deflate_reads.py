"""Deflate (zlib) chunks inflated in the file's thread pool (codecs/deflate.py).

Oracle: h5py (HDF5's own deflate and shuffle filters) on files written by PyTables and by
h5py, shuffle on and off, every kind of item, partial edge chunks, chunks whose filter mask
says a filter was skipped, and damaged chunks (``HDF5ExtError`` naming the chunk, as for
Blosc2 chunks).  A spy on the decoder proves which reads the pool served.
"""

from __future__ import annotations

import threading
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.chunked.engine import RawKind
from hyperslab.codecs import deflate
from hyperslab.codecs.deflate import DeflatePipeline, unshuffle_into
from hyperslab.errors import HDF5ExtError

ROWS, COLS = 1100, 130  # 1.1 MB of float64: enough chunks for the pool; a partial edge
CHUNKS = (100, 130)
READS: list[Any] = [
    (slice(None),),
    (slice(7, 1093),),
    (slice(None, None, 3), slice(5, 100)),
    (slice(1000, None),),  # the partial edge chunk
]


@pytest.fixture
def decoded_in(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that inflate chunks (one per chunk)."""
    names: list[str] = []
    real = DeflatePipeline.decode_into

    def spy(self: DeflatePipeline, stored: Any, mask: int, out: Any) -> None:
        names.append(threading.current_thread().name)
        real(self, stored, mask, out)

    monkeypatch.setattr(DeflatePipeline, "decode_into", spy)
    return names


def _data(dtype: Any, shape: tuple[int, ...] = (ROWS, COLS)) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(7)
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 50, size=(*shape, dtype.itemsize), dtype=np.uint8)
    data = raw.view(dtype).reshape(shape + dtype.shape) if dtype.kind != "b" else raw[..., 0] > 20
    if dtype.kind in "fc":
        data = np.round(rng.normal(size=shape), 2).astype(dtype)
    return np.ascontiguousarray(data)


def _oracle(path: Path, name: str, pytables: bool) -> np.ndarray[Any, Any]:
    """The dataset read by PyTables, or by h5py (which cuts strings at their first NUL:
    HDF5 converts null-terminated strings; PyTables and hyperslab's raw paths do not)."""
    if pytables:
        with tables.open_file(str(path), "r") as f:
            return np.asarray(f.get_node("/" + name).read())
    with h5py.File(path, "r") as h:
        return np.asarray(h[name][...])


def _check(path: Path, name: str, names: list[str], pool: bool = True,
           pytables: bool = False) -> None:
    oracle = _oracle(path, name, pytables)
    for mode in ("r", "a"):
        names.clear()
        with hyperslab.open_file(path, mode, max_threads=3) as f:
            node = f.get_node("/" + name)
            assert node._engine.kind is (RawKind.DEFLATE if pool else None)
            for key in READS[: 2 if oracle.ndim == 1 else None]:
                got = node[key]
                assert got.dtype == oracle.dtype, (got.dtype, oracle.dtype)
                assert np.array_equal(got, oracle[key]), (mode, key)
        used = {n for n in names if n != threading.current_thread().name}
        assert bool(used) is pool, names  # the pool inflated the chunks (or nothing did)


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("dtype", ["i1", "<i2", ">i4", "<f8", ">f8", "c16", "S7", "?",
                                   "u8"])
def test_pytables_zlib_arrays(tmp_path: Path, decoded_in: list[str], dtype: str,
                              shuffle: bool) -> None:
    """Arrays of strings stay with HDF5: h5py cuts them at their first NUL, PyTables (and
    the pool) would not, and every read of an array must give the same values."""
    path = tmp_path / "a.h5"
    rows = CHUNKS[0] * 8 // np.dtype(dtype).itemsize  # chunks of 104 KB at least, 1 MB
    data = _data(dtype, (rows * 21 // 2, COLS))  # and an edge chunk
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "x", obj=data, chunkshape=(rows, COLS),
                        filters=tables.Filters(4, "zlib", shuffle=shuffle))
    if dtype == "S7":
        _check(path, "x", decoded_in, pool=False)
    else:
        _check(path, "x", decoded_in, pytables=True)


def test_pytables_subarray_atoms(tmp_path: Path, decoded_in: list[str]) -> None:
    path = tmp_path / "a.h5"
    data = _data("<f4", (ROWS, 3))
    with tables.open_file(str(path), "w") as f:
        earray = f.create_earray("/", "x", tables.Float32Atom(shape=(3,)), (0, 100),
                                 filters=tables.Filters(1, "zlib"), chunkshape=(64, 100))
        earray.append(np.repeat(data[:, None, :], 100, axis=1))
    _check(path, "x", decoded_in, pytables=True)


@pytest.mark.parametrize("shuffle", [True, False])
def test_h5py_gzip_datasets(tmp_path: Path, decoded_in: list[str], shuffle: bool) -> None:
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as h:
        h.create_dataset("x", data=_data("<i8"), chunks=(33, 70), compression="gzip",
                         shuffle=shuffle)
    _check(path, "x", decoded_in)


def test_pytables_table_rows(tmp_path: Path, decoded_in: list[str]) -> None:
    path = tmp_path / "a.h5"
    dtype = np.dtype([("id", "<i8"), ("v", "<f4"), ("flag", "u1"), ("code", "S5"),
                      ("pair", "<i2", (2,))])
    rows = np.zeros(60_000, dtype)
    rows["id"] = np.arange(len(rows))
    rows["v"] = rows["id"] / 7
    rows["flag"] = rows["id"] % 3
    rows["code"] = np.char.mod("c%03d", rows["id"] % 500).astype("S5")
    rows["pair"] = rows["id"][:, None] % 11
    with tables.open_file(str(path), "w") as f:
        f.create_table("/", "t", rows, filters=tables.Filters(2, "zlib"), chunkshape=5000)
    with h5py.File(path, "r") as h:
        oracle = h["t"][...]
    with hyperslab.open_file(path, max_threads=3) as f:
        table = f.root.t
        assert table._engine.kind is RawKind.DEFLATE
        for lo, hi in ((0, None), (13, 59_999), (55_000, None)):
            got = table.read(lo, hi)
            assert got.tobytes() == oracle[lo:hi].astype(got.dtype).tobytes()
        np.testing.assert_array_equal(table.read(field="v"), oracle["v"])
    assert {n for n in decoded_in if n != threading.current_thread().name}


def test_small_reads_and_items_stay_with_hdf5(tmp_path: Path, decoded_in: list[str]) -> None:
    path = tmp_path / "a.h5"
    data = _data("<f8")
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "x", obj=data, chunkshape=CHUNKS, filters=tables.Filters(1))
    with hyperslab.open_file(path, max_threads=3) as f:
        assert f.root.x[5, 7] == data[5, 7]
        np.testing.assert_array_equal(f.root.x[150:260], data[150:260])
    assert decoded_in == []  # HDF5's chunk cache serves them


@pytest.mark.parametrize("pipeline", ["fletcher32", "scaleoffset", "lzf"])
def test_other_pipelines_are_hdf5s(tmp_path: Path, decoded_in: list[str],
                                   pipeline: str) -> None:
    path = tmp_path / "a.h5"
    kwargs: dict[str, Any] = {"compression": "gzip", "shuffle": True}
    if pipeline == "fletcher32":
        kwargs["fletcher32"] = True
    elif pipeline == "scaleoffset":
        kwargs["scaleoffset"] = 0
    else:
        kwargs = {"compression": "lzf"}
    with h5py.File(path, "w") as h:
        h.create_dataset("x", data=_data("<i4"), chunks=CHUNKS, **kwargs)
    _check(path, "x", decoded_in, pool=False)


def _rewrite_chunk(path: Path, stored: bytes, mask: int = 0, chunk: tuple[int, ...] = (200, 0)
                   ) -> None:
    with h5py.File(path, "a") as h:
        h["x"].id.write_direct_chunk(chunk, stored, filter_mask=mask)


def _shuffled(values: np.ndarray[Any, Any]) -> bytes:
    size = values.dtype.itemsize
    return values.view(np.uint8).reshape(-1, size).T.tobytes()


@pytest.mark.parametrize("mask", [1, 2, 3])
def test_chunks_with_skipped_filters(tmp_path: Path, decoded_in: list[str], mask: int) -> None:
    path = tmp_path / "a.h5"
    data = _data("<f8")
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "x", obj=data, chunkshape=CHUNKS, filters=tables.Filters(3))
    chunk = np.ascontiguousarray(data[200:300] * 3)
    stored = chunk.tobytes() if mask & 1 else _shuffled(chunk)  # bit 0: shuffle skipped
    stored = stored if mask & 2 else zlib.compress(stored)  # bit 1: deflate skipped
    _rewrite_chunk(path, stored, mask)
    _check(path, "x", decoded_in)


def _damaged(tmp_path: Path, stored: bytes) -> Path:
    path = tmp_path / "a.h5"
    with tables.open_file(str(path), "w") as f:
        f.create_carray("/", "x", obj=_data("<f8"), chunkshape=CHUNKS,
                        filters=tables.Filters(3))
    _rewrite_chunk(path, stored)
    return path


@pytest.mark.parametrize("damage", ["garbage", "truncated", "short"])
def test_damaged_chunks_are_named(tmp_path: Path, decoded_in: list[str], damage: str) -> None:
    good = zlib.compress(_shuffled(_data("<f8")[200:300]))
    stored = {"garbage": b"\x78\x9c" + bytes(range(256)) * 4, "truncated": good[:-40],
              "short": zlib.compress(b"\x00" * 1000)}[damage]
    path = _damaged(tmp_path, stored)
    with h5py.File(path, "r") as h:
        if damage != "short":  # HDF5 returns garbage for a short one
            with pytest.raises(OSError):
                h["x"][...]
    for mode in ("r", "a"):
        with hyperslab.open_file(path, mode, max_threads=3) as f:
            with pytest.raises(HDF5ExtError, match=r"chunk at \(200, 0\) of dataset '/x'"):
                f.root.x[:]
            np.testing.assert_array_equal(f.root.x[300:], _data("<f8")[300:])


def test_trailing_bytes_after_the_stream_are_ignored(tmp_path: Path,
                                                     decoded_in: list[str]) -> None:
    chunk = _data("<f8")[200:300]
    path = _damaged(tmp_path, zlib.compress(_shuffled(chunk)) + b"tail")
    _check(path, "x", decoded_in)


def _hdf5_unshuffle(data: bytes, size: int) -> bytes:
    """HDF5's H5Z__filter_shuffle (decoding), byte by byte."""
    count = len(data) // size
    if size <= 1 or count <= 1:
        return data
    out = bytearray(data)
    for j in range(size):
        for i in range(count):
            out[i * size + j] = data[j * count + i]
    return bytes(out)


@pytest.mark.parametrize(("nbytes", "size", "keep"), [
    (48, 8, 48), (50, 8, 50), (50, 3, 50), (48, 8, 40), (50, 3, 41), (8, 8, 8), (15, 8, 15),
])
def test_unshuffle_matches_hdf5(nbytes: int, size: int, keep: int) -> None:
    data = bytes(np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8))
    out = np.zeros(keep, dtype=np.uint8)
    DeflatePipeline(size).decode_into(zlib.compress(data), 0, out)
    assert out.tobytes() == _hdf5_unshuffle(data, size)[:keep]
    flat = np.zeros(keep, dtype=np.uint8)
    if nbytes // size >= 2:
        unshuffle_into(data, size, flat)
        assert flat.tobytes() == out.tobytes()


@pytest.mark.parametrize(("steps", "expected"), [
    ([(1, 0, (4,))], DeflatePipeline(0)),
    ([(2, 1, (8,)), (1, 1, (1,))], DeflatePipeline(8)),
    ([(1, 0, ())], None),  # HDF5 refuses a deflate without its level
    ([(1, 0, (10,))], None),
    ([(2, 1, (8, 1)), (1, 1, (1,))], None),
    ([(2, 1, (8,)), (1, 1, (1,)), (3, 0, ())], None),  # fletcher32
    ([(1, 0, (4,)), (2, 1, (8,))], None),  # shuffle after deflate
    ([(32001, 0, ())], None),
    ([], None),
])
def test_which_pipelines(steps: list[Any], expected: DeflatePipeline | None) -> None:
    assert DeflatePipeline.from_steps(steps) == expected


def test_short_output_is_an_error() -> None:
    with pytest.raises(deflate.DeflateError, match="decodes to 8 bytes, not the 16"):
        DeflatePipeline(0).decode_into(zlib.compress(b"x" * 8), 0, np.zeros(16, np.uint8))
