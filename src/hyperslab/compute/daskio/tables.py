"""Tables as dask dataframes, one partition per range of whole table chunks.

A partition is a range of rows that starts and ends on chunk boundaries (the last one at
the table's end), so no chunk is read by two tasks.  Its task reads those rows with
``table.read(start, stop)``, or with ``where=``, runs the condition on them as an in-kernel
(or indexed) query, ``read_where(where, start=, stop=)``, and keeps the asked columns,
nested ones flattened under PyTables' path names (``'info/x'``).  ``meta`` comes from the
table's description, never from its data.

**Index and divisions.**  By default the index is the row number, so the divisions are
known (the partitions' first rows, and the last row), filtered or not: a partition's rows
that pass the condition are still rows of its range.  With ``index='col'`` the index is
that column's values, and the divisions are known only when the table's rows are proven
stored in that column's order by its clean, completely sorted full index
(:func:`hyperslab.nodes.indexes.order.stored_in_order`); they are then the column's
values at each partition's first row and at the last row.  A boundary whose rows on both
sides hold the same value (a run of equal values across it) moves on to the run's end (a
partition then starts inside a chunk), or is dropped if the run reaches the next
boundary, so that each value lies in one partition only, as Dask's ``loc`` assumes.
Without such a proof the divisions are unknown (None), never guessed.

The graph holds the table, which pickles when its file is open read-only
(:mod:`hyperslab.nodes.files.pickling`): each worker process reopens the file once.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray

__all__ = ["dataframe_module", "partition_rows", "read_partition", "sorted_divisions",
           "table_to_dask"]


def dataframe_module() -> Any:
    """``dask.dataframe``, imported on first use.

    Raises
    ------
    ImportError
        If dask's dataframes (dask with pandas) are not installed, saying how to install
        them.
    """
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError(
            "this needs dask's dataframes, which are not installed: pip install "
            "'dask[dataframe]' (or pip install 'hyperslab[dask]')"
        ) from exc
    return dd


def partition_rows(nrows: int, chunkrows: int, rowsize: int,
                   chunksize: int | None = None) -> list[int]:
    """The first row of every partition, and ``nrows`` last.

    Parameters
    ----------
    nrows : int
        The table's rows.
    chunkrows : int
        Rows in one chunk of the table.
    rowsize : int
        Bytes of one row.
    chunksize : int, optional
        Rows per partition, rounded up to whole chunks.  Default: as many whole chunks as
        fit in Dask's ``array.chunk-size`` config (128 MiB by default), at least one.

    Raises
    ------
    ValueError
        If ``chunksize`` is not a positive number of rows.
    """
    if chunksize is None:
        import dask
        from dask.utils import parse_bytes

        target = parse_bytes(dask.config.get("array.chunk-size"))
        chunks = max(1, target // max(1, rowsize * chunkrows))
    else:
        if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) \
                or chunksize < 1:
            raise ValueError(f"chunksize must be a positive number of rows, got {chunksize!r}")
        chunks = -(-int(chunksize) // chunkrows)
    step = chunks * chunkrows
    return [*range(0, nrows, step), nrows] if nrows else [0, 0]


def _leaf_columns(table: Any, columns: Sequence[str] | str | None,
                  index: str | None = None) -> list[str]:
    """The leaf column path names asked for (a nested column stands for its leaves; by
    default every column but ``index``)."""
    paths: list[str] = list(table.colpathnames)
    if columns is None:
        columns = [path for path in paths if path != index]
    elif isinstance(columns, str):
        columns = [columns]
    chosen: list[str] = []
    for name in columns:
        found = [p for p in paths if p == name or p.startswith(f"{name}/")]
        if not found:
            raise KeyError(f"table ``{table._v_pathname}`` does not have a column named "
                           f"``{name}``")
        chosen.extend(p for p in found if p not in chosen)
    empty = np.zeros(0, table.dtype)
    for path in chosen:
        cells = _column(empty, path).shape[1:]
        if cells:
            raise ValueError(f"column ``{path}`` has cells of shape {cells}, which a "
                             "dataframe column cannot hold; leave it out of columns=")
    return chosen


def _index_column(table: Any, index: Any) -> str:
    """``index`` checked: the path name of one leaf column of scalar cells.

    Raises
    ------
    TypeError
        If ``index`` is not a string.
    KeyError
        If the table has no column of that name.
    ValueError
        If it names a nested group of columns, or a column of array cells.
    """
    if not isinstance(index, str):
        raise TypeError(f"index must be a column name (str), got {index!r}")
    paths: list[str] = list(table.colpathnames)
    if index not in paths:
        leaves = [p for p in paths if p.startswith(f"{index}/")]
        if leaves:
            raise ValueError(f"index ``{index}`` of table ``{table._v_pathname}`` is a "
                             f"nested group of columns ({', '.join(leaves)}): name one "
                             "leaf column")
        raise KeyError(f"table ``{table._v_pathname}`` does not have a column named "
                       f"``{index}`` (index=)")
    cells = _column(np.zeros(0, table.dtype), index).shape[1:]
    if cells:
        raise ValueError(f"index ``{index}`` has cells of shape {cells}, which a "
                         "dataframe index cannot hold")
    return index


def _column(records: AnyArray, path: str) -> AnyArray:
    for part in path.split("/"):
        records = records[part]
    return records


def _frame(records: AnyArray, columns: list[str], first: int, rows: AnyArray | None,
           index: str | None = None) -> Any:
    """``columns`` of ``records`` indexed by column ``index``, else by row number: the
    rows' numbers ``rows``, or ``first`` onwards."""
    import pandas as pd

    data = {path: _column(records, path) for path in columns}
    if index is not None:
        labels = pd.Index(_column(records, index), name=index)
    else:
        if rows is None:
            rows = np.arange(first, first + len(records), dtype=np.int64)
        labels = pd.Index(rows, dtype=np.int64)
    return pd.DataFrame(data, index=labels, columns=columns)


