"""The ``repack`` benchmark: ``hyperslab repack`` against PyTables' ``ptrepack``.

PyTables writes a source file of arrays and a table compressed with zlib (levels 1 to 5,
one per node, shuffle on): two CArrays of smooth float64 data with noise, an EArray of
int32 counts and a table of five columns (~1 GB in all by default, ~50 MB with
``--quick``).  Each rival recompresses the whole file to Blosc2 Zstd level 5 with the same
options, ``--complib blosc2:zstd --complevel 5``:

* ``hyperslab``: ``python -m hyperslab.tools.cli repack -o SRC DST``;
* ``PyTables``: the ``ptrepack`` script beside this Python (``ptrepack -o ...``).

Both run as subprocesses, timed end to end (interpreter start and imports included), in
the same run, rivals interleaved; the medians are compared.  After each run (untimed),
h5py + hdf5plugin reads every dataset of the output back and the check is the CRC-32 of
each node's bytes, so both outputs must hold the same data.  Goal: hyperslab at least 3x
faster than ptrepack.

Run ``python -m bench repack --help`` (or ``hyperslab bench repack --help``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from bench import prog_name
from bench._report import format_markdown, write_reports
from bench.harness import (
    REPO_ROOT,
    BenchmarkError,
    BenchmarkResult,
    BenchmarkSpec,
    Case,
    DataInfo,
    Rival,
    Timer,
    add_common_arguments,
    default_out_dir,
    goal_lines,
    pick,
    print_progress,
    report_outcome,
    run_benchmark,
    scratch_folder,
    with_thread_option,
)

DEFAULT_MB = 1000
QUICK_MB = 50
SEED = 20240901
OUTPUT_OPTIONS = ("--complib", "blosc2:zstd", "--complevel", "5")
"""The output filters, the same for both rivals."""
GOAL = 3.0
"""hyperslab's repack at least this many times faster than ptrepack."""
RIVALS = {"hyperslab": ("hyperslab",), "PyTables": ("tables",)}
TABLE_DTYPE = np.dtype([("id", "i8"), ("time", "f8"), ("value", "f4"), ("flag", "u1"),
                        ("code", "S7")])


# ----------------------------------------------------------------------------- the data


def _smooth(rng: np.random.Generator, rows: int, cols: int, start: int) -> np.ndarray:
    """Rows ``start..start+rows`` of smooth float64 signals with a little noise."""
    t = np.arange(start, start + rows, dtype="f8")[:, None]
    waves = np.sin(t / 300.0 + np.arange(cols) / 7.0) * 100.0
    return np.round(waves + rng.normal(0, 0.5, (rows, cols)), 3)


