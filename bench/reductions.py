"""The ``reductions`` benchmark: sums of a 3-D float64 array along each axis, and an expression.

This is the experiment of "N-dimensional reductions with Blosc2" (python-blosc2's blog),
scaled to this machine: a ``500 x 500 x 500`` float64 array (1 GB) filled with
``np.linspace(0, 1000, n)``, summed along axis 0, 1, 2 and all axes, stored with Blosc2 LZ4
and Blosc2 Zstd (level 5, byte shuffle) and without compression (:data:`CODECS`), with the
chunks hyperslab picks (``chunkshape=None``) and with ``(100, 100, 100)`` chunks.  Each
(codec, chunks) pair is a *group*; its files (:func:`write_hyperslab`,
:func:`write_hdf5plugin`) are written slab by slab, whole chunks along axis 0:

``hyperslab``'s file
    ``create_carray(..., chunkshape=..., filters=Filters(5, "blosc2:lz4", shuffle=True))``;
    for automatic chunks, the chunkshape hyperslab picks is used by every other writer and by
    the in-memory NDArray of the group.
``hdf5plugin``'s file
    ``h5py`` ``create_dataset(..., chunks=..., **hdf5plugin.Blosc2(cname, clevel=5,
    filters=SHUFFLE))``: hdf5plugin's filter picks its own b2nd block shapes (reported).

Two parts, each a harness run (:func:`build_spec`; rivals in :data:`PART_RIVALS`):

``sums`` (cases ``axis0``, ``axis1``, ``axis2``, ``all``; baseline ``h5py + NumPy``)
    hyperslab's ``node.sum(axis=...)`` on its file and on hdf5plugin's, NumPy and a
    python-blosc2 NDArray (``blosc2.asarray`` with the group's codec, chunks and the blocks of
    hyperslab's file) in memory,
    h5py + NumPy (``dset[...].sum(axis=...)``) on both files, and dask over h5py.
``expression`` (case ``expr``; baseline NumPy)
    ``(a * 2 + sin(a)).sum(axis=1)``: ``hyperslab.Expr`` (where it exists), numexpr and NumPy
    in memory, and ``blosc2.lazyexpr`` on the group's NDArray.

Every run's result is compared with NumPy's on the in-memory array (``allclose`` with a
relative tolerance of :data:`RTOL`: summation orders differ) and the harness compares the
checks across rivals (shape, dtype and the float sum of the result to 6 significant
digits, :func:`check_of`).  Runs are in this process: the array is made once, and only one
group's NDArray is in memory at a time (:class:`Memory`).  Throughput is GB/s of the array
(1e9 bytes / median time).  The array, the cases and NumPy's results are made by
:mod:`bench._reductions_data`; the tables and goals are built by
:mod:`bench._reductions_report`.
All files go into a temporary folder (``--tmpdir``) removed at the end.

Run ``python -m bench reductions --help`` (or ``hyperslab bench reductions --help``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import math
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import prog_name
from bench._reductions_data import (
    CASES,
    CLEVEL,
    CODECS,
    EXPR_AXIS,
    EXPRESSION,
    FULL_CHUNKS,
    FULL_SHAPE,
    PARTS,
    QUICK_CHUNKS,
    QUICK_SHAPE,
    SLAB_BYTES,
    SUM_CASES,
    check_of,
    expected_result,
    make_data,
)
from bench._reductions_report import (
    WARM,
    WARM_OTHERS,
    Group,
    chunks_label,
    file_text,
    keep_freed_memory,
    ndarray_info,
    notes_for,
    report,
    warm_memory,
)
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
    run_benchmark,
    scratch_folder,
    split_available,
    with_thread_option,
)

NODE = "a"
"""Name of the array in every file (``/a``)."""
DEFAULT_REPEAT = 3
HYPERSLAB_FILE, HDF5PLUGIN_FILE = "hyperslab", "hdf5plugin"
BASELINES = {"sums": "h5py + NumPy", "expression": "NumPy (memory)"}


# ----------------------------------------------------------------------------- in memory


def cparams_for(codec: str) -> Any:
    """python-blosc2's ``CParams`` of ``codec``: level 5 + shuffle, or level 0 for none."""
    import blosc2

    name = CODECS[codec]
    if name is None:
        return blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=0, filters=[blosc2.Filter.SHUFFLE])
    return blosc2.CParams(
        codec=blosc2.Codec[name.upper()], clevel=CLEVEL, filters=[blosc2.Filter.SHUFFLE]
    )


