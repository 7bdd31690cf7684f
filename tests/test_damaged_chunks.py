"""Damaged Blosc2 chunks and chunk addresses: hyperslab reads what h5py + hdf5plugin read.

Oracle: h5py with hdf5plugin's Blosc2 filter (the C-Blosc2 decoder).  For every damage,
through every raw read path (whole chunks, partial b2nd decoding, single items, read-only
``os.pread`` files and writable ones), hyperslab must return the filter's values where
the filter decodes the chunk, and raise ``HDF5ExtError`` where it refuses it: never other
values, never a raw exception.
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter for h5py)
import numpy as np
import pytest

import hyperslab
from hyperslab.codecs import cframe
from hyperslab.codecs.blosc2_filter import decode_chunk
from hyperslab.codecs.cframe import FrameError, parse_frame
from hyperslab.errors import HDF5ExtError
from hyperslab.storage.superblock import AllocationEnd, end_of_allocation

DATA = (np.arange(240) % 17).astype("<f8").reshape(20, 12)
CHUNK = (10, 0)  # the damaged chunk (rows 10..19)
META_AT = 87 + 20 + 5  # the b2nd metalayer's content in a frame with only that layer
READS: list[Any] = [
    (slice(None),),  # whole chunks (decode_into, or the library)
    (slice(10, 20),),
    (13, 4),  # one item (decode_item)
    (slice(10, 20), 3),  # a column: the blocks it touches (decode_region)
    (slice(11, 13), slice(2, 5)),
]
Edit = Callable[[bytearray, cframe.FrameLayout], None]


def _write(path: Path, blockshape: tuple[int, ...] = (5, 12)) -> None:
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "x", obj=DATA, chunkshape=(10, 12), blockshape=blockshape,
                        filters=hyperslab.Filters(5, "blosc2:lz4"))


def _damage(src: Path, dst: Path, edit: Edit) -> bytes:
    shutil.copy(src, dst)
    with h5py.File(dst, "a") as h:
        dsid = h["x"].id
        frame = bytearray(dsid.read_direct_chunk(CHUNK)[1])
        edit(frame, parse_frame(bytes(frame)))
        dsid.write_direct_chunk(CHUNK, bytes(frame))
    return bytes(frame)


def _oracle(path: Path) -> np.ndarray[Any, Any] | None:
    """The dataset as h5py + hdf5plugin read it; None if the filter refuses the chunk."""
    with h5py.File(path, "r") as h:
        try:
            return h["x"][...]
        except OSError:
            return None


def _assert_reads_match_the_filter(path: Path, oracle: np.ndarray[Any, Any] | None) -> None:
    for mode in ("r", "a"):
        with hyperslab.open_file(path, mode) as f:
            for key in READS:
                if oracle is None:
                    with pytest.raises(HDF5ExtError, match=r"\(10, 0\)"):
                        f.root.x[key]
                else:
                    got = np.asarray(f.root.x[key])
                    assert got.tobytes() == oracle[key].tobytes(), (mode, key)
            np.testing.assert_array_equal(f.root.x[:10], DATA[:10])  # the other chunk


def _set(offset: Callable[[cframe.FrameLayout], int], value: int) -> Edit:
    def edit(frame: bytearray, layout: cframe.FrameLayout) -> None:
        frame[offset(layout)] = value
    return edit


def _meta_dim(kind: int, axis: int, value: int) -> Edit:
    """Set dimension `axis` of the metalayer's shape (0), chunk shape (1) or block shape
    (2) of a 2-D b2nd frame."""
    at = META_AT + 4 + [0, 2 * 9 + 1, 2 * 9 + 1 + 2 * 5 + 1][kind] + axis * (9 if kind == 0 else 5)
    width = 8 if kind == 0 else 4

    def edit(frame: bytearray, layout: cframe.FrameLayout) -> None:
        frame[at + 1 : at + 1 + width] = value.to_bytes(width, "big")
    return edit


# ------------------------------------------------------------ special-value chunk flags
@pytest.mark.parametrize("flags", [0x10, 0x20, 0x30])
def test_a_flag_turning_a_chunk_special_reads_as_the_filter_reads_it(
    tmp_path: Path, flags: int
) -> None:
    """Byte 31 of the inner chunk flipped to zeros, NaNs or a repeated value: a repeated
    value must be exactly a header and one item, else the chunk is no such chunk (the
    filter refuses it; the item read returned compressed bytes as the value)."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "bad.h5",
            _set(lambda layout: layout.chunk_start + 31, flags))
    oracle = _oracle(tmp_path / "bad.h5")
    assert (oracle is None) == (flags == 0x30)
    _assert_reads_match_the_filter(tmp_path / "bad.h5", oracle)