def write_source(path: Path, megabytes: float, seed: int = SEED) -> int:
    """Write the source file with PyTables; return its uncompressed bytes."""
    import tables

    rng = np.random.default_rng(seed)
    share = int(megabytes * 1e6) // 4  # a quarter for each of the four nodes
    cols = 64
    rows = max(share // (cols * 8), 1)
    block = 16_384
    with tables.open_file(str(path), "w", title="repack benchmark source") as f:
        group = f.create_group("/", "data", "the arrays")
        for level, name in ((1, "smooth"), (3, "wavy")):
            carr = f.create_carray(group, name, tables.Float64Atom(), (rows, cols),
                                   filters=tables.Filters(level, "zlib"))
            for lo in range(0, rows, block):
                hi = min(lo + block, rows)
                carr[lo:hi] = _smooth(rng, hi - lo, cols, lo + level)
            carr.attrs.unit = "mV"
        counts = f.create_earray(group, "counts", tables.Int32Atom(), (0, cols),
                                 filters=tables.Filters(5, "zlib"), expectedrows=rows * 2)
        for lo in range(0, rows * 2, block):
            hi = min(lo + block, rows * 2)
            counts.append(rng.poisson(20, (hi - lo, cols)).astype("i4"))
        nrows = max(share // TABLE_DTYPE.itemsize, 1)
        table = f.create_table("/", "events", TABLE_DTYPE, "events",
                               filters=tables.Filters(2, "zlib"), expectedrows=nrows)
        for lo in range(0, nrows, block * 4):
            hi = min(lo + block * 4, nrows)
            records = np.empty(hi - lo, TABLE_DTYPE)
            records["id"] = np.arange(lo, hi)
            records["time"] = np.arange(lo, hi) * 1e-3
            records["value"] = rng.normal(0, 1, hi - lo)
            records["flag"] = rng.integers(0, 4, hi - lo)
            records["code"] = np.char.mod("c%05d", np.arange(lo, hi) % 1000).astype("S7")
            table.append(records)
        return int(2 * rows * cols * 8 + 2 * rows * cols * 4 + nrows * TABLE_DTYPE.itemsize)


def node_crcs(path: str | Path) -> dict[str, int]:
    """CRC-32 of every dataset's bytes, read back with h5py + hdf5plugin."""
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    crcs: dict[str, int] = {}

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and not name.startswith("_i_"):
            crc = 0
            rows = max(1, (32 << 20) // max(obj.dtype.itemsize * int(np.prod(obj.shape[1:])), 1))
            for lo in range(0, obj.shape[0] if obj.shape else 1, rows):
                data = obj[lo:lo + rows] if obj.shape else obj[()]
                crc = zlib.crc32(np.ascontiguousarray(data).tobytes(), crc)
            crcs["/" + name] = crc

    with h5py.File(path, "r") as h5:
        h5.visititems(visit)
    return crcs


# ----------------------------------------------------------------------------- the rivals


def ptrepack_path() -> str:
    """The ``ptrepack`` script beside this Python, else the one on the PATH."""
    here = Path(sys.executable).parent / "ptrepack"
    found = str(here) if here.exists() else shutil.which("ptrepack")
    if found is None:
        raise BenchmarkError("ptrepack (PyTables' script) is not installed")
    return found


def command(rival: str, src: str, dst: str) -> list[str]:
    """The command line of ``rival`` recompressing ``src`` to ``dst``."""
    if rival == "hyperslab":
        return [sys.executable, "-m", "hyperslab.tools.cli", "repack", "--no-progress", "-o",
                *OUTPUT_OPTIONS, src, dst]
    if rival == "PyTables":
        return [ptrepack_path(), "-o", *OUTPUT_OPTIONS, src, dst]
    raise BenchmarkError(f"unknown rival {rival!r}")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(REPO_ROOT / "src"), str(REPO_ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Recompress the source with ``rival``'s tool (timed end to end); return the CRCs."""
    dst = Path(params["folder"]) / f"out-{rival}.h5"
    dst.unlink(missing_ok=True)
    argv = command(rival, params["source"], str(dst))
    with timer:
        done = subprocess.run(argv, env=_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{rival} {case}: {' '.join(argv)} failed with code "
                             f"{done.returncode}: {done.stderr.strip()[-500:]}")
    crcs = node_crcs(dst)
    dst.unlink()
    return crcs


def build_spec(source: Path, folder: Path, rivals: list[str], nbytes: int) -> BenchmarkSpec:
    """Return the benchmark description."""
    params = {"source": str(source), "folder": str(folder)}
    notes = [
        "Source: written by PyTables, zlib levels 1 to 5 with shuffle (two float64 CArrays, "
        "an int32 EArray, a 5-column table). Output: " + " ".join(OUTPUT_OPTIONS) + " for both "
        "tools, run as subprocesses and timed end to end (start-up included).",
        "Check: CRC-32 of every dataset of the output read back by h5py + hdf5plugin.",
    ]
    return BenchmarkSpec(
        name="repack",
        title="Recompress a zlib PyTables file to Blosc2 Zstd: hyperslab repack vs ptrepack",
        target="bench.repack:run_case",
        rivals=[Rival(name, RIVALS[name]) for name in rivals],
        cases=[Case("recompress", "", params)],
        fresh_process=False,  # each run is a subprocess already, timed end to end
        baseline="PyTables" if "PyTables" in rivals else rivals[0],
        data=[DataInfo("source", f"zlib 1..5, {nbytes / 1e6:.0f} MB uncompressed",
                       source.stat().st_size)],
        notes=notes,
    )


def speedup(result: BenchmarkResult) -> float | None:
    """ptrepack's median time over hyperslab's (None if either was not measured)."""
    case = result.spec.cases[0]
    ours, theirs = result.median_time(case, "hyperslab"), result.median_time(case, "PyTables")
    if not ours or not theirs:
        return None
    return theirs / ours


def goal_markdown(result: BenchmarkResult) -> str:
    """The goal line: hyperslab at least :data:`GOAL` times faster than ptrepack."""
    found = speedup(result)
    text = (f"hyperslab repack >= {GOAL:g}x ptrepack (measured "
            f"{'n/a' if found is None else f'{found:.2f}x'})")
    lines = goal_lines([(None if found is None else found >= GOAL, text)],
                       "a rival was not measured")
    return "\n".join(["## Goals", "", *lines, ""])


# ----------------------------------------------------------------------------- the CLI


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench repack``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("repack"),
        description="Recompress a zlib PyTables file to Blosc2 Zstd level 5 with "
        "`hyperslab repack` and with PyTables' `ptrepack`; compare the times.",
    )
    add_common_arguments(parser, default_repeat=3)
    parser.add_argument("--quick", action="store_true",
                        help=f"a ~{QUICK_MB} MB source instead of ~{DEFAULT_MB} MB")
    parser.add_argument("--megabytes", type=float, default=None,
                        help=f"uncompressed size of the source (default {DEFAULT_MB})")
    parser.add_argument("--tmpdir", type=Path, default=None,
                        help="folder for the files (default: the system's)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    return parser


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rivals = pick(list(RIVALS), args.rivals, "rival")
    except BenchmarkError as exc:
        parser.error(str(exc))
    megabytes = args.megabytes or (QUICK_MB if args.quick else DEFAULT_MB)
    if megabytes <= 0:
        parser.error(f"--megabytes must be positive, not {megabytes}")
    repeat = args.repeat or 3
    with scratch_folder("repack", args.tmpdir) as folder:
        source = folder / "source.h5"
        print_progress(f"writing a {megabytes:g} MB zlib source with PyTables in {folder}...")
        nbytes = write_source(source, megabytes)
        spec = build_spec(source, folder, rivals, nbytes)
        try:
            result = run_benchmark(spec, repeat, timeout=args.timeout)
        except BenchmarkError as exc:
            print(f"repack: error: {exc}", file=sys.stderr)
            return 1
        markdown = format_markdown(result) + "\n" + goal_markdown(result)
        print(markdown)
        out_dir = args.out or default_out_dir("repack")
        paths, notes = write_reports(result, out_dir, plot=not args.no_plot)
        paths["markdown"].write_text(markdown)
        return report_outcome("repack", result, paths, notes)


if __name__ == "__main__":
    sys.exit(main())
