"""Walking the tree of a file: listing groups and nodes (a mixin of File)."""

from __future__ import annotations

from collections.abc import Iterator

from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.files.registry import class_by_name
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.node import Node


class TreeWalking(FileMixin):
    """Iterating over and listing the nodes of a file (File's part)."""

    # Walks and listings never leave a node out: a group whose links cannot all be read,
    # or a link whose object cannot be opened and may be a group (a damaged file), raises
    # HDF5ExtError when the walk reaches it, as h5py's ``visit`` does (PyTables leaves
    # such nodes out).  A dataset that cannot be opened is listed, as an Unknown node.

    def iter_nodes(self, where: Node | str, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the children of group ``where`` (of class ``classname``).

        Raises ``HDF5ExtError`` on reaching a child that cannot be opened (see
        :meth:`walk_nodes`).
        """
        return self._as_group(where)._f_iter_nodes(classname)

    def list_nodes(self, where: Node | str, classname: str | None = None) -> list[Node]:
        """Return the children of group ``where`` (of class ``classname``) in name order.

        Raises ``HDF5ExtError`` if a child cannot be opened (see :meth:`walk_nodes`).
        """
        return list(self.iter_nodes(where, classname))

    def walk_groups(self, where: Node | str = "/") -> Iterator[Group]:
        """Iterate over group ``where`` and every visible group below it.

        Raises ``HDF5ExtError`` on reaching a child whose kind cannot be read (it may be
        a group; see :meth:`walk_nodes`).
        """
        return self._as_group(where)._f_walk_groups()

    def walk_nodes(self, where: Node | str = "/", classname: str | None = None) -> Iterator[Node]:
        """Iterate over every visible node from ``where`` down (of class ``classname``).

        As in PyTables, with no ``classname`` the start node comes first, then each group
        reached by :meth:`walk_groups` is followed by its children in name order.

        Raises
        ------
        HDF5ExtError
            When the walk reaches a group whose links cannot be listed, or a link whose
            object cannot be opened and may be a group (a damaged file; the message
            names it): a walk never leaves a node out silently.  The nodes before it have
            been yielded.  A dataset HDF5 cannot open is yielded as an
            :class:`~hyperslab.nodes.files.link.Unknown` node (its use raises ``HDF5ExtError``).
        """
        start = self.get_node(where)
        cls = class_by_name(classname)
        if not isinstance(start, Group):
            if cls is None or isinstance(start, cls):
                yield start
            return
        if cls is None:
            yield start
            for group in start._f_walk_groups():
                yield from group._f_iter_nodes()
        else:
            yield from start._f_walknodes(classname)

    def __iter__(self) -> Iterator[Node]:
        """Iterate over every visible node of the file."""
        return self.walk_nodes("/")
