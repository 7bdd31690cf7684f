"""Fast encoding and decoding of the Blosc2 HDF5 filter's chunk frames.

Every chunk the Blosc2 filter (32026) stores is a Blosc2 *contiguous frame* (docs/format.md §2):
a msgpack header (with a ``b2nd`` metalayer for chunks of rank 2 and more), one compressed
Blosc2 chunk (the *inner chunk*), a chunk holding its offset, and a msgpack trailer.  This
module reads and writes those frames itself and compresses/decompresses the inner chunk with
python-blosc2's low-level ``compress2``/``decompress2`` only: no ``NDArray``/``SChunk``
objects, which cost 40-550 us a call even for tiny chunks.

* :func:`parse_frame` checks a frame against its length and returns a :class:`FrameLayout`;
* :func:`decode_into` decompresses a whole chunk into a C-ordered array (chunks whose
  blocks are not its C order, as other writers' often are, block by block through
  :mod:`.cframe_blocks`);
* :func:`decode_item` returns one element, decompressing only the Blosc2 block that holds
  it when the chunk's filters allow it;
* :class:`FrameEncoder` builds the frames for one dataset from a header template computed
  once, patching the few size fields of each chunk.

The frames written are those of C-Blosc2's ``b2nd_to_cframe``/``schunk_to_buffer`` (so
the filter, PyTables and python-blosc2 read them), and what those write is read back,
including special (all-zero, NaN) chunks stored as a bare offset.  Every field is checked
(:mod:`.cframe_check`) before Blosc2 sees a byte: a frame that is malformed, or that the
parser cannot vouch for decoding exactly as C-Blosc2 does, raises :class:`FrameError`
(callers then let python-blosc2 decode it, or report it).

Threads: python-blosc2 holds the GIL while it (de)compresses unless
``blosc2.set_releasegil(True)`` was called.  This module calls it once, the first time it
compresses or decompresses, so its functions scale when run in a thread pool (give each
call ``nthreads=1`` then).  blosc2 itself is imported on first use.
"""

from __future__ import annotations

import functools
import math
import operator
import struct
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from hyperslab._typing import AnyArray, DTypeLike, Shape
from hyperslab.codecs.allocator import allocator_returns_memory
from hyperslab.codecs.blockshape import (
    B2ND_MAX_DIM,
    b2nd_meta_bytes,
    block_order_position,
    blocks_are_c_order,
    ext_shape,
    from_block_order,
    parse_b2nd_meta,
)
from hyperslab.codecs.blockshape import to_block_order as _to_block_order
from hyperslab.codecs.cframe_blocks import PARTIAL_FILTERS, decode_blocks_into
from hyperslab.codecs.cframe_check import (
    HEADER,
    HEADER_MINLEN,
    MAGIC,
    MAX_TYPESIZE,
    PLAIN_LAYERS,
    SPECIAL_NAN,
    SPECIAL_UNINIT,
    SPECIAL_VALUE,
    SPECIAL_ZERO,
    TAIL_LEN,
    TRAILER,
    UDCODEC_FORMAT,
    FrameError,
    check_chunk,
    check_fixed_header,
    check_layers,
    check_special_frame,
    chunk_offset,
    layers_bytes,
    offsets_chunk,
    special_kind,
)
from hyperslab.codecs.cframe_item import CHUNK_EXTLEN as _CHUNK_EXTLEN
from hyperslab.codecs.cframe_item import CHUNK_HEAD as _CHUNK
from hyperslab.codecs.cframe_item import I32 as _I32
from hyperslab.codecs.cframe_item import MEMCPYED as _MEMCPYED
from hyperslab.codecs.cframe_item import (
    LayoutMemo,
    frame_key,
    is_checked_block,
    one_block,
)
from hyperslab.codecs.validate import as_int

MAX_CHUNK_BYTES: Final = 2**31 - 1 - 32
"""Largest inner chunk Blosc2 compresses (``BLOSC2_MAX_BUFFERSIZE``)."""
B2ND_DTYPE_FORMAT: Final = "|V{}"
"""The dtype the filter writes in the b2nd metalayer (opaque items of the type size)."""

