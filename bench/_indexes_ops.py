"""What the rivals of the ``indexes`` benchmark (:mod:`bench.indexes`) do with their files.

Index, sort and query a table with hyperslab or PyTables (:func:`build_index`,
:func:`sort_table`, :func:`query_table`, :func:`index_check`), fill and query the SQLite
database (:func:`write_sqlite`, :func:`query_sqlite`), the checks of the results
(:func:`sorted_check`, :func:`probe_of`, :func:`expected_index`), the smoke test that
says which modes of a library work here (:func:`smoke_test`) and the runs of the
``create`` part, each one checked instead of an untimed run before (:func:`run_checked`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._queries_data import SEED, check_of, make_records
from bench._report import format_seconds
from bench.harness import (
    BenchmarkError,
    BenchmarkResult,
    BenchmarkSpec,
    Case,
    CheckMismatchError,
    Measurement,
    Rival,
    Timer,
    canonical,
    host_info,
    library_versions,
    run_in_fresh_process,
    run_in_this_process,
    select_rivals,
)
from bench.queries import MODULES, NODE, write_table

QUERY_COLUMN = "col4"
QUERY_INDEX = ("full", 9)
"""The index of the ``indexed`` and ``sorted`` modes (a CSI, as ``sortby`` wants)."""
CONDITION = "(lim1 <= col4) & (col4 < lim2)"
"""The query of the benchmark (and, on another column, of the index checks)."""
SQL = "SELECT col2 FROM t WHERE col4 >= ? AND col4 < ?"
"""The same query for SQLite."""
SQLITE_BLOCK = 100_000
"""Rows per ``executemany`` when filling the SQLite table."""
SORTED_NODE = "sorted"
"""The name of the sorted copy of the table, beside it."""
PROBE_FRACTION = 0.001
"""The share of the rows the checking query of an index selects."""
MODES = ("indexed", "in-kernel", "sorted")


def rival_name(library: str, mode: str, files_of: str = "") -> str:
    """The name of the rival ``library`` in ``mode``, querying the file ``files_of`` wrote
    (its own when empty): ``'hyperslab indexed'``, ``'hyperslab sorted (index by PyTables)'``.
    """
    name = library if mode == "create" else f"{library} {mode}"
    return f"{name} (index by {files_of})" if files_of else name
SMOKE_ROWS = 3000
SMOKE_CODECS = ("none", "blosc2:lz4")
"""The codecs of the smoke tests (the default ones of the benchmark)."""


# ----------------------------------------------------------------------------- checks


def sorted_check(values: Any) -> dict[str, int]:
    """The check of a query result as a multiset: :func:`bench.queries.check_of` of the
    sorted values (Int32)."""
    import numpy as np

    return check_of(np.sort(np.asarray(values, dtype=np.int32)))


def numpy_values(records: Any, column: str, limits: Mapping[str, float]) -> Any:
    """col2 of the rows with ``lim1 <= column < lim2``, by NumPy."""
    values = records[column]
    return records["col2"][(limits["lim1"] <= values) & (values < limits["lim2"])]


def probe_of(records: Any, column: str) -> dict[str, Any]:
    """The checking query of an index on ``column``: its condition, limits (about
    :data:`PROBE_FRACTION` of the rows, from the median) and NumPy's check."""
    import numpy as np

    lim1, lim2 = (float(q) for q in np.quantile(records[column], [0.5, 0.5 + PROBE_FRACTION]))
    limits = {"lim1": lim1, "lim2": lim2}
    return {
        "condition": CONDITION.replace(QUERY_COLUMN, column),
        "limits": limits,
        "expected": sorted_check(numpy_values(records, column, limits)),
    }


# ----------------------------------------------------------------------------- the libraries


def library_module(library: str) -> Any:
    """The module of ``library`` (``hyperslab`` or ``tables``)."""
    return importlib.import_module(MODULES[library])


def csi_known(kind: str, optlevel: int) -> bool:
    """Whether an index's ``is_csi`` is known from its kind and optlevel alone: True for
    full:9, False below full; PyTables' full indexes of lower optlevels are CSI or not
    depending on the data."""
    return kind != "full" or optlevel == 9


