"""Helpers for reading single items from Blosc2 chunk frames (see :mod:`.cframe`).

* the Blosc2 chunk header constants shared with :mod:`.cframe`;
* :func:`is_checked_block`, the bounds check that lets Blosc2's global context (which is
  not told a chunk's length) decompress a small one-block chunk;
* :func:`one_block`, which cuts one block out of a multi-block chunk;
* :func:`frame_key` and :class:`LayoutMemo`, which let the frames of one dataset (alike
  but for three size fields and their compressed bytes) skip the full parse: the key is
  the frame's header without those fields plus everything after the compressed data
  (offsets chunk and trailer), so a frame matches only a layout that was fully checked
  for the same bytes, and only its sizes are left to check against its length.

Nothing here raises :class:`~hyperslab.codecs.cframe.FrameError`: the functions answer
None or False, and :mod:`.cframe` takes its general path, which does.
"""

from __future__ import annotations

import functools
import struct
import threading
from collections.abc import Sequence
from typing import Any, Final, TypeAlias, TypeVar

import numpy as np

from hyperslab._typing import AnyArray

CHUNK_HEAD: Final = struct.Struct("<BBBBiii")
"""The 16-byte Blosc2 chunk header (README_CHUNK_FORMAT.rst), little-endian."""
CHUNK_MINLEN: Final = 16
CHUNK_EXTLEN: Final = 32
"""Length of the extended chunk header (flags ``0x05`` both set)."""
MEMCPYED: Final = 0x02
DONT_SPLIT: Final = 0x10
I32: Final = struct.Struct("<i")
I64: Final = struct.Struct("<q")
GLOBAL_MAX_NBYTES: Final = 1 << 16
"""Chunks over this size get a context of their own (which releases the GIL)."""
_GLOBAL_CODECS: Final = frozenset((0, 1, 3, 4))  # chunk formats: blosclz, lz4(hc), zlib, zstd
_GLOBAL_FILTERS: Final = b"\x00\x01\x02\x03\x04"  # none, (bit)shuffle, delta, trunc_prec
# flags, typesize, nbytes, blocksize, cbytes, filters[6], bytes 30 and 31, first block start
_BLOCK_HEAD: Final = struct.Struct("<xxBBiii6s8xBBi")

# The frame header's big-endian header length (byte 11), frame length (16) and
# compressed size (39); README_CFRAME_FORMAT.rst.
_FRAME_SIZES: Final = struct.Struct(">11xixQ15xq")
_HEADER_MINLEN: Final = 87
_FRAME_MINLEN: Final = 112  # smallest header and trailer


def is_checked_block(chunk: Any, max_nbytes: int = GLOBAL_MAX_NBYTES) -> bool:
    """Whether `chunk` is one small full block whose streams all lie inside it.

    The streams are walked as Blosc2 reads them, so Blosc2's global context (which is
    not told the chunk's length, but needs no context of its own) may decompress it.
    Only the built-in codecs and filters qualify, and blocks of at most 64 KiB (the
    global context holds the GIL).

    Parameters
    ----------
    chunk : bytes or memoryview
        Exactly the chunk's bytes.
    max_nbytes : int
        The largest block taken (:data:`GLOBAL_MAX_NBYTES` unless the caller accepts
        holding the GIL longer).
    """
    cbytes = len(chunk)
    if cbytes < CHUNK_EXTLEN + 4:
        return False
    flags, typesize, nbytes, blocksize, header_cbytes, filters, flags2, flags3, pos = (
        _BLOCK_HEAD.unpack_from(chunk, 0)
    )
    if (
        flags & 0x05 != 0x05
        or header_cbytes != cbytes
        or not 0 < nbytes == blocksize <= max_nbytes
        or typesize == 0
        or flags2
        or flags3
        or flags >> 5 not in _GLOBAL_CODECS
        or filters.strip(_GLOBAL_FILTERS)
    ):
        return False
    if flags & MEMCPYED:
        return cbytes == nbytes + CHUNK_EXTLEN
    nstreams = 1 if flags & DONT_SPLIT else typesize
    if nbytes < nstreams or not CHUNK_EXTLEN + 4 <= pos < cbytes:
        return False
    for _ in range(nstreams):
        if pos + 4 > cbytes:
            return False
        csize = I32.unpack_from(chunk, pos)[0]
        pos += 4 + (csize if csize > 0 else 1 if csize < 0 else 0)
    return pos <= cbytes


