"""PyTables' ``CLASS`` attribute <-> node class, and classification of foreign datasets."""

from __future__ import annotations

import warnings
from typing import Any

from hyperslab.nodes.files.link import ExternalLink, Link, SoftLink, Unknown
from hyperslab.nodes.leaves.array import Array, CArray, EArray, UnImplemented
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.leaves.vlarray import VLArray
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage.datasets import Dataset

LEAF_CLASSES: dict[str, type[Leaf]] = {
    "ARRAY": Array,
    "IMAGE": Array,
    "CARRAY": CArray,
    "CACHEARRAY": EArray,
    "LASTROWARRAY": CArray,
    "EARRAY": EArray,
    "INDEXARRAY": EArray,
    "TABLE": Table,
    "VLARRAY": VLArray,
}
"""CLASS values of the leaves hyperslab reads, and the class that serves each."""

NODE_CLASSES: dict[str, type[Node]] = {
    "Node": Node,
    "Group": Group,
    "Leaf": Leaf,
    "Array": Array,
    "CArray": CArray,
    "EArray": EArray,
    "Table": Table,
    "VLArray": VLArray,
    "UnImplemented": UnImplemented,
    "Unknown": Unknown,
    "Link": Link,
    "SoftLink": SoftLink,
    "ExternalLink": ExternalLink,
}
"""Class names accepted by ``classname`` arguments (PyTables' names)."""


def class_by_name(classname: str | None) -> type[Node] | None:
    """The node class called ``classname`` (None for None or ``'Node'``: any node).

    Raises
    ------
    TypeError
        If ``classname`` names no node class.
    """
    if classname is None or classname == "Node":
        return None
    try:
        return NODE_CLASSES[classname]
    except KeyError:
        raise TypeError(
            f"there is no registered node class named ``{classname}``; known classes: "
            f"{', '.join(sorted(NODE_CLASSES))}"
        ) from None


GROUP_CLASSIDS = frozenset({"GROUP", "TINDEX", "DINDEX", "INDEX", "CINDEX", "TRANSGROUP", "TRANSG",
                            "MARKG"})
"""CLASS values of PyTables groups (index and undo-log groups are plain groups here)."""


def class_for_classid(classid: str) -> type[Node] | None:
    """The node class a PyTables CLASS value names; None when it names none we serve.

    The object is trusted to be of the matching kind (group or dataset); the node checks
    it when it first opens the object.
    """
    if classid in GROUP_CLASSIDS:
        return Group
    return LEAF_CLASSES.get(classid)


def leaf_class(h5id: Any) -> type[Leaf]:
    """The class of a dataset: from its ``CLASS`` attribute, or PyTables' heuristics when
    it has none or one that names no leaf class (as PyTables: another program's CLASS, or
    a damaged one)."""
    classid = raw.read_string_attribute(h5id, "CLASS")
    known = None if classid is None else LEAF_CLASSES.get(classid)
    return known if known is not None else _guess_leaf_class(Dataset(h5id))


def guessed_leaf_class(dataset: Dataset) -> type[Leaf]:
    """The class PyTables' heuristics give ``dataset``, whose ``CLASS`` attribute the
    caller found missing or naming no leaf class (:func:`leaf_class` without reading the
    attribute again; the caller may then give ``dataset`` to the leaf)."""
    return _guess_leaf_class(dataset)


def warn_unimplemented(path: str, classid: str | None) -> None:
    """The ``UserWarning`` PyTables gives when it loads the dataset at ``path`` (of CLASS
    ``classid``, if any) as an :class:`UnImplemented` node."""
    if classid is None:
        message = f"leaf ``{path}`` is of an unsupported type"
    else:
        message = f"leaf ``{path}`` has an unknown class ID ``{classid}``"
    warnings.warn(f"{message}; it will become an ``UnImplemented`` node", UserWarning,
                  stacklevel=4)


def _guess_leaf_class(dataset: Dataset) -> type[Leaf]:
    """PyTables' classification of a dataset without ``CLASS`` (written by h5py, say)."""
    hdf5_class = dataset.hdf5_class
    dtype = dataset.dtype.base  # array types (shaped atoms) are classified by their base
    if hdf5_class in ("VLEN", "OPAQUE", "REFERENCE") or (dtype.kind in "OV" and not dtype.fields):
        return UnImplemented
    if dtype.fields and dtype.kind != "c":
        try:
            _ = dataset.layout
        except TypeError:  # a member no table column holds (a variable-length one, say)
            return UnImplemented
        return Table if dataset.shape is not None and len(dataset.shape) == 1 else UnImplemented
    if dtype.kind == "O":
        return UnImplemented
    if dataset.is_null:
        return UnImplemented
    if dataset.chunks is None:
        return Array
    # PyTables never opens a complex dataset (a compound) as extendable.
    if dtype.kind != "c" and any(m is None for m in dataset.maxshape):
        return EArray
    return CArray
