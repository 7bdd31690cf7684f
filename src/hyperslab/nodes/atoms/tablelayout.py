"""Tables' descriptions and the storage layer's compound types, both ways.

:func:`description_from_layout` gives the description of a table in a file from the
:class:`~hyperslab.storage.compound.CompoundLayout` of its compound type, and
:func:`storage_spec` what to create for a description (the layout dtype, the time fields
and the enums).  :func:`names_by_offset` is the column order of a description made from a
file's layout.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from hyperslab._typing import Shape
from hyperslab.errors import DataTypeWarning
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.atoms.cols import BoolCol, Col, EnumCol, Time32Col, Time64Col
from hyperslab.nodes.atoms.description import Description, _field
from hyperslab.nodes.atoms.enum import Enum

if TYPE_CHECKING:
    from hyperslab.storage.compound import CompoundLayout


def storage_spec(
    descr: Description, byteorder: str | None = None
) -> tuple[np.dtype[Any], frozenset[str], dict[str, dict[str, int]]]:
    """What to create for a table of `descr`: (layout dtype, time field paths, enums).

    The layout dtype is packed, in `byteorder` (``'little'``, ``'big'``, ``'<'``, ``'>'``;
    None or ``'='`` for native) except time fields, always native as PyTables writes them;
    bools stay ``?`` (stored as 8-bit bitfields), times are
    int32 (time32) or float64 (time64), enums their base integer type.  Enums map each
    enum column's path to ``{member name: value}``: the default member first, then the
    others in the Enum's order, as PyTables writes them (it reads the first member of an
    HDF5 enum as the column's default).

    Examples
    --------
    >>> from hyperslab.nodes.atoms.cols import EnumCol, Time32Col
    >>> d = Description({'t': Time32Col(), 'e': EnumCol(['a', 'b'], 'b', base='uint16')})
    >>> dtype, times, enums = storage_spec(d, 'big')
    >>> dtype['e'], dtype['t'].isnative, times, enums
    (dtype('>u2'), True, frozenset({'t'}), {'e': {'b': 1, 'a': 0}})
    """
    order = _byteorder_char(byteorder)
    times: set[str] = set()
    enums: dict[str, dict[str, int]] = {}

    def layout(node: Description) -> np.dtype[Any]:
        fields: list[tuple[str, Any]] = []
        for name in node._v_names:
            child = node._v_colobjects[name]
            if isinstance(child, Description):
                fields.append((name, layout(child)))
                continue
            field_order = order
            if child.kind == "time":
                times.add(child._v_pathname)
                field_order = "="  # PyTables never swaps times
            elif isinstance(child, EnumCol):
                enums[child._v_pathname] = _enum_members(child)
            base = child.dtype.base.newbyteorder(field_order)
            fields.append((name, np.dtype((base, child.shape))))
        return np.dtype(fields)

    return layout(descr), frozenset(times), enums


def _enum_members(col: EnumCol) -> dict[str, int]:
    """The members of an enum column, its default first (PyTables' HDF5 order)."""
    default = col._defname
    members = {default: int(col.enum[default])}
    members.update((name, int(value)) for name, value in col.enum if name != default)
    return members


def _byteorder_char(byteorder: str | None) -> Literal["<", ">", "="]:
    chars: dict[str | None, Literal["<", ">", "="]] = {
        None: "=", "=": "=", "|": "=", "little": "<", "<": "<", "big": ">", ">": ">",
    }
    try:
        return chars[byteorder]
    except KeyError:
        raise ValueError(
            f"byteorder must be 'little', 'big' or None, not {byteorder!r}"
        ) from None


def _leaf_paths_in_walk_order(dtype: np.dtype[Any]) -> list[str]:
    """Leaf field paths of a structured dtype in ``_f_walk('Col')`` order (by offset)."""
    paths: list[str] = []
    queue: list[tuple[str, np.dtype[Any]]] = [("", dtype)]
    while queue:
        prefix, node = queue.pop(0)
        for name in names_by_offset(node):
            field = _field(node, name)[0]
            path = f"{prefix}{name}"
            if field.names is not None:
                queue.append((path + "/", field))
            else:
                paths.append(path)
    return paths


def names_by_offset(dtype: np.dtype[Any]) -> list[str]:
    """The field names of a structured dtype in offset order (the column order of a
    description made from a file's layout)."""
    names = list(dtype.names or ())
    return sorted(names, key=lambda name: _field(dtype, name)[1])


def description_from_layout(
    layout: CompoundLayout, dflts: Sequence[Any] | None = None
) -> Description:
    """The description of a table from the layout of its compound type.

    Parameters
    ----------
    layout : CompoundLayout
        The file's layout (see :mod:`hyperslab.storage.compound`).
    dflts : sequence, optional
        Column defaults in ``_f_walk('Col')`` order (the ``FIELD_<j>_FILL`` attributes);
        None items (and no sequence at all) keep each type's default.

    Returns
    -------
    Description
        Columns positioned by offset in the file.  TIME fields give Time32Col/Time64Col,
        bitfields BoolCol, enums EnumCol (default: the member whose value is the fill
        value, else the first member), shaped fields shaped columns.  Names are not
        validated (PyTables does not validate its own files either).

    Raises
    ------
    TypeError
        For a field no column can hold (an array of structures...), naming it.
    ValueError
        If `dflts` does not have one item per column.
    """
    dtype = layout.dtype
    paths = _leaf_paths_in_walk_order(dtype)
    if dflts is None:
        defaults: dict[str, Any] = {}
    else:
        if len(dflts) != len(paths):
            raise ValueError(
                f"{len(dflts)} column defaults given for {len(paths)} columns: {paths}"
            )
        defaults = dict(zip(paths, dflts, strict=True))
    columns = _layout_columns(layout, dtype, "", defaults)
    return Description(columns, validate=False)


def _layout_columns(
    layout: CompoundLayout, dtype: np.dtype[Any], prefix: str, defaults: dict[str, Any]
) -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for pos, name in enumerate(names_by_offset(dtype)):
        field, offset = _field(dtype, name)
        path = f"{prefix}{name}"
        if field.names is not None:
            nested = _layout_columns(layout, field, path + "/", defaults)
            nested["_v_pos"] = pos
            nested["_v_offset"] = offset
            columns[name] = nested
        else:
            col = _layout_col(layout, path, field, defaults.get(path))
            col._v_pos = pos
            col._v_offset = offset
            columns[name] = col
    return columns


def _layout_col(layout: CompoundLayout, path: str, field: np.dtype[Any], dflt: Any) -> Col:
    """The column of leaf `path`, at default `dflt` when it fits (else a warning)."""
    try:
        return _make_layout_col(layout, path, field, _plain_default(dflt, field))
    except (TypeError, ValueError, OverflowError):
        if dflt is None:
            raise
    warnings.warn(
        f"could not use the default value {dflt!r} of column {path!r}; "
        "using the type's default instead",
        DataTypeWarning,
        stacklevel=4,
    )
    return _make_layout_col(layout, path, field, None)


def _plain_default(dflt: Any, field: np.dtype[Any]) -> Any:
    """A fill value as a column default: complex ones may come as (r, i) records."""
    if dflt is None or field.base.kind != "c":
        return dflt
    value = np.asarray(dflt)
    if value.dtype.names is not None and set(value.dtype.names) == {"r", "i"}:
        return value["r"] + 1j * value["i"]
    return dflt


def _make_layout_col(layout: CompoundLayout, path: str, field: np.dtype[Any], dflt: Any) -> Col:
    base, shape = field.base, field.shape
    if base.names is not None:
        raise TypeError(f"column {path!r}: arrays of structures are not supported: {field}")
    if path in layout.enums:
        return _layout_enum_col(Enum(dict(layout.enums[path])), base, shape, dflt)
    if path in layout.time_fields:
        time_class = Time32Col if base.itemsize == 4 else Time64Col
        return time_class(shape=shape, dflt=dflt)
    if path in layout.bitfield_fields:
        return BoolCol(shape=shape, dflt=dflt)
    if base.kind not in "biufcS":
        raise TypeError(f"column {path!r}: unsupported field type {field}")
    if base.kind not in "biuf":
        return Col.from_dtype(field, dflt)
    # Numbers: their column class straight away (a table's description is made when it
    # is first used after opening; the general path builds an atom first).
    native = base.newbyteorder("=")
    col_class = _NUMBER_COLS.get(native)
    if col_class is None:
        col_class = _NUMBER_COLS[native] = type(Col.from_dtype(native))
    return col_class(shape=shape, dflt=dflt)


_NUMBER_COLS: dict[np.dtype[Any], type[Col]] = {}
"""The column class of each number dtype met (native order): ``Int32Col``..."""


def _layout_enum_col(enum: Enum, base: np.dtype[Any], shape: Shape, fill: Any) -> EnumCol:
    """The enum column; its default is the member whose value is `fill`, else (PyTables'
    rule) the first member, with `fill` as its value."""
    values = np.unique(np.asarray(fill)) if fill is not None else np.array([])
    name = enum(values[0].item(), None) if values.size == 1 else None
    storage = Atom.from_dtype(base.newbyteorder("="))
    col = EnumCol(enum, next(iter(enum))[0] if name is None else name, storage, shape=shape)
    if fill is not None and name is None:
        value = np.array(fill, dtype=col.dtype.base)
        col.dflt = value[()] if value.ndim == 0 else np.broadcast_to(value, shape).copy()
    return col


__all__ = ["description_from_layout", "names_by_offset", "storage_spec"]
