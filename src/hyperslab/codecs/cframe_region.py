"""Decoding part of a b2nd chunk frame: only the blocks a region touches.

A b2nd chunk is cut into blocks of its block shape, stored one after another in C order
of the block grid, each block one Blosc2 compression block holding its items in C order
(README_B2ND_FORMAT, README_CHUNK_FORMAT).  :func:`decode_region` decompresses just the
blocks that intersect a step-1 region of the chunk, a group at a time (the chunk's head
rewritten for just those blocks, or a chunk of their own, :meth:`FrameBlocks.decode_many`),
with a Blosc2 context that releases the GIL, so regions of several chunks decode in
parallel threads.

Plain (super-chunk) frames of 1-D chunks are served too: their blocks are runs of
items.  It answers None where that does not apply (other plain frames, special chunks,
chunks Blosc2 stored uncompressed (too small or too random to compress), filters that do
not work block by block, compression blocks that are not the b2nd blocks) or does not pay
(the region touches more than a given share of the blocks): the caller then decodes the
whole chunk.  Malformed frames raise :class:`~hyperslab.codecs.cframe.FrameError`.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, Protocol

import numpy as np

from hyperslab._typing import AnyArray, DTypeLike
from hyperslab.codecs.blockshape import blocks_are_c_order, ext_shape
from hyperslab.codecs.cframe import (
    FrameError,
    _byte_view,
    _check_shape,
    _decompress,
    parse_frame,
)
from hyperslab.codecs.cframe_blocks import blocks_per_call, chunk_blocks, scratch_block
from hyperslab.codecs.cframe_check import HEADER_MINLEN, TAIL_LEN, chunk_offset
from hyperslab.codecs.cframe_item import (
    _FRAME_SIZES,
    CHUNK_EXTLEN,
    CHUNK_HEAD,
    StreamOffsets,
    block_chunk,
    blocks_head,
    cut_blocks,
)

DEFAULT_MAX_SHARE: Final = 0.5
"""Above this share of the chunk's blocks, decoding the whole chunk at once is cheaper."""

SLAB_GROUP_BYTES: Final = 8 << 20
"""Slabs decoded for a region touching most of them go a group of about this many bytes
at a time (whole rows along axis 0), each group in one Blosc2 call into the thread's kept
buffer (:func:`.cframe_blocks.scratch_block`, up to the same size).  Measured here,
``a[:, :, :, 50]`` of a (50, 100, 100, 100) int64 array right after opening, 2 threads:
(10, 25, 50, 50) chunks of (1, 13, 50, 50) slabs 24.7 ms in groups of 2 MiB, 19.0 ms of
8 MiB (the 5 MB chunk whole); (25, 50, 50, 50) chunks (25 MB) 18.8 and 17.8 ms.  Bigger
groups mean fewer calls, each switching the GIL between the pool's threads."""

MERGE_GAP_BYTES: Final = 16 << 10
"""Streams of blocks read in part (``load``) this close in the frame are read as one."""

BIG_BLOCK_BYTES: Final = 1 << 17
"""Blocks of at least this many bytes are worth decoding one by one even when a region
touches most of them (``decode_region(..., big_blocks=BIG_BLOCK_BYTES)``).

A block-ordered b2nd chunk decoded whole must then be copied into C order before its
items are copied out: a second pass over the whole chunk.  Decoding each block on its own
costs a call (a Blosc2 context, ~10 us) per block instead, less than that pass from blocks
of ~100 KB on.  Measured here: ``a[25]`` of a ``(50, 100, 100, 100)`` int64 array, chunks
``(10, 25, 50, 50)`` and 2 MB blocks of ``(10, 25, 32, 32)`` (PyTables' file, 16 chunks
of 4 blocks) read in 19 ms instead of 34 ms (one thread)."""


def _axis_blocks(bound: slice, block: int, stride: int) -> list[tuple[int, slice, slice]]:
    """Per block along one axis that ``bound`` (a slice with a positive step, within the
    chunk) selects items of: (its share of the block number, the items of the block
    selected, where they go in the region)."""
    step = bound.step or 1
    count = len(range(bound.start, bound.stop, step))
    parts: list[tuple[int, slice, slice]] = []
    position, last, done = bound.start, bound.start + (count - 1) * step, 0
    while count and position <= last:
        i = position // block
        n = (min((i + 1) * block, last + 1) - 1 - position) // step + 1
        first = position - i * block
        parts.append((i * stride, slice(first, first + (n - 1) * step + 1, step),
                      slice(done, done + n)))
        done += n
        position += n * step
    return parts


