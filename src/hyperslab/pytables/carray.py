"""PyTables' ``tables.carray``: ``CArray``."""

from __future__ import annotations

from hyperslab.nodes.leaves.array import CArray

__all__ = ["CArray"]
