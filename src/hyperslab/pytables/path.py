"""PyTables' ``tables.path``: node names and paths."""

from __future__ import annotations

from hyperslab.nodes.tree.naming import (
    check_attribute_name,
    check_name_validity,
    is_hidden_name,
    is_visible_path,
    join_path,
    split_path,
)


def isvisiblename(name: str) -> bool:
    """Whether a node of this name is visible (not ``_i_*`` nor ``_p_*``)."""
    return not is_hidden_name(name)


isvisiblepath = is_visible_path

__all__ = ["check_attribute_name", "check_name_validity", "isvisiblename", "isvisiblepath",
           "join_path", "split_path"]
