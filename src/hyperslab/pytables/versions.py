"""Versions PyTables code asks about: the API level implemented and the libraries used."""

from __future__ import annotations

from hyperslab.storage.libraries import library_versions

PYTABLES_API_VERSION = "3.11.0"
"""The PyTables release whose API this layout implements."""

hdf5_version: str = library_versions()["hdf5"] or "unknown"
"""The version of the HDF5 library in use (``tables.hdf5_version``)."""


def print_versions() -> None:
    """Print the versions of hyperslab, the PyTables API it implements and the libraries
    it runs on (PyTables' ``print_versions``)."""
    import platform
    import sys

    import numexpr
    import numpy

    from hyperslab import __version__

    versions = library_versions()
    print("-=" * 38)
    print(f"PyTables API version: {PYTABLES_API_VERSION} (hyperslab {__version__})")
    print(f"HDF5 version:        {hdf5_version}")
    print(f"NumPy version:       {numpy.__version__}")
    print(f"Numexpr version:     {numexpr.__version__}")
    print(f"Blosc2 version:      {versions['blosc2']}")
    print(f"Zlib version:        {versions['zlib']}")
    print(f"Python version:      {sys.version}")
    print(f"Platform:            {platform.platform()}")
    print(f"Byte-ordering:       {sys.byteorder}")
    print("-=" * 38)
