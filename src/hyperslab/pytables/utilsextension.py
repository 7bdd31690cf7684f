"""PyTables' ``tables.utilsextension``: library versions and compressor lists."""

from __future__ import annotations

from hyperslab.codecs.filters import ALL_COMPLIBS
from hyperslab.pytables.versions import PYTABLES_API_VERSION
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
