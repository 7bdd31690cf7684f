"""PyTables' prefixed member names (``_v_*``, ``_f_*``), as thin aliases in one place.

The node classes use plain PEP 8 names (``node.path``, ``node.attrs``, ``group.walk_nodes``);
these mixins give PyTables code the names it expects without the real code needing them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hyperslab.codecs.filters import Filters
    from hyperslab.nodes.attributeset import AttributeSet
    from hyperslab.nodes.file import File
    from hyperslab.nodes.group import Group
    from hyperslab.nodes.node import Node


class NodeCompat:
    """PyTables' ``Node`` member names."""

    if TYPE_CHECKING:

        @property
        def path(self) -> str: ...
        @property
        def name(self) -> str: ...
        @property
        def file(self) -> File: ...
        @property
        def depth(self) -> int: ...
        @property
        def title(self) -> str: ...
        @title.setter
        def title(self, value: str) -> None: ...
        @property
        def attrs(self) -> AttributeSet: ...
        @property
        def isopen(self) -> bool: ...
        @property
        def parent(self) -> Group: ...
        def close(self) -> None: ...
        def remove(self, recursive: bool = False) -> None: ...
        def rename(self, newname: str) -> None: ...
        def move(self, newparent: Any = None, newname: str | None = None,
                 overwrite: bool = False, createparents: bool = False) -> None: ...
        def copy(self, newparent: Any = None, newname: str | None = None,
                 overwrite: bool = False, recursive: bool = False,
                 createparents: bool = False, **kwargs: Any) -> Node: ...
        def is_visible(self) -> bool: ...

    @property
    def _v_pathname(self) -> str:
        return self.path

    @property
    def _v_name(self) -> str:
        return self.name

    @property
    def _v_hdf5name(self) -> str:
        return self.name

    @property
    def _v_file(self) -> File:
        return self.file

    @property
    def _v_parent(self) -> Group:
        return self.parent

    @property
    def _v_depth(self) -> int:
        return self.depth

    @property
    def _v_attrs(self) -> AttributeSet:
        return self.attrs

    @property
    def _v_title(self) -> str:
        return self.title

    @_v_title.setter
    def _v_title(self, value: str) -> None:
        self.title = value

    @property
    def _v_isopen(self) -> bool:
        return self.isopen

    def _f_close(self) -> None:
        self.close()

    def _f_remove(self, recursive: bool = False, force: bool = False) -> None:
        self.remove(recursive=recursive or force)

    def _f_rename(self, newname: str, overwrite: bool = False) -> None:
        self.move(None, newname, overwrite=overwrite)

    def _f_move(self, newparent: Any = None, newname: str | None = None,
                overwrite: bool = False, createparents: bool = False) -> None:
        self.move(newparent, newname, overwrite=overwrite, createparents=createparents)

    def _f_copy(self, newparent: Any = None, newname: str | None = None,
                overwrite: bool = False, recursive: bool = False,
                createparents: bool = False, **kwargs: Any) -> Node:
        return self.copy(newparent, newname, overwrite=overwrite, recursive=recursive,
                         createparents=createparents, **kwargs)

    def _f_isvisible(self) -> bool:
        return self.is_visible()

    def _f_getattr(self, name: str) -> Any:
        return self.attrs._f_getattr(name)

    def _f_setattr(self, name: str, value: Any) -> None:
        self.attrs._f_setattr(name, value)

    def _f_delattr(self, name: str) -> None:
        self.attrs._f_delattr(name)


class GroupCompat(NodeCompat):
    """PyTables' ``Group`` member names."""

    if TYPE_CHECKING:

        @property
        def filters(self) -> Filters: ...
        @filters.setter
        def filters(self, value: Filters) -> None: ...

        def get_child(self, name: str) -> Node: ...
        def list_nodes(self, classname: str | None = None) -> list[Node]: ...
        def iter_nodes(self, classname: str | None = None) -> Iterator[Node]: ...
        def walk_nodes(self, classname: str | None = None) -> Iterator[Node]: ...
        def walk_groups(self) -> Iterator[Group]: ...
        def children_view(self, kind: str) -> Any: ...

    @property
    def _v_children(self) -> Any:
        return self.children_view("children")

    @property
    def _v_groups(self) -> Any:
        return self.children_view("groups")

    @property
    def _v_leaves(self) -> Any:
        return self.children_view("leaves")

    @property
    def _v_links(self) -> Any:
        return self.children_view("links")

    @property
    def _v_unknown(self) -> Any:
        return self.children_view("unknown")

    @property
    def _v_hidden(self) -> Any:
        return self.children_view("hidden")

    @property
    def _v_nchildren(self) -> int:
        return len(self.children_view("children"))

    @property
    def _v_filters(self) -> Filters:
        return self.filters

    @_v_filters.setter
    def _v_filters(self, value: Filters) -> None:
        self.filters = value

    def _f_get_child(self, childname: str) -> Node:
        return self.get_child(childname)

    def _f_list_nodes(self, classname: str | None = None) -> list[Node]:
        return self.list_nodes(classname)

    def _f_iter_nodes(self, classname: str | None = None) -> Iterator[Node]:
        return self.iter_nodes(classname)

    def _f_walknodes(self, classname: str | None = None) -> Iterator[Node]:
        return self.walk_nodes(classname)

    def _f_walk_groups(self) -> Iterator[Group]:
        return self.walk_groups()


class LeafCompat(NodeCompat):
    """PyTables' ``Leaf`` member names."""

    if TYPE_CHECKING:

        @property
        def chunkshape(self) -> tuple[int, ...] | None: ...

    @property
    def _v_chunkshape(self) -> tuple[int, ...] | None:
        return self.chunkshape

    @property
    def _v_objectid(self) -> int:
        return id(self)


class FileAttrsCompat:
    """PyTables' attribute helpers of ``File`` (``get_node_attr`` and friends)."""

    if TYPE_CHECKING:

        def get_node(self, where: Node | str, name: str | None = None,
                     classname: str | None = None) -> Node: ...

    def copy_node_attrs(self, where: Node | str, dstnode: Node | str,
                        name: str | None = None) -> None:
        """Copy the user (and copyable system) attributes of a node to ``dstnode``."""
        self.get_node(where, name).attrs._f_copy(self.get_node(dstnode))

    def get_node_attr(self, where: Node | str, attrname: str, name: str | None = None) -> Any:
        """Return attribute ``attrname`` of a node."""
        return self.get_node(where, name).attrs._f_getattr(attrname)

    def set_node_attr(self, where: Node | str, attrname: str, attrvalue: Any,
                      name: str | None = None) -> None:
        """Set attribute ``attrname`` of a node."""
        self.get_node(where, name).attrs._f_setattr(attrname, attrvalue)

    def del_node_attr(self, where: Node | str, attrname: str, name: str | None = None) -> None:
        """Delete attribute ``attrname`` of a node."""
        self.get_node(where, name).attrs._f_delattr(attrname)
