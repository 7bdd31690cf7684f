"""PyTables' ``tables.earray``: ``EArray``."""

from __future__ import annotations

from hyperslab.nodes.leaves.array import EArray

__all__ = ["EArray"]
