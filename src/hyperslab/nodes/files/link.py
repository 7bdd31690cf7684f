"""Soft and external links, and objects of unknown kind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab.errors import ClosedNodeError, HDF5ExtError
from hyperslab.nodes.leaves.array import EArray
from hyperslab.nodes.members import is_member, member_failed
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.attributeset import NoAttributes
from hyperslab.nodes.tree.compat import PlainNode
from hyperslab.nodes.tree.naming import join_path, normalize_path, split_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.tree.owner import NodeOwner


class Link(PlainNode):
    """Base class of links: a node that points at a path.

    Links have no attributes (an HDF5 limit: ``_v_attrs`` is always empty) and no title;
    they are copied, moved, renamed and removed as links, whatever they point at.
    """

    _c_classid: ClassVar[str] = "LINK"

    @property
    def _g_h5id(self) -> Any:
        """The id of the group holding the link (a link is no HDF5 object of its own)."""
        if not self._v__isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")
        return self._v_parent._g_h5id

    @property
    def _v_attrs(self) -> NoAttributes:
        """Links have no attributes: an always-empty attribute set."""
        return NoAttributes(self)

    @property
    def _v_title(self) -> str:
        """Links have no title (PyTables: ``''``)."""
        return ""

    @_v_title.setter
    def _v_title(self, value: str) -> None:
        raise AttributeError(f"link ``{self._v_pathname}`` can not have a title")

    @property
    def target(self) -> str:
        """The path the link points at."""
        return tree.soft_link_target(self._g_h5id, self._v_name)

    # PyTables' signatures of the plain spellings for links (no ``recursive``, no
    # ``createparents`` when moving).
    def copy(  # type: ignore[override]
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> Node:
        """Copy this link (the link, not what it points at) and return the new one."""
        return self._f_copy(newparent, newname, overwrite, createparents=createparents)

    def move(self, newparent: Any = None, newname: str | None = None,  # type: ignore[override]
             overwrite: bool = False) -> None:
        """Move or rename this link."""
        self._f_move(newparent, newname, overwrite)

    def remove(self) -> None:  # type: ignore[override]
        """Remove this link (what it points at stays)."""
        self._f_remove()

    def rename(self, newname: str, overwrite: bool = False) -> None:
        """Rename this link in place."""
        self._f_rename(newname, overwrite)

    def _g_class_label(self) -> str:
        return type(self).__name__

    def __str__(self) -> str:
        if not self._v_isopen:
            return repr(self)
        return f"{self._v_pathname} ({type(self).__name__}) -> {self.target}"

    def __repr__(self) -> str:
        if not self._v_isopen:
            return f"<closed {type(self).__module__}.{type(self).__name__} at 0x{id(self):x}>"
        return str(self)


_SOFTLINK_OWN = frozenset({"target", "dereference", "is_dangling", "copy", "move", "remove",
                           "rename"})
"""The plain names a soft link answers itself; every other plain name is its target's."""

_OWN_PREFIXES = ("_f_", "_c_", "_g_", "_v_", "__")


def _is_own(name: str) -> bool:
    return name in _SOFTLINK_OWN or name.startswith(_OWN_PREFIXES)


