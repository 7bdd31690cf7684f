"""Blosc2 chunk frames checked before HDF5's filter decodes them.

Reads of many small Blosc2 chunks go through HDF5's filter pipeline, which is faster there
than the engine (see ``engine._RAW_READ_MIN_BYTES``).  The filter trusts a frame's
geometry: a damaged ``b2nd`` block shape that does not fit its chunk, or a chunk marked
uninitialized, leaves part of its output unwritten, and HDF5 returns whatever that memory
held (other values from run to run).  The engine refuses such frames, or decodes them
itself; :class:`FrameAudit` tells the caller when a selection touches one, so that it is
read through the engine instead of HDF5.

Cost: on files open read-only (where nothing can change a chunk), each stored chunk is
checked once: its headers and its tail are read and compared, all chunks at once
(:meth:`~hyperslab.storage.rawchunks.RawChunks.read_spans`), with those of a frame
checked in full (all but the size fields, which must add up to the chunk's stored size);
a frame that differs is checked in full (read whole and parsed, nothing decompressed).
Reads of chunks already checked cost a look-up, and nothing once all are.  The first
read of a dataset also builds its chunk index (one ``chunk_iter`` pass).  Measured here,
4096 chunks of 8 KB read whole right after opening: 35 ms before, 46 ms with the audit;
again: the same.  Files open for writing are not audited: their chunk index changes with
every write, and checking again after each one made write-and-read loops 2-3 times
slower; HDF5 reads them unchecked, as h5py does.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.gather import count_key_chunks
from hyperslab.codecs.blosc2_filter import filter_decodes_whole
from hyperslab.codecs.cframe_check import TAIL_LEN
from hyperslab.storage.chunkindex import ChunkIndex
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.rawchunks import RawChunks

_HEAD: Final = 512
"""A reference frame's header and inner chunk header must fit in this many bytes (they do
up to rank 8)."""
_HEADER_LEN_AT: Final = 11  # big-endian int32: the frame header's length
_FRAME_LEN_AT: Final = 16  # big-endian int64: the frame's length
_CBYTES_AT: Final = 39  # big-endian int64: the compressed data's length
_CHUNK_HEAD: Final = 32  # the inner chunk's extended header
_CHUNK_CBYTES_AT: Final = 12  # little-endian int32 in it: the inner chunk's length
_SKIP_FIRST_FILTER: Final = 1
_FEW_CHUNKS: Final = 64  # selections touching at most this many are looked up one by one


def _be(columns: AnyArray) -> AnyArray:
    """Big-endian unsigned integers from the rows of a 2-D uint8 array."""
    value = np.zeros(len(columns), dtype=np.int64)
    for k in range(columns.shape[1]):
        value = (value << 8) | columns[:, k].astype(np.int64)
    return value


def _masked(heads: AnyArray, header_len: int) -> AnyArray:
    """``heads[:, :header_len + 32]`` with the per-chunk size fields zeroed."""
    sig = heads[:, : header_len + _CHUNK_HEAD].copy()
    sig[:, _FRAME_LEN_AT : _FRAME_LEN_AT + 8] = 0
    sig[:, _CBYTES_AT : _CBYTES_AT + 8] = 0
    at = header_len + _CHUNK_CBYTES_AT
    sig[:, at : at + 4] = 0
    return sig


class FrameAudit:
    """Which stored Blosc2 frames of one dataset HDF5's filter decodes right (see the
    module).  Thread-safe."""

    def __init__(self, dataset: Dataset, chunkshape: Shape) -> None:
        self._dataset = dataset
        self._chunkshape = chunkshape
        self._index: ChunkIndex | None = None
        self._vouched: AnyArray = np.zeros(0, dtype=bool)
        self._unchecked = 0  # stored chunks not vouched for yet
        self._reference: tuple[int, AnyArray, bytes] | None = None  # header len, sig, tail
        self._lock = threading.Lock()

    def vouches(self, h5key: Sequence[Any] | None) -> bool:
        """Whether HDF5's filter decodes every stored chunk the planned selection key
        ``h5key`` touches (None: the whole dataset) into exactly the chunk's bytes."""
        dataset = self._dataset
        if not dataset.read_only:
            return True  # a writable file (see the module)
        index = dataset.chunk_index()
        with self._lock:
            if index is not self._index:
                self._index = index
                self._vouched = np.zeros(index.nwritten, dtype=bool)
                self._unchecked = index.nwritten
            if not self._unchecked:
                return True  # every stored chunk was checked: the common case
            rows = self._rows(index, h5key)
            pending = rows[~self._vouched[rows]]
            if not pending.size:
                return True
            good = self._check(index, pending)
            self._vouched[pending[good]] = True
            self._unchecked -= int(good.sum())
            return bool(good.all())

    def _rows(self, index: ChunkIndex, h5key: Sequence[Any] | None) -> AnyArray:
        """The index rows of the stored chunks ``h5key`` touches."""
        if h5key is None:
            return np.arange(index.nwritten)
        shape, chunkshape = self._dataset.shape, self._chunkshape
        count = count_key_chunks(h5key, shape, chunkshape)
        if count > index.nwritten:  # a huge (sparse, or damaged) extent: the stored ones
            return np.flatnonzero(stored_in_key(index.coords, h5key, shape, chunkshape))
        if count <= _FEW_CHUNKS:
            row = index.row  # a few chunks: no arrays to build
            found = [row(coords) for coords in itertools.product(*(
                _chunk_numbers(item, length, chunk).tolist()
                for item, length, chunk in zip(h5key, shape, chunkshape, strict=True)))]
            rows = np.array(found, dtype=np.int64)
        else:
            rows = index.rows_of(touched_chunks(h5key, shape, chunkshape))
        return rows[rows >= 0]

    def _check(self, index: ChunkIndex, rows: AnyArray) -> AnyArray:
        """Which of the chunks at ``rows`` the filter decodes right."""
        good = (index.filter_masks[rows] & _SKIP_FIRST_FILTER).astype(bool)  # not filtered
        todo = np.flatnonzero(~good).tolist()
        while todo and self._reference is None:  # in full, until one is a reference
            at = todo.pop(0)
            good[at] = self._in_full(index, int(rows[at]))
        raw = self._dataset.raw_chunks()
        if todo and self._reference is not None:
            left = np.asarray(todo, dtype=np.int64)
            good[left[self._like_reference(raw, index, rows[left])]] = True
            todo = [at for at in todo if not good[at]]
        for at in todo:
            good[at] = self._in_full(index, int(rows[at]))
        return good

    def _in_full(self, index: ChunkIndex, row: int) -> bool:
        """Check one chunk's whole frame (and keep the first good one as the reference)."""
        raw = self._dataset.read_raw_chunk(tuple(index.coords[row].tolist()))[0]
        if not filter_decodes_whole(raw, self._dataset.dtype, self._chunkshape):
            return False
        if self._reference is None:
            self._set_reference(raw)
        return True

    def _set_reference(self, raw: bytes) -> None:
        """Keep the header and tail of a frame checked in full, if it holds an inner chunk
        (not special values) whose header lies in the first bytes read."""
        header_len = int.from_bytes(raw[_HEADER_LEN_AT : _HEADER_LEN_AT + 4], "big")
        cbytes = int.from_bytes(raw[_CBYTES_AT : _CBYTES_AT + 8], "big")
        if (header_len + _CHUNK_HEAD > _HEAD or cbytes <= _CHUNK_HEAD
                or header_len + cbytes + TAIL_LEN != len(raw)):
            return
        head = np.frombuffer(raw[: header_len + _CHUNK_HEAD], dtype=np.uint8).reshape(1, -1)
        self._reference = (header_len, _masked(head, header_len)[0], raw[-TAIL_LEN:])

    def _like_reference(self, raw: RawChunks, index: ChunkIndex, rows: AnyArray) -> AnyArray:
        """Which chunks at ``rows`` have the reference frame's header and tail, with sizes
        that add up (all read at once, on read-only files)."""
        assert self._reference is not None
        header_len, reference, tail = self._reference
        offsets, sizes = index.offsets[rows], index.sizes[rows]
        heads = raw.read_spans(offsets, header_len + _CHUNK_HEAD)
        tails = raw.read_spans(offsets + sizes - TAIL_LEN, TAIL_LEN)
        if heads is None or tails is None:
            return np.zeros(len(rows), dtype=bool)
        same = (_masked(heads, header_len) == reference).all(axis=1)
        same &= (tails == np.frombuffer(tail, dtype=np.uint8)).all(axis=1)
        frame_len = _be(heads[:, _FRAME_LEN_AT : _FRAME_LEN_AT + 8])
        cbytes = _be(heads[:, _CBYTES_AT : _CBYTES_AT + 8])
        at = header_len + _CHUNK_CBYTES_AT
        chunk_cbytes = _be(heads[:, at : at + 4][:, ::-1])  # little-endian
        return (same & (frame_len == sizes) & (chunk_cbytes == cbytes)
                & (header_len + cbytes + TAIL_LEN == sizes))


