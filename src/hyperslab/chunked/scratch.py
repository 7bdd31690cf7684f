"""Scratch memory kept per thread for the bytes a chunk read needs only while it runs.

A strided or partial read of a chunk that cannot be decoded in part decodes the whole chunk
and copies the selected items out.  Fresh memory for that chunk costs a page fault per 4 KB
touched on every read, about as much as decoding it again; a buffer kept per thread (up to
:data:`CHUNK_SCRATCH_MAX`) costs it once.  The same holds for the stored bytes of a chunk
decoded whole (a megabyte frame read from the file) and for the block-ordered bytes of a
b2nd frame whose blocks are not C-ordered slabs: each has a buffer of its own
(:data:`SLOTS`), so that one read may hold all three at once.
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

SLOTS: Final = {"chunk": "buffer", "stored": "stored", "blocked": "blocked"}
"""The per-thread buffers (slot: attribute of the thread-local): a decoded chunk to copy
items from (:func:`scratch_chunk`), a chunk's stored bytes, and the block-ordered bytes of
a b2nd chunk before reordering."""


def scratch_bytes(nbytes: int, slot: str) -> AnyArray:
    """An uninitialized ``uint8`` array of ``nbytes`` in this thread's buffer ``slot`` (one of
    :data:`SLOTS`), valid until the thread's next call for that slot; a new array above
    :data:`CHUNK_SCRATCH_MAX`.

    Raises
    ------
    ValueError
        If ``slot`` is not one of :data:`SLOTS`.

    Examples
    --------
    >>> a = scratch_bytes(10, "stored")
    >>> b = scratch_bytes(8, "stored")
    >>> (a.shape, b.shape, np.shares_memory(a, b))
    ((10,), (8,), True)
    """
    name = SLOTS.get(slot)
    if name is None:
        raise ValueError(f"unknown scratch slot {slot!r}; known: {', '.join(SLOTS)}")
    if nbytes > CHUNK_SCRATCH_MAX:
        return np.empty(nbytes, dtype=np.uint8)
    buffer: AnyArray | None = getattr(_chunk_scratch, name, None)
    if buffer is None or buffer.shape[0] < nbytes:
        buffer = np.empty(nbytes, dtype=np.uint8)
        setattr(_chunk_scratch, name, buffer)
    return buffer[:nbytes]


def scratch_chunk(shape: tuple[int, ...], dtype: np.dtype[Any]) -> AnyArray:
    """An uninitialized array of ``shape`` and ``dtype`` in this thread's scratch buffer
    (valid until the thread's next call), or a new one above :data:`CHUNK_SCRATCH_MAX`
    or for a dtype that is no plain item (a subarray or object type)."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > CHUNK_SCRATCH_MAX or not nbytes or dtype.subdtype is not None or dtype.hasobject:
        return np.empty(shape, dtype=dtype)
    return scratch_bytes(nbytes, "chunk").view(dtype).reshape(shape)


def blocked_scratch(nbytes: int) -> AnyArray:
    """This thread's buffer ``"blocked"`` of ``nbytes`` (see :func:`scratch_bytes`): the
    ``work`` of :func:`~hyperslab.codecs.cframe.decode_into`."""
    return scratch_bytes(nbytes, "blocked")
