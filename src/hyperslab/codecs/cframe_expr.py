"""Sums of expressions evaluated inside Blosc2's decompression, over stored chunk frames.

python-blosc2 (4.x) evaluates an expression over the blocks of its ``NDArray`` operands while
it decompresses them (its *miniexpr* engine: compiled, SIMD transcendental functions within
one ulp at :attr:`blosc2.FPAccuracy.HIGH`) and reduces each block while it is in cache.
For ``a * 2 + sin(a)`` that is 3-4x numexpr's speed over decompressed tiles, since libm's
``sin`` (which NumPy and numexpr call) costs about 7 ns an item.

The chunk frames the Blosc2 HDF5 filter stores each hold one compressed Blosc2 chunk (the
*inner chunk*; :mod:`.cframe`).  :func:`fused_sum` puts the inner chunks of a chunk-aligned
box of one dataset or several (checked by :func:`~.cframe.parse_frame` first) into in-memory
``NDArray`` objects of the box's shape, whose chunks are the HDF5 chunks, and asks
python-blosc2 for the sum of the expression over them.  Edge chunks fit as they are: b2nd
and the filter both store a chunk whole, padded.  Unfiltered chunks become Blosc2 chunks of
copied bytes (one copy, cheap next to numexpr's slower ``sin``).

Only what python-blosc2 computes as numexpr would is taken: float64 operands of one layout,
a float64 result, and the operators and functions of :func:`same_as_numexpr` (sums then
differ from numexpr's values summed by NumPy only by the order of additions and the one ulp
of a transcendental function).  Anything else (special chunks stored as a bare
value, plain frames whose blocks do not tile the chunk, an expression miniexpr does not
compile, a python-blosc2 without miniexpr) gives None, and the caller evaluates the
expression itself.
"""

from __future__ import annotations

import ast
import functools
import math
import threading
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.codecs.blockshape import ext_shape
from hyperslab.codecs.cframe import FrameLayout, _blosc2, _byte_view, _decompress, parse_frame
from hyperslab.codecs.cframe_blocks import scratch_block
from hyperslab.codecs.cframe_check import FrameError

__all__ = ["FUSED_DTYPE", "HEADROOM", "StoredChunks", "fusable", "fused_sum", "miniexpr_compiles",
           "plain_blockshape", "same_as_numexpr", "sums_as_numexpr", "values_sum"]

FUSED_DTYPE: Final = np.dtype(np.float64)
"""The one operand and result dtype summed here."""

_MIN_VERSION: Final = (4, 0)
"""python-blosc2 evaluates reductions with miniexpr from this version on."""

_EVALUATING: Final = threading.Lock()
"""Held while python-blosc2 evaluates: it holds the GIL throughout anyway, and its lazy
expressions keep module-level state between calls."""

_SCRATCH: Final = threading.local()
"""Each thread's ``NDArray`` per operand (:func:`_container`)."""


@functools.cache
def _usable_blosc2() -> Any | None:
    """python-blosc2 if it has miniexpr reductions (checked once), else None."""
    b2 = _blosc2()
    version = tuple(int(p) for p in b2.__version__.split(".")[:2] if p.isdigit())
    if version < _MIN_VERSION or not hasattr(b2, "FPAccuracy"):
        return None
    return b2


_SAME_FUNCTIONS: Final = frozenset({
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "tanh", "arctanh",
    "exp", "expm1", "log", "log10", "log1p", "sqrt", "abs", "ceil", "floor",
})
"""Functions miniexpr computes as numexpr does (within one ulp, with the same NaNs and
infinities; checked on signed zeros, subnormals, huge values, infinities and NaNs).  Not
``sinh``/``cosh`` (infinite from 710 where libm is finite), ``arcsinh``/``arccosh``
(infinite at 1e300), the complex ones, nor ``where`` (python-blosc2 4.14's sum of
``arctan(where(a > 0, log(a), b))`` leaves out the NaNs its elements have)."""

