"""The ``direct`` benchmark: regular vs direct-chunking writes and reads of Blosc2 images.

This is the tomography experiment of "Peaking compression performance in PyTables with
direct chunking" (Vilata-i-Balaguer, 2024) and of PyTables' optimization guide ("Avoiding
filter pipeline overhead with direct chunking"), scaled to this machine: a stack of
``nimages`` greyscale ``uint16`` images of ``height x width`` pixels (default 10 x 4096 x
4096, 320 MiB), stored in an extendable dataset with one image per chunk (chunkshape
``(1, height, width)``) and compressed with Blosc2 + Zstd level 5 with byte shuffle.

Six rivals work on the same images, in the same run:

===================  =====================================================================
rival                what it does per image ``c``
===================  =====================================================================
hyperslab regular    write ``arr.append(img[None])``; read ``arr[c]``
hyperslab direct     ``arr.truncate(n)`` once, then ``arr.write_chunk((c, 0, 0), frame)``
                     with ``frame = blosc2.asarray(img[None], ...).to_cframe()``; read
                     ``blosc2.ndarray_from_cframe(arr.read_chunk((c, 0, 0)))[:]``
PyTables regular     as hyperslab regular, with ``tables``
PyTables direct      as hyperslab direct, with ``tables``
h5py regular         write ``dset.resize(c + 1, axis=0); dset[c] = img``; read ``dset[c]``
                     (``hdf5plugin.Blosc2`` filter)
h5py direct          ``dset.resize(n, axis=0)`` once, then
                     ``dset.id.write_direct_chunk((c, 0, 0), frame)``; read
                     ``dset.id.read_direct_chunk((c, 0, 0))`` and the same blosc2 decoding
===================  =====================================================================

Regular writes append image by image, the idiomatic way of filling an EArray (the spec's
``arr[c] = img`` needs the array grown first, which is what ``truncate`` is for in the
direct rivals).  A write run covers the loop and a flush (creating the file and the empty
dataset is not timed); a read run covers the loop (opening is not timed).  Each run returns
the CRC-32 of every image: for writes, of the file read back with h5py + hdf5plugin after
the timing, so every rival is checked by the same independent reader.

The images are smooth, moving blobs with shot-like noise (Gaussian, variance equal to the
signal), different for each image and deterministic; they compress 2.2x (direct frames) to
2.5x (through the HDF5 filter, whose blocks differ).

Run ``python -m bench direct --help`` (or ``hyperslab bench direct --help``) for the options.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import sys
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._report import format_markdown, write_reports
from bench.harness import (
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
    pick,
    print_progress,
    report_outcome,
    run_benchmark,
    scratch_folder,
    with_thread_option,
)

DEFAULT_IMAGES = 10
DEFAULT_SIZE = 4096
QUICK_IMAGES = 10
QUICK_SIZE = 1024
SEED = 20240826
"""Seed of the images (the spec's publication date)."""

NODE = "images"
"""Name of the dataset in every file (``/images``)."""

CLEVEL = 5
CASES = ("write", "read")
GB = 1e9


# ----------------------------------------------------------------------------- the rivals


@dataclasses.dataclass(frozen=True)
class Approach:
    """How a rival accesses the file: which library, and the direct-chunking API or not."""

    library: str  # "hyperslab", "tables" or "h5py"
    direct: bool


APPROACHES = {
    "hyperslab regular": Approach("hyperslab", False),
    "hyperslab direct": Approach("hyperslab", True),
    "PyTables regular": Approach("tables", False),
    "PyTables direct": Approach("tables", True),
    "h5py regular": Approach("h5py", False),
    "h5py direct": Approach("h5py", True),
}
DEFAULT_BASELINE = "PyTables direct"


@dataclasses.dataclass(frozen=True)
class DirectRival(Rival):
    """A rival that is available only if it writes and reads a tiny stack correctly.

    The hyperslab rivals' APIs are written while this benchmark exists: a rival whose
    calls fail, or give wrong data, is skipped with the reason instead of failing the
    cases of all rivals.
    """

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here (import or smoke test), or None."""
        reason = super().unavailable_reason()
        return reason if reason is not None else smoke_test(self.name)


def _modules(approach: Approach) -> tuple[str, ...]:
    base = ("h5py", "hdf5plugin") if approach.library == "h5py" else (approach.library,)
    return (*base, "blosc2") if approach.direct else base


RIVALS = tuple(DirectRival(name, _modules(a)) for name, a in APPROACHES.items())


# ----------------------------------------------------------------------------- the images


def make_image(index: int, height: int, width: int, seed: int = SEED) -> Any:
    """Return image ``index`` of the stack: ``uint16``, ``height x width``, deterministic.

    A dim background (60 counts) with five Gaussian blobs that turn around the centre from
    one image to the next (a sample seen from another angle), plus noise whose variance is
    the signal (like photon shot noise), rounded and clipped to ``uint16``.
    """
    import numpy as np

    rng = np.random.default_rng((seed, index))
    y = np.linspace(-1.0, 1.0, height, dtype=np.float32)
    x = np.linspace(-1.0, 1.0, width, dtype=np.float32)
    angle = 2 * math.pi * index / 10
    field = np.full((height, width), 60.0, dtype=np.float32)
    for j in range(5):
        cx = 0.45 * math.cos(angle + 1.7 * j) * (0.3 + 0.15 * j)
        cy = 0.4 * math.sin(angle + 1.3 * j) * (0.4 + 0.1 * j)
        radius = 0.12 + 0.08 * j
        gy = np.exp(-(((y - cy) / radius) ** 2)) * np.float32(1500 / (j + 1))
        gx = np.exp(-(((x - cx) / radius) ** 2))
        field += np.outer(gy, gx)  # a separable 2-D Gaussian
    noise = rng.standard_normal((height, width), dtype=np.float32)
    noise *= np.sqrt(field)
    field += noise
    np.rint(field, out=field)
    np.clip(field, 0, 65535, out=field)
    return field.astype(np.uint16)


_IMAGES: dict[str, Any] = {}
"""The stacks already loaded in this process, by path (runs in one process share them)."""


def write_images(path: Path, nimages: int, height: int, width: int, seed: int = SEED) -> Any:
    """Write the stack of ``nimages`` images to ``path`` (``.npy``) and return it."""
    import numpy as np

    stack = np.empty((nimages, height, width), dtype=np.uint16)
    for i in range(nimages):
        stack[i] = make_image(i, height, width, seed)
    np.save(path, stack)
    _IMAGES[str(path)] = stack
    return stack


def load_images(path: str) -> Any:
    """Return the stack saved at ``path``, loading it once per process."""
    import numpy as np

    if path not in _IMAGES:
        _IMAGES[path] = np.load(path)
    return _IMAGES[path]


def crc32s(arrays: Sequence[Any]) -> list[int]:
    """Return the CRC-32 of the bytes of each array (C order)."""
    import numpy as np

    return [zlib.crc32(np.ascontiguousarray(a).data) for a in arrays]


def encode(image: Any) -> bytes:
    """Return ``image`` as a Blosc2 b2nd frame of one chunk, Zstd level 5 (the spec's call)."""
    import blosc2

    cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=CLEVEL)
    frame: bytes = blosc2.asarray(
        image[None], chunks=(1, *image.shape), cparams=cparams
    ).to_cframe()
    return frame


def decode(frame: bytes) -> Any:
    """Return the array held by a b2nd frame."""
    import blosc2

    return blosc2.ndarray_from_cframe(frame)[:]


# ----------------------------------------------------------------------------- the cases


def _pytables_write(lib: Any, path: str, images: Any, direct: bool, timer: Timer) -> None:
    nimages, height, width = images.shape
    with lib.open_file(path, mode="w") as f:
        arr = f.create_earray(
            "/",
            NODE,
            atom=lib.UInt16Atom(),
            shape=(0, height, width),
            filters=lib.Filters(complib="blosc2:zstd", complevel=CLEVEL),
            chunkshape=(1, height, width),
            expectedrows=nimages,
        )
        with timer:
            if direct:
                arr.truncate(nimages)
                for c in range(nimages):
                    arr.write_chunk((c, 0, 0), encode(images[c]))
            else:
                for c in range(nimages):
                    arr.append(images[c][None])
            f.flush()


def _h5py_write(path: str, images: Any, direct: bool, timer: Timer) -> None:
    import h5py
    import hdf5plugin

    nimages, height, width = images.shape
    with h5py.File(path, "w") as f:
        dset = f.create_dataset(
            NODE,
            shape=(0, height, width),
            maxshape=(None, height, width),
            chunks=(1, height, width),
            dtype=images.dtype,
            **hdf5plugin.Blosc2(cname="zstd", clevel=CLEVEL, filters=hdf5plugin.Blosc2.SHUFFLE),
        )
        with timer:
            if direct:
                dset.resize(nimages, axis=0)
                for c in range(nimages):
                    dset.id.write_direct_chunk((c, 0, 0), encode(images[c]))
            else:
                for c in range(nimages):
                    dset.resize(c + 1, axis=0)
                    dset[c] = images[c]
            f.flush()


def _pytables_read(lib: Any, path: str, direct: bool, timer: Timer) -> list[Any]:
    with lib.open_file(path, mode="r") as f:
        arr = f.get_node("/" + NODE)
        nimages = arr.shape[0]
        with timer:
            if direct:
                out = [decode(arr.read_chunk((c, 0, 0))) for c in range(nimages)]
            else:
                out = [arr[c] for c in range(nimages)]
    return out


def _h5py_read(path: str, direct: bool, timer: Timer) -> list[Any]:
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    with h5py.File(path, "r") as f:
        dset = f[NODE]
        nimages = dset.shape[0]
        with timer:
            if direct:
                out = [decode(dset.id.read_direct_chunk((c, 0, 0))[1]) for c in range(nimages)]
            else:
                out = [dset[c] for c in range(nimages)]
    return out


def write_stack(rival: str, path: str, images: Any, timer: Timer) -> None:
    """Write ``images`` to a new file at ``path`` the way ``rival`` does (see the docstring)."""
    approach = APPROACHES[rival]
    if approach.library == "h5py":
        _h5py_write(path, images, approach.direct, timer)
    else:
        lib = importlib.import_module(approach.library)
        _pytables_write(lib, path, images, approach.direct, timer)


def read_stack(rival: str, path: str, timer: Timer) -> list[Any]:
    """Read every image of the file at ``path`` the way ``rival`` does; return them."""
    approach = APPROACHES[rival]
    if approach.library == "h5py":
        return _h5py_read(path, approach.direct, timer)
    lib = importlib.import_module(approach.library)
    return _pytables_read(lib, path, approach.direct, timer)


def file_crc32s(path: str) -> list[int]:
    """Return the CRC-32 of each image of the file at ``path``, read by h5py + hdf5plugin."""
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    with h5py.File(path, "r") as f:
        dset = f[NODE]
        return crc32s([dset[c] for c in range(dset.shape[0])])


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Write or read the image stack for one rival (the harness's target function).

    Parameters
    ----------
    rival : str
        One of :data:`APPROACHES`.
    case : str
        ``"write"`` (a new file at ``params["files"][rival]``) or ``"read"`` (the file
        there, written beforehand by one of the rivals: every rival reads the same one).
    params : dict
        ``source`` (the ``.npy`` stack) and ``files`` (``{rival: path}``).
    timer : Timer
        Times the loop over the images (and the flush, for writes).

    Returns
    -------
    dict
        ``{"crc32": [...]}``, one per image: of the images read, or of the file written
        (read back by h5py + hdf5plugin after the timing).

    Raises
    ------
    BenchmarkError
        For an unknown rival or case, or when the rival's library fails (named).
    """
    if rival not in APPROACHES:
        raise BenchmarkError(f"unknown rival {rival!r}; known: {', '.join(APPROACHES)}")
    if case not in CASES:
        raise BenchmarkError(f"unknown case {case!r}; known: {', '.join(CASES)}")
    path = params["files"][rival]
    try:
        if case == "write":
            write_stack(rival, path, load_images(params["source"]), timer)
            return {"crc32": file_crc32s(path)}
        return {"crc32": crc32s(read_stack(rival, path, timer))}
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {case}: {type(exc).__name__}: {exc}") from exc


def smoke_test(rival: str) -> str | None:
    """Write and read a tiny stack as ``rival``; return what went wrong, or None."""
    import numpy as np

    images = [make_image(i, 8, 12) for i in range(2)]
    stack = np.stack(images)
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-direct-smoke-") as tmp:
        path = str(Path(tmp) / "smoke.h5")
        try:
            write_stack(rival, path, stack, Timer())
            got = read_stack(rival, path, Timer())
            written = file_crc32s(path)
        except Exception as exc:  # whatever the library raises makes the rival unavailable
            return f"smoke test failed: {type(exc).__name__}: {exc}"
    expected = crc32s(images)
    if crc32s(got) != expected or written != expected:
        return "smoke test failed: the data read back differs from the data written"
    return None


# ----------------------------------------------------------------------------- setup


def prepare_files(
    rivals: Sequence[str], source: Path, folder: Path, progress: Any = print_progress
) -> tuple[dict[str, Path], dict[str, str]]:
    """Write the file each rival reads in the ``read`` case; check it with h5py.

    Returns
    -------
    files : dict
        ``{rival: path}`` of the files written and found correct.
    dropped : dict
        ``{rival: reason}`` for the rivals that failed (they are left out of the run).
    """
    images = load_images(str(source))
    expected = crc32s(images)
    files: dict[str, Path] = {}
    dropped: dict[str, str] = {}
    for k, rival in enumerate(rivals):
        path = folder / f"read-{k}.h5"
        timer = Timer()
        try:
            write_stack(rival, str(path), images, timer)
            ok = file_crc32s(str(path)) == expected
        except Exception as exc:  # a failing rival is dropped, the others go on
            dropped[rival] = f"writing the read file failed: {type(exc).__name__}: {exc}"
            progress(f"dropping {rival}: {dropped[rival]}")
            continue
        if not ok:
            dropped[rival] = "the file it wrote does not hold the images (h5py read-back)"
            progress(f"dropping {rival}: {dropped[rival]}")
            continue
        assert timer.seconds is not None
        progress(
            f"wrote {path.name} as {rival}: {path.stat().st_size:,} bytes in {timer.seconds:.2f} s"
        )
        files[rival] = path
    return files, dropped


def read_layouts(read_files: dict[str, Path]) -> dict[str, Path]:
    """The files every rival reads, one per layout: each regular writer's (its own Blosc2
    blocks) and the first direct writer's (every direct writer stores the same frames)."""
    layouts: dict[str, Path] = {}
    direct = [r for r in read_files if APPROACHES[r].direct]
    for rival, path in read_files.items():
        if not APPROACHES[rival].direct:
            layouts[rival] = path
    if direct:
        layouts[f"{direct[0]} (direct frames)"] = read_files[direct[0]]
    return layouts


def build_spec(
    source: Path,
    shape: tuple[int, int, int],
    read_files: dict[str, Path],
    folder: Path,
    cases: Sequence[str],
    baseline: str,
    fresh_process: bool = False,
    extra_notes: Sequence[str] = (),
) -> BenchmarkSpec:
    """Return the benchmark description; the rivals are the keys of ``read_files``."""

    rivals = list(read_files)
    write_files = {r: str(folder / f"write-{k}.h5") for k, r in enumerate(rivals)}
    chosen = []
    if "write" in cases:
        chosen.append(Case("write", "", {"source": str(source), "files": write_files}))
    if "read" in cases:
        for writer, path in read_layouts(read_files).items():
            params = {"source": str(source), "files": dict.fromkeys(rivals, str(path))}
            chosen.append(Case("read", f"{writer}'s file", params))
    nimages, height, width = shape
    nbytes = nimages * height * width * 2
    data = [DataInfo("images", f"{nimages} x {height} x {width} uint16", nbytes)]
    data += [
        DataInfo(
            f"file: {r}",
            f"written by {r} (ratio {nbytes / p.stat().st_size:.2f}x)",
            p.stat().st_size,
        )
        for r, p in read_files.items()
    ]
    notes = [
        f"Data: {nimages} images of {height} x {width} uint16 (smooth moving blobs plus "
        "shot-like noise, deterministic), one image per chunk (chunkshape "
        f"(1, {height}, {width})), Blosc2 Zstd level {CLEVEL} with shuffle.",
        "Regular writes: EArray.append(img[None]) per image (hyperslab, PyTables); "
        "dset.resize + dset[c] = img (h5py, hdf5plugin.Blosc2 filter). Regular reads: "
        "arr[c]. Direct writes: truncate(n) (h5py: resize) then write_chunk / "
        "write_direct_chunk of blosc2.asarray(img[None], chunks=(1, H, W), "
        "cparams=CParams(codec=ZSTD, clevel=5)).to_cframe(); direct reads: read_chunk / "
        "read_direct_chunk then blosc2.ndarray_from_cframe(...)[:].",
        "Write time: the loop and a flush (file and empty dataset created untimed). Read "
        "time: the loop (file opened untimed). Every rival reads the same file in each read "
        "case: the file of each regular writer (their Blosc2 blocks differ: each library "
        "picks its own) and one of direct-written frames (identical for every direct "
        "writer), from the OS page cache (caches are not dropped: shared machine). Checks: "
        "CRC-32 of every image (writes: read back by h5py + hdf5plugin after the timing).",
        *extra_notes,
    ]
    if fresh_process:
        notes.append(
            "Peak memory includes the image stack, loaded before the timing, and for reads "
            "the images read (all kept until the check is computed)."
        )
    return BenchmarkSpec(
        name="direct",
        title="regular vs direct-chunking writes and reads of a Blosc2 image stack",
        target="bench.direct:run_case",
        rivals=[r for r in RIVALS if r.name in read_files],
        cases=chosen,
        fresh_process=fresh_process,
        baseline=baseline,
        data=data,
        notes=notes,
    )


# ----------------------------------------------------------------------------- reports


def throughput(result: BenchmarkResult, nbytes: int) -> dict[str, dict[str, Any]]:
    """Return ``{rival: {case key: {median, min, max GB/s, vs baseline}}}`` of the timed
    cases.

    Throughput is uncompressed bytes per second (GB = 1e9 bytes); ``vs_baseline`` is the
    rival's median throughput divided by the baseline rival's (above 1: faster).
    """
    table: dict[str, dict[str, Any]] = {r: {} for r in result.rivals}
    for case in result.spec.cases:
        if not result.measured(case):
            continue
        ref = result.get(case, result.baseline).time.median
        for rival in result.rivals:
            t = result.get(case, rival).time
            table[rival][case.key] = {
                "median_gbps": nbytes / t.median / GB,
                "min_gbps": nbytes / t.max / GB,
                "max_gbps": nbytes / t.min / GB,
                "vs_baseline": ref / t.median,
            }
    return table


def throughput_markdown(
    result: BenchmarkResult, table: dict[str, dict[str, Any]], sizes: dict[str, int], nbytes: int
) -> str:
    """Return the throughput section of the report (rivals as rows)."""
    cases = [c.key for c in result.spec.cases if result.measured(c)]
    header = ["rival", *(f"{c} GB/s" for c in cases)]
    header += [f"{c} vs {result.baseline}" for c in cases]
    header += ["file size", "compression ratio"]
    lines = [
        "## Throughput (uncompressed GB/s, median (min..max); ratios: speed / baseline's)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for rival in result.rivals:
        row = [rival]
        for c in cases:
            s = table[rival][c]
            row.append(f"{s['median_gbps']:.3g} ({s['min_gbps']:.3g}..{s['max_gbps']:.3g})")
        row += [f"{table[rival][c]['vs_baseline']:.2f}" for c in cases]
        size = sizes.get(rival)
        row += [f"{size / 2**20:.1f} MiB", f"{nbytes / size:.2f}"] if size else ["-", "-"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def report(
    result: BenchmarkResult,
    sizes: dict[str, int],
    nbytes: int,
    out_dir: Path,
    plot: bool = True,
    progress: Any = print_progress,
) -> int:
    """Print and write the reports, with the throughput table; return the exit code."""
    table = throughput(result, nbytes)
    markdown = format_markdown(result) + "\n" + throughput_markdown(result, table, sizes, nbytes)
    print(markdown)
    paths, notes = write_reports(result, out_dir, plot=plot)
    paths["markdown"].write_text(markdown)
    content = json.loads(paths["json"].read_text())
    content["throughput"] = {"unit": "GB/s (1e9 bytes, uncompressed)", "rivals": table}
    content["file_sizes"] = sizes
    paths["json"].write_text(json.dumps(content, indent=2) + "\n")
    return report_outcome("direct", result, paths, notes, progress)


# ----------------------------------------------------------------------------- the CLI


def image_size(text: str) -> tuple[int, int]:
    """argparse type: ``N`` (N x N pixels) or ``HxW``, each at least 1."""
    parts = text.lower().split("x")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not N or HxW: {text!r}") from None
    if len(values) not in (1, 2) or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not N or HxW with positive sizes: {text!r}")
    return (values[0], values[-1])


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench direct``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("direct"),
        description="Write and read a stack of Blosc2/Zstd-compressed images, one per chunk: "
        "regular API vs direct chunking, for hyperslab, PyTables and h5py (the "
        "tomography experiment of PyTables' direct-chunking post).",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_IMAGES} images of {QUICK_SIZE}x{QUICK_SIZE}, 3 repeats",
    )
    parser.add_argument(
        "--images", type=int, default=None, help=f"number of images (default {DEFAULT_IMAGES})"
    )
    parser.add_argument(
        "--size",
        type=image_size,
        default=None,
        help=f"image size, N or HxW pixels (default {DEFAULT_SIZE})",
    )
    parser.add_argument(
        "--cases", type=comma_list, default=None, help=f"cases (default all: {','.join(CASES)})"
    )
    parser.add_argument(
        "--tmpdir", type=Path, default=None, help="folder for the files (default: the system's)"
    )
    parser.add_argument(
        "--fresh-process",
        action="store_true",
        help="run each repetition in a new interpreter and report peak memory (slower)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    return parser


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.images is not None and args.images < 1:
        parser.error(f"--images must be at least 1, not {args.images}")
    try:
        cases = pick(CASES, args.cases, "case")
        rivals = pick(list(APPROACHES), args.rivals, "rival")
        wanted = args.baseline or (DEFAULT_BASELINE if DEFAULT_BASELINE in rivals else rivals[0])
        baseline = pick(rivals, [wanted], "baseline")[0]
    except BenchmarkError as exc:
        parser.error(str(exc))
    nimages = args.images or (QUICK_IMAGES if args.quick else DEFAULT_IMAGES)
    height, width = args.size or ((QUICK_SIZE,) * 2 if args.quick else (DEFAULT_SIZE,) * 2)
    repeat = args.repeat or (3 if args.quick else 5)
    try:
        with scratch_folder("direct", args.tmpdir) as folder:
            return _run(args, folder, cases, rivals, baseline, (nimages, height, width), repeat)
    finally:
        _IMAGES.clear()


def _run(
    args: argparse.Namespace,
    folder: Path,
    cases: list[str],
    rivals: list[str],
    baseline: str,
    shape: tuple[int, int, int],
    repeat: int,
) -> int:
    nimages, height, width = shape
    available, skipped = [], {}
    for rival in [r for r in RIVALS if r.name in rivals]:
        reason = rival.unavailable_reason()
        if reason is None:
            available.append(rival.name)
        else:
            skipped[rival.name] = reason
            print_progress(f"skipping {rival.name}: {reason}")
    if not available:
        print("direct: error: no rival is available", file=sys.stderr)
        return 1
    print_progress(f"making {nimages} images of {height} x {width} in {folder}...")
    source = folder / "images.npy"
    write_images(source, nimages, height, width)
    files, dropped = prepare_files(available, source, folder)
    if not files:
        print("direct: error: no rival could write the image stack", file=sys.stderr)
        return 1
    notes = [f"Skipped rival {r}: {why}." for r, why in {**skipped, **dropped}.items()]
    if baseline not in files:
        baseline = next(iter(files))
    spec = build_spec(source, shape, files, folder, cases, baseline, args.fresh_process, notes)
    try:
        result = run_benchmark(spec, repeat, timeout=args.timeout)
    except BenchmarkError as exc:
        print(f"direct: error: {exc}", file=sys.stderr)
        return 1
    sizes = {r: p.stat().st_size for r, p in files.items()}
    out_dir = default_out_dir("direct") if args.out is None else args.out
    return report(result, sizes, nimages * height * width * 2, out_dir, plot=not args.no_plot)


if __name__ == "__main__":
    sys.exit(main())
