"""Past one machine: picklable files and nodes, leaves as dask arrays, dask arrays stored.

Oracles: NumPy for values and reductions, h5py for ``Leaf.chunks``, PyTables and h5py for
what ``to_hyperslab`` and ``dask.array.store`` write.  The cluster tests share one
``LocalCluster`` of two worker processes (module scope).
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401 - registers the Blosc2 filter for h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.compute.daskio import store
from hyperslab.nodes.files import pickling

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

BLOSC2 = hyperslab.Filters(5, "blosc2:zstd")
A = np.arange(60 * 70, dtype=np.int64).reshape(60, 70)
NODES = ["/", "/g", "/g/arr", "/g/carr", "/earr", "/table"]


class Row(hyperslab.IsDescription):
    a = hyperslab.Int32Col()
    b = hyperslab.Float64Col()


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A file of every node kind pickling covers (closed)."""
    path = tmp_path / "sample.h5"
    with hyperslab.open_file(path, "w") as f:
        g = f.create_group("/", "g")
        f.create_array(g, "arr", A[:5])
        f.create_carray(g, "carr", obj=A, chunkshape=(8, 16), filters=BLOSC2)
        e = f.create_earray("/", "earr", hyperslab.Float32Atom(), shape=(0, 7),
                            chunkshape=(4, 7))
        e.append(np.arange(70, dtype=np.float32).reshape(10, 7))
        t = f.create_table("/", "table", Row)
        t.append([(i, i / 2) for i in range(25)])
    return path


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    pickling.close_reopened_files()


def _read(node: Any) -> Any:
    if isinstance(node, hyperslab.File):
        return sorted(n._v_pathname for n in node)
    if isinstance(node, hyperslab.Group):
        return sorted(node._v_children)
    return node.read()


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, np.ndarray):
        return bool(np.array_equal(got, expected))
    return bool(got == expected)


# ---------------------------------------------------------------------- pickling
@pytest.mark.parametrize("path", [None, *NODES])
def test_a_read_only_file_and_its_nodes_pickle(sample: Path, path: str | None) -> None:
    with hyperslab.open_file(sample) as f:
        node = f if path is None else f.get_node(path)
        expected = _read(node)
        data = pickle.dumps(node)
        # In the process that pickled it, the caller's own open File is used again.
        assert pickle.loads(data) is node
    copy = pickle.loads(data)  # the caller's File is closed: reopened
    assert copy is not node and _same(_read(copy), expected)


def test_unpickled_nodes_share_one_file_per_process(sample: Path) -> None:
    with hyperslab.open_file(sample, node_cache_slots=3) as f:
        data = pickle.dumps([f.root.g.carr, f.root.earr, f.root.table] * 400)
    nodes = pickle.loads(data)  # the caller's File is closed: one File is opened
    assert len({id(n._v_file) for n in nodes}) == 1
    file = nodes[0]._v_file
    assert file.mode == "r" and file.node_cache_slots == 3  # its settings travel
    assert np.array_equal(nodes[0][:], A)
    assert pickle.loads(data)[1]._v_file is file  # and later ones find it
    pickling.close_reopened_files()
    assert not file.isopen and not nodes[0].isopen
    again = pickle.loads(data)[0]
    assert again._v_file is not file and np.array_equal(again[:], A)


def test_root_uep_travels(sample: Path) -> None:
    with hyperslab.open_file(sample, root_uep="/g") as f:
        data = pickle.dumps(f.root.carr)
    node = pickle.loads(data)
    assert node._v_file.root_uep == "/g" and np.array_equal(node[:], A)


def _in_child(data: bytes) -> tuple[int, list[Any]]:
    nodes = pickle.loads(data)
    return len({id(n._v_file) for n in nodes if not isinstance(n, hyperslab.File)}), [
        _read(n) for n in nodes]


def test_unpickled_in_a_spawned_process(sample: Path) -> None:
    with hyperslab.open_file(sample) as f:
        nodes = [f, *(f.get_node(p) for p in NODES)]
        expected = [_read(n) for n in nodes]
        data = pickle.dumps(nodes)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        files, got = pool.apply(_in_child, (data,))
    assert files == 1
    for value, wanted in zip(got, expected, strict=True):
        assert _same(value, wanted)


