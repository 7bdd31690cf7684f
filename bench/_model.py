"""What a benchmark is and what it measured: the harness's data types.

A benchmark is a :class:`BenchmarkSpec`: its :class:`Rival` libraries, its :class:`Case`
operations and the :class:`DataInfo` of its inputs.  A run gives a
:class:`BenchmarkResult`: one :class:`Measurement` per case and rival, summarized as
:class:`Stats`.  :mod:`bench.harness` fills these in and :mod:`bench._report` writes them
out; this module imports neither.
"""

from __future__ import annotations

import dataclasses
import importlib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

Check = Any
"""A JSON-able value returned by a case, compared across rivals."""


# ----------------------------------------------------------------------------- description


@dataclasses.dataclass(frozen=True)
class Rival:
    """A library that competes in a benchmark.

    Parameters
    ----------
    name : str
        The name shown in reports (``"PyTables"``).
    modules : tuple of str
        Modules a run imports; the memory baseline process imports exactly these.
    probe : str, optional
        ``"module:attribute"`` that must exist for the rival to be available (for a
        library still being written).
    """

    name: str
    modules: tuple[str, ...]
    probe: str | None = None

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here, or None if it can."""
        for module in self.modules:
            try:
                importlib.import_module(module)
            except Exception as exc:  # any import failure makes the rival unavailable
                return f"cannot import {module}: {exc}"
        if self.probe is not None:
            module_name, _, attr = self.probe.partition(":")
            if not hasattr(importlib.import_module(module_name), attr):
                return f"{module_name} has no {attr!r} yet"
        return None


@dataclasses.dataclass(frozen=True)
class Case:
    """One measured operation.

    Parameters
    ----------
    name : str
        What is measured (``"open_close"``).
    group : str
        What it is measured on (``"LR"``, an input file); may be empty.
    params : Mapping
        JSON-able parameters passed to the target function.
    """

    name: str
    group: str = ""
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def key(self) -> str:
        """``group/name``, or ``name`` without a group."""
        return f"{self.group}/{self.name}" if self.group else self.name


@dataclasses.dataclass(frozen=True)
class DataInfo:
    """An input of a benchmark, described in the reports (a file and its size)."""

    name: str
    description: str
    nbytes: int


@dataclasses.dataclass(frozen=True)
class BenchmarkSpec:
    """Everything :func:`run_benchmark` needs to know about a benchmark.

    Parameters
    ----------
    name : str
        Short name (``"nodes"``), used for the default output folder.
    title : str
        One-line title of the reports.
    target : str
        ``"module:function"`` running one case for one rival (see the module docstring).
    rivals : sequence of Rival
        The competitors; unavailable ones are skipped with a note.
    cases : sequence of Case
        The cases, in report order.
    fresh_process : bool
        Run each repetition in a new interpreter (time and memory), else in this process
        (time only).
    baseline : str
        Name of the rival the others are compared with (ratios ``other / baseline``); if
        it is unavailable, the first available rival.
    data : sequence of DataInfo
        Inputs to describe in the reports.
    notes : sequence of str
        Free text for the reports (layouts, choices made).
    """

    name: str
    title: str
    target: str
    rivals: Sequence[Rival]
    cases: Sequence[Case]
    fresh_process: bool = True
    baseline: str = "hyperslab"
    data: Sequence[DataInfo] = ()
    notes: Sequence[str] = ()


# ----------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True)
class Stats:
    """Median, minimum and maximum of a sample."""

    median: float
    min: float
    max: float
    n: int


def summarize(values: Sequence[float]) -> Stats:
    """Return the :class:`Stats` of a non-empty sample.

    Raises
    ------
    ValueError
        If ``values`` is empty.
    """
    if not values:
        raise ValueError("cannot summarize an empty sample")
    return Stats(
        median=float(statistics.median(values)),
        min=float(min(values)),
        max=float(max(values)),
        n=len(values),
    )


def ratio(value: float | None, reference: float | None) -> float | None:
    """Return ``value / reference``, or None when either is missing or reference <= 0."""
    if value is None or reference is None or reference <= 0:
        return None
    return value / reference


@dataclasses.dataclass
class Measurement:
    """The runs of one case for one rival."""

    case: Case
    rival: str
    check: Check
    seconds: list[float] = dataclasses.field(default_factory=list)
    peak_rss: list[int] = dataclasses.field(default_factory=list)

    @property
    def time(self) -> Stats:
        """Statistics of the wall times, in seconds."""
        return summarize(self.seconds)

    @property
    def memory(self) -> Stats | None:
        """Statistics of the peak RSS in bytes (None for in-process runs)."""
        return summarize(self.peak_rss) if self.peak_rss else None


@dataclasses.dataclass
class BenchmarkResult:
    """What :func:`run_benchmark` measured, plus the context needed to read it."""

    spec: BenchmarkSpec
    repeat: int
    baseline: str
    rivals: list[str]
    skipped: dict[str, str]
    measurements: list[Measurement]
    failures: dict[str, str]
    baseline_rss: dict[str, list[int]]
    import_seconds: dict[str, list[float]]
    versions: dict[str, str]
    host: dict[str, str]
    started: str
    elapsed: float
    threads: dict[str, str] = dataclasses.field(default_factory=dict)
    """The threads each rival used (:func:`bench._threads.thread_report`)."""

    def measured(self, case: Case) -> bool:
        """Whether ``case`` was timed (it did not fail)."""
        return case.key not in self.failures

    def median_time(self, case: Case, rival: str) -> float | None:
        """The median time of ``rival`` on ``case``; None if it was not measured."""
        if not self.measured(case) or rival not in self.rivals:
            return None
        return self.get(case, rival).time.median

    def get(self, case: Case, rival: str) -> Measurement:
        """Return the measurement of ``case`` for ``rival``."""
        for m in self.measurements:
            if m.case.key == case.key and m.rival == rival:
                return m
        raise KeyError(f"no measurement of {case.key!r} for {rival!r}")

    def memory_above_baseline(self, m: Measurement) -> Stats | None:
        """Peak RSS of ``m`` minus the median baseline RSS of its rival, in bytes."""
        base = self.baseline_rss.get(m.rival)
        if not m.peak_rss or not base:
            return None
        ref = statistics.median(base)
        return summarize([p - ref for p in m.peak_rss])

    def time_ratio(self, case: Case, rival: str) -> float | None:
        """Median time of ``rival`` divided by the baseline rival's, for ``case``."""
        return ratio(self.get(case, rival).time.median, self.get(case, self.baseline).time.median)

    def memory_ratio(self, case: Case, rival: str) -> float | None:
        """Memory above baseline of ``rival`` divided by the baseline rival's."""
        mine = self.memory_above_baseline(self.get(case, rival))
        ref = self.memory_above_baseline(self.get(case, self.baseline))
        return ratio(mine.median if mine else None, ref.median if ref else None)
