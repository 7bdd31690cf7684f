"""The out-of-core stable sort that builds column indexes.

:func:`sorted_pieces` sorts one column by ``(value, row)`` (a stable sort: equal values keep
their row order, NaNs come last in row order) in bounded memory.  A column of at most
``run_rows`` values is sorted in memory.  A longer one is cut into runs of ``run_rows`` rows,
each sorted in memory and spilled to ``.npy`` files in a temporary directory, and the runs are
then merged k ways in batches read back through memory maps.

The merge keeps a buffer of sorted ``(value, row)`` pairs per run.  Each round, every buffer
is topped up, and the *bound* is the smallest last buffered pair among the runs that still
have pairs on disk.  Every buffered pair up to the bound is smaller than every pair not yet
buffered, so those pairs can be output; the run holding the bound outputs its whole buffer,
so each round makes progress.  Runs cover consecutive row ranges, so a pair's row order is
its run order; that is what lets a stable sort of the concatenated outputs (in run order)
order them by ``(value, row)``.

Pure NumPy: nothing here knows about files, tables or nodes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from typing import Any, Literal

import numpy as np

from hyperslab._typing import AnyArray

DEFAULT_RUN_BYTES = 256 * 1024 * 1024
"""The memory a run of the default size needs for 8-byte values, in bytes."""

DEFAULT_RUN_ROWS = 1 << 23
"""The most rows sorted in memory at a time (see :func:`run_rows_for` for a memory budget)."""

DEFAULT_PIECE_ROWS = 1 << 20
"""Rows in each piece :func:`sorted_pieces` yields (the last one may be shorter)."""

ReadFunc = Callable[[int, int], AnyArray]
ProgressFunc = Callable[[int], None]
Piece = tuple[AnyArray, AnyArray]


def run_rows_for(dtype: np.dtype[Any], budget: int = DEFAULT_RUN_BYTES) -> int:
    """Rows of ``dtype`` values whose in-memory sort needs about ``budget`` bytes.

    A run holds its values twice (as read and in order) plus five 8-byte integers per value
    (sort keys and the order while sorting, the row numbers); the result is at least 1024
    and at most :data:`DEFAULT_RUN_ROWS`.

    Examples
    --------
    >>> run_rows_for(np.dtype("f8")), run_rows_for(np.dtype("S100"))
    (4793490, 1118481)
    """
    per_row = 2 * max(int(np.dtype(dtype).itemsize), 1) + 40
    return max(1024, min(DEFAULT_RUN_ROWS, budget // per_row))


def progress_total(nrows: int, run_rows: int = DEFAULT_RUN_ROWS) -> int:
    """The count :func:`sorted_pieces` reports to ``progress`` when it is done.

    ``nrows`` for an in-memory sort; ``2 * nrows`` for an out-of-core one (every row is
    counted once when its run is sorted and once when it is merged).
    """
    return nrows if nrows <= run_rows else 2 * nrows


def _native(values: AnyArray) -> AnyArray:
    """``values`` in native byte order (a copy only when needed)."""
    if not values.dtype.isnative:
        return values.astype(values.dtype.newbyteorder("="))
    return values


def _read_checked(
    read: ReadFunc, lo: int, hi: int, dtype: np.dtype[Any] | None
) -> AnyArray:
    """``read(lo, hi)`` as a native 1-D array of ``hi - lo`` values (of ``dtype`` if given)."""
    values = np.asarray(read(lo, hi))
    if values.ndim != 1 or len(values) != hi - lo:
        raise ValueError(
            f"read({lo}, {hi}) must return a 1-D array of {hi - lo} values, not one of "
            f"shape {values.shape}"
        )
    if values.dtype.kind == "c" or values.dtype.names is not None:
        raise TypeError(f"values of dtype {values.dtype} cannot be sorted for an index")
    if dtype is not None and values.dtype != dtype:
        values = values.astype(dtype)
    return _native(values)


_TOP_BIT = np.uint64(1 << 63)
_ALL_BITS = np.uint64((1 << 64) - 1)


def _sort_keys(values: AnyArray) -> AnyArray:
    """Order-preserving uint64 keys of numbers: equal values (every NaN, -0.0 and 0.0)
    get equal keys, NaNs the one just above every other key (so that they do not widen
    the range of the keys)."""
    kind = values.dtype.kind
    if kind in "bu":
        return values.astype(np.uint64)
    if kind == "i":
        return values.astype(np.int64).view(np.uint64) ^ _TOP_BIT
    if values.dtype.itemsize <= 4:  # float16/32: exact 32-bit keys
        floats32 = values.astype(np.float32) + np.float32(0.0)  # -0.0 -> 0.0
        bits32 = floats32.view(np.uint32)
        keys = np.where(bits32 >> np.uint32(31), ~bits32, bits32 | np.uint32(1 << 31))
        keys = keys.astype(np.uint64)
        nan = np.isnan(floats32)
    else:
        floats = values.astype(np.float64) + 0.0
        bits = floats.view(np.uint64)
        keys = np.where(bits >> np.uint64(63), ~bits, bits | _TOP_BIT)
        nan = np.isnan(floats)
    if nan.any():
        # NaN bits map above +inf's key; every NaN gets the key just above the others.
        keys[nan] = 0
        keys[nan] = keys.max() + np.uint64(1)
    return keys


def stable_argsort(values: AnyArray) -> AnyArray:
    """``np.argsort(values, kind='stable')`` as int64, faster for numbers of 4 bytes or more.

    Each value's order-preserving integer key, less the smallest key and shifted right
    just enough, is packed with the row number into one uint64, and those integers are
    sorted with ``np.sort`` (several times faster than a stable argsort).  When no bits
    were shifted out (values of 4 bytes or less, or a narrow range) that order is exact.
    Otherwise values whose shortened keys collide come out in row order; only the groups
    of such values that differ are sorted again, the same way (their narrower range
    usually makes that exact).  Values already in order are detected first (one pass).
    Bytes, integers of 1 or 2 bytes (which NumPy sorts by radix) and arrays of 2**32
    values or more use NumPy's stable sort.

    Examples
    --------
    >>> stable_argsort(np.array([2.0, np.nan, 1.0, 2.0, -0.0, 0.0, np.nan])).tolist()
    [4, 5, 2, 0, 3, 1, 6]
    """
    kind = values.dtype.kind
    if (kind not in "biuf" or (kind != "f" and values.dtype.itemsize <= 2)
            or len(values) >= 1 << 32):
        return np.argsort(values, kind="stable").astype(np.int64, copy=False)
    return _packed_argsort(_sort_keys(values), 0)


_MAX_DEPTH = 3  # re-sorts of colliding groups before NumPy's stable sort takes over


def _packed_argsort(keys: AnyArray, depth: int) -> AnyArray:
    """The stable argsort of uint64 ``keys`` (changed in place); see :func:`stable_argsort`."""
    count = len(keys)
    if count < 2 or bool(np.all(keys[1:] >= keys[:-1])):
        return np.arange(count, dtype=np.int64)  # already in order (e.g. time stamps)
    keys -= keys.min()
    row_bits = (count - 1).bit_length()
    shift = max(0, int(keys.max()).bit_length() - (64 - row_bits))
    packed = keys >> np.uint64(shift) if shift else keys.copy()
    packed <<= np.uint64(row_bits)
    packed |= np.arange(count, dtype=np.uint64)
    packed.sort()
    order = (packed & np.uint64((1 << row_bits) - 1)).astype(np.int64)
    if shift == 0:
        return order
    full = keys[order]
    packed >>= np.uint64(row_bits)  # the shortened keys, in order
    same = packed[1:] == packed[:-1]
    wrong = same & (full[1:] != full[:-1])
    if not wrong.any():
        return order
    # Re-sort the groups holding different values by (group, low bits): a compact key.
    where, group = _groups_of(same, wrong)
    subset = (group << np.uint64(shift)) | (full[where] & np.uint64((1 << shift) - 1))
    again = (_packed_argsort(subset, depth + 1) if depth < _MAX_DEPTH
             else np.argsort(subset, kind="stable"))
    order[where] = order[where][again]
    return order


def _groups_of(same: AnyArray, wrong: AnyArray) -> tuple[AnyArray, AnyArray]:
    """Positions of the groups (runs of ``same`` neighbours) holding a ``wrong`` pair, and
    the ordinal (uint64) of each one's group among them."""
    count = len(same) + 1
    starts = np.flatnonzero(~same) + 1  # where each group but the first begins
    groups = np.unique(np.searchsorted(starts, np.flatnonzero(wrong), side="right"))
    begin = np.concatenate([[0], starts])[groups]
    lengths = np.concatenate([starts, [count]])[groups] - begin
    ends = np.cumsum(lengths)
    where = np.repeat(begin - (ends - lengths), lengths) + np.arange(int(ends[-1]))
    return where, np.repeat(np.arange(len(groups), dtype=np.uint64), lengths)


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value!r}")
    return int(value)


