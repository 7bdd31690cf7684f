"""Which Blosc2 chunk frames :mod:`.cframe` decodes itself: each field checked against
what it relies on and what C-Blosc2 (the HDF5 filter's decoder) acts on.

:mod:`.cframe` reads frames with its own parser so that it can decompress single items
and single blocks.  Its answer must be the filter's, byte for byte, so it decodes a frame
itself only where it agrees with C-Blosc2 on every byte C-Blosc2 acts on; anything else
raises :class:`FrameError`, and the caller hands the chunk to python-blosc2 (the
filter's own library, which then decodes it or says why not).  So these checks may
refuse frames that are valid: they are decoded the slow way, never guessed at.

What the parser accepts (README_CFRAME_FORMAT.rst, README_CHUNK_FORMAT.rst,
README_B2ND_METALAYER.rst):

* the fixed header as the filter, PyTables, python-blosc2 and :class:`.FrameEncoder`
  write it (all write the same bytes): a contiguous frame of format 0..3 with 64-bit
  offsets, one chunk (``chunk_size`` equal to the data size), no variable-length parts,
  built-in filters and codecs, no dictionary;
* metalayers exactly as :func:`layers_bytes` writes them: none, or one ``b2nd`` layer
  whose shape equals its chunk shape (one chunk holds the whole array) and whose item
  size is the frame's type size (1 for items over 255 bytes, as C-Blosc2 records them);
* the index of chunk offsets and the trailer exactly as written (a 40-byte uncompressed
  offsets chunk holding 0, or a special value, then the 35-byte trailer);
* an inner chunk that fills the frame's data section, with an extended header whose item
  and data sizes are the frame's, whose block size is the frame's (for ``b2nd`` frames:
  ``prod(blockshape) * itemsize``: a block shape changed in the metalayer no longer
  matches), with no lazy, instrumented, variable-length-block or other flagged layout;
  a chunk of special values is exactly a header (zeros, NaNs, uninitialized) or a header
  and one item (a repeated value), and an uncompressed one exactly a header and its data.

Nothing here decompresses: every check is a comparison of a few header fields, once
per chunk (and metalayers are checked once per distinct layout, see
:func:`check_layers`).
"""

from __future__ import annotations

import struct
from typing import Any, Final

from hyperslab._typing import Shape
from hyperslab.codecs.blockshape import b2nd_meta_bytes

HEADER_MINLEN: Final = 87
"""Length of the fixed frame header (where the metalayers start)."""
HEADER: Final = struct.Struct(">10sBiBQB4sBqBqBiBiBiBhBhBBB16s")
"""The fixed frame header: msgpack markers interleaved with big-endian fields."""
MAGIC: Final = b"\x9e\xa8b2frame\x00"
_MARKERS: Final = (0xD2, 0xCF, 0xA4, 0xD3, 0xD3, 0xD2, 0xD2, 0xD2, 0xD1, 0xD1, 0xD8)
_NO_VLMETA: Final = 0xC2  # msgpack False: no variable-length metalayers in the trailer
_NFILTERS: Final = 6
_BUILTIN_FILTERS: Final = b"\x00\x01\x02\x03\x04"  # none, shuffle, bitshuffle, delta, trunc
_CODECS: Final = frozenset((0, 1, 2, 4, 5, 6))  # blosclz, lz4, lz4hc, zlib, zstd, user slot
UDCODEC_FORMAT: Final = 6
"""codec_flags value for codecs past the built-in ones (then named in the pipeline)."""
MAX_TYPESIZE: Final = 255
"""Largest type size Blosc2 records (larger items are recorded as 1)."""

SPECIAL_ZERO: Final = 1
"""Special value kind of a chunk of zeros (a bare offset, or a chunk header alone)."""
SPECIAL_NAN: Final = 2
"""Special value kind of a chunk of NaNs (4- or 8-byte items)."""
SPECIAL_VALUE: Final = 3
"""Special value kind of a chunk of one repeated item (a chunk header and the item)."""
SPECIAL_UNINIT: Final = 4
"""Special value kind of an uninitialized chunk (read as zeros here)."""

_CHUNK: Final = struct.Struct("<BBBBiii")
_EXTLEN: Final = 32
_MEMCPYED: Final = 0x02
_ODD_CHUNK_FLAGS: Final = 0x8E  # instrumented, lazy, codec byte before, extended twice
_I64: Final = struct.Struct("<q")

_OFFSETS_HEAD: Final = (
    _CHUNK.pack(5, 1, 0x07, 8, 8, 8, _EXTLEN + 8) + bytes((0, 0, 0, 0, 0, 1)) + bytes(10)
)
"""The 32-byte header of the uncompressed chunk holding a frame's only chunk offset."""
TRAILER: Final = (
    b"\x94\x01\x93\xcd\x00\x06\xde\x00\x00\xdc\x00\x00\xce\x00\x00\x00\x23\xd8\x00" + bytes(16)
)
"""The frame trailer (version 1, no variable-length metalayers, no fingerprint)."""
TAIL_LEN: Final = len(_OFFSETS_HEAD) + 8 + len(TRAILER)
PLAIN_LAYERS: Final = b"\x93\xcd\x00\x07\xde\x00\x00\xdc\x00\x00"
"""The metalayers section of a frame without metalayers."""


