"""Progress bars of long jobs (repacks, index builds), drawn by tqdm on stderr.

One helper, :func:`progress_bar`, decides whether a bar is shown and gives back an object
with ``update(n)`` and ``close()`` either way, so callers never test for it:

* ``show=None`` (the default of repacks): a bar only when stderr is a terminal, so logs,
  pipes and tests stay clean;
* ``show=True``: a bar whatever stderr is (``--progress`` on the command line);
* ``show=False``: nothing (``progress=False``, ``--no-progress``).

tqdm (small, no dependencies) is imported only when a bar is drawn: importing hyperslab
does not pay for it.  This module imports nothing from hyperslab, so every layer may use
it.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, Protocol, TextIO


class Bar(Protocol):
    """What callers use of a progress bar."""

    def update(self, n: int = 1) -> Any:
        """Count ``n`` more units of work done."""

    def close(self) -> None:
        """Finish the bar (its last state stays on the line)."""


class NoBar:
    """A bar that shows nothing."""

    def update(self, n: int = 1) -> None:
        """Do nothing."""

    def close(self) -> None:
        """Do nothing."""

    def __enter__(self) -> NoBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def should_show(show: bool | None, stream: TextIO | None = None) -> bool:
    """Whether a bar is drawn: ``show`` if it is a bool, else whether ``stream`` (stderr
    by default) is a terminal.

    Raises
    ------
    TypeError
        If ``show`` is neither None nor a bool.
    """
    if show is None:
        stream = sys.stderr if stream is None else stream
        isatty = getattr(stream, "isatty", None)
        return bool(isatty is not None and isatty())
    if not isinstance(show, bool):
        raise TypeError(f"progress must be None, True or False, not {show!r}")
    return show


def progress_bar(total: int | None, label: str, *, show: bool | None = None,
                 unit: str = "it", unit_scale: bool = False,
                 stream: TextIO | None = None) -> Any:
    """Return a progress bar of ``total`` units (a :class:`NoBar` where none is shown).

    Parameters
    ----------
    total : int or None
        Units of work in all (None: unknown, the bar counts without a percentage).
    label : str
        What is being done, shown before the bar.
    show : bool, optional
        True: always draw; False: never; None: only if ``stream`` is a terminal.
    unit : str
        Name of a unit of work (``'B'`` with ``unit_scale`` shows KB, MB, ...).
    unit_scale : bool
        Scale counts with SI prefixes.
    stream : file, optional
        Where the bar is drawn; ``sys.stderr`` (looked up at each call) by default.

    Returns
    -------
    tqdm.tqdm or NoBar
        Use ``update(n)`` and ``close()``, or ``with``.

    Examples
    --------
    >>> with progress_bar(3, "work", show=False) as bar:
    ...     for _ in range(3):
    ...         bar.update(1)
    """
    stream = sys.stderr if stream is None else stream
    if not should_show(show, stream):
        return NoBar()
    from tqdm import tqdm  # ~20 ms: only when a bar is drawn

    return tqdm(total=total, desc=label, unit=unit, unit_scale=unit_scale, file=stream,
                leave=True, dynamic_ncols=True)


__all__ = ["Bar", "NoBar", "progress_bar", "should_show"]