def index_check(library: str, path: str, column: str, probe: Mapping[str, Any]) -> dict:
    """Describe the index of ``column`` in the table of ``path`` (opened read-only): kind,
    optlevel, is_csi (None where :func:`csi_known` says it depends on the data), nelements,
    the columns ``will_query_use_indexing`` names for the probe condition, and the check
    of the probe query."""
    with library_module(library).open_file(path, mode="r") as f:
        table = f.get_node("/" + NODE)
        index = getattr(table.cols, column).index
        if index is None:
            raise BenchmarkError(f"{library}: {column} of {path} has no index")
        condition, limits = probe["condition"], probe["limits"]
        kind, optlevel = str(index.kind), int(index.optlevel)
        return {
            "column": column,
            "kind": kind,
            "optlevel": optlevel,
            "is_csi": bool(index.is_csi) if csi_known(kind, optlevel) else None,
            "nelements": int(index.nelements),
            "uses_index": sorted(table.will_query_use_indexing(condition, limits)),
            "query": sorted_check(table.read_where(condition, limits, field="col2")),
        }


def expected_index(column: str, kind: str, optlevel: int, nrows: int, probe: Mapping) -> dict:
    """What :func:`index_check` must return for a right index."""
    return {
        "column": column,
        "kind": kind,
        "optlevel": optlevel,
        "is_csi": (kind, optlevel) == ("full", 9) if csi_known(kind, optlevel) else None,
        "nelements": nrows,
        "uses_index": [column],
        "query": dict(probe["expected"]),
    }


def build_index(
    library: str, plain: str, path: str, column: str, kind: str, optlevel: int, timer: Timer
) -> None:
    """Copy ``plain`` to ``path`` (untimed) and index ``column`` of its table there; time
    ``create_index`` and the flush of the file."""
    shutil.copyfile(plain, path)
    with library_module(library).open_file(path, mode="a") as f:
        col = getattr(f.get_node("/" + NODE).cols, column)
        with timer:
            col.create_index(optlevel=optlevel, kind=kind)
            f.flush()


def sort_table(library: str, path: str, timer: Timer) -> None:
    """Add the copy of the table of ``path`` sorted by col4 (its CSI checked), with its
    indexes, as :data:`SORTED_NODE`; time the copy and the flush."""
    with library_module(library).open_file(path, mode="a") as f:
        table = f.get_node("/" + NODE)
        with timer:
            table.copy(newname=SORTED_NODE, sortby=QUERY_COLUMN, checkCSI=True, propindexes=True)
            f.flush()


PYTABLES_MATCHES_KEPT = 1024
"""PyTables' ``ITERSEQ_MAX_ELEMENTS``: the most matches of one indexed query its sequence
cache keeps (read from PyTables where installed)."""


def _pytables_matches_kept() -> int:
    try:
        from tables import parameters
    except ImportError:
        return PYTABLES_MATCHES_KEPT
    return int(parameters.ITERSEQ_MAX_ELEMENTS)


def _forget_compiled_conditions(library: str) -> None:
    """Drop what hyperslab keeps across files of the conditions it compiled (module-level
    caches), so that a cold query compiles again as PyTables' does (PyTables keeps its
    compiled conditions on the table object, gone with the file)."""
    if library != "hyperslab":
        return
    from hyperslab.compute import conditions

    for value in vars(conditions).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


@contextlib.contextmanager
def _match_cache_limit(library: str, cache: str) -> Iterator[None]:
    """For ``warm-equal``: hyperslab keeps at most as many matches per query as PyTables."""
    if library != "hyperslab" or cache != "warm-equal":
        yield
        return
    from hyperslab.compute.indexing import matchcache

    saved = matchcache.MATCH_ENTRY_ROWS
    matchcache.MATCH_ENTRY_ROWS = _pytables_matches_kept()
    try:
        yield
    finally:
        matchcache.MATCH_ENTRY_ROWS = saved


def query_table(
    library: str, path: str, node: str, limits: Mapping[str, float], cache: str, timer: Timer
) -> Any:
    """Run :data:`CONDITION` on the table ``node`` of ``path``, returning col2.

    ``cold`` times the opening and closing too (compiled conditions forgotten first);
    ``warm`` the second run of the query on the open file, each library keeping the
    matches of an indexed query as it does by default (hyperslab up to 65,536 rows per
    query, PyTables 1,024); ``warm-equal`` the same with hyperslab keeping no more than
    PyTables.
    """
    lib = library_module(library)
    if cache == "cold":
        _forget_compiled_conditions(library)
        with timer, lib.open_file(path, mode="r") as f:
            values = f.get_node("/" + node).read_where(CONDITION, limits, field="col2")
        return values
    with _match_cache_limit(library, cache), lib.open_file(path, mode="r") as f:
        table = f.get_node("/" + node)
        table.read_where(CONDITION, limits, field="col2")
        with timer:
            values = table.read_where(CONDITION, limits, field="col2")
    return values


