"""Whether this process's allocator gives freed memory back to the system at once.

glibc's allocator adapts: after a large block is freed, blocks of that size come from its
heap again, so a buffer allocated and freed for every chunk or block is faulted in once.
Setting ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_MMAP_THRESHOLD_`` in the environment fixes
its thresholds instead (dask.distributed's workers get ``MALLOC_TRIM_THRESHOLD_=65536``):
every block over 128 KiB is then fresh pages from the system, a page fault per 4 KB every
time.  Code whose temporary buffers belong to a library (a Blosc2 context per call, the
blocks python-blosc2's miniexpr evaluates) asks this to choose another route there.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["allocator_returns_memory"]

_ALLOCATOR_VARIABLES: Final = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")


def allocator_returns_memory() -> bool:
    """Whether glibc's allocator was tuned by the environment (see the module docstring)."""
    return any(name in os.environ for name in _ALLOCATOR_VARIABLES)
