"""Column access of tables: ``table.cols`` (:class:`Cols`) and :class:`Column`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.selection import broadcast_value
from hyperslab.chunked.tiles import Uniform
from hyperslab.nodes.atoms.description import Description, field_of
from hyperslab.nodes.atoms.tablelayout import names_by_offset
from hyperslab.nodes.leaves.reducible import Reducible
from hyperslab.nodes.members import is_member, member_failed
from hyperslab.nodes.tables.colattrs import ColumnAttributeSet
from hyperslab.nodes.tables.reading import positive_slice

Result = TypeVar("Result")

if TYPE_CHECKING:
    from hyperslab.nodes.atoms.cols import Col
    from hyperslab.nodes.tables.table import Table


class _ColumnTiles:
    """The tiles of a column for reductions: the table's blocks of rows, read and cut in
    the table's pool threads (see :mod:`hyperslab.compute.reductions`)."""

    def __init__(self, column: Column) -> None:
        self._column = column
        self.shape: Shape = column.shape
        self.dtype: np.dtype[Any] = column.dtype.base

    def _map_tiles(self, work: Callable[[Any, Any], Result],
                   along: Sequence[int] = ()) -> Iterator[Result]:
        """``work(box, values)`` for every block of rows (``along`` is ignored: the blocks
        are the table's).  When most of the table's chunks were never written, their rows
        come as one :class:`~hyperslab.chunked.tiles.Uniform` per run of them."""
        column = self._column
        cell = tuple((0, n) for n in column.dtype.shape)

        def tile(first: int, records: AnyArray) -> Result:
            values = np.ascontiguousarray(field_of(records, column.pathname))
            return work(((first, first + len(values)), *cell), values)

        table = column.table
        nrows = table.nrows
        io = table._ready()
        written = io.written_runs(0, nrows)
        fill = None if written is None else self._fill(written[1])
        if written is None or fill is None:
            return table._map_blocks(0, nrows, 1, tile)
        return self._sparse_tiles(work, tile, written[0], nrows, cell, fill)

    def _fill(self, record: AnyArray) -> np.generic | None:
        """The column's value in ``record``, the fill value of rows never written (None:
        not one value in each cell)."""
        values = np.asarray(field_of(record, self._column.pathname))
        first = values.reshape(-1)[0]
        same = np.array_equal(values, np.full_like(values, first), equal_nan=True) \
            if values.dtype.kind in "fc" else bool((values == first).all())
        return self.dtype.type(first) if same else None

    def _sparse_tiles(self, work: Callable[[Any, Any], Result],
                      tile: Callable[[int, AnyArray], Result], runs: list[tuple[int, int]],
                      nrows: int, cell: tuple[tuple[int, int], ...],
                      fill: np.generic) -> Iterator[Result]:
        table = self._column.table
        at = 0
        for lo, hi in [*runs, (nrows, nrows)]:
            if lo > at:  # rows never written: the fill value
                yield work(((at, lo), *cell), Uniform(fill, (lo - at, *(b for _, b in cell))))
            if hi > lo:
                yield from table._map_blocks(lo, hi, 1, tile)
            at = hi


