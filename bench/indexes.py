"""The ``indexes`` benchmark: column index creation, indexed queries and sorted tables.

The table is the spec's ``Record`` (col1, col2 Int32; col3, col4 Float64: 24 bytes a row),
``nrows`` rows (default 10 million), made and written exactly as by :mod:`bench.queries`
(its :func:`~bench._queries_data.make_records` and :func:`~bench.queries.write_table`): each
library (hyperslab and PyTables) writes its own unindexed table per codec (:data:`CODECS`,
default none and blosc2:lz4), then indexes its own copies.  Two parts:

``create``
    For each codec, column (col2 Int32, col4 Float64) and ``kind:optlevel`` pair of
    ``--kinds`` (default medium:6 and full:9): copy the unindexed file (untimed), open it,
    time ``cols.<column>.create_index(optlevel=, kind=)`` and a flush.  The index's size is
    the growth of the file.  Checked: the index's kind, optlevel, is_csi and nelements,
    ``will_query_use_indexing`` and a query on the column, read back after the timing.
    Each index is built once per timed run (``--create-repeat``, default 3: the report
    gives their median), with no untimed run before: the result of every timed run is
    checked instead (:func:`run_checked`).
``query``
    The range query :data:`CONDITION` on col4 returning col2
    (``read_where(CONDITION, condvars, field="col2")``), with limits taken from the sorted
    col4 values so that exactly 1, 10, 100, ... 1,000,000 rows match (:data:`HIT_COUNTS`,
    :func:`query_limits`), in three modes per library: ``in-kernel`` (the unindexed
    table), ``indexed`` (a copy with a full:9 index on col4, :data:`QUERY_INDEX`: the
    ``create`` part's file where it made one, :func:`reusable_indexes`) and
    ``sorted`` (``table.copy(newname="sorted", sortby="col4", checkCSI=True,
    propindexes=True)`` of the indexed table); hyperslab also queries the file PyTables
    indexed and its sorted copy (the rivals ``hyperslab indexed (index by PyTables)`` and
    ``hyperslab sorted (index by PyTables)``: the same file, table and index as ``PyTables
    indexed`` and ``PyTables sorted``); and SQLite (Python's ``sqlite3``): the same
    rows in a table with an index on col4, ``SELECT col2 FROM t WHERE col4 >= ? AND col4
    < ?`` (:data:`SQL`).  Each is timed ``cold`` (open, query, close: a file or connection
    just opened; hyperslab's compiled conditions, which outlive a file, forgotten first),
    ``warm`` (the query again on the file or connection that ran it, each library keeping
    an indexed query's matches as it does by default: hyperslab up to 65,536 rows per
    query, PyTables 1,024) and ``warm-equal`` (the same, hyperslab keeping no more matches
    per query than PyTables' ``ITERSEQ_MAX_ELEMENTS``).

Every query's result is compared, as a sorted multiset (:func:`sorted_check`), with
NumPy's on the records, and across rivals by the harness, before anything is timed.  A
rival whose :func:`smoke_test` fails is not run, and the run fails (exit status 1) after
measuring the others.  All files go into a temporary folder
(``--tmpdir``) removed at the end.  The cases' kinds, hit counts and limits, and what the
setup prepared, are in :mod:`bench._indexes_data`; what the rivals do with their files is
in :mod:`bench._indexes_ops`; the reports are built by :mod:`bench._indexes_report`.

Run ``python -m bench indexes --help`` (or ``hyperslab bench indexes --help``).  The
default run (10 million rows) took 20 minutes on the 2-core VM of the project with another
process busy on one core, most of it PyTables building indexes (25 to 67 s each), twice
per ``create`` case (the harness's checking run and the timed one) and once more for the
queries.  Building each index once (:func:`run_checked`, reusing the ``create`` part's for
the queries) saves about 6.5 of those minutes: about 13.5 minutes expected (46 s setup,
5 min create, 2.3 min sorted copies, 5.5 min queries).  100 million rows (``--rows``)
would take hours there.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._indexes_data import (
    COLUMNS,
    HIT_COUNTS,
    Built,
    Prepared,
    fitting_hits,
    hits_label,
    kind_label,
    parse_kinds,
    query_limits,
)
from bench._indexes_ops import (
    CONDITION,
    MODES,
    QUERY_COLUMN,
    QUERY_INDEX,
    SORTED_NODE,
    build_index,
    expected_index,
    index_check,
    library_module,
    numpy_values,
    probe_of,
    query_sqlite,
    query_table,
    rival_name,
    run_checked,
    smoke_test,
    sort_table,
    sorted_check,
    write_sqlite,
)
from bench._indexes_report import index_sizes, notes_for, report
from bench._queries_data import make_records, records_crc32
from bench._reductions_report import keep_freed_memory
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
    positive_int,
    print_progress,
    run_benchmark,
    scratch_folder,
    with_thread_option,
)
from bench.queries import CODECS, LIBRARIES, MODULES, NODE, file_info, write_table

DEFAULT_ROWS = 10_000_000
QUICK_ROWS = 20_000
DEFAULT_CODECS = ("none", "blosc2:lz4")
DEFAULT_KINDS = "medium:6,full:9"
PARTS = ("create", "query")
CACHES = ("cold", "warm", "warm-equal")
SQLITE = "SQLite"
ALL_LIBRARIES = (*LIBRARIES, SQLITE)
DEFAULT_REPEAT = 3
DEFAULT_CREATE_REPEAT = 3
BASELINES = {"create": "hyperslab", "query": "hyperslab indexed"}


# ----------------------------------------------------------------------------- the rivals


@dataclasses.dataclass(frozen=True)
class IndexRival(Rival):
    """A rival: ``library`` (hyperslab, PyTables or SQLite) in ``mode`` (``indexed``,
    ``in-kernel``, ``sorted``, or ``create`` for the index creation), querying the file
    ``files_of`` wrote (its own by default: hyperslab also queries the table and index
    PyTables wrote, the same file PyTables queries).

    hyperslab and PyTables are available only if their :func:`smoke_test` of the mode
    passes.
    """

    library: str = ""
    mode: str = ""
    files_of: str = ""

    @property
    def writer(self) -> str:
        """The library whose file the rival queries."""
        return self.files_of or self.library

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here (import or smoke test), or None."""
        reason = super().unavailable_reason()
        if reason is None and self.library in LIBRARIES:
            return smoke_test(self.library)["indexed" if self.mode == "create" else self.mode]
        return reason


