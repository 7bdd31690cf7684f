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

import importlib
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hyperslab._typing import DTypeLike, Shape
from hyperslab.errors import FlavorWarning
from hyperslab.nodes.atoms._reprs import np_repr
from hyperslab.nodes.atoms.atomargs import (
    SctypeLike,
    ShapeLike,
    _invalid_itemsize_error,
    _normalize_default,
    _normalize_shape,
    init_arg_names,
    split_type,
)
from hyperslab.nodes.atoms.enum import Enum

if TYPE_CHECKING:
    from hyperslab.nodes.atoms.atom_hdf5 import atom_from_hdf5_dtype
    from hyperslab.nodes.atoms.pseudoatom import ObjectAtom, PseudoAtom, VLStringAtom, VLUnicodeAtom

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
        dtype = _numpy_dtype(dtype)
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
        return {name: getattr(self, name) for name in init_arg_names(type(self))}

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
        args = f"shape={self.shape!r}, dflt={np_repr(self.dflt)}"
        if not self._fixed_itemsize:
            args = f"itemsize={self.itemsize}, {args}"
        return f"{type(self).__name__}({args})"


def _numpy_dtype(dtype: Any) -> np.dtype[Any]:
    """``np.dtype(dtype)``, or the NumPy dtype an extension dtype is stored as.

    pandas' extension dtypes (datetimes with a time zone, categoricals) are no NumPy dtypes
    but name the NumPy dtype of their storage as ``.base``, which PyTables'
    ``Atom.from_dtype`` reads: the atom (or the ValueError pandas expects when there is
    none) is that of the base.  Anything else that NumPy cannot read raises its TypeError.
    """
    try:
        return np.dtype(dtype)
    except TypeError:
        base = getattr(dtype, "base", None)
        if isinstance(base, np.dtype) and getattr(dtype, "shape", None) == ():
            return base
        raise


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


# ----------------------------------------------------------------------------- EnumAtom


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



# ----------------------------------------------------------------------------- moved names

# Names defined in modules built on this one, still importable from here.  They are
# resolved on first use (PEP 562): importing them eagerly would be an import cycle.
_BUILT_ON_ATOM: dict[str, str] = {
    "ObjectAtom": "hyperslab.nodes.atoms.pseudoatom",
    "PseudoAtom": "hyperslab.nodes.atoms.pseudoatom",
    "VLStringAtom": "hyperslab.nodes.atoms.pseudoatom",
    "VLUnicodeAtom": "hyperslab.nodes.atoms.pseudoatom",
    "atom_from_hdf5_dtype": "hyperslab.nodes.atoms.atom_hdf5",
}


def __getattr__(name: str) -> Any:
    module = _BUILT_ON_ATOM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