_SAME_OPERATORS: Final = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.UAdd)
"""Operators miniexpr computes as numexpr does.  Not ``%`` (numexpr's has the sign of the
divisor, miniexpr's of the dividend), ``//``, the bitwise ones, comparisons (only of use
with ``where``), nor a minus sign (python-blosc2 4.14's reductions of ``a * -1.5`` and
``a ** -1`` are wrong, and it negates as ``0 - x``, so ``a / -b`` is +inf for ``b ==
0``)."""

_EXACT_INTEGERS: Final = 1 << 53

PLAIN_BLOCK_BYTES: Final = 256 << 10
"""The largest block unfiltered chunks are cut into (an L2-sized slab)."""

PLAIN_BLOCK_MIN_BYTES: Final = 16 << 10
"""Smaller blocks (chunks whose rows do not divide well) cost more per block than they
save: such chunks are left to numexpr."""


def _same_constant(node: ast.Constant) -> bool:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, int) or abs(value) < _EXACT_INTEGERS


def _same_power(node: ast.BinOp) -> bool:
    """Exponents computed alike: a whole number of 0 or more, or an expression of names
    (numexpr turns an exponent of 0.5 into ``sqrt``, NaN for -inf where ``pow`` gives
    inf)."""
    exponent = node.right
    if isinstance(exponent, ast.Constant):
        value = exponent.value
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return any(isinstance(n, ast.Name) for n in ast.walk(exponent))


def _same_node(node: ast.AST, known: set[str]) -> bool:
    """Whether one node of an expression's tree is computed alike (see
    :func:`same_as_numexpr`)."""
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in _SAME_FUNCTIONS
                and not node.keywords)
    if isinstance(node, ast.Name):
        return node.id in known or node.id in _SAME_FUNCTIONS
    if isinstance(node, ast.Constant):
        return _same_constant(node)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _SAME_OPERATORS) and (
            not isinstance(node.op, ast.Pow) or _same_power(node))
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _SAME_OPERATORS)
    return isinstance(node, ast.Expression | ast.Load | ast.operator | ast.unaryop)


def same_as_numexpr(expression: str, names: Sequence[str]) -> bool:
    """Whether python-blosc2's miniexpr sums ``expression`` (of float64 operands ``names``)
    as numexpr computes it: only the functions, operators and constants listed above, a
    conservative list (anything else leaves the expression to numexpr).

    Examples
    --------
    >>> same_as_numexpr("a * 2 + sin(b)", ["a", "b"]), same_as_numexpr("a % 2", ["a"])
    (True, False)
    """
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    known = set(names)
    return all(_same_node(node, known) for node in ast.walk(tree))


def miniexpr_compiles(expression: str, names: Sequence[str]) -> bool:
    """Whether python-blosc2's miniexpr compiles ``expression`` over float64 operands
    ``names`` into a float64 result (else python-blosc2 would evaluate it chunk by chunk
    with numexpr, slower than the caller's own tiles)."""
    b2 = _usable_blosc2()
    if b2 is None:
        return False
    output_dtype = getattr(getattr(b2, "blosc2_ext", None), "me_output_dtype", None)
    if output_dtype is None:
        return False
    try:
        dtype = output_dtype(expression, dict.fromkeys(names, FUSED_DTYPE))
    except Exception:  # any refusal means "not compiled"
        return False
    return dtype is not None and np.dtype(dtype) == FUSED_DTYPE


def fusable(expression: str, names: Sequence[str]) -> bool:
    """Whether :func:`fused_sum` can sum ``expression`` over float64 operands ``names``
    (before any chunk is read): :func:`same_as_numexpr`, :func:`miniexpr_compiles`, and
    :func:`sums_as_numexpr` on probes.  Decided once per expression and names (the
    callers ask again for every group of chunk rows)."""
    return _fusable(expression, tuple(names))


@functools.lru_cache(maxsize=256)
def _fusable(expression: str, names: tuple[str, ...]) -> bool:
    return (same_as_numexpr(expression, names) and miniexpr_compiles(expression, names)
            and sums_as_numexpr(expression, names))