def _rival(library: str, mode: str, files_of: str = "") -> IndexRival:
    name = rival_name(library, mode, files_of)
    modules = ("sqlite3", "numpy") if library == SQLITE else (MODULES[library],)
    if files_of:
        modules = (*modules, MODULES[files_of])
    return IndexRival(name, modules, None, library, mode, files_of)


ON_PYTABLES_INDEX = tuple(_rival("hyperslab", mode, "PyTables") for mode in ("indexed", "sorted"))
"""hyperslab querying the file PyTables wrote and indexed (and its sorted copy)."""

PART_RIVALS: dict[str, tuple[IndexRival, ...]] = {
    "create": tuple(_rival(lib, "create") for lib in LIBRARIES),
    "query": (
        *(_rival(lib, mode) for lib in LIBRARIES for mode in MODES),
        *ON_PYTABLES_INDEX,
        _rival(SQLITE, "indexed"),
    ),
}


def rival_named(name: str) -> IndexRival:
    """Return the rival called ``name`` in any part."""
    for rivals in PART_RIVALS.values():
        for rival in rivals:
            if rival.name == name:
                return rival
    raise BenchmarkError(f"unknown rival {name!r}")


# ----------------------------------------------------------------------------- one run


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one case for one rival (the harness's target function).

    ``params`` holds ``part``; for ``create``: ``column``, ``kind``, ``optlevel``, ``plain``
    and ``scratch`` (``{library: path}``: the unindexed file, and the copy to index, kept
    for its size) and ``expected`` (:func:`expected_index`); for ``query``: ``cache``,
    ``limits``, ``expected`` (NumPy's :func:`sorted_check`), ``files`` (``{library:
    {"plain": path, "indexed": path}}``) and ``sqlite`` (the database).  Returns the
    check, after comparing it with ``expected``.

    Raises
    ------
    BenchmarkError
        For an unknown rival or part, a library's failure or a result that differs from
        the expected one (each message names the rival, part and case).
    """
    who = rival_named(rival)
    part = params.get("part")
    if part not in PARTS:
        raise BenchmarkError(f"unknown part {part!r} of case {case!r}; known: {PARTS}")
    what = f"{rival} {part} {case}"
    try:
        if part == "create":
            scratch = params["scratch"][who.library]
            column, kind, optlevel = params["column"], params["kind"], params["optlevel"]
            build_index(
                who.library, params["plain"][who.library], scratch, column, kind, optlevel, timer
            )
            found = index_check(who.library, scratch, column, params["probe"])
        elif who.library == SQLITE:
            found = sorted_check(
                query_sqlite(params["sqlite"], params["limits"], params["cache"], timer)
            )
        else:
            files = params["files"][who.writer]
            path = files["plain" if who.mode == "in-kernel" else "indexed"]
            node = SORTED_NODE if who.mode == "sorted" else NODE
            values = query_table(who.library, path, node, params["limits"], params["cache"], timer)
            found = sorted_check(values)
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{what}: {type(exc).__name__}: {exc}") from exc
    if found != params["expected"]:
        raise BenchmarkError(f"{what}: got {found}, but expected {params['expected']}")
    return found


# ----------------------------------------------------------------------------- setup


def _build(
    prepared: Prepared,
    what: str,
    library: str,
    codec: str,
    path: Path,
    work: Callable[[Timer], None],
    progress: Callable[[str], None],
    before: int = 0,
) -> bool:
    """Run ``work`` (building ``path``, of ``before`` bytes until then), record the time
    and the bytes added; on failure drop ``library``."""
    timer = Timer()
    try:
        work(timer)
    except Exception as exc:  # a failing library is dropped, the others go on
        prepared.dropped[library] = f"{what} ({codec}) failed: {type(exc).__name__}: {exc}"
        progress(f"dropping {library}: {prepared.dropped[library]}")
        return False
    assert timer.seconds is not None
    grown = path.stat().st_size - before
    prepared.built.append(Built(what, library, codec, path, timer.seconds, grown))
    progress(f"{library} {codec}: {what}, {grown:,} bytes in {timer.seconds:.2f} s")
    return True


def _write_plain(library: str, path: Path, records: Any, codec: str, timer: Timer) -> None:
    write_table(library, str(path), records, codec, timer)
    if file_info(str(path))[0] != records_crc32(records):
        raise BenchmarkError(f"its {codec} table differs from the data (h5py)")


def _check_uses_index(library: str, path: Path, limits: Mapping[str, float]) -> None:
    with library_module(library).open_file(str(path), mode="r") as f:
        for node in (NODE, SORTED_NODE):
            used = set(f.get_node("/" + node).will_query_use_indexing(CONDITION, limits))
            if used != {QUERY_COLUMN}:
                raise BenchmarkError(f"a query of /{node} would use the indexes of {used}")


def write_tables(
    prepared: Prepared,
    records: Any,
    codecs: Sequence[str],
    writers: Sequence[str],
    progress: Callable[[str], None] = print_progress,
) -> None:
    """Write each writer's unindexed table per codec (checked with h5py)."""
    for codec in codecs:
        for library in writers:
            if library in prepared.dropped:
                continue
            plain = prepared.folder / f"{library}-{codec.replace(':', '-')}.h5"
            work = functools.partial(_write_plain, library, plain, records, codec)
            if _build(prepared, "table", library, codec, plain, work, progress):
                prepared.plain.setdefault(codec, {})[library] = plain


