"""The benchmark harness: run named cases for several rivals and report time and memory.

A benchmark describes itself with a :class:`BenchmarkSpec`: the rivals (libraries), the cases
(a name, a group such as the input file, and JSON parameters) and one *target* function,
given as ``"module:function"``, that runs one case for one rival::

    def run_case(rival: str, case: str, params: dict, timer: Timer) -> object:
        f = open_it(params["path"])          # setup: not timed
        with timer:                          # the timed part
            result = do_the_work(f)
        f.close()                            # teardown: not timed
        return result                        # JSON-able, compared across rivals

:func:`run_benchmark` first runs every case once per rival and checks that all rivals
return the same value (so nobody is timed doing less work), then runs it ``repeat`` times,
rivals interleaved, either in this process or each run in a fresh interpreter (for opening
and memory cases).  In a fresh process it also records the peak resident memory (the RSS
high-water mark, see :func:`peak_rss_bytes`) and compares it with a baseline process that
only imports the rival's modules.  :mod:`bench._report` turns the result into JSON, a
markdown table and a PNG plot.  The description and result types are defined in
:mod:`bench._model` and importable from here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from bench._model import BenchmarkResult, BenchmarkSpec, Case, Check, Measurement, Rival

# Re-exported: the benchmarks and their tests import the whole harness from here.
from bench._model import DataInfo as DataInfo
from bench._model import Stats as Stats
from bench._model import ratio as ratio
from bench._model import summarize as summarize
from bench._report import format_markdown, format_seconds, write_reports
from bench._threads import cblosc2_builds, thread_report
from bench._threads import thread_setting as thread_setting
from hyperslab.progress import NoBar, progress_bar

BENCH_DIR = Path(__file__).resolve().parent
"""The ``bench/`` folder."""

REPO_ROOT = BENCH_DIR.parent
"""The folder that holds ``bench/`` (put on ``sys.path`` of the child processes)."""

DEFAULT_TIMEOUT = 1800.0
"""Seconds one fresh-process run may take before it is killed."""

HYPERSLAB_MODULES = ("hyperslab", "hyperslab.nodes.files.file")
"""What a hyperslab rival imports before its timing: the package and the modules of files
and nodes, which it loads on first use (h5py, hdf5plugin...), as ``import tables`` loads
PyTables' own; so that neither library's imports fall inside a timed case."""

VERSION_PACKAGES = ("hyperslab", "tables", "h5py", "hdf5plugin", "blosc2", "numpy")
"""Distributions whose versions every report lists."""

ProgressFn = Callable[[str], None]
RivalT = TypeVar("RivalT", bound="Rival")


class BenchmarkError(RuntimeError):
    """A benchmark could not run (a child process failed, no rival is available...)."""


class CheckMismatchError(BenchmarkError):
    """Two rivals returned different results for the same case."""


# ----------------------------------------------------------------------------- measuring


def peak_rss_bytes() -> int:
    """Return the peak resident memory of this process so far, in bytes.

    On Linux this is ``VmHWM`` of ``/proc/self/status``: ``getrusage``'s ``ru_maxrss``
    survives ``exec``, so a child started by a big parent would report the parent's peak
    (measured: 411 MiB in a bare interpreter started by a process holding 400 MB).
    Elsewhere, ``resource.getrusage``.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


class Timer:
    """Time one ``with`` block and record the peak RSS when it ends (``on_enter``, if
    given, is called untimed as the block starts).

    A timer is used once; using it twice, or not at all, is an error that the harness
    reports for the case that did it.
    """

    def __init__(self, on_enter: Callable[[], None] | None = None) -> None:
        self.seconds: float | None = None
        self.peak_rss: int | None = None
        self._start: float | None = None
        self._on_enter = on_enter

    def __enter__(self) -> Timer:
        if self._start is not None:
            raise BenchmarkError("a Timer can time only one block")
        if self._on_enter is not None:  # untimed: runs before the clock starts
            self._on_enter()
        self._start = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._start is not None
        self.seconds = time.perf_counter() - self._start
        self.peak_rss = peak_rss_bytes()


# ----------------------------------------------------------------------------- context


