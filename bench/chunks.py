"""The ``chunks`` benchmark: locating chunks and reading single items among a million chunks.

One file holds two 1-D ``float64`` datasets of ``nchunks`` chunks of 16 items (128 bytes):

==========  ================================================================================
dataset     content
==========  ================================================================================
raw         no filter; item ``i`` is ``i``
blosc2      Blosc2 filter (LZ4, level 5, shuffle), the only filter; chunk ``k`` holds items
            ``16 * (k % 1024) + 0..15`` (1024 different chunk frames, made once with
            python-blosc2 and written with ``write_direct_chunk``), so item ``i`` is
            ``i % 16384``
==========  ================================================================================

Both are written raw with h5py's ``write_direct_chunk`` (about 10 s each for a million
chunks here) into ``<tmp>/hyperslab-bench-chunks/`` and deleted at the end unless ``--keep``.

Cases, for each dataset.  Every rival of a case reads the same dataset of the same file,
opened (``open_file(path, 'r')`` for hyperslab and PyTables, ``h5py.File(path, 'r')``) before
the timer starts and closed after it stops, afresh in every run:

``index``
    Find where every chunk is.  hyperslab: ``Dataset.chunk_index()`` (one ``H5Dchunk_iter``
    pass).  h5py: ``DatasetID.chunk_iter(callback)``, the same pass, every chunk's location
    kept (not scaled).  PyTables has no listing: ``chunk_info(start)`` for every chunk of the
    grid, which costs tens of milliseconds a call with a million chunks (HDF5 scans its
    chunk index every time), so it is timed on ``--sample`` chunks spread evenly over the
    dataset and the time is SCALED to all chunks (said so in the report).  Every rival
    returns the locations of the same sampled chunks.
``random_reads_<n>``
    For each ``n`` of ``--read-counts`` (1, 100, 2,000 and 100,000 by default), ``n`` single
    items at random positions (the same for every rival), read one by one with ``node[i]``
    (hyperslab, PyTables) or ``dset[i]`` (h5py).  Nothing is read before the timer starts:
    the total includes every one-time cost a user pays after opening the file (looking
    the node or dataset up, a chunk index build, the first reads).  The per-item table
    divides it by ``n``.  PyTables reads
    1-D Blosc2 datasets through a path that costs ~160 ms a read here, so it reads only the
    first ``--capped-reads`` of them there and its time is SCALED to ``n`` (said so in the
    report).  Every value read is compared with the known content; the first ones are the
    result checked across rivals.

Runs are in this process (no memory figures): one untimed checking run per case and rival,
then ``--repeat`` timed runs, rivals interleaved.

Run ``python -m bench chunks --help`` (or ``hyperslab bench chunks --help``) for the options.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._report import format_markdown, write_reports
from bench.harness import (
    HYPERSLAB_MODULES,
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
    with_thread_option,
)

LAYOUT_VERSION = 1
"""Bump when the file's layout or content changes: cached files are then rewritten."""

CHUNK = 16
"""Items per chunk (128 bytes of float64)."""
DISTINCT = 1024
"""Different chunk frames of the Blosc2 dataset."""
DEFAULT_NCHUNKS = 1_000_000
QUICK_NCHUNKS = 100_000
DEFAULT_READ_COUNTS = (1, 100, 2000, 100_000)
"""Reads of the ``random_reads_<n>`` cases (each a case: one-time costs weigh differently)."""
DEFAULT_CAPPED_READS = 20
DEFAULT_SAMPLE = 16
SEED = 20260521
CHECKED_VALUES = 20
"""Values read that are compared across rivals (all are compared with the content)."""

DATASETS = {
    "raw": "no filter",
    "blosc2": "Blosc2 LZ4 level 5 + shuffle (1024 distinct chunk frames)",
}
CASES = ("index", "random_reads")
"""Case kinds: ``random_reads`` stands for one ``random_reads_<n>`` case per read count."""
READS_PREFIX = "random_reads_"