@dataclasses.dataclass
class Memory:
    """The in-memory side of a run: the array, NumPy's results and one group's NDArray.

    Only one group's python-blosc2 NDArray is kept (built on first use, the previous one
    freed first): without compression it is as big as the array.  ``ndarray_info`` keeps
    what each group's NDArray looked like when first built.
    """

    data: Any = None
    expected: dict[str, Any] = dataclasses.field(default_factory=dict)
    ndarray_info: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    _key: tuple[Any, ...] | None = None
    _ndarray: Any = None

    def ndarray_for(
        self, group: str, codec: str, chunks: Sequence[int], blocks: Sequence[int] | None = None
    ) -> Any:
        """Return the NDArray of ``group`` (``data`` compressed with ``codec``, ``chunks`` and
        ``blocks``: those of hyperslab's file, so that both hold the same compressed blocks;
        None: python-blosc2's choice)."""
        import blosc2

        key = (group, codec, tuple(chunks), None if blocks is None else tuple(blocks))
        if self._key != key:
            if self.data is None:
                raise BenchmarkError("no array in memory: the benchmark runs in its own process")
            self._key = self._ndarray = None
            t0 = time.perf_counter()
            layout = {} if blocks is None else {"blocks": tuple(blocks)}
            array = blosc2.asarray(
                self.data, chunks=tuple(chunks), cparams=cparams_for(codec), **layout
            )
            self.ndarray_info.setdefault(group, ndarray_info(array, time.perf_counter() - t0))
            self._key, self._ndarray = key, array
        return self._ndarray

    def clear(self) -> None:
        """Forget everything (the array, the results, the NDArray and its info)."""
        self.data, self._key, self._ndarray = None, None, None
        self.expected.clear()
        self.ndarray_info.clear()


_MEMORY = Memory()
"""The memory of the run in progress (runs are in this process)."""


# ----------------------------------------------------------------------------- the files


