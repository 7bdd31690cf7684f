"""``python -m fuzz run|replay`` (with ``src`` and ``tests`` on ``PYTHONPATH``).

``run`` fuzzes for ``--seconds`` (default ``$FUZZ_SECONDS`` or 300) with ``--seed``
(default ``$FUZZ_SEED`` or a random one), or ``--mutants N``, and prints the counts and
one example of every distinct failure; its exit status is 1 if anything failed.
``replay BASE SPEC`` reads one mutant in this process, printing every probe's verdict
and the traceback of hyperslab's exceptions (``--probe LABEL``: that probe only); a hang
prints the stacks after ``--probe-seconds`` and exits.  ``--worker`` reads it in a
worker process instead, exactly as a run does.
"""

from __future__ import annotations

import argparse
import faulthandler
import io
import os
import random
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

from . import campaign, corpus, layout


def _run(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else int(
        os.environ.get("FUZZ_SEED") or random.SystemRandom().randrange(2**32))
    seconds = None if args.mutants else args.seconds or float(
        os.environ.get("FUZZ_SECONDS") or 300)
    shown = [time.monotonic()]

    def progress(tally: campaign.Tally) -> None:
        if time.monotonic() - shown[0] > 15:
            shown[0] = time.monotonic()
            print(f"... {tally.mutants} mutants, {len(tally.failures)} failures, "
                  f"{len(tally.refusals)} refusals", file=sys.stderr, flush=True)

    print(f"fuzz: seed {seed}, {f'{seconds:g} s' if seconds else f'{args.mutants} mutants'}, "
          f"{args.workers} workers", file=sys.stderr, flush=True)
    tally = campaign.run(seed, count=args.mutants, seconds=seconds, workers=args.workers,
                         bases=tuple(args.bases) if args.bases else None,
                         kinds=tuple(args.kinds) if args.kinds else None,
                         probe_seconds=args.probe_seconds, progress=progress)
    print(tally.report(args.examples))
    return 1 if tally.failures else 0


def _replay(args: argparse.Namespace) -> int:
    from . import worker  # imports h5py and hyperslab
    from .mutate import parse_spec

    warnings.simplefilter("ignore")
    faulthandler.enable()
    worker.indexed.SCAN_SHARE = float("inf")
    mutation = parse_spec(args.base, args.spec)
    if args.worker:
        tally = campaign.read_in_worker(mutation, args.probe_seconds)
        print(tally.report(examples=100))
        return 1 if tally.failures else 0

    def watch(at: str) -> None:
        faulthandler.dump_traceback_later(args.probe_seconds, exit=True)

    with tempfile.TemporaryDirectory(prefix="hyperslab-replay-") as tmp:
        pristine = corpus.build(Path(tmp), (args.base,))[args.base]
        mutant = Path(tmp) / "mutant.h5"
        mutation.apply(pristine.read_bytes(), mutant)
        regions = layout.regions_of(pristine)
        for offset, data in mutation.edits:
            hit = [f"{r.kind} ({r.label})" for r in regions
                   if r.start <= offset < r.stop and r.kind not in ("anywhere", "truncate")]
            print(f"edit {offset}:{data.hex()} hits {', '.join(hit) or 'unmapped bytes'}")
        if args.keep:
            mutant.replace(args.keep)
            mutant = Path(args.keep)
        reader = worker.Reader(io.StringIO(), watch)
        probes = reader.probes_of(args.base, str(pristine))
        h5, inputs = reader.read_h5(None, mutant, probes)
        hs = reader.read_hs(None, mutant, probes)
        faulthandler.cancel_dump_traceback_later()
        base = campaign._Base(args.base, pristine, b"", {}, probes)
        for entry in reader.verdicts(args.base, probes, hs, h5, inputs):
            path, label = campaign._label(base, entry["i"])
            if args.probe and args.probe != label:
                continue
            print(f"{entry['v']:12} {path:9} {label}")
            ours = hs[entry["i"]]
            if entry["v"] not in ("ok", "skipped"):
                print(f"    h5py: {worker._short(h5[entry['i']])}")
                if isinstance(ours, BaseException):
                    print("    " + "    ".join(traceback.format_exception(ours)))
                else:
                    print(f"    hyperslab: {worker._short(ours, 2000)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="fuzz for a while")
    run.add_argument("--seconds", type=float, help="how long (default $FUZZ_SECONDS or 300)")
    run.add_argument("--mutants", type=int, help="how many mutants, instead of a duration")
    run.add_argument("--seed", type=int, help="default $FUZZ_SEED, else random")
    run.add_argument("--workers", type=int, default=2)
    run.add_argument("--bases", nargs="*", choices=sorted(corpus.BASES_BY_NAME))
    run.add_argument("--kinds", nargs="*", choices=layout.KINDS)
    run.add_argument("--probe-seconds", type=float, default=5.0,
                     help="a read that takes longer is a hang")
    run.add_argument("--examples", type=int, default=1, help="findings shown per class")
    run.set_defaults(func=_run)
    replay = commands.add_parser("replay", help="read one mutant here, with tracebacks")
    replay.add_argument("base", choices=sorted(corpus.BASES_BY_NAME))
    replay.add_argument("spec", help="the edits, as a failure's replay command gives them")
    replay.add_argument("--probe", help="show only the probe with this label")
    replay.add_argument("--probe-seconds", type=float, default=5.0)
    replay.add_argument("--keep", help="also keep the mutant file here")
    replay.add_argument("--worker", action="store_true",
                        help="read it in a worker process, as a run does (crashes and hangs "
                             "are caught and confirmed without h5py)")
    replay.set_defaults(func=_replay)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
