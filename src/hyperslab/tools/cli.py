"""The ``hyperslab`` command: ``ls``, ``demo`` and ``bench``.

``main(argv) -> int`` parses its arguments afresh on every call (no module-level options),
so it can be called from tests as well as from the console script.  Errors that are the
user's (a missing file, a file that is not HDF5, an unknown benchmark) print one line on
stderr and return 2; there is no traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import hyperslab
from hyperslab.tools.benchrun import BenchNotFoundError, run_bench
from hyperslab.tools.demo import run_demo
from hyperslab.tools.ls import ListingError, run_ls

EXIT_USAGE = 2
"""Exit code of user errors (as argparse uses for bad options)."""


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
        help="list the nodes of a file as a tree",
        description="List the nodes of an HDF5 file: path, class, shape, dtype, chunk shape, "
        "filters and compression ratio (size in memory / size on disk).",
    )
    ls.add_argument("file", help="an HDF5 file")
    ls.add_argument("where", nargs="?", default="/", help="node to start from (default /)")
    ls.add_argument(
        "-r",
        "--recursive",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="descend into subgroups (default; --no-recursive: the node and its children)",
    )
    ls.add_argument("-a", "--attrs", action="store_true", help="show the attributes of each node")

    demo = commands.add_parser(
        "demo",
        help="write, list, read back and check a sample file (a few seconds)",
        description="Write a sample file in a temporary folder (groups, an Array, a compressed "
        "CArray, an EArray with appends, attributes), list it, read it back, check it and "
        "delete it.",
    )
    demo.add_argument("--keep", action="store_true", help="keep the temporary folder")

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
    if args.command == "ls":
        try:
            run_ls(args.file, args.where, recursive=args.recursive, show_attrs=args.attrs)
        except ListingError as exc:
            return _error("ls", str(exc))
        return 0
    if args.command == "demo":
        return run_demo(keep=args.keep)
    if args.command == "bench":
        bench_args = [args.name, *args.args] if args.name else list(args.args)
        try:
            return run_bench(bench_args)
        except BenchNotFoundError as exc:
            return _error("bench", str(exc))
    parser.print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