def query_sqlite(path: str, limits: Mapping[str, float], cache: str, timer: Timer) -> Any:
    """Run :data:`SQL` on the database at ``path`` (read-only); return the col2 values.

    ``cold`` times connecting, the query (all rows fetched) and closing; ``warm`` the
    second query on the connection.
    """
    import numpy as np

    args = (limits["lim1"], limits["lim2"])
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    if cache == "cold":
        with timer:
            con = sqlite3.connect(uri, uri=True)
            try:
                rows = con.execute(SQL, args).fetchall()
            finally:
                con.close()
    else:
        con = sqlite3.connect(uri, uri=True)
        try:
            con.execute(SQL, args).fetchall()
            with timer:
                rows = con.execute(SQL, args).fetchall()
        finally:
            con.close()
    return np.fromiter((row[0] for row in rows), dtype=np.int32, count=len(rows))


def write_sqlite(path: str, records: Any) -> dict[str, Any]:
    """Write ``records`` into the table ``t`` of a new SQLite database and index col4.

    Returns
    -------
    dict
        ``insert_seconds``, ``index_seconds``, ``table_bytes`` (before the index),
        ``bytes`` (after) and ``plan`` (SQLite's plan of :data:`SQL`).
    """
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        t0 = time.perf_counter()
        con.execute("CREATE TABLE t (col1 INTEGER, col2 INTEGER, col3 REAL, col4 REAL)")
        for start in range(0, len(records), SQLITE_BLOCK):
            block = records[start : start + SQLITE_BLOCK].tolist()
            con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", block)
        con.commit()
        t1 = time.perf_counter()
        table_bytes = Path(path).stat().st_size
        con.execute(f"CREATE INDEX t_{QUERY_COLUMN} ON t ({QUERY_COLUMN})")
        con.commit()
        t2 = time.perf_counter()
        plan = con.execute("EXPLAIN QUERY PLAN " + SQL, (0.0, 1.0)).fetchall()
    finally:
        con.close()
    return {
        "insert_seconds": t1 - t0,
        "index_seconds": t2 - t1,
        "table_bytes": table_bytes,
        "bytes": Path(path).stat().st_size,
        "plan": "; ".join(str(step[-1]) for step in plan),
    }


# ----------------------------------------------------------------------------- smoke tests


def _smoke_scan(library: str, folder: Path, codec: str, records: Any, probe: Mapping) -> None:
    path = str(folder / f"{codec.replace(':', '-')}-plain.h5")
    write_table(library, path, records, codec, Timer(), block=1000)
    got = sorted_check(query_table(library, path, NODE, probe["limits"], "cold", Timer()))
    if got != probe["expected"]:
        raise BenchmarkError(f"the query gave {got}, NumPy {probe['expected']}")


def _smoke_index(library: str, folder: Path, codec: str, records: Any, probe: Mapping) -> None:
    plain = str(folder / f"{codec.replace(':', '-')}-plain.h5")
    path = str(folder / f"{codec.replace(':', '-')}-indexed.h5")
    build_index(library, plain, path, QUERY_COLUMN, *QUERY_INDEX, Timer())
    found = index_check(library, path, QUERY_COLUMN, probe)
    expected = expected_index(QUERY_COLUMN, *QUERY_INDEX, len(records), probe)
    if found != expected:
        raise BenchmarkError(f"the index gave {found}, not {expected}")


def _smoke_sorted(library: str, folder: Path, codec: str, records: Any, probe: Mapping) -> None:
    path = str(folder / f"{codec.replace(':', '-')}-indexed.h5")
    sort_table(library, path, Timer())
    got = sorted_check(query_table(library, path, SORTED_NODE, probe["limits"], "warm", Timer()))
    if got != probe["expected"]:
        raise BenchmarkError(f"the query of the sorted table gave {got}, NumPy {probe['expected']}")
    with library_module(library).open_file(path, mode="r") as f:
        col4 = f.get_node("/" + SORTED_NODE).col(QUERY_COLUMN)
    if not (col4[:-1] <= col4[1:]).all():
        raise BenchmarkError(f"the sorted table's {QUERY_COLUMN} is not sorted")


_SMOKE_STEPS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("in-kernel", _smoke_scan),
    ("indexed", _smoke_index),
    ("sorted", _smoke_sorted),
)


@functools.cache
def smoke_test(library: str) -> dict[str, str | None]:
    """Write, index, sort and query a tiny table per codec with ``library``.

    Returns
    -------
    dict
        Per mode (``in-kernel``, ``indexed``, ``sorted``), None if it works, else why not:
        ``smoke test (CODEC, MODE) failed: ...``.  A mode fails when the one before it
        does.
    """
    records = make_records(SMOKE_ROWS, seed=SEED + 1)
    probe = probe_of(records, QUERY_COLUMN)
    reasons: dict[str, str | None] = dict.fromkeys(MODES)
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-indexes-smoke-") as tmp:
        for codec in SMOKE_CODECS:
            before: str | None = None
            for mode, step in _SMOKE_STEPS:
                if before is not None:
                    reasons[mode] = reasons[mode] or before
                    continue
                try:
                    step(library, Path(tmp), codec, records, probe)
                except Exception as exc:  # whatever the library raises makes it unavailable
                    why = f"smoke test ({codec}, {mode}) failed: {type(exc).__name__}: {exc}"
                    reasons[mode] = reasons[mode] or why
                before = reasons[mode]
    return reasons