def test_an_uninitialized_flag_on_stored_data_is_an_error(tmp_path: Path) -> None:
    """C-Blosc2 writes nothing for an uninitialized chunk: the filter returns whatever
    its buffer held.  hyperslab refuses such a chunk rather than guess."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "bad.h5",
            _set(lambda layout: layout.chunk_start + 31, 0x40))
    _assert_reads_match_the_filter(tmp_path / "bad.h5", None)


def _special_value_chunk(header_typesize: int, value: bytes) -> Edit:
    """Replace the inner chunk by a chunk of one repeated `value`."""
    def edit(frame: bytearray, layout: cframe.FrameLayout) -> None:
        head = struct.pack("<BBBBiii", 5, 1, 0x15, header_typesize, layout.chunk_nbytes,
                           layout.blocksize, 32 + len(value))
        chunk = head + bytes((0, 0, 0, 0, 0, 1, 0, 0)) + bytes(6) + bytes((0, 0x30)) + value
        tail = bytes(frame[layout.chunk_stop :])
        del frame[layout.chunk_start :]
        frame += chunk + tail
        struct.pack_into(">q", frame, 16, len(frame))
        struct.pack_into(">q", frame, 39, len(chunk))
    return edit


@pytest.mark.parametrize(("typesize", "value"), [(8, 2.5), (4, 2.5), (4, -1.0)])
def test_a_repeated_value_is_as_wide_as_the_filter_takes_it(
    tmp_path: Path, typesize: int, value: float
) -> None:
    """C-Blosc2 takes a repeated value's width from the chunk's size, not from its type
    size field: an 8-byte value under a 4-byte type size fills 8-byte items."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "v.h5",
            _special_value_chunk(typesize, struct.pack("<d", value)))
    oracle = _oracle(tmp_path / "v.h5")
    assert oracle is not None and np.all(oracle[10:] == value)
    _assert_reads_match_the_filter(tmp_path / "v.h5", oracle)


# ------------------------------------------------------------------ b2nd block shapes
@pytest.mark.parametrize(("kind", "axis", "value"), [
    (2, 1, 6),  # blocks (5, 6): 4 blocks of 240 bytes in a chunk of 2 of 480
    (2, 1, 4),  # blocks (5, 4): 6 blocks of 160 bytes in a chunk of 2 of 480
    (2, 0, 0),  # an empty block
    (0, 0, 12),  # shape (12, 12), not the dataset's chunk (10, 12)
    (1, 1, 24),  # chunk shape (10, 24), larger than the array it holds
])
def test_a_changed_metalayer_reads_as_the_filter_reads_it(
    tmp_path: Path, kind: int, axis: int, value: int
) -> None:
    """A b2nd metalayer whose block shape no longer matches the chunk's block size, or
    whose shapes no longer match the dataset, is never un-blocked with that geometry."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "bad.h5", _meta_dim(kind, axis, value))
    _assert_reads_match_the_filter(tmp_path / "bad.h5", _oracle(tmp_path / "bad.h5"))


def test_blocks_wider_than_the_chunk_are_an_error(tmp_path: Path) -> None:
    """Blocks (5, 24) in a (10, 12) chunk of two 480-byte blocks: C-Blosc2 decompresses
    960 bytes into a 1920-byte buffer and reads rows 5..9 from the part it never wrote
    (the filter returns whatever that memory held).  hyperslab refuses the chunk."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "bad.h5", _meta_dim(2, 1, 24))
    _assert_reads_match_the_filter(tmp_path / "bad.h5", None)


