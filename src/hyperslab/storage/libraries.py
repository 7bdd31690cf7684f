"""Versions of the compiled libraries hyperslab reads and writes files with.

``hdf5`` is the HDF5 library h5py runs on; ``zlib`` the zlib Python links (HDF5's deflate
filter uses the system's); ``blosc2`` the C-Blosc2 library python-blosc2 runs on (hyperslab
encodes and decodes Blosc2 chunks with it); ``blosc`` and ``bzip2`` come from hdf5plugin's
filters, whose own version is given; ``lzo`` is never available.
"""

from __future__ import annotations

import functools
import os
import zlib

import blosc2
import h5py
import hdf5plugin
import numpy as np


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


_BLOSC_COMPLIBS = {"blosclz": "BloscLZ", "lz4": "LZ4", "lz4hc": "LZ4", "zlib": "Zlib",
                   "zstd": "Zstd"}
_BLOSC_COMPCODES = {0: "blosclz", 1: "lz4", 2: "lz4hc", 4: "zlib", 5: "zstd"}
UNKNOWN_COMPCODE = "unknown (report this to developers)"
"""The name PyTables gives a Blosc compressor code it does not know."""


def blosc_compcode_to_compname(compcode: int) -> str:
    """The name of Blosc (and Blosc2) compressor ``compcode`` (snappy, 3, is absent)."""
    return _BLOSC_COMPCODES.get(compcode, UNKNOWN_COMPCODE)


def blosc2_complib_info() -> dict[str, tuple[str, str]]:
    """Blosc2 compressor name -> ``(library, version)``, as C-Blosc2 reports them."""
    info = {}
    for codec in blosc2.compressor_list():
        name = codec.name.lower()
        library, version = blosc2.clib_info(codec)
        info[name] = (library.decode(), version.decode())
    return info


def blosc_complib_info() -> dict[str, tuple[str, str]]:
    """Blosc compressor name -> ``(library, version)``.

    The Blosc filter is hdf5plugin's, which does not report the versions of the libraries
    it bundles: each version is ``'unknown'``.
    """
    return {name: (library, "unknown") for name, library in _BLOSC_COMPLIBS.items()}


def is_hdf5_file(filename: str | os.PathLike[str]) -> bool:
    """Whether HDF5 recognises ``filename`` as an HDF5 file (user blocks included).

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        If the file cannot be read.
    """
    path = os.fspath(filename)
    if not os.path.exists(path):
        raise FileNotFoundError(f"``{os.path.abspath(path)}`` does not exist")
    if not os.path.isfile(path):
        raise IsADirectoryError(f"``{os.path.abspath(path)}`` is not a regular file")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"file ``{os.path.abspath(path)}`` exists but it can not be read")
    return bool(h5py.is_hdf5(path))


def pytables_format_version(filename: str | os.PathLike[str]) -> str | None:
    """The ``PYTABLES_FORMAT_VERSION`` of HDF5 file ``filename``'s root group, or None
    where it has none (not written by PyTables or hyperslab) or is no HDF5 file.

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        If the file cannot be read.
    """
    if not is_hdf5_file(filename):
        return None
    with h5py.File(os.fspath(filename), "r") as h5:
        value = h5.attrs.get("PYTABLES_FORMAT_VERSION")
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    return None if value is None else str(value)