@pytest.mark.parametrize("mode", ["a", "r+", "w"])
@pytest.mark.parametrize("what", [None, "/", "/x"])
def test_writable_files_refuse_to_pickle(tmp_path: Path, mode: str, what: str | None) -> None:
    path = tmp_path / "w.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_array("/", "x", [1, 2, 3])
    with hyperslab.open_file(path, mode) as f:
        if mode == "w":
            f.create_array("/", "x", [1, 2, 3])
        obj = f if what is None else f.get_node(what)
        with pytest.raises(TypeError, match=r"open for writing \(mode '[arw+]+'\).*"
                           r"open_file\(path, 'r'\)") as info:
            pickle.dumps(obj)
        assert str(path) in str(info.value)


def test_closed_files_and_nodes_refuse_to_pickle(sample: Path) -> None:
    with hyperslab.open_file(sample) as f:
        node = f.root.g.carr
        node.close()
        with pytest.raises(hyperslab.ClosedNodeError, match="closed"):
            pickle.dumps(node)
    with pytest.raises(hyperslab.ClosedFileError, match="closed"):
        pickle.dumps(f)


def test_in_memory_images_refuse_to_pickle(sample: Path) -> None:
    image = sample.read_bytes()
    with hyperslab.open_file("image.h5", "r", driver="H5FD_CORE", driver_core_image=image,
                             driver_core_backing_store=0) as f:
        with pytest.raises(TypeError, match="in-memory image"):
            pickle.dumps(f.root.g.carr)


# ---------------------------------------------------------------------- array protocols
def test_chunks_as_h5py(sample: Path) -> None:
    with hyperslab.open_file(sample) as f, h5py.File(sample) as h:
        for path in NODES[2:]:
            node = f.get_node(path)
            assert node.chunks == h[path].chunks == node.chunkshape
        assert f.root.g.arr.chunks is None
        assert "chunks" not in dir(f.root.g)  # not on groups (natural naming)


def test_array_protocol(sample: Path) -> None:
    with hyperslab.open_file(sample) as f:
        carr = f.root.g.carr
        assert (carr.shape, carr.dtype, carr.ndim) == (A.shape, A.dtype, 2)
        assert np.array_equal(np.asarray(carr), A)
        assert np.asarray(carr, dtype=np.float32).dtype == np.float32
        assert np.array_equal(np.asarray(f.root.table), f.root.table.read())
        with pytest.raises(ValueError, match="copy=False"):
            np.asarray(carr, copy=False)


def test_array_protocol_ignores_flavor_and_takes_vlarrays(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "f.h5", "w") as f:
        arr = f.create_array("/", "p", [[1, 2], [3, 4]])
        arr.flavor = "python"
        got = np.asarray(arr)
        assert isinstance(got, np.ndarray) and got.tolist() == [[1, 2], [3, 4]]
        vl = f.create_vlarray("/", "vl", hyperslab.Int32Atom())
        vl.append([1, 2, 3])
        vl.append([4])
        rows = np.asarray(vl)
        assert rows.dtype == object and rows.shape == (2,)
        assert [r.tolist() for r in rows] == [[1, 2, 3], [4]]


# ---------------------------------------------------------------------- to_dask
def _aligned(chunks: tuple[tuple[int, ...], ...], chunkshape: tuple[int, ...]) -> bool:
    return all(all(s % c == 0 for s in sizes[:-1]) for sizes, c in zip(chunks, chunkshape,
                                                                        strict=True))


def test_to_dask_blocks_are_whole_chunks(sample: Path) -> None:
    with hyperslab.open_file(sample) as f:
        carr = f.root.g.carr
        with dask.config.set({"array.chunk-size": "8KiB"}):
            x = carr.to_dask()
        assert x.numblocks[0] > 1 and _aligned(x.chunks, carr.chunkshape)
        assert (x.shape, x.dtype) == (A.shape, A.dtype)
        with dask.config.set(scheduler="threads"):
            assert np.array_equal(x.compute(), A)
            assert x.sum().compute() == A.sum()
            for axis in (0, 1):
                assert np.array_equal(x.sum(axis=axis).compute(), A.sum(axis=axis))
            assert x.mean().compute() == A.mean()
            assert np.array_equal(x[5:50:3, ::-7].compute(), A[5:50:3, ::-7])
        earr = f.root.earr
        assert np.array_equal(earr.to_dask().compute(scheduler="threads"), earr.read())
        assert np.array_equal(f.root.g.arr.to_dask().compute(scheduler="threads"), A[:5])


