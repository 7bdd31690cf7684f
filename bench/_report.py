"""Reports of a :class:`bench.harness.BenchmarkResult`: JSON, markdown and a PNG plot."""

from __future__ import annotations

import dataclasses
import importlib
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._model import BenchmarkResult, Case, Measurement, Stats

MIB = 1024 * 1024


def _time_unit(seconds: float) -> tuple[str, float]:
    if seconds < 1e-3:
        return "µs", 1e6
    if seconds < 1:
        return "ms", 1e3
    return "s", 1.0


def format_seconds(seconds: float) -> str:
    """Return a duration with 3 significant digits and a unit (µs, ms or s)."""
    unit, scale = _time_unit(seconds)
    return f"{seconds * scale:.3g} {unit}"


def _number(value: float) -> str:
    """3 significant digits, but never an exponent (1010, not 1.01e+03)."""
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_time_stats(stats: Stats) -> str:
    """Return ``median (min..max)`` of durations, all in the median's unit."""
    unit, scale = _time_unit(stats.median)
    median = f"{_number(stats.median * scale)} {unit}"
    if stats.n == 1:
        return median
    return f"{median} ({_number(stats.min * scale)}..{_number(stats.max * scale)})"


def format_bytes(nbytes: float) -> str:
    """Return a size in B, KiB, MiB or GiB with 3 significant digits."""
    for unit, scale in (("GiB", 1024**3), ("MiB", MIB), ("KiB", 1024)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _stats_dict(stats: Stats | None) -> dict[str, float] | None:
    return None if stats is None else dataclasses.asdict(stats)


def result_to_dict(result: BenchmarkResult) -> dict[str, Any]:
    """Return everything in ``result`` as JSON-able data (the ``results.json`` content)."""
    spec = result.spec
    rows: list[dict[str, Any]] = []
    for m in result.measurements:
        rows.append(
            {
                "case": m.case.name,
                "group": m.case.group,
                "rival": m.rival,
                "params": dict(m.case.params),
                "check": m.check,
                "seconds": m.seconds,
                "peak_rss": m.peak_rss,
                "time": _stats_dict(m.time),
                "memory_peak": _stats_dict(m.memory),
                "memory_above_baseline": _stats_dict(result.memory_above_baseline(m)),
                "time_ratio_vs_baseline": result.time_ratio(m.case, m.rival),
                "memory_ratio_vs_baseline": result.memory_ratio(m.case, m.rival),
            }
        )
    return {
        "benchmark": spec.name,
        "title": spec.title,
        "started": result.started,
        "elapsed_seconds": result.elapsed,
        "mode": "fresh process per run" if spec.fresh_process else "in process",
        "repeat": result.repeat,
        "baseline_rival": result.baseline,
        "rivals": result.rivals,
        "skipped_rivals": result.skipped,
        "host": result.host,
        "versions": result.versions,
        "threads": result.threads,
        "notes": list(spec.notes),
        "data": [dataclasses.asdict(d) for d in spec.data],
        "failures": result.failures,
        "baseline_rss": result.baseline_rss,
        "import_seconds": result.import_seconds,
        "results": rows,
    }


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _ratio_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _stats_text(stats: Stats | None, fmt: Callable[[float], str]) -> str:
    if stats is None:
        return "-"
    if stats.n == 1:
        return fmt(stats.median)
    return f"{fmt(stats.median)} ({fmt(stats.min)}..{fmt(stats.max)})"


def _mib(nbytes: float) -> str:
    return f"{nbytes / MIB:.1f}"


def _case_table(
    result: BenchmarkResult,
    cell: Callable[[Measurement], str],
    ratio_of: Callable[[Case, str], float | None] | None,
) -> list[str]:
    others = [r for r in result.rivals if r != result.baseline]
    header = ["group", "case", *result.rivals]
    if ratio_of is not None:
        header += [f"{r} / {result.baseline}" for r in others]
    rows = []
    for case in result.spec.cases:
        row = [case.group or "-", case.name]
        if not result.measured(case):
            rows.append(row + ["failed"] * (len(header) - 2))
            continue
        row += [cell(result.get(case, r)) for r in result.rivals]
        if ratio_of is not None:
            row += [_ratio_text(ratio_of(case, r)) for r in others]
        rows.append(row)
    return _table(header, rows)


def _context_lines(result: BenchmarkResult) -> list[str]:
    spec = result.spec
    mode = "each run in a fresh process" if spec.fresh_process else "in one process"
    lines = [
        f"# {spec.name}: {spec.title}",
        "",
        f"Started {result.started}, took {result.elapsed:.0f} s. "
        f"Median (min..max) of {result.repeat} runs, {mode}, after one untimed run "
        f"per rival whose results were checked equal. Ratios are other / {result.baseline} "
        "(above 1: slower or bigger than the baseline).",
        "",
        "Host: " + ", ".join(f"{k} {v}" for k, v in result.host.items()),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in result.versions.items()),
    ]
    if result.threads:
        lines += ["", "Threads: " + ", ".join(f"{k} {v}" for k, v in result.threads.items())]
    for name, reason in result.skipped.items():
        lines += ["", f"Skipped rival {name}: {reason}."]
    for note in spec.notes:
        lines += ["", note]
    if spec.data:
        lines += ["", "## Data", ""]
        lines += _table(
            ["name", "description", "size"],
            [[d.name, d.description, format_bytes(d.nbytes)] for d in spec.data],
        )
    return lines


