"""Hard, soft and external links, with PyTables and h5py as oracles in both directions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab


def _links(lib: Any, path: Path, ext: Path) -> None:
    """The same tree of links, written by ``lib`` (hyperslab or PyTables)."""
    with lib.open_file(ext, "w") as e:
        e.create_array("/", "earr", np.arange(4))
        e.create_group("/", "eg")
    with lib.open_file(path, "w") as f:
        f.create_array("/", "arr", np.arange(5))
        g = f.create_group("/", "g")
        f.create_array(g, "inner", np.arange(3))
        f.create_soft_link("/", "soft", "/arr")
        f.create_soft_link(g, "rel", "inner")
        f.create_soft_link("/", "lg", g)
        f.create_soft_link("/", "dangling", "/nothing/here")
        f.create_hard_link("/", "hard", "/g/inner")
        f.create_external_link("/", "ext", f"{ext.name}:/earr")
        f.create_soft_link("/deep/er", "soft2", "/arr", createparents=True)


def _summary(lib: Any, path: Path) -> dict[str, Any]:
    """What a library reads of the tree of links ``_links`` writes."""
    with lib.open_file(path, "r") as f:
        nodes = {n._v_pathname: type(n).__name__ for n in f.walk_nodes("/")}
        links = {n._v_pathname: n.target for n in f.walk_nodes("/", "Link")}
        soft = [n._v_pathname for n in f.walk_nodes("/", "SoftLink")]
        ext = f.root.ext
        ext_node = ext()
        summary = {
            "nodes": nodes, "links": links, "soft": soft,
            "soft()": f.root.soft()[:].tolist(), "rel()": f.root.g.rel()[:].tolist(),
            "lg().inner": f.root.lg().inner[:].tolist(),
            "hard": f.root.hard[:].tolist(), "ext()": ext_node[:].tolist(),
            "strs": sorted(str(n) for n in f.walk_nodes("/", "Link")),
            "_v_links": sorted(f.root._v_links),
        }
        ext.umount()
    return summary


@pytest.mark.parametrize("writer", ["hyperslab", "pytables"])
def test_links_read_alike(tmp_path: Path, writer: str) -> None:
    path, ext = tmp_path / "links.h5", tmp_path / "ext.h5"
    _links(hyperslab if writer == "hyperslab" else tables, path, ext)
    ours, theirs = _summary(hyperslab, path), _summary(tables, path)
    assert ours == theirs
    assert ours["nodes"]["/soft"] == "SoftLink" and ours["nodes"]["/hard"] == "Array"
    assert "/dangling (SoftLink) -> /nothing/here (dangling)" in ours["strs"]
    with h5py.File(path, "r") as h:
        assert isinstance(h.get("soft", getlink=True), h5py.SoftLink)
        assert h.get("g/rel", getlink=True).path == "inner"
        assert isinstance(h.get("ext", getlink=True), h5py.ExternalLink)
        assert h["hard"].id == h["g/inner"].id  # one object, two names


def test_soft_link_reaches_its_target(h5file: hyperslab.File) -> None:
    a = h5file.create_array("/", "a", np.arange(10))
    g = h5file.create_group("/", "g")
    link = h5file.create_soft_link("/", "la", "/a")
    lg = h5file.create_soft_link("/", "lg", g)
    chained = h5file.create_soft_link("/", "llg", "/lg")
    assert link() is a and link.dereference() is a and not link.is_dangling()
    assert chained() is lg and chained()() is g
    assert link.shape == (10,) and link.name == "a" and link.attrs.CLASS == "ARRAY"
    link[0] = -1
    assert a[0] == -1 and link[:3].tolist() == [-1, 1, 2]
    link.attrs.units = "m"  # the target's attributes, as in PyTables
    assert a.attrs.units == "m" and link._v_attrs._f_list("all") == []
    new = h5file.create_array(chained, "new", [1, 2])  # a group through two links
    assert new._v_pathname == "/g/new" and h5file.get_node("/llg/new") is new
    assert chained.new is new and h5file.root.lg.new is new
    assert link._v_pathname == "/la" and link.target == "/a"
    h5file.remove_node("/a")
    assert link.is_dangling() and "(dangling)" in str(link)
    with pytest.raises(hyperslab.NoSuchNodeError):
        link()
    with pytest.raises(hyperslab.NoSuchNodeError):
        link.shape  # noqa: B018


def test_get_node_classname_of_links(h5file: hyperslab.File) -> None:
    h5file.create_group("/", "g")
    h5file.create_soft_link("/", "lg", "/g")
    assert isinstance(h5file.get_node("/lg", classname="SoftLink"), hyperslab.SoftLink)
    assert isinstance(h5file.get_node("/lg", classname="Link"), hyperslab.Link)
    for error in (hyperslab.NoSuchNodeError, TypeError):  # PyTables': NoSuchNodeError
        with pytest.raises(error, match="could not find a ``Group`` node at ``/lg``"):
            h5file.get_node("/lg", classname="Group")
    assert [n._v_pathname for n in h5file.list_nodes("/", "Link")] == ["/lg"]
    assert [n._v_pathname for n in h5file.walk_nodes("/", "Group")] == ["/", "/g"]


def test_hard_links(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w") as f:
        g = f.create_group("/", "g")
        f.create_array(g, "x", np.arange(3))
        lg = f.create_hard_link("/", "lg", g)
        assert isinstance(lg, hyperslab.Group) and lg._v_children == g._v_children
        assert f.create_hard_link(g, "y", "/g/x")[:].tolist() == [0, 1, 2]
        with pytest.raises(hyperslab.NodeError, match="already has a child"):
            f.create_hard_link("/", "lg", g)
        with pytest.raises(hyperslab.NoSuchNodeError):
            f.create_hard_link("/", "nope", "/nothing")
        f.remove_node("/g", recursive=True)
        assert f.root.lg.x[:].tolist() == [0, 1, 2]  # the object lives on under /lg
    with tables.open_file(h5path, "r") as t:
        assert t.root.lg.y[:].tolist() == [0, 1, 2] and "/g" not in t


def test_external_link_mounts_its_file(tmp_path: Path) -> None:
    ext = tmp_path / "sub" / "ext.h5"
    ext.parent.mkdir()
    with tables.open_file(ext, "w") as e:
        e.create_array("/", "x", np.arange(4))
    path = tmp_path / "sub" / "main.h5"
    with hyperslab.open_file(path, "w") as f:
        by_node_target = f.create_external_link("/", "rel", "ext.h5:/x")
        assert by_node_target.extfile is None and by_node_target.target == "ext.h5:/x"
        node = by_node_target()  # found beside this file
        extfile = by_node_target.extfile
        assert node[:].tolist() == [0, 1, 2, 3] and extfile.mode == "r"
        assert by_node_target() is node  # mounted once
        with pytest.raises(ValueError, match="umount"):
            by_node_target(mode="a")
        by_node_target.umount()
        assert by_node_target.extfile is None and not extfile.isopen
        by_node_target()
        extfile = by_node_target.extfile
        with pytest.raises(ValueError, match="expressed as 'file:/path"):
            f.create_external_link("/", "bad", "no-colon-slash")
    assert not extfile.isopen  # closed with the link's file
    with tables.open_file(path, "r") as t:
        assert t.root.rel.target == "ext.h5:/x"
        assert t.root.rel()[:].tolist() == [0, 1, 2, 3]
        t.root.rel.umount()


def test_links_copied_moved_renamed_removed(tmp_path: Path) -> None:
    """The same operations on links give the same files with either library."""
    def run(f: Any, other: Any) -> None:
        f.create_group("/", "g")
        f.create_array("/", "a", [1, 2])
        soft = f.create_soft_link("/", "soft", "/g")
        ext = f.create_external_link("/", "ext", "other.h5:/x")
        soft.copy("/g", "copied")
        soft.copy("/g", "copied", overwrite=True)
        ext.copy(other.root, "ext_there")
        soft.copy(other.root, "soft_there")
        soft.move("/g", "moved")
        ext.rename("renamed")
        f.root.a.copy("/deep", "a2", False, True)  # Leaf.copy: createparents 4th
        f.create_soft_link("/", "gone", "/a").remove()

    paths = (tmp_path / "ours.h5", tmp_path / "ours2.h5"), (tmp_path / "pt.h5",
                                                            tmp_path / "pt2.h5")
    for (main, second), library in zip(paths, (hyperslab, tables), strict=True):
        with library.open_file(main, "w") as f, library.open_file(second, "w") as other:
            run(f, other)
    assert _dump(paths[0][0]) == _dump(paths[1][0]) and _dump(paths[0][1]) == _dump(paths[1][1])
    assert _dump(paths[0][0])["g/moved"] == ("SoftLink", "/g")


def _dump(path: Path) -> dict[str, Any]:
    """Every link of a file, as h5py sees it (kind and target)."""
    seen: dict[str, Any] = {}
    with h5py.File(path, "r") as h:
        def visit(name: str, _: Any) -> None:
            link = h.get(name, getlink=True)
            target: Callable[[], Any] = {
                h5py.SoftLink: lambda: link.path,
                h5py.ExternalLink: lambda: (link.filename, link.path),
            }.get(type(link), lambda: None)
            seen[name] = (type(link).__name__, target())

        h.visititems_links(visit)
    return seen


def test_open_in_w_while_open_is_refused(h5path: Path) -> None:
    with hyperslab.open_file(h5path, "w"), pytest.raises(ValueError, match="already opened"):
        hyperslab.open_file(h5path, "w")
