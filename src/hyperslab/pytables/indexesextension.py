"""PyTables' ``tables.indexesextension``: ``keysort``."""

from __future__ import annotations

from hyperslab.nodes.indexes.sort import keysort

__all__ = ["keysort"]