def slab_rows(shape: Sequence[int], chunks: Sequence[int], itemsize: int = 8) -> int:
    """Rows (along axis 0) of each write: whole chunk rows, about :data:`SLAB_BYTES`."""
    row_bytes = chunks[0] * math.prod(shape[1:]) * itemsize
    return chunks[0] * max(1, SLAB_BYTES // max(1, row_bytes))


def write_hyperslab(
    path: str, data: Any, codec: str, chunks: Sequence[int] | None
) -> tuple[tuple[int, ...], float]:
    """Write ``data`` as the CArray ``/a`` with hyperslab; return its chunkshape and seconds.

    ``chunks=None`` lets hyperslab pick the chunkshape.  The array is written slab by slab
    (:func:`slab_rows`), so that whole chunks go through the fast path.
    """
    hyperslab: Any = importlib.import_module("hyperslab")

    name = CODECS[codec]
    filters = None if name is None else hyperslab.Filters(CLEVEL, codec, shuffle=True)
    t0 = time.perf_counter()
    with hyperslab.open_file(path, "w") as f:
        node = f.create_carray(
            "/",
            NODE,
            atom=hyperslab.Float64Atom(),
            shape=data.shape,
            chunkshape=None if chunks is None else tuple(chunks),
            filters=filters,
        )
        picked = tuple(int(c) for c in node.chunkshape)
        rows = slab_rows(data.shape, picked, data.itemsize)
        for lo in range(0, data.shape[0], rows):
            node[lo : lo + rows] = data[lo : lo + rows]
    return picked, time.perf_counter() - t0


def write_hdf5plugin(path: str, data: Any, codec: str, chunks: Sequence[int]) -> float:
    """Write ``data`` as the dataset ``/a`` with h5py + hdf5plugin; return the seconds.

    ``create_dataset(..., chunks=chunks, **hdf5plugin.Blosc2(cname, clevel=5,
    filters=hdf5plugin.Blosc2.SHUFFLE))`` (no filter for ``none``), filled slab by slab.
    """
    import h5py

    hdf5plugin: Any = importlib.import_module("hdf5plugin")
    name = CODECS[codec]
    compression: Mapping[str, Any] = {}
    if name is not None:
        compression = hdf5plugin.Blosc2(
            cname=name, clevel=CLEVEL, filters=hdf5plugin.Blosc2.SHUFFLE
        )
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        dset = f.create_dataset(
            NODE, shape=data.shape, dtype=data.dtype, chunks=tuple(chunks), **compression
        )
        rows = slab_rows(data.shape, chunks, data.itemsize)
        for lo in range(0, data.shape[0], rows):
            dset[lo : lo + rows] = data[lo : lo + rows]
    return time.perf_counter() - t0


def file_info(path: str, nbytes: int) -> dict[str, Any]:
    """Describe the file at ``path`` as h5py sees it: ``bytes``, ``ratio`` (``nbytes`` / file
    size), ``chunks`` and ``blocks`` (of the first chunk's b2nd frame; None if it is not
    one)."""
    import blosc2
    import h5py
    import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

    with h5py.File(path, "r") as f:
        dset = f[NODE]
        chunks = list(dset.chunks)
        blocks: list[int] | None
        try:
            frame = dset.id.read_direct_chunk((0,) * dset.ndim)[1]
            blocks = list(blosc2.ndarray_from_cframe(frame).blocks)
        except Exception:  # not a b2nd frame (no compression): no block shape to tell
            blocks = None
    size = Path(path).stat().st_size
    return {"bytes": size, "ratio": nbytes / size, "chunks": chunks, "blocks": blocks}


# ----------------------------------------------------------------------------- the rivals


@dataclasses.dataclass(frozen=True)
class ReductionRival(Rival):
    """A rival of one part: how it computes (``method``) and whose file it reads.

    ``method`` is ``hyperslab``, ``h5py``, ``dask`` (reading the file of ``file_of``:
    ``hyperslab`` or ``hdf5plugin``), or ``numpy``, ``numexpr``, ``blosc2`` (in memory,
    ``file_of`` empty).  A rival is available only if it computes a tiny case right with
    every codec (:func:`smoke_test`).
    """

    part: str = ""
    method: str = ""
    file_of: str = ""

    def unavailable_reason(self) -> str | None:
        """Return why this rival cannot run here (import, probe or smoke test), or None."""
        reason = super().unavailable_reason()
        if reason is None:
            reason = smoke_test(self.part, self.method, self.file_of)
        return reason


H5PY = ("h5py", "hdf5plugin")


def _rival(
    name: str, modules: tuple[str, ...], part: str, method: str, file_of: str = "", probe: str = ""
) -> ReductionRival:
    return ReductionRival(name, modules, probe or None, part, method, file_of)


SUM_RIVALS = (
    _rival("hyperslab", ("hyperslab",), "sums", "hyperslab", HYPERSLAB_FILE),
    _rival("hyperslab (hdf5plugin's file)", ("hyperslab",), "sums", "hyperslab", HDF5PLUGIN_FILE),
    _rival("NumPy (memory)", ("numpy",), "sums", "numpy"),
    _rival("blosc2 NDArray (memory)", ("blosc2",), "sums", "blosc2"),
    _rival("h5py + NumPy", H5PY, "sums", "h5py", HYPERSLAB_FILE),
    _rival("h5py + NumPy (hdf5plugin's file)", H5PY, "sums", "h5py", HDF5PLUGIN_FILE),
    _rival("dask + h5py", ("dask.array", *H5PY), "sums", "dask", HYPERSLAB_FILE),
)
EXPR = "expression"
EXPRESSION_RIVALS = (
    _rival("hyperslab", ("hyperslab",), EXPR, "hyperslab", HYPERSLAB_FILE, "hyperslab:Expr"),
    _rival("numexpr (memory)", ("numexpr",), EXPR, "numexpr"),
    _rival("NumPy (memory)", ("numpy",), EXPR, "numpy"),
    _rival("blosc2 lazyexpr (memory)", ("blosc2",), EXPR, "blosc2", "", "blosc2:lazyexpr"),
)
PART_RIVALS: dict[str, tuple[ReductionRival, ...]] = {"sums": SUM_RIVALS, EXPR: EXPRESSION_RIVALS}
ALL_RIVALS = tuple(dict.fromkeys(r.name for rivals in PART_RIVALS.values() for r in rivals))


def rival_named(part: str, name: str) -> ReductionRival:
    """Return the rival called ``name`` in ``part``."""
    for rival in PART_RIVALS.get(part, ()):
        if rival.name == name:
            return rival
    raise BenchmarkError(f"unknown rival {name!r} of part {part!r}")


# ----------------------------------------------------------------------------- computing


def _sum(array: Any, axis: int | None) -> Any:
    """``array.sum(axis=axis)``: NumPy, a python-blosc2 NDArray or a hyperslab node."""
    return array.sum(axis=axis)


def _sum_h5py(dset: Any, axis: int | None) -> Any:
    return dset[...].sum(axis=axis)


def _sum_dask(dset: Any, axis: int | None) -> Any:
    da: Any = importlib.import_module("dask.array")  # optional: no stubs needed
    return da.from_array(dset, chunks=dset.chunks).sum(axis=axis).compute()


def _expr_hyperslab(node: Any, axis: int | None) -> Any:
    hyperslab: Any = importlib.import_module("hyperslab")  # Expr may not exist yet
    return hyperslab.Expr(EXPRESSION, uservars={"a": node}).sum(axis=axis)


def _expr_numexpr(array: Any, axis: int | None) -> Any:
    ne: Any = importlib.import_module("numexpr")
    return ne.evaluate(EXPRESSION, local_dict={"a": array}).sum(axis=axis)


def _expr_numpy(array: Any, axis: int | None) -> Any:
    import numpy as np

    return (array * 2 + np.sin(array)).sum(axis=axis)


def _expr_blosc2(array: Any, axis: int | None) -> Any:
    import blosc2

    return blosc2.lazyexpr(EXPRESSION, {"a": array}).sum(axis=axis)


COMPUTE: dict[tuple[str, str], Callable[[Any, int | None], Any]] = {
    ("sums", "hyperslab"): _sum,
    ("sums", "numpy"): _sum,
    ("sums", "blosc2"): _sum,
    ("sums", "h5py"): _sum_h5py,
    ("sums", "dask"): _sum_dask,
    ("expression", "hyperslab"): _expr_hyperslab,
    ("expression", "numexpr"): _expr_numexpr,
    ("expression", "numpy"): _expr_numpy,
    ("expression", "blosc2"): _expr_blosc2,
}
"""(part, method) -> function(operand, axis) computing the result."""


@contextlib.contextmanager
def open_operand(
    method: str, path: str | None, memory: Memory, params: Mapping[str, Any]
) -> Iterator[Any]:
    """Yield what ``method`` computes on: a hyperslab node or h5py dataset of the file at
    ``path`` (closed at the end), the array in memory or the group's NDArray."""
    if method == "hyperslab":
        hyperslab: Any = importlib.import_module("hyperslab")
        assert path is not None
        with hyperslab.open_file(path, "r") as f:
            yield f.get_node("/" + NODE)
    elif method in ("h5py", "dask"):
        import h5py
        import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

        assert path is not None
        with h5py.File(path, "r") as f:
            yield f[NODE]
    elif method == "blosc2":
        yield memory.ndarray_for(
            params["group"], params["codec"], params["chunks"], params.get("blocks")
        )
    else:
        if memory.data is None:
            raise BenchmarkError("no array in memory: the benchmark runs in its own process")
        yield memory.data


def compute(rival: ReductionRival, params: Mapping[str, Any], memory: Memory, timer: Timer) -> Any:
    """Compute ``rival``'s result of the case ``params`` (timed by ``timer``: not the
    opening of the file, the building of an NDArray nor the warming of memory)."""
    path = params["paths"][rival.file_of] if rival.file_of else None
    func = COMPUTE[rival.part, rival.method]
    with open_operand(rival.method, path, memory, params) as operand:
        warm_memory(int(WARM.get((rival.part, rival.method), WARM_OTHERS) * params["nbytes"]))
        with timer:
            result = func(operand, params["axis"])
    return result


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Compute one case for one rival (the harness's target function).

    Parameters
    ----------
    rival : str
        A rival of the part ``params["part"]``.
    case : str
        The case's name (a key of NumPy's results in memory).
    params : dict
        ``part``, ``group``, ``codec``, ``chunks``, ``axis``, ``paths`` (``{file_of: path}``)
        and ``nbytes`` (of the array).
    timer : Timer
        Times the computation.

    Returns
    -------
    dict
        :func:`check_of` the result.

    Raises
    ------
    BenchmarkError
        For an unknown rival, a failing library (named), or a result that differs from
        NumPy's.
    """
    who = rival_named(params["part"], rival)
    if case not in _MEMORY.expected:
        raise BenchmarkError(f"{rival} {case}: no NumPy result in memory (run in this process)")
    try:
        result = compute(who, params, _MEMORY, timer)
    except BenchmarkError:
        raise
    except Exception as exc:  # a rival's failure fails this case, not the whole run
        raise BenchmarkError(f"{rival} {case}: {type(exc).__name__}: {exc}") from exc
    return check_of(result, _MEMORY.expected[case], f"{rival} {params['group']} {case}")


@functools.cache
def smoke_test(part: str, method: str, file_of: str) -> str | None:
    """Compute every case of ``part`` on a tiny array with every codec; None if right."""
    shape, chunks = (6, 7, 8), (3, 4, 4)
    data = make_data(shape)
    axes = list(SUM_CASES.values()) if part == "sums" else [EXPR_AXIS]
    memory = Memory(data)
    with tempfile.TemporaryDirectory(prefix="hyperslab-bench-reductions-smoke-") as tmp:
        for codec in CODECS:
            path = str(Path(tmp) / f"{codec.replace(':', '-')}.h5")
            try:
                if file_of == HYPERSLAB_FILE:
                    write_hyperslab(path, data, codec, chunks)
                elif file_of == HDF5PLUGIN_FILE:
                    write_hdf5plugin(path, data, codec, chunks)
                for axis in axes:
                    params: dict[str, Any] = {"group": codec, "codec": codec, "axis": axis}
                    params |= {"chunks": chunks, "paths": {file_of: path}, "nbytes": data.nbytes}
                    rival = ReductionRival("smoke", (), None, part, method, file_of)
                    got = compute(rival, params, memory, Timer())
                    check_of(got, expected_result(data, part, axis), f"axis {axis}")
            except Exception as exc:  # whatever the library raises makes it unavailable
                return f"smoke test ({codec}) failed: {type(exc).__name__}: {exc}"
    return None


# ----------------------------------------------------------------------------- setup


def write_group(
    group: Group, data: Any, folder: Path, hdf5plugin_file: bool, progress: Callable[[str], None]
) -> None:
    """Write ``group``'s files (hyperslab's, then, if asked, hdf5plugin's with the chunkshape
    hyperslab used) and fill in its chunks, name, files and their descriptions."""
    stem = f"{group.codec.replace(':', '-')}-{group.setting}"
    path = folder / f"{stem}-hyperslab.h5"
    picked, seconds = write_hyperslab(str(path), data, group.codec, group.requested)
    auto = "auto " if group.requested is None else ""
    group.name = f"{group.codec} {auto}{chunks_label(picked)}"
    # hyperslab may pick chunks longer than a small array (and stretch its maxshape):
    # h5py refuses them, so the other writers and the NDArray get them clipped.
    group.chunks = tuple(min(c, n) for c, n in zip(picked, data.shape, strict=True))
    todo = [(HYPERSLAB_FILE, path, seconds)]
    if hdf5plugin_file:
        path = folder / f"{stem}-hdf5plugin.h5"
        todo.append(
            (HDF5PLUGIN_FILE, path, write_hdf5plugin(str(path), data, group.codec, group.chunks))
        )
    for file_of, path, seconds in todo:
        info = file_info(str(path), data.nbytes)
        group.files[file_of], group.info[file_of] = path, info
        group.write_seconds[file_of] = seconds
        progress(
            f"{group.name}: {file_of}'s file, {info['bytes']:,} bytes, {file_text(info)}, "
            f"written in {seconds:.2f} s"
        )


def build_spec(
    part: str,
    groups: Sequence[Group],
    rivals: Sequence[ReductionRival],
    cases: Sequence[str],
    nbytes: int,
    notes: Sequence[str],
) -> BenchmarkSpec:
    """Return the harness's description of ``part``: its cases in every group."""
    harness_cases = []
    for group in groups:
        params = {
            "part": part,
            "group": group.name,
            "codec": group.codec,
            "chunks": list(group.chunks),
            "blocks": group.info.get(HYPERSLAB_FILE, {}).get("blocks"),
            "paths": {k: str(p) for k, p in group.files.items()},
            "nbytes": nbytes,
        }
        for name in cases:
            axis = SUM_CASES[name] if part == "sums" else EXPR_AXIS
            harness_cases.append(Case(name, group.name, {**params, "axis": axis}))
    names = [r.name for r in rivals]
    what = "sums along each axis" if part == "sums" else f"({EXPRESSION}).sum(axis={EXPR_AXIS})"
    shape = chunks_label(groups[0].shape) if groups else "?"
    return BenchmarkSpec(
        name=f"reductions {part}",
        title=f"{what} of a {shape} float64 array",
        target="bench.reductions:run_case",
        rivals=rivals,
        cases=harness_cases,
        fresh_process=False,
        baseline=BASELINES[part] if BASELINES[part] in names else names[0],
        data=[
            DataInfo(f"{g.name}: {f}'s file", file_text(info), info["bytes"])
            for g in groups
            for f, info in g.info.items()
        ],
        notes=notes,
    )


