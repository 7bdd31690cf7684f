"""PyTables' ``tables.description``: ``Col`` classes, ``Description``, ``IsDescription``."""

from __future__ import annotations

from hyperslab.nodes.atoms.cols import *  # noqa: F403
from hyperslab.nodes.atoms.cols import __all__ as _col_names
from hyperslab.nodes.atoms.description import (
    Description,
    IsDescription,
    MetaIsDescription,
    descr_from_dtype,
    dtype_from_descr,
)

__all__ = [*_col_names, "Description", "IsDescription", "MetaIsDescription",
           "descr_from_dtype", "dtype_from_descr"]
