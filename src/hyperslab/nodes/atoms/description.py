"""Table descriptions: ``IsDescription``, ``Description`` and their conversions.

A description is the structure of a table's records: non-nested columns
(:class:`~hyperslab.nodes.atoms.cols.Col`) and nested ones (further descriptions), with PyTables'
names and semantics.  Column order follows PyTables' rule: columns with an explicit position
first, by position (then name), the rest in alphabetical order; each then gets its final
index as ``_v_pos``.

Besides PyTables' API, this module holds what the tables layer reads of a description:
:func:`default_row`, :func:`flat_columns`, :func:`field_of` and
:func:`warn_if_too_many_columns`.  The glue between descriptions and the storage layer's
compound types (the description of a table in a file, what to create for a description) is
:mod:`hyperslab.nodes.atoms.tablelayout`.

Differences from PyTables, all deliberate:

* ``Description()`` also takes what ``Table`` takes: an ``IsDescription`` subclass or
  instance, a ``Description``, a structured dtype or array;
* the inputs are never modified (PyTables replaces the columns of the dict, or of the
  ``IsDescription`` class, it is given by positioned copies), and a ``Description`` used as
  a nested column is copied rather than shared;
* nested descriptions are built with the ``validate`` flag of their parent (PyTables always
  validates nested names);
* invalid names raise before any NaturalNameWarning about them;
* an ``IsDescription`` subclass keeps its own ``__module__``.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import numpy as np

from hyperslab._typing import AnyArray, DTypeLike
from hyperslab.errors import PerformanceWarning
from hyperslab.nodes.atoms.cols import Col, check_column_name
from hyperslab.nodes.members import is_member, member_failed

MAX_COLUMNS = 512
"""Columns of a table past which PyTables (and :func:`warn_if_too_many_columns`) warn."""

# ----------------------------------------------------------------------------- IsDescription


class MetaIsDescription(type):
    """Metaclass of :class:`IsDescription`: collects the class variables into ``columns``."""

    def __new__(
        mcs, classname: str, bases: tuple[type, ...], classdict: dict[str, Any]
    ) -> MetaIsDescription:
        columns: dict[str, Any] = {}
        for base in bases:
            columns.update(base.__dict__.get("columns", {}))
        columns.update({k: v for k, v in classdict.items() if not k.startswith("__")})
        newdict: dict[str, Any] = {"columns": columns}
        for special in ("__doc__", "__module__", "__qualname__"):
            if special in classdict:
                newdict[special] = classdict[special]
        return super().__new__(mcs, classname, bases, newdict)


class IsDescription(metaclass=MetaIsDescription):
    """Declare the structure of a table (or nested column) as a class.

    Each class variable becomes a column: a :class:`~hyperslab.nodes.atoms.cols.Col` instance, or
    a nested column given as an ``IsDescription`` subclass (declared in place or referenced),
    an instance of one, or a dict.  A ``_v_pos`` class variable sets the position of a
    nested column among its siblings.  Columns are inherited from base descriptions.  The
    class variables are collected into the ``columns`` dict and are no longer class
    attributes.

    Examples
    --------
    >>> from hyperslab.nodes.atoms.cols import Float64Col, Int32Col
    >>> class Particle(IsDescription):
    ...     energy = Float64Col()
    ...     id = Int32Col(pos=0)
    >>> Description(Particle)._v_names
    ['id', 'energy']
    """

    columns: dict[str, Any]


# ----------------------------------------------------------------------------- Description


def _allow_padding(ptparams: Any) -> bool:
    """PyTables' ``ALLOW_PADDING`` from a mapping or an options object (default True)."""
    if ptparams is None:
        return True
    if isinstance(ptparams, Mapping):
        return bool(ptparams.get("ALLOW_PADDING", True))
    return bool(getattr(ptparams, "allow_padding", getattr(ptparams, "ALLOW_PADDING", True)))


def _is_description_class(obj: object) -> bool:
    return isinstance(obj, type) and issubclass(obj, IsDescription)


def _columns_of(source: Any) -> dict[Any, Any]:
    """Return a new dict of columns from anything a top-level Description accepts."""
    if isinstance(source, dict):
        return dict(source)
    if _is_description_class(source):
        return dict(source().columns)
    if isinstance(source, IsDescription):
        return dict(source.columns)
    if isinstance(source, Description):
        return _columns_of_description(source)
    if isinstance(source, np.ndarray | np.dtype):
        return _columns_from_dtype(np.dtype(source.dtype if isinstance(source, np.ndarray)
                                            else source))[0]
    raise TypeError(
        "the description is not of a supported type: ``IsDescription`` subclass or "
        f"instance, ``Description`` instance, dictionary, or structured dtype or array: "
        f"{source!r}"
    )


