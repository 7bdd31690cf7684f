"""PyTables' ``tables.table``: ``Table``, ``Cols`` and ``Column``.

As PyTables' module loads its query machinery (``tables.conditions``, ``tables.index``)
when imported, this one loads :mod:`hyperslab.compute.queries`, which ``Table``'s query
methods import on first use: the first query of a program (pandas' ``read_hdf(where=...)``)
then does not pay for importing it.
"""

from __future__ import annotations

from hyperslab.compute import queries as _queries  # noqa: F401  (see the docstring)
from hyperslab.nodes.tables.columns import Cols, Column
from hyperslab.nodes.tables.table import Table

__all__ = ["Cols", "Column", "Table"]
