"""Whether this process's allocator gives freed memory back to the system at once.

glibc's allocator adapts: after a large block is freed, blocks of that size come from its
heap again, so a buffer allocated and freed for every chunk or block is faulted in once.
Setting ``MALLOC_TRIM_THRESHOLD_`` or ``MALLOC_MMAP_THRESHOLD_`` (or their
``GLIBC_TUNABLES``) in the environment a process starts with fixes its thresholds instead
(dask.distributed starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``): every block
over 128 KiB is then fresh pages from the system, a page fault per 4 KB every time.  Code
whose temporary buffers belong to a library (a Blosc2 context per call, the blocks
python-blosc2's miniexpr evaluates) asks this to choose another route there.

glibc reads the variables once, when the process starts: what counts is the environment
the process was started with (``/proc/self/environ``), not ``os.environ`` now (a
``LocalCluster`` sets the variable in its own process too, for the workers it spawns,
which does not change that process's allocator).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Final

__all__ = ["allocator_returns_memory"]

_VARIABLES: Final = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
_TUNABLES: Final = ("glibc.malloc.trim_threshold", "glibc.malloc.mmap_threshold")


@functools.cache
def _start_environment() -> Mapping[str, str]:
    """The environment this process was started with (Linux), else ``os.environ`` as it
    is at the first call."""
    try:
        with open("/proc/self/environ", "rb") as stream:
            raw = stream.read()
    except OSError:
        return dict(os.environ)
    entries = (item.partition(b"=") for item in raw.split(b"\0") if item)
    return {key.decode("utf-8", "replace"): value.decode("utf-8", "replace")
            for key, _, value in entries}


def allocator_returns_memory() -> bool:
    """Whether glibc's allocator was tuned by the environment this process started with
    (see the module docstring)."""
    environment = _start_environment()
    if any(name in environment for name in _VARIABLES):
        return True
    tunables = environment.get("GLIBC_TUNABLES", "")
    return any(name in tunables for name in _TUNABLES)