def _columns_of_description(descr: Description) -> dict[Any, Any]:
    columns: dict[Any, Any] = dict(descr._v_colobjects)
    for name in ("_v_pos", "_v_offset"):
        if name in descr.__dict__:
            columns[name] = descr.__dict__[name]
    return columns


class Description:
    """The structure of a table or nested column: its columns and their NumPy dtype.

    Parameters
    ----------
    classdict : dict, IsDescription subclass or instance, Description, dtype or array
        The columns: a dict of name -> ``Col`` instance or nested column (dict,
        ``IsDescription`` subclass or instance, ``Description``); keys starting with
        ``_v_`` set attributes (``_v_pos``...).  Or any of the other accepted objects
        (a structured dtype is converted as :func:`descr_from_dtype` does).
    nestedlvl : int
        Nesting level of the parent (-1 for a top-level description).
    validate : bool
        Check the column names (see :func:`check_column_name`).
    ptparams : mapping or options object, optional
        Settings; only ``ALLOW_PADDING`` is used.

    Attributes
    ----------
    _v_name, _v_pathname : str
        Name (``'/'`` at the top) and path (``''`` at the top, ``'a/b'`` below).
    _v_names : list of str
        Names of the child columns, in order.
    _v_colobjects : dict
        Child ``Col`` or ``Description`` objects by name.
    _v_dtype : numpy.dtype
        Record dtype (native byte order).
    _v_dtypes, _v_types, _v_dflts : dict
        NumPy dtype, PyTables type and default of each non-nested child.
    _v_nested_names, _v_nested_formats, _v_nested_descr : list
        Nested lists of names, formats and (name, format) pairs.
    _v_pathnames : list of str
        Paths of every column below (preorder).
    _v_is_nested : bool
        Whether some child is nested.
    _v_itemsize : int
        Size of a record.
    _v_offsets : list of int
        Offsets of the children in a record.
    _v_nestedlvl : int
        Nesting level (0 at the top).

    Examples
    --------
    >>> from hyperslab.nodes.atoms.cols import Float64Col, Int32Col
    >>> d = Description({'b': Float64Col(), 'a': Int32Col(), 'n': {'x': Int32Col(pos=1)}})
    >>> d._v_names, d.n.x._v_pathname
    (['a', 'b', 'n'], 'n/x')
    >>> d._v_dtype
    dtype([('a', '<i4'), ('b', '<f8'), ('n', [('x', '<i4')])])
    """

    _v_name: str
    _v_pathname: str
    _v_pathnames: list[str]
    _v_names: list[str]
    _v_colobjects: dict[str, Col | Description]
    _v_dtype: np.dtype[Any]
    _v_dtypes: dict[str, np.dtype[Any]]
    _v_types: dict[str, str]
    _v_dflts: dict[str, Any]
    _v_nested_names: list[Any]
    _v_nested_formats: list[Any]
    _v_nested_descr: list[Any]
    _v_is_nested: bool
    _v_itemsize: int
    _v_offsets: list[int]
    _v_nestedlvl: int
    _v_pos: int | None
    _v_offset: int | None
    _v_parent: Description

    def __init__(
        self,
        classdict: Any,
        nestedlvl: int = -1,
        validate: bool = True,
        ptparams: Any = None,
    ) -> None:
        columns = _columns_of(classdict)
        if not columns:
            raise ValueError("cannot create an empty data type")
        attrs = self.__dict__
        attrs.update(
            _v_name="/", _v_names=[], _v_dtypes={}, _v_types={}, _v_dflts={},
            _v_colobjects={}, _v_is_nested=False, _v_nestedlvl=nestedlvl + 1,
        )
        children = self._convert_children(columns, validate, ptparams)
        keys = _sorted_names(children)
        # PyTables keeps offsets (padding) only for flat descriptions all of whose columns
        # have a position and an offset (those made from a dtype or read from a file).
        positioned = all(getattr(obj, "_v_pos", None) is not None for obj in children.values())
        nested = self._adopt_children(children, keys, validate)
        if self._v_nestedlvl == 0:
            self._set_nested_names_descr()
            self._set_path_names("")
            if "_v_byteorder" in attrs:
                raise ValueError(
                    "Using a ``_v_byteorder`` in the description is obsolete. "
                    "Use the byteorder parameter in the constructor instead."
                )
        padded = _allow_padding(ptparams) and positioned and not nested
        dtype = self._make_dtype(children, keys, padded)
        attrs["_v_dtype"] = dtype
        attrs["_v_itemsize"] = dtype.itemsize
        attrs["_v_offsets"] = [_field(dtype, name)[1] for name in self._v_names]

    # -- construction steps

    def _convert_children(
        self, columns: dict[Any, Any], validate: bool, ptparams: Any
    ) -> dict[Any, Any]:
        """Set the ``_v_`` specials; return the columns as copies and Descriptions."""
        children: dict[Any, Any] = {}
        for name, value in columns.items():
            if isinstance(name, str) and name.startswith("_v_"):
                if name in self.__dict__:
                    warnings.warn(
                        f"Can't set attr {name!r} in description class {self!r}",
                        stacklevel=3,
                    )
                else:
                    self.__dict__[name] = value
                continue
            children[name] = self._convert_child(value, validate, ptparams)
        return children

    def _convert_child(self, value: Any, validate: bool, ptparams: Any) -> Any:
        lvl = self._v_nestedlvl
        if _is_description_class(value):
            return Description(dict(value().columns), lvl, validate, ptparams)
        if isinstance(value, IsDescription):
            return Description(dict(value.columns), lvl, validate, ptparams)
        if isinstance(value, dict):
            return Description(dict(value), lvl, validate, ptparams)
        if isinstance(value, Description):
            # Copied at its own level, as PyTables keeps it (that shows in reprs).
            columns = _columns_of_description(value)
            return Description(columns, value._v_nestedlvl - 1, validate, ptparams)
        if isinstance(value, Col):
            return copy.copy(value)  # the caller's column keeps its position
        return value  # rejected, after its name is checked, by _adopt_children

    def _adopt_children(self, children: dict[Any, Any], keys: list[Any], validate: bool) -> bool:
        """Place the children in order; return whether some child is nested."""
        nested = False
        formats: list[Any] = []
        for pos, name in enumerate(keys):
            if validate:
                check_column_name(name)
            obj = children[name]
            if not isinstance(obj, Col | Description):
                raise TypeError(
                    f"Passing an incorrect value to a table column. Expected a Col (or "
                    f'subclass) instance and got: "{obj}". Please make use of the Col(), or '
                    "descendant, constructor to properly initialize columns."
                )
            obj._v_pos = pos
            obj._v_parent = self
            obj.__dict__["_v_name"] = name
            self.__dict__[name] = obj  # natural naming
            self._v_colobjects[name] = obj
            self._v_names.append(name)
            if isinstance(obj, Col):
                self._v_dtypes[name] = obj.dtype
                self._v_types[name] = obj.type
                self._v_dflts[name] = obj.dflt
                formats.append(obj.recarrtype)
            else:
                formats.append(obj._v_nested_formats)
                nested = True
        self.__dict__["_v_nested_formats"] = formats
        return nested

    def _make_dtype(self, children: dict[Any, Any], keys: list[Any], padded: bool
                    ) -> np.dtype[Any]:
        """The record dtype: packed, or with the children's offsets when `padded` allows."""
        fields: list[tuple[Any, ...]] = []
        for name in keys:
            obj = children[name]
            if isinstance(obj, Col):
                fields.append((name, obj.dtype.base.str[1:], obj.dtype.shape))
            else:
                fields.append((name, obj._v_dtype))
        offsets = [getattr(children[name], "_v_offset", None) for name in keys]
        if padded and len(keys) > 1 and None not in offsets:
            spec: Any = {
                "names": list(keys),
                "formats": [np.dtype((fmt, shape)) for _, fmt, shape in fields],
                "offsets": sorted(offsets),
            }
            itemsize = self.__dict__.get("_v_itemsize")
            if itemsize is not None:
                spec["itemsize"] = itemsize
            return np.dtype(spec)
        return np.dtype(fields)

    def _set_nested_names_descr(self) -> None:
        """Compute the nested names and (name, format) lists, recursively."""
        names = self._v_names
        self.__dict__["_v_nested_names"] = list(names)
        self.__dict__["_v_nested_descr"] = list(zip(names, self._v_nested_formats, strict=True))
        for i, name in enumerate(names):
            child = self._v_colobjects[name]
            if isinstance(child, Description):
                child._set_nested_names_descr()
                self._v_nested_names[i] = (name, child._v_nested_names)
                self._v_nested_descr[i] = (name, child._v_nested_descr)
                self.__dict__["_v_is_nested"] = True

    def _set_path_names(self, pathname: str) -> list[str]:
        """Set the path of this description and of everything below; return the paths."""
        self.__dict__["_v_pathname"] = pathname
        paths: list[str] = []
        for name in self._v_names:
            child = self._v_colobjects[name]
            child_path = f"{pathname}/{name}" if pathname else name
            paths.append(name)
            if isinstance(child, Description):
                paths.extend(f"{name}/{path}" for path in child._set_path_names(child_path))
            else:
                child.__dict__["_v_pathname"] = child_path
        self.__dict__["_v_pathnames"] = paths
        return paths

    # -- API

    def _f_walk(
        self, type: Literal["All", "Col", "Description"] = "All"
    ) -> Iterator[Col | Description]:
        """Iterate over the columns below, as PyTables does.

        Each description is yielded (with ``'All'`` or ``'Description'``), followed by its
        non-nested columns (with ``'All'`` or ``'Col'``); its nested descriptions are
        queued and visited afterwards, in order.  This is the order of the
        ``FIELD_<j>_FILL`` attributes of a table.
        """
        if type not in ("All", "Col", "Description"):
            raise ValueError("type can only take the parameters 'All', 'Col' or 'Description'.")
        queue: list[Description] = [self]
        while queue:
            descr = queue.pop(0)
            if type != "Col":
                yield descr
            for name in descr._v_names:
                child = descr._v_colobjects[name]
                if isinstance(child, Description):
                    queue.append(child)
                elif type != "Description":
                    yield child

    def __getattr__(self, name: str) -> Any:
        # Only called for missing attributes: children live in the instance dict.
        if is_member(self, name):  # a member's own code failed: its error, not a column's
            return member_failed(self, name)
        raise AttributeError(f"description {self.__dict__.get('_v_pathname', '')!r} "
                             f"has no column or attribute {name!r}")

    def __repr__(self) -> str:
        indent = "  " * self._v_nestedlvl
        rep = [f'{indent}"{name}": {self._v_colobjects[name]!r}' for name in self._v_names]
        return "{\n  " + ",\n  ".join(rep) + "}"

    def __str__(self) -> str:
        return f"Description({self.__dict__.get('_v_nested_descr')})"


