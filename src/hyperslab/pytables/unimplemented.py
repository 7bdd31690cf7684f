"""PyTables' ``tables.unimplemented``: nodes of types PyTables cannot read."""

from __future__ import annotations

from hyperslab.nodes.files.link import Unknown
from hyperslab.nodes.leaves.array import UnImplemented

__all__ = ["UnImplemented", "Unknown"]
