"""Running the decoding a read left for later in several threads, while it plans more.

A read of many chunks each decoded in part, with too few blocks a chunk to pay for a pool
task each (``a[25]`` of ``(10, 25, 50, 50)`` chunks in ``(1, 13, 50, 50)`` blocks: 16
chunks of 2 blocks), plans every chunk and loads its blocks' streams in the calling
thread, leaving the decoding and copying as jobs
(:class:`~hyperslab.codecs.cframe_region.DecodeJob`): Blosc2 calls that release the GIL,
and NumPy copies.  :func:`run_planned` runs them in the calling thread and the pool's:

- chunks with much to decode (:data:`EAGER_MIN_BYTES`) go to the pool as soon as they are
  planned, so that decoding them overlaps the planning of the next (Python, holding the
  GIL): ``a[..., 50]`` of hyperslab's ``(25, 50, 50, 50)`` chunks, 25 blocks of 200 KB
  a chunk, took 23.4 ms this way against 31.0 ms planned first and then split;
- others are planned a batch at a time and the batch split between the threads: on this
  2-core machine, decoding during the planning of chunks of 2 blocks slowed the planning
  more than it gained (``a[25]`` of the ``(10, 25, 50, 50)`` chunks: 2.69 against
  2.46 ms).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Final, Generic, TypeVar

from hyperslab.chunked.ordered import batches
from hyperslab.codecs.cframe import FrameError
from hyperslab.codecs.cframe_region import DecodeJob

Piece = TypeVar("Piece")
Planned = list[tuple[Piece, Sequence[DecodeJob]]]
"""Pieces and their jobs, run one after another by one thread."""

EAGER_MIN_BYTES: Final = 2 << 20
"""A read whose first planned chunk decodes at least this many bytes hands each chunk to
the pool as soon as it is planned (see the module docstring).  Measured here, 2 threads,
right after opening (planned first / handed at once): ``a[:, 50]`` of hyperslab's
``(10, 25, 50, 50)`` chunks (2.6 MB a chunk) 7.9 / 7.3 ms, of its ``(25, 50, 50, 50)``
chunks (5 MB) 8.0 / 6.8 ms; ``a[25]`` of the latter (1 MB a chunk) 2.6 / 2.5 ms, of the
former (0.5 MB) 2.7 / 3.2 ms."""


def run_planned(pieces: Sequence[Piece], plan: Callable[[Piece], Sequence[DecodeJob]],
                workers: int, executor: Callable[[], Executor],
                redo: Callable[[Piece], None], lead: int) -> None:
    """Plan every piece in this thread (``plan(piece)``: its jobs, none when it was read
    at once) and run the jobs, those of one piece one after another in one thread.

    With ``workers`` > 1, ``workers - 1`` tasks of ``executor()``'s pool run jobs too:
    each piece as soon as it is planned where the first piece's jobs decode at least
    :data:`EAGER_MIN_BYTES`, else ``lead`` pieces at a time, split between this thread and
    the tasks.  At most ``lead`` planned pieces wait (their loaded streams are the memory
    held): beyond that, this thread runs one before planning more.  A piece whose job
    raises :class:`~hyperslab.codecs.cframe.FrameError` (a block that does not
    decompress) is read again by ``redo(piece)``, in the thread that ran it, which
    decodes it another way or raises the error that names its chunk.  Returns once every
    job has run; the first error raised is raised.
    """
    if workers < 2 or len(pieces) < 2:
        for piece in pieces:
            _run([(piece, plan(piece))], redo)
        return
    tasks = _Tasks(workers - 1, executor, redo)
    eager: bool | None = None
    held: Planned[Piece] = []
    try:
        for piece in pieces:
            jobs = plan(piece)
            if not jobs:
                continue
            if eager is None:
                eager = sum(job.nbytes for job in jobs) >= EAGER_MIN_BYTES
            held.append((piece, jobs))
            if eager:
                tasks.hand(held)
                held = []
                if tasks.waiting() > lead:
                    tasks.run_next()
            elif len(held) >= lead:
                tasks.split(held)
                held = []
        if held:
            tasks.split(held)
    finally:
        tasks.finish()


class _Tasks(Generic[Piece]):
    """The pool tasks of one read, and the queue they take planned pieces from."""

    def __init__(self, count: int, executor: Callable[[], Executor],
                 redo: Callable[[Piece], None]) -> None:
        self._count = count
        self._executor = executor
        self._redo = redo
        self._ready: queue.SimpleQueue[Planned[Piece] | None] = queue.SimpleQueue()
        self._futures: list[Future[None]] = []

    def hand(self, planned: Planned[Piece]) -> None:
        """Queue ``planned`` for the tasks (started with the first work they get)."""
        if not self._futures:
            pool = self._executor()
            self._futures = [pool.submit(self._serve) for _ in range(self._count)]
        self._ready.put(planned)

    def waiting(self) -> int:
        """How much queued work no thread has taken yet."""
        return self._ready.qsize()

    def split(self, held: Planned[Piece]) -> None:
        """Hand all but the first of ``count + 1`` runs of consecutive ``held`` pieces to
        the tasks, and run the first here."""
        parts = list(batches(held, -(-len(held) // (self._count + 1))))
        for part in parts[1:]:
            self.hand(part)
        _run(parts[0], self._redo)

    def run_next(self) -> bool:
        """Run the next queued work here; False (nothing run) once only the tasks'
        Nones are left, or nothing."""
        try:
            planned = self._ready.get_nowait()
        except queue.Empty:
            return False
        if planned is None:
            self._ready.put(None)  # a task's
            return False
        _run(planned, self._redo)
        return True

    def finish(self) -> None:
        """Run what is left with the tasks, and wait for them (their first error is
        raised)."""
        for _ in self._futures:  # after all the work: each task stops at one
            self._ready.put(None)
        try:
            while self.run_next():
                pass
        finally:
            for future in self._futures:
                if not future.cancel():  # (a task that never started took nothing)
                    future.result()

    def _serve(self) -> None:
        """A pool task: run the queued work until the first None."""
        while (planned := self._ready.get()) is not None:
            _run(planned, self._redo)


def _run(planned: Planned[Piece], redo: Callable[[Piece], None]) -> None:
    for piece, jobs in planned:
        try:
            for job in jobs:
                job.run()
        except FrameError:
            redo(piece)


__all__ = ["EAGER_MIN_BYTES", "run_planned"]
