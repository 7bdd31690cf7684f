"""Soft and external links, and objects of unknown kind."""

from __future__ import annotations

from typing import ClassVar

from hyperslab.nodes.attributeset import NoAttributes
from hyperslab.nodes.compat import PlainNode
from hyperslab.nodes.naming import normalize_path, split_path
from hyperslab.nodes.node import Node
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


class Unknown(PlainNode):
    """An HDF5 object hyperslab does not know (a named datatype, say)."""

    _c_classid: ClassVar[str] = "UNKNOWN"
