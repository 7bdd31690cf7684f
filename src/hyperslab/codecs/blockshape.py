"""The b2nd chunk layout: block shapes, block order, and the ``b2nd`` metalayer.

A b2nd chunk (docs/format.md §2) is cut into blocks of ``blockshape`` items, each compressed on
its own.  Its uncompressed bytes are stored *block by block*: blocks in C order of the block
grid, the items of each block in C order, and blocks at the far edges padded to the full
block shape (so the stored chunk has the *extended* shape, every dimension rounded up to a
multiple of the block).  Reading or writing such a chunk from C-ordered data therefore
needs a reordering copy, except when the blocks are C-contiguous slabs of the chunk
(:func:`blocks_are_c_order`), which :func:`choose_blockshape` prefers.

Block size rule (:func:`choose_blockshape`, tuned in issue 5):

1. The target is ``target_bytes`` or, by default, :func:`default_block_bytes`: a quarter
   of one core's L2 cache, within 32 KiB..1 MiB, so that a block, its compressed copy and
   Blosc2's filter buffers stay in L2.  The default depends on the host's L2 size; pass
   ``target_bytes`` for a host-independent result.
2. A chunk that fits in the target is one block.
3. Otherwise the block spans the chunk's trailing dimensions in full from the outermost
   dimension ``k`` whose trailing dimensions fit, is 1 before ``k``, and along ``k`` holds
   about ``target // (bytes of the trailing dims)`` items: the largest divisor of the chunk
   dimension up to that count when it is at least half of it (no padding), else the
   length that splits the dimension into equal-as-possible blocks (padding < 1 block).

Blocks chosen this way are C-contiguous slabs whenever ``k`` is 0 or the divisor was
found, so encoding and decoding need no reordering.

The ``b2nd`` metalayer (C-Blosc2's README_B2ND_METALAYER.rst) records shape, chunk shape,
block shape and dtype: :func:`b2nd_meta_bytes` writes it as C-Blosc2 does,
:func:`parse_b2nd_meta` reads it.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.codecs.validate import as_int

DEFAULT_L2_BYTES: Final = 1024 * 1024
"""L2 size assumed when the host does not report one (1 MiB, a common per-core L2)."""
MIN_BLOCK_BYTES: Final = 32 * 1024
"""Smallest default block target (C-Blosc2 avoids blocks under 32 KiB as well)."""
MAX_BLOCK_BYTES: Final = 1024 * 1024
"""Largest default block target."""

B2ND_MAX_DIM: Final = 16
"""Largest rank of a b2nd array."""

_CACHE_DIR: Final = Path("/sys/devices/system/cpu/cpu0/cache")
_UNITS: Final = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_MAX_INT32: Final = 2**31 - 1


def _parse_cache_size(text: str) -> int | None:
    """``'512K'`` -> 524288; ``None`` for anything unexpected."""
    text = text.strip().upper()
    unit = text[-1:] if text[-1:] in _UNITS else ""
    digits = text[: len(text) - len(unit)]
    if not digits.isdigit():
        return None
    size = int(digits) * _UNITS[unit]
    return size if size > 0 else None


@functools.cache
def l2_cache_bytes() -> int:
    """Return the size in bytes of the L2 cache of CPU 0.

    Read from ``/sys/devices/system/cpu/cpu0/cache/index*/`` (Linux); where that is not
    available or reports no level-2 data or unified cache, :data:`DEFAULT_L2_BYTES`.
    """
    try:
        entries = sorted(_CACHE_DIR.glob("index*"))
        for entry in entries:
            level = (entry / "level").read_text().strip()
            kind = (entry / "type").read_text().strip()
            if level == "2" and kind in ("Unified", "Data"):
                size = _parse_cache_size((entry / "size").read_text())
                if size is not None:
                    return size
    except OSError:
        pass
    return DEFAULT_L2_BYTES


def default_block_bytes() -> int:
    """Return the default block target: ``l2_cache_bytes() // 4`` within 32 KiB..1 MiB."""
    return min(max(l2_cache_bytes() // 4, MIN_BLOCK_BYTES), MAX_BLOCK_BYTES)


def _as_shape(name: str, shape: Sequence[int]) -> Shape:
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of positive integers, got {shape!r}") from None
    if not dims:
        raise ValueError(f"{name} must have at least one dimension, got {shape!r}")
    return tuple(as_int(f"{name}[{i}]", d, 1, _MAX_INT32) for i, d in enumerate(dims))


@functools.lru_cache(maxsize=1024)
def _largest_divisor_at_most(n: int, limit: int) -> int:
    """The largest divisor of ``n`` that is ``<= limit`` (``limit >= 1``)."""
    best = 1
    i = 1
    while i * i <= n:
        if n % i == 0:
            if i <= limit:
                best = max(best, i)
            if n // i <= limit:
                best = max(best, n // i)
        i += 1
    return best


def choose_blockshape(
    chunkshape: Sequence[int], itemsize: int, target_bytes: int | None = None
) -> Shape:
    """Return a b2nd block shape of about `target_bytes` for chunks of `chunkshape`.

    The rule is in the module docstring: whole trailing dimensions first, so that blocks
    are C-contiguous slabs of the chunk.  Deterministic for given arguments (the default
    target depends on the host's L2 size, see :func:`default_block_bytes`).

    Parameters
    ----------
    chunkshape : sequence of int
        The chunk shape (positive dims).
    itemsize : int
        Bytes per item.
    target_bytes : int, optional
        Aimed-at block size in bytes; default :func:`default_block_bytes`.

    Raises
    ------
    ValueError
        If a dimension, `itemsize` or `target_bytes` is not a positive integer.

    Examples
    --------
    >>> choose_blockshape((1000, 100), 8, 65536)
    (50, 100)
    >>> choose_blockshape((1, 4096, 4096), 2, 131072)
    (1, 16, 4096)
    >>> choose_blockshape((4, 4), 8, 65536)
    (4, 4)
    """
    shape = _as_shape("chunkshape", chunkshape)
    size = as_int("itemsize", itemsize, 1)
    target = default_block_bytes() if target_bytes is None else as_int(
        "target_bytes", target_bytes, 1
    )
    target_items = max(1, target // size)
    if math.prod(shape) <= target_items:
        return shape
    k = next(i for i in range(len(shape)) if math.prod(shape[i + 1 :]) <= target_items)
    want = max(1, target_items // math.prod(shape[k + 1 :]))
    length = _largest_divisor_at_most(shape[k], want)
    if 2 * length < want:
        nblocks = -(-shape[k] // want)
        length = -(-shape[k] // nblocks)
    return (1,) * k + (length,) + shape[k + 1 :]


def ext_shape(chunkshape: Sequence[int], blockshape: Sequence[int]) -> Shape:
    """Return `chunkshape` with each dimension rounded up to a multiple of the block."""
    return tuple(-(-c // b) * b for c, b in zip(chunkshape, blockshape, strict=True))


def blocks_are_c_order(
    shape: Sequence[int], chunkshape: Sequence[int], blockshape: Sequence[int]
) -> bool:
    """Whether C-ordered data of `shape` is the start of the block-ordered chunk.

    True when the blocks are C-contiguous slabs of the chunk (block dims are 1 up to
    some axis ``k``, then any length, then the full chunk dims, with no padding after
    axis 0) and `shape` (the array stored in the chunk, at most `chunkshape`) differs
    from the extended chunk shape only along axis 0.

    Examples
    --------
    >>> blocks_are_c_order((10, 4), (10, 4), (3, 4)), blocks_are_c_order((4, 4), (4, 4), (2, 2))
    (True, False)
    """
    ext = ext_shape(chunkshape, blockshape)
    if tuple(shape[1:]) != ext[1:]:
        return False
    n = len(blockshape)
    k = next((i for i in range(n) if blockshape[i] != 1), n - 1)
    return all(blockshape[i] == chunkshape[i] for i in range(k + 1, n))


def _item_view(array: AnyArray, shape: Shape) -> AnyArray:
    """`array`'s bytes as unsigned ints of `shape` + (words per item,), for fast copies."""
    itemsize = array.dtype.itemsize
    base = next(b for b in (8, 4, 2, 1) if itemsize % b == 0)
    flat = array.reshape(-1).view(np.dtype(f"<u{base}"))
    return flat.reshape((*shape, itemsize // base))


def _interleave(grid: Shape, block: Shape) -> tuple[int, ...]:
    return tuple(d for pair in zip(grid, block, strict=True) for d in pair)


def to_block_order(chunk: AnyArray, blockshape: Sequence[int]) -> AnyArray:
    """Return the bytes of `chunk` laid out block by block, as Blosc2's b2nd stores them.

    Parameters
    ----------
    chunk : numpy.ndarray
        A C-contiguous chunk (any dtype); its shape is the chunk shape.
    blockshape : sequence of int
        The block shape (same rank, each dim at most the chunk's).

    Returns
    -------
    numpy.ndarray
        A C-contiguous array holding ``prod(ext_shape) * itemsize`` bytes; `chunk`
        itself when its C order already is the block order, padding zero-filled.
    """
    shape: Shape = tuple(chunk.shape)
    block = tuple(blockshape)
    ext = ext_shape(shape, block)
    if blocks_are_c_order(shape, shape, block):
        if ext == shape:
            return chunk
        padded = np.zeros(math.prod(ext) * chunk.dtype.itemsize, dtype=np.uint8)
        padded[: chunk.nbytes] = chunk.reshape(-1).view(np.uint8)
        return padded
    items = _item_view(chunk, shape)
    if ext != shape:
        grown = np.zeros((*ext, items.shape[-1]), dtype=items.dtype)
        grown[tuple(slice(0, d) for d in shape)] = items
        items = grown
    n = len(shape)
    grid = tuple(e // b for e, b in zip(ext, block, strict=True))
    split = items.reshape((*_interleave(grid, block), items.shape[-1]))
    perm = (*range(0, 2 * n, 2), *range(1, 2 * n, 2), 2 * n)
    out = np.empty((*grid, *block, items.shape[-1]), dtype=items.dtype)
    np.copyto(out, split.transpose(perm))
    return out


def from_block_order(
    blocked: AnyArray,
    out: AnyArray,
    chunkshape: Sequence[int],
    blockshape: Sequence[int],
    shape: Sequence[int] | None = None,
) -> None:
    """Copy a block-ordered chunk into the C-ordered array `out`.

    Parameters
    ----------
    blocked : numpy.ndarray
        C-contiguous, the decompressed chunk: ``prod(ext_shape) * itemsize`` bytes.
    out : numpy.ndarray
        C-contiguous and writeable, of ``prod(shape) * itemsize`` bytes, any dtype (its
        bytes are overwritten; the chunk's item size is ``out.nbytes // prod(shape)``).
    chunkshape, blockshape : sequence of int
        The b2nd chunk and block shapes.
    shape : sequence of int, optional
        The shape of the data in the chunk (at most `chunkshape`); default `chunkshape`.
    """
    chunk = tuple(chunkshape)
    block = tuple(blockshape)
    data_shape = chunk if shape is None else tuple(shape)
    ext = ext_shape(chunk, block)
    nitems = math.prod(data_shape)
    itemsize = out.nbytes // nitems
    n = len(chunk)
    grid = tuple(e // b for e, b in zip(ext, block, strict=True))
    src_bytes = blocked.reshape(-1).view(np.uint8)
    words = _item_view(src_bytes.view(np.dtype(f"V{itemsize}")), (*grid, *block))
    perm = (*(a for i in range(n) for a in (i, n + i)), 2 * n)
    target = _item_view(out.reshape(-1).view(np.dtype(f"V{itemsize}")), data_shape)
    if data_shape == ext:
        split = target.reshape((*_interleave(grid, block), words.shape[-1]))
        np.copyto(split, words.transpose(perm))
        return
    whole = np.empty((*_interleave(grid, block), words.shape[-1]), dtype=words.dtype)
    np.copyto(whole, words.transpose(perm))
    corner = tuple(slice(0, d) for d in data_shape)
    np.copyto(target, whole.reshape((*ext, words.shape[-1]))[corner])


@functools.lru_cache(maxsize=256)
def _block_grid(chunkshape: Shape, blockshape: Shape) -> tuple[Shape, int]:
    """Blocks per dimension of a chunk, and items per block."""
    grid = tuple(e // b for e, b in zip(ext_shape(chunkshape, blockshape), blockshape, strict=True))
    return grid, math.prod(blockshape)


def block_order_position(
    index: Sequence[int], shape: Shape, chunkshape: Shape, blockshape: Shape
) -> int:
    """Return the item number, in block order, of the array item at `index`.

    Parameters
    ----------
    index : sequence of int
        Position in the array of `shape` (negative entries count from the end).
    shape, chunkshape, blockshape : tuple of int
        The array (at most the chunk), chunk and block shapes.  With all three equal
        this is the C-order position.

    Raises
    ------
    IndexError
        If `index` has another rank or is out of bounds.

    Examples
    --------
    >>> block_order_position((1, 2), (4, 4), (4, 4), (2, 2))
    6
    """
    if len(index) != len(shape):
        raise IndexError(f"index {tuple(index)} has {len(index)} dims, the chunk has shape {shape}")
    grid, block_items = _block_grid(chunkshape, blockshape)
    nblock = inner = 0
    for i, n, b, g in zip(index, shape, blockshape, grid, strict=True):
        i = operator.index(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"index {tuple(index)} is out of bounds for a chunk of shape {shape}")
        nblock = nblock * g + i // b
        inner = inner * b + i % b
    return nblock * block_items + inner


def b2nd_meta_bytes(shape: Shape, chunkshape: Shape, blockshape: Shape, dtype: str) -> bytes:
    """Return the ``b2nd`` metalayer content, as C-Blosc2's ``b2nd_serialize_meta`` writes it."""
    ndim = len(shape)
    text = dtype.encode()
    fixarray = bytes((0x90 + ndim,))
    parts = [bytes((0x97, 0, ndim)), fixarray]
    parts += [b"\xd3" + d.to_bytes(8, "big", signed=True) for d in shape]
    parts.append(fixarray)
    parts += [b"\xd2" + d.to_bytes(4, "big", signed=True) for d in chunkshape]
    parts.append(fixarray)
    parts += [b"\xd2" + d.to_bytes(4, "big", signed=True) for d in blockshape]
    parts.append(b"\x00\xdb" + len(text).to_bytes(4, "big") + text)
    return b"".join(parts)


def _read_dims(meta: bytes, pos: int, ndim: int, marker: int, width: int) -> tuple[Shape, int]:
    if pos + 1 + ndim * (1 + width) > len(meta):
        raise ValueError("truncated b2nd metalayer")
    pos += 1  # the fixarray marker
    dims = []
    for _ in range(ndim):
        if meta[pos] != marker:
            raise ValueError(f"bad b2nd metalayer: marker {meta[pos]:#04x}, not {marker:#04x}")
        dims.append(int.from_bytes(meta[pos + 1 : pos + 1 + width], "big", signed=True))
        pos += 1 + width
    return tuple(dims), pos


def parse_b2nd_meta(meta: bytes) -> tuple[Shape, Shape, Shape, str | None]:
    """Return (shape, chunkshape, blockshape, dtype) from a ``b2nd`` metalayer.

    Only layouts of one chunk holding the whole array are accepted (the Blosc2 filter's).

    Raises
    ------
    ValueError
        If the metalayer is truncated or malformed, or describes another layout.
    """
    if len(meta) < 3:
        raise ValueError("truncated b2nd metalayer")
    ndim = meta[2]
    if not 1 <= ndim <= B2ND_MAX_DIM:
        raise ValueError(f"b2nd metalayer of rank {ndim}, not 1..{B2ND_MAX_DIM}")
    shape, pos = _read_dims(meta, 3, ndim, 0xD3, 8)
    chunkshape, pos = _read_dims(meta, pos, ndim, 0xD2, 4)
    blockshape, pos = _read_dims(meta, pos, ndim, 0xD2, 4)
    dtype = None
    if pos + 6 <= len(meta) and meta[pos + 1] == 0xDB:
        length = int.from_bytes(meta[pos + 2 : pos + 6], "big")
        dtype = meta[pos + 6 : pos + 6 + length].decode("ascii", "replace")
    for s, c, b in zip(shape, chunkshape, blockshape, strict=True):
        if not (1 <= s <= c and 1 <= b <= c):
            raise ValueError(
                f"unsupported b2nd layout: shape {shape}, chunks {chunkshape}, blocks "
                f"{blockshape} (one chunk holding the whole array is expected)"
            )
    if math.prod(ext_shape(chunkshape, blockshape)) > _MAX_INT32:
        raise ValueError(f"b2nd chunk {chunkshape} is too large for Blosc2")
    return shape, chunkshape, blockshape, dtype


__all__ = [
    "B2ND_MAX_DIM",
    "DEFAULT_L2_BYTES",
    "MAX_BLOCK_BYTES",
    "MIN_BLOCK_BYTES",
    "b2nd_meta_bytes",
    "block_order_position",
    "blocks_are_c_order",
    "choose_blockshape",
    "default_block_bytes",
    "ext_shape",
    "from_block_order",
    "l2_cache_bytes",
    "parse_b2nd_meta",
    "to_block_order",
]
