"""PyTables' type system: Atoms, pseudo-atoms, Enum, Col descriptors and table Descriptions.

It says what one element or one record looks like and how it maps to NumPy and HDF5
types; it touches no file.  It imports only :mod:`hyperslab.nodes.members`, the error
types and ``_typing`` from hyperslab (and nothing of storage, chunked or compute but the
type-only compound description of :mod:`hyperslab.storage.compound`).
"""
