"""Single items read right after opening: HDF5 finds their chunks until the reads made
would have paid for building the chunk index (ski rental), then the index is built once.

Oracles: NumPy (the data written), h5py and PyTables (files written by them, read back).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.storage import preads
from hyperslab.storage.chunkindex import ChunkIndex
from hyperslab.storage.rawchunks import RawChunks

FILTERS: dict[str, dict[str, Any]] = {
    "plain": {},
    "blosc2": dict(hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE)),
}


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Spy: one entry per chunk index built, from the chunk B-tree or by listing the
    chunks through HDF5 (the rank of each)."""
    made: list[int] = []
    original = RawChunks._build

    def spy(self: RawChunks) -> ChunkIndex:
        made.append(len(self.chunkshape))
        return original(self)

    monkeypatch.setattr(RawChunks, "_build", spy)
    return made


@pytest.fixture
def hdf5_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Spy: the chunks read through HDF5's own look-up (answered, not None)."""
    made: list[tuple[int, ...]] = []
    original = RawChunks.read_found_by_hdf5

    def spy(self: RawChunks, coords: tuple[int, ...]) -> Any:
        found = original(self, coords)
        if found is not None:
            made.append(coords)
        return found

    monkeypatch.setattr(RawChunks, "read_found_by_hdf5", spy)
    return made


