"""Writing the slices and the last row of a column index in PyTables' layout.

:class:`SliceWriter` fills an index group (made by
:func:`~hyperslab.nodes.indexes.layout.create_index_group`) as PyTables' ``Index.append`` and
``Index.append_last_row`` do: each full slice of sorted values adds a row to ``sorted`` and
``indices`` and its ranges and bounds to the cache arrays; what is left over becomes the
last row, with its chunk bounds after its values in ``sortedLR``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.nodes.indexes.layout import count_overlaps, encode_indices
from hyperslab.nodes.indexes.sizes import Geometry
from hyperslab.nodes.leaves.array import CArray, EArray
from hyperslab.nodes.tree.group import Group
from hyperslab.storage import attributes as raw


class SliceWriter:
    """Fills the slices of an index group in order (PyTables' ``Index.append``) and its
    last row (``append_last_row``)."""

    def __init__(self, group: Group, geometry: Geometry, nslices: int = 0) -> None:
        self.group = group
        self.gid = group._g_h5id
        self.geometry = geometry
        self.nslices = nslices
        self._arrays: dict[str, EArray] = {name: _child(group, name, EArray) for name in (
            "sorted", "indices", "ranges", "bounds", "abounds", "zbounds", "mbounds",
            "mranges")}
        self._sorted_lr = _child(group, "sortedLR", CArray)
        self._indices_lr = _child(group, "indicesLR", CArray)
        self._pending: list[tuple[AnyArray, AnyArray]] = []
        self._pending_rows = 0
        self.last_row = 0  # entries written to the last row

    def fill(self, first_slice: int, pieces: Iterator[tuple[AnyArray, AnyArray]]) -> None:
        """Add sorted ``(values, rows)`` pieces, a slice at a time from ``first_slice``;
        what is left over waits for :meth:`finish` (the last row)."""
        assert first_slice == self.nslices and not self._pending_rows
        slicesize = self.geometry.slicesize
        for values, rows in pieces:
            self._pending.append((values, rows))
            self._pending_rows += len(values)
            while self._pending_rows >= slicesize:
                self._write_slice(*self._take(slicesize))

    def _take(self, count: int) -> tuple[AnyArray, AnyArray]:
        values = np.concatenate([v for v, _ in self._pending])
        rows = np.concatenate([r for _, r in self._pending])
        self._pending = [(values[count:], rows[count:])] if len(values) > count else []
        self._pending_rows = len(values) - count
        return values[:count], rows[:count]

    def _write_slice(self, values: AnyArray, rows: AnyArray) -> None:
        g = self.geometry
        reduced = np.ascontiguousarray(values[:: g.reduction])
        rcs = g.rchunksize
        arrays = self._arrays
        medians = reduced[rcs // 2 :: rcs]
        arrays["sorted"].append(reduced.reshape(1, -1))
        arrays["indices"].append(encode_indices(rows, self.nslices, g).reshape(1, -1))
        arrays["ranges"].append(np.array([[reduced[0], values[-1]]], dtype=reduced.dtype))
        arrays["bounds"].append(reduced[rcs::rcs].reshape(1, -1))
        arrays["abounds"].append(reduced[0::rcs])
        arrays["zbounds"].append(reduced[rcs - 1 :: rcs])
        arrays["mbounds"].append(medians)
        arrays["mranges"].append(medians[g.slicesize // g.chunksize // 2 :][:1])
        self.nslices += 1
        for node in (self._sorted_lr, self._indices_lr):
            raw.write_int_attribute(node._g_h5id, "nelements", 0, "int64")

    def finish(self) -> None:
        """Write what is left as the last row (an empty one when the slices took every
        row)."""
        g = self.geometry
        values, rows = (self._take(self._pending_rows) if self._pending_rows
                        else (np.empty(0), np.empty(0, dtype=np.int64)))
        sorted_lr, indices_lr = self._sorted_lr, self._indices_lr
        if len(values):
            reduced = np.ascontiguousarray(values[:: g.reduction])
            edges = np.concatenate([reduced[:: g.rchunksize], values[-1:]])
            sorted_lr[: len(reduced)] = reduced
            sorted_lr[len(reduced) : len(reduced) + len(edges)] = edges
            indices_lr[: len(rows)] = encode_indices(rows, self.nslices, g)
        self.last_row = len(values)
        raw.write_int_attribute(sorted_lr._g_h5id, "nelements", g.kept(len(values)), "int64")
        raw.write_int_attribute(indices_lr._g_h5id, "nelements", len(values), "int64")

    def write_is_csi(self, nrows: int) -> None:
        """What PyTables leaves in ``is_csi`` after building: false when a slice or the
        last row follows the first slice; for a full index of more than a slice, whether
        no slice overlaps another."""
        g = self.geometry
        in_last_row = self.last_row
        if g.indsize == 8 and nrows > g.slicesize:
            found = self._arrays["ranges"].read()
            if in_last_row:
                kept = g.kept(in_last_row)
                edges = self._sorted_lr[kept : kept + g.last_row_edges(kept)]
                found = np.concatenate([found, [[edges[0], edges[-1]]]])
            raw.write_attribute(self.gid, "is_csi", np.bool_(count_overlaps(found) == 0))
        elif self.nslices >= 2 or (self.nslices and in_last_row):
            raw.write_attribute(self.gid, "is_csi", np.False_)


def _child(group: Group, name: str, cls: type[Any]) -> Any:
    """Array ``name`` of an index group, which must be a ``cls``."""
    node = group._f_get_child(name)
    if not isinstance(node, cls):
        raise TypeError(f"{node} is not an array of an index")
    return node


__all__ = ["SliceWriter"]