def reusable_indexes(
    result: BenchmarkResult | None, sizes: Mapping[str, Mapping[str, int | None]]
) -> dict[str, dict[str, Built]]:
    """``{codec: {library: Built}}``: the files of the ``create`` part that hold the index
    the queries need (:data:`QUERY_INDEX` on col4), measured without failure."""
    found: dict[str, dict[str, Built]] = {}
    if result is None:
        return found
    for case in result.spec.cases:
        params = case.params
        wanted = (params["column"], params["kind"], params["optlevel"])
        if wanted != (QUERY_COLUMN, *QUERY_INDEX) or not result.measured(case):
            continue
        for library in result.rivals:
            path, seconds = Path(params["scratch"][library]), result.median_time(case, library)
            nbytes = sizes.get(case.key, {}).get(library)
            if path.exists() and seconds is not None and nbytes is not None:
                what = f"{QUERY_COLUMN} index {kind_label(*QUERY_INDEX)} (create part)"
                built = Built(what, library, case.group, path, seconds, nbytes)
                found.setdefault(case.group, {})[library] = built
    return found


def prepare_query_files(
    prepared: Prepared,
    sorters: Sequence[str],
    reused: Mapping[str, Mapping[str, Built]],
    progress: Callable[[str], None] = print_progress,
) -> None:
    """Give each of the ``sorters`` its indexed file per codec (:data:`QUERY_INDEX` on col4:
    the ``create`` part's file if ``reused`` has it, else a new one) and add the sorted copy
    to it; check that queries of both tables would use the index."""
    limits = next(iter(prepared.limits.values()), prepared.probes[QUERY_COLUMN]["limits"])
    for codec, tables in prepared.plain.items():
        for library, plain in tables.items():
            if library not in sorters or library in prepared.dropped:
                continue
            built = reused.get(codec, {}).get(library)
            if built is None:
                indexed = plain.with_name(f"{plain.stem}-indexed.h5")
                what = f"{QUERY_COLUMN} index {kind_label(*QUERY_INDEX)}"
                args = (library, str(plain), str(indexed), QUERY_COLUMN, *QUERY_INDEX)
                work = functools.partial(build_index, *args)
                size = plain.stat().st_size
                if not _build(prepared, what, library, codec, indexed, work, progress, size):
                    continue
            else:
                indexed = built.path
                prepared.built.append(built)
            work = functools.partial(sort_table, library, str(indexed))
            size = indexed.stat().st_size
            if not _build(prepared, "sorted copy", library, codec, indexed, work, progress, size):
                continue
            try:
                _check_uses_index(library, indexed, limits)
            except BenchmarkError as exc:
                prepared.dropped[library] = f"{codec}: {exc}"
                continue
            prepared.indexed.setdefault(codec, {})[library] = indexed