def sorted_pieces(
    read: ReadFunc,
    nrows: int,
    *,
    run_rows: int = DEFAULT_RUN_ROWS,
    tmp_dir: str | None = None,
    piece_rows: int = DEFAULT_PIECE_ROWS,
    progress: ProgressFunc | None = None,
) -> Iterator[Piece]:
    """Sort a column by ``(value, row)`` in bounded memory, yielding it in pieces.

    Parameters
    ----------
    read : callable
        ``read(lo, hi)`` returns the values of rows ``lo`` to ``hi - 1`` as a 1-D array of a
        sortable dtype (integers, unsigned integers, floats including float16, bool, bytes).
        Every call must return the same dtype.
    nrows : int
        The number of rows of the column.
    run_rows : int, default DEFAULT_RUN_ROWS
        Rows sorted in memory at a time; memory use is a small multiple of ``run_rows``
        values.  Columns of more rows are sorted out of core.
    tmp_dir : str, optional
        Where the temporary directory of the runs is created (default: the system's).  It
        is removed when the iterator ends, fails or is closed.
    piece_rows : int, default DEFAULT_PIECE_ROWS
        Rows in each yielded piece (the last one may be shorter).
    progress : callable, optional
        Called with the count of rows done so far, up to :func:`progress_total`.

    Yields
    ------
    values, rows : ndarray
        Consecutive pieces of the sorted column: native values and their int64 row numbers.
        Concatenated, they order every row ascending by value, NaNs last, equal values (and
        NaNs) by row: ``np.argsort(column, kind='stable')``.

    Raises
    ------
    TypeError, ValueError
        For bad arguments (raised here, before any reading), or when ``read`` returns
        something else than asked (raised by the iterator).

    Examples
    --------
    >>> column = np.array([3.0, np.nan, 1.0, 3.0, 2.0])
    >>> pieces = sorted_pieces(lambda lo, hi: column[lo:hi], 5, run_rows=2, piece_rows=3)
    >>> [(v.tolist(), r.tolist()) for v, r in pieces]
    [([1.0, 2.0, 3.0], [2, 4, 0]), ([3.0, nan], [3, 1])]
    """
    nrows = _check_int("nrows", nrows, 0)
    run_rows = _check_int("run_rows", run_rows, 1)
    piece_rows = _check_int("piece_rows", piece_rows, 1)
    if tmp_dir is not None and not os.path.isdir(tmp_dir):
        raise ValueError(f"tmp_dir is not an existing directory: {tmp_dir!r}")
    report = progress if progress is not None else _no_progress
    if nrows <= run_rows:
        return _in_memory(read, nrows, piece_rows, report)
    return _out_of_core(read, nrows, run_rows, tmp_dir, piece_rows, report)


