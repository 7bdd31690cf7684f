"""The base of every node: identity, path, attributes, and its place in the tree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab.errors import ClosedNodeError
from hyperslab.nodes.attributeset import AttributeSet
from hyperslab.nodes.compat import NodeCompat
from hyperslab.nodes.naming import depth_of, is_hidden_path, split_path
from hyperslab.storage import attributes as raw
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.file import File
    from hyperslab.nodes.group import Group


class Node(NodeCompat):
    """Abstract base of groups and leaves.

    Nodes are created by their :class:`~hyperslab.nodes.file.File` (loaded lazily, on access)
    and never by users directly.  A node object stays valid while user code holds it, and
    follows renames and moves of itself or of its ancestors.
    """

    _c_classid: ClassVar[str] = "UNKNOWN"
    """The value of PyTables' ``CLASS`` attribute for this node class."""

    _c_version: ClassVar[str] = ""
    """The value of PyTables' ``VERSION`` attribute for this node class."""

    _kind: ClassVar[Kind] = Kind.UNKNOWN
    """What the node is in HDF5 terms (group, dataset, link)."""

    def __init__(self, file: File, path: str, h5id: Any, class_value: Any = None) -> None:
        self._file = file
        self._path = path
        self._h5id_ = h5id
        self._isopen = True
        self._class_value = class_value

    # ------------------------------------------------------------------ identity
    @property
    def _h5id(self) -> Any:
        """The HDF5 object id, opened on first use (:class:`ClosedNodeError` once closed).

        Walks create nodes without opening their HDF5 objects (a walk needs names and
        classes, not datasets); the object is opened here when its data or attributes are
        first touched.
        """
        if not self._isopen:
            raise ClosedNodeError(f"the node object {self._path!r} is closed")
        if not self._file.isopen:
            raise ClosedNodeError(f"the file of node {self._path!r} is closed")
        if self._h5id_ is None:
            self._h5id_ = self._file._open_h5id(self._path, self._kind)
        return self._h5id_

    @property
    def path(self) -> str:
        """The absolute path of the node (``'/group/leaf'``)."""
        return self._path

    @property
    def name(self) -> str:
        """The node's name in its parent (``'/'`` for the root group, as in PyTables)."""
        return "/" if self._path == "/" else split_path(self._path)[1]

    @property
    def file(self) -> File:
        """The file the node belongs to."""
        return self._file

    @property
    def parent(self) -> Group:
        """The parent group.

        Raises
        ------
        AttributeError
            For the root group, which has none (PyTables gives the File there).
        """
        if self._path == "/":
            raise AttributeError("the root group has no parent group")
        return self._file._get_group(split_path(self._path)[0])

    @property
    def depth(self) -> int:
        """Depth in the tree (0 for the root group)."""
        return depth_of(self._path)

    @property
    def isopen(self) -> bool:
        """Whether the node can still be used."""
        return self._isopen and self._file.isopen

    @property
    def attrs(self) -> AttributeSet:
        """The node's attributes (PyTables' ``_v_attrs``)."""
        return AttributeSet(self)

    @property
    def title(self) -> str:
        """The node's title (its ``TITLE`` attribute; ``''`` if absent)."""
        value = raw.read_string_attribute(self._h5id, "TITLE")
        return value if value is not None else ""

    @title.setter
    def title(self, value: str) -> None:
        self._file._check_writable()
        raw.write_sys_string(self._h5id, "TITLE", str(value))

    def _attr_changed(self, name: str) -> None:
        """Hook called after attribute ``name`` is written, renamed or deleted."""

    def is_visible(self) -> bool:
        """Whether the node is visible (no hidden ``_i_``/``_p_`` component in its path)."""
        return not is_hidden_path(self._path)

    # ------------------------------------------------------------------ tree operations
    def close(self) -> None:
        """Close this node object; the file loads a fresh one on the next access."""
        if self._isopen:
            self._file._forget_node(self)
            self._isopen = False

    def remove(self, recursive: bool = False) -> None:
        """Remove this node from the file (``recursive`` for non-empty groups)."""
        self._file.remove_node(self, recursive=recursive)

    def rename(self, newname: str) -> None:
        """Rename this node in place."""
        self._file.rename_node(self, newname)

    def move(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> None:
        """Move (and/or rename) this node; see :meth:`File.move_node`."""
        self._file.move_node(
            self, newparent, newname, overwrite=overwrite, createparents=createparents
        )

    def copy(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        recursive: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> Node:
        """Copy this node; see :meth:`File.copy_node`."""
        return self._file.copy_node(
            self,
            newparent,
            newname,
            overwrite=overwrite,
            recursive=recursive,
            createparents=createparents,
            **kwargs,
        )

    # ------------------------------------------------------------------ reprs
    def _class_label(self) -> str:
        return type(self).__name__

    def __str__(self) -> str:
        return f"{self._path} ({self._class_label()}) {self.title!r}"

    def __repr__(self) -> str:
        if not self.isopen:
            return f"<closed {type(self).__module__}.{type(self).__name__} at 0x{id(self):x}>"
        return str(self)
