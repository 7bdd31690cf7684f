"""PyTables' ``tables.utils``: size type, byte order names and small helpers."""

from __future__ import annotations

import os

import numpy as np

from hyperslab.chunked.selection import idx2long, is_idx
from hyperslab.nodes.atoms.atomargs import BYTEORDERS, correct_byteorder
from hyperslab.nodes.files.openfiles import check_file_access
from hyperslab.nodes.leaves.leaf import quantize

byteorders = BYTEORDERS
"""NumPy byte order character -> PyTables' byte order name."""

SizeType = np.int64
"""The type PyTables gives sizes, shapes and row numbers."""


def detect_number_of_cores() -> int:
    """The number of CPUs online (PyTables' ``detect_number_of_cores``)."""
    return os.cpu_count() or 1


__all__ = ["SizeType", "byteorders", "check_file_access", "correct_byteorder",
           "detect_number_of_cores", "idx2long", "is_idx", "quantize"]
