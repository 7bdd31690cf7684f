"""The ``indexes`` benchmark's cases and inputs, shared by the benchmark and its report.

The index kinds of the ``create`` part (:data:`KINDS`, :func:`parse_kinds`), the hit
counts of the ``query`` part and the col4 ranges that give them (:data:`HIT_COUNTS`,
:func:`query_limits`, :func:`fitting_hits`), the cases' labels, and what the setup of
:mod:`bench.indexes` prepared (:class:`Prepared`, :class:`Built`), which
:mod:`bench._indexes_report` describes.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._indexes_ops import QUERY_COLUMN
from bench.harness import comma_list

KINDS = ("ultralight", "light", "medium", "full")
"""PyTables' index kinds."""
COLUMNS = ("col2", "col4")
"""The indexed columns of the ``create`` part: Int32 and Float64."""
HIT_COUNTS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)
START = 0.3
"""Every query's range starts at this quantile of col4."""


# ----------------------------------------------------------------------------- the data


def parse_kinds(text: str) -> list[tuple[str, int]]:
    """Parse ``--kinds``: ``medium:6,full:9`` -> ``[("medium", 6), ("full", 9)]``.

    Raises
    ------
    argparse.ArgumentTypeError
        Naming the entry that is not ``KIND:OPTLEVEL`` with a known kind and an optlevel
        from 0 to 9, or one given twice.
    """
    pairs: list[tuple[str, int]] = []
    for item in comma_list(text):
        kind, sep, level = item.partition(":")
        if not sep or kind not in KINDS or not level.isdigit() or not 0 <= int(level) <= 9:
            raise argparse.ArgumentTypeError(
                f"bad index {item!r}: want KIND:OPTLEVEL, KIND one of {', '.join(KINDS)} "
                "and OPTLEVEL from 0 to 9"
            )
        if (kind, int(level)) in pairs:
            raise argparse.ArgumentTypeError(f"index {item!r} given twice")
        pairs.append((kind, int(level)))
    return pairs


def hits_label(hits: int) -> str:
    """``1 hit``, ``10,000 hits``: the name of a query case."""
    return f"{hits:,} hit" + ("" if hits == 1 else "s")


def kind_label(kind: str, optlevel: int) -> str:
    """``full:9``."""
    return f"{kind}:{optlevel}"


def query_limits(records: Any, hit_counts: Sequence[int]) -> dict[int, dict[str, float]]:
    """Return ``{hits: {"lim1": ..., "lim2": ...}}``: ranges of col4 from the :data:`START`
    quantile holding ``hits`` rows each (exactly, col4's values being distinct).

    Raises
    ------
    ValueError
        If a hit count is below 1 or does not fit after the start.
    """
    import numpy as np

    col4 = np.sort(records[QUERY_COLUMN])
    first = int(START * len(col4))
    limits = {}
    for hits in hit_counts:
        if not 1 <= hits < len(col4) - first:
            raise ValueError(f"{hits:,} hits do not fit in {len(col4):,} rows after {START:g}")
        limits[hits] = {"lim1": float(col4[first]), "lim2": float(col4[first + hits])}
    return limits


def fitting_hits(nrows: int, wanted: Sequence[int]) -> list[int]:
    """The hit counts of ``wanted`` that :func:`query_limits` can give with ``nrows`` rows."""
    return [h for h in wanted if 1 <= h < nrows - int(START * nrows)]


# ----------------------------------------------------------------------------- setup


@dataclasses.dataclass(frozen=True)
class Built:
    """Something the setup built: a table, an index, a sorted copy or the SQLite database."""

    what: str
    library: str
    codec: str
    path: Path
    seconds: float
    nbytes: int


@dataclasses.dataclass
class Prepared:
    """The inputs of a run: the limits and expected checks, and the files built."""

    folder: Path
    nrows: int
    limits: dict[int, dict[str, float]]
    expected: dict[int, dict[str, int]]
    probes: dict[str, dict[str, Any]]
    plain: dict[str, dict[str, Path]] = dataclasses.field(default_factory=dict)
    indexed: dict[str, dict[str, Path]] = dataclasses.field(default_factory=dict)
    sqlite: Path | None = None
    sqlite_info: dict[str, Any] = dataclasses.field(default_factory=dict)
    built: list[Built] = dataclasses.field(default_factory=list)
    dropped: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def hits(self) -> dict[int, int]:
        """Wanted hit count -> the rows that match."""
        return {n: check["hits"] for n, check in self.expected.items()}
