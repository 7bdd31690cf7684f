"""Damaged (or extreme) files whose reads HDF5 gets wrong: hyperslab must never hand HDF5
a selection it crashes on or misreads, and must refuse what no reader can get right.

* Strided and point selections reaching 2**64 bytes into a huge extent crash HDF5
  (SIGSEGV), hang it or read other elements; such extents come from a damaged dataspace
  or from a legal sparse dataset.  They run in a child process, so that a crash fails the
  test instead of killing it.
* A contiguous dataset whose extent outgrew its storage: HDF5 returns bytes past the
  storage, or its first bytes again; hyperslab raises HDF5ExtError on every read path.
* A small Blosc2 chunk whose frame HDF5's filter decodes only in part (a damaged block
  shape, a chunk marked uninitialized): the rest is whatever the filter's buffer held.
  Reads of many small chunks go through HDF5, so hyperslab checks their frames first.
"""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
from h5py import h5d, h5s, h5t

import hyperslab as hs
from hyperslab.chunked import frameaudit
from hyperslab.errors import HDF5ExtError
from hyperslab.storage import chunkindex, vectors

# ----------------------------------------------------------- selections far into an extent

WIDE = 2**57
"""Columns of the wide datasets: row 32 of int32 starts 2**64 bytes in."""

WIDE_KEYS = [
    np.s_[36:0:-2, 8:0:-2], np.s_[::3, :9:2], np.s_[[1, 5, 30], 2:7:2], np.s_[1:37:5, 3],
    np.s_[::-1, 0:4], np.s_[0:8:2, 0:4], np.s_[5, 0:9:3], np.s_[[36, 2, 33], 8],
    np.s_[30:37, 1:9],
]
DEEP_KEYS = [np.s_[::2, ::-2, 0:9:2], np.s_[8:0:-3, 1, 2:6], np.s_[:, :, 0:9:4],
             np.s_[[0, 3, 8], 1:5, 2]]


def _wide_file(path: Path) -> np.ndarray:
    """(37, 2**57) int32 and (9, 9, 2**58) int8 datasets, written in their first columns,
    unfiltered, zlib and Blosc2 (hdf5plugin): what h5py's unit-step reads return."""
    data = np.random.default_rng(7).integers(-1000, 1000, (37, 9), dtype=np.int32)
    filters = {"plain": {}, "zlib": {"compression": "gzip"}, "blosc2": dict(hdf5plugin.Blosc2())}
    with h5py.File(path, "w") as f:
        for name, kwargs in filters.items():
            wide = f.create_dataset(name, shape=(37, WIDE), maxshape=(None, WIDE),
                                    dtype="i4", chunks=(8, 4), **kwargs)
            wide[:, :9] = data
            deep = f.create_dataset(f"{name}3", shape=(9, 9, 2 * WIDE),
                                    maxshape=(None, 9, 2 * WIDE), dtype="i1",
                                    chunks=(4, 4, 4), **kwargs)
            deep[:, :, :9] = (data[:9, :9, None] + np.arange(9)).astype(np.int8)
    return data


READ_IN_CHILD = textwrap.dedent(r"""
    import pickle, sys
    import hyperslab as hs
    with open(sys.argv[2], "rb") as stream:
        reads = pickle.load(stream)
    results = []
    with hs.open_file(sys.argv[1]) as f:
        for name, key in reads:
            try:
                results.append(f.get_node("/" + name)[key])
            except Exception as exc:
                results.append(f"{type(exc).__name__}: {exc}")
    with open(sys.argv[2], "wb") as stream:
        pickle.dump(results, stream)
""")


