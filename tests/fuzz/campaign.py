"""A fuzzing run: build the bases, draw mutants, read them in the pool, tally verdicts.

Mutant ``n`` of a run with seed ``s`` damages base and kind number ``n`` of the cycle of
every (base, mutation kind) pair that applies, drawn from ``default_rng([s, n])``; so a
run of ``len(cycle) * k`` mutants covers every pair ``k`` times, and every read path of
each base.  Before any mutant, the undamaged bases are read: every probe must agree
with h5py there, or the harness itself is wrong (:class:`HarnessError`).
"""

from __future__ import annotations

import itertools
import shlex
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (the Blosc2 filter, for the probes' h5py side)
import numpy as np

from . import corpus, layout, probes
from .mutate import Mutation, draw
from .pool import Job, Pool, Result
from .verdict import FAILURES, QUIET

HANG_REPEATS = 1
"""Hangs of a read path on mutants of one base and kind after which later mutants of that
base and kind skip the path (its hang is a failure already)."""


class HarnessError(AssertionError):
    """The undamaged bases do not read the same in hyperslab and h5py, or the comparison
    of some mutant's answers crashed or hung."""


@dataclass(frozen=True)
class Finding:
    """One probe of one mutant that did not come out ``ok``."""

    verdict: str
    path: str
    label: str
    mutation: Mutation
    error_type: str = ""
    where: str = ""
    detail: str = ""
    oracle: str = ""

    @property
    def replay(self) -> str:
        return (f"PYTHONPATH=src:tests python -m fuzz replay {self.mutation.base} "
                f"{shlex.quote(self.mutation.spec)} --probe {shlex.quote(self.label)}")

    @property
    def fault_class(self) -> tuple[str, ...]:
        """What tells distinct faults apart: the verdict, and the exception's type and
        where hyperslab raised it, or for values whether they describe the hierarchy or
        hold data, and the mutation kind, or for crashes and hangs the read path."""
        if self.verdict.startswith(("wrong", "stale")):
            what = "hierarchy" if self.path in ("open", "walk", "attrs", "info") else "data"
            return self.verdict, what, self.mutation.kind
        if self.verdict.startswith(("crash", "hang")):
            return self.verdict, self.path
        return self.verdict, self.error_type, self.where

    def describe(self) -> str:
        lines = [f"{self.verdict}: {self.path} {self.label}",
                 f"  mutation: {self.mutation.describe()}"]
        if self.detail:
            lines.append(f"  hyperslab: {self.detail}"
                         + (f"  (raised in {self.where})" if self.where else ""))
        if self.oracle:
            lines.append(f"  h5py:      {self.oracle}")
        lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


@dataclass
class Tally:
    """Counts of a run."""

    seed: int
    mutants: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    by_kind: defaultdict[str, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter))
    by_path: defaultdict[str, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter))
    error_types: Counter[str] = field(default_factory=Counter)
    oracle_failures: int = 0
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict in FAILURES]

    @property
    def refusals(self) -> list[Finding]:
        return [f for f in self.findings if f.verdict == "refusal"]

    def classes(self, verdicts: tuple[str, ...] = FAILURES) -> dict[tuple[str, ...],
                                                                   list[Finding]]:
        """Findings of these verdicts grouped by :attr:`Finding.fault_class`."""
        groups: dict[tuple[str, ...], list[Finding]] = defaultdict(list)
        for finding in self.findings:
            if finding.verdict in verdicts:
                groups[finding.fault_class].append(finding)
        return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))

    def report(self, examples: int = 1) -> str:
        """The counts, then one example of each distinct class of failure."""
        probes_run = sum(self.verdicts.values())
        lines = [f"fuzz seed {self.seed}: {self.mutants} mutants, {probes_run} reads in "
                 f"{self.seconds:.1f} s; oracle (h5py) crashes/hangs: {self.oracle_failures}",
                 "verdicts: " + _counts(self.verdicts),
                 "mutants per kind: " + _counts(self.kinds)]
        lines.append("per kind:")
        lines += [f"  {kind:20} {_counts(c)}" for kind, c in sorted(self.by_kind.items())]
        lines.append("per read path:")
        lines += [f"  {path:20} {_counts(c)}" for path, c in sorted(self.by_path.items())]
        lines.append("hyperslab exception types: " + _counts(self.error_types))
        failures = self.classes()
        lines.append(f"failures: {len(self.failures)} in {len(failures)} classes "
                     f"(crash {self.verdicts['crash']}, hang {self.verdicts['hang']}, "
                     f"unexpected {self.verdicts['unexpected']}, wrong "
                     f"{self.verdicts['wrong']}, wrong-silent "
                     f"{self.verdicts['wrong-silent']}); refusals: {len(self.refusals)} "
                     f"in {len(self.classes(('refusal',)))} classes")
        for title, groups in (("FAILURE", failures), ("REFUSAL", self.classes(("refusal",)))):
            for key, found in groups.items():
                kinds = sorted({f.mutation.kind for f in found})
                paths = sorted({f.path for f in found})
                lines.append(f"--- {title} class {' / '.join(k for k in key if k)}: "
                             f"{len(found)} reads of {len({f.mutation for f in found})} "
                             f"mutants; kinds {', '.join(kinds)}; paths {', '.join(paths)}")
                lines += [finding.describe() for finding in found[:examples]]
        return "\n".join(lines)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.most_common()) or "-"


