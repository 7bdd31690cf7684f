"""Lazy loading and the per-File node cache with PyTables' NODE_CACHE_SLOTS semantics."""

from __future__ import annotations

import gc
import re
from pathlib import Path

import numpy as np
import pytest

import hyperslab
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.files.nodecache import NodeCache


def _make(path: Path, ngroups: int = 5, nleaves: int = 20) -> None:
    with hyperslab.open_file(path, "w") as f:
        for g in range(ngroups):
            group = f.create_group("/", f"g{g}")
            for i in range(nleaves):
                f.create_array(group, f"a{i}", np.arange(3))


def test_opening_loads_nothing_below_root(h5path: Path) -> None:
    _make(h5path)
    with hyperslab.open_file(h5path, "r") as f:
        assert len(f._cache) == 0
        f.root.g1.a3  # noqa: B018
        assert len(f._cache) == 2


@pytest.mark.parametrize("slots", [4, 32])
def test_positive_slots_bound_the_cache(h5path: Path, slots: int) -> None:
    _make(h5path)
    with hyperslab.open_file(h5path, "r", node_cache_slots=slots) as f:
        assert f.node_cache_slots == slots
        nodes = sum(1 for _ in f)
        assert nodes == 1 + 5 + 100
        gc.collect()
        assert len(f._cache) == slots


def test_negative_slots_keep_all_and_warn_once(h5path: Path) -> None:
    _make(h5path)
    with hyperslab.open_file(h5path, "r", node_cache_slots=-10) as f:
        with pytest.warns(hyperslab.PerformanceWarning, match="more than the 10 allowed"):
            for _ in f:
                pass
        assert len(f._cache) == 105  # every node but the root, which the File holds
        for _ in f:  # no second warning (warnings are errors in this test suite)
            pass


def test_zero_slots_disable_caching_but_keep_identity(h5path: Path) -> None:
    _make(h5path)
    with hyperslab.open_file(h5path, "r", node_cache_slots=0) as f:
        for _ in f:
            pass
        assert len(f._cache) == 0
        held = f.root.g2.a1
        assert f.get_node("/g2/a1") is held


def test_parameters_default_is_used(h5path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _make(h5path, 1, 3)
    monkeypatch.setattr(hyperslab.parameters, "NODE_CACHE_SLOTS", 7)
    with hyperslab.open_file(h5path, "r") as f:
        assert f.node_cache_slots == 7
    with hyperslab.open_file(h5path, "r", NODE_CACHE_SLOTS=3) as f:
        assert f.node_cache_slots == 3
    with pytest.raises(TypeError, match="unknown parameter 'NO_SUCH'"):
        hyperslab.open_file(h5path, "r", NO_SUCH=1)


def test_live_objects_follow_renames_after_eviction(h5path: Path) -> None:
    _make(h5path)
    with hyperslab.open_file(h5path, "a", node_cache_slots=2) as f:
        leaf = f.root.g0.a0
        group = f.root.g0
        for _ in f:  # evicts both from the LRU; the weak registry keeps them
            pass
        f.rename_node("/g0", "h0")
        assert leaf.path == "/h0/a0" and group._v_pathname == "/h0"
        assert f.get_node("/h0/a0") is leaf
        np.testing.assert_array_equal(leaf[:], np.arange(3))
        f.move_node(leaf, "/g1", "moved")
        assert leaf.path == "/g1/moved"
        assert f.root.g1.moved is leaf


def test_closed_node_is_reloaded(h5path: Path) -> None:
    _make(h5path, 1, 1)
    with hyperslab.open_file(h5path, "r") as f:
        node = f.root.g0.a0
        node.close()
        assert not node.isopen
        fresh = f.root.g0.a0
        assert fresh is not node and fresh.isopen


class _Item:
    def __init__(self, path: str) -> None:
        self._v_pathname = path


def test_cache_unit_lru_order() -> None:
    cache = NodeCache(2)
    items = [_Item(f"/n{i}") for i in range(3)]
    for item in items:
        cache.add(item)
    assert len(cache) == 2
    assert cache.get("/n0") is items[0]  # still alive through our references
    cache.repath("/n1", "/m1")
    assert items[1]._v_pathname == "/m1" and cache.get("/m1") is items[1]
    gone = cache.drop("/m1")
    assert gone == [items[1]] and cache.get("/m1") is None


def test_metadata_cache_is_bounded(h5path: Path) -> None:
    _make(h5path, 1, 1)
    with hyperslab.open_file(h5path, "r", METADATA_CACHE_SIZE=1 << 20) as f:
        config = f._h5.id.get_mdc_config()
        assert config.max_size == 1 << 20 and config.initial_size == 1 << 20


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
def test_existing_files_open_with_the_cache_settings(h5path: Path, mode: str) -> None:
    """Files opened as they exist get the chunk and metadata cache settings asked for, in
    every mode (they are set before HDF5 opens the file)."""
    _make(h5path, 1, 1)
    with hyperslab.open_file(h5path, mode, CHUNK_CACHE_SIZE=3 << 20, CHUNK_CACHE_NELMTS=997,
                             CHUNK_CACHE_PREEMPT=0.5, METADATA_CACHE_SIZE=1 << 21) as f:
        assert f._h5.id.get_access_plist().get_cache()[1:] == (997, 3 << 20, 0.5)
        assert f._h5.id.get_mdc_config().max_size == 1 << 21
        assert f.mode == mode and f._h5.mode == ("r" if mode == "r" else "r+")


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
def test_a_file_hdf5_refuses_names_itself_and_the_mode(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "not.h5"
    path.write_bytes(b"not an HDF5 file")
    expected = f"unable to open HDF5 file .*not\\.h5.* in mode '{re.escape(mode)}'"
    with pytest.raises(HDF5ExtError, match=expected):
        hyperslab.open_file(path, mode)
    assert path.read_bytes() == b"not an HDF5 file"


def test_pytables_node_manager_shows_the_cache_slots(tmp_path: Path) -> None:
    """PyTables code reads ``file._node_manager.cache.nslots`` (its tests do)."""
    with hyperslab.open_file(str(tmp_path / "n.h5"), "w", node_cache_slots=7) as f:
        assert f._node_manager.cache.nslots == 7 == f.node_cache_slots