def format_markdown(result: BenchmarkResult) -> str:
    """Return the markdown report: context, time table, memory tables, baselines."""
    lines = _context_lines(result)
    if result.failures:
        lines += ["", "## Failures (not timed)", ""]
        lines += [f"- {reason.splitlines()[0][:300]}" for reason in result.failures.values()]
    lines += ["", "## Time", ""]
    lines += _case_table(result, lambda m: format_time_stats(m.time), result.time_ratio)
    if result.spec.fresh_process:
        lines += ["", "## Peak memory above the baseline (MiB)", ""]
        lines += _case_table(
            result,
            lambda m: _stats_text(result.memory_above_baseline(m), _mib),
            result.memory_ratio,
        )
        lines += ["", "## Peak RSS, absolute (MiB)", ""]
        lines += _case_table(result, lambda m: _stats_text(m.memory, _mib), None)
        lines += ["", "## Baseline: interpreter + imports", ""]
        rows = []
        for rival in result.rivals:
            rss, imp = result.baseline_rss[rival], result.import_seconds[rival]
            rows.append(
                [
                    rival,
                    _mib(statistics.median(rss)) if rss else "-",
                    format_seconds(statistics.median(imp)) if imp else "-",
                ]
            )
        lines += _table(["rival", "peak RSS (MiB)", "import time"], rows)
    return "\n".join(lines) + "\n"


NO_MATPLOTLIB = (
    "matplotlib is not installed: no PNG plot (the JSON and markdown reports are written); "
    "for plots, install the bench extras: pip install -e '.[bench]' (or make bench)"
)
"""The note a report gives instead of its plot when matplotlib is missing."""


def write_plot(result: BenchmarkResult, path: Path) -> str | None:
    """Draw time (and memory) bars per group of cases into a PNG.

    Returns
    -------
    str or None
        None on success, else why no plot was written (matplotlib is missing).
    """
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return NO_MATPLOTLIB
    groups = list(dict.fromkeys(c.group for c in result.spec.cases))
    nrows = 2 if result.spec.fresh_process else 1
    fig, axes = plt.subplots(
        nrows, len(groups), figsize=(4.5 * len(groups) + 1, 4 * nrows), squeeze=False
    )
    width = 0.8 / len(result.rivals)
    for col, group in enumerate(groups):
        cases = [c for c in result.spec.cases if c.group == group and result.measured(c)]
        xs = range(len(cases))
        for k, rival in enumerate(result.rivals):
            ms = [result.get(c, rival) for c in cases]
            pos = [x + (k - (len(result.rivals) - 1) / 2) * width for x in xs]
            axes[0][col].bar(pos, [m.time.median for m in ms], width, label=rival)
            if nrows == 2:
                mem = [result.memory_above_baseline(m) for m in ms]
                heights = [max(s.median, 0.0) / MIB if s else 0.0 for s in mem]
                axes[1][col].bar(pos, heights, width, label=rival)
        for row in range(nrows):
            ax = axes[row][col]
            ax.set_xticks(list(xs), [c.name for c in cases], rotation=45, ha="right")
            ax.set_title(f"{group}" if group else result.spec.name)
        axes[0][col].set_yscale("log")
        axes[0][col].set_ylabel("seconds (median, log)")
        if nrows == 2:
            axes[1][col].set_ylabel("MiB above baseline (median)")
    axes[0][0].legend()
    fig.suptitle(f"{result.spec.name}: {result.spec.title}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def write_reports(
    result: BenchmarkResult, out_dir: Path, plot: bool = True
) -> tuple[dict[str, Path], list[str]]:
    """Write ``results.json``, ``results.md`` and (if ``plot``) ``results.png`` in ``out_dir``.

    Returns
    -------
    paths : dict
        ``{"json": ..., "markdown": ..., "png": ...}`` for the files written.
    notes : list of str
        What could not be written and why (no matplotlib).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "results.json", "markdown": out_dir / "results.md"}
    paths["json"].write_text(json.dumps(result_to_dict(result), indent=2) + "\n")
    paths["markdown"].write_text(format_markdown(result))
    notes: list[str] = []
    if not plot:
        return paths, notes
    png = out_dir / "results.png"
    why = write_plot(result, png)
    if why is None:
        paths["png"] = png
    else:
        notes.append(why)
    return paths, notes
