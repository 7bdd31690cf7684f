"""Atoms: the type of the cells of a dataset, with PyTables' names and semantics.

An atom has a PyTables *kind* (``'int'``, ``'float'``, ``'string'``, ...), a *type*
(``'int32'``, ``'string'``, ``'enum'``, ...), an item size, a shape (atoms may be
multidimensional) and a default value kept as a NumPy object.  ``dtype`` is the NumPy
dtype of one cell, ``(base dtype, shape)``.

Differences from PyTables, all deliberate:

* shapes hold Python ints (PyTables keeps ``np.int64``); tuples compare equal either way;
* reprs print NumPy values the way PyTables documents them (``dflt=0.0``, not
  ``dflt=np.float64(0.0)``), whatever NumPy's print mode;
* atoms and enums are hashable (consistently with ``==``), and ``==`` returns a ``bool``;
* ``Atom.base`` exists on every atom (the scalar atom of the same type);
* a default value that cannot broadcast to the atom's shape, and non-integral shape
  dimensions, are rejected up front.
"""

from __future__ import annotations

import inspect
import operator
import pickle
import re
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, NoReturn, TypeAlias

import numpy as np

from hyperslab._typing import AnyArray, DTypeLike, Shape
from hyperslab.errors import FlavorWarning

ShapeLike: TypeAlias = int | np.integer[Any] | Sequence[int]
"""An atom shape: an int ``N`` (same as ``(N,)``) or a sequence of ints."""

SctypeLike: TypeAlias = str | type[np.generic]
"""A NumPy scalar type, or its name."""

_MAX_RANK = 32  # HDF5's limit on the rank of a dataspace or array type
_TYPE_RE = re.compile(r"^([a-z]+)([0-9]*)$")


# NumPy 2 prints scalars as ``np.float64(0.0)``; PyTables documents ``0.0`` (NumPy 1 style).
_PLAIN_SCALARS: dict[str, Any] = (
    {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}
)


def _np_repr(obj: Any) -> str:
    """Return ``repr(obj)`` with NumPy scalars printed as PyTables documents them."""
    with np.printoptions(**_PLAIN_SCALARS):
        return repr(obj)


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
        np.broadcast_to(default, dtype.shape)
    except ValueError:
        raise ValueError(
            f"default value {value!r} (shape {default.shape}) does not broadcast "
            f"to the atom shape {dtype.shape}"
        ) from None
    return default


# ----------------------------------------------------------------------------- Atom


