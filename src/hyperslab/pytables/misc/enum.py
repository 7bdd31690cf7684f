"""PyTables' ``tables.misc.enum``: enumerated types."""

from __future__ import annotations

from hyperslab.nodes.atoms.enum import Enum

__all__ = ["Enum"]