def test_the_parser_checks_block_sizes_and_shapes() -> None:
    frame = bytearray(cframe.FrameEncoder((10, 12), 8, codec=1, clevel=5, filter_code=1,
                                          blockshape=(5, 12)).encode(DATA[:10]))
    layout = parse_frame(bytes(frame))
    _meta_dim(2, 1, 6)(frame, layout)  # blocks of 240 bytes, the chunk's of 480
    with pytest.raises(FrameError, match=r"blocks are of 480 bytes.*240"):
        parse_frame(bytes(frame))
    with pytest.raises(ValueError, match=r"blocks \(5, 24\) do not fit"):
        broken = bytearray(frame)
        _meta_dim(2, 1, 24)(broken, layout)
        decode_chunk(bytes(broken), "<f8", (10, 12))
    out = np.empty((10, 12))
    good = bytes(cframe.FrameEncoder((10, 12), 8, codec=1, clevel=5, filter_code=1,
                                     blockshape=(5, 12)).encode(DATA[:10]))
    with pytest.raises(FrameError, match=r"shape \(10, 12\), not a chunk of shape \(12, 10\)"):
        cframe.decode_into(good, out.reshape(12, 10), chunkshape=(12, 10))


# ----------------------------------------------------------- bytes C-Blosc2 ignores
@pytest.mark.parametrize("edit", [
    _set(lambda layout: META_AT + 4, 0xD2),  # a msgpack marker of the b2nd shape
    _set(lambda layout: layout.chunk_start - 1, ord("9")),  # the dtype string: '|V9'
    _set(lambda layout: 88, 0xCE),  # the metalayers index size
    _set(lambda layout: 37, 0x10),  # the frame's data size (C-Blosc2 reads the chunk's)
    _set(lambda layout: 64, 3),  # compression threads
    _set(lambda layout: 56, 0x10),  # the frame's block size
], ids=["meta-marker", "dtype", "index-size", "frame-nbytes", "threads", "frame-blocksize"])
def test_bytes_the_filter_ignores_are_ignored(tmp_path: Path, edit: Edit) -> None:
    """The filter reads these frames exactly; so does hyperslab, on every path (partial
    decoding refused them before)."""
    _write(tmp_path / "ok.h5")
    _damage(tmp_path / "ok.h5", tmp_path / "odd.h5", edit)
    oracle = _oracle(tmp_path / "odd.h5")
    assert oracle is not None
    np.testing.assert_array_equal(oracle, DATA)
    _assert_reads_match_the_filter(tmp_path / "odd.h5", oracle)


# ----------------------------------------------------------------- filter parameters
def _patch_cd_values(path: Path, index: int, value: int) -> None:
    with h5py.File(path, "r") as h:
        cd = h["x"].id.get_create_plist().get_filter(0)[2]
    raw = bytearray(path.read_bytes())
    stored = struct.pack(f"<{len(cd)}I", *cd)
    at = raw.find(stored)
    assert at > 0 and raw.find(stored, at + 1) < 0
    struct.pack_into("<I", raw, at + 4 * index, value)
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(("index", "value"), [(7, 3), (2, 0), (4, 99), (8, 0)])
def test_damaged_filter_parameters_read_through_hdf5(
    tmp_path: Path, index: int, value: int
) -> None:
    """cd_values the Blosc2 parameters refuse (a rank without its dims, a zero type size,
    a level of 99): HDF5's filter decides, and its refusal is an HDF5ExtError."""
    path = tmp_path / "cd.h5"
    _write(path)
    _patch_cd_values(path, index, value)
    oracle = _oracle(path)
    for mode in ("r", "a"):
        with hyperslab.open_file(path, mode) as f:
            if oracle is None:
                with pytest.raises(HDF5ExtError):
                    f.root.x[:]
            else:
                np.testing.assert_array_equal(f.root.x[:], oracle)
            assert f.root.x.filters.complib == "blosc2:lz4"


