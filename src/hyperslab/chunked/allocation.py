"""Refusing, up front, results no machine could hold.

A dataset's extent is read from the file: a damaged dataspace message, or a dataset grown
sparse (legal: unwritten chunks read as the fill value), can claim 10^14 rows.  A read
of all of them, or of every third, must fail at once, as NumPy and h5py fail, with a
``MemoryError`` naming the size, before any chunk is planned or read and leaving the file
usable; it must not first spend minutes and gigabytes planning chunks.

:func:`check_result_size` is that check: one multiplication per read, against the memory
of the machine (physical memory plus swap, what Linux's default overcommit policy lets a
single allocation have).  Results that fit are allocated by NumPy, which may still refuse
them (a process limit, memory in use).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Sequence

_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def format_bytes(nbytes: int) -> str:
    """``nbytes`` in binary units, e.g. ``'1.28 PiB'``.

    Examples
    --------
    >>> format_bytes(1440000000000000)
    '1.28 PiB'
    >>> format_bytes(512)
    '512 bytes'
    """
    value = float(nbytes)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{nbytes} bytes" if unit == "bytes" else f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _swap_bytes() -> int:
    """Swap space of the machine (Linux's ``/proc/meminfo``; 0 where unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("SwapTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


@functools.cache
def machine_memory() -> int:
    """Bytes of memory a single allocation could ever get: physical memory plus swap.

    Where the platform does not say, a limit no allocation reaches (``2**63 - 1``).
    """
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return (1 << 63) - 1
    if physical <= 0:  # pragma: no cover
        return (1 << 63) - 1
    return physical + _swap_bytes()


def check_result_size(shape: Sequence[int], itemsize: int,
                      what: str | Callable[[], str]) -> None:
    """Refuse a result of ``shape`` and ``itemsize`` bigger than the machine's memory.

    Parameters
    ----------
    shape : sequence of int
        The result's shape (items).
    itemsize : int
        Bytes of one item.
    what : str or callable
        What is read, for the message (e.g. ``"rows 0:270000000000000:3 of '/t'"``), or a
        function that gives it, called only for the message (a dataset's name costs an
        HDF5 call, and 60 us at a dataset's first read).

    Raises
    ------
    MemoryError
        If the result needs more bytes than :func:`machine_memory`; the message names the
        size and what was read.
    """
    count = math.prod(shape)
    nbytes = count * itemsize
    limit = machine_memory()
    if nbytes > limit:
        if not isinstance(what, str):
            what = what()
        raise MemoryError(
            f"cannot read {what}: the result would hold {count} items of {itemsize} bytes "
            f"({format_bytes(nbytes)}), more than the {format_bytes(limit)} of memory of "
            f"this machine (is the dataset's extent damaged?)"
        )


__all__ = ["check_result_size", "format_bytes", "machine_memory"]
