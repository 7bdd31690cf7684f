"""Progress reports of index builds: a bar on stderr (:mod:`hyperslab.progress`), or a
callable of the user's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hyperslab.nodes.indexes.sort import ProgressFunc
from hyperslab.progress import progress_bar, should_show

PROGRESS_MIN_ROWS = 1_000_000
"""Builds (and sorted copies) of at least this many rows show a bar by default, where
stderr is a terminal; smaller ones take about a second at most."""


class StderrProgress:
    """A progress bar on stderr counting the rows of an index build, fed with the units of
    work done so far (``total`` in all, for ``nrows`` rows); it closes itself (leaving its
    last line) once the work is done."""

    def __init__(self, label: str, nrows: int, total: int) -> None:
        self._nrows = nrows
        self._total = max(total, 1)
        self._bar = progress_bar(nrows, label, show=True, unit="rows")
        self._rows = 0
        self._closed = False

    def __call__(self, done: int) -> None:
        if self._closed:
            return
        done = min(done, self._total)
        rows = done * self._nrows // self._total
        if rows > self._rows:
            self._bar.update(rows - self._rows)
            self._rows = rows
        if done >= self._total:
            self._closed = True
            self._bar.close()


def progress_for(progress: Any, label: str, nrows: int, total: int) -> ProgressFunc | None:
    """What to call with the units of work done (``total`` in all, for ``nrows`` rows):
    None for no report (False, or None for a build of fewer than
    :data:`PROGRESS_MIN_ROWS` rows or where stderr is no terminal), a
    :class:`StderrProgress` (a bar) for True or None otherwise, or a function calling the
    user's ``progress`` with the rows done.

    Raises
    ------
    TypeError
        If ``progress`` is neither None, a bool nor a callable.
    """
    if progress is None:
        progress = nrows >= PROGRESS_MIN_ROWS and should_show(None)
    if progress is False:
        return None
    if progress is True:
        return StderrProgress(label, nrows, total)
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
