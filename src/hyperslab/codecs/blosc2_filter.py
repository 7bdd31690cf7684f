"""The Blosc2 HDF5 filter (id 32026): its cd_values, block shapes, and chunk frames.

The filter shipped by PyTables and hdf5plugin stores every chunk as a Blosc2 *contiguous
frame* (docs/format.md §4):

* for datasets of rank 2..16 (when the dataset's cd_values carry the chunk rank), a b2nd
  array whose shape and chunk shape are the HDF5 chunk shape, with a single inner chunk,
  the block shape chosen by :func:`compute_b2nd_block_shape`, and the opaque dtype
  ``|V<typesize>`` in its metalayer;
* otherwise (1-D datasets, or a chunk whose size does not match, e.g. a shaped atom) a
  super-chunk holding one Blosc2 chunk.

:func:`encode_chunk` builds those frames (with :mod:`~hyperslab.codecs.cframe`, the same
bytes python-blosc2's objects write): same layout, metalayer, block
shape and compression parameters as hdf5plugin's filter (often the very same bytes; the
compressed bytes can differ where the two bundled C-Blosc2 builds' codecs differ, e.g.
zlib), so a chunk written raw with ``write_direct_chunk`` reads back through any HDF5
reader.  :func:`decode_chunk` reads frames written by the filter, by us, or by other tools
(numeric dtypes in the metalayer, any Blosc2 codec/filter chain), optionally
decompressing only the blocks a selection needs.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from hyperslab.codecs.cframe import (
    FrameEncoder,
    FrameError,
    FrameLayout,
    decode_into,
    parse_frame,
)
from hyperslab.codecs.cframe_check import SPECIAL_UNINIT
from hyperslab.codecs.cframe_library import decode_with_library, frame_geometry
from hyperslab.codecs.validate import as_int

if TYPE_CHECKING:
    import blosc2

from hyperslab._typing import AnyArray, DTypeLike, Selection, Shape

FILTER_REVISION: Final = 1
"""cd_values[0] as written by the filter's ``set_local``."""
DEFAULT_CLEVEL: Final = 5
"""Compression level the filter uses when cd_values has no [4]."""
DEFAULT_FILTER_CODE: Final = 1
"""Blosc2 filter (1 = shuffle) the filter uses when cd_values has no [5]."""
DEFAULT_COMPCODE: Final = 0
"""Codec (0 = blosclz) the filter uses when cd_values has no [6]."""
B2ND_MAX_DIM: Final = 16
"""Largest rank stored as b2nd by hdf5plugin's filter (PyTables' own filter stops at 8)."""
MAX_BUFFERSIZE: Final = 2**31 - 1 - 32
"""Largest chunk in bytes that Blosc2 can compress (``BLOSC2_MAX_BUFFERSIZE``)."""

CODECS: Final[dict[str, int]] = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
"""Blosc2 codec name -> code, for the codecs PyTables names (``'blosc2:<name>'``)."""
_CODE_TO_CODEC: Final = {code: name for name, code in CODECS.items()}

FILTERS: Final[dict[str, int]] = {
    "nofilter": 0,
    "shuffle": 1,
    "bitshuffle": 2,
    "delta": 3,
    "trunc_prec": 4,
}
"""Blosc2 filter name -> code, as stored in cd_values[5]."""

_UINT_MAX: Final = 2**32 - 1


def codec_code(name: str) -> int:
    """Return the Blosc2 codec code of `name` (``'blosclz'``, ``'lz4'``, ...).

    Raises
    ------
    ValueError
        If `name` is not one of :data:`CODECS`.
    """
    try:
        return CODECS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown Blosc2 codec {name!r}; known codecs: {', '.join(CODECS)}"
        ) from None


def codec_name(code: int) -> str:
    """Return the name of Blosc2 codec `code`.

    Codes outside :data:`CODECS` are named after python-blosc2's ``Codec`` enum
    (``'ndlz'``, ``'zfp_acc'``, ...) or, failing that, ``'codec<code>'``.
    """
    import blosc2  # imported on use: it costs ~0.4 s at start-up
    if code in _CODE_TO_CODEC:
        return _CODE_TO_CODEC[code]
    try:
        return str(blosc2.Codec(code).name).lower()
    except ValueError:
        return f"codec{code}"


def _as_uint(name: str, value: Any, minimum: int = 0) -> int:
    """A cd_values entry: an unsigned 32-bit int of at least ``minimum``."""
    return as_int(name, value, minimum, _UINT_MAX)


