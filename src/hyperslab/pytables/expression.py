"""PyTables' ``tables.expression``: ``Expr``."""

from __future__ import annotations

from hyperslab.compute.expressions import Expr

__all__ = ["Expr"]