class SoftLink(Link):
    """A soft link to another node of the same file; call it to get that node.

    As in PyTables, the target's members are reached through the link
    (``link.shape``, ``link[0]``, ``link.attrs``, ``link.child`` for a group), except
    ``target``, ``dereference``, ``is_dangling``, ``copy``, ``move``, ``remove``,
    ``rename`` and the names in reserved forms (``_v_*``, ``_f_*``, ...), which are the
    link's own.  Through a dangling link they raise
    :class:`~hyperslab.errors.NoSuchNodeError`.
    """

    _c_classid: ClassVar[str] = "SOFTLINK"
    _c_kind: ClassVar[Kind] = Kind.SOFTLINK

    def __getattribute__(self, name: str) -> Any:
        if _is_own(name):
            return object.__getattribute__(self, name)
        return getattr(self._g_live_target(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if _is_own(name):
            object.__setattr__(self, name, value)
        else:
            setattr(self._g_live_target(), name, value)

    def __getitem__(self, key: Any) -> Any:
        return self._g_live_target()[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._g_live_target()[key] = value

    def __call__(self) -> Node | None:
        """Return the node the link points at (see :meth:`dereference`)."""
        return self.dereference()

    def _g_target_path(self) -> str:
        """The absolute path of the target (a relative one is taken from the parent)."""
        target = self.target
        if not target.startswith("/"):
            target = join_path(split_path(self._v_pathname)[0], target)
        return normalize_path(target)

    def _g_live_target(self) -> Any:
        if not self._v_isopen:
            raise ClosedNodeError(f"the node object {self._v_pathname!r} is closed")
        return self._v_file.get_node(self._g_target_path())

    def dereference(self) -> Node | None:
        """Return the node the link points at (``None`` once the link is closed).

        Raises
        ------
        NoSuchNodeError
            If the link dangles.
        """
        if not self._v_isopen:
            return None
        return self._v_file.get_node(self._g_target_path())

    def is_dangling(self) -> bool:
        """Whether nothing is at the link's target."""
        return self._g_target_path() not in self._v_file

    def __str__(self) -> str:
        if not self._v_isopen:
            return repr(self)
        dangling = " (dangling)" if self.is_dangling() else ""
        return f"{self._v_pathname} (SoftLink) -> {self.target}{dangling}"


class ExternalLink(Link):
    """A link to a node in another file (its target is ``'file.h5:/path'``).

    Calling the link opens the other file (once: it stays open as :attr:`extfile` until
    :meth:`umount`, or until the link or its file is closed) and returns the node.
    """

    _c_classid: ClassVar[str] = "EXTERNALLINK"
    _c_kind: ClassVar[Kind] = Kind.EXTLINK

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self.extfile: Any = None
        """The other file, once the link has been followed (``None`` before)."""

    @property
    def target(self) -> str:
        """``'filename:/path'`` of the linked node."""
        filename, path = tree.external_link_target(self._g_h5id, self._v_name)
        return f"{filename}:{path}"

    def __call__(self, **kwargs: Any) -> Node:
        """Open the other file (``kwargs`` as :func:`~hyperslab.open_file`'s, ``mode='r'``
        by default) and return the linked node.

        A relative file name is taken from the directory of this link's file.

        Raises
        ------
        ValueError
            If the other file is already open through this link in another mode.
        """
        from hyperslab.nodes.files.file import open_file

        filename, path = tree.external_link_target(self._g_h5id, self._v_name)
        if not os.path.isabs(filename):
            filename = os.path.join(os.path.dirname(self._v_file.filename), filename)
        mode = kwargs.setdefault("mode", "r")
        extfile = self.extfile
        if extfile is None or not extfile.isopen:
            self.extfile = extfile = open_file(filename, **kwargs)
        elif extfile.mode != mode:
            raise ValueError(f"the file of external link ``{self._v_pathname}`` is open in "
                             f"mode {extfile.mode!r}, not {mode!r}: umount() it first")
        return extfile.get_node(path)

    def umount(self) -> None:
        """Close the other file, if the link opened it."""
        extfile, self.extfile = self.extfile, None
        if extfile is not None and extfile.isopen:
            extfile.close()

    def _f_close(self) -> None:
        """Close this link object, and the other file it opened."""
        self.umount()
        super()._f_close()

    def _g_file_closing(self) -> None:
        self.umount()


class NotALeafError(HDF5ExtError, AttributeError, TypeError):
    """The leaf API asked of an :class:`Unknown` node: an ``HDF5ExtError``, and the
    ``AttributeError`` (``node.shape``) or ``TypeError`` (``node[0]``) PyTables raises
    there, so that ``hasattr(node, "shape")`` answers False as in PyTables."""


_LEAF_API = frozenset(
    name for cls in (Table, EArray) for name in dir(cls) if not name.startswith("_")
)
"""The public names of leaves (arrays and tables)."""


class Unknown(PlainNode):
    """An HDF5 object that is neither a group nor a dataset hyperslab can open.

    Two kinds of object are ``Unknown`` nodes:

    * objects that open but are neither groups nor datasets (named datatypes).  They
      have a name, a path and attributes, as every node; what leaves have (``shape``,
      ``dtype``, ``read()``, ``node[...]``, iteration, reductions, ...) raises
      :class:`~hyperslab.errors.HDF5ExtError` naming the node and what it is (also an
      ``AttributeError`` or ``TypeError``, PyTables' answers there);
    * datasets that HDF5 lists but cannot open (a damaged object header): walks list
      them, as h5py's ``visit`` does, and every use of them (attributes, title, the
      leaf API) raises ``HDF5ExtError`` naming the path and what HDF5 reported.

    A link whose object cannot be opened and may be a group (HDF5 cannot even tell what
    it is) gives no node: ``get_node`` and the walks raise ``HDF5ExtError`` there, as
    the nodes below it cannot be listed.
    """

    _c_classid: ClassVar[str] = "UNKNOWN"

    def _g_not_a_leaf(self, what: str) -> NotALeafError:
        named_type = tree.kind_of_id(self._g_h5id) is Kind.NAMED_TYPE
        kind = "a named datatype" if named_type else "an object of unknown kind"
        return NotALeafError(
            f"node ``{self._v_pathname}`` is {kind} in HDF5, neither a group nor a "
            f"dataset: it has no {what}"
        )

    def __bool__(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        if is_member(self, name):  # a member's own code failed: its error, not ours
            return member_failed(self, name)
        if name in _LEAF_API and "_v_file" in self.__dict__:
            raise self._g_not_a_leaf(f"``{name}``")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getitem__(self, key: Any) -> Any:
        raise self._g_not_a_leaf("items")

    def __iter__(self) -> Iterator[Any]:
        raise self._g_not_a_leaf("rows")

    def __len__(self) -> int:
        raise self._g_not_a_leaf("length")
