"""The ``queries`` benchmark: in-kernel queries, appends and row iteration of a table.

The table is the ``Record`` of the spec's "Accelerating your searches" (col1 Int32, col2
Int32, col3 Float64, col4 Float64: 24 bytes a row), ``nrows`` rows (default 10 million),
filled as PyTables' ``bench/indexed_search.py`` does with random values: for row ``i``,
``x = i + normal(0, 0.1 * nrows)``, col3 = col4 = ``x`` and col1 = col2 = ``x`` truncated
to int32.  Each library (hyperslab and PyTables) writes its own file per codec
(:data:`CODECS`: none, zlib level 1, blosc2:lz4 and blosc2:zstd level 5, shuffle when
compressed), each with the chunkshape its library picks for ``expectedrows=nrows``.  Three parts:

``search``
    The spec's in-kernel query (:data:`CONDITION`), returning col2, with limits chosen from
    the data so that about 1% and 0.01% of the rows match (:func:`choose_limits`).  Rivals:
    hyperslab and PyTables ``read_where(cond, condvars, field="col2")`` and
    ``[r["col2"] for r in where(cond, condvars)]`` on their own file (and hyperslab
    ``read_where`` on PyTables' file, which separates the library from its chunkshape);
    in memory: NumPy (the expression evaluated on the fields of a structured array),
    numexpr (``evaluate`` on contiguous columns) and pandas ``DataFrame.query``.  The
    in-memory rivals do not depend on the codec; they run in every group for reference.
``append``
    Create the file and the table, append the rows from one structured array in blocks of
    :data:`APPEND_BLOCK` rows as a user would, close.  Checked by the CRC-32 of the table
    read back by h5py + hdf5plugin after the timing.
``iterate``
    ``for row in table: total += row["col2"]``; the sum is the check.

Every case is checked equal across its rivals before anything is timed (see
:mod:`bench.harness`).  Throughput: rows per second and GB/s of table data
(``nrows * 24`` bytes, 1 GB = 1e9 bytes) per median time.  The records, the limits and the
checks are made by :mod:`bench._queries_data`.  All files go into a temporary folder
(``--tmpdir``) removed at the end.

Run ``python -m bench queries --help`` (or ``hyperslab bench queries --help``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._queries_data import (
    _CODE,
    COLUMNS,
    CONDITION,
    SEED,
    check_of,
    choose_limits,
    make_records,
    numpy_hits,
    records_crc32,
)
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
    goal_lines,
    pick,
    print_progress,
    report_outcome,
    run_benchmark,
    scratch_folder,
    with_thread_option,
)

DEFAULT_ROWS = 10_000_000
QUICK_ROWS = 1_000_000
ROW_BYTES = 24
APPEND_BLOCK = 100_000
"""Rows per ``append`` call in the ``append`` part."""
NODE = "table"
GB = 1e9

PANDAS_CONDITION = re.sub(r"\b(lim\d)\b", r"@\1", CONDITION)
"""The same for ``DataFrame.query``, which wants ``@`` before outer variables."""

SELECTIVITIES = {"1%": 0.01, "0.01%": 0.0001}
CODECS: dict[str, tuple[int, str]] = {
    "none": (0, "zlib"),
    "zlib": (1, "zlib"),
    "blosc2:lz4": (5, "blosc2:lz4"),
    "blosc2:zstd": (5, "blosc2:zstd"),
}
"""Codec name -> (complevel, complib); shuffle is on whenever complevel > 0."""
PARTS = ("search", "append", "iterate")
LIBRARIES = ("hyperslab", "PyTables")
MODULES = {"hyperslab": "hyperslab", "PyTables": "tables"}


# ----------------------------------------------------------------------------- the rivals


@dataclasses.dataclass(frozen=True)
class TableRival(Rival):
    """A rival of one part of the benchmark.

    ``library`` is the library whose name ``--rivals`` selects; ``method`` what it runs
    (``read_where``, ``where``, ``numpy``, ``numexpr``, ``query``, ``append``, ``iterate``);
    ``file_of`` whose file it reads (empty: data in memory).  hyperslab and PyTables are
    available only if they pass :func:`smoke_test` on every codec.
    """

    library: str = ""
    method: str = ""
    file_of: str = ""

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here (import or smoke test), or None."""
        reason = super().unavailable_reason()
        if reason is None and self.library in LIBRARIES:
            return smoke_test(self.library)
        return reason