class Atom:
    """The type of the atomic cells of a dataset (abstract; use a subclass).

    Parameters
    ----------
    nptype : str or numpy.dtype
        NumPy type of one item.
    shape : int or tuple of int
        Shape of the atom; an int ``N`` means ``(N,)``.
    dflt : object
        Default value, broadcast to the atom's shape; kept as a NumPy object.

    Attributes
    ----------
    kind : str
        PyTables kind (``'int'``, ``'float'``, ``'string'``, ...).
    type : str
        PyTables type (``'int32'``, ``'string'``, ...).
    itemsize : int
        Size in bytes of one item.
    shape : tuple of int
        Shape of the atom.
    dflt : object
        Default value (a NumPy scalar or array).
    dtype : numpy.dtype
        NumPy dtype of one cell, ``(base dtype, shape)``.
    """

    kind: ClassVar[str]
    type: str
    itemsize: int
    shape: Shape
    dtype: np.dtype[Any]
    dflt: Any
    _fixed_itemsize: ClassVar[bool] = True

    def __init__(self, nptype: DTypeLike, shape: ShapeLike, dflt: Any) -> None:
        if not hasattr(self, "type"):
            raise NotImplementedError(
                f"``{type(self).__name__}`` is an abstract class; "
                "please use one of its subclasses"
            )
        self.shape = _normalize_shape(shape)
        self.dtype = np.dtype((nptype, self.shape))
        self.dflt = _normalize_default(dflt, self.dtype)

    # -- factories

    @classmethod
    def prefix(cls) -> str:
        """Return the class name without its ``Atom`` suffix (``'Int32'``)."""
        name = cls.__name__
        return name[: name.rfind("Atom")]

    @classmethod
    def from_sctype(cls, sctype: SctypeLike, shape: ShapeLike = (), dflt: Any = None) -> Atom:
        """Create an atom from a NumPy scalar type (or its name).

        Examples
        --------
        >>> Atom.from_sctype(np.int16, shape=(2, 2))
        Int16Atom(shape=(2, 2), dflt=0)
        """
        if isinstance(sctype, str):
            if "," in sctype:
                raise ValueError(f"unknown NumPy scalar type: {sctype!r}")
            try:
                dtype = np.dtype(sctype)
            except TypeError:
                raise ValueError(f"unknown NumPy scalar type: {sctype!r}") from None
            if issubclass(dtype.type, np.flexible) and dtype.itemsize > 0:
                raise ValueError(f"unknown NumPy scalar type: {sctype!r}")
            scalar_type: Any = dtype.type
        elif isinstance(sctype, type) and issubclass(sctype, np.generic):
            scalar_type = sctype
        else:
            raise TypeError(f"not a NumPy scalar type or its name: {sctype!r}")
        return cls.from_dtype(np.dtype((scalar_type, _normalize_shape(shape))), dflt)

    @classmethod
    def from_dtype(cls, dtype: DTypeLike, dflt: Any = None) -> Atom:
        """Create an atom from a NumPy dtype; a subarray dtype gives a shaped atom.

        The byte order is ignored (``'>f8'`` gives ``Float64Atom``).  Structured dtypes
        raise ValueError; ``'U'`` dtypes give a StringAtom with a FlavorWarning.

        Examples
        --------
        >>> Atom.from_dtype(np.dtype(('int16', (2, 2))))
        Int16Atom(shape=(2, 2), dflt=0)
        """
        dtype = np.dtype(dtype)
        base, shape = dtype.base, dtype.shape
        if base.names is not None:
            raise ValueError(f"compound data types are not supported: {dtype!r}")
        if base.kind == "S":
            return cls.from_kind("string", base.itemsize, shape, dflt)
        if base.kind == "U":
            warnings.warn(
                "support for unicode type is very limited, and only works for strings "
                "that can be cast as ascii",
                FlavorWarning,
                stacklevel=2,
            )
            return cls.from_kind("string", base.itemsize // 4, shape, dflt)
        return cls.from_type(base.name, shape, dflt)

    @classmethod
    def from_type(cls, type_: str, shape: ShapeLike = (), dflt: Any = None) -> Atom:
        """Create an atom from a PyTables type (``'int16'``, ``'bool'``, ...).

        Examples
        --------
        >>> Atom.from_type('bool')
        BoolAtom(shape=(), dflt=False)
        """
        if type_ not in all_types:
            raise ValueError(f"unknown type: {type_!r}")
        kind, itemsize = split_type(type_)
        return cls.from_kind(kind, itemsize, shape, dflt)

    @classmethod
    def from_kind(
        cls, kind: str, itemsize: int | None = None, shape: ShapeLike = (), dflt: Any = None
    ) -> Atom:
        """Create an atom from a PyTables kind and an optional item size.

        Examples
        --------
        >>> Atom.from_kind('int', itemsize=2, shape=(2, 2))
        Int16Atom(shape=(2, 2), dflt=0)
        >>> Atom.from_kind('string', 10)
        StringAtom(itemsize=10, shape=(), dflt=b'')
        """
        if kind not in atom_map:
            raise ValueError(f"unknown kind: {kind!r}")
        if kind in ("enum", "reference"):
            raise ValueError(
                f"the ``{kind}`` kind is not supported; please use the appropriate constructor"
            )
        if itemsize is None:
            if kind not in deftype_from_kind:
                raise ValueError(f"no default item size for kind ``{kind}``")
            kind, itemsize = split_type(deftype_from_kind[kind])
        kwargs: dict[str, Any] = {"shape": shape}
        if dflt is not None:
            kwargs["dflt"] = dflt
        entry = atom_map[kind]
        if isinstance(entry, dict):
            if itemsize not in entry:
                raise _invalid_itemsize_error(kind, itemsize, entry)
            return entry[itemsize](**kwargs)
        flexible: Any = entry
        atom: Atom = flexible(itemsize=itemsize, **kwargs)
        return atom

    # -- derived attributes

    @property
    def size(self) -> int:
        """Total size in bytes of one cell."""
        return self.dtype.itemsize

    @property
    def recarrtype(self) -> str:
        """Type string for ``numpy.rec.array()``, e.g. ``'(2, 3)i4'``."""
        return str(self.dtype.shape) + self.dtype.base.str[1:]

    @property
    def ndim(self) -> int:
        """Number of dimensions of the atom."""
        return len(self.shape)

    @property
    def base(self) -> Atom:
        """The scalar atom of the same type (this atom with ``shape=()``).

        Its default is this atom's when that is a scalar, else the type's default.
        """
        kwargs = self._get_init_args()
        kwargs["shape"] = ()
        if np.ndim(self.dflt) != 0:
            del kwargs["dflt"]
        return type(self)(**kwargs)

    # -- copies, comparison, representation

    def copy(self, **override: Any) -> Atom:
        """Return a copy of the atom, with some constructor arguments overridden.

        Examples
        --------
        >>> Int32Atom(shape=12).copy(shape=(2, 2))
        Int32Atom(shape=(2, 2), dflt=0)
        """
        kwargs = self._get_init_args()
        kwargs.update(override)
        return type(self)(**kwargs)

    def _get_init_args(self) -> dict[str, Any]:
        """Return the constructor arguments that recreate this atom."""
        params = inspect.signature(type(self).__init__).parameters
        return {
            name: getattr(self, name)
            for name, param in params.items()
            if name != "self" and param.kind is param.POSITIONAL_OR_KEYWORD
        }

    def _is_equal_to_atom(self, atom: Atom) -> bool:
        return (
            self.type == atom.type
            and self.shape == atom.shape
            and self.itemsize == atom.itemsize
            and bool(np.all(self.dflt == atom.dflt))
        )

    def __eq__(self, other: object) -> bool:
        # Double dispatch, as PyTables: the *other* object decides (enum atoms refuse).
        method = getattr(other, "_is_equal_to_atom", None)
        return False if method is None else bool(method(self))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.type, self.shape, self.itemsize))

    def __repr__(self) -> str:
        args = f"shape={self.shape!r}, dflt={_np_repr(self.dflt)}"
        if not self._fixed_itemsize:
            args = f"itemsize={self.itemsize}, {args}"
        return f"{type(self).__name__}({args})"


