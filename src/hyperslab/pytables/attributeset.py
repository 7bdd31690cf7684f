"""PyTables' ``tables.attributeset``: ``AttributeSet`` and the system attribute names."""

from __future__ import annotations

from hyperslab.nodes.tree.attributeset import SYS_ATTRS as _SYS_ATTRS
from hyperslab.nodes.tree.attributeset import AttributeSet, is_sys_attr

SYS_ATTRS = sorted(_SYS_ATTRS)
"""System attribute names (besides those starting with one of :data:`SYS_ATTRS_PREFIXES`)."""

SYS_ATTRS_PREFIXES = ["FIELD_"]
"""Prefixes of system attribute names."""

issysattrname = is_sys_attr

__all__ = ["SYS_ATTRS", "SYS_ATTRS_PREFIXES", "AttributeSet", "issysattrname"]
