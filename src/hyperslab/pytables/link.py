"""PyTables' ``tables.link``: the link node classes."""

from __future__ import annotations

from hyperslab.nodes.files.link import ExternalLink, Link, SoftLink

__all__ = ["ExternalLink", "Link", "SoftLink"]
