"""Column indexes of a table: the bookkeeping (:class:`TableIndexes`) and the Table API
(:class:`IndexedTable`, mixed into :class:`~hyperslab.nodes.tables.table.Table`).

Each indexed column has a :class:`~hyperslab.nodes.indexes.store.ColumnIndex`, stored in
PyTables' own layout in the group ``_i_<table>`` beside the table, so that PyTables and
hyperslab use, update and dirty each other's indexes.  They are kept in step with the
table as PyTables keeps its indexes:

* Appended rows are added to the indexes (PyTables' ``Index.append``) when the table is
  flushed (or before the next query) if :attr:`IndexedTable.autoindex` is on; otherwise
  the indexes become *dirty*.
* Modified or removed rows make the indexes of the columns concerned dirty at once (the
  flag is in the file, so an interrupted program never leaves a wrong index marked clean);
  with ``autoindex`` they are rebuilt before they are used again.
* A dirty index, or one that does not cover the table's rows (another program appended
  or removed rows and left the index as it was), is never used by a query: the query
  scans instead.

Sorted reads (:meth:`IndexedTable.read_sorted`, :meth:`IndexedTable.itersorted`) and sorted
copies walk a column's index.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.errors import HDF5ExtError, OldIndexWarning, PerformanceWarning
from hyperslab.nodes.atoms.description import field_of
from hyperslab.nodes.indexes import layout as indexlayout
from hyperslab.nodes.indexes.build import build_index
from hyperslab.nodes.indexes.state import MalformedIndexError
from hyperslab.nodes.indexes.store import ColumnIndex, index_positions, open_index
from hyperslab.nodes.tables.columns import Column
from hyperslab.nodes.tree.group import Group
from hyperslab.storage import attributes as raw

if TYPE_CHECKING:
    from hyperslab.nodes.tables.row import Row
    from hyperslab.nodes.tables.table import Table

_SORTED_BATCH_ROWS = 1 << 16
"""Rows read at a time by sorted reads and iteration."""

OLD_HYPERSLAB_PREFIX = "_p_hsindex_"
"""Prefix of the groups of hyperslab's own index layout before PyTables' (never
released): such a group is ignored, with an :class:`~hyperslab.errors.OldIndexWarning`."""

_COPY_BATCH_BYTES = 64 << 20
"""Bytes of records read at a time by ``copy(sortby=...)``: rows in sorted order are spread
over the whole table, so each batch decodes most chunks once; big batches decode them few
times."""


class TableIndexes:
    """The indexes of one table object, loaded once, and what keeps them in step."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._indexes: dict[str, ColumnIndex] | None = None
        # Read-only files: indexes opened one by one for queries, before (or instead of)
        # all of them (None: the column has none).
        self._opened: dict[str, ColumnIndex | None] = {}
        self._syncing = False
        self._warned = False

    @property
    def indexes(self) -> dict[str, ColumnIndex]:
        """Column pathname -> its stored index."""
        if self._indexes is None:
            found = self._find_all()
            # The same objects as those opened one by one (they hold cached chunks).
            for colpath, index in self._opened.items():
                if index is not None and colpath in found:
                    found[colpath] = index
            self._indexes = found
        return self._indexes

    def _find_all(self) -> dict[str, ColumnIndex]:
        """Every index of the table (PyTables: a column is indexed when its index group
        exists), found by column."""
        table = self.table
        parent = table.parent
        self._warn_old_layout(parent)
        if self.group_name() not in parent:
            return {}
        found = {}
        for colpath in table.colpathnames:
            index = open_index(table, colpath)
            if index is not None:
                found[colpath] = index
        return found

    def _warn_old_layout(self, parent: Group) -> None:
        name = OLD_HYPERSLAB_PREFIX + self.table.name
        if not self._warned and name in parent:
            self._warned = True
            warnings.warn(f"{parent._v_pathname}/{name} holds indexes of table "
                          f"{self.table._v_pathname} in a layout of hyperslab's that "
                          f"nothing reads any more; they are ignored: remove that group "
                          f"and create the indexes again",
                          OldIndexWarning, stacklevel=4)

    def open(self, colpath: str) -> ColumnIndex | None:
        """The index of ``colpath`` (only that one is opened when none are loaded yet)."""
        if self._indexes is not None:
            return self._indexes.get(colpath)
        if colpath not in self._opened:
            self._warn_old_layout(self.table.parent)
            self._opened[colpath] = open_index(self.table, colpath)
        return self._opened[colpath]

    def reload(self) -> None:
        """Forget the loaded indexes (the table moved: they are found again)."""
        self._indexes = None
        self._opened.clear()

    def group_name(self) -> str:
        """The name of the group beside the table that holds its indexes."""
        return indexlayout.container_name(self.table.name)

    @property
    def autoindex(self) -> bool:
        """The table's ``AUTO_INDEX`` (its ``_i_`` group's attribute; True if unset)."""
        table = self.table
        path = indexlayout.container_path(table._v_pathname)
        if path not in table._v_file:
            return True
        group = table._v_file.get_node(path)
        if not raw.has_attribute(group._g_h5id, "AUTO_INDEX"):
            return True
        return bool(raw.read_attribute(group._g_h5id, "AUTO_INDEX"))

    @autoindex.setter
    def autoindex(self, value: bool) -> None:
        table = self.table
        table._check_writable_table()
        group = indexlayout.ensure_container(table)
        raw.write_int_attribute(group._g_h5id, "AUTO_INDEX", int(bool(value)), "int32")
        if value:  # as in PyTables, the next flush rebuilds the dirty indexes
            table._v_file._unflushed.add(table)

    # ------------------------------------------------------------------ building
    def create(self, colpath: str, **options: Any) -> int:
        """Build (or rebuild) the index of ``colpath``; the number of rows indexed."""
        table = self.table
        table._check_writable_table()
        table._ready()  # buffered rows first
        with table._exclusive():
            index = build_index(table, colpath, **options)
            self.indexes[colpath] = index
            table._v_file._guard.protect([index])  # dirty in the file until closed
        return index.nelements

    def rebuild(self, index: ColumnIndex) -> ColumnIndex:
        """Build ``index`` again from the column, with the same kind, level and filters
        (and sizes for the rows now expected, as PyTables' reindex)."""
        with self.table._exclusive():
            rebuilt = build_index(self.table, index.colpath, kind=index.kind,
                                  optlevel=index.optlevel, filters=index.filters)
            self.indexes[index.colpath] = rebuilt
            self.table._v_file._guard.protect([rebuilt])  # dirty in the file until closed
        return rebuilt

    def reindex(self, colpath: str | None = None, *, dirty_only: bool = False) -> None:
        """Rebuild the index of ``colpath`` (None: of every indexed column); with
        ``dirty_only``, only an index that is dirty or does not cover every row."""
        table = self.table
        chosen = [index for path, index in self.indexes.items()
                  if colpath is None or path == colpath]
        if not chosen and colpath is not None:
            return  # a column without an index: nothing to do, as before
        table._check_writable_table()  # the table's reindex refuses read-only files
        table._ready()
        with table._exclusive():
            for index in chosen:
                if not dirty_only or not index.current:
                    self.rebuild(index)

    def remove(self, colpath: str) -> None:
        """Remove the index of ``colpath`` (if any)."""
        self.table._check_writable_table()
        with self.table._exclusive():
            index = self.indexes.pop(colpath, None)
            if index is not None:
                index.remove()

    # ------------------------------------------------------------------ keeping in step
    def touched(self, columns: Iterable[str] | None = None) -> None:
        """Rows were changed or removed (in ``columns``, or all): their indexes are dirty
        now, and rebuilt when the table is next flushed (at the latest when the file is
        closed) or queried, if ``autoindex`` is on."""
        indexes = self.indexes
        if not indexes:
            return
        names = None if columns is None else list(columns)
        for path, index in indexes.items():
            if names is not None and not any(path == n or path.startswith(n + "/")
                                             for n in names):
                continue
            if not index.dirty:
                index.dirty = True
        self.table._v_file._unflushed.add(self.table)  # flush() brings them up to date

    def sync(self) -> None:
        """Bring the indexes up to date with the stored rows, as ``autoindex`` says: merge
        appended rows (or rebuild dirty indexes) when it is on, mark them dirty when off.
        Called once the table's buffered rows are written (flush, before reads)."""
        table = self.table
        if table._v_file.mode == "r" or not self.indexes:
            return
        with table._exclusive():
            if not self._syncing:
                self._sync()

    def _sync(self) -> None:
        table = self.table
        self._syncing = True
        try:
            auto = self.autoindex
            io = table._io
            nrows = io.nrows
            if auto:  # dirty in the file while they change (flushguard.py, rule 4)
                table._v_file._guard.protect([
                    index for index in self.indexes.values()
                    if index.dirty or index.nelements != nrows or index.foreign])
            for index in list(self.indexes.values()):
                if not auto:
                    if index.nelements != nrows and not index.dirty:
                        index.dirty = True
                elif index.dirty or index.nelements > nrows or index.foreign:
                    self.rebuild(index)
                elif index.nelements < nrows:
                    def read(lo: int, hi: int, path: str = index.colpath) -> Any:
                        return np.ascontiguousarray(field_of(io.read_span(lo, hi), path))

                    index.catch_up(read, nrows)
        finally:
            self._syncing = False

    def flush_to_index(self) -> int:
        """Write the buffered rows and bring the indexes up to date as ``autoindex`` says
        (:meth:`sync`), then add the rows that clean indexes still lack; return how many
        rows the first index gained."""
        table = self.table
        if not self.indexes:
            return 0
        table._check_writable_table()
        with table._exclusive():
            first = next(iter(self.indexes.values()))
            before = first.nelements
            table._flush_rows()  # syncs: merges appended rows, or marks indexes dirty
            io = table._io
            nrows = io.nrows
            behind = [index for index in self.indexes.values()
                      if not index.dirty and index.nelements < nrows]
            table._v_file._guard.protect(behind)  # dirty in the file while they change
            for index in behind:
                def read(lo: int, hi: int, path: str = index.colpath) -> Any:
                    return np.ascontiguousarray(field_of(io.read_span(lo, hi), path))

                index.catch_up(read, nrows)
            return max(0, self.indexes.get(first.colpath, first).nelements - before)

    def usable(self, columns: Iterable[str] | None = None) -> dict[str, ColumnIndex]:
        """The indexes a query may use now: clean, covering every row and searchable (of
        ``columns`` only, if given: on a read-only file, only those are opened).

        Indexes that HDF5 cannot open or read (a damaged file: HDF5ExtError) are not
        usable: a query never needs an index to be right, so it scans instead, with a
        :class:`~hyperslab.errors.PerformanceWarning` naming the table and the damage.
        Sorted reads, which need the index, raise instead.  An index HDF5 reads but whose
        arrays or attributes are missing or do not fit raises its
        :class:`~hyperslab.nodes.indexes.state.MalformedIndexError` (an HDF5ExtError naming
        what is wrong).
        """
        table = self.table
        try:
            if columns is not None and self._indexes is None and table._v_file.mode == "r":
                opened = [self.open(colpath) for colpath in columns]
                return {index.colpath: index for index in opened
                        if index is not None and index.current and index.searchable}
            if not self.indexes:
                return {}
        except MalformedIndexError:
            raise
        except HDF5ExtError as exc:
            return self._unreadable(exc)
        with table._exclusive():  # no rows come in between the sync and the check
            table._ready()  # writes buffered rows, which syncs
            self.sync()
            wanted = None if columns is None else set(columns)
            try:
                return {path: index for path, index in self.indexes.items()
                        if (wanted is None or path in wanted) and index.current
                        and index.searchable}
            except MalformedIndexError:
                raise
            except HDF5ExtError as exc:
                return self._unreadable(exc)

    def _unreadable(self, exc: HDF5ExtError) -> dict[str, ColumnIndex]:
        warnings.warn(f"the indexes of table {self.table._v_pathname} cannot be read "
                      f"({exc}); the query scans the table instead", PerformanceWarning,
                      stacklevel=6)
        return {}

    # ------------------------------------------------------------------ sorted order
    def sortby_index(self, sortby: Any, check_csi: bool) -> ColumnIndex:
        """The index to sort by (PyTables' rules: a 'full' index; CSI when asked).

        Raises
        ------
        TypeError
            If ``sortby`` is neither a column name nor a Column of this table.
        ValueError
            If the column has no clean 'full' index, or no CSI one with ``check_csi``.
        HDF5ExtError
            If the table's indexes cannot be opened (a damaged file).
        """
        table = self.table
        column = table.cols._f_col(sortby) if isinstance(sortby, str) else sortby
        if not isinstance(column, Column) or column.table is not table:
            raise TypeError(f"`sortby` can only be a `Column` of {table._v_pathname} or a column "
                            f"name, but you passed an object of type: {type(sortby)}")
        pathname = column.pathname
        self.indexes  # noqa: B018  (indexes that cannot be opened raise HDF5ExtError here)
        index = self.usable().get(pathname)
        if index is None or index.kind != "full":
            state = ("its index is dirty" if pathname in self.indexes and index is None
                     else "it has no 'full' index")
            raise ValueError(f"Field `{pathname}` must have associated a 'full' index in "
                             f"table `{table._v_pathname}` ({state})")
        if check_csi and not index.is_csi:
            raise ValueError(f"Field `{pathname}` must have associated a CSI index in "
                             f"table `{table._v_pathname}`, but the existing one is not")
        return index

    def sorted_rows(self, index: ColumnIndex, positions: range,
                    batch_rows: int = _SORTED_BATCH_ROWS) -> Iterator[AnyArray]:
        """Row numbers at ``positions`` of the index's order, in batches of
        ``batch_rows``."""
        # Each batch reads the index's row numbers over the positions it spans.
        batch = max(1, min(batch_rows, batch_rows * 16 // abs(positions.step)))
        for begin in range(0, len(positions), batch):
            part = positions[begin : begin + batch]
            lo = min(part[0], part[-1])
            block = index.indices_at(lo, max(part[0], part[-1]) + 1)
            wanted = np.arange(part.start - lo, part.stop - lo, part.step)
            yield np.ascontiguousarray(block[wanted], dtype=np.int64)

    def sorted_records(self, index: ColumnIndex, positions: range,
                       batch_rows: int = _SORTED_BATCH_ROWS
                       ) -> Iterator[tuple[AnyArray, AnyArray]]:
        """``(rows, records)`` in index order (see :meth:`sorted_rows`), each batch read
        with the table's lock held shared, from the index as it was at the start.

        Raises
        ------
        RuntimeError
            If the index changed between two batches (rows were appended and flushed, or
            changed, by another thread or by the caller's loop): the order read so far
            would not continue.
        HDF5ExtError
            If the index lists a row the table does not have (a damaged file).
        """
        table = self.table
        io = table._ready()
        state = index.state
        batches = self.sorted_rows(index, positions, batch_rows)
        while True:
            with table._shared():
                if self.indexes.get(index.colpath) is not index or index.state is not state:
                    raise RuntimeError(
                        f"the index of column {index.colpath!r} of {table._v_pathname} "
                        f"changed while its rows were read in sorted order (rows were "
                        f"appended, changed or removed meanwhile); read them again"
                    )
                rows = next(batches, None)
                if rows is None:
                    return
                records = io.read_points(rows)  # rows checked by indices_at
            yield rows, records

    def sorted_batches(self, sortby: Any, check_csi: bool, start: int | None,
                       stop: int | None, step: int | None) -> Iterator[AnyArray]:
        """Records in ``sortby`` order, in batches (for ``copy(sortby=...)``)."""
        index = self.sortby_index(sortby, check_csi)
        itemsize = self.table.dtype.itemsize
        batch_rows = max(_SORTED_BATCH_ROWS, _COPY_BATCH_BYTES // max(1, itemsize))
        positions = range(*slice(start, stop, step).indices(index.nelements))
        for _rows, records in self.sorted_records(index, positions, batch_rows):
            yield records


def indexable_column(table: Table, colpath: str) -> Column:
    """The leaf column ``colpath`` of ``table``, if an index can hold it.

    Raises
    ------
    KeyError
        If the table has no such column.
    TypeError
        If it is a group of columns, or of multidimensional, complex or other
        unsortable cells.
    """
    column = table.cols._f_col(colpath)  # KeyError naming the column
    where = f"column {colpath!r} of table {table._v_pathname}"
    # "can not be indexed": PyTables' words, which its callers (and tests) look for.
    if not isinstance(column, Column):
        raise TypeError(f"{where} is a nested group of columns: groups of columns can not "
                        "be indexed")
    dtype = column.dtype
    # PyTables' words ("... columns can not be indexed"): its tests look for them.
    if dtype.shape != ():
        raise TypeError(f"{where} has multidimensional cells {dtype.shape}: "
                        "multidimensional columns can not be indexed")
    if dtype.kind == "c":
        raise TypeError(f"{where} is complex ({dtype}): complex columns can not be indexed")
    if dtype.kind not in "biufS":
        raise TypeError(f"{where} has dtype {dtype}: columns of this type can not be indexed")
    return column


class IndexedTable:
    """Index properties and methods of :class:`~hyperslab.nodes.tables.table.Table`."""

    _indexing_: TableIndexes | None = None
    @property
    def _indexing(self) -> TableIndexes:
        indexing = self._indexing_
        if indexing is None:
            indexing = self._indexing_ = TableIndexes(cast("Table", self))
        return indexing

    def _indexable_column(self, colpath: str) -> Column:
        """The leaf column ``colpath``, if an index can hold it (see :func:`indexable_column`)."""
        return indexable_column(cast("Table", self), colpath)

    _enabled_indexing_in_queries: bool = True
    """Whether queries may use indexes (PyTables' flag, for testing: see
    :meth:`_disable_indexing_in_queries`)."""

    def _usable_indexes(self, columns: Iterable[str] | None = None
                        ) -> dict[str, ColumnIndex]:
        """The indexes queries may use now, of ``columns`` if given (see
        :meth:`TableIndexes.usable`); none while indexing in queries is disabled."""
        if not self._enabled_indexing_in_queries:
            return {}
        return self._indexing.usable(columns)

    def _disable_indexing_in_queries(self) -> None:
        """Make queries scan the table even where an index could serve them (PyTables'
        switch, meant for tests that compare indexed and in-kernel results)."""
        self._enabled_indexing_in_queries = False

    def _enable_indexing_in_queries(self) -> None:
        """Let queries use indexes again (undoes :meth:`_disable_indexing_in_queries`)."""
        self._enabled_indexing_in_queries = True

    @property
    def _indexedrows(self) -> int:
        """Rows held by the table's indexes (PyTables' counter: those of the first
        indexed column; 0 without indexes)."""
        indexes = self._indexing.indexes
        table = self._indexing.table
        for path in table.colpathnames:
            if path in indexes:
                return int(indexes[path].nelements)
        return 0

    @property
    def _unsaved_indexedrows(self) -> int:
        """Rows of the table not yet in its indexes (PyTables' counter)."""
        return self._indexing.table.nrows - self._indexedrows

    def flush_rows_to_index(self, _lastrow: bool = True) -> int:
        """Write the buffered rows and add them to the indexes that are not dirty now
        rather than at the next flush; return how many rows were added (PyTables' method).

        With :attr:`autoindex` off, appended rows make the indexes dirty instead (as in
        PyTables); dirty indexes are left as they are (:meth:`reindex_dirty` rebuilds them).
        """
        return self._indexing.flush_to_index()

    @property
    def colindexed(self) -> dict[str, bool]:
        """Leaf column path name -> whether it is indexed."""
        indexes = self._indexing.indexes
        return {path: path in indexes for path in self._indexing.table.colpathnames}

    @property
    def indexed(self) -> bool:
        """Whether some column is indexed."""
        return bool(self._indexing.indexes)

    @property
    def indexedcolpathnames(self) -> list[str]:
        """Path names of the indexed columns, in column order."""
        indexes = self._indexing.indexes
        return [p for p in self._indexing.table.colpathnames if p in indexes]

    @property
    def colindexes(self) -> dict[str, ColumnIndex]:
        """Indexed column path name -> its index."""
        return dict(self._indexing.indexes)

    @property
    def autoindex(self) -> bool:
        """Whether indexes follow appends and changes (True by default, as in PyTables).

        When False, changing the table makes its indexes dirty; :meth:`reindex_dirty`
        brings them up to date.
        """
        return self._indexing.autoindex

    @autoindex.setter
    def autoindex(self, value: bool) -> None:
        self._indexing.autoindex = value

    def reindex(self) -> None:
        """Rebuild the index of every indexed column."""
        self._indexing.reindex()

    def reindex_dirty(self) -> None:
        """Rebuild the indexes that are dirty (or do not cover every row)."""
        self._indexing.reindex(dirty_only=True)

    def read_sorted(self, sortby: Any, checkCSI: bool = False,
                    field: str | None = None, start: int | None = None,
                    stop: int | None = None, step: int | None = None) -> AnyArray:
        """Read the rows in the order of the ``sortby`` column's index.

        ``start``, ``stop`` and ``step`` select positions in that order by PyTables'
        ``Index.read_indices`` rules, not a slice's: a ``start`` alone reads one row, and a
        negative ``step`` reads positions ``start:stop`` of the descending order.  The
        column needs a 'full' index
        (:meth:`~hyperslab.nodes.tables.columns.Column.create_csindex`); with ``checkCSI`` it
        must be completely sorted (CSI).

        Raises
        ------
        ValueError
            If the column has no clean 'full' index (or no CSI one with ``checkCSI``).
        RuntimeError
            If another thread changes the index while the rows are read.
        """
        indexing = self._indexing
        table = indexing.table
        if field is not None:
            field_of(np.zeros(0, table.dtype), field)  # check the name before reading
        index = indexing.sortby_index(sortby, checkCSI)
        # PyTables reads index[start:stop:step]: the index's range rules, not a slice's
        positions = index_positions(index.nelements, start, stop, step)
        parts = [records for _, records in indexing.sorted_records(index, positions)]
        records = np.concatenate(parts) if parts else np.empty(0, dtype=table.dtype)
        return table._flavored(table._field(records, field))

    def itersorted(self, sortby: Any, checkCSI: bool = False,
                   start: int | None = None, stop: int | None = None,
                   step: int | None = None) -> Iterator[Row]:
        """Iterate over the rows in the order of the ``sortby`` column's index, streaming
        (see :meth:`read_sorted`; here ``start:stop:step`` is a slice of that order, as in
        PyTables).

        Rows appended meanwhile are not part of the iteration.  If the index changes before
        the end (the table is flushed after appends, or rows are changed), the next step
        raises ``RuntimeError``: the order would not continue.
        """
        indexing = self._indexing
        index = indexing.sortby_index(sortby, checkCSI)
        positions = range(*slice(start, stop, step).indices(index.nelements))
        return indexing.table._rows_at(indexing.sorted_records(index, positions))


__all__ = ["IndexedTable", "TableIndexes"]