class Column(Reducible):
    """One leaf column of a table: read and write its values like an array, and reduce it
    out of core (``sum``, ``mean``, ``min``, ... as NumPy, see :class:`.Reducible`).

    Examples
    --------
    ``table.cols.energy[:10]``, ``table.cols._f_col('info/x')[mask] = 0``,
    ``table.cols.energy.mean()``.
    """

    def _reduction_source(self) -> _ColumnTiles:
        return _ColumnTiles(self)

    # Boxes for expressions (hyperslab.Expr): rows read in the calling (pool) thread.
    def _tile_engine(self) -> Any:
        return self.table._engine

    def _tile_chunkshape(self) -> tuple[int, ...]:
        return (self.table._ready().chunkrows, *self._dtype.shape)

    def _read_tile(self, box: Any, step: int = 1) -> AnyArray:
        (lo, hi), *cell = box
        records = self.table._ready().read_span(lo, hi, serial=True)
        values = field_of(records[::step], self.pathname)
        return values[(slice(None), *(slice(a, b) for a, b in cell))]

    def __init__(self, table: Table, col: Col | None, *, pathname: str | None = None,
                 dtype: np.dtype[Any] | None = None) -> None:
        self.table = table
        if col is not None:
            self.pathname: str = col._v_pathname
            self._dtype: np.dtype[Any] = col.dtype
        else:  # from the table's record dtype: its Col is found when first needed
            assert pathname is not None and dtype is not None
            self.pathname, self._dtype = pathname, dtype
        self.name: str = self.pathname.rsplit("/", 1)[-1]
        self._col_ = col

    @property
    def _col(self) -> Col:
        """The column's definition in the table's description (made on first use)."""
        col = self._col_
        if col is None:
            col = self._col_ = _described(self.table, self.pathname)
        return col

    @property
    def descr(self) -> Description:
        """The description holding the column."""
        return self._col._v_parent

    @property
    def dtype(self) -> np.dtype[Any]:
        """NumPy dtype of one cell (with its shape for multidimensional cells)."""
        return self._dtype

    @property
    def type(self) -> str:
        """PyTables type name of the column (``'int32'``, ``'string'``, ``'enum'``...)."""
        return str(self._col.type)

    @property
    def shape(self) -> Shape:
        """``(nrows,)`` followed by the shape of a cell."""
        return (self.table.nrows, *self._dtype.shape)

    @property
    def maindim(self) -> int:
        """Rows are along dimension 0."""
        return 0

    @property
    def index(self) -> Any:
        """The column's :class:`~hyperslab.nodes.indexes.store.ColumnIndex`, or None."""
        return self.table._indexing.indexes.get(self.pathname)

    @property
    def is_indexed(self) -> bool:
        """Whether the column is indexed."""
        return self.pathname in self.table._indexing.indexes

    def create_index(self, optlevel: int = 6, kind: str = "medium", filters: Any = None,
                     tmp_dir: str | None = None, _blocksizes: Any = None,
                     _testmode: bool = False, _verbose: bool = False,
                     progress: Any = None) -> int:
        """Index the column; return the number of rows indexed.

        The index is stored in PyTables' own layout (a group ``_i_<table>`` beside the
        table), so PyTables uses, updates and rebuilds it, and hyperslab those PyTables
        builds.  The column is sorted out of core, in bounded memory (sorted runs spilled
        to ``tmp_dir`` and merged), which makes every full index completely sorted (a
        CSI).  Queries (:meth:`Table.where` and its siblings) use it for ranges on this
        column.

        Parameters
        ----------
        optlevel : int
            0 to 9: PyTables' slice sizes and value reduction for that level.
        kind : {'ultralight', 'light', 'medium', 'full'}
            What the index records of each value: its bucket of rows (8, 16 or 32 bits),
            or its row ('full', required by :meth:`Table.read_sorted` and
            ``copy(sortby=...)``).
        filters : Filters, optional
            Compression of the index (PyTables' default, zlib 1 with shuffle).
        tmp_dir : str, optional
            Where sorted runs go while a big index is built (the system's temp folder).
        _blocksizes : tuple of 4 int, optional
            PyTables' low-level ``(superblocksize, blocksize, slicesize, chunksize)``.
        _testmode, _verbose : bool
            Accepted for PyTables' signature; they change nothing.
        progress : bool, callable or None
            A progress bar on stderr (True), none (False), or ``progress(rows_done)``
            called as the build goes (hyperslab's own); None, the default: a bar for
            builds of a million rows or more when stderr is a terminal.

        Raises
        ------
        ValueError
            If the column is already indexed (use :meth:`reindex`), or for a bad
            ``kind``/``optlevel``/``_blocksizes``.
        TypeError
            If the column cannot be indexed (complex, multidimensional cells).
        NotImplementedError
            For uint64 columns (queries cannot use them either, as in PyTables).
        """
        if self.dtype == np.dtype("uint64"):
            raise NotImplementedError(f"indexing 64-bit unsigned integer columns is not "
                                      f"supported (column '{self.pathname}'), as in PyTables")
        existing = self.index
        if existing is not None:
            raise ValueError(f"{existing} for column '{self.pathname}' already exists. If "
                             f"you want to re-create it, please, try with reindex() method "
                             f"better")
        return self.table._indexing.create(self.pathname, optlevel=optlevel, kind=kind,
                                           filters=filters, tmp_dir=tmp_dir,
                                           blocksizes=_blocksizes, progress=progress)

    def create_csindex(self, filters: Any = None, tmp_dir: str | None = None,
                       _blocksizes: Any = None, _testmode: bool = False,
                       _verbose: bool = False, progress: Any = None) -> int:
        """Create a completely sorted index (CSI): ``create_index(9, 'full', ...)``."""
        return self.create_index(9, "full", filters, tmp_dir, _blocksizes,
                                 progress=progress)

    def reindex(self) -> None:
        """Rebuild the column's index from scratch (nothing happens if there is none)."""
        self.table._indexing.reindex(self.pathname)

    def reindex_dirty(self) -> None:
        """Rebuild the column's index if it is dirty."""
        self.table._indexing.reindex(self.pathname, dirty_only=True)

    def remove_index(self) -> None:
        """Remove the column's index (nothing happens if there is none)."""
        self.table._indexing.remove(self.pathname)

    @property
    def _v_pos(self) -> int:
        """The column's position in the description that holds it."""
        pos = self._col._v_pos
        assert pos is not None  # a table's description places every column
        return pos

    @property
    def _v_col_attrs(self) -> dict[str, Any]:
        """The metadata its :class:`Col` was given (``attrs=``)."""
        return self._col._v_col_attrs

    @property
    def attrs(self) -> ColumnAttributeSet:
        """The column's attributes, kept in the table's (``FIELD_<pos>_ATTR_<name>``)."""
        return ColumnAttributeSet(self)

    _v_attrs = attrs

    @property
    def _table_file(self) -> Any:
        return self.table._v_file

    @property
    def _table_path(self) -> str:
        return self.table._v_pathname

    def __len__(self) -> int:
        return self.table.nrows

    def _where(self) -> str:
        return f"column {self.pathname!r} of {self.table._v_pathname}"

    def __getitem__(self, key: Any) -> Any:
        """Values by int, slice (a positive step), int array or boolean mask."""
        table = self.table
        if isinstance(key, (int, np.integer)):
            index = table._row_number(key, where=self._where())
            return table.read(index, index + 1, field=self.pathname)[0]
        if isinstance(key, slice):
            key = positive_slice(key)
            return table.read(key.start, key.stop, key.step, field=self.pathname)
        if isinstance(key, (list, np.ndarray)):
            return table.read_coordinates(key, field=self.pathname)
        raise TypeError(f"invalid index or slice for a column: {key!r:.80}")

    def __setitem__(self, key: Any, value: Any) -> None:
        """Set values by int, slice (step >= 1), int array or boolean mask."""
        table = self.table
        if isinstance(key, (int, np.integer)):
            index = table._row_number(key, where=self._where())
            table.modify_column(index, index + 1, 1, [value], self.pathname)
            return
        if isinstance(key, slice):
            rows = range(*key.indices(table.nrows))
            if rows.step < 0:
                rows = rows[::-1]
                value = np.asarray(value)[::-1]
            table.modify_column(rows.start, rows.stop, rows.step,
                                self._values_for(value, len(rows)), self.pathname)
            return
        if isinstance(key, (list, np.ndarray)):
            table._check_writable_table()
            coords = table._coords(key, table.nrows)
            records = table.read_coordinates(coords)
            field_of(records, self.pathname)[...] = value
            table._write_coordinates(coords, records)
            return
        raise TypeError(f"invalid index or slice for a column: {key!r:.80}")

    def _values_for(self, value: Any, count: int) -> AnyArray:
        """``value`` broadcast to ``count`` cells of this column."""
        cell = self._dtype
        base, shape = cell.subdtype if cell.subdtype is not None else (cell, ())
        array = np.asarray(value, dtype=base)
        return broadcast_value(array, (count, *shape))

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the values, reading the table in blocks."""
        for _first, block in self.table._iter_blocks(None, None, None, [self.pathname]):
            yield from field_of(block, self.pathname)

    def __repr__(self) -> str:
        return (f"{self.table._v_pathname}.cols.{self.pathname.replace('/', '.')} "
                f"(Column({self.table.nrows},), {self.dtype.base}, idx=None)")

    __str__ = __repr__


class Cols:
    """The columns of a table, or of a nested column (``table.cols``, ``table.cols.info``).

    Columns are attributes (natural naming) and also reachable by path with
    :meth:`_f_col`.  Indexing reads rows restricted to these columns.
    """

    def __init__(self, table: Table, descr: Description | None, *, path: str = "",
                 dtype: np.dtype[Any] | None = None) -> None:
        self._v_table = table
        self._v_desc_ = descr
        self._v_path = descr._v_pathname if descr is not None else path
        self._children: dict[str, Column | Cols] = {}
        if descr is not None:
            for name in descr._v_names:
                child = descr._v_colobjects[name]
                if isinstance(child, Description):
                    self._children[name] = Cols(table, child)
                else:
                    self._children[name] = Column(table, child)
            return
        # From the table's native record dtype (fields in offset order, as a description
        # made from the file's layout has them): a query right after opening needs the
        # columns' names and dtypes, not their defaults.
        assert dtype is not None and dtype.fields is not None
        for name in names_by_offset(dtype):
            field = dtype.fields[name][0]
            child_path = f"{path}/{name}" if path else name
            if field.names is not None:
                self._children[name] = Cols(table, None, path=child_path, dtype=field)
            else:
                self._children[name] = Column(table, None, pathname=child_path,
                                              dtype=_native_cell(field))

    @property
    def _v_desc(self) -> Description:
        """The description of these columns (made on first use)."""
        descr = self._v_desc_
        if descr is None:
            descr = self._v_desc_ = _described(self._v_table, self._v_path)
        return descr

    @property
    def _v_colnames(self) -> list[str]:
        """Names of the columns at this level."""
        return list(self._v_desc._v_names)

    @property
    def _v_colpathnames(self) -> list[str]:
        """Path names of the leaf columns below this level."""
        return [col._v_pathname for col in self._v_desc._f_walk("Col")]

    def _f_col(self, colname: str) -> Column | Cols:
        """The column (or nested group of columns) at path ``colname`` (``'info/x'``).

        Raises
        ------
        KeyError
            If no column has that path.
        """
        node: Column | Cols = self
        for part in colname.split("/"):
            if not isinstance(node, Cols) or part not in node._children:
                raise KeyError(f"table {self._v_table._v_pathname} has no column {colname!r}")
            node = node._children[part]
        return node

    def __getattr__(self, name: str) -> Column | Cols:
        children = self.__dict__.get("_children", {})
        if name in children:
            return children[name]
        if is_member(self, name):  # a member's own code failed: its error, not a column's
            return member_failed(self, name)
        raise AttributeError(f"table {self._v_table._v_pathname} has no column {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._children))

    def __len__(self) -> int:
        """The number of columns at this level (nested ones count as one), as PyTables."""
        return len(self._v_colnames)

    def __getitem__(self, key: Any) -> Any:
        """Rows (by int, slice, int array or mask) restricted to these columns."""
        records = self._v_table[key]
        path = self._v_path
        return field_of(records, path) if path else records

    def __repr__(self) -> str:
        table = self._v_table
        path = self._v_path
        where = f"{table._v_pathname}.cols" + (f".{path.replace('/', '.')}" if path else "")
        lines = [f"{where} (Cols), {len(self._children)} columns"]
        for name, child in self._children.items():
            if isinstance(child, Cols):
                lines.append(f"  {name} (Cols(), Description)")
            else:
                lines.append(f"  {name} (Column({table.nrows},), {child.dtype.base})")
        return "\n".join(lines)

    __str__ = __repr__


def _described(table: Table, path: str) -> Any:
    """The Col or nested Description at column path ``path`` ('' for the whole table) of
    the table's description."""
    found: Any = table.description
    for part in path.split("/") if path else ():
        found = found._v_colobjects[part]
    return found


def _native_cell(field: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of a column's cell in native byte order (as its Col has it)."""
    base = field.base
    if base.isnative or base.byteorder == "|":
        return field
    base = base.newbyteorder("=")
    return np.dtype((base, field.shape)) if field.shape else base


def column_instances(cols: Cols) -> dict[str, Column | Cols]:
    """Every column and nested group below ``cols``, by path name."""
    found: dict[str, Column | Cols] = {}
    for child in cols._children.values():
        if isinstance(child, Cols):
            found[child._v_path] = child
            found.update(column_instances(child))
        else:
            found[child.pathname] = child
    return found


__all__ = ["Cols", "Column", "column_instances"]
