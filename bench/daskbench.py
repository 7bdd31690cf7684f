"""The ``daskbench`` benchmark: hyperslab's arrays and tables on Dask, against Dask over h5py
and over PyTables, on the threaded scheduler and on a cluster of processes.

(Named ``daskbench``, not ``dask``: a ``bench/dask.py`` would shadow the dask library.)

Schedulers (each a harness run per part): ``threads`` (``scheduler="threads"``) and
``cluster``: ``distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
dashboard_address=None)``, started once per run, untimed.  Each timed run builds the dask
graph and computes it; opening the file is not timed.

``arrays``
    A float64 array (full: ``256 x 1024 x 1024``, 2 GiB; ``--quick``: ``32 x 512 x 512``,
    64 MiB; ``np.linspace(0, 1000, n)``) written by hyperslab three times (Blosc2 LZ4,
    Blosc2 Zstd level 5 with shuffle, no compression), chunks ``(16, 128, 256)`` in every
    file.  Cases: ``sum(axis=0)``, ``sum(axis=1)``, ``sum(axis=2)`` and
    ``(a * 2 + sin(a)).sum()``.  Every Dask rival reads the same file with the same blocks
    (whole chunks: those hyperslab's ``to_dask()`` picks at ``--block-kib``).  Rivals:
    ``hyperslab to_dask`` (``leaf.to_dask().sum(axis=k)``, whose tasks read and sum their
    blocks in one pass; the expression as ``hyperslab.Expr(...).to_dask().sum()``, whose
    tasks evaluate their blocks with numexpr and sum them tile by tile), ``hyperslab
    to_dask, Dask ops`` (``leaf.to_dask()`` in the h5py rivals' graph: the expression in
    Dask's NumPy operations; the sums are the same as the first), ``dask + h5py (lock)``
    (``da.from_array(dset, chunks=blocks, lock=True)``; on the cluster the dataset travels
    by distributed's h5py serializer), ``dask + h5py (reopen)`` (a picklable wrapper that
    opens the file once per process: :class:`bench._dask_data.H5Reopen`), and, on the
    threaded part only, ``hyperslab alone`` (``leaf.sum(axis=k)``, ``hyperslab.Expr``).
``table``
    An in-kernel query, ``(b > 0.25) & (b < 0.3) & (d > 0)`` (about 2.5% of the rows), over a
    table of four numeric columns (full: 20 M rows; ``--quick``: 1 M) written by pandas on
    PyTables (``to_hdf(format="table", data_columns=True, index=False)``, Blosc2 LZ4).  Each
    rival gives the row count and the sums of two columns of the matches, aggregated by
    the scheduler.  Rivals: ``hyperslab to_dask`` (``table.to_dask(where=...)``),
    ``dask + pd.read_hdf(where)`` (``dd.read_hdf`` has no ``where=``: pandas' where
    pushdown per partition through ``dd.from_map``), ``dd.read_hdf + filter`` and, threaded
    only, ``hyperslab read_where``.  The same partitions (whole table chunks) for all.

Checks, compared across rivals by the harness: shapes and sums to 6 significant digits,
row counts and integer sums exact.  Goals: ``hyperslab to_dask`` at least 1.5x as fast as
the fastest Dask-over-h5py rival on every array case, and 2x the fastest Dask-over-PyTables
rival on the query, on both schedulers.  Files go into a temporary folder (``--tmpdir``)
removed at the end.  Run ``python -m bench daskbench --help`` (or ``hyperslab bench
daskbench --help``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import _dask_data as data
from bench import prog_name
from bench._report import format_markdown, result_to_dict, write_reports
from bench.harness import (
    VERSION_PACKAGES,
    BenchmarkError,
    BenchmarkResult,
    BenchmarkSpec,
    Case,
    DataInfo,
    Rival,
    Timer,
    add_common_arguments,
    comma_list,
    default_out_dir,
    goal_lines,
    library_versions,
    pick,
    print_progress,
    report_outcome,
    run_benchmark,
    scratch_folder,
    split_available,
    with_thread_option,
)

NAME = "daskbench"
FULL_SHAPE, QUICK_SHAPE = (256, 1024, 1024), (32, 512, 512)
CHUNKS = (16, 128, 256)
FULL_BLOCK_KIB, QUICK_BLOCK_KIB = 32 * 1024, 8 * 1024
FULL_ROWS, QUICK_ROWS = 20_000_000, 500_000
PARTITIONS = 8
DEFAULT_REPEAT = 3
PARTS = ("arrays", "table")
SCHEDULERS = ("threads", "cluster")
CASE_ALIASES = dict(zip(("axis0", "axis1", "axis2", "expr"), data.ARRAY_CASES, strict=True))
"""Short names of the array cases for ``--cases``."""
PACKAGES = (*VERSION_PACKAGES, "dask", "distributed", "pandas")
ARRAY_GOAL, TABLE_GOAL = 1.5, 2.0
HYPERSLAB_DASK = "hyperslab to_dask"


@dataclasses.dataclass(frozen=True)
class DaskRival(Rival):
    """A rival of one part: its method (a key of :data:`bench._dask_data.ARRAY_METHODS` or
    ``TABLE_METHODS``) and whether it runs on the cluster (or only in this process)."""

    part: str = ""
    method: str = ""
    on_cluster: bool = True
    goal_rival: bool = False
    """A rival the goals compare hyperslab's ``to_dask`` with."""


