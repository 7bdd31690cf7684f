"""PyTables' ``tables.filters``: ``Filters`` and the compression library names."""

from __future__ import annotations

from hyperslab.codecs.filters import ALL_COMPLIBS, DEFAULT_COMPLIB, FOREIGN_COMPLIBS, Filters
from hyperslab.storage.libraries import blosc_compcode_to_compname

all_complibs = list(ALL_COMPLIBS)
"""Every compression library name ``Filters`` accepts."""

foreign_complibs = list(FOREIGN_COMPLIBS)
"""Compression libraries of files written elsewhere, read but never written."""

default_complib = DEFAULT_COMPLIB
"""The compression library of ``Filters`` when none is named."""

__all__ = ["Filters", "all_complibs", "blosc_compcode_to_compname", "default_complib",
           "foreign_complibs"]