def _table_rival(name: str, library: str, method: str, file_of: str = "") -> TableRival:
    return TableRival(name, (MODULES[library],), None, library, method, file_of or library)


SEARCH_RIVALS = (
    _table_rival("hyperslab read_where", "hyperslab", "read_where"),
    _table_rival("hyperslab where", "hyperslab", "where"),
    _table_rival("hyperslab read_where (PyTables' file)", "hyperslab", "read_where", "PyTables"),
    _table_rival("PyTables read_where", "PyTables", "read_where"),
    _table_rival("PyTables where", "PyTables", "where"),
    TableRival("NumPy", ("numpy",), None, "NumPy", "numpy"),
    TableRival("numexpr", ("numexpr",), None, "numexpr", "numexpr"),
    TableRival("pandas", ("pandas",), None, "pandas", "query"),
)
PART_RIVALS: dict[str, tuple[TableRival, ...]] = {
    "search": SEARCH_RIVALS,
    "append": tuple(_table_rival(lib, lib, "append") for lib in LIBRARIES),
    "iterate": tuple(_table_rival(lib, lib, "iterate") for lib in LIBRARIES),
}
BASELINES = {"search": "PyTables read_where", "append": "PyTables", "iterate": "PyTables"}
ALL_LIBRARIES = ("hyperslab", "PyTables", "NumPy", "numexpr", "pandas")


def rival_named(name: str) -> TableRival:
    """Return the rival called ``name`` in any part."""
    for rivals in PART_RIVALS.values():
        for rival in rivals:
            if rival.name == name:
                return rival
    raise BenchmarkError(f"unknown rival {name!r}")


# ----------------------------------------------------------------------------- in memory


_SOURCES: dict[str, Any] = {}
"""What was loaded in this process, by (kind, path): records, columns, data frames."""


def load_records(path: str) -> Any:
    """Return the records saved at ``path`` (``.npy``), loading them once per process."""
    import numpy as np

    key = f"records:{path}"
    if key not in _SOURCES:
        _SOURCES[key] = np.load(path)
    return _SOURCES[key]


def load_columns(path: str) -> dict[str, Any]:
    """Return the records at ``path`` as contiguous columns, made once per process."""
    import numpy as np

    key = f"columns:{path}"
    if key not in _SOURCES:
        records = load_records(path)
        _SOURCES[key] = {n: np.ascontiguousarray(records[n]) for n in COLUMNS}
    columns: dict[str, Any] = _SOURCES[key]
    return columns


def load_frame(path: str) -> Any:
    """Return the records at ``path`` as a pandas DataFrame, made once per process."""
    pd: Any = importlib.import_module("pandas")  # optional: no stubs needed
    key = f"frame:{path}"
    if key not in _SOURCES:
        _SOURCES[key] = pd.DataFrame(load_columns(path), copy=False)
    return _SOURCES[key]


# ----------------------------------------------------------------------------- the libraries


def _lib(library: str) -> Any:
    return importlib.import_module(MODULES[library])


def make_filters(lib: Any, codec: str) -> Any:
    """``lib.Filters`` for ``codec`` (see :data:`CODECS`)."""
    complevel, complib = CODECS[codec]
    return lib.Filters(complevel=complevel, complib=complib, shuffle=complevel > 0)


def make_description(lib: Any) -> type:
    """The spec's ``Record(IsDescription)`` class, made with ``lib``'s column classes."""
    columns = {"col1": lib.Int32Col(), "col2": lib.Int32Col()}
    columns |= {"col3": lib.Float64Col(), "col4": lib.Float64Col()}
    return type("Record", (lib.IsDescription,), columns)


