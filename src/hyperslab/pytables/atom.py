"""PyTables' ``tables.atom``: every atom class and the type registry."""

from __future__ import annotations

from hyperslab._typing import Shape
from hyperslab.nodes.atoms.atom import *  # noqa: F403
from hyperslab.nodes.atoms.atom import __all__ as _atom_names
from hyperslab.nodes.atoms.pseudoatom import ObjectAtom, PseudoAtom, VLStringAtom, VLUnicodeAtom
from hyperslab.pytables.utils import SizeType

__all__ = [name for name in _atom_names if name not in ("ShapeLike", "atom_from_hdf5_dtype")]
__all__ += ["ObjectAtom", "PseudoAtom", "Shape", "SizeType", "VLStringAtom", "VLUnicodeAtom"]