_HEADER_MINLEN: Final = HEADER_MINLEN
_FRAME_LEN_AT: Final = 16
_FRAME_CBYTES_AT: Final = 39
_FRAME_BLOCKSIZE_AT: Final = 53
_GENERAL_FLAGS: Final = 0x12  # frame format version 2, 64-bit offsets, fixed chunk size
_FORWARD_COMPAT_SPLIT: Final = 3  # other_flags = splitmode - 1
RETURNED_MEMORY_MAX_NBYTES: Final = 4 << 20
"""The largest one-block chunk decoded in Blosc2's global context (which holds the GIL)
where freed memory goes back to the system at once."""
_COPY_MAX: Final = 4096  # larger chunks of a bytes frame are read through a memoryview
_BE_U16: Final = struct.Struct(">H")
_BE_I32: Final = struct.Struct(">i")
_BE_I64: Final = struct.Struct(">q")
_B2ND_NAMES: Final = (b"b2nd", b"caterva")
_FRAME_TYPESIZE_AT: Final = 48
_FRAME_ITEM_SIZES: Final = struct.Struct(">ixi")  # the frame's type size and block size


class FrameLayout(NamedTuple):
    """Where things are in a Blosc2 chunk frame, as :func:`parse_frame` found them.

    An immutable record (a named tuple: cheap to build for every chunk read).

    Attributes
    ----------
    typesize : int
        Item size in bytes: the b2nd array's, or the frame's type size for a plain frame
        (Blosc2 records 1 for items over 255 bytes).
    nbytes : int
        Bytes of data the frame holds (``prod(shape) * typesize`` for b2nd frames): what
        :func:`decode_into` writes.
    chunk_start, chunk_stop : int
        Byte range of the inner Blosc2 chunk in the frame (empty for :attr:`special`).
    shape : tuple of int
        The array's shape (b2nd), or ``(nbytes // typesize,)`` for a plain frame.
    blockshape : tuple of int or None
        The b2nd block shape; ``None`` for a plain (super-chunk) frame.
    chunkshape : tuple of int or None
        The b2nd chunk shape (equal to `shape` in the filter's frames).
    chunk_nbytes : int
        Uncompressed bytes of the inner chunk: `nbytes` plus any b2nd block padding.
    blocksize : int
        Compression block size in bytes.
    special : int
        0, or :data:`SPECIAL_ZERO`/:data:`SPECIAL_NAN`/:data:`SPECIAL_UNINIT` when the
        chunk is stored as a bare special offset (no compressed bytes).
    codec, clevel : int
        Codec code and level from the frame header.
    dtype : str or None
        The dtype string of the b2nd metalayer (often ``'|V<typesize>'``).
    c_order : bool
        Whether the inner chunk's bytes start with the data in C order (plain frames, and
        b2nd blocks that are C-contiguous slabs), so no reordering is needed.
    """

    typesize: int
    nbytes: int
    chunk_start: int
    chunk_stop: int
    shape: Shape
    blockshape: Shape | None
    chunkshape: Shape | None
    chunk_nbytes: int
    blocksize: int
    special: int
    codec: int
    clevel: int
    dtype: str | None
    c_order: bool


@functools.cache
def _blosc2() -> Any:
    """python-blosc2, imported on first use, with the GIL released while it works."""
    import blosc2  # imported on use: it costs ~0.4 s at start-up

    blosc2.set_releasegil(True)
    return blosc2


def _byte_view(buf: Any) -> memoryview:
    try:
        view = memoryview(buf)
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
    except (TypeError, ValueError) as exc:
        raise FrameError(f"a chunk frame must be a contiguous bytes-like object: {exc}") from exc
    return view


