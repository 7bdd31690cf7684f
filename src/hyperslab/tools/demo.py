"""``hyperslab demo``: why hyperslab, in numbers, on a file it writes and keeps.

The demo writes a realistic file (a table of 2.5 million sensor readings and a 256 MiB
3-D float32 field, both Blosc2-compressed), then times on it what hyperslab is for: the
same in-kernel query scanned and with a column index, reductions on disk
(``arr.sum(axis=0)``, ``arr.mean()``), and a slice along each axis.  When PyTables is
installed, a separate interpreter reads the file with PyTables and its answers (query hits,
a slice checksum, a sum) are shown beside hyperslab's; PyTables is never imported in
hyperslab's own process.  The file is kept (``./hyperslab-demo.h5`` by default) and listed
as ``hyperslab ls`` lists it.  ``--small`` writes a file a hundred times smaller, in a
second or two (the tests use it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import hyperslab
from hyperslab.tools.ls import ls_lines

DEFAULT_PATH = "hyperslab-demo.h5"
"""Where the demo writes its file, relative to the current folder, unless told otherwise."""
QUERY = "(x > 3.0) & (x < 3.1)"
"""The in-kernel query: about 0.04 % of a standard normal column."""
SEED = 20240601
"""Seed of the demo's data, so that every run writes the same file."""


@dataclass(frozen=True)
class DemoSize:
    """How much the demo writes: rows of the table, shape of the 3-D array."""

    rows: int
    shape: tuple[int, int, int]
    chunkshape: tuple[int, int, int]


FULL = DemoSize(2_500_000, (256, 512, 512), (16, 128, 512))
"""The default: 2.5 M rows (60 MB) and a 256 MiB float32 array."""
SMALL = DemoSize(25_000, (32, 64, 128), (8, 32, 128))
"""``--small``: a few hundred kilobytes, for a quick run."""

TABLE_DTYPE = np.dtype(
    [("id", "<i8"), ("sensor", "<i2"), ("x", "<f8"), ("y", "<f4")]
)
"""Rows of the demo's table: a row number, a sensor, an indexable float and a reading."""

PYTABLES_SCRIPT = """
import json, sys
import numpy as np
import tables

path, query, i, j, k = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
out = {"version": tables.__version__}
with tables.open_file(path) as f:
    t0 = __import__("time").perf_counter()
    out["hits"] = len(f.root.readings.get_where_list(query))
    out["query_s"] = __import__("time").perf_counter() - t0
    field = f.root.field
    out["slices"] = [float(np.sum(field[i, :, :], dtype=np.float64)),
                     float(np.sum(field[:, j, :], dtype=np.float64)),
                     float(np.sum(field[:, :, k], dtype=np.float64))]
    step = field.chunkshape[0]
    out["sum"] = float(sum(np.sum(field[a:a + step], dtype=np.float64)
                           for a in range(0, field.shape[0], step)))
print(json.dumps(out))
"""
"""Run by a separate interpreter when PyTables is installed: its answers on the demo file."""


def table_rows(size: DemoSize, start: int, stop: int) -> np.ndarray:
    """Return rows ``start:stop`` of the demo's table (deterministic per row range)."""
    rng = np.random.default_rng([SEED, start])
    rows = np.empty(stop - start, dtype=TABLE_DTYPE)
    rows["id"] = np.arange(start, stop)
    rows["sensor"] = rng.integers(0, 100, stop - start)
    rows["x"] = rng.standard_normal(stop - start)
    rows["y"] = np.round(20.0 + 5.0 * rng.standard_normal(stop - start), 1)
    return rows


def field_slab(size: DemoSize, start: int, stop: int) -> np.ndarray:
    """Return planes ``start:stop`` of the 3-D field: a smooth wave with noise, in 1/64 K."""
    _, ny, nz = size.shape
    rng = np.random.default_rng([SEED, 1, start])
    z = np.sin(np.arange(start, stop, dtype=np.float32) / 20.0)[:, None, None]
    y = np.cos(np.arange(ny, dtype=np.float32) / 30.0)[None, :, None]
    x = np.sin(np.arange(nz, dtype=np.float32) / 40.0)[None, None, :]
    slab = 280.0 + 10.0 * z * y + 5.0 * x
    slab += rng.standard_normal(slab.shape, dtype=np.float32) * np.float32(0.25)
    return np.round(slab * 64.0) / np.float32(64.0)  # a sensor's 1/64 K resolution