def write_table(
    library: str, path: str, records: Any, codec: str, timer: Timer, block: int = APPEND_BLOCK
) -> None:
    """Create ``path`` with the table of ``records``, appended in blocks; time it all."""
    lib = _lib(library)
    description, filters = make_description(lib), make_filters(lib, codec)
    with timer:
        with lib.open_file(path, mode="w") as f:
            table = f.create_table(
                "/", NODE, description, "Record", filters=filters, expectedrows=len(records)
            )
            for start in range(0, len(records), block):
                table.append(records[start : start + block])
            table.flush()


def file_info(path: str) -> tuple[int, tuple[int, ...] | None]:
    """Return the CRC-32 of the table at ``path`` read by h5py + hdf5plugin, and its chunks."""
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    with h5py.File(path, "r") as f:
        dset = f[NODE]
        return records_crc32(dset[...]), dset.chunks


def query_file(library: str, method: str, path: str, limits: dict[str, float], timer: Timer) -> Any:
    """Run the query on the table at ``path`` with ``library``; return the col2 values."""
    with _lib(library).open_file(path, mode="r") as f:
        table = f.get_node("/" + NODE)
        with timer:
            if method == "read_where":
                values = table.read_where(CONDITION, limits, field="col2")
            else:
                values = [row["col2"] for row in table.where(CONDITION, limits)]
    return values


def query_memory(method: str, source: str, limits: dict[str, float], timer: Timer) -> Any:
    """Run the query on the data in memory (NumPy, numexpr or pandas); return col2 values."""
    if method == "numpy":
        records = load_records(source)
        fields = {name: records[name] for name in COLUMNS}
        with timer:
            values = records["col2"][eval(_CODE, {"__builtins__": {}}, {**fields, **limits})]
    elif method == "numexpr":
        import numexpr as ne

        columns = load_columns(source)
        with timer:
            values = columns["col2"][ne.evaluate(CONDITION, local_dict={**columns, **limits})]
    else:
        frame = load_frame(source)
        with timer:
            values = frame.query(PANDAS_CONDITION, local_dict=limits)["col2"].to_numpy()
    return values


