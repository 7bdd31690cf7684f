"""Direct chunking: PyTables' ``chunk_info``, ``read_chunk`` and ``write_chunk`` on leaves.

These move a chunk's stored bytes as they are, bypassing every filter: what ``write_chunk``
gets must already be compressed (e.g. a Blosc2 frame), and what ``read_chunk`` returns still
is.  Coordinates are in dataset items, as in PyTables; chunk starts are multiples of the
chunkshape.  The messages of the errors are PyTables' (the spec's sessions print them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

import numpy as np

from hyperslab._typing import Shape
from hyperslab.errors import NoSuchChunkError, NotChunkAlignedError, NotChunkedError
from hyperslab.storage.datasets import Dataset


class ChunkInfo(NamedTuple):
    """Where and how one chunk is stored (PyTables' ``ChunkInfo``).

    Attributes
    ----------
    start : tuple of int
        The item coordinates where the chunk starts (multiples of the chunkshape).
    filter_mask : int or None
        Bit ``i`` set means filter ``i`` of the pipeline was skipped for this chunk;
        None for a chunk never written.
    offset : int or None
        The chunk's byte offset in the file; None for a chunk never written.
    size : int or None
        The chunk's stored (compressed) size in bytes; None for a chunk never written.
    """

    start: tuple[int, ...]
    filter_mask: int | None
    offset: int | None
    size: int | None


def _as_coords(coords: Any) -> tuple[int, ...]:
    try:
        return tuple(int(c) for c in coords)
    except TypeError:
        raise TypeError(f"chunk coordinates must be a sequence of ints, not {coords!r}") from None


def _np_ints(values: Sequence[int]) -> tuple[np.int64, ...]:
    """Values as PyTables shows them in its messages (NumPy ints)."""
    return tuple(np.int64(v) for v in values)


class DirectChunking:
    """The direct-chunking methods shared by chunked leaves (mixed into :class:`Leaf`)."""

    _v_file: Any
    _g_check_writable: Callable[[], None]  # provided by Node

    @property
    def _dataset(self) -> Dataset:  # pragma: no cover - provided by Leaf
        raise NotImplementedError

    def _shared(self, owner: int | None = None) -> AbstractContextManager[Any]:
        raise NotImplementedError  # pragma: no cover - provided by Leaf

    def _exclusive(self) -> AbstractContextManager[Any]:
        raise NotImplementedError  # pragma: no cover - provided by Leaf

    def _chunked_shape(self) -> tuple[Shape, Shape]:
        """The shape and chunkshape, or NotChunkedError for a contiguous leaf."""
        dataset = self._dataset
        chunkshape = dataset.chunks
        if chunkshape is None:
            raise NotChunkedError("The dataset is not chunked")
        return dataset.shape, chunkshape

    def _check_within(self, coords: tuple[int, ...], shape: Shape) -> None:
        if len(coords) != len(shape):
            raise ValueError(
                f"Chunk coordinates do not match dataset shape: {coords} !~ {_np_ints(shape)}"
            )
        if any(c < 0 or c >= s for c, s in zip(coords, shape, strict=True)):
            raise IndexError(
                f"Chunk coordinates not within dataset shape: {coords} <> {_np_ints(shape)}"
            )

    def _aligned_grid(self, coords: Any) -> tuple[int, ...]:
        """The grid coordinates of the chunk starting at ``coords`` (checked)."""
        shape, chunkshape = self._chunked_shape()
        start = _as_coords(coords)
        self._check_within(start, shape)
        if any(c % cs for c, cs in zip(start, chunkshape, strict=True)):
            raise NotChunkAlignedError(
                f"Coordinates are not multiples of chunk shape: {start} !* "
                f"{_np_ints(chunkshape)}"
            )
        return tuple(c // cs for c, cs in zip(start, chunkshape, strict=True))

    def chunk_info(self, coords: Sequence[int]) -> ChunkInfo:
        """Return storage information about the chunk holding the item at ``coords``.

        ``coords`` need not be a chunk start: the chunk that contains them is described,
        and its ``start`` can be given to :meth:`read_chunk` and :meth:`write_chunk`.

        Raises
        ------
        NotChunkedError
            If the leaf is not chunked.
        IndexError
            If ``coords`` lie outside the leaf's shape.
        ValueError
            If ``coords`` do not have the leaf's rank.

        Examples
        --------
        >>> import hyperslab, numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "info.h5")
        >>> with hyperslab.open_file(path, "w") as f:
        ...     carray = f.create_carray("/", "c", chunkshape=(10,), obj=np.arange(100))
        ...     info = carray.chunk_info((42,))
        ...     print(info.start, info.filter_mask, info.size)
        (40,) 0 80
        """
        shape, chunkshape = self._chunked_shape()
        item = _as_coords(coords)
        self._check_within(item, shape)
        grid = tuple(c // cs for c, cs in zip(item, chunkshape, strict=True))
        start = tuple(g * cs for g, cs in zip(grid, chunkshape, strict=True))
        with self._shared():
            location = self._dataset.chunk_location(grid)
        if location is None:
            return ChunkInfo(start, None, None, None)
        return ChunkInfo(start, location.filter_mask, location.offset, location.size)

    def read_chunk(
        self, coords: Sequence[int], out: Any = None
    ) -> bytes | memoryview:
        """Return the stored (still filtered) bytes of the chunk starting at ``coords``.

        Parameters
        ----------
        coords : sequence of int
            The chunk's start, in items (see :meth:`chunk_info`).
        out : writable bytes-like object (bytearray, NumPy array...), optional
            Receives the bytes at its start; a byte memoryview over all of ``out`` is then
            returned (as in PyTables: the chunk's size is ``chunk_info(coords).size``).

        Raises
        ------
        NotChunkedError, NotChunkAlignedError, IndexError
            For a contiguous leaf, coordinates that are not a chunk start, or outside the
            shape.
        NoSuchChunkError
            If the chunk was never written.
        ValueError
            If ``out`` is too small for the chunk.
        """
        grid = self._aligned_grid(coords)
        try:
            with self._shared():
                data, _mask = self._dataset.read_raw_chunk(grid)
        except NoSuchChunkError:
            raise NoSuchChunkError(
                f"Can't read missing chunk at coordinates {_as_coords(coords)}"
            ) from None
        if out is None:
            return bytes(data)
        view = memoryview(out).cast("B")
        if view.nbytes < len(data):
            raise ValueError(
                f"the output buffer of {view.nbytes} bytes is too small for the chunk at "
                f"{_as_coords(coords)} ({len(data)} bytes)"
            )
        view[: len(data)] = data
        return view

    def write_chunk(
        self, coords: Sequence[int], data: Any, filter_mask: int = 0
    ) -> None:
        """Store ``data``, already filtered (compressed), as the chunk starting at ``coords``.

        The chunk replaces any stored one.  Grow an EArray cheaply with ``truncate`` first
        to write beyond its current shape.

        Parameters
        ----------
        coords : sequence of int
            The chunk's start, in items.
        data : bytes-like object (bytes, bytearray, memoryview, C-contiguous NumPy array)
            The stored form of the chunk (e.g. a Blosc2 frame from ``to_cframe()``).
        filter_mask : int, default 0
            Bit ``i`` set tells readers that filter ``i`` was not applied to ``data``.

        Raises
        ------
        NotChunkedError, NotChunkAlignedError, IndexError
            For a contiguous leaf, coordinates that are not a chunk start, or outside the
            shape.
        """
        self._g_check_writable()
        grid = self._aligned_grid(coords)
        payload = memoryview(data).cast("B")
        with self._exclusive():
            self._dataset.write_raw_chunk(grid, payload, int(filter_mask))
