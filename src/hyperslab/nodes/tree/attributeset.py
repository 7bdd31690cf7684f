"""``node._v_attrs`` (``leaf.attrs``): the attributes of one node, PyTables' AttributeSet."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab.codecs.filters import Filters
from hyperslab.errors import DataTypeWarning
from hyperslab.nodes.members import is_member, member_failed
from hyperslab.nodes.tree.naming import check_attribute_name, not_utf8
from hyperslab.storage import attributes as raw

if TYPE_CHECKING:
    from hyperslab.nodes.tree.node import Node

SYS_ATTRS = frozenset(
    {
        "CLASS", "VERSION", "TITLE", "NROWS", "EXTDIM", "ENCODING", "PYTABLES_FORMAT_VERSION",
        "FLAVOR", "FILTERS", "AUTO_INDEX", "DIRTY", "NODE_TYPE", "NODE_TYPE_VERSION",
        "PSEUDOATOM",
    }
)
"""PyTables' system attribute names (plus every name starting with ``FIELD_``)."""

HIDDEN_ATTRS = frozenset({"HS_FLUSHED_ROWS"})
"""hyperslab's own bookkeeping in the file, left out of every listing of ``attrs``:
the flush mark (:data:`hyperslab.nodes.files.flushguard.MARK`), which a session writes on
the leaves it changes and removes when it closes the file.  PyTables lists only the
attributes that belong to the node (its own system ones and the user's), and a listing
must not change with whether the file was flushed or closed since.  It can still be read
by name (``attrs.HS_FLUSHED_ROWS``, to diagnose a file a killed writer left), and only the
flush guard writes it: setting, renaming or deleting it through ``attrs`` raises
``AttributeError``."""


NOT_COPIED_ATTRS = frozenset(
    {"CLASS", "VERSION", "TITLE", "NROWS", "EXTDIM", "PYTABLES_FORMAT_VERSION", "FILTERS",
     "ENCODING", "HS_FLUSHED_ROWS"}
)
"""System attributes that describe a node's own layout and are not copied to another node."""


def _as_user_value(name: str, value: Any) -> Any:
    """PyTables shows the packed ``FILTERS`` system attribute as a Filters object."""
    if name == "FILTERS" and isinstance(value, (int, np.integer)):
        return Filters._unpack(int(value))
    return value


def is_sys_attr(name: str) -> bool:
    """Whether ``name`` is one of PyTables' system attributes."""
    return name in SYS_ATTRS or name.startswith("FIELD_")