def _write(path: Path, data: np.ndarray, chunks: tuple[int, ...], kind: str,
           skip: int = 0, fill: float = 0, libver: str = "earliest") -> None:
    """``data`` into ``/a`` with h5py; every ``skip``-th chunk (of the first axis) left
    unwritten when ``skip``.  ``libver="latest"`` writes a chunk index other than the
    version 1 B-tree (which hyperslab then does not read itself)."""
    with h5py.File(path, "w", libver=(libver, "latest")) as f:
        dset = f.create_dataset("a", shape=data.shape, chunks=chunks, dtype=data.dtype,
                                fillvalue=fill, **FILTERS[kind])
        rows = chunks[0]
        for k in range(-(-data.shape[0] // rows)):
            if not skip or k % skip:
                dset[k * rows : (k + 1) * rows] = data[k * rows : (k + 1) * rows]


def _expected(data: np.ndarray, chunks: tuple[int, ...], skip: int, fill: float) -> np.ndarray:
    out = data.copy()
    if skip:
        rows = chunks[0]
        for k in range(0, -(-data.shape[0] // rows), skip):
            out[k * rows : (k + 1) * rows] = fill
    return out


@pytest.mark.parametrize("kind", list(FILTERS))
@pytest.mark.parametrize("dtype", ["<f8", ">i4", "<u2"])
def test_items_after_opening_are_exact_and_build_no_index(
    tmp_path: Path, kind: str, dtype: str, builds: list[int], hdf5_reads: list[Any]
) -> None:
    data = np.arange(4000).astype(dtype)
    path = tmp_path / "a.h5"
    _write(path, data, (16,), kind, skip=5, fill=7)
    expected = _expected(data, (16,), 5, 7)
    positions = [17, 3999, 2020, 1, 40, 41, 0, 81, -1, -3990]  # chunks 0, 5: unwritten
    with hyperslab.open_file(path, "r") as f:
        node = f.root.a
        values = [node[i] for i in positions[:3]]
        assert not builds and hdf5_reads == [(1,), (249,), (126,)]  # no index for these
        values += [node[i] for i in positions[3:]]  # unwritten chunks: the index says so
    for i, value in zip(positions, values, strict=True):
        assert value == expected[i] and type(value) is type(expected[i]), i
    with h5py.File(path, "r") as h:  # h5py reads the same
        assert [h["a"][i] for i in positions] == values


@pytest.mark.parametrize("kind", list(FILTERS))
def test_items_of_2d_arrays_are_exact(tmp_path: Path, kind: str, builds: list[int]) -> None:
    data = np.arange(60 * 50, dtype="<f4").reshape(60, 50)
    path = tmp_path / "a.h5"
    _write(path, data, (8, 7), kind)
    rng = np.random.default_rng(3)
    with hyperslab.open_file(path, "r") as f:
        for r, c in rng.integers(0, 50, (100, 2)).tolist():
            assert f.root.a[r, c] == data[r, c]
            assert f.root.a[-r - 1, -c - 1] == data[-r - 1, -c - 1]


@pytest.mark.parametrize("kind", list(FILTERS))
def test_a_dataset_without_any_chunk_reads_its_fill_value(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "a.h5"
    _write(path, np.zeros(100), (10,), kind, skip=1, fill=2.5)  # nothing written
    with hyperslab.open_file(path, "r") as f:
        assert [f.root.a[i] for i in (0, 55, 99)] == [2.5, 2.5, 2.5]


@pytest.mark.parametrize("libver", ["earliest", "latest"])
@pytest.mark.parametrize("kind", list(FILTERS))
def test_the_index_is_built_once_the_reads_would_have_paid_for_it(
    tmp_path: Path, kind: str, libver: str, builds: list[int], hdf5_reads: list[Any]
) -> None:
    # The index's cost: reading the chunk B-tree where hyperslab can (the earliest
    # format's), else listing every chunk through HDF5.
    nchunks = 1000
    data = np.arange(nchunks * 4, dtype="<f8")
    path = tmp_path / "a.h5"
    _write(path, data, (4,), kind, libver=libver)
    extra = preads.HDF5_READ_EXTRA_SECONDS
    if kind == "plain":
        extra += preads.HDF5_READ_EXTRA_SECONDS_PER_BYTE * 4 * 8
    cost = (preads.TREE_INDEX_SECONDS + preads.TREE_INDEX_SECONDS_PER_CHUNK * nchunks
            if libver == "earliest" else preads.INDEX_BUILD_SECONDS_PER_CHUNK * nchunks)
    budget = int(cost / extra)
    assert budget >= 2  # the constants give a few reads through HDF5 here
    rng = np.random.default_rng(5)
    positions = rng.integers(0, len(data), 3 * budget + 10).tolist()
    with hyperslab.open_file(path, "r") as f:
        node = f.root.a
        for k, i in enumerate(positions):
            assert node[i] == data[i]
            if k < budget - 1:
                assert not builds, k
        assert builds == [1]  # built once, then every read used it
        assert budget - 1 <= len(hdf5_reads) <= budget + 1


def test_reads_of_many_chunks_still_build_the_index(tmp_path: Path, builds: list[int],
                                                    hdf5_reads: list[Any]) -> None:
    data = np.arange(4000, dtype="<f8")
    path = tmp_path / "a.h5"
    _write(path, data, (16,), "blosc2")
    with hyperslab.open_file(path, "r") as f:
        np.testing.assert_array_equal(f.root.a[5:3000:7], data[5:3000:7])
        assert builds == [1]
        assert f.root.a[123] == 123 and not hdf5_reads  # the index exists: used


def test_a_few_items_of_a_small_dataset_do_not_look_for_the_chunk_tree(
    tmp_path: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Finding the tree and checking it costs more than a few reads through HDF5.
    data = np.arange(40 * 4, dtype="<f8")
    path = tmp_path / "a.h5"
    _write(path, data, (4,), "blosc2")
    looked: list[int] = []
    real = preads.tree_root
    monkeypatch.setattr(preads, "tree_root", lambda *a: looked.append(1) or real(*a))
    with hyperslab.open_file(path, "r") as f:
        assert [f.root.a[i] for i in (7, 150, 3)] == [7.0, 150.0, 3.0]
    assert not looked and not builds


@pytest.mark.parametrize("kind", list(FILTERS))
def test_writable_files_read_items_through_the_index(
    tmp_path: Path, kind: str, builds: list[int], hdf5_reads: list[Any]
) -> None:
    data = np.arange(400, dtype="<f8")
    path = tmp_path / "a.h5"
    _write(path, data, (4,), kind)
    with hyperslab.open_file(path, "a") as f:
        assert f.root.a[45] == 45
        f.root.a[45] = -1
        assert f.root.a[45] == -1 and f.root.a[399] == 399
    assert not hdf5_reads and builds


@pytest.mark.parametrize("kind", list(FILTERS))
def test_threads_sharing_a_file_read_right(tmp_path: Path, kind: str,
                                           builds: list[int]) -> None:
    nchunks = 2000
    data = np.arange(nchunks * 8, dtype="<i8")
    path = tmp_path / "a.h5"
    _write(path, data, (8,), kind)
    positions = np.random.default_rng(7).integers(0, len(data), 4000).tolist()
    start = threading.Barrier(4)

    def read(part: int) -> list[Any]:
        start.wait()
        return [node[i] for i in positions[part::4]]

    with hyperslab.open_file(path, "r") as f:
        node = f.root.a
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(read, range(4)))
        for part, values in enumerate(results):
            assert values == [data[i] for i in positions[part::4]]
    assert len(builds) <= 1  # one Dataset, one index, whichever thread came first


@pytest.fixture
def pytables_file(tmp_path: Path) -> Iterator[tuple[Path, np.ndarray]]:
    data = np.arange(3000, dtype="<f8") * 1.5
    path = tmp_path / "pt.h5"
    with tables.open_file(path, "w") as f:
        for name, complib in (("plain", None), ("blosc2", "blosc2")):
            filters = tables.Filters(complevel=5, complib=complib) if complib else None
            arr = f.create_carray("/", name, obj=data, chunkshape=(32,), filters=filters)
            arr.flush()
    yield path, data


@pytest.mark.parametrize("name", ["plain", "blosc2"])
def test_pytables_files(pytables_file: tuple[Path, np.ndarray], name: str,
                        hdf5_reads: list[Any]) -> None:
    path, data = pytables_file
    positions = np.random.default_rng(11).integers(-len(data), len(data), 50).tolist()
    with hyperslab.open_file(path, "r") as f:
        values = [f.get_node("/" + name)[i] for i in positions]
    with tables.open_file(path, "r") as t:
        assert values == [t.get_node("/" + name)[i] for i in positions]
    assert values == [data[i] for i in positions]
    assert hdf5_reads
