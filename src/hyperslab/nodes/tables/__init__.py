"""Tables: Table, its Row, Cols and Column objects, record I/O, creation and its indexes.

A table is a leaf of records; this subpackage holds the record reads and writes
(``recordio``), the row iterator and appender (``row``), the column accessors
(``columns``), table creation (``create``) and the bookkeeping that keeps a table's column
indexes in step with it (``indexing``).  It may import :mod:`~hyperslab.nodes.indexes`,
:mod:`~hyperslab.nodes.leaves`, :mod:`~hyperslab.nodes.tree`,
:mod:`~hyperslab.nodes.atoms` and the layers below; queries are delegated to
:mod:`hyperslab.compute.queries` through function-level imports (the layer contract's
declared exception).
"""
