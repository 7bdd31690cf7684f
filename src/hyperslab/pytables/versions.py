"""Versions PyTables code asks about: the API level implemented and the libraries used."""

from __future__ import annotations

from hyperslab.storage.libraries import library_versions

PYTABLES_API_VERSION = "3.11.0"
"""The PyTables release whose API this layout implements."""

hdf5_version: str = library_versions()["hdf5"] or "unknown"
"""The version of the HDF5 library in use (``tables.hdf5_version``)."""