_PROBE_SHAPE: Final = (3, 32, 33)
_PROBE_CHUNKS: Final = (2, 16, 32)
_PROBE_BLOCKS: Final = (1, 8, 16)
"""Probes have edge chunks and blocks, and several blocks a chunk, as stored arrays do."""

_PROBE_SPECIALS: Final = ((0.0, -0.0, 1e-310, 1.0, -1.0), (np.inf, -np.inf), (1e300, -1e300,
                          710.0, -745.0), (np.nan,))
"""Special values, a probe for each group (a NaN or an infinity hides what else a sum
holds)."""


def _probes(expression: str, names: tuple[str, ...]) -> list[dict[str, AnyArray]]:
    """Operand values to sum the expression over: ordinary values, values of every
    magnitude, and ordinary values with one special value (zeros, infinities, NaN, huge,
    subnormal) at a few places, each its own probe (a NaN in one would hide the rest)."""
    rng = np.random.default_rng(zlib.crc32(expression.encode("utf-8", "replace")))
    size = math.prod(_PROBE_SHAPE)

    def ordinary() -> AnyArray:
        return rng.standard_normal(size) * 3

    probes = [{name: ordinary() for name in names}]
    probes.append({name: np.exp(rng.uniform(-30, 30, size)) * rng.choice([-1.0, 1.0], size)
                   for name in names})
    for specials in _PROBE_SPECIALS:
        probe = {}
        for name in names:
            values = ordinary()
            values[rng.integers(0, size, 16)] = rng.choice(specials, 16)
            probe[name] = values
        probes.append(probe)
    return [{name: v.reshape(_PROBE_SHAPE) for name, v in probe.items()} for probe in probes]