def prepare(
    folder: Path,
    nrows: int,
    hit_counts: Sequence[int],
    codecs: Sequence[str],
    writers: Sequence[str],
    sqlite: bool,
    progress: Callable[[str], None] = print_progress,
) -> Prepared:
    """Make the records, limits and expected checks; write the writers' tables and (if
    ``sqlite``) the SQLite database.  The records are not kept."""
    progress(f"making {nrows:,} records in {folder}...")
    records = make_records(nrows)
    limits = query_limits(records, hit_counts)
    expected = {
        n: sorted_check(numpy_values(records, QUERY_COLUMN, lim)) for n, lim in limits.items()
    }
    probes = {column: probe_of(records, column) for column in COLUMNS}
    prepared = Prepared(folder, nrows, limits, expected, probes)
    progress("hits: " + ", ".join(f"{n:,}: {h:,}" for n, h in prepared.hits.items()))
    write_tables(prepared, records, codecs, writers, progress)
    if sqlite:
        path = folder / "records.sqlite"
        progress(f"writing {nrows:,} rows into SQLite...")
        info = write_sqlite(str(path), records)
        prepared.sqlite, prepared.sqlite_info = path, info
        progress(
            f"SQLite: {info['insert_seconds']:.2f} s to insert, {info['index_seconds']:.2f} s "
            f"to index col4; {info['bytes']:,} bytes; plan: {info['plan']}"
        )
    return prepared


