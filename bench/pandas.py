"""The ``pandas`` benchmark: pandas' HDF5 I/O (and dask's) on hyperslab and on PyTables.

pandas reads and writes HDF5 through ``tables``; with ``hyperslab.install_as_tables()``
that is hyperslab.  A process holds one ``tables``, so every run is a fresh process that
makes one of them ``tables`` before pandas imports it: the rivals are the same pandas code
on hyperslab and on PyTables.

The frame (:func:`make_frame`, seeded): ``nrows`` rows (default 2 million; ``--quick``
300,000), an int64 index and nine columns, 67 bytes a row in the table: ``a`` (int64, a
noisy ramp), ``b`` (float64 in [0, 1)), ``s`` (8-character strings out of 1000), the three
*data columns* (queryable), and ``v0``..``v3`` (float64), ``n`` (int32), ``t``
(datetime64) and ``k`` (bool) stored together as values blocks.  The cases:

``to_hdf``
    ``frame.to_hdf(path, key="df", format="table", data_columns=["a", "b", "s"],
    complevel=5, complib="blosc2:lz4")``: pandas' defaults otherwise, so each data column
    gets PyTables' default index (medium, optlevel 6).  Checked by the CRC-32 of the table
    read back by h5py.
``read_hdf``
    ``pd.read_hdf(path, "df")``: every row.
``where indexed`` / ``where not indexed``
    ``pd.read_hdf(path, key, where=...)``: about 1% of the rows by a range of ``a`` and a
    bound on ``b``, from the key written as above, then from one written with
    ``index=False`` (the same rows, no index: a scan of the data columns).
``dask``
    ``dask.dataframe.read_hdf(path, "df", chunksize=nrows // 8).compute()``: eight
    partitions, dask's default scheduler (its HDF5 reads take a lock, as pandas needs).

Each library reads the file it wrote itself (written once, before the timing, by a fresh
process).  Every case is checked equal across the rivals first (the frame's hash, or the
CRC of the table written).  Run ``python -m bench pandas --help`` (or ``hyperslab bench
pandas --help``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import importlib.util
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._report import format_markdown, write_reports
from bench.harness import (
    HYPERSLAB_MODULES,
    REPO_ROOT,
    VERSION_PACKAGES,
    BenchmarkError,
    BenchmarkSpec,
    Case,
    DataInfo,
    Rival,
    Timer,
    add_common_arguments,
    child_env,
    comma_list,
    default_out_dir,
    library_versions,
    pick,
    print_progress,
    report_outcome,
    run_benchmark,
    scratch_folder,
    with_thread_option,
)

DEFAULT_ROWS = 2_000_000
QUICK_ROWS = 200_000
SEED = 2005
KEY = "df"
UNINDEXED_KEY = "noindex"
DATA_COLUMNS = ["a", "b", "s"]
COMPLIB, COMPLEVEL = "blosc2:lz4", 5
PARTITIONS = 8
CASES = ("to_hdf", "read_hdf", "where indexed", "where not indexed", "dask")
LIBRARIES = ("hyperslab", "PyTables")
PACKAGES = (*VERSION_PACKAGES, "pandas", "dask", "pyarrow")


class PandasRival(Rival):
    """pandas on one ``tables``; available if pandas and dask.dataframe import (checked in
    a fresh process: this one may hold the other ``tables``)."""

    def unavailable_reason(self) -> str | None:
        """Why pandas cannot run on this rival's ``tables`` here, or None."""
        return _unavailable_reason(self.name)


@functools.cache
def _unavailable_reason(library: str) -> str | None:
    code = f"import bench.pandas as b; b.use_tables({library!r}); import dask.dataframe"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["(no output)"]
        return f"cannot run pandas on {library}: {lines[-1]}"
    return None


_DASK = ("dask.dataframe", *(("distributed",) if importlib.util.find_spec("distributed")
                             else ()))
"""dask's modules; ``distributed``, where installed, is imported by dask's first compute,
so it is imported before the timing, as an import (it takes 141 ms with hyperslab's
modules loaded against 85 ms with PyTables', in distributed.client's own code)."""

RIVALS = (
    # hyperslab loads its file and node modules (h5py, ...) on first use; PyTables loads
    # its own when imported: both are imported before the timing, counted as imports.
    PandasRival("hyperslab", (*HYPERSLAB_MODULES, "hyperslab.pytables", "pandas", *_DASK)),
    PandasRival("PyTables", ("tables", "pandas", *_DASK)),
)


def use_tables(library: str) -> Any:
    """Make ``import tables`` give ``library`` in this process; return that module.

    Raises
    ------
    BenchmarkError
        If this process already holds the other library as ``tables``.
    """
    if library == "hyperslab":
        importlib.import_module("hyperslab").install_as_tables()
    elif library != "PyTables":
        raise BenchmarkError(f"unknown rival {library!r}")
    tables = importlib.import_module("tables")
    expected = "hyperslab.pytables" if library == "hyperslab" else "tables"
    if tables.__name__ != expected:
        raise BenchmarkError(f"this process's tables is {tables.__name__}, not {library}'s")
    return tables


