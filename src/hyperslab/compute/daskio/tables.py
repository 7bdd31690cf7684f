"""Tables as dask dataframes, one partition per range of whole table chunks.

A partition is a range of rows that starts and ends on chunk boundaries (the last one at
the table's end), so no chunk is read by two tasks.  Its task reads those rows with
``table.read(start, stop)``, or with ``where=``, runs the condition on them as an in-kernel
(or indexed) query, ``read_where(where, start=, stop=)``, and keeps the asked columns,
nested ones flattened under PyTables' path names (``'info/x'``).  The index is the row
number, so the divisions are known (the partitions' first rows, and the last row), filtered
or not: a partition's rows that pass the condition are still rows of its range.  ``meta``
comes from the table's description, never from its data.

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

__all__ = ["dataframe_module", "partition_rows", "read_partition", "table_to_dask"]


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


def _leaf_columns(table: Any, columns: Sequence[str] | str | None) -> list[str]:
    """The leaf column path names asked for (a nested column stands for its leaves)."""
    paths: list[str] = list(table.colpathnames)
    if columns is None:
        columns = paths
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


def _column(records: AnyArray, path: str) -> AnyArray:
    for part in path.split("/"):
        records = records[part]
    return records


def _frame(records: AnyArray, columns: list[str], first: int, index: AnyArray | None) -> Any:
    import pandas as pd

    data = {path: _column(records, path) for path in columns}
    if index is None:
        index = np.arange(first, first + len(records), dtype=np.int64)
    return pd.DataFrame(data, index=pd.Index(index, dtype=np.int64), columns=columns)


def read_partition(
    table: Any,
    start: int,
    stop: int,
    columns: list[str],
    where: str | None = None,
    condvars: Mapping[str, Any] | None = None,
) -> Any:
    """One partition: rows ``start:stop`` of ``table`` (those passing ``where``), as a
    pandas DataFrame of ``columns`` indexed by row number."""
    if where is None:
        records = table.read(start, stop)
        if not isinstance(records, np.ndarray):  # the 'python' flavor
            records = np.array(records, dtype=table.dtype)
        return _frame(records, columns, start, None)
    from hyperslab.compute import queries

    coords, records = queries.read_where_rows(table, where, condvars or {}, start, stop)
    return _frame(records, columns, start, coords)


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
) -> Any:
    """A dask dataframe of ``table`` (see :meth:`hyperslab.Table.to_dask`)."""
    import pandas as pd

    dd = dataframe_module()
    names = _leaf_columns(table, columns)
    if where is not None:
        from hyperslab.compute import queries

        # Errors in the condition here, not in the tasks.
        queries.read_where_rows(table, where, condvars or {}, 0, 0)
    chunkrows = int(table.chunkshape[0]) if table.chunkshape else max(1, table.nrows)
    bounds = partition_rows(int(table.nrows), chunkrows, int(table.rowsize), chunksize)
    meta = _frame(np.zeros(0, table.dtype), names, 0, None)
    assert isinstance(meta, pd.DataFrame)
    divisions = (*bounds[:-1], max(bounds[-1] - 1, bounds[-2]))
    ranges = list(itertools.pairwise(bounds))
    vars_ = dict(condvars) if condvars is not None else None
    reader = _PartitionReader(table, names, where, vars_)
    reader.token = _token(table, names, where, sorted((vars_ or {}).items(), key=str))
    return dd.from_map(reader, ranges, meta=meta, divisions=divisions,
                       label=f"hyperslab-{table._v_name}", enforce_metadata=False)


class _PartitionReader:
    """The task function of a table's partitions (it pickles with the table)."""

    def __init__(self, table: Any, columns: list[str], where: str | None,
                 condvars: dict[str, Any] | None) -> None:
        self.table = table
        self.columns = columns
        self.where = where
        self.condvars = condvars
        self.token = ""

    def __dask_tokenize__(self) -> str:
        """Dask's key of the reader: the same for the same data of a read-only file."""
        return self.token

    def __call__(self, rows: tuple[int, int]) -> Any:
        return read_partition(self.table, rows[0], rows[1], self.columns, self.where,
                              self.condvars)
