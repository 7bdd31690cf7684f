"""Column definitions (``Col`` and ``*Col``), with PyTables' names and semantics.

A column definition is an atom (see :mod:`hyperslab.nodes.atoms.atom`) with a position among its
sibling columns: ``Int32Col`` derives from both :class:`Col` and ``Int32Atom``, so
``isinstance(Int32Col(), Int32Atom)`` holds.  Besides the atom's constructor arguments,
every column class takes ``pos`` (its position, or None to place it by name) and ``attrs``
(a dict of metadata, kept as ``_v_col_attrs``).

Differences from PyTables, all deliberate:

* columns are hashable (as atoms are, see :mod:`hyperslab.nodes.atoms.atom`); the hash ignores
  the position, which a description changes;
* ``copy()`` works on every column (PyTables' loses the item size of string columns);
* ``pos`` and ``attrs`` are readable as properties (aliases of ``_v_pos`` and
  ``_v_col_attrs``);
* :meth:`Col.from_atom` raises TypeError for atoms that have no column class (pseudo-atoms,
  references), instead of an AttributeError or a KeyError.
"""

from __future__ import annotations

import keyword
import re
import warnings
from typing import TYPE_CHECKING, Any, ClassVar

from hyperslab._typing import DTypeLike
from hyperslab.errors import NaturalNameWarning
from hyperslab.nodes.atoms import atom as _atom
from hyperslab.nodes.atoms._reprs import np_repr
from hyperslab.nodes.atoms.atom import (
    Atom,
    BoolAtom,
    ComplexAtom,
    EnumAtom,
    Float16Atom,
    Float32Atom,
    Float64Atom,
    FloatAtom,
    Int8Atom,
    Int16Atom,
    Int32Atom,
    Int64Atom,
    IntAtom,
    StringAtom,
    Time32Atom,
    Time64Atom,
    TimeAtom,
    UInt8Atom,
    UInt16Atom,
    UInt32Atom,
    UInt64Atom,
    UIntAtom,
    _ComplexErrorAtom,
)
from hyperslab.nodes.atoms.atomargs import SctypeLike, ShapeLike, init_arg_names

if TYPE_CHECKING:
    from hyperslab.nodes.atoms.description import Description


