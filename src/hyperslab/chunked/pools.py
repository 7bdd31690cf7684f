"""Thread pools shared by every open file of a process, and each file's view of one.

Each open file (de)compresses chunks in a pool of ``MAX_THREADS`` threads.  The threads
are shared by every file opened with the same count (:func:`shared_pool`), so that a
file opened to read a slice or two does not start threads of its own: a new thread
costs its start and, for its first reads, fresh memory (its malloc arena, its scratch
buffers for decoded blocks), a page fault per 4 KB.  Measured here, the first read after
opening (2 threads): ``a[25]`` of the slicing benchmark's ``(10, 25, 50, 50)`` chunks
2.53 -> 2.34 ms, of its ``(25, 50, 50, 50)`` chunks 1.96 -> 1.82 ms; ``a[:, 50]`` 6.8 ->
6.6 ms.  The threads' scratch buffers (at most a chunk and an 8 MiB block group each)
stay for the life of the process, as the calling threads' do.

A file sees its pool through a :class:`FilePool`: closing the file waits for its own
tasks (a query iterator's, say) and refuses new ones, as shutting down a pool of its own
did, without waiting for other files' tasks.  A child process (``fork``) gets pools of its
own: the parent's threads do not exist there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")

_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(workers: int) -> ThreadPoolExecutor:
    """The process's pool of ``workers`` threads (made on first use; threads named
    ``hyperslab...``)."""
    key = (os.getpid(), workers)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            for inherited in [k for k in _POOLS if k[0] != key[0]]:
                del _POOLS[inherited]  # a parent's (before fork): no threads here
            pool = _POOLS[key] = ThreadPoolExecutor(workers, thread_name_prefix="hyperslab")
    return pool


class FilePool(Executor):
    """One open file's tasks in the shared pool of ``workers`` threads.

    :meth:`submit` as a ``ThreadPoolExecutor``'s; :meth:`shutdown` refuses new tasks and
    waits for this file's (only).  Thread-safe.
    """

    def __init__(self, workers: int) -> None:
        self._pool = shared_pool(workers)
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args,
               **kwargs: _P.kwargs) -> Future[_T]:
        """Run ``fn(*args, **kwargs)`` in the pool.

        Raises
        ------
        RuntimeError
            After :meth:`shutdown` (as ``ThreadPoolExecutor.submit`` does).
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            future = self._pool.submit(fn, *args, **kwargs)
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def shutdown(self, wait_for_tasks: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new tasks; cancel this file's tasks not started (``cancel_futures``),
        then wait for the others (``wait_for_tasks``)."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        if cancel_futures:
            for future in pending:
                future.cancel()
        if wait_for_tasks:
            wait(pending)


__all__ = ["FilePool", "shared_pool"]
