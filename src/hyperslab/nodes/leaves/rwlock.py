"""A readers-writer lock: what makes one node safe to share between threads.

Every node a file may change (opened in a mode other than ``'r'``) has one
:class:`ReadWriteLock`.  Reads hold it *shared* for one read of stored data (a span of rows,
a selection, a block of an iteration), writes hold it *exclusive* for one whole change (an
append: growing the dataset and writing its rows; a flush of the append buffer; a
modification; an index update).  So a reader sees a node before or after each change, never
half of one, and readers never wait for each other.  Files opened ``'r'`` have no lock at
all: nothing in the process can change them.

The rules that keep it free of deadlocks:

- A thread that holds the lock exclusive may take it again, shared or exclusive (a write
  reads rows; a flush updates an index).
- A thread that holds it shared may take it shared again, even while a writer waits.
- A thread that holds it shared never asks for it exclusive: that would wait for itself,
  so :meth:`ReadWriteLock.exclusive` raises ``RuntimeError`` instead.  Callers that may
  need to write (flush buffered rows before reading) do it before they read.
- Work a thread hands to a pool (decompressing blocks of a table in parallel) takes the
  lock *on behalf of* that thread (``owner``): it is granted when the owner holds the lock
  already, so a writer that reads through the pool never waits for itself either.
- Writers go first: once a writer waits, new readers wait behind it (a stream of readers
  cannot starve an appending thread).

Acquiring or releasing costs about a microsecond (one mutex and a dict update); it is taken
once per read of a span or selection, never per chunk or row.
"""

from __future__ import annotations

import threading
from threading import get_ident
from types import TracebackType

__all__ = ["ReadWriteLock"]


class ReadWriteLock:
    """Shared (read) and exclusive (write) ownership of a node's stored data.

    Examples
    --------
    >>> lock = ReadWriteLock()
    >>> with lock.exclusive():
    ...     with lock.shared():  # a writer may read what it writes
    ...         pass
    >>> with lock.shared():
    ...     lock.exclusive().__enter__()
    Traceback (most recent call last):
    RuntimeError: a thread that reads a node cannot write it before the read ends
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._condition = threading.Condition(self._mutex)
        self._readers: dict[int, int] = {}  # owner thread ident -> shared holds
        self._own: dict[int, int] = {}  # thread ident -> shared holds it took for itself
        self._writer: int | None = None  # ident of the thread holding it exclusive
        self._writer_depth = 0
        self._writers_waiting = 0

    # ------------------------------------------------------------------ shared
    def acquire_shared(self, owner: int | None = None) -> int:
        """Hold the lock shared for ``owner`` (a thread ident; the calling thread's by
        default); return the owner to pass to :meth:`release_shared`."""
        me = get_ident()
        who = me if owner is None else owner
        with self._mutex:
            readers = self._readers
            if self._writer != who and who not in readers:
                while self._writer is not None or self._writers_waiting:
                    self._condition.wait()
            # Other tasks of the same owner may have been let in meanwhile: count, not set.
            readers[who] = readers.get(who, 0) + 1
            if who == me:
                self._own[me] = self._own.get(me, 0) + 1
        return who

    def release_shared(self, owner: int) -> None:
        """Give back one shared hold taken for ``owner``."""
        me = get_ident()
        with self._mutex:
            if owner == me:
                held = self._own[me] - 1
                if held:
                    self._own[me] = held
                else:
                    del self._own[me]
            readers = self._readers
            left = readers[owner] - 1
            if left:
                readers[owner] = left
            else:
                del readers[owner]
                if not readers and self._writers_waiting:
                    self._condition.notify_all()

    def shared(self, owner: int | None = None) -> _Shared:
        """A context manager holding the lock shared (for ``owner``, see
        :meth:`acquire_shared`)."""
        return _Shared(self, owner)

    # ------------------------------------------------------------------ exclusive
    def acquire_exclusive(self) -> None:
        """Hold the lock exclusive (waiting for the readers to finish).

        Raises
        ------
        RuntimeError
            If the calling thread holds the lock shared (it would wait for itself).
        """
        me = get_ident()
        with self._mutex:
            if self._writer == me:
                self._writer_depth += 1
                return
            if me in self._own:
                raise RuntimeError(
                    "a thread that reads a node cannot write it before the read ends"
                )
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._condition.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._writer_depth = 1

    def try_exclusive(self) -> bool:
        """Hold the lock exclusive if that needs no wait (the calling thread holds it
        exclusive already, or nobody holds or waits for it); whether it does."""
        me = get_ident()
        with self._mutex:
            if self._writer == me:
                self._writer_depth += 1
                return True
            if self._writer is not None or self._readers or self._writers_waiting:
                return False
            self._writer = me
            self._writer_depth = 1
            return True

    def release_exclusive(self) -> None:
        """Give back one exclusive hold of the calling thread."""
        with self._mutex:
            self._writer_depth -= 1
            if not self._writer_depth:
                self._writer = None
                self._condition.notify_all()

    def exclusive(self) -> _Exclusive:
        """A context manager holding the lock exclusive."""
        return _Exclusive(self)

    @property
    def written_by_me(self) -> bool:
        """Whether the calling thread holds the lock exclusive."""
        return self._writer == get_ident()


class _Shared:
    __slots__ = ("_held", "_lock", "_owner")

    def __init__(self, lock: ReadWriteLock, owner: int | None) -> None:
        self._lock = lock
        self._owner = owner
        self._held = 0

    def __enter__(self) -> None:
        self._held = self._lock.acquire_shared(self._owner)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._lock.release_shared(self._held)


class _Exclusive:
    __slots__ = ("_lock",)

    def __init__(self, lock: ReadWriteLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire_exclusive()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._lock.release_exclusive()
