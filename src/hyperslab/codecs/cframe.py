"""Fast encoding and decoding of the Blosc2 HDF5 filter's chunk frames.

Every chunk the Blosc2 filter (32026) stores is a Blosc2 *contiguous frame* (FORMAT.md §2):
a msgpack header (with a ``b2nd`` metalayer for chunks of rank 2 and more), one compressed
Blosc2 chunk (the *inner chunk*), a chunk holding its offset, and a msgpack trailer.  This
module reads and writes those frames itself and compresses/decompresses the inner chunk with
python-blosc2's low-level ``compress2``/``decompress2`` only: no ``NDArray``/``SChunk``
objects, which cost 40-550 us a call even for tiny chunks.

* :func:`parse_frame` checks a frame against its length and returns a :class:`FrameLayout`;
* :func:`decode_into` decompresses a whole chunk into a C-ordered array;
* :func:`decode_item` returns one element, decompressing only the Blosc2 block that holds
  it when the chunk's filters allow it;
* :class:`FrameEncoder` builds the frames for one dataset from a header template computed
  once, patching the few size fields of each chunk.

The frames written are those of C-Blosc2's ``b2nd_to_cframe``/``schunk_to_buffer`` (so
the filter, PyTables and python-blosc2 read them), and anything those write is read back,
including special (all-zero, NaN) chunks stored as a bare offset.  Malformed input raises
:class:`FrameError`; every size is checked before Blosc2 sees a byte.

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
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from hyperslab._typing import AnyArray, DTypeLike, Shape
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
from hyperslab.codecs.cframe_item import CHUNK_EXTLEN as _CHUNK_EXTLEN
from hyperslab.codecs.cframe_item import CHUNK_HEAD as _CHUNK
from hyperslab.codecs.cframe_item import CHUNK_MINLEN as _CHUNK_MINLEN
from hyperslab.codecs.cframe_item import I32 as _I32
from hyperslab.codecs.cframe_item import I64 as _I64
from hyperslab.codecs.cframe_item import MEMCPYED as _MEMCPYED
from hyperslab.codecs.cframe_item import (
    LayoutMemo,
    frame_key,
    is_checked_block,
    one_block,
)
from hyperslab.codecs.validate import as_int

SPECIAL_ZERO: Final = 1
""":attr:`FrameLayout.special` of a chunk of zeros stored as a bare offset."""
SPECIAL_NAN: Final = 2
""":attr:`FrameLayout.special` of a chunk of NaNs stored as a bare offset."""
SPECIAL_UNINIT: Final = 4
""":attr:`FrameLayout.special` of an uninitialized chunk (decoded as zeros)."""
MAX_CHUNK_BYTES: Final = 2**31 - 1 - 32
"""Largest inner chunk Blosc2 compresses (``BLOSC2_MAX_BUFFERSIZE``)."""
B2ND_DTYPE_FORMAT: Final = "|V{}"
"""The dtype the filter writes in the b2nd metalayer (opaque items of the type size)."""

_MAGIC: Final = b"\x9e\xa8b2frame\x00"
# The fixed 87-byte frame header (README_CFRAME_FORMAT.rst): msgpack markers interleaved
# with big-endian fields.
_HEADER: Final = struct.Struct(">10sBiBQB4sBqBqBiBiBiBhBhBBB16s")
_MARKERS: Final = (0xD2, 0xCF, 0xA4, 0xD3, 0xD3, 0xD2, 0xD2, 0xD2, 0xD1, 0xD1, 0xD8)
_HEADER_MINLEN: Final = 87
_TRAILER_MINLEN: Final = 25
_FRAME_LEN_AT: Final = 16
_FRAME_CBYTES_AT: Final = 39
_FRAME_BLOCKSIZE_AT: Final = 53
_GENERAL_FLAGS: Final = 0x12  # frame format version 2, 64-bit offsets, fixed chunk size
_FORWARD_COMPAT_SPLIT: Final = 3  # other_flags = splitmode - 1
_UDCODEC_FORMAT: Final = 6  # codec_flags value for codecs past the built-in ones
_PARTIAL_FILTERS: Final = b"\x00\x01\x02"  # per-block filters: none, shuffle, bitshuffle
_COPY_MAX: Final = 4096  # larger chunks of a bytes frame are read through a memoryview
_BE_U16: Final = struct.Struct(">H")
_BE_I32: Final = struct.Struct(">i")
_BE_I64: Final = struct.Struct(">q")
_B2ND_NAMES: Final = (b"b2nd", b"caterva")
_MAX_TYPESIZE: Final = 255  # larger items are compressed as bytes (type size 1)


class FrameError(ValueError):
    """A chunk frame that is malformed, truncated, or of a kind this module does not read."""


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


def _check_fixed_header(fields: tuple[Any, ...], size: int) -> None:
    """Check the fixed part of a frame header (unpacked by ``_HEADER``) against `size`."""
    if fields[0] != _MAGIC:
        raise FrameError(f"not a Blosc2 frame: it starts with {bytes(fields[0])!r}")
    if fields[1:21:2] != _MARKERS[:10] or fields[22] != _MARKERS[10]:
        raise FrameError("not a Blosc2 frame: bad msgpack markers in its header")
    header_len, frame_len = fields[2], fields[4]
    general, frame_type = fields[6][0], fields[6][1]
    nbytes, cbytes, typesize, chunksize = fields[8], fields[10], fields[12], fields[16]
    if frame_len != size:
        raise FrameError(f"the frame header gives {frame_len} bytes, the buffer has {size}")
    if not _HEADER_MINLEN <= header_len <= size - _TRAILER_MINLEN:
        raise FrameError(f"bad frame header length {header_len} for a {size}-byte frame")
    if general & 0x0F > 3 or (general >> 4) & 0x03 != 1 or general & 0x80:
        raise FrameError(f"unsupported frame format flags {general:#04x}")
    if frame_type & 0x0F:
        raise FrameError(f"not a contiguous frame (frame type {frame_type & 0x0F})")
    if typesize <= 0 or nbytes <= 0 or chunksize < 0:
        raise FrameError(
            f"bad frame sizes: typesize={typesize}, nbytes={nbytes}, chunksize={chunksize}"
        )
    if cbytes < 0 or header_len + cbytes + _CHUNK_MINLEN > size - _TRAILER_MINLEN:
        raise FrameError(f"bad compressed size {cbytes} for a {size}-byte frame")
    if chunksize and nbytes > chunksize:
        raise FrameError(f"the frame holds {nbytes} bytes in chunks of {chunksize}: not one chunk")


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
        against ``len(buf)``), or holds other than exactly one chunk.
    """
    view = _byte_view(buf)
    size = view.nbytes
    if size < _HEADER_MINLEN + _TRAILER_MINLEN:
        raise FrameError(f"not a Blosc2 frame: {size} bytes, fewer than the smallest frame's 112")
    fields = _HEADER.unpack_from(view, 0)
    _check_fixed_header(fields, size)
    header_len, nbytes, typesize = fields[2], fields[8], fields[12]
    codec_flags = fields[6][2]
    data_end = header_len + fields[10]
    offset = _chunk_offset(view, data_end, size - _TRAILER_MINLEN)
    typesize, shape, blockshape, chunkshape, data_nbytes, dtype, c_order = _layers_info(
        bytes(view[_HEADER_MINLEN:header_len]), typesize, nbytes
    )
    special = 0
    blocksize = fields[14]
    chunk_start = chunk_stop = header_len
    if offset < 0:
        special = _special_kind(offset)
    else:
        chunk_start = header_len + offset
        chunk_stop, blocksize = _check_chunk(view, chunk_start, data_end, nbytes)
    codec = fields[24][6] if codec_flags & 0x0F == _UDCODEC_FORMAT else codec_flags & 0x0F
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
        return typesize, (nbytes // typesize,), None, None, nbytes, None, True
    shape, chunkshape, blockshape, dtype = meta
    # The item size: the frame's type size is 1 for items over 255 bytes.
    items = math.prod(ext_shape(chunkshape, blockshape))
    itemsize = nbytes // items
    if itemsize * items != nbytes or (typesize != itemsize and typesize != 1):
        raise FrameError(
            f"the b2nd chunk {chunkshape} with blocks {blockshape} has {items} items, "
            f"which {nbytes} bytes of {typesize}-byte items do not fill"
        )
    c_order = blocks_are_c_order(shape, chunkshape, blockshape)
    return itemsize, shape, blockshape, chunkshape, math.prod(shape) * itemsize, dtype, c_order


def _special_kind(offset: int) -> int:
    kind = (offset >> 56) & 0x7F
    for special in (SPECIAL_ZERO, SPECIAL_UNINIT, SPECIAL_NAN):
        if kind & special:
            return special
    raise FrameError(f"unknown special chunk offset {offset & (2**64 - 1):#018x}")


def _chunk_offset(view: memoryview, at: int, limit: int) -> int:
    """The offset of chunk 0, from the offsets chunk at ``view[at:limit]``."""
    _, _, flags, typesize, off_nbytes, _, off_cbytes = _CHUNK.unpack_from(view, at)
    if off_nbytes != 8:
        raise FrameError(f"the frame's offsets chunk lists {off_nbytes // 8} chunks, not 1")
    if not _CHUNK_MINLEN <= off_cbytes <= limit - at:
        raise FrameError(f"bad offsets chunk size {off_cbytes} at byte {at}")
    overhead = _CHUNK_EXTLEN if flags & 0x05 == 0x05 else _CHUNK_MINLEN
    if off_cbytes < overhead:
        raise FrameError(f"bad offsets chunk size {off_cbytes} at byte {at}")
    special = (view[at + 31] >> 4) & 0x07 if overhead == _CHUNK_EXTLEN else 0
    if flags & _MEMCPYED and not special and off_cbytes == overhead + 8:
        return int(_I64.unpack_from(view, at + overhead)[0])
    if special == SPECIAL_ZERO:
        return 0
    if special == 3 and typesize == 8 and off_cbytes >= overhead + 8:  # one repeated value
        return int(_I64.unpack_from(view, at + overhead)[0])
    value = bytearray(8)
    _decompress(view[at : at + off_cbytes], value, 1)
    return int(_I64.unpack_from(value, 0)[0])


def _check_chunk(
    view: bytes | memoryview, start: int, data_end: int, chunk_nbytes: int
) -> tuple[int, int]:
    """Check the inner chunk's header; return its end and block size."""
    if start + _CHUNK_MINLEN > data_end:
        raise FrameError(f"the chunk offset {start} lies outside the frame's data")
    _, _, flags, _, nbytes, blocksize, cbytes = _CHUNK.unpack_from(view, start)
    stop = start + cbytes
    overhead = _CHUNK_EXTLEN if flags & 0x05 == 0x05 else _CHUNK_MINLEN
    if cbytes < overhead or stop > data_end:
        raise FrameError(f"bad chunk size {cbytes} at byte {start} (data ends at {data_end})")
    if nbytes != chunk_nbytes:
        raise FrameError(f"the chunk holds {nbytes} bytes, the frame says {chunk_nbytes}")
    if blocksize <= 0:
        raise FrameError(f"bad chunk block size {blocksize}")
    return stop, blocksize


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
    chunk's length and releases the GIL).
    """
    b2 = _blosc2()
    try:
        if nthreads == 1 and is_checked_block(src):
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


def decode_into(buf: Any, out: AnyArray, *, nthreads: int = 1) -> None:
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

    Raises
    ------
    FrameError
        If the frame is malformed (see :func:`parse_frame`) or does not decompress.
    ValueError
        If `out` is not C-contiguous and writeable, or has another size.
    """
    view = _byte_view(buf)
    layout = parse_frame(view)
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
    if layout.c_order and layout.chunk_nbytes == layout.nbytes:
        _decompress(chunk, flat, nthreads)
        return
    whole = np.empty(layout.chunk_nbytes, dtype=np.uint8)
    _decompress(chunk, whole, nthreads)
    if layout.c_order:
        flat[...] = whole[: layout.nbytes]
        return
    assert layout.chunkshape is not None and layout.blockshape is not None
    from_block_order(whole, flat, layout.chunkshape, layout.blockshape, layout.shape)


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
        by default such a frame is 1-D of ``nbytes // itemsize`` elements.

    Returns
    -------
    numpy scalar (or array, for subarray dtypes)

    Raises
    ------
    FrameError
        If the frame is malformed.
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
    else:  # the frame's own sizes: its chunk must end within its data
        assert known is not None
        stop = _check_chunk(buf, layout.chunk_start, known[1], layout.chunk_nbytes)[0]
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
    (its sizes checked by :func:`_check_chunk`)."""
    if type(src) is bytes and chunk_stop - chunk_start > _COPY_MAX:
        src = memoryview(src)
    chunk = src[chunk_start:chunk_stop]
    _, _, flags, typesize, nbytes, blocksize, cbytes = _CHUNK.unpack_from(chunk, 0)
    if flags & 0x07 == 0x05 and nbytes == blocksize and not chunk[31]:  # one compressed block
        whole = bytearray(nbytes)
        _decompress(chunk, whole, 1)
        return bytes(whole[start : start + length])
    extended = flags & 0x05 == 0x05
    overhead = _CHUNK_EXTLEN if extended else _CHUNK_MINLEN
    special = (chunk[31] >> 4) & 0x07 if extended else 0
    if special:
        value = bytes(chunk[overhead : overhead + typesize]) if special == 3 else b""
        return _special_range(special, typesize, value, start, length)
    if flags & _MEMCPYED:
        if cbytes != nbytes + overhead:
            raise FrameError(f"bad uncompressed chunk: {cbytes} bytes for {nbytes}")
        return bytes(chunk[overhead + start : overhead + start + length])
    nblock = start // blocksize
    nblocks = -(-nbytes // blocksize)
    if (
        extended
        and nblocks > 1
        and (start + length - 1) // blocksize == nblock
        and not chunk[30]
        and not chunk[31]
        and not bytes(chunk[16:22]).strip(_PARTIAL_FILTERS)
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
    if meta is None:
        layers = b"\x93\xcd\x00\x07\xde\x00\x00\xdc\x00\x00"
    else:
        offset = _HEADER_MINLEN + 20
        layers = b"".join((
            b"\x93\xcd\x00\x11\xde\x00\x01\xa4b2nd\xd2", _BE_I32.pack(offset),
            b"\xdc\x00\x01\xc6", _BE_I32.pack(len(meta)), meta,
        ))
    flags = bytes((
        _GENERAL_FLAGS, 0, (min(codec, _UDCODEC_FORMAT) | clevel << 4) & 0xFF,
        _FORWARD_COMPAT_SPLIT,
    ))
    pipeline = bytes((0, 0, 0, 0, 0, filter_code, codec, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    fixed = _HEADER.pack(
        _MAGIC, 0xD2, _HEADER_MINLEN + len(layers), 0xCF, 0, 0xA4, flags, 0xD3, nbytes,
        0xD3, 0, 0xD2, typesize, 0xD2, 0, 0xD2, nbytes, 0xD1, 0, 0xD1, 1, 0xC2, 0xD8, 6,
        pipeline,
    )
    return fixed + layers


def _offsets_chunk(offset: int) -> bytes:
    """The 40-byte, uncompressed Blosc2 chunk holding one chunk offset."""
    head = _CHUNK.pack(5, 1, 0x07, 8, 8, 8, 40)
    return head + bytes((0, 0, 0, 0, 0, 1)) + bytes(10) + _I64.pack(offset)


_TRAILER: Final = (
    b"\x94\x01\x93\xcd\x00\x06\xde\x00\x00\xdc\x00\x00\xce\x00\x00\x00\x23\xd8\x00" + bytes(16)
)


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
            if self.typesize > _MAX_TYPESIZE:
                raise ValueError(
                    f"b2nd frames of {self.typesize}-byte items (over {_MAX_TYPESIZE}) cannot be "
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
            chunk_nbytes, self.typesize if self.typesize <= _MAX_TYPESIZE else 1, codec, clevel,
            filter_code, meta,
        )
        self._tail = _offsets_chunk(0) + _TRAILER
        self._special_tails = {
            kind: _offsets_chunk(-(2**63) + (kind << 56)) + _TRAILER
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