def test_to_dask_takes_dask_chunks_and_names(sample: Path) -> None:
    with hyperslab.open_file(sample) as f:
        carr = f.root.g.carr
        x = carr.to_dask(chunks=(7, 70))
        assert x.chunks[0][:2] == (7, 7) and x.chunks[1] == (70,)
        assert np.array_equal(x.compute(scheduler="threads"), A)
        assert carr.to_dask().name == carr.to_dask().name  # read-only: deterministic
        assert carr.to_dask(name="mine").name == "mine"
    with hyperslab.open_file(sample, "a") as f:
        carr = f.root.g.carr
        assert carr.to_dask().name != carr.to_dask().name  # writable: may change


def test_to_dask_without_dask(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.array", None)
    with hyperslab.open_file(sample) as f, pytest.raises(ImportError, match="pip install"):
        f.root.g.carr.to_dask()


@pytest.mark.parametrize("filters", [hyperslab.Filters(5, "blosc2:zstd"),
                                     hyperslab.Filters(1, "blosc2:lz4", shuffle=False,
                                                       bitshuffle=True)])
def test_to_hyperslab_compresses_blosc2_chunks_in_the_tasks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: hyperslab.Filters) -> None:
    calls: list[tuple[int, ...]] = []
    compress = store.ChunkCompressor.__call__

    def spy(self: Any, block: Any, origin: tuple[int, ...]) -> Any:
        calls.append(origin)
        return compress(self, block, origin)

    monkeypatch.setattr(store.ChunkCompressor, "__call__", spy)
    written: list[tuple[int, ...]] = []
    write_chunk = hyperslab.CArray.write_chunk
    monkeypatch.setattr(hyperslab.CArray, "write_chunk",
                        lambda self, coords, data, mask=0: (
                            written.append(tuple(coords)), write_chunk(self, coords, data, mask)))
    values = A.astype(np.float64) / 7
    x = da.from_array(values, chunks=(16, 32))  # edge blocks and edge chunks
    path = tmp_path / "out.h5"
    with dask.config.set(scheduler="threads"):
        hyperslab.to_hyperslab(x, path, "/x", filters=filters, chunkshape=(8, 16))
    assert sorted(calls) == sorted((i, j) for i in range(0, 60, 16) for j in range(0, 70, 32))
    assert len(written) == 8 * 5  # every chunk written raw, once
    _check_written(path, "/x", values)


def test_to_hyperslab_other_filters_compress_in_the_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store.ChunkCompressor, "__call__", None)  # never called
    x = da.from_array(A, chunks=(16, 35))
    with dask.config.set(scheduler="threads"):
        hyperslab.to_hyperslab(x, tmp_path / "z.h5", "/x", filters=hyperslab.Filters(4, "zlib"))
        hyperslab.to_hyperslab(x, tmp_path / "z.h5", "/y")  # no filters
    _check_written(tmp_path / "z.h5", "/x", A)
    _check_written(tmp_path / "z.h5", "/y", A)


def test_to_dask_on_a_cluster_of_processes(sample: Path, client: Any) -> None:
    with hyperslab.open_file(sample) as f:
        with dask.config.set({"array.chunk-size": "8KiB"}):
            x = f.root.g.carr.to_dask()
        y = f.root.earr.to_dask()
        sums = client.compute([x.sum(), x.sum(axis=0), x.sum(axis=1), x.mean(), y.sum()],
                              sync=True)
        assert sums[0] == A.sum()
        assert np.array_equal(sums[1], A.sum(axis=0))
        assert np.array_equal(sums[2], A.sum(axis=1))
        assert sums[3] == A.mean()
        assert sums[4] == f.root.earr.read().sum()
        # Each worker opened the file once, whatever the number of tasks it ran.
        opened = client.run(lambda: len(pickling._registry))
        assert set(opened.values()) <= {0, 1} and sum(opened.values()) >= 1