class AttributeSet:
    """The attributes of a node: attribute access, item access, ``in`` and deletion.

    In a damaged file, an attribute that cannot be read raises ``HDF5ExtError``; a name
    or a UTF-8 string value whose bytes are not UTF-8 reads faithfully (the name with
    surrogate escapes, see :attr:`_v_attrnames`; the value as ``numpy.bytes_``) with a
    :class:`~hyperslab.errors.DataTypeWarning`.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "attrs.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     f.root._v_attrs.version = 3
    ...     f.root._v_attrs["units"] = "m/s"
    ...     print(f.root._v_attrs.version, f.root._v_attrs.units, "units" in f.root._v_attrs)
    3 m/s True
    """

    __slots__ = ("_node",)

    def __init__(self, node: Node) -> None:
        object.__setattr__(self, "_node", node)

    # -------------------------------------------------------------- helpers
    @property
    def _oid(self) -> Any:
        return self._node._g_h5id

    @property
    def _v_unimplemented(self) -> list[str]:
        """Attributes that could not be read (none: unsupported types read as None)."""
        return []

    def _check_writable(self, name: str) -> None:
        """Refuse writes to a closed node or a read-only file.

        As in PyTables, every attribute may be set, renamed or deleted, system ones
        included (``CLASS``, ``VERSION``, ``NROWS``...): the node object keeps its class
        for this session, and the next session loads the node by what the file then says
        (an unknown or missing ``CLASS`` by PyTables' heuristics).  Only hyperslab's flush
        mark (:data:`HIDDEN_ATTRS`) is refused, with ``AttributeError``.
        """
        self._node._g_check_writable()
        if name in HIDDEN_ATTRS:
            raise AttributeError(
                f"attribute ``{name}`` of node ``{self._node._v_pathname}`` is hyperslab's "
                f"flush mark, which only hyperslab writes"
            )

    def _changed(self, name: str) -> None:
        """Tell the node that attribute ``name`` was written, renamed or deleted."""
        if name == "CLASS":
            self._node._v__class_value = None  # read from the file from now on
        self._node._g_attr_changed(name)

    # -------------------------------------------------------------- listing
    @property
    def _v_node(self) -> Node:
        return self._node

    @property
    def _v_attrnames(self) -> list[str]:
        """All attribute names, sorted.

        Names are UTF-8 in HDF5.  A name whose bytes are not (a damaged file, or another
        program's) is listed faithfully, its stray bytes as surrogate escapes
        (``'T\\udc84TLE'`` for ``b'T\\x84TLE'``, as ``bytes.decode('utf-8',
        'surrogateescape')`` gives), and reads and deletes that attribute; every listing
        that holds such names warns with a :class:`~hyperslab.errors.DataTypeWarning`.
        h5py lists such a name as ``bytes``.
        """
        names = self._g_listed()
        odd = not_utf8(names)
        if odd:
            warnings.warn(
                f"attribute names of node ``{self._node._v_pathname}`` that are not UTF-8 "
                f"are listed with surrogate escapes for their stray bytes: {odd!r}",
                DataTypeWarning, stacklevel=2)
        return names

    def _g_listed(self) -> list[str]:
        """The names in the file, sorted, but hyperslab's own (:data:`HIDDEN_ATTRS`)."""
        return sorted(n for n in raw.attribute_names(self._oid) if n not in HIDDEN_ATTRS)

    @property
    def _v_attrnamessys(self) -> list[str]:
        """The system attribute names, sorted."""
        return [n for n in self._v_attrnames if is_sys_attr(n)]

    @property
    def _v_attrnamesuser(self) -> list[str]:
        """The user attribute names, sorted."""
        return [n for n in self._v_attrnames if not is_sys_attr(n)]

    def _f_list(self, attrset: str = "user") -> list[str]:
        """List attribute names: ``'user'``, ``'sys'`` or ``'all'``.

        Raises
        ------
        ValueError
            For any other ``attrset``.
        """
        if attrset == "user":
            return self._v_attrnamesuser
        if attrset == "sys":
            return self._v_attrnamessys
        if attrset == "all":
            return self._v_attrnames
        raise ValueError(f"attrset must be 'user', 'sys' or 'all', not {attrset!r}")

    def keys(self) -> list[str]:
        """All attribute names, sorted."""
        return self._v_attrnames

    def __iter__(self) -> Any:
        return iter(self._v_attrnames)

    def __len__(self) -> int:
        return len(self._g_listed())

    def __contains__(self, name: object) -> bool:
        return (isinstance(name, str) and name != "" and name not in HIDDEN_ATTRS
                and raw.has_attribute(self._oid, name))

    def __dir__(self) -> list[str]:
        """Members and the attribute names that are Python identifiers (tab completion,
        as PyTables)."""
        names = set(super().__dir__()) | set(self._g_listed())
        return sorted(n for n in names if n.isidentifier())

    # -------------------------------------------------------------- access
    def _f_getattr(self, name: str) -> Any:
        """Get attribute ``name`` (``AttributeError`` if missing)."""
        if name == "CLASS" and self._node._v__class_value is not None:
            return self._node._v__class_value  # read when the node was loaded
        try:
            value = raw.read_attribute(self._oid, name)
        except KeyError:
            raise AttributeError(
                f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``"
            ) from None
        return _as_user_value(name, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if is_member(self, name):  # a member's own code failed: its error, not an HDF5 one
            return member_failed(self, name)
        return self._f_getattr(name)

    def __getitem__(self, name: str) -> Any:
        try:
            return _as_user_value(name, raw.read_attribute(self._oid, name))
        except KeyError:
            raise KeyError(
                f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``"
            ) from None

    def _f_setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` to ``value``."""
        check_attribute_name(name)  # TypeError, ValueError, NaturalNameWarning as PyTables
        self._check_writable(name)
        self._g_logged_write(name, lambda: raw.write_attribute(self._oid, name, value))

    def _g_logged_write(self, name: str, write: Callable[[], None]) -> None:
        """Write attribute ``name`` with ``write()``, logged for undo as PyTables logs
        ``attrs.name = value`` when the file's undo log is on: the old value (if any) kept
        and its deletion logged, then the addition logged."""
        node = self._node
        file = node._v_file
        logged = file._undo_logs(node)
        if logged and raw.has_attribute(self._oid, name):
            file._attr_to_shadow(node, name)
        write()
        self._changed(name)
        if logged:
            file._log("ADDATTR", node._v_pathname, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._f_setattr(name, value)

    def __setitem__(self, name: str, value: Any) -> None:
        self._f_setattr(name, value)

    def _f_delattr(self, name: str) -> None:
        """Delete attribute ``name`` (``AttributeError`` if missing)."""
        self._check_writable(name)
        if not raw.has_attribute(self._oid, name):
            raise AttributeError(
                f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``"
            )
        node = self._node
        if node._v_file._undo_logs(node):  # the value is kept in the undo log
            node._v_file._attr_to_shadow(node, name)
            return
        raw.delete_attribute(self._oid, name)
        self._changed(name)

    def __delattr__(self, name: str) -> None:
        self._f_delattr(name)

    def __delitem__(self, name: str) -> None:
        try:
            self._f_delattr(name)
        except AttributeError as exc:
            raise KeyError(str(exc)) from None

    def _f_rename(self, oldattrname: str, newattrname: str) -> None:
        """Rename an attribute.

        Raises
        ------
        AttributeError
            If ``oldattrname`` does not exist, or either name is read-only.
        """
        self._check_writable(oldattrname)
        self._check_writable(newattrname)
        if not raw.has_attribute(self._oid, oldattrname):
            raise AttributeError(
                f"Attribute ``{oldattrname}`` does not exist in node: ``{self._node._v_pathname}``"
            )
        if oldattrname == newattrname:
            return
        if self._node._v_file._undo_logs(self._node):  # logged as PyTables: set, delete
            oid = self._oid
            self._g_logged_write(
                newattrname, lambda: raw.copy_attribute(oid, oldattrname, oid, newattrname))
            self._f_delattr(oldattrname)
            return
        raw.rename_attribute(self._oid, oldattrname, newattrname)
        self._changed(oldattrname)
        self._changed(newattrname)

    def _g_copied_names(self, sys_attrs: bool) -> list[str]:
        """The attributes a copy of the node carries (PyTables' ``_g_copy`` with
        ``copyclass``): the user ones, and with ``sys_attrs`` (the file's
        ``PYTABLES_SYS_ATTRS``) the system ones that do not describe the node's own layout
        (``FLAVOR``, ``NODE_TYPE``...) plus ``CLASS`` and ``VERSION``, whatever they say."""
        names = self._v_attrnames
        if not sys_attrs:
            return [n for n in names if not is_sys_attr(n)]
        return [n for n in names
                if not is_sys_attr(n) or n in ("CLASS", "VERSION")
                or (n not in NOT_COPIED_ATTRS and not n.startswith("FIELD_"))]

    def _f_copy(self, where: Node) -> None:
        """Copy the user attributes and the copyable system ones to node ``where``."""
        where._v_file._check_writable()
        names = [n for n in self._v_attrnames if n not in NOT_COPIED_ATTRS]
        if where._v_file._undo_logs(where):  # one logged setting per attribute
            attrs, oid = where._v_attrs, self._oid
            for name in names:
                attrs._g_logged_write(name, partial(raw.copy_attribute, oid, name,
                                                    where._g_h5id, name))
            return
        raw.copy_attributes(self._oid, where._g_h5id, names)

    # -------------------------------------------------------------- reprs
    def __str__(self) -> str:
        names = self._v_attrnames
        return f"{self._node._v_pathname}._v_attrs (AttributeSet), {len(names)} attributes"

    def __repr__(self) -> str:
        names = self._v_attrnames
        if not names:
            return str(self)
        items = [f"{n} := {self._f_getattr(n)!r}" for n in names]
        body = ",\n    ".join(items)
        return f"{self}:\n   [{body}]"


class NoAttributes(AttributeSet):
    """The attributes of a link: HDF5 links have none, and none can be set."""

    __slots__ = ()

    @property
    def _v_attrnames(self) -> list[str]:
        return []

    def __len__(self) -> int:
        return 0

    def __contains__(self, name: object) -> bool:
        return False

    def __dir__(self) -> list[str]:
        return sorted(object.__dir__(self))

    def _f_getattr(self, name: str) -> Any:
        raise AttributeError(
            f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``"
        )

    def __getitem__(self, name: str) -> Any:
        raise KeyError(f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``")

    def _f_setattr(self, name: str, value: Any) -> None:
        raise TypeError(f"links can not have attributes: ``{self._node._v_pathname}``.{name}")

    def _f_delattr(self, name: str) -> None:
        raise AttributeError(
            f"Attribute ``{name}`` does not exist in node: ``{self._node._v_pathname}``"
        )

    def _f_rename(self, oldattrname: str, newattrname: str) -> None:
        raise AttributeError(
            f"Attribute ``{oldattrname}`` does not exist in node: ``{self._node._v_pathname}``"
        )

    def _f_copy(self, where: Node) -> None:
        """Nothing to copy."""
