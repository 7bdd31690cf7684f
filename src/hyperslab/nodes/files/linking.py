"""Creating links: hard, soft and external (a mixin of File).

The link nodes themselves are in :mod:`~hyperslab.nodes.files.link`; the HDF5 links are
made by :mod:`hyperslab.storage.tree`.  A soft link may point at a path where nothing is
yet (it dangles until something is there); a hard link is one more name of an existing
object, in the same file; an external link names a file and a path in it.
"""

from __future__ import annotations

from typing import Any

from hyperslab.errors import NodeError
from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.files.link import ExternalLink, SoftLink
from hyperslab.nodes.tree.group import Group, warn_if_shadowed
from hyperslab.nodes.tree.naming import check_name
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind


class LinkCreation(FileMixin):
    """Creating hard, soft and external links (File's part)."""

    def _link_parent(self, where: Node | str, name: str, createparents: bool) -> Group:
        """The group a new link ``name`` goes in, checked to have no child of that name."""
        parent = self._parent_for_new(where, createparents)
        check_name(name)
        if name in parent:
            raise NodeError(
                f"group ``{parent._v_pathname}`` already has a child node named ``{name}``"
            )
        warn_if_shadowed(parent, name)
        return parent

    def create_hard_link(
        self, where: Node | str, name: str, target: Node | str, createparents: bool = False
    ) -> Node:
        """Create a hard link ``name`` in group ``where`` to the node ``target``.

        A hard link is one more name of the same object: the node returned is a group or
        a leaf as ``target`` is, and the object stays until its last name is removed.

        Parameters
        ----------
        where : str or Group
            The group the link goes in.
        name : str
            The name of the link.
        target : str or Node
            The node (of this file) to link to, or its path.
        createparents : bool
            Create the groups on the way to ``where`` that are missing.

        Returns
        -------
        Node
            The node at the new name.

        Raises
        ------
        NoSuchNodeError
            If there is no node at ``target``.
        NodeError
            If ``where`` already has a child called ``name``.
        """
        targetnode = self.get_node(target)
        parent = self._link_parent(where, name, createparents)
        path = targetnode._v_pathname.strip("/") or "."
        tree.create_hard_link(parent._g_h5id, name, self.root._g_h5id, path)
        kind = targetnode._c_kind
        parent._g_child_added(name, kind if kind in (Kind.GROUP, Kind.DATASET) else
                              tree.child_kind(parent._g_h5id, name))
        return self._load_child(parent, name)

    def create_soft_link(
        self, where: Node | str, name: str, target: Node | str, createparents: bool = False
    ) -> SoftLink:
        """Create a soft link ``name`` in group ``where`` to the path ``target``.

        Parameters
        ----------
        where : str or Group
            The group the link goes in.
        name : str
            The name of the link.
        target : str or Node
            The path the link points at (absolute, or relative to ``where``), or a node
            of this file.  Nothing needs to be there (the link dangles until something
            is).
        createparents : bool
            Create the groups on the way to ``where`` that are missing.

        Returns
        -------
        SoftLink
            The new link; call it to get the node it points at.

        Raises
        ------
        ValueError
            If ``target`` is neither a path nor a node.
        NodeError
            If ``where`` already has a child called ``name``.
        """
        if isinstance(target, Node):
            target = target._v_pathname
        elif not isinstance(target, str):
            raise ValueError("`target` has to be a string or a node object")
        parent = self._link_parent(where, name, createparents)
        tree.create_soft_link(parent._g_h5id, name, target)
        parent._g_child_added(name, Kind.SOFTLINK)
        return self._load_child(parent, name)  # type: ignore[return-value]

    def create_external_link(
        self, where: Node | str, name: str, target: Node | str, createparents: bool = False
    ) -> ExternalLink:
        """Create an external link ``name`` in group ``where`` to a node of another file.

        Parameters
        ----------
        where : str or Group
            The group the link goes in.
        name : str
            The name of the link.
        target : str or Node
            ``'file.h5:/path/to/node'`` (a relative file name is taken from the directory
            of this file when the link is followed), or a node of another open file.
        createparents : bool
            Create the groups on the way to ``where`` that are missing.

        Returns
        -------
        ExternalLink
            The new link; call it to open the other file and get the node.

        Raises
        ------
        ValueError
            If ``target`` is neither a node nor a string of the form ``'file:/path'``.
        NodeError
            If ``where`` already has a child called ``name``.
        """
        filename, path = _external_target(target)
        parent = self._link_parent(where, name, createparents)
        tree.create_external_link(parent._g_h5id, name, filename, path)
        parent._g_child_added(name, Kind.EXTLINK)
        return self._load_child(parent, name)  # type: ignore[return-value]


def _external_target(target: Any) -> tuple[str, str]:
    """``(filename, path)`` of an external link's target: a node, or ``'file:/path'``."""
    if isinstance(target, Node):
        return target._v_file.filename, target._v_pathname
    if not isinstance(target, str):
        raise ValueError("`target` has to be a string or a node object")
    filename, sep, path = target.partition(":/")
    if not sep or not filename:
        raise ValueError("`target` must expressed as 'file:/path/to/node'")
    return filename, "/" + path
