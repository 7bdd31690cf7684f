"""Querying a table with numexpr conditions (a mixin of
:class:`~hyperslab.nodes.tables.table.Table`).

The queries themselves are in :mod:`hyperslab.compute.queries`, a layer above the nodes:
these methods delegate to it through function-level imports, the one upward import the
layer contract in ``pyproject.toml`` declares.  Each passes ``depth=1``: without
``condvars``, a condition's variables come from the frame that called the method.
"""

from __future__ import annotations

from collections.abc import Iterator
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
        self, dstTable: Table, condition: str,  # PyTables' name
        condvars: dict[str, Any] | None = None, start: int | None = None,
        stop: int | None = None, step: int | None = None,
    ) -> int:
        """Append the rows that fulfil ``condition`` to ``dstTable``; return how many."""
        from hyperslab.compute import queries

        return queries.append_where(self, dstTable, condition, condvars, start, stop, step,
                                    depth=1)

    def will_query_use_indexing(
        self, condition: str, condvars: dict[str, Any] | None = None
    ) -> frozenset[str]:
        """The indexed columns a query would use (none until indexes exist)."""
        from hyperslab.compute import queries

        return queries.will_query_use_indexing(self, condition, condvars, depth=1)

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
