"""Copying nodes, groups' children and whole files as PyTables does (PyTables as oracle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab

_ROW = np.dtype([("i", "<i4"), ("s", "S4")])


def _source(lib: Any, path: Path) -> None:
    """A small tree of every kind of node, with attributes, filters and a hard link."""
    with lib.open_file(path, "w", title="source") as f:
        f.root._v_attrs.rootattr = 7
        g = f.create_group("/", "g", "group g", filters=lib.Filters(1, "zlib"))
        g._v_attrs.gattr = "x"
        a = f.create_array(g, "a", np.arange(10), "array a")
        a.attrs.units = "m"
        f.create_array("/", "listy", [1, 2, 3])  # python flavor
        e = f.create_earray(g, "e", lib.Float64Atom(), (0, 3), chunkshape=(4, 3))
        e.append(np.arange(30.0).reshape(10, 3))
        c = f.create_carray("/", "c", lib.Int16Atom(), (6, 4), chunkshape=(2, 4))
        c[...] = np.arange(24).reshape(6, 4)
        t = f.create_table(g, "t", _ROW, "table t", expectedrows=10)
        t.append([(i, str(i).encode()) for i in range(10)])
        t.attrs.tattr = 1.5
        f.create_group(g, "sub")
        f.create_array("/g/sub", "deep", np.ones(3))
        f.create_soft_link("/", "soft", "/g/a")
        f.create_hard_link("/", "hard", "/g/sub/deep")


def _tree(path: Path) -> dict[str, Any]:
    """Everything PyTables reads of a file: classes, titles, data, user attributes,
    filters and chunk shapes of every node."""
    out: dict[str, Any] = {}
    with tables.open_file(path, "r") as f:
        out["/"] = (f.title, {n: str(f.root._v_attrs[n])
                              for n in f.root._v_attrs._f_list("user")})
        for node in f.walk_nodes("/"):
            key = node._v_pathname
            if isinstance(node, tables.link.Link):
                out[key] = (type(node).__name__, node.target)
            elif isinstance(node, tables.Group):
                out[key] = ("Group", node._v_title, node._v_filters,
                            {n: str(node._v_attrs[n]) for n in node._v_attrs._f_list("user")})
            else:
                data = node.read()
                out[key] = (type(node).__name__, node.title, node.flavor, node.filters,
                            node.chunkshape, repr(data),
                            {n: str(node.attrs[n]) for n in node.attrs._f_list("user")})
    return out


@pytest.mark.parametrize("writer", ["hyperslab", "pytables"])
@pytest.mark.parametrize("options", [{}, {"filters": tables.Filters(3, "zlib")},
                                     {"copyuserattrs": False, "title": "new title"}],
                         ids=["plain", "filters", "noattrs"])
def test_copy_file_as_pytables(tmp_path: Path, writer: str, options: dict[str, Any]) -> None:
    src = tmp_path / "src.h5"
    _source(hyperslab if writer == "hyperslab" else tables, src)
    ours, theirs = tmp_path / "ours.h5", tmp_path / "theirs.h5"
    ours_opts = {k: (hyperslab.Filters(3, "zlib") if k == "filters" else v)
                 for k, v in options.items()}
    our_stats = {"groups": 0, "leaves": 0, "links": 0, "bytes": 0, "hardlinks": 0}
    their_stats = dict(our_stats)
    hyperslab.copy_file(src, ours, stats=our_stats, **ours_opts)
    tables.copy_file(str(src), str(theirs), stats=their_stats, **options)
    assert _tree(ours) == _tree(theirs)
    assert our_stats == their_stats
    with pytest.raises(OSError, match="already exists"):
        hyperslab.copy_file(src, ours)
    hyperslab.copy_file(src, ours, overwrite=True)  # replaced
    with hyperslab.open_file(src, "r") as f, pytest.raises(OSError, match="over itself"):
        f.copy_file(src)


def test_copy_file_use_hardlinks(tmp_path: Path) -> None:
    src = tmp_path / "src.h5"
    _source(tables, src)
    ours, theirs = tmp_path / "ours.h5", tmp_path / "theirs.h5"
    with hyperslab.open_file(src, "r") as f:
        f.copy_file(ours, use_hardlinks=True)
    with tables.open_file(str(src), "r") as t:
        t.copy_file(str(theirs), use_hardlinks=True)
    assert _tree(ours) == _tree(theirs)
    for path in (ours, theirs):
        with h5py.File(path, "r") as h:
            assert h["hard"].id == h["g/sub/deep"].id  # one object in the copy too


@pytest.mark.parametrize("recursive", [False, True])
def test_copy_children_as_pytables(tmp_path: Path, recursive: bool) -> None:
    src = tmp_path / "src.h5"
    _source(tables, src)
    results = []
    for lib in (hyperslab, tables):
        dst = tmp_path / f"{lib.__name__}.h5"
        with lib.open_file(src, "a") as f, lib.open_file(dst, "w") as d:
            d.create_array("/", "a", [0])  # a clash
            with pytest.raises(lib.NodeError, match="overwrite"):
                f.copy_children("/g", d.root, recursive=recursive)
            assert list(d.root._v_children) == ["a"]  # nothing copied
            f.copy_children("/g", d.root, overwrite=True, recursive=recursive, start=2,
                            stop=8, step=3, createparents=False)
            f.root.g._f_copy_children(d.create_group("/", "again"), recursive=recursive)
        results.append(_tree(dst))
    assert results[0] == results[1]


def test_copy_node_variants(tmp_path: Path) -> None:
    src = tmp_path / "src.h5"
    _source(hyperslab, src)
    results = []
    for lib in (hyperslab, tables):
        dst = tmp_path / f"{lib.__name__}.h5"
        with lib.open_file(src, "a") as f, lib.open_file(dst, "w") as d:
            f.copy_node("/g", d.root, recursive=True)  # to another file
            f.copy_node(f.root, d.root.g, recursive=True)  # root: its children there
            with pytest.raises(OSError):
                f.copy_node(f.root, f.root, recursive=True)
            with pytest.raises(lib.NodeError):
                f.copy_node("/g", "/g/sub", recursive=True)
            with pytest.raises(lib.NodeError):
                f.copy_node("/g/a", newname="a")  # onto itself
            f.copy_node("/g", "/x/y", "gcopy", recursive=True, createparents=True,
                        title="copied")
            f.copy_node("/g/e", newname="e2", chunkshape="auto")
            f.copy_node("/g/e", newname="e3", chunkshape=(2, 3), start=1, step=2)
            f.copy_node("/c", newname="c2", chunkshape="keep", filters=lib.Filters(2, "zlib"))
            f.root.g.t.copy("/", "t2", False, False, start=3, title="t2")
            f.root.listy.copy(newname="listy2", copyuserattrs=False)
            f.copy_node("/soft", "/x", "soft2")
            f.copy_node("/g/a", "/", "a", overwrite=False)
            f.copy_node("/c", "/", "a", overwrite=True)
        results.append((_tree(src), _tree(dst)))
        _source(hyperslab, src)
    for ours, theirs in zip(results[0], results[1], strict=True):
        assert ours.keys() == theirs.keys()
        for key in ours:
            assert ours[key] == theirs[key], key


def test_leaf_copy_positional_order(h5file: hyperslab.File) -> None:
    """``Leaf.copy(newparent, newname, overwrite, createparents, **kwargs)`` as PyTables:
    the fourth argument creates the parents (no ``recursive`` among them)."""
    leaf = h5file.create_array("/", "x", np.arange(3))
    new = leaf.copy("/a/b", "y", False, True)
    assert new._v_pathname == "/a/b/y" and new[:].tolist() == [0, 1, 2]
    with pytest.raises(hyperslab.NoSuchNodeError):
        leaf.copy("/c/d", "y", False, False)
    with pytest.raises(TypeError, match="unknown copy options"):
        leaf.copy("/", "z", titel="typo")
