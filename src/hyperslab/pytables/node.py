"""PyTables' ``tables.node``: ``Node`` and the ``NotLoggedMixin`` marker."""

from __future__ import annotations

from hyperslab.nodes.tree.node import Node, NotLoggedMixin

__all__ = ["Node", "NotLoggedMixin"]