def _field(dtype: np.dtype[Any], name: str) -> tuple[np.dtype[Any], int]:
    """The dtype and offset of field `name` of a structured dtype."""
    fields = dtype.fields
    assert fields is not None
    return fields[name][0], fields[name][1]


def _sorted_names(children: dict[Any, Any]) -> list[Any]:
    """PyTables' column order: positioned ones by (position, name), then the rest by name."""
    with_pos: list[tuple[Any, Any]] = []
    without_pos: list[Any] = []
    for name, obj in children.items():
        pos = getattr(obj, "_v_pos", None)
        if pos is None:
            without_pos.append(name)
        else:
            with_pos.append((pos, name))
    with_pos.sort()
    without_pos.sort()
    return [name for _, name in with_pos] + without_pos


# ----------------------------------------------------------------------------- dtypes


def _columns_from_dtype(dtype: np.dtype[Any]) -> tuple[dict[str, Any], str]:
    """Columns (Cols and Descriptions) and byte order of a structured dtype."""
    if dtype.names is None:
        raise TypeError(f"not a structured dtype: {dtype!r}")
    columns: dict[str, Any] = {}
    order = "|"
    for name in dtype.names:
        field, offset = _field(dtype, name)
        kind = field.base.kind
        field_order = field.base.byteorder
        if field_order in "<>=":
            if order not in ("|", field_order):
                raise NotImplementedError(
                    "structured arrays with mixed byteorders are not supported yet, sorry"
                )
            order = field_order
        if kind in "biufSUc":
            columns[name] = Col.from_dtype(field, pos=offset, _offset=offset)
        elif kind == "V" and field.base.names is not None and field.shape in ((), (1,)):
            if field.shape:
                warnings.warn("nested descriptions will be converted to scalar", stacklevel=4)
            nested, _ = descr_from_dtype(field.base)
            nested.__dict__["_v_pos"] = offset
            nested.__dict__["_v_offset"] = offset
            columns[name] = nested
        else:
            raise NotImplementedError(
                f"structured arrays with columns with type description ``{field}`` "
                "are not supported yet, sorry"
            )
    return columns, order