@dataclass
class _Base:
    name: str
    path: Path
    data: bytes
    regions: dict[str, list[layout.Region]]
    probes: list[probes.Probe]


def prepare(directory: Path, names: tuple[str, ...] | None = None) -> dict[str, _Base]:
    """Build the bases (all, or those named) in ``directory`` and map their regions."""
    paths = corpus.build(directory, names)
    bases = {}
    for name, path in paths.items():
        by_kind: dict[str, list[layout.Region]] = defaultdict(list)
        for region in layout.regions_of(path):
            if region.stop > region.start:
                by_kind[region.kind].append(region)
        recipe = corpus.BASES_BY_NAME[name]
        with h5py.File(path, "r") as f:
            found = probes.probes_for(recipe, probes.pristine_of(f, recipe))
        bases[name] = _Base(name, path, path.read_bytes(), dict(by_kind), found)
    return bases


def cycle(bases: dict[str, _Base], kinds: tuple[str, ...] | None = None) -> list[tuple[str,
                                                                                       str]]:
    """Every (base, kind) pair a run cycles through."""
    return [(name, kind) for name, base in bases.items() for kind in layout.KINDS
            if kind in base.regions and (kinds is None or kind in kinds)]


def _label(base: _Base, index: int) -> tuple[str, str]:
    if index == 0:
        return "open", "open_file(path, 'r')"
    if index == len(base.probes) + 1:
        return "close", "File.close()"
    probe = base.probes[index - 1]
    return probe.path, probe.label


