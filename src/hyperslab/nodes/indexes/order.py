"""Whether a table's rows are stored in the order of a column's index (read-only).

A completely sorted full index (a CSI) holds the column's values sorted (``sorted``, *S*)
and, at each position *p* of that order, the row whose value it is (``indices``: the
column's value at row ``indices[p]`` is ``S[p]``).  The rows are stored in the column's
order, its values never decreasing from one row to the next, exactly when every row holds
the value of its own position: ``S[indices[p]] == S[p]`` for every *p*.  Where
``indices[p] == p`` that holds without reading any value, and an identity permutation is
what an index of a sorted column holds wherever its values are distinct; it compresses to
almost nothing, so reading it in windows is cheap.  Equal values may come in any order
(PyTables sorts slices with an unstable sort, which moves the rows of equal values
around), so where a window's rows are not the identity its sorted values are read and the
moved positions must point at equal values: inside the window by comparing them, outside
by one read at the farthest target on each side (S never decreases, so the farthest
target's value equal to the nearest moved position's proves every target in between).

:func:`stored_in_order` answers only what it can prove: a dirty, stale, foreign, light or
half-float index, slices out of order, a NaN anywhere (NaNs sort last but compare unequal
to everything) or a moved row that is not a tie all give False, never a guess.  It reads,
and never writes, the index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hyperslab._typing import AnyArray

if TYPE_CHECKING:
    from hyperslab.nodes.indexes.store import ColumnIndex

__all__ = ["WINDOW", "stored_in_order"]

WINDOW = 1 << 20
"""Positions of the index's order read at a time (8 MiB of row numbers)."""


def stored_in_order(index: ColumnIndex, window: int = WINDOW) -> bool:
    """Whether the rows of ``index``'s table are stored in its column's order (its values
    never decrease from a row to the next), as the index proves it.

    Parameters
    ----------
    index : ColumnIndex
        A column's index, of the table as it is now.
    window : int, optional
        Positions of the index read at a time; the reading stops at the first window that
        disproves the order.

    Returns
    -------
    bool
        True only when the index is a clean full index covering every row, its slices
        (and last row) follow each other in order with no NaN, and every row holds the
        value of its own position in the sorted order (see the module docstring).  False
        otherwise, including for an empty table.

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "sorted.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     t = f.create_table("/", "t", np.dtype([("x", "i4")]))
    ...     t.append(np.array([(1,), (1,), (2,), (5,)], dtype=t.dtype))
    ...     _ = t.cols.x.create_csindex()
    ...     in_order = stored_in_order(t.cols.x.index)
    ...     _ = t.modify_column(0, 1, column=np.array([9], dtype="i4"), colname="x")
    ...     print(in_order, t.cols.x.index.dirty, stored_in_order(t.cols.x.index))
    True True False
    """
    nelements = index.nelements
    if (nelements == 0 or not index.exact or index.reduction != 1 or not index.current
            or not index.searchable or index.nsorted != nelements
            or not _slices_follow(index._all_ranges())):
        return False
    for start in range(0, nelements, window):
        stop = min(nelements, start + window)
        rows = index.indices_at(start, stop)
        moved = np.flatnonzero(rows != np.arange(start, stop, dtype=np.int64)) + start
        if moved.size and not _ties_only(index, start, stop, moved, rows[moved - start]):
            return False
    return True


def _slices_follow(ranges: AnyArray) -> bool:
    """Whether each slice's ``(first, last)`` values (last row included, in the index's
    order) are in order and at or below the next slice's first: the sorted values never
    decrease across the whole index.  A NaN (sorted last in its slice) fails both."""
    with np.errstate(invalid="ignore"):
        return bool(np.all(ranges[:, 0] <= ranges[:, 1])
                    and np.all(ranges[:-1, 1] <= ranges[1:, 0]))


def _ties_only(index: ColumnIndex, start: int, stop: int, moved: AnyArray,
               targets: AnyArray) -> bool:
    """Whether each moved position ``moved[i]`` of window ``start .. stop - 1`` holds the
    same sorted value as the row it names, ``targets[i]``."""
    values = index.sorted_at(start, stop)
    targets = targets.astype(np.int64)
    inside = (targets >= start) & (targets < stop)
    if not np.array_equal(values[targets[inside] - start], values[moved[inside] - start]):
        return False
    before, after = targets < start, targets >= stop
    if before.any():  # S[t_min] <= S[t] <= S[p] <= S[p_max] for each pair (p, t)
        first = int(targets[before].min())
        if index.sorted_at(first, first + 1)[0] != values[int(moved[before].max()) - start]:
            return False
    if after.any():  # S[p_min] <= S[p] <= S[t] <= S[t_max]
        last = int(targets[after].max())
        if index.sorted_at(last, last + 1)[0] != values[int(moved[after].min()) - start]:
            return False
    return True
