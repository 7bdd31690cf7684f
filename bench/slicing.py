"""The ``slicing`` benchmark: hyperslabs of a 4-D Blosc2 array, along every dimension.

This is the experiment of "Optimized Hyper-slicing in PyTables with Blosc2 NDim" (the b2nd
slicing post) and of PyTables' optimization guide ("Multidimensional slicing and
chunk/block sizes"), scaled to this machine: a ``50 x 100 x 100 x 100`` int64 array (400
MB) of smooth data with a little deterministic noise (:func:`make_slab`; it compresses
about 6x), stored as a CArray compressed with Blosc2 LZ4 level 8 with byte shuffle, once
with the spec's small chunkshape ``(10, 25, 50, 50)`` (5 MB chunks) and once with a bigger
one, ``(25, 50, 50, 50)`` (25 MB chunks).  The cases (:func:`make_cases`):

``axis0`` .. ``axis3``
    One index along each dimension: ``a[25]``, ``a[:, 50]``, ``a[:, :, 50]`` and
    ``a[:, :, :, 50]`` (the middle of each dimension).
``strided``
    ``a[::2, ::3, 10:90:4, ::5]`` (steps other than 1: no b2nd optimization applies).
``boxes``
    :data:`NBOXES` boxes of ``5 x 10 x 10 x 10`` at deterministic random places, read one
    after the other.

Every chunkshape is written by three writers (:data:`WRITERS`): hyperslab, PyTables and
h5py + hdf5plugin (``hdf5plugin.Blosc2(cname="lz4", clevel=8, filters=SHUFFLE)``), each
choosing its own Blosc2 block shape; a group of cases is one chunkshape and one writer's
file, and every reader reads that same file (so that readers, not layouts, are compared).
Rivals (each ``node = f.get_node("/a")``, or h5py's ``f["a"]``, then ``value =
node[selection]``, both timed, in a file opened before the timing: PyTables opens the
dataset and reads its attributes in ``get_node``, hyperslab at the node's first read):

==============================  ==========================================================
rival                           how it reads the group's file
==============================  ==========================================================
hyperslab                       ``hyperslab.open_file``
PyTables                        its optimized b2nd path (``BLOSC2_FILTER`` unset)
PyTables (filter pipeline)      the same with ``BLOSC2_FILTER=1`` in the environment
h5py + hdf5plugin               plain h5py (HDF5 filter pipeline)
b2h5py                          h5py with ``b2h5py.fast_slicing()`` active
hyperslab blocks=...            (``--blockshapes``) its own file, written by hyperslab with
                                ``create_carray(..., blockshape=...)``, in every group
==============================  ==========================================================

PyTables reads ``BLOSC2_FILTER`` with ``getenv`` in C at every slice read
(``H5ARRAYOreadSlice``: a non-zero integer sends the read through the HDF5 filter
pipeline), and b2h5py reads it from ``os.environ`` at every read as well, so the variable
is set (or removed) around each read of each rival, in this process or a fresh one.

Every case is checked against NumPy on the in-memory array (each run, for every rival:
a mismatch fails the case) and across rivals (by the harness).  Throughput is the
result's bytes per second (MB = 1e6 bytes) at the median time.  The array, the cases and
their checks are made by :mod:`bench._slicing_data`; the report's tables and goals are
built by :mod:`bench._slicing_report`.  All files go into a temporary folder
(``--tmpdir``) removed at the end.

Run ``python -m bench slicing --help`` (or ``hyperslab bench slicing --help``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import inspect
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._slicing_data import (
    BOX,
    CASES,
    FULL_SHAPE,
    NBOXES,
    QUICK_SHAPE,
    SPEC_CHUNKS,
    Group,
    Selection,
    check_of,
    expected_checks,
    group_name,
    make_cases,
    make_data,
    scale_chunks,
    to_index,
)
from bench._slicing_report import MB, _file_text, _index_text, possessive, report
from bench.harness import (
    BenchmarkError,
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
    run_benchmark,
    scratch_folder,
    split_available,
    with_thread_option,
)

CLEVEL = 8
COMPLIB = "blosc2:lz4"
NODE = "a"
"""Name of the CArray in every file (``/a``)."""
ENV_SWITCH = "BLOSC2_FILTER"
"""The environment variable that turns PyTables' (and b2h5py's) b2nd slicing off."""

WRITERS = ("hyperslab", "PyTables", "hdf5plugin")
"""The libraries that write each chunkshape's files (hdf5plugin: h5py with its filter)."""
PYTABLES_FILE = "PyTables"
HYPERSLAB_FILE = "hyperslab"
CASE_FILE = ""
"""``file_of`` of the rivals that read the file of the case's group."""
READER_MODULES = {
    "hyperslab": ("hyperslab",),
    "PyTables": ("tables",),
    "h5py": ("h5py", "hdf5plugin"),
    "b2h5py": ("h5py", "hdf5plugin", "b2h5py"),
}
LIBRARY_MODULES = {"hyperslab": "hyperslab", "PyTables": "tables"}