def parse_frame(buf: Any) -> FrameLayout:
    """Parse and check a one-chunk Blosc2 contiguous frame.

    Parameters
    ----------
    buf : bytes-like
        The whole frame (e.g. the bytes of one HDF5 chunk); its length must be the
        frame's length.

    Returns
    -------
    FrameLayout

    Raises
    ------
    FrameError
        If the frame is truncated or inconsistent (every size and offset is checked
        against ``len(buf)``), holds other than exactly one chunk, or is not one this
        module decodes itself (see :mod:`.cframe_check`).
    """
    view = _byte_view(buf)
    size = view.nbytes
    if size < _HEADER_MINLEN + TAIL_LEN:
        raise FrameError(f"not a Blosc2 frame: {size} bytes, fewer than a one-chunk frame's "
                         f"{_HEADER_MINLEN + TAIL_LEN}")
    fields = HEADER.unpack_from(view, 0)
    check_fixed_header(fields, size)
    header_len, nbytes, header_typesize, blocksize = fields[2], fields[8], fields[12], fields[14]
    codec_flags = fields[6][2]
    data_end = header_len + fields[10]
    offset = chunk_offset(view, data_end, size)
    typesize, shape, blockshape, chunkshape, data_nbytes, dtype, c_order = _layers_info(
        bytes(view[_HEADER_MINLEN:header_len]), header_typesize, nbytes
    )
    block_nbytes = None if blockshape is None else math.prod(blockshape) * typesize
    special = 0
    chunk_start = chunk_stop = header_len
    if offset < 0:
        special = special_kind(offset)
        check_special_frame(nbytes, header_typesize, blocksize, special, block_nbytes)
    else:
        blocksize = blocksize if block_nbytes is None else block_nbytes
        check_chunk(view, header_len, data_end, nbytes, header_typesize, blocksize)
        chunk_stop = data_end
    codec = fields[24][6] if codec_flags & 0x0F == UDCODEC_FORMAT else codec_flags & 0x0F
    return FrameLayout(
        typesize, data_nbytes, chunk_start, chunk_stop, shape, blockshape, chunkshape,
        nbytes, blocksize, special, codec, codec_flags >> 4, dtype, c_order,
    )


_LayersInfo = tuple[int, Shape, "Shape | None", "Shape | None", int, "str | None", bool]