def one_block(chunk: Any, nblock: int, nblocks: int, blocksize: int, nbytes: int) -> bytes | None:
    """A valid one-block Blosc2 chunk holding block `nblock` of `chunk`, or None.

    The block's compressed streams are copied after a copy of the chunk's header with
    the sizes of a one-block chunk; Blosc2 then decompresses just that block.  None when
    the block starts look inconsistent (the caller decompresses the whole chunk, and
    Blosc2 reports the problem).
    """
    cbytes = len(chunk)
    table_end = CHUNK_EXTLEN + 4 * nblocks
    if table_end > cbytes:
        return None
    starts = np.frombuffer(chunk, dtype="<i4", count=nblocks, offset=CHUNK_EXTLEN)
    begin = int(starts[nblock])
    if not table_end <= begin < cbytes:
        return None
    later = starts[starts > begin]
    end = int(later.min()) if later.size else cbytes
    return block_chunk(chunk, nblock, begin, end, blocksize, nbytes)


StreamOffsets: TypeAlias = "Sequence[int] | AnyArray"
"""Where each block's compressed streams begin (or end) in its chunk, by block number: a
list, or an ``int32`` array for chunks of many blocks (see :func:`block_ends`)."""

LISTED_BLOCKS_MAX: Final = 256
"""Chunks of at most this many blocks have their streams' places worked out with Python
lists (~2 us for 20 blocks against ~5 us for NumPy's calls), bigger ones with NumPy."""


@functools.lru_cache(maxsize=64)
def _starts_table(nblocks: int) -> struct.Struct:
    return struct.Struct(f"<{nblocks}i")


def block_ends(chunk: Any, nblocks: int) -> tuple[StreamOffsets, StreamOffsets] | None:
    """The start and end, in `chunk`, of the compressed streams of every block (for
    :func:`block_chunk`); None when the offsets table or an offset is outside the chunk.

    A stream ends where the next greater start is (blocks are usually stored in order;
    equal starts share their streams), or at the chunk's end.

    Examples
    --------
    >>> head = bytes(CHUNK_EXTLEN)
    >>> chunk = head + struct.pack("<3i", 44, 60, 50) + bytes(30)
    >>> block_ends(chunk, 3)
    ([44, 60, 50], [50, 74, 60])
    """
    cbytes = len(chunk)
    table_end = CHUNK_EXTLEN + 4 * nblocks
    if table_end > cbytes:
        return None
    if nblocks <= LISTED_BLOCKS_MAX:
        starts = list(_starts_table(nblocks).unpack_from(chunk, CHUNK_EXTLEN))
        if nblocks and (min(starts) < table_end or max(starts) >= cbytes):
            return None
        ordered = sorted(starts)
        if ordered == starts and len(set(starts)) == nblocks:  # in order, none shared
            return starts, [*starts[1:], cbytes]
        unique = sorted(set(starts))
        ending = dict(zip(unique, [*unique[1:], cbytes], strict=True))
        return starts, [ending[start] for start in starts]
    array = np.frombuffer(chunk, dtype="<i4", count=nblocks, offset=CHUNK_EXTLEN)
    if int(array.min()) < table_end or int(array.max()) >= cbytes:
        return None
    # (np.unique costs twice this sort)
    ordered_array = np.sort(array)
    return array, np.append(ordered_array, cbytes)[
        np.searchsorted(ordered_array, array, side="right")]


def block_chunk(chunk: Any, nblock: int, begin: int, end: int, blocksize: int,
                nbytes: int) -> bytes | None:
    """A valid one-block Blosc2 chunk of block `nblock`, whose streams are
    ``chunk[begin:end]`` (see :func:`one_block`); None if that range is not in the chunk."""
    cbytes = len(chunk)
    if not CHUNK_EXTLEN + 4 <= begin < end <= cbytes:
        return None
    header = bytearray(chunk[:CHUNK_EXTLEN])
    bsize = min(blocksize, nbytes - nblock * blocksize)
    if bsize < blocksize:
        # A short last block is one stream; as a chunk's only (full) block it would be
        # split, so mark the chunk unsplit.
        header[2] |= DONT_SPLIT
        I32.pack_into(header, 8, bsize)
    I32.pack_into(header, 4, bsize)
    I32.pack_into(header, 12, CHUNK_EXTLEN + 4 + end - begin)
    return b"".join((header, I32.pack(CHUNK_EXTLEN + 4), chunk[begin:end]))


def blocks_chunk(chunk: Any, spans: list[tuple[int, int]], blocksize: int) -> bytes | None:
    """A valid Blosc2 chunk of full blocks of `chunk`, in the given order: the blocks whose
    streams are ``chunk[begin:end]`` for each ``(begin, end)`` of `spans` (see
    :func:`block_chunk`, which makes a chunk of one block, short ones included).  Blosc2
    then decompresses them in one call, into ``len(spans) * blocksize`` bytes.  None if a
    range is not in the chunk."""
    cbytes = len(chunk)
    table_end = CHUNK_EXTLEN + 4 * len(spans)
    starts = np.empty(len(spans), dtype="<i4")
    position = table_end
    for n, (begin, end) in enumerate(spans):
        if not CHUNK_EXTLEN + 4 <= begin < end <= cbytes:
            return None
        starts[n] = position
        position += end - begin
    header = bytearray(chunk[:CHUNK_EXTLEN])
    I32.pack_into(header, 4, len(spans) * blocksize)
    I32.pack_into(header, 12, position)
    return b"".join((header, starts.tobytes(), *(chunk[b:e] for b, e in spans)))