class FrameError(ValueError):
    """A chunk frame that is malformed, truncated, or of a kind :mod:`.cframe` does not
    decode itself (python-blosc2 may: see the module docstring)."""


def offsets_chunk(offset: int) -> bytes:
    """The 40-byte, uncompressed Blosc2 chunk holding one chunk offset."""
    return _OFFSETS_HEAD + _I64.pack(offset)


def layers_bytes(meta: bytes | None) -> bytes:
    """The metalayers section of a frame holding the ``b2nd`` layer `meta` (or none)."""
    if meta is None:
        return PLAIN_LAYERS
    offset = HEADER_MINLEN + 20
    return b"".join((
        b"\x93\xcd\x00\x11\xde\x00\x01\xa4b2nd\xd2", offset.to_bytes(4, "big", signed=True),
        b"\xdc\x00\x01\xc6", len(meta).to_bytes(4, "big", signed=True), meta,
    ))


def check_layers(layers: bytes, shape: Shape, chunkshape: Shape, blockshape: Shape,
                 dtype: str | None) -> None:
    """Check that the metalayers section `layers` is the one :func:`layers_bytes` writes
    for this ``b2nd`` layout, one chunk holding the whole array.

    Raises
    ------
    FrameError
        Otherwise (other metalayers, another encoding of the same values, a shape other
        than the chunk shape).
    """
    if shape != chunkshape:
        raise FrameError(f"the b2nd frame holds an array of shape {shape} in chunks of "
                         f"{chunkshape}, not one chunk")
    if dtype is None or layers != layers_bytes(
            b2nd_meta_bytes(shape, chunkshape, blockshape, dtype)):
        raise FrameError("the frame's metalayers are not a b2nd layer as the Blosc2 filter "
                         "writes it")


def check_fixed_header(fields: tuple[Any, ...], size: int) -> None:
    """Check the fixed part of a frame header (unpacked by :data:`HEADER`) against `size`.

    Raises
    ------
    FrameError
        If it is not a one-chunk contiguous frame as described in the module docstring.
    """
    if fields[0] != MAGIC:
        raise FrameError(f"not a Blosc2 frame: it starts with {bytes(fields[0])!r}")
    if fields[1:21:2] != _MARKERS[:10] or fields[22] != _MARKERS[10]:
        raise FrameError("not a Blosc2 frame: bad msgpack markers in its header")
    header_len, frame_len = fields[2], fields[4]
    nbytes, cbytes, typesize, blocksize, chunksize = fields[8], fields[10], fields[12], \
        fields[14], fields[16]
    if frame_len != size:
        raise FrameError(f"the frame header gives {frame_len} bytes, the buffer has {size}")
    if not HEADER_MINLEN <= header_len <= size - TAIL_LEN:
        raise FrameError(f"bad frame header length {header_len} for a {size}-byte frame")
    if not 0 < typesize <= MAX_TYPESIZE or nbytes <= 0 or chunksize != nbytes or blocksize <= 0:
        raise FrameError(
            f"bad frame sizes: typesize={typesize}, nbytes={nbytes}, chunksize={chunksize}, "
            f"blocksize={blocksize} (one chunk of {nbytes} bytes is expected)"
        )
    if cbytes < 0 or header_len + cbytes != size - TAIL_LEN:
        raise FrameError(f"bad compressed size {cbytes} for a {size}-byte frame with a "
                         f"{header_len}-byte header")
    _check_flags(fields)


def _check_flags(fields: tuple[Any, ...]) -> None:
    general, frame_type, codec_flags, other_flags = fields[6]
    pipeline = fields[24]
    if general & 0x0F > 3 or general & 0xF0 != 0x10:
        raise FrameError(f"unsupported frame format flags {general:#04x}")
    if frame_type:
        raise FrameError(f"not a contiguous frame (frame type {frame_type:#04x})")
    if codec_flags & 0x0F not in _CODECS or codec_flags >> 4 > 9 or other_flags > 3:
        raise FrameError(f"unsupported frame codec flags {codec_flags:#04x}, "
                         f"{other_flags:#04x}")
    if (fields[21] != _NO_VLMETA or fields[23] != _NFILTERS
            or bytes(pipeline[:_NFILTERS]).strip(_BUILTIN_FILTERS) or pipeline[14]):
        raise FrameError(f"unsupported frame pipeline {bytes(pipeline).hex()} "
                         f"(or variable-length metalayers)")


def special_kind(offset: int) -> int:
    """The special value of a chunk stored as the negative `offset`, as C-Blosc2 reads it.

    Raises
    ------
    FrameError
        If the offset names no special value C-Blosc2 knows.
    """
    kind = (offset >> 56) & 0x7F
    for special in (SPECIAL_ZERO, SPECIAL_UNINIT, SPECIAL_NAN):
        if kind & special:
            return special
    raise FrameError(f"unknown special chunk offset {offset & (2**64 - 1):#018x}")


