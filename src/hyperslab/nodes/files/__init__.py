"""The open file and what it manages across the tree.

:class:`~hyperslab.nodes.files.file.File` (opening, flushing, closing) and the mixins it is
made of (``lookup``: getting and loading nodes; ``creation``: creating them; ``editing``:
removing, renaming and moving them; ``walking``: walking the tree; ``core``: what they
share, for mypy), the rule that a file is open for writing once (``openfiles``), the node
classes by PyTables' ``CLASS`` attribute (``registry``), the LRU node cache
(``nodecache``), links (``link``), copying subtrees (``copying``), the flush rules that
bound what a killed writer leaves (``flushguard``) and pickling read-only files and nodes
(``pickling``).  It is the top of the nodes layer and
may import every other subpackage of :mod:`hyperslab.nodes`; nothing in them imports it.
"""
