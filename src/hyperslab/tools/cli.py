"""The ``hyperslab`` command: ``ls``, ``dump``, ``tree``, ``repack``, ``demo``, ``bench``.

``main(argv) -> int`` parses its arguments afresh on every call (no module-level options),
so it can be called from tests as well as from the console script.  Errors that are the
user's (a missing file, a file that is not HDF5, an unknown benchmark) print one line on
stderr and return 2; there is no traceback.

Only what a command needs is imported, when it runs (``repack`` does not pay for ``demo``,
``dump``, ``tree`` or ``bench``): the defaults the parser shows are repeated here, and
tests/test_cli.py checks them against the modules'.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import hyperslab
from hyperslab.tools.ls import ListingError, run_ls, split_source
from hyperslab.tools.repack import (
    CHUNKSHAPE_CHOICES,
    RepackError,
    RepackOptions,
    parse_shape,
    repack,
)

DEFAULT_PATH = "hyperslab-demo.h5"
"""``demo``'s file (:data:`hyperslab.tools.demo.DEFAULT_PATH`)."""
DEFAULT_ROWS = 10
"""``dump -d``'s rows (:data:`hyperslab.tools.dump.DEFAULT_ROWS`)."""
SORT_KEYS = ("name", "size")
"""``tree --sort``'s keys (:data:`hyperslab.tools.tree.SORT_KEYS`)."""
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

    _add_repack(commands)

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


COMPLIBS = ("zlib", "lzo", "bzip2", "blosc", "blosc:blosclz", "blosc:lz4", "blosc:lz4hc",
            "blosc:zlib", "blosc:zstd", "blosc2", "blosc2:blosclz", "blosc2:lz4",
            "blosc2:lz4hc", "blosc2:zlib", "blosc2:zstd")
"""``--complib`` choices (ptrepack's)."""


def _add_repack(commands: Any) -> None:
    repack = commands.add_parser(
        "repack",
        help="copy a file, group or leaf into another file with new filters or chunks "
        "(ptrepack)",
        description="Copy SRC[:/node] into DST[:/node]: groups with their titles and "
        "attributes, leaves with new filters, chunk shapes or Blosc2 blocks, tables sorted "
        "and their indexes rebuilt on request, links as links.  Data go slab by slab "
        "(bounded memory), Blosc2 chunks compressed in parallel.  Without --overwrite, an "
        "existing DST gets the copies added.",
    )
    repack.add_argument("src", metavar="SRC[:/node]", help="source file (and node, / by default)")
    repack.add_argument("dst", metavar="DST[:/node]",
                        help="destination file (and group, / by default; a leaf's new path)")
    filters = repack.add_argument_group("filters (any of them replaces the source's)")
    filters.add_argument("--complib", choices=COMPLIBS, default=None,
                         help="compression library (default zlib)")
    filters.add_argument("--complevel", type=_complevel, default=None, metavar="0..9",
                         help="compression level (default 0: none)")
    filters.add_argument("--shuffle", type=int, choices=(0, 1), default=None,
                         help="byte shuffle (default on if complevel > 0)")
    filters.add_argument("--bitshuffle", type=int, choices=(0, 1), default=None,
                         help="bit shuffle (default off; on turns shuffle off)")
    filters.add_argument("--fletcher32", type=int, choices=(0, 1), default=None,
                         help="Fletcher32 checksums (default off)")
    filters.add_argument("--keep-source-filters", action="store_true",
                         help="keep each leaf's filters even if filter options are given")
    repack.add_argument("--chunkshape", type=_chunkshape, default="keep",
                        metavar="keep|auto|N,N,...",
                        help="chunk shape of the copies: the source's (default), computed, "
                        "or this one for the leaves of its rank")
    repack.add_argument("--blockshape", type=_shape, default=None, metavar="N,N,...",
                        help="Blosc2 block shape of the CArrays and EArrays of its rank")
    repack.add_argument("--sortby", metavar="COLUMN", default=None,
                        help="copy tables sorted by COLUMN (it needs a full index)")
    repack.add_argument("--checkCSI", action="store_true",
                        help="with --sortby: require a completely sorted index")
    repack.add_argument("--propindexes", action="store_true",
                        help="rebuild the indexes of the source's tables in the copies")
    repack.add_argument("-o", "--overwrite", action="store_true",
                        help="replace the destination file")
    repack.add_argument("--overwrite-nodes", action="store_true",
                        help="replace destination nodes the copies' names clash with")
    repack.add_argument("--dest-title", default=None, metavar="TITLE",
                        help="title of a new destination file (default: the source's)")
    repack.add_argument("--dont-copy-userattrs", action="store_true",
                        help="leave the user attributes out")
    repack.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when stderr is a terminal)")