def _no_progress(done: int) -> None:
    """The default progress callback: nothing."""


def _in_memory(read: ReadFunc, nrows: int, piece_rows: int, report: ProgressFunc
               ) -> Iterator[Piece]:
    values = _read_checked(read, 0, nrows, None)
    order = stable_argsort(values)
    report(nrows)
    for start in range(0, nrows, piece_rows):
        rows = order[start:start + piece_rows]
        yield values[rows], rows


def _out_of_core(read: ReadFunc, nrows: int, run_rows: int, tmp_dir: str | None,
                 piece_rows: int, report: ProgressFunc) -> Iterator[Piece]:
    with tempfile.TemporaryDirectory(dir=tmp_dir, prefix="hyperslab-index-") as tmp:
        runs: list[tuple[str, str]] = []
        dtype: np.dtype[Any] | None = None
        for number, lo in enumerate(range(0, nrows, run_rows)):
            hi = min(lo + run_rows, nrows)
            values = _read_checked(read, lo, hi, dtype)
            dtype = values.dtype
            order = stable_argsort(values)
            paths = (os.path.join(tmp, f"values{number}.npy"),
                     os.path.join(tmp, f"rows{number}.npy"))
            np.save(paths[0], values[order])
            del values
            order += lo
            np.save(paths[1], order)
            del order
            runs.append(paths)
            report(hi)
        merged = _merge(runs, run_rows, nrows, report)
        try:
            yield from _repiece(merged, piece_rows)
        finally:
            merged.close()  # drop the memory maps before the directory goes


class _Run:
    """One sorted run on disk, read through memory maps into a buffer of pairs."""

    def __init__(self, paths: tuple[str, str]) -> None:
        self.values: AnyArray = np.load(paths[0], mmap_mode="r")
        self.rows: AnyArray = np.load(paths[1], mmap_mode="r")
        self.loaded = 0  # pairs read from disk so far
        self.buf_values: AnyArray = self.values[:0].copy()
        self.buf_rows: AnyArray = self.rows[:0].copy()

    @property
    def on_disk(self) -> bool:
        """Whether pairs remain that are not buffered yet."""
        return self.loaded < len(self.values)

    @property
    def buffered(self) -> int:
        return len(self.buf_values)

    def top_up(self, batch: int) -> int:
        """Refill the buffer to ``batch`` pairs once it falls below half; return pairs read."""
        have = self.buffered
        if have >= (batch + 1) // 2 or not self.on_disk:
            return 0
        stop = min(self.loaded + batch - have, len(self.values))
        new_values = np.asarray(self.values[self.loaded:stop])
        new_rows = np.asarray(self.rows[self.loaded:stop])
        self.buf_values = np.concatenate([self.buf_values, new_values])
        self.buf_rows = np.concatenate([self.buf_rows, new_rows])
        read = stop - self.loaded
        self.loaded = stop
        return read

    def take(self, count: int) -> Piece:
        """Remove and return the first ``count`` buffered pairs."""
        piece = self.buf_values[:count], self.buf_rows[:count]
        self.buf_values = self.buf_values[count:]
        self.buf_rows = self.buf_rows[count:]
        return piece


