"""Datasets as leaves: Leaf, Array, CArray, EArray, their creation and their fast paths.

It holds the leaf base class (selections, writes, the per-leaf readers-writer lock), the
array classes, VLArray (ragged rows of HDF5 variable-length type), the creation of
chunked datasets (chunk shape, filters), direct chunk
access and the reductions over stored chunks.  It may import :mod:`~hyperslab.nodes.tree`,
:mod:`~hyperslab.nodes.atoms` and :mod:`~hyperslab.nodes.members`, and the chunked,
storage and codecs layers; reductions call :mod:`hyperslab.compute.reductions` through one
function-level import (the layer contract's declared exception).
"""