def _become_concrete(atom: Atom, itemsize: Any, shape: ShapeLike, dflt: Any) -> None:
    """Turn an instance of an abstract atom class into its concrete class."""
    sizes: Any = atom_map[atom.kind]
    try:
        concrete: Any = sizes[itemsize]
    except (KeyError, TypeError):
        raise _invalid_itemsize_error(atom.kind, itemsize, sizes) from None
    atom.__class__ = concrete
    concrete.__init__(atom, shape, dflt)


class StringAtom(Atom):
    """Fixed-length byte strings of ``itemsize`` bytes."""

    kind = "string"
    type = "string"
    _fixed_itemsize = False

    def __init__(self, itemsize: int, shape: ShapeLike = (), dflt: str | bytes = b"") -> None:
        if (
            isinstance(itemsize, bool)
            or not hasattr(itemsize, "__int__")
            or int(itemsize) != itemsize
            or int(itemsize) <= 0
        ):
            raise ValueError(
                f"invalid item size for kind ``string``: {itemsize!r}; "
                "it must be a positive integer"
            )
        Atom.__init__(self, f"S{int(itemsize)}", shape, dflt)
        self.itemsize = self.dtype.base.itemsize


class _FixedAtom(Atom):
    """Base of the atom classes of one fixed type: only `shape` and `dflt` vary."""

    _nptype: ClassVar[str | None] = None  # NumPy type when it differs from `type`

    def __init__(self, shape: ShapeLike = (), dflt: Any = None) -> None:
        Atom.__init__(self, self._nptype or self.type, shape, dflt)


class BoolAtom(_FixedAtom):
    """Booleans (stored by PyTables as an 8-bit HDF5 bitfield)."""

    kind = "bool"
    type = "bool"
    itemsize = 1


class IntAtom(Atom):
    """Signed integers; ``IntAtom(itemsize)`` returns the concrete ``Int<8*itemsize>Atom``."""

    kind = "int"
    signed = True

    def __init__(self, itemsize: int = 4, shape: ShapeLike = (), dflt: Any = 0) -> None:
        _become_concrete(self, itemsize, shape, dflt)


class UIntAtom(Atom):
    """Unsigned integers; ``UIntAtom(itemsize)`` returns the concrete class."""

    kind = "uint"
    signed = False

    def __init__(self, itemsize: int = 4, shape: ShapeLike = (), dflt: Any = 0) -> None:
        _become_concrete(self, itemsize, shape, dflt)