def _bound_run(runs: list[_Run]) -> int | None:
    """The index of the run whose last buffered pair is the bound (None: every pair is in
    memory, so everything can be output)."""
    candidates = [i for i, run in enumerate(runs) if run.on_disk]
    if not candidates:
        return None
    lasts = np.concatenate([runs[i].buf_values[-1:] for i in candidates])
    # NaN last; equal values: the first candidate, i.e. the lowest run, i.e. the lowest row.
    return candidates[int(np.argsort(lasts, kind="stable")[0])]


def _merge(paths: list[tuple[str, str]], run_rows: int, nrows: int, report: ProgressFunc
           ) -> Generator[Piece, None, None]:
    """K-way merge of the sorted runs, yielding sorted pieces of any size."""
    runs = [_Run(p) for p in paths]
    batch = max(1, run_rows // len(runs))
    done = nrows
    while True:
        for run in runs:
            run.top_up(batch)
        live = [i for i, run in enumerate(runs) if run.buffered]
        if not live:
            return
        bound = _bound_run(runs)
        counts: dict[int, int] = {}
        if bound is None:
            counts = {i: runs[i].buffered for i in live}
        else:
            value = runs[bound].buf_values[-1:]
            for i in live:
                if i == bound:
                    counts[i] = runs[i].buffered
                else:
                    # Lower runs hold lower rows: their pairs equal in value come first.
                    side: Literal["left", "right"] = "right" if i < bound else "left"
                    counts[i] = int(np.searchsorted(runs[i].buf_values, value, side=side)[0])
        parts = [runs[i].take(counts[i]) for i in live if counts[i]]
        values = np.concatenate([p[0] for p in parts])
        rows = np.concatenate([p[1] for p in parts])
        if len(parts) > 1:
            order = np.argsort(values, kind="stable")
            values, rows = values[order], rows[order]
        done += len(values)
        report(done)
        yield values, rows


def _repiece(pieces: Iterator[Piece], piece_rows: int) -> Iterator[Piece]:
    """Regroup pieces of any size into pieces of exactly ``piece_rows`` (the last: less)."""
    held_values: list[AnyArray] = []
    held_rows: list[AnyArray] = []
    held = 0
    for values, rows in pieces:
        held_values.append(values)
        held_rows.append(rows)
        held += len(values)
        if held < piece_rows:
            continue
        all_values = np.concatenate(held_values)
        all_rows = np.concatenate(held_rows)
        full = held - held % piece_rows
        for start in range(0, full, piece_rows):
            yield all_values[start:start + piece_rows], all_rows[start:start + piece_rows]
        held_values, held_rows = [all_values[full:]], [all_rows[full:]]
        held = held - full
    if held:
        yield np.concatenate(held_values), np.concatenate(held_rows)


def keysort(keys: AnyArray, values: AnyArray) -> None:
    """Sort ``keys`` in place, and reorder ``values`` (same length) in place with them
    (PyTables' ``indexesextension.keysort``).  Equal keys keep the order NumPy's default
    ``argsort`` gives them.

    Raises
    ------
    ValueError
        If the arrays differ in length or are not one-dimensional.

    Examples
    --------
    >>> keys, values = np.array([3, 1, 2]), np.array([30, 10, 20])
    >>> keysort(keys, values); keys.tolist(), values.tolist()
    ([1, 2, 3], [10, 20, 30])
    """
    if keys.ndim != 1 or values.shape != keys.shape:
        raise ValueError(f"keysort needs two 1-D arrays of one length, not of shapes "
                         f"{keys.shape} and {values.shape}")
    order = np.argsort(keys)
    keys[...] = keys[order]
    values[...] = values[order]


__all__ = [
    "DEFAULT_PIECE_ROWS",
    "DEFAULT_RUN_BYTES",
    "DEFAULT_RUN_ROWS",
    "keysort",
    "progress_total",
    "run_rows_for",
    "sorted_pieces",
    "stable_argsort",
]
