"""PyTables' ``tables.misc`` package: ``tables.misc.enum`` (the ``Enum`` class) lives here,
as in PyTables.  Nothing else of PyTables' ``misc`` (its progress bar and proxy dicts, which
are internal helpers) is part of the API hyperslab implements."""

from __future__ import annotations

from hyperslab.pytables.misc import enum

__all__ = ["enum"]
