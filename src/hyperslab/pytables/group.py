"""PyTables' ``tables.group``: ``Group`` and ``RootGroup``."""

from __future__ import annotations

from hyperslab.nodes.tree.group import Group, RootGroup

__all__ = ["Group", "RootGroup"]