def chunk_offset(view: Any, at: int, size: int) -> int:
    """The offset of the frame's only chunk, from the offsets chunk and trailer that fill
    ``view[at:size]``: 0, or negative for a chunk of special values.

    Raises
    ------
    FrameError
        If they are not written as in the module docstring.
    """
    if size - at != TAIL_LEN or view[at : at + _EXTLEN] != _OFFSETS_HEAD \
            or view[at + _EXTLEN + 8 : size] != TRAILER:
        raise FrameError(f"the frame's chunk offsets and trailer (bytes {at}..{size}) are "
                         "not those of a one-chunk frame")
    offset = int(_I64.unpack_from(view, at + _EXTLEN)[0])
    if offset > 0:
        raise FrameError(f"the frame's only chunk is at offset {offset}, not 0")
    if offset < 0:
        special_kind(offset)
    return offset


def check_special_frame(nbytes: int, typesize: int, blocksize: int, kind: int,
                        block_nbytes: int | None) -> None:
    """Check the sizes C-Blosc2 builds a chunk of special values from (frame header).

    `block_nbytes` is the ``b2nd`` block's size in bytes, or None for a plain frame.
    """
    if (nbytes % typesize or blocksize % typesize or blocksize > nbytes
            or (block_nbytes is not None and blocksize != block_nbytes)
            or (kind == SPECIAL_NAN and typesize not in (4, 8))):
        raise FrameError(
            f"a chunk of special values (kind {kind}) of {nbytes} bytes cannot have "
            f"{typesize}-byte items in blocks of {blocksize} bytes"
        )


def check_chunk(view: Any, start: int, data_end: int, nbytes: int, typesize: int,
                blocksize: int) -> int:
    """Check the inner chunk's header against the frame's; return its special value kind.

    `nbytes`, `typesize` and `blocksize` are what the frame says the chunk holds (its
    data size, its type size as recorded in the frame header, and the block size:
    ``prod(blockshape) * itemsize`` for ``b2nd`` frames, the frame header's otherwise).

    Raises
    ------
    FrameError
        If the chunk is not as described in the module docstring.
    """
    if start + _EXTLEN > data_end:
        raise FrameError(f"the chunk offset {start} lies outside the frame's data")
    _, _, chunk_flags, chunk_typesize, chunk_nbytes, chunk_blocksize, cbytes = (
        _CHUNK.unpack_from(view, start))
    if cbytes != data_end - start or chunk_flags & 0x05 != 0x05:
        raise FrameError(f"bad chunk size {cbytes} at byte {start} (the frame's data ends "
                         f"at {data_end}), or not an extended chunk header")
    if chunk_nbytes != nbytes or chunk_typesize != typesize:
        raise FrameError(f"the chunk holds {chunk_nbytes} bytes of {chunk_typesize}-byte "
                         f"items, the frame says {nbytes} of {typesize}")
    if chunk_blocksize != blocksize:
        raise FrameError(f"the chunk's blocks are of {chunk_blocksize} bytes, the frame's of "
                         f"{blocksize} (a block shape that does not match the chunk?)")
    flags2, blosc2_flags = view[start + 30], view[start + 31]
    if flags2 or blosc2_flags & _ODD_CHUNK_FLAGS:
        raise FrameError(f"unsupported chunk flags {flags2:#04x}, {blosc2_flags:#04x} (lazy, "
                         "instrumented or variable-length blocks)")
    special = (blosc2_flags >> 4) & 0x07
    memcpyed = chunk_flags & _MEMCPYED
    if special:
        _check_special_chunk(special, memcpyed, cbytes, chunk_nbytes, chunk_typesize)
    elif memcpyed and cbytes != chunk_nbytes + _EXTLEN:
        raise FrameError(f"bad uncompressed chunk: {cbytes} bytes for {chunk_nbytes}")
    return special


def _check_special_chunk(special: int, memcpyed: int, cbytes: int, nbytes: int,
                         typesize: int) -> None:
    """A chunk of special values is a header (and, for a repeated value, one item)."""
    expected = _EXTLEN + typesize if special == SPECIAL_VALUE else _EXTLEN
    if memcpyed or special > SPECIAL_UNINIT or cbytes != expected or nbytes % typesize or (
            special == SPECIAL_NAN and typesize not in (4, 8)):
        raise FrameError(
            f"bad chunk of special values (kind {special}): {cbytes} bytes for {nbytes} "
            f"bytes of {typesize}-byte items (a header{' and one item' if special == 3 else ''}"
            " is expected)"
        )


__all__ = [
    "HEADER",
    "HEADER_MINLEN",
    "MAGIC",
    "MAX_TYPESIZE",
    "PLAIN_LAYERS",
    "SPECIAL_NAN",
    "SPECIAL_UNINIT",
    "SPECIAL_VALUE",
    "SPECIAL_ZERO",
    "TAIL_LEN",
    "TRAILER",
    "UDCODEC_FORMAT",
    "FrameError",
    "check_chunk",
    "check_fixed_header",
    "check_layers",
    "check_special_frame",
    "chunk_offset",
    "layers_bytes",
    "offsets_chunk",
    "special_kind",
]