def field_slabs(size: DemoSize) -> list[tuple[int, int]]:
    """Return the ``(start, stop)`` planes of the slabs the field is written in."""
    step = size.chunkshape[0] * 2
    return [(a, min(a + step, size.shape[0])) for a in range(0, size.shape[0], step)]


class Screen:
    """Prints the demo's lines, and the throughput of a timed step."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out

    def say(self, message: str = "") -> None:
        print(message, file=self.out, flush=True)

    def timed(self, label: str, nbytes: int, func: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``func``; print ``label``, its time and ``nbytes`` per second; return both."""
        start = time.perf_counter()
        value = func()
        seconds = time.perf_counter() - start
        rate = nbytes / max(seconds, 1e-9) / 1e6
        self.say(f"  {label:<34} {seconds:8.3f} s  {rate:9,.0f} MB/s")
        return value, seconds


def write_file(path: Path, size: DemoSize, screen: Screen) -> None:
    """Write the demo's table and array at ``path``, timing both."""
    filters = hyperslab.Filters(complevel=5, complib="blosc2:zstd", shuffle=True)
    table_bytes = size.rows * TABLE_DTYPE.itemsize
    field_bytes = int(np.prod(size.shape)) * 4
    with hyperslab.open_file(str(path), "w", title="hyperslab demo") as f:
        table = f.create_table("/", "readings", TABLE_DTYPE, "Sensor readings",
                               filters=filters, expectedrows=size.rows)
        batch = max(size.rows // 10, 1)

        def append_rows() -> None:
            for start in range(0, size.rows, batch):
                table.append(table_rows(size, start, min(start + batch, size.rows)))
            table.flush()

        screen.timed(f"table: {size.rows:,} rows, append", table_bytes, append_rows)
        field = f.create_carray("/", "field", hyperslab.Float32Atom(), size.shape,
                                "A 3-D field", filters=filters, chunkshape=size.chunkshape)
        def write_field() -> None:
            for start, stop in field_slabs(size):
                field[start:stop] = field_slab(size, start, stop)

        shape = "x".join(map(str, size.shape))
        screen.timed(f"array: {shape} float32, write", field_bytes, write_field)
    screen.say(f"  wrote {path} ({path.stat().st_size / 1e6:,.1f} MB on disk, "
               f"{(table_bytes + field_bytes) / 1e6:,.1f} MB of data; Blosc2 Zstd 5)")


def query_steps(f: Any, screen: Screen) -> dict[str, Any]:
    """Time the query scanned, build the index, time it indexed; return the answers."""
    table = f.root.readings
    nbytes = table.nrows * TABLE_DTYPE.itemsize
    screen.say(f"\nthe in-kernel query {QUERY!r} on /readings:")
    scanned, scan_s = screen.timed("scanned (no index)", nbytes,
                                   lambda: table.get_where_list(QUERY))
    index_filters = hyperslab.Filters(complevel=1, complib="blosc2:lz4")
    screen.timed("create_index(kind='full') on x", nbytes,
                 lambda: table.cols.x.create_index(kind="full", filters=index_filters))
    indexed, _ = screen.timed("indexed, first query", nbytes,
                              lambda: table.get_where_list(QUERY))
    again, index_s = screen.timed("indexed, again", nbytes, lambda: table.get_where_list(QUERY))
    same = np.array_equal(np.sort(scanned), np.sort(indexed)) and np.array_equal(indexed, again)
    x_sum = float(np.sum(table.read_coordinates(indexed, field="x"), dtype=np.float64))
    screen.say(f"  hits: {len(indexed):,} (same rows both ways: {'yes' if same else 'NO'}); "
               f"indexed is {scan_s / max(index_s, 1e-9):,.1f}x faster; "
               f"sum of their x: {x_sum:.6f}")
    return {"hits": len(indexed), "same": same}


def array_steps(f: Any, screen: Screen) -> dict[str, Any]:
    """Time reductions and a slice along each axis; return the answers."""
    field = f.root.field
    nz, ny, nx = field.shape
    nbytes = int(np.prod(field.shape)) * field.dtype.itemsize
    screen.say("\nNumPy reductions on disk, chunks decompressed in parallel, no full copy:")
    sum0, _ = screen.timed("field.sum(axis=0)", nbytes, lambda: field.sum(axis=0))
    mean, _ = screen.timed("field.mean()", nbytes, field.mean)
    total = float(np.sum(sum0, dtype=np.float64))
    screen.say(f"  sum(axis=0).sum(): {total:.6e}   mean(): {float(mean):.6f}")
    screen.say("\nslices along each axis (Blosc2 blocks decoded only where needed):")
    i, j, k = nz // 2, ny // 2, nx // 2
    slices = []
    every = slice(None)
    keys: list[tuple[Any, ...]] = [(i, every, every), (every, j, every), (every, every, k)]
    for key in keys:
        label = "field[" + ", ".join(":" if p is every else str(p) for p in key) + "]"
        plane, _ = screen.timed(label, _plane_bytes(field.shape, key), partial(_read, field, key))
        slices.append(float(np.sum(plane, dtype=np.float64)))
    screen.say("  checksums (float64 sums): " + "  ".join(f"{s:.6e}" for s in slices))
    return {"sum": total, "mean": float(mean), "slices": slices, "ijk": (i, j, k)}


def _read(leaf: Any, key: tuple[Any, ...]) -> Any:
    return leaf[key]


def _plane_bytes(shape: tuple[int, ...], key: tuple[Any, ...]) -> int:
    kept = [n for n, part in zip(shape, key, strict=True) if isinstance(part, slice)]
    return int(np.prod(kept)) * 4


def pytables_steps(path: Path, answers: dict[str, Any], screen: Screen) -> bool:
    """Read the file with PyTables in another interpreter; return whether it agrees."""
    screen.say("\nthe same file read by PyTables:")
    if importlib.util.find_spec("tables") is None:
        screen.say("  PyTables not installed (pip install tables to compare)")
        return True
    i, j, k = answers["ijk"]
    args = [sys.executable, "-c", PYTABLES_SCRIPT, str(path), QUERY, str(i), str(j), str(k)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        screen.say(f"  PyTables failed: {done.stderr.strip().splitlines()[-1:]}")
        return False
    theirs = json.loads(done.stdout.splitlines()[-1])
    checks = [
        ("query hits", answers["hits"], theirs["hits"], answers["hits"] == theirs["hits"]),
        ("slice checksums", answers["slices"], theirs["slices"],
         bool(np.allclose(answers["slices"], theirs["slices"], rtol=1e-9))),
        ("sum", answers["sum"], theirs["sum"],
         bool(np.isclose(answers["sum"], theirs["sum"], rtol=1e-5))),
    ]
    screen.say(f"  PyTables {theirs['version']}: the query took {theirs['query_s']:.3f} s "
               "(with the index hyperslab built)")
    for what, ours, pytables, ok in checks:
        screen.say(f"  {what}: PyTables {_fmt(pytables)}  hyperslab {_fmt(ours)}  "
                   f"{'same' if ok else 'DIFFERENT'}")
    return all(ok for *_, ok in checks)


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return f"{value:,}" if isinstance(value, int) else f"{value:.6e}"


def run_demo(path: str | None = None, small: bool = False, out: TextIO | None = None) -> int:
    """Run the demo, printing to ``out``; return 0 if every answer agreed, else 1.

    Parameters
    ----------
    path : str, optional
        The file to write (replaced if it exists); ``./hyperslab-demo.h5`` by default.
    small : bool
        Write a file a hundred times smaller (a second or two instead of tens of seconds).
    out : TextIO, optional
        Where to print (stdout by default).

    Returns
    -------
    int
        0 when the scanned and indexed queries found the same rows and PyTables (if
        installed) gave the same answers, else 1.
    """
    screen = Screen(out)
    size = SMALL if small else FULL
    target = Path(path or DEFAULT_PATH)
    screen.say(f"hyperslab {hyperslab.__version__} demo ({'--small' if small else 'full size'}), "
               f"{os.cpu_count()} cores\n")
    started = time.perf_counter()
    write_file(target, size, screen)
    with hyperslab.open_file(str(target), "a") as f:
        answers = query_steps(f, screen)
    with hyperslab.open_file(str(target), "r") as f:
        answers.update(array_steps(f, screen))
    agreed = pytables_steps(target, answers, screen) and answers["same"]
    screen.say(f"\n$ hyperslab ls {target}")
    with hyperslab.open_file(str(target), "r") as f:
        for line in ls_lines(f, "/", recursive=True, show_attrs=False):
            screen.say(line)
    screen.say(f"\nkept {target} ({target.stat().st_size / 1e6:,.1f} MB); "
               f"demo took {time.perf_counter() - started:.1f} s: "
               f"{'all answers agree' if agreed else 'ANSWERS DISAGREE'}")
    return 0 if agreed else 1
