"""``hyperslab demo``: write a small file, list it, read it back and check it.

Everything happens in a temporary folder that is deleted at the end; it takes a second or
two.  Each step is printed, so the output doubles as a tour of the API.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import hyperslab
from hyperslab.tools.ls import ls_lines

CARRAY_SHAPE = (1000, 200)
CARRAY_CHUNKS = (100, 200)
EARRAY_BATCHES = 3
EARRAY_BATCH_ROWS = 500


def sample_data() -> dict[str, Any]:
    """Return the arrays the demo writes (deterministic, so they can be checked)."""
    rows, cols = CARRAY_SHAPE
    y, x = np.mgrid[0:rows, 0:cols]
    temperature = np.round(280.0 + 10.0 * np.sin(x / 25.0) * np.cos(y / 40.0), 2)
    batches = [
        np.arange(
            b * EARRAY_BATCH_ROWS * 4, (b + 1) * EARRAY_BATCH_ROWS * 4, dtype=np.int32
        ).reshape(EARRAY_BATCH_ROWS, 4)
        for b in range(EARRAY_BATCHES)
    ]
    return {
        "constants": np.array([3.14159, 2.71828, 1.41421]),
        "temperature": temperature,
        "batches": batches,
        "sensors": np.array([11, 12, 13], dtype=np.int64),
    }


def write_sample(path: Path, data: dict[str, Any], say: Callable[[str], None]) -> None:
    """Write the demo file at ``path``, announcing each step with ``say``."""
    filters = hyperslab.Filters(complevel=5, complib="blosc2:zstd", shuffle=True)
    with hyperslab.open_file(str(path), mode="w", title="hyperslab demo") as f:
        say(f"open_file({path.name!r}, mode='w')")
        f.create_group("/", "measurements", "Measurements")
        f.create_group("/measurements/raw", "run1", "First run", createparents=True)
        say("create_group: /measurements and /measurements/raw/run1 (createparents=True)")
        f.create_array("/", "constants", data["constants"], "Some constants")
        say("create_array: /constants, 3 float64 (contiguous Array)")
        carray = f.create_carray(
            "/measurements",
            "temperature",
            atom=hyperslab.Float64Atom(),
            shape=CARRAY_SHAPE,
            filters=filters,
            chunkshape=CARRAY_CHUNKS,
        )
        carray[...] = data["temperature"]
        say(f"create_carray: /measurements/temperature {CARRAY_SHAPE} float64, blosc2:zstd(5)")
        earray = f.create_earray(
            "/measurements/raw/run1",
            "samples",
            atom=hyperslab.Int32Atom(),
            shape=(0, 4),
            filters=filters,
            expectedrows=EARRAY_BATCHES * EARRAY_BATCH_ROWS,
        )
        for batch in data["batches"]:
            earray.append(batch)
        say(f"create_earray: /measurements/raw/run1/samples (0, 4) int32, {EARRAY_BATCHES} appends")
        f.root._v_attrs.author = "hyperslab demo"
        carray.attrs.units = "K"
        carray.attrs.sensors = data["sensors"]
        say("attributes: /.author, temperature.units, temperature.sensors")


def check_sample(path: Path, data: dict[str, Any], say: Callable[[str], None]) -> list[str]:
    """Reopen the file read-only, compare everything with ``data``; return the failures."""
    failures = []
    with hyperslab.open_file(str(path), mode="r") as f:
        root: Any = f.root  # natural naming: attributes are found at run time
        samples: Any = f.get_node("/measurements/raw/run1/samples")
        checks = [
            ("/constants", root.constants[:], data["constants"]),
            ("/measurements/temperature", root.measurements.temperature[:], data["temperature"]),
            (
                "/measurements/temperature[250:260, 7]",
                root.measurements.temperature[250:260, 7],
                data["temperature"][250:260, 7],
            ),
            (
                "/measurements/raw/run1/samples",
                samples.read(),
                np.concatenate(data["batches"]),
            ),
            (
                "temperature.sensors",
                root.measurements.temperature.attrs.sensors,
                data["sensors"],
            ),
        ]
        for what, got, expected in checks:
            ok = np.array_equal(np.asarray(got), expected)
            say(f"read back {what}: {'ok' if ok else 'MISMATCH'}")
            if not ok:
                failures.append(what)
        for what, got, expected in [
            ("/.author", root._v_attrs.author, "hyperslab demo"),
            ("temperature.units", root.measurements.temperature.attrs.units, "K"),
        ]:
            ok = got == expected
            say(f"read back {what} = {str(got)!r}: {'ok' if ok else 'MISMATCH'}")
            if not ok:
                failures.append(what)
    return failures


def run_demo(out: TextIO | None = None, keep: bool = False) -> int:
    """Run the demo, printing to ``out``; return 0 if everything read back equal, else 1.

    Parameters
    ----------
    out : TextIO, optional
        Where to print (stdout by default).
    keep : bool
        Keep the temporary folder (its path is printed) instead of deleting it.
    """

    def say(message: str) -> None:
        print(message, file=out)

    tmp = Path(tempfile.mkdtemp(prefix="hyperslab-demo-"))
    path = tmp / "demo.h5"
    try:
        say(f"hyperslab {hyperslab.__version__} demo, in {tmp}")
        data = sample_data()
        write_sample(path, data, lambda m: say(f"  {m}"))
        say(f"\nwrote {path.name}: {path.stat().st_size:,} bytes; `hyperslab ls -a` shows:\n")
        with hyperslab.open_file(str(path), mode="r") as f:
            for line in ls_lines(f, "/", recursive=True, show_attrs=True):
                say(f"  {line}")
        say("\nreading it back:")
        failures = check_sample(path, data, lambda m: say(f"  {m}"))
    finally:
        if keep:
            say(f"\nkept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            say(f"\nremoved {tmp}")
    if failures:
        say(f"demo FAILED: {', '.join(failures)} did not read back equal")
        return 1
    say("demo OK: everything read back equal")
    return 0
