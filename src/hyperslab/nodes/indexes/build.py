"""Building a column index: the column sorted once, its values poured into PyTables' slices.

:func:`build_index` checks the request, creates the index group in PyTables' layout
(:mod:`hyperslab.nodes.indexes.layout`) under a temporary name, sorts the column out of core
(:mod:`hyperslab.nodes.indexes.sort`) in the row ranges the kind lets values move within
(:func:`segments`), fills the slices in sorted order (:class:`SliceWriter`), and only then
replaces any index the column had: an interrupted build leaves the old one, or none.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.codecs.filters import Filters
from hyperslab.errors import NaturalNameWarning
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.indexes.layout import (
    DEFAULT_INDEX_FILTERS,
    create_index_group,
    ensure_container,
    ensure_description_groups,
)
from hyperslab.nodes.indexes.progress import offset_progress, progress_for
from hyperslab.nodes.indexes.sizes import (
    KIND_INDSIZE,
    Geometry,
    bucket_rows,
    calc_blocksizes,
    reduction_level,
)
from hyperslab.nodes.indexes.sort import (
    DEFAULT_PIECE_ROWS,
    progress_total,
    run_rows_for,
    sorted_pieces,
)
from hyperslab.nodes.indexes.store import TABLE_ADDRESS, ColumnIndex, open_index
from hyperslab.nodes.indexes.writer import SliceWriter
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree

if TYPE_CHECKING:
    from hyperslab.nodes.indexes.source import TableSource

KINDS = tuple(KIND_INDSIZE)
"""PyTables' index kinds, lightest first."""

_BUILDING = ".~building"  # suffix of a column index group while it is built


def check_kind(kind: Any) -> str:
    """``kind`` if it is one of :data:`KINDS` (ValueError otherwise)."""
    if kind not in KINDS:
        raise ValueError(f"index kind must be one of {', '.join(map(repr, KINDS))}, "
                         f"not {kind!r}")
    return str(kind)


def check_optlevel(optlevel: Any) -> int:
    """``optlevel`` if it is an integer from 0 to 9 (ValueError otherwise)."""
    if (isinstance(optlevel, bool) or not isinstance(optlevel, (int, np.integer))
            or not 0 <= optlevel <= 9):
        raise ValueError(f"optimization level must be an integer from 0 to 9, "
                         f"not {optlevel!r}")
    return int(optlevel)


def check_blocksizes(blocksizes: Any) -> tuple[int, int, int, int] | None:
    """PyTables' ``_blocksizes``: ``(superblocksize, blocksize, slicesize, chunksize)``.

    Raises
    ------
    ValueError
        If it is not four positive integers with at least two chunks in a slice, whole
        slices in a block and whole blocks in a superblock.
    """
    if blocksizes is None:
        return None
    if not isinstance(blocksizes, tuple) or len(blocksizes) != 4 or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
            for v in blocksizes):
        raise ValueError(f"_blocksizes must be a tuple of 4 positive integers "
                         f"(superblocksize, blocksize, slicesize, chunksize), not "
                         f"{blocksizes!r}")
    superblock, block, slicesize, chunk = (int(v) for v in blocksizes)
    if slicesize <= chunk or block % slicesize or superblock % block:
        raise ValueError(f"_blocksizes {blocksizes!r}: a slice must hold more than one "
                         f"chunk, a block whole slices and a superblock whole blocks")
    return superblock, block, slicesize, chunk


def _check_filters(filters: Any) -> Filters:
    if filters is None:
        return DEFAULT_INDEX_FILTERS
    if not isinstance(filters, Filters):
        raise TypeError(f"filters must be a Filters instance, not {filters!r}")
    return filters


