"""The base of every node: identity, path, attributes, and its place in the tree.

Every member of :class:`Node` is in one of PyTables' reserved forms (``_v_*`` variables and
properties, ``_f_*`` public methods, ``_g_*`` private methods, ``_c_*`` class variables, and
``_v__*`` private state, as PyTables' own ``_v__deleting``), because a
:class:`~hyperslab.nodes.tree.group.Group` resolves every other name to a child of that name
(natural naming).  The plain PEP 8 spellings PyTables gives leaves and links as well
(``name``, ``attrs``, ``copy``, ...) are added by
:class:`~hyperslab.nodes.tree.compat.PlainNode`, which groups do not inherit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab.errors import ClosedNodeError
from hyperslab.nodes.tree.attributeset import AttributeSet
from hyperslab.nodes.tree.naming import depth_of, is_hidden_path, split_path
from hyperslab.storage import attributes as raw
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.tree.group import Group
    from hyperslab.nodes.tree.owner import NodeOwner


class Node:
    """Abstract base of groups and leaves.

    Nodes are created by their :class:`~hyperslab.nodes.files.file.File` (loaded lazily, on access)
    and never by users directly.  A node object stays valid while user code holds it, and
    follows renames and moves of itself or of its ancestors.
    """

    _c_classid: ClassVar[str] = "UNKNOWN"
    """The value of PyTables' ``CLASS`` attribute for this node class."""

    _c_version: ClassVar[str] = ""
    """The value of PyTables' ``VERSION`` attribute for this node class."""

    _c_kind: ClassVar[Kind] = Kind.UNKNOWN
    """What the node is in HDF5 terms (group, dataset, link)."""

    _v_file: NodeOwner
    """The file the node belongs to."""

    _v_pathname: str
    """The absolute path of the node (``'/group/leaf'``); kept right by renames and moves."""

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        self._v_file = file
        self._v_pathname = path
        self._v__h5id = h5id  # None until _g_h5id opens it
        self._v__isopen = True  # this node object (the file may be closed: see _v_isopen)
        self._v__class_value = class_value  # the CLASS attribute, as attrs.CLASS reads it

    # ------------------------------------------------------------------ identity
    @property
    def _g_h5id(self) -> Any:
        """The HDF5 object id, opened on first use (:class:`ClosedNodeError` once closed).

        Walks create nodes without opening their HDF5 objects (a walk needs names and
        classes, not datasets); the object is opened here when its data or attributes are
        first touched.
        """
        if not self._v__isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")
        if not self._v_file.isopen:
            raise ClosedNodeError(f"the file of node {self._v_pathname!r} is closed")
        if self._v__h5id is None:
            self._v__h5id = self._v_file._open_h5id(self._v_pathname, self._c_kind)
        return self._v__h5id

    @property
    def _v_name(self) -> str:
        """The node's name in its parent (``'/'`` for the root group, as in PyTables)."""
        return "/" if self._v_pathname == "/" else split_path(self._v_pathname)[1]

    @property
    def _v_hdf5name(self) -> str:
        """The node's name in the HDF5 file (the same as :attr:`_v_name`)."""
        return self._v_name

    @property
    def _v_parent(self) -> Group:
        """The parent group.

        Raises
        ------
        AttributeError
            For the root group, which has none (PyTables gives the File there).
        """
        if self._v_pathname == "/":
            raise AttributeError("the root group has no parent group")
        return self._v_file._get_group(split_path(self._v_pathname)[0])

    @property
    def _v_depth(self) -> int:
        """Depth in the tree (0 for the root group)."""
        return depth_of(self._v_pathname)

    @property
    def _v_isopen(self) -> bool:
        """Whether the node can still be used."""
        return self._v__isopen and self._v_file.isopen

    @property
    def _v_attrs(self) -> AttributeSet:
        """The node's attributes (:class:`ClosedNodeError` once the node is closed)."""
        if not self._v_isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")
        return AttributeSet(self)

    @property
    def _v_title(self) -> str:
        """The node's title (its ``TITLE`` attribute; ``''`` if absent)."""
        value = raw.read_string_attribute(self._g_h5id, "TITLE")
        return value if value is not None else ""

    @_v_title.setter
    def _v_title(self, value: str) -> None:
        self._g_check_writable()
        title = str(value)
        self._v_attrs._g_logged_write(
            "TITLE", lambda: raw.write_sys_string(self._g_h5id, "TITLE", title))

    def _g_check_open(self) -> None:
        """Refuse to use this node object once it or its file is closed
        (:class:`ClosedNodeError`, as PyTables)."""
        if not self._v_isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")

    def _g_check_writable(self) -> None:
        """Refuse a write through this node: :class:`ClosedNodeError` once the node or its
        file is closed (as PyTables), :class:`FileModeError` in a read-only file."""
        if not self._v_isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")
        self._v_file._check_writable()

    def _g_attr_changed(self, name: str) -> None:
        """Hook called after attribute ``name`` is written, renamed or deleted."""

    def _f_isvisible(self) -> bool:
        """Whether the node is visible (no hidden ``_i_``/``_p_`` component in its path)."""
        return not is_hidden_path(self._v_pathname)

    def _f_getattr(self, name: str) -> Any:
        """Return the node's attribute ``name``."""
        return self._v_attrs._f_getattr(name)

    def _f_setattr(self, name: str, value: Any) -> None:
        """Set the node's attribute ``name``."""
        self._v_attrs._f_setattr(name, value)

    def _f_delattr(self, name: str) -> None:
        """Delete the node's attribute ``name``."""
        self._v_attrs._f_delattr(name)

    # ------------------------------------------------------------------ tree operations
    def _f_close(self) -> None:
        """Close this node object; the file loads a fresh one on the next access."""
        if self._v__isopen:
            self._v_file._forget_node(self)
            self._v__isopen = False

    def _g_file_closing(self) -> None:
        """Hook called as the node's file closes, while it is still open (an external
        link closes the file it opened)."""

    def _f_remove(self, recursive: bool = False, force: bool = False) -> None:
        """Remove this node from the file (``recursive`` or ``force`` for non-empty groups)."""
        self._v_file.remove_node(self, recursive=recursive or force)

    def _g_remove(self, recursive: bool = False, force: bool = False) -> None:
        """Remove this node from the file (PyTables' private spelling of ``_f_remove``)."""
        self._f_remove(recursive, force)

    def _f_rename(self, newname: str, overwrite: bool = False) -> None:
        """Rename this node in place (``overwrite`` replaces a sibling of that name)."""
        self._v_file.rename_node(self, newname, overwrite=overwrite)

    def _f_move(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> None:
        """Move (and/or rename) this node; see :meth:`File.move_node`."""
        self._v_file.move_node(
            self, newparent, newname, overwrite=overwrite, createparents=createparents
        )

    def _f_copy(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        recursive: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> Node:
        """Copy this node; see :meth:`File.copy_node`."""
        return self._v_file.copy_node(
            self,
            newparent,
            newname,
            overwrite=overwrite,
            recursive=recursive,
            createparents=createparents,
            **kwargs,
        )

    # ------------------------------------------------------------------ pickling
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle a node of a read-only file as its file's path, mode and settings and its
        own path: unpickled, it is the node at that path of a File reopened once per
        process (:mod:`hyperslab.nodes.files.pickling`).

        Raises
        ------
        TypeError
            If the node's file is open for writing: reopen the file with mode ``'r'``, or
            pass the file's path and the node's path instead.
        ClosedNodeError, ClosedFileError
            If the node or its file is closed.
        """
        return self._v_file._reduce_node(self)

    # ------------------------------------------------------------------ reprs
    def _g_class_label(self) -> str:
        return type(self).__name__

    def __str__(self) -> str:
        if not self._v_isopen:
            return repr(self)  # as PyTables: "<closed ...>"
        return f"{self._v_pathname} ({self._g_class_label()}) {self._v_title!r}"

    def __repr__(self) -> str:
        if not self._v_isopen:
            return f"<closed {type(self).__module__}.{type(self).__name__} at 0x{id(self):x}>"
        return str(self)


class NotLoggedMixin:
    """Marks a node class whose changes the undo log does not record (PyTables'
    ``tables.node.NotLoggedMixin``): list it first among the bases, as
    ``class MyArray(NotLoggedMixin, Array)``.

    Creating, moving or renaming such a node, or setting or deleting its attributes, is not
    logged (an undo leaves it as it is); removing it deletes it at once.
    """

    _c_logged = False
    """Whether changes to nodes of the class are logged (read by the file's undo log)."""
