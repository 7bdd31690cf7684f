"""The end of allocation (EOA) an HDF5 file's superblock records, for raw reads.

HDF5 refuses to read anything past the end of allocation its superblock records ("addr
overflow, addr = ..., eoa = ..."): bytes beyond it are not the file's, whatever the file
holds there.  Raw reads with ``os.pread`` (read-only files, see
:mod:`~hyperslab.storage.rawchunks`) bypass HDF5, so they check chunk addresses against
the same bound: :class:`AllocationEnd` reads it from the superblock (HDF5 File Format
Specification, section II.A, versions 0 to 3) and reads it again before it refuses an
address, in case another process has grown the file since.

Addresses are compared as HDF5 reports them (``chunk_iter``, ``get_chunk_info``): file
positions, in which the superblock's end-of-file address is expressed too.
"""

from __future__ import annotations

import os
import threading
from typing import Final

SIGNATURE: Final = b"\x89HDF\r\n\x1a\n"
_SEARCH_LIMIT: Final = 1 << 40
"""HDF5 looks for the superblock at 0, 512, 1024, 2048, ... (a user block before it)."""
# Where the end-of-file address is, after the base address, per superblock version:
# versions 0 and 1 keep the base address at byte 24 and 28, then the free-space and
# end-of-file addresses; versions 2 and 3 keep it at byte 12, then the superblock
# extension and end-of-file addresses.
_BASE_AT: Final = {0: 24, 1: 28, 2: 12, 3: 12}
_SIZE_OF_OFFSETS_AT: Final = {0: 13, 1: 13, 2: 9, 3: 9}


def end_of_allocation(fd: int) -> int | None:
    """The end of allocation of the HDF5 file open as `fd`, as its superblock records it.

    Returns None when no superblock of a known version is found (the caller then cannot
    check addresses, and lets HDF5 read).
    """
    try:
        size = os.fstat(fd).st_size
        position = 0
        while position < min(size, _SEARCH_LIMIT):
            head = os.pread(fd, 64, position)
            if head[:8] == SIGNATURE:
                return _eoa_field(head, position)
            position = 512 if position == 0 else 2 * position
    except OSError:
        return None
    return None


def _eoa_field(head: bytes, position: int) -> int | None:
    version = head[8] if len(head) > 8 else -1
    base_at = _BASE_AT.get(version)
    if base_at is None:
        return None
    width = head[_SIZE_OF_OFFSETS_AT[version]]
    at = base_at + 2 * width
    if width not in (2, 4, 8) or len(head) < at + width:
        return None
    eoa = int.from_bytes(head[at : at + width], "little")
    return None if eoa == (1 << (8 * width)) - 1 else eoa  # the undefined address


def addresses_are_positions(head: bytes) -> bool:
    """Whether the superblock at the start of `head` (a file's first 64 bytes) makes the
    file's addresses its byte positions, 8 bytes wide: a superblock at byte 0 of a known
    version, base address 0, 8-byte offsets and lengths (what
    :mod:`~hyperslab.storage.chunktree` reads)."""
    if len(head) < 40 or head[:8] != SIGNATURE:
        return False
    version = head[8]
    base_at = _BASE_AT.get(version)
    if base_at is None:
        return False
    widths = _SIZE_OF_OFFSETS_AT[version]  # (the size of lengths follows)
    if head[widths] != 8 or head[widths + 1] != 8:
        return False
    return int.from_bytes(head[base_at : base_at + 8], "little") == 0


class AllocationEnd:
    """The end of allocation of one read-only file, read once and again when needed.

    Parameters
    ----------
    fd : int
        The file's descriptor (HDF5's, while the file is open).
    """

    __slots__ = ("_eoa", "_fd", "_lock")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._eoa = end_of_allocation(fd)

    @property
    def value(self) -> int | None:
        """The end of allocation last read (None: unknown)."""
        return self._eoa

    def covers(self, end: int) -> bool:
        """Whether bytes up to `end` (exclusive) lie within the allocation.

        An `end` past the value last read makes it read the superblock again (the file
        may have grown) before answering False.
        """
        eoa = self._eoa
        if eoa is not None and end <= eoa:
            return True
        with self._lock:
            self._eoa = end_of_allocation(self._fd)
            return self._eoa is not None and end <= self._eoa


__all__ = ["SIGNATURE", "AllocationEnd", "addresses_are_positions", "end_of_allocation"]