def test_strided_and_point_reads_far_into_a_huge_extent(tmp_path: Path) -> None:
    path = tmp_path / "wide.h5"
    _wide_file(path)
    reads = [(name, key) for name in ("plain", "zlib", "blosc2") for key in WIDE_KEYS]
    reads += [(f"{name}3", key) for name in ("plain", "zlib", "blosc2") for key in DEEP_KEYS]
    exchange = tmp_path / "reads.pickle"
    exchange.write_bytes(pickle.dumps(reads))
    child = subprocess.run([sys.executable, "-c", READ_IN_CHILD, str(path), str(exchange)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    results = pickle.loads(exchange.read_bytes())
    with h5py.File(path, "r") as f:
        for (name, key), got in zip(reads, results, strict=True):
            box = f[name][:, :9] if name[-1] != "3" else f[name][:, :, :9]  # unit steps
            np.testing.assert_array_equal(got, box[key], err_msg=f"{name}{key}")


def test_the_storage_layer_refuses_what_hdf5_would_crash_on(tmp_path: Path) -> None:
    """The backstop: Dataset.read and read_elements never pass such a selection to HDF5
    (in a child: without the check, HDF5 crashes or returns other elements)."""
    path = tmp_path / "wide.h5"
    data = _wide_file(path)
    code = textwrap.dedent(r"""
        import sys, h5py, numpy as np
        from hyperslab.errors import HDF5ExtError
        from hyperslab.storage.datasets import Dataset
        with h5py.File(sys.argv[1], "r") as f:
            dataset = Dataset(f["zlib"].id)
            for read in (lambda: dataset.read((slice(0, 37, 2), slice(0, 4))),
                         lambda: dataset.read_elements(np.array([[36, 8], [0, 0]]))):
                try:
                    read()
                    print("read")
                except HDF5ExtError as exc:
                    print("refused:", exc)
            print(dataset.read_elements(np.array([[15, 8], [3, 1]])).tolist())
            print(dataset.read((slice(30, 37), slice(8, 9))).ravel().tolist())
    """)
    child = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-3000:]
    lines = child.stdout.splitlines()
    assert lines[0].startswith("refused:") and "'/zlib'" in lines[0]
    assert "(37, 144115188075855872)" in lines[0] and "2**63 bytes" in lines[0]
    assert lines[1].startswith("refused:")
    assert lines[2] == str([int(data[15, 8]), int(data[3, 1])])  # not far: HDF5 reads it
    assert lines[3] == str(data[30:37, 8].tolist())  # unit-step boxes read right


def test_rows_far_into_a_huge_table_are_refused(tmp_path: Path) -> None:
    """1-D (a table grown sparse): near rows read through HDF5, far ones are refused (in
    a child: without the check, HDF5 loops for minutes)."""
    path = tmp_path / "rows.h5"
    dtype = np.dtype([("i", "<i8"), ("x", "<f8")])
    rows = np.zeros(100, dtype)
    rows["i"] = np.arange(100)
    with h5py.File(path, "w") as f:
        table = f.create_dataset("t", shape=(2**60,), maxshape=(None,), dtype=dtype,
                                 chunks=(16,), compression="gzip")
        table[:100] = rows
    code = textwrap.dedent(r"""
        import sys, h5py
        from hyperslab.errors import HDF5ExtError
        from hyperslab.storage.datasets import Dataset
        with h5py.File(sys.argv[1], "r") as f:
            dataset = Dataset(f["t"].id)
            print(dataset.read_rows(3, 5, 7)["i"].tolist())
            print(dataset.read_points([99, 2])["i"].tolist())
            for read in (lambda: dataset.read_rows(0, 2, 2**59),
                         lambda: dataset.read_points([0, 2**59 + 1])):
                try:
                    read()
                    print("read")
                except HDF5ExtError as exc:
                    print("refused:", exc)
    """)
    child = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-3000:]
    lines = child.stdout.splitlines()
    assert lines[:2] == ["[3, 10, 17, 24, 31]", "[99, 2]"]
    assert lines[2].startswith("refused:") and "'/t'" in lines[2]
    assert lines[3].startswith("refused:") and "points" in lines[3]


# ----------------------------------------------------------- contiguous storage too small

def _grown_contiguous(path: Path) -> np.ndarray:
    """A (7, 6) int8 Array whose dataspace says (7, 7), as a flipped byte makes it (the
    layout message still records the 42 bytes written); a 12-byte dataset follows it."""
    small = np.arange(42, dtype=np.int8).reshape(7, 6)
    with hs.open_file(path, "w") as f:
        f.create_array("/", "small", small)
        f.create_array("/", "after", np.full(12, 99, dtype=np.int8))
    data = path.read_bytes()
    dims = struct.pack("<4Q", 7, 6, 7, 6)  # size and maximum size
    assert data.count(dims) == 1
    path.write_bytes(data.replace(dims, struct.pack("<4Q", 7, 7, 7, 7)))
    with h5py.File(path, "r") as f:  # HDF5 reads it, from bytes past the storage
        assert f["small"].shape == (7, 7) and f["small"].id.get_storage_size() == 42
    return small


