"""Groups: the inner nodes of the tree, with natural naming and lazy children."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab.codecs.filters import Filters
from hyperslab.errors import NoSuchNodeError
from hyperslab.nodes.compat import GroupCompat
from hyperslab.nodes.naming import is_hidden_name, join_path, normalize_path
from hyperslab.nodes.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.file import File


GROUP_MEMBERS = frozenset(
    {"path", "name", "file", "parent", "depth", "attrs", "title", "filters", "isopen",
     "close", "remove", "rename", "move", "copy", "get_child", "list_nodes", "iter_nodes",
     "walk_nodes", "walk_groups", "children_view", "is_visible"}
)
"""Group members that shadow children of the same name under natural naming."""


class Group(GroupCompat, Node):
    """A group: a node holding other nodes.

    Children are reached by natural naming (``group.child``), by item access with a name or
    a relative path (``group["a/b"]``), or through ``get_child``.  Iteration yields the
    visible children in name order; hidden ones (``_i_*``, ``_p_*``) are skipped.
    """

    _c_classid: ClassVar[str] = "GROUP"
    _c_version: ClassVar[str] = "1.0"
    _kind: ClassVar[Kind] = Kind.GROUP

    def __init__(self, file: File, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self._links: dict[str, Kind | None] | None = None
        self._visible: list[str] | None = None
        self._kinds: dict[str, Kind] = {}

    # ------------------------------------------------------------------ children
    def _link_table(self) -> dict[str, Kind | None]:
        """Every link of the group, in name order: name -> link kind (None: hard link)."""
        if self._links is None:
            self._links = tree.list_links(self._h5id)
        return self._links

    def _visible_names(self) -> list[str]:
        """The visible children's names, sorted (cached until the group changes)."""
        if self._visible is None:
            self._visible = sorted(n for n in self._link_table() if not is_hidden_name(n))
        return self._visible

    def _hidden_names(self) -> list[str]:
        return sorted(n for n in self._link_table() if is_hidden_name(n))

    def _kind_of(self, name: str) -> Kind:
        """What child ``name`` is, without loading it when possible."""
        kind = self._kinds.get(name)
        if kind is None:
            kind = self._link_table().get(name) or tree.child_kind(self._h5id, name)
            self._kinds[name] = kind
        return kind

    def _child_added(self, name: str, kind: Kind) -> None:
        if self._links is not None:
            is_link = kind in (Kind.SOFTLINK, Kind.EXTLINK)
            self._links[name] = kind if is_link else None
        self._visible = None
        self._kinds[name] = kind

    def _child_removed(self, name: str) -> None:
        if self._links is not None:
            self._links.pop(name, None)
        self._visible = None
        self._kinds.pop(name, None)

    def get_child(self, name: str) -> Node:
        """Return the child called ``name`` (visible or hidden).

        Raises
        ------
        NoSuchNodeError
            If the group has no such child.
        """
        return self._file._load_child(self, name)

    def __getattr__(self, name: str) -> Node:
        if name.startswith("__") or name in ("_file", "_path", "_h5id_", "_isopen", "_links",
                                             "_kinds", "_visible", "_class_value"):
            raise AttributeError(name)
        try:
            return self._file._load_child(self, name)
        except NoSuchNodeError:
            raise NoSuchNodeError(
                f"group ``{self._path}`` does not have a child named ``{name}``"
            ) from None

    def __getitem__(self, key: str) -> Node:
        """Return the descendant at relative path ``key`` (``group["a/b"]``)."""
        if not isinstance(key, str):
            raise TypeError(f"group keys are node names or relative paths, not {key!r}")
        if "/" not in key.strip("/"):
            return self._file._load_child(self, key.strip("/"))
        return self._file.get_node(normalize_path(join_path(self._path, key.strip("/"))))

    def __contains__(self, name: object) -> bool:
        """Whether the group has a child (visible or hidden) called ``name``."""
        return isinstance(name, str) and name in self._link_table()

    def __iter__(self) -> Iterator[Node]:
        """Iterate over the visible children in name order."""
        return self.iter_nodes()

    def __len__(self) -> int:
        """The number of visible children."""
        return len(self._visible_names())

    def __bool__(self) -> bool:
        return True

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._visible_names()))

    def children_view(self, kind: str) -> ChildrenView:
        """A read-only mapping name -> node over one kind of child.

        Parameters
        ----------
        kind : {'children', 'groups', 'leaves', 'links', 'unknown', 'hidden'}
            Which children: all visible, visible groups, visible leaves, visible links,
            visible objects of unknown kind, or hidden ones.
        """
        return ChildrenView(self, kind)

    def _names_of(self, kind: str) -> list[str]:
        if kind == "hidden":
            return self._hidden_names()
        names = self._visible_names()
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
        return [n for n in names if self._kind_of(n) in wanted]

    # ------------------------------------------------------------------ walking
    def iter_nodes(self, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the visible children (of class ``classname``), in name order."""
        cls = self._file._class_by_name(classname)
        names = self._names_of("groups") if classname == "Group" else self._visible_names()
        for name in names:
            node = self._file._load_child(self, name)
            if cls is None or isinstance(node, cls):
                yield node

    def list_nodes(self, classname: str | None = None) -> list[Node]:
        """Return the visible children (of class ``classname``) in name order."""
        return list(self.iter_nodes(classname))

    def walk_groups(self) -> Iterator[Group]:
        """Iterate over this group and every visible group below it (PyTables' order)."""
        stack: list[Group] = [self]
        yield self
        while stack:
            group = stack.pop()
            for name in group._names_of("groups"):
                child = group._file._load_child(group, name)
                if isinstance(child, Group):
                    stack.append(child)
                    yield child

    def walk_nodes(self, classname: str | None = None) -> Iterator[Node]:
        """Iterate over the visible nodes below this group (of class ``classname``).

        Groups come as :meth:`walk_groups` reaches them, each followed by its children.
        """
        if classname == "Group":
            yield from self.walk_groups()
            return
        for group in self.walk_groups():
            yield from group.iter_nodes(classname)

    # ------------------------------------------------------------------ filters
    @property
    def filters(self) -> Filters:
        """Default filters for new leaves in this group (its ``FILTERS`` attribute)."""
        if raw.has_attribute(self._h5id, "FILTERS"):
            return Filters._unpack(int(raw.read_attribute(self._h5id, "FILTERS")))
        return Filters()

    @filters.setter
    def filters(self, value: Filters) -> None:
        self._file._check_writable()
        if not isinstance(value, Filters):
            raise TypeError(f"filters must be a Filters instance, not {value!r}")
        raw.write_int_attribute(self._h5id, "FILTERS", value._pack(), "int64")

    # ------------------------------------------------------------------ reprs
    def __repr__(self) -> str:
        if not self.isopen:
            return super().__repr__()
        items = []
        for name in self._visible_names():
            kind = self._kind_of(name)
            if kind == Kind.GROUP or kind == Kind.DATASET:
                label = type(self._file._load_child(self, name)).__name__
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
        self._group._names_of(kind)  # validate the kind now

    def __getitem__(self, name: str) -> Node:
        if name not in self._group._names_of(self._kind):
            raise KeyError(name)
        return self._group.get_child(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._group._names_of(self._kind))

    def __len__(self) -> int:
        return len(self._group._names_of(self._kind))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._group._names_of(self._kind)

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(n) + ': ...' for n in self)}}}"