def iterate_file(library: str, path: str, timer: Timer) -> int:
    """``for row in table: total += row["col2"]``; return the total."""
    import numpy as np

    with _lib(library).open_file(path, mode="r") as f:
        table = f.get_node("/" + NODE)
        total = np.int64(0)
        with timer:
            for row in table:
                total += row["col2"]
    return int(total)


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one case for one rival (the harness's target function).

    ``params`` holds ``part``, ``codec``, ``source`` (the records, ``.npy``), ``files``
    (``{library: path}`` of the tables), ``limits`` (search) and ``scratch`` (append:
    ``{library: path}`` to write).  ``timer`` times the work, not the opening.  Returns the
    check: :func:`check_of` the col2 values (search), the CRC-32 of the table written, read
    back by h5py (append), or the sum of col2 (iterate).  Raises :class:`BenchmarkError`
    for an unknown rival or part, or when a library fails (named).
    """
    who = rival_named(rival)
    part = params.get("part")
    if part not in PARTS:
        raise BenchmarkError(f"unknown part {part!r} of case {case!r}; known: {PARTS}")
    try:
        if part == "search":
            if who.library in LIBRARIES:
                path = params["files"][who.file_of]
                return check_of(query_file(who.library, who.method, path, params["limits"], timer))
            return check_of(query_memory(who.method, params["source"], params["limits"], timer))
        if part == "iterate":
            return {"sum": iterate_file(who.library, params["files"][who.library], timer)}
        path = Path(params["scratch"][who.library])
        try:
            write_table(
                who.library, str(path), load_records(params["source"]), params["codec"], timer
            )
            return {"crc32": file_info(str(path))[0]}
        finally:
            path.unlink(missing_ok=True)
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {part} {case}: {type(exc).__name__}: {exc}") from exc


@functools.cache
def smoke_test(library: str) -> str | None:
    """Write, query and iterate a tiny table per codec with ``library``; None if all is right."""
    import numpy as np

    records = make_records(5000, seed=SEED + 1)
    limits = choose_limits(records, 0.01)
    expected = check_of(numpy_hits(records, limits))
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-queries-smoke-") as tmp:
        for codec in CODECS:
            path = str(Path(tmp) / f"{codec.replace(':', '-')}.h5")
            try:
                write_table(library, path, records, codec, Timer(), block=1500)
                got = [
                    check_of(query_file(library, m, path, limits, Timer()))
                    for m in ("read_where", "where")
                ]
                total = iterate_file(library, path, Timer())
                crc, _ = file_info(path)
            except Exception as exc:  # whatever the library raises makes it unavailable
                return f"smoke test ({codec}) failed: {type(exc).__name__}: {exc}"
            if got != [expected, expected]:
                return f"smoke test ({codec}): query results {got} differ from NumPy's {expected}"
            if total != int(records["col2"].sum(dtype=np.int64)) or crc != records_crc32(records):
                return f"smoke test ({codec}): iteration or file contents differ from the data"
    return None


# ----------------------------------------------------------------------------- setup


@dataclasses.dataclass
class Prepared:
    """The inputs of a run: records, limits, and the tables each library wrote."""

    folder: Path
    nrows: int
    source: Path
    limits: dict[str, dict[str, float]]
    hits: dict[str, int]
    files: dict[str, dict[str, Path]]  # codec -> library -> path
    chunks: dict[str, dict[str, Any]]
    write_seconds: dict[str, dict[str, float]]
    dropped: dict[str, str]


def prepare(
    folder: Path, nrows: int, libraries: Sequence[str], codecs: Sequence[str], progress: Any
) -> Prepared:
    """Make the records and limits; write the tables of each library (checked with h5py).

    A library that fails to write a table correctly is left out (``dropped``).
    """
    import numpy as np

    progress(f"making {nrows:,} records in {folder}...")
    records = make_records(nrows)
    source = folder / "records.npy"
    np.save(source, records)
    _SOURCES[f"records:{source}"] = records
    limits = {name: choose_limits(records, f) for name, f in SELECTIVITIES.items()}
    hits = {name: len(numpy_hits(records, lim)) for name, lim in limits.items()}
    progress("hits: " + ", ".join(f"{n}: {h:,}" for n, h in hits.items()))
    crc = records_crc32(records)
    prepared = Prepared(folder, nrows, source, limits, hits, {}, {}, {}, {})
    for codec in codecs:
        for library in libraries:
            if library in prepared.dropped:
                continue
            path = folder / f"{library}-{codec.replace(':', '-')}.h5"
            timer, why = Timer(), ""
            try:
                write_table(library, str(path), records, codec, timer)
                found, chunks = file_info(str(path))
                why = "" if found == crc else f"its {codec} table differs from the data (h5py)"
            except Exception as exc:  # a failing library is dropped, the others go on
                why = f"writing {codec} failed: {type(exc).__name__}: {exc}"
            if why:
                prepared.dropped[library] = why
                progress(f"dropping {library}: {why}")
                continue
            assert timer.seconds is not None
            prepared.files.setdefault(codec, {})[library] = path
            prepared.chunks.setdefault(codec, {})[library] = chunks
            prepared.write_seconds.setdefault(codec, {})[library] = timer.seconds
            progress(
                f"{library} {codec}: {path.stat().st_size:,} bytes, chunks {chunks}, "
                f"written in {timer.seconds:.2f} s"
            )
    return prepared


def build_spec(
    part: str, prepared: Prepared, rivals: Sequence[TableRival], fresh_process: bool
) -> BenchmarkSpec:
    """Return the benchmark description of one part."""
    cases = []
    for codec, files in prepared.files.items():
        common = {
            "part": part,
            "codec": codec,
            "source": str(prepared.source),
            "files": {lib: str(p) for lib, p in files.items() if lib not in prepared.dropped},
        }
        if part == "search":
            for name, limits in prepared.limits.items():
                cases.append(Case(f"col2 at {name}", codec, {**common, "limits": limits}))
        elif part == "append":
            scratch = {lib: str(prepared.folder / f"append-{lib}.h5") for lib in LIBRARIES}
            cases.append(Case("append", codec, {**common, "scratch": scratch}))
        else:
            cases.append(Case("iterate", codec, common))
    data = [
        DataInfo(
            f"{lib} {codec}",
            f"chunks {prepared.chunks[codec][lib]}, "
            f"ratio {prepared.nrows * ROW_BYTES / path.stat().st_size:.2f}x",
            path.stat().st_size,
        )
        for codec, files in prepared.files.items()
        for lib, path in files.items()
    ]
    return BenchmarkSpec(
        name="queries",
        title=f"{part}: the spec's Record table, {prepared.nrows:,} rows",
        target="bench.queries:run_case",
        rivals=list(rivals),
        cases=cases,
        fresh_process=fresh_process,
        baseline=BASELINES[part],
        data=data,
        notes=notes_for(part, prepared),
    )


def notes_for(part: str, prepared: Prepared) -> list[str]:
    """The notes of one part's report."""

    notes = [
        f"Table: {prepared.nrows:,} rows of the spec's Record (col1, col2 Int32; col3, col4 "
        "Float64; 24 bytes), random values as PyTables' bench/indexed_search.py; each library "
        "queries the file it wrote (chunkshape: its choice for expectedrows=nrows), from the "
        "OS page cache. Codecs: none, zlib level 1, blosc2:lz4 and blosc2:zstd level 5, "
        "shuffle when compressed.",
    ]
    if part == "search":
        hits = ", ".join(f"{n}: {h:,} hits" for n, h in prepared.hits.items())
        notes.append(
            f"Query: {CONDITION} (limits from the data's quantiles; {hits}), returning col2: "
            "read_where(cond, condvars, field='col2') and [r['col2'] for r in "
            "where(cond, condvars)] on the file opened before the timing; NumPy (the same "
            "expression on the fields of an in-memory structured array), numexpr (evaluate "
            "on in-memory contiguous columns) and pandas DataFrame.query, the same in every "
            "codec group (they do not read the file)."
        )
    elif part == "append":
        notes.append(
            "Append: open_file('w') + create_table(expectedrows=nrows) + append of the "
            f"records in blocks of {APPEND_BLOCK:,} rows + flush + close, all timed; checked "
            "by the CRC-32 of the table read back by h5py after the timing."
        )
    else:
        notes.append(
            "Iterate: for row in table: total += row['col2'] (np.int64 total; the sum costs "
            "about 0.1 µs a row here, the same for both libraries)."
        )
    return notes


# ----------------------------------------------------------------------------- reports


def throughput_markdown(part: str, result: BenchmarkResult, nrows: int) -> list[str]:
    """Rows per second, GB/s and time ratio to the baseline of each measured case."""
    header = ["codec", "case", *result.rivals]
    lines = [
        f"## {part}: Mrows/s, GB/s (time / {result.baseline}; below 1: faster)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for case in result.spec.cases:
        if not result.measured(case):
            continue
        cells = []
        for rival in result.rivals:
            t, ratio = result.get(case, rival).time.median, result.time_ratio(case, rival)
            cells.append(
                f"{nrows / t / 1e6:.3g}, {nrows * ROW_BYTES / t / GB:.3g} "
                f"({'-' if ratio is None else f'{ratio:.2f}'})"
            )
        lines.append(f"| {case.group} | {case.name} | " + " | ".join(cells) + " |")
    return lines


def sizes_markdown(prepared: Prepared) -> list[str]:
    """File sizes, chunkshapes and first-write times per codec and library."""
    lines = [
        "## Files",
        "",
        "| codec | library | size (MiB) | ratio | chunks | written in |",
        "|---|---|---|---|---|---|",
    ]
    for codec, files in prepared.files.items():
        for lib, path in files.items():
            size = path.stat().st_size
            lines.append(
                f"| {codec} | {lib} | {size / 2**20:.1f} | "
                f"{prepared.nrows * ROW_BYTES / size:.2f}x | {prepared.chunks[codec][lib]} | "
                f"{prepared.write_seconds[codec][lib]:.2f} s |"
            )
    return lines


def goals(results: Mapping[str, BenchmarkResult]) -> list[tuple[bool | None, str]]:
    """The issue's "Done when" speed goals: ``(met, text)``; met is None if not measured."""
    hs, pt = "hyperslab read_where", "PyTables read_where"
    todo: list[tuple[str, BenchmarkResult, Case, str, Case, str]] = []
    if (search := results.get("search")) is not None:
        todo += [
            (f"{hs} <= {pt}, {c.group} {c.name}", search, c, hs, c, pt) for c in search.spec.cases
        ]
        by_key = {(c.group, c.name): c for c in search.spec.cases}
        for name in SELECTIVITIES:
            lz4, raw = (
                by_key.get(("blosc2:lz4", f"col2 at {name}")),
                by_key.get(("none", f"col2 at {name}")),
            )
            if lz4 is not None and raw is not None:
                todo.append(
                    (f"{hs} blosc2:lz4 <= uncompressed, col2 at {name}", search, lz4, hs, raw, hs)
                )
    for part in ("append", "iterate"):
        if (result := results.get(part)) is not None:
            todo += [
                (f"hyperslab {part} <= PyTables, {c.group}", result, c, "hyperslab", c, "PyTables")
                for c in result.spec.cases
            ]
    found: list[tuple[bool | None, str]] = []
    for what, result, my_case, me, their_case, them in todo:
        mine, theirs = result.median_time(my_case, me), result.median_time(their_case, them)
        if mine is None or theirs is None:
            found.append((None, f"{what}: not measured"))
        else:
            found.append((mine <= theirs, f"{what}: {mine:.3f} s vs {theirs:.3f} s"))
    return found


def report(
    results: Mapping[str, BenchmarkResult],
    prepared: Prepared,
    out_dir: Path,
    plot: bool = True,
    progress: Any = print_progress,
) -> int:
    """Print the combined report, write each part's reports and the summary; exit code."""
    sections, code = ["\n".join(sizes_markdown(prepared))], 0
    for part, result in results.items():
        full = format_markdown(result)
        body = full + "\n" + "\n".join(throughput_markdown(part, result, prepared.nrows))
        paths, notes = write_reports(result, out_dir / part, plot=plot)
        paths["markdown"].write_text(body + "\n")
        code = max(code, report_outcome(f"queries {part}", result, paths, notes, progress))
        if len(sections) > 1:  # the context (host, versions, files) once, in the first part
            cut = min(full.find(h) % (len(full) + 1) for h in ("\n## Failures", "\n## Time"))
            body = f"# {result.spec.title}\n\n{result.spec.notes[-1]}\n" + body[cut:]
        sections.append(body)
    met = goals(results)
    lines = goal_lines(met, "hyperslab not run")
    sections.append("\n".join(["## Goals (issue 4, medians)", "", *lines]))
    markdown = "\n\n".join(sections) + "\n"
    print(markdown)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.md").write_text(markdown)
    summary = {
        "nrows": prepared.nrows,
        "condition": CONDITION,
        "limits": prepared.limits,
        "hits": prepared.hits,
        "dropped": prepared.dropped,
        "files": {
            c: {
                lib: {"bytes": p.stat().st_size, "chunks": prepared.chunks[c][lib]}
                for lib, p in f.items()
            }
            for c, f in prepared.files.items()
        },
        "medians": {
            part: {
                f"{case.group}/{case.name}": {r: res.median_time(case, r) for r in res.rivals}
                for case in res.spec.cases
            }
            for part, res in results.items()
        },
        "goals": [{"met": m, "what": t} for m, t in met],
    }
    (out_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    progress(f"wrote {out_dir / 'results.md'}, {out_dir / 'results.json'}")
    return code


# ----------------------------------------------------------------------------- the CLI


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench queries``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("queries"),
        description="In-kernel queries (the spec's complex query at 1% and 0.01% "
        "selectivity), table appends and row iteration of the spec's Record table: "
        "hyperslab vs PyTables, with NumPy, numexpr and pandas in memory for reference. "
        f"--rivals takes library names ({', '.join(ALL_LIBRARIES)}); the baseline is "
        "PyTables.",
    )
    add_common_arguments(parser)
    parser.add_argument("--rows", type=int, default=None, help=f"rows (default {DEFAULT_ROWS:,})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows, 3 repeats")
    parser.add_argument(
        "--parts", "--cases", type=comma_list, default=None, help=f"parts ({','.join(PARTS)})"
    )
    parser.add_argument(
        "--codecs", type=comma_list, default=None, help=f"codecs ({','.join(CODECS)})"
    )
    parser.add_argument(
        "--tmpdir", "--dir", type=Path, default=None, help="folder for the files (system's)"
    )
    parser.add_argument(
        "--fresh-process",
        action="store_true",
        help="run each repetition in a new interpreter and report peak memory (slower)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNGs")
    return parser


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    nrows = args.rows if args.rows is not None else (QUICK_ROWS if args.quick else DEFAULT_ROWS)
    if nrows < 100:
        parser.error(f"--rows must be at least 100, not {nrows}")
    if args.baseline is not None:
        parser.error("--baseline is fixed here: PyTables (read_where for the search)")
    try:
        parts = pick(PARTS, args.parts, "part")
        codecs = pick(list(CODECS), args.codecs, "codec")
        libraries = pick(ALL_LIBRARIES, args.rivals, "rival library")
    except BenchmarkError as exc:
        parser.error(str(exc))
    repeat = args.repeat or (3 if args.quick else 5)
    try:
        with scratch_folder("queries", args.tmpdir) as folder:
            return _run(args, folder, nrows, parts, codecs, libraries, repeat)
    finally:
        _SOURCES.clear()


def _run(
    args: argparse.Namespace,
    folder: Path,
    nrows: int,
    parts: list[str],
    codecs: list[str],
    libraries: list[str],
    repeat: int,
) -> int:
    t0 = time.perf_counter()
    writers = []
    for library in [lib for lib in LIBRARIES if lib in libraries]:
        reason = _table_rival(library, library, "append").unavailable_reason()
        if reason is None:
            writers.append(library)
        else:
            print_progress(f"skipping {library}: {reason}")
    if not writers:
        print("queries: error: neither hyperslab nor PyTables can run here", file=sys.stderr)
        return 1
    prepared = prepare(folder, nrows, writers, codecs, print_progress)
    results: dict[str, BenchmarkResult] = {}
    for part in parts:
        usable = {lib for lib in writers if lib not in prepared.dropped}
        rivals = [
            r
            for r in PART_RIVALS[part]
            if r.library in libraries
            and (r.library not in LIBRARIES or {r.library, r.file_of} <= usable)
        ]
        if not rivals:
            print_progress(f"part {part}: no rival selected, skipped")
            continue
        spec = build_spec(part, prepared, rivals, args.fresh_process)
        print_progress(f"part {part}: {len(spec.cases)} cases, rivals {[r.name for r in rivals]}")
        try:
            results[part] = run_benchmark(spec, repeat, timeout=args.timeout)
        except BenchmarkError as exc:
            print(f"queries {part}: error: {exc}", file=sys.stderr)
            return 1
    out_dir = default_out_dir("queries") if args.out is None else args.out
    code = report(results, prepared, out_dir, plot=not args.no_plot)
    print_progress(f"queries: {time.perf_counter() - t0:.0f} s in all")
    return code


if __name__ == "__main__":
    sys.exit(main())