# ----------------------------------------------------------------------------- the specs


def create_cases(prepared: Prepared, kinds: Sequence[tuple[str, int]]) -> list[Case]:
    """The cases of the ``create`` part: codec x column x kind, each library's scratch file
    named after the case (it stays until the end, for its size)."""
    cases = []
    for codec, plain in prepared.plain.items():
        for column in COLUMNS:
            for kind, optlevel in kinds:
                label = kind_label(kind, optlevel)
                stem = f"{codec.replace(':', '-')}-{column}-{kind}-{optlevel}"
                params = {
                    "part": "create",
                    "codec": codec,
                    "column": column,
                    "kind": kind,
                    "optlevel": optlevel,
                    "plain": {lib: str(p) for lib, p in plain.items()},
                    "scratch": {lib: str(prepared.folder / f"{lib}-{stem}.h5") for lib in plain},
                    "probe": prepared.probes[column],
                    "expected": expected_index(
                        column, kind, optlevel, prepared.nrows, prepared.probes[column]
                    ),
                }
                cases.append(Case(f"{column} {label}", codec, params))
    return cases


def query_cases(prepared: Prepared, codecs: Sequence[str]) -> list[Case]:
    """The cases of the ``query`` part: codec x cache x hit count."""
    cases = []
    for codec in codecs:
        plain, indexed = prepared.plain.get(codec, {}), prepared.indexed.get(codec, {})
        files = {
            lib: {"plain": str(p), "indexed": str(indexed.get(lib, ""))} for lib, p in plain.items()
        }
        for cache in CACHES:
            for hits, limits in prepared.limits.items():
                params = {
                    "part": "query",
                    "codec": codec,
                    "cache": cache,
                    "limits": limits,
                    "expected": prepared.expected[hits],
                    "files": files,
                    "sqlite": str(prepared.sqlite or ""),
                }
                cases.append(Case(hits_label(hits), f"{codec} {cache}", params))
    return cases


def build_spec(
    part: str,
    prepared: Prepared,
    rivals: Sequence[IndexRival],
    cases: Sequence[Case],
    fresh_process: bool,
) -> BenchmarkSpec:
    """Return the benchmark description of one part."""
    data = [
        DataInfo(
            f"{b.library} {b.codec} {b.what}",
            f"in {b.path.name}, built in {b.seconds:.2f} s",
            b.nbytes,
        )
        for b in prepared.built
    ]
    if prepared.sqlite is not None:
        info = prepared.sqlite_info
        seconds = info["insert_seconds"] + info["index_seconds"]
        data.append(
            DataInfo("SQLite table + col4 index", f"built in {seconds:.2f} s", info["bytes"])
        )
    title = {
        "create": "index creation",
        "query": f"queries on {QUERY_COLUMN}, indexed, in-kernel, sorted and SQLite",
    }[part]
    return BenchmarkSpec(
        name="indexes",
        title=f"{title}: the spec's Record table, {prepared.nrows:,} rows",
        target="bench.indexes:run_case",
        rivals=list(rivals),
        cases=list(cases),
        fresh_process=fresh_process,
        baseline=BASELINES[part],
        data=data,
        notes=notes_for(part, prepared),
    )


# ----------------------------------------------------------------------------- the CLI