def _as_shape(name: str, shape: Any) -> Shape:
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of positive integers, got {shape!r}") from None
    return tuple(_as_uint(f"{name}[{i}]", d, 1) for i, d in enumerate(dims))


@dataclasses.dataclass(frozen=True, slots=True)
class Blosc2Params:
    """The Blosc2 filter's parameters: a typed view of its cd_values.

    Parameters
    ----------
    blocksize : int
        Target block size in bytes (cd[1]); 0 lets the filter choose
        (:func:`compute_blosc2_blocksize`).
    typesize : int
        Element size in bytes given to Blosc2 (cd[2]; the base type for HDF5 array types).
    chunkbytes : int
        Size of an uncompressed chunk in bytes (cd[3]).
    clevel : int, default 5
        Compression level 0..9 (cd[4]).
    filter_code : int, default 1
        Blosc2 filter applied before the codec (cd[5]): see :data:`FILTERS`.
    compcode : int or None, default None
        Codec code (cd[6]), see :data:`CODECS`; ``None`` leaves cd[6] out (PyTables'
        ``complib='blosc2'``), which the filter reads as blosclz.
    chunkshape : tuple of int, optional
        The HDF5 chunk shape; when its rank is 2..:data:`B2ND_MAX_DIM` it is stored in
        cd[7:] and chunks are b2nd arrays.

    Examples
    --------
    >>> p = Blosc2Params.from_cd_values((1, 0, 8, 200, 5, 2, 5, 2, 5, 5))
    >>> p.codec, p.chunkshape, p.to_cd_values()
    ('zstd', (5, 5), (1, 0, 8, 200, 5, 2, 5, 2, 5, 5))
    """

    blocksize: int
    typesize: int
    chunkbytes: int
    clevel: int = DEFAULT_CLEVEL
    filter_code: int = DEFAULT_FILTER_CODE
    compcode: int | None = None
    chunkshape: Shape | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "blocksize", _as_uint("blocksize", self.blocksize))
        set_(self, "typesize", _as_uint("typesize", self.typesize, 1))
        chunkbytes = _as_uint("chunkbytes", self.chunkbytes, 1)
        if chunkbytes > MAX_BUFFERSIZE:
            raise ValueError(
                f"a Blosc2 chunk holds at most {MAX_BUFFERSIZE} bytes, got chunkbytes={chunkbytes}"
            )
        set_(self, "chunkbytes", chunkbytes)
        clevel = _as_uint("clevel", self.clevel)
        if clevel > 9:
            raise ValueError(f"clevel must be in 0..9, got {clevel}")
        set_(self, "clevel", clevel)
        filter_code = _as_uint("filter_code", self.filter_code)
        if filter_code > 255:
            raise ValueError(f"filter_code must be in 0..255, got {filter_code}")
        set_(self, "filter_code", filter_code)
        if self.compcode is not None:
            compcode = _as_uint("compcode", self.compcode)
            if compcode > 255:
                raise ValueError(f"compcode must be in 0..255, got {compcode}")
            set_(self, "compcode", compcode)
        if self.chunkshape is not None:
            set_(self, "chunkshape", _as_shape("chunkshape", self.chunkshape))

    @property
    def effective_compcode(self) -> int:
        """The codec code the filter uses (``compcode``, or blosclz when it is ``None``)."""
        return DEFAULT_COMPCODE if self.compcode is None else self.compcode

    @property
    def codec(self) -> str:
        """The name of the codec the filter uses."""
        return codec_name(self.effective_compcode)

    @property
    def is_b2nd(self) -> bool:
        """Whether chunks are stored as b2nd arrays (chunk rank 2..16 known)."""
        return self.chunkshape is not None and 1 < len(self.chunkshape) <= B2ND_MAX_DIM

    def to_cd_values(self) -> tuple[int, ...]:
        """Return the cd_values, in the form the filter's ``set_local`` stores them."""
        values = [
            FILTER_REVISION,
            self.blocksize,
            self.typesize,
            self.chunkbytes,
            self.clevel,
            self.filter_code,
        ]
        if self.compcode is not None or self.is_b2nd:
            values.append(self.effective_compcode)
        if self.is_b2nd:
            assert self.chunkshape is not None
            values.append(len(self.chunkshape))
            values.extend(self.chunkshape)
        return tuple(values)

    @classmethod
    def from_cd_values(cls, cd_values: Sequence[int]) -> Blosc2Params:
        """Parse cd_values read from a dataset (or given to ``H5Pset_filter``).

        Missing trailing values take the filter's defaults (clevel 5, shuffle, blosclz).

        Raises
        ------
        ValueError
            If there are fewer than 4 values or the chunk dims do not match the rank.
        """
        cd = tuple(int(v) for v in cd_values)
        if cls is Blosc2Params:  # (a subclass would have its own)
            return _parsed_cd_values(cd)
        return cls._parse(cd)

    @classmethod
    def _parse(cls, cd: tuple[int, ...]) -> Blosc2Params:
        if len(cd) < 4:
            raise ValueError(f"Blosc2 cd_values need at least 4 values, got {cd}")
        chunkshape: Shape | None = None
        if len(cd) >= 8:
            rank = cd[7]
            dims = cd[8 : 8 + rank]
            if rank < 2 or len(dims) != rank:
                raise ValueError(
                    f"Blosc2 cd_values give chunk rank {rank} but dims {dims}: {cd}"
                )
            chunkshape = dims
        return cls(
            blocksize=cd[1],
            typesize=cd[2],
            chunkbytes=cd[3],
            clevel=cd[4] if len(cd) > 4 else DEFAULT_CLEVEL,
            filter_code=cd[5] if len(cd) > 5 else DEFAULT_FILTER_CODE,
            compcode=cd[6] if len(cd) > 6 else None,
            chunkshape=chunkshape,
        )

    def target_blocksize(self) -> int:
        """The block size in bytes the filter aims at (computed when ``blocksize`` is 0)."""
        if self.blocksize:
            return self.blocksize
        return compute_blosc2_blocksize(
            self.chunkbytes, self.typesize, self.clevel, self.effective_compcode
        )

    def block_shape(self) -> Shape:
        """The b2nd block shape the filter uses for these parameters.

        Raises
        ------
        ValueError
            If the chunk shape is unknown.
        """
        if self.chunkshape is None:
            raise ValueError("the block shape needs the chunk shape (chunkshape is None)")
        return compute_b2nd_block_shape(self.target_blocksize(), self.typesize, self.chunkshape)

    def cparams(self, *, blocksize: int | None = None, nthreads: int = 1) -> blosc2.CParams:
        """Return python-blosc2 compression parameters equal to the filter's."""
        import blosc2  # imported on use: it costs ~0.4 s at start-up
        return blosc2.CParams(
            codec=self.effective_compcode,
            clevel=self.clevel,
            typesize=self.typesize,
            nthreads=nthreads,
            blocksize=self.blocksize if blocksize is None else blocksize,
            splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
            filters=[0, 0, 0, 0, 0, self.filter_code],
            filters_meta=[0] * 6,
        )


