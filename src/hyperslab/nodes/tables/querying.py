"""Querying a table with numexpr conditions (a mixin of
:class:`~hyperslab.nodes.tables.table.Table`).

The queries themselves are in :mod:`hyperslab.compute.queries`, a layer above the nodes:
these methods delegate to it through function-level imports, the one upward import the
layer contract in ``pyproject.toml`` declares.  Each passes ``depth=1``: without
``condvars``, a condition's variables come from the frame that called the method.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from hyperslab._typing import AnyArray

if TYPE_CHECKING:
    from hyperslab.compute.queries import IndexedCondition
    from hyperslab.nodes.tables.row import Row
    from hyperslab.nodes.tables.table import Table


class QueryableTable:
    """``where`` and the other query methods of Table."""

    def where(
        self, condition: str, condvars: dict[str, Any] | None = None,
        start: int | None = None, stop: int | None = None, step: int | None = None,
    ) -> Iterator[Row]:
        """Iterate over the rows that fulfil ``condition`` (an in-kernel numexpr query).

        Variables of the condition are column names, names in ``condvars`` or, when it is
        None, variables of the calling frame.  Errors in the condition are raised here,
        before any row is produced.

        Examples
        --------
        ``[row['col2'] for row in table.where('(col1 > 0) & (col3 < lim)')]``
        """
        from hyperslab.compute import queries

        return queries.where(self, condition, condvars, start, stop, step, depth=1)

    def read_where(
        self, condition: str, condvars: dict[str, Any] | None = None,
        field: str | None = None, start: int | None = None, stop: int | None = None,
        step: int | None = None,
    ) -> AnyArray:
        """The rows (or column ``field``) that fulfil ``condition``, in the table's flavor."""
        from hyperslab.compute import queries

        rows = queries.read_where(self, condition, condvars, field, start, stop, step, depth=1)
        return cast("Table", self)._flavored(rows)

    def get_where_list(
        self, condition: str, condvars: dict[str, Any] | None = None, sort: bool = False,
        start: int | None = None, stop: int | None = None, step: int | None = None,
    ) -> AnyArray:
        """The coordinates (int64) of the rows that fulfil ``condition``, in the table's
        flavor."""
        from hyperslab.compute import queries

        coords = queries.get_where_list(self, condition, condvars, sort, start, stop, step,
                                        depth=1)
        return cast("Table", self)._flavored(coords)

    def append_where(
        self, dstTable: Table, condition: str | None = None,  # PyTables' name
        condvars: dict[str, Any] | None = None, start: int | None = None,
        stop: int | None = None, step: int | None = None,
    ) -> int:
        """Append the rows that fulfil ``condition`` (every row of ``start:stop:step``
        without one) to ``dstTable``; return how many.

        Raises
        ------
        ClosedNodeError
            If this table is closed.
        FileModeError
            If ``dstTable``'s file is read-only.
        """
        from hyperslab.compute import queries

        cast("Table", self)._g_check_open()

        return queries.append_where(self, dstTable, condition, condvars, start, stop, step,
                                    depth=1)

    def will_query_use_indexing(
        self, condition: str, condvars: dict[str, Any] | None = None
    ) -> frozenset[str]:
        """The indexed columns a query would use (none until indexes exist)."""
        from hyperslab.compute import queries

        return queries.will_query_use_indexing(self, condition, condvars, depth=1)

    def to_dask(
        self, columns: Sequence[str] | str | None = None, where: str | None = None,
        chunksize: int | None = None, condvars: dict[str, Any] | None = None,
        index: str | None = None,
    ) -> Any:
        """A dask dataframe of this table, one partition per range of whole table chunks.

        Each task reads its rows (or, with ``where``, runs the condition on them as an
        in-kernel or indexed query) and keeps ``columns``; nested columns are flattened
        under their path names (``'info/x'``).  The index is the row number, so the
        divisions are known, filtered or not; or, with ``index``, a column, and the
        divisions are known when its index proves the rows stored in its order.  The
        graph holds this table, which pickles when its file is open read-only, so it runs
        on ``dask.distributed`` clusters of processes too.  See ``docs/dask.md``.

        Parameters
        ----------
        columns : str or sequence of str, optional
            Column path names (a nested column stands for all its leaf columns); default
            all.  Columns whose cells are arrays cannot be dataframe columns.
        where : str, optional
            A condition (as :meth:`read_where`'s) the rows must fulfil.  Its variables are
            columns or names in ``condvars``, never the caller's (the tasks run elsewhere).
        chunksize : int, optional
            Rows per partition, rounded up to whole chunks.  Default: as many whole chunks
            as fit in Dask's ``array.chunk-size`` config (128 MiB by default).
        condvars : dict, optional
            Values of the condition's non-column variables (they must pickle).
        index : str, optional
            A leaf column (path name) to index the dataframe by, instead of the row
            number; it is then no data column unless ``columns`` names it.  The divisions
            are known (the column's values at each partition's first row and at the last
            row) when the column has a clean, completely sorted full index
            (``create_csindex()``) showing the rows stored in the column's order (its
            values never decrease): ties may come in any order in the index, NaNs rule it
            out.  Partitions whose boundary falls inside a run of equal values are
            merged, so each value is in one partition.  Otherwise (no such index, a dirty
            or stale one, unsorted rows) the divisions are unknown.  An extension of
            hyperslab's (``to_dask`` is not PyTables').

        Returns
        -------
        dask.dataframe.DataFrame

        Raises
        ------
        ImportError
            If dask's dataframes are not installed (``pip install 'dask[dataframe]'``).
        KeyError
            If a name of ``columns``, or ``index``, is no column.
        ValueError
            If a chosen column or ``index`` has array cells, ``index`` is a nested group of
            columns, or ``chunksize`` is not positive.
        TypeError
            If ``index`` is not a string.
        NameError, TypeError, SyntaxError
            As :meth:`read_where`, for a bad ``where`` (raised here, not in the tasks).

        Examples
        --------
        >>> import hyperslab, numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.h5")
        >>> with hyperslab.open_file(path, "w") as f:
        ...     t = f.create_table("/", "t", np.dtype([("a", "i4"), ("b", "f8")]),
        ...                        chunkshape=(4,))
        ...     t.append([(i, i / 2) for i in range(10)])
        >>> with hyperslab.open_file(path) as f:
        ...     df = f.root.t.to_dask(where="a % 3 == 0", chunksize=4)
        ...     print(df.divisions, df.b.sum().compute())
        (0, 4, 8, 9) 9.0

        The same table indexed by ``a``, which is stored sorted (a CSI index proves it):

        >>> with hyperslab.open_file(path, "a") as f:
        ...     _ = f.root.t.cols.a.create_csindex()
        >>> with hyperslab.open_file(path) as f:
        ...     df = f.root.t.to_dask(index="a", chunksize=4)
        ...     print(df.divisions, df.loc[3:5].b.sum().compute())
        (0, 4, 8, 9) 6.0
        """
        from hyperslab.compute.daskio.tables import table_to_dask

        return table_to_dask(self, columns, where, chunksize, condvars, index)

    def _required_expr_vars(
        self, expression: str, uservars: dict[str, Any] | None, depth: int = 1
    ) -> dict[str, Any]:
        """What each name of ``expression`` refers to: a column object or a 0-d array
        (PyTables' helper, checked as :meth:`where` checks).  Without ``uservars``, names
        that are not columns come from the frame ``depth`` levels above this method."""
        from hyperslab.compute import queries

        return queries.required_expr_vars(self, expression, uservars, depth=depth)

    def _compile_condition(self, condition: str, condvars: dict[str, Any]
                           ) -> IndexedCondition:
        """``condition`` compiled, with the part usable indexes answer in PyTables' form
        (``index_expressions``, ``string_expression``, ``index_variables``).  It describes
        the condition only: queries choose their indexes themselves."""
        from hyperslab.compute import queries

        return queries.compile_indexed_condition(self, condition, condvars)
