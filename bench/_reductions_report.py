"""Reports of the ``reductions`` benchmark (:mod:`bench.reductions`): markdown and JSON.

Turns the finished :class:`bench.harness.BenchmarkResult` of each part (``sums``,
``expression``) into the benchmark's report, printed and written to ``results.md`` and
``results.json`` (each part's own harness reports go into a subfolder named after it):

``## Files``
    Every file's size, compression ratio, chunkshape, blockshape and write time, and the
    in-memory python-blosc2 NDArrays of the groups (:func:`files_markdown`).
``## <part>: GB/s of the array``
    The array's bytes (1e9 per GB) over the median time, and each rival's speed relative to
    the part's reference rivals (:data:`REFERENCES`) per group and case
    (:func:`throughput`, :func:`throughput_markdown`).
``## Goals (medians)``
    The issue's speed goals (:data:`GOALS`), met or not, per group and sum case
    (:func:`goals`, :func:`goals_markdown`).

It also holds what the benchmark's setup and the reports share: the :class:`Group` of a
codec and chunk setting, the descriptions of files and NDArrays (:func:`file_text`,
:func:`ndarray_info`), the reports' notes (:func:`notes_for`) and the memory conditions
they describe (:func:`keep_freed_memory`, :func:`warm_memory`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._reductions_data import CLEVEL, EXPR_AXIS, EXPRESSION, RTOL, STOP
from bench._report import format_markdown, result_to_dict, write_reports
from bench.harness import (
    BenchmarkResult,
    Case,
    goal_lines,
    print_progress,
    report_outcome,
    speed_goal,
)

GB = 1e9
"""Bytes in a GB of the reports."""
MB = 1e6
GOALS = (
    ("hyperslab", "blosc2 NDArray (memory)", 1.0),
    ("hyperslab (hdf5plugin's file)", "h5py + NumPy (hdf5plugin's file)", 2.0),
)
"""The issue's goals for every sum case: (hyperslab's rival, rival, factor): hyperslab's
speed >= factor x the rival's.  hyperslab reads from disk (the OS page cache): its own file
against python-blosc2's NDArray in memory with the same chunks, blocks, codec and level,
and hdf5plugin's file against h5py + NumPy on the same file."""
REFERENCES = {
    "sums": ("h5py + NumPy", "blosc2 NDArray (memory)"),
    "expression": ("NumPy (memory)", "blosc2 lazyexpr (memory)"),
}
"""Per part, the rivals whose speed every rival's is compared with in the GB/s tables."""
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
"""glibc's ``mallopt`` parameters (``malloc.h``)."""
DEFAULT_TRIM_THRESHOLD, DEFAULT_MMAP_MAX = 128 * 1024, 65536
"""glibc's defaults of those parameters."""


@dataclasses.dataclass
class Group:
    """One codec and chunk setting: its files (by whose file it is) and what they look like.

    ``requested`` is the chunk setting (None: hyperslab's choice); ``chunks`` the chunkshape
    of the other writers and of the NDArray (hyperslab's, clipped to the shape), known once
    hyperslab's file is written (:func:`bench.reductions.write_group`), as is ``name``.
    """

    codec: str
    requested: tuple[int, ...] | None
    shape: tuple[int, ...]
    chunks: tuple[int, ...] = ()
    name: str = ""
    files: dict[str, Path] = dataclasses.field(default_factory=dict)
    info: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    write_seconds: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def setting(self) -> str:
        """``auto`` or the requested chunkshape (``100x100x100``)."""
        return "auto" if self.requested is None else chunks_label(self.requested)


def chunks_label(chunks: Sequence[int]) -> str:
    """``100x100x100``."""
    return "x".join(str(c) for c in chunks)


def file_text(info: Mapping[str, Any]) -> str:
    """``chunks (...), blocks (...), ratio 5.06x``: a file of
    :func:`bench.reductions.file_info` or an NDArray of :func:`ndarray_info`."""
    blocks = "-" if info["blocks"] is None else tuple(info["blocks"])
    return f"chunks {tuple(info['chunks'])}, blocks {blocks}, ratio {info['ratio']:.2f}x"