def _repack_filters(args: argparse.Namespace) -> Any:
    """The Filters of the copies as ptrepack makes them, or None to keep the sources'."""
    given = (args.complib, args.complevel, args.shuffle, args.bitshuffle, args.fletcher32)
    if args.keep_source_filters or given == (None,) * 5:
        return None
    complevel = args.complevel or 0
    bitshuffle = bool(args.bitshuffle)
    shuffle = (complevel > 0) if args.shuffle is None else bool(args.shuffle)
    return hyperslab.Filters(complevel=complevel, complib=args.complib or "zlib",
                             shuffle=shuffle and not bitshuffle, bitshuffle=bitshuffle,
                             fletcher32=bool(args.fletcher32))


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, not {text!r}")
    return value


def _complevel(text: str) -> int:
    value = _non_negative(text)
    if value > 9:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 9, not {text!r}")
    return value


def _shape(text: str) -> tuple[int, ...]:
    try:
        return parse_shape(text)
    except RepackError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _chunkshape(text: str) -> str | tuple[int, ...]:
    return text if text in CHUNKSHAPE_CHOICES else _shape(text)


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
    from hyperslab.tools.dump import DumpOptions, run_dump

    path, where = _source(args)
    options = DumpOptions(args.verbose, args.attrs, args.data, args.columns, args.rows)
    try:
        run_dump(path, where, options)
    except ListingError as exc:
        return _error("dump", str(exc))
    return 0


def _tree(args: argparse.Namespace) -> int:
    from hyperslab.tools.tree import run_tree

    path, where = _source(args)
    try:
        run_tree(path, where, args.depth, args.sort, args.bytes)
    except ListingError as exc:
        return _error("tree", str(exc))
    return 0


def _repack(args: argparse.Namespace) -> int:
    src, srcnode = split_source(args.src)
    dst, dstnode = split_source(args.dst)
    try:
        options = RepackOptions(
            filters=_repack_filters(args), chunkshape=args.chunkshape,
            blockshape=args.blockshape, sortby=args.sortby, checkCSI=args.checkCSI,
            propindexes=args.propindexes, overwrite=args.overwrite,
            overwrite_nodes=args.overwrite_nodes, title=args.dest_title,
            copyuserattrs=not args.dont_copy_userattrs, progress=args.progress)
        repack(src, dst, srcnode, dstnode, options)
    except (RepackError, ValueError) as exc:  # Filters' errors are ValueErrors too
        return _error("repack", str(exc).splitlines()[0] if str(exc) else repr(exc))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from hyperslab.tools.demo import run_demo

    return run_demo(args.path, args.small)


def _bench(args: argparse.Namespace) -> int:
    from hyperslab.tools.benchrun import BenchNotFoundError, run_bench

    bench_args = [args.name, *args.args] if args.name else list(args.args)
    try:
        return run_bench(bench_args)
    except BenchNotFoundError as exc:
        return _error("bench", str(exc))


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "ls": _ls,
    "dump": _dump,
    "tree": _tree,
    "repack": _repack,
    "demo": _demo,
    "bench": _bench,
}


if __name__ == "__main__":
    sys.exit(main())
