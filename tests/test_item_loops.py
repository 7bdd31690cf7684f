"""Loops of single reads (``arr[i]`` of a 1-D leaf of a read-only file): after the first
read, ``Leaf.__getitem__`` hands an int straight to ``ChunkEngine.read_int_item``.

Oracles: h5py (files written by it, every item read back by both) and NumPy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest

import hyperslab
from hyperslab.chunked.engine import ChunkEngine
from hyperslab.chunked.frameaudit import FrameAudit
from hyperslab.errors import ClosedNodeError
from hyperslab.storage import preads

FILTERS: dict[str, dict[str, Any]] = {
    "plain": {},
    "blosc2": dict(hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE)),
}
DTYPES = ["<f8", "<i2", "u1", "?", "<c8", ">f4"]


def _write(path: Path, data: np.ndarray, kind: str, chunk: int = 7) -> None:
    with h5py.File(path, "w") as h:
        h.create_dataset("a", data=data, chunks=(chunk,), **FILTERS[kind])


def _data(dtype: str, n: int = 50) -> np.ndarray:
    values = np.arange(n) * 3 - 40
    if dtype == "?":
        return values % 3 == 0
    scaled = values / 7 if np.dtype(dtype).kind in "fc" else values
    return scaled.astype(dtype)


def _no_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the general single-item path fail the test (the new path must answer)."""
    def refuse(self: ChunkEngine, key: Any) -> None:
        raise AssertionError(f"arr[{key!r}] took the general path")
    monkeypatch.setattr(ChunkEngine, "item_index", refuse)


@pytest.mark.parametrize("kind", list(FILTERS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_loops_of_items_read_what_h5py_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             kind: str, dtype: str) -> None:
    path = tmp_path / "a.h5"
    data = _data(dtype)
    _write(path, data, kind)
    native = np.dtype(dtype).isnative
    # h5py's bools are an int8 enum, which PyTables (and so hyperslab) reads as int8
    want = np.dtype("i1") if dtype == "?" else np.dtype(dtype).newbyteorder("=")
    with h5py.File(path, "r") as h, hyperslab.open_file(path, "r") as f:
        arr: Any = f.root.a
        first = arr[3]  # the first read sets the engine up (general path)
        assert first == h["a"][3]
        with monkeypatch.context() as m:
            if native:  # big-endian data: not served (the general path converts it)
                _no_general_path(m)
            for i in [*range(-len(data), len(data)), 49, 0, -1]:
                value, expected = arr[i], h["a"][i]
                assert value == expected == data[i]
                assert type(value) is want.type and value.dtype == want
        assert arr._engine._int_items is native


@pytest.mark.parametrize("kind", list(FILTERS))
def test_items_through_the_chunk_index_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           kind: str) -> None:
    path = tmp_path / "a.h5"
    data = _data("<f8", 200)
    _write(path, data, kind, chunk=4)
    monkeypatch.setattr(preads, "INDEX_BUILD_SECONDS_PER_CHUNK", 0.0)  # index at once
    with hyperslab.open_file(path, "r") as f:
        arr: Any = f.root.a
        assert arr[0] == data[0]
        with monkeypatch.context() as m:
            _no_general_path(m)
            got = [arr[i] for i in range(len(data))]
        assert not arr._engine._items_via_hdf5
    np.testing.assert_array_equal(np.array(got), data)


@pytest.mark.parametrize("key", [50, -51, 10**20])
def test_out_of_bounds_ints_raise_as_before(tmp_path: Path, key: int) -> None:
    path = tmp_path / "a.h5"
    _write(path, _data("<f8"), "plain")
    with hyperslab.open_file(path, "r") as f:
        arr: Any = f.root.a
        assert arr[0] == _data("<f8")[0]
        with pytest.raises(IndexError, match=str(key)):
            arr[key]


def test_what_is_not_served_keeps_its_path(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    data = _data("<f8")
    _write(path, data, "blosc2")
    with h5py.File(path, "a") as h:
        h.create_dataset("b", data=data.reshape(5, 10), chunks=(2, 3))
    with hyperslab.open_file(path, "a") as f:
        f.root.a.flavor = "python"
    with hyperslab.open_file(path, "r") as f:
        arr: Any = f.root.a
        assert [arr[1], arr[1]] == [data[1], data[1]]
        assert type(arr[1]) is float  # the flavor still applies
        two: Any = f.root.b
        assert two[1, 2] == two[np.int64(1), 2] == data[12]
        assert not two._engine._int_items
        assert arr[np.int64(4)] == data[4]  # not an int: the general path
    with hyperslab.open_file(path, "a") as f:  # writable: readers take the leaf's lock
        arr = f.root.a
        arr.flavor = "numpy"
        assert arr[5] == data[5]
        arr[5] = 1.5
        assert arr[5] == 1.5


def test_closed_nodes_and_files_refuse_reads(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    _write(path, _data("<f8"), "plain")
    f = hyperslab.open_file(path, "r")
    arr: Any = f.root.a
    assert arr[2] == _data("<f8")[2]
    arr._f_close()
    with pytest.raises(ClosedNodeError):
        arr[2]
    arr = f.root.a
    assert arr[2] == _data("<f8")[2]
    f.close()
    with pytest.raises(ClosedNodeError):
        arr[2]


@pytest.mark.parametrize("kind", list(FILTERS))
def test_single_items_leave_the_frame_audit_unmade(tmp_path: Path, kind: str) -> None:
    """The audit of Blosc2 frames (for reads through HDF5's filter) is made at the first
    read that needs it, not with the engine: single items never do."""
    path = tmp_path / "a.h5"
    data = _data("<f8", 60)
    _write(path, data, kind, chunk=8)
    with hyperslab.open_file(path, "r") as f:
        arr: Any = f.root.a
        assert [arr[i] for i in (5, 17, -1)] == [data[5], data[17], data[-1]]
        engine = arr._engine
        assert engine._audit is None
        assert engine.filter_decodes(None) is True  # h5py's filter decodes these frames
        assert (engine._audit is not None) is (kind == "blosc2")
        if kind == "blosc2":
            assert isinstance(engine._audit, FrameAudit)
            audit = engine._audit
            assert engine.filter_decodes((slice(3, 40),)) is True
            assert engine._audit is audit  # made once
        np.testing.assert_array_equal(arr[3:40], data[3:40])