def library_versions(packages: Sequence[str] = VERSION_PACKAGES, hdf5: bool = True) -> dict:
    """Return the versions of Python, the given distributions and the HDF5 libraries.

    Parameters
    ----------
    packages : sequence of str
        Distribution names; a missing one is reported as ``"not installed"``.
    hdf5 : bool
        Also report the HDF5 library versions that h5py and PyTables are built with (they
        may differ: PyTables' wheels bundle their own HDF5).  This imports both.
    """
    import importlib.metadata

    versions = {"python": platform.python_version()}
    for package in packages:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    if hdf5:
        for label, module, attr in (
            ("HDF5 (h5py)", "h5py", "version.hdf5_version"),
            ("HDF5 (tables)", "tables", "hdf5_version"),
        ):
            try:
                value: Any = importlib.import_module(module)
                for part in attr.split("."):
                    value = getattr(value, part)
                versions[label] = str(value).split()[0]
            except Exception:  # an optional library: absent or too old to say
                continue
        versions.update(cblosc2_builds())
    return versions


def host_info() -> dict[str, str]:
    """Return a description of this machine for the reports."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": str(os.cpu_count()),
        "python": sys.version.split()[0],
    }


# ----------------------------------------------------------------------------- running


def resolve_target(target: str) -> Callable[..., Check]:
    """Import and return the function named by ``"module:function"``."""
    module_name, sep, func_name = target.partition(":")
    if not sep or not func_name:
        raise BenchmarkError(f"target {target!r} is not of the form 'module:function'")
    func: Callable[..., Check] = getattr(importlib.import_module(module_name), func_name)
    return func


def canonical(check: Check) -> str:
    """Return the JSON text of a check value, as compared across rivals."""
    return json.dumps(check, sort_keys=True, default=str)


def child_env() -> dict[str, str]:
    """The environment of a benchmark's child interpreter: this one's, with the checkout
    (which holds ``bench/``) first on ``PYTHONPATH``."""
    env = dict(os.environ)
    paths = [str(REPO_ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_in_fresh_process(
    target: str,
    rival: Rival,
    case: Case | None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Run one case (or, with ``case=None``, only the imports) in a new interpreter.

    Returns
    -------
    dict
        ``seconds``, ``peak_rss`` and ``check`` for a case; ``peak_rss`` and
        ``import_seconds`` for a baseline run.

    Raises
    ------
    BenchmarkError
        If the child fails or times out; the message holds the end of its stderr.
    """
    request = {
        "target": target,
        "modules": list(rival.modules),
        "rival": rival.name,
        "case": None if case is None else case.name,
        "params": {} if case is None else dict(case.params),
    }
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "bench._child", json.dumps(request), str(out)]
        what = f"{rival.name} {'baseline' if case is None else case.key}"
        try:
            proc = subprocess.run(
                cmd,
                cwd=REPO_ROOT,
                env=child_env(),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BenchmarkError(f"{what}: killed after {timeout:g} s") from exc
        if proc.returncode != 0 or not out.exists():
            lines = proc.stderr.strip().splitlines() or ["(no output)"]
            tail = "\n".join(lines[-15:])
            raise BenchmarkError(
                f"{what}: child exited with {proc.returncode}: {lines[-1]}\n{tail}"
            )
        result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_in_this_process(target: str, rival: Rival, case: Case) -> dict[str, Any]:
    """Run one case here; return ``seconds`` and ``check`` (no memory figure)."""
    import gc

    func = resolve_target(target)
    gc.collect()
    timer = Timer()
    check = func(rival.name, case.name, dict(case.params), timer)
    if timer.seconds is None:
        raise BenchmarkError(f"{rival.name} {case.key}: the case never used its timer")
    return {"seconds": timer.seconds, "peak_rss": None, "check": json.loads(canonical(check))}


def print_progress(message: str) -> None:
    """Default progress sink: one line on stderr, flushed."""
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _case_bar(spec: BenchmarkSpec, runner: _Runner) -> Iterator[None]:
    """A progress bar of the cases done (hyperslab's tqdm bar, only on a terminal), above
    which the runner's messages are written while it is shown."""
    bar = progress_bar(len(spec.cases), f"{spec.name}: cases", unit="case")
    said = runner.progress
    if hasattr(bar, "write"):  # a tqdm bar: messages go above it, not through it
        runner.progress = lambda message: bar.write(message, file=sys.stderr)
    runner.bar = bar
    try:
        yield
    finally:
        bar.close()
        runner.progress, runner.bar = said, NoBar()


class _Runner:
    """The loop of :func:`run_benchmark`, split out to keep each step short."""

    def __init__(
        self, spec: BenchmarkSpec, repeat: int, timeout: float, progress: ProgressFn
    ) -> None:
        self.spec = spec
        self.repeat = repeat
        self.timeout = timeout
        self.progress = progress
        self.t0 = time.perf_counter()
        self.last_message = self.t0
        self.bar: Any = NoBar()

    def say(self, message: str, *, only_if_quiet_for: float = 0.0) -> None:
        """Pass ``message`` on, unless something was said in the last seconds given."""
        now = time.perf_counter()
        if now - self.last_message >= only_if_quiet_for:
            self.progress(f"{message}  ({now - self.t0:.0f} s elapsed)")
            self.last_message = now

    def once(self, rival: Rival, case: Case) -> dict[str, Any]:
        if self.spec.fresh_process:
            return run_in_fresh_process(self.spec.target, rival, case, self.timeout)
        return run_in_this_process(self.spec.target, rival, case)

    def baselines(self, rivals: list[Rival]) -> tuple[dict, dict]:
        rss: dict[str, list[int]] = {r.name: [] for r in rivals}
        imports: dict[str, list[float]] = {r.name: [] for r in rivals}
        if not self.spec.fresh_process:
            return rss, imports
        self.say(f"measuring the baseline (interpreter + imports) of {len(rivals)} rivals")
        for _ in range(self.repeat):
            for rival in rivals:
                res = run_in_fresh_process(self.spec.target, rival, None, self.timeout)
                rss[rival.name].append(int(res["peak_rss"]))
                imports[rival.name].append(float(res["import_seconds"]))
        return rss, imports

    def measure_case(self, case: Case, rivals: list[Rival], ref_name: str) -> list[Measurement]:
        # One untimed run per rival: checks that all agree with the reference rival's
        # result, and warms the OS caches.
        found = {r.name: self.once(r, case)["check"] for r in rivals}
        for name, check in found.items():
            if canonical(check) != canonical(found[ref_name]):
                raise CheckMismatchError(
                    f"{case.key}: {name} returned {canonical(check)[:300]} but "
                    f"{ref_name} returned {canonical(found[ref_name])[:300]}"
                )
        ms = {r.name: Measurement(case, r.name, found[r.name]) for r in rivals}
        for k in range(self.repeat):
            for rival in rivals:
                self.say(
                    f"  {case.key}: run {k + 1}/{self.repeat} of {rival.name}", only_if_quiet_for=15
                )
                res = self.once(rival, case)
                if canonical(res["check"]) != canonical(found[rival.name]):
                    raise CheckMismatchError(f"{case.key}: {rival.name} changed its result")
                ms[rival.name].seconds.append(float(res["seconds"]))
                if res.get("peak_rss") is not None:
                    ms[rival.name].peak_rss.append(int(res["peak_rss"]))
        return list(ms.values())


def split_available(
    rivals: Sequence[RivalT], progress: ProgressFn
) -> tuple[list[RivalT], dict[str, str]]:
    """Return the rivals that can run here and, for the others, why not (each reported
    to ``progress``)."""
    available: list[RivalT] = []
    skipped: dict[str, str] = {}
    for rival in rivals:
        reason = rival.unavailable_reason()
        if reason is None:
            available.append(rival)
        else:
            skipped[rival.name] = reason
            progress(f"skipping {rival.name}: {reason}")
    return available, skipped


def select_rivals(spec: BenchmarkSpec, progress: ProgressFn) -> tuple[list[Rival], dict]:
    """Return the available rivals and, for the others, why they were skipped."""
    rivals, skipped = split_available(spec.rivals, progress)
    if not rivals:
        raise BenchmarkError(f"{spec.name}: no rival is available ({skipped})")
    return rivals, skipped


def run_benchmark(
    spec: BenchmarkSpec,
    repeat: int = 5,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: ProgressFn = print_progress,
    versions: Mapping[str, str] | None = None,
) -> BenchmarkResult:
    """Check, then time every case of ``spec`` for every available rival.

    Parameters
    ----------
    spec : BenchmarkSpec
        The benchmark.
    repeat : int
        Timed runs per case and rival (after one untimed checking run).
    timeout : float
        Seconds a fresh-process run may take.
    progress : callable
        Receives one line of text per step.
    versions : mapping, optional
        Library versions to report; :func:`library_versions` by default.

    A case whose rivals disagree (:class:`CheckMismatchError`) or whose run fails is not
    timed: it is recorded in ``result.failures`` and the other cases go on, so that a long
    run still reports what it measured.

    Raises
    ------
    BenchmarkError
        If no rival is available or a baseline run fails.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    rivals, skipped = select_rivals(spec, progress)
    names = [r.name for r in rivals]
    baseline = spec.baseline if spec.baseline in names else names[0]
    runner = _Runner(spec, repeat, timeout, progress)
    rss, imports = runner.baselines(rivals)
    measurements: list[Measurement] = []
    failures: dict[str, str] = {}
    with _case_bar(spec, runner):
        for i, case in enumerate(spec.cases, 1):
            try:
                found = runner.measure_case(case, rivals, baseline)
            except BenchmarkError as exc:  # its message names the case
                failures[case.key] = str(exc)
                runner.say(f"[{i}/{len(spec.cases)}] FAILED: {exc}")
                continue
            finally:
                runner.bar.update(1)
            measurements.extend(found)
            summary = ", ".join(f"{m.rival} {format_seconds(m.time.median)}" for m in found)
            runner.say(f"[{i}/{len(spec.cases)}] {case.key}: {summary}")
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
        versions=dict(library_versions() if versions is None else versions),
        host=host_info(),
        threads=thread_report(),
        started=started,
        elapsed=time.perf_counter() - runner.t0,
    )


# ----------------------------------------------------------------------------- options


def add_common_arguments(parser: argparse.ArgumentParser, default_repeat: int = 5) -> None:
    """Add the options every benchmark shares to ``parser``.

    ``--repeat N``, ``--out DIR``, ``--rivals A,B``, ``--baseline NAME``, ``--timeout S``
    and ``--blosc-nthreads N`` (applied by :func:`thread_setting` around the run).
    """
    parser.add_argument(
        "--repeat",
        type=positive_int,
        default=None,
        help=f"timed runs per case and rival (default {default_repeat})",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="output folder (default bench/results/NAME/)"
    )
    parser.add_argument("--rivals", type=comma_list, default=None, help="rivals to run")
    parser.add_argument(
        "--baseline", default=None, help="rival the others are compared with (default hyperslab)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds one fresh-process run may take (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--blosc-nthreads",
        type=positive_int,
        default=None,
        help="give every library N threads (hyperslab's pool, PyTables' and hdf5plugin's "
        "Blosc filters, python-blosc2, numexpr); default: each library's own default",
    )


def with_thread_option(main: Callable[[list[str] | None], int]) -> Callable[..., int]:
    """Decorate a benchmark's ``main(argv)`` so that it runs inside
    :func:`thread_setting` of its ``--blosc-nthreads`` (declared by
    :func:`add_common_arguments`, which also checks the value)."""

    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        args = sys.argv[1:] if argv is None else list(argv)
        found = argparse.ArgumentParser(add_help=False)
        found.add_argument("--blosc-nthreads", default=None)
        known, _ = found.parse_known_args(args)
        try:
            nthreads = None if known.blosc_nthreads is None else int(known.blosc_nthreads)
        except ValueError:
            nthreads = None  # main's own parser reports it
        if nthreads is not None and nthreads < 1:
            nthreads = None
        with thread_setting(nthreads):
            return main(args)

    return run


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def comma_list(text: str) -> list[str]:
    """argparse type: a comma-separated list of non-empty names."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"empty list: {text!r}")
    return items


def pick(available: Sequence[str], wanted: Sequence[str] | None, what: str) -> list[str]:
    """Return ``wanted`` (all of ``available`` if None), checking every name.

    Raises
    ------
    BenchmarkError
        Naming the unknown entry and the known ones.
    """
    if wanted is None:
        return list(available)
    lowered = {name.lower(): name for name in available}
    chosen = []
    for name in wanted:
        if name.lower() not in lowered:
            raise BenchmarkError(f"unknown {what} {name!r}; known: {', '.join(available)}")
        chosen.append(lowered[name.lower()])
    return chosen


def default_out_dir(name: str) -> Path:
    """``bench/results/<name>/`` of this checkout."""
    return BENCH_DIR / "results" / name


@contextlib.contextmanager
def scratch_folder(name: str, parent: Path | None = None) -> Iterator[Path]:
    """A new folder ``hyperslab-bench-<name>-*`` for a benchmark's files, in ``parent``
    (created if needed; ``--tmpdir``) or the system's temporary folder, removed with
    everything in it when the block ends, however it ends."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"hyperslab-bench-{name}-", dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_and_report(
    spec: BenchmarkSpec,
    repeat: int,
    out_dir: Path | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: ProgressFn = print_progress,
    plot: bool = True,
) -> int:
    """Run ``spec``, print the markdown report and write all reports; return an exit code.

    The markdown goes to stdout, progress and the paths written to stderr (``plot=False``:
    no PNG).  Returns 0 on success; 1 if the benchmark could not run (one-line message) or
    some cases failed (reports are still written, the failures listed on stderr).
    """
    try:
        result = run_benchmark(spec, repeat, timeout=timeout, progress=progress)
    except BenchmarkError as exc:
        print(f"{spec.name}: error: {exc}", file=sys.stderr)
        return 1
    print(format_markdown(result))
    out_dir = default_out_dir(spec.name) if out_dir is None else out_dir
    paths, notes = write_reports(result, out_dir, plot=plot)
    return report_outcome(spec.name, result, paths, notes, progress)


def speed_goal(
    result: BenchmarkResult, case: Case, ours: str, rival: str, factor: float, what: str,
    speed: Callable[[float], str], unit: str,
) -> tuple[bool | None, str]:
    """The goal "``ours`` at least ``factor`` times as fast as ``rival`` on ``case``" at
    their median times: ``(met, text)``, met None where one was not measured; the text
    gives both speeds (``speed(seconds)`` in ``unit``) and the ratio."""
    mine, theirs = result.median_time(case, ours), result.median_time(case, rival)
    if mine is None or theirs is None:
        return None, f"{what}: not measured"
    speedup = theirs / mine
    return speedup >= factor, (f"{what}: {speed(mine)} vs {speed(theirs)} {unit} "
                               f"({speedup:.2f}x)")


def goal_lines(met: Sequence[tuple[bool | None, str]], why: str) -> list[str]:
    """One ``- met: ...`` or ``- NOT MET: ...`` markdown line per measured goal of ``met``
    (``(met, text)`` pairs, met None when not measured), then how many were not measured,
    and ``why``."""
    lines = [f"- {'met' if m else 'NOT MET'}: {t}" for m, t in met if m is not None]
    if len(lines) < len(met):
        lines.append(f"- {len(met) - len(lines)} goal(s) not measured ({why})")
    return lines


def report_outcome(
    name: str,
    result: BenchmarkResult,
    paths: Mapping[str, Path],
    notes: Sequence[str],
    progress: ProgressFn = print_progress,
) -> int:
    """Tell the report's notes and the paths written, list failed cases; return an exit code.

    Returns 0, or 1 if some cases failed (listed on stderr).
    """
    for note in notes:
        progress(note)
    progress("wrote " + ", ".join(str(p) for p in paths.values()))
    if result.failures:
        print(f"{name}: {len(result.failures)} case(s) failed:", file=sys.stderr)
        for reason in result.failures.values():
            print(f"  {reason}", file=sys.stderr)
        return 1
    return 0
