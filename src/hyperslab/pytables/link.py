"""PyTables' ``tables.link``: soft and external links."""

from __future__ import annotations

from hyperslab.nodes.files.link import ExternalLink, Link, SoftLink

__all__ = ["ExternalLink", "Link", "SoftLink"]
