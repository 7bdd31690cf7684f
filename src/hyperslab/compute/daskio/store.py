"""Dask arrays stored into new CArrays: blocks computed by the tasks, written here.

:func:`to_hyperslab` creates a CArray whose chunks the dask array's blocks cover whole (a
chunk shape that divides the blocks, else the blocks are rechunked to whole chunks), has
the scheduler in use (threads, processes, a ``dask.distributed`` cluster) compute the
blocks a few at a time, and writes each in this process as it arrives: every chunk of a
block is whole, so it is compressed in parallel (the file's threads) and written raw,
never read back.  One process writes the file, as HDF5 requires; the tasks never hold it.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hyperslab._typing import Shape
from hyperslab.chunked.chunkshape import compute_chunkshape
from hyperslab.chunked.workers import default_workers
from hyperslab.compute.daskio.arrays import Chunks, dask_array_module, regular

__all__ = ["fit_chunkshape", "to_hyperslab", "whole_chunk_blocks"]

_MIN_SHARE = 0.5
"""A divisor of the blocks is taken as a chunk dimension when it is at least this share of
the automatic one (else the blocks are rechunked to multiples of the automatic one)."""


def _largest_divisor_at_most(n: int, limit: int) -> int:
    best = 1
    for d in range(1, math.isqrt(n) + 1):
        if n % d == 0:
            for candidate in (d, n // d):
                if best < candidate <= limit:
                    best = candidate
    return best


def fit_chunkshape(blocks: Chunks, auto: Shape) -> Shape:
    """A chunk shape near ``auto`` that the dask ``blocks`` cover whole where it can.

    Along a dimension cut in regular blocks (all of one size but a shorter last one), the
    largest divisor of the block size up to the automatic chunk dimension, if it is at
    least half of it; else the automatic one (the blocks are then rechunked).
    """
    shape = []
    for sizes, chunk in zip(blocks, auto, strict=True):
        size = sizes[0]
        if size and all(s == size for s in sizes[:-1]) and sizes[-1] <= size:
            divisor = _largest_divisor_at_most(size, chunk)
            if divisor >= _MIN_SHARE * min(chunk, size):
                shape.append(divisor)
                continue
        shape.append(chunk)
    return tuple(shape)


def whole_chunk_blocks(blocks: Chunks, chunkshape: Shape, shape: Shape) -> Chunks | None:
    """Blocks of whole chunks near ``blocks``, or None if ``blocks`` already are."""
    aligned = all(
        all(s % chunk == 0 for s in sizes[:-1])
        for sizes, chunk in zip(blocks, chunkshape, strict=True))
    if aligned:
        return None
    return tuple(
        regular(length, max(chunk, max(sizes) // chunk * chunk))
        for sizes, chunk, length in zip(blocks, chunkshape, shape, strict=True))


def _regions(blocks: Chunks) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """(block index, region of the array) of every block, in C order."""
    starts = [np.concatenate(([0], np.cumsum(sizes))).tolist() for sizes in blocks]
    for index in np.ndindex(*(len(sizes) for sizes in blocks)):
        yield index, tuple(slice(starts[d][i], starts[d][i + 1]) for d, i in enumerate(index))


def _open_target(file_or_path: Any) -> tuple[Any, bool]:
    """(the File to write, whether it was opened here)."""
    if isinstance(file_or_path, (str, os.PathLike)):
        from hyperslab.nodes.files.file import open_file

        return open_file(file_or_path, "a"), True
    file_or_path._check_writable()
    return file_or_path, False


def _create(file: Any, node_path: str, x: Any, filters: Any, chunkshape: Sequence[int] | None,
            title: str, createparents: bool, overwrite: bool) -> Any:
    from hyperslab.nodes.atoms.atom import Atom
    from hyperslab.nodes.tree.naming import split_path

    parent, name = split_path(node_path)
    if overwrite and node_path in file:
        file.remove_node(node_path, recursive=True)
    if chunkshape is None:
        effective = filters if filters is not None else (
            file.get_node(parent)._v_filters if parent in file else file.filters)
        auto = compute_chunkshape(x.shape, x.dtype.itemsize,
                                  complib=effective.complib if effective.complevel else None)
        chunkshape = fit_chunkshape(x.chunks, auto)
    return file.create_carray(parent, name, Atom.from_dtype(x.dtype), shape=x.shape,
                              title=title, filters=filters, chunkshape=chunkshape,
                              createparents=createparents)


def to_hyperslab(
    x: Any,
    file_or_path: Any,
    node_path: str,
    *,
    filters: Any = None,
    chunkshape: Sequence[int] | None = None,
    title: str = "",
    createparents: bool = False,
    overwrite: bool = False,
    blocks_in_flight: int | None = None,
) -> Any:
    """Store a dask array into a new CArray, compressed in parallel, written by this process.

    The CArray's chunks are whole in every block of ``x``: with ``chunkshape=None`` its
    chunk shape is one that divides the blocks (near the one hyperslab would choose), and
    otherwise, or where none does, ``x`` is rechunked to blocks of whole chunks.  The
    blocks are computed by the scheduler in use (``dask.config`` or a
    ``dask.distributed.Client``: threads, processes or a cluster), ``blocks_in_flight`` at
    a time, and each is written in this process as it arrives; its chunks, all whole, are
    compressed in parallel and written raw.

    Parameters
    ----------
    x : dask.array.Array or array_like
        The data (anything else is made a dask array with ``dask.array.asarray``).
    file_or_path : File or str or os.PathLike
        A :class:`~hyperslab.File` open for writing (left open), or a file name, opened
        with mode ``'a'`` for the write and closed after it.
    node_path : str
        The absolute path of the new CArray (``'/group/name'``).
    filters : Filters, optional
        Its filters (default: its parent group's, as ``create_carray``).
    chunkshape : sequence of int, optional
        Its chunk shape (default: see above).
    title : str
        Its title.
    createparents : bool
        Create the groups on the way to it that are missing.
    overwrite : bool
        Replace a node already at ``node_path``.
    blocks_in_flight : int, optional
        Blocks computed at a time, and held in memory at most (default: the number of CPUs
        this process may use, at least 2).

    Returns
    -------
    CArray or None
        The new CArray when ``file_or_path`` is a File; None when it is a path (the file is
        closed).

    Raises
    ------
    ImportError
        If dask is not installed.
    ValueError
        If ``x`` is a scalar (zero dimensions).
    FileModeError
        If the File is open read-only.
    NodeError
        If a node exists at ``node_path`` (without ``overwrite``).

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> import dask.array as da
    >>> path = os.path.join(tempfile.mkdtemp(), "stored.h5")
    >>> x = da.arange(1000.0, chunks=250)
    >>> hyperslab.to_hyperslab(x, path, "/x", filters=hyperslab.Filters(5, "blosc2"))
    >>> with hyperslab.open_file(path) as f:
    ...     print(f.root.x.chunkshape, f.root.x[-3:])
    (250,) [997. 998. 999.]
    """
    da = dask_array_module()
    x = da.asarray(x)
    if x.ndim == 0:
        raise ValueError(f"a CArray has at least one dimension; got a scalar {x!r}")
    file, opened = _open_target(file_or_path)
    try:
        carray = _create(file, node_path, x, filters, chunkshape, title, createparents,
                         overwrite)
        _write_blocks(x, carray, blocks_in_flight)
    finally:
        if opened:
            file.close()
    return None if opened else carray


def _write_blocks(x: Any, carray: Any, blocks_in_flight: int | None) -> None:
    """Compute the blocks of ``x`` a batch at a time and write them into ``carray``.

    Blosc2 CArrays get their chunks compressed in the tasks (:class:`ChunkCompressor`):
    the tasks return frames, written raw here.  Other filters get the blocks, compressed
    and written here (in parallel for whole chunks, by the file's threads).
    """
    import dask

    if 0 in x.shape:
        return
    rechunked = whole_chunk_blocks(x.chunks, tuple(carray.chunkshape), tuple(x.shape))
    if rechunked is not None:
        x = x.rechunk(rechunked)
    batch = max(2, blocks_in_flight or default_workers())
    delayed = x.to_delayed()
    compressor = ChunkCompressor.of(carray)
    tasks: list[tuple[Any, tuple[slice, ...]]] = []
    for index, region in _regions(x.chunks):
        block = delayed[index]
        if compressor is not None:
            block = dask.delayed(compressor, pure=False)(
                block, tuple(r.start for r in region))
        tasks.append((block, region))
    client = _current_client()
    if client is not None:
        _write_as_completed(client, carray, tasks, batch, compressor is not None)
        return
    for first in range(0, len(tasks), batch):
        pending = tasks[first:first + batch]
        values = dask.compute(*(block for block, _ in pending))
        for (_, region), value in zip(pending, values, strict=True):
            _write(carray, region, value, compressor is not None)


def _write(carray: Any, region: tuple[slice, ...], value: Any, frames: bool) -> None:
    if not frames:
        carray[region] = value
        return
    for coords, frame in value:
        carray.write_chunk(coords, frame)


def _current_client() -> Any:
    """The ``dask.distributed`` Client in use, or None (no distributed, no Client, or
    another scheduler set in ``dask.config``)."""
    import dask

    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _write_as_completed(client: Any, carray: Any, tasks: list[tuple[Any, tuple[slice, ...]]],
                        in_flight: int, frames: bool) -> None:
    """Keep ``in_flight`` blocks computing on the cluster, writing each as it arrives."""
    from distributed import as_completed

    queue = iter(tasks)
    regions: dict[str, tuple[slice, ...]] = {}

    def submit() -> Any:
        for block, region in queue:
            future = client.compute(block)
            regions[future.key] = region
            return future
        return None

    started = [f for f in (submit() for _ in range(in_flight)) if f is not None]
    done = as_completed(started)
    for future in done:
        value = future.result()
        _write(carray, regions.pop(future.key), value, frames)
        del value, future
        following = submit()
        if following is not None:
            done.add(following)


class ChunkCompressor:
    """A task's compression of a block of whole chunks into Blosc2 frames (it pickles).

    Calling it with a block and the block's origin returns ``(chunk start, frame)`` for
    every chunk of the block, edge chunks padded with zeros beyond the array (never read).
    """

    def __init__(self, encoder: Any, chunkshape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        self.encoder = encoder
        self.chunkshape = chunkshape
        self.dtype = dtype

    @classmethod
    def of(cls, carray: Any) -> ChunkCompressor | None:
        """The compressor of ``carray``'s chunks, or None unless they are Blosc2 frames
        of plain items (other filters are applied by the writer)."""
        encoder = carray._engine.frame_encoder()
        dtype = np.dtype(carray.dtype)
        if encoder is None or carray.atom.shape or dtype.hasobject:
            return None
        return cls(encoder, tuple(int(c) for c in carray.chunkshape), dtype)

    def __call__(self, block: Any, origin: tuple[int, ...]) -> list[tuple[tuple[int, ...], bytes]]:
        block = np.asarray(block).astype(self.dtype, copy=False)
        grid = [range(0, n, c) for n, c in zip(block.shape, self.chunkshape, strict=True)]
        frames = []
        for starts in itertools.product(*grid):
            part = tuple(slice(s, s + c) for s, c in zip(starts, self.chunkshape, strict=True))
            data = block[part]
            if data.shape != self.chunkshape:
                chunk = np.zeros(self.chunkshape, self.dtype)
                chunk[tuple(slice(0, n) for n in data.shape)] = data
                data = chunk
            coords = tuple(o + s for o, s in zip(origin, starts, strict=True))
            frames.append((coords, self.encoder.encode(np.ascontiguousarray(data))))
        return frames
