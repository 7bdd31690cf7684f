"""Changing the tree of a file: removing, renaming and moving nodes (a mixin of File).

A table's indexes live in a hidden group beside it (``_i_<table>``), which goes with the
table.  Copying is in :mod:`~hyperslab.nodes.files.copying`.
"""

from __future__ import annotations

from typing import Any

from hyperslab.errors import NodeError
from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import check_name, is_under, join_path, normalize_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import tree


class TreeEditing(FileMixin):
    """Removing, renaming and moving nodes (File's part)."""

    def remove_node(
        self, where: Node | str, name: str | None = None, recursive: bool = False
    ) -> None:
        """Remove a node (a non-empty group only with ``recursive=True``).

        Raises
        ------
        NodeError
            For the root group, or a non-empty group without ``recursive``.
        """
        self._check_writable()
        node = self.get_node(where, name)
        if node._v_pathname == "/":
            raise NodeError("the root group can not be removed")
        if isinstance(node, Group) and len(node._g_link_table()) and not recursive:
            raise NodeError(
                f"group ``{node._v_pathname}`` has child nodes; please set `recursive` to true "
                f"to remove it"
            )
        if self._remove_logged(node):  # undo enabled: kept in the log, not deleted
            return
        parent = node._v_parent
        companion = _companion(node, parent)
        tree.delete_link(parent._g_h5id, node._v_name)
        parent._g_child_removed(node._v_name)
        for gone in self._cache.drop(node._v_pathname):
            gone._v__isopen = False  # type: ignore[attr-defined]
        if companion is not None:  # a table's indexes go with it
            self.remove_node(parent, companion, recursive=True)

    def rename_node(
        self, where: Node | str, newname: str, name: str | None = None, overwrite: bool = False
    ) -> None:
        """Rename a node in its group."""
        self.move_node(where, None, newname, name, overwrite=overwrite)

    def move_node(
        self,
        where: Node | str,
        newparent: Node | str | None = None,
        newname: str | None = None,
        name: str | None = None,
        overwrite: bool = False,
        createparents: bool = False,
    ) -> None:
        """Move a node to ``newparent`` (default: its parent) as ``newname``.

        Raises
        ------
        NodeError
            For the root group, a name clash without ``overwrite``, or a move into the
            node's own subtree.
        """
        self._check_writable()
        node = self.get_node(where, name)
        if node._v_pathname == "/":
            raise NodeError("the root group can not be moved or renamed")
        old_parent = node._v_parent
        if isinstance(newparent, str) and is_under(normalize_path(newparent), node._v_pathname):
            # checked before createparents makes the groups on the way (as PyTables)
            raise NodeError(f"can not move node ``{node._v_pathname}`` into itself "
                            f"(``{normalize_path(newparent)}``)")
        if newparent is None:
            target = old_parent
        else:
            target = self._parent_for_new(newparent, createparents)
        newname = node._v_name if newname is None else newname
        newpath = join_path(target._v_pathname, newname)
        if newpath == node._v_pathname:
            return
        if is_under(target._v_pathname, node._v_pathname):
            raise NodeError(f"can not move node ``{node._v_pathname}`` into itself (``{newpath}``)")
        check_name(newname)
        self._make_room(target, newname, overwrite)
        logged = self._undo_logs(node)
        oldpath = node._v_pathname
        companion = _companion(node, old_parent)
        tree.move_link(old_parent._g_h5id, node._v_name, target._g_h5id, newname)
        old_parent._g_child_removed(node._v_name)
        target._g_child_added(newname, node._c_kind)
        self._cache.repath(node._v_pathname, newpath)
        if companion is not None:  # a table's indexes follow it
            moved: Any = self.get_node(newpath)
            self.move_node(old_parent, target, moved._indexing.group_name(), companion,
                           overwrite=True)
            moved._indexing.reload()  # found again in the new place
        if logged:
            self._log("MOVE", oldpath, newpath)

    def _make_room(self, target: Group, newname: str, overwrite: bool) -> None:
        """Remove ``target``'s child ``newname`` for a move or copy, if ``overwrite``.

        Raises
        ------
        NodeError
            If the child exists and ``overwrite`` is false.
        """
        if newname in target:
            if not overwrite:
                raise NodeError(
                    f"destination group ``{target._v_pathname}`` already has a node named "
                    f"``{newname}``; set `overwrite` to replace it"
                )
            self.remove_node(target, newname, recursive=True)


def _companion(node: Node, parent: Group) -> str | None:
    """The name of the hidden group holding ``node``'s indexes, if it is a table that
    has one (it is removed, moved and renamed with the table)."""
    if not isinstance(node, Table):
        return None
    name = node._indexing.group_name()
    return name if name in parent else None