def _sums_agree(got: float, want: float, scale: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return want == got
    return abs(got - want) <= 1e-12 * scale + 1e-300


@functools.lru_cache(maxsize=256)
def sums_as_numexpr(expression: str, names: tuple[str, ...]) -> bool:
    """Whether python-blosc2's miniexpr sums ``expression`` as numexpr's values summed by
    NumPy, on probes (:func:`_probes`; checked once per expression).

    The operator and function lists of :func:`same_as_numexpr` are checked one by one;
    their combinations are not always compiled right (python-blosc2 4.14 sums
    ``abs(3.25) ** 3 - arctan2(a, arctan(b))`` as if the last term were another), so
    each expression is tried before its sums are trusted.
    """
    b2 = _usable_blosc2()
    if b2 is None:
        return False
    import numexpr  # (a dependency of hyperslab; imported where it is used)

    for probe in _probes(expression, names):
        arrays = {name: b2.asarray(values, chunks=_PROBE_CHUNKS, blocks=_PROBE_BLOCKS)
                  for name, values in probe.items()}
        try:
            with _EVALUATING, np.errstate(all="ignore"):
                total = b2.lazyexpr(f"sum({expression})", operands=arrays).compute(
                    fp_accuracy=b2.FPAccuracy.HIGH)
                values = numexpr.evaluate(expression, local_dict=probe, global_dict={})
        except Exception:  # either refuses it: not summed by miniexpr
            return False
        finite = np.asarray(values)[np.isfinite(values)]
        with np.errstate(all="ignore"):
            want = float(np.sum(values))
            scale = float(np.sum(np.abs(finite)))
        if not _sums_agree(float(np.asarray(total)[()]), want, scale):
            return False
    return True


def _blockshape(layout: FrameLayout, chunkshape: Shape, itemsize: int) -> Shape | None:
    """The b2nd block shape that lays out the frame's inner chunk, or None if the frame
    does not fit an ``NDArray`` chunk of ``chunkshape`` and ``itemsize``-byte items."""
    if layout.special or layout.typesize != itemsize or tuple(layout.shape) != chunkshape:
        return None
    if layout.blockshape is not None:
        blockshape = tuple(layout.blockshape)
        if tuple(layout.chunkshape or ()) != chunkshape:
            return None
    else:  # a plain (1-D) frame: its blocks are runs of blocksize bytes
        if len(chunkshape) != 1 or layout.blocksize % itemsize:
            return None
        blockshape = (layout.blocksize // itemsize,)
    if layout.chunk_nbytes != math.prod(ext_shape(chunkshape, blockshape)) * itemsize:
        return None  # (a plain frame's last block is short: no b2nd chunk is)
    return blockshape


def _container(b2: Any, shape: Shape, chunkshape: Shape, blockshape: Shape, nthreads: int,
               slot: int, copied: bool = False) -> Any:
    """An in-memory ``NDArray`` whose chunks the caller replaces, all of them: this
    thread's for operand ``slot`` when the last one had this layout (each replaced chunk's
    memory then goes to the next one's copy, instead of every chunk's copy being fresh
    pages, freed and trimmed with the array), else a new one kept in its place.  With
    ``copied`` its chunks store what is written into it uncompressed."""
    key = (shape, chunkshape, blockshape, nthreads, copied)
    containers: dict[int, tuple[Any, Any]] | None = getattr(_SCRATCH, "containers", None)
    if containers is None:
        containers = _SCRATCH.containers = {}
    kept = containers.get(slot)
    if kept is not None and kept[0] == key:
        return kept[1]
    containers.pop(slot, None)  # (its chunks freed before the new array's are copied)
    cparams = b2.CParams(clevel=0, nthreads=nthreads) if copied else b2.CParams(nthreads=nthreads)
    array = b2.uninit(shape, FUSED_DTYPE, chunks=chunkshape, blocks=blockshape,
                      cparams=cparams, dparams=b2.DParams(nthreads=nthreads))
    containers[slot] = (key, array)
    return array


def _decodes(chunk: memoryview, nbytes: int, nthreads: int) -> bool:
    """Whether Blosc2 decompresses the inner chunk ``chunk`` of ``nbytes`` bytes (into a
    scratch buffer, then forgotten).  python-blosc2's miniexpr does not survive a chunk it
    fails to decompress (its worker threads wait forever), so none is handed to it."""
    try:
        _decompress(chunk, scratch_block(nbytes), nthreads)
    except FrameError:
        return False
    return True


def _ndarray(b2: Any, frames: Sequence[Any], shape: Shape, chunkshape: Shape,
             blockshape: Shape | None, nthreads: int, slot: int = 0
             ) -> tuple[Any, Shape] | None:
    """An ``NDArray`` of ``shape`` whose chunks are the inner chunks of ``frames`` (the
    chunk grid's C order), and its block shape; None if a frame does not fit, or does
    not decompress."""
    views: list[memoryview] = []
    for frame in frames:
        view = _byte_view(frame)
        try:
            layout = parse_frame(view)
        except FrameError:
            return None
        blocks = _blockshape(layout, chunkshape, FUSED_DTYPE.itemsize)
        if blocks is None or (blockshape is not None and blocks != blockshape):
            return None
        blockshape = blocks
        chunk = view[layout.chunk_start : layout.chunk_stop]
        if not _decodes(chunk, layout.chunk_nbytes, nthreads):
            return None
        views.append(chunk)
    if blockshape is None:
        return None
    array = _container(b2, shape, chunkshape, blockshape, nthreads, slot)
    if array.schunk.nchunks != len(views):
        return None
    for number, view in enumerate(views):
        array.schunk.update_chunk(number, view)
    return array, blockshape


class StoredChunks(NamedTuple):
    """An operand's stored chunks, in the C order of the chunk grid of its box."""

    chunks: Sequence[Any]
    """The bytes HDF5 stores for each chunk (Blosc2 frames, or the items themselves),
    each after ``headroom`` bytes free for the caller."""
    plain: bool
    """Whether the chunks are unfiltered (the items in C order, as HDF5 stores them
    without filters), else Blosc2 frames."""
    headroom: int = 0
    """Writable bytes before each chunk's own (unfiltered chunks only: room for the
    header that makes it a Blosc2 chunk, :data:`HEADROOM`)."""


HEADROOM: Final = 32
"""The header of a Blosc2 chunk of copied (uncompressed) bytes."""


@functools.lru_cache(maxsize=64)
def _copied_chunk_header(nbytes: int, blocksize: int, typesize: int) -> bytes | None:
    """The header Blosc2 gives a chunk of ``nbytes`` stored uncompressed in blocks of
    ``blocksize`` (the same for every such chunk), or None if it is not that."""
    b2 = _blosc2()
    sample = (np.arange(nbytes, dtype=np.uint32) % 251).astype(np.uint8)
    chunk = b2.compress2(sample, typesize=typesize, clevel=0, blocksize=blocksize,
                         splitmode=b2.SplitMode.NEVER_SPLIT, nthreads=1)
    sizes = b2.get_cbuffer_sizes(chunk) if hasattr(b2, "get_cbuffer_sizes") else None
    if len(chunk) != nbytes + HEADROOM or bytes(chunk[HEADROOM:]) != sample.tobytes() \
            or (sizes is not None and tuple(sizes)[:2] != (nbytes, nbytes + HEADROOM)):
        return None
    return bytes(chunk[:HEADROOM])


def plain_blockshape(chunkshape: Shape, itemsize: int, max_bytes: int = PLAIN_BLOCK_BYTES,
                     min_bytes: int = PLAIN_BLOCK_MIN_BYTES) -> Shape | None:
    """Blocks that cut an unfiltered chunk into C-ordered slabs of at most ``max_bytes``
    (a whole number of them per chunk, so the chunk's bytes are its blocks' in order);
    None if such slabs would be under ``min_bytes``."""
    for axis in range(len(chunkshape)):
        inner = math.prod(chunkshape[axis + 1 :]) * itemsize
        if inner > max_bytes:
            continue
        length = chunkshape[axis]
        rows = max(d for d in range(1, length + 1)
                   if length % d == 0 and d * inner <= max_bytes)
        if rows * inner < min_bytes and math.prod(chunkshape) * itemsize > rows * inner:
            return None
        return (1,) * axis + (rows, *chunkshape[axis + 1 :])
    return None


SMALL_SLAB_BYTES: Final = 16 << 10
"""Chunks (of one block each) of :func:`values_sum`: buffers of that size come from the
heap, not fresh pages, even where freed memory goes back to the system at once."""


def values_sum(expression: str, operands: Mapping[str, AnyArray], nthreads: int = 1
               ) -> np.float64 | None:
    """The sum of ``expression`` over decoded float64 operands of one shape, computed by
    python-blosc2's miniexpr over Blosc2 copies of them in chunks of one small block.

    For processes whose allocator returns freed memory at once (:mod:`.allocator`), where
    miniexpr's per-block buffers for the stored blocks (128 KiB and more) would be fresh
    pages: its buffers for 16 KiB blocks come from the heap.  None where it does not
    apply (as :func:`fused_sum`).
    """
    b2 = _usable_blosc2()
    names = list(operands)
    if b2 is None or not operands or not fusable(expression, names):
        return None
    shapes = {tuple(np.shape(v)) for v in operands.values()}
    if len(shapes) != 1:
        return None
    shape = shapes.pop()
    slab = plain_blockshape(shape, FUSED_DTYPE.itemsize, SMALL_SLAB_BYTES, 1 << 12)
    if slab is None:
        return None
    arrays: dict[str, Any] = {}
    for slot, (name, values) in enumerate(operands.items()):
        array = _container(b2, shape, slab, slab, max(1, nthreads), slot, copied=True)
        array[...] = values  # (each chunk's copy takes the memory of the one it replaces)
        arrays[name] = array
    return _evaluated_sum(b2, expression, arrays, nthreads)


def _evaluated_sum(b2: Any, expression: str, arrays: Mapping[str, Any], nthreads: int
                   ) -> np.float64 | None:
    """python-blosc2's sum of ``expression`` over its ``NDArray`` operands (None if it
    fails: the caller's own evaluation then reports what is wrong)."""
    cparams = b2.CParams(nthreads=max(1, nthreads), splitmode=b2.SplitMode.NEVER_SPLIT)
    try:
        with _EVALUATING:
            lazy = b2.lazyexpr(f"sum({expression})", operands=arrays)
            total = lazy.compute(fp_accuracy=b2.FPAccuracy.HIGH, cparams=cparams)
    except Exception:  # python-blosc2 refused it: numexpr's tiles then say what is wrong
        return None
    value = np.asarray(total[()] if hasattr(total, "shape") else total)
    if value.shape != () or value.dtype != FUSED_DTYPE:
        return None
    return np.float64(value[()])


def _plain_ndarray(b2: Any, chunks: Sequence[Any], shape: Shape, chunkshape: Shape,
                   nthreads: int, headroom: int, slot: int = 0) -> tuple[Any, Shape] | None:
    """An ``NDArray`` of ``shape`` whose chunks are unfiltered chunks as Blosc2 chunks of
    copied bytes (no compression), and its block shape; None where that does not apply."""
    itemsize = FUSED_DTYPE.itemsize
    blockshape = plain_blockshape(chunkshape, itemsize)
    nbytes = math.prod(chunkshape) * itemsize
    views = [_byte_view(c) for c in chunks]
    if blockshape is None or any(v.nbytes != nbytes + headroom for v in views):
        return None
    array = _container(b2, shape, chunkshape, blockshape, nthreads, slot)
    if array.schunk.nchunks != len(views):
        return None
    blocksize = math.prod(blockshape) * itemsize
    header = _copied_chunk_header(nbytes, blocksize, itemsize) if headroom == HEADROOM \
        else None
    for number, view in enumerate(views):
        if header is not None and not view.readonly:
            view[:HEADROOM] = header  # the chunk as Blosc2 stores it, without a copy
            stored: Any = view
        else:
            stored = b2.compress2(view[headroom:], typesize=itemsize, clevel=0,
                                  blocksize=blocksize, splitmode=b2.SplitMode.NEVER_SPLIT,
                                  nthreads=1)
        array.schunk.update_chunk(number, stored)
    return array, blockshape


def fused_sum(expression: str, operands: Mapping[str, StoredChunks], shape: Shape,
              chunkshape: Shape, nthreads: int = 1) -> np.float64 | None:
    """The sum of ``expression`` over operands given as their stored chunks.

    Parameters
    ----------
    expression : str
        A numexpr expression of the operands' names.
    operands : mapping of str to StoredChunks
        Each operand's stored chunks (Blosc2 frames as the filter stores them, or
        unfiltered chunks) in the C order of the chunk grid of ``shape``; every operand
        float64, all stored alike (and all frames of one block shape).
    shape : tuple of int
        The box the chunks cover (its far edges may cut the last chunks).
    chunkshape : tuple of int
        The HDF5 chunk shape.
    nthreads : int
        Threads python-blosc2 evaluates the blocks in.

    Returns
    -------
    numpy.float64 or None
        The sum, or None where python-blosc2 cannot compute it as described in the
        module docstring (then nothing was computed).

    Any error of python-blosc2's evaluation also gives None: the caller's own
    evaluation then reports what is wrong.
    """
    b2 = _usable_blosc2()
    names = list(operands)
    if b2 is None or not operands or not fusable(expression, names):
        return None
    if len({stored.plain for stored in operands.values()}) != 1:
        return None
    arrays: dict[str, Any] = {}
    blockshape: Shape | None = None
    for slot, (name, stored) in enumerate(operands.items()):
        if stored.plain:
            made = _plain_ndarray(b2, stored.chunks, shape, chunkshape, nthreads,
                                  stored.headroom, slot)
        else:
            made = _ndarray(b2, stored.chunks, shape, chunkshape, blockshape, nthreads, slot)
        if made is None:
            return None
        arrays[name], blockshape = made
    return _evaluated_sum(b2, expression, arrays, nthreads)
