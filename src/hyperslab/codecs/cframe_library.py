"""Decoding the chunk frames :mod:`.cframe` does not vouch for, with python-blosc2.

:mod:`.cframe` decodes a frame itself only when it agrees with C-Blosc2 on every byte
C-Blosc2 acts on (:mod:`.cframe_check`).  Other frames, valid ones of other layouts
(several inner chunks, other metalayers) and damaged ones whose damage C-Blosc2 ignores
(a flipped msgpack marker, a dtype string, an unused header field), are decoded here as
the HDF5 filter decodes them: C-Blosc2 parses the frame and decompresses its chunks
(python-blosc2's ``SChunk``), and the ``b2nd`` metalayer is read the way C-Blosc2 reads
it (by position, markers skipped).

The geometry is checked before anything is decompressed, because C-Blosc2 trusts it: a
block shape larger than its chunk, or inner chunks smaller than the chunk and block
shapes make them, leave part of C-Blosc2's output unwritten, so the HDF5 filter returns
whatever that memory held.  Such frames raise ``ValueError`` here instead:

* a ``b2nd`` array must be the dataset's chunk, of the dataset's item size, in chunks
  each of exactly ``prod(ext_shape(chunkshape, blockshape)) * itemsize`` bytes, in blocks
  of ``prod(blockshape) * itemsize`` bytes; or, for one chunk whose block shape is longer
  than the chunk along some axis (a damaged metalayer), in as many blocks as the
  metalayer makes and holding every position C-Blosc2 reads items from;
* a plain frame is read as the filter reads it: its first chunk, which must hold at least
  the dataset's chunk (HDF5 keeps that many bytes) and at most twice that;
* no chunk may be uninitialized (C-Blosc2 writes nothing for it), lazy or instrumented;
* a ``b2nd`` chunk shape larger than its array (one chunk) is decoded by python-blosc2's
  ``NDArray``, as the filter decodes it: C-Blosc2 then decodes only the blocks the array
  covers, by number, each of the metalayer's block size.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Final, NamedTuple

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.codecs.blockshape import (
    B2ND_MAX_DIM,
    block_order_position,
    ext_shape,
    from_block_order,
)

_B2ND_NAMES: Final = ("b2nd", "caterva")
_UNWRITTEN: Final = 0x88  # lazy, instrumented: C-Blosc2 does not decode such a chunk's data
_UNINIT: Final = 4
_META_INDEX_AT: Final = 91  # the metalayers map: 0xDE, then the number of layers
_BE: Final = "big"


class FrameGeometry(NamedTuple):
    """A frame as C-Blosc2 reads it, checked against a dataset's chunk (see the module).

    Attributes
    ----------
    schunk : blosc2.SChunk
        The frame, parsed by C-Blosc2.
    chunk_nbytes : list of int
        Uncompressed bytes of each inner chunk (of the first only, for a plain frame).
    chunks, blocks : tuple of int or None
        The ``b2nd`` chunk and block shapes; None for a plain frame.
    oversized : bool
        Whether the ``b2nd`` chunk shape is larger than the array it holds (one chunk):
        C-Blosc2 then decodes only the blocks the array covers, which python-blosc2's
        ``NDArray`` does too.
    """

    schunk: Any
    chunk_nbytes: list[int]
    chunks: Shape | None
    blocks: Shape | None
    oversized: bool = False


class _Parsed(NamedTuple):
    schunk: Any
    names: list[str]
    heads: list[bytes]  # the first 32 bytes of each chunk (of the first, plain frames)
    sizes: list[tuple[int, int, int]]  # their (nbytes, cbytes, blocksize)


def _parse(raw: bytes) -> _Parsed:
    import blosc2  # imported on use: it costs ~0.4 s at start-up

    try:
        sc = blosc2.schunk_from_cframe(raw, copy=False)
        names = [name for name in _B2ND_NAMES if name in sc.meta]
        heads = [bytes(sc.get_chunk(i)[:32]) for i in range(sc.nchunks if names else 1)]
        sizes = [tuple(int(v) for v in blosc2.get_cbuffer_sizes(head)) for head in heads]
    except Exception as exc:  # python-blosc2 raises several kinds on garbage
        raise ValueError(f"not a Blosc2 frame ({len(raw)} bytes): {exc}") from exc
    for head in heads:
        if _special(head) == _UNINIT or (len(head) == 32 and head[31] & _UNWRITTEN):
            raise ValueError(f"the frame holds a chunk whose data is not stored in it "
                             f"(uninitialized, lazy or instrumented: flags {head[31]:#04x})")
    return _Parsed(sc, names, heads, sizes)  # type: ignore[arg-type]


def _special(head: bytes) -> int:
    """The special value kind of a chunk (0: none), from its header."""
    return (head[31] >> 4) & 0x07 if len(head) == 32 and head[2] & 0x05 == 0x05 else 0


def frame_geometry(raw: bytes, dtype: np.dtype[Any], chunkshape: Shape) -> FrameGeometry:
    """Parse `raw` with C-Blosc2 and check its geometry against the dataset's chunk.

    Raises
    ------
    ValueError
        If C-Blosc2 cannot parse the frame, or its geometry is not that of a chunk of
        `chunkshape` and `dtype` (see the module docstring).
    """
    parsed = _parse(raw)
    chunk_nbytes = [size[0] for size in parsed.sizes]
    if not parsed.names:
        expected = math.prod(chunkshape) * dtype.itemsize
        if not expected <= chunk_nbytes[0] <= 2 * expected:
            raise ValueError(
                f"the frame's first chunk holds {chunk_nbytes[0]} bytes, not a chunk of "
                f"{expected} (shape {chunkshape}, dtype {dtype})"
            )
        return FrameGeometry(parsed.schunk, chunk_nbytes, None, None)
    shape, chunks, blocks = _read_b2nd_meta(_metalayer(raw, parsed.names[0].encode()))
    typesize = int(parsed.schunk.typesize)
    if shape != chunkshape:
        raise ValueError(f"the b2nd frame holds shape {shape}, not chunk {chunkshape}")
    if typesize != dtype.itemsize:
        raise ValueError(
            f"the b2nd frame holds {typesize}-byte items, not {dtype.itemsize} ({dtype})"
        )
    if not all(1 <= b <= c for b, c in zip(blocks, chunks, strict=True)):
        return _loose_geometry(parsed, shape, chunks, blocks, typesize)
    block = math.prod(blocks) * typesize
    each = math.prod(ext_shape(chunks, blocks)) * typesize
    count = math.prod(-(-a // c) for a, c in zip(shape, chunks, strict=True))
    oversized = count == 1 and chunks != shape
    # A chunk of special values is the same in any block order; others must be cut in
    # the metalayer's blocks (C-Blosc2 decodes them by number).
    blocks_fit = all(size[2] == block or _special(head)
                     for head, size in zip(parsed.heads, parsed.sizes, strict=True))
    sizes_fit = (len(chunk_nbytes) == 1 and 0 < chunk_nbytes[0] <= each
                 and chunk_nbytes[0] % block == 0) if oversized else chunk_nbytes == [each] * count
    if not (blocks_fit and sizes_fit):
        raise ValueError(
            f"the b2nd frame's {len(chunk_nbytes)} chunks of {chunk_nbytes[:4]} bytes in "
            f"blocks of {sorted({size[2] for size in parsed.sizes})[:4]} are not {count} "
            f"chunks {chunks} in blocks {blocks} of {typesize}-byte items ({each} bytes "
            f"each, blocks of {block})"
        )
    return FrameGeometry(parsed.schunk, chunk_nbytes, chunks, blocks, oversized)


def _loose_geometry(parsed: _Parsed, shape: Shape, chunks: Shape, blocks: Shape,
                    typesize: int) -> FrameGeometry:
    """A one-chunk frame whose b2nd blocks are longer than its chunk along some axis (a
    damaged metalayer), if C-Blosc2 decodes it the same way every time.

    C-Blosc2 decompresses the chunk into a buffer of the extended chunk's size, then reads
    each item at its position in the metalayer's blocks; it tells the chunk's blocks by
    number (an error if the chunk has another number of them).  Items at positions past
    the bytes the chunk holds would be whatever that buffer held: refused.
    """
    if any(b < 1 for b in blocks):
        raise ValueError(f"the b2nd frame's blocks {blocks} do not fit its chunks {chunks}")
    nbytes, _, blocksize = parsed.sizes[0]
    each = math.prod(ext_shape(chunks, blocks)) * typesize
    nblocks = math.prod(e // b for e, b in zip(ext_shape(chunks, blocks), blocks, strict=True))
    corner = tuple(n - 1 for n in shape)
    needed = (block_order_position(corner, shape, chunks, blocks) + 1) * typesize
    if (len(parsed.heads) != 1 or chunks != shape or blocksize <= 0
            or -(-nbytes // blocksize) != nblocks or not needed <= nbytes <= each):
        raise ValueError(
            f"the b2nd frame's blocks {blocks} do not fit its chunks {chunks}, and its "
            f"{nbytes} bytes in blocks of {blocksize} do not hold every item there"
        )
    return FrameGeometry(parsed.schunk, [nbytes], chunks, blocks)


def decode_with_library(raw: bytes, dtype: np.dtype[Any], chunkshape: Shape) -> AnyArray:
    """A whole chunk of `chunkshape` and `dtype` from a frame, decompressed by C-Blosc2.

    Raises
    ------
    ValueError
        As :func:`frame_geometry`, or if C-Blosc2 cannot decompress a chunk.
    """
    geometry = frame_geometry(raw, dtype, chunkshape)
    out: AnyArray = np.zeros(chunkshape, dtype=dtype)
    flat = out.reshape(-1).view(np.uint8)
    sc = geometry.schunk
    try:
        if geometry.chunks is None or geometry.blocks is None:
            first = np.zeros(geometry.chunk_nbytes[0], dtype=np.uint8)
            sc.decompress_chunk(0, first)
            flat[...] = first[: flat.shape[0]]
            return out
        if geometry.oversized:
            import blosc2  # imported on use: it costs ~0.4 s at start-up

            flat[...] = np.asarray(blosc2.ndarray_from_cframe(raw)[...]).reshape(-1).view(
                np.uint8)
            return out
        _decode_chunks(sc, geometry, out, chunkshape)
    except Exception as exc:  # python-blosc2 raises several kinds on garbage
        raise ValueError(f"python-blosc2 cannot decompress the frame: {exc}") from exc
    return out


def _decode_chunks(sc: Any, geometry: FrameGeometry, out: AnyArray, shape: Shape) -> None:
    """Decode the b2nd chunks of `sc` into `out`, each in its place."""
    chunks, blocks = geometry.chunks, geometry.blocks
    assert chunks is not None and blocks is not None
    items = out.view(np.dtype((np.void, out.dtype.itemsize)))
    grid = [range(0, a, c) for a, c in zip(shape, chunks, strict=True)]
    extended = math.prod(ext_shape(chunks, blocks)) * out.dtype.itemsize
    for number, starts in enumerate(itertools.product(*grid)):
        whole = np.zeros(max(extended, geometry.chunk_nbytes[number]), dtype=np.uint8)
        sc.decompress_chunk(number, whole[: geometry.chunk_nbytes[number]])
        part = np.empty(chunks, dtype=items.dtype)
        from_block_order(whole, part, chunks, blocks)
        region = tuple(slice(a, min(a + c, s))
                       for a, c, s in zip(starts, chunks, shape, strict=True))
        items[region] = part[tuple(slice(0, r.stop - r.start) for r in region)]


def _metalayer(raw: bytes, name: bytes) -> bytes:
    """The content of the metalayer `name`, found as C-Blosc2 finds it (the index of
    metalayers after the fixed header; README_CFRAME_FORMAT.rst)."""
    header_len = int.from_bytes(raw[11:15], _BE, signed=True)
    header = raw[: max(0, header_len)]
    end = len(header)
    if end < _META_INDEX_AT + 3 or header[_META_INDEX_AT] != 0xDE:
        raise ValueError("bad metalayers index in the frame header")
    pos = _META_INDEX_AT + 3
    for _ in range(int.from_bytes(header[_META_INDEX_AT + 1 : pos], _BE)):
        if pos >= end or header[pos] & 0xE0 != 0xA0:
            raise ValueError("bad metalayer name in the frame header")
        name_end = pos + 1 + (header[pos] & 0x1F)
        if name_end + 5 > end or header[name_end] != 0xD2:
            raise ValueError("bad metalayer index in the frame header")
        offset = int.from_bytes(header[name_end + 1 : name_end + 5], _BE, signed=True)
        if header[pos + 1 : name_end] == name:
            if not 0 <= offset <= end - 5 or header[offset] != 0xC6:
                raise ValueError(f"bad offset {offset} of the {name.decode()} metalayer")
            length = int.from_bytes(header[offset + 1 : offset + 5], _BE, signed=True)
            if not 0 <= length <= end - offset - 5:
                raise ValueError(f"bad length {length} of the {name.decode()} metalayer")
            return header[offset + 5 : offset + 5 + length]
        pos = name_end + 5
    raise ValueError(f"no {name.decode()} metalayer in the frame header")


def _read_b2nd_meta(meta: bytes) -> tuple[Shape, Shape, Shape]:
    """(shape, chunkshape, blockshape) of a ``b2nd`` metalayer read by position, as
    C-Blosc2's ``b2nd_deserialize_meta`` reads it (markers are skipped, not checked)."""
    if len(meta) < 4:
        raise ValueError("truncated b2nd metalayer")
    ndim = meta[2]
    if not 1 <= ndim <= B2ND_MAX_DIM:
        raise ValueError(f"b2nd metalayer of rank {ndim}, not 1..{B2ND_MAX_DIM}")
    pos = 3
    dims: list[Shape] = []
    for width in (8, 4, 4):
        pos += 1  # the array's marker
        if pos + ndim * (1 + width) > len(meta):
            raise ValueError("truncated b2nd metalayer")
        dims.append(tuple(int.from_bytes(meta[p + 1 : p + 1 + width], _BE, signed=True)
                          for p in range(pos, pos + ndim * (1 + width), 1 + width)))
        pos += ndim * (1 + width)
    if pos < len(meta):  # the dtype: its format, a str32 marker, its length, its text
        length = int.from_bytes(meta[pos + 2 : pos + 6], _BE, signed=True)
        if pos + 6 > len(meta) or meta[pos + 1] != 0xDB or not 0 <= length <= len(
                meta) - pos - 6:
            raise ValueError("bad dtype in the b2nd metalayer")
    return dims[0], dims[1], dims[2]


__all__ = ["FrameGeometry", "decode_with_library", "frame_geometry"]