def descr_from_dtype(dtype: DTypeLike, ptparams: Any = None) -> tuple[Description, str]:
    """Return the description and the byte order of a (nested) structured dtype.

    Fields are positioned by offset, and a flat dtype with padding keeps its offsets in
    ``_v_dtype``.  The byte order is ``'<'``, ``'>'``, ``'='`` or ``'|'`` (irrelevant).

    Raises
    ------
    NotImplementedError
        For mixed byte orders and fields of unsupported types (objects, datetimes,
        arrays of structures).

    Examples
    --------
    >>> descr, byteorder = descr_from_dtype(np.dtype([('x', '>f8'), ('n', '>i2', (2,))]))
    >>> descr.n, byteorder
    (Int16Col(shape=(2,), dflt=0, pos=1), '>')
    """
    columns, order = _columns_from_dtype(np.dtype(dtype))
    return Description(columns, ptparams=ptparams), order


def dtype_from_descr(descr: Any, byteorder: str | None = None, ptparams: Any = None
                     ) -> np.dtype[Any]:
    """Return the (nested) NumPy dtype of a description, in byte order `byteorder`.

    `descr` is a Description, an IsDescription subclass or instance, or a dict; `byteorder`
    anything ``numpy.dtype.newbyteorder`` takes (``'little'``, ``'>'``...), None or
    ``'|'`` for native.

    Examples
    --------
    >>> from hyperslab.nodes.atoms.cols import Int16Col
    >>> dtype_from_descr({'a': Int16Col()}, 'big')
    dtype([('a', '>i2')])
    """
    if isinstance(descr, dict) or _is_description_class(descr) or isinstance(
        descr, IsDescription
    ):
        descr = Description(descr, ptparams=ptparams)
    elif not isinstance(descr, Description):
        raise ValueError(f"invalid description: {descr!r}")
    dtype = descr._v_dtype
    if byteorder and byteorder != "|":
        order: Any = byteorder
        dtype = dtype.newbyteorder(order)
    return dtype


