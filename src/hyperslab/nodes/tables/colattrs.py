"""Attributes of one table column (``table.cols.x.attrs``), as PyTables keeps them: in the
table's own attribute set, named ``FIELD_<pos>_ATTR_<name>`` where ``<pos>`` is the
column's position in the description that holds it (so columns of different nested
groups may share a ``<pos>``, as in PyTables)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hyperslab.nodes.tables.columns import Column

_OWN = ("_v_tableattrs", "_v_fieldindex", "_v_column")


class ColumnAttributeSet:
    """The attributes of one column, read and written by name (``attrs.unit``) or by key
    (``attrs['unit']``), stored as attributes of the table.

    Examples
    --------
    ``table.cols.freq.attrs.unit = 'Hz'`` stores the table attribute
    ``FIELD_0_ATTR_unit`` when ``freq`` is the first column.
    """

    def __init__(self, column: Column) -> None:
        self.__dict__["_v_tableattrs"] = column.table.attrs
        self.__dict__["_v_fieldindex"] = column._v_pos
        # what str() shows of the column (the Column object itself may be a temporary)
        self.__dict__["_v_column"] = (column._table_path, column.name, type(column).__name__)

    def _prefix(self, name: str) -> str:
        return f"FIELD_{self.__dict__['_v_fieldindex']}_ATTR_{name}"

    def __getattr__(self, name: str) -> Any:
        if name in _OWN or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._v_tableattrs, self._prefix(name))

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            self.__dict__[name] = value
        else:
            setattr(self._v_tableattrs, self._prefix(name), value)

    def __delattr__(self, name: str) -> None:
        if name in _OWN:
            raise TypeError("Deleting system attributes is prohibited")
        delattr(self._v_tableattrs, self._prefix(name))

    def __getitem__(self, name: str) -> Any:
        return self._v_tableattrs[self._prefix(name)]

    def __setitem__(self, name: str, value: Any) -> None:
        self._v_tableattrs[self._prefix(name)] = value

    def __delitem__(self, name: str) -> None:
        if name in _OWN:
            raise TypeError("Deleting system attributes is prohibited")
        del self._v_tableattrs[self._prefix(name)]

    def _f_rename(self, oldattrname: str, newattrname: str) -> None:
        """Rename attribute ``oldattrname`` to ``newattrname``."""
        if oldattrname == newattrname:
            return
        if oldattrname in _OWN:
            raise TypeError("Renaming system attributes is prohibited")
        setattr(self, newattrname, getattr(self, oldattrname))
        delattr(self, oldattrname)

    def _f_copy(self, where: Column) -> None:
        """Copy every attribute to column ``where``."""
        from hyperslab.nodes.tables.columns import Column

        if not isinstance(where, Column):
            raise TypeError(f"destination object is not a column: {where!r}")
        for name in self.keys():
            where.attrs[name] = self[name]

    def keys(self) -> list[str]:
        """The names of the column's attributes."""
        prefix = self._prefix("")
        return [name[len(prefix):] for name in self._v_tableattrs._v_attrnames
                if name.startswith(prefix)]

    def contains(self, name: str) -> bool:
        """Whether the column has attribute ``name``."""
        return name in self.keys()

    def __str__(self) -> str:
        path, name, classname = self.__dict__["_v_column"]
        return (f"{path}.cols.{name}._v_attrs ({classname}), "
                f"{len(self.keys())} attributes")

    def __repr__(self) -> str:
        names = self.keys()
        if not names:
            return str(self)
        items = ",\n    ".join(f"{name} := {getattr(self, name)!r}" for name in names)
        return f"{self!s}:\n   [{items}]"


__all__ = ["ColumnAttributeSet"]