def test_writable_leaf_graph_on_a_cluster_says_what_to_do(sample: Path, client: Any) -> None:
    with hyperslab.open_file(sample, "a") as f:
        x = f.root.g.carr.to_dask()
        with pytest.raises(Exception) as info:
            client.compute(x.sum(), sync=True)
    causes = []
    error: BaseException | None = info.value
    while error is not None:
        causes.append(error)
        error = error.__cause__ or error.__context__
    ours = [e for e in causes if isinstance(e, TypeError) and "open_file(path, 'r')" in str(e)]
    assert ours, causes


# ---------------------------------------------------------------------- writing
@pytest.mark.parametrize("lock", [True, False])
def test_dask_store_into_a_carray(tmp_path: Path, lock: bool) -> None:
    path = tmp_path / "store.h5"
    x = da.from_array(A, chunks=(13, 29))  # blocks that cut the chunks
    with hyperslab.open_file(path, "w") as f:
        c = f.create_carray("/", "c", hyperslab.Int64Atom(), shape=A.shape,
                            chunkshape=(8, 16), filters=BLOSC2)
        da.store(x, c, lock=lock, scheduler="threads")
    _check_written(path, "/c", A)


def _check_written(path: Path, node: str, expected: np.ndarray) -> None:
    with hyperslab.open_file(path) as f:
        assert np.array_equal(f.get_node(node)[:], expected)
    with tables.open_file(path) as t:
        assert np.array_equal(t.get_node(node)[:], expected)
    with h5py.File(path) as h:
        assert np.array_equal(h[node][:], expected)


def test_to_hyperslab_aligns_chunks_with_the_blocks(tmp_path: Path) -> None:
    path = tmp_path / "out.h5"
    x = da.from_array(A, chunks=(30, 35))
    assert hyperslab.to_hyperslab(x + 1, path, "/a/b", filters=BLOSC2,
                                  createparents=True, title="t") is None
    with hyperslab.open_file(path) as f:
        b = f.root.a.b
        assert _aligned(x.chunks, b.chunkshape) and b.title == "t" and b.filters == BLOSC2
    _check_written(path, "/a/b", A + 1)


def test_to_hyperslab_rechunks_to_a_given_chunkshape(tmp_path: Path) -> None:
    path = tmp_path / "out.h5"
    x = da.from_array(A, chunks=(7, 70))
    with hyperslab.open_file(path, "w") as f:
        c = hyperslab.to_hyperslab(x, f, "/c", chunkshape=(10, 16), blocks_in_flight=2)
        assert c.chunkshape == (10, 16) and np.array_equal(c[:], A)
        with pytest.raises(hyperslab.NodeError):
            hyperslab.to_hyperslab(x, f, "/c")
        hyperslab.to_hyperslab(x * 2, f, "/c", overwrite=True)
    _check_written(path, "/c", A * 2)


def test_to_hyperslab_refuses_bad_targets(tmp_path: Path, sample: Path) -> None:
    with hyperslab.open_file(sample) as f, pytest.raises(hyperslab.FileModeError):
        hyperslab.to_hyperslab(da.ones(3), f, "/y")
    with pytest.raises(ValueError, match="scalar"):
        hyperslab.to_hyperslab(da.ones(()), tmp_path / "s.h5", "/s")


def test_to_hyperslab_from_a_cluster(tmp_path: Path, sample: Path, client: Any) -> None:
    path = tmp_path / "out.h5"
    with hyperslab.open_file(sample) as f:
        with dask.config.set({"array.chunk-size": "8KiB"}):
            x = f.root.g.carr.to_dask()
        hyperslab.to_hyperslab(x * 3, path, "/x", filters=BLOSC2)  # blocks by the cluster
    _check_written(path, "/x", A * 3)


def test_to_hyperslab_from_a_cluster_writes_frames_as_they_arrive(
        tmp_path: Path, sample: Path, client: Any) -> None:
    path = tmp_path / "out.h5"
    with hyperslab.open_file(sample) as f:
        x = f.root.g.carr.to_dask(chunks=(16, 32)).astype(np.float32) / 3
        with hyperslab.open_file(path, "w") as out:
            c = hyperslab.to_hyperslab(x, out, "/x", chunkshape=(8, 16), blocks_in_flight=2,
                                       filters=hyperslab.Filters(5, "blosc2:lz4"))
            assert store.ChunkCompressor.of(c) is not None
    _check_written(path, "/x", A.astype(np.float32) / 3)