def ndarray_info(array: Any, seconds: float) -> dict[str, Any]:
    """Describe an in-memory NDArray: compressed bytes, ratio, chunks, blocks, build time.

    The ratio is the array's bytes over the compressed bytes (``schunk.cratio`` counts the
    padding of the edge chunks as data).
    """
    nbytes = math.prod(array.shape) * array.dtype.itemsize
    return {
        "bytes": int(array.schunk.cbytes),
        "ratio": nbytes / int(array.schunk.cbytes),
        "chunks": list(array.chunks),
        "blocks": list(array.blocks),
        "seconds": seconds,
    }


def notes_for(shape: Sequence[int], nbytes: int) -> list[str]:
    """The notes of the reports: data, layout, rivals, checks (threads: the reports'
    Threads line)."""
    return [
        f"Array: {' x '.join(map(str, shape))} float64 ({nbytes / 1e9:.3g} GB), "
        f"np.linspace(0, {STOP:g}, n) in C order, as CArray '/a' written slab by slab "
        "(whole chunks) by hyperslab and by h5py + hdf5plugin; codecs Blosc2 LZ4 and Zstd "
        f"level {CLEVEL} with byte shuffle, or none; each group is a codec and a chunkshape "
        "('auto': hyperslab's choice, also used by the other writers and the NDArray).",
        "Rivals: hyperslab node.sum(axis=...) on its file and on hdf5plugin's; NumPy on the "
        "array in memory; python-blosc2 NDArray in memory (blosc2.asarray with the group's "
        "codec and chunks, blocks of its choice; 'none' = clevel 0); h5py + NumPy "
        "dset[...].sum(axis=...) on hyperslab's file and on hdf5plugin's; dask "
        "da.from_array(dset, chunks=dset.chunks).sum(axis=...).compute() on hyperslab's "
        f"file. Expression: ({EXPRESSION}).sum(axis={EXPR_AXIS}) with hyperslab.Expr on its "
        "file, numexpr and NumPy in memory, and blosc2.lazyexpr on the group's NDArray.",
        f"Checks: every result allclose to NumPy's on the in-memory array (rtol {RTOL:g}); "
        "across rivals, shape, dtype and the result's float sum to 6 significant digits. "
        "Time: the computation only (files opened before, from the OS page cache; the "
        "NDArray built before); GB/s = array bytes (1e9) / median time. Memory: this VM "
        "gives pages left free ~2 s back to its host (virtio balloon free page reporting) and "
        "touching them again costs 1.5-3.5 s/GB, which fell at random on the rivals that "
        "allocate the whole array; so during the runs glibc keeps freed memory (mallopt "
        "M_MMAP_MAX=0, M_TRIM_THRESHOLD=-1) and before each run a buffer of 1x the array "
        "(h5py + NumPy, numexpr), 2x (the NumPy expression) or 0.25x (the others) is "
        "touched and freed, untimed.",
    ]


# ----------------------------------------------------------------------------- memory
#
# This VM hands memory pages left free in the kernel back to its host (virtio balloon with
# free page reporting, about 2 s after they are freed), and touching them again costs 1.5 to
# 3.5 s per GB (measured: numpy.empty + fill of 1 GB took 0.13 s right after freeing 1 GB,
# 1.5 to 4 s after a 3 s pause).  Without care, that cost falls at random on rivals that
# allocate the whole array (h5py + NumPy ran 5x slower right after the blosc2 rival than
# right after another h5py run).  So during the runs, glibc keeps the memory it frees
# (:func:`keep_freed_memory`), and each run first touches what it will need (:data:`WARM`).

WARM = {("sums", "h5py"): 1.0, ("expression", "numpy"): 2.0, ("expression", "numexpr"): 1.0}
"""Before each run of a rival, ``(part, method)``, memory of this many times the array's
bytes is touched and freed (:func:`warm_memory`), so that the run's big allocations reuse
pages already in the process (see :func:`keep_freed_memory`)."""
WARM_OTHERS = 0.25
"""The same for the other rivals (chunk buffers, partial results, dask's pieces)."""


