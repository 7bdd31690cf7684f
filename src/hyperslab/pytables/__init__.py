"""PyTables' module layout over hyperslab: what ``import tables`` gives after
:func:`hyperslab.install_as_tables`.

The package holds every public name of PyTables' top-level ``tables`` module that
hyperslab implements, and modules named as PyTables' (``tables.file``,
``tables.exceptions``, ``tables.utils``, ``tables.idxutils``, ``tables.index``, ...) that
re-export hyperslab's implementations under PyTables' names, with the few helpers PyTables
code reaches for there.  Nothing else in hyperslab imports it: it sits at the top of the
layers, beside :mod:`hyperslab.tools`, and holds no logic of its own beyond PyTables'
spellings.
"""

from __future__ import annotations

from hyperslab import *  # noqa: F403
from hyperslab import __all__ as _hyperslab_names
from hyperslab import __version__ as hyperslab_version
from hyperslab.pytables.utilsextension import (
    blosc2_compressor_list,
    blosc_compressor_list,
    get_hdf5_version,
    get_pytables_version,
    which_lib_version,
)
from hyperslab.pytables.versions import PYTABLES_API_VERSION, hdf5_version

__version__ = f"{PYTABLES_API_VERSION}+hyperslab.{hyperslab_version}"
"""PEP 440: the PyTables API level implemented, with hyperslab's version as local label."""

__all__ = [
    *_hyperslab_names,
    "blosc2_compressor_list",
    "blosc_compressor_list",
    "get_hdf5_version",
    "get_pytables_version",
    "hdf5_version",
    "which_lib_version",
]
