"""Running the decoding a read left for later in several threads.

A read of many chunks each decoded in part, with too few blocks a chunk to pay for a pool
task each (``a[25]`` of ``(10, 25, 50, 50)`` chunks in ``(1, 13, 50, 50)`` blocks: 16
chunks of 2 blocks), plans every chunk and loads its blocks' streams in the calling
thread, leaving the decoding and copying as jobs
(:func:`~hyperslab.codecs.cframe_region.decode_region`'s ``jobs``): Blosc2 calls that
release the GIL, and NumPy copies.  :func:`run_split` runs those jobs split between the
calling thread and one pool task per other worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TypeVar

from hyperslab.chunked.ordered import batches
from hyperslab.codecs.cframe import FrameError

Piece = TypeVar("Piece")
Job = Callable[[], None]


def run_split(work: Sequence[tuple[Piece, Sequence[Job]]], workers: int,
              executor: Callable[[], Executor], redo: Callable[[Piece], None]) -> None:
    """Run every piece's jobs, the pieces split into ``workers`` runs of consecutive ones:
    the first in this thread, the others each a task of ``executor()``'s pool.

    A piece whose job raises :class:`~hyperslab.codecs.cframe.FrameError` (a block that
    does not decompress) is read again by ``redo(piece)``, in the thread that ran it,
    which decodes it another way or raises the error that names its chunk.  Returns
    once every run has ended; the first error raised is raised.
    """
    if not work:
        return
    parts = list(batches(work, -(-len(work) // max(1, workers))))
    if len(parts) < 2:
        _run(parts[0], redo)
        return
    pool = executor()
    futures = [pool.submit(_run, part, redo) for part in parts[1:]]
    try:
        _run(parts[0], redo)
    finally:
        for future in futures:
            future.result()


def _run(work: Sequence[tuple[Piece, Sequence[Job]]], redo: Callable[[Piece], None]) -> None:
    for piece, jobs in work:
        try:
            for job in jobs:
                job()
        except FrameError:
            redo(piece)


__all__ = ["run_split"]
