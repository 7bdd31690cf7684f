"""Finding the nodes of a file by path and loading them (a mixin of File).

A node object is made once per path and kept in the file's node cache
(:mod:`~hyperslab.nodes.files.nodecache`); a path missed by the cache is loaded from its
link: a soft or external link, a node of the class its ``CLASS`` attribute names
(:mod:`~hyperslab.nodes.files.registry`) without opening the HDF5 object, or else one of
the kind HDF5 reports.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hyperslab.errors import HDF5ExtError, NodeError, NoSuchNodeError
from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.files.link import ExternalLink, SoftLink, Unknown
from hyperslab.nodes.files.registry import (
    class_by_name,
    class_for_classid,
    guessed_leaf_class,
    warn_unimplemented,
)
from hyperslab.nodes.leaves.array import UnImplemented
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import (
    check_name,
    is_hidden_path,
    is_under,
    join_path,
    normalize_path,
    split_path,
)
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.tree import Kind

_MAX_SOFT_LINKS = 16
"""Soft links followed on the way to a group at most (HDF5 stops at 16 too: a cycle)."""


class _NodeClassError(NoSuchNodeError, TypeError):
    """``get_node(..., classname=...)`` found a node of another class: PyTables'
    ``NoSuchNodeError``, and a ``TypeError`` (a node of the wrong type)."""


class NodeLookup(FileMixin):
    """Getting nodes by path (``get_node``, ``in``) and loading them (File's part)."""

    def _class_by_name(self, classname: str | None) -> type[Node] | None:
        return class_by_name(classname)

    def _load_child(self, group: Group, name: str) -> Node:
        """Return the child ``name`` of ``group``, from the cache or freshly loaded."""
        path = join_path(group._v_pathname, name)
        node = self._cache.get(path)
        if node is not None:
            return node  # type: ignore[return-value]
        with self._loading:  # threads that miss the same path at once get one node
            node = self._cache.get(path)
            if node is not None:
                return node  # type: ignore[return-value]
            return self._load_missing(group, name, path)

    def _load_missing(self, group: Group, name: str, path: str) -> Node:
        gid = group._g_h5id
        links = group._v__links
        if links is not None:
            if name not in links:
                raise NoSuchNodeError(
                    f"group ``{group._v_pathname}`` does not have a child named ``{name}``"
                )
            link_kind = links[name]
        else:
            link_kind = tree.link_kind(gid, name)
            if link_kind is Kind.UNKNOWN:
                raise NoSuchNodeError(
                    f"group ``{group._v_pathname}`` does not have a child named ``{name}``"
                )
        node = self._make_node(gid, name, path, link_kind)
        group._v__kinds[name] = node._c_kind
        self._cache.add(node)
        return node

    def _open_h5id(self, path: str, kind: Kind) -> Any:
        """Open the HDF5 object at ``path`` for a node loaded without opening it.

        Raises
        ------
        HDF5ExtError
            If the object is not of the ``kind`` its CLASS attribute promised.
        """
        try:
            h5id = tree.open_path(self.root._g_h5id, path)
        except KeyError:
            raise NoSuchNodeError(f"there is no node at ``{path}`` any more") from None
        actual = tree.kind_of_id(h5id)
        if actual is not kind:
            raise HDF5ExtError(
                f"the object at ``{path}`` is a {actual.name.lower()}, but its CLASS "
                f"attribute says it is a {kind.name.lower()}: the file is malformed"
            )
        return h5id

    def _make_node(self, gid: Any, name: str, path: str, link_kind: Kind | None) -> Node:
        if link_kind is Kind.SOFTLINK:
            return SoftLink(self, path, gid)
        if link_kind is Kind.EXTLINK:
            return ExternalLink(self, path, gid)
        classid = raw.read_string_attribute_of(gid, name, "CLASS")
        # PyTables reads CLASS (a system attribute) back as a str; cache it for attrs.CLASS.
        class_value = None if classid is None else np.str_(classid)
        if classid is not None:
            cls = class_for_classid(classid)
            if cls is not None:
                return cls(self, path, None, class_value)
        try:
            h5id = tree.open_child(gid, name)
        except KeyError:  # the link went away since it was listed
            raise NoSuchNodeError(f"there is no node at ``{path}`` any more") from None
        except HDF5ExtError as exc:  # the link is there, its object cannot be opened
            return self._unopened_node(gid, name, path, exc)
        kind = tree.kind_of_id(h5id)
        if kind is Kind.GROUP:
            return Group(self, path, h5id, class_value)
        if kind is Kind.DATASET:  # no CLASS naming a leaf class: PyTables' guess
            dataset = Dataset(h5id, self._file_access)
            cls = guessed_leaf_class(dataset)
            if cls is UnImplemented:
                warn_unimplemented(path, classid)
            leaf = cls(self, path, h5id, class_value)
            leaf._g_take_dataset(dataset)  # its first read makes no second one
            return leaf
        return Unknown(self, path, h5id)

    def _unopened_node(self, gid: Any, name: str, path: str, exc: HDF5ExtError) -> Node:
        """The node of a link whose object HDF5 cannot open (a damaged file).

        When HDF5 can still tell that the object is a dataset (its header says so, another
        message of it is damaged), it is an :class:`Unknown` node: listed by walks, as
        h5py's ``visit`` lists it, with nothing below it left out; every use of it raises
        ``HDF5ExtError``.  Otherwise it may be a group, whose nodes a walk would leave out:
        ``HDF5ExtError`` naming the path and HDF5's reason.
        """
        try:
            kind = tree.child_kind(gid, name)
        except HDF5ExtError:
            kind = Kind.UNKNOWN
        if kind in (Kind.DATASET, Kind.NAMED_TYPE):
            return Unknown(self, path, None)
        raise HDF5ExtError(
            f"cannot open the object at ``{path}``: {exc.__cause__ or exc} (the file is "
            f"damaged)"
        ) from exc

    def _load_node(self, path: str) -> Node:
        if path == "/":
            return self.root
        node = self._cache.get(path)
        if node is not None:
            return node  # type: ignore[return-value]
        parent_path, name = split_path(path)
        return self._load_child(self._get_group(parent_path), name)

    def _get_group(self, path: str) -> Group:
        """The group at ``path``; soft links on the way are followed, as HDF5 does."""
        node = self._load_node(path)
        for _ in range(_MAX_SOFT_LINKS):
            if not isinstance(node, SoftLink):
                break
            node = self._load_node(node._g_target_path())
        if not isinstance(node, Group):
            raise NoSuchNodeError(f"``{path}`` is a {type(node).__name__}, not a group")
        return node

    def _forget_node(self, node: Node) -> None:
        if self._cache.get(node._v_pathname) is node:
            self._cache.drop_one(node._v_pathname)

    def _open_nodes_below(self, path: str) -> list[Node]:
        """The open node objects strictly below ``path``, deepest first."""
        below: list[Node] = [node for node in self._cache.live_nodes() if isinstance(node, Node)
                             and node._v_pathname != path and is_under(node._v_pathname, path)]
        return sorted(below, key=lambda node: -node._v_pathname.count("/"))

    def get_node(
        self, where: Node | str, name: str | None = None, classname: str | None = None
    ) -> Node:
        """Return the node at ``where`` (a path or a node), or its child ``name``.

        Parameters
        ----------
        where : str or Node
            An absolute path (``'/a/b'``; PyTables' ``NameError`` for one without the
            leading slash) or a node of this file.
        name : str, optional
            A child of ``where`` to return instead.
        classname : str, optional
            Require the node to be of this class (PyTables' class names).

        Raises
        ------
        NoSuchNodeError
            If there is no node there.
        ClosedNodeError
            If ``where`` is a node object that is closed (or was removed).
        HDF5ExtError
            If the link is there but the object it points at cannot be opened and may be
            a group (a damaged file): the message names the path and what HDF5 reported.
            h5py raises ``KeyError`` there, PyTables ``NoSuchNodeError``.  A dataset HDF5
            cannot open, and an object that opens but is neither a group nor a dataset (a
            named datatype), is an :class:`~hyperslab.nodes.files.link.Unknown` node, whose
            leaf API raises ``HDF5ExtError``.
        NoSuchNodeError
            If the node is not of class ``classname`` (as PyTables; the error is also a
            ``TypeError``).  Soft links are nodes of their own (``'SoftLink'``), not
            followed; soft links on the way to the node are.
        """
        self._check_open()
        if isinstance(where, Node):
            if where._v_file is not self:
                raise NodeError(
                    f"node ``{where._v_pathname}`` does not belong to file {self.filename}"
                )
            where._g_check_open()  # a closed (or removed) node object: ClosedNodeError
            path = where._v_pathname
        else:
            if isinstance(where, str) and not where.startswith("/"):
                raise NameError("``where`` must start with a slash ('/')")  # as PyTables
            path = normalize_path(where)
        if name is not None:
            path = join_path(path, check_name(name)) if path != "/" else "/" + name
        try:
            node = self._load_node(path)
        except NoSuchNodeError:
            raise NoSuchNodeError(f"group ``{split_path(path)[0]}`` does not have a child "
                                  f"named ``{split_path(path)[1]}``") from None
        cls = class_by_name(classname)
        if cls is not None and not isinstance(node, cls):
            raise _NodeClassError(
                f"could not find a ``{classname}`` node at ``{path}``; instead, a "
                f"``{type(node).__name__}`` node has been found there"
            )
        return node

    def __contains__(self, path: object) -> bool:
        """Whether a node exists at ``path`` (a link there, even to an object that cannot
        be opened; ``HDF5ExtError`` if a group on the way cannot be read)."""
        if isinstance(path, Node):  # a node (PyTables): whether it is one of this file's
            return path._v_file is self and path._v_isopen
        if not isinstance(path, str):
            return False
        self._check_open()
        path = normalize_path(path)
        if path == "/":
            return True
        parent, name = split_path(path)
        try:
            return name in self._get_group(parent)
        except NoSuchNodeError:
            return False

    def is_visible_node(self, path: str) -> bool:
        """Whether the node at ``path`` is visible (not hidden, nor below a hidden group)."""
        return not is_hidden_path(self.get_node(path)._v_pathname)

    def _as_group(self, where: Node | str) -> Group:
        """The group at ``where``, through a soft link there (``TypeError`` if it is no
        group)."""
        node = self.get_node(where)
        if isinstance(node, SoftLink):
            node = self._get_group(node._v_pathname)
        if not isinstance(node, Group):
            raise TypeError(f"node ``{node._v_pathname}`` is not a group")
        return node