# ----------------------------------------------------------------------------- the rivals


@dataclasses.dataclass(frozen=True)
class SlicingRival(Rival):
    """A rival: who reads (``reader``), whose file (``file_of``), and how.

    ``file_of`` is :data:`CASE_FILE` (the file of the case's group: every writer's in turn)
    or, for a ``--blockshapes`` rival, the rival's own name (its file is written with
    ``blockshape``: ``"auto"`` or ``"5,25,50,50"``).  ``pipeline`` sets ``BLOSC2_FILTER=1``
    around the reads.  A rival is available only if it reads a tiny array right
    (:func:`smoke_test`).
    """

    reader: str = ""
    file_of: str = ""
    pipeline: bool = False
    blockshape: str | None = None

    @property
    def writer(self) -> str:
        """The library that writes the file of its smoke test (its own, for a
        ``--blockshapes`` rival; else PyTables', hyperslab's for hyperslab)."""
        if self.file_of != CASE_FILE or self.reader == "hyperslab":
            return "hyperslab"
        return PYTABLES_FILE

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here (import or smoke test), or None."""
        reason = super().unavailable_reason()
        if reason is None:
            reason = smoke_test(self.reader, self.writer, self.pipeline, self.blockshape)
        return reason


def _rival(name: str, reader: str, file_of: str, pipeline: bool = False) -> SlicingRival:
    return SlicingRival(name, READER_MODULES[reader], None, reader, file_of, pipeline)


BASE_RIVALS = (
    _rival("hyperslab", "hyperslab", CASE_FILE),
    _rival("PyTables", "PyTables", CASE_FILE),
    _rival("PyTables (filter pipeline)", "PyTables", CASE_FILE, pipeline=True),
    _rival("h5py + hdf5plugin", "h5py", CASE_FILE),
    _rival("b2h5py", "b2h5py", CASE_FILE),
)
DEFAULT_BASELINE = "PyTables"


def block_rival(text: str) -> SlicingRival:
    """The rival reading a hyperslab file written with the blockshape ``text``.

    ``text`` is ``"auto"`` (``blockshape=None``: hyperslab's choice) or comma-separated
    integers; the rival is named ``hyperslab blocks=auto`` or ``hyperslab blocks=(5, 25,
    50, 50)``.
    """
    blocks = parse_blockshape(text, None)
    label = "auto" if blocks is None else "x".join(str(b) for b in blocks)
    name = f"hyperslab blocks={label}"
    return SlicingRival(name, READER_MODULES["hyperslab"], None, "hyperslab", name, False, text)


def parse_blockshape(text: str, chunks: Sequence[int] | None) -> tuple[int, ...] | None:
    """Return the blockshape ``text`` (``"auto"``: None), clipped to ``chunks`` if given.

    Raises
    ------
    ValueError
        If ``text`` is neither ``auto`` nor positive integers (of the chunks' rank).
    """
    if text.strip() == "auto":
        return None
    try:
        blocks = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"not a blockshape (auto or N,N,...): {text!r}") from None
    if not blocks or min(blocks) < 1:
        raise ValueError(f"a blockshape needs positive integers: {text!r}")
    if chunks is None:
        return blocks
    if len(blocks) != len(chunks):
        raise ValueError(f"blockshape {blocks} does not have the rank of chunks {tuple(chunks)}")
    return tuple(min(b, c) for b, c in zip(blocks, chunks, strict=True))


def has_blockshape_keyword() -> bool:
    """Whether ``hyperslab.File.create_carray`` takes a ``blockshape`` keyword."""
    hyperslab = importlib.import_module("hyperslab")
    return "blockshape" in inspect.signature(hyperslab.File.create_carray).parameters


# ----------------------------------------------------------------------------- the libraries


@contextlib.contextmanager
def blosc2_filter_env(pipeline: bool) -> Iterator[None]:
    """Set ``BLOSC2_FILTER=1`` (``pipeline``) or remove it, for the ``with`` block.

    PyTables reads the variable in C (``getenv``) at each slice read, b2h5py in
    ``os.environ`` at each read; assigning ``os.environ`` also calls ``putenv``.
    """
    old = os.environ.get(ENV_SWITCH)
    if pipeline:
        os.environ[ENV_SWITCH] = "1"
    else:
        os.environ.pop(ENV_SWITCH, None)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_SWITCH, None)
        else:
            os.environ[ENV_SWITCH] = old


def _b2h5py_patched() -> bool:
    patch = sys.modules.get("b2h5py.patch")
    return patch is not None and bool(patch.is_fast_slicing_enabled())


@contextlib.contextmanager
def open_node(reader: str, path: str) -> Iterator[Callable[[], Any]]:
    """Open the file at ``path`` with ``reader``; give a function that looks its array
    ``/a`` up (timed with the reads: PyTables opens the dataset and reads its attributes
    there, hyperslab at the node's first read, h5py in ``f["a"]``); close it at the end.

    ``reader`` is ``hyperslab``, ``PyTables`` (their ``open_file`` and ``get_node``),
    ``h5py`` (plain ``h5py.File`` after ``import hdf5plugin``; fails if b2h5py's patch is
    active, which would make it another rival) or ``b2h5py`` (the same inside
    ``b2h5py.fast_slicing()``).
    """
    if reader in LIBRARY_MODULES:
        lib = importlib.import_module(LIBRARY_MODULES[reader])
        with lib.open_file(path, mode="r") as f:
            yield functools.partial(f.get_node, "/" + NODE)
        return
    if reader not in ("h5py", "b2h5py"):
        raise BenchmarkError(f"unknown reader {reader!r}")
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    fast: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if reader == "b2h5py":
        fast = importlib.import_module("b2h5py").fast_slicing()
    elif _b2h5py_patched():
        raise BenchmarkError("h5py.Dataset is patched by b2h5py: plain h5py cannot be timed")
    with fast, h5py.File(path, "r") as f:
        yield functools.partial(f.__getitem__, NODE)


def read_selections(
    reader: str, path: str, selections: Sequence[Selection], pipeline: bool, timer: Timer
) -> list[Any]:
    """Read every selection of the file at ``path`` with ``reader``; time looking the
    array up and the reads (not opening the file)."""
    indexes = [to_index(s) for s in selections]
    with blosc2_filter_env(pipeline), open_node(reader, path) as get:
        with timer:
            node = get()
            values = [node[index] for index in indexes]
    return values


def write_file(
    library: str,
    path: str,
    data: Any,
    chunks: Sequence[int],
    blockshape: str | None = None,
) -> float:
    """Write ``data`` to a new file at ``path`` as the CArray ``/a``; return the seconds.

    The CArray is created with ``atom=Int64Atom()``, the data's shape, ``chunkshape=chunks``
    and ``Filters(complevel=8, complib="blosc2:lz4", shuffle=True)``, then filled one slab
    of ``chunks[0]`` rows at a time (``a[lo:hi] = data[lo:hi]``: whole chunks).
    ``blockshape`` (hyperslab only) is passed on as ``blockshape=`` (``"auto"``: None).
    """
    if library == "hdf5plugin":
        return _write_h5py_file(path, data, chunks)
    lib = importlib.import_module(LIBRARY_MODULES[library])
    extra: dict[str, Any] = {}
    if blockshape is not None:
        extra["blockshape"] = parse_blockshape(blockshape, chunks)
    filters = lib.Filters(complevel=CLEVEL, complib=COMPLIB, shuffle=True)
    t0 = time.perf_counter()
    with blosc2_filter_env(False), lib.open_file(path, mode="w") as f:
        array = f.create_carray(
            "/",
            NODE,
            atom=lib.Int64Atom(),
            shape=data.shape,
            chunkshape=tuple(chunks),
            filters=filters,
            **extra,
        )
        for start in range(0, data.shape[0], chunks[0]):
            array[start : start + chunks[0]] = data[start : start + chunks[0]]
    return time.perf_counter() - t0


def _write_h5py_file(path: str, data: Any, chunks: Sequence[int]) -> float:
    """:func:`write_file` for h5py + hdf5plugin: the same chunks, codec, level and shuffle,
    hdf5plugin's Blosc2 filter choosing its blocks."""
    import h5py
    import hdf5plugin

    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        dset = f.create_dataset(
            NODE, shape=data.shape, dtype=data.dtype, chunks=tuple(chunks),
            **hdf5plugin.Blosc2(cname="lz4", clevel=CLEVEL, filters=hdf5plugin.Blosc2.SHUFFLE),
        )
        for start in range(0, data.shape[0], chunks[0]):
            dset[start : start + chunks[0]] = data[start : start + chunks[0]]
    return time.perf_counter() - t0


def file_info(path: str, data: Any) -> dict[str, Any]:
    """Describe the file at ``path`` as h5py + hdf5plugin sees it, compared with ``data``.

    Returns
    -------
    dict
        ``bytes`` (file size), ``ratio`` (data bytes / file size), ``chunks``, ``blocks``
        (of the first chunk's b2nd frame, None if it is not one) and ``matches`` (whether
        h5py reads back ``data``, compared one chunk slab at a time).
    """
    import blosc2
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)
    import numpy as np

    with h5py.File(path, "r") as f:
        dset = f[NODE]
        chunks = tuple(dset.chunks)
        matches = dset.shape == data.shape and dset.dtype == data.dtype
        for start in range(0, data.shape[0], chunks[0]) if matches else ():
            stop = start + chunks[0]
            matches = matches and bool(np.array_equal(dset[start:stop], data[start:stop]))
        blocks: list[int] | None
        try:
            frame = dset.id.read_direct_chunk((0,) * dset.ndim)[1]
            blocks = list(blosc2.ndarray_from_cframe(frame).blocks)
        except Exception:  # not a b2nd frame: no block shape to tell
            blocks = None
    size = Path(path).stat().st_size
    return {
        "bytes": size,
        "ratio": data.nbytes / size,
        "chunks": list(chunks),
        "blocks": blocks,
        "matches": matches,
    }


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Read one case's selections for one rival (the harness's target function).

    Parameters
    ----------
    rival : str
        A key of ``params["rivals"]``.
    case : str
        The case's name (for messages).
    params : dict
        ``rivals`` (``{rival: {"reader", "path", "pipeline"}}``), ``selections`` (JSON
        selections, see :data:`Selection`) and ``expected`` (NumPy's :func:`check_of`).
    timer : Timer
        Times looking the array up and the reads (not opening the file).

    Returns
    -------
    dict
        :func:`check_of` the arrays read.

    Raises
    ------
    BenchmarkError
        For an unknown rival, a failing library (named), or a result that differs from
        NumPy's.
    """
    how = params["rivals"].get(rival)
    if how is None:
        raise BenchmarkError(f"unknown rival {rival!r}; known: {', '.join(params['rivals'])}")
    try:
        values = read_selections(
            how["reader"], how["path"], params["selections"], how["pipeline"], timer
        )
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {case}: {type(exc).__name__}: {exc}") from exc
    check = check_of(values)
    if check != params["expected"]:
        raise BenchmarkError(
            f"{rival} {case}: the result differs from NumPy's: got "
            f"{json.dumps(check)[:300]}, expected {json.dumps(params['expected'])[:300]}"
        )
    return check


@functools.cache
def smoke_test(
    reader: str, writer: str, pipeline: bool = False, blockshape: str | None = None
) -> str | None:
    """Write a tiny array with ``writer``, read every case with ``reader``; None if right."""
    shape, chunks = (4, 6, 6, 6), (2, 3, 4, 4)
    data = make_data(shape)
    cases = make_cases(shape)
    expected = expected_checks(data, cases)
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-slicing-smoke-") as tmp:
        path = str(Path(tmp) / "smoke.h5")
        try:
            write_file(writer, path, data, chunks, blockshape)
            for name, selections in cases.items():
                got = check_of(read_selections(reader, path, selections, pipeline, Timer()))
                if got != expected[name]:
                    return f"smoke test: {reader} reads {name} of {writer}'s file wrong"
        except Exception as exc:  # whatever the library raises makes the rival unavailable
            return f"smoke test failed: {type(exc).__name__}: {exc}"
    return None


# ----------------------------------------------------------------------------- setup


def write_group_files(
    group: Group,
    rivals: Sequence[SlicingRival],
    data: Any,
    folder: Path,
    progress: Callable[[str], None],
) -> dict[str, str]:
    """Write the files ``rivals`` read with ``group``'s chunks; return ``{file: why}`` of
    those that could not be written right (checked with h5py)."""
    failed: dict[str, str] = {}
    wanted: dict[str, tuple[str, str | None]] = {w: (w, None) for w in WRITERS}
    wanted.update({r.file_of: ("hyperslab", r.blockshape) for r in rivals
                   if r.file_of != CASE_FILE})
    for k, (file_of, (writer, blockshape)) in enumerate(wanted.items()):
        path = folder / f"{group.name.replace(' ', '-')}-{k}.h5"
        try:
            seconds = write_file(writer, str(path), data, group.chunks, blockshape)
            info = file_info(str(path), data)
        except Exception as exc:  # a failing writer drops its readers, the others go on
            failed[file_of] = f"writing failed: {type(exc).__name__}: {exc}"
            continue
        if not info["matches"]:
            failed[file_of] = "h5py + hdf5plugin does not read back the data from its file"
            continue
        group.files[file_of], group.info[file_of] = path, info
        group.write_seconds[file_of] = seconds
        progress(
            f"{group.name}: {possessive(file_of)} file {info['bytes']:,} bytes (ratio "
            f"{info['ratio']:.2f}x), blocks {info['blocks']}, written in {seconds:.2f} s"
        )
    return failed


def build_cases(
    groups: Sequence[Group],
    rivals: Sequence[SlicingRival],
    selections: Mapping[str, list[Selection]],
    expected: Mapping[str, dict[str, Any]],
    case_names: Sequence[str],
) -> list[Case]:
    """Return the harness's cases: every case of ``case_names`` in every group and every
    writer's file of it (:data:`WRITERS`: ``"small 10x25x50x50, PyTables' file"``)."""
    cases = []
    for group in groups:
        for writer in [w for w in WRITERS if w in group.files]:
            how = {
                r.name: {
                    "reader": r.reader,
                    "path": str(group.files[writer if r.file_of == CASE_FILE else r.file_of]),
                    "pipeline": r.pipeline,
                }
                for r in rivals
            }
            label = f"{group.name}, {possessive(writer)} file"
            for name in case_names:
                params = {"rivals": how, "selections": selections[name],
                          "expected": expected[name], "writer": writer}
                cases.append(Case(name, label, params))
    return cases


def notes_for(shape: Sequence[int], data: Any, selections: Mapping[str, Any]) -> list[str]:
    """The notes of the report: data, layout, cases, rivals, threads."""

    strided = selections.get("strided", [[]])[0]
    return [
        f"Array: {' x '.join(map(str, shape))} int64 ({data.nbytes / MB:.0f} MB), smooth "
        "(a sum of one sine per dimension, a few thousand) plus noise 0..7, as CArray '/a' "
        f"with Filters(complevel={CLEVEL}, complib='{COMPLIB}', shuffle=True), written slab "
        "by slab (whole chunks) by hyperslab, by PyTables and by h5py + hdf5plugin "
        "(hdf5plugin.Blosc2(cname='lz4', clevel=8, filters=SHUFFLE)), each choosing its own "
        "Blosc2 blocks; each group is one chunkshape and one writer's file, which every "
        "rival reads.",
        "Cases: axisN = the middle index of dimension N (a[25], a[:, 50], a[:, :, 50], "
        f"a[:, :, :, 50] at full size); strided = a{_index_text(strided)}; boxes = {NBOXES} "
        f"boxes of {' x '.join(map(str, BOX))} at seeded random places, read one after "
        "the other. Time: value = node[selection] on a node opened before the timing, from "
        "the OS page cache; MB/s = result bytes (1e6) / median time.",
        "Rivals: 'h5py + hdf5plugin' (plain h5py, HDF5 filter pipeline), 'b2h5py' (h5py "
        "inside b2h5py.fast_slicing()); 'PyTables' runs with BLOSC2_FILTER unset (its b2nd "
        "path for step-1 slices), "
        "'PyTables (filter pipeline)' with BLOSC2_FILTER=1 (read by getenv at each read). "
        "Checks: every run equals NumPy on the in-memory array (CRC-32 of the result bytes, "
        "shapes, dtype).",
    ]


# ----------------------------------------------------------------------------- the CLI


def shape_type(text: str) -> tuple[int, ...]:
    """argparse type: comma-separated positive integers (``50,100,100,100``)."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not N,N,...: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not positive integers: {text!r}")
    return values


def shapes_type(text: str) -> list[tuple[int, ...]]:
    """argparse type: shapes separated by ``;`` (``10,25,50,50;25,50,50,50``)."""
    return [shape_type(part.strip()) for part in text.split(";") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench slicing``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("slicing"),
        description="Slice a 4-D Blosc2 LZ4 int64 array along each dimension, with steps and "
        "in small boxes, for two chunkshapes: hyperslab vs PyTables (optimized and filter "
        "pipeline), h5py + hdf5plugin and b2h5py (the b2nd slicing post's experiment). "
        "The baseline is PyTables.",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a {'x'.join(map(str, QUICK_SHAPE))} array (chunks scaled), 3 repeats",
    )
    parser.add_argument(
        "--shape",
        type=shape_type,
        default=None,
        help=f"4-D array shape (default {','.join(map(str, FULL_SHAPE))})",
    )
    parser.add_argument(
        "--chunks",
        type=shapes_type,
        default=None,
        help="chunkshapes separated by ';' (default the spec's 10,25,50,50 and 25,50,50,50, "
        "scaled to the shape)",
    )
    parser.add_argument(
        "--blockshapes",
        default=None,
        help="extra hyperslab rivals whose files are written with create_carray(..., "
        "blockshape=...): 'auto' or N,N,N,N, separated by ';' (clipped to each chunkshape)",
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


@dataclasses.dataclass
class Options:
    """What :func:`main` made of the command line."""

    shape: tuple[int, ...]
    groups: list[Group]
    cases: list[str]
    rivals: list[SlicingRival]
    baseline: str
    repeat: int


def parse_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    """Check the options and turn them into :class:`Options` (``parser.error`` if wrong)."""
    shape = args.shape or (QUICK_SHAPE if args.quick else FULL_SHAPE)
    if len(shape) != 4:
        parser.error(f"--shape must have 4 dimensions, not {len(shape)}")
    if args.chunks is None:
        groups = [
            Group(group_name(k, scale_chunks(c, shape)), scale_chunks(c, shape))
            for k, c in SPEC_CHUNKS.items()
        ]
    else:
        if any(len(c) != 4 for c in args.chunks):
            parser.error(f"--chunks must all have 4 dimensions: {args.chunks}")
        clipped = [tuple(min(c, n) for c, n in zip(ch, shape, strict=True)) for ch in args.chunks]
        groups = [Group(group_name("chunks", c), c) for c in clipped]
    if len({g.name for g in groups}) < len(groups):
        parser.error("--chunks lists a chunkshape twice")
    rivals = list(BASE_RIVALS)
    if args.blockshapes is not None:
        if not has_blockshape_keyword():
            parser.error(
                "--blockshapes needs hyperslab's create_carray(..., blockshape=...), which "
                "this hyperslab does not have yet; run without --blockshapes"
            )
        texts = [t.strip() for t in args.blockshapes.split(";") if t.strip()]
        try:
            for text in texts:
                for group in groups:
                    parse_blockshape(text, group.chunks)
        except ValueError as exc:
            parser.error(f"--blockshapes: {exc}")
        rivals += [block_rival(t) for t in dict.fromkeys(texts)]
    try:
        cases = pick(CASES, args.cases, "case")
        names = pick([r.name for r in rivals], args.rivals, "rival")
        wanted = args.baseline or (DEFAULT_BASELINE if DEFAULT_BASELINE in names else names[0])
        baseline = pick(names, [wanted], "baseline")[0]
    except BenchmarkError as exc:
        parser.error(str(exc))
    chosen = [r for r in rivals if r.name in names]
    return Options(shape, groups, cases, chosen, baseline, args.repeat or (3 if args.quick else 5))


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options = parse_options(parser, args)
    with scratch_folder("slicing", args.tmpdir) as folder:
        return _run(args, options, folder)


def _run(args: argparse.Namespace, options: Options, folder: Path) -> int:
    t0 = time.perf_counter()
    rivals, skipped = split_available(options.rivals, print_progress)
    if not rivals:
        print("slicing: error: no rival is available", file=sys.stderr)
        return 1
    shape = options.shape
    print_progress(f"making the {' x '.join(map(str, shape))} int64 array...")
    data = make_data(shape)
    selections = make_cases(shape)
    expected = expected_checks(data, selections)
    for group in options.groups:
        failed = write_group_files(group, rivals, data, folder, print_progress)
        for writer in [w for w in WRITERS if w in failed]:
            skipped[f"{possessive(writer)} file"] = f"{group.name}: {failed[writer]}"
            print_progress(f"no {possessive(writer)} file: {failed[writer]}")
        for rival in [r for r in rivals if r.file_of in failed]:
            skipped[rival.name] = f"{group.name}: {failed[rival.file_of]}"
            print_progress(f"dropping {rival.name}: {skipped[rival.name]}")
        rivals = [r for r in rivals if r.file_of not in failed]
    if not rivals:
        print("slicing: error: no rival's file could be written", file=sys.stderr)
        return 1
    names = [r.name for r in rivals]
    spec = BenchmarkSpec(
        name="slicing",
        title=f"hyperslabs of a {'x'.join(map(str, shape))} int64 Blosc2 LZ4 array",
        target="bench.slicing:run_case",
        rivals=rivals,
        cases=build_cases(options.groups, rivals, selections, expected, options.cases),
        fresh_process=args.fresh_process,
        baseline=options.baseline if options.baseline in names else names[0],
        data=[
            DataInfo(f"{g.name}: {possessive(f)} file", _file_text(info), info["bytes"])
            for g in options.groups
            for f, info in g.info.items()
        ],
        notes=[
            *notes_for(shape, data, selections),
            *(f"Skipped rival {r}: {why}." for r, why in skipped.items()),
        ],
    )
    nbytes = data.nbytes
    del data  # the checks are made: the runs do not need the array
    try:
        result = run_benchmark(spec, options.repeat, timeout=args.timeout)
    except BenchmarkError as exc:
        print(f"slicing: error: {exc}", file=sys.stderr)
        return 1
    out_dir = default_out_dir("slicing") if args.out is None else args.out
    code = report(result, options.groups, nbytes, out_dir, plot=not args.no_plot)
    print_progress(f"slicing: {time.perf_counter() - t0:.0f} s in all")
    return code


if __name__ == "__main__":
    sys.exit(main())