@dataclass(frozen=True, slots=True)
class FrameBlocks:
    """A chunk frame's blocks, ready to be decoded one by one (see :func:`frame_blocks`;
    it keeps the frame's bytes).

    :meth:`decode_many` may rewrite the head of a writable chunk while Blosc2 decodes it
    (its own calls take turns): nothing else may write the chunk's first bytes while one
    runs (reads load them before the blocks are parsed).
    """

    chunk: Any  # the chunk's bytes (a view of the frame)
    blockshape: tuple[int, ...]
    chunkshape: tuple[int, ...]
    blocksize: int
    nbytes: int
    begins: StreamOffsets
    ends: StreamOffsets
    start: int = 0  # where the chunk starts in the frame
    _head_lock: threading.Lock = field(default_factory=threading.Lock, repr=False,
                                       compare=False)
    """Held while :meth:`decode_many` has the chunk's head rewritten."""

    def stream_range(self, number: int) -> tuple[int, int]:
        """Where the compressed streams of block ``number`` are in the frame."""
        return self.start + int(self.begins[number]), self.start + int(self.ends[number])

    def decode(self, number: int, flat: AnyArray) -> bool:
        """Decode block ``number`` into ``flat`` (bytes); False if it cannot be cut out."""
        part = block_chunk(self.chunk, number, int(self.begins[number]),
                           int(self.ends[number]), self.blocksize, self.nbytes)
        if part is None:
            return False
        _decompress(part, flat, 1)
        return True

    def decode_many(self, numbers: Sequence[int], flat: AnyArray) -> None:
        """Decode full blocks ``numbers`` one after another into ``flat`` (``len(numbers)
        * blocksize`` bytes), in one Blosc2 call.

        Several blocks of a writable chunk are decoded where their streams are: the
        chunk's header and table of block starts are rewritten for just those blocks
        (:func:`.cframe_item.blocks_head`) and put back once Blosc2 has decoded them.
        Otherwise (one block, read-only bytes, or another thread decoding the chunk this
        way meanwhile) the streams are copied into a chunk of their own
        (:func:`.cframe_item.cut_blocks`).  Measured here on the slicing benchmark's
        ``(25, 50, 50, 50)`` chunks, read after read, those copies took 0.4 ms of
        ``a[:, 50]`` (6.3 MB of streams in 24 groups, 4 ms with 2 threads) and 2.0 ms of
        ``a[:, :, 50]`` (31 MB, 18 ms).

        Raises
        ------
        FrameError
            If a block's streams are not in the chunk, or do not decompress.
        """
        chunk = self.chunk
        if (len(numbers) > 1 and isinstance(chunk, memoryview) and not chunk.readonly
                and self._head_lock.acquire(blocking=False)):
            try:
                head = blocks_head(chunk, numbers, self.begins, self.blocksize)
                if head is not None:
                    _decompress_in_place(chunk, head, flat)
                    return
            finally:
                self._head_lock.release()
        cut = cut_blocks(chunk, numbers, self.begins, self.ends, self.blocksize, self.nbytes)
        if cut is None:
            raise FrameError("a block's compressed streams lie outside its chunk")
        _decompress(cut, flat, 1)


def _decompress_in_place(chunk: memoryview, head: bytes, flat: AnyArray) -> None:
    """Decompress ``chunk`` with ``head`` written over its first bytes, then put them back
    (also when Blosc2 fails)."""
    size = len(head)
    kept = bytes(chunk[:size])
    chunk[:size] = head
    try:
        _decompress(chunk, flat, 1)
    finally:
        chunk[:size] = kept


class DecodeJob(NamedTuple):
    """Decoding that ``decode_region(..., jobs=)`` left for later: :attr:`run` decodes
    :attr:`nbytes` bytes of blocks and copies the selected items out of them."""

    run: Callable[[], None]
    nbytes: int