@functools.lru_cache(maxsize=512)
def _layers_info(layers: bytes, typesize: int, nbytes: int) -> _LayersInfo:
    """What the metalayers section says: (itemsize, shape, blockshape, chunkshape,
    data_nbytes, dtype, c_order).  Cached: a dataset's frames share their metalayers."""
    meta = _b2nd_meta(layers)
    if meta is None:
        if layers != PLAIN_LAYERS:
            raise FrameError("the frame has metalayers, but no b2nd layer")
        return typesize, (nbytes // typesize,), None, None, nbytes, None, True
    shape, chunkshape, blockshape, dtype = meta
    check_layers(layers, shape, chunkshape, blockshape, dtype)
    # The item size: the frame's type size is 1 for items over 255 bytes.
    items = math.prod(ext_shape(chunkshape, blockshape))
    itemsize = nbytes // items
    if itemsize * items != nbytes or (
            typesize != itemsize and not (typesize == 1 and itemsize > MAX_TYPESIZE)):
        raise FrameError(
            f"the b2nd chunk {chunkshape} with blocks {blockshape} has {items} items, "
            f"which {nbytes} bytes of {typesize}-byte items do not fill"
        )
    c_order = blocks_are_c_order(shape, chunkshape, blockshape)
    return itemsize, shape, blockshape, chunkshape, math.prod(shape) * itemsize, dtype, c_order


def _check_chunk(view: bytes | memoryview, layout: FrameLayout, data_end: int) -> int:
    """Check the inner chunk of a frame laid out as `layout` (whose sizes may differ from
    this frame's: see :func:`decode_item`); return its special value kind."""
    header_typesize, blocksize = _FRAME_ITEM_SIZES.unpack_from(view, _FRAME_TYPESIZE_AT)
    if layout.blockshape is not None:
        blocksize = math.prod(layout.blockshape) * layout.typesize
    return check_chunk(view, layout.chunk_start, data_end, layout.chunk_nbytes,
                       header_typesize, blocksize)


def _b2nd_meta(layers: bytes) -> tuple[Shape, Shape, Shape, str | None] | None:
    """The b2nd metalayer's (shape, chunkshape, blockshape, dtype), or None without one.

    `layers` is the header from its metalayers section on (frame byte 87); offsets in
    the section count from the start of the frame.
    """
    end = len(layers)
    if end < 7 or layers[0] != 0x93 or layers[1] != 0xCD or layers[4] != 0xDE:
        raise FrameError("bad metalayers section in the frame header")
    count = _BE_U16.unpack_from(layers, 5)[0]
    pos = 7
    for _ in range(count):
        if pos >= end or layers[pos] & 0xE0 != 0xA0:
            raise FrameError("bad metalayer name in the frame header")
        name_end = pos + 1 + (layers[pos] & 0x1F)
        if name_end + 5 > end or layers[name_end] != 0xD2:
            raise FrameError("bad metalayer index in the frame header")
        name = layers[pos + 1 : name_end]
        offset = _BE_I32.unpack_from(layers, name_end + 1)[0] - _HEADER_MINLEN
        pos = name_end + 5
        if name in _B2ND_NAMES:
            if not 0 < offset <= end - 5 or layers[offset] != 0xC6:
                raise FrameError(f"bad offset of the {name.decode()} metalayer")
            length = _BE_I32.unpack_from(layers, offset + 1)[0]
            if not 0 < length <= end - offset - 5:
                raise FrameError(f"bad length {length} of the {name.decode()} metalayer")
            try:
                return parse_b2nd_meta(layers[offset + 5 : offset + 5 + length])
            except ValueError as exc:
                raise FrameError(str(exc)) from exc
    return None


# ---------------------------------------------------------------------------- decoding
def _decompress(src: Any, dst: Any, nthreads: int) -> None:
    """Decompress a checked chunk (its header's nbytes is ``len(dst)``) into `dst`.

    Small one-block chunks use Blosc2's global context (``blosc2.decompress``: no context to
    create, ~2 us instead of 5-15 us) once :func:`.cframe_item.is_checked_block` has bounded every
    read; other chunks get a context of their own (``decompress2``, which is told the
    chunk's length and releases the GIL).  Where the allocator returns freed memory at
    once (:mod:`.allocator`), checked one-block chunks up to
    :data:`RETURNED_MEMORY_MAX_NBYTES` take the global context too: a new context
    allocates a block-sized buffer, fresh pages there every time (a 32 MiB read decoded
    block by block took 70 ms instead of 50 in such a process).
    """
    b2 = _blosc2()
    try:
        if nthreads == 1 and (is_checked_block(src) or (
                allocator_returns_memory() and is_checked_block(src, RETURNED_MEMORY_MAX_NBYTES))):
            b2.decompress(src, dst)
        else:
            b2.decompress2(src, dst, nthreads=nthreads)
    except (ValueError, RuntimeError) as exc:
        raise FrameError(f"Blosc2 cannot decompress the chunk: {exc}") from exc


def _fill_special(flat: AnyArray, special: int, typesize: int) -> None:
    if special != SPECIAL_NAN:
        flat.fill(0)
        return
    if typesize not in (4, 8) or flat.nbytes % typesize:
        raise FrameError(f"a chunk of NaNs needs 4- or 8-byte items, not {typesize}")
    flat.view(np.dtype(f"<f{typesize}")).fill(np.nan)


def decode_into(
    buf: Any, out: AnyArray, *, nthreads: int = 1, chunkshape: Sequence[int] | None = None,
    work: Callable[[int], AnyArray] | None = None,
    run_parts: Callable[[Sequence[Callable[[], None]]], None] | None = None,
) -> None:
    """Decompress a whole chunk frame into `out`.

    Parameters
    ----------
    buf : bytes-like
        The frame (see :func:`parse_frame`).
    out : numpy.ndarray
        C-contiguous, writeable, with ``out.nbytes`` equal to the frame's
        :attr:`FrameLayout.nbytes`; any dtype (the frame's own, often ``|V8``, is
        ignored) and any shape (the data is written in C order).
    nthreads : int, default 1
        Threads Blosc2 may use for this chunk.
    chunkshape : sequence of int, optional
        The dataset's chunk shape: a b2nd frame must hold an array of this shape.
    work : callable, optional
        ``work(n)`` returns a writeable, C-contiguous ``uint8`` array of ``n`` bytes to
        decompress into first where the frame's data is not in C order (b2nd blocks that
        are not C-ordered slabs, or padded ones), overwritten here; default: new memory.
        A buffer kept by the caller saves a page fault per 4 KB on every call.
    run_parts : callable, optional
        With ``nthreads`` > 1, for frames whose blocks are not C-ordered slabs:
        ``run_parts(callables)`` runs ``nthreads`` callables, each decoding a run of the
        blocks into their places, in as many threads, and returns when all have (see
        :func:`.cframe_blocks.decode_blocks_into`).  Otherwise such frames are decoded
        whole with Blosc2's threads and then reordered, one more pass over the chunk.

    Raises
    ------
    FrameError
        If the frame is malformed (see :func:`parse_frame`), holds a b2nd array of
        another shape than `chunkshape`, or does not decompress.
    ValueError
        If `out` is not C-contiguous and writeable, or has another size.

    Notes
    -----
    Uninitialized chunks (stored as such, never by the filter) are read as zeros.
    """
    view = _byte_view(buf)
    layout = parse_frame(view)
    _check_shape(layout, chunkshape)
    if not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be a writeable, C-contiguous numpy array")
    if out.nbytes != layout.nbytes:
        raise ValueError(
            f"the chunk holds {layout.nbytes} bytes, out has {out.nbytes} "
            f"(shape {out.shape}, dtype {out.dtype})"
        )
    flat = out.reshape(-1).view(np.uint8)
    if layout.special:
        _fill_special(flat, layout.special, layout.typesize)
        return
    chunk = view[layout.chunk_start : layout.chunk_stop]
    if (chunk[31] >> 4) & 0x07 == SPECIAL_UNINIT:  # Blosc2 leaves the output as it was
        flat.fill(0)
        return
    if layout.c_order and layout.chunk_nbytes == layout.nbytes:
        _decompress(chunk, flat, nthreads)
        return
    assert layout.chunkshape is not None and layout.blockshape is not None
    if (nthreads == 1 or run_parts is not None) and decode_blocks_into(
            chunk, flat, layout.shape, layout.chunkshape, layout.blockshape,
            lambda part, into: _decompress(part, into, 1), run_parts, nthreads):
        return  # other writers' blocks, through a per-thread buffer (see cframe_blocks)
    whole = (np.empty(layout.chunk_nbytes, dtype=np.uint8) if work is None
             else work(layout.chunk_nbytes))
    _decompress(chunk, whole, nthreads)
    if layout.c_order:
        flat[...] = whole[: layout.nbytes]
        return
    from_block_order(whole, flat, layout.chunkshape, layout.blockshape, layout.shape)


def _check_shape(layout: FrameLayout, chunkshape: Sequence[int] | None) -> None:
    """A b2nd frame must hold the dataset's chunk (as the filter checks it)."""
    if (chunkshape is not None and layout.blockshape is not None
            and layout.shape != tuple(chunkshape)):
        raise FrameError(f"the b2nd frame holds an array of shape {layout.shape}, "
                         f"not a chunk of shape {tuple(chunkshape)}")


_LAYOUTS: Final = LayoutMemo[FrameLayout](128)
# Layouts of the bytes frames decode_item saw, by frame_key: a dataset's frames share theirs.


def _item_start(
    layout: FrameLayout, index: Sequence[int], itemsize: int, chunkshape: Sequence[int] | None
) -> int:
    """Byte offset, in the inner chunk, of the item at `index`."""
    if layout.blockshape is None:
        nbytes = layout.nbytes
        if itemsize and len(index) == 1 and (chunkshape is None or len(chunkshape) == 1):
            count = nbytes // itemsize  # one dimension: the position is the index
            if count * itemsize == nbytes and (
                chunkshape is None or operator.index(chunkshape[0]) == count
            ):
                i = operator.index(index[0])
                if -count <= i < count:
                    return (i % count) * itemsize
        shape = (
            (nbytes // itemsize,) if chunkshape is None
            else tuple(operator.index(d) for d in chunkshape)
        )
        if math.prod(shape) * itemsize != nbytes:
            raise ValueError(
                f"a chunk of shape {shape} and {itemsize}-byte items does not fill "
                f"the frame's {nbytes} bytes"
            )
        return block_order_position(index, shape, shape, shape) * itemsize
    if itemsize != layout.typesize:
        raise ValueError(f"the b2nd frame holds {layout.typesize}-byte items, not {itemsize}")
    assert layout.chunkshape is not None
    position = block_order_position(index, layout.shape, layout.chunkshape, layout.blockshape)
    return position * itemsize


def decode_item(
    buf: Any, index: Sequence[int], dtype: DTypeLike, *, chunkshape: Sequence[int] | None = None
) -> Any:
    """Return one element of a chunk frame.

    Only the Blosc2 block holding the element is decompressed when the chunk's filters
    work block by block (none, shuffle, bitshuffle: the filter's own); uncompressed
    chunks are read in place.  The layouts of recent ``bytes`` frames are remembered: a
    frame equal to one of them but for its sizes and compressed bytes skips the full
    parse, and only those sizes are checked (against ``len(buf)``).

    Parameters
    ----------
    buf : bytes-like
        The frame (see :func:`parse_frame`).
    index : sequence of int
        The element's position in the chunk (negative counts from the end).
    dtype : dtype-like
        The element's dtype; its item size must be the frame's type size for b2nd frames.
    chunkshape : sequence of int, optional
        The chunk's shape, for an index of rank > 1 into a plain (super-chunk) frame;
        by default such a frame is 1-D of ``nbytes // itemsize`` elements.  A b2nd
        frame must then hold an array of this shape.

    Returns
    -------
    numpy scalar (or array, for subarray dtypes)

    Raises
    ------
    FrameError
        If the frame is malformed, or a b2nd frame holds another shape than `chunkshape`.
    IndexError
        If `index` is out of the chunk's bounds.
    ValueError
        If `dtype` or `chunkshape` do not fit the frame.
    """
    dt = np.dtype(dtype)
    known = frame_key(buf) if type(buf) is bytes else None
    layout = None if known is None else _LAYOUTS.get(known[0])
    src: bytes | memoryview = buf
    if layout is None:
        src = _byte_view(buf)
        layout = parse_frame(src)
        stop = layout.chunk_stop
        if known is not None:
            _LAYOUTS.put(known[0], layout)
            src = buf
    elif layout.special:
        stop = layout.chunk_stop
    else:  # the frame's own sizes and chunk header (the layout was checked for the rest)
        assert known is not None
        stop = known[1]
        _check_chunk(buf, layout, stop)
    _check_shape(layout, chunkshape)
    start = _item_start(layout, index, dt.itemsize, chunkshape)
    if layout.special:
        raw = _special_range(layout.special, layout.typesize, b"", start, dt.itemsize)
    else:
        raw = _read_range(src, layout.chunk_start, stop, start, dt.itemsize)
    return np.frombuffer(raw, dtype=dt)[0]


def _special_range(special: int, typesize: int, value: bytes, start: int, length: int) -> bytes:
    """Bytes ``[start, start + length)`` of a chunk of special values."""
    if special in (SPECIAL_ZERO, SPECIAL_UNINIT):
        return bytes(length)
    if special == SPECIAL_NAN:
        if typesize not in (4, 8):
            raise FrameError(f"a chunk of NaNs needs 4- or 8-byte items, not {typesize}")
        value = np.array(np.nan, dtype=f"<f{typesize}").tobytes()
    if not value:
        raise FrameError("a chunk of repeated values without a value")
    period = len(value)
    shift = start % period
    return (value * ((shift + length) // period + 1))[shift : shift + length]


def _read_range(src: bytes | memoryview, chunk_start: int, chunk_stop: int, start: int,
                length: int) -> bytes:
    """Bytes ``[start, start + length)`` of the uncompressed chunk ``src[chunk_start:chunk_stop]``
    (its header checked by :func:`.cframe_check.check_chunk`: an extended header, a
    special chunk of exactly a header and its value, an uncompressed one of its data)."""
    if type(src) is bytes and chunk_stop - chunk_start > _COPY_MAX:
        src = memoryview(src)
    chunk = src[chunk_start:chunk_stop]
    _, _, flags, typesize, nbytes, blocksize, _ = _CHUNK.unpack_from(chunk, 0)
    special = (chunk[31] >> 4) & 0x07
    if special:  # the value (a header and one item) is as wide as C-Blosc2 takes it
        value = bytes(chunk[_CHUNK_EXTLEN:]) if special == SPECIAL_VALUE else b""
        return _special_range(special, typesize, value, start, length)
    if flags & 0x07 == 0x05 and nbytes == blocksize and not chunk[31]:  # one compressed block
        whole = bytearray(nbytes)
        _decompress(chunk, whole, 1)
        return bytes(whole[start : start + length])
    if flags & _MEMCPYED:
        return bytes(chunk[_CHUNK_EXTLEN + start : _CHUNK_EXTLEN + start + length])
    nblock = start // blocksize
    nblocks = -(-nbytes // blocksize)
    if (
        nblocks > 1
        and (start + length - 1) // blocksize == nblock
        and not chunk[30]
        and not chunk[31]
        and not bytes(chunk[16:22]).strip(PARTIAL_FILTERS)
    ):
        part = one_block(chunk, nblock, nblocks, blocksize, nbytes)
        if part is not None:
            bsize = min(blocksize, nbytes - nblock * blocksize)
            out = bytearray(bsize)
            _decompress(part, out, 1)
            skip = start - nblock * blocksize
            return bytes(out[skip : skip + length])
    whole = bytearray(nbytes)
    _decompress(chunk, whole, 1)
    return bytes(whole[start : start + length])


# ---------------------------------------------------------------------------- encoding
def _frame_header(
    nbytes: int, typesize: int, codec: int, clevel: int, filter_code: int, meta: bytes | None
) -> bytes:
    """A frame header with zero frame length, compressed size and block size."""
    layers = layers_bytes(meta)
    flags = bytes((
        _GENERAL_FLAGS, 0, (min(codec, UDCODEC_FORMAT) | clevel << 4) & 0xFF,
        _FORWARD_COMPAT_SPLIT,
    ))
    pipeline = bytes((0, 0, 0, 0, 0, filter_code, codec, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    fixed = HEADER.pack(
        MAGIC, 0xD2, _HEADER_MINLEN + len(layers), 0xCF, 0, 0xA4, flags, 0xD3, nbytes,
        0xD3, 0, 0xD2, typesize, 0xD2, 0, 0xD2, nbytes, 0xD1, 0, 0xD1, 1, 0xC2, 0xD8, 6,
        pipeline,
    )
    return fixed + layers


class FrameEncoder:
    """Compress chunks of one dataset into the frames the Blosc2 HDF5 filter writes.

    Build one per dataset (and thread count); :meth:`encode` is thread-safe.

    Parameters
    ----------
    chunkshape : sequence of int
        The chunk shape.  For a plain frame only ``prod(chunkshape) * typesize`` (the
        chunk's bytes) matters.
    typesize : int
        Item size given to Blosc2 (cd_values[2]).
    codec, clevel, filter_code : int
        Codec code, level 0..9, and the Blosc2 filter put in the last filter slot: the
        :class:`~hyperslab.codecs.blosc2_filter.Blosc2Params` values.
    blockshape : sequence of int, optional
        The b2nd block shape, giving b2nd frames (as the filter writes for rank >= 2);
        ``None`` gives a plain one-chunk super-chunk frame (as for rank 1, and what the
        filter reads back for any rank).  Items over 255 bytes need ``None``: the filter
        (hdf5plugin 7.1) writes b2nd frames for them that neither it nor python-blosc2
        can read.
    blocksize : int, default 0
        Block size in bytes for plain frames (cd_values[1]; 0 lets Blosc2 choose).
        b2nd frames use the block shape's size.
    nthreads : int, default 1
        Threads Blosc2 uses per chunk.

    Raises
    ------
    ValueError
        If a parameter is out of range or the chunk is too large for Blosc2.
    """

    def __init__(
        self,
        chunkshape: Sequence[int],
        typesize: int,
        *,
        codec: int,
        clevel: int,
        filter_code: int,
        blockshape: Sequence[int] | None = None,
        blocksize: int = 0,
        nthreads: int = 1,
    ) -> None:
        shape = tuple(as_int(f"chunkshape[{i}]", d, 1) for i, d in enumerate(chunkshape))
        if not shape:
            raise ValueError("chunkshape must have at least one dimension")
        self.chunkshape: Shape = shape
        self.typesize = as_int("typesize", typesize, 1, 2**31 - 1)
        codec = as_int("codec", codec, 0, 255)
        clevel = as_int("clevel", clevel, 0, 9)
        filter_code = as_int("filter_code", filter_code, 0, 255)
        self.nthreads = as_int("nthreads", nthreads, 1, 2**15 - 1)
        self.nbytes = math.prod(shape) * self.typesize
        self.blockshape: Shape | None = None
        self._in_order = True
        if blockshape is None:
            chunk_nbytes = self.nbytes
            block_bytes = as_int("blocksize", blocksize, 0, MAX_CHUNK_BYTES)
            meta = None
        else:
            blocks = tuple(as_int(f"blockshape[{i}]", d, 1) for i, d in enumerate(blockshape))
            if len(blocks) != len(shape) or len(shape) > B2ND_MAX_DIM or any(
                b > c for b, c in zip(blocks, shape, strict=True)
            ):
                raise ValueError(f"block shape {blocks} does not fit chunk shape {shape}")
            if self.typesize > MAX_TYPESIZE:
                raise ValueError(
                    f"b2nd frames of {self.typesize}-byte items (over {MAX_TYPESIZE}) cannot be "
                    "read back by the Blosc2 filter: use blockshape=None (a plain frame)"
                )
            self.blockshape = blocks
            chunk_nbytes = math.prod(ext_shape(shape, blocks)) * self.typesize
            self._in_order = chunk_nbytes == self.nbytes and blocks_are_c_order(
                shape, shape, blocks
            )
            block_bytes = math.prod(blocks) * self.typesize
            meta = b2nd_meta_bytes(shape, shape, blocks, B2ND_DTYPE_FORMAT.format(self.typesize))
        if chunk_nbytes > MAX_CHUNK_BYTES:
            raise ValueError(
                f"a Blosc2 chunk holds at most {MAX_CHUNK_BYTES} bytes; chunk shape {shape} "
                f"of {self.typesize}-byte items needs {chunk_nbytes}"
            )
        self._header = _frame_header(
            chunk_nbytes, self.typesize if self.typesize <= MAX_TYPESIZE else 1, codec, clevel,
            filter_code, meta,
        )
        self._tail = offsets_chunk(0) + TRAILER
        self._special_tails = {
            kind: offsets_chunk(-(2**63) + (kind << 56)) + TRAILER
            for kind in (SPECIAL_ZERO, SPECIAL_NAN, SPECIAL_UNINIT)
        }
        b2 = _blosc2()
        self._cparams: dict[str, Any] = dict(
            codec=codec, clevel=clevel, typesize=self.typesize, nthreads=self.nthreads,
            blocksize=block_bytes, splitmode=b2.SplitMode.FORWARD_COMPAT_SPLIT,
            filters=[0, 0, 0, 0, 0, filter_code], filters_meta=[0] * 6,
        )

    def _source(self, chunk: AnyArray) -> AnyArray:
        """The chunk's bytes in the order Blosc2 compresses them (b2nd block order)."""
        if self.blockshape is None or self._in_order:
            return chunk.reshape(-1).view(np.uint8)
        items = chunk.reshape(-1).view(np.uint8).view(np.dtype(f"V{self.typesize}"))
        blocked = _to_block_order(items.reshape(self.chunkshape), self.blockshape)
        return blocked.reshape(-1).view(np.uint8)

    def encode(self, chunk: AnyArray) -> bytes:
        """Compress one full chunk into a frame.

        Parameters
        ----------
        chunk : numpy.ndarray
            The chunk's data in C order: ``prod(chunkshape) * typesize`` bytes, any dtype
            and shape (edge chunks padded to the full chunk shape first).

        Returns
        -------
        bytes
            The frame, for ``write_direct_chunk`` with filter mask 0.

        Raises
        ------
        ValueError
            If `chunk` has another size, or Blosc2 rejects the parameters.
        """
        data = np.ascontiguousarray(chunk)
        if data.nbytes != self.nbytes:
            raise ValueError(
                f"a chunk of {self.nbytes} bytes (shape {self.chunkshape}, {self.typesize}-byte "
                f"items) is expected, got {data.nbytes} bytes (shape {data.shape}, "
                f"dtype {data.dtype})"
            )
        source = self._source(data)
        try:
            compressed = _blosc2().compress2(source, **self._cparams)
        except (ValueError, RuntimeError) as exc:
            raise ValueError(
                f"Blosc2 cannot compress with codec={self._cparams['codec']}, "
                f"clevel={self._cparams['clevel']}, filter={self._cparams['filters'][-1]}: {exc}"
            ) from exc
        blocksize = _I32.unpack_from(compressed, 8)[0]
        special = (compressed[31] >> 4) & 0x07 if len(compressed) >= _CHUNK_EXTLEN else 0
        tail = self._special_tails.get(special)
        if tail is not None:
            compressed = b""
        else:
            tail = self._tail
        header = bytearray(self._header)
        _BE_I64.pack_into(header, _FRAME_LEN_AT, len(header) + len(compressed) + len(tail))
        _BE_I64.pack_into(header, _FRAME_CBYTES_AT, len(compressed))
        _BE_I32.pack_into(header, _FRAME_BLOCKSIZE_AT, blocksize)
        return b"".join((header, compressed, tail))


__all__ = [
    "B2ND_DTYPE_FORMAT",
    "MAX_CHUNK_BYTES",
    "SPECIAL_NAN",
    "SPECIAL_UNINIT",
    "SPECIAL_ZERO",
    "FrameEncoder",
    "FrameError",
    "FrameLayout",
    "decode_into",
    "decode_item",
    "parse_frame",
]