# ----------------------------------------------------------------------------- data


def make_frame(nrows: int) -> Any:
    """The frame of the module docstring (the same for a given ``nrows``)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(SEED)
    words = np.array([f"w{i:07d}" for i in range(1000)])
    columns = {
        "a": np.arange(nrows, dtype="int64") + rng.integers(-50, 50, nrows),
        "b": rng.random(nrows),
        "s": words[rng.integers(0, len(words), nrows)],
    }
    columns |= {f"v{i}": rng.normal(size=nrows) for i in range(4)}
    columns["n"] = rng.integers(-(2**31), 2**31 - 1, nrows, dtype="int32")
    columns["t"] = np.datetime64("2024-01-01", "s") + np.arange(nrows).astype("m8[s]")
    columns["k"] = rng.random(nrows) < 0.5
    return pd.DataFrame(columns)


def where_of(nrows: int) -> str:
    """The condition of the ``where`` cases: about 1% of the rows."""
    low = nrows // 3
    return f"a >= {low} & a < {low + nrows // 50} & b < 0.5"


def write_frame(frame: Any, path: str, key: str, index: bool, timer: Timer) -> None:
    """``to_hdf`` in the table format with the data columns and Blosc2; timed."""
    with timer:
        frame.to_hdf(
            path,
            key=key,
            format="table",
            data_columns=DATA_COLUMNS,
            complevel=COMPLEVEL,
            complib=COMPLIB,
            index=index,
        )


def write_files(library: str, path: str, nrows: int) -> None:
    """The file a library's reading cases read: both keys (run in a fresh process)."""
    use_tables(library)
    frame = make_frame(nrows)
    write_frame(frame, path, KEY, True, Timer())
    write_frame(frame, path, UNINDEXED_KEY, False, Timer())


def frame_check(frame: Any) -> dict[str, Any]:
    """What a read is checked by: shape, columns and a hash of every row."""
    import pandas as pd

    hashed = pd.util.hash_pandas_object(frame, index=True).to_numpy()
    return {
        "rows": len(frame),
        "columns": [str(c) for c in frame.columns],
        "hash": int(hashed.sum(dtype="uint64")),
    }


def table_crc32(path: str, key: str) -> int:
    """The CRC-32 of the table of ``key`` in ``path``, read by h5py."""
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    with h5py.File(path, "r") as f:
        return zlib.crc32(f[f"{key}/table"][...].tobytes())


# ----------------------------------------------------------------------------- the cases


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one case with pandas on ``rival``'s ``tables`` (the harness's target).

    ``params`` holds ``nrows``, ``files`` (``{library: path}`` of the files to read) and
    ``scratch`` (``{library: path}`` for ``to_hdf``).  Returns the check (see the module
    docstring).  Raises :class:`BenchmarkError` for an unknown rival or case, or when
    pandas fails (named).
    """
    if case not in CASES:
        raise BenchmarkError(f"unknown case {case!r}; known: {', '.join(CASES)}")
    use_tables(rival)
    try:
        return _run(rival, case, params, timer)
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {case}: {type(exc).__name__}: {exc}") from exc


def _run(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    import pandas as pd

    nrows = int(params["nrows"])
    if case == "to_hdf":
        path = Path(params["scratch"][rival])
        frame = make_frame(nrows)
        try:
            write_frame(frame, str(path), KEY, True, timer)
            return {"crc32": table_crc32(str(path), KEY)}
        finally:
            path.unlink(missing_ok=True)
    path = Path(params["files"][rival])
    if case == "dask":
        import dask.dataframe as dd

        with timer:
            frame = dd.read_hdf(str(path), KEY, chunksize=-(-nrows // PARTITIONS)).compute()
    elif case == "read_hdf":
        with timer:
            frame = pd.read_hdf(path, KEY)
    else:
        key = KEY if case == "where indexed" else UNINDEXED_KEY
        with timer:
            frame = pd.read_hdf(path, key, where=where_of(nrows))
    return frame_check(frame)


# ----------------------------------------------------------------------------- setup


@dataclasses.dataclass
class Prepared:
    """The files each library wrote (``{library: path}``) and what writing them took."""

    nrows: int
    files: dict[str, Path]
    scratch: dict[str, Path]
    seconds: dict[str, float]


def prepare(folder: Path, nrows: int, libraries: list[str], timeout: float) -> Prepared:
    """Write each library's file in a fresh process (see :func:`write_files`)."""
    files, seconds = {}, {}
    for library in libraries:
        path = folder / f"{library}.h5"
        print_progress(f"writing {nrows:,} rows with pandas on {library}...")
        t0 = time.perf_counter()
        code = f"import bench.pandas as b; b.write_files({library!r}, {str(path)!r}, {nrows})"
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO_ROOT,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise BenchmarkError(f"{library} could not write the file: {proc.stderr[-2000:]}")
        files[library], seconds[library] = path, time.perf_counter() - t0
    scratch = {lib: folder / f"scratch-{lib}.h5" for lib in libraries}
    return Prepared(nrows, files, scratch, seconds)


