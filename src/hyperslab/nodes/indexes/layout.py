"""PyTables' on-disk layout of column indexes, written node by node.

A table's indexes live beside it, in a group ``_i_<table name>`` (CLASS ``TINDEX``; its
``AUTO_INDEX`` attribute is the table's ``autoindex`` once set).  Each indexed column has a
group there (CLASS ``INDEX``, version 2.1), under ``DINDEX`` groups for the parts of a
nested column's path (``_i_t/info/x``), holding::

    sorted      INDEXARRAY (nslices, slicesize / reduction)  each slice's values, sorted
    indices     INDEXARRAY (nslices, slicesize) uint<8 * indsize>  where each value is
    ranges      CACHEARRAY (nslices, 2)           first and last value of each slice
    bounds      CACHEARRAY (nslices, nbounds)     first value of chunks 1.. of each slice
    abounds, zbounds, mbounds   EARRAY            first, last and middle value of each chunk
    mranges     EARRAY                            the middle chunk's middle value per slice
    sortedLR    LASTROWARRAY                      the last, partial slice's values, then
                                                  its chunk bounds and its last value
    indicesLR   LASTROWARRAY                      where the last slice's values are

with the sizes of :mod:`hyperslab.nodes.indexes.sizes` as the group's attributes
(``superblocksize``, ``blocksize``, ``slicesize``, ``chunksize``, ``optlevel``,
``reduction``), its ``FILTERS``, ``DIRTY`` and, as PyTables leaves it, ``is_csi``.  The
last slice's counts are the ``nelements`` attributes of ``sortedLR`` and ``indicesLR``.

What ``indices`` holds depends on the kind (:func:`encode_indices`): full indexes hold row
numbers; the others the *bucket* of ``lbucket`` rows the value is in, counted from the
start of the table (medium), of the block of slices (light) or of the slice (ultralight).
So a value may move to another slice of the whole index (full, medium) or of its block
(light), or nowhere (ultralight), and the last slice holds exactly the rows after the full
slices (except in full indexes, which PyTables lets mix): PyTables relies on both when it
appends to an index.  Every writer here keeps to those rules, which
:mod:`hyperslab.nodes.indexes.store` states as it builds.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.chunked.chunkshape import compute_chunkshape
from hyperslab.codecs.filters import Filters
from hyperslab.errors import NaturalNameWarning
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.indexes.sizes import Geometry
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import join_path, split_path
from hyperslab.storage import attributes as raw

if TYPE_CHECKING:
    from hyperslab.nodes.indexes.source import TableSource

INDEX_VERSION = "2.1"
"""The VERSION of the column index groups written here (PyTables 2.1 and later)."""

DEFAULT_INDEX_FILTERS = Filters(complevel=1, complib="zlib", shuffle=True)
"""The compression of an index built without ``filters`` (PyTables' default)."""

CONTAINER_PREFIX = "_i_"
"""Prefix of the group beside a table that holds its indexes."""

SLICE_ARRAYS = ("sorted", "indices", "ranges", "bounds", "abounds", "zbounds", "mbounds",
                "mranges")
"""The arrays that grow by one row (or one chunk's worth) per full slice."""

_EXPECTED_ROWS_EARRAY = 1000  # what PyTables' bounds arrays are created for


def container_name(table_name: str) -> str:
    """The name of the group holding the indexes of the table called ``table_name``.

    Examples
    --------
    >>> container_name("readout")
    '_i_readout'
    """
    return CONTAINER_PREFIX + table_name


def container_path(table_path: str) -> str:
    """Where the indexes of the table at ``table_path`` are."""
    parent, name = split_path(table_path)
    return join_path(parent, container_name(name))


def index_path(table_path: str, colpath: str) -> str:
    """Where the index of column ``colpath`` of the table at ``table_path`` is.

    Examples
    --------
    >>> index_path("/run/t", "info/x")
    '/run/_i_t/info/x'
    """
    return join_path(container_path(table_path), colpath)


def _quiet_group(table: TableSource, parent: Group | str, name: str, title: str) -> Group:
    with warnings.catch_warnings():
        # Index node names are column names: natural naming need not reach them.
        warnings.simplefilter("ignore", NaturalNameWarning)
        return table._v_file.create_group(parent, name, title)


def _set_class(h5id: Any, classid: str, *, ascii: bool) -> None:
    raw.write_sys_string(h5id, "CLASS", classid, ascii=ascii)


def ensure_container(table: TableSource) -> Group:
    """The table's ``_i_`` group, created (CLASS ``TINDEX``) when absent.

    Raises
    ------
    TypeError
        If a node of that name is not a group.
    """
    file = table._v_file
    path = container_path(table._v_pathname)
    if path in file:
        group = file.get_node(path)
        if not isinstance(group, Group):
            raise TypeError(f"{path} is not a group, so it cannot hold the indexes of "
                            f"table {table._v_pathname}")
        return group
    parent, name = split_path(path)
    group = _quiet_group(table, parent, name, f"Indexes container for table {table._v_pathname}")
    _set_class(group._g_h5id, "TINDEX", ascii=False)
    return group


def ensure_description_groups(table: TableSource, container: Group, colpath: str,
                              filters: Filters) -> Group:
    """The group that holds the index of nested column ``colpath`` (``'info/x'``: the
    ``info`` group in the container, CLASS ``DINDEX``, created when absent)."""
    group = container
    parts = colpath.split("/")[:-1]
    for depth, part in enumerate(parts):
        path = join_path(group._v_pathname, part)
        if path in table._v_file:
            child = table._v_file.get_node(path)
            if not isinstance(child, Group):
                raise TypeError(f"{path} is not a group, so it cannot hold indexes")
            group = child
            continue
        dname = "/".join(parts[: depth + 1])
        group = _quiet_group(table, group, part,
                             f"Indexes container for sub-description {dname}")
        _set_class(group._g_h5id, "DINDEX", ascii=False)
        raw.write_int_attribute(group._g_h5id, "FILTERS", filters._pack(), "int64")
    return group


def create_index_group(table: TableSource, parent: Group, name: str, column_name: str,
                       geometry: Geometry, optlevel: int, filters: Filters,
                       atom: Atom, byteorder: str, expectedrows: int) -> Group:
    """Create an empty column index group ``name`` in ``parent``, as PyTables'
    ``Index.__init__`` does for a new index: its attributes (``DIRTY`` set: it matches no
    column yet) and its ten arrays, empty.

    Parameters
    ----------
    column_name : str
        The column's own name (its title is ``'Index for <column_name> column'``).
    atom : Atom
        The atom of the indexed values (the column's, without its shape).
    byteorder : str
        Byte order of the index's arrays on disk (PyTables uses the table's).
    expectedrows : int
        The rows the index is created for (sizes the ``ranges`` chunks, as in PyTables).
    """
    file = table._v_file
    group = _quiet_group(table, parent, name, f"Index for {column_name} column")
    gid = group._g_h5id
    _set_class(gid, "INDEX", ascii=False)
    raw.write_sys_string(gid, "VERSION", INDEX_VERSION)
    raw.write_int_attribute(gid, "DIRTY", 1, "int32")
    raw.write_int_attribute(gid, "FILTERS", filters._pack(), "int64")
    for attr, value, dtype in (("superblocksize", geometry.superblocksize, "uint64"),
                               ("blocksize", geometry.blocksize, "uint64"),
                               ("slicesize", geometry.slicesize, "uint32"),
                               ("chunksize", geometry.chunksize, "uint32"),
                               ("optlevel", optlevel, "int64"),
                               ("reduction", geometry.reduction, "int64")):
        raw.write_int_attribute(gid, attr, value, dtype)
    uatom = Atom.from_dtype(np.dtype(f"u{geometry.indsize}"))
    rss, rcs, nbounds = geometry.rslicesize, geometry.rchunksize, geometry.nbounds
    complib = filters.complib if filters.complevel else None
    ranges_chunk = compute_chunkshape((0, 2), atom.itemsize, maindim=0,
                                      expectedrows=expectedrows // geometry.slicesize,
                                      complib=complib, classname="CACHEARRAY")
    specs: list[tuple[str, Atom, tuple[int, ...], tuple[int, ...] | None, str, str]] = [
        ("sorted", atom, (0, rss), (1, rcs), "Sorted Values", "INDEXARRAY"),
        ("indices", uatom, (0, geometry.slicesize), (1, geometry.chunksize),
         "Number of chunk in table", "INDEXARRAY"),
        ("ranges", atom, (0, 2), ranges_chunk, "Range Values", "CACHEARRAY"),
        ("mranges", atom, (0,), None, "Median ranges", "EARRAY"),
        ("bounds", atom, (0, nbounds), (1, nbounds), "Boundary Values", "CACHEARRAY"),
        ("abounds", atom, (0,), None, "Start bounds", "EARRAY"),
        ("zbounds", atom, (0,), None, "End bounds", "EARRAY"),
        ("mbounds", atom, (0,), None, "Median bounds", "EARRAY"),
    ]
    for array_name, array_atom, shape, chunks, title, classid in specs:
        node = file.create_earray(group, array_name, array_atom, shape=shape, title=title,
                                  filters=filters, chunkshape=chunks, byteorder=byteorder,
                                  expectedrows=_EXPECTED_ROWS_EARRAY)
        if classid != "EARRAY":
            _set_class(node._g_h5id, classid, ascii=True)
    for array_name, array_atom, length, chunk, title in (
            ("sortedLR", atom, rss + 2 + nbounds, rcs, "Last Row sorted values + bounds"),
            ("indicesLR", uatom, geometry.slicesize, geometry.chunksize,
             "Last Row indices")):
        node = file.create_carray(group, array_name, array_atom, shape=(length,),
                                  title=title, filters=filters, chunkshape=(chunk,),
                                  byteorder=byteorder)
        _set_class(node._g_h5id, "LASTROWARRAY", ascii=True)
        raw.write_int_attribute(node._g_h5id, "nelements", 0, "int64")
    return group


def count_overlaps(ranges: AnyArray) -> int:
    """How many pairs of slices overlap, from their ``(first, last)`` values in index
    order (PyTables' ``compute_overlaps``: slice i overlaps a later slice j when its last
    value is above j's first; NaNs overlap nothing).

    Examples
    --------
    >>> count_overlaps(np.array([[0.0, 2.0], [1.0, 3.0], [3.0, 4.0]]))
    1
    """
    with np.errstate(invalid="ignore"):
        return int(sum(np.count_nonzero(ranges[i, 1] > ranges[i + 1 :, 0])
                       for i in range(len(ranges) - 1)))


# ---------------------------------------------------------------------- indices
def _bucket_offsets(slice_no: int, geometry: Geometry) -> tuple[int, int]:
    """``(table bucket of the slice's first row, what PyTables' decoding adds)`` for
    slice ``slice_no`` of a light or ultralight index."""
    lbucket, slicesize = geometry.lbucket, geometry.slicesize
    first = slice_no * slicesize // lbucket
    if geometry.indsize == 1:
        return first, first
    per_block = geometry.slices_per_block
    return first - (slice_no % per_block) * slicesize // lbucket, int(
        (slice_no // per_block) * (geometry.blocksize / lbucket))


def encode_indices(rows: AnyArray, slice_no: int, geometry: Geometry) -> AnyArray:
    """What ``indices`` holds for the values of table rows ``rows`` stored in slice
    ``slice_no``, as PyTables writes it: the rows (full), their bucket (medium), their
    bucket counted from the slice's block (light) or from the slice (ultralight).

    Raises
    ------
    ValueError
        If a row's bucket does not fit the kind's integers (a light index's value moved
        out of its block, say).

    Examples
    --------
    >>> g = Geometry(96, 24, 6, 3, 1, 1, 3)
    >>> encode_indices(np.array([6, 7, 11]), 1, g).tolist()
    [0, 0, 1]
    """
    rows = np.asarray(rows, dtype=np.int64)
    dtype = np.dtype(f"u{geometry.indsize}")
    if geometry.indsize == 8:
        return rows.astype(dtype)
    buckets = rows // geometry.lbucket
    if geometry.indsize == 4:
        encoded = buckets
    else:
        encoded = buckets - _bucket_offsets(slice_no, geometry)[0]
    if len(encoded) and (encoded.min() < 0 or encoded.max() > np.iinfo(dtype).max):
        raise ValueError(f"rows {rows.min()}..{rows.max()} cannot be located from slice "
                         f"{slice_no} of a {geometry.kind} index")
    return encoded.astype(dtype)


def decode_buckets(indices: AnyArray, slice_no: int, geometry: Geometry) -> AnyArray:
    """The table buckets (int64) of ``indices`` read from slice ``slice_no`` of a
    non-full index (PyTables' ``Index.get_chunkmap``).

    A light index whose blocks do not hold a whole number of buckets is located as
    PyTables locates it, which may be one bucket early: there the next bucket is added
    too, so the result always contains the right one.
    """
    buckets = np.asarray(indices).astype(np.int64)
    if geometry.indsize == 4:
        return buckets
    offset = _bucket_offsets(slice_no, geometry)[1]
    buckets += offset
    if geometry.indsize == 2 and geometry.blocksize % geometry.lbucket:
        buckets = np.concatenate([buckets, buckets + 1])
    return buckets


__all__ = [
    "CONTAINER_PREFIX",
    "DEFAULT_INDEX_FILTERS",
    "INDEX_VERSION",
    "SLICE_ARRAYS",
    "container_name",
    "container_path",
    "count_overlaps",
    "create_index_group",
    "decode_buckets",
    "encode_indices",
    "ensure_container",
    "ensure_description_groups",
    "index_path",
]
