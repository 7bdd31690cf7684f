"""Automatic chunk shapes, computed as PyTables does but without looking at the host.

:func:`compute_chunkshape` follows PyTables' ``Leaf._calc_chunkshape`` (and
``VLArray._calc_chunkshape``), docs/format.md §3.6: the expected size of the dataset picks a
chunk size between 64 KiB and 8 MiB, Blosc2 tables and arrays use chunks 16 times larger
(Blosc2 reads blocks inside chunks), and the chunk is then shaped by trimming dimensions
from the main one.

PyTables replaces the 16x Blosc2 chunk size by the host's L3 cache size when
``py-cpuinfo`` reports an L3 larger than L2, so the same script writes different files on
different machines.  Here the 16x size is always used unless the caller passes
``cache_sizes`` explicitly: the result equals PyTables' on any host where L3 <= L2 (or
where cpuinfo reports no sizes).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Final

from hyperslab._typing import Shape
from hyperslab.codecs.validate import as_int

MB: Final = 1024 * 1024
BLOSC2_MAX_CHUNKSIZE: Final = 2**31 - 32
"""Blosc2 cannot compress a chunk larger than this (PyTables caps chunk sizes to it)."""
HDF5_MAX_CHUNK_BYTES: Final = 2**32 - 1
"""HDF5 refuses chunks of 4 GiB or more."""
BLOSC2_CLASSES: Final = frozenset({"TABLE", "CARRAY", "EARRAY"})
"""Leaf classes whose chunks PyTables enlarges for Blosc2."""


def _csformula(expected_mb: float) -> int:
    """Return the fitted chunk size in bytes for `expected_mb` (a power of 10)."""
    # 8 KiB for datasets <= 1 MB, doubling with every factor of 10 in size.
    return 8 * 1024 * int(2 ** math.log10(expected_mb))


def _limit_es(expected_mb: float) -> float:
    """Clamp the expected size in MB to 1 MB .. 10 TB."""
    if expected_mb < 1:
        return 1
    if expected_mb > 10**7:
        return 10**7
    return expected_mb


def calc_chunksize(expected_mb: float) -> int:
    """Return PyTables' chunk size in bytes for a dataset of `expected_mb` megabytes.

    Examples
    --------
    >>> calc_chunksize(0), calc_chunksize(15), calc_chunksize(10**9)
    (65536, 131072, 8388608)
    """
    zone = int(math.log10(_limit_es(expected_mb)))
    return _csformula(10**zone) * 8


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    return as_int(name, value, minimum)


def _as_shape(shape: Any, name: str = "shape") -> Shape:
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of integers, got {shape!r}") from None
    return tuple(_positive_int(f"{name}[{i}]", d, 0) for i, d in enumerate(dims))


def compute_chunkshape(
    shape: Sequence[int],
    itemsize: int,
    *,
    maindim: int = 0,
    expectedrows: int | None = None,
    complib: str | None = None,
    classname: str = "CARRAY",
    cache_sizes: tuple[int, int] | None = None,
) -> Shape:
    """Return the chunk shape PyTables chooses for a new chunked leaf.

    Parameters
    ----------
    shape : sequence of int
        The leaf's shape at creation (0 along the main dimension of an empty EArray or
        Table; ``(nrows,)`` for a Table).
    itemsize : int
        Bytes per element: the atom size for arrays, the row size for tables, the base
        atom size for VLArrays.
    maindim : int, default 0
        The main (extendable) dimension.
    expectedrows : int, optional
        Rows expected along `maindim`; defaults to ``shape[maindim]`` (what a CArray uses).
    complib : str, optional
        The leaf's compression library (``Filters.complib``; ``None`` if uncompressed).
    classname : str, default 'CARRAY'
        ``'TABLE'``, ``'CARRAY'``, ``'EARRAY'`` or ``'VLARRAY'`` (others are treated like
        arrays without the Blosc2 enlargement).
    cache_sizes : (int, int), optional
        ``(l2, l3)`` cache sizes in bytes to reproduce PyTables' host-dependent Blosc2
        chunk size (``l3`` when ``l3 > l2``); by default the result is host-independent.

    Returns
    -------
    tuple of int
        The chunk shape, of the same rank as `shape` (``(1,)`` for a scalar shape).

    Raises
    ------
    ValueError
        For negative dimensions, a zero dimension other than `maindim`, a non-positive
        `itemsize`, a negative `expectedrows` or an out-of-range `maindim`.

    Examples
    --------
    >>> compute_chunkshape((1000, 100), 8, complib="blosc2")
    (1310, 100)
    >>> compute_chunkshape((0, 4), 4, expectedrows=10**6, classname="EARRAY")
    (8192, 4)
    >>> compute_chunkshape((0,), 25, expectedrows=10**5, complib="zlib", classname="TABLE")
    (2621,)
    """
    dims = _as_shape(shape)
    size = _positive_int("itemsize", itemsize)
    kind = str(classname).upper()
    if kind == "VLARRAY":
        default_rows = dims[0] if dims else 0
        rows = _positive_int(
            "expectedrows", default_rows if expectedrows is None else expectedrows, 0
        )
        chunksize = calc_chunksize(rows * size / MB)
        return (max(chunksize // size, 1),)
    if dims == ():
        return (1,)
    main = _positive_int("maindim", maindim, 0)
    if main >= len(dims):
        raise ValueError(f"maindim {maindim!r} is out of range for shape {dims}")
    for i, d in enumerate(dims):
        if d == 0 and i != main:
            raise ValueError(
                f"shape {dims} has a zero-length dimension {i}; only maindim {main} may be 0"
            )
    rows = _positive_int("expectedrows", dims[main] if expectedrows is None else expectedrows, 0)
    rowsize = size * math.prod(d for i, d in enumerate(dims) if i != main)
    chunksize = calc_chunksize((rows * rowsize) // MB)
    if complib is not None and complib.startswith("blosc2") and kind in BLOSC2_CLASSES:
        chunksize *= 16
        if cache_sizes is not None:
            l2, l3 = cache_sizes
            if l3 > l2:
                chunksize = l3
        chunksize = min(chunksize, BLOSC2_MAX_CHUNKSIZE)
    chunknitems = max(chunksize // size, 1)
    return _shape_chunk(dims, main, chunknitems)


def _shape_chunk(dims: Shape, main: int, chunknitems: int) -> Shape:
    """Trim dimensions of `dims`, main one first, until a chunk holds ~`chunknitems`."""
    chunk = list(dims)
    chunk[main] = 1
    if math.prod(chunk) <= chunknitems:
        chunk[main] = chunknitems // math.prod(chunk)
        return tuple(chunk)
    for j in range(len(chunk)):
        chunk[j] = 1
        nitems = math.prod(chunk)
        if nitems <= chunknitems:
            chunk[j] = chunknitems // nitems
            return tuple(chunk)
    chunk[-1] = chunknitems  # pragma: no cover - the loop always ends on all-ones
    return tuple(chunk)


def validate_chunkshape(
    chunkshape: int | Sequence[int], shape: Sequence[int], *, itemsize: int | None = None
) -> Shape:
    """Check a user-given chunk shape against the dataset shape and normalize it.

    Parameters
    ----------
    chunkshape : int or sequence of int
        The requested chunk shape (an int stands for a 1-D chunk shape, as Table allows).
    shape : sequence of int
        The dataset shape.
    itemsize : int, optional
        Bytes per element; when given, chunks of 4 GiB or more (refused by HDF5) raise.

    Returns
    -------
    tuple of int
        The chunk shape as a tuple of Python ints.

    Raises
    ------
    ValueError
        If the rank differs from the shape's, a value is not a positive integer, or the
        chunk is too large for HDF5.
    TypeError
        If `chunkshape` is neither an integer nor a sequence.
    """
    dims = _as_shape(shape)
    if isinstance(chunkshape, bool):
        raise ValueError(f"chunkshape must hold positive integers, got {chunkshape!r}")
    if not isinstance(chunkshape, Sequence):
        try:
            chunkshape = (operator.index(chunkshape),)
        except TypeError:
            try:
                chunkshape = tuple(chunkshape)  # type: ignore[arg-type]
            except TypeError:
                raise TypeError(
                    "chunkshape must be an integer or a sequence of integers, "
                    f"not {type(chunkshape).__name__}: {chunkshape!r}"
                ) from None
    chunk = tuple(chunkshape)
    if len(chunk) != len(dims):
        raise ValueError(
            f"chunkshape {chunk} has rank {len(chunk)} but shape {dims} has rank {len(dims)}"
        )
    result = tuple(_positive_int(f"chunkshape[{i}]", c) for i, c in enumerate(chunk))
    if itemsize is not None:
        nbytes = math.prod(result) * _positive_int("itemsize", itemsize)
        if nbytes > HDF5_MAX_CHUNK_BYTES:
            raise ValueError(
                f"chunkshape {result} makes chunks of {nbytes} bytes; HDF5 allows < 4 GiB"
            )
    return result


def compute_maxshape_carray(shape: Sequence[int], chunkshape: Sequence[int]) -> Shape:
    """Return a CArray's HDF5 maximum shape: the larger of shape and chunk shape per dim.

    PyTables creates CArrays so that a chunk larger than the array still fits
    (docs/format.md §3.5).

    Examples
    --------
    >>> compute_maxshape_carray((1000, 100), (1310, 100))
    (1310, 100)

    Raises
    ------
    ValueError
        If the ranks differ.
    """
    dims = _as_shape(shape)
    chunk = _as_shape(chunkshape, "chunkshape")
    if len(dims) != len(chunk):
        raise ValueError(f"shape {dims} and chunkshape {chunk} have different ranks")
    return tuple(max(d, c) for d, c in zip(dims, chunk, strict=True))


__all__ = [
    "BLOSC2_CLASSES",
    "BLOSC2_MAX_CHUNKSIZE",
    "calc_chunksize",
    "compute_chunkshape",
    "compute_maxshape_carray",
    "validate_chunkshape",
]
