"""Default settings, with PyTables' names (``tables.parameters``).

Change a value here to change the default of every file opened afterwards, or pass the same
name in lower or upper case to :func:`hyperslab.open_file` to change it for one file only.
The values are read once, when a file is opened, into a frozen
:class:`hyperslab.options.FileOptions`; nothing reads this module at call sites.
"""

from __future__ import annotations

import os
from typing import Any

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

ALLOW_PADDING: bool = True
"""Keep the offsets (padding) of table rows described by an aligned NumPy dtype; False
packs the fields."""

MAX_BLOSC_THREADS: int | None = 1
"""PyTables' Blosc thread count, set when a file opens (None: the cores).  Recorded for
``set_blosc_max_threads``; hyperslab decodes Blosc and Blosc2 chunks one thread each, in
parallel over chunks, whatever this says."""

def _threads_from_env(name: str) -> Any:
    """The value of environment variable ``name`` as an int if it is one (else as given,
    for ``open_file`` to refuse with the value in its message), or None if unset."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    return int(value) if value.isdigit() else value


MAX_THREADS: int | None = _threads_from_env("HYPERSLAB_MAX_THREADS")
"""hyperslab's own threads per open file, which (de)compress chunks, scan tables and
reduce in parallel (None: the CPUs this process may run on; ``open_file(...,
max_threads=N)`` for one file; the environment variable ``HYPERSLAB_MAX_THREADS`` sets the
default).  A hyperslab setting: PyTables has no such parameter."""

MAX_NUMEXPR_THREADS: int | None = int(os.environ.get("NUMEXPR_MAX_THREADS", 4))
"""PyTables' numexpr thread count (None: the cores); accepted, not used: hyperslab leaves
numexpr's own setting alone."""

# PyTables' settings below are accepted (here and by open_file) with PyTables' values and
# kept in ``File.params``; hyperslab's own caches, index layout and drivers do not use them.

BOUNDS_MAX_SIZE: int = 1024 * 1024
"""PyTables' index bounds cache size (bytes); not used."""

BOUNDS_MAX_SLOTS: int = 4 * 1024
"""PyTables' index bounds cache slots; not used."""

ITERSEQ_MAX_ELEMENTS: int = 1024
"""PyTables' cache of query row sequences, elements per sequence; not used."""

ITERSEQ_MAX_SIZE: int = 1024 * 1024
"""PyTables' cache of query row sequences, bytes; not used."""

ITERSEQ_MAX_SLOTS: int = 128
"""PyTables' cache of query row sequences, slots; not used."""

LIMBOUNDS_MAX_SIZE: int = 256 * 1024
"""PyTables' index limits cache size (bytes); not used."""

LIMBOUNDS_MAX_SLOTS: int = 128
"""PyTables' index limits cache slots; not used."""

TABLE_MAX_SIZE: int = 1024 * 1024
"""PyTables' table chunk cache for index searches (bytes); not used."""

SORTED_MAX_SIZE: int = 1024 * 1024
"""PyTables' cache of sorted index chunks (bytes); not used."""

SORTEDLR_MAX_SIZE: int = 8 * 1024 * 1024
"""PyTables' cache of the last sorted index row (bytes); not used."""

SORTEDLR_MAX_SLOTS: int = 1024
"""PyTables' cache of the last sorted index row, slots; not used."""

DISABLE_EVERY_CYCLES: int = 10
"""PyTables' cache auto-disabling period; not used."""

ENABLE_EVERY_CYCLES: int = 50
"""PyTables' cache auto-enabling period; not used."""

LOWEST_HIT_RATIO: float = 0.6
"""PyTables' cache hit ratio below which a cache is disabled; not used."""

MAX_COLUMNS: int = 512
"""PyTables' column count past which a table warns; accepted, not read."""

MAX_UNDO_PATH_LENGTH: int = 10 * 1024
"""Longest argument (a path or attribute name, in UTF-8 bytes) the undo log records; also
the width of the log's ``arg1`` and ``arg2`` columns when a log is started."""

COND_CACHE_SLOTS: int = 128
"""PyTables' cache of compiled query conditions, slots; not used."""

BUFFER_TIMES: int = 100
"""I/O buffers one index slice may take at most; accepted, not read (index sizes use
PyTables' default, 100)."""

USER_BLOCK_SIZE: int = 0
"""Bytes of user block at the start of new files: 0 (none) or a power of 2 of at least
512 (ignored, with a warning, for an existing file)."""

DRIVER: str | None = None
"""The HDF5 driver: None (HDF5's default, sec2), ``"H5FD_SEC2"``, ``"H5FD_STDIO"``,
``"H5FD_CORE"`` (in memory) or ``"H5FD_SPLIT"`` (metadata and raw data in two files);
``"H5FD_DIRECT"`` and ``"H5FD_WINDOWS"`` raise ``RuntimeError`` (not in this HDF5)."""

DRIVER_DIRECT_ALIGNMENT: int = 0
"""H5FD_DIRECT setting (the driver is not in this HDF5 build)."""

DRIVER_DIRECT_BLOCK_SIZE: int = 0
"""H5FD_DIRECT setting (the driver is not in this HDF5 build)."""

DRIVER_DIRECT_CBUF_SIZE: int = 0
"""H5FD_DIRECT setting (the driver is not in this HDF5 build)."""

DRIVER_CORE_INCREMENT: int = 64 * 1024
"""H5FD_CORE: bytes by which an in-memory file grows."""

DRIVER_CORE_BACKING_STORE: int = 1
"""H5FD_CORE: whether the file in memory is written to disk on close (0: never)."""

DRIVER_CORE_IMAGE: bytes | None = None
"""H5FD_CORE: the bytes of an HDF5 file to open (``File.get_file_image()`` gives them)."""

DRIVER_SPLIT_META_EXT: str = "-m.h5"
"""H5FD_SPLIT: the extension of the metadata file (or a pattern holding ``%s``)."""

DRIVER_SPLIT_RAW_EXT: str = "-r.h5"
"""H5FD_SPLIT: the extension of the raw data file (or a pattern holding ``%s``)."""