def warm_memory(nbytes: int) -> None:
    """Touch every page of a new buffer of ``nbytes`` and free it (see :data:`WARM`)."""
    import numpy as np

    if nbytes > 0:
        buffer = np.empty(nbytes // 8 + 1, dtype=np.float64)
        buffer[::512] = 0.0  # one item per 4 KiB page
        del buffer


@contextlib.contextmanager
def keep_freed_memory() -> Iterator[bool]:
    """Make glibc keep the memory freed in the ``with`` block in the process; yield whether
    it could (glibc only).

    ``mallopt(M_MMAP_MAX, 0)`` serves big allocations from the heap instead of ``mmap`` (so
    freeing them does not unmap them) and ``mallopt(M_TRIM_THRESHOLD, -1)`` stops returning
    the heap's top to the kernel.  At the end, glibc's defaults are set back and
    ``malloc_trim(0)`` returns the free memory.
    """
    import ctypes
    import platform

    libc: Any = None
    if platform.libc_ver()[0] == "glibc":
        with contextlib.suppress(OSError, AttributeError):
            found = ctypes.CDLL(None)
            if found.mallopt and found.malloc_trim:
                libc = found
    kept = libc is not None and bool(libc.mallopt(M_MMAP_MAX, 0))
    kept = kept and bool(libc.mallopt(M_TRIM_THRESHOLD, -1))
    try:
        yield kept
    finally:
        if libc is not None:
            libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
            libc.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
            libc.malloc_trim(0)


# ----------------------------------------------------------------------------- tables


def _nbytes(case: Case) -> int:
    return int(case.params["nbytes"])


def throughput(
    result: BenchmarkResult, references: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{group/case: {rival: {"gbps", "speed_vs": {reference: x}}}}``: GB/s of the array
    at the median time, and the speed relative to each reference rival (above 1: faster;
    None where either was not measured)."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for case in result.spec.cases:
        refs = {ref: result.median_time(case, ref) for ref in references}
        row: dict[str, dict[str, Any]] = {}
        for rival in result.rivals:
            t = result.median_time(case, rival)
            row[rival] = {
                "gbps": None if t is None else _nbytes(case) / t / GB,
                "speed_vs": {
                    ref: None if t is None or r is None else r / t for ref, r in refs.items()
                },
            }
        table[case.key] = row
    return table


def throughput_markdown(part: str, result: BenchmarkResult, references: Sequence[str]) -> list[str]:
    """The GB/s table: one row per group and case, one column per rival; each cell the
    GB/s and, in parentheses, the speed relative to each reference rival that ran."""
    refs = [r for r in references if r in result.rivals]
    table = throughput(result, refs)
    header = ["chunks", "case", *result.rivals]
    vs = ", ".join(refs) if refs else "no reference rival ran"
    lines = [
        f"## {part}: GB/s of the array (speed vs {vs}; above 1: faster)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for case in result.spec.cases:
        cells = []
        for rival in result.rivals:
            entry = table[case.key][rival]
            if entry["gbps"] is None:
                cells.append("failed")
                continue
            ratios = ", ".join(
                "-" if x is None else f"{x:.2f}x" for x in entry["speed_vs"].values()
            )
            cells.append(f"{entry['gbps']:.2f}" + (f" ({ratios})" if ratios else ""))
        lines.append(f"| {case.group} | {case.name} | " + " | ".join(cells) + " |")
    return lines


def files_markdown(
    groups: Sequence[Group], ndarrays: Mapping[str, Mapping[str, Any]], data_nbytes: int
) -> list[str]:
    """The files table (size, ratio, chunks, blocks, write time), with the in-memory
    NDArrays (compressed size, ratio, chunks, blocks, build time)."""
    lines = [
        "## Files",
        "",
        f"Data: {data_nbytes / GB:.3g} GB uncompressed.",
        "",
        "| chunks | what | size (MB) | ratio | chunkshape | blockshape | written in |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in groups:
        rows: list[tuple[str, Mapping[str, Any], float]] = [
            (f"{file_of}'s file", info, group.write_seconds[file_of])
            for file_of, info in group.info.items()
        ]
        if group.name in ndarrays:
            info = ndarrays[group.name]
            rows.append(("blosc2 NDArray (memory)", info, info["seconds"]))
        for what, info, seconds in rows:
            blocks = "-" if info["blocks"] is None else tuple(info["blocks"])
            lines.append(
                f"| {group.name} | {what} | {info['bytes'] / MB:.1f} | {info['ratio']:.2f}x "
                f"| {tuple(info['chunks'])} | {blocks} | {seconds:.2f} s |"
            )
    return lines


# ----------------------------------------------------------------------------- goals


def goals(result: BenchmarkResult | None) -> list[tuple[bool | None, str]]:
    """The speed goals of the sums: ``(met, text)`` per group, case and goal; met is None
    where hyperslab or the rival was not measured."""
    if result is None:
        return []
    return [
        speed_goal(result, case, ours, rival, factor,
                   f"{ours} >= {factor:g}x {rival}, {case.group} {case.name}",
                   lambda seconds, case=case: f"{_nbytes(case) / seconds / GB:.2f}", "GB/s")
        for case in result.spec.cases
        for ours, rival, factor in GOALS
    ]


def goals_markdown(met: Sequence[tuple[bool | None, str]]) -> list[str]:
    """The goals section: one ``met`` / ``NOT MET`` line per measured goal."""
    lines = goal_lines(met, "a rival or case did not run")
    if not met:
        lines.append("- no goal measured (the sums did not run)")
    return ["## Goals (medians)", "", *lines]


# ----------------------------------------------------------------------------- the report


def _part_body(full: str, first: bool, title: str) -> str:
    """The harness's markdown of a part; after the first, without the shared context."""
    if first:
        return full
    cut = min(full.find(h) % (len(full) + 1) for h in ("\n## Failures", "\n## Time"))
    return f"# {title}\n" + full[cut:]


def report(
    results: Mapping[str, BenchmarkResult],
    groups: Sequence[Group],
    ndarrays: Mapping[str, Mapping[str, Any]],
    data_nbytes: int,
    out_dir: Path,
    plot: bool = True,
    progress: Callable[[str], None] = print_progress,
) -> int:
    """Print the report, write it (``results.md``, ``results.json``) and each part's harness
    reports (``<part>/``); return the exit code (1 if some case failed)."""
    sections: list[str] = []
    code = 0
    summary: dict[str, Any] = {"benchmark": "reductions", "array_bytes": data_nbytes}
    summary["throughput"], summary["parts"] = {}, {}
    for k, (part, result) in enumerate(results.items()):
        full = format_markdown(result)
        tables = "\n".join(throughput_markdown(part, result, REFERENCES[part]))
        paths, notes = write_reports(result, out_dir / part, plot=plot)
        paths["markdown"].write_text(full + "\n" + tables + "\n")
        code = max(code, report_outcome(f"reductions {part}", result, paths, notes, progress))
        sections.append(_part_body(full, k == 0, f"{result.spec.name}: {result.spec.title}"))
        if k == 0:
            sections.append("\n".join(files_markdown(groups, ndarrays, data_nbytes)))
        sections.append(tables)
        summary["throughput"][part] = throughput(result, REFERENCES[part])
        summary["parts"][part] = result_to_dict(result)
    if not results:
        sections.append("\n".join(files_markdown(groups, ndarrays, data_nbytes)))
    met = goals(results.get("sums"))
    sections.append("\n".join(goals_markdown(met)))
    markdown = "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
    print(markdown)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.md").write_text(markdown)
    summary["files"] = {
        g.name: {f: {**info, "write_seconds": g.write_seconds[f]} for f, info in g.info.items()}
        for g in groups
    }
    summary["ndarrays"] = {name: dict(info) for name, info in ndarrays.items()}
    summary["goals"] = [{"met": m, "what": t} for m, t in met]
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    progress(f"wrote {out_dir / 'results.md'}, {out_dir / 'results.json'}")
    return code