CONTIGUOUS_READS = {
    "slice": lambda n: n[:], "step": lambda n: n[::2, :], "item": lambda n: n[6, 5],
    "points": lambda n: n[[0, 3, 6]], "unsorted": lambda n: n[[6, 0], :],
    "negstep": lambda n: n[6:0:-2, 5:0:-2], "read": lambda n: n.read(),
    "read-step": lambda n: n.read(1, 7, 3), "iterrows": lambda n: list(n.iterrows(1, 7, 2)),
    "sum": lambda n: n.sum(), "max": lambda n: n.max(axis=0),
    "expr": lambda n: hs.Expr("a * 2", {"a": n}).eval(), "empty-key": lambda n: n[()],
}


@pytest.mark.parametrize("read", CONTIGUOUS_READS.values(), ids=CONTIGUOUS_READS.keys())
def test_a_contiguous_extent_past_its_storage_raises(tmp_path: Path, read: Callable) -> None:
    path = tmp_path / "grown.h5"
    _grown_contiguous(path)
    with hs.open_file(path) as f:
        n = f.root.small
        assert n.shape == (7, 7)
        with pytest.raises(HDF5ExtError, match=r"'/small'.*\(7, 7\).*49 bytes.*holds 42"):
            read(n)
        assert f.root.after[:].tolist() == [99] * 12  # the rest of the file reads on


def test_contiguous_datasets_not_allocated_or_external_still_read(tmp_path: Path) -> None:
    path = tmp_path / "lazy.h5"
    values = np.arange(25, dtype=np.int32).reshape(5, 5)
    with h5py.File(path, "w") as f:
        f.create_dataset("unwritten", shape=(5, 5), dtype="i4", fillvalue=3)
        f.create_dataset("outside", shape=(5, 5), dtype="i4",
                         external=[(str(tmp_path / "outside.bin"), 0, 100)])[...] = values
    with hs.open_file(path) as f:
        assert f.root.unwritten[::2, 1].tolist() == [3, 3, 3]
        assert f.root.outside[::2, 1].tolist() == values[::2, 1].tolist()


# ----------------------------------------------------------- Blosc2 frames the filter half-decodes

CUBE = np.random.default_rng(3).normal(size=(13, 11, 7)).round(2)
BAD_CHUNK = (5, 8, 3)


def _damaged_cube(path: Path, damage: str) -> None:
    """A (13, 11, 7) float64 CArray in (5, 4, 3) Blosc2 chunks (480 bytes: reads of more
    than a few go through HDF5's filter), the chunk at (5, 8, 3) damaged as the fuzz
    found it: the metalayer's block shape (5, 4, 3) made (5, 4, 94), or the inner chunk
    flagged as uninitialized."""
    with hs.open_file(path, "w") as f:
        f.create_carray("/", "cube", obj=CUBE, chunkshape=(5, 4, 3),
                        filters=hs.Filters(5, "blosc2:lz4", shuffle=True))
    with h5py.File(path, "r") as f:
        info = f["cube"].id.get_chunk_info_by_coord(BAD_CHUNK)
    data = bytearray(path.read_bytes())
    frame = data[info.byte_offset : info.byte_offset + info.size]
    if damage == "block shape":
        shapes = bytes.fromhex("93d200000005d200000004d200000003")  # msgpack [5, 4, 3]
        assert frame.count(shapes) == 2  # the chunk shape, then the block shape
        data[info.byte_offset + frame.rindex(shapes) + len(shapes) - 1] = 94
    else:
        flags = info.byte_offset + int.from_bytes(frame[11:15], "big") + 31
        data[flags] = (data[flags] & 0x8F) | 0x40  # special value kind 4: uninitialized
    path.write_bytes(bytes(data))


HALF_DECODED_READS = {
    "all": lambda n: n[...], "slice": lambda n: n[4:13, 3:11, 2:7],
    "step": lambda n: n[1::3, 1::3, 1::3], "negstep": lambda n: n[::-1, :, :],
    "iterrows": lambda n: list(n.iterrows(1, 13, 2)), "mean": lambda n: n.mean(axis=-1),
    "read": lambda n: n.read(), "points": lambda n: n[[0, 6, 12]],
}