def compute_blosc2_blocksize(chunkbytes: int, typesize: int, clevel: int, compcode: int) -> int:
    """Return the block size C-Blosc2 picks by default for a chunk (what PyTables stores).

    This is the block size of a zero-filled chunk made with Blosc2's default parameters
    (shuffle, forward-compatible split) and the given size, type size, level and codec:
    PyTables writes it into cd[1], and the filter uses it when cd[1] is 0.

    Raises
    ------
    ValueError
        If `chunkbytes` is not a positive multiple of `typesize` within Blosc2's limit.
    """
    chunkbytes = _as_uint("chunkbytes", chunkbytes, 1)
    typesize = _as_uint("typesize", typesize, 1)
    if chunkbytes > MAX_BUFFERSIZE or chunkbytes % typesize:
        raise ValueError(
            f"chunkbytes must be a multiple of typesize={typesize} and at most "
            f"{MAX_BUFFERSIZE}, got {chunkbytes}"
        )
    return _default_blocksize(chunkbytes, typesize, int(clevel), int(compcode))


@functools.lru_cache(maxsize=256)
def _default_blocksize(chunkbytes: int, typesize: int, clevel: int, compcode: int) -> int:
    """Memoized :func:`compute_blosc2_blocksize` (a pure function; ~0.2 ms a call)."""
    import blosc2  # imported on use: it costs ~0.4 s at start-up
    cparams = blosc2.CParams(
        codec=compcode,
        clevel=clevel,
        typesize=typesize,
        nthreads=1,
        splitmode=blosc2.SplitMode.FORWARD_COMPAT_SPLIT,
        filters=[0, 0, 0, 0, 0, DEFAULT_FILTER_CODE],
        filters_meta=[0] * 6,
    )
    schunk = blosc2.SChunk(chunksize=chunkbytes, cparams=cparams)
    schunk.fill_special(chunkbytes // typesize, blosc2.SpecialValue.ZERO)
    return int(blosc2.get_cbuffer_sizes(schunk.get_chunk(0))[2])


def compute_b2nd_block_shape(blocksize: int, typesize: int, chunkshape: Sequence[int]) -> Shape:
    """Return the b2nd block shape the Blosc2 filter derives from a target block size.

    Blocks start at 2 items per dimension (1 where the chunk has 1) and grow, innermost
    dimension first, by doubling (or up to the full chunk dimension) while the block stays
    within ``blocksize // typesize`` items (docs/format.md §4.2).

    Examples
    --------
    >>> compute_b2nd_block_shape(524288, 8, (1310, 100))
    (512, 100)
    """
    dims = _as_shape("chunkshape", chunkshape)
    nitems = _as_uint("blocksize", blocksize) // _as_uint("typesize", typesize, 1)
    block = [1 if d == 1 else 2 for d in dims]
    count = math.prod(block)
    while count < nitems:
        previous = count
        for i in reversed(range(len(dims))):
            if block[i] * 2 <= dims[i]:
                if count * 2 <= nitems:
                    count *= 2
                    block[i] *= 2
            elif block[i] < dims[i]:
                extended = (count // block[i]) * dims[i]
                if extended <= nitems:
                    count = extended
                    block[i] = dims[i]
        if count == previous:
            break
    return tuple(block)


def pad_to_chunkshape(array: AnyArray, chunkshape: Sequence[int], fill_value: Any = 0) -> AnyArray:
    """Return `array` padded at the end of each dimension to the full `chunkshape`.

    Edge chunks must be stored full-size; pad them with the dataset's fill value, which
    HDF5 shows if the dataset is later extended over the padding.

    Raises
    ------
    ValueError
        If `array` has another rank or is larger than `chunkshape` in some dimension.
    """
    shape = _as_shape("chunkshape", chunkshape)
    if array.ndim != len(shape) or any(a > c for a, c in zip(array.shape, shape, strict=True)):
        raise ValueError(f"cannot pad an array of shape {array.shape} to chunk shape {shape}")
    if array.shape == shape:
        return array
    out = np.full(shape, fill_value, dtype=array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def encode_chunk(
    array: AnyArray,
    params: Blosc2Params,
    *,
    blockshape: Sequence[int] | None = None,
    nthreads: int = 1,
) -> bytes:
    """Compress one full chunk into the frame the Blosc2 HDF5 filter would write.

    Parameters
    ----------
    array : numpy.ndarray
        The chunk data, already padded to the full chunk shape (see
        :func:`pad_to_chunkshape`); its bytes are compressed as they are.
    params : Blosc2Params
        The dataset's filter parameters (``Blosc2Params.from_cd_values`` of the stored
        cd_values).
    blockshape : sequence of int, optional
        A b2nd block shape to use instead of the filter's choice; any shape is valid for
        readers.  Ignored for super-chunk frames.
    nthreads : int, default 1
        Threads Blosc2 may use for this chunk.

    Returns
    -------
    bytes
        A b2nd contiguous frame when ``params.is_b2nd`` and the chunk holds
        ``params.typesize``-byte elements of at most 255 bytes, else a one-chunk
        super-chunk frame (which the filter reads for any rank).

    Raises
    ------
    ValueError
        If the array's size or shape does not match `params`.
    """
    import blosc2  # imported on use: it costs ~0.4 s at start-up
    data = np.ascontiguousarray(array)
    if data.nbytes != params.chunkbytes:
        raise ValueError(
            f"a chunk of {params.chunkbytes} bytes is expected, got {data.nbytes} bytes "
            f"(shape {data.shape}, dtype {data.dtype}); pad edge chunks to the full chunk shape"
        )
    if params.chunkshape is not None and params.is_b2nd and params.typesize <= 255:
        # As the filter: b2nd only when the chunk holds typesize-byte items (not for
        # HDF5 array types, whose base type is smaller than the element).  Unlike the
        # filter, not for items over 255 bytes: it cannot read those b2nd frames back.
        if params.typesize * math.prod(params.chunkshape) == data.nbytes:
            if data.shape != params.chunkshape:
                raise ValueError(
                    f"chunk shape {params.chunkshape} is expected, "
                    f"got an array of shape {data.shape}"
                )
            return _encode_b2nd(data, params, blockshape, nthreads)
    if params.chunkbytes % params.typesize == 0:
        encoder = FrameEncoder(
            (params.chunkbytes // params.typesize,),
            params.typesize,
            codec=params.effective_compcode,
            clevel=params.clevel,
            filter_code=params.filter_code,
            blocksize=params.blocksize,
            nthreads=nthreads,
        )
        return encoder.encode(data)
    # Sizes that are no multiple of the type size (never from the filter's set_local).
    schunk = blosc2.SChunk(
        chunksize=params.chunkbytes,
        data=data.reshape(-1).view(np.uint8),
        cparams=params.cparams(nthreads=nthreads),
    )
    return bytes(schunk.to_cframe())


def _encode_b2nd(
    data: AnyArray, params: Blosc2Params, blockshape: Sequence[int] | None, nthreads: int
) -> bytes:
    assert params.chunkshape is not None
    if blockshape is None:
        blocks = params.block_shape()
    else:
        blocks = _as_shape("blockshape", blockshape)
        if len(blocks) != len(params.chunkshape) or any(
            b > c for b, c in zip(blocks, params.chunkshape, strict=True)
        ):
            raise ValueError(
                f"block shape {blocks} does not fit in chunk shape {params.chunkshape}"
            )
    encoder = FrameEncoder(
        params.chunkshape,
        params.typesize,
        codec=params.effective_compcode,
        clevel=params.clevel,
        filter_code=params.filter_code,
        blockshape=blocks,
        nthreads=nthreads,
    )
    return encoder.encode(data)


def decode_chunk(
    buf: bytes | bytearray | memoryview,
    dtype: DTypeLike,
    chunkshape: Sequence[int],
    *,
    selection: Selection = None,
) -> AnyArray:
    """Decompress a chunk frame written by the Blosc2 filter (or by :func:`encode_chunk`).

    Frames that :mod:`~hyperslab.codecs.cframe` vouches for are decoded there; others
    (valid frames of other layouts, or damaged ones whose damage the filter ignores) by
    python-blosc2, as the filter decodes them, once their geometry is checked
    (:mod:`~hyperslab.codecs.cframe_library`).

    Parameters
    ----------
    buf : bytes-like
        The raw chunk bytes (``read_direct_chunk``, or read at the chunk's file offset).
    dtype : dtype-like
        The dataset's dtype; the frame's own dtype (often ``|V<n>``) is ignored and its
        bytes reinterpreted.
    chunkshape : sequence of int
        The dataset's chunk shape.
    selection : optional
        An index into the chunk (anything NumPy accepts: ints, slices with any step,
        Ellipsis, lists, boolean masks).  For b2nd frames only the blocks it touches are
        decompressed; for a 1-D super-chunk and a step-1 slice only the needed items.

    Returns
    -------
    numpy.ndarray
        The chunk, of shape `chunkshape`, or ``chunk[selection]``.

    Raises
    ------
    ValueError
        If the frame cannot be parsed, or does not hold a chunk of `chunkshape` and `dtype`
        (or its geometry would leave part of the chunk undecoded).
    """
    dt = np.dtype(dtype)
    shape = _as_shape("chunkshape", chunkshape)
    raw = bytes(buf) if not isinstance(buf, bytes) else buf
    if selection is None or selection is Ellipsis:
        try:
            return _decode_whole(raw, dt, shape)
        except FrameError:
            return decode_with_library(raw, dt, shape)
    geometry = frame_geometry(raw, dt, shape)
    try:
        if geometry.blocks is not None:
            import blosc2  # imported on use: it costs ~0.4 s at start-up
            return _decode_b2nd(blosc2.ndarray_from_cframe(raw, copy=False), dt, selection)
        return _decode_schunk(geometry.schunk, dt, shape, selection)
    except Exception:  # python-blosc2 cannot (it raises several kinds): the whole chunk
        return np.array(decode_with_library(raw, dt, shape)[selection])


def filter_decodes_whole(buf: bytes | bytearray | memoryview, dtype: DTypeLike,
                         chunkshape: Sequence[int]) -> bool:
    """Whether HDF5's Blosc2 filter decodes a chunk frame into every byte of a chunk of
    `chunkshape` and `dtype` (checked without decompressing anything).

    False for the frames :func:`decode_chunk` refuses for their geometry (a block shape that
    does not fit the chunk, sizes that do not make a chunk: see
    :mod:`~hyperslab.codecs.cframe_library`) and for uninitialized chunks, which C-Blosc2
    leaves unwritten: the filter would return whatever its buffer held.  Damage inside the
    compressed streams is not looked for (C-Blosc2 reports it, or decodes it the same way
    every time).
    """
    dt = np.dtype(dtype)
    shape = _as_shape("chunkshape", chunkshape)
    raw = bytes(buf) if not isinstance(buf, bytes) else buf
    try:
        layout = _whole_layout(raw, dt, shape)
    except FrameError:
        try:
            frame_geometry(raw, dt, shape)  # refuses uninitialized chunks too
        except ValueError:
            return False
        return True
    except ValueError:
        return False
    if layout.special:
        return layout.special != SPECIAL_UNINIT
    return (raw[layout.chunk_start + 31] >> 4) & 0x07 != SPECIAL_UNINIT


def _whole_layout(raw: bytes, dt: np.dtype[Any], shape: Shape) -> FrameLayout:
    """The layout of a frame that must hold a whole chunk of `shape` and `dt`.

    Raises
    ------
    FrameError
        If :mod:`~hyperslab.codecs.cframe` does not vouch for the frame.
    ValueError
        If it holds another shape, item size or number of bytes.
    """
    layout = parse_frame(raw)
    if layout.blockshape is not None:
        if layout.shape != shape:
            raise ValueError(f"the b2nd frame holds shape {layout.shape}, not chunk {shape}")
        if layout.typesize != dt.itemsize:
            raise ValueError(
                f"the b2nd frame holds {layout.typesize}-byte items, not {dt.itemsize} ({dt})"
            )
    nbytes = math.prod(shape) * dt.itemsize
    if layout.nbytes != nbytes:
        raise ValueError(
            f"the frame holds {layout.nbytes} bytes, not a chunk of {nbytes} "
            f"(shape {shape}, dtype {dt})"
        )
    return layout


def _decode_whole(raw: bytes, dt: np.dtype[Any], shape: Shape) -> AnyArray:
    """A whole chunk, through :mod:`~hyperslab.codecs.cframe` (no python-blosc2 objects)."""
    _whole_layout(raw, dt, shape)
    out: AnyArray = np.empty(shape, dtype=dt)
    decode_into(raw, out)
    return out


def _decode_b2nd(nd: Any, dt: np.dtype[Any], selection: Selection) -> AnyArray:
    out: AnyArray = np.asarray(nd[selection])
    if out.dtype != dt:
        out = out.view(dt)
    return out


def _decode_schunk(sc: Any, dt: np.dtype[Any], shape: Shape, selection: Selection) -> AnyArray:
    typesize = int(sc.typesize)
    if isinstance(selection, tuple) and len(selection) == 1:
        selection = selection[0]
    if (
        len(shape) == 1
        and isinstance(selection, slice)
        and selection.step in (None, 1)
        and dt.itemsize % typesize == 0
    ):
        start, stop, _ = selection.indices(shape[0])
        stop = max(stop, start)
        per_item = dt.itemsize // typesize
        part = sc[start * per_item : stop * per_item]
        return np.frombuffer(part, dtype=dt).copy()
    raise ValueError("not a step-1 slice of a 1-D chunk")  # the whole chunk, then


@functools.lru_cache(maxsize=128)
def _parsed_cd_values(cd: tuple[int, ...]) -> Blosc2Params:
    """:meth:`Blosc2Params.from_cd_values` of ``cd``, parsed once (the parameters are
    immutable; every leaf of a file made alike shares them: ~10 us of checks a leaf's
    first read)."""
    return Blosc2Params._parse(cd)


__all__ = [
    "B2ND_MAX_DIM",
    "CODECS",
    "DEFAULT_CLEVEL",
    "DEFAULT_COMPCODE",
    "DEFAULT_FILTER_CODE",
    "FILTERS",
    "FILTER_REVISION",
    "MAX_BUFFERSIZE",
    "Blosc2Params",
    "codec_code",
    "codec_name",
    "compute_b2nd_block_shape",
    "compute_blosc2_blocksize",
    "decode_chunk",
    "encode_chunk",
    "filter_decodes_whole",
    "pad_to_chunkshape",
]
