"""PyTables' ``tables.utilsextension``: library versions, compressors, file checks."""

from __future__ import annotations

import os

from hyperslab.codecs.filters import ALL_COMPLIBS, set_max_threads
from hyperslab.pytables.versions import PYTABLES_API_VERSION
from hyperslab.storage import libraries
from hyperslab.storage.libraries import library_versions

SUPPORTED_LIBRARIES = ("hdf5", "zlib", "lzo", "bzip2", "blosc", "blosc2")
"""The names :func:`which_lib_version` answers for, as PyTables'."""


def which_lib_version(name: str) -> tuple[object, str, str | None] | None:
    """``(binary version, version string, date)`` of library ``name``, or None if absent.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`SUPPORTED_LIBRARIES`, with PyTables' message.
    """
    # As PyTables: any name starting with "blosc2" or "blosc" (``"blosc:lz4"``) names them.
    library = next((lib for lib in ("blosc2", "blosc") if name.startswith(lib)), name)
    if library not in SUPPORTED_LIBRARIES:
        raise ValueError(f"asked version of unsupported library ``{name}``; supported "
                         f"library names are ``{SUPPORTED_LIBRARIES}``")
    version = library_versions().get(library)
    if version is None:
        return None
    return (version, version, None)


def get_hdf5_version() -> str:
    """The version string of the HDF5 library in use."""
    return library_versions()["hdf5"] or "unknown"


def get_pytables_version() -> str:
    """The PyTables API level this layout implements."""
    return PYTABLES_API_VERSION


def _compressors(prefix: str) -> list[str]:
    return [lib.split(":", 1)[1] for lib in ALL_COMPLIBS if lib.startswith(prefix + ":")]


def blosc_compressor_list() -> list[str]:
    """The compressors of the Blosc filter (``"blosclz"``, ``"lz4"``, ...)."""
    return _compressors("blosc")


def blosc2_compressor_list() -> list[str]:
    """The compressors of the Blosc2 filter."""
    return _compressors("blosc2")


def is_hdf5_file(filename: str | os.PathLike[str]) -> bool:
    """Whether ``filename`` is an HDF5 file.

    Raises
    ------
    OSError
        If it does not exist or cannot be read.
    """
    return libraries.is_hdf5_file(filename)


def is_pytables_file(filename: str | os.PathLike[str]) -> str | None:
    """The PyTables format version of ``filename`` (``'2.1'``...), or None if it is no
    PyTables file.

    Raises
    ------
    OSError
        If it does not exist or cannot be read.
    """
    return libraries.pytables_format_version(filename)


def set_blosc_max_threads(nthreads: int) -> int:
    """Set PyTables' Blosc thread count; return the previous one.

    hyperslab records it only: it runs one thread per chunk, many chunks at once.
    """
    return set_max_threads("blosc", nthreads)


def set_blosc2_max_threads(nthreads: int) -> int:
    """Set PyTables' Blosc2 thread count; return the previous one (recorded only, as
    :func:`set_blosc_max_threads`)."""
    return set_max_threads("blosc2", nthreads)


def silence_hdf5_messages(silence: bool = True) -> None:
    """Accepted for PyTables code; does nothing: h5py keeps HDF5's own error printing off
    and raises its errors as Python exceptions, silenced or not."""


blosc_compcode_to_compname_ = libraries.blosc_compcode_to_compname
blosc2_compcode_to_compname_ = libraries.blosc_compcode_to_compname
blosc_get_complib_info_ = libraries.blosc_complib_info
blosc2_get_complib_info_ = libraries.blosc2_complib_info