class FloatAtom(Atom):
    """Floating point numbers; ``FloatAtom(itemsize)`` returns the concrete class."""

    kind = "float"

    def __init__(self, itemsize: int = 8, shape: ShapeLike = (), dflt: Any = 0.0) -> None:
        _become_concrete(self, itemsize, shape, dflt)


class TimeAtom(Atom):
    """HDF5 time values; ``TimeAtom(itemsize)`` returns Time32Atom (4) or Time64Atom (8)."""

    kind = "time"

    def __init__(self, itemsize: int = 4, shape: ShapeLike = (), dflt: Any = 0) -> None:
        _become_concrete(self, itemsize, shape, dflt)


class Int8Atom(_FixedAtom, IntAtom):
    """8-bit signed integers."""

    type = "int8"
    itemsize = 1


class Int16Atom(_FixedAtom, IntAtom):
    """16-bit signed integers."""

    type = "int16"
    itemsize = 2


class Int32Atom(_FixedAtom, IntAtom):
    """32-bit signed integers."""

    type = "int32"
    itemsize = 4


class Int64Atom(_FixedAtom, IntAtom):
    """64-bit signed integers."""

    type = "int64"
    itemsize = 8


class UInt8Atom(_FixedAtom, UIntAtom):
    """8-bit unsigned integers."""

    type = "uint8"
    itemsize = 1


class UInt16Atom(_FixedAtom, UIntAtom):
    """16-bit unsigned integers."""

    type = "uint16"
    itemsize = 2


class UInt32Atom(_FixedAtom, UIntAtom):
    """32-bit unsigned integers."""

    type = "uint32"
    itemsize = 4


class UInt64Atom(_FixedAtom, UIntAtom):
    """64-bit unsigned integers."""

    type = "uint64"
    itemsize = 8


class Float16Atom(_FixedAtom, FloatAtom):
    """Half precision floats."""

    type = "float16"
    itemsize = 2


class Float32Atom(_FixedAtom, FloatAtom):
    """Single precision floats."""

    type = "float32"
    itemsize = 4


class Float64Atom(_FixedAtom, FloatAtom):
    """Double precision floats."""

    type = "float64"
    itemsize = 8


_EXTENDED_FLOATS: list[type[_FixedAtom]] = []

if hasattr(np, "float96"):  # pragma: no cover - 32-bit x86 only

    class Float96Atom(_FixedAtom, FloatAtom):
        """Extended precision floats stored in 12 bytes."""

        type = "float96"
        itemsize = 12

    _EXTENDED_FLOATS.append(Float96Atom)

if hasattr(np, "float128"):

    class Float128Atom(_FixedAtom, FloatAtom):
        """Extended precision floats stored in 16 bytes."""

        type = "float128"
        itemsize = 16

    _EXTENDED_FLOATS.append(Float128Atom)


class ComplexAtom(Atom):
    """Complex numbers of ``itemsize`` bytes: 8 (single) or 16 (double precision)."""

    kind = "complex"
    _fixed_itemsize = False
    _isizes: ClassVar[list[int]] = [8, 16] + [
        size for size, name in ((24, "complex192"), (32, "complex256")) if hasattr(np, name)
    ]

    def __init__(self, itemsize: int, shape: ShapeLike = (), dflt: Any = 0j) -> None:
        if itemsize not in self._isizes:
            raise _invalid_itemsize_error("complex", itemsize, self._isizes)
        self.type = f"complex{int(itemsize) * 8}"
        Atom.__init__(self, self.type, shape, dflt)
        self.itemsize = self.dtype.base.itemsize


class _ComplexErrorAtom(ComplexAtom):
    """Old PyTables 1.x complex names, kept only to say what to use instead."""

    def __init__(self, shape: ShapeLike = (), dflt: Any = 0j) -> None:
        raise TypeError(
            "to avoid confusions with PyTables 1.X complex atom names, "
            "please use ``ComplexAtom(itemsize=N)``, "
            "where N=8 for single precision complex atoms, "
            "and N=16 for double precision complex atoms"
        )


Complex32Atom = Complex64Atom = Complex128Atom = Complex256Atom = _ComplexErrorAtom


class Time32Atom(_FixedAtom, TimeAtom):
    """HDF5 32-bit time (seconds since the epoch), held as int32."""

    type = "time32"
    itemsize = 4
    _nptype = "int32"


