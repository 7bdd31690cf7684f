"""In-kernel queries on tables: ``where``, ``read_where``, ``get_where_list``, ``append_where``.

``Table`` methods delegate here (``queries.where(self, ..., depth=1)``).  Every function
validates the range and the condition before it reads a row, then scans the table with
``table._map_blocks``: chunk-aligned blocks are read, evaluated with numexpr over the
needed column views only and reduced to their matches in the table's pool threads, one
block per thread, with buffers each thread reuses.  Rows are built for matching records
only, and results are gathered into a growing output buffer.  Where indexes answer the
condition, only their candidate rows are read (:mod:`hyperslab.compute.indexing.search`), and on a
read-only file the rows matched are kept for the next run of the same query
(:mod:`hyperslab.compute.indexing.matchcache`).

The table protocol used here: ``colinstances``, ``nrows``, ``dtype``, ``path``, ``_v_file``
(its ``_check_writable()`` and ``mode``),
``_map_blocks(start, stop, step, work, parallel_context)``,
``_written_runs(start, stop)`` (runs of written rows and the fill value's record, or None)
and
``_iter_blocks(start, stop, step, fields)`` (called with a positive step only),
``_rows_at(blocks)``, ``_append_records(records)`` and
``_default_record()`` (``append_where`` between tables of different dtypes) and
``flush()``.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from hyperslab.chunked.allocation import check_result_size, format_bytes, machine_memory
from hyperslab.compute.conditions import (
    BoundCondition,
    bind_condition,
    caller_namespace,
    field_of,
    resolve_operands,
    serial_numexpr,
)
from hyperslab.compute.indexing import search as indexed
from hyperslab.compute.indexing.idxexprs import IndexedCondition, index_expressions
from hyperslab.compute.indexing.matchcache import MatchCache, match_cache

__all__ = [
    "IndexedCondition",
    "append_where",
    "compile_indexed_condition",
    "get_where_list",
    "query_range",
    "read_where",
    "read_where_rows",
    "required_expr_vars",
    "where",
    "will_query_use_indexing",
]

Result = TypeVar("Result")

_APPEND_BATCH_ROWS = 1 << 16
"""Rows gathered before append_where hands them to the destination table."""

BOUND_SLOTS = 64
"""Bound conditions kept per table (see :func:`_bind`)."""

_bound_lock = threading.Lock()


def query_range(
    nrows: int,
    start: int | None,
    stop: int | None,
    step: int | None,
    *,
    allow_negative_step: bool = False,
) -> tuple[int, int, int]:
    """Normalize a query range as PyTables' queries do.

    Parameters
    ----------
    nrows : int
        Rows in the table.
    start, stop, step : int or None
        As in a Python slice, except that a ``start`` given alone selects the single row
        ``start`` (all rows from ``start`` when it is ``-1``), as PyTables' ``read``.
    allow_negative_step : bool
        Queries refuse a negative step; ``append_where`` without a condition accepts it.

    Returns
    -------
    tuple of int
        ``(start, stop, step)`` as from ``slice.indices``.

    Raises
    ------
    IndexError
        If ``start`` alone is past the last row.
    ValueError
        If ``step`` is zero, or negative when not allowed.
    """
    if start is not None and stop is None and step is None:
        if 0 < nrows <= start:
            raise IndexError(f"start of range ({start}) is greater than number of rows "
                             f"({nrows})")
        step = 1
        stop = nrows if start == -1 else start + 1
    if step is not None and step < 0 and not allow_negative_step:
        raise ValueError(f"slice step cannot be negative (got step={step})")
    return slice(start, stop, step).indices(int(nrows))


Rows = range | np.ndarray
"""The row numbers of a block: a range (scans) or sorted int64 coordinates (indexes)."""

Collect = Callable[[Rows, np.ndarray, np.ndarray], Result]
"""What a query keeps of a block with matches: ``collect(rows, records, mask)``."""


def _scan(
    table: Any, bound: BoundCondition, start: int, stop: int, step: int,
    collect: Collect[Result], at_least: Callable[[int], None] | None = None,
) -> tuple[Iterator[Result], int]:
    """``collect(rows, records, mask)`` for each block with a match, and the number of
    rows the query examines.  ``at_least(n)`` is told, before any row is read, when at
    least ``n`` rows are known to match (the fill value of chunks never written matches:
    a caller gathering them all refuses a result no memory holds).

    Where indexes can answer part of the condition
    (:func:`hyperslab.compute.indexing.search.candidate_batches`), only their candidate rows are
    read and the whole condition is evaluated on them; otherwise the range is scanned.
    Scanned blocks are read and evaluated in the table's pool threads (numexpr
    single-threaded in each, see :func:`serial_numexpr`).  Either way the results come in
    row order.  ``collect`` must return new objects: ``records`` and ``mask`` may be
    buffers reused for the next block.
    """
    if start >= stop:
        return iter(()), 0
    cache = match_cache(table)
    key = (bound.key, start, stop, step)
    known = None if cache is None else cache.get(key)
    if known is not None:  # the same indexed query, already run on this read-only table
        return _read_known(table, known, collect), len(known)
    candidates = indexed.candidate_batches(table, bound, start, stop, step)
    if candidates is not None:
        batches, examined = candidates
        keep = None if cache is None else (cache, key)
        return _collected(bound, batches, collect, keep), examined
    masks = threading.local()

    def work(first: int, records: np.ndarray) -> Result | None:
        count = len(records)
        mask = getattr(masks, "buffer", None)
        if mask is None or len(mask) < count:
            mask = masks.buffer = np.empty(count, dtype=bool)
        mask = bound.evaluate(records, out=mask[:count])
        if not mask.any():
            return None
        return collect(range(first, first + count * step, step), records, mask)

    runs, filled = _unfilled_runs(table, bound, start, stop, step)
    if filled and at_least is not None:
        at_least(filled)  # that many rows read as the fill value, which matches
    if runs is None:
        results = table._map_blocks(start, stop, step, work, serial_numexpr)
    else:  # the rows outside the runs are the fill value, and it does not match
        results = itertools.chain.from_iterable(
            table._map_blocks(lo + (start - lo) % step, hi, step, work, serial_numexpr)
            for lo, hi in runs)
    return (result for result in results if result is not None), len(range(start, stop, step))


def _unfilled_runs(table: Any, bound: BoundCondition, start: int, stop: int,
                   step: int) -> tuple[list[tuple[int, int]] | None, int]:
    """The runs of written rows to scan instead of ``start:stop:step``, when most of its
    chunks were never written (their rows read as the fill value) and the fill value does
    not fulfil the condition (None to scan it all); and how many rows of the fill value
    match when it does (0 otherwise)."""
    written = table._written_runs(start, stop)
    if written is None:
        return None, 0
    runs, fill = written
    if not bool(bound.evaluate(fill)[0]):
        return runs, 0
    inside = sum(len(range(lo + (start - lo) % step, hi, step)) for lo, hi in runs)
    return None, len(range(start, stop, step)) - inside


def _collected(bound: BoundCondition, batches: Iterator[tuple[np.ndarray, np.ndarray]],
               collect: Collect[Result],
               keep: tuple[MatchCache, Any] | None = None) -> Iterator[Result]:
    """``collect`` for each batch of candidates with a match.  With ``keep``, a match
    cache and a query key, the row numbers matched are kept there once every batch has
    been evaluated (not if the caller stops early, nor if they are more than the cache
    keeps for one query: then they are not gathered either)."""
    matched: list[np.ndarray] | None = None if keep is None else []
    limit = 0 if keep is None else keep[0].entry_limit
    count = 0
    for rows, records in batches:
        mask = bound.evaluate_here(records)
        if mask.any():
            if matched is not None:
                found = rows[mask]
                count += len(found)
                if count > limit:
                    matched = None  # too many to keep: stop gathering them
                else:
                    matched.append(found)
            yield collect(rows, records, mask)
    if keep is not None and matched is not None:
        cache, key = keep
        cache.put(key, np.concatenate(matched) if matched else np.empty(0, dtype=np.int64))


def _read_known(table: Any, rows: np.ndarray, collect: Collect[Result]) -> Iterator[Result]:
    """``collect`` for each batch of ``rows``, rows known to match (every mask is true)."""
    for part, records in indexed.read_batches(table._ready(), rows):
        yield collect(part, records, np.ones(len(part), dtype=bool))


def _coordinates(rows: Rows, positions: np.ndarray) -> np.ndarray:
    """Row numbers of the records at ``positions`` of a block of ``rows``."""
    if isinstance(rows, range):
        if rows.step != 1:
            positions = positions * rows.step
        return (positions + rows.start).astype(np.int64, copy=False)
    return rows[positions]


def _matches(
    table: Any, bound: BoundCondition, start: int, stop: int, step: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(coordinates, records)`` of the matching rows (gathered copies), by block."""

    def collect(rows: Rows, records: np.ndarray,
                mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        positions = np.flatnonzero(mask)
        return _coordinates(rows, positions), records[positions]

    return _scan(table, bound, start, stop, step, collect)[0]


def _prepare(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None,
    namespace: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
    start: int | None,
    stop: int | None,
    step: int | None,
) -> tuple[BoundCondition, tuple[int, int, int]]:
    window = query_range(table.nrows, start, stop, step)
    return _bind(table, condition, condvars, namespace), window


def _bind(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None,
    namespace: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
) -> BoundCondition:
    """:func:`bind_condition`, remembered per table for explicit condition variables that
    are all hashable (the values of a query repeated with the same limits bind once: the
    binding is a tenth of a one-row indexed query).  Variables looked up in the caller's
    frame, and unhashable ones (arrays), are bound every time."""
    if condvars is None:
        return bind_condition(table, condition, condvars, namespace)
    try:
        key = (condition, frozenset((name, type(value), value)
                                    for name, value in condvars.items()))
        hash(key)
    except TypeError:
        return bind_condition(table, condition, condvars, namespace)
    # Kept on the table object: they live and die with it (a bound condition refers to
    # the table's columns, so a cache outside would keep closed tables alive).
    with _bound_lock:
        kept: OrderedDict[Any, BoundCondition] | None = getattr(
            table, "_bound_conditions", None)
        found = None if kept is None else kept.get(key)
        if found is not None:
            kept.move_to_end(key)  # type: ignore[union-attr]
            return found
    bound = bind_condition(table, condition, condvars, namespace)
    with _bound_lock:
        kept = getattr(table, "_bound_conditions", None)
        if kept is None:
            kept = OrderedDict()
            table._bound_conditions = kept
        kept[key] = bound
        while len(kept) > BOUND_SLOTS:
            kept.popitem(last=False)
    return bound


def where(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None = None,
    start: int | None = None,
    stop: int | None = None,
    step: int | None = None,
    *,
    depth: int,
) -> Iterator[Any]:
    """Iterate over the Rows of ``table`` that satisfy ``condition`` (``Table.where``).

    The range and the condition are checked when this function is called, not when the
    iteration starts.

    Parameters
    ----------
    table : Table
        The table queried.
    condition : str
        A numexpr expression over column names and variables, e.g.
        ``'(col1 > 0) & (col2 <= lim)'``.
    condvars : Mapping, optional
        Variables of the condition; when omitted, names that are not top-level columns
        are taken from the caller's frame.
    start, stop, step : int, optional
        The range of rows considered, as in ``Table.read``; ``step`` must be positive.
    depth : int
        Frames between the caller of this function and the code whose variables are used
        (``Table.where`` passes 1).

    Returns
    -------
    Iterator[Row]
        A Row per matching row, in increasing row order.
    """
    namespace = None if condvars is not None else caller_namespace(depth)
    bound, (start_, stop_, step_) = _prepare(table, condition, condvars, namespace,
                                             start, stop, step)
    return iter(table._rows_at(_matches(table, bound, start_, stop_, step_)))


class _Gatherer:
    """A growing output array that the selected items of each block are written into.

    The capacity is extrapolated from the selectivity seen so far, so that the output is
    allocated once or twice in most queries, and never over the rows scanned.
    """

    def __init__(self, dtype: np.dtype[Any], total: int) -> None:
        self.dtype = dtype
        self.total = total  # rows the query scans
        self.buffer = np.empty(0, dtype=dtype)
        self.size = 0
        self.seen = 0

    def reserve(self, count: int, scanned: int) -> np.ndarray:
        """Room for ``count`` items selected out of ``scanned`` rows; the caller fills it."""
        self.seen += scanned
        needed = self.size + count
        if needed > len(self.buffer):
            estimate = needed * self.total // max(self.seen, 1)
            # An extrapolation past a fraction of the memory is not trusted (a few hits
            # early in a huge, maybe damaged, extent): the buffer then only doubles.
            trusted = max(needed, machine_memory() // 8 // max(1, self.dtype.itemsize))
            capacity = min(max(needed, 2 * len(self.buffer),
                               min(estimate + estimate // 8, trusted)),
                           max(self.total, needed))
            grown = np.empty(capacity, dtype=self.dtype)
            grown[: self.size] = self.buffer[: self.size]
            self.buffer = grown
        target = self.buffer[self.size : needed]
        self.size = needed
        return target

    def result(self) -> np.ndarray:
        """The items gathered, trimmed (copied if most of the buffer is unused)."""
        if self.size * 2 < len(self.buffer) or self.size == 0:
            return self.buffer[: self.size].copy()
        return self.buffer[: self.size]


def _gathered(
    table: Any, bound: BoundCondition, window: tuple[int, int, int], dtype: np.dtype[Any],
    collect: Collect[tuple[np.ndarray, int]],
) -> np.ndarray:
    """The items ``collect`` keeps of every block, as one array (``collect`` returns the
    items and the number of rows of its block)."""
    start, stop, step = window

    def at_least(count: int) -> None:
        what = f"the rows of {table._v_pathname} that fulfil the condition"
        check_result_size((count,), dtype.itemsize, what)
        # Rows of chunks never written (the fill value, which matches): a result mostly
        # made of them is refused past an eighth of the memory, the bound the gatherer
        # trusts (a damaged extent of 2**31 rows would otherwise be gathered for minutes).
        if count * dtype.itemsize > machine_memory() // 8:
            raise MemoryError(
                f"at least {count} rows of {table._v_pathname} that were never written "
                f"(their fill value) fulfil the condition: gathering them needs "
                f"{format_bytes(count * dtype.itemsize)}, more than an eighth of this "
                f"machine's memory; iterate over where() instead")

    results, examined = _scan(table, bound, start, stop, step, collect, at_least)
    gatherer = _Gatherer(dtype, examined)
    for found, scanned in results:
        gatherer.reserve(len(found), scanned)[...] = found
    return gatherer.result()


def _field_dtype(dtype: np.dtype[Any], path: str) -> np.dtype[Any]:
    for part in path.split("/"):
        if dtype.names is None or part not in dtype.names:
            raise KeyError(path)
        dtype = dtype.fields[part][0]  # type: ignore[index]
    return dtype


def _selected(start: int, stop: int, step: int) -> int:
    return len(range(start, stop, step))


def read_where(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None = None,
    field: str | None = None,
    start: int | None = None,
    stop: int | None = None,
    step: int | None = None,
    *,
    depth: int,
) -> np.ndarray:
    """Read the rows of ``table`` that satisfy ``condition`` (``Table.read_where``).

    Parameters
    ----------
    table, condition, condvars, start, stop, step, depth
        As in :func:`where`.
    field : str, optional
        Return only this column (a pathname such as ``'col2'`` or ``'nested/x'``).

    Returns
    -------
    numpy.ndarray
        The matching records (the table's record dtype) or the values of ``field``.

    Raises
    ------
    KeyError
        If ``field`` is not a column of the table.
    """
    namespace = None if condvars is not None else caller_namespace(depth)
    if field is not None and field not in table.colinstances:
        raise KeyError(f"table ``{table.path}`` does not have a column named ``{field}``")
    bound, (start_, stop_, step_) = _prepare(table, condition, condvars, namespace,
                                             start, stop, step)
    dtype = table.dtype if field is None else _field_dtype(table.dtype, field)

    def collect(rows: Rows, records: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
        source = records if field is None else field_of(records, field)
        return np.compress(mask, source, axis=0), len(records)

    return _gathered(table, bound, (start_, stop_, step_), dtype, collect)


def read_where_rows(
    table: Any, condition: str, condvars: Mapping[str, Any], start: int, stop: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The row numbers (int64) and records of the rows ``start:stop`` of ``table`` that
    satisfy ``condition`` (variables: columns and ``condvars``, never a caller's frame), in
    one pass: what a dask partition of a filtered table holds."""
    bound, (start_, stop_, step_) = _prepare(table, condition, condvars, None, start, stop,
                                             None)
    coords: list[np.ndarray] = []
    records: list[np.ndarray] = []
    for found_rows, found in _matches(table, bound, start_, stop_, step_):
        coords.append(found_rows)
        records.append(found)
    if not coords:
        return np.zeros(0, np.int64), np.zeros(0, table.dtype)
    return np.concatenate(coords), np.concatenate(records)


def get_where_list(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None = None,
    sort: bool = False,
    start: int | None = None,
    stop: int | None = None,
    step: int | None = None,
    *,
    depth: int,
) -> np.ndarray:
    """Coordinates of the rows of ``table`` that satisfy ``condition``.

    Parameters
    ----------
    table, condition, condvars, start, stop, step, depth
        As in :func:`where`.
    sort : bool
        Return the coordinates sorted (they always are: rows are scanned in order).

    Returns
    -------
    numpy.ndarray
        ``int64`` row coordinates.
    """
    namespace = None if condvars is not None else caller_namespace(depth)
    bound, (start_, stop_, step_) = _prepare(table, condition, condvars, namespace,
                                             start, stop, step)

    def collect(rows: Rows, records: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
        return _coordinates(rows, np.flatnonzero(mask)), len(records)

    result = _gathered(table, bound, (start_, stop_, step_), np.dtype(np.int64), collect)
    if sort:
        result.sort()
    return result


def _leaf_paths(dtype: np.dtype[Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for name in dtype.names or ():
        sub = dtype.fields[name][0]  # type: ignore[index]
        path = f"{prefix}{name}"
        if sub.names is not None:
            paths.extend(_leaf_paths(sub, path + "/"))
        else:
            paths.append(path)
    return paths


def _converter(table: Any, dest_table: Any) -> Any:
    """A function turning records of ``table`` into records of ``dest_table``.

    Columns are copied by pathname, as PyTables does; columns only the destination has
    get their defaults.  Raises ``KeyError`` (before anything is appended) if the
    destination lacks a column of the source.
    """
    src_dtype, dst_dtype = table.dtype, dest_table.dtype
    if src_dtype == dst_dtype:
        return lambda records: records
    paths = _leaf_paths(src_dtype)
    dst_paths = set(_leaf_paths(dst_dtype))
    for path in paths:
        if path not in dst_paths:
            raise KeyError(f"table ``{dest_table.path}`` does not have a column named "
                           f"``{path}`` (needed to append rows of ``{table.path}``)")
    fill = dest_table._default_record()

    def convert(records: np.ndarray) -> np.ndarray:
        out = np.empty(len(records), dtype=dst_dtype)
        out[...] = fill
        for path in paths:
            field_of(out, path)[...] = field_of(records, path)
        return out

    return convert


def _source_batches(
    table: Any,
    bound: BoundCondition | None,
    window: tuple[int, int, int],
) -> Iterator[np.ndarray]:
    start, stop, step = window
    if bound is not None:
        for _, records in _matches(table, bound, start, stop, step):
            yield records
        return
    indices = range(start, stop, step)
    if len(indices) == 0:
        return
    if step < 0:  # read forwards, hand back each block reversed, last block first
        forward = indices[::-1]
        blocks = [records.copy() for _, records in
                  table._iter_blocks(forward.start, forward.stop, forward.step, None)]
        for records in reversed(blocks):
            yield records[::-1]
        return
    for _, records in table._iter_blocks(start, stop, step, None):
        yield records.copy()


def append_where(
    table: Any,
    dest_table: Any,
    condition: str | None,
    condvars: Mapping[str, Any] | None = None,
    start: int | None = None,
    stop: int | None = None,
    step: int | None = None,
    *,
    depth: int,
) -> int:
    """Append the rows of ``table`` satisfying ``condition`` to ``dest_table``.

    Parameters
    ----------
    table, condition, condvars, start, stop, step, depth
        As in :func:`where`; a ``condition`` of ``None`` appends every row of the range
        (a negative ``step`` is then allowed).
    dest_table : Table
        The destination: it must have every column of ``table`` (by pathname); values
        are converted to its column types, and its extra columns take their defaults.

    Returns
    -------
    int
        The number of rows appended.
    """
    namespace = None if condvars is not None or condition is None else caller_namespace(depth)
    dest_table._v_file._check_writable()
    if condition is None:
        window = query_range(table.nrows, start, stop, step, allow_negative_step=True)
        bound = None
    else:
        bound, window = _prepare(table, condition, condvars, namespace, start, stop, step)
    convert = _converter(table, dest_table)
    same = dest_table is table or (dest_table._v_file is table._v_file
                                   and dest_table.path == table.path)
    pending: list[np.ndarray] = []
    pending_rows = appended = 0
    for batch in _source_batches(table, bound, window):
        pending.append(batch)
        pending_rows += len(batch)
        if not same and pending_rows >= _APPEND_BATCH_ROWS:
            dest_table._append_records(convert(np.concatenate(pending)))
            appended += pending_rows
            pending, pending_rows = [], 0
    if pending_rows:
        dest_table._append_records(convert(np.concatenate(pending)))
        appended += pending_rows
    dest_table.flush()
    return appended


def will_query_use_indexing(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None = None,
    *,
    depth: int,
) -> frozenset[str]:
    """Pathnames of the indexed columns a query with ``condition`` would use.

    The condition is checked as by :func:`where`.  Only clean indexes count (a dirty one,
    or one behind the table's rows with ``autoindex`` off, is not used).
    """
    namespace = None if condvars is not None else caller_namespace(depth)
    bound = bind_condition(table, condition, condvars, namespace)
    return indexed.used_columns(table, bound)


def required_expr_vars(
    table: Any, condition: str, condvars: Mapping[str, Any] | None, *, depth: int
) -> dict[str, Any]:
    """What each name of ``condition`` refers to (PyTables' ``Table._required_expr_vars``):
    column objects and 0-d arrays, looked up and checked as :func:`where` does."""
    namespace = None if condvars is not None else caller_namespace(depth)
    return resolve_operands(table, condition, condvars, namespace)


def compile_indexed_condition(
    table: Any, condition: str, condvars: Mapping[str, Any]
) -> IndexedCondition:
    """``condition`` compiled, with the part the table's usable indexes can answer in
    PyTables' form (``Table._compile_condition``; see
    :mod:`hyperslab.compute.indexing.idxexprs`).  ``condvars`` is what
    :func:`required_expr_vars` returned."""
    bound = bind_condition(table, condition, condvars, None)
    usable = table._usable_indexes(bound.columns)
    operands = bound.operands

    def has_index(name: str) -> bool:
        return getattr(operands.get(name), "pathname", None) in usable

    exprs, text = index_expressions(condition, operands, has_index)
    compiled = bound.compiled
    return IndexedCondition(compiled.program(), list(compiled.parameters), exprs, text)
