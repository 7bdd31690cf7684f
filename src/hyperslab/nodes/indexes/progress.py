"""Progress reports of index builds: a line on stderr, or a callable of the user's."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from hyperslab.nodes.indexes.sort import ProgressFunc

_now = time.monotonic  # the report's clock


class StderrProgress:
    """A one-line progress report on stderr, at most once a second, from the first second."""

    def __init__(self, label: str, total: int) -> None:
        self._label = label
        self._total = max(total, 1)
        self._start = _now()
        self._last = self._start
        self._shown = False

    def __call__(self, done: int) -> None:
        now = _now()
        finished = done >= self._total
        if now - self._last < 1.0 and not (finished and self._shown):
            return
        self._last = now
        self._shown = True
        percent = 100 * done // self._total
        sys.stderr.write(f"\r{self._label}: {percent:3d}% ({done}/{self._total}) "
                         f"{now - self._start:.0f} s")
        if finished:
            sys.stderr.write("\n")
        sys.stderr.flush()


def progress_for(progress: Any, label: str, nrows: int, total: int) -> ProgressFunc | None:
    """What to call with the units of work done (``total`` in all, for ``nrows`` rows):
    None for no report, a :class:`StderrProgress` for True, or a function calling the
    user's ``progress`` with the rows done.

    Raises
    ------
    TypeError
        If ``progress`` is neither a bool nor a callable.
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return StderrProgress(label, total)
    if callable(progress):
        user: Callable[[int], Any] = progress

        def rows_done(done: int) -> None:
            user(done * nrows // total if total else 0)

        return rows_done
    raise TypeError(f"progress must be a bool or a callable, not {progress!r}")


def offset_progress(report: ProgressFunc | None, offset: int) -> ProgressFunc | None:
    """``report`` for a part of the work that starts after ``offset`` units."""
    if report is None:
        return None

    def done_here(done: int) -> None:
        report(offset + done)

    return done_here


__all__ = ["StderrProgress", "offset_progress", "progress_for"]
