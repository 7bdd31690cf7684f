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

# PyTables' modules, attributes of the package as in PyTables (``tables.utils.SizeType``
# works after a plain ``import tables``).
from hyperslab.pytables import (  # noqa: F401
    array,
    atom,
    attributeset,
    carray,
    description,
    earray,
    exceptions,
    expression,
    file,
    filters,
    flavor,
    group,
    hdf5extension,
    idxutils,
    index,
    indexesextension,
    leaf,
    link,
    misc,
    node,
    path,
    req_versions,
    table,
    unimplemented,
    utils,
    utilsextension,
)
from hyperslab.pytables.atom import (
    Complex32Atom,
    Complex256Atom,
    ObjectAtom,
    PseudoAtom,
    ReferenceAtom,
    TimeAtom,
    VLStringAtom,
    VLUnicodeAtom,
    all_types,
    atom_map,
    deftype_from_kind,
    split_type,
)
from hyperslab.pytables.description import descr_from_dtype, dtype_from_descr
from hyperslab.pytables.exceptions import (
    ExperimentalFeatureWarning,
    FiltersWarning,
    FlavorError,
    UndoRedoWarning,
)
from hyperslab.pytables.flavor import restrict_flavors
from hyperslab.pytables.path import check_name_validity  # noqa: F401 - as PyTables' package
from hyperslab.pytables.table import Cols, Column, Table
from hyperslab.pytables.utilsextension import (
    blosc2_compcode_to_compname_ as blosc2_compcode_to_compname,
)
from hyperslab.pytables.utilsextension import (
    blosc2_compressor_list,
    blosc_compressor_list,
    get_hdf5_version,
    get_pytables_version,
    is_hdf5_file,
    is_pytables_file,
    set_blosc2_max_threads,
    set_blosc_max_threads,
    silence_hdf5_messages,
    which_lib_version,
)
from hyperslab.pytables.utilsextension import (
    blosc2_get_complib_info_ as blosc2_get_complib_info,
)
from hyperslab.pytables.utilsextension import (
    blosc_compcode_to_compname_ as blosc_compcode_to_compname,
)
from hyperslab.pytables.utilsextension import blosc_get_complib_info_ as blosc_get_complib_info
from hyperslab.pytables.versions import PYTABLES_API_VERSION, hdf5_version, print_versions

__version__ = f"{PYTABLES_API_VERSION}+hyperslab.{hyperslab_version}"
"""PEP 440: the PyTables API level implemented, with hyperslab's version as local label."""

__all__ = [
    *_hyperslab_names,
    "Cols", "Column", "Complex32Atom", "Complex256Atom", "ExperimentalFeatureWarning",
    "FiltersWarning", "FlavorError", "ObjectAtom", "PseudoAtom", "ReferenceAtom", "Table",
    "TimeAtom", "UndoRedoWarning", "VLStringAtom", "VLUnicodeAtom", "all_types", "atom_map",
    "blosc2_compcode_to_compname", "blosc2_compressor_list", "blosc2_get_complib_info",
    "blosc_compcode_to_compname", "blosc_compressor_list", "blosc_get_complib_info",
    "deftype_from_kind", "descr_from_dtype", "dtype_from_descr", "get_hdf5_version",
    "get_pytables_version", "hdf5_version", "is_hdf5_file", "is_pytables_file",
    "print_versions", "restrict_flavors", "set_blosc2_max_threads", "set_blosc_max_threads",
    "silence_hdf5_messages", "split_type", "which_lib_version",
]