def read_partition(
    table: Any,
    start: int,
    stop: int,
    columns: list[str],
    where: str | None = None,
    condvars: Mapping[str, Any] | None = None,
    index: str | None = None,
) -> Any:
    """One partition: rows ``start:stop`` of ``table`` (those passing ``where``), as a
    pandas DataFrame of ``columns`` indexed by column ``index``, else by row number."""
    if where is None:
        records = table.read(start, stop)
        if not isinstance(records, np.ndarray):  # the 'python' flavor
            records = np.array(records, dtype=table.dtype)
        return _frame(records, columns, start, None, index)
    from hyperslab.compute import queries

    coords, records = queries.read_where_rows(table, where, condvars or {}, start, stop)
    return _frame(records, columns, start, coords, index)


def sorted_divisions(table: Any, column: str, bounds: list[int]
                     ) -> tuple[list[int], tuple[Any, ...]] | None:
    """The partitions' first rows and divisions when the table's rows are stored in
    ``column``'s order, else None.

    ``bounds`` are the partitions' first rows and the table's row count last
    (:func:`partition_rows`).  The order is proven by the column's index
    (:func:`~hyperslab.nodes.indexes.order.stored_in_order`); None without a usable one.
    Then each partition's first row, and the row before it, are read: a boundary between
    two rows of equal value moves on to the first row of a greater value (found in the
    index), or is dropped if that is not before the next boundary, so every value lies in
    one partition.

    Returns
    -------
    tuple of (list of int, tuple) or None
        The partitions' first rows (the row count last) and the divisions: the column's
        values at those rows and at the last row, as Python scalars.
    """
    from hyperslab.nodes.indexes.order import stored_in_order

    nrows = bounds[-1]
    index = table._usable_indexes([column]).get(column) if nrows else None
    if index is None or index.nelements != nrows or not stored_in_order(index):
        return None
    inner = bounds[1:-1]
    rows = sorted({0, nrows - 1, *inner, *(b - 1 for b in inner)})
    value = dict(zip(rows, _read_at(table, column, rows), strict=True))
    starts = [0]
    for first in inner:
        if value[first - 1] == value[first]:  # a run of equal values across it
            first = _after(index, value[first], nrows)
        if starts[-1] < first < nrows:
            starts.append(first)
    moved = [b for b in starts if b not in value]
    value.update(zip(moved, _read_at(table, column, moved), strict=True))
    divisions = tuple(value[b].item() for b in [*starts, nrows - 1])
    # The index proved this; the values read must agree, or nothing is claimed.
    if not all(a < b for a, b in itertools.pairwise(divisions[:-1])) \
            or not divisions[-2] <= divisions[-1]:
        return None
    return [*starts, nrows], divisions


