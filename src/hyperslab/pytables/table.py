"""PyTables' ``tables.table``: ``Table``, ``Cols`` and ``Column``."""

from __future__ import annotations

from hyperslab.nodes.tables.columns import Cols, Column
from hyperslab.nodes.tables.table import Table

__all__ = ["Cols", "Column", "Table"]
