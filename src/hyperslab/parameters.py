"""Default settings, with PyTables' names (``tables.parameters``).

Change a value here to change the default of every file opened afterwards, or pass the same
name in lower or upper case to :func:`hyperslab.open_file` to change it for one file only.
The values are read once, when a file is opened, into a frozen
:class:`hyperslab.options.FileOptions`; nothing reads this module at call sites.
"""

from __future__ import annotations

NODE_CACHE_SLOTS: int = 32
"""Node LRU cache size: N>0 keeps N nodes, N<0 keeps all and warns past -N, 0 disables."""

CHUNK_CACHE_SIZE: int = 16 * 1024 * 1024
"""Bytes of HDF5's chunk cache per dataset (PyTables' default: 16 MB)."""

CHUNK_CACHE_NELMTS: int = 521
"""Number of slots of HDF5's chunk cache hash table (a prime, as HDF5 advises)."""

CHUNK_CACHE_PREEMPT: float = 0.0
"""HDF5's chunk cache preemption policy (0.0: evict least recently used)."""

METADATA_CACHE_SIZE: int = 1024 * 1024
"""Bytes of HDF5's metadata cache."""

IO_BUFFER_SIZE: int = 16 * 1024 * 1024
"""Bytes of the buffers used when a leaf is read or copied block by block."""

MAX_GROUP_WIDTH: int = 16384
"""Children of a group past which a PerformanceWarning is issued."""

MAX_NODE_ATTRS: int = 4096
"""Attributes of a node past which a PerformanceWarning is issued."""

MAX_TREE_DEPTH: int = 2048
"""Depth of the hierarchy past which a PerformanceWarning is issued."""

PYTABLES_SYS_ATTRS: bool = True
"""Write PyTables' system attributes (CLASS, VERSION, TITLE, ...) on every node."""

EXPECTED_ROWS_EARRAY: int = 1000
"""Default ``expectedrows`` of an EArray."""

EXPECTED_ROWS_TABLE: int = 10000
"""Default ``expectedrows`` of a Table."""

EXPECTED_ROWS_VLARRAY: int = 1000
"""Default ``expectedrows`` of a VLArray."""

TRACK_TIMES: bool = True
"""Record creation/modification times in object headers (HDF5's and PyTables' default)."""
