"""Reports of the ``slicing`` benchmark (:mod:`bench.slicing`): markdown and JSON text.

Turns a finished :class:`bench.harness.BenchmarkResult` of the benchmark into its report
sections, printed and written next to the harness's (:mod:`bench._report`):

``## Files``
    Every file's size, compression ratio, chunkshape, blockshape and write time
    (:func:`files_markdown`).
``## Throughput``
    MB/s of the result at the median time (MB = 1e6 bytes), and the speed relative to the
    baseline rival's, per group and case (:func:`throughput`, :func:`throughput_markdown`).
``## Goals (medians)``
    The issue's speed goals (:data:`GOALS`), met or not (:func:`goals`,
    :func:`goals_markdown`).

:func:`report` puts them together and adds ``throughput``, ``files`` and ``goals`` to
``results.json``.  The small text helpers (:func:`possessive` and the private
``_file_text`` and ``_index_text``) also serve the benchmark's progress lines, data
descriptions and notes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._report import format_markdown, write_reports
from bench._slicing_data import AXIS_CASES, Group, Selection
from bench.harness import (
    BenchmarkResult,
    Case,
    goal_lines,
    print_progress,
    report_outcome,
    speed_goal,
)

MB = 1e6
"""Bytes in a MB of the reports (throughput and sizes)."""


# ----------------------------------------------------------------------------- text helpers


def possessive(name: str) -> str:
    """``PyTables'``, ``hyperslab's``: whose file."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _file_text(info: Mapping[str, Any]) -> str:
    """``chunks (...), blocks (...), ratio 6.12x``: a file of :func:`bench.slicing.file_info`."""
    blocks = "-" if info["blocks"] is None else tuple(info["blocks"])
    return f"chunks {tuple(info['chunks'])}, blocks {blocks}, ratio {info['ratio']:.2f}x"


def _index_text(selection: Selection) -> str:
    """``[::2, ::3, 10:90:4, ::5]``: a JSON selection as Python index text."""
    parts = []
    for item in selection:
        if isinstance(item, int):
            parts.append(str(item))
        else:
            start, stop, step = ("" if v is None else str(v) for v in item)
            parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    return "[" + ", ".join(parts) + "]"


# ----------------------------------------------------------------------------- tables


def _nbytes(case: Case) -> int:
    return int(case.params["expected"]["nbytes"])


def throughput(result: BenchmarkResult) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{group/case: {rival: {"mbps", "vs_baseline"}}}``: MB/s at the median time and the
    speed relative to the baseline rival's (above 1: faster)."""
    table: dict[str, dict[str, dict[str, float | None]]] = {}
    for case in result.spec.cases:
        ref = result.median_time(case, result.baseline)
        row: dict[str, dict[str, float | None]] = {}
        for rival in result.rivals:
            t = result.median_time(case, rival)
            row[rival] = {
                "mbps": None if t is None else _nbytes(case) / t / MB,
                "vs_baseline": None if t is None or ref is None else ref / t,
            }
        table[case.key] = row
    return table


def throughput_markdown(result: BenchmarkResult) -> list[str]:
    """The MB/s table: one row per group and case, one column per rival."""
    table = throughput(result)
    header = ["chunks", "case", "result", *result.rivals]
    lines = [
        f"## Throughput: MB/s of the result (speed / {possessive(result.baseline)}; "
        "above 1: faster)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for case in result.spec.cases:
        cells = []
        for rival in result.rivals:
            entry = table[case.key][rival]
            mbps, vs = entry["mbps"], entry["vs_baseline"]
            cells.append("failed" if mbps is None else f"{mbps:.0f} ({vs:.2f})")
        size = f"{_nbytes(case) / MB:.2f} MB"
        lines.append(f"| {case.group} | {case.name} | {size} | " + " | ".join(cells) + " |")
    return lines


def files_markdown(groups: Sequence[Group], data_nbytes: int) -> list[str]:
    """The files table: size, compression ratio, chunks and blocks, write time."""
    lines = [
        "## Files",
        "",
        f"Data: {data_nbytes / MB:.0f} MB uncompressed.",
        "",
        "| chunks | file of | size (MB) | ratio | chunkshape | blockshape | written in |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in groups:
        for file_of, info in group.info.items():
            blocks = "-" if info["blocks"] is None else tuple(info["blocks"])
            lines.append(
                f"| {group.name} | {file_of} | {info['bytes'] / MB:.1f} | {info['ratio']:.2f}x "
                f"| {tuple(info['chunks'])} | {blocks} | {group.write_seconds[file_of]:.2f} s |"
            )
    return lines


GOALS = (
    (AXIS_CASES, "PyTables", {"hyperslab": 1.5}, 1.0),
    (AXIS_CASES, "b2h5py", {"hyperslab": 1.5}, 1.0),
    (("strided",), "h5py + hdf5plugin", {}, 2.0),
)
"""The issue's goals: (cases, rival, factor by writer of the file, factor otherwise):
hyperslab's speed >= factor x the rival's, both reading the same file."""


def goal_pairs(result: BenchmarkResult) -> list[tuple[Case, str, float]]:
    """Every goal's case, rival and factor (:data:`GOALS`)."""
    pairs = []
    for cases, rival, by_writer, factor in GOALS:
        for case in [c for c in result.spec.cases if c.name in cases]:
            pairs.append((case, rival, by_writer.get(case.params.get("writer", ""), factor)))
    return pairs


def goals(result: BenchmarkResult) -> list[tuple[bool | None, str]]:
    """The speed goals: ``(met, text)`` per group and case; met is None if not measured."""
    return [
        speed_goal(result, case, "hyperslab", rival, factor,
                   f"hyperslab >= {factor:g}x {rival}, {case.group} {case.name}",
                   lambda seconds, case=case: f"{_nbytes(case) / seconds / MB:.0f}", "MB/s")
        for case, rival, factor in goal_pairs(result)
    ]


def goals_markdown(met: Sequence[tuple[bool | None, str]]) -> list[str]:
    """The goals section: one ``met`` / ``NOT MET`` line per measured goal."""
    lines = goal_lines(met, "a rival or case did not run")
    return ["## Goals (medians)", "", *lines]


def report(
    result: BenchmarkResult,
    groups: Sequence[Group],
    data_nbytes: int,
    out_dir: Path,
    plot: bool = True,
    progress: Callable[[str], None] = print_progress,
) -> int:
    """Print and write the reports (markdown, JSON, PNG); return the exit code."""
    met = goals(result)
    sections = [
        format_markdown(result),
        "\n".join(files_markdown(groups, data_nbytes)),
        "\n".join(throughput_markdown(result)),
        "\n".join(goals_markdown(met)),
    ]
    markdown = "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
    print(markdown)
    paths, notes = write_reports(result, out_dir, plot=plot)
    paths["markdown"].write_text(markdown)
    content = json.loads(paths["json"].read_text())
    content["throughput"] = {"unit": "MB/s of the result (1e6 bytes)", "cases": throughput(result)}
    content["files"] = {
        g.name: {f: {**info, "write_seconds": g.write_seconds[f]} for f, info in g.info.items()}
        for g in groups
    }
    content["goals"] = [{"met": m, "what": t} for m, t in met]
    paths["json"].write_text(json.dumps(content, indent=2) + "\n")
    return report_outcome("slicing", result, paths, notes, progress)
