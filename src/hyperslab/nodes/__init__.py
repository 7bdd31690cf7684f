"""Nodes layer: what users see of a file, in six subpackages that import one way.

From the top down (each may import the ones below it, never one above; checked by the
import-linter contracts in ``pyproject.toml``):

* :mod:`~hyperslab.nodes.files`: the open :class:`~hyperslab.nodes.files.file.File` and what
  it manages across the tree (opening rules, loading nodes by class, the node cache, links,
  copying, the flush guard);
* :mod:`~hyperslab.nodes.tables`: :class:`~hyperslab.nodes.tables.table.Table`, its rows,
  columns and record I/O, and the bookkeeping of its column indexes;
* :mod:`~hyperslab.nodes.indexes`: column indexes in PyTables' on-disk layout (sizes,
  layout, state, building, sorting, reading);
* :mod:`~hyperslab.nodes.leaves`: datasets as leaves (Array, CArray, EArray), their
  creation, direct chunk access, reductions and the per-leaf readers-writer lock;
* :mod:`~hyperslab.nodes.tree`: what every node is (Node, Group, attribute sets, path names,
  PyTables' second spellings);
* :mod:`~hyperslab.nodes.atoms`: PyTables' type system (Atoms, Enum, Col, descriptions).

:mod:`~hyperslab.nodes.members` is a small helper every subpackage may use.  Annotations
that need a class of a higher subpackage name it through a protocol of the lower one
(:mod:`hyperslab.nodes.tree.owner`, :mod:`hyperslab.nodes.indexes.source`), never by import.
"""
