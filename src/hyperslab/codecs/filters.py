"""PyTables' ``Filters``: which compressor, level and pre/post filters a leaf uses.

:class:`Filters` has PyTables' constructor, attributes, ``repr``, equality, ``copy`` and the
packed integer form stored in a group's ``FILTERS`` attribute (docs/format.md §3.4), so that
``hyperslab.Filters`` can stand in for ``tables.Filters``.  Unlike PyTables' class it is
immutable (and therefore hashable): use :meth:`Filters.copy` to derive a variant.

Decisions where PyTables gives no single answer
-----------------------------------------------
* ``complib='lzo'``: hyperslab can read a file that names LZO (``Filters._unpack`` and
  :func:`hyperslab.codecs.pipeline.pipeline_to_filters` give ``complib='lzo'``) but cannot
  write LZO, because no Python package provides that HDF5 filter.  Asking for it, as
  PyTables does on a build without LZO, issues a :class:`~hyperslab.errors.FiltersWarning`
  and uses ``'zlib'`` instead.
* ``least_significant_digit`` outside -128..127 raises ``ValueError`` (PyTables lets NumPy
  raise ``OverflowError``).
* Filters read from a file with a compressor PyTables cannot name (``'szip'``, and in
  hyperslab also ``'lzf'``, ``'zstd'``, ...) have ``complevel == -1`` as in PyTables; such an
  object cannot be packed (:meth:`Filters._pack` raises ``ValueError`` instead of writing a
  meaningless ``-1``) and cannot be turned back into a pipeline.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, Final, Literal

import numpy as np

from hyperslab.errors import FiltersWarning

BLOSC_CODECS: Final = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
"""Codecs that Blosc and Blosc2 offer to PyTables (its wheels have no snappy)."""

ALL_COMPLIBS: Final[tuple[str, ...]] = (
    "zlib",
    "lzo",
    "bzip2",
    "blosc",
    "blosc2",
    *(f"blosc:{codec}" for codec in BLOSC_CODECS),
    *(f"blosc2:{codec}" for codec in BLOSC_CODECS),
)
"""Every complib name, in PyTables' ``all_complibs`` order: ``index + 1`` is the id packed
into byte 1 of the ``FILTERS`` attribute (PyTables 3.11 wheels have exactly this list)."""

FOREIGN_COMPLIBS: Final = ("szip",)
"""Compressors PyTables recognizes in files but cannot write."""

DEFAULT_COMPLIB: Final = "zlib"
"""The compression library used when none is given."""

UNAVAILABLE_COMPLIBS: Final = frozenset({"lzo"})
"""Complibs this installation cannot write (readable names only)."""

_SHUFFLE_FLAG: Final = 0x1
_FLETCHER32_FLAG: Final = 0x2
_ROUNDING_FLAG: Final = 0x4
_BITSHUFFLE_FLAG: Final = 0x8

_FIELDS: Final = (
    "complevel",
    "complib",
    "shuffle",
    "bitshuffle",
    "fletcher32",
    "least_significant_digit",
)


def _check_complevel(complevel: Any) -> int:
    try:
        in_range = 0 <= complevel <= 9
    except TypeError:
        raise TypeError(
            "compression level must be an integer between 0 and 9, "
            f"not {type(complevel).__name__}: {complevel!r}"
        ) from None
    if not in_range:
        raise ValueError(f"compression level must be between 0 and 9, got {complevel!r}")
    return int(complevel)


def _check_lsd(least_significant_digit: Any) -> np.int8 | None:
    if least_significant_digit is None:
        return None
    try:
        digit = operator.index(least_significant_digit)
    except TypeError:
        try:
            digit = int(least_significant_digit)  # PyTables accepts e.g. 2.0
        except (TypeError, ValueError):
            raise TypeError(
                "least_significant_digit must be an integer or None, "
                f"not {type(least_significant_digit).__name__}: {least_significant_digit!r}"
            ) from None
    if not -128 <= digit <= 127:
        raise ValueError(
            f"least_significant_digit must be between -128 and 127, got {least_significant_digit!r}"
        )
    return np.int8(digit)


class Filters:
    """Container for the filter properties of a chunked leaf (PyTables-compatible).

    Parameters
    ----------
    complevel : int, default 0
        Compression level, 0..9; 0 disables compression (and then `complib`, `shuffle` and
        `least_significant_digit` are ignored).
    complib : str, default 'zlib'
        One of :data:`ALL_COMPLIBS`: ``'zlib'``, ``'lzo'``, ``'bzip2'``, ``'blosc'``,
        ``'blosc2'``, ``'blosc:<codec>'`` or ``'blosc2:<codec>'`` with codec in ``blosclz``,
        ``lz4``, ``lz4hc``, ``zlib``, ``zstd``.  ``'lzo'`` cannot be written here: it is
        replaced by ``'zlib'`` with a :class:`~hyperslab.errors.FiltersWarning`.
    shuffle : bool, default True
        Byte-shuffle before compressing (HDF5's filter, or Blosc's internal one).
    bitshuffle : bool, default False
        Bit-shuffle inside Blosc/Blosc2; it wins over `shuffle` when both are true.
    fletcher32 : bool, default False
        Add a Fletcher32 checksum to every chunk.
    least_significant_digit : int, optional
        Quantize floating-point data to ``10**-least_significant_digit`` before compressing.

    Raises
    ------
    ValueError
        If `complevel` is not in 0..9, `complib` is unknown while compressing, `bitshuffle`
        is asked of a non-Blosc library, or `least_significant_digit` is out of range.
    TypeError
        If `complevel` or `least_significant_digit` is not a number.

    Examples
    --------
    >>> Filters(complevel=5, complib="blosc2:zstd", bitshuffle=True)
    Filters(complevel=5, complib='blosc2:zstd', shuffle=False, bitshuffle=True, \
fletcher32=False, least_significant_digit=None)
    >>> Filters()
    Filters(complevel=0, shuffle=False, bitshuffle=False, fletcher32=False, \
least_significant_digit=None)
    >>> Filters(complevel=1)._pack()
    65793
    """

    __slots__ = ("_bitshuffle", "_complevel", "_complib", "_fletcher32", "_lsd", "_shuffle")

    _complevel: int
    _complib: str | None
    _shuffle: bool
    _bitshuffle: bool
    _fletcher32: bool
    _lsd: np.int8 | None

    def __init__(
        self,
        complevel: int = 0,
        complib: str = DEFAULT_COMPLIB,
        shuffle: bool = True,
        bitshuffle: bool = False,
        fletcher32: bool = False,
        least_significant_digit: int | None = None,
    ) -> None:
        self._setup(
            complevel, complib, shuffle, bitshuffle, fletcher32, least_significant_digit, True
        )

    def _setup(
        self,
        complevel: Any,
        complib: Any,
        shuffle: Any,
        bitshuffle: Any,
        fletcher32: Any,
        least_significant_digit: Any,
        new: bool,
    ) -> None:
        level = _check_complevel(complevel)
        if new and level > 0:
            # Only checked for new filters, not for those read from a file.
            if complib not in ALL_COMPLIBS:
                raise ValueError(
                    f"compression library {complib!r} is not supported; "
                    f"it must be one of: {', '.join(ALL_COMPLIBS)}"
                )
            if complib in UNAVAILABLE_COMPLIBS:
                warnings.warn(
                    f"compression library {complib!r} is not available; "
                    f"using {DEFAULT_COMPLIB!r} instead",
                    FiltersWarning,
                    stacklevel=3,
                )
                complib = DEFAULT_COMPLIB
        lib: str | None = str(complib)
        do_shuffle = bool(shuffle)
        do_bitshuffle = bool(bitshuffle)
        lsd = _check_lsd(least_significant_digit)
        if level == 0:
            lib = None
            do_shuffle = False
            lsd = None
        elif lib not in ALL_COMPLIBS:
            level = -1  # a foreign library read from a file: no meaningful level
        if lib is not None and do_bitshuffle and not lib.startswith("blosc"):
            raise ValueError(
                f"bitshuffle can only be used inside Blosc/Blosc2, not with complib {lib!r}"
            )
        if do_shuffle and do_bitshuffle:
            do_shuffle = False  # bitshuffle has priority
        set_ = object.__setattr__
        set_(self, "_complevel", level)
        set_(self, "_complib", lib)
        set_(self, "_shuffle", do_shuffle)
        set_(self, "_bitshuffle", do_bitshuffle)
        set_(self, "_fletcher32", bool(fletcher32))
        set_(self, "_lsd", lsd)

    @classmethod
    def _from_stored(
        cls,
        complevel: int = 0,
        complib: str | None = DEFAULT_COMPLIB,
        shuffle: bool = False,
        bitshuffle: bool = False,
        fletcher32: bool = False,
        least_significant_digit: int | None = None,
    ) -> Filters:
        """Build Filters described by a file, without the checks made on new filters.

        An unknown `complib` is kept and gives ``complevel == -1`` (PyTables' convention for
        foreign compressors such as ``'szip'``); ``'lzo'`` is kept as is.
        """
        obj = cls.__new__(cls)
        obj._setup(
            complevel, complib, shuffle, bitshuffle, fletcher32, least_significant_digit, False
        )
        return obj

    # ------------------------------------------------------------------ attributes

    @property
    def complevel(self) -> int:
        """The compression level (0 disables compression; -1 for a foreign compressor)."""
        return self._complevel

    @property
    def complib(self) -> str | None:
        """The compression library (``None`` when compression is disabled)."""
        return self._complib

    @property
    def shuffle(self) -> bool:
        """Whether the byte Shuffle filter is active."""
        return self._shuffle

    @property
    def bitshuffle(self) -> bool:
        """Whether Blosc's BitShuffle filter is active."""
        return self._bitshuffle

    @property
    def fletcher32(self) -> bool:
        """Whether the Fletcher32 checksum filter is active."""
        return self._fletcher32

    @property
    def least_significant_digit(self) -> np.int8 | None:
        """The least significant digit to which data are quantized, or ``None``."""
        return self._lsd

    @property
    def shuffle_bitshuffle(self) -> Literal[0, 1, 2]:
        """Blosc's shuffle code: 0 none, 1 byte shuffle, 2 bit shuffle."""
        if self._bitshuffle:
            return 2
        if self._shuffle:
            return 1
        return 0

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"Filters objects are immutable (cannot set {name!r}); use .copy({name}=...)"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Filters objects are immutable (cannot delete {name!r})")

    def _key(self) -> tuple[int, str | None, bool, bool, bool, int | None]:
        lsd = None if self._lsd is None else int(self._lsd)
        return (
            self._complevel,
            self._complib,
            self._shuffle,
            self._bitshuffle,
            self._fletcher32,
            lsd,
        )

    def _as_kwargs(self) -> dict[str, Any]:
        return dict(zip(_FIELDS, self._key(), strict=True))

    # ------------------------------------------------------------------ protocol

    def __repr__(self) -> str:
        args = []
        if self._complevel >= 0:  # a meaningful compression level
            args.append(f"complevel={self._complevel}")
        if self._complevel != 0:  # compression enabled (-1 or > 0)
            args.append(f"complib={self._complib!r}")
        args.append(f"shuffle={self._shuffle}")
        args.append(f"bitshuffle={self._bitshuffle}")
        args.append(f"fletcher32={self._fletcher32}")
        args.append(f"least_significant_digit={self._lsd}")
        return f"{type(self).__name__}({', '.join(args)})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Filters):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_restore, (type(self), self._key()))

    def __copy__(self) -> Filters:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Filters:
        return self

    def copy(self, **override: Any) -> Filters:
        """Return new Filters equal to these except for the keyword arguments given.

        The result is validated as a new ``Filters(...)`` would be, so
        ``Filters().copy(complevel=1)`` raises ``ValueError`` (no complib), as in PyTables.

        Raises
        ------
        TypeError
            If a keyword is not a constructor argument.
        """
        unknown = set(override) - set(_FIELDS)
        if unknown:
            raise TypeError(
                f"Filters.copy() got unexpected keyword argument(s): {', '.join(sorted(unknown))}"
            )
        kwargs = self._as_kwargs()
        kwargs.update(override)
        return type(self)(**kwargs)

    # ------------------------------------------------------------------ FILTERS attribute

    def _pack(self) -> int:
        """Pack into the 64-bit integer stored in PyTables' ``FILTERS`` attribute.

        Byte 0 is the level, byte 1 the complib id (``ALL_COMPLIBS.index + 1``, 0 when not
        compressing), byte 2 the flags (shuffle 0x1, fletcher32 0x2, rounding 0x4,
        bitshuffle 0x8) and byte 3 the least significant digit, sign-extended like
        PyTables' ``np.int64`` arithmetic.

        Raises
        ------
        ValueError
            For filters with a foreign compressor (``complevel == -1``), which PyTables
            cannot represent.
        """
        if self._complevel < 0:
            raise ValueError(
                f"cannot pack filters with the foreign compression library {self._complib!r}"
            )
        packed = 0 if self._lsd is None else int(self._lsd)
        flags = 0
        if self._shuffle:
            flags |= _SHUFFLE_FLAG
        if self._bitshuffle:
            flags |= _BITSHUFFLE_FLAG
        if self._fletcher32:
            flags |= _FLETCHER32_FLAG
        if self._lsd:  # as PyTables: a digit of 0 sets no rounding flag
            flags |= _ROUNDING_FLAG
        packed = (packed << 8) | flags
        lib_id = ALL_COMPLIBS.index(self._complib) + 1 if self._complevel > 0 else 0
        packed = (packed << 8) | lib_id
        return (packed << 8) | self._complevel

    @classmethod
    def _unpack(cls, packed: int) -> Filters:
        """Build Filters from the integer of a ``FILTERS`` attribute (see :meth:`_pack`).

        Raises
        ------
        ValueError
            If the level is above 9 or the complib id is not one of :data:`ALL_COMPLIBS`.
        """
        value = operator.index(packed)
        complevel = value & 0xFF
        complib: str | None = DEFAULT_COMPLIB
        if complevel > 0:
            lib_id = (value >> 8) & 0xFF
            if not 0 < lib_id <= len(ALL_COMPLIBS):
                raise ValueError(f"invalid compression library id {lib_id} in FILTERS {value}")
            complib = ALL_COMPLIBS[lib_id - 1]
        flags = (value >> 16) & 0xFF
        lsd: int | None = None
        if flags & _ROUNDING_FLAG:
            byte3 = (value >> 24) & 0xFF
            lsd = byte3 - 256 if byte3 > 127 else byte3
        return cls._from_stored(
            complevel=complevel,
            complib=complib,
            shuffle=bool(flags & _SHUFFLE_FLAG),
            bitshuffle=bool(flags & _BITSHUFFLE_FLAG),
            fletcher32=bool(flags & _FLETCHER32_FLAG),
            least_significant_digit=lsd,
        )


