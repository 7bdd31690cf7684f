"""The stored index of one table column (:class:`ColumnIndex`).

An index is a completely sorted copy of the column, stable (equal values keep their row
order) with NaNs last, plus the row number of every value.  It lives in hidden nodes beside
the table, which PyTables never looks at::

    <table's parent>/_p_hsindex_<table name>/       group; attr AUTO_INDEX (optional)
        <column key>/                               group, one per indexed column
            sorted    EArray of the column's dtype  the values in order
            rows      EArray uint32 (int64 for tables of more than 2**32 rows)
            firsts    Array (or attr FIRSTS)        the first value of every chunk of sorted

The column key is the column's path with ``/`` replaced by ``.`` (``'info.x'``).  Both
EArrays share one chunk shape, so ``firsts`` (small, read once) finds the one chunk of
``sorted`` that holds a boundary: a lookup reads one chunk per bound.  Up to
:data:`FIRSTS_ATTRIBUTE_BYTES` the firsts are the group's attribute ``FIRSTS`` instead of an
array: read with the group's header, they cost no dataset opening.  The column group's
attributes are ``COLPATH``, ``KIND``, ``OPTLEVEL`` and ``HS_INDEX``, six int64 read at once
(each attribute read costs about 20 us):

0. the layout version, :data:`HS_INDEX_VERSION`;
1. the file address of the table's object header: an index found beside a table that is
   not the one it was built for (e.g. a new table given the name of one another program
   renamed) is ignored;
2. dirty: 1 when the index may not match the column;
3. the rows indexed (rows ``0 ..`` of the table);
4. the position of the first NaN (the count of non-NaN values);
5. how many positions hold their own row number (all of them in a table sorted by the
   column: lookups there need not read ``rows``).

Layout 1 (still read; any change writes layout 2) kept these as the attributes
``HS_INDEX_VERSION``, ``TABLE_ADDRESS``, ``DIRTY``, ``NELEMENTS`` and ``NAN_START``, had no
count of positions in order, and always a ``firsts`` array.

Every kind and optlevel builds the same complete sort; both are recorded as metadata, and
``kind='full'`` with ``optlevel=9`` is a CSI (completely sorted index) as in PyTables.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.codecs.filters import Filters
from hyperslab.errors import HDF5ExtError, NaturalNameWarning
from hyperslab.nodes.array import EArray
from hyperslab.nodes.atom import Atom
from hyperslab.nodes.group import Group
from hyperslab.nodes.indexsort import (
    DEFAULT_PIECE_ROWS,
    ProgressFunc,
    progress_total,
    run_rows_for,
    sorted_pieces,
    stable_argsort,
)
from hyperslab.nodes.naming import join_path
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.vectors import Vector, read_vector_attribute

if TYPE_CHECKING:
    from hyperslab.nodes.table import Table
    from hyperslab.nodes.tablecols import Column

INDEX_GROUP_PREFIX = "_p_hsindex_"
"""Prefix of the hidden group holding a table's indexes (``_p_`` is hidden by PyTables)."""

HS_INDEX_VERSION = 2
"""The layout version written in every column index group."""

STATE_ATTRIBUTE = "HS_INDEX"
"""The column group's attribute of six int64: version, table address, dirty, rows indexed,
first NaN position, positions in order (see the module docstring)."""

_LAYOUT_1_ATTRIBUTES = ("HS_INDEX_VERSION", "TABLE_ADDRESS", "DIRTY", "NELEMENTS",
                        "NAN_START")

KINDS = ("ultralight", "light", "medium", "full")
"""PyTables' index kinds (all recorded as metadata over the same complete sort)."""

DEFAULT_INDEX_FILTERS = Filters(5, "blosc2:lz4", shuffle=True)
"""Compression of indexes when ``build`` gets no filters."""

IN_MEMORY_MERGE_ROWS = 4_000_000
"""``append_rows`` merges in memory when the index values it must move (those after the
first new value's place) plus the new ones are at most this many; else it rebuilds."""

FIRSTS_ATTRIBUTE_BYTES = 48 * 1024
"""Firsts of up to this many bytes are stored as an attribute of the column group (HDF5
keeps an attribute in its object's header only below 64 KiB)."""

_CHUNK_BYTES = 32 * 1024  # target bytes of one chunk of 'sorted' (a lookup decodes one)
_MIN_CHUNK_ROWS = 4096
_MAX_CHUNK_ROWS = 131072
_BUILDING = ".~building"  # suffix of a column group while it is built
_CACHED_CHUNKS = 8
_now = time.monotonic  # the progress report's clock


def index_group_name(table_name: str) -> str:
    """The name of the hidden group holding the indexes of table ``table_name``.

    Examples
    --------
    >>> index_group_name("readout")
    '_p_hsindex_readout'
    """
    return INDEX_GROUP_PREFIX + table_name


def column_key(colpath: str) -> str:
    """The node name of the index of column ``colpath`` (``'info/x'`` -> ``'info.x'``)."""
    return colpath.replace("/", ".")


def chunk_rows_for(itemsize: int) -> int:
    """Elements per chunk of an index of values of ``itemsize`` bytes: a power of two near
    32 KiB of values, between 4096 and 131072.

    A lookup decodes one chunk per bound, and a query right after opening pays for that
    in full: a first read of a 32 KiB chunk of float64 values took 80 us where one of
    256 KiB took 130 us, for 7% more bytes on disk (10 million values).

    Examples
    --------
    >>> chunk_rows_for(8), chunk_rows_for(4), chunk_rows_for(1), chunk_rows_for(100)
    (4096, 8192, 32768, 4096)
    """
    rows = 2 ** round(math.log2(_CHUNK_BYTES / max(itemsize, 1)))
    return int(min(_MAX_CHUNK_ROWS, max(_MIN_CHUNK_ROWS, rows)))


