"""HDF5 filter identifiers and a small registry of their names and providers.

HDF5 identifies every filter in a dataset's pipeline by an integer.  Ids below 256 are
predefined by the HDF5 library; larger ones are registered with The HDF Group by plugin
authors.  :func:`filter_name` gives the short name hyperslab uses for an id (also the
``complib`` name PyTables uses, where there is one) and :func:`plugin_hint` says which
package provides the filter, so that an error about a filter nobody can decode names
the cure.

Examples
--------
>>> filter_name(BLOSC2)
'blosc2'
>>> plugin_hint(LZO)
'no Python package (LZO is not in hdf5plugin)'
>>> filter_name(12345)
'filter_12345'
"""

from __future__ import annotations

import operator
from typing import Final, NamedTuple

DEFLATE: Final = 1
"""zlib/gzip (``H5Z_FILTER_DEFLATE``); PyTables' ``'zlib'``."""
SHUFFLE: Final = 2
"""HDF5 byte shuffle (``H5Z_FILTER_SHUFFLE``)."""
FLETCHER32: Final = 3
"""HDF5 Fletcher32 checksum (``H5Z_FILTER_FLETCHER32``)."""
SZIP: Final = 4
"""SZIP (``H5Z_FILTER_SZIP``); PyTables reads it as the foreign complib ``'szip'``."""
NBIT: Final = 5
"""HDF5 N-bit packing (``H5Z_FILTER_NBIT``)."""
SCALEOFFSET: Final = 6
"""HDF5 scale-offset (``H5Z_FILTER_SCALEOFFSET``)."""
LZO: Final = 305
"""LZO, as written by PyTables builds that have it."""
BZIP2: Final = 307
"""bzip2 (PyTables' and hdf5plugin's filter)."""
LZF: Final = 32000
"""LZF, shipped inside h5py."""
BLOSC: Final = 32001
"""Blosc 1 (PyTables' ``'blosc'`` and ``'blosc:<codec>'``)."""
LZ4: Final = 32004
"""Stand-alone LZ4 filter (hdf5plugin)."""
BSHUF: Final = 32008
"""Bitshuffle filter, optionally with LZ4 or Zstd (hdf5plugin)."""
ZFP: Final = 32013
"""ZFP lossy floating-point compression (hdf5plugin)."""
ZSTD: Final = 32015
"""Stand-alone Zstandard filter (hdf5plugin)."""
SZ: Final = 32017
"""SZ lossy compression (hdf5plugin)."""
FCIDECOMP: Final = 32018
"""FCIDECOMP (hdf5plugin)."""
SZ3: Final = 32024
"""SZ3 lossy compression (hdf5plugin)."""
BLOSC2: Final = 32026
"""Blosc2 (PyTables' ``'blosc2'`` and ``'blosc2:<codec>'``; hdf5plugin)."""
SPERR: Final = 32028
"""SPERR lossy compression (hdf5plugin)."""
HTJ2K: Final = 32033
"""High-throughput JPEG 2000 (hdf5plugin)."""

H5Z_FLAG_MANDATORY: Final = 0x0000
"""Pipeline flag: the filter must succeed or the write fails."""
H5Z_FLAG_OPTIONAL: Final = 0x0001
"""Pipeline flag: a chunk may be stored unfiltered when the filter fails."""

_BUILTIN = "built into HDF5 (every h5py build has it)"
_HDF5PLUGIN = "hdf5plugin"
_REGISTRY_URL = "https://github.com/HDFGroup/hdf5_plugins/blob/master/docs/RegisteredFilterPlugins.md"


class _Entry(NamedTuple):
    name: str
    hint: str


