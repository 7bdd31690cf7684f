"""PyTables' ``tables.file``: ``File``, ``open_file``, ``copy_file`` and the registry of open
files."""

from __future__ import annotations

from hyperslab.nodes.files.file import File, copy_file, open_file
from hyperslab.nodes.files.openfiles import OPEN_POLICY, open_files

_FILE_OPEN_POLICY = OPEN_POLICY
"""How a file already open may be opened again: PyTables' ``"strict"`` or ``"default"``."""

_open_files = open_files
"""The open files by name (PyTables' ``_open_files`` registry)."""

__all__ = ["File", "copy_file", "open_file"]