# ---------------------------------------------------------------------- validation
def _check_kind(kind: Any) -> str:
    if kind not in KINDS:
        raise ValueError(f"index kind must be one of {', '.join(map(repr, KINDS))}, "
                         f"not {kind!r}")
    return str(kind)


def _check_optlevel(optlevel: Any) -> int:
    if (isinstance(optlevel, bool) or not isinstance(optlevel, (int, np.integer))
            or not 0 <= optlevel <= 9):
        raise ValueError(f"optimization level must be an integer from 0 to 9, "
                         f"not {optlevel!r}")
    return int(optlevel)


def _check_filters(filters: Any) -> Filters:
    if filters is None:
        return DEFAULT_INDEX_FILTERS
    if not isinstance(filters, Filters):
        raise TypeError(f"filters must be a Filters instance, not {filters!r}")
    return filters


def _indexable_column(table: Table, colpath: str) -> Column:
    """The leaf column ``colpath`` of ``table``, if an index can hold it."""
    from hyperslab.nodes.tablecols import Column

    column = table.cols._f_col(colpath)  # KeyError naming the column
    where = f"column {colpath!r} of table {table._v_pathname}"
    if not isinstance(column, Column):
        raise TypeError(f"{where} is a nested group of columns and cannot be indexed")
    dtype = column.dtype
    if dtype.shape != ():
        raise TypeError(f"{where} has multidimensional cells {dtype.shape} and cannot be "
                        f"indexed")
    if dtype.kind == "c":
        raise TypeError(f"{where} is complex ({dtype}) and cannot be indexed")
    if dtype.kind not in "biufS":
        raise TypeError(f"{where} has dtype {dtype}, which cannot be indexed")
    return column


def _new_group(table: Table, parent: Group, name: str, title: str) -> Group:
    with warnings.catch_warnings():
        # Index node names ('info.x', a column called 'name') need no natural naming.
        warnings.simplefilter("ignore", NaturalNameWarning)
        return table._v_file.create_group(parent, name, title)


def _rename(table: Table, group: Group, name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NaturalNameWarning)
        table._v_file.rename_node(group, name)


def _remove_child(group: Group, name: str) -> None:
    """Remove child ``name`` of ``group`` (recursively) if there is one."""
    if name in group:
        group._v_file.remove_node(group._f_get_child(name), recursive=True)


def _table_group(table: Table, create: bool = False) -> Group | None:
    """The table's index group (created when ``create``; else None when absent)."""
    parent = table.parent
    name = index_group_name(table.name)
    if name in parent:
        group = parent._f_get_child(name)
        if not isinstance(group, Group):
            raise TypeError(f"{group._v_pathname} is not a group, so it cannot hold the indexes "
                            f"of table {table._v_pathname}")
        return group
    if not create:
        return None
    return _new_group(table, parent, name, f"hyperslab indexes of table {table._v_pathname}")


def _non_nan(values: AnyArray) -> int:
    if values.dtype.kind != "f":
        return len(values)
    return len(values) - int(np.count_nonzero(np.isnan(values)))