_REGISTRY: Final[dict[int, _Entry]] = {
    DEFLATE: _Entry("deflate", _BUILTIN),
    SHUFFLE: _Entry("shuffle", _BUILTIN),
    FLETCHER32: _Entry("fletcher32", _BUILTIN),
    SZIP: _Entry("szip", "built into HDF5 when it is built with libaec (h5py's wheels are)"),
    NBIT: _Entry("nbit", _BUILTIN),
    SCALEOFFSET: _Entry("scaleoffset", _BUILTIN),
    LZO: _Entry("lzo", "no Python package (LZO is not in hdf5plugin)"),
    BZIP2: _Entry("bzip2", _HDF5PLUGIN),
    LZF: _Entry("lzf", "h5py (built in)"),
    BLOSC: _Entry("blosc", _HDF5PLUGIN),
    LZ4: _Entry("lz4", _HDF5PLUGIN),
    BSHUF: _Entry("bitshuffle", _HDF5PLUGIN),
    ZFP: _Entry("zfp", _HDF5PLUGIN),
    ZSTD: _Entry("zstd", _HDF5PLUGIN),
    SZ: _Entry("sz", _HDF5PLUGIN),
    FCIDECOMP: _Entry("fcidecomp", _HDF5PLUGIN),
    SZ3: _Entry("sz3", _HDF5PLUGIN),
    BLOSC2: _Entry("blosc2", _HDF5PLUGIN),
    SPERR: _Entry("sperr", _HDF5PLUGIN),
    HTJ2K: _Entry("htj2k", _HDF5PLUGIN),
}


def _check_id(filter_id: int) -> int:
    if isinstance(filter_id, bool):
        raise TypeError(f"a filter id must be an integer, not bool: {filter_id!r}")
    try:
        fid = operator.index(filter_id)  # accepts NumPy integers
    except TypeError:
        raise TypeError(
            f"a filter id must be an integer, not {type(filter_id).__name__}: {filter_id!r}"
        ) from None
    if not 0 <= fid <= 65535:
        raise ValueError(f"HDF5 filter ids are in 0..65535, got {fid}")
    return fid


def filter_name(filter_id: int) -> str:
    """Return the short name of an HDF5 filter id.

    Parameters
    ----------
    filter_id : int
        The id stored in the dataset's filter pipeline.

    Returns
    -------
    str
        ``'deflate'``, ``'shuffle'``, ``'blosc2'``, ... for known ids, and
        ``'filter_<id>'`` for ids this registry does not know.

    Raises
    ------
    TypeError
        If `filter_id` is not an integer.
    ValueError
        If `filter_id` is outside HDF5's range 0..65535.
    """
    fid = _check_id(filter_id)
    entry = _REGISTRY.get(fid)
    return entry.name if entry is not None else f"filter_{fid}"


def plugin_hint(filter_id: int) -> str:
    """Say which package provides the HDF5 filter `filter_id`.

    Parameters
    ----------
    filter_id : int
        The id stored in the dataset's filter pipeline.

    Returns
    -------
    str
        A short human-readable hint, e.g. ``'hdf5plugin'`` for Blosc, Blosc2 and bzip2.

    Raises
    ------
    TypeError
        If `filter_id` is not an integer.
    ValueError
        If `filter_id` is outside HDF5's range 0..65535.
    """
    fid = _check_id(filter_id)
    entry = _REGISTRY.get(fid)
    if entry is not None:
        return entry.hint
    return f"no known Python package provides filter {fid}; see {_REGISTRY_URL}"


def known_filter_ids() -> tuple[int, ...]:
    """Return the filter ids this registry knows, in increasing order."""
    return tuple(sorted(_REGISTRY))


__all__ = [
    "BLOSC",
    "BLOSC2",
    "BSHUF",
    "BZIP2",
    "DEFLATE",
    "FCIDECOMP",
    "FLETCHER32",
    "H5Z_FLAG_MANDATORY",
    "H5Z_FLAG_OPTIONAL",
    "HTJ2K",
    "LZ4",
    "LZF",
    "LZO",
    "NBIT",
    "SCALEOFFSET",
    "SHUFFLE",
    "SPERR",
    "SZ",
    "SZ3",
    "SZIP",
    "ZFP",
    "ZSTD",
    "filter_name",
    "known_filter_ids",
    "plugin_hint",
]
