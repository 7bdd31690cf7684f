"""Indexed queries: the candidate rows of a condition, found with column indexes.

:func:`hyperslab.compute.indexing.plan.plan_condition` says which part of a condition the
table's clean indexes can answer: value intervals of indexed columns, combined with ``&``
and ``|``.  Here each interval becomes runs of entries of its column's index (found by
binary search in each slice of the index whose range meets the interval, reading one chunk
per bound) and the rows they locate: the rows themselves for full indexes, every row of
their buckets for the lighter kinds; the rows are united and intersected as the plan says,
giving the *candidate* rows, a superset of the matching ones in row order.  The query then
reads only those rows and evaluates the whole condition on them, so the rows an index
gives never need to be exact and results are those of a scan, in the same order.

Where the candidates are a large share of the rows (:data:`SCAN_SHARE`, counted from the
index positions before any row number is read) and spread over most of the chunks
(:data:`SCAN_CHUNK_SHARE`), reading them costs more than scanning every row in parallel: the
query scans instead.  Candidates clustered in a few chunks (a table sorted by the column)
are read however many they are.  Where the rows examined lie in fewer chunks than
``1 / SCAN_CHUNK_SHARE`` (a small table, often a single chunk), any candidate's chunk is
"most of the chunks": the candidates are then read unless they are more than
:data:`FEW_CHUNKS_SCAN_SHARE` of the rows.

An ``&`` intersects its parts' candidates, the smallest part first; a part with more than
:data:`INTERSECT_SHARE` of the rows indexed and :data:`INTERSECT_RATIO` times the candidates
already found is left out: it would remove few of them (a bucketed index's candidates for a
quarter of the values of a column out of order are usually every row) for the price of
reading and sorting all its entries, and the condition is evaluated on every candidate
anyway.

Plans are cached (:data:`PLAN_CACHE_SLOTS`) by condition, operand types and values and the
set of indexed columns, so a repeated query plans once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from hyperslab.compute.conditions import BoundCondition
from hyperslab.compute.indexing.plan import And, IndexPlan, Or, PlanNode, ValueSet, plan_condition
from hyperslab.nodes.indexes.store import sorted_unique

__all__ = ["FEW_CHUNKS_SCAN_SHARE", "INTERSECT_RATIO", "INTERSECT_SHARE", "PLAN_CACHE_SLOTS",
           "SCAN_CHUNK_SHARE", "SCAN_SHARE", "candidate_batches", "candidate_rows",
           "read_batches", "used_columns"]

SCAN_SHARE = 0.02
"""Up to this share of the rows examined, candidates are always read through the index
(measured on 10M-row tables: 1% of the rows read through the index beat the parallel scan
by 1.4-2x, 10% spread over every chunk lost by 1.5-3x)."""

SCAN_CHUNK_SHARE = 0.25
"""Above :data:`SCAN_SHARE`, candidates are read only if they lie in at most this share of
the chunks examined; else the query scans."""

FEW_CHUNKS_SCAN_SHARE = 0.25
"""Up to this share of the rows examined, candidates in fewer than ``1 / SCAN_CHUNK_SHARE``
chunks are read through the index (measured on a 20,000-row table of one chunk, warm, the
matches not kept: 5% of the rows scattered over it read in 150-190 us instead of the scan's
330-600, 20% in 240 instead of 270 (unfiltered) or 630 (Blosc2), 50% in 460 instead of
275 (unfiltered) and 370 instead of 600 (Blosc2, its decoded blocks kept))."""

INTERSECT_SHARE = 0.25
"""An ``&`` part with more entries than this share of the rows indexed (and see
:data:`INTERSECT_RATIO`) is not intersected with the candidates of the smaller parts."""

INTERSECT_RATIO = 16
"""An ``&`` part with more entries than this many times the candidates found so far (and
see :data:`INTERSECT_SHARE`) is not intersected with them."""

PLAN_CACHE_SLOTS = 256
"""Plans kept by :func:`_plan`."""

_plans: OrderedDict[Any, IndexPlan | None] = OrderedDict()
_plans_lock = threading.Lock()

_BATCH_BYTES = 8 << 20
"""Bytes of candidate records read and evaluated at a time."""

_SPAN_ROWS = 4096
"""Runs of at least this many candidate rows are read as one span (whole chunks decoded in
parallel); shorter ones row by row (only their blocks decoded)."""

_SAMPLE_ROWS = 8192
"""Candidates (the first of the largest run, in value order) whose chunks tell whether the
candidates are spread over the table before all of them are read."""

Runs = list[tuple[int, int, int]]


def _plan(table: Any, bound: BoundCondition) -> tuple[IndexPlan, Mapping[str, Any]] | None:
    indexes = table._usable_indexes(bound.columns)  # only the condition's columns
    if not indexes:
        return None
    key = (bound.key, frozenset(indexes))
    with _plans_lock:
        known = key in _plans
        plan = _plans[key] if known else None
        if known:
            _plans.move_to_end(key)
    if not known:
        plan = plan_condition(bound.compiled.condition, bound.operands,
                              indexes.__contains__)
        with _plans_lock:
            _plans[key] = plan
            while len(_plans) > PLAN_CACHE_SLOTS:
                _plans.popitem(last=False)
    return None if plan is None else (plan, indexes)


def used_columns(table: Any, bound: BoundCondition) -> frozenset[str]:
    """The indexed columns a query with ``bound`` would use (``will_query_use_indexing``)."""
    planned = _plan(table, bound)
    return frozenset() if planned is None else planned[0].columns


def _runs(value_set: ValueSet, index: Any, memo: dict[int, Runs] | None = None) -> Runs:
    """The runs of index entries of a value set (kept in ``memo`` for the rest of the
    query)."""
    if memo is not None and id(value_set) in memo:
        return memo[id(value_set)]
    runs = []
    for interval in value_set.intervals:
        runs.extend(index.search(interval.lo, interval.lo_inclusive, interval.hi,
                                 interval.hi_inclusive))
    if value_set.nan:
        runs.extend(index.nan_runs())
    if memo is not None:
        memo[id(value_set)] = runs
    return runs


def _count(node: PlanNode, indexes: Mapping[str, Any], memo: dict[int, Runs]) -> int:
    """An estimate of the candidates of ``node`` (from index positions only)."""
    if isinstance(node, ValueSet):
        index = indexes[node.column]
        return int(index.entries(_runs(node, index, memo)))
    counts = [_count(part, indexes, memo) for part in node.parts]
    return min(counts) if isinstance(node, And) else sum(counts)


def candidate_rows(node: PlanNode, indexes: Mapping[str, Any],
                   memo: dict[int, Runs] | None = None) -> np.ndarray:
    """The sorted, unique int64 row numbers a plan node gives (``memo``: the runs already
    found in this query)."""
    memo = {} if memo is None else memo
    if isinstance(node, ValueSet):
        index = indexes[node.column]
        return index.candidate_rows(_runs(node, index, memo))
    if isinstance(node, And):
        # The smallest part first: every intersection is then at most that big.
        counts = sorted((_count(part, indexes, memo), number)
                        for number, part in enumerate(node.parts))
        rows = candidate_rows(node.parts[counts[0][1]], indexes, memo)
        indexed = min(index.nelements for index in indexes.values())
        for count, number in counts[1:]:
            if len(rows) == 0 or count > max(INTERSECT_SHARE * indexed,
                                              INTERSECT_RATIO * len(rows)):
                break  # this part (and the larger ones after it) would remove few rows
            rows = np.intersect1d(rows, candidate_rows(node.parts[number], indexes, memo),
                                  assume_unique=True)
        return rows
    assert isinstance(node, Or)
    parts = [candidate_rows(part, indexes, memo) for part in node.parts]
    return sorted_unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)


def _largest_run(node: PlanNode, indexes: Mapping[str, Any],
                 memo: dict[int, Runs]) -> tuple[Any, tuple[int, int, int]] | None:
    """The largest run of index entries (index, run) of the value sets of ``node``."""
    best: tuple[Any, tuple[int, int, int]] | None = None
    if isinstance(node, ValueSet):
        index = indexes[node.column]
        for run in _runs(node, index, memo):
            if best is None or run[2] - run[1] > best[1][2] - best[1][1]:
                best = (index, run)
        return best
    for part in node.parts:
        found = _largest_run(part, indexes, memo)
        if found is not None and (best is None
                                  or found[1][2] - found[1][1] > best[1][2] - best[1][1]):
            best = found
    return best


def _spread(node: PlanNode, indexes: Mapping[str, Any], chunkrows: int, chunks: int,
            memo: dict[int, Runs]) -> bool:
    """Whether a sample of the candidates already lies in more than
    :data:`SCAN_CHUNK_SHARE` of the ``chunks`` examined (reads one chunk of entries)."""
    found = _largest_run(node, indexes, memo)
    if found is None:
        return False
    index, run = found
    sample = index.candidate_rows([run], limit=_SAMPLE_ROWS)
    return len(sorted_unique(sample // chunkrows)) > SCAN_CHUNK_SHARE * chunks


def _in_window(rows: np.ndarray, start: int, stop: int, step: int) -> np.ndarray:
    if not len(rows) or (step == 1 and rows[0] >= start and rows[-1] < stop):
        return rows  # sorted rows all inside a window of every row: nothing to drop
    keep = (rows >= start) & (rows < stop)
    if step != 1:
        keep &= (rows - start) % step == 0
    return rows[keep]


def candidate_batches(
    table: Any, bound: BoundCondition, start: int, stop: int, step: int
) -> tuple[Iterator[tuple[np.ndarray, np.ndarray]], int] | None:
    """The candidate rows of a query in ``range(start, stop, step)`` (``step`` > 0), in
    row order, as ``(rows, records)`` batches, and how many there are; None when no index
    applies or scanning is cheaper (see the module docstring)."""
    planned = _plan(table, bound)
    if planned is None:
        return None
    plan, indexes = planned
    io = table._ready()
    with table._shared():  # the indexes cannot change while they are read
        if not all(index.current for index in indexes.values()):
            return None  # changed by another thread since they were chosen: scan
        rows = _candidates(plan, indexes, io.chunkrows, start, stop, step)
    return None if rows is None else (read_batches(io, rows), len(rows))


def _candidates(plan: IndexPlan, indexes: Mapping[str, Any], chunkrows: int, start: int,
                stop: int, step: int) -> np.ndarray | None:
    """The candidate rows of ``plan`` in ``range(start, stop, step)``; None when scanning
    is cheaper."""
    examined = len(range(start, stop, step))
    chunks = (stop - 1) // chunkrows - start // chunkrows + 1
    memo: dict[int, Runs] = {}
    if chunks * SCAN_CHUNK_SHARE < 1:  # where in so few chunks they lie tells nothing
        return _few_chunks_candidates(plan, indexes, memo, start, stop, step)
    many = _count(plan.node, indexes, memo) > SCAN_SHARE * examined * step
    if many and _spread(plan.node, indexes, chunkrows, chunks, memo):
        return None
    rows = _in_window(candidate_rows(plan.node, indexes, memo), start, stop, step)
    if many and len(rows) > SCAN_SHARE * examined and (
            len(sorted_unique(rows // chunkrows)) > SCAN_CHUNK_SHARE * chunks):
        return None
    return rows


def _few_chunks_candidates(plan: IndexPlan, indexes: Mapping[str, Any],
                           memo: dict[int, Runs], start: int, stop: int,
                           step: int) -> np.ndarray | None:
    """:func:`_candidates` where the rows examined lie in fewer than
    ``1 / SCAN_CHUNK_SHARE`` chunks: None (scan) above :data:`FEW_CHUNKS_SCAN_SHARE`."""
    examined = len(range(start, stop, step))
    if _count(plan.node, indexes, memo) > FEW_CHUNKS_SCAN_SHARE * examined * step:
        return None
    rows = _in_window(candidate_rows(plan.node, indexes, memo), start, stop, step)
    return None if len(rows) > FEW_CHUNKS_SCAN_SHARE * examined else rows


def read_batches(io: Any, rows: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, records)`` batches of the table rows ``rows`` (sorted, unique int64) read
    with ``io`` (a :class:`~hyperslab.nodes.tables.recordio.RecordIO`): runs of a sorted table as
    spans, others row by row."""
    batch = max(1, _BATCH_BYTES // max(1, io.dtype.itemsize))
    for begin in range(0, len(rows), batch):
        part = rows[begin : begin + batch]
        lo, hi = int(part[0]), int(part[-1]) + 1
        if hi - lo == len(part) >= _SPAN_ROWS:  # a run (sorted table): read the span
            yield part, io.read_span(lo, hi)
        else:
            yield part, io.read_points(part)
