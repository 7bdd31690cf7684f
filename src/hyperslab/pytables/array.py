"""PyTables' ``tables.array``: ``Array``."""

from __future__ import annotations

from hyperslab.nodes.leaves.array import Array

__all__ = ["Array"]