class Col(Atom):
    """A non-nested column of a table: an atom with a position (abstract; use a subclass).

    Every ``*Col`` class takes the arguments of its atom class, plus these keyword-only
    ones.

    Parameters
    ----------
    pos : int, optional
        Position of the column among its siblings.  Columns with a position come first,
        by position; the others follow in alphabetical order.
    attrs : dict, optional
        Metadata of the column (``_v_col_attrs``).

    Attributes
    ----------
    _v_pos : int or None
        The position; a :class:`~hyperslab.nodes.atoms.description.Description` sets it to the
        column's final index among its siblings.
    _v_name, _v_pathname, _v_parent
        Name, path (``'nested/x'``) and parent description, set once the column is placed
        in a description.

    Examples
    --------
    >>> Int32Col(pos=0)
    Int32Col(shape=(), dflt=0, pos=0)
    >>> StringCol(16, dflt=b'abc')
    StringCol(itemsize=16, shape=(), dflt=b'abc', pos=None)
    >>> Col.from_type('float32', shape=(2,), pos=3)
    Float32Col(shape=(2,), dflt=0.0, pos=3)
    """

    _class_from_prefix: ClassVar[dict[str, type[Col]]] = {}
    """Column classes by prefix (``'Int32'`` -> ``Int32Col``), filled as they are defined."""

    _atom_class: ClassVar[type[Atom]]
    """The atom class this column class derives from."""

    _v_pos: int | None
    _v_offset: int | None
    _v_col_attrs: dict[str, Any]
    _v_name: str
    _v_pathname: str
    _v_parent: Description

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._atom_class = next(
            base for base in cls.__mro__[1:] if issubclass(base, Atom) and not issubclass(base, Col)
        )
        Col._class_from_prefix[cls.prefix()] = cls

    def __init__(
        self,
        *args: Any,
        pos: int | None = None,
        attrs: dict[str, Any] | None = None,
        _offset: int | None = None,
        **kwargs: Any,
    ) -> None:
        cls = type(self)
        if cls is Col:
            raise NotImplementedError(
                "``Col`` is an abstract class; please use one of its subclasses"
            )
        cls._atom_class.__init__(self, *args, **kwargs)
        if type(self) is not cls:
            # The constructor of an abstract atom (IntAtom...) turned `self` into the
            # concrete *atom* class: make it the matching column class.
            self.__class__ = Col._class_from_prefix[type(self).prefix()]
        self._v_pos = pos
        self._v_offset = _offset
        self._v_col_attrs = {} if attrs is None else attrs

    # -- factories

    @classmethod
    def prefix(cls) -> str:
        """Return the class name without its ``Col`` suffix (``'Int32'``)."""
        name = cls.__name__
        return name[: name.rfind("Col")]

    @classmethod
    def from_atom(cls, atom: Atom, pos: int | None = None, _offset: int | None = None) -> Col:
        """Create a column definition from an atom, at position `pos`.

        Examples
        --------
        >>> Col.from_atom(Int16Atom(shape=2), pos=1)
        Int16Col(shape=(2,), dflt=0, pos=1)
        """
        prefix = atom.prefix() if isinstance(atom, Atom) else None
        colclass = Col._class_from_prefix.get(prefix) if prefix is not None else None
        if colclass is None:
            raise TypeError(f"there is no column class for atom {atom!r}")
        kwargs = atom._get_init_args()
        kwargs.pop("pos", None)
        return colclass(pos=pos, _offset=_offset, **kwargs)

    @classmethod
    def from_sctype(
        cls,
        sctype: SctypeLike,
        shape: ShapeLike = (),
        dflt: Any = None,
        pos: int | None = None,
    ) -> Col:
        """Create a column definition from a NumPy scalar type (or its name).

        Examples
        --------
        >>> Col.from_sctype('uint16', pos=0)
        UInt16Col(shape=(), dflt=0, pos=0)
        """
        return cls.from_atom(Atom.from_sctype(sctype, shape, dflt), pos=pos)

    @classmethod
    def from_dtype(
        cls,
        dtype: DTypeLike,
        dflt: Any = None,
        pos: int | None = None,
        _offset: int | None = None,
    ) -> Col:
        """Create a column definition from a NumPy dtype (byte order ignored).

        Examples
        --------
        >>> Col.from_dtype(('>f8', (2, 2)), pos=1)
        Float64Col(shape=(2, 2), dflt=0.0, pos=1)
        """
        return cls.from_atom(Atom.from_dtype(dtype, dflt), pos=pos, _offset=_offset)

    @classmethod
    def from_type(
        cls,
        type_: str,
        shape: ShapeLike = (),
        dflt: Any = None,
        pos: int | None = None,
    ) -> Col:
        """Create a column definition from a PyTables type (``'int16'``, ``'time64'``...).

        Examples
        --------
        >>> Col.from_type('time64', pos=2)
        Time64Col(shape=(), dflt=0.0, pos=2)
        """
        return cls.from_atom(Atom.from_type(type_, shape, dflt), pos=pos)

    @classmethod
    def from_kind(
        cls,
        kind: str,
        itemsize: int | None = None,
        shape: ShapeLike = (),
        dflt: Any = None,
        pos: int | None = None,
    ) -> Col:
        """Create a column definition from a PyTables kind and an optional item size.

        Examples
        --------
        >>> Col.from_kind('string', 3)
        StringCol(itemsize=3, shape=(), dflt=b'', pos=None)
        """
        return cls.from_atom(Atom.from_kind(kind, itemsize, shape, dflt), pos=pos)

    # -- members

    @property
    def pos(self) -> int | None:
        """The position of the column (``_v_pos``)."""
        return self._v_pos

    @property
    def attrs(self) -> dict[str, Any]:
        """The metadata of the column (``_v_col_attrs``)."""
        return self._v_col_attrs

    def _get_init_args(self) -> dict[str, Any]:
        """Return the constructor arguments that recreate this column (position included)."""
        atom_class = self._atom_class
        if atom_class._get_init_args is not Atom._get_init_args:
            kwargs = atom_class._get_init_args(self)
        else:
            kwargs = {name: getattr(self, name) for name in init_arg_names(atom_class)}
        kwargs["pos"] = getattr(self, "_v_pos", None)
        return kwargs

    # -- comparison (positions must match too, as PyTables) and representation

    def __eq__(self, other: object) -> bool:
        if not hasattr(other, "_v_pos"):
            return False
        return self._v_pos == other._v_pos and self._atom_class.__eq__(self, other)

    def _is_equal_to_atom(self, atom: Atom) -> bool:
        if not hasattr(atom, "_v_pos"):
            return False
        return self._v_pos == atom._v_pos and self._atom_class._is_equal_to_atom(self, atom)

    def __hash__(self) -> int:
        return self._atom_class.__hash__(self)

    def __repr__(self) -> str:
        atom_repr = self._atom_class.__repr__(self)
        args = atom_repr[atom_repr.index("(") + 1 : atom_repr.rindex(")")]
        text = f"{type(self).__name__}({args}, pos={self._v_pos}"
        if self._v_col_attrs:
            text += f", attrs={np_repr(self._v_col_attrs)}"
        return text + ")"


