"""hyperslab: fast, compressed, hierarchical datasets in HDF5 files.

A PyTables-compatible API (``import hyperslab as tables`` runs PyTables code) and file
format, over h5py, hdf5plugin, python-blosc2, numexpr and NumPy.

Examples
--------
>>> import hyperslab, numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "quick.h5")
>>> with hyperslab.open_file(path, "w") as f:
...     ca = f.create_carray("/", "x", obj=np.arange(12.0).reshape(3, 4),
...                          filters=hyperslab.Filters(5, "blosc2:zstd"))
...     print(ca[1, ::-1])
[7. 6. 5. 4.]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from hyperslab import parameters
from hyperslab.codecs.filters import Filters
from hyperslab.errors import (
    ChunkError,
    ClosedFileError,
    ClosedNodeError,
    DataTypeWarning,
    ExperimentalFeatureWarning,
    FileModeError,
    FilterNotAvailableError,
    FiltersError,
    FiltersWarning,
    FlavorError,
    FlavorWarning,
    HDF5ExtError,
    NaturalNameWarning,
    NodeError,
    NoSuchChunkError,
    NoSuchNodeError,
    NotChunkAlignedError,
    NotChunkedError,
    OldIndexWarning,
    PerformanceWarning,
    UnclosedFileWarning,
    UndoRedoError,
    UndoRedoWarning,
    UnflushedRowsWarning,
)
from hyperslab.nodes.atoms.atom import (
    Atom,
    BoolAtom,
    Complex64Atom,
    Complex128Atom,
    ComplexAtom,
    Enum,
    EnumAtom,
    Float16Atom,
    Float32Atom,
    Float64Atom,
    FloatAtom,
    Int8Atom,
    Int16Atom,
    Int32Atom,
    Int64Atom,
    IntAtom,
    ReferenceAtom,
    StringAtom,
    Time32Atom,
    Time64Atom,
    TimeAtom,
    UInt8Atom,
    UInt16Atom,
    UInt32Atom,
    UInt64Atom,
    UIntAtom,
)
from hyperslab.nodes.atoms.atomargs import split_type
from hyperslab.nodes.atoms.cols import (
    BoolCol,
    Col,
    Complex32Col,
    Complex64Col,
    Complex128Col,
    Complex256Col,
    ComplexCol,
    EnumCol,
    Float16Col,
    Float32Col,
    Float64Col,
    FloatCol,
    Int8Col,
    Int16Col,
    Int32Col,
    Int64Col,
    IntCol,
    StringCol,
    Time32Col,
    Time64Col,
    TimeCol,
    UInt8Col,
    UInt16Col,
    UInt32Col,
    UInt64Col,
    UIntCol,
)
from hyperslab.nodes.atoms.description import (
    Description,
    IsDescription,
    descr_from_dtype,
    dtype_from_descr,
)
from hyperslab.nodes.atoms.pseudoatom import ObjectAtom, PseudoAtom, VLStringAtom, VLUnicodeAtom
from hyperslab.nodes.leaves.flavor import restrict_flavors
from hyperslab.options import FileOptions

if TYPE_CHECKING:  # loaded on first use, see __getattr__
    from hyperslab.compute.daskio.store import to_hyperslab
    from hyperslab.compute.expressions import Expr
    from hyperslab.nodes.files.file import File, copy_file, open_file
    from hyperslab.nodes.files.link import ExternalLink, Link, SoftLink, Unknown
    from hyperslab.nodes.leaves.array import Array, CArray, EArray, UnImplemented
    from hyperslab.nodes.leaves.directchunk import ChunkInfo
    from hyperslab.nodes.leaves.leaf import Leaf
    from hyperslab.nodes.leaves.vlarray import VLArray
    from hyperslab.nodes.tables.columns import Cols, Column
    from hyperslab.nodes.tables.table import Table
    from hyperslab.nodes.tree.attributeset import AttributeSet
    from hyperslab.nodes.tree.group import Group, RootGroup
    from hyperslab.nodes.tree.node import Node

__version__ = "0.1.0"

__all__ = [
    "Array", "Atom", "AttributeSet", "BoolAtom", "CArray", "ChunkError", "ChunkInfo",
    "ClosedFileError",
    "ClosedNodeError", "Complex64Atom", "Complex128Atom", "ComplexAtom", "DataTypeWarning",
    "EArray", "Enum", "EnumAtom", "ExternalLink", "File", "FileModeError", "FileOptions",
    "FilterNotAvailableError", "Filters", "FiltersError", "FlavorWarning", "Float16Atom",
    "Float32Atom", "Float64Atom", "FloatAtom", "Group", "HDF5ExtError", "Int8Atom",
    "Int16Atom", "Int32Atom", "Int64Atom", "IntAtom", "Leaf", "Link", "NaturalNameWarning",
    "NoSuchChunkError", "NoSuchNodeError", "Node", "NodeError", "NotChunkAlignedError",
    "NotChunkedError", "OldIndexWarning", "PerformanceWarning", "RootGroup", "SoftLink",
    "StringAtom",
    "Time32Atom", "Time64Atom", "UInt8Atom", "UInt16Atom", "UInt32Atom", "UInt64Atom",
    "UIntAtom", "UnImplemented", "UnclosedFileWarning", "UndoRedoError",
    "UnflushedRowsWarning", "Unknown",
    "__version__", "open_file", "parameters",
]

__all__ += [  # table descriptions
    "BoolCol", "Col", "Complex32Col", "Complex64Col", "Complex128Col", "Complex256Col",
    "ComplexCol",
    "Description", "EnumCol", "Float16Col", "Float32Col", "Float64Col", "FloatCol", "Int8Col",
    "Int16Col", "Int32Col", "Int64Col", "IntCol", "IsDescription", "StringCol", "Time32Col",
    "Time64Col", "TimeCol", "UInt8Col", "UInt16Col", "UInt32Col", "UInt64Col", "UIntCol",
]

__all__ += [  # more of PyTables' top-level names
    "Cols", "Column", "ExperimentalFeatureWarning", "FiltersWarning", "FlavorError",
    "ObjectAtom", "PseudoAtom", "ReferenceAtom", "Table", "TimeAtom", "UndoRedoWarning",
    "VLArray", "VLStringAtom", "VLUnicodeAtom", "descr_from_dtype", "dtype_from_descr",
    "restrict_flavors", "split_type",
]

# Extended precision floats, where NumPy has them (float128 on x86-64 Linux and macOS).
from hyperslab.nodes.atoms import atom as _atoms  # noqa: E402
from hyperslab.nodes.atoms import cols as _cols  # noqa: E402

if hasattr(_atoms, "Float128Atom"):
    Float128Atom = _atoms.Float128Atom
    Float128Col = getattr(_cols, "Float128Col")  # noqa: B009 - as defined
    __all__ += ["Float128Atom", "Float128Col"]
if hasattr(_atoms, "Float96Atom"):  # pragma: no cover - 32-bit x86 only
    Float96Atom = _atoms.Float96Atom
    Float96Col = getattr(_cols, "Float96Col")  # noqa: B009 - as defined
    __all__ += ["Float96Atom", "Float96Col"]

__all__ += ["Expr", "to_hyperslab"]  # loaded on first use, see __getattr__
__all__ += ["install_as_tables"]
__all__ += ["copy_file"]


def install_as_tables() -> None:
    """Make ``import tables`` give hyperslab, in PyTables' module layout.

    See :func:`hyperslab.pytables.install.install_as_tables`.

    Examples
    --------
    >>> import hyperslab
    >>> hyperslab.install_as_tables()  # doctest: +SKIP
    >>> import tables  # doctest: +SKIP
    >>> tables.__version__  # doctest: +SKIP
    '3.11.0+hyperslab.0.1.0'
    """
    from hyperslab.pytables.install import install_as_tables as install

    install()


_LAZY: dict[str, str] = {
    "to_hyperslab": "hyperslab.compute.daskio.store",  # the dask glue: dask is optional
    "Expr": "hyperslab.compute.expressions",  # numexpr
    **dict.fromkeys(["File", "copy_file", "open_file"], "hyperslab.nodes.files.file"),
    **dict.fromkeys(["ExternalLink", "Link", "SoftLink", "Unknown"], "hyperslab.nodes.files.link"),
    **dict.fromkeys(["Array", "CArray", "EArray", "UnImplemented"], "hyperslab.nodes.leaves.array"),
    "ChunkInfo": "hyperslab.nodes.leaves.directchunk",
    "Leaf": "hyperslab.nodes.leaves.leaf",
    "VLArray": "hyperslab.nodes.leaves.vlarray",
    **dict.fromkeys(["Cols", "Column"], "hyperslab.nodes.tables.columns"),
    "Table": "hyperslab.nodes.tables.table",
    "AttributeSet": "hyperslab.nodes.tree.attributeset",
    **dict.fromkeys(["Group", "RootGroup"], "hyperslab.nodes.tree.group"),
    "Node": "hyperslab.nodes.tree.node",
}
"""Public names whose modules load on first use: they need h5py (files, nodes), numexpr
(``Expr``) or dask (``to_hyperslab``), so ``import hyperslab`` loads NumPy and the atoms
only (tests/test_startup.py)."""


def __getattr__(name: str) -> object:
    """Import the module of a name of :data:`_LAZY` on first use, and keep the name."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperslab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