@pytest.mark.parametrize("damage", ["block shape", "uninitialized"])
@pytest.mark.parametrize("read", HALF_DECODED_READS.values(), ids=HALF_DECODED_READS.keys())
def test_a_blosc2_frame_the_filter_half_decodes_is_refused(
        tmp_path: Path, damage: str, read: Callable) -> None:
    path = tmp_path / "cube.h5"
    _damaged_cube(path, damage)
    with hs.open_file(path) as f:
        n = f.root.cube
        with pytest.raises(HDF5ExtError, match=r"chunk at \(5, 8, 3\) of dataset '/cube'"):
            read(n)
        np.testing.assert_array_equal(n[0:5, :, :], CUBE[0:5])  # other chunks read right
        np.testing.assert_array_equal(n[5:13, 0:8, :], CUBE[5:13, 0:8])


# ----------------------------------------------------------- a chunk index entry out of range

STACK = np.random.default_rng(5).normal(size=(19, 5, 3)).astype(np.float32)


def _stack_with_a_bad_index_entry(path: Path) -> None:
    """An unfiltered (19, 5, 3) float32 dataset in (4, 2, 2) chunks whose B-tree key for
    the chunk at (0, 4, 2) got a first coordinate past 2**63 (as the fuzz found it)."""
    with h5py.File(path, "w") as f:
        f.create_dataset("stack", data=STACK, chunks=(4, 2, 2), maxshape=(None, 5, 3))
    data = path.read_bytes()
    key = struct.pack("<II4Q", 64, 0, 0, 4, 2, 0)  # size, filter mask, chunk offset
    assert data.count(key) == 1
    bad = struct.pack("<II4Q", 64, 0, 0x8A26AB21F4 << 24, 4, 2, 0)
    path.write_bytes(data.replace(key, bad))


INDEX_READS = {
    "all": np.s_[...], "step": np.s_[1::3, 1::3, 1::3], "item": np.s_[18, 4, 2],
    "bad item": np.s_[1, 4, 2], "points": np.s_[[0, 9, 18], 4], "negstep": np.s_[::-2],
    "bad chunk": np.s_[0:4, 4:5, 2:3],
}


@pytest.mark.parametrize("key", INDEX_READS.values(), ids=INDEX_READS.keys())
def test_a_chunk_index_entry_out_of_range_leaves_the_other_chunks_readable(
        tmp_path: Path, key: Any) -> None:
    """HDF5 cannot find the chunk such an entry stands for, and reads it as the fill
    value; hyperslab's index leaves the entry out too, so every read agrees with h5py's,
    which is the data written everywhere else."""
    path = tmp_path / "stack.h5"
    _stack_with_a_bad_index_entry(path)
    with h5py.File(path, "r") as f:
        expected = f["stack"][...]
        last_chunk = f["stack"].id.read_direct_chunk((16, 4, 2))[1]
    assert not expected[0:4, 4, 2].any()  # HDF5: the fill value
    expected_too = expected.copy()
    expected_too[0:4, 4, 2] = STACK[0:4, 4, 2]
    np.testing.assert_array_equal(expected_too, STACK)  # h5py: the data everywhere else
    with hs.open_file(path) as f:
        np.testing.assert_array_equal(f.root.stack[key], expected[key])
        assert f.root.stack.read_chunk((16, 4, 2)) == last_chunk  # found raw too


def test_chunk_listing_leaves_out_entries_out_of_range_when_not_strict() -> None:
    def iterate(callback: Callable) -> None:
        callback(((0,), 0, 4096, 100))
        callback(((2**64 - 10,), 0, 8192, 100))  # a damaged key
        callback(((10,), 0, 2**64 - 1, 100))  # a damaged address
        callback(((20,), 0, 9000, 100))

    starts, offsets, _, _ = chunkindex.collect_chunks(iterate, 1, strict=False)
    assert starts.tolist() == [[0], [20]] and offsets.tolist() == [4096, 9000]
    with pytest.raises(HDF5ExtError, match="out of range"):
        chunkindex.collect_chunks(iterate, 1)


# ----------------------------------------------------------- an index pointing past its table

class _Row(hs.IsDescription):
    id = hs.Int32Col()
    x = hs.Float64Col()