def _chunk_numbers(item: Any, length: int, chunk: int) -> AnyArray:
    """The chunk numbers one axis of a planned key touches (sorted)."""
    if isinstance(item, slice):
        start, stop, step = item.indices(length)
        count = len(range(start, stop, step))
        if not count:
            return np.zeros(0, dtype=np.int64)
        last = start + (count - 1) * step
        if step <= chunk:
            return np.arange(start // chunk, last // chunk + 1, dtype=np.int64)
        return np.unique(np.arange(start, last + 1, step, dtype=np.int64) // chunk)
    if isinstance(item, np.ndarray):
        return np.unique(item.astype(np.int64) // chunk)
    return np.array([int(item) // chunk], dtype=np.int64)


def stored_in_key(coords: AnyArray, h5key: Sequence[Any], shape: Shape,
                  chunkshape: Shape) -> AnyArray:
    """Which of the chunks at grid ``coords`` (an ``(n, rank)`` array) a planned selection
    key touches: a boolean array, in work proportional to ``n``.

    Examples
    --------
    >>> stored_in_key(np.array([[0], [1], [2], [5]]), (slice(1, 30, 9),), (30,), (4,))
    array([ True, False,  True, False])
    """
    inside = np.ones(len(coords), dtype=bool)
    for axis, (item, length, chunk) in enumerate(zip(h5key, shape, chunkshape, strict=True)):
        numbers = coords[:, axis]
        if isinstance(item, slice):
            start, stop, step = item.indices(length)
            count = len(range(start, stop, step))
            last = start + (count - 1) * step
            lo = np.maximum(numbers * chunk, start)  # the first selected item at or after
            first = start + -(-(lo - start) // step) * step  # the chunk's first item
            inside &= (count > 0) & (first <= np.minimum(last, numbers * chunk + chunk - 1))
        elif isinstance(item, np.ndarray):
            inside &= np.isin(numbers, item.astype(np.int64) // chunk)
        else:
            inside &= numbers == int(item) // chunk
    return inside


def touched_chunks(h5key: Sequence[Any], shape: Shape, chunkshape: Shape) -> AnyArray:
    """Grid coordinates of the chunks a planned selection key (per dimension an int, a
    positive-step slice or a sorted index array) touches: an ``(n, rank)`` array.

    Examples
    --------
    >>> touched_chunks((slice(0, 10, 4), 3), (10, 8), (4, 2)).tolist()
    [[0, 1], [1, 1], [2, 1]]
    """
    axes = [_chunk_numbers(item, length, chunk)
            for item, length, chunk in zip(h5key, shape, chunkshape, strict=True)]
    grids = np.meshgrid(*axes, indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=-1)


__all__ = ["FrameAudit", "stored_in_key", "touched_chunks"]
