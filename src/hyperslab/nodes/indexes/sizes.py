"""The sizes of a PyTables column index: superblock, block, slice and chunk.

A PyTables index (``tables/index.py``) cuts the sorted values of a column into *slices* of
``slicesize`` values, each one row of the 2-D ``sorted`` and ``indices`` arrays, stored in
chunks of ``chunksize`` values; *blocks* group slices (light indexes count their table
buckets from the start of a block), *superblocks* group blocks.  Lighter kinds keep one
value in ``reduction`` of each sorted slice and locate rows by *bucket* (``lbucket`` table
rows) instead of by row.  The arithmetic here is PyTables' own (``tables/idxutils.py``,
``Index.lbucket``), so that the same column, rows expected and options give the same
sizes and the same layout in both libraries.

Pure arithmetic: nothing here touches a file.
"""

from __future__ import annotations

import math
from typing import NamedTuple

KIND_INDSIZE: dict[str, int] = {"ultralight": 1, "light": 2, "medium": 4, "full": 8}
"""Bytes of one entry of ``indices`` per index kind."""

INDSIZE_KIND: dict[int, str] = {size: kind for kind, size in KIND_INDSIZE.items()}
"""Index kind per entry size of ``indices``."""

_REDUCTIONS = {
    1: (8, 8, 8, 8, 4, 4, 4, 2, 2, 1),
    2: (4, 4, 4, 4, 2, 2, 2, 1, 1, 1),
    4: (2, 2, 2, 2, 1, 1, 1, 1, 1, 1),
    8: (1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
}

BUFFER_TIMES = 100
"""PyTables' ``BUFFER_TIMES``: slices are halved while one takes more than this many I/O
buffers."""


def _csformula(nrows: float) -> float:
    return 64 * 2 ** math.log10(nrows)


def _limit_er(expectedrows: int) -> int:
    return min(max(expectedrows, 10**5), 10**12)


def compute_chunksize(expectedrows: int) -> int:
    """PyTables' index chunk size for ``expectedrows`` (``idxutils.computechunksize``).

    Examples
    --------
    >>> compute_chunksize(1000), compute_chunksize(300_000), compute_chunksize(10**7)
    (2048, 2048, 8192)
    """
    zone = int(math.log10(_limit_er(expectedrows)))
    return int(_csformula(10**zone))


def compute_slicesize(expectedrows: int, memlevel: int = 4) -> int:
    """PyTables' index slice size for ``expectedrows`` (``idxutils.computeslicesize``)."""
    expectedrows = _limit_er(expectedrows)
    chunksize = compute_chunksize(expectedrows)
    slicesize = int(_csformula(expectedrows) * memlevel**2)
    slicesize = (slicesize // chunksize) * chunksize * 4
    return min(slicesize, 2**30)


def compute_blocksize(expectedrows: int, compoundsize: int, lowercompoundsize: int) -> int:
    """Size of a (super)block of ``compoundsize`` units made of ``lowercompoundsize`` ones,
    for ``expectedrows`` (PyTables' ``idxutils.computeblocksize``)."""
    nlowerblocks = min(expectedrows // lowercompoundsize + 1, 2**20)
    size = lowercompoundsize * nlowerblocks
    return (size // compoundsize + 1) * compoundsize


def _correct_for_optlevel(indsize: int, optlevel: int, chunksize: int, slicesize: int
                          ) -> tuple[int, int]:
    """PyTables' ``ccs_ultralight`` / ``ccs_light`` / ``ccs_medium`` / ``ccs_full``."""
    if indsize == 1:
        if optlevel <= 2:
            slicesize //= 2
            slicesize += optlevel * slicesize
        else:
            slicesize *= optlevel - 1
        return chunksize, slicesize
    if optlevel <= 2:
        slicesize //= 2
    elif 6 <= optlevel <= 8:
        chunksize //= 2
    elif optlevel == 9:
        chunksize //= 2
        slicesize *= 2
    return chunksize, slicesize


def calc_blocksizes(expectedrows: int, optlevel: int, indsize: int, itemsize: int,
                    io_buffer_size: int = 16 * 1024 * 1024) -> tuple[int, int, int, int]:
    """``(superblocksize, blocksize, slicesize, chunksize)`` of a new index, as PyTables'
    ``idxutils.calc_chunksize`` gives them.

    Parameters
    ----------
    expectedrows : int
        Rows the table is expected to have (PyTables: the table's ``expectedrows``, or its
        row count when larger).
    optlevel : int
        0 to 9.
    indsize : int
        1, 2, 4 or 8 (ultralight, light, medium, full).
    itemsize : int
        Bytes of one indexed value.
    io_buffer_size : int
        PyTables' ``IO_BUFFER_SIZE`` (slices larger than ``BUFFER_TIMES`` of them are
        halved).

    Examples
    --------
    >>> calc_blocksizes(1000, 6, 4, 4)
    (262144, 131072, 131072, 1024)
    >>> calc_blocksizes(300_000, 9, 8, 8)
    (720896, 360448, 360448, 1024)
    >>> calc_blocksizes(300_000, 3, 1, 8)
    (720896, 360448, 360448, 2048)
    """
    return calc_chunksize(expectedrows, optlevel, indsize,
                          max_slice_bytes=(itemsize, BUFFER_TIMES * io_buffer_size))


def calc_chunksize(expectedrows: int, optlevel: int = 6, indsize: int = 4, memlevel: int = 4,
                   max_slice_bytes: tuple[int, int] | None = None
                   ) -> tuple[int, int, int, int]:
    """``(superblocksize, blocksize, slicesize, chunksize)``: PyTables'
    ``idxutils.calc_chunksize``.

    Parameters
    ----------
    expectedrows, optlevel, indsize
        As :func:`calc_blocksizes`.
    memlevel : int
        PyTables' memory level (slices grow with its square).
    max_slice_bytes : (int, int), optional
        ``(itemsize, bytes)``: slices of ``itemsize`` values are halved until they take no
        more than ``bytes`` (PyTables does this when given an index node); none by default.

    Examples
    --------
    >>> calc_chunksize(1000, memlevel=1)
    (16384, 8192, 8192, 1024)
    """
    chunksize = compute_chunksize(expectedrows)
    slicesize = compute_slicesize(expectedrows, memlevel)
    if max_slice_bytes is not None:
        itemsize, limit = max_slice_bytes
        while slicesize * itemsize > limit:
            slicesize //= 2
    chunksize, slicesize = _correct_for_optlevel(indsize, optlevel, chunksize, slicesize)
    blocksize = compute_blocksize(expectedrows, slicesize, chunksize)
    superblocksize = compute_blocksize(expectedrows, blocksize, slicesize)
    return superblocksize, blocksize, slicesize, chunksize


def reduction_level(indsize: int, optlevel: int, slicesize: int, chunksize: int) -> int:
    """One sorted value kept in how many (PyTables' ``idxutils.get_reduction_level``).

    Examples
    --------
    >>> reduction_level(1, 3, 360448, 2048), reduction_level(2, 6, 180224, 1024)
    (8, 2)
    >>> reduction_level(4, 6, 180224, 1024), reduction_level(8, 0, 1024, 128)
    (1, 1)
    """
    level = _REDUCTIONS[indsize][optlevel]
    if level >= slicesize or slicesize <= chunksize * level:
        level = 1
    return level


def bucket_rows(indsize: int, table_chunkrows: int, chunksize: int, slicesize: int,
                blocksize: int) -> int:
    """Table rows per bucket of a non-full index (PyTables' ``Index.lbucket``): at most
    the table's chunk, and large enough that an ultralight index counts no more than
    2**8 buckets in a slice and a light one no more than 2**16 in a block.

    Examples
    --------
    >>> bucket_rows(4, 41943, 1024, 180224, 360448)
    1024
    >>> bucket_rows(1, 41943, 2048, 1441792, 1441792)
    5632
    """
    lbucket = min(table_chunkrows, chunksize)
    if indsize == 1 and slicesize > 2**8 * lbucket:
        lbucket = math.ceil(slicesize / 2**8)
    elif indsize == 2 and blocksize > 2**16 * lbucket:
        lbucket = math.ceil(blocksize / 2**16)
    return lbucket


class Geometry(NamedTuple):
    """The sizes of one index (all counts of values; see the module docstring)."""

    superblocksize: int
    blocksize: int
    slicesize: int
    chunksize: int
    reduction: int
    indsize: int
    lbucket: int

    @property
    def kind(self) -> str:
        """``'ultralight'``, ``'light'``, ``'medium'`` or ``'full'``."""
        return INDSIZE_KIND[self.indsize]

    @property
    def rslicesize(self) -> int:
        """Sorted values kept per slice."""
        return self.slicesize // self.reduction

    @property
    def rchunksize(self) -> int:
        """Sorted values kept per chunk of a slice."""
        return self.chunksize // self.reduction

    @property
    def nbounds(self) -> int:
        """Chunk boundaries stored per slice (``bounds`` row length)."""
        return (self.rslicesize - 1) // self.rchunksize

    @property
    def slices_per_block(self) -> int:
        """Slices in one block."""
        return self.blocksize // self.slicesize

    def kept(self, entries: int) -> int:
        """Sorted values kept for a last row of ``entries`` entries."""
        return -(-entries // self.reduction)

    def last_row_edges(self, kept: int) -> int:
        """Values after the ``kept`` sorted values of the last row in ``sortedLR``: the
        first value of each of its chunks, then its last value (none for an empty row)."""
        return (kept - 1) // self.rchunksize + 2 if kept else 0


__all__ = [
    "BUFFER_TIMES",
    "INDSIZE_KIND",
    "KIND_INDSIZE",
    "Geometry",
    "bucket_rows",
    "calc_blocksizes",
    "calc_chunksize",
    "compute_blocksize",
    "compute_chunksize",
    "compute_slicesize",
    "reduction_level",
]