# ----------------------------------------------------------------------------- classes


class StringCol(Col, StringAtom):
    """A column of fixed-length byte strings of ``itemsize`` bytes."""


class BoolCol(Col, BoolAtom):
    """A column of booleans."""


class IntCol(Col, IntAtom):
    """A column of signed integers; ``IntCol(itemsize)`` gives the concrete class."""


class Int8Col(Col, Int8Atom):
    """A column of 8-bit signed integers."""


class Int16Col(Col, Int16Atom):
    """A column of 16-bit signed integers."""


class Int32Col(Col, Int32Atom):
    """A column of 32-bit signed integers."""


class Int64Col(Col, Int64Atom):
    """A column of 64-bit signed integers."""


class UIntCol(Col, UIntAtom):
    """A column of unsigned integers; ``UIntCol(itemsize)`` gives the concrete class."""


class UInt8Col(Col, UInt8Atom):
    """A column of 8-bit unsigned integers."""


class UInt16Col(Col, UInt16Atom):
    """A column of 16-bit unsigned integers."""


class UInt32Col(Col, UInt32Atom):
    """A column of 32-bit unsigned integers."""


class UInt64Col(Col, UInt64Atom):
    """A column of 64-bit unsigned integers."""


class FloatCol(Col, FloatAtom):
    """A column of floats; ``FloatCol(itemsize)`` gives the concrete class."""


class Float16Col(Col, Float16Atom):
    """A column of half precision floats."""


class Float32Col(Col, Float32Atom):
    """A column of single precision floats."""


class Float64Col(Col, Float64Atom):
    """A column of double precision floats."""


_EXTENDED_FLOAT_COLS: list[str] = []

if hasattr(_atom, "Float96Atom"):  # pragma: no cover - 32-bit x86 only

    class Float96Col(Col, _atom.Float96Atom):
        """A column of extended precision floats stored in 12 bytes."""

    _EXTENDED_FLOAT_COLS.append("Float96Col")

if hasattr(_atom, "Float128Atom"):

    class Float128Col(Col, _atom.Float128Atom):
        """A column of extended precision floats stored in 16 bytes."""

    _EXTENDED_FLOAT_COLS.append("Float128Col")


class ComplexCol(Col, ComplexAtom):
    """A column of complex numbers of ``itemsize`` bytes (8 or 16)."""


class Complex32Col(Col, _ComplexErrorAtom):
    """Old PyTables 1.x complex name: raises TypeError saying to use ``ComplexCol``."""


class Complex64Col(Col, _ComplexErrorAtom):
    """Old PyTables 1.x complex name: raises TypeError saying to use ``ComplexCol``."""


class Complex128Col(Col, _ComplexErrorAtom):
    """Old PyTables 1.x complex name: raises TypeError saying to use ``ComplexCol``."""


