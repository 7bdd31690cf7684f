"""The per-File node cache: an LRU of strong references plus a weak registry.

PyTables' ``NODE_CACHE_SLOTS`` semantics:

* ``N > 0``: the ``N`` most recently used nodes are kept alive;
* ``N < 0``: every loaded node is kept alive, with a :class:`PerformanceWarning` once the
  cache grows past ``-N`` nodes;
* ``0``: nothing is kept alive by the cache.

Whatever the setting, a node object stays valid (and unique: the same object is returned for
the same path) while user code holds it, thanks to the weak registry; renames, moves and
removals go through :meth:`NodeCache.repath` and :meth:`NodeCache.drop` so that every live
object keeps the right path.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from typing import Protocol

from hyperslab.errors import PerformanceWarning
from hyperslab.nodes.tree.naming import is_under


class CachedNode(Protocol):
    """What the cache needs of a node: a path it can rewrite."""

    _v_pathname: str


class NodeCache:
    """LRU of strong references and weak registry of every live node of one file.

    Parameters
    ----------
    slots : int
        ``NODE_CACHE_SLOTS`` (see the module docstring).
    """

    def __init__(self, slots: int) -> None:
        self.slots = int(slots)
        self._strong: OrderedDict[str, CachedNode] = OrderedDict()
        self._live: weakref.WeakValueDictionary[str, CachedNode] = weakref.WeakValueDictionary()
        self._warned = False
        self._lock = threading.RLock()  # threads share a file's cache

    @property
    def nslots(self) -> int:
        """``slots`` under PyTables' name (its ``NodeCache.nslots``)."""
        return self.slots

    def __len__(self) -> int:
        """Number of nodes the cache keeps alive."""
        return len(self._strong)

    def __contains__(self, path: object) -> bool:
        return path in self._live

    def get(self, path: str) -> CachedNode | None:
        """Return the live node at ``path`` (marking it recently used), or None."""
        node = self._live.get(path)
        if node is not None and self.slots != 0:
            with self._lock:
                self._touch(path, node)
        return node

    def add(self, node: CachedNode) -> None:
        """Register a freshly loaded node."""
        path = node._v_pathname
        with self._lock:
            self._live[path] = node
            if self.slots != 0:
                self._touch(path, node)

    def _touch(self, path: str, node: CachedNode) -> None:
        strong = self._strong
        if path in strong:
            strong.move_to_end(path)
            return
        strong[path] = node
        if self.slots > 0:
            while len(strong) > self.slots:
                strong.popitem(last=False)
        elif not self._warned and len(strong) > -self.slots:
            self._warned = True
            warnings.warn(
                f"the node cache holds {len(strong)} nodes, more than the "
                f"{-self.slots} allowed by NODE_CACHE_SLOTS={self.slots}; memory grows with "
                f"every node loaded (use a positive NODE_CACHE_SLOTS to bound it)",
                PerformanceWarning,
                stacklevel=5,
            )

    def drop_one(self, path: str) -> None:
        """Forget the node at ``path`` only (it was closed by the user)."""
        with self._lock:
            self._live.pop(path, None)
            self._strong.pop(path, None)

    def drop(self, path: str) -> list[CachedNode]:
        """Forget ``path`` and everything below it; return the live nodes forgotten."""
        with self._lock:
            gone = [node for p, node in list(self._live.items()) if is_under(p, path)]
            for node in gone:
                self._live.pop(node._v_pathname, None)
                self._strong.pop(node._v_pathname, None)
        return gone

    def repath(self, old: str, new: str) -> None:
        """Move ``old`` and everything below it to ``new``, rewriting the live nodes' paths."""
        with self._lock:
            self._repath(old, new)

    def _repath(self, old: str, new: str) -> None:
        moved = [node for p, node in list(self._live.items()) if is_under(p, old)]
        kept_strong = {n._v_pathname for n in moved if n._v_pathname in self._strong}
        for node in moved:
            self._live.pop(node._v_pathname, None)
            self._strong.pop(node._v_pathname, None)
        for node in moved:
            was_strong = node._v_pathname in kept_strong
            path = node._v_pathname
            node._v_pathname = new + path[len(old) :] if old != "/" else path
            self._live[node._v_pathname] = node
            if was_strong:
                self._strong[node._v_pathname] = node

    def live_nodes(self) -> Iterator[CachedNode]:
        """Every node object still alive (cached or held by user code)."""
        return iter(list(self._live.values()))

    def clear(self) -> None:
        """Forget every node."""
        with self._lock:
            self._strong.clear()
            self._live.clear()