# ---------------------------------------------------------------------- progress
class _StderrProgress:
    """A one-line progress report on stderr, at most once a second, from the first second."""

    def __init__(self, label: str, total: int) -> None:
        self._label = label
        self._total = max(total, 1)
        self._start = _now()
        self._last = self._start
        self._shown = False

    def __call__(self, done: int) -> None:
        now = _now()
        finished = done >= self._total
        if now - self._last < 1.0 and not (finished and self._shown):
            return
        self._last = now
        self._shown = True
        percent = 100 * done // self._total
        sys.stderr.write(f"\r{self._label}: {percent:3d}% ({done}/{self._total}) "
                         f"{now - self._start:.0f} s")
        if finished:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _progress_for(progress: Any, label: str, nrows: int, run_rows: int
                  ) -> ProgressFunc | None:
    if progress is None or progress is False:
        return None
    total = progress_total(nrows, run_rows)
    if progress is True:
        return _StderrProgress(label, total)
    if callable(progress):
        user: Callable[[int], Any] = progress

        def rows_done(done: int) -> None:
            user(done * nrows // total if total else 0)

        return rows_done
    raise TypeError(f"progress must be a bool or a callable, not {progress!r}")


def _fails_lower_inclusive(values: AnyArray, bound: Any) -> AnyArray:
    """``not (values >= bound)``: true for the values below an inclusive lower bound (all
    of them when the bound is NaN)."""
    return np.logical_not(np.greater_equal(values, bound))


def _fails_lower(values: AnyArray, bound: Any) -> AnyArray:
    """``not (values > bound)``."""
    return np.logical_not(np.greater(values, bound))


# ---------------------------------------------------------------------- the index
class ColumnIndex:
    """The stored index of one table column: its values sorted, with their row numbers.

    Build one with :meth:`build`, find one with :meth:`open` or :func:`table_indexes`.
    :meth:`positions` turns a value interval into a range of positions in sorted order,
    :meth:`rows` and :meth:`values` read what lies there.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "indexed.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     t = f.create_table("/", "t", np.dtype([("x", "f8")]))
    ...     t.append(np.array([(3.0,), (np.nan,), (1.0,), (2.0,)], dtype=t.dtype))
    ...     index = ColumnIndex.build(t, "x")
    ...     p0, p1 = index.positions(1.5, True, None, False)
    ...     print(index, index.rows(p0, p1), index.values(0, 4))
    Index(6, medium, shuffle, blosc2:lz4(5)).is_csi=False [3 0] [ 1.  2.  3. nan]
    """

    def __init__(self, table: Table, group: Group | None, colpath: str | None = None, *,
                 gid: Any = None, path: str | None = None,
                 state: _State | None = None) -> None:
        self._table = table
        if group is not None:
            self._load(group, colpath, state)
        else:
            assert gid is not None and path is not None and colpath is not None
            self._adopt(gid, None, path, colpath, state)

    def _load(self, group: Group, colpath: str | None = None,
              state: _State | None = None) -> None:
        """Read the index in ``group`` (``colpath`` and ``state``: its COLPATH and
        state, when the caller has already read them)."""
        gid = group._g_h5id
        if colpath is None:
            colpath = _string_attribute(gid, "COLPATH")
        self._adopt(gid, group, group._v_pathname, colpath, state)

    def _adopt(self, gid: Any, group: Group | None, path: str, colpath: str,
               state: _State | None = None) -> None:
        """Take the index whose column group is open as ``gid`` (its node ``group`` when
        the caller has one: else it is loaded when a change needs it).

        Raises
        ------
        HDF5ExtError
            If the group holds no state of a layout read here.
        """
        # What deciding whether a query can use the index needs is read now; the arrays
        # and the rest when first needed (a table with several indexes opens only those
        # its queries use: each costs attribute reads and dataset openings).  Reads go
        # through the storage layer, not through nodes: a query right after opening the
        # file pays no node creation for the index's group and arrays.
        self._gid = gid
        self._group_ = group
        self._group_path = path
        self._colpath = colpath
        self._kind_: str | None = None
        self._optlevel_: int | None = None
        if state is None:
            state = _read_state(gid)
            if state is None:
                raise HDF5ExtError(f"{path} holds no index of a layout read here")
        self._table_address = state.table_address
        self._dirty = state.dirty
        self._nelements = state.nelements
        self._nan_start = state.nan_start
        self._in_order = state.in_order
        self._arrays: tuple[Vector, int, np.dtype[Any]] | None = None
        self._rows_vector_: Vector | None = None  # opened when rows are first read
        self._firsts_: AnyArray | None = None
        self._chunks: dict[tuple[int, bool], AnyArray] = {}
        self._chunks_lock = threading.Lock()  # queries may run in several threads

    @property
    def _group(self) -> Group:
        """The node of the index's column group (loaded when first needed)."""
        group = self._group_
        if group is None:
            group = self._group_ = self._table._v_file._get_group(self._group_path)
        return group

    def _open_arrays(self) -> tuple[Vector, int, np.dtype[Any]]:
        """The ``sorted`` array, its chunk length and the values' native dtype (opened
        once).

        Raises
        ------
        HDF5ExtError
            If the index group lacks it or it is not a 1-D array.
        """
        arrays = self._arrays
        if arrays is None:
            sorted_values = self._array("sorted")
            chunks = sorted_values.chunks
            chunkrows = int(chunks[0]) if chunks else _MAX_CHUNK_ROWS
            arrays = self._arrays = (sorted_values, chunkrows, sorted_values.dtype)
        return arrays

    def _rows_vector(self) -> Vector:
        """The ``rows`` array (opened once, when first read: lookups in a table sorted by
        the column never need it).

        Raises
        ------
        HDF5ExtError
            If the index group lacks it or it is not a 1-D array of integers in the chunk
            shape of ``sorted``.
        """
        rows = self._rows_vector_
        if rows is None:
            chunks = self._open_arrays()[0].chunks
            rows = self._array("rows")
            if chunks != rows.chunks or rows.dtype.kind not in "iu":
                raise HDF5ExtError(f"the index arrays in {self._group_path} are malformed: "
                                   f"'sorted' in chunks {chunks}, 'rows' of {rows.dtype} "
                                   f"in chunks {rows.chunks}")
            self._rows_vector_ = rows
        return rows

    def _array(self, name: str) -> Vector:
        """Open the array ``name`` of the index group (reads only: changes go through the
        group's nodes)."""
        path = f"{self._group_path}/{name}"
        try:
            return Vector(tree.open_child(self._gid, name), path)
        except KeyError:
            raise HDF5ExtError(f"the index in {self._group_path} has no {name!r} dataset: "
                               f"the file is malformed") from None
        except TypeError as exc:
            raise HDF5ExtError(f"the index array {path} is malformed: {exc}") from None

    @property
    def _sorted(self) -> EArray:
        """The node of the sorted values (changes go through it)."""
        node = self._group._f_get_child("sorted")
        assert isinstance(node, EArray)
        return node

    @property
    def _rows(self) -> EArray:
        """The node of the row numbers (changes go through it)."""
        node = self._group._f_get_child("rows")
        assert isinstance(node, EArray)
        return node

    @property
    def _chunkrows(self) -> int:
        return self._open_arrays()[1]

    @property
    def _kind(self) -> str:
        if self._kind_ is None:
            self._kind_ = _string_attribute(self._gid, "KIND")
        return self._kind_

    @property
    def _optlevel(self) -> int:
        if self._optlevel_ is None:
            self._optlevel_ = raw.read_int_attribute(self._gid, "OPTLEVEL")
        return self._optlevel_

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        table: Table,
        colpath: str,
        *,
        kind: str = "medium",
        optlevel: int = 6,
        filters: Filters | None = None,
        tmp_dir: str | None = None,
        run_rows: int | None = None,
        chunkrows: int | None = None,
        progress: bool | Callable[[int], Any] = False,
    ) -> ColumnIndex:
        """Build the index of column ``colpath`` of ``table`` (replacing any it has).

        Parameters
        ----------
        table : Table
            The table; every row it has (``table.nrows``) is indexed, after its buffered
            rows are written.
        colpath : str
            The column's path name (``'x'``, ``'info/x'``).
        kind : {'ultralight', 'light', 'medium', 'full'}
            Recorded, as PyTables' kinds (every kind is a complete sort).
        optlevel : int
            0 to 9, recorded.
        filters : Filters, optional
            Compression of the index; Blosc2 LZ4 level 5 with shuffle by default.
        tmp_dir : str, optional
            Where sorted runs are spilled when the column is sorted out of core.
        run_rows : int, optional
            Rows sorted in memory at a time (default: what fits in about 256 MB).
        chunkrows : int, optional
            Elements per chunk of the index's arrays (default: :func:`chunk_rows_for` the
            column's itemsize); a lookup reads one chunk per bound.
        progress : bool or callable
            True: report progress on stderr for builds of more than a second; a callable
            is called with the count of rows done.

        Raises
        ------
        ValueError
            For a bad ``kind``, ``optlevel``, ``tmp_dir`` or ``chunkrows``.
        TypeError
            If the column cannot be indexed (complex, multidimensional cells, a nested
            group of columns) or ``filters`` is not a Filters.
        KeyError
            If the table has no column ``colpath``.
        """
        kind = _check_kind(kind)
        optlevel = _check_optlevel(optlevel)
        filters = _check_filters(filters)
        column = _indexable_column(table, colpath)
        if tmp_dir is not None and not os.path.isdir(tmp_dir):
            raise ValueError(f"tmp_dir is not an existing directory: {tmp_dir!r}")
        dtype = column.dtype.newbyteorder("=")
        if chunkrows is None:
            chunkrows = chunk_rows_for(dtype.itemsize)
        elif (isinstance(chunkrows, bool) or not isinstance(chunkrows, (int, np.integer))
              or chunkrows < 1):
            raise ValueError(f"chunkrows must be a positive integer, not {chunkrows!r}")
        file = table._v_file
        file._check_writable()
        # Rows still in the append buffer go to the file now, not while the index is built
        # (writing them may bring the table's other indexes up to date).
        table._ready()
        nrows = table.nrows
        if run_rows is None:
            run_rows = run_rows_for(dtype)
        label = f"indexing {table._v_pathname}.cols.{colpath.replace('/', '.')}"
        report = _progress_for(progress, label, nrows, run_rows)
        new_parent = _table_group(table) is None
        parent = _table_group(table, create=True)
        assert parent is not None
        key = column_key(colpath)
        _remove_child(parent, key + _BUILDING)  # left by an interrupted build
        group = _new_group(table, parent, key + _BUILDING,
                           f"hyperslab index of column {colpath!r}")
        try:
            nelements, non_nan, in_order = _fill(
                group, column, dtype, nrows, filters, int(chunkrows),
                dict(run_rows=run_rows, tmp_dir=tmp_dir, progress=report))
            attrs = group._v_attrs
            attrs["COLPATH"] = colpath
            attrs["KIND"] = kind
            attrs["OPTLEVEL"] = optlevel
            _write_state(group._g_h5id, _State(tree.object_address(table._g_h5id), False,
                                             nelements, non_nan, in_order))
        except BaseException:
            file.remove_node(parent if new_parent else group, recursive=True)
            raise
        _remove_child(parent, key)
        _rename(table, group, key)
        return cls(table, group, colpath)

    @classmethod
    def open(cls, table: Table, colpath: str) -> ColumnIndex | None:
        """The stored index of column ``colpath`` of ``table``, or None if it has none."""
        return column_index(table, colpath)

    # ------------------------------------------------------------------ metadata
    @property
    def table(self) -> Table:
        """The indexed table."""
        return self._table

    @property
    def colpath(self) -> str:
        """The path name of the indexed column."""
        return self._colpath

    @property
    def kind(self) -> str:
        """The kind given at build time (``'ultralight'``, ``'light'``, ``'medium'``,
        ``'full'``)."""
        return self._kind

    @property
    def optlevel(self) -> int:
        """The optimization level given at build time (0 to 9)."""
        return self._optlevel

    @property
    def is_csi(self) -> bool:
        """Whether this is a CSI in PyTables' terms (``kind='full'``, ``optlevel=9``)."""
        return self._kind == "full" and self._optlevel == 9

    @property
    def nelements(self) -> int:
        """The number of rows indexed (rows ``0 .. nelements - 1`` of the table)."""
        return self._nelements

    @property
    def nan_start(self) -> int:
        """The position of the first NaN in sorted order (the count of non-NaN values)."""
        return self._nan_start

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the indexed values (native byte order)."""
        return self._open_arrays()[2]

    @property
    def filters(self) -> Filters:
        """The compression of the index's arrays."""
        return self._sorted.filters

    @property
    def chunkrows(self) -> int:
        """Elements per chunk of the index's arrays."""
        return self._chunkrows

    @property
    def dirty(self) -> bool:
        """Whether the index may not match the column (stored in the file)."""
        return self._dirty

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self._table._v_file._check_writable()
        self._dirty = bool(value)
        self._save_state()

    def _save_state(self) -> None:
        """Write the index's state (its HS_INDEX attribute, replacing layout 1's)."""
        _write_state(self._group._g_h5id, _State(self._table_address, self._dirty,
                                                self._nelements, self._nan_start,
                                                self._in_order))

    @property
    def stale(self) -> bool:
        """Whether the table's row count differs from the rows indexed (e.g. rows were
        appended by a program that does not know about the index)."""
        return self._nelements != self._table.nrows

    @property
    def current(self) -> bool:
        """Whether queries and sorted reads may use the index: clean, and covering every
        row of the table (neither :attr:`dirty` nor :attr:`stale`)."""
        return not self._dirty and not self.stale

    @property
    def size_on_disk(self) -> int:
        """Bytes the index's arrays take in the file."""
        group = self._group
        firsts = group._f_get_child("firsts") if "firsts" in group else None
        return int(self._sorted.size_on_disk + self._rows.size_on_disk
                   + getattr(firsts, "size_on_disk", 0))

    # ------------------------------------------------------------------ lookups
    @property
    def _firsts(self) -> AnyArray:
        firsts = self._firsts_
        if firsts is None:
            try:
                firsts = read_vector_attribute(self._gid, "FIRSTS")
            except KeyError:  # too many for an attribute, or a layout 1 index
                array = self._array("firsts")
                firsts = array.read(0, len(array))
            except TypeError as exc:
                raise HDF5ExtError(f"the index in {self._group_path} is malformed: "
                                   f"{exc}") from None
            self._firsts_ = firsts
        return firsts

    def _chunk(self, number: int, of_rows: bool = False) -> AnyArray:
        """Chunk ``number`` of the sorted values (or of the row numbers); a few recent
        ones are cached."""
        key = (number, of_rows)
        chunk = self._chunks.get(key)
        if chunk is None:
            sorted_ds, chunkrows, _ = self._open_arrays()
            start = number * chunkrows
            # One chunk through HDF5's own chunk lookup: no chunk index of the whole
            # array to build first (a lookup right after opening reads one chunk).
            chunk = (self._rows_vector() if of_rows else sorted_ds).read(
                start, min(start + chunkrows, self._nelements))
            with self._chunks_lock:
                while len(self._chunks) >= _CACHED_CHUNKS:
                    del self._chunks[next(iter(self._chunks))]
                self._chunks[key] = chunk
        return chunk

    def _search(self, bound: Any, side: Literal["left", "right"]) -> int | None:
        """``searchsorted`` of a bound of the column's own dtype over the non-NaN values
        (the same answer as counting NumPy comparisons, in microseconds); None for other
        bounds."""
        _, chunkrows, dtype = self._open_arrays()
        if not isinstance(bound, np.generic) or bound.dtype != dtype or (
                bound.dtype.kind == "f" and bound != bound):  # NaN
            return None
        end = self._nan_start
        firsts = self._firsts[:-(-end // chunkrows)]
        number = int(firsts.searchsorted(bound, side=side))
        if number == 0:
            return 0
        start = (number - 1) * chunkrows
        chunk = self._chunk(number - 1)[:end - start]
        return start + int(chunk.searchsorted(bound, side=side))

    def _test(self, values: AnyArray, test: Callable[[Any, Any], Any], bound: Any) -> AnyArray:
        try:
            with np.errstate(all="ignore"):  # e.g. 1e300 cast to float16: inf, as NumPy
                result = np.asarray(test(values, bound))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"values of column {self._colpath!r} ({self.dtype}) cannot be "
                            f"compared with {bound!r}: {exc}") from None
        if result.dtype != np.bool_ or result.shape != values.shape:
            raise TypeError(f"values of column {self._colpath!r} ({self.dtype}) cannot be "
                            f"compared with {bound!r}")
        return result

    def _count(self, test: Callable[[Any, Any], Any], bound: Any) -> int:
        """How many of the sorted non-NaN values pass ``test(value, bound)``, a test true
        for a prefix of them (NumPy comparisons are monotone over sorted values).  Reads at
        most one chunk."""
        if np.ndim(bound) != 0:
            raise TypeError(f"index bounds must be scalars, not {bound!r:.80}")
        end = self._nan_start
        if end == 0:
            return 0
        chunkrows = self._chunkrows
        firsts = self._firsts[:-(-end // chunkrows)]  # chunks starting before the NaNs
        passed = int(np.count_nonzero(self._test(firsts, test, bound)))
        if passed == 0:
            return 0
        start = (passed - 1) * chunkrows
        chunk = self._chunk(passed - 1)[:end - start]
        return start + int(np.count_nonzero(self._test(chunk, test, bound)))

    def positions(self, lo: Any, lo_inclusive: bool, hi: Any, hi_inclusive: bool
                  ) -> tuple[int, int]:
        """The range ``[p0, p1)`` of sorted positions of the non-NaN values ``v`` with
        ``v > lo`` (``v >= lo`` if ``lo_inclusive``) and ``v < hi`` (``v <= hi`` if
        ``hi_inclusive``).

        ``lo`` or ``hi`` None is unbounded on that side.  Values are compared with NumPy's
        rules (the bound as given, against the column's dtype), so mixed types (an integer
        column and a float bound, bytes of another length) select what a NumPy
        comparison selects; a NaN bound selects nothing.  Reads at most one chunk per
        bound.

        Raises
        ------
        TypeError
            If a bound is not a scalar or cannot be compared with the column's values.
        """
        p0 = 0
        if lo is not None:
            found = self._search(lo, "left" if lo_inclusive else "right")
            p0 = found if found is not None else self._count(
                _fails_lower_inclusive if lo_inclusive else _fails_lower, lo)
        p1 = self._nan_start
        if hi is not None:
            found = self._search(hi, "right" if hi_inclusive else "left")
            p1 = found if found is not None else self._count(
                np.less_equal if hi_inclusive else np.less, hi)
        return p0, max(p0, p1)

    def _check_span(self, p0: int, p1: int) -> tuple[int, int]:
        p0, p1 = int(p0), int(p1)
        if not 0 <= p0 <= p1 <= self._nelements:
            raise IndexError(f"positions {p0}..{p1} are not a range within the "
                             f"{self._nelements} positions of the index of {self._colpath!r}")
        return p0, p1

    def rows(self, p0: int, p1: int) -> AnyArray:
        """The row numbers (int64) at sorted positions ``p0 .. p1 - 1``."""
        p0, p1 = self._check_span(p0, p1)
        if p0 == p1:
            return np.empty(0, dtype=np.int64)
        if p1 <= self._in_order:  # positions that hold their own row: nothing to read
            return np.arange(p0, p1, dtype=np.int64)
        number = p0 // self._chunkrows
        if (p1 - 1) // self._chunkrows == number:  # within one chunk: cached
            first = number * self._chunkrows
            return self._chunk(number, of_rows=True)[p0 - first : p1 - first].astype(np.int64)
        return self._rows_vector().read(p0, p1).astype(np.int64, copy=False)

    def values(self, p0: int, p1: int) -> AnyArray:
        """The sorted values at positions ``p0 .. p1 - 1``."""
        p0, p1 = self._check_span(p0, p1)
        if p0 == p1:
            return np.empty(0, dtype=self.dtype)
        return self._open_arrays()[0].read(p0, p1)

    def _clear_chunks(self) -> None:
        with self._chunks_lock:
            self._chunks.clear()

    def _insertion_point(self, value: AnyArray) -> int:
        """Positions whose values sort at or before ``value`` (a 1-element array)."""
        if self._nelements == 0:
            return 0
        passed = int(np.searchsorted(self._firsts, value, side="right")[0])
        if passed == 0:
            return 0
        chunk = self._chunk(passed - 1)
        inside = int(np.searchsorted(chunk, value, side="right")[0])
        return (passed - 1) * self._chunkrows + inside

    # ------------------------------------------------------------------ changing
    def append_rows(self, first_row: int, values: Any) -> None:
        """Add the table's rows ``first_row ..`` (``values`` their column values) to the index.

        Call it once those rows are in the table.  New values are merged in place when the
        values to move are few (up to :data:`IN_MEMORY_MERGE_ROWS`); otherwise the index is
        rebuilt from the table, out of core.  The index is marked dirty while it changes,
        so an interrupted merge never leaves a clean but wrong index.

        Raises
        ------
        ValueError
            If ``first_row`` is not :attr:`nelements` or ``values`` is not 1-D or does not
            convert to the column's dtype.
        """
        self._table._v_file._check_writable()
        if first_row != self._nelements:
            raise ValueError(f"rows appended to the index of {self._colpath!r} must start at "
                             f"row {self._nelements} (the rows indexed), not {first_row!r}")
        try:
            new = np.asarray(values, dtype=self.dtype)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"values appended to the index of {self._colpath!r} do not "
                             f"convert to {self.dtype}: {exc}") from None
        if new.ndim != 1:
            raise ValueError(f"values appended to the index of {self._colpath!r} must be "
                             f"1-D, not of shape {new.shape}")
        if len(new) == 0:
            return
        total = self._nelements + len(new)
        order = stable_argsort(new)
        new_values = new[order]
        at = self._insertion_point(new_values[:1])
        fits = np.iinfo(self._rows_vector().dtype).max >= total - 1
        if not fits or self._nelements - at + len(new) > IN_MEMORY_MERGE_ROWS:
            self._rebuild()
            return
        self._merge(at, new_values, order + first_row)

    def _merge(self, at: int, new_values: AnyArray, new_rows: AnyArray) -> None:
        """Merge sorted new values (and their rows) into the index from position ``at``."""
        was_dirty = self._dirty
        self.dirty = True
        old_values = self.values(at, self._nelements)
        old_rows = self.rows(at, self._nelements)
        where = np.searchsorted(old_values, new_values, side="right")
        values = np.insert(old_values, where, new_values)
        rows = np.insert(old_rows, where, new_rows)
        self._clear_chunks()
        for node, data in ((self._sorted, values), (self._rows, rows)):
            node.truncate(at)
            node.append(data.astype(node.dtype, copy=False))
        kept = -(-at // self._chunkrows)  # chunks whose first value did not move
        old_firsts = self._firsts
        firsts = np.concatenate([old_firsts[:kept],
                                 values[kept * self._chunkrows - at::self._chunkrows]])
        if firsts.tobytes() != old_firsts.tobytes():  # not when the last chunk just grew
            _write_firsts(self._group, firsts)
        self._firsts_ = firsts
        if self._in_order >= at:  # positions before ``at`` kept their (own) rows
            self._in_order = at + _leading_in_order(rows, at)
        self._nelements += len(new_values)
        self._nan_start += _non_nan(new_values)
        self.dirty = was_dirty  # with the new counts

    def _rebuild(self) -> None:
        rebuilt = ColumnIndex.build(self._table, self._colpath, kind=self._kind,
                                    optlevel=self._optlevel, filters=self.filters)
        self._load(rebuilt._group, rebuilt._colpath)

    def remove(self) -> None:
        """Delete the index from the file (and the table's index group once it holds
        nothing: no other index and no AUTO_INDEX setting)."""
        file = self._table._v_file
        file._check_writable()
        parent = self._group._v_parent
        self._arrays = self._rows_vector_ = None  # the datasets go with the group
        self._firsts_ = None
        file.remove_node(self._group, recursive=True)
        self._clear_chunks()
        if not parent._g_link_table() and "AUTO_INDEX" not in parent._v_attrs:
            file.remove_node(parent, recursive=True)

    # ------------------------------------------------------------------ reprs
    def __str__(self) -> str:
        filters = self.filters
        parts = [str(self._optlevel), self._kind]
        if filters.complevel:
            if filters.shuffle:
                parts.append("shuffle")
            if filters.bitshuffle:
                parts.append("bitshuffle")
            parts.append(f"{filters.complib}({filters.complevel})")
        return f"Index({', '.join(parts)}).is_csi={self.is_csi}"

    __repr__ = __str__


def _write_firsts(group: Group, firsts: AnyArray) -> None:
    """(Re)write the firsts of a column index group: its FIRSTS attribute, or its
    ``firsts`` array when they take more than :data:`FIRSTS_ATTRIBUTE_BYTES`."""
    _remove_child(group, "firsts")
    gid = group._g_h5id
    if raw.has_attribute(gid, "FIRSTS"):
        raw.delete_attribute(gid, "FIRSTS")
    firsts = np.ascontiguousarray(firsts)
    if firsts.nbytes <= FIRSTS_ATTRIBUTE_BYTES:
        raw.write_attribute(gid, "FIRSTS", firsts)
    else:
        group._v_file.create_array(group, "firsts", firsts)


def _fill(group: Group, column: Column, dtype: np.dtype[Any], nrows: int, filters: Filters,
          chunkrows: int, sort_options: dict[str, Any]) -> tuple[int, int, int]:
    """Sort the column into new arrays of ``group`` (and its firsts); return the count of
    values, of non-NaN values and of positions holding their own row."""
    file = group._v_file
    rows_dtype = np.dtype(np.uint32 if nrows <= 1 << 32 else np.int64)
    arrays = [
        file.create_earray(group, name, Atom.from_dtype(kind_dtype), shape=(0,),
                           filters=filters, chunkshape=(chunkrows,),
                           expectedrows=max(nrows, 1))
        for name, kind_dtype in (("sorted", dtype), ("rows", rows_dtype))
    ]
    piece_rows = max(1, DEFAULT_PIECE_ROWS // chunkrows) * chunkrows

    def read(lo: int, hi: int) -> AnyArray:
        return np.asarray(column[lo:hi], dtype=dtype)

    firsts: list[AnyArray] = []
    non_nan = 0
    position = 0
    in_order = 0
    for values, rows in sorted_pieces(read, nrows, piece_rows=piece_rows, **sort_options):
        arrays[0].append(values)
        arrays[1].append(rows.astype(rows_dtype))
        firsts.append(values[(-position) % chunkrows::chunkrows])
        non_nan += _non_nan(values)
        if in_order == position:
            in_order += _leading_in_order(rows, position)
        position += len(values)
    _write_firsts(group, np.concatenate(firsts) if firsts else np.empty(0, dtype=dtype))
    return position, non_nan, in_order


def _leading_in_order(rows: AnyArray, first: int) -> int:
    """How many of ``rows`` (the row numbers at positions ``first ..``) lead with rows
    ``first, first + 1, ...``: the positions that hold their own row."""
    strays = np.flatnonzero(rows != np.arange(first, first + len(rows)))
    return int(strays[0]) if len(strays) else len(rows)


class _State(NamedTuple):
    """What a column group's HS_INDEX attribute holds after the layout version."""

    table_address: int
    dirty: bool
    nelements: int
    nan_start: int
    in_order: int  # positions 0 .. in_order - 1 hold rows 0 .. in_order - 1


def _read_state(gid: Any) -> _State | None:
    """The state of the index in column group ``gid``; None when the group holds no
    complete index of a layout read here (one interrupted before its attributes, or
    of a later layout)."""
    try:
        packed = read_vector_attribute(gid, STATE_ATTRIBUTE)
    except KeyError:
        return _read_layout_1_state(gid)
    except TypeError:
        return None
    if packed.dtype.kind not in "iu" or len(packed) != 6 or packed[0] != HS_INDEX_VERSION:
        return None
    _, address, dirty, nelements, nan_start, in_order = (int(v) for v in packed)
    if not 0 <= nan_start <= nelements:
        return None
    return _State(address, bool(dirty), nelements, nan_start,
                  min(max(in_order, 0), nelements))


def _read_layout_1_state(gid: Any) -> _State | None:
    """:func:`_read_state` of a layout 1 index (no positions in order recorded)."""
    try:
        if raw.read_int_attribute(gid, "HS_INDEX_VERSION") != 1:
            return None
        address, dirty, nelements, nan_start = (
            raw.read_int_attribute(gid, name) for name in _LAYOUT_1_ATTRIBUTES[1:])
    except (KeyError, TypeError):
        return None
    return _State(address, bool(dirty), nelements, nan_start, 0)


def _write_state(gid: Any, state: _State) -> None:
    """Write the HS_INDEX attribute of column group ``gid`` (dropping layout 1's)."""
    if raw.has_attribute(gid, _LAYOUT_1_ATTRIBUTES[0]):
        for name in _LAYOUT_1_ATTRIBUTES:
            if raw.has_attribute(gid, name):
                raw.delete_attribute(gid, name)
    raw.write_attribute(gid, STATE_ATTRIBUTE, np.array([HS_INDEX_VERSION, *state],
                                                       dtype=np.int64))


def _string_attribute(gid: Any, name: str) -> str:
    """A string attribute of an index group (KeyError when absent, TypeError when it is
    not a string)."""
    value = raw.read_string_attribute(gid, name)
    if value is None:
        raise KeyError(f"attribute {name!r} does not exist")
    return value


def _stored_index(table: Table, gid: Any, name: str, colpath: str | None
                  ) -> tuple[str, _State] | None:
    """The COLPATH and state of the column group ``gid`` (linked as ``name``) when it
    holds a complete index of a layout read here, for ``table`` (of column ``colpath`` if
    given); None otherwise."""
    state = _read_state(gid)
    if state is None:
        return None  # not an index of ours, or one interrupted before its attributes
    try:
        stored = _string_attribute(gid, "COLPATH")
    except (KeyError, TypeError, ValueError):
        return None
    if column_key(stored) != name or (colpath is not None and stored != colpath):
        return None
    if state.table_address != tree.object_address(table._g_h5id):
        return None  # built for another table (not moved by hyperslab, or copied)
    return stored, state


def _open_child(table: Table, parent: Group, name: str, colpath: str | None
                ) -> ColumnIndex | None:
    """The index stored in group ``name`` of ``parent`` (of column ``colpath`` if given),
    or None when that is not a complete index of a layout read here."""
    if name not in parent:
        return None
    group = parent._f_get_child(name)
    if not isinstance(group, Group):
        return None
    stored = _stored_index(table, group._g_h5id, name, colpath)
    return None if stored is None else ColumnIndex(table, group, stored[0], state=stored[1])


def _open_group_id(gid: Any, name: str) -> Any:
    """The id of the group linked (hard) as ``name`` in ``gid``; None when there is no such
    link; False when it is something else."""
    kind = tree.link_kind(gid, name)
    if kind is tree.Kind.UNKNOWN:
        return None
    if kind is not None:
        return False  # a soft or external link
    try:
        oid = tree.open_child(gid, name)
    except KeyError:
        return False
    return oid if tree.kind_of_id(oid) is tree.Kind.GROUP else False


def _read_only_parent(table: Table) -> tuple[Any, str] | None:
    """The id and path of the table's index group, opened without a node (read-only
    files: no node of an index is ever needed there); None when there is none."""
    parent = table.parent
    name = index_group_name(table.name)
    gid = _open_group_id(parent._g_h5id, name)
    if gid is None:
        return None
    path = join_path(parent._v_pathname, name)
    if gid is False:
        raise TypeError(f"{path} is not a group, so it cannot hold the indexes of table "
                        f"{table._v_pathname}")
    return gid, path


def _read_only_child(table: Table, parent: tuple[Any, str], name: str, colpath: str | None
                     ) -> ColumnIndex | None:
    """:func:`_open_child` without nodes, in the group of :func:`_read_only_parent`."""
    gid = _open_group_id(parent[0], name)
    if not gid:
        return None
    stored = _stored_index(table, gid, name, colpath)
    if stored is None:
        return None
    return ColumnIndex(table, None, stored[0], gid=gid, path=join_path(parent[1], name),
                       state=stored[1])


# ---------------------------------------------------------------------- table level
def column_index(table: Table, colpath: str) -> ColumnIndex | None:
    """The stored index of column ``colpath`` of ``table``, or None (only that one is
    opened)."""
    if table._v_file.mode == "r":
        found = _read_only_parent(table)
        return None if found is None else _read_only_child(table, found, column_key(colpath),
                                                           colpath)
    parent = _table_group(table)
    if parent is None:
        return None
    return _open_child(table, parent, column_key(colpath), colpath)


def table_indexes(table: Table) -> dict[str, ColumnIndex]:
    """Every stored index of ``table``, by column path name."""
    found: dict[str, ColumnIndex] = {}
    index: ColumnIndex | None
    if table._v_file.mode == "r":
        stored = _read_only_parent(table)
        if stored is None:
            return {}
        for name in tree.list_links(stored[0]):
            index = _read_only_child(table, stored, name, None)
            if index is not None:
                found[index.colpath] = index
        return found
    parent = _table_group(table)
    if parent is None:
        return {}
    for name in parent._g_link_table():
        index = _open_child(table, parent, name, None)
        if index is not None:
            found[index.colpath] = index
    return found


def remove_table_indexes(table: Table) -> None:
    """Delete every index of ``table`` (its whole index group, AUTO_INDEX included)."""
    parent = _table_group(table)
    if parent is not None:
        table._v_file.remove_node(parent, recursive=True)


def auto_index(table: Table) -> bool:
    """Whether the table's indexes follow its changes (``AUTO_INDEX``; True if unset)."""
    parent = _table_group(table)
    if parent is None or "AUTO_INDEX" not in parent._v_attrs:
        return True
    return bool(parent._v_attrs["AUTO_INDEX"])


def set_auto_index(table: Table, value: bool) -> None:
    """Store the table's ``AUTO_INDEX`` setting (creating its index group if needed)."""
    table._v_file._check_writable()
    parent = _table_group(table, create=True)
    assert parent is not None
    parent._v_attrs["AUTO_INDEX"] = bool(value)


def index_path(table: Table, colpath: str) -> str:
    """Where the index of column ``colpath`` of ``table`` is (or would be) stored."""
    return join_path(join_path(table.parent._v_pathname, index_group_name(table.name)),
                     column_key(colpath))


__all__ = [
    "DEFAULT_INDEX_FILTERS",
    "FIRSTS_ATTRIBUTE_BYTES",
    "HS_INDEX_VERSION",
    "INDEX_GROUP_PREFIX",
    "IN_MEMORY_MERGE_ROWS",
    "KINDS",
    "STATE_ATTRIBUTE",
    "ColumnIndex",
    "auto_index",
    "chunk_rows_for",
    "column_key",
    "index_group_name",
    "index_path",
    "remove_table_indexes",
    "set_auto_index",
    "table_indexes",
]