RIVALS = (
    Rival("hyperslab", HYPERSLAB_MODULES, probe="hyperslab:open_file"),
    Rival("PyTables", ("tables",)),
    Rival("h5py", ("h5py", "hdf5plugin")),
)


# ----------------------------------------------------------------------------- the file


def expected_value(dataset: str, index: int) -> float:
    """The item at ``index`` of ``dataset`` (see the module docstring)."""
    return float(index if dataset == "raw" else index % (CHUNK * DISTINCT))


def create_file(path: Path, nchunks: int, progress: Any = print_progress) -> None:
    """Write both datasets of ``nchunks`` chunks into a new file at ``path``."""
    import blosc2
    import h5py
    import hdf5plugin
    import numpy as np

    nitems = nchunks * CHUNK
    with h5py.File(path, "w") as f:
        t0 = time.perf_counter()
        raw = f.create_dataset("raw", shape=(nitems,), chunks=(CHUNK,), dtype="<f8")
        data = memoryview(np.arange(nitems, dtype="<f8")).cast("B")
        write, nbytes = raw.id.write_direct_chunk, CHUNK * 8
        for k in range(nchunks):
            write((k * CHUNK,), data[k * nbytes : (k + 1) * nbytes])
        progress(f"  raw: {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        b2 = f.create_dataset(
            "blosc2",
            shape=(nitems,),
            chunks=(CHUNK,),
            dtype="<f8",
            **hdf5plugin.Blosc2(cname="lz4", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE),
        )
        cparams = blosc2.CParams(
            codec=blosc2.Codec.LZ4, clevel=5, typesize=8, filters=[blosc2.Filter.SHUFFLE]
        )
        frames = [
            blosc2.SChunk(
                chunksize=CHUNK * 8,
                data=np.arange(k * CHUNK, (k + 1) * CHUNK, dtype="<f8"),
                cparams=cparams,
            ).to_cframe()
            for k in range(min(DISTINCT, nchunks))
        ]
        write = b2.id.write_direct_chunk
        for k in range(nchunks):
            write((k * CHUNK,), frames[k % DISTINCT])
        progress(f"  blosc2: {time.perf_counter() - t0:.1f} s")
        for name in DATASETS:  # what PyTables writes for a CArray, so nobody guesses
            attrs = f[name].attrs
            attrs["CLASS"] = np.bytes_(b"CARRAY")
            attrs["VERSION"] = np.bytes_(b"1.1")
            attrs["TITLE"] = np.bytes_(name.encode())


def cache_dir(root: Path | None = None) -> Path:
    """Folder of the cached file: ``<tmp or root>/hyperslab-bench-chunks/v<LAYOUT_VERSION>``."""
    base = Path(tempfile.gettempdir()) if root is None else root
    return base / "hyperslab-bench-chunks" / f"v{LAYOUT_VERSION}"