@dataclasses.dataclass(frozen=True)
class Options:
    """The checked options of a run."""

    nrows: int
    parts: list[str]
    codecs: list[str]
    kinds: list[tuple[str, int]]
    hits: list[int]
    libraries: list[str]
    modes: list[str]
    repeat: int
    create_repeat: int


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench indexes``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("indexes"),
        description="Column indexes of the spec's Record table: index creation time and "
        "size per kind:optlevel, and queries of 1 to 1,000,000 hits cold and warm, indexed, "
        "in-kernel and on a sorted copy: hyperslab vs PyTables, and SQLite with an index. "
        f"--rivals takes library names ({', '.join(ALL_LIBRARIES)}); ratios are to "
        "hyperslab.",
    )
    add_common_arguments(parser, DEFAULT_REPEAT)
    parser.add_argument("--rows", type=int, default=None, help=f"rows (default {DEFAULT_ROWS:,})")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows")
    parser.add_argument("--parts", type=comma_list, default=None, help=f"{','.join(PARTS)}")
    parser.add_argument(
        "--codecs",
        type=comma_list,
        default=None,
        help=f"codecs ({','.join(CODECS)}; default {','.join(DEFAULT_CODECS)})",
    )
    parser.add_argument(
        "--kinds",
        type=parse_kinds,
        default=parse_kinds(DEFAULT_KINDS),
        help=f"KIND:OPTLEVEL pairs of the create part (default {DEFAULT_KINDS})",
    )
    parser.add_argument(
        "--hits",
        type=comma_list,
        default=None,
        help=f"hit counts of the queries (default {','.join(map(str, HIT_COUNTS))}; those "
        "that do not fit in the table are left out)",
    )
    parser.add_argument("--modes", type=comma_list, default=None, help=f"{','.join(MODES)}")
    parser.add_argument(
        "--create-repeat",
        type=positive_int,
        default=DEFAULT_CREATE_REPEAT,
        help=f"timed runs of each index creation (default {DEFAULT_CREATE_REPEAT}, after "
        "the checking run)",
    )
    parser.add_argument("--tmpdir", type=Path, default=None, help="folder for the files")
    parser.add_argument(
        "--fresh-process",
        action="store_true",
        help="run each repetition in a new interpreter and report peak memory (slower)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNGs")
    return parser


def parse_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    """Check the options and turn them into :class:`Options` (``parser.error`` if wrong)."""
    nrows = args.rows if args.rows is not None else (QUICK_ROWS if args.quick else DEFAULT_ROWS)
    if nrows < 100:
        parser.error(f"--rows must be at least 100, not {nrows}")
    if args.baseline is not None:
        parser.error("--baseline is fixed here: hyperslab (indexed for the queries)")
    try:
        wanted = HIT_COUNTS if args.hits is None else [int(h) for h in args.hits]
    except ValueError:
        parser.error(f"--hits wants integers, not {args.hits}")
    hits = fitting_hits(nrows, wanted)
    if args.hits is not None and len(hits) < len(wanted):
        parser.error(f"--hits {sorted(set(wanted) - set(hits))} do not fit in {nrows:,} rows")
    try:
        return Options(
            nrows=nrows,
            parts=pick(PARTS, args.parts, "part"),
            codecs=pick(list(CODECS), args.codecs or list(DEFAULT_CODECS), "codec"),
            kinds=args.kinds,
            hits=hits,
            libraries=pick(ALL_LIBRARIES, args.rivals, "rival library"),
            modes=pick(MODES, args.modes, "mode"),
            repeat=args.repeat or DEFAULT_REPEAT,
            create_repeat=args.create_repeat,
        )
    except BenchmarkError as exc:
        parser.error(str(exc))


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options = parse_options(parser, args)
    with scratch_folder("indexes", args.tmpdir) as folder:
        return _run(args, options, folder)


def choose_rivals(options: Options) -> dict[str, list[IndexRival]]:
    """The rivals of each part chosen by the options (available or not)."""
    chosen = {
        "create": [r for r in PART_RIVALS["create"] if r.library in options.libraries],
        "query": [
            r
            for r in PART_RIVALS["query"]
            if r.library in options.libraries and r.writer in options.libraries
            and (r.library == SQLITE or r.mode in options.modes)
        ],
    }
    return {part: chosen[part] for part in options.parts if chosen[part]}