def blocks_head(chunk: Any, numbers: Sequence[int], begins: StreamOffsets,
                blocksize: int) -> bytes | None:
    """The header and block starts that make `chunk` itself a chunk of its full blocks
    ``numbers`` (their streams at ``begins[n]``), where they are: written over the
    chunk's first bytes, Blosc2 decodes just those blocks, in that order, into
    ``len(numbers) * blocksize`` bytes, with no copy of their streams (as
    :func:`blocks_chunk` makes).  None if a start is not past the chunk's own table of
    starts, or the header's compressed size is not the chunk's length.

    Examples
    --------
    >>> head = bytearray(CHUNK_EXTLEN)
    >>> I32.pack_into(head, 12, 80)
    >>> chunk = bytes(head) + struct.pack("<3i", 44, 56, 68) + bytes(36)
    >>> new = blocks_head(chunk, [2, 0], [44, 56, 68], 16)
    >>> I32.unpack_from(new, 4)[0], struct.unpack_from("<2i", new, CHUNK_EXTLEN)
    (32, (68, 44))
    """
    cbytes = len(chunk)
    count = len(numbers)
    starts = [int(begins[n]) for n in numbers]
    if (I32.unpack_from(chunk, 12)[0] != cbytes
            or min(starts) < CHUNK_EXTLEN + 4 * count or max(starts) >= cbytes):
        return None
    header = bytearray(chunk[:CHUNK_EXTLEN])
    I32.pack_into(header, 4, count * blocksize)
    return bytes(header) + _starts_table(count).pack(*starts)


def cut_blocks(chunk: Any, numbers: Sequence[int], begins: StreamOffsets, ends: StreamOffsets,
               blocksize: int, nbytes: int) -> bytes | None:
    """Blocks ``numbers`` of `chunk` (their streams at ``chunk[begins[n]:ends[n]]``) as a
    Blosc2 chunk of their own, decoded in one call into ``len(numbers) * blocksize``
    bytes: :func:`block_chunk` for one block (a short last one included),
    :func:`blocks_chunk` for several (full ones).  None if a range is not in the chunk."""
    if len(numbers) == 1:
        number = numbers[0]
        return block_chunk(chunk, number, int(begins[number]), int(ends[number]), blocksize,
                           nbytes)
    return blocks_chunk(chunk, [(int(begins[n]), int(ends[n])) for n in numbers], blocksize)


def frame_key(buf: bytes) -> tuple[bytes, int] | None:
    """The memo key of a frame and the end of its compressed data, or None.

    The key is the frame's bytes but for the frame length, compressed size and block size
    of its header and for the compressed data: the header before byte 16, bytes 24-38,
    47-52 and 57 to the header's end, then all bytes from the data's end.  The header
    length (bytes 11-14) is part of the key, so keys of different layouts never collide.
    None when the frame length is not ``len(buf)`` or the header length and compressed
    size do not fit in it (the caller parses the frame, which says what is wrong).

    Parameters
    ----------
    buf : bytes
        A whole frame.
    """
    size = len(buf)
    if size < _FRAME_MINLEN:
        return None
    header_len, frame_len, cbytes = _FRAME_SIZES.unpack_from(buf, 0)
    data_end = header_len + cbytes
    if frame_len != size or header_len < _HEADER_MINLEN or cbytes < 0 or data_end > size:
        return None
    return buf[:16] + buf[24:39] + buf[47:53] + buf[57:header_len] + buf[data_end:], data_end


_V = TypeVar("_V")


class LayoutMemo(dict[bytes, _V]):
    """A small dict of checked frame layouts by :func:`frame_key`, oldest entry dropped first.

    Reads (``get``) are plain dict reads; :meth:`put` takes a lock, so threads may share one.

    Parameters
    ----------
    maxsize : int
        Most entries kept.
    """

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize
        self._lock = threading.Lock()

    def put(self, key: bytes, value: _V) -> None:
        """Remember `value` for `key`, dropping the oldest entry when full."""
        with self._lock:
            if key not in self and len(self) >= self.maxsize:
                del self[next(iter(self))]
            self[key] = value


__all__ = [
    "CHUNK_EXTLEN",
    "CHUNK_HEAD",
    "CHUNK_MINLEN",
    "DONT_SPLIT",
    "GLOBAL_MAX_NBYTES",
    "I32",
    "I64",
    "LISTED_BLOCKS_MAX",
    "MEMCPYED",
    "LayoutMemo",
    "StreamOffsets",
    "block_chunk",
    "block_ends",
    "blocks_chunk",
    "blocks_head",
    "cut_blocks",
    "frame_key",
    "is_checked_block",
    "one_block",
]
