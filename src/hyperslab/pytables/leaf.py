"""PyTables' ``tables.leaf``: ``Leaf`` and ``ChunkInfo``."""

from __future__ import annotations

from hyperslab.nodes.leaves.directchunk import ChunkInfo
from hyperslab.nodes.leaves.leaf import Leaf

__all__ = ["ChunkInfo", "Leaf"]