_DASK, _H5 = ("dask.array",), ("h5py", "hdf5plugin", "dask.array")
_PANDAS = ("tables", "pandas", "dask.dataframe")
RIVALS = (
    DaskRival(HYPERSLAB_DASK, ("hyperslab", *_DASK), None, "arrays", "hyperslab-dask"),
    DaskRival("hyperslab to_dask, Dask ops", ("hyperslab", *_DASK), None, "arrays",
              "hyperslab-dask-ops"),
    DaskRival("dask + h5py (lock)", _H5, None, "arrays", "h5py-lock", goal_rival=True),
    DaskRival("dask + h5py (reopen)", _H5, None, "arrays", "h5py-reopen", goal_rival=True),
    DaskRival("hyperslab alone", ("hyperslab",), "hyperslab:Expr", "arrays", "hyperslab",
              on_cluster=False),
    DaskRival(HYPERSLAB_DASK, ("hyperslab", "dask.dataframe"), None, "table", "hyperslab-dask"),
    DaskRival("dask + pd.read_hdf(where)", _PANDAS, None, "table", "pandas-where",
              goal_rival=True),
    DaskRival("dd.read_hdf + filter", _PANDAS, None, "table", "read_hdf-filter",
              goal_rival=True),
    DaskRival("hyperslab read_where", ("hyperslab",), None, "table", "hyperslab",
              on_cluster=False),
)


def rival_named(part: str, name: str) -> DaskRival:
    """The rival of ``part`` called ``name``."""
    for rival in RIVALS:
        if rival.part == part and rival.name == name:
            return rival
    raise BenchmarkError(f"unknown rival {name!r} of part {part!r}")


# ----------------------------------------------------------------------------- schedulers


@dataclasses.dataclass
class Cluster:
    """The run's ``distributed`` client (None until :func:`start_cluster`)."""

    client: Any = None


_CLUSTER = Cluster()
OPENED: list[tuple[str, str, str]] = []
"""``(case key, rival, path)`` of every file a case opened (tests: all rivals read one)."""


