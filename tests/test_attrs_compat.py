"""Attribute sets as PyTables has them (PyTables as oracle): system attributes users may
set, rename and delete, what copies carry, what listings show, and the leaf helpers."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.nodes.files.flushguard import MARK

LIBS = pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "pytables"])
_ROW = np.dtype([("i", "<i4"), ("s", "S4")])


def _make(lib: Any, path: Path) -> None:
    with lib.open_file(str(path), "w") as f:
        f.create_group("/", "g", "a group")
        f.create_array("/", "a", np.arange(4), "an array")
        t = f.create_table("/", "t", _ROW, "a table")
        t.append([(1, b"x")])


def _system_changes(lib: Any, path: Path) -> dict[str, Any]:
    """Change system attributes in one session; what each library shows then and after a
    reopen (node classes included)."""
    _make(lib, path)
    seen: dict[str, Any] = {}
    with lib.open_file(str(path), "a") as f:
        del f.root.g._v_attrs.CLASS
        seen["g sys"] = f.root.g._v_attrs._f_list("sys")
        f.root.a.attrs._f_rename("CLASS", "op")
        seen["a all"] = f.root.a.attrs._f_list("all")
        f.root.t.attrs["CLASS"] = "TABLE2"
        f.root.t.attrs["VERSION"] = "1.3"
        seen["t class"] = (f.root.t.attrs.CLASS, f.root.t.attrs["VERSION"])
        f.root.t.attrs.NROWS = 1  # PyTables lets it be written (and rewrites it on flush)
    with lib.open_file(str(path)) as f:
        for name in ["g", "a", "t"]:
            node = f.get_node("/" + name)
            seen[name + " reopened"] = (type(node).__name__, node._v_attrs._f_list("all"))
        seen["t rows"] = f.root.t.read().tolist()
        seen["t class reopened"] = f.root.t.attrs.CLASS
    return seen


def test_system_attributes_can_be_changed_as_in_pytables(tmp_path: Path) -> None:
    ours = _system_changes(hyperslab, tmp_path / "ours.h5")
    theirs = _system_changes(tables, tmp_path / "theirs.h5")
    assert ours == theirs
    assert ours["g sys"] == ["TITLE", "VERSION"] and ours["t class reopened"] == "TABLE2"
    with h5py.File(tmp_path / "ours.h5") as h5:  # what another program reads
        assert "CLASS" not in h5["g"].attrs and h5["t"].attrs["CLASS"] == b"TABLE2"


def _copies(lib: Any, path: Path) -> dict[str, Any]:
    _make(lib, path)
    with lib.open_file(str(path), "a") as f:
        f.root.g._v_attrs["CLASS"] = "GROUP2"
        f.root.g._v_attrs["VERSION"] = "1.3"
        f.root.a.attrs["VERSION"] = "0.9"
        f.root.a.attrs["NODE_TYPE"] = "file"
        f.root.a.attrs.user = 5
        f.copy_node("/g", "/", "g2")
        f.copy_node("/a", "/", "a2", start=1)  # a copy that reads and writes the rows
        f.copy_node("/a", "/", "a3", copyuserattrs=False)
    with lib.open_file(str(path)) as f:
        return {name: (type(f.get_node(name)).__name__,
                       {k: str(v) for k, v in ((k, f.get_node(name)._v_attrs[k])
                                               for k in f.get_node(name)._v_attrs._f_list("all"))
                        if k != "FILTERS"})
                for name in ["/g2", "/a2", "/a3"]}


def test_copies_carry_class_and_version_as_in_pytables(tmp_path: Path) -> None:
    ours = _copies(hyperslab, tmp_path / "ours.h5")
    assert ours == _copies(tables, tmp_path / "theirs.h5")
    assert ours["/g2"][1]["CLASS"] == "GROUP2" and ours["/a2"][1]["NODE_TYPE"] == "file"


def _listings(lib: Any, path: Path) -> dict[str, Any]:
    """Attribute listings of leaves changed in this session (no flush, no close yet)."""
    with lib.open_file(str(path), "w") as f:
        t = f.create_table("/", "t", _ROW)
        t.append([(1, b"x")] * 10)
        t.flush()
        t.append([(2, b"y")])
        e = f.create_earray("/", "e", lib.Int32Atom(), (0,))
        e.append(np.arange(5))
        t.attrs.pq = 1
        listed = {name: (node.attrs._v_attrnames, node.attrs._v_attrnamessys,
                         node.attrs._v_attrnamesuser,
                         sorted(n for n in dir(node.attrs) if n.isupper()))
                  for name, node in [("t", t), ("e", e)]}
        listed["in"] = [MARK in t.attrs, "" in t.attrs, "pq" in t.attrs]
        if lib is hyperslab:  # the mark is in the file (h5py sees it), not in the listings
            assert len(t.attrs) == len(t.attrs._v_attrnames)
            assert t.attrs[MARK] == 10 and getattr(e.attrs, MARK) == 0  # as flushed
            with pytest.raises(AttributeError, match="flush mark"):
                t.attrs[MARK] = 3
            with pytest.raises(AttributeError, match="flush mark"):
                delattr(e.attrs, MARK)
    return listed


def test_listings_leave_out_the_flush_mark(tmp_path: Path) -> None:
    assert _listings(hyperslab, tmp_path / "ours.h5") == _listings(tables, tmp_path / "t.h5")


@LIBS
def test_dir_lists_identifiers_only(tmp_path: Path, lib: Any) -> None:
    with lib.open_file(str(tmp_path / "d.h5"), "w") as f:
        attrs = f.root._v_attrs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", lib.NaturalNameWarning)
            for name in ["good", "BETTER", "5bad", "SYS%"]:
                attrs[name] = 1
        names = dir(attrs)
        assert {"good", "BETTER", "_f_copy"} <= set(names)
        assert "5bad" not in names and "SYS%" not in names


@LIBS
def test_leaf_attribute_helpers_and_name_checks(tmp_path: Path, lib: Any) -> None:
    with lib.open_file(str(tmp_path / "h.h5"), "w") as f:
        for leaf in [f.create_array("/", "a", [1, 2]), f.create_table("/", "t", _ROW)]:
            leaf.set_attr("units", "m")
            assert leaf.get_attr("units") == "m" and leaf.attrs.units == "m"
            leaf.del_attr("units")
            assert "units" not in leaf.attrs
            with pytest.raises(AttributeError):
                leaf.get_attr("units")
            assert "" not in leaf.attrs
            with pytest.raises(ValueError):
                leaf.set_attr("", 1)
            with pytest.raises(TypeError):
                leaf.set_attr(0, 1)  # type: ignore[arg-type]
            with pytest.warns(lib.NaturalNameWarning):
                leaf.set_attr("a:b", 1)
            assert leaf.get_attr("a:b") == 1
