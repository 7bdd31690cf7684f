"""The child process: reads mutants through every probe, one JSON line per event.

``python -m fuzz.worker`` (with ``tests/`` on ``PYTHONPATH``) reads requests from stdin,
one JSON object a line: ``{"id", "base", "pristine", "mutant", "oracle", "skip"}``
(``skip``: numbers of probes not to run), and answers on stdout: ``{"ready": true}``
once imported, ``{"id", "at": "h5:I"|"hs:I"}`` before probe ``I`` runs in h5py or
hyperslab (so the runner knows which read hung or crashed), and ``{"id", "done": [...]}``
with one verdict per probe.  Library output goes to stderr.  Two requests exist for the
runner's own tests: ``{"id", "test": "hang"|"crash"}``.

The worker limits its address space (``FUZZ_WORKER_MEMORY``, default 4 GiB) so that a
runaway allocation raises ``MemoryError`` instead of exhausting the machine, and
turns on :mod:`faulthandler`, so a crash leaves a traceback in the runner's log.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import signal
import sys
import time
import warnings
from pathlib import Path
from typing import IO, Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter for the oracle)
import numpy as np

import hyperslab
from hyperslab.compute.indexing import search as indexed

from . import corpus, probes
from .verdict import (
    MISSING,
    QUIET,
    NotRun,
    OracleSkipped,
    canonical,
    judge,
    raised_in,
    same,
)

MEMORY_LIMIT = int(os.environ.get("FUZZ_WORKER_MEMORY", 4 << 30))


def _short(value: Any, limit: int = 240) -> str:
    text = f"{type(value).__name__}: {value}" if isinstance(value, BaseException) else repr(
        value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Reader:
    """Runs the probes of mutants of each base; keeps the undamaged bases' answers."""

    def __init__(self, out: IO[str] | None, watch: Any = None) -> None:
        self.out = out
        self.watch = watch  # called with 'h5:I'/'hs:I' instead of messages (replays)
        self._probes: dict[str, list[Any]] = {}
        self._pristine: dict[str, list[Any]] = {}
        self._inputs: dict[str, list[Any]] = {}

    def send(self, message: dict[str, Any]) -> None:
        assert self.out is not None
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def announce(self, rid: Any, at: str) -> None:
        """Say which probe runs next (the runner's timeouts and crash reports use it)."""
        if rid is not None:
            self.send({"id": rid, "at": at})
        elif self.watch is not None:
            self.watch(at)

    def probes_of(self, base: str, pristine: str) -> list[Any]:
        """The probes of ``base``; the first call also reads the undamaged file."""
        if base not in self._probes:
            recipe = corpus.BASES_BY_NAME[base]
            with h5py.File(pristine, "r") as f:
                shapes = probes.pristine_of(f, recipe)
            found = probes.probes_for(recipe, shapes)
            outcomes = self.read_hs(None, Path(pristine), found)
            self._pristine[base] = [
                MISSING if isinstance(o, BaseException) else o for o in outcomes]
            self._inputs[base] = self.read_h5(None, Path(pristine), found)[1]
            self._probes[base] = found
        return self._probes[base]

    def read_h5(self, rid: Any, path: Path, probes: list[Any],
                skip: frozenset[int] = frozenset()) -> tuple[list[Any], list[Any]]:
        """The oracle's outcomes, ``[open] + probes + [close]``, and the probes' inputs
        (None where a probe has none); probes numbered in ``skip`` are not run."""
        self.announce(rid, "h5:0")
        count = len(probes) + 2
        inputs: list[Any] = [None] * count
        try:
            f = h5py.File(path, "r")
        except Exception as exc:
            return [exc] * count, inputs
        try:  # open_file opens the root group too; h5py.File does not read its header
            f["/"]
        except Exception as exc:
            f.close()
            return [exc] * count, inputs
        outcomes: list[Any] = [None]
        try:
            for i, probe in enumerate(probes, 1):
                if i in skip:
                    outcomes.append(NotRun())
                    continue
                self.announce(rid, f"h5:{i}")
                try:
                    if probe.inputs is not None:
                        inputs[i] = probe.inputs(f)
                    outcomes.append(probe.h5(f))
                except Exception as exc:
                    outcomes.append(exc)
        finally:
            try:
                f.close()
            except Exception:
                pass
        return [*outcomes, None], inputs

    def read_hs(self, rid: Any, path: Path, probes: list[Any],
                skip: frozenset[int] = frozenset()) -> list[Any]:
        """hyperslab's outcomes: ``[open] + probes + [close]`` (``skip``: as read_h5)."""
        self.announce(rid, "hs:0")
        try:
            f = hyperslab.open_file(path, "r")
        except Exception as exc:
            return [exc] + [None] * (len(probes) + 1)
        outcomes: list[Any] = [None]
        for i, probe in enumerate(probes, 1):
            if i in skip:
                outcomes.append(NotRun())
                continue
            self.announce(rid, f"hs:{i}")
            try:
                outcomes.append(probe.hs(f))
            except Exception as exc:
                outcomes.append(exc)
        self.announce(rid, f"hs:{len(probes) + 1}")
        try:
            f.close()
            outcomes.append(None)
        except Exception as exc:
            outcomes.append(exc)
        return outcomes

    def handle(self, request: dict[str, Any]) -> None:
        """Read one mutant and send its verdicts."""
        rid = request["id"]
        if "test" in request:
            self.send({"id": rid, "at": "hs:0"})
            if request["test"] == "hang":
                time.sleep(3600)
            os.abort()
        probes = self.probes_of(request["base"], request["pristine"])
        mutant = Path(request["mutant"])
        skip = frozenset(request.get("skip", ()))
        if request["oracle"]:
            h5, inputs = self.read_h5(rid, mutant, probes, skip)
        else:
            h5 = [OracleSkipped("h5py was not run on this mutant")] * (len(probes) + 2)
            inputs = [None] * len(h5)
        hs = self.read_hs(rid, mutant, probes, skip)
        self.announce(rid, "judge:0")  # the runner allows comparisons more time
        self.send({"id": rid, "done": self.verdicts(request["base"], probes, hs, h5, inputs)})

    def verdicts(self, base: str, probes: list[Any], hs: list[Any], h5: list[Any],
                 inputs: list[Any]) -> list[dict[str, Any]]:
        """One verdict per probe, with the details of those that are not ``ok``."""
        pristine, pristine_inputs = self._pristine[base], self._inputs[base]
        opened = not isinstance(hs[0], BaseException)
        results = []
        for i, (ours, theirs) in enumerate(zip(hs, h5, strict=True)):
            if i > 0 and not opened:
                results.append({"i": i, "v": "skipped"})
                continue
            inner = 0 < i < len(hs) - 1
            path = probes[i - 1].path if inner else "open" if i == 0 else "close"
            stale = inputs[i] is not None and not same(canonical(inputs[i]),
                                                       canonical(pristine_inputs[i]))
            v = judge(path, ours, theirs, pristine[i], inner and probes[i - 1].approx, stale)
            entry: dict[str, Any] = {"i": i, "v": v}
            if isinstance(ours, BaseException) and v != "not-run":
                entry["t"] = type(ours).__name__
                entry["w"] = raised_in(ours)
            if v not in QUIET:
                entry["d"] = _short(ours)
                entry["o"] = _short(theirs)
            results.append(entry)
        return results


def main() -> int:
    """Serve requests from stdin until it closes."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # libraries print to stderr
    sys.stdout = sys.stderr
    faulthandler.enable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner stops us, not ^C
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    # Queries on the indexed column always go through the index, however few rows.
    indexed.SCAN_SHARE = float("inf")
    reader = Reader(out)
    reader.send({"ready": True})
    for line in sys.stdin:
        reader.handle(json.loads(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
