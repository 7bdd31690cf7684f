"""Column indexes in PyTables' on-disk layout: the storage format, built and read.

This is "the index" of the nodes layer: the sizes PyTables derives from the expected rows
(``sizes``), the groups and arrays of each kind (``layout``), clean/dirty state (``state``),
writing slices (``writer``), sorting out of core (``sort``, ``progress``), building from a
column (``build``), reading bounds, sorted values and row numbers (``store``) and proving a
table's rows stored in an index's order (``order``).  The
column an index is built from is seen through the protocols of
:mod:`~hyperslab.nodes.indexes.source`.  It may import :mod:`~hyperslab.nodes.leaves`,
:mod:`~hyperslab.nodes.tree`, :mod:`~hyperslab.nodes.atoms` and the layers below; which
part of a query an index answers is planned in :mod:`hyperslab.compute.indexing`.
"""
