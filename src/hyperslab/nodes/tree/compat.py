"""PyTables' second spellings of node members, as thin aliases in one place.

The real members of every node are in PyTables' reserved forms (``_v_name``, ``_v_attrs``,
``_f_copy``, ...; see :mod:`hyperslab.nodes.tree.node`), the only ones a group may have: any other
name on a group is its child's (natural naming).  PyTables gives leaves and links plain
spellings as well (``leaf.name``, ``leaf.attrs``, ``leaf.copy()``); :class:`PlainNode` adds
them to every node class but the groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from hyperslab.nodes.tree.node import Node

if TYPE_CHECKING:
    from hyperslab.nodes.tree.attributeset import AttributeSet
    from hyperslab.nodes.tree.group import Group
    from hyperslab.nodes.tree.owner import NodeOwner


class PlainNode(Node):
    """A node that also answers to PyTables' unprefixed names: every node but a group.

    Each member here is an alias of the reserved-form one named in its docstring, which
    subclasses override instead (``Table._v_attrs``, ``Link._v_title``).
    """

    @property
    def path(self) -> str:
        """The absolute path of the node (``_v_pathname``)."""
        return self._v_pathname

    @property
    def name(self) -> str:
        """The node's name in its parent (``_v_name``)."""
        return self._v_name

    @property
    def file(self) -> NodeOwner:
        """The file the node belongs to (``_v_file``)."""
        return self._v_file

    @property
    def parent(self) -> Group:
        """The parent group (``_v_parent``)."""
        return self._v_parent

    @property
    def depth(self) -> int:
        """Depth in the tree (``_v_depth``)."""
        return self._v_depth

    @property
    def isopen(self) -> bool:
        """Whether the node can still be used (``_v_isopen``)."""
        return self._v_isopen

    @property
    def attrs(self) -> AttributeSet:
        """The node's attributes (``_v_attrs``)."""
        return self._v_attrs

    @property
    def title(self) -> str:
        """The node's title (``_v_title``)."""
        return self._v_title

    @title.setter
    def title(self, value: str) -> None:
        self._v_title = value

    def is_visible(self) -> bool:
        """Whether the node is visible (``_f_isvisible``)."""
        return self._f_isvisible()

    def close(self) -> None:
        """Close this node object (``_f_close``)."""
        self._f_close()

    def remove(self, recursive: bool = False) -> None:
        """Remove this node from the file (``_f_remove``)."""
        self._f_remove(recursive)

    def rename(self, newname: str) -> None:
        """Rename this node in place (``_f_rename``)."""
        self._f_rename(newname)

    def move(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> None:
        """Move (and/or rename) this node (``_f_move``)."""
        self._f_move(newparent, newname, overwrite, createparents)

    def copy(
        self,
        newparent: Any = None,
        newname: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> Node:
        """Copy this node (``_f_copy``), with PyTables' arguments of ``Leaf.copy``: no
        ``recursive`` among the positional ones (a leaf has no children)."""
        return self._f_copy(newparent, newname, overwrite, createparents=createparents,
                            **kwargs)


class LeafCompat:
    """PyTables' ``_v_*`` names of ``Leaf`` members."""

    if TYPE_CHECKING:

        @property
        def chunkshape(self) -> tuple[int, ...] | None: ...

    @property
    def _v_chunkshape(self) -> tuple[int, ...] | None:
        return self.chunkshape

    @property
    def _v_objectid(self) -> int:
        return id(self)

    def get_attr(self, name: str) -> Any:
        """Return the node's attribute ``name`` (``_f_getattr``)."""
        return cast("Node", self)._f_getattr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set the node's attribute ``name`` to ``value`` (``_f_setattr``)."""
        cast("Node", self)._f_setattr(name, value)

    def del_attr(self, name: str) -> None:
        """Delete the node's attribute ``name`` (``_f_delattr``)."""
        cast("Node", self)._f_delattr(name)


class FileAttrsCompat:
    """PyTables' attribute helpers of ``File`` (``get_node_attr`` and friends)."""

    if TYPE_CHECKING:

        def get_node(self, where: Node | str, name: str | None = None,
                     classname: str | None = None) -> Node: ...

    def copy_node_attrs(self, where: Node | str, dstnode: Node | str,
                        name: str | None = None) -> None:
        """Copy the user (and copyable system) attributes of a node to ``dstnode``."""
        self.get_node(where, name)._v_attrs._f_copy(self.get_node(dstnode))

    def get_node_attr(self, where: Node | str, attrname: str, name: str | None = None) -> Any:
        """Return attribute ``attrname`` of a node."""
        return self.get_node(where, name)._v_attrs._f_getattr(attrname)

    def set_node_attr(self, where: Node | str, attrname: str, attrvalue: Any,
                      name: str | None = None) -> None:
        """Set attribute ``attrname`` of a node."""
        self.get_node(where, name)._v_attrs._f_setattr(attrname, attrvalue)

    def del_node_attr(self, where: Node | str, attrname: str, name: str | None = None) -> None:
        """Delete attribute ``attrname`` of a node."""
        self.get_node(where, name)._v_attrs._f_delattr(attrname)
