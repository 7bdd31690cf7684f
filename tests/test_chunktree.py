"""The chunk index read straight from HDF5's version 1 chunk B-tree (read-only files).

Oracle: HDF5's own listing (``chunk_iter``, through ``collect_chunks``) of the same
dataset, compared array for array; damaged trees must give None (the listing through HDF5
is used then), never a wrong index, a crash or a hang.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.storage import chunktree
from hyperslab.storage.chunkindex import ChunkIndex, collect_chunks
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.superblock import addresses_are_positions, end_of_allocation
from hyperslab.storage.tree import object_address

BLOSC2 = dict(hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE))


def _opened(path: Path, name: str) -> Iterator[tuple[Any, int, int]]:
    with h5py.File(path, "r") as f:
        dset = f[name]
        fd = f.id.get_vfd_handle()
        end = end_of_allocation(fd)
        assert end is not None
        yield dset, fd, end


def _tree_and_listing(path: Path, name: str) -> tuple[Any, Any]:
    """(chunks from the tree, or None; HDF5's listing) of dataset `name`."""
    for dset, fd, end in _opened(path, name):
        root = chunktree.tree_root(dset.id, fd, dset.chunks, end)
        tree = (None if root is None
                else chunktree.chunks_from_tree(dset.id, fd, root, dset.chunks, end))
        return tree, collect_chunks(dset.id.chunk_iter, len(dset.chunks), False)
    raise AssertionError("unreachable")


def _assert_same(tree: Any, listing: Any) -> None:
    assert tree is not None
    for got, expected in zip(tree, listing, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


# ------------------------------------------------------------------ what HDF5 lists
@pytest.mark.parametrize(
    ("shape", "chunks", "filters"),
    [
        ((1000,), (7,), {}),
        ((1000,), (7,), BLOSC2),
        ((45, 38), (8, 5), {"compression": "gzip"}),
        ((9, 10, 11), (4, 3, 5), BLOSC2),
        ((20_000,), (2,), {}),  # 10,000 chunks: a tree of three levels
    ],
)
def test_the_tree_lists_what_hdf5_lists(tmp_path: Path, shape: tuple[int, ...],
                                        chunks: tuple[int, ...], filters: dict[str, Any]
                                        ) -> None:
    path = tmp_path / "a.h5"
    data = np.arange(int(np.prod(shape)), dtype="<i4").reshape(shape)
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=data, chunks=chunks, **filters)
    tree, listing = _tree_and_listing(path, "a")
    _assert_same(tree, listing)
    assert len(listing[1]) == int(np.prod([-(-s // c) for s, c in zip(shape, chunks, strict=True)]))


def test_unwritten_chunks_and_filter_masks_are_listed_as_hdf5_lists_them(
    tmp_path: Path
) -> None:
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("a", shape=(40, 30), chunks=(4, 3), dtype="<f8", **BLOSC2)
        for k, (r, c) in enumerate([(0, 0), (36, 27), (8, 9), (20, 3)]):
            raw = np.full((4, 3), k, dtype="<f8").tobytes()
            dset.id.write_direct_chunk((r, c), raw, filter_mask=1)  # not compressed
        dset[12:16, 12:15] = 5.0  # through the pipeline
    tree, listing = _tree_and_listing(path, "a")
    _assert_same(tree, listing)
    assert len(listing[1]) == 5 and set(listing[3].tolist()) == {0, 1}


@pytest.mark.parametrize("kind", ["carray", "earray", "table"])
def test_pytables_files_are_read_from_the_tree(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "t.h5"
    with tables.open_file(path, "w") as f:
        filters = tables.Filters(complevel=5, complib="blosc2:lz4")
        if kind == "carray":
            f.create_carray("/", "a", obj=np.arange(5000.0).reshape(100, 50),
                            chunkshape=(7, 9), filters=filters)
        elif kind == "earray":
            node = f.create_earray("/", "a", atom=tables.Int16Atom(), shape=(0, 3),
                                   chunkshape=(11, 3), filters=filters)
            node.append(np.arange(3000, dtype="i2").reshape(1000, 3))
        else:
            node = f.create_table("/", "a", description={"x": tables.Int32Col(),
                                                          "y": tables.Float64Col()},
                                  chunkshape=(64,), filters=filters)
            node.append([(i, i / 3) for i in range(2000)])
    tree, listing = _tree_and_listing(path, "a")
    _assert_same(tree, listing)


def test_hyperslab_builds_its_index_from_the_tree(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "a.h5"
    data = np.arange(3000.0)
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=data, chunks=(16,), **BLOSC2)
    listed: list[int] = []
    real = ChunkIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(ChunkIndex, "build",
                        classmethod(lambda cls, *a: listed.append(1) or real(cls, *a)))
    with h5py.File(path, "r") as f:
        index = Dataset(f["a"].id).chunk_index()
        expected = ChunkIndex.build(f["a"].id, (3000,), (16,))
    assert listed == [1]  # only the oracle listed the chunks through HDF5
    for name in ("coords", "offsets", "sizes", "filter_masks"):
        np.testing.assert_array_equal(getattr(index, name), getattr(expected, name))
    with hyperslab.open_file(path, "r") as f:
        np.testing.assert_array_equal(f.root.a[5:2990:7], data[5:2990:7])


# ------------------------------------------------------------------ trees not read
def test_files_of_the_latest_format_are_listed_through_hdf5(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("a", data=np.arange(100), chunks=(10,))
    tree, listing = _tree_and_listing(path, "a")
    assert tree is None and len(listing[1]) == 10


def test_a_file_with_a_user_block_is_listed_through_hdf5(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    data = np.arange(100.0)
    with h5py.File(path, "w", userblock_size=512) as f:
        f.create_dataset("a", data=data, chunks=(10,))
    for dset, fd, end in _opened(path, "a"):
        assert chunktree.tree_root(dset.id, fd, dset.chunks, end) is None
    with hyperslab.open_file(path, "r") as f:
        np.testing.assert_array_equal(f.root.a[3:97:3], data[3:97:3])


@pytest.mark.parametrize("libver", ["earliest", "latest"])  # superblock versions 0 and 3
def test_superblocks_whose_addresses_are_file_positions(tmp_path: Path, libver: str) -> None:
    path = tmp_path / "a.h5"
    with h5py.File(path, "w", libver=libver) as f:
        f.create_dataset("a", data=np.arange(10))
    head = path.read_bytes()[:64]
    assert addresses_are_positions(head)
    width_at = 13 if libver == "earliest" else 9
    for at, raw in [(0, b"\x88"), (8, b"\x07"), (width_at, b"\x04"), (width_at + 1, b"\x04")]:
        assert not addresses_are_positions(head[:at] + raw + head[at + 1 :]), at
    base_at = 24 if libver == "earliest" else 12
    assert not addresses_are_positions(head[:base_at] + b"\x01" + head[base_at + 1 :])


def test_a_layout_of_another_chunk_shape_is_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=np.arange(100), chunks=(10,))
    for dset, fd, end in _opened(path, "a"):
        assert chunktree.tree_root(dset.id, fd, (10,), end) is not None
        assert chunktree.tree_root(dset.id, fd, (20,), end) is None
        assert chunktree.tree_root(dset.id, fd, (10, 1), end) is None


# ------------------------------------------------------------------ damaged trees
def _nodes(path: Path, name: str) -> tuple[int, list[int], int]:
    """(root address, its children's addresses, key length) of a two-level tree."""
    for dset, fd, end in _opened(path, name):
        root = chunktree.tree_root(dset.id, fd, dset.chunks, end)
        assert root is not None
        rank = len(dset.chunks)
        key = 8 + 8 * (rank + 1)
        head = os.pread(fd, 24, root)
        level, count = head[5], struct.unpack_from("<H", head, 6)[0]
        assert level == 1
        body = os.pread(fd, count * (key + 8), root + 24)
        children = [struct.unpack_from("<Q", body, i * (key + 8) + key)[0]
                    for i in range(count)]
        return root, children, key
    raise AssertionError("unreachable")


@pytest.fixture
def two_levels(tmp_path: Path) -> Iterator[tuple[Path, np.ndarray]]:
    path = tmp_path / "a.h5"
    data = np.arange(3000, dtype="<i8")
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=data, chunks=(10,))  # 300 chunks: a root and leaves
    yield path, data


def _patch(path: Path, at: int, raw: bytes) -> None:
    with open(path, "r+b") as stream:
        stream.seek(at)
        stream.write(raw)


def _copy(path: Path, name: str) -> Path:
    damaged = path.with_name(name)
    shutil.copy(path, damaged)
    return damaged


def _read_tree(path: Path) -> Any:
    for dset, fd, end in _opened(path, "a"):
        root = chunktree.tree_root(dset.id, fd, dset.chunks, end)
        return None if root is None else chunktree.read_chunk_tree(fd, root, dset.chunks, end)
    raise AssertionError("unreachable")


def test_damaged_nodes_give_no_tree(two_levels: tuple[Path, np.ndarray]) -> None:
    path, _ = two_levels
    root, children, key = _nodes(path, "a")
    assert _read_tree(path) is not None
    entry = key + 8
    cases = {
        "signature": (children[1], b"TRAE"),
        "node type": (children[1] + 4, b"\x00"),
        "level": (children[1] + 5, b"\x01"),
        "no entries": (children[1] + 6, b"\x00\x00"),
        "too many entries": (children[1] + 6, b"\xff\xff"),
        "a child twice": (root + 24 + 2 * entry + key, struct.pack("<Q", children[1])),
        "a cycle": (root + 24 + key, struct.pack("<Q", root)),
        "past the end": (root + 24 + key, struct.pack("<Q", 1 << 40)),
        "undefined": (root + 24 + key, b"\xff" * 8),
        "a chunk past the end": (children[0] + 24 + key, struct.pack("<Q", 1 << 40)),
        "an empty chunk": (children[0] + 24, b"\x00\x00\x00\x00"),
        "keys out of order": (children[0] + 24 + entry + 8, struct.pack("<Q", 500)),
        "a key off the chunk grid": (children[0] + 24 + entry + 8, struct.pack("<Q", 11)),
        "a key within an element": (children[0] + 24 + 16, struct.pack("<Q", 1)),
    }
    for name, (at, raw) in cases.items():
        damaged = _copy(path, f"{name}.h5")
        _patch(damaged, at, raw)
        assert _read_tree(damaged) is None, name


def test_a_damaged_object_header_gives_no_tree(two_levels: tuple[Path, np.ndarray]) -> None:
    path, _ = two_levels
    for dset, fd, end in _opened(path, "a"):
        header = object_address(dset.id)
        assert chunktree.chunk_tree_address(fd, header, (10,), end) is not None
        for name, (at, raw) in {
            "version": (0, b"\x02"),
            "a message past the block": (16 + 2, b"\xff\xff"),
            "a header past the end": (8, struct.pack("<I", 1 << 31)),
        }.items():
            damaged = _copy(path, f"{name}.h5")
            _patch(damaged, header + at, raw)
            with open(damaged, "rb") as stream:
                assert chunktree.chunk_tree_address(stream.fileno(), header, (10,),
                                                    end) is None, name


def test_a_tree_hdf5_reads_otherwise_is_not_used(two_levels: tuple[Path, np.ndarray],
                                                 monkeypatch: Any) -> None:
    path, data = two_levels
    real = chunktree.read_chunk_tree

    def shifted(*args: Any) -> Any:  # a reader that gets the middle chunk's address wrong
        starts, offsets, sizes, masks = real(*args)
        offsets = offsets.copy()
        offsets[len(offsets) // 2] += 8
        return starts, offsets, sizes, masks

    monkeypatch.setattr(chunktree, "read_chunk_tree", shifted)
    tree, listing = _tree_and_listing(path, "a")
    assert tree is None and len(listing[1]) == 300
    with hyperslab.open_file(path, "r") as f:  # listed through HDF5 instead: exact
        np.testing.assert_array_equal(f.root.a[:], data)
        assert f.root.a[1505] == 1505


def test_a_damaged_tree_reads_as_hdf5_reads_it(two_levels: tuple[Path, np.ndarray]) -> None:
    path, data = two_levels
    _, children, _ = _nodes(path, "a")
    damaged = _copy(path, "signature.h5")
    _patch(damaged, children[1], b"TRAE")
    with h5py.File(damaged, "r") as f:
        with pytest.raises(OSError):
            f["a"][:]
    with hyperslab.open_file(damaged, "r") as f:
        with pytest.raises(hyperslab.HDF5ExtError):
            f.root.a[:]
        assert f.root.a[3] == data[3]  # a chunk HDF5 still finds
