"""Soft and external links, and objects of unknown kind."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.leaves.array import EArray
from hyperslab.nodes.members import is_member, member_failed
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.attributeset import NoAttributes
from hyperslab.nodes.tree.compat import PlainNode
from hyperslab.nodes.tree.naming import normalize_path, split_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind


class Link(PlainNode):
    """Base class of links: a node that points at a path."""

    _c_classid: ClassVar[str] = "LINK"

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
        return tree.soft_link_target(self._g_h5id, split_path(self._v_pathname)[1])

    def _g_class_label(self) -> str:
        return type(self).__name__

    def __str__(self) -> str:
        return f"{self._v_pathname} ({type(self).__name__}) -> {self.target}"


class SoftLink(Link):
    """A soft link to another node of the same file; call it to get that node."""

    _c_classid: ClassVar[str] = "SOFTLINK"
    _c_kind: ClassVar[Kind] = Kind.SOFTLINK

    def __call__(self) -> Node:
        """Return the node the link points at."""
        return self.dereference()

    def dereference(self) -> Node:
        """Return the node the link points at (``NoSuchNodeError`` if it dangles)."""
        target = self.target
        if not target.startswith("/"):
            target = split_path(self._v_pathname)[0].rstrip("/") + "/" + target
        return self._v_file.get_node(normalize_path(target))


class ExternalLink(Link):
    """A link to a node in another file (its target is ``'file.h5:/path'``)."""

    _c_classid: ClassVar[str] = "EXTERNALLINK"
    _c_kind: ClassVar[Kind] = Kind.EXTLINK

    @property
    def target(self) -> str:
        """``'filename:/path'`` of the linked node."""
        filename, path = tree.external_link_target(self._g_h5id, split_path(self._v_pathname)[1])
        return f"{filename}:{path}"


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