@pytest.mark.parametrize("where", ["indices", "indicesLR"])
def test_a_full_index_holding_a_row_past_the_table_is_malformed(tmp_path: Path,
                                                                 where: str) -> None:
    """A damaged index whose row numbers point past the table raises HDF5ExtError (the
    index is malformed) from the sorted reads, not IndexError from the chunk layer."""
    path = tmp_path / "indexed.h5"
    rows = np.zeros(300, dtype=[("id", "<i4"), ("x", "<f8")])
    rows["id"] = np.arange(300)
    rows["x"] = np.random.default_rng(11).normal(size=300).round(3)
    with hs.open_file(path, "w") as f:
        t = f.create_table("/", "t", _Row, chunkshape=(32,),
                           filters=hs.Filters(5, "blosc2:lz4", shuffle=True))
        t.append(rows)
        t.cols.x.create_index(kind="full", _blocksizes=(768, 192, 48, 12))
    with h5py.File(path, "r+") as f:
        indices = f[f"/_i_t/x/{where}"]
        assert indices.size  # the rows of the sorted slices, and of the last row
        damaged = indices[...]
        damaged.reshape(-1)[-1 if where == "indices" else 0] = 33052  # positions 287, 288
        indices[...] = damaged
    with hs.open_file(path) as f:
        t = f.root.t
        for read in (lambda: t.read_sorted("x"), lambda: list(t.itersorted("x")),
                     lambda: t.read_sorted("x", start=285, stop=295, field="x")):
            with pytest.raises(HDF5ExtError, match=r"/_i_t/x is malformed.*row 33052"):
                read()
        np.testing.assert_array_equal(t.read()["x"], rows["x"])  # the table reads on


@pytest.mark.parametrize("key", INDEX_READS.values(), ids=INDEX_READS.keys())
def test_an_unfiltered_chunk_indexed_with_a_larger_size_reads_as_hdf5_reads_it(
        tmp_path: Path, key: Any) -> None:
    """HDF5 reads an unfiltered chunk's own size whatever its (damaged) B-tree key says."""
    path = tmp_path / "stack.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("stack", data=STACK, chunks=(4, 2, 2), maxshape=(None, 5, 3))
    data = path.read_bytes()
    entry = struct.pack("<II4Q", 64, 0, 0, 4, 0, 0)  # the chunk at (0, 4, 0)
    assert data.count(entry) == 1
    path.write_bytes(data.replace(entry, struct.pack("<II4Q", 576, 0, 0, 4, 0, 0)))
    with h5py.File(path, "r") as f:
        assert f["stack"].id.get_chunk_info_by_coord((0, 4, 0)).size == 576
        np.testing.assert_array_equal(f["stack"][...], STACK)
    with hs.open_file(path) as f:
        np.testing.assert_array_equal(f.root.stack[key], STACK[key])


GRID = np.random.default_rng(9).normal(size=(30, 20)).astype(np.float32)


def _grid_with_blocks(path: Path, blocks: tuple[int, int]) -> None:
    """hdf5plugin's Blosc2 (30, 20) float32 in (8, 6) chunks (one block each), the
    metalayer of the chunk at (24, 0) saying ``blocks`` (as a flipped byte makes it)."""
    with h5py.File(path, "w") as f:
        f.create_dataset("grid", data=GRID, chunks=(8, 6), **hdf5plugin.Blosc2(cname="lz4"))
        info = f["grid"].id.get_chunk_info_by_coord((24, 0))
    data = bytearray(path.read_bytes())
    frame = bytes(data[info.byte_offset : info.byte_offset + info.size])
    shapes = bytes.fromhex("92d200000008d200000006")  # msgpack [8, 6] (int32)
    assert frame.count(shapes) == 2  # the chunk shape, then the block shape
    at = info.byte_offset + frame.rindex(shapes)
    data[at : at + len(shapes)] = b"\x92\xd2" + blocks[0].to_bytes(4, "big") + b"\xd2" + (
        blocks[1].to_bytes(4, "big"))
    path.write_bytes(bytes(data))


GRID_READS = {"all": np.s_[...], "edge": np.s_[24:30, 0:6], "step": np.s_[1::3, ::2],
              "item": np.s_[29, 5], "points": np.s_[[0, 25, 29]]}


