"""The ``hyperslab`` command: ``ls``, ``dump``, ``tree``, ``demo`` and ``bench``.

``main(argv) -> int`` parses its arguments afresh on every call (no module-level options),
so it can be called from tests as well as from the console script.  Errors that are the
user's (a missing file, a file that is not HDF5, an unknown benchmark) print one line on
stderr and return 2; there is no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import hyperslab
from hyperslab.tools.benchrun import BenchNotFoundError, run_bench
from hyperslab.tools.demo import DEFAULT_PATH, run_demo
from hyperslab.tools.dump import DEFAULT_ROWS, DumpOptions, run_dump
from hyperslab.tools.ls import ListingError, run_ls, split_source
from hyperslab.tools.tree import SORT_KEYS, run_tree

EXIT_USAGE = 2
"""Exit code of user errors (as argparse uses for bad options)."""


FILE_HELP = "an HDF5 file, or FILE:/node for one node of it (data.h5:/run1)"


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``hyperslab`` command."""
    parser = argparse.ArgumentParser(
        prog="hyperslab",
        description="Fast, compressed, hierarchical datasets in HDF5 files.",
    )
    parser.add_argument("--version", action="version", version=f"hyperslab {hyperslab.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    ls = commands.add_parser(
        "ls",
        help="list the nodes of a file, one line each",
        description="List the nodes of an HDF5 file: path, class, shape, dtype, chunk shape, "
        "filters and compression ratio (uncompressed size / stored size; marked * where the "
        "data fill only part of their chunks, and then computed over the whole chunks).",
    )
    ls.add_argument("file", help=FILE_HELP)
    ls.add_argument("where", nargs="?", default=None, help="node to start from (default /)")
    ls.add_argument(
        "-r",
        "--recursive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="descend into subgroups (default; --no-recursive: the node and its children)",
    )
    ls.add_argument("-a", "--attrs", action="store_true", help="show the attributes of each node")
    ls.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the columns of tables: name, type, shape and index (kind(optlevel), dirty)",
    )

    dump = commands.add_parser(
        "dump",
        help="show the nodes of a file with their metadata, attributes and data (ptdump)",
        description="Show every node below file[:/node] (the root by default): path, class, "
        "shape, dtype and title, and with options its layout, attributes, columns and data.",
    )
    dump.add_argument("file", help=FILE_HELP)
    dump.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="layout: shape, dtype, chunk shape, filters, sizes; columns and indexes of tables",
    )
    dump.add_argument(
        "-a", "--attrs", action="store_true", help="attributes: the user's, then the system's"
    )
    dump.add_argument("-d", "--data", action="store_true", help="the first rows of each leaf")
    dump.add_argument(
        "--rows",
        type=_non_negative,
        default=DEFAULT_ROWS,
        metavar="N",
        help=f"rows of data shown per leaf with -d (default {DEFAULT_ROWS})",
    )
    dump.add_argument(
        "-c", "--columns", action="store_true", help="the column descriptions (Col) of tables"
    )

    tree = commands.add_parser(
        "tree",
        help="show the hierarchy with stored and uncompressed sizes (pttree)",
        description="Show the tree below file[:/node] (the root by default) with, for each "
        "leaf, the storage allocated to its dataset, its uncompressed size, their ratio and "
        "its share of the total; groups show the sums of their branch.",
    )
    tree.add_argument("file", help=FILE_HELP)
    tree.add_argument(
        "-L",
        "--depth",
        type=_non_negative,
        default=None,
        metavar="N",
        help="show N levels below the top node at most (the sums still count everything)",
    )
    tree.add_argument(
        "-s",
        "--sort",
        choices=SORT_KEYS,
        default="name",
        help="order of each group's children: by name (default) or largest stored first",
    )
    tree.add_argument(
        "-b", "--bytes", action="store_true", help="sizes in bytes instead of KiB, MiB, ..."
    )

    demo = commands.add_parser(
        "demo",
        help="write a realistic file and time queries, reductions and slices on it",
        description="Write a table of 2.5 million rows and a 256 MiB 3-D array (Blosc2), "
        "time the same query scanned and indexed, reductions on disk and a slice along each "
        "axis, compare the answers with PyTables' (when installed), keep the file and list "
        "it. Tens of seconds; --small takes a second or two.",
    )
    demo.add_argument(
        "--path", default=DEFAULT_PATH, help=f"the file to write (default ./{DEFAULT_PATH})"
    )
    demo.add_argument("--small", action="store_true", help="a file 100 times smaller")

    bench = commands.add_parser(
        "bench",
        help="run a benchmark of the checkout's bench/ folder",
        description="Run `python -m bench NAME [ARGS]` of the hyperslab checkout (found from "
        "the installed package or the current folder). `hyperslab bench NAME --help` lists a "
        "benchmark's options; `hyperslab bench` lists the benchmarks.",
    )
    bench.add_argument("name", nargs="?", help="benchmark name, e.g. nodes")
    bench.add_argument("args", nargs=argparse.REMAINDER, help="options of the benchmark")
    return parser


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, not {text!r}")
    return value


def _error(command: str, message: str) -> int:
    print(f"hyperslab {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hyperslab`` command line; return the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 1 if a demo check or a benchmark failed, 2 for user errors.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # --help, --version, bad options
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    handler = _HANDLERS.get(args.command)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    return handler(args)


def _source(args: argparse.Namespace) -> tuple[str, str]:
    path, where = split_source(args.file)
    return path, getattr(args, "where", None) or where


def _ls(args: argparse.Namespace) -> int:
    path, where = _source(args)
    try:
        run_ls(path, where, args.recursive, args.attrs, verbose=args.verbose)
    except ListingError as exc:
        return _error("ls", str(exc))
    return 0


def _dump(args: argparse.Namespace) -> int:
    path, where = _source(args)
    options = DumpOptions(args.verbose, args.attrs, args.data, args.columns, args.rows)
    try:
        run_dump(path, where, options)
    except ListingError as exc:
        return _error("dump", str(exc))
    return 0


def _tree(args: argparse.Namespace) -> int:
    path, where = _source(args)
    try:
        run_tree(path, where, args.depth, args.sort, args.bytes)
    except ListingError as exc:
        return _error("tree", str(exc))
    return 0


def _demo(args: argparse.Namespace) -> int:
    return run_demo(args.path, args.small)


def _bench(args: argparse.Namespace) -> int:
    bench_args = [args.name, *args.args] if args.name else list(args.args)
    try:
        return run_bench(bench_args)
    except BenchNotFoundError as exc:
        return _error("bench", str(exc))


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "ls": _ls,
    "dump": _dump,
    "tree": _tree,
    "demo": _demo,
    "bench": _bench,
}


if __name__ == "__main__":
    sys.exit(main())