def build_index(
    table: TableSource,
    colpath: str,
    *,
    kind: str = "medium",
    optlevel: int = 6,
    filters: Filters | None = None,
    tmp_dir: str | None = None,
    blocksizes: tuple[int, int, int, int] | None = None,
    run_rows: int | None = None,
    progress: Any = False,
) -> ColumnIndex:
    """Build the index of column ``colpath`` of ``table`` (replacing any it has).

    Parameters
    ----------
    table : Table
        The table; every row it has is indexed, after its buffered rows are written.
    colpath : str
        The column's path name (``'x'``, ``'info/x'``).
    kind : {'ultralight', 'light', 'medium', 'full'}
        PyTables' kinds: what ``indices`` holds (buckets of rows counted in 8, 16 or
        32 bits, or rows).
    optlevel : int
        0 to 9: PyTables' sizes and reduction for that level.
    filters : Filters, optional
        Compression of the index; PyTables' default (zlib 1, shuffle) if None.
    tmp_dir : str, optional
        Where sorted runs are spilled when the column is sorted out of core.
    blocksizes : tuple of 4 int, optional
        PyTables' ``_blocksizes`` (superblock, block, slice and chunk sizes), else
        computed from the rows expected as PyTables does.
    run_rows : int, optional
        Rows sorted in memory at a time (default: what fits in about 256 MB).
    progress : bool or callable
        True: report progress on stderr for builds of more than a second; a callable
        is called with the count of rows done.

    Raises
    ------
    ValueError
        For a bad ``kind``, ``optlevel``, ``blocksizes`` or ``tmp_dir``.
    TypeError
        If the column cannot be indexed or ``filters`` is not a Filters.
    KeyError
        If the table has no column ``colpath``.
    """
    kind = check_kind(kind)
    optlevel = check_optlevel(optlevel)
    filters = _check_filters(filters)
    blocksizes = check_blocksizes(blocksizes)
    column = table._indexable_column(colpath)
    if tmp_dir is not None and not os.path.isdir(tmp_dir):
        raise ValueError(f"tmp_dir is not an existing directory: {tmp_dir!r}")
    file = table._v_file
    file._check_writable()
    table._ready()  # buffered rows go to the file first
    nrows = table.nrows
    dtype = column.dtype.newbyteorder("=")
    indsize = KIND_INDSIZE[kind]
    expectedrows = max(table._expectedrows, nrows)
    if blocksizes is None:
        blocksizes = calc_blocksizes(expectedrows, optlevel, indsize, dtype.itemsize,
                                     file.params.io_buffer_size)
    superblocksize, blocksize, slicesize, chunksize = blocksizes
    reduction = reduction_level(indsize, optlevel, slicesize, chunksize)
    chunks = table.chunkshape
    geometry = Geometry(superblocksize, blocksize, slicesize, chunksize, reduction,
                        indsize, bucket_rows(indsize, int(chunks[0]) if chunks else 1,
                                             chunksize, slicesize, blocksize))
    run_rows = run_rows or run_rows_for(dtype)
    parts = segments(nrows, geometry)
    totals = [progress_total(hi - lo, run_rows) for _, lo, hi in parts]
    report = progress_for(progress, f"indexing {table._v_pathname}.cols."
                          f"{colpath.replace('/', '.')}", nrows, sum(totals))
    container = ensure_container(table)
    parent = ensure_description_groups(table, container, colpath, filters)
    name = colpath.split("/")[-1]
    if name + _BUILDING in parent:  # left by an interrupted build
        file.remove_node(parent._f_get_child(name + _BUILDING), recursive=True)
    atom = Atom.from_dtype(dtype)
    group = create_index_group(table, parent, name + _BUILDING, name, geometry, optlevel,
                               filters, atom, table.byteorder, expectedrows)
    try:
        writer = SliceWriter(group, geometry)

        def read(lo: int, hi: int) -> AnyArray:
            return np.asarray(column[lo:hi], dtype=dtype)

        done = 0
        for (first_slice, lo, hi), total in zip(parts, totals, strict=True):
            options = {"run_rows": run_rows, "tmp_dir": tmp_dir,
                       "progress": offset_progress(report, done)}
            writer.fill(first_slice, _sorted_rows(read, lo, hi, options))
            done += total
        writer.finish()
        writer.write_is_csi(nrows)
        raw.write_int_attribute(group._g_h5id, TABLE_ADDRESS,
                                tree.object_address(table._g_h5id), "int64")
        raw.write_int_attribute(group._g_h5id, "DIRTY", 0, "int32")
    except BaseException:
        file.remove_node(group, recursive=True)
        raise
    if name in parent:
        file.remove_node(parent._f_get_child(name), recursive=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NaturalNameWarning)
        file.rename_node(group, name)
    table._indexing.reload()  # the table finds its indexes again, this one included
    index = open_index(table, colpath, required=True)
    assert index is not None
    return index


def segments(nrows: int, geometry: Geometry) -> list[tuple[int, int, int]]:
    """``(first slice, first row, end row)``: ranges of table rows whose values are sorted
    together and fill slices in order from the first slice (the last one of them also
    the last, partial row).  As wide as each kind lets values move (see
    :mod:`hyperslab.nodes.indexes.layout`)."""
    slicesize = geometry.slicesize
    full_rows = nrows // slicesize * slicesize
    if geometry.indsize == 8:
        return [(0, 0, nrows)] if nrows else []
    if geometry.indsize == 4:
        step = full_rows
    elif geometry.indsize == 2 and geometry.blocksize % geometry.lbucket == 0:
        step = geometry.blocksize
    else:
        step = slicesize
    segments = [(lo // slicesize, lo, min(lo + step, full_rows))
                for lo in range(0, full_rows, step or 1)] if full_rows else []
    if nrows > full_rows:
        segments.append((full_rows // slicesize, full_rows, nrows))
    return segments


def _sorted_rows(read: Any, lo: int, hi: int, options: dict[str, Any]
                 ) -> Iterator[tuple[AnyArray, AnyArray]]:
    """The values of rows ``lo .. hi - 1`` and their rows, sorted, in pieces."""
    for values, rows in sorted_pieces(lambda a, b: read(lo + a, lo + b), hi - lo,
                                      piece_rows=DEFAULT_PIECE_ROWS, **options):
        yield values, rows + lo


__all__ = [
    "KINDS",
    "build_index",
    "check_blocksizes",
    "check_kind",
    "check_optlevel",
    "segments",
]