@dataclasses.dataclass(frozen=True)
class Plan:
    """Who runs, from the chosen rivals' availability: the libraries that write tables,
    those whose index and sorted copy the queries need, whether SQLite is built, and the
    rivals that failed their smoke test (a failure of the run)."""

    writers: list[str]
    sorters: list[str]
    sqlite: bool
    broken: dict[str, str]


def plan_run(chosen: Mapping[str, Sequence[IndexRival]]) -> Plan:
    """Ask every chosen rival whether it can run (smoke tests) and plan the setup."""
    ready: dict[str, list[IndexRival]] = {}
    broken: dict[str, str] = {}
    for part, rivals in chosen.items():
        ready[part] = []
        for rival in rivals:
            reason = rival.unavailable_reason()
            if reason is None:
                ready[part].append(rival)
            elif reason.startswith("smoke test"):
                broken[rival.name] = reason
    users = {r.library for rivals in ready.values() for r in rivals}
    queriers = ready.get("query", [])
    return Plan(
        writers=[lib for lib in LIBRARIES if lib in users],
        sorters=[
            lib
            for lib in LIBRARIES
            if any(r.library == lib and r.mode in ("indexed", "sorted") for r in queriers)
        ],
        sqlite=any(r.library == SQLITE for r in queriers),
        broken=broken,
    )


def _run_part(
    part: str,
    prepared: Prepared,
    rivals: Sequence[IndexRival],
    cases: Sequence[Case],
    repeat: int,
    args: argparse.Namespace,
) -> BenchmarkResult | None:
    """Run one part (None, said on stderr, if it could not run)."""
    usable = [r for r in rivals
              if r.library not in prepared.dropped and r.writer not in prepared.dropped]
    spec = build_spec(part, prepared, usable, cases, args.fresh_process)
    print_progress(f"part {part}: {len(cases)} cases, rivals {[r.name for r in usable]}")
    try:
        with keep_freed_memory():
            if part == "create":
                return run_checked(spec, repeat, args.timeout, print_progress)
            return run_benchmark(spec, repeat, timeout=args.timeout)
    except BenchmarkError as exc:
        print(f"indexes {part}: error: {exc}", file=sys.stderr)
        return None


def _run(args: argparse.Namespace, options: Options, folder: Path) -> int:
    t0 = time.perf_counter()
    chosen = choose_rivals(options)
    plan = plan_run(chosen)
    if not plan.writers and not plan.sqlite:
        print("indexes: error: no rival can run here", file=sys.stderr)
        return 1
    hits = options.hits if "query" in chosen else []
    prepared = prepare(folder, options.nrows, hits, options.codecs, plan.writers, plan.sqlite)
    print_progress(f"setup: {time.perf_counter() - t0:.0f} s")
    results: dict[str, BenchmarkResult] = {}
    sizes: dict[str, dict[str, int | None]] = {}
    for part, rivals in chosen.items():
        if part == "create":
            cases, repeat = create_cases(prepared, options.kinds), options.create_repeat
        else:
            reused = reusable_indexes(results.get("create"), sizes)
            prepare_query_files(prepared, plan.sorters, reused)
            cases, repeat = query_cases(prepared, options.codecs), options.repeat
        result = _run_part(part, prepared, rivals, cases, repeat, args)
        if result is None:
            return 1
        results[part] = result
        if part == "create":  # before the sorted copies go into the files of the part
            sizes = index_sizes(result)
    out_dir = default_out_dir("indexes") if args.out is None else args.out
    code = report(results, prepared, sizes, out_dir, plot=not args.no_plot)
    for name, reason in {**plan.broken, **prepared.dropped}.items():
        print(f"indexes: {name} failed: {reason}", file=sys.stderr)
        code = 1
    print_progress(f"indexes: {time.perf_counter() - t0:.0f} s in all")
    return code


if __name__ == "__main__":
    sys.exit(main())