@contextlib.contextmanager
def start_cluster() -> Iterator[Any]:
    """Start the run's ``LocalCluster`` of two one-thread worker processes (untimed)."""
    distributed: Any = importlib.import_module("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        _CLUSTER.client = client
        try:
            yield client
        finally:
            _CLUSTER.client = None


def scheduler_of(name: str) -> Any:
    """``"threads"``, or the cluster's client for ``"cluster"``."""
    if name == "threads":
        return "threads"
    if name == "cluster" and _CLUSTER.client is not None:
        return _CLUSTER.client
    raise BenchmarkError(f"scheduler {name!r} is not running (the cluster starts in main)")


# ----------------------------------------------------------------------------- the cases


@contextlib.contextmanager
def open_operand(kind: str, params: Mapping[str, Any]) -> Iterator[Any]:
    """What a method computes on: a hyperslab node, an h5py dataset, an
    :class:`~bench._dask_data.H5Reopen` or the row count."""
    path, node = params["path"], params["node"]
    if kind == "hyperslab":
        import hyperslab

        with hyperslab.open_file(path) as f:
            yield f.get_node(node)
    elif kind == "h5py":
        import h5py
        import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

        with h5py.File(path, "r") as f:
            yield f[node]
    elif kind == "reopen":
        yield data.H5Reopen(path, node, params["shape"], "float64")
    else:
        yield int(params["nrows"])


def compute(rival: DaskRival, params: Mapping[str, Any], timer: Timer) -> Any:
    """Run ``rival``'s method on the case ``params``; return the check."""
    scheduler = scheduler_of(params["scheduler"])
    if rival.part == "arrays":
        kind, func = data.ARRAY_METHODS[rival.method]
        with open_operand(kind, params) as operand, timer:
            result = func(operand, params["axis"], params["blocks"], scheduler)
        return data.array_check(result)
    kind, tfunc = data.TABLE_METHODS[rival.method]
    with open_operand(kind, params) as operand, timer:
        result = tfunc(operand, params["path"], params["rows"], scheduler)
    return data.table_check(result)


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one case for one rival (the harness's target).

    ``params``: ``part``, ``scheduler``, ``path``, ``node``, and ``axis``, ``blocks``,
    ``shape`` (arrays) or ``nrows``, ``rows`` (table).  Returns the check; raises
    :class:`BenchmarkError` naming the rival and case when it fails.
    """
    who = rival_named(params["part"], rival)
    OPENED.append((f"{params['scheduler']} {params['group']}/{case}", rival, params["path"]))
    try:
        return compute(who, params, timer)
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {params['scheduler']} {case}: "
                             f"{type(exc).__name__}: {exc}") from exc


# ----------------------------------------------------------------------------- setup


@dataclasses.dataclass
class Prepared:
    """The files of a run and what they are."""

    arrays: dict[str, Path] = dataclasses.field(default_factory=dict)
    blocks: list[int] = dataclasses.field(default_factory=list)
    table: Path | None = None
    rows: int = 0
    data: list[DataInfo] = dataclasses.field(default_factory=list)


def prepare(folder: Path, options: Options, progress: Any = print_progress) -> Prepared:
    """Write the files the chosen parts read (untimed)."""
    prepared = Prepared()
    shape = options.shape
    chunks = tuple(min(c, n) for c, n in zip(CHUNKS if options.chunks is None
                                             else options.chunks, shape, strict=True))
    if "arrays" in options.parts:
        for codec in options.codecs:
            path = folder / f"array-{codec.replace(':', '-')}.h5"
            seconds = data.write_array(path, shape, chunks, codec)
            prepared.arrays[codec] = path
            size = path.stat().st_size
            what = (f"{' x '.join(map(str, shape))} float64, {codec}, chunks "
                    f"{chunks}, written by hyperslab in {seconds:.1f} s")
            prepared.data.append(DataInfo(path.name, what, size))
            progress(f"{path.name}: {size:,} bytes ({what})")
        prepared.blocks = data.dask_blocks(next(iter(prepared.arrays.values())),
                                           options.block_kib * 1024)
    if "table" in options.parts:
        path = folder / "table.h5"
        chunkrows, seconds = data.write_table(path, options.nrows)
        prepared.table = path
        prepared.rows = data.partition_rows(options.nrows, chunkrows, PARTITIONS)
        what = (f"{options.nrows:,} rows of int64, float64, float64, int32, pandas on "
                f"PyTables, Blosc2 LZ4, {chunkrows:,} rows a chunk, written in {seconds:.1f} s")
        prepared.data.append(DataInfo(path.name, what, path.stat().st_size))
        progress(f"{path.name}: {path.stat().st_size:,} bytes ({what})")
    return prepared


def cases_of(part: str, scheduler: str, prepared: Prepared, options: Options) -> list[Case]:
    """The harness's cases of ``part`` on ``scheduler``."""
    if part == "table":
        assert prepared.table is not None
        params = {"part": part, "scheduler": scheduler, "group": "table",
                  "path": str(prepared.table), "node": data.TABLE_NODE,
                  "nrows": options.nrows, "rows": prepared.rows}
        return [Case("query", "table", params)]
    cases = []
    for codec, path in prepared.arrays.items():
        params = {"part": part, "scheduler": scheduler, "group": codec, "path": str(path),
                  "node": "/" + data.NODE, "shape": list(options.shape),
                  "blocks": prepared.blocks}
        for name in options.cases:
            cases.append(Case(name, codec, {**params, "axis": data.ARRAY_CASES[name]}))
    return cases


def build_spec(part: str, scheduler: str, rivals: Sequence[DaskRival], cases: list[Case],
               prepared: Prepared, notes: Sequence[str]) -> BenchmarkSpec:
    """The harness's description of ``part`` on ``scheduler``."""
    if part == "arrays":
        title = (f"sums of a {' x '.join(map(str, cases[0].params['shape']))} float64 array "
                 f"on Dask ({scheduler}), blocks {tuple(prepared.blocks)}")
    else:
        title = f"an in-kernel query of a table on Dask ({scheduler})"
    return BenchmarkSpec(
        name=f"{NAME} {part} {scheduler}", title=title, target="bench.daskbench:run_case",
        rivals=rivals, cases=cases, fresh_process=False, baseline=HYPERSLAB_DASK,
        data=[d for d in prepared.data if (d.name == "table.h5") == (part == "table")],
        notes=notes,
    )


def probe_cluster(folder: Path, rivals: Sequence[DaskRival]) -> dict[str, str]:
    """Run each cluster rival on tiny files on the cluster; ``{rival: why}`` of those that
    fail (h5py datasets, for one, travel only by distributed's serializer)."""
    shape, chunks = (4, 8, 8), (2, 4, 4)
    tiny = folder / "probe"
    tiny.mkdir()
    array, table = tiny / "array.h5", tiny / "table.h5"
    data.write_array(array, shape, chunks, "blosc2:lz4")
    rows = data.partition_rows(2000, data.write_table(table, 2000)[0], 2)
    failed: dict[str, str] = {}
    for rival in rivals:
        params: dict[str, Any] = {"part": rival.part, "scheduler": "cluster"}
        if rival.part == "arrays":
            params |= {"path": str(array), "node": "/a", "shape": shape, "blocks": chunks,
                       "axis": 0}
        else:
            params |= {"path": str(table), "node": data.TABLE_NODE, "nrows": 2000, "rows": rows}
        try:
            compute(rival, params, Timer())
        except Exception as exc:  # whatever fails makes the rival unavailable there
            failed[rival.name] = f"fails on the cluster: {type(exc).__name__}: {exc}"[:300]
    shutil.rmtree(tiny, ignore_errors=True)
    return failed


# ----------------------------------------------------------------------------- the CLI


def shape_type(text: str) -> tuple[int, ...]:
    """argparse type: three comma-separated positive integers."""
    try:
        values = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not N,N,N: {text!r}") from None
    if len(values) != 3 or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not three positive integers: {text!r}")
    return values


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m bench daskbench``."""
    parser = argparse.ArgumentParser(
        prog=prog_name(NAME),
        description="hyperslab's to_dask (arrays: sums along each axis and of an expression; "
        "a table: an in-kernel query) against Dask over h5py and over PyTables, on the "
        "threaded scheduler and on a LocalCluster of 2 worker processes. The baseline is "
        "hyperslab to_dask.",
    )
    add_common_arguments(parser, default_repeat=DEFAULT_REPEAT)
    parser.add_argument("--quick", action="store_true",
                        help=f"a {'x'.join(map(str, QUICK_SHAPE))} array (64 MiB), "
                        f"{QUICK_ROWS:,} rows, {QUICK_BLOCK_KIB // 1024} MiB blocks")
    parser.add_argument("--shape", type=shape_type, default=None,
                        help=f"array shape (default {','.join(map(str, FULL_SHAPE))})")
    parser.add_argument("--chunks", type=shape_type, default=None,
                        help=f"array chunks (default {','.join(map(str, CHUNKS))})")
    parser.add_argument("--block-kib", type=int, default=None,
                        help=f"Dask block size in KiB (default {FULL_BLOCK_KIB})")
    parser.add_argument("--rows", type=int, default=None,
                        help=f"table rows (default {FULL_ROWS:,})")
    parser.add_argument("--parts", type=comma_list, default=None,
                        help=f"parts (default {','.join(PARTS)})")
    parser.add_argument("--schedulers", type=comma_list, default=None,
                        help=f"schedulers (default {','.join(SCHEDULERS)})")
    parser.add_argument("--codecs", type=comma_list, default=None,
                        help=f"codecs (default {','.join(data.CODECS)})")
    parser.add_argument("--cases", type=comma_list, default=None,
                        help=f"array cases (default all: {','.join(CASE_ALIASES)})")
    parser.add_argument("--tmpdir", type=Path, default=None,
                        help="folder for the files (default: the system's)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNGs")
    return parser


@dataclasses.dataclass
class Options:
    """What :func:`main` made of the command line."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...] | None
    block_kib: int
    nrows: int
    parts: list[str]
    schedulers: list[str]
    codecs: list[str]
    cases: list[str]
    rivals: list[str] | None
    repeat: int


def parse_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    """Check the options (``parser.error`` if wrong)."""
    if args.baseline not in (None, HYPERSLAB_DASK):
        parser.error(f"--baseline is fixed here: {HYPERSLAB_DASK}")
    nrows = args.rows or (QUICK_ROWS if args.quick else FULL_ROWS)
    block_kib = args.block_kib or (QUICK_BLOCK_KIB if args.quick else FULL_BLOCK_KIB)
    if nrows < 1000 or block_kib < 1:
        parser.error(f"--rows must be >= 1000 ({nrows}), --block-kib >= 1 ({block_kib})")
    try:
        parts = pick(PARTS, args.parts, "part")
        schedulers = pick(SCHEDULERS, args.schedulers, "scheduler")
        codecs = pick(list(data.CODECS), args.codecs, "codec")
        aliases = [CASE_ALIASES.get(c, c) for c in args.cases] if args.cases else None
        cases = pick(list(data.ARRAY_CASES), aliases, "case")
        names = sorted({r.name for r in RIVALS})
        rivals = None if args.rivals is None else pick(names, args.rivals, "rival")
    except BenchmarkError as exc:
        parser.error(str(exc))
    shape = args.shape or (QUICK_SHAPE if args.quick else FULL_SHAPE)
    return Options(shape, args.chunks, block_kib, nrows, parts, schedulers, codecs, cases,
                   rivals, args.repeat or (2 if args.quick else DEFAULT_REPEAT))


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options = parse_options(parser, args)
    t0 = time.perf_counter()
    with scratch_folder(NAME, args.tmpdir) as folder:
        try:
            with contextlib.ExitStack() as stack:
                results = _run(options, folder, args.timeout, stack)
        except BenchmarkError as exc:
            print(f"{NAME}: error: {exc}", file=sys.stderr)
            return 1
        finally:
            data.close_reopened()
            _close_hyperslab_reopened()
    out_dir = default_out_dir(NAME) if args.out is None else args.out
    code = report(results, out_dir, plot=not args.no_plot)
    print_progress(f"{NAME}: {time.perf_counter() - t0:.0f} s in all")
    return code


def _close_hyperslab_reopened() -> None:
    pickling: Any = importlib.import_module("hyperslab.nodes.files.pickling")
    pickling.close_reopened_files()


def _run(options: Options, folder: Path, timeout: float,
         stack: contextlib.ExitStack) -> dict[str, BenchmarkResult]:
    wanted = [r for r in RIVALS if options.rivals is None or r.name in options.rivals]
    available, skipped = split_available(wanted, print_progress)
    if not available:
        raise BenchmarkError(f"no rival is available: {skipped}")
    print_progress("writing the files...")
    prepared = prepare(folder, options)
    failed: dict[str, str] = {}
    if "cluster" in options.schedulers:
        print_progress("starting a LocalCluster of 2 worker processes...")
        stack.enter_context(start_cluster())
        on_cluster = [r for r in available if r.on_cluster and r.part in options.parts]
        failed = probe_cluster(folder, on_cluster)
        for name, why in failed.items():
            print_progress(f"skipping {name} on the cluster: {why}")
    versions = library_versions(PACKAGES)
    results: dict[str, BenchmarkResult] = {}
    for part in options.parts:
        for scheduler in options.schedulers:
            rivals = [r for r in available if r.part == part and (
                scheduler == "threads" or (r.on_cluster and r.name not in failed))]
            if HYPERSLAB_DASK not in [r.name for r in rivals]:
                raise BenchmarkError(f"{part} {scheduler}: {HYPERSLAB_DASK} cannot run")
            notes = [*_notes(part, scheduler, prepared, options),
                     *(f"Skipped {n}: {w}." for n, w in skipped.items()),
                     *(f"Skipped {n} on the cluster: {w}." for n, w in failed.items()
                       if scheduler == "cluster" and rival_named(part, n) in available)]
            spec = build_spec(part, scheduler, rivals, cases_of(part, scheduler, prepared,
                                                                options), prepared, notes)
            print_progress(f"{part} on {scheduler}: {len(spec.cases)} cases, "
                           f"rivals {[r.name for r in rivals]}")
            results[f"{part} {scheduler}"] = run_benchmark(
                spec, options.repeat, timeout=timeout, versions=versions)
    return results


def _notes(part: str, scheduler: str, prepared: Prepared, options: Options) -> list[str]:
    where = ("threaded scheduler (dask.compute(..., scheduler='threads'))"
             if scheduler == "threads" else
             "distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1), "
             "started once per run (untimed)")
    notes = [f"Scheduler: {where}. Each run times building the graph and computing it; "
             "opening the file is not timed. Every rival of a case reads the same file."]
    if part == "arrays":
        notes.append(f"Blocks {tuple(prepared.blocks)} (whole chunks, what hyperslab's "
                     f"to_dask() picks at {options.block_kib} KiB) for every Dask rival. "
                     "Checks: shape and sum of the result to 6 significant digits.")
    else:
        notes.append(f"Query {data.WHERE!r} (pandas: {data.PANDAS_WHERE!r}); partitions "
                     f"of {prepared.rows:,} rows; each rival computes the row count and the "
                     "sums of a and c of the matches (checked: count and sum of a exact, "
                     "sum of c to 6 significant digits). dask.dataframe.read_hdf has no "
                     "where=: the pushdown rival maps pd.read_hdf(where=, start=, stop=) "
                     "over the partitions (dd.from_map).")
    if scheduler == "cluster":
        notes.append("hyperslab alone / read_where run only on the threaded part.")
    return notes


# ----------------------------------------------------------------------------- report


def goals(results: Mapping[str, BenchmarkResult]) -> list[tuple[bool | None, str]]:
    """The goals of every part and scheduler run: ``(met, text)``."""
    met: list[tuple[bool | None, str]] = []
    for key, result in results.items():
        part, scheduler = key.split()
        factor = ARRAY_GOAL if part == "arrays" else TABLE_GOAL
        others = [r for r in result.rivals if rival_named(part, r).goal_rival]
        what = "Dask over h5py" if part == "arrays" else "Dask over PyTables"
        for group in dict.fromkeys(c.group for c in result.spec.cases):
            worst: tuple[float, str] | None = None
            for case in (c for c in result.spec.cases if c.group == group):
                mine = result.median_time(case, HYPERSLAB_DASK)
                times = [t for r in others if (t := result.median_time(case, r)) is not None]
                if mine is None or not times:
                    worst = None
                    break
                speedup = min(times) / mine
                if worst is None or speedup < worst[0]:
                    worst = (speedup, case.name)
            on = "every case" if part == "arrays" else "the query"
            text = (f"{scheduler}, {group}: {HYPERSLAB_DASK} >= {factor}x the fastest "
                    f"{what} on {on}")
            if worst is None:
                met.append((None, text))
            else:
                met.append((worst[0] >= factor, f"{text} (worst: {worst[1]}, {worst[0]:.2f}x)"))
    return met


def report(results: Mapping[str, BenchmarkResult], out_dir: Path, plot: bool = True) -> int:
    """Print and write the reports of every run (``results.md``, ``summary.json`` and, per
    part and scheduler, the harness's reports in a subfolder); return an exit code."""
    sections, code = [], 0
    for key, result in results.items():
        markdown = format_markdown(result)
        sections.append(markdown)
        paths, notes = write_reports(result, out_dir / key.replace(" ", "-"), plot=plot)
        code = max(code, report_outcome(f"{NAME} {key}", result, paths, notes))
    met = goals(results)
    sections.append("\n".join(["## Goals (medians)", "",
                               *goal_lines(met, "a rival or case did not run")]))
    text = "\n\n".join(s.rstrip("\n") for s in sections) + "\n"
    print(text)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.md").write_text(text)
    summary = {
        "goals": [{"met": m, "goal": t} for m, t in met],
        "medians": {key: {c.key: {r: result.median_time(c, r) for r in result.rivals}
                          for c in result.spec.cases} for key, result in results.items()},
        "results": {key: result_to_dict(result) for key, result in results.items()},
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print_progress(f"wrote {out_dir / 'results.md'}, {out_dir / 'summary.json'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
