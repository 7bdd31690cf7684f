"""The rows that indexed queries matched, kept per table of a read-only file.

A query answered through indexes finds its candidate rows (binary searches in the
indexes, row numbers read, runs united and intersected), reads them and evaluates the
condition on them.  Repeating the same query, with the same values, window and table,
can only give the same rows where the table cannot change: a file opened read-only.
There, the row numbers a complete indexed query matched are kept
(:data:`MATCH_ENTRY_ROWS` at most per query, :data:`MATCH_CACHE_ROWS` in all per table,
least recently used dropped first), and the next run of the query reads those rows and
nothing else: no index search, no evaluation.  This is PyTables' sequence cache
(``Table._seqcache``), which keeps the matches of its indexed queries the same way.

Writable files keep nothing: any write could change what a query matches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["MATCH_CACHE_ROWS", "MATCH_ENTRY_ROWS", "MatchCache", "match_cache"]

MATCH_ENTRY_ROWS = 1 << 16
"""Matches of one query kept at most (512 KiB of row numbers)."""

MATCH_CACHE_ROWS = 1 << 20
"""Row numbers kept in all per table (8 MiB)."""

_tables_lock = threading.Lock()


class MatchCache:
    """Matched row numbers by query key, least recently used dropped first.

    Parameters
    ----------
    capacity : int, optional
        Row numbers kept in all (default :data:`MATCH_CACHE_ROWS`).
    entry_limit : int, optional
        The most row numbers one query may keep, larger results are not kept (default
        :data:`MATCH_ENTRY_ROWS`).
    """

    def __init__(self, capacity: int | None = None, entry_limit: int | None = None) -> None:
        self.capacity = MATCH_CACHE_ROWS if capacity is None else capacity
        limit = MATCH_ENTRY_ROWS if entry_limit is None else entry_limit
        self.entry_limit = min(limit, self.capacity)
        self._entries: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def rows(self) -> int:
        """Row numbers kept now."""
        return self._rows

    def get(self, key: Any) -> np.ndarray | None:
        """The row numbers kept for ``key`` (read-only int64, in row order), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Any, rows: np.ndarray) -> bool:
        """Keep ``rows`` (int64 row numbers in order) for ``key``; False, keeping nothing,
        when there are more than :attr:`entry_limit`."""
        if len(rows) > self.entry_limit:
            return False
        kept = np.array(rows, dtype=np.int64)  # our own copy, frozen
        kept.flags.writeable = False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._rows -= len(old)
            self._entries[key] = kept
            self._rows += len(kept)
            while self._rows > self.capacity:
                _, dropped = self._entries.popitem(last=False)
                self._rows -= len(dropped)
        return True

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._rows = 0


def match_cache(table: Any) -> MatchCache | None:
    """The match cache of ``table`` (made on first use), or None where its file is
    writable.  Kept on the table object, so that it lives and dies with it."""
    if table._v_file.mode != "r":
        return None
    cache: MatchCache | None = getattr(table, "_match_cache", None)
    if cache is None:
        with _tables_lock:
            cache = getattr(table, "_match_cache", None)
            if cache is None:
                cache = table._match_cache = MatchCache()
    return cache
