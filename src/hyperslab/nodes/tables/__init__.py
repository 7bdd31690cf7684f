"""Tables: Table, its Row, Cols and Column objects, record I/O, creation and its indexes.

A table is a leaf of records; this subpackage holds :class:`~hyperslab.nodes.tables.table.Table`
(``table``: its description, columns and appends) and the mixins it is made of (``reading``:
reading and iterating over rows; ``modifying``: changing and removing rows; ``querying``:
the query methods; ``indexing``: the bookkeeping that keeps a table's column indexes in step
with it), the record reads and writes (``recordio``), the row iterator and appender
(``row``), the column accessors (``columns``) and table creation (``create``).  It may
import :mod:`~hyperslab.nodes.indexes`, :mod:`~hyperslab.nodes.leaves`,
:mod:`~hyperslab.nodes.tree`, :mod:`~hyperslab.nodes.atoms` and the layers below; queries
are delegated to :mod:`hyperslab.compute.queries` through function-level imports in
``querying`` (the layer contract's declared exception).
"""
