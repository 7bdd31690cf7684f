"""Reductions of arrays and table columns (``arr.sum(axis=0)``, ...), streamed tile by tile.

:class:`Reducible` gives Array, CArray, EArray and table columns NumPy's reduction methods.
The work is in :mod:`hyperslab.compute.reductions` (imported on call: nodes sit below
compute); this module and :mod:`.tablecols` supply the tiles (:class:`LeafTiles`).
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.chunked import tiles as tiling
from hyperslab.chunked.access import read_selection
from hyperslab.chunked.blockvisit import visit_chunks, visits_blocks
from hyperslab.chunked.engine import RawKind
from hyperslab.chunked.ordered import in_order
from hyperslab.chunked.regions import Box

if TYPE_CHECKING:
    from hyperslab.nodes.leaves.leaf import Leaf

Result = TypeVar("Result")

_RAW_PLAIN_MIN_BYTES = 1 << 17
"""Unfiltered chunks from this size on are read raw (os.pread) by reductions and
expressions."""


def read_leaf_box(leaf: Leaf, key: tuple[slice, ...], serial: bool,
                  buffers: threading.local | None = None, owner: int | None = None
                  ) -> AnyArray:
    """``leaf[key]`` (positive-step slices) in native order, for work running in the
    File's pool (``serial``: decode in the calling thread only).

    Blosc2 datasets go through the chunk engine's fast path; unfiltered chunks of
    read-only files through raw ``os.preadv`` into the result (faster than one h5py read,
    in parallel tiles), many chunks per call where each chunk's part of the box is one run
    of bytes (:meth:`~hyperslab.chunked.engine.ChunkEngine.read_plain_scattered`), else
    chunk by chunk when they are big; the rest through h5py.  With ``buffers``, the fast
    paths read into a buffer of the calling thread that its next call reuses (no fresh
    memory to fault in per tile): the result is then valid until the thread's next call.
    The leaf's lock is held shared for the read (for ``owner``: the thread the read is
    done for, when it runs in the pool).
    """
    with leaf._shared(owner):
        return _read_box(leaf, key, serial, buffers)


def _read_box(leaf: Leaf, key: tuple[slice, ...], serial: bool,
              buffers: threading.local | None) -> AnyArray:
    dataset, engine = leaf._dataset, leaf._engine
    if engine.kind in (RawKind.BLOSC2, RawKind.DEFLATE):
        fast = engine.serves_key(key)
    elif engine.kind is RawKind.PLAIN and dataset.raw_chunks().uses_pread:
        out = None if buffers is None else _thread_buffer(buffers, key, dataset)
        scattered = engine.read_plain_scattered(key, out)
        if scattered is not None:
            return leaf._native(scattered)
        fast = engine.chunk_nbytes >= _RAW_PLAIN_MIN_BYTES
    else:
        fast = False
    if fast:
        out = None if buffers is None else _thread_buffer(buffers, key, dataset)
        return leaf._native(engine.read_gather(key, out, serial=serial))
    # Blosc2: the engine checks the frames HDF5's filter would decode (frameaudit).
    return leaf._native(read_selection(
        dataset, key, engine if engine.kind is RawKind.BLOSC2 else None))


_OPERAND_BUFFERS: dict[int, threading.local] = {}
_OPERAND_BUFFERS_LOCK = threading.Lock()


def operand_buffers(position: int) -> threading.local:
    """The ``buffers`` of :func:`read_leaf_box` for the operand at ``position`` of an
    expression: each thread's own, one per position (the operands of one tile are needed
    at once)."""
    with _OPERAND_BUFFERS_LOCK:
        return _OPERAND_BUFFERS.setdefault(position, threading.local())


def _thread_buffer(buffers: threading.local, key: tuple[slice, ...],
                   dataset: Any) -> AnyArray:
    """An array of the box's shape in the calling thread's reusable buffer."""
    shape = tuple(len(range(*k.indices(n))) for k, n in zip(key, dataset.shape, strict=True))
    dtype = dataset.dtype
    nbytes = math.prod(shape) * dtype.itemsize
    buffer = getattr(buffers, "bytes", None)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = buffers.bytes = np.empty(nbytes, dtype=np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape)


def _reduce(owner: Any, op: str, axis: Any, **kwargs: Any) -> Any:
    from hyperslab.compute.reductions import reduce  # compute sits above nodes

    return reduce(owner._reduction_source(), op, axis, **kwargs)


class LeafTiles:
    """The tiles of an array leaf: chunk-aligned boxes of a few megabytes, read through the
    chunk engine's fast path where the dataset has one (decoded in the File's pool, one
    tile per thread) and through h5py otherwise, in native byte order."""

    def __init__(self, leaf: Leaf) -> None:
        self._leaf = leaf
        self.shape: tuple[int, ...] = tuple(leaf._dataset.shape)
        dtype = leaf._dataset.dtype
        self.dtype = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype

    visits_blocks = True
    """``_map_tiles`` takes ``blockwise`` (see :mod:`hyperslab.compute.reductions`)."""

    def _map_tiles(self, work: Callable[[Box, Any], Result],
                   target_bytes: int | None = None, along: Sequence[int] = (),
                   blockwise: bool = False) -> Iterator[Result | None]:
        """``work(box, data)`` for every tile (of about ``target_bytes``, by default
        :data:`hyperslab.chunked.tiles.TILE_BYTES`, grown along the axes ``along`` first),
        in the pool's threads; results in C order.  ``data`` is an array, or a
        :class:`~hyperslab.chunked.tiles.Uniform` for a slab of chunks never written when
        most of the dataset's chunks were never written.

        ``blockwise``: ``work`` may instead be called on parts of a tile, in the thread
        that reads the tile: each block of the chunks decoded block by block
        (:func:`hyperslab.chunked.blockvisit.visit_chunks`, no copy of the tile written),
        the rest of the tile chunk by chunk.  Its results are then dropped (``work``
        keeps what it needs) and each tile yields None."""
        leaf = self._leaf
        dataset, engine = leaf._dataset, leaf._engine
        shape = self.shape
        size = tiling.TILE_BYTES if target_bytes is None else target_bytes
        tile = tiling.tile_shape(shape, dataset.chunks, dataset.dtype.itemsize, size, along)
        slabs = _written_slabs(leaf, shape)
        fill: np.generic | None = None
        if slabs is None:
            boxes: Iterator[Box] = tiling.tiles(shape, tile)  # generated as they are read
            ntiles = tiling.count_tiles(shape, tile)
        else:  # mostly unwritten: the written slabs in tiles, the rest uniform
            boxes = _slab_tiles(slabs, tile)
            ntiles = 2
            gap = next(box for box, written in slabs if not written)
            key = tuple(slice(lo, lo + 1) for lo, _ in gap)
            fill = self.dtype.type(read_leaf_box(leaf, key, False).reshape(-1)[0])
        serial = ntiles > 1  # then tiles are read in parallel, one per pool thread
        buffers = threading.local()  # a tile buffer per thread, reused for its next tile
        owner = threading.get_ident()  # pool threads read for the caller
        uniform = None if slabs is None else {box for box, written in slabs if not written}

        by_blocks = blockwise and slabs is None and visits_blocks(engine)

        def task(box: Box) -> Result | None:
            if by_blocks:
                _visit_tile(leaf, box, work, buffers, owner)
                return None
            if uniform is not None and box in uniform:
                assert fill is not None
                return work(box, tiling.Uniform(fill, tuple(hi - lo for lo, hi in box)))
            key = tuple(slice(lo, hi) for lo, hi in box)
            return work(box, read_leaf_box(leaf, key, serial, buffers, owner))

        if ntiles < 2 or engine.workers < 2:
            for box in boxes:
                yield task(box)
            return
        yield from in_order(engine.pool, task, ((box,) for box in boxes), 2 * engine.workers)


def _visit_tile(leaf: Leaf, box: Box, work: Callable[[Box, Any], Any],
                buffers: threading.local, owner: int) -> None:
    """``work`` on the blocks of the chunks of ``box`` (a tile: whole chunks, cut at the
    dataset's edge) that are decoded block by block, and on each other chunk whole."""
    chunks = tuple(int(c) for c in leaf._dataset.chunks or ())  # Blosc2: chunked
    grids = list(itertools.product(*(range(lo // c, -(-hi // c))
                                      for (lo, hi), c in zip(box, chunks, strict=True))))
    with leaf._shared(owner):
        others = visit_chunks(leaf._engine, grids, work)
    for grid in others:
        part = tuple((max(lo, g * c), min(hi, (g + 1) * c))
                     for (lo, hi), g, c in zip(box, grid, chunks, strict=True))
        key = tuple(slice(lo, hi) for lo, hi in part)
        work(part, read_leaf_box(leaf, key, True, buffers, owner))


Slabs = list[tuple[Box, bool]]


def _written_slabs(leaf: Leaf, shape: tuple[int, ...]) -> Slabs | None:
    """Chunk-aligned boxes covering the dataset, ``(box, written)``: those holding written
    chunks (at least half of their chunks, or one chunk), and those that hold none, in C
    order of their corners; None when chunks are written in at least half of the chunk
    grid (or the dataset has no chunk index), for the tiles to cover everything."""
    chunks = leaf._dataset.chunks
    if not chunks or not shape or 0 in shape:
        return None
    grid = [-(-n // int(c)) for n, c in zip(shape, chunks, strict=True)]
    if math.prod(grid) < 64:
        return None
    try:
        coords = leaf._dataset.raw_chunks().index().coords
    except (ValueError, OSError):  # not chunked after all, or no index to read
        return None
    if 2 * len(coords) >= math.prod(grid):
        return None
    slabs: Slabs = []
    _split(coords, tuple((0, n) for n in shape), 0, tuple(int(c) for c in chunks), slabs)
    return slabs if any(not written for _, written in slabs) else None


def _split(coords: AnyArray, box: Box, axis: int, chunks: tuple[int, ...],
           slabs: Slabs) -> None:
    """Cut ``box`` (holding the written chunks at grid ``coords``) along ``axis`` into runs
    of chunks with and without written ones, and the runs with some along the next axes."""
    nchunks = math.prod(-(-(hi - lo) // c) for (lo, hi), c in zip(box, chunks, strict=True))
    if axis == len(box) or 2 * len(coords) >= nchunks:
        slabs.append((box, True))
        return
    size = chunks[axis]
    begin, end = box[axis]
    along = coords[:, axis]
    written = np.unique(along)
    at = begin // size

    def cut(lo: int, hi: int) -> Box:
        return (*box[:axis], (max(begin, lo * size), min(end, hi * size)), *box[axis + 1 :])

    for part in np.split(written, np.flatnonzero(np.diff(written) != 1) + 1):
        first, last = int(part[0]), int(part[-1]) + 1
        if first > at:
            slabs.append((cut(at, first), False))
        inside = (along >= first) & (along < last)
        _split(coords[inside], cut(first, last), axis + 1, chunks, slabs)
        at = last
    if at * size < end:
        slabs.append((cut(at, -(-end // size)), False))


def _slab_tiles(slabs: Slabs, tile: Sequence[int]) -> Iterator[Box]:
    """The tiles of the written boxes (chunk-aligned: the boxes start on chunks) and each
    unwritten box whole, in order."""
    for box, written in slabs:
        if not written:
            yield box
            continue
        corner = [lo for lo, _ in box]
        for part in tiling.tiles(tuple(hi - lo for lo, hi in box), tile):
            yield tuple((lo + at, hi + at) for (lo, hi), at in zip(part, corner, strict=True))


class TileReadable:
    """Boxes of an array leaf for expressions (:class:`hyperslab.Expr`), read in the pool's
    threads through the fast path where there is one."""

    def _tile_engine(self) -> Any:
        return self._engine  # type: ignore[attr-defined]

    def _tile_chunkshape(self) -> tuple[int, ...] | None:
        chunks = self._dataset.chunks  # type: ignore[attr-defined]
        return tuple(chunks) if chunks else None

    def _read_tile(self, box: Box, step: int = 1) -> AnyArray:
        """The box (rows every ``step``-th along the first dimension), native order."""
        key = tuple(slice(lo, hi, step if axis == 0 else 1)
                    for axis, (lo, hi) in enumerate(box))
        return read_leaf_box(self, key, serial=True)  # type: ignore[arg-type]


class Reducible:
    """NumPy's reductions, computed out of core (see the module docstring).

    Each method takes NumPy's arguments and returns what NumPy returns for the same data
    in memory.  Classes using it supply ``_reduction_source()``: an object with ``shape``,
    ``dtype`` and ``_map_tiles`` (see :mod:`hyperslab.compute.reductions`).

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "sums.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     a = f.create_carray("/", "a", obj=np.arange(12.0).reshape(3, 4),
    ...                         filters=hyperslab.Filters(5, "blosc2"))
    ...     print(a.sum(), a.sum(axis=0), a.max(axis=1), a.argmin())
    66.0 [12. 15. 18. 21.] [ 3.  7. 11.] 0
    """

    def _reduction_source(self) -> Any:
        return LeafTiles(self)  # type: ignore[arg-type]

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> Any:
        """The sum of the elements over ``axis`` (``numpy.sum``)."""
        return _reduce(self, "sum", axis, dtype=dtype, keepdims=keepdims, initial=initial,
                       where=where)

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
             initial: Any = None, where: Any = None) -> Any:
        """The product of the elements over ``axis`` (``numpy.prod``)."""
        return _reduce(self, "prod", axis, dtype=dtype, keepdims=keepdims, initial=initial,
                       where=where)

    def mean(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
             where: Any = None) -> Any:
        """The arithmetic mean over ``axis`` (``numpy.mean``)."""
        return _reduce(self, "mean", axis, dtype=dtype, keepdims=keepdims, where=where)

    def var(self, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False,
            where: Any = None) -> Any:
        """The variance over ``axis`` (``numpy.var``)."""
        return _reduce(self, "var", axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                       where=where)

    def std(self, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False,
            where: Any = None) -> Any:
        """The standard deviation over ``axis`` (``numpy.std``)."""
        return _reduce(self, "std", axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                       where=where)

    def min(self, axis: Any = None, keepdims: bool = False, initial: Any = None,
            where: Any = None) -> Any:
        """The minimum over ``axis`` (``numpy.min``; NaNs propagate)."""
        return _reduce(self, "min", axis, keepdims=keepdims, initial=initial, where=where)

    def max(self, axis: Any = None, keepdims: bool = False, initial: Any = None,
            where: Any = None) -> Any:
        """The maximum over ``axis`` (``numpy.max``; NaNs propagate)."""
        return _reduce(self, "max", axis, keepdims=keepdims, initial=initial, where=where)

    def any(self, axis: Any = None, keepdims: bool = False, where: Any = None) -> Any:
        """Whether any element over ``axis`` is true (``numpy.any``)."""
        return _reduce(self, "any", axis, keepdims=keepdims, where=where)

    def all(self, axis: Any = None, keepdims: bool = False, where: Any = None) -> Any:
        """Whether all elements over ``axis`` are true (``numpy.all``)."""
        return _reduce(self, "all", axis, keepdims=keepdims, where=where)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Indices of the minimum (first occurrence; flat for ``axis=None``)."""
        return _reduce(self, "argmin", axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Indices of the maximum (first occurrence; flat for ``axis=None``)."""
        return _reduce(self, "argmax", axis, keepdims=keepdims)


__all__ = ["LeafTiles", "Reducible", "TileReadable", "operand_buffers", "read_leaf_box"]
