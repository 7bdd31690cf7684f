"""Reports of the ``indexes`` benchmark (:mod:`bench.indexes`): notes, markdown and JSON.

Turns the finished :class:`bench.harness.BenchmarkResult` of each part (``create``,
``query``) into the benchmark's report, printed and written to ``results.md`` and
``results.json`` (each part's own harness reports go into a subfolder named after it):

``## Files``
    What the setup built (tables, the indexed copies and their sorted tables, the SQLite
    database): size and time (:func:`files_markdown`).
``## Index creation``
    Per codec, column and kind: each library's median time and index size (the growth of
    the file), and PyTables' over hyperslab's (:func:`creation_markdown`).
``## Goals (medians)``
    The issue's goals (:func:`goals`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench._indexes_data import START, Prepared
from bench._indexes_ops import CONDITION, QUERY_INDEX, SORTED_NODE, SQL, rival_name
from bench._report import format_markdown, format_seconds, write_reports
from bench.harness import BenchmarkResult, goal_lines, print_progress, report_outcome

MB = 1e6
SORTED_GOAL_HITS = 10_000
"""Sorted-table queries with up to this many hits ..."""
SORTED_GOAL_SECONDS = 0.005
"""... take less than this (the issue's "a few milliseconds")."""
HARNESS_WARMUP = "after one untimed run per rival whose results were checked equal"
"""What the harness's markdown says of its checking run, which the ``create`` part has not
(:func:`bench._indexes_ops.run_checked`) ..."""
CREATE_WARMUP = "each run's result checked, with no untimed run first"
"""... and what it says instead."""


def notes_for(part: str, prepared: Prepared) -> list[str]:
    """The notes of one part's report."""

    notes = [
        f"Table: {prepared.nrows:,} rows of the spec's Record (col1, col2 Int32; col3, col4 "
        "Float64; 24 bytes), random values as PyTables' bench/indexed_search.py (the same as "
        "the queries benchmark); each library writes its own table (its chunkshape for "
        "expectedrows=nrows) and indexes its own copies; files read from the OS page cache.",
        "Threads: see the Threads line. glibc keeps freed memory during the runs (as in the "
        "reductions benchmark: this VM returns free pages to its host).",
    ]
    if part == "create":
        notes.append(
            "Index creation: per codec, column and kind:optlevel, each library copies its "
            "unindexed file (untimed), opens it ('a') and runs cols.COLUMN.create_index("
            "optlevel=, kind=) (filters=None: each library's default index filters) and "
            "File.flush(), timed (closing is not). The index size is the "
            "growth of the file. Checked after the timing: the index's kind, optlevel, "
            "is_csi (only where kind and optlevel decide it), nelements, "
            "will_query_use_indexing and a query on the column against NumPy. No untimed "
            "run first: each index is built once per timed run, and every run's index is "
            "checked (after its timing, before its time is kept)."
        )
        return notes
    hits = ", ".join(f"{n:,}" for n in prepared.hits.values())
    notes.append(
        f"Query: read_where('{CONDITION}', condvars, field='col2'), limits from the sorted "
        f"col4 values starting at the {START:g} quantile so that {hits} rows match. Modes: "
        "in-kernel (the unindexed table), indexed (its copy with a "
        f"{QUERY_INDEX[0]}:{QUERY_INDEX[1]} index on col4 by create_index: the create "
        "part's file where it made one) and sorted "
        f"(table.copy(newname='{SORTED_NODE}', sortby='col4', checkCSI=True, "
        "propindexes=True) of the indexed table, in the same file). cold: open_file + "
        "get_node + read_where + close, timed, in this process unless --fresh-process; warm: "
        "the query again on the file that just ran it. Results compared as sorted multisets "
        "(hits, sum, CRC-32) with NumPy's and across rivals before any timing."
    )
    if prepared.sqlite is not None:
        info = prepared.sqlite_info
        notes.append(
            f"SQLite (Python's sqlite3, library {_sqlite_version()}): table t (col1, col2 "
            "INTEGER; col3, col4 REAL) with the same rows, CREATE INDEX on col4, default "
            f"page cache; query '{SQL}' with fetchall(); cold: a new read-only connection "
            "(connect + query + close timed), warm: the query again on the connection. "
            f"Plan: {info['plan']}."
        )
    return notes


def _sqlite_version() -> str:
    import sqlite3

    return sqlite3.sqlite_version


# ----------------------------------------------------------------------------- tables


def index_sizes(result: BenchmarkResult | None) -> dict[str, dict[str, int | None]]:
    """``{group/case: {rival: bytes}}``: the growth of each library's scratch file of
    every ``create`` case over its unindexed file (None where the case failed)."""
    sizes: dict[str, dict[str, int | None]] = {}
    if result is None:
        return sizes
    for case in result.spec.cases:
        row: dict[str, int | None] = {}
        for rival in result.rivals:
            scratch = Path(case.params["scratch"][rival])
            plain = Path(case.params["plain"][rival])
            ok = result.measured(case) and scratch.exists()
            row[rival] = scratch.stat().st_size - plain.stat().st_size if ok else None
        sizes[case.key] = row
    return sizes


def files_markdown(prepared: Prepared) -> list[str]:
    """What the setup built: one row per table, index, sorted copy and database."""
    lines = [
        "## Files",
        "",
        f"Data: {prepared.nrows * 24 / MB:.1f} MB uncompressed.",
        "",
        "| codec | library | what | bytes added (MB) | built in |",
        "|---|---|---|---|---|",
    ]
    for b in prepared.built:
        lines.append(
            f"| {b.codec} | {b.library} | {b.what} | {b.nbytes / MB:.1f} | {b.seconds:.2f} s |"
        )
    if prepared.sqlite is not None:
        info = prepared.sqlite_info
        lines.append(
            f"| - | SQLite | table | {info['table_bytes'] / MB:.1f} | "
            f"{info['insert_seconds']:.2f} s |"
        )
        lines.append(
            f"| - | SQLite | col4 index | {(info['bytes'] - info['table_bytes']) / MB:.1f} | "
            f"{info['index_seconds']:.2f} s |"
        )
    return lines


def _size(nbytes: int | None) -> str:
    return "-" if nbytes is None else f"{nbytes / MB:.1f}"


def _seconds(seconds: float | None) -> str:
    return "-" if seconds is None else format_seconds(seconds)


def _quotient(value: float | None, reference: float | None) -> str:
    if value is None or reference is None or reference <= 0:
        return "-"
    return f"{value / reference:.2f}"


def creation_markdown(
    result: BenchmarkResult, sizes: Mapping[str, Mapping[str, int | None]]
) -> list[str]:
    """Per creation case: each library's median time and index size (MB), and each
    other library's time and size over the baseline's."""
    base = result.baseline
    others = [r for r in result.rivals if r != base]
    header = ["codec", "index", *(f"{r} time, size (MB)" for r in result.rivals)]
    header += [f"{r} / {base}: time, size" for r in others]
    lines = [
        f"## Index creation (median of {result.repeat}; sizes: growth of the file)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for case in result.spec.cases:
        row = sizes.get(case.key, {})
        times = {r: result.median_time(case, r) for r in result.rivals}
        cells = [f"{_seconds(times[r])}, {_size(row.get(r))}" for r in result.rivals]
        cells += [
            f"{_quotient(times[r], times[base])}, {_quotient(row.get(r), row.get(base))}"
            for r in others
        ]
        lines.append(f"| {case.group} | {case.name} | " + " | ".join(cells) + " |")
    return lines


# ----------------------------------------------------------------------------- goals


def _compare(
    what: str, mine: float | None, theirs: float | None, limit: bool = False
) -> tuple[bool | None, str]:
    if mine is None or theirs is None:
        return None, f"{what}: not measured"
    if limit:
        return mine < theirs, f"{what}: {mine * 1e3:.3g} ms"
    return mine <= theirs, f"{what}: {mine:.4g} s vs {theirs:.4g} s"


def goals(results: Mapping[str, BenchmarkResult]) -> list[tuple[bool | None, str]]:
    """The issue's goals: ``(met, text)``; met is None where a side was not measured.

    hyperslab's indexed query at least as fast as PyTables' for every case (codec, cache,
    hit count), on the index hyperslab built and on the one PyTables built (the file
    PyTables queries); its index creation at least as fast as PyTables' for every codec,
    column and kind; its sorted-table query under :data:`SORTED_GOAL_SECONDS` for every
    case of up to :data:`SORTED_GOAL_HITS` hits, on both writers' sorted copies.
    """
    found: list[tuple[bool | None, str]] = []
    if (query := results.get("query")) is not None:
        for mine in ("hyperslab indexed", rival_name("hyperslab", "indexed", "PyTables")):
            for case in query.spec.cases:
                found.append(
                    _compare(
                        f"{mine} <= PyTables indexed, {case.group} {case.name}",
                        query.median_time(case, mine),
                        query.median_time(case, "PyTables indexed"),
                    )
                )
    if (create := results.get("create")) is not None:
        for case in create.spec.cases:
            found.append(
                _compare(
                    f"hyperslab create_index <= PyTables, {case.group} {case.name}",
                    create.median_time(case, "hyperslab"),
                    create.median_time(case, "PyTables"),
                )
            )
    if query is not None:
        for mine in ("hyperslab sorted", rival_name("hyperslab", "sorted", "PyTables")):
            for case in query.spec.cases:
                if case.params["expected"]["hits"] <= SORTED_GOAL_HITS:
                    found.append(
                        _compare(
                            f"{mine} < {SORTED_GOAL_SECONDS * 1e3:g} ms, "
                            f"{case.group} {case.name}",
                            query.median_time(case, mine),
                            SORTED_GOAL_SECONDS,
                            limit=True,
                        )
                    )
    return found


# ----------------------------------------------------------------------------- the report


def _part_body(full: str, first: bool, title: str) -> str:
    """The harness's markdown of a part; after the first, without the shared context."""
    if first:
        return full
    cut = min(full.find(h) % (len(full) + 1) for h in ("\n## Failures", "\n## Time"))
    return f"# {title}\n" + full[cut:]


def _summary(
    results: Mapping[str, BenchmarkResult],
    prepared: Prepared,
    sizes: Mapping[str, Mapping[str, int | None]],
    met: list[tuple[bool | None, str]],
) -> dict[str, Any]:
    return {
        "benchmark": "indexes",
        "nrows": prepared.nrows,
        "condition": CONDITION,
        "sql": SQL,
        "hits": {str(n): h for n, h in prepared.hits.items()},
        "limits": {str(n): lim for n, lim in prepared.limits.items()},
        "dropped": prepared.dropped,
        "built": [
            {
                "what": b.what,
                "library": b.library,
                "codec": b.codec,
                "bytes": b.nbytes,
                "seconds": b.seconds,
            }
            for b in prepared.built
        ],
        "sqlite": prepared.sqlite_info,
        "index_bytes": sizes,
        "skipped": {part: res.skipped for part, res in results.items()},
        "medians": {
            part: {
                case.key: {r: res.median_time(case, r) for r in res.rivals}
                for case in res.spec.cases
            }
            for part, res in results.items()
        },
        "goals": [{"met": m, "what": t} for m, t in met],
    }


def report(
    results: Mapping[str, BenchmarkResult],
    prepared: Prepared,
    sizes: Mapping[str, Mapping[str, int | None]],
    out_dir: Path,
    plot: bool = True,
    progress: Callable[[str], None] = print_progress,
) -> int:
    """Print the report, write it (``results.md``, ``results.json``) and each part's harness
    reports (``<part>/``); return the exit code (1 if some case failed)."""
    sections: list[str] = []
    code = 0
    for k, (part, result) in enumerate(results.items()):
        full = format_markdown(result)
        if part == "create":
            full = full.replace(HARNESS_WARMUP, CREATE_WARMUP)
        extra = "\n".join(creation_markdown(result, sizes)) if part == "create" else ""
        paths, notes = write_reports(result, out_dir / part, plot=plot)
        paths["markdown"].write_text(full + ("\n" + extra + "\n" if extra else ""))
        code = max(code, report_outcome(f"indexes {part}", result, paths, notes, progress))
        sections.append(_part_body(full, k == 0, f"{result.spec.name}: {result.spec.title}"))
        if k == 0:
            sections.append("\n".join(files_markdown(prepared)))
        if extra:
            sections.append(extra)
    if not results:
        sections.append("\n".join(files_markdown(prepared)))
    met = goals(results)
    lines = goal_lines(met, "hyperslab or PyTables not run")
    sections.append("\n".join(["## Goals (issue 7, medians)", "", *lines]))
    markdown = "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
    print(markdown)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.md").write_text(markdown)
    summary = _summary(results, prepared, sizes, met)
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    progress(f"wrote {out_dir / 'results.md'}, {out_dir / 'results.json'}")
    return code