def _read_at(table: Any, column: str, rows: list[int]) -> AnyArray:
    """``column``'s values at ``rows`` (NumPy scalars of its dtype)."""
    if not rows:
        return np.empty(0, table.coldtypes[column])
    return np.asarray(table.read_coordinates(rows, field=column), table.coldtypes[column])


def _after(index: Any, value: Any, nrows: int) -> int:
    """The first row whose value is above ``value``, from a column index of rows stored
    in its order (positions are rows), or ``nrows``."""
    slicesize = index.slicesize
    runs = index.search(value, False, None, False)
    return min((number * slicesize + start for number, start, _ in runs), default=nrows)


def _token(table: Any, *parts: Any) -> str:
    """The same for the same data of a read-only file, new otherwise."""
    from dask.base import tokenize

    file = table._v_file
    if file.mode == "r":
        try:
            stat = os.stat(file.filename)
        except OSError:
            pass
        else:
            return str(tokenize(os.path.realpath(file.filename), file.root_uep,
                                table._v_pathname, stat.st_size, stat.st_mtime_ns,
                                stat.st_ino, *parts))
    return uuid.uuid4().hex


def table_to_dask(
    table: Any,
    columns: Sequence[str] | str | None = None,
    where: str | None = None,
    chunksize: int | None = None,
    condvars: Mapping[str, Any] | None = None,
    index: str | None = None,
) -> Any:
    """A dask dataframe of ``table`` (see :meth:`hyperslab.Table.to_dask`)."""
    import pandas as pd

    dd = dataframe_module()
    if index is not None:
        index = _index_column(table, index)
    names = _leaf_columns(table, columns, index)
    if where is not None:
        from hyperslab.compute import queries

        # Errors in the condition here, not in the tasks.
        queries.read_where_rows(table, where, condvars or {}, 0, 0)
    chunkrows = int(table.chunkshape[0]) if table.chunkshape else max(1, table.nrows)
    bounds = partition_rows(int(table.nrows), chunkrows, int(table.rowsize), chunksize)
    meta = _frame(np.zeros(0, table.dtype), names, 0, None, index)
    assert isinstance(meta, pd.DataFrame)
    divisions: tuple[Any, ...] | None
    if index is None:
        divisions = (*bounds[:-1], max(bounds[-1] - 1, bounds[-2]))
    else:
        found = sorted_divisions(table, index, bounds)
        divisions = None
        if found is not None:
            bounds, divisions = found
    ranges = list(itertools.pairwise(bounds))
    vars_ = dict(condvars) if condvars is not None else None
    reader = _PartitionReader(table, names, where, vars_, index)
    reader.token = _token(table, names, where, sorted((vars_ or {}).items(), key=str), index)
    frame = dd.from_map(reader, ranges, meta=meta, divisions=divisions,
                        label=f"hyperslab-{table._v_name}", enforce_metadata=False)
    if divisions is not None and frame.index.dtype != meta.index.dtype:
        # Dask turned the index's type into its own (bytes into its string dtype, with
        # ``dataframe.convert-string``): the divisions must be of that type too.
        divisions = _converted(divisions, frame.index.dtype)
        frame = dd.from_map(reader, ranges, meta=meta, divisions=divisions,
                            label=f"hyperslab-{table._v_name}", enforce_metadata=False)
    return frame


def _converted(divisions: tuple[Any, ...], dtype: Any) -> tuple[Any, ...] | None:
    """``divisions`` as values of ``dtype``, or None if they no longer increase."""
    import pandas as pd

    values = pd.Index(list(divisions), dtype=object).astype(dtype).tolist()
    if all(a < b for a, b in itertools.pairwise(values[:-1])) and values[-2] <= values[-1]:
        return tuple(values)
    return None


class _PartitionReader:
    """The task function of a table's partitions (it pickles with the table)."""

    def __init__(self, table: Any, columns: list[str], where: str | None,
                 condvars: dict[str, Any] | None, index: str | None = None) -> None:
        self.table = table
        self.columns = columns
        self.where = where
        self.condvars = condvars
        self.index = index
        self.token = ""

    def __dask_tokenize__(self) -> str:
        """Dask's key of the reader: the same for the same data of a read-only file."""
        return self.token

    def __call__(self, rows: tuple[int, int]) -> Any:
        return read_partition(self.table, rows[0], rows[1], self.columns, self.where,
                              self.condvars, self.index)
