"""Leaves as dask arrays, in blocks of whole HDF5 chunks read through the fast path.

A task reads one block through the fast path: the raw chunks it covers, decoded (in part
where the block cuts a chunk) straight into the block, in the task's thread when the array
has several blocks (Dask runs them in parallel), else in the File's pool.  Blocks are
whole chunks (several per block, as many as Dask's ``array.chunk-size`` allows), so no
chunk is decoded by two tasks.
"""

from __future__ import annotations

import math
import os
import uuid
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray, Shape

__all__ = ["aligned_chunks", "dask_array_module", "graph_token", "leaf_to_dask", "read_block",
           "read_block_here", "regular"]

Chunks = tuple[tuple[int, ...], ...]
"""Dask's normalized chunks: the block sizes along each dimension."""


def dask_array_module() -> Any:
    """``dask.array``, imported on first use.

    Raises
    ------
    ImportError
        If dask (with its array extra) is not installed, saying how to install it.
    """
    try:
        import dask.array as da
    except ImportError as exc:
        raise ImportError(
            "this needs dask's arrays, which are not installed: pip install 'dask[array]' "
            "(or pip install 'hyperslab[dask]', with dask.distributed too)"
        ) from exc
    return da


def regular(length: int, size: int) -> tuple[int, ...]:
    """Blocks of ``size`` along a dimension of ``length`` (the last one shorter)."""
    if length == 0:
        return (0,)
    full, rest = divmod(length, size)
    return (size,) * full + ((rest,) if rest else ())


def aligned_chunks(
    shape: Shape, dtype: np.dtype[Any], chunkshape: Shape | None, chunks: Any = None
) -> Chunks:
    """The blocks of a leaf's dask array.

    Parameters
    ----------
    shape, dtype : the leaf's
    chunkshape : tuple of int or None
        The leaf's chunk shape (None: contiguous).
    chunks : optional
        None (or ``'auto'``): blocks of whole chunks, as many as Dask's ``array.chunk-size``
        config allows (at least one chunk per block along every dimension).  Anything else
        is Dask's ``chunks`` argument (ints, tuples, ``-1``, byte sizes such as
        ``'64MiB'``), taken as given: blocks that cut chunks make tasks decode chunks
        several times.

    Returns
    -------
    tuple of tuple of int
        Dask's normalized chunks.
    """
    from dask.array.core import normalize_chunks

    auto = chunks is None or chunks == "auto"
    normalized: Chunks = normalize_chunks(
        "auto" if auto else chunks, shape, dtype=dtype, previous_chunks=chunkshape)
    if not auto or chunkshape is None:
        return normalized
    # Whole chunks per block: a multiple of the chunk shape in every dimension (Dask's
    # choice usually is one already).
    return tuple(
        sizes if length == 0 else regular(length, max(chunk, max(sizes) // chunk * chunk))
        for sizes, chunk, length in zip(normalized, chunkshape, shape, strict=True)
    )


def read_block(leaf: Any, key: tuple[slice, ...]) -> AnyArray:
    """A task's read: ``leaf[key]`` as a NumPy array (whatever the leaf's flavor)."""
    return np.asarray(leaf[key])


def read_block_here(leaf: Any, key: tuple[slice, ...]) -> AnyArray:
    """A task's read in the calling thread only, for arrays of several blocks: Dask runs
    their tasks in parallel already, and the File's pool would only add threads competing
    for the same cores (a strided sum of a 512 MiB Blosc2 array: 0.096 s against 0.115 s
    through the pool, on 2 cores)."""
    from hyperslab.nodes.leaves.reducible import read_leaf_box

    return np.asarray(read_leaf_box(leaf, key, True))


def graph_token(leaf: Any) -> str:
    """A token of a leaf's data for dask keys: the same for the same data of a read-only
    file (real path, node, size and modification time), new every time otherwise (the
    data may change between two graphs)."""
    from dask.base import tokenize

    file = leaf._v_file
    if file.mode != "r":
        return uuid.uuid4().hex
    try:
        stat = os.stat(file.filename)
        version: tuple[int, ...] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    except OSError:  # not a file on disk (a driver's): no name to share
        return uuid.uuid4().hex
    return str(tokenize(os.path.realpath(file.filename), file.root_uep, leaf._v_pathname,
                        version))


def _graph_name(leaf: Any, chunks: Chunks) -> str:
    """The dask name of a leaf's array (see :func:`graph_token`), for these blocks."""
    from dask.base import tokenize

    return f"hyperslab-{leaf._v_name}-{tokenize(graph_token(leaf), chunks)}"


def leaf_to_dask(leaf: Any, chunks: Any = None, name: str | None = None) -> Any:
    """A dask array of ``leaf`` (see :meth:`hyperslab.Array.to_dask`)."""
    da = dask_array_module()
    shape: Shape = tuple(leaf.shape)
    dtype = np.dtype(leaf.dtype)
    blocks = aligned_chunks(shape, dtype, leaf.chunks, chunks)
    # Blocks read in the task's thread where Dask has several to run at once, and the
    # block comes back as the dtype says (native byte order: read_leaf_box's).
    several = math.prod(len(sizes) for sizes in blocks) > 1
    here = several and len(shape) > 0 and dtype.isnative
    array = da.from_array(
        leaf,
        chunks=blocks,
        name=name or _graph_name(leaf, blocks),
        lock=False,  # a leaf is shared by threads (docs/threads.md)
        asarray=False,
        getitem=read_block_here if here else read_block,
        meta=np.empty((0,) * len(shape), dtype=dtype),
    )
    from hyperslab.compute.daskio.fused import LeafArray  # imports dask.array

    return LeafArray.of(array, leaf)