class Campaign:
    """The state of a run; :func:`run` drives it."""

    def __init__(self, seed: int, bases: dict[str, _Base], directory: Path,
                 kinds: tuple[str, ...] | None, progress: Callable[[Tally], None] | None
                 ) -> None:
        self.tally = Tally(seed)
        self.bases = bases
        self.directory = directory
        self.pairs = cycle(bases, kinds)
        self.progress = progress
        self.harness_failures: list[str] = []
        self.hangs: Counter[tuple[str, str, str]] = Counter()  # (base, kind, read path)

    def _skip(self, name: str, kind: str) -> list[int]:
        """The probes of read paths that hung on mutants of this base and kind: later
        ones do not run them (each hang costs a timeout and a new worker)."""
        base = self.bases[name]
        hung = {path for (b, k, path), count in self.hangs.items()
                if (b, k) == (name, kind) and count >= HANG_REPEATS}
        return [i for i in range(1, len(base.probes) + 1) if _label(base, i)[0] in hung]

    def jobs(self, count: int | None, deadline: float | None) -> Iterator[Job]:
        for name, base in self.bases.items():  # the undamaged bases first
            yield Job(-1, {"base": name, "pristine": str(base.path), "mutant": str(base.path),
                           "oracle": True}, None)
        for number in itertools.count():
            if (count is not None and number >= count) or (
                    deadline is not None and time.monotonic() > deadline):
                return
            name, kind = self.pairs[number % len(self.pairs)]
            base = self.bases[name]
            rng = np.random.default_rng([self.tally.seed, number])
            mutation = draw(rng, name, kind, base.regions[kind], base.data)
            mutant = self.directory / f"mutant-{number}.h5"
            mutation.apply(base.data, mutant)
            yield Job(number, {"base": name, "pristine": str(base.path),
                               "mutant": str(mutant), "oracle": True,
                               "skip": self._skip(name, kind)}, mutation)

    def on_result(self, result: Result) -> list[Job]:
        job = result.job
        base = self.bases[job.request["base"]]
        if job.payload is None:
            self._check_pristine(base, result)
            return []
        mutation: Mutation = job.payload
        if result.at.startswith("judge"):
            self.harness_failures.append(f"comparing the answers of {mutation.describe()} "
                                          f"failed: {result.failure} {result.detail}")
            return []
        index = int(result.at.split(":")[1]) if ":" in result.at else 0
        oracle_failed = result.at.startswith("h5")
        if job.request["oracle"] and (oracle_failed or result.failure == "crash"):
            # h5py crashed or hung (not hyperslab's fault), or hyperslab crashed right
            # after h5py read the mutant in the same process, which may have corrupted it
            # (HDF5 writes past its buffers on some damaged headers): read it without h5py.
            if oracle_failed:
                self.tally.oracle_failures += 1
            return [Job(job.number, {**job.request, "oracle": False}, mutation,
                        f"{result.failure}:{index}" if oracle_failed else "",
                        confirming=not oracle_failed)]
        if job.confirming and result.failure is None:
            self.tally.oracle_failures += 1  # the failure needed h5py's read before it
        self.tally.mutants += 1
        self.tally.kinds[mutation.kind] += 1
        if result.failure is not None:
            path, label = _label(base, index)
            verdict = result.failure
            if job.oracle_failed == f"{verdict}:{index}":
                verdict += "-shared"  # h5py failed the same way on the same read
            elif verdict == "hang":
                self.hangs[mutation.base, mutation.kind, path] += 1
            self._count(mutation.kind, path, verdict)
            self.tally.findings.append(Finding(verdict, path, label, mutation,
                                               detail=result.detail))
        else:
            for entry in result.verdicts or []:
                self._record(base, mutation, entry)
        Path(job.request["mutant"]).unlink(missing_ok=True)
        if self.progress is not None:
            self.progress(self.tally)
        return []

    def _count(self, kind: str, path: str, verdict: str) -> None:
        self.tally.verdicts[verdict] += 1
        self.tally.by_kind[kind][verdict] += 1
        self.tally.by_path[path][verdict] += 1

    def _record(self, base: _Base, mutation: Mutation, entry: dict[str, Any]) -> None:
        path, label = _label(base, entry["i"])
        verdict = entry["v"]
        self._count(mutation.kind, path, verdict)
        if entry.get("t"):
            self.tally.error_types[entry["t"]] += 1
        if verdict not in QUIET and verdict != "unverified":
            self.tally.findings.append(Finding(
                verdict, path, label, mutation, entry.get("t", ""), entry.get("w", ""),
                entry.get("d", ""), entry.get("o", "")))

    def _check_pristine(self, base: _Base, result: Result) -> None:
        if result.failure is not None:
            self.harness_failures.append(f"{base.name}: {result.failure} at {result.at}: "
                                          f"{result.detail}")
            return
        for entry in result.verdicts or []:
            if entry["v"] != "ok":
                _, label = _label(base, entry["i"])
                self.harness_failures.append(f"{base.name} {label}: {entry}")


def read_in_worker(mutation: Mutation, probe_seconds: float = 5.0) -> Tally:
    """Read one mutant as a run does (a worker, h5py first, crash and hang handling)."""
    with tempfile.TemporaryDirectory(prefix="hyperslab-fuzz-") as tmp:
        work = Path(tmp)
        bases = prepare(work / "bases", (mutation.base,))
        campaign = Campaign(0, bases, work, None, None)
        base = bases[mutation.base]
        mutant = work / "mutant-0.h5"
        mutation.apply(base.data, mutant)
        job = Job(0, {"base": mutation.base, "pristine": str(base.path), "mutant": str(mutant),
                      "oracle": True}, mutation)
        pool = Pool(1, work, probe_seconds)
        try:
            pool.run(iter([job]), campaign.on_result)
        finally:
            pool.close()
    return campaign.tally


def run(seed: int, count: int | None = None, seconds: float | None = None, workers: int = 2,
        bases: tuple[str, ...] | None = None, kinds: tuple[str, ...] | None = None,
        probe_seconds: float = 5.0, directory: Path | None = None,
        progress: Callable[[Tally], None] | None = None) -> Tally:
    """Fuzz ``count`` mutants, or as many as ``seconds`` allow; return the tally.

    Raises
    ------
    HarnessError
        If an undamaged base does not read the same in hyperslab and h5py.
    """
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hyperslab-fuzz-",
                                     dir=directory) as tmp:
        work = Path(tmp)
        (work / "bases").mkdir()
        campaign = Campaign(seed, prepare(work / "bases", bases), work, kinds, progress)
        pool = Pool(workers, work, probe_seconds)
        deadline = None if seconds is None else start + seconds
        try:
            pool.run(campaign.jobs(count, deadline), campaign.on_result)
        finally:
            pool.close()
    if campaign.harness_failures:
        raise HarnessError("the harness failed (the undamaged bases read differently in "
                           "hyperslab and h5py, or comparing answers crashed or hung):\n"
                           + "\n".join(campaign.harness_failures))
    campaign.tally.seconds = time.monotonic() - start
    return campaign.tally