# ----------------------------------------------------------------------------- tables


def flat_columns(descr: Description) -> list[Col]:
    """The non-nested columns of `descr` in ``_f_walk('Col')`` order (FIELD_<j>_FILL order)."""
    return [col for col in descr._f_walk("Col") if isinstance(col, Col)]


def field_of(records: AnyArray, path: str) -> AnyArray:
    """The column ``path`` (``'a'`` or ``'nested/x'``) of a structured array, as a view.

    Raises
    ------
    KeyError
        If ``path`` names no field, with the path in the message.
    """
    try:
        if "/" not in path:
            return records[path]
        column = records
        for part in path.split("/"):
            column = column[part]
        return column
    except (KeyError, ValueError, IndexError):
        raise KeyError(f"no field named {path!r}; the fields are {records.dtype.names}") from None


def default_row(descr: Description, dtype: DTypeLike | None = None) -> AnyArray:
    """A 0-d record with every column at its default.

    Parameters
    ----------
    descr : Description
        The description.
    dtype : dtype, optional
        The record dtype (default: ``descr._v_dtype``); it must have the description's
        fields (offsets and byte order may differ).

    Examples
    --------
    >>> from hyperslab.nodes.atoms.cols import Float64Col, Int32Col
    >>> default_row(Description({'a': Int32Col(dflt=3), 'n': {'x': Float64Col(dflt=2)}}))
    array((3, (2.,)), dtype=[('a', '<i4'), ('n', [('x', '<f8')])])
    """
    row = np.zeros((), dtype=descr._v_dtype if dtype is None else dtype)
    for col in flat_columns(descr):
        field_of(row, col._v_pathname)[...] = col.dflt
    return row


def warn_if_too_many_columns(descr: Description, where: str, max_columns: int = MAX_COLUMNS
                             ) -> None:
    """Warn (PerformanceWarning) as PyTables when a table has over `max_columns` columns."""
    if len(descr._v_names) > max_columns:
        warnings.warn(
            f"table ``{where}`` is exceeding the recommended maximum number of columns "
            f"({max_columns}); be ready to see PyTables asking for *lots* of memory and "
            "possibly slow I/O",
            PerformanceWarning,
            stacklevel=3,
        )


__all__ = [
    "MAX_COLUMNS",
    "Description",
    "IsDescription",
    "MetaIsDescription",
    "default_row",
    "descr_from_dtype",
    "dtype_from_descr",
    "field_of",
    "flat_columns",
    "warn_if_too_many_columns",
]
