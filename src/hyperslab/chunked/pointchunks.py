"""Stored chunks as point reads keep them: parsed once, their last decoded blocks kept.

Repeated point reads of a read-only file (indexed queries fetching rows) find a chunk's
bytes, its parsed frame and the blocks they decoded last here instead of reading and
decoding them again (:meth:`hyperslab.chunked.engine.ChunkEngine.read_points`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from hyperslab._typing import AnyArray
from hyperslab.codecs.cframe_region import FrameBlocks
from hyperslab.storage.preads import SparseChunk

POINT_BLOCKS_KEPT = 4
"""Decoded blocks a chunk kept by point reads keeps (the last ones decoded)."""


class DecodedBlocks:
    """The last few decoded blocks of one chunk, thread-safe (a
    :class:`~hyperslab.codecs.cframe_region.BlockStore`)."""

    def __init__(self) -> None:
        self._blocks: OrderedDict[int, AnyArray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, number: int) -> AnyArray | None:
        with self._lock:
            return self._blocks.get(number)

    def put(self, number: int, block: AnyArray) -> None:
        with self._lock:
            self._blocks[number] = block
            while len(self._blocks) > POINT_BLOCKS_KEPT:
                self._blocks.popitem(last=False)


class PointChunk(NamedTuple):
    """A stored chunk as point reads use it: its bytes, filter mask and, where its blocks
    can be decoded alone, the parsed frame and its last decoded blocks (read-only files)."""

    raw: Any  # bytes, or the buffer of ``sparse``
    mask: int
    blocks: FrameBlocks | None
    decoded: DecodedBlocks | None
    sparse: SparseChunk | None = None  # read so far: the frame's structure, some blocks

    def complete_raw(self) -> Any:
        """The whole stored chunk (what is not read yet is read now)."""
        if self.sparse is not None:
            self.sparse.load_all()
        return self.raw
