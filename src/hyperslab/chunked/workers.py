"""How many threads hyperslab's pool of one open file (de)compresses chunks with."""

from __future__ import annotations

import os

import numpy as np


def default_workers(limit: int | None = None) -> int:
    """Threads the engine uses for (de)compression: ``limit`` (hyperslab's
    ``MAX_THREADS``), or the CPUs this process may run on when it is None.

    Raises
    ------
    ValueError
        If ``limit`` is not None nor an integer of at least 1.
    """
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1:
            raise ValueError(f"MAX_THREADS must be None or an integer >= 1, not {limit!r}")
        return int(limit)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
