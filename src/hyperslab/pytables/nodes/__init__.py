"""PyTables' ``tables.nodes``: special node types built on ordinary leaves.

PyTables keeps its file nodes (``tables.nodes.filenode``) here; its tests of them
(``tables.nodes.tests``) are loaded from the installed PyTables wheel.
"""
