"""PyTables' ``tables.vlarray``: the ``VLArray`` class and its pseudo-atoms."""

from __future__ import annotations

from hyperslab.nodes.atoms.pseudoatom import ObjectAtom, VLStringAtom, VLUnicodeAtom
from hyperslab.nodes.leaves.vlarray import VLArray

__all__ = ["ObjectAtom", "VLArray", "VLStringAtom", "VLUnicodeAtom"]