# ----------------------------------------------------------------------------- create runs


def run_checked(
    spec: BenchmarkSpec, repeat: int, timeout: float, progress: Callable[[str], None]
) -> BenchmarkResult:
    """:func:`~bench.harness.run_benchmark` without its untimed checking run (for the
    ``create`` part of :mod:`bench.indexes`).

    Building an index is both the work timed and the slow step of the whole benchmark
    (PyTables: 25 to 67 s per index of 10 million rows here), so building it once more,
    untimed, before the timed runs would nearly double the part.  Instead, the result of
    every timed run is checked before its time is kept: by the target against the expected
    index (:func:`bench.indexes.run_case`, after the timing) and here against the first
    result of the case, as the harness compares rivals.  A case that fails or disagrees is
    recorded in ``failures``, not timed.  Nothing is lost to warming: in this process the
    libraries' index code already ran (:func:`smoke_test`), a fresh process starts cold
    anyway, and each run's input is a copy just made (in the OS page cache).

    Parameters
    ----------
    spec : BenchmarkSpec
        The part's benchmark.
    repeat : int
        Timed runs per case and rival (each one checked).
    timeout : float
        Seconds a fresh-process run may take.
    progress : callable
        Receives one line of text per case.

    Raises
    ------
    ValueError
        If ``repeat`` is below 1.
    BenchmarkError
        If no rival is available or a baseline run (``spec.fresh_process``) fails.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    rivals, skipped = select_rivals(spec, progress)
    names = [r.name for r in rivals]
    baseline = spec.baseline if spec.baseline in names else names[0]
    rss: dict[str, list[int]] = {name: [] for name in names}
    imports: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(repeat if spec.fresh_process else 0):
        for rival in rivals:
            res = run_in_fresh_process(spec.target, rival, None, timeout)
            rss[rival.name].append(int(res["peak_rss"]))
            imports[rival.name].append(float(res["import_seconds"]))
    measurements: list[Measurement] = []
    failures: dict[str, str] = {}
    for i, case in enumerate(spec.cases, 1):
        try:
            found = _measure_checked(spec, case, rivals, repeat, timeout)
        except BenchmarkError as exc:
            failures[case.key] = str(exc)
            progress(f"[{i}/{len(spec.cases)}] FAILED: {exc}")
            continue
        measurements.extend(found)
        summary = ", ".join(f"{m.rival} {format_seconds(m.time.median)}" for m in found)
        elapsed = time.perf_counter() - t0
        progress(f"[{i}/{len(spec.cases)}] {case.key}: {summary}  ({elapsed:.0f} s elapsed)")
    return BenchmarkResult(
        spec=spec,
        repeat=repeat,
        baseline=baseline,
        rivals=names,
        skipped=skipped,
        measurements=measurements,
        failures=failures,
        baseline_rss=rss,
        import_seconds=imports,
        versions=library_versions(),
        host=host_info(),
        started=started,
        elapsed=time.perf_counter() - t0,
    )


def _measure_checked(
    spec: BenchmarkSpec, case: Case, rivals: Sequence[Rival], repeat: int, timeout: float
) -> list[Measurement]:
    """Time ``case`` ``repeat`` times per rival (interleaved), each result equal to the
    first one of the case (:class:`~bench.harness.CheckMismatchError` if not)."""
    found: dict[str, Measurement] = {}
    for _ in range(repeat):
        for rival in rivals:
            if spec.fresh_process:
                res = run_in_fresh_process(spec.target, rival, case, timeout)
            else:
                res = run_in_this_process(spec.target, rival, case)
            first = next(iter(found.values()), None)
            if first is not None and canonical(res["check"]) != canonical(first.check):
                raise CheckMismatchError(
                    f"{case.key}: {rival.name} returned {canonical(res['check'])[:300]} but "
                    f"{first.rival} returned {canonical(first.check)[:300]}"
                )
            m = found.setdefault(rival.name, Measurement(case, rival.name, res["check"]))
            m.seconds.append(float(res["seconds"]))
            if res.get("peak_rss") is not None:
                m.peak_rss.append(int(res["peak_rss"]))
    return list(found.values())