# ------------------------------------------------------------- end of allocation
def _cut_allocation(path: Path, by: int) -> int:
    """Lower the end of allocation of a version-0 superblock by `by` bytes."""
    raw = bytearray(path.read_bytes())
    assert raw[:8] == b"\x89HDF\r\n\x1a\n" and raw[8] == 0 and raw[13] == 8
    eoa = int.from_bytes(raw[40:48], "little") - by
    raw[40:48] = eoa.to_bytes(8, "little")
    path.write_bytes(bytes(raw))
    return eoa


@pytest.mark.parametrize("complib", ["blosc2:lz4", None])
def test_chunks_past_the_end_of_allocation_are_refused_as_hdf5_refuses_them(
    tmp_path: Path, complib: str | None
) -> None:
    path = tmp_path / "eoa.h5"
    data = np.arange(4000.0)
    with hyperslab.open_file(path, "w") as f:
        filters = hyperslab.Filters(5, complib) if complib else None
        f.create_carray("/", "x", obj=data, chunkshape=(1000,), filters=filters)
    with h5py.File(path, "r") as h:
        ends = sorted(h["x"].id.get_chunk_info(i).byte_offset + h["x"].id.get_chunk_info(i).size
                      for i in range(4))
    _cut_allocation(path, path.stat().st_size - ends[-1] + 1)  # one byte of the last chunk
    with h5py.File(path, "r") as h:
        with pytest.raises(OSError, match="eoa"):
            h["x"][3000:]
    for mode in ("r", "a"):
        with hyperslab.open_file(path, mode) as f:
            np.testing.assert_array_equal(f.root.x[:3000], data[:3000])
            assert f.root.x[5] == 5.0
            for key in (slice(None), 3500, slice(2990, 3010), [5, 3999]):
                with pytest.raises(HDF5ExtError, match="eoa"):
                    f.root.x[key]


def test_table_rows_past_the_end_of_allocation_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    rows = np.zeros(4000, dtype=[("a", "<i8"), ("b", "<f4")])
    rows["a"] = np.arange(4000)
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", obj=rows, chunkshape=(1000,))
    _cut_allocation(path, 1)
    with hyperslab.open_file(path, "r") as f:
        np.testing.assert_array_equal(f.root.t.read_coordinates([1, 500])["a"], [1, 500])
        with pytest.raises(HDF5ExtError, match="eoa"):
            f.root.t.read_coordinates([1, 3999])
        with pytest.raises(HDF5ExtError, match="eoa"):
            f.root.t[:]


@pytest.mark.parametrize(("libver", "userblock"), [("earliest", 0), ("latest", 0),
                                                   ("earliest", 512), ("latest", 1024)])
def test_the_end_of_allocation_is_read_from_the_superblock(
    tmp_path: Path, libver: str, userblock: int
) -> None:
    path = tmp_path / "sb.h5"
    with h5py.File(path, "w", libver=libver, userblock_size=userblock) as h:
        h.create_dataset("x", data=np.arange(1000.0), chunks=(100,))
    with open(path, "rb") as fh:
        assert end_of_allocation(fh.fileno()) == path.stat().st_size
    with open(tmp_path / "empty", "wb+") as fh:
        assert end_of_allocation(fh.fileno()) is None


