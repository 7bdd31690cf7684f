"""Versions of the compiled libraries hyperslab reads and writes files with.

``hdf5`` is the HDF5 library h5py runs on; ``zlib`` the zlib Python links (HDF5's deflate
filter uses the system's); ``blosc2`` the C-Blosc2 library python-blosc2 runs on (hyperslab
encodes and decodes Blosc2 chunks with it); ``blosc`` and ``bzip2`` come from hdf5plugin's
filters, whose own version is given; ``lzo`` is never available.
"""

from __future__ import annotations

import functools
import zlib

import blosc2
import h5py
import hdf5plugin


@functools.cache
def library_versions() -> dict[str, str | None]:
    """Library name -> version string (None where the library is not available)."""
    return {
        "hdf5": h5py.version.hdf5_version,
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
        "lzo": None,
        "bzip2": hdf5plugin.version,
        "blosc": hdf5plugin.version,
        "blosc2": str(blosc2.blosclib_version).split()[0],
    }
