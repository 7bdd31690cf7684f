"""Groups: the inner nodes of the tree, with natural naming and lazy children.

Natural naming reaches every child, whatever its name: a group's members are all in
PyTables' reserved forms (``_v_*``, ``_f_*``, ``_g_*``, ``_c_*``, ``_v__*``, dunders; see
:mod:`hyperslab.nodes.tree.node`), so ``group.name``, ``group.attrs`` or ``group.copy`` is the
child of that name, as in PyTables.  A child whose name is a member's is still reached with
``group["name"]`` or ``group._f_get_child("name")``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab.codecs.filters import Filters
from hyperslab.errors import DataTypeWarning, NaturalNameWarning, NoSuchNodeError
from hyperslab.nodes.members import is_member, member_failed
from hyperslab.nodes.tree.naming import is_hidden_name, join_path, normalize_path, not_utf8
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.tree.owner import NodeOwner

_MEMBER_PREFIXES = ("_v_", "_f_", "_g_", "_c_", "__")
"""PyTables' reserved forms, those of a group's own members (setting one looks for no child)."""


class Group(Node):
    """A group: a node holding other nodes.

    Children are reached by natural naming (``group.child``), by item access with a name or
    a relative path (``group["a/b"]``), or through :meth:`_f_get_child`.  Iteration yields
    the visible children in name order; hidden ones (``_i_*``, ``_p_*``) are skipped.

    In a damaged file, a child whose object cannot be opened raises ``HDF5ExtError``
    wherever a node is asked for (natural naming, item access, iteration, walks, the
    views' values, and the kinds ``_v_groups``, ``_v_leaves``... sort children by); the
    names (``len``, ``in``, the keys of ``_v_children``) come from the links alone.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "group.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     columns = f.create_group("/", "columns")
    ...     _ = f.create_array(columns, "name", np.array([b"Particle: 0", b"Particle: 1"]))
    ...     print(f.root.columns.name.read(), f.root.columns._v_name)
    [b'Particle: 0' b'Particle: 1'] columns
    """

    _c_classid: ClassVar[str] = "GROUP"
    _c_version: ClassVar[str] = "1.0"
    _c_kind: ClassVar[Kind] = Kind.GROUP

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self._v__links: dict[str, Kind | None] | None = None
        self._v__visible: list[str] | None = None
        self._v__kinds: dict[str, Kind] = {}

    # ------------------------------------------------------------------ children
    def _g_link_table(self) -> dict[str, Kind | None]:
        """Every link of the group, in name order: name -> link kind (None: hard link).

        Names that are not UTF-8 (a damaged file) are listed faithfully, their stray bytes
        as surrogate escapes, with a :class:`~hyperslab.errors.DataTypeWarning` when the
        group's links are first listed; the nodes they name read as the others do.
        """
        if self._v__links is None:
            links = tree.list_links(self._g_h5id)
            odd = not_utf8(list(links))
            if odd:
                warnings.warn(
                    f"link names of group ``{self._v_pathname}`` that are not UTF-8 are "
                    f"listed with surrogate escapes for their stray bytes: {odd!r}",
                    DataTypeWarning, stacklevel=3)
            self._v__links = links
        return self._v__links

    def _g_visible_names(self) -> list[str]:
        """The visible children's names, sorted (cached until the group changes)."""
        if self._v__visible is None:
            self._v__visible = sorted(
                n for n in self._g_link_table() if not is_hidden_name(n)
            )
        return self._v__visible

    def _g_hidden_names(self) -> list[str]:
        return sorted(n for n in self._g_link_table() if is_hidden_name(n))

    def _g_kind_of(self, name: str) -> Kind:
        """What child ``name`` is, without loading it when possible."""
        kind = self._v__kinds.get(name)
        if kind is None:
            kind = self._g_link_table().get(name) or tree.child_kind(self._g_h5id, name)
            self._v__kinds[name] = kind
        return kind

    def _g_child_added(self, name: str, kind: Kind) -> None:
        if self._v__links is not None:
            is_link = kind in (Kind.SOFTLINK, Kind.EXTLINK)
            self._v__links[name] = kind if is_link else None
        self._v__visible = None
        self._v__kinds[name] = kind

    def _g_child_removed(self, name: str) -> None:
        if self._v__links is not None:
            self._v__links.pop(name, None)
        self._v__visible = None
        self._v__kinds.pop(name, None)

    def _f_get_child(self, childname: str) -> Node:
        """Return the child called ``childname`` (visible or hidden).

        Raises
        ------
        NoSuchNodeError
            If the group has no such child.
        ClosedNodeError
            If this group object is closed.
        """
        self._g_check_open()
        return self._v_file._load_child(self, childname)

    def _f_close(self) -> None:
        """Close this group object and the open node objects below it, as PyTables does;
        the file loads fresh ones on the next access."""
        if self._v_isopen:
            for node in self._v_file._open_nodes_below(self._v_pathname):
                node._f_close()
        super()._f_close()

    def _g_get_child_group_class(self, childname: str) -> type[Node]:
        """The class the child group ``childname`` is served with (PyTables' hook for
        group classes: every PyTables group class, index and undo-log groups included,
        is a :class:`Group` here)."""
        return type(self._f_get_child(childname))

    def __getattr__(self, name: str) -> Node:
        """Return the child called ``name`` (natural naming), as PyTables does for any name
        that is not one of the group's members.

        Raises
        ------
        NoSuchNodeError
            If the group has no such child (also an ``AttributeError``).
        HDF5ExtError
            If the child's object cannot be opened (a damaged file).
        """
        if "_v_file" not in self.__dict__:  # not set up yet (copying, unpickling)
            raise AttributeError(name)
        if is_member(self, name):  # a member's own code failed: its error, not a child's
            return member_failed(self, name)
        try:
            return self._v_file._load_child(self, name)
        except NoSuchNodeError:
            raise NoSuchNodeError(
                f"group ``{self._v_pathname}`` does not have a child named ``{name}``"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        """Set a Python attribute (never a child nor a node attribute).

        As in PyTables, a :class:`NaturalNameWarning` says when a visible child of that
        name exists: natural naming gives the attribute from then on (until it is deleted),
        and the child is still reached with ``group[name]``.
        """
        if (not name.startswith(_MEMBER_PREFIXES) and self._v_isopen
                and name in self._g_visible_names()):
            warnings.warn(
                f"group ``{self._v_pathname}`` already has a child node named ``{name}``; "
                f"you will not be able to use natural naming to access the child node",
                NaturalNameWarning,
                stacklevel=2,
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        """Delete a Python attribute; a child is removed with ``_f_remove`` instead."""
        try:
            super().__delattr__(name)
        except AttributeError as exc:
            raise AttributeError(
                f"{exc} (use ``node._f_remove()`` if you want to remove a node)"
            ) from exc

    def __getitem__(self, key: str) -> Node:
        """Return the descendant at relative path ``key`` (``group["a/b"]``)."""
        if not isinstance(key, str):
            raise TypeError(f"group keys are node names or relative paths, not {key!r}")
        if "/" not in key.strip("/"):
            return self._v_file._load_child(self, key.strip("/"))
        path = join_path(self._v_pathname, key.strip("/"))
        return self._v_file.get_node(normalize_path(path))

    def __contains__(self, name: object) -> bool:
        """Whether the group has a child (visible or hidden) called ``name``."""
        return isinstance(name, str) and name in self._g_link_table()

    def __iter__(self) -> Iterator[Node]:
        """Iterate over the visible children in name order."""
        return self._f_iter_nodes()

    def __len__(self) -> int:
        """The number of visible children."""
        return len(self._g_visible_names())

    def __bool__(self) -> bool:
        return True

    def __dir__(self) -> list[str]:
        """The members, and the visible children natural naming reaches (PyTables)."""
        children = [n for n in self._g_visible_names() if n.isidentifier()]
        return sorted(set(super().__dir__()) | set(children))

    def _g_children_view(self, kind: str) -> ChildrenView:
        """A read-only mapping name -> node over one kind of child.

        Parameters
        ----------
        kind : {'children', 'groups', 'leaves', 'links', 'unknown', 'hidden'}
            Which children: all visible, visible groups, visible leaves, visible links,
            visible objects of unknown kind, or hidden ones.
        """
        return ChildrenView(self, kind)

    @property
    def _v_children(self) -> ChildrenView:
        """The visible children, name -> node."""
        return ChildrenView(self, "children")

    @property
    def _v_groups(self) -> ChildrenView:
        """The visible child groups, name -> node."""
        return ChildrenView(self, "groups")

    @property
    def _v_leaves(self) -> ChildrenView:
        """The visible child leaves, name -> node."""
        return ChildrenView(self, "leaves")

    @property
    def _v_links(self) -> ChildrenView:
        """The visible child links, name -> node."""
        return ChildrenView(self, "links")

    @property
    def _v_unknown(self) -> ChildrenView:
        """The visible children of unknown kind, name -> node."""
        return ChildrenView(self, "unknown")

    @property
    def _v_hidden(self) -> ChildrenView:
        """The hidden children (``_i_*``, ``_p_*``), name -> node."""
        return ChildrenView(self, "hidden")

    @property
    def _v_nchildren(self) -> int:
        """The number of visible children."""
        return len(self._g_visible_names())

    def _g_names_of(self, kind: str) -> list[str]:
        if kind == "hidden":
            return self._g_hidden_names()
        names = self._g_visible_names()
        if kind == "children":
            return names
        wanted = {
            "groups": (Kind.GROUP,),
            "leaves": (Kind.DATASET,),
            "links": (Kind.SOFTLINK, Kind.EXTLINK),
            "unknown": (Kind.NAMED_TYPE, Kind.UNKNOWN),
        }.get(kind)
        if wanted is None:
            raise ValueError(
                f"kind must be children, groups, leaves, links, unknown or hidden, not {kind!r}"
            )
        return [n for n in names if self._g_kind_of(n) in wanted]

    # ------------------------------------------------------------------ walking
    def _f_iter_nodes(self, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the visible children (of class ``classname``), in name order.

        Raises ``HDF5ExtError`` on reaching a child that cannot be opened: one HDF5 cannot
        tell the kind of, or, with a ``classname``, a dataset HDF5 cannot open (its class
        is unknown: it may be of class ``classname``).
        """
        file = self._v_file
        cls = file._class_by_name(classname)
        names = self._g_names_of("groups") if classname == "Group" else self._g_visible_names()
        for name in names:
            node = file._load_child(self, name)
            if cls is None or isinstance(node, cls):
                yield node
            elif node._c_kind is Kind.UNKNOWN:  # an Unknown node: HDF5ExtError if damaged
                node._g_h5id  # noqa: B018

    def _f_list_nodes(self, classname: str | None = None) -> list[Node]:
        """Return the visible children (of class ``classname``) in name order."""
        return list(self._f_iter_nodes(classname))

    def _f_walk_groups(self) -> Iterator[Group]:
        """Iterate over this group and every visible group below it (PyTables' order)."""
        stack: list[Group] = [self]
        yield self
        while stack:
            group = stack.pop()
            for name in group._g_names_of("groups"):
                child = group._v_file._load_child(group, name)
                if isinstance(child, Group):
                    stack.append(child)
                    yield child

    def _f_walknodes(self, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the visible nodes below this group (of class ``classname``).

        Groups come as :meth:`_f_walk_groups` reaches them, each followed by its children.
        """
        if classname == "Group":
            yield from self._f_walk_groups()
            return
        for group in self._f_walk_groups():
            yield from group._f_iter_nodes(classname)

    # ------------------------------------------------------------------ copying
    def _f_copy_children(
        self,
        dstgroup: Any,
        overwrite: bool = False,
        recursive: bool = False,
        createparents: bool = False,
        **kwargs: Any,
    ) -> None:
        """Copy this group's children into ``dstgroup`` (see ``File.copy_children``)."""
        self._v_file.copy_children(self, dstgroup, overwrite, recursive, createparents,
                                   **kwargs)

    # ------------------------------------------------------------------ filters
    @property
    def _v_filters(self) -> Filters:
        """Default filters for new leaves in this group (its ``FILTERS`` attribute)."""
        if raw.has_attribute(self._g_h5id, "FILTERS"):
            return Filters._unpack(int(raw.read_attribute(self._g_h5id, "FILTERS")))
        return Filters()

    @_v_filters.setter
    def _v_filters(self, value: Filters) -> None:
        self._g_check_writable()
        if not isinstance(value, Filters):
            raise TypeError(f"filters must be a Filters instance, not {value!r}")
        self._v_attrs._g_logged_write(
            "FILTERS",
            lambda: raw.write_int_attribute(self._g_h5id, "FILTERS", value._pack(), "int64"))

    # ------------------------------------------------------------------ reprs
    def __repr__(self) -> str:
        if not self._v_isopen:
            return super().__repr__()
        items = []
        for name in self._g_visible_names():
            kind = self._g_kind_of(name)
            if kind == Kind.GROUP or kind == Kind.DATASET:
                label = type(self._v_file._load_child(self, name)).__name__
            else:
                label = kind.name.capitalize()
            items.append(f"{name!r} ({label})")
        return f"{self}\n  children := [{', '.join(items)}]"


class RootGroup(Group):
    """The root group of a file (``file.root``)."""


class ChildrenView(Mapping[str, Node]):
    """A read-only mapping over some children of a group (PyTables' ``_v_children`` etc.)."""

    def __init__(self, group: Group, kind: str) -> None:
        self._group = group
        self._kind = kind
        self._group._g_names_of(kind)  # validate the kind now

    def __getitem__(self, name: str) -> Node:
        if name not in self._group._g_names_of(self._kind):
            raise KeyError(name)
        return self._group._f_get_child(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._group._g_names_of(self._kind))

    def __len__(self) -> int:
        return len(self._group._g_names_of(self._kind))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._group._g_names_of(self._kind)

    def __eq__(self, other: object) -> bool:
        """Views compare by their names, as PyTables' children dicts do (those of two hard
        links to one group are equal; so are those of two files' groups of one layout)."""
        if isinstance(other, ChildrenView):
            return list(self) == list(other)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(n) + ': ...' for n in self)}}}"


def warn_if_shadowed(group: Group, name: str) -> None:
    """Warn (:class:`NaturalNameWarning`, as PyTables) when a child ``name`` about to be
    added to ``group`` is hidden from natural naming by a Python attribute of that name."""
    if name in group.__dict__:
        warnings.warn(
            f"group ``{group._v_pathname}`` already has an attribute named ``{name}``; you "
            f"will not be able to use natural naming to access the child node",
            NaturalNameWarning,
            stacklevel=4,
        )
