"""The arguments of atom constructors: PyTables types, shapes and defaults, checked.

Shared by the atom classes (:mod:`hyperslab.nodes.atoms.atom`) and the column classes
(:mod:`hyperslab.nodes.atoms.cols`); it knows no atom class.
"""

from __future__ import annotations

import inspect
import operator
import re
import sys
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from hyperslab._typing import Shape
from hyperslab.chunked.selection import broadcast_value

ShapeLike: TypeAlias = int | np.integer[Any] | Sequence[int]
"""An atom shape: an int ``N`` (same as ``(N,)``) or a sequence of ints."""

SctypeLike: TypeAlias = str | type[np.generic]
"""A NumPy scalar type, or its name."""

_MAX_RANK = 32  # HDF5's limit on the rank of a dataspace or array type
_TYPE_RE = re.compile(r"^([a-z]+)([0-9]*)$")


def split_type(type_: str) -> tuple[str, int | None]:
    """Split a PyTables type into its kind and item size.

    Parameters
    ----------
    type_ : str
        A PyTables type such as ``'int32'`` or ``'string'``.

    Returns
    -------
    tuple
        ``(kind, itemsize)``; the item size is None when the type has no precision.

    Examples
    --------
    >>> split_type('int32')
    ('int', 4)
    >>> split_type('string')
    ('string', None)
    """
    match = _TYPE_RE.match(type_)
    if match is None:
        raise ValueError(f"malformed type: {type_!r}")
    kind, precision = match.groups()
    if not precision:
        return kind, None
    itemsize, remainder = divmod(int(precision), 8)
    if remainder:
        raise ValueError(f"precision must be a multiple of 8: {int(precision)}")
    return kind, itemsize


def _invalid_itemsize_error(kind: str, itemsize: object, itemsizes: Any) -> ValueError:
    return ValueError(
        f"invalid item size for kind ``{kind}``: {itemsize!r}; "
        f"it must be one of ``{sorted(itemsizes)!r}``"
    )


def _normalize_dim(dim: Any, shape: Any) -> int:
    try:
        value = operator.index(dim)
    except TypeError:
        if not (isinstance(dim, float | np.floating) and float(dim).is_integer()):
            raise TypeError(f"shape dimensions must be integers: {shape!r}") from None
        value = int(dim)
    if value < 0:
        raise ValueError(f"shape dimensions must not be negative: {shape!r}")
    return value


def _normalize_shape(shape: Any) -> Shape:
    """Return `shape` as a tuple of Python ints (an int ``N`` means ``(N,)``)."""
    if isinstance(shape, int | np.integer):
        if shape < 1:
            raise ValueError(f"shape value must be greater than 0: {shape}")
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be an integer or sequence: {shape!r}") from None
    if len(dims) > _MAX_RANK:
        raise ValueError(f"shapes with rank > {_MAX_RANK} are not supported: {shape!r}")
    return tuple(_normalize_dim(dim, shape) for dim in dims)


def _normalize_default(value: Any, dtype: np.dtype[Any]) -> Any:
    """Return `value` as a NumPy default of `dtype` (a scalar when it is 0-d)."""
    if value is None:
        value = 0
    default = np.array(value, dtype=dtype.base)
    if default.ndim == 0:
        return default[()]
    try:
        broadcast_value(default, dtype.shape)
    except ValueError:
        raise ValueError(
            f"default value {value!r} (shape {default.shape}) does not broadcast "
            f"to the atom shape {dtype.shape}"
        ) from None
    return default  # kept as given, as PyTables keeps it: ((1, 1),) for shape (2,)


_INIT_ARG_NAMES: dict[type, tuple[str, ...]] = {}


def init_arg_names(cls: type) -> tuple[str, ...]:
    """The names of the positional-or-keyword arguments of ``cls.__init__`` but ``self``
    (cached per class: ``inspect.signature`` costs ~50 us a call, and opening a table
    describes every column with it)."""
    names = _INIT_ARG_NAMES.get(cls)
    if names is None:
        params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
        names = _INIT_ARG_NAMES[cls] = tuple(
            name for name, param in params.items()
            if name != "self" and param.kind is param.POSITIONAL_OR_KEYWORD)
    return names


BYTEORDERS: dict[str, str] = {
    ">": "big", "<": "little", "=": sys.byteorder, "|": "irrelevant"}
"""NumPy byte order character -> PyTables' byte order name (``tables.utils.byteorders``)."""


def correct_byteorder(ptype: str, byteorder: str) -> str:
    """``'irrelevant'`` for PyTables types of one byte or none (strings, bools, 8-bit
    integers, objects), ``byteorder`` for the others (PyTables' ``utils.correct_byteorder``).
    """
    if ptype in ("string", "bool", "int8", "uint8", "object"):
        return "irrelevant"
    return byteorder


__all__ = ["BYTEORDERS", "SctypeLike", "ShapeLike", "correct_byteorder", "init_arg_names",
           "split_type"]