def ensure_file(folder: Path, nchunks: int, progress: Any = print_progress) -> Path:
    """Return the cached file of ``nchunks`` chunks in ``folder``, writing it if needed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"chunks-{nchunks}.h5"
    if not path.exists():
        progress(f"writing {path} (2 datasets of {nchunks:,} chunks)...")
        partial = path.with_suffix(".h5.partial")
        create_file(partial, nchunks, progress)
        os.replace(partial, path)
        progress(f"  {path.stat().st_size:,} bytes")
    return path


# ----------------------------------------------------------------------------- index


def _sample(nchunks: int, size: int) -> list[int]:
    """``size`` chunk numbers spread evenly over ``nchunks`` (unbiased for linear scans)."""
    size = min(size, nchunks)
    return sorted({(2 * j + 1) * nchunks // (2 * size) for j in range(size)})


def _index_case(rival: str, params: dict[str, Any], timer: Timer) -> Any:
    path, name, nchunks = params["path"], params["dataset"], params["nchunks"]
    sample = _sample(nchunks, params["sample"])
    f, get = _open_reader(rival, path, name)
    node = get()  # the index case times listing only
    try:
        if rival == "hyperslab":
            dataset = node._dataset  # the storage Dataset of the leaf (no public listing)
            with timer:
                index = dataset.chunk_index()
            found = []
            for k in sample:
                location = index.locate((k,))
                found.append([k, location.offset, location.size] if location else [k, None, None])
            return {"nchunks": index.nwritten, "sample": found}
        if rival == "h5py":
            listed: dict[int, tuple[int, int]] = {}

            def keep(info: Any) -> None:
                listed[info.chunk_offset[0] // CHUNK] = (info.byte_offset, info.size)

            with timer:
                node.id.chunk_iter(keep)
            found = [[k, *listed[k]] if k in listed else [k, None, None] for k in sample]
            return {"nchunks": len(listed), "sample": found}
        grid = -(-node.shape[0] // CHUNK)
        with timer:
            t0 = time.perf_counter()
            infos = [node.chunk_info((k * CHUNK,)) for k in sample]
            t1 = time.perf_counter()
        timer.seconds = (t1 - t0) * grid / len(sample)  # scaled: see module
        rows = [[i.start[0] // CHUNK, i.offset, i.size] for i in infos]
        return {"nchunks": int(grid), "sample": [[int(v) for v in row] for row in rows]}
    finally:
        f.close()


# ----------------------------------------------------------------------------- reads


def random_indices(nitems: int, count: int, seed: int = SEED) -> list[int]:
    """``count`` random item positions in ``[0, nitems)``, the same for every rival."""
    import numpy as np

    return [int(i) for i in np.random.default_rng(seed).integers(0, nitems, count)]


def _open_reader(rival: str, path: str, name: str) -> tuple[Any, Any]:
    """``(open file, get)`` for ``rival``: ``get()`` gives what ``node[i]`` reads from
    (h5py opens the dataset there, hyperslab and PyTables look the node up; timed, as
    the reads are: hyperslab's node opens its dataset at the first read)."""
    if rival == "h5py":
        import h5py
        import hdf5plugin  # noqa: F401

        f = h5py.File(path, "r")
        return f, lambda: f[name]
    lib: Any = importlib.import_module("hyperslab" if rival == "hyperslab" else "tables")
    f = lib.open_file(path, "r")
    return f, lambda: f.get_node("/" + name)


def _reads_case(rival: str, params: dict[str, Any], timer: Timer) -> Any:
    name = params["dataset"]
    indices = random_indices(params["nchunks"] * CHUNK, params["reads"])
    capped = rival == "PyTables" and name == "blosc2"
    todo = indices[: params["capped_reads"]] if capped else indices
    f, get = _open_reader(rival, params["path"], name)
    try:  # nothing read before the timer: one-time costs are the user's too (see module)
        with timer:
            node = get()
            values = [node[i] for i in todo]
    finally:
        f.close()
    if capped:
        assert timer.seconds is not None
        timer.seconds *= len(indices) / len(todo)  # scaled: see module
    for i, value in zip(todo, values, strict=True):
        if float(value) != expected_value(name, i):
            raise BenchmarkError(f"{rival} read {value!r} at {name}[{i}], not {i}")
    first = min(CHECKED_VALUES, params["capped_reads"])
    return {"reads": len(indices), "first": [float(v) for v in values[:first]]}


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one case for one rival (the harness's target function).

    Parameters
    ----------
    rival : str
        ``"hyperslab"``, ``"PyTables"`` or ``"h5py"``.
    case : str
        ``"index"`` or ``"random_reads_<n>"`` (``params["reads"]`` is ``n``).
    params : dict
        ``path``, ``dataset``, ``nchunks``, ``sample``, ``reads``, ``capped_reads``.
    timer : Timer
        Times the case; scaled afterwards where the module docstring says so.
    """
    if rival not in {r.name for r in RIVALS}:
        raise BenchmarkError(f"unknown rival {rival!r}")
    if case == "index":
        return _index_case(rival, params, timer)
    if case.startswith(READS_PREFIX):
        return _reads_case(rival, params, timer)
    raise BenchmarkError(f"unknown case {case!r}")


# ----------------------------------------------------------------------------- reports


def per_item_markdown(result: BenchmarkResult, nchunks: int, options: argparse.Namespace) -> str:
    """A table of the medians per chunk located and per item read, in microseconds."""
    rows = []
    for case in result.spec.cases:
        if not result.measured(case):
            continue
        reads = int(case.params.get("reads", 0))
        count = nchunks if case.name == "index" else reads
        cells = []
        for rival in result.rivals:
            seconds = result.get(case, rival).time.median / count
            scaled = ""
            if case.name == "index" and rival == "PyTables":
                scaled = f" (scaled from {min(options.sample, nchunks)})"
            elif (case.name != "index" and rival == "PyTables" and case.group == "blosc2"
                  and reads > case.params["capped_reads"]):
                scaled = f" (scaled from {case.params['capped_reads']})"
            micro = seconds * 1e6
            cells.append(f"{micro:.0f} µs{scaled}" if micro >= 100 else f"{micro:.3g} µs{scaled}")
        what = "per chunk located" if case.name == "index" else "per item read"
        rows.append(f"| {case.group} | {case.name} | {what} | " + " | ".join(cells) + " |")
    header = "| group | case | unit | " + " | ".join(result.rivals) + " |"
    lines = ["## Per chunk / per item (medians)", "", header]
    lines += ["|" + "---|" * (3 + len(result.rivals)), *rows]
    return "\n".join(lines) + "\n"


def report(
    result: BenchmarkResult, nchunks: int, options: argparse.Namespace, out_dir: Path,
    plot: bool = True,
) -> int:
    """Print and write the reports with the per-item table; return the exit code."""
    markdown = format_markdown(result) + "\n" + per_item_markdown(result, nchunks, options)
    print(markdown)
    paths, notes = write_reports(result, out_dir, plot=plot)
    paths["markdown"].write_text(markdown)
    return report_outcome("chunks", result, paths, notes, print_progress)


# ----------------------------------------------------------------------------- the CLI


def read_counts(text: str) -> list[int]:
    """Parse ``--read-counts``: positive integers, comma-separated (sorted, no repeats)."""
    try:
        counts = sorted({int(item) for item in comma_list(text)})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"read counts must be integers separated by commas, not {text!r}") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"read counts must be at least 1, not {text!r}")
    return counts


def case_names(cases: list[str], counts: list[int]) -> list[str]:
    """The case names of the kinds ``cases``: ``random_reads`` gives one per read count."""
    names: list[str] = []
    for kind in cases:
        names += [f"{READS_PREFIX}{n}" for n in counts] if kind == "random_reads" else [kind]
    return names


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench chunks``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("chunks"),
        description="Locate a million chunks and read single items at random from them: "
        "hyperslab vs PyTables vs h5py, unfiltered and Blosc2.",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_NCHUNKS:,} chunks and 3 repeats"
    )
    parser.add_argument(
        "--nchunks", type=int, default=None, help=f"chunks per dataset ({DEFAULT_NCHUNKS:,})"
    )
    parser.add_argument(
        "--read-counts",
        type=read_counts,
        default=list(DEFAULT_READ_COUNTS),
        help="random single-item reads of each random_reads_<n> case, comma-separated "
        f"(default: {','.join(str(n) for n in DEFAULT_READ_COUNTS)})",
    )
    parser.add_argument(
        "--capped-reads",
        type=int,
        default=DEFAULT_CAPPED_READS,
        help="reads of PyTables on the Blosc2 dataset, scaled to each read count",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        help="chunks PyTables locates one by one, scaled to all chunks",
    )
    parser.add_argument(
        "--cases", type=comma_list, default=None, help=f"cases (default: {','.join(CASES)})"
    )
    parser.add_argument(
        "--datasets",
        type=comma_list,
        default=None,
        help=f"datasets (default: {','.join(DATASETS)})",
    )
    parser.add_argument("--keep", action="store_true", help="keep the file for the next run")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    parser.add_argument("--workdir", type=Path, default=None, help="where the file is cached")
    return parser


def build_spec(
    path: Path,
    nchunks: int,
    cases: list[str],
    datasets: list[str],
    rivals: list[str],
    baseline: str,
    options: argparse.Namespace,
) -> BenchmarkSpec:
    """Return the benchmark description."""
    common = {"path": str(path), "nchunks": nchunks, "sample": options.sample}
    spec_cases = []
    for name in datasets:
        for case in case_names(cases, options.read_counts):
            params = {**common, "dataset": name}
            if case != "index":
                reads = int(case.removeprefix(READS_PREFIX))
                params |= {"reads": reads, "capped_reads": min(options.capped_reads, reads)}
            spec_cases.append(Case(case, name, params))
    counts = ", ".join(f"{n:,}" for n in options.read_counts)
    notes = [
        f"Two 1-D float64 datasets of {nchunks:,} chunks of {CHUNK} items (128 bytes), "
        "written raw with h5py's write_direct_chunk: raw (no filter, item i is i) and "
        f"blosc2 (LZ4 level 5 + shuffle, {DISTINCT} distinct chunk frames).",
        "Every rival of a case reads the same dataset of the same file, opened afresh before "
        "the timer starts in every run.",
        "index: hyperslab is Dataset.chunk_index() (one H5Dchunk_iter pass), h5py "
        "DatasetID.chunk_iter(callback) (the same pass, every location kept; not scaled). "
        f"PyTables (chunk_info(start)) locates only {min(options.sample, nchunks)} chunks "
        "spread evenly over the dataset, one by one; its time is SCALED to all chunks (HDF5 "
        "scans its chunk index on every call).",
        f"random_reads_<n> (n = {counts}): n items at the same random positions, read one "
        "by one as node[i] (hyperslab, PyTables) or dset[i] (h5py), with nothing read before "
        "the timer: the total includes every one-time cost (index builds, first reads). "
        "The per-item table divides it by n. PyTables on blosc2 reads only the first "
        f"{options.capped_reads} of them (~160 ms a read), its time SCALED to n. All values "
        "read are compared with the content.",
    ]
    return BenchmarkSpec(
        name="chunks",
        title=f"locating and reading single items among {nchunks:,} chunks",
        target="bench.chunks:run_case",
        rivals=[r for r in RIVALS if r.name in rivals],
        cases=spec_cases,
        fresh_process=False,
        baseline=baseline,
        data=[DataInfo(path.name, f"raw + blosc2, {nchunks:,} chunks each", path.stat().st_size)],
        notes=notes,
    )


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cases = pick(CASES, args.cases, "case")
        datasets = pick(list(DATASETS), args.datasets, "dataset")
        rivals = pick([r.name for r in RIVALS], args.rivals, "rival")
        wanted = args.baseline or ("hyperslab" if "hyperslab" in rivals else rivals[0])
        baseline = pick(rivals, [wanted], "baseline")[0]
    except BenchmarkError as exc:
        parser.error(str(exc))
    nchunks = args.nchunks or (QUICK_NCHUNKS if args.quick else DEFAULT_NCHUNKS)
    for option in ("nchunks", "capped_reads", "sample"):
        value = nchunks if option == "nchunks" else getattr(args, option)
        if value < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1, not {value}")
    repeat = args.repeat or (3 if args.quick else 5)
    folder = cache_dir(args.workdir)
    try:
        path = ensure_file(folder, nchunks)
        spec = build_spec(path, nchunks, cases, datasets, rivals, baseline, args)
        try:
            result = run_benchmark(spec, repeat, timeout=args.timeout)
        except BenchmarkError as exc:
            print(f"chunks: error: {exc}", file=sys.stderr)
            return 1
        return report(result, nchunks, args, args.out or default_out_dir("chunks"),
                      plot=not args.no_plot)
    finally:
        if args.keep:
            print_progress(f"kept the file in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            with contextlib.suppress(OSError):  # our folder, if no other version is cached
                folder.parent.rmdir()


if __name__ == "__main__":
    sys.exit(main())