def build_spec(prepared: Prepared, cases: list[str], rivals: list[str]) -> BenchmarkSpec:
    """The benchmark description for the prepared files."""
    params = {
        "nrows": prepared.nrows,
        "files": {lib: str(p) for lib, p in prepared.files.items()},
        "scratch": {lib: str(p) for lib, p in prepared.scratch.items()},
    }
    data = [
        DataInfo(f"{lib}.h5", f"{prepared.nrows:,} rows, keys {KEY} and {UNINDEXED_KEY}, "
                 f"written by pandas on {lib}", path.stat().st_size)
        for lib, path in prepared.files.items()
    ]
    notes = [
        f"Frame: {prepared.nrows:,} rows, data columns {', '.join(DATA_COLUMNS)} (int64, "
        "float64, 8-character strings) and six more columns (four float64, int32, "
        "datetime64, bool) in values blocks; table format, "
        f"complib={COMPLIB}, complevel={COMPLEVEL}, shuffle.",
        f"where: {where_of(prepared.nrows)!r} (about 1% of the rows); 'indexed' reads the "
        f"key written with pandas' default indexes, 'not indexed' the key written with "
        f"index=False. dask: {PARTITIONS} partitions, default scheduler.",
        "Every run is a fresh process with pandas on hyperslab (install_as_tables) or on "
        "PyTables; times cover the call only (not the imports). Each library reads the "
        "file it wrote.",
    ]
    return BenchmarkSpec(
        name="pandas",
        title="pandas and dask.dataframe HDF5 I/O: hyperslab vs PyTables",
        target="bench.pandas:run_case",
        rivals=[r for r in RIVALS if r.name in rivals],
        cases=[Case(case, "", params) for case in cases],
        fresh_process=True,
        baseline="PyTables",
        data=data,
        notes=notes,
    )


# ----------------------------------------------------------------------------- the CLI


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench pandas``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("pandas"),
        description="pandas' to_hdf / read_hdf (with and without where=, indexed or not) "
        "and dask.dataframe.read_hdf, on hyperslab (install_as_tables) and on PyTables, "
        "each run in a fresh process. The baseline is PyTables.",
    )
    add_common_arguments(parser, default_repeat=5)
    parser.add_argument("--rows", type=int, default=None, help=f"rows (default {DEFAULT_ROWS:,})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows, 2 repeats")
    parser.add_argument(
        "--cases", type=comma_list, default=None, help=f"cases ({','.join(CASES)})"
    )
    parser.add_argument(
        "--tmpdir", type=Path, default=None, help="folder for the files (system's)"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    return parser


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    nrows = args.rows if args.rows is not None else (QUICK_ROWS if args.quick else DEFAULT_ROWS)
    if nrows < 1000:
        parser.error(f"--rows must be at least 1000, not {nrows}")
    if args.baseline not in (None, "PyTables"):
        parser.error("--baseline is fixed here: PyTables")
    try:
        cases = pick(CASES, args.cases, "case")
        rivals = pick(LIBRARIES, args.rivals, "rival")
    except BenchmarkError as exc:
        parser.error(str(exc))
    repeat = args.repeat or (2 if args.quick else 5)
    t0 = time.perf_counter()
    with scratch_folder("pandas", args.tmpdir) as folder:
        try:
            available = [r.name for r in RIVALS if r.name in rivals and _available(r)]
            if not available:
                print("pandas: error: pandas runs on neither library here", file=sys.stderr)
                return 1
            prepared = prepare(folder, nrows, available, args.timeout)
            spec = build_spec(prepared, cases, available)
            result = run_benchmark(
                spec, repeat, timeout=args.timeout, versions=library_versions(PACKAGES)
            )
        except BenchmarkError as exc:
            print(f"pandas: error: {exc}", file=sys.stderr)
            return 1
    markdown = format_markdown(result)
    print(markdown)
    out_dir = default_out_dir("pandas") if args.out is None else args.out
    paths, notes = write_reports(result, out_dir, plot=not args.no_plot)
    summary = {
        "nrows": nrows,
        "file_bytes": {d.name: d.nbytes for d in spec.data},
        "medians": {c.name: {r: result.median_time(c, r) for r in result.rivals}
                    for c in spec.cases},
        "ratios": {c.name: result.time_ratio(c, "hyperslab")
                   for c in spec.cases if result.measured(c) and len(result.rivals) > 1},
        "versions": result.versions,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print_progress(f"wrote {out_dir / 'summary.json'}")
    code = report_outcome("pandas", result, paths, notes)
    print_progress(f"pandas: {time.perf_counter() - t0:.0f} s in all")
    return code


def _available(rival: Rival) -> bool:
    reason = rival.unavailable_reason()
    if reason is not None:
        print_progress(f"skipping {rival.name}: {reason}")
    return reason is None


if __name__ == "__main__":
    sys.exit(main())