class Complex256Col(Col, _ComplexErrorAtom):
    """Old PyTables 1.x complex name: raises TypeError saying to use ``ComplexCol``."""


class TimeCol(Col, TimeAtom):
    """A column of HDF5 times; ``TimeCol(itemsize)`` gives Time32Col or Time64Col."""


class Time32Col(Col, Time32Atom):
    """A column of HDF5 32-bit times (int32 seconds since the epoch)."""


class Time64Col(Col, Time64Atom):
    """A column of HDF5 64-bit times (float64 seconds since the epoch)."""


class EnumCol(Col, EnumAtom):
    """A column of enumerated values (see :class:`~hyperslab.nodes.atoms.atom.EnumAtom`).

    Examples
    --------
    >>> EnumCol(['red', 'green'], 'green', base='uint8', pos=1)
    EnumCol(enum=Enum({'red': 0, 'green': 1}), dflt='green', base=UInt8Atom(shape=(), dflt=0), shape=(), pos=1)
    """  # noqa: E501

    def _is_equal_to_enumatom(self, enumatom: EnumAtom) -> bool:
        if not hasattr(enumatom, "_v_pos"):
            return False
        return self._v_pos == enumatom._v_pos and EnumAtom._is_equal_to_enumatom(self, enumatom)


_PYTHON_ID = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_RESERVED_PREFIX = re.compile(r"^_[cfgv]_")
_NATURAL_NAMING = (
    "you will not be able to use natural naming to access this object; "
    "using ``getattr()`` will still work, though"
)


def check_column_name(name: object) -> str:
    """Check that `name` can name a column, as PyTables does, and return it.

    Names that are not Python identifiers, or are keywords, are accepted with a
    NaturalNameWarning.

    Raises
    ------
    TypeError
        If `name` is not a string.
    ValueError
        If `name` is empty, ``'.'``, contains ``'/'``, starts with one of PyTables'
        reserved prefixes (``_c_``, ``_f_``, ``_g_``, ``_v_``) or is ``__members__``.
    """
    if not isinstance(name, str):
        raise TypeError(f"object name is not a string: {name!r}")
    if name == "":
        raise ValueError("the empty string is not allowed as an object name")
    if name == ".":
        raise ValueError("``.`` is not allowed as an object name")
    if "/" in name:
        raise ValueError(f"the ``/`` character is not allowed in object names: {name!r}")
    if not _PYTHON_ID.match(name):
        warnings.warn(
            f"object name is not a valid Python identifier: {name!r}; it does not match "
            f"the pattern ``{_PYTHON_ID.pattern}``; {_NATURAL_NAMING}",
            NaturalNameWarning,
            stacklevel=4,
        )
    elif keyword.iskeyword(name):
        warnings.warn(
            f"object name is a Python keyword: {name!r}; {_NATURAL_NAMING}",
            NaturalNameWarning,
            stacklevel=4,
        )
    elif _RESERVED_PREFIX.match(name):
        raise ValueError(
            f"object name starts with a reserved prefix: {name!r}; "
            f"it matches the pattern ``{_RESERVED_PREFIX.pattern}``"
        )
    elif name == "__members__":
        raise ValueError("``__members__`` is not allowed as an object name")
    return name


def col_class(prefix: str) -> type[Col]:
    """Return the column class of a prefix (``'Int32'`` -> ``Int32Col``).

    Raises
    ------
    KeyError
        If no column class has that prefix.
    """
    try:
        return Col._class_from_prefix[prefix]
    except KeyError:
        raise KeyError(f"no column class with prefix {prefix!r}") from None


__all__ = [
    "BoolCol", "Col", "Complex32Col", "Complex64Col", "Complex128Col", "Complex256Col",
    "ComplexCol", "EnumCol", "Float16Col", "Float32Col", "Float64Col", "FloatCol", "Int8Col",
    "Int16Col", "Int32Col", "Int64Col", "IntCol", "StringCol", "Time32Col", "Time64Col",
    "TimeCol", "UInt8Col", "UInt16Col", "UInt32Col", "UInt64Col", "UIntCol",
    "check_column_name", "col_class",
    *_EXTENDED_FLOAT_COLS,
]