# ----------------------------------------------------------------------------- the CLI


def shape_type(text: str) -> tuple[int, ...]:
    """argparse type: three comma-separated positive integers (``500,500,500``)."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not N,N,N: {text!r}") from None
    if len(values) != 3 or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not three positive integers: {text!r}")
    return values


def chunks_type(text: str) -> list[tuple[int, ...] | None]:
    """argparse type: chunk settings separated by ``;``: ``auto`` (None) or ``N,N,N``."""
    settings: list[tuple[int, ...] | None] = []
    for part in (p.strip() for p in text.split(";")):
        if part:
            settings.append(None if part == "auto" else shape_type(part))
    if not settings:
        raise argparse.ArgumentTypeError(f"no chunk setting in {text!r}")
    return settings


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench reductions``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("reductions"),
        description="Sum a 500x500x500 float64 array (1 GB, a linspace from 0 to 1000) along "
        "each axis and in all, with Blosc2 LZ4, Blosc2 Zstd and no compression, automatic and "
        "(100, 100, 100) chunks: hyperslab on disk vs NumPy and a python-blosc2 NDArray in "
        "memory, h5py + NumPy and dask over h5py; and (a * 2 + sin(a)).sum(axis=1) vs numexpr, "
        "NumPy and blosc2 lazy expressions (the blog's 'N-dimensional reductions with Blosc2').",
    )
    add_common_arguments(parser, default_repeat=DEFAULT_REPEAT)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a {chunks_label(QUICK_SHAPE)} array, chunks auto and {chunks_label(QUICK_CHUNKS)}",
    )
    parser.add_argument(
        "--shape",
        type=shape_type,
        default=None,
        help=f"array shape (default {','.join(map(str, FULL_SHAPE))})",
    )
    parser.add_argument(
        "--chunks",
        type=chunks_type,
        default=None,
        help="chunk settings separated by ';': auto (hyperslab's choice) or N,N,N (default "
        "'auto;100,100,100'; with --quick 'auto;20,20,20'; with --shape a fifth of each "
        "dimension)",
    )
    parser.add_argument(
        "--codecs", type=comma_list, default=None, help=f"codecs (default {','.join(CODECS)})"
    )
    parser.add_argument(
        "--cases", type=comma_list, default=None, help=f"cases (default all: {','.join(CASES)})"
    )
    parser.add_argument(
        "--tmpdir", type=Path, default=None, help="folder for the files (default: the system's)"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNGs")
    return parser


@dataclasses.dataclass
class Options:
    """What :func:`main` made of the command line."""

    shape: tuple[int, ...]
    groups: list[Group]
    cases: list[str]
    rivals: list[str]
    repeat: int


def _default_chunks(args: argparse.Namespace, shape: tuple[int, ...]) -> tuple[int, ...]:
    if args.shape is not None:
        return tuple(max(1, n // 5) for n in shape)
    return QUICK_CHUNKS if args.quick else FULL_CHUNKS


def parse_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Options:
    """Check the options and turn them into :class:`Options` (``parser.error`` if wrong)."""
    shape = args.shape or (QUICK_SHAPE if args.quick else FULL_SHAPE)
    if args.baseline is not None:
        parser.error("--baseline is fixed here: h5py + NumPy (sums), NumPy (expression)")
    settings = args.chunks or [None, _default_chunks(args, shape)]
    settings = [
        None if s is None else tuple(min(c, n) for c, n in zip(s, shape, strict=True))
        for s in settings
    ]
    if len(set(settings)) < len(settings):
        parser.error(f"--chunks lists a setting twice: {args.chunks}")
    try:
        codecs = pick(list(CODECS), _codec_names(args.codecs), "codec")
        cases = pick(CASES, args.cases, "case")
        rivals = pick(ALL_RIVALS, args.rivals, "rival")
    except BenchmarkError as exc:
        parser.error(str(exc))
    groups = [Group(codec, s, shape) for codec in codecs for s in settings]
    return Options(shape, groups, cases, rivals,
                   args.repeat or (2 if args.quick else DEFAULT_REPEAT))


def _codec_names(names: Sequence[str] | None) -> list[str] | None:
    """``lz4`` and ``zstd`` stand for ``blosc2:lz4`` and ``blosc2:zstd``."""
    if names is None:
        return None
    return [f"blosc2:{n}" if f"blosc2:{n.lower()}" in CODECS else n for n in names]


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options = parse_options(parser, args)
    try:
        with scratch_folder("reductions", args.tmpdir) as folder:
            return _run(args, options, folder)
    finally:
        _MEMORY.clear()


def _say(part: str, message: str) -> None:
    print_progress(f"{part}: {message}")


def _select_rivals(options: Options) -> tuple[dict[str, list[ReductionRival]], dict[str, str]]:
    """The available rivals of each part that has cases, and why others were skipped."""
    chosen: dict[str, list[ReductionRival]] = {}
    skipped: dict[str, str] = {}
    for part in PARTS:
        has_cases = any((c == "expr") == (part == "expression") for c in options.cases)
        wanted = [r for r in PART_RIVALS[part] if r.name in options.rivals]
        if not has_cases or not wanted:
            continue
        available, why = split_available(wanted, functools.partial(_say, part))
        skipped.update({f"{name} ({part})": reason for name, reason in why.items()})
        if available:
            chosen[part] = available
    return chosen, skipped


def _run(args: argparse.Namespace, options: Options, folder: Path) -> int:
    t0 = time.perf_counter()
    chosen, skipped = _select_rivals(options)
    if not chosen:
        print("reductions: error: no rival is available for the cases chosen", file=sys.stderr)
        return 1
    shape = options.shape
    print_progress(f"making the {' x '.join(map(str, shape))} float64 array...")
    data = _MEMORY.data = make_data(shape)
    for case in options.cases:
        part = "expression" if case == "expr" else "sums"
        _MEMORY.expected[case] = expected_result(data, part, SUM_CASES.get(case, EXPR_AXIS))
    need_hdf5plugin = any(r.file_of == HDF5PLUGIN_FILE for rs in chosen.values() for r in rs)
    try:
        for group in options.groups:
            write_group(group, data, folder, need_hdf5plugin, print_progress)
    except Exception as exc:  # no files, no benchmark
        print(f"reductions: error: writing the files failed: {exc}", file=sys.stderr)
        return 1
    notes = [*notes_for(shape, data.nbytes), *(f"Skipped {r}: {w}." for r, w in skipped.items())]
    results: dict[str, BenchmarkResult] = {}
    for part, rivals in chosen.items():
        cases = [c for c in options.cases if (c == "expr") == (part == "expression")]
        spec = build_spec(part, options.groups, rivals, cases, data.nbytes, notes)
        print_progress(f"part {part}: {len(spec.cases)} cases, rivals {[r.name for r in rivals]}")
        try:
            with keep_freed_memory():
                results[part] = run_benchmark(spec, options.repeat, timeout=args.timeout)
        except BenchmarkError as exc:
            print(f"reductions {part}: error: {exc}", file=sys.stderr)
            return 1
    out_dir = default_out_dir("reductions") if args.out is None else args.out
    code = report(
        results,
        options.groups,
        dict(_MEMORY.ndarray_info),
        data.nbytes,
        out_dir,
        plot=not args.no_plot,
    )
    print_progress(f"reductions: {time.perf_counter() - t0:.0f} s in all")
    return code


if __name__ == "__main__":
    sys.exit(main())