def _restore(
    cls: type[Filters], key: tuple[int, str | None, bool, bool, bool, int | None]
) -> Filters:
    """Rebuild pickled Filters exactly (used by ``Filters.__reduce__``)."""
    obj = cls.__new__(cls)
    level, lib, shuffle, bitshuffle, fletcher32, lsd = key
    set_ = object.__setattr__
    set_(obj, "_complevel", level)
    set_(obj, "_complib", lib)
    set_(obj, "_shuffle", shuffle)
    set_(obj, "_bitshuffle", bitshuffle)
    set_(obj, "_fletcher32", fletcher32)
    set_(obj, "_lsd", None if lsd is None else np.int8(lsd))
    return obj


__all__ = [
    "ALL_COMPLIBS",
    "BLOSC_CODECS",
    "DEFAULT_COMPLIB",
    "FOREIGN_COMPLIBS",
    "UNAVAILABLE_COMPLIBS",
    "Filters",
    "set_max_threads",
]


_MAX_THREADS: dict[str, int] = {"blosc": 1, "blosc2": 1}
# PyTables' per-process Blosc thread settings (its ``set_blosc_max_threads``), recorded only:
# hyperslab decodes each chunk in one thread and runs chunks in parallel instead.


def set_max_threads(library: str, nthreads: int) -> int:
    """Record ``nthreads`` as the thread setting of ``library`` (``'blosc'`` or
    ``'blosc2'``) and return the previous one (PyTables' ``set_blosc_max_threads``, which
    opening a file resets to ``MAX_BLOSC_THREADS``).

    The setting is not used: hyperslab compresses and decompresses Blosc and Blosc2 chunks
    one thread each, and many chunks at once on its own thread pool.

    Raises
    ------
    ValueError
        If ``library`` is not one of the two.
    """
    if library not in _MAX_THREADS:
        raise ValueError(f"no thread setting for library {library!r}")
    previous = _MAX_THREADS[library]
    _MAX_THREADS[library] = int(nthreads)
    return previous
