"""Scratch memory kept per thread for chunks decoded only to be copied from.

A strided or partial read of a chunk that cannot be decoded in part decodes the whole chunk
and copies the selected items out.  Fresh memory for that chunk costs a page fault per 4 KB
touched on every read, about as much as decoding it again; a buffer kept per thread (up to
:data:`CHUNK_SCRATCH_MAX`) costs it once.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Final

import numpy as np

from hyperslab._typing import AnyArray

_chunk_scratch = threading.local()

CHUNK_SCRATCH_MAX: Final = 64 << 20
"""The biggest chunk (bytes) decoded into the per-thread buffer; bigger ones get new
memory each time (none kept)."""


def scratch_chunk(shape: tuple[int, ...], dtype: np.dtype[Any]) -> AnyArray:
    """An uninitialized array of ``shape`` and ``dtype`` in this thread's scratch buffer
    (valid until the thread's next call), or a new one above :data:`CHUNK_SCRATCH_MAX`
    or for a dtype that is no plain item (a subarray or object type)."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > CHUNK_SCRATCH_MAX or not nbytes or dtype.subdtype is not None or dtype.hasobject:
        return np.empty(shape, dtype=dtype)
    buffer: AnyArray | None = getattr(_chunk_scratch, "buffer", None)
    if buffer is None or buffer.shape[0] < nbytes:
        buffer = _chunk_scratch.buffer = np.empty(nbytes, dtype=np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape)