def test_the_end_of_allocation_is_read_again_when_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "grow.h5"
    with h5py.File(path, "w") as h:
        h.create_dataset("x", data=np.arange(10.0))
    size = path.stat().st_size
    with open(path, "rb") as fh:
        allocation = AllocationEnd(fh.fileno())
        assert allocation.value == size and allocation.covers(size)
        assert not allocation.covers(size + 100)
        with h5py.File(path, "a") as h:  # another writer grows the file
            h.create_dataset("y", data=np.arange(1000.0))
        assert allocation.covers(size + 100) and allocation.value == path.stat().st_size


# ------------------------------------------------------------------ a short fuzz
def _fuzz_file(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    datas = {
        "b2nd": (np.arange(240) // 3 % 50).astype("<f8").reshape(20, 12),
        "cube": (np.arange(480) % 7).astype("<i4").reshape(6, 8, 10),
        "plain": (np.arange(300) // 4).astype("<f8"),
        "zeros": np.zeros((20, 12)),
    }
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "b2nd", obj=datas["b2nd"], chunkshape=(10, 12),
                        blockshape=(5, 12), filters=hyperslab.Filters(5, "blosc2:lz4"))
        f.create_carray("/", "cube", obj=datas["cube"], chunkshape=(3, 4, 10),
                        blockshape=(2, 2, 5), filters=hyperslab.Filters(5, "blosc2:zstd"))
        f.create_carray("/", "plain", obj=datas["plain"], chunkshape=(100,),
                        filters=hyperslab.Filters(5, "blosc2:blosclz"))
        f.create_carray("/", "zeros", obj=datas["zeros"], chunkshape=(10, 12),
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    return datas


def test_flipped_frame_bytes_never_give_other_values_than_the_filter(tmp_path: Path) -> None:
    """Seeded: bits of one chunk's frame flipped (mostly in its headers and metalayers);
    every read touching that chunk returns the filter's values where the filter decodes
    the chunk, and where it does not, raises HDF5ExtError or returns the original values
    (a read of some blocks cannot see damage in the others).  HDF5ExtError is allowed
    where the filter decodes, too: for a geometry under which C-Blosc2 may read memory
    it never wrote, hyperslab refuses the chunk rather than guess."""
    pristine, work = tmp_path / "pristine.h5", tmp_path / "work.h5"
    datas = _fuzz_file(pristine)
    rng = np.random.default_rng(19)
    for _ in range(300):
        name = list(datas)[int(rng.integers(len(datas)))]
        data = datas[name]
        shutil.copy(pristine, work)
        with h5py.File(work, "a") as h:
            dsid = h[name].id
            start = tuple(int(rng.integers(-(-s // c))) * c
                          for s, c in zip(data.shape, h[name].chunks, strict=True))
            frame = bytearray(dsid.read_direct_chunk(start)[1])
            headers = parse_frame(bytes(frame)).chunk_start + 32  # frame and chunk headers
            for _ in range(int(rng.integers(1, 3))):
                at = int(rng.integers(headers if rng.random() < 0.7 else len(frame)))
                frame[min(at, len(frame) - 1)] ^= 1 << int(rng.integers(8))
            dsid.write_direct_chunk(start, bytes(frame))
            region = tuple(slice(a, a + c) for a, c in zip(start, h[name].chunks, strict=True))
        with h5py.File(work, "r") as h:
            try:
                expected: np.ndarray[Any, Any] | None = data.copy()
                expected[region] = h[name][region]  # type: ignore[index]
            except OSError:
                expected = None
        mid = tuple((r.start + r.stop) // 2 for r in region)
        keys = [(slice(None),) * data.ndim, region, mid, (*region[:-1], slice(0, 3))]
        for mode in ("r", "a"):
            with hyperslab.open_file(work, mode) as f:
                node = f.get_node("/" + name)
                for key in keys:
                    try:
                        got = np.asarray(node[key])
                    except HDF5ExtError:
                        continue
                    if expected is not None:
                        assert got.tobytes() == expected[key].tobytes(), (name, key)
                    elif key is keys[0] or key is keys[1]:  # the whole chunk: no damage seen
                        assert got.tobytes() == data[key].tobytes(), (name, key)
