"""The write path of the chunk engine (:class:`~hyperslab.chunked.engine.ChunkEngine`
inherits it): whole chunks compressed here, in the pool, and written raw; the parts of
others given to HDF5's pipeline, or read, updated and rewritten here when chunks are
bigger than HDF5's chunk cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.regions import Box, ChunkPiece, chunk_pieces
from hyperslab.codecs import cframe
from hyperslab.codecs.blosc2_filter import Blosc2Params
from hyperslab.errors import NoSuchChunkError
from hyperslab.storage.datasets import Dataset

__all__ = ["IN_FLIGHT_PER_WORKER", "ChunkWrites"]

IN_FLIGHT_PER_WORKER = 2
"""Chunks compressed ahead of the writer, per worker thread (bounds the memory in use)."""
_B2ND_MAX_TYPESIZE = 255
"""Larger items get plain frames: the filter cannot read b2nd frames of them (see cframe)."""


class ChunkWrites:
    """Writes of whole chunks, compressed in parallel (a mixin of ``ChunkEngine``, whose
    state it uses)."""

    _dataset: Dataset
    _chunkshape: Shape
    _chunk_cache_bytes: int | None
    _executor: Callable[[], Executor]
    _workers: int
    _itemsize: int
    _params: Blosc2Params | None
    _encoders: dict[int, cframe.FrameEncoder]

    if TYPE_CHECKING:
        @property
        def chunk_nbytes(self) -> int: ...

        @property
        def blockshape(self) -> Shape: ...

        def _threads(self, nchunks: int) -> tuple[bool, int]: ...

        def _new_chunk(self, fill: bool) -> AnyArray: ...

        def _decoded(self, raw: bytes, mask: int, grid: tuple[int, ...], nthreads: int
                     ) -> AnyArray: ...

    def _encoder(self, nthreads: int) -> cframe.FrameEncoder:
        encoder = self._encoders.get(nthreads)
        if encoder is None:
            params = self._params
            assert params is not None
            blockshape = None
            if params.is_b2nd and params.typesize == self._itemsize <= _B2ND_MAX_TYPESIZE:
                blockshape = self.blockshape
            # Plain frames only need the chunk's size in Blosc2 items (shaped atoms hold
            # several items per element).
            frame_shape = (self._chunkshape if blockshape is not None
                           else (self.chunk_nbytes // params.typesize,))
            encoder = cframe.FrameEncoder(
                frame_shape,
                params.typesize,
                codec=params.effective_compcode,
                clevel=params.clevel,
                filter_code=params.filter_code,
                blockshape=blockshape,
                blocksize=params.blocksize,
                nthreads=nthreads,
            )
            self._encoders[nthreads] = encoder
        return encoder

    def write_box(self, box: Box, value: AnyArray, fallback: Callable[[Box, AnyArray], None]
                  ) -> None:
        """Write ``value`` (of the box's shape) into a box.

        Chunks the box covers whole are compressed here and written raw.  The parts of the
        others are given to ``fallback(part_box, part_value)`` (HDF5's pipeline, whose chunk
        cache absorbs small repeated updates), unless chunks are bigger than that cache:
        then they are read, updated and rewritten raw here too.
        """
        shape = self._dataset.shape
        pieces = list(chunk_pieces(box, shape, self._chunkshape))
        cache = self._chunk_cache_bytes
        update_here = cache is not None and self.chunk_nbytes > cache
        raw = [p for p in pieces if p.whole or update_here]
        for piece in pieces:
            if not (piece.whole or update_here):
                part = tuple(
                    (start + s.start, start + s.stop)
                    for (start, _stop), s in zip(box, piece.in_box, strict=True)
                )
                fallback(part, value[piece.in_box])
        if not raw:
            return
        use_pool, nthreads = self._threads(len(raw))
        encoder = self._encoder(1 if use_pool else nthreads)
        if not use_pool:
            for piece in raw:
                self._dataset.write_raw_chunk(
                    piece.grid, self._encode_piece(encoder, piece, value, nthreads)
                )
            return
        for piece, frame in self._encode_ahead(encoder, raw, value):
            self._dataset.write_raw_chunk(piece.grid, frame)

    def _encode_ahead(
        self, encoder: cframe.FrameEncoder, pieces: list[ChunkPiece], value: AnyArray
    ) -> Iterator[tuple[ChunkPiece, bytes]]:
        """Compress pieces in the pool, a bounded number ahead, yielding them in order."""
        executor = self._executor()
        limit = self._workers * IN_FLIGHT_PER_WORKER
        pending: list[tuple[ChunkPiece, Future[bytes]]] = []
        for piece in pieces:
            pending.append(
                (piece, executor.submit(self._encode_piece, encoder, piece, value, 1))
            )
            if len(pending) >= limit:
                done, future = pending.pop(0)
                yield done, future.result()
        for done, future in pending:
            yield done, future.result()

    def _encode_piece(
        self, encoder: cframe.FrameEncoder, piece: ChunkPiece, value: AnyArray, nthreads: int
    ) -> bytes:
        data = value[piece.in_box]
        if not piece.full_chunk:
            chunk = self._stored_chunk(piece.grid, nthreads) if not piece.whole else None
            if chunk is None:
                chunk = self._new_chunk(fill=True)
            chunk[piece.in_chunk] = data
            data = chunk
        return encoder.encode(np.ascontiguousarray(data))

    def _stored_chunk(self, grid: tuple[int, ...], nthreads: int) -> AnyArray | None:
        """The decoded chunk at ``grid``, or None if it was never written."""
        try:
            raw, mask = self._dataset.read_raw_chunk(grid)
        except NoSuchChunkError:
            return None
        return self._decoded(raw, mask, grid, nthreads)