def slabs_shape(blockshape: Sequence[int], chunkshape: Sequence[int],
                blocksize: int, nbytes: int) -> tuple[int, ...] | None:
    """The shape of the items a chunk of ``blockshape`` blocks holds in C order, where
    its blocks are slabs: 1 item long along the axes before some axis ``k``, as long as
    the chunk along those after it.  That is ``chunkshape`` with axis ``k`` rounded up
    to whole blocks (the last block's padding), so the chunk's decoded bytes
    (``nbytes``, in blocks of ``blocksize`` bytes) are an array of this shape.  None for
    other blocks.

    Examples
    --------
    >>> slabs_shape((1, 13, 50, 50), (10, 25, 50, 50), 13 * 2500 * 8, 10 * 26 * 2500 * 8)
    (10, 26, 50, 50)
    >>> slabs_shape((2, 128, 256), (2, 500, 500), 2 * 128 * 256 * 8, 2 * 512 * 512 * 8) is None
    True
    """
    items = math.prod(blockshape)
    if not items or blocksize % items:
        return None
    # Slabs pad only their one axis longer than 1 item and shorter than the chunk, so the
    # extended shape is the chunk's elsewhere, as blocks_are_c_order asks of it.
    shape = ext_shape(chunkshape, blockshape)
    if (not blocks_are_c_order(shape, chunkshape, blockshape)
            or math.prod(shape) * (blocksize // items) != nbytes):
        return None
    return shape


def _slabs_shape(blocks: FrameBlocks) -> tuple[int, ...] | None:
    return slabs_shape(blocks.blockshape, blocks.chunkshape, blocks.blocksize, blocks.nbytes)


def frame_blocks(buf: Any, dtype: DTypeLike, *,
                 chunkshape: Sequence[int] | None = None) -> FrameBlocks | None:
    """The blocks of a frame whose blocks can be decoded alone (see the module
    docstring), or None.

    ``chunkshape``, when given, is the dataset's chunk shape: a b2nd frame must hold an
    array of this shape.

    Raises
    ------
    FrameError
        If the frame is malformed, or not of ``chunkshape``.
    """
    dt = np.dtype(dtype)
    view = _byte_view(buf)
    layout = parse_frame(view)
    _check_shape(layout, chunkshape)
    blockshape = layout.blockshape
    chunkshape = layout.shape
    if blockshape is None and len(chunkshape) == 1 and dt.itemsize and not (
        layout.blocksize % dt.itemsize or layout.nbytes % dt.itemsize
    ):
        # A plain (super-chunk) frame of a 1-D chunk: its blocks are runs of items.
        blockshape = (layout.blocksize // dt.itemsize,)
        chunkshape = (layout.nbytes // dt.itemsize,)
    elif layout.typesize != dt.itemsize:
        return None
    if (
        blockshape is None or layout.special
        or layout.blocksize != math.prod(blockshape) * dt.itemsize
    ):
        return None
    chunk = view[layout.chunk_start : layout.chunk_stop]
    streams = chunk_blocks(chunk, layout.blocksize)
    if streams is None:
        return None
    return FrameBlocks(chunk, tuple(blockshape), tuple(chunkshape), layout.blocksize,
                       layout.chunk_nbytes, *streams, layout.chunk_start)


FRAME_HEAD_BYTES: Final = 4096
"""What :func:`load_frame_structure` reads first: a frame's header, and usually its
chunk's header and block starts, lie within it."""


def load_frame_structure(view: Any, load: Any) -> bool:
    """Load the parts of a one-chunk frame that :func:`frame_blocks` reads: its header,
    its offsets chunk and trailer, and its chunk's header and block starts.

    Parameters
    ----------
    view : bytes-like
        A buffer of the frame's length, filled only where ``load`` has filled it.
    load : callable
        ``load(start, stop)`` fills bytes ``start .. stop - 1`` of ``view``.

    Returns
    -------
    bool
        False when those parts are not where a frame of this layout keeps them (a frame
        of another kind, or a malformed one): the caller loads the whole frame, and
        parsing it says what is wrong.
    """
    buf = _byte_view(view)
    size = buf.nbytes
    if size < HEADER_MINLEN + TAIL_LEN:
        return False
    head = min(size, FRAME_HEAD_BYTES)
    load(0, head)
    header_len, frame_len, cbytes = _FRAME_SIZES.unpack_from(buf, 0)
    data_end = header_len + cbytes
    if (frame_len != size or not HEADER_MINLEN <= header_len or cbytes < 0
            or data_end + TAIL_LEN != size):
        return False
    if header_len > head:
        load(head, header_len)
    load(data_end, size)
    try:
        offset = chunk_offset(buf, data_end, size)
    except FrameError:
        return False
    if offset < 0:
        return True  # a special chunk (zeros, NaNs...): no data to read
    start = header_len + offset
    if not header_len <= start <= data_end - CHUNK_EXTLEN:
        return False
    load(start, start + CHUNK_EXTLEN)
    nbytes, blocksize = CHUNK_HEAD.unpack_from(buf, start)[4:6]
    if nbytes < 0 or blocksize <= 0:
        return False
    table_end = start + CHUNK_EXTLEN + 4 * -(-nbytes // blocksize)
    if table_end > data_end:
        return False
    load(start, table_end)
    return True


def decode_region(
    buf: Any, bounds: tuple[slice, ...], dtype: DTypeLike, *,
    max_share: float = DEFAULT_MAX_SHARE, load: Any = None, out: AnyArray | None = None,
    chunkshape: Sequence[int] | None = None, big_blocks: int | None = None,
    jobs: list[DecodeJob] | None = None,
) -> AnyArray | None:
    """The items of a b2nd chunk frame that ``bounds`` selects, decoding only the blocks
    holding some of them.

    Parameters
    ----------
    buf : bytes-like or FrameBlocks
        A whole one-chunk b2nd frame, or its :func:`frame_blocks` (parsed by the caller).
    bounds : tuple of slice
        Ranges within the chunk's shape, one per dimension, each selecting some items
        (``start`` and ``stop`` given; a positive ``step``: ``a[::2, 1:9:3]`` decodes the
        blocks holding selected items only).
    dtype : dtype-like
        The items' dtype (its size must be the frame's type size); the bytes are taken as
        they are (no byte swapping).
    max_share : float
        Answer None when the region touches more than this share of the blocks (unless
        they are ``big_blocks``).
    load : callable, optional
        ``load(start, stop)`` fills bytes ``start .. stop - 1`` of ``buf``: a frame read
        only in part (see :func:`load_frame_structure`) gets the streams of the blocks
        the region touches this way before they are decoded.
    out : numpy.ndarray, optional
        A writable array of the region's shape and of ``dtype`` to decode into (blocks a
        1-D region covers whole are decompressed straight into it).
    chunkshape : sequence of int, optional
        The dataset's chunk shape, which a b2nd frame must hold (see :func:`frame_blocks`).
    big_blocks : int, optional
        Blocks of at least this many bytes are decoded one by one whatever share of them
        the region touches (see :data:`BIG_BLOCK_BYTES`).
    jobs : list, optional
        With ``out``: the blocks' streams are loaded here, but decoding them and copying
        their items into ``out`` is left to :class:`DecodeJob` items appended to this list
        (each decodes a group of blocks in one Blosc2 call, which releases the GIL), so
        that a caller with many chunks may run them in several threads.  They raise
        :class:`~hyperslab.codecs.cframe.FrameError` if a block does not decompress (or
        cannot be cut out of its chunk: the caller then decodes the chunk whole).

    Returns
    -------
    numpy.ndarray or None
        ``out`` or a new array of the region's shape, or None (see the module docstring;
        ``out`` may then hold some of the region).

    Raises
    ------
    ValueError
        If ``out`` is not of the region's shape and of ``dtype``.
    FrameError
        If the frame is malformed, not of ``chunkshape``, or a block does not decompress.
    """
    dt = np.dtype(dtype)
    blocks = buf if isinstance(buf, FrameBlocks) else frame_blocks(buf, dt,
                                                                   chunkshape=chunkshape)
    if blocks is None or len(bounds) != len(blocks.chunkshape):
        return None
    layout = _region_layout(blocks.blockshape, blocks.chunkshape,
                            tuple((b.start, b.stop, b.step or 1) for b in bounds), max_share)
    if layout is None:
        return None
    axes = layout.axes
    # (1-D regions decode whole blocks straight into ``out`` instead)
    slabs = (_slabs_shape(blocks) if layout.most and len(blocks.blockshape) > 1
             else None)
    big = big_blocks is not None and blocks.blocksize >= big_blocks
    if layout.most and not big and slabs is None:
        return None
    shape = layout.shape
    if out is None:
        if jobs is not None:
            raise ValueError("decode_region leaves jobs only with an out array to fill")
        out = np.empty(shape, dtype=dt)
    elif out.shape != shape or out.dtype != dt or not out.flags.writeable:
        raise ValueError(f"out must be a writable array of shape {shape} and dtype {dt}, "
                         f"not {out.shape} {out.dtype}")
    items = out.view(_copied_as(dt))
    if slabs is not None:
        _decode_slabs(blocks, slabs, bounds, items, load, jobs)
        return out
    straight = len(shape) == 1 and out.flags.c_contiguous
    if not straight and _decode_together(blocks, layout, items, load, jobs):
        return out
    if jobs is not None:
        jobs.append(DecodeJob(functools.partial(_one_by_one_job, blocks, axes, out, load,
                                                straight),
                              len(layout.combos) * blocks.blocksize))
        return out
    return out if _decode_one_by_one(blocks, axes, out, load, straight) else None


class _RegionLayout(NamedTuple):
    """Which blocks of a chunk a region touches, and how (see :func:`_region_layout`)."""

    axes: list[list[tuple[int, slice, slice]]]
    """Per axis, :func:`_axis_blocks`."""
    most: bool
    """Whether that is more than the ``max_share`` of the chunk's blocks."""
    shape: tuple[int, ...]
    """The region's shape."""
    combos: list[tuple[tuple[int, slice, slice], ...]]
    """The blocks touched, in C order of the block grid: per axis, its part of the block
    (its number's share, the items of it taken and where they go)."""
    numbers: list[int]
    """Their numbers."""
    along: int
    """The last axis along which the region touches several blocks (0 if none)."""


LAYOUT_CACHE_MAX_BLOCKS: Final = 1024
"""Regions of chunks of at most this many blocks have their layout kept (at most
:data:`LAYOUT_CACHE_SIZE` of them, a few MB at worst); chunks of more blocks, whose
decoding outweighs the working out, have it worked out at each read."""
LAYOUT_CACHE_SIZE: Final = 64


def _region_layout(blockshape: tuple[int, ...], chunkshape: tuple[int, ...],
                   bounds: tuple[tuple[int, int, int], ...], max_share: float
                   ) -> _RegionLayout | None:
    """The blocks of a chunk of ``blockshape`` blocks that ``bounds`` (per axis ``(start,
    stop, step)``) touch: the same for every chunk a selection takes the same region of
    (``a[25]``: all of them but the edges), so worked out once where the chunk has at
    most :data:`LAYOUT_CACHE_MAX_BLOCKS` blocks (~10 us of Python a chunk).  None where a
    bound ends past ``chunkshape`` or has a step below 1."""
    if _grid_blocks(blockshape, chunkshape) > LAYOUT_CACHE_MAX_BLOCKS:
        return _layout_of(blockshape, chunkshape, bounds, max_share)
    return _kept_layout(blockshape, chunkshape, bounds, max_share)


@functools.lru_cache(maxsize=64)
def _grid_blocks(blockshape: tuple[int, ...], chunkshape: tuple[int, ...]) -> int:
    """How many blocks of ``blockshape`` a chunk of ``chunkshape`` has."""
    return math.prod(-(-c // n) for c, n in zip(chunkshape, blockshape, strict=True))


def _layout_of(blockshape: tuple[int, ...], chunkshape: tuple[int, ...],
               bounds: tuple[tuple[int, int, int], ...], max_share: float
               ) -> _RegionLayout | None:
    """:func:`_region_layout`, worked out."""
    if any(stop > c or step < 1
           for (_, stop, step), c in zip(bounds, chunkshape, strict=True)):
        return None
    grid = tuple(-(-c // n) for c, n in zip(chunkshape, blockshape, strict=True))
    strides = [math.prod(grid[axis + 1:]) for axis in range(len(grid))]
    axes = [_axis_blocks(slice(*b), n, stride)
            for b, n, stride in zip(bounds, blockshape, strides, strict=True)]
    combos = list(itertools.product(*axes))
    return _RegionLayout(
        axes, len(combos) > max_share * math.prod(grid),
        tuple(len(range(*b)) for b in bounds), combos,
        [sum(c[0] for c in combo) for combo in combos],
        max((axis for axis, parts in enumerate(axes) if len(parts) > 1), default=0))


_kept_layout = functools.lru_cache(maxsize=LAYOUT_CACHE_SIZE)(_layout_of)


def _one_by_one_job(blocks: FrameBlocks, axes: list[list[tuple[int, slice, slice]]],
                    out: AnyArray, load: Any, straight: bool) -> None:
    """:func:`_decode_one_by_one` as a job of ``decode_region(..., jobs=)``."""
    if not _decode_one_by_one(blocks, axes, out, load, straight):
        raise FrameError("a block cannot be cut out of its chunk")


def _decode_slabs(blocks: FrameBlocks, slabs: tuple[int, ...], bounds: tuple[slice, ...],
                  items: AnyArray, load: Any, jobs: list[DecodeJob] | None) -> None:
    """Copy the items ``bounds`` selects of a chunk of slabs (see :func:`slabs_shape`) into
    ``items`` (or leave that to ``jobs``, the streams loaded), decoding the rows (along axis
    0) that hold some, a group of :data:`SLAB_GROUP_BYTES` at a time, each group in one
    Blosc2 call into a buffer kept per thread and copied from by one NumPy copy:
    consecutive blocks are consecutive items."""
    blockshape = blocks.blockshape
    if len(blockshape) > 1 and blockshape[0] == 1:  # a row of axis 0 is a run of blocks
        unit_blocks = math.prod(-(-n // b) for n, b in zip(slabs[1:], blockshape[1:],
                                                             strict=True))
        unit_rows = 1
    else:  # a block is rows of axis 0
        unit_blocks, unit_rows = 1, blockshape[0]
    per_group = max(1, SLAB_GROUP_BYTES // (unit_blocks * blocks.blocksize))
    rows = range(bounds[0].start, bounds[0].stop, bounds[0].step or 1)
    for first, end in _runs(sorted({row // unit_rows for row in rows}), per_group):
        lo, hi = first * unit_rows, end * unit_rows
        # the selected rows in lo .. hi - 1: rows[start:stop]
        start = max(0, -(-(lo - rows.start) // rows.step))
        stop = min(len(rows), -(-(hi - rows.start) // rows.step))
        numbers = list(range(first * unit_blocks, end * unit_blocks))
        local = slice(rows[start] - lo, rows[stop - 1] - lo + 1, rows.step)
        _load_and_run(blocks, numbers, load, jobs, functools.partial(
            _copy_rows, blocks, numbers, (hi - lo, *slabs[1:]), (local, *bounds[1:]),
            items[start:stop]))


def _copy_rows(blocks: FrameBlocks, numbers: list[int], shape: tuple[int, ...],
               selection: tuple[slice, ...], into: AnyArray) -> None:
    """Decode the consecutive slabs ``numbers`` (rows of ``shape``) in one call and copy
    their items ``selection`` into ``into``."""
    decoded = scratch_block(len(numbers) * blocks.blocksize)
    blocks.decode_many(numbers, decoded)
    into[...] = decoded.view(into.dtype).reshape(shape)[selection]


def _runs(units: list[int], most: int) -> list[tuple[int, int]]:
    """Sorted unique ``units`` as ``(first, end)`` runs of consecutive ones, at most
    ``most`` long."""
    runs: list[tuple[int, int]] = []
    for unit in units:
        if runs and runs[-1][1] == unit and unit - runs[-1][0] < most:
            runs[-1] = (runs[-1][0], unit + 1)
        else:
            runs.append((unit, unit + 1))
    return runs


def _decode_one_by_one(blocks: FrameBlocks, axes: list[list[tuple[int, slice, slice]]],
                       out: AnyArray, load: Any, straight: bool) -> bool:
    """Decode the blocks of ``axes`` (see :func:`_axis_blocks`) one at a time and copy
    their items into ``out``; blocks of a 1-D region (``straight``) covered whole
    decode where they go.  False where a block cannot be cut out of its chunk."""
    blockshape = blocks.blockshape
    items = out.view(_copied_as(out.dtype))
    block: AnyArray | None = None
    for combo in itertools.product(*axes):
        number = sum(c[0] for c in combo)
        if load is not None:
            load(*blocks.stream_range(number))
        inside = tuple(c[1] for c in combo)
        if straight and inside[0] == slice(0, blockshape[0], 1):
            # A whole block of a 1-D region: decompressed where it goes.
            if not blocks.decode(number, out[combo[0][2]].view(np.uint8)):
                return False
            continue
        if block is None:
            block = scratch_block(blocks.blocksize).view(items.dtype).reshape(blockshape)
        if not blocks.decode(number, block.reshape(-1).view(np.uint8)):
            return False
        items[tuple(c[2] for c in combo)] = block[inside]
    return True


def _decode_together(blocks: FrameBlocks, layout: _RegionLayout, items: AnyArray,
                     load: Any, jobs: list[DecodeJob] | None) -> bool:
    """Decode the blocks of ``layout.combos`` (numbered ``layout.numbers``) a group at a
    time, each group in one Blosc2 call (:meth:`FrameBlocks.decode_many`), and copy their
    items into ``items`` (or leave that to ``jobs``, their streams loaded); False, having
    done nothing, where a block is short (a plain frame's last) or blocks are too big to
    group (over half of :data:`.cframe_blocks.TOGETHER_MAX_BYTES`, or where the
    allocator gives memory back at once: decoded one by one, see
    :func:`.cframe_blocks.blocks_per_call`)."""
    blocksize = blocks.blocksize
    per_group = blocks_per_call(blocksize)
    combos, numbers = layout.combos, layout.numbers
    if per_group < 2 or len(combos) < 2:
        return False
    if (max(numbers) + 1) * blocksize > blocks.nbytes:
        return False
    for first in range(0, len(combos), per_group):
        group, group_numbers = combos[first:first + per_group], numbers[first:first + per_group]
        _load_and_run(blocks, group_numbers, load, jobs, functools.partial(
            _copy_blocks, blocks, group_numbers, group, layout.along, items))
    return True


def _load_and_run(blocks: FrameBlocks, numbers: list[int], load: Any,
                  jobs: list[DecodeJob] | None, job: Callable[[], None]) -> None:
    """Load the streams of blocks ``numbers`` (those close together as one read), then run
    ``job`` (which decodes them), or leave it to ``jobs``."""
    if load is not None:
        for start, stop in _merged([blocks.stream_range(n) for n in numbers]):
            load(start, stop)
    if jobs is None:
        job()
    else:
        jobs.append(DecodeJob(job, len(numbers) * blocks.blocksize))


def _copy_blocks(blocks: FrameBlocks, numbers: list[int], combos: list[Any], along: int,
                 items: AnyArray) -> None:
    """Decode blocks ``numbers`` in one call and copy the items of ``combos`` (one each),
    a run of blocks at a time (:func:`_copy_run`)."""
    decoded = scratch_block(len(numbers) * blocks.blocksize)
    blocks.decode_many(numbers, decoded)
    decoded_blocks = decoded.view(items.dtype).reshape(len(numbers), *blocks.blockshape)
    first = 0
    while first < len(combos):
        inside, end = combos[first][along][1], combos[first][along][2].stop
        last = first + 1
        while (last < len(combos) and combos[last][along][2].start == end
               and combos[last][along][1] == inside):
            end = combos[last][along][2].stop
            last += 1
        _copy_run(decoded_blocks[first:last], combos[first], along, end, items)
        first = last


def _copy_run(decoded: AnyArray, combo: Any, along: int, end: int, items: AnyArray) -> None:
    """Copy the items of a run of decoded blocks (``decoded``, one after another along
    axis ``along`` of the region, the first one's place ``combo``, the last one's ending
    at ``end`` along that axis; the same items of each) in one NumPy copy: the region's
    run of places, its axis ``along`` split in one per block, takes the blocks' items
    (a copy per block costs ~3 us of Python holding the GIL, more than 20 KB of items
    take to copy)."""
    selected = (slice(None), *(c[1] for c in combo))
    if len(decoded) == 1:
        items[tuple(c[2] for c in combo)] = decoded[0][selected[1:]]
        return
    places = [c[2] for c in combo]
    places[along] = slice(places[along].start, end)
    run = items[tuple(places)]
    shape = run.shape
    split = run.reshape((*shape[:along], len(decoded), shape[along] // len(decoded),
                         *shape[along + 1:]))
    if not np.may_share_memory(split, items):  # (splitting an axis is a view: never met)
        raise FrameError("a run of blocks has no view in the region")
    order = (along, *range(along), *range(along + 1, split.ndim))
    split.transpose(order)[...] = decoded[selected]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (of a frame's bytes) in order, those less than :data:`MERGE_GAP_BYTES`
    apart read as one."""
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(spans):
        if merged and start - merged[-1][1] < MERGE_GAP_BYTES:
            merged[-1] = (merged[-1][0], max(stop, merged[-1][1]))
        else:
            merged.append((start, stop))
    return merged


class BlockStore(Protocol):
    """Where :func:`decode_items` may find and keep decoded blocks (by block number)."""

    def get(self, number: int) -> AnyArray | None:
        """The decoded block, if kept."""

    def put(self, number: int, block: AnyArray) -> None:
        """Keep a decoded block (a copy the caller will not change)."""


def decode_items(
    buf: Any, positions: AnyArray, dtype: DTypeLike, *,
    max_share: float = DEFAULT_MAX_SHARE, store: BlockStore | None = None,
    load: Any = None,
) -> AnyArray | None:
    """The items at ``positions`` of a 1-D chunk frame, decoding only the blocks that
    hold them (fetching a few rows of a table: one small block each, not the chunk).

    Parameters
    ----------
    buf : bytes-like or FrameBlocks
        A whole one-chunk frame (b2nd or plain) of a 1-D chunk, or its
        :func:`frame_blocks` (parsed once for several reads).
    positions : numpy.ndarray
        Sorted item numbers within the chunk (int64, non-empty).
    dtype : dtype-like
        The items' dtype, taken as stored (no byte swapping).
    max_share : float
        Answer None when the items lie in more than this share of the blocks.
    store : BlockStore, optional
        Decoded blocks to use, and to add the blocks decoded here to.
    load : callable, optional
        As for :func:`decode_region`: fills the streams of each block decoded here first.

    Returns
    -------
    numpy.ndarray or None
        The items, in the order of ``positions``, or None (decode the whole chunk).

    Raises
    ------
    FrameError
        If the frame is malformed or a block does not decompress.
    """
    dt = np.dtype(dtype)
    blocks = buf if isinstance(buf, FrameBlocks) else frame_blocks(buf, dt)
    if blocks is None or len(blocks.chunkshape) != 1 or int(positions[-1]) >= \
            blocks.chunkshape[0] or int(positions[0]) < 0:
        return None
    per_block = blocks.blockshape[0]
    if len(positions) == 1:  # one item (an indexed query's single row)
        wanted, firsts = positions // per_block, np.zeros(1, dtype=np.intp)
    else:
        wanted, firsts = np.unique(positions // per_block, return_index=True)
    if len(wanted) > max_share * -(-blocks.chunkshape[0] // per_block):
        return None
    out = np.empty(len(positions), dtype=dt)
    items = out.view(_copied_as(dt))
    block: AnyArray | None = None  # made on the first miss (a block is ~100 KB: kept
    # blocks answer repeated queries without allocating one)
    lasts = [*firsts.tolist()[1:], len(positions)]
    for number, first, last in zip(wanted.tolist(), firsts.tolist(), lasts, strict=True):
        values = None if store is None else store.get(number)
        if values is None:
            if store is not None:  # a kept block is the store's own
                block = np.empty(per_block, dtype=dt)
            elif block is None:
                block = scratch_block(blocks.blocksize).view(dt)
            if load is not None:
                load(*blocks.stream_range(number))
            if not blocks.decode(number, block.view(np.uint8)):
                return None
            values = block
            if store is not None:
                store.put(number, block)
        items[first:last] = values.view(items.dtype)[positions[first:last]
                                                     - number * per_block]
    return out


def _copied_as(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype items of ``dtype`` are copied as: records as plain bytes (NumPy copies a
    structured item field by field, about ten times slower than its bytes)."""
    return np.dtype((np.void, dtype.itemsize)) if dtype.fields is not None else dtype


__all__ = ["BIG_BLOCK_BYTES", "DEFAULT_MAX_SHARE", "FRAME_HEAD_BYTES", "LAYOUT_CACHE_MAX_BLOCKS",
           "LAYOUT_CACHE_SIZE", "BlockStore",
           "DecodeJob", "FrameBlocks", "decode_items", "decode_region", "frame_blocks",
           "load_frame_structure", "slabs_shape"]
