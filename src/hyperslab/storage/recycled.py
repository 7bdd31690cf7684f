"""Buffers for the stored bytes of chunks read in part, used again once their reads are done.

A chunk decoded in part (:class:`~hyperslab.storage.preads.SparseChunk`) has a buffer of its
whole stored size, of which only the ranges read are touched: its frame's header and
trailer and the streams of the blocks decoded.  Fresh memory costs a page fault per 4 KB
touched (about 2 us here), and glibc's allocator gives big buffers back to the system as
soon as they are freed in numbers: ``a[:, 50]`` of the slicing benchmark's ``(25, 50, 50,
50)`` chunks (8 chunks of 4 MB stored, 0.9 MB of streams read from each) took about 1,700
page faults a read: 9.1 ms with one thread, 6.3 ms with buffers used again.

:func:`chunk_buffer` hands out such a buffer: an array over memory of an earlier one whose
last view is gone, when one of a fitting size is idle, else over new memory.  Idle
buffers are kept up to :data:`KEEP_MAX_BYTES` in all, for the life of the process (as the
threads' scratch buffers are).  A buffer handed out again holds an earlier chunk's bytes
where it is not read into: readers only read the ranges they loaded, as with fresh memory,
whose bytes are undefined too.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Final

import numpy as np

from hyperslab._typing import AnyArray

RECYCLE_MIN_BYTES: Final = 256 << 10
"""Smaller buffers come from the allocator (its heap serves them again without faults)."""

RECYCLE_MAX_BYTES: Final = 32 << 20
"""Bigger buffers are new memory each time, given back when done with."""

KEEP_MAX_BYTES: Final = 32 << 20
"""Idle buffers kept at most, in bytes (a buffer handed back beyond that is freed)."""


class _Recycler:
    """Idle buffers and the ones handed out (thread-safe)."""

    def __init__(self, keep_bytes: int) -> None:
        self._keep_bytes = keep_bytes
        self._idle: list[AnyArray] = []  # memory owners, none in use
        self._idle_bytes = 0
        # id of the weak reference to each array handed out -> that reference (kept alive:
        # its callback gives the memory back) and the memory the array is a view of.
        self._lent: dict[int, tuple[weakref.ref[AnyArray], AnyArray]] = {}
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> AnyArray:
        """An uninitialized ``uint8`` array of ``nbytes``, over idle memory if some fits
        (at least ``nbytes``, at most twice that).

        >>> recycler = _Recycler(8 << 20)
        >>> first = recycler.take(1 << 20)
        >>> address = first.ctypes.data
        >>> view = first[10:20]
        >>> del first  # a view of it is left: it stays lent
        >>> second = recycler.take(1 << 20)
        >>> second.ctypes.data == address
        False
        >>> del view  # its last view: the memory is idle
        >>> recycler.take(1 << 20).ctypes.data == address
        True
        """
        owner: AnyArray | None = None
        with self._lock:
            best = -1
            for n, idle in enumerate(self._idle):
                size = idle.shape[0]
                if nbytes <= size <= 2 * nbytes and (
                        best < 0 or size < self._idle[best].shape[0]):
                    best = n
            if best >= 0:
                owner = self._idle.pop(best)
                self._idle_bytes -= owner.shape[0]
        if owner is None:
            owner = np.empty(_capacity(nbytes), dtype=np.uint8)
        # Over a memoryview, not the owner itself: views of the array then keep the array
        # (not only the owner) alive, so it dies when the last of them does.
        array = np.frombuffer(owner.data[:nbytes], dtype=np.uint8)
        ref = weakref.ref(array, self._give_back)
        lent = (ref, owner)  # (made before locking: no allocation that may collect
        # garbage, and so call _give_back, while this thread holds the lock)
        with self._lock:
            self._lent[id(ref)] = lent
        return array

    def _give_back(self, ref: weakref.ref[AnyArray]) -> None:
        """Called when an array handed out is gone: its memory is idle again."""
        with self._lock:
            lent = self._lent.pop(id(ref), None)
            if lent is None:
                return
            owner = lent[1]
            if self._idle_bytes + owner.shape[0] > self._keep_bytes:
                return
            self._idle.append(owner)
            self._idle_bytes += owner.shape[0]

    def idle_bytes(self) -> int:
        """Bytes of the idle buffers kept."""
        with self._lock:
            return self._idle_bytes


def _capacity(nbytes: int) -> int:
    """The size of new memory for a buffer of ``nbytes``: rounded up to a sixteenth of
    its power of two (at least 64 KiB), so that the chunks of a dataset, whose stored
    sizes differ a little, fit each other's buffers (the rest is never touched).

    >>> _capacity(4_000_000), _capacity(300_000), _capacity(1 << 20)
    (4063232, 327680, 1048576)
    """
    step = max(64 << 10, 1 << max(0, nbytes.bit_length() - 5))
    return -(-nbytes // step) * step


_RECYCLER = _Recycler(KEEP_MAX_BYTES)


def _after_fork_in_child() -> None:
    """A forked child starts with no idle buffers and a free lock (a thread of the parent
    may have held it at the fork)."""
    global _RECYCLER
    _RECYCLER = _Recycler(KEEP_MAX_BYTES)


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def chunk_buffer(nbytes: int) -> AnyArray:
    """An uninitialized, writeable ``uint8`` array of ``nbytes`` for a chunk's stored bytes:
    over the memory of an earlier one whose last view is gone where one fits (between
    :data:`RECYCLE_MIN_BYTES` and :data:`RECYCLE_MAX_BYTES`), else new memory.

    Examples
    --------
    >>> buffer = chunk_buffer(1 << 20)
    >>> buffer.shape, buffer.dtype, buffer.flags.writeable
    ((1048576,), dtype('uint8'), True)
    """
    if not RECYCLE_MIN_BYTES <= nbytes <= RECYCLE_MAX_BYTES:
        return np.empty(nbytes, dtype=np.uint8)
    return _RECYCLER.take(nbytes)


__all__ = ["KEEP_MAX_BYTES", "RECYCLE_MAX_BYTES", "RECYCLE_MIN_BYTES", "chunk_buffer"]