@pytest.mark.parametrize("blocks", [(9, 6), (16, 6)])
@pytest.mark.parametrize("key", GRID_READS.values(), ids=GRID_READS.keys())
def test_blocks_longer_than_the_chunk_that_c_blosc2_decodes_right_read(
        tmp_path: Path, blocks: tuple[int, int], key: Any) -> None:
    """C-Blosc2 reads each item at its position in the metalayer's blocks: with blocks of
    whole rows, every position lies in the chunk's bytes, and the filter decodes it
    right: so must hyperslab, whether the read goes through HDF5 or the engine."""
    path = tmp_path / "grid.h5"
    _grid_with_blocks(path, blocks)
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["grid"][...], GRID)
    with hs.open_file(path) as f:
        np.testing.assert_array_equal(f.root.grid[key], GRID[key])
        np.testing.assert_array_equal(f.root.grid[24:30, 0:6], GRID[24:30, 0:6])  # engine


def test_blocks_longer_than_the_chunk_past_its_bytes_are_refused(tmp_path: Path) -> None:
    """Blocks (8, 7) put the chunk's last items past its 192 bytes: C-Blosc2 would read
    whatever its buffer held there."""
    path = tmp_path / "grid.h5"
    _grid_with_blocks(path, (8, 7))
    with hs.open_file(path) as f:
        for key in GRID_READS.values():
            with pytest.raises(HDF5ExtError, match=r"chunk at \(24, 0\) of dataset '/grid'"):
                f.root.grid[key]


def test_the_chunks_a_key_touches_are_found_both_ways() -> None:
    """The frame audit lists the chunks a read touches, or, on a huge extent, tests the
    stored ones against the read (work bounded by what is stored): the same chunks."""
    rng = np.random.default_rng(4)
    shape, chunks = (97, 40, 13), (8, 5, 4)
    grid = [-(-n // c) for n, c in zip(shape, chunks, strict=True)]
    stored = np.argwhere(rng.random(grid) < 0.4)
    for _ in range(200):
        key = []
        for n in shape:
            kind = rng.integers(3)
            if kind == 0:
                start, stop = sorted(rng.integers(0, n + 1, 2).tolist())
                key.append(slice(start, stop, int(rng.integers(1, 12))))
            elif kind == 1:
                key.append(int(rng.integers(n)))
            else:
                key.append(np.unique(rng.integers(0, n, int(rng.integers(1, 6)))))
        listed = {tuple(c) for c in frameaudit.touched_chunks(key, shape, chunks).tolist()}
        tested = frameaudit.stored_in_key(stored, key, shape, chunks)
        assert tested.tolist() == [tuple(c) in listed for c in stored.tolist()], key


def test_an_unfiltered_chunk_indexed_with_a_smaller_size_is_refused_past_it(
        tmp_path: Path) -> None:
    """HDF5 reads only the bytes the (damaged) key records and returns whatever its chunk
    buffer held after them: items past them raise HDF5ExtError, items within read."""
    path = tmp_path / "line.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("u", data=np.arange(1000), chunks=(128,), maxshape=(None,))
    data = path.read_bytes()
    entry = struct.pack("<II2Q", 1024, 0, 128, 0)  # the chunk at 128
    assert data.count(entry) == 1
    path.write_bytes(data.replace(entry, struct.pack("<II2Q", 386, 0, 128, 0)))
    with hs.open_file(path) as f:
        assert f.root.u[130] == 130  # within the 386 bytes (48 items)
        with pytest.raises(HDF5ExtError, match=r"chunk at \(128,\) of dataset '/u'"):
            f.root.u[180]
        with pytest.raises(HDF5ExtError, match=r"chunk at \(128,\) of dataset '/u'"):
            f.root.u[[0, 180, 999]]


def test_an_index_vector_of_a_float_type_numpy_cannot_hold_is_a_type_error(
        tmp_path: Path) -> None:
    """A damaged float type (an exponent bias of 66559, as the fuzz made it): h5py cannot
    map it (ValueError); the index reader reports TypeError, which makes the index
    malformed (HDF5ExtError)."""
    odd = h5t.IEEE_F64LE.copy()
    odd.set_ebias(66559)
    with h5py.File(tmp_path / "odd.h5", "w") as f:
        h5d.create(f.id, b"v", odd, h5s.create_simple((4,)))
        with pytest.raises(ValueError):
            _ = f["v"].dtype
        with pytest.raises(TypeError, match="/v holds a type NumPy has no dtype for"):
            vectors.Vector(f["v"].id, "/v")