class Time64Atom(_FixedAtom, TimeAtom):
    """HDF5 64-bit time (seconds since the epoch), held as float64."""

    type = "time64"
    itemsize = 8
    _nptype = "float64"


class ReferenceAtom(Atom):
    """HDF5 object references (read-only), held as Python objects."""

    kind = "reference"
    type = "object"
    _fixed_itemsize = False

    def __init__(self, shape: ShapeLike = ()) -> None:
        Atom.__init__(self, "object", shape, None)
        self.itemsize = self.dtype.base.itemsize

    def __repr__(self) -> str:
        return f"ReferenceAtom(shape={self.shape!r})"


# ----------------------------------------------------------------------------- Enum


class Enum:
    """An immutable enumerated type: names mapped to unique concrete values.

    Parameters
    ----------
    enum : list, tuple, dict or Enum
        A sequence of names (values 0, 1, 2, ... in order), a mapping of names to
        concrete values, or another Enum (copied).

    Examples
    --------
    >>> colors = Enum({'red': 4, 'green': 2})
    >>> colors.red, colors['green'], colors(4)
    (4, 2, 'red')
    """

    _names: dict[str, Any]
    _values: dict[Any, str]

    def __init__(self, enum: Sequence[str] | Mapping[str, Any] | Enum) -> None:
        object.__setattr__(self, "_names", {})
        object.__setattr__(self, "_values", {})
        pairs: Any
        if isinstance(enum, list | tuple):
            pairs = ((name, value) for value, name in enumerate(enum))
        elif isinstance(enum, dict):
            pairs = enum.items()
        elif isinstance(enum, Enum):
            pairs = enum._names.items()
        else:
            raise TypeError(
                "enumerations can only be created from sequences, mappings and other "
                f"enumerations, not {enum!r}"
            )
        for name, value in pairs:
            self._add(name, value)

    def _add(self, name: Any, value: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name of enumerated value is not a string: {name!r}")
        if name.startswith("_"):
            raise ValueError(f"name of enumerated value can not start with ``_``: {name!r}")
        if name in self._names:
            raise ValueError(f"enumerated values contain duplicate names: {name!r}")
        if value in self._values:
            raise ValueError(f"enumerated values contain duplicate concrete values: {value!r}")
        self._names[name] = value
        self._values[value] = name

    def __getitem__(self, name: str) -> Any:
        """Return the concrete value named `name` (KeyError if there is none)."""
        try:
            return self._names[name]
        except KeyError:
            raise KeyError(f"no enumerated value with that name: {name!r}") from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never a value name; keeps copy/pickle probes sane
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(*exc.args) from None

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("operation not allowed")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("operation not allowed")

    def __setitem__(self, name: Any, value: Any) -> NoReturn:
        raise IndexError("operation not allowed")

    def __delitem__(self, name: Any) -> NoReturn:
        raise IndexError("operation not allowed")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            raise TypeError(f"name of enumerated value is not a string: {name!r}")
        return name in self._names

    def __call__(self, value: Any, *default: Any) -> Any:
        """Return the name of concrete `value`, else `default` if given, else ValueError."""
        try:
            return self._values[value]
        except KeyError:
            if default:
                return default[0]
            raise ValueError(f"no enumerated value with that concrete value: {value!r}") from None

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """Yield ``(name, value)`` pairs."""
        yield from self._names.items()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Enum) and self._names == other._names

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(frozenset(self._names.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Enum, (dict(self._names),))

    def __repr__(self) -> str:
        return f"Enum({_np_repr(self._names)})"


class EnumAtom(Atom):
    """Values of an enumerated type, stored with the integer storage atom `base`.

    Parameters
    ----------
    enum : Enum, list, tuple or dict
        The enumerated type (anything ``Enum()`` accepts).
    dflt : str
        Name of the default value (KeyError if it is not in `enum`).
    base : Atom or str
        Storage atom (or its PyTables type); it must hold every concrete value.
    shape : int or tuple of int
        Shape of the atom.

    Examples
    --------
    >>> EnumAtom(['T0', 'T1'], 'T0', 'int8')
    EnumAtom(enum=Enum({'T0': 0, 'T1': 1}), dflt='T0', base=Int8Atom(shape=(), dflt=0), shape=())
    """

    kind = "enum"
    type = "enum"
    _fixed_itemsize = False

    def __init__(
        self,
        enum: Enum | Sequence[str] | Mapping[str, Any],
        dflt: str,
        base: Atom | str,
        shape: ShapeLike = (),
    ) -> None:
        self.enum = enum if isinstance(enum, Enum) else Enum(enum)
        storage = Atom.from_type(base) if isinstance(base, str) else base
        self._check_base(storage)
        self._base = storage
        default = self.enum[dflt]
        self._defname = dflt
        # Kept to ease writing the HDF5 enumerated type.
        self._names = [name for name, _ in self.enum]
        self._values = np.array([value for _, value in self.enum], dtype=storage.dtype.base)
        Atom.__init__(self, storage.dtype, shape, default)
        self.itemsize = self.dtype.base.itemsize

    def _check_base(self, base: Atom) -> None:
        """Check that storage atom `base` can represent every concrete value."""
        if base.kind == "enum":
            raise TypeError(f"can not use an enumerated atom as a storage atom: {base!r}")
        values = [value for _, value in self.enum]
        try:
            generic = np.array(values)
        except ValueError:
            raise TypeError("concrete values are not uniformly-shaped") from None
        try:
            stored = np.array(generic, dtype=base.dtype.base)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(
                "storage atom type is incompatible with concrete values in the enumeration"
            ) from None
        if stored.shape[1:] != base.dtype.shape:
            raise TypeError(
                "storage atom shape does not match that of concrete values in the enumeration"
            )
        if stored.tolist() != generic.tolist():
            raise TypeError(
                "storage atom type lacks precision for concrete values in the enumeration"
            )
        if stored.dtype.kind not in "iu":
            raise NotImplementedError(
                "only integer concrete values are supported for the moment, sorry"
            )
        if stored.ndim > 1:
            raise NotImplementedError(
                "only scalar concrete values are supported for the moment, sorry"
            )

    @property
    def base(self) -> Atom:
        """The storage atom."""
        return self._base

    def _get_init_args(self) -> dict[str, Any]:
        return {"enum": self.enum, "dflt": self._defname, "base": self.base, "shape": self.shape}

    def _is_equal_to_atom(self, atom: Atom) -> bool:
        return False

    def _is_equal_to_enumatom(self, enumatom: EnumAtom) -> bool:
        return (
            self.enum == enumatom.enum
            and self.shape == enumatom.shape
            and bool(np.all(self.dflt == enumatom.dflt))
            and self.base == enumatom.base
        )

    def __eq__(self, other: object) -> bool:
        method = getattr(other, "_is_equal_to_enumatom", None)
        return False if method is None else bool(method(self))

    def __hash__(self) -> int:
        return hash(("enum", self.enum, self.shape, self.base))

    def __repr__(self) -> str:
        return (
            f"EnumAtom(enum={self.enum!r}, dflt={self._defname!r}, "
            f"base={self.base!r}, shape={self.shape!r})"
        )


# ----------------------------------------------------------------------------- registry

atom_map: dict[str, type[Atom] | dict[int, type[Atom]]] = {
    "string": StringAtom,
    "complex": ComplexAtom,
    "enum": EnumAtom,
    "reference": ReferenceAtom,
}
"""PyTables kind -> atom class (variable item size) or {item size: atom class}."""

_FIXED_CLASSES: list[type[_FixedAtom]] = [
    BoolAtom, Int8Atom, Int16Atom, Int32Atom, Int64Atom, UInt8Atom, UInt16Atom, UInt32Atom,
    UInt64Atom, Float16Atom, Float32Atom, Float64Atom, *_EXTENDED_FLOATS, Time32Atom, Time64Atom,
]
for _cls in _FIXED_CLASSES:
    _sizes: Any = atom_map.setdefault(_cls.kind, {})
    _sizes[_cls.itemsize] = _cls
del _cls, _sizes

all_types: frozenset[str] = frozenset(
    [cls.type for cls in _FIXED_CLASSES]
    + [f"complex{size * 8}" for size in ComplexAtom._isizes]
    + ["string", "enum", "object"]
)
"""Every PyTables type."""

deftype_from_kind: dict[str, str] = {
    "bool": "bool8", "int": "int32", "uint": "uint32", "float": "float64",
    "complex": "complex128", "time": "time32",
}
"""PyTables kind -> default PyTables type (kinds with a default item size)."""


# ----------------------------------------------------------------------------- pseudo-atoms


class PseudoAtom:
    """Base of the VLArray-only pseudo-atoms: a `base` storage atom, no dflt nor itemsize."""

    kind: ClassVar[str]
    type: ClassVar[str]
    base: ClassVar[Atom]
    shape: ClassVar[Shape] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def toarray(self, object_: Any) -> AnyArray:
        """Convert `object_` into a 1-D array of base atoms."""
        raise NotImplementedError

    def fromarray(self, array: AnyArray) -> Any:
        """Convert a 1-D array of base atoms back into an object."""
        raise NotImplementedError


class VLStringAtom(PseudoAtom):
    """One ``bytes`` object per VLArray row, stored as uint8."""

    kind = "vlstring"
    type = "vlstring"
    base = UInt8Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the bytes of `object_` as a uint8 array."""
        if not isinstance(object_, bytes):
            raise TypeError(f"object is not bytes: {object_!r}")
        return np.frombuffer(object_, dtype=np.uint8)

    def fromarray(self, array: AnyArray) -> bytes:
        """Return the bytes held in `array`."""
        return np.ascontiguousarray(array, dtype=np.uint8).tobytes()


class VLUnicodeAtom(PseudoAtom):
    """One ``str`` per VLArray row, stored as UCS-4 code points (uint32)."""

    kind = "vlunicode"
    type = "vlunicode"
    base = UInt32Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the code points of `object_` as a uint32 array."""
        if not isinstance(object_, str):
            raise TypeError(f"object is not a string: {object_!r}")
        encoded = object_.encode(f"utf-32-{sys.byteorder[0]}e", "surrogatepass")
        return np.frombuffer(encoded, dtype=np.uint32)

    def fromarray(self, array: AnyArray) -> str:
        """Return the string whose code points `array` holds (trailing NULs dropped)."""
        if len(array) == 0:
            return ""
        codes = np.ascontiguousarray(array, dtype=np.uint32)
        return str(codes.view(f"U{len(codes)}")[0])


class ObjectAtom(PseudoAtom):
    """One pickled Python object per VLArray row, stored as uint8.

    Reading unpickles, so only read files you trust (as with PyTables).
    """

    kind = "object"
    type = "object"
    base = UInt8Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the pickle of `object_` as a uint8 array."""
        return np.frombuffer(pickle.dumps(object_, pickle.HIGHEST_PROTOCOL), dtype=np.uint8)

    def fromarray(self, array: AnyArray) -> Any:
        """Unpickle `array`; an empty array gives None."""
        if array.size == 0:
            return None
        return pickle.loads(np.ascontiguousarray(array, dtype=np.uint8).tobytes())


# ----------------------------------------------------------------------------- from HDF5

_HDF5_CLASSES = frozenset(
    "INTEGER FLOAT TIME STRING BITFIELD OPAQUE COMPOUND REFERENCE ENUM VLEN ARRAY".split()
)


def _unsupported(h5class: str, dtype: np.dtype[Any]) -> TypeError:
    return TypeError(f"the HDF5 class ``H5T_{h5class}`` is not supported yet: {dtype!r}")


def _complex_or_error(dtype: np.dtype[Any]) -> Atom:
    # PyTables takes a compound of float fields named ('r', 'i') as complex.
    fields: Mapping[str, Any] = dtype.fields or {}
    if list(fields) == ["r", "i"] and all(f[0].kind == "f" for f in fields.values()):
        return ComplexAtom(2 * max(f[0].itemsize for f in fields.values()))
    raise _unsupported("COMPOUND", dtype)


def _element_atom(dtype: np.dtype[Any], h5class: str | None) -> Atom:
    """Atom of a scalar element type (neither subarray nor vlen)."""
    metadata: Mapping[str, Any] = dtype.metadata or {}
    if h5class == "BITFIELD":
        return BoolAtom()
    if h5class == "TIME":
        return Atom.from_kind("time", dtype.itemsize)
    if "ref" in metadata:
        if getattr(metadata["ref"], "__name__", None) != "Reference":
            raise _unsupported("REFERENCE", dtype)
        return ReferenceAtom()
    if "enum" in metadata:
        # PyTables names the first member (in HDF5's member order) as the default.
        members = metadata["enum"]
        enum = Enum({name: dtype.type(value) for name, value in members.items()})
        return EnumAtom(enum, next(iter(members)), Atom.from_dtype(dtype))
    if dtype.names is not None:
        return _complex_or_error(dtype)
    if h5class == "OPAQUE" or dtype.kind in "VMm":  # h5py: void, datetime64 -> OPAQUE
        raise _unsupported("OPAQUE", dtype)
    if dtype.kind == "b":
        # h5py writes bools as an int8 ENUM {FALSE: 0, TRUE: 1} and reads it back as bool.
        enum = Enum({"FALSE": np.int8(0), "TRUE": np.int8(1)})
        return EnumAtom(enum, "FALSE", Int8Atom())
    if dtype.kind == "O":
        raise TypeError(f"object dtype without h5py vlen or reference metadata: {dtype!r}")
    return Atom.from_dtype(dtype)


def atom_from_hdf5_dtype(
    dtype: DTypeLike, *, hdf5_class: str | None = None, dflt: Any = None
) -> Atom:
    """Return the atom PyTables reports for a dataset whose type h5py reads as `dtype`.

    Parameters
    ----------
    dtype : numpy.dtype
        The dtype h5py reports (with h5py's metadata for enums, vlens and references).
    hdf5_class : str, optional
        HDF5 class of the innermost element type (through ARRAY and VLEN), for what
        the dtype cannot tell: ``'BITFIELD'`` (PyTables' bools, read by h5py as
        uint8) gives BoolAtom, ``'TIME'`` gives Time32Atom or Time64Atom by item size
        (h5py cannot read TIME types: pass any dtype of that size).  Case and an
        ``'H5T_'`` prefix are ignored.
    dflt : object, optional
        The dataset's fill value: it becomes the atom's ``dflt`` as in PyTables (for an
        EnumAtom the default *name* stays the first member's).  None keeps the default.

    Returns
    -------
    Atom
        Byte order is dropped (``'>f8'`` gives Float64Atom); subarray dtypes give shaped
        atoms; a vlen dtype gives the atom of its elements (as VLArray reports it);
        h5py's bools (an int8 ENUM) give PyTables' EnumAtom of FALSE/TRUE.

    Raises
    ------
    TypeError
        What PyTables cannot load as an atom (vlen strings, region references,
        compounds other than complex, opaque types): the node is then UnImplemented.
    ValueError
        An unknown `hdf5_class`.
    """
    dtype = np.dtype(dtype)
    h5class = None if hdf5_class is None else hdf5_class.upper().removeprefix("H5T_")
    if h5class is not None and h5class not in _HDF5_CLASSES:
        raise ValueError(f"unknown HDF5 type class: {hdf5_class!r}")
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        atom = atom_from_hdf5_dtype(base, hdf5_class=h5class).copy(shape=shape)
    else:
        metadata: Mapping[str, Any] = dtype.metadata or {}
        element = metadata.get("vlen")
        if element is str or element is bytes:
            raise TypeError("variable length strings are not supported yet")
        if element is not None:
            atom = atom_from_hdf5_dtype(element, hdf5_class=h5class)
        else:
            atom = _element_atom(dtype, h5class)
    if dflt is not None and atom.dtype.base.kind != "O":
        _set_fill_value(atom, dflt)
    return atom


def _set_fill_value(atom: Atom, fill: Any) -> None:
    """Make a dataset's fill value the atom's default, as PyTables does on opening."""
    value = np.asarray(fill)
    if value.dtype.names == ("r", "i"):  # a complex compound h5py did not convert
        value = value["r"] + 1j * value["i"]
    value = np.array(value, dtype=atom.dtype.base)
    atom.dflt = value[()] if atom.shape == () else np.broadcast_to(value, atom.shape).copy()


__all__ = [
    "Atom", "BoolAtom", "Complex32Atom", "Complex64Atom", "Complex128Atom", "Complex256Atom",
    "ComplexAtom", "Enum", "EnumAtom", "Float16Atom", "Float32Atom", "Float64Atom", "FloatAtom",
    "Int8Atom", "Int16Atom", "Int32Atom", "Int64Atom", "IntAtom", "ObjectAtom", "PseudoAtom",
    "ReferenceAtom", "ShapeLike", "StringAtom", "Time32Atom", "Time64Atom", "TimeAtom",
    "UInt8Atom", "UInt16Atom", "UInt32Atom", "UInt64Atom", "UIntAtom", "VLStringAtom",
    "VLUnicodeAtom", "all_types", "atom_from_hdf5_dtype", "atom_map", "deftype_from_kind",
    "split_type",
]
if hasattr(np, "float96"):  # pragma: no cover - 32-bit x86 only
    __all__ += ["Float96Atom"]
if hasattr(np, "float128"):
    __all__ += ["Float128Atom"]
