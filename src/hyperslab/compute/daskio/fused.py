"""A leaf's dask array whose reductions read and reduce each block in one task.

``leaf.to_dask().sum(axis=0)`` on a plain dask array reads every block into fresh memory
(a task's output), and a second step sums it: the block goes out to memory and back.
:class:`LeafArray` is that dask array with ``sum``, ``prod``, ``min``, ``max`` and
``mean`` taking another route: each task reduces its block through hyperslab's tile
reducer (:func:`hyperslab.compute.reductions.reduce`), reading chunk-aligned tiles into a
buffer its thread reuses and reducing each tile while it is in cache; Dask then combines
the small partial results as it combines its own.  Results are NumPy's (the same
semantics as :meth:`hyperslab.Array.sum`), on any scheduler: the tasks hold the leaf,
which pickles when its file is open read-only.

Everything else, and every array derived from it (``x[::2]``, ``x * 2``), is plain Dask:
the fused route serves only the reduction methods called on the leaf's own array, with
NumPy's arguments (``out=`` goes to Dask's).
"""

from __future__ import annotations

import itertools
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import dask.array as da
import numpy as np
from dask.array.utils import validate_axis
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from hyperslab._typing import AnyArray
from hyperslab.chunked import tiles as tiling
from hyperslab.chunked.regions import Box
from hyperslab.nodes.leaves.reducible import read_leaf_box

__all__ = ["FusedArray", "LeafArray", "block_keys", "block_reduce", "opening_token"]

Result = TypeVar("Result")

_BUFFERS = threading.local()
"""Each thread's tile buffer, reused by every block it reduces (no fresh memory to fault
in per tile or per task)."""


class BlockTiles:
    """One block of a leaf as a reduction source (see :mod:`hyperslab.compute.reductions`):
    chunk-aligned tiles read one after the other in the calling thread (a Dask task), each
    into the thread's reused buffer."""

    def __init__(self, leaf: Any, key: tuple[slice, ...]) -> None:
        self._leaf = leaf
        self._corner = tuple(int(k.start) for k in key)
        self.shape: tuple[int, ...] = tuple(int(k.stop) - int(k.start) for k in key)
        dtype = leaf._dataset.dtype
        self.dtype = dtype.newbyteorder("=") if dtype.byteorder not in "=|" else dtype

    def _map_tiles(self, work: Callable[[Box, Any], Result],
                   target_bytes: int | None = None, along: Sequence[int] = ()
                   ) -> Iterator[Result]:
        dataset = self._leaf._dataset
        size = tiling.TILE_BYTES if target_bytes is None else target_bytes
        tile = tiling.tile_shape(self.shape, dataset.chunks, dataset.dtype.itemsize, size,
                                 along)
        corner = self._corner
        for box in tiling.tiles(self.shape, tile):
            key = tuple(slice(at + lo, at + hi)
                        for (lo, hi), at in zip(box, corner, strict=True))
            yield work(box, read_leaf_box(self._leaf, key, True, _BUFFERS))


def block_reduce(leaf: Any, key: tuple[slice, ...], op: str, axes: tuple[int, ...],
                 dtype: Any) -> AnyArray:
    """A task: the ``op`` of the block ``key`` of ``leaf`` along ``axes`` (kept, of
    length 1), read and reduced tile by tile in the calling thread."""
    from hyperslab.compute.reductions import reduce

    result = reduce(BlockTiles(leaf, key), op, axes, dtype=dtype, keepdims=True)
    return np.asarray(result)


_OPENINGS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_OPENINGS_LOCK = threading.Lock()


def opening_token(file: Any) -> str:
    """A random token of an open File object, the same for its whole life."""
    with _OPENINGS_LOCK:
        token = _OPENINGS.get(file)
        if token is None:
            token = _OPENINGS[file] = uuid.uuid4().hex
        return token


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted({validate_axis(item, ndim) for item in items}))


def block_keys(chunks: Sequence[Sequence[int]]
               ) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """Every block of dask ``chunks``: its index and its slices, in C order."""
    starts = [np.cumsum((0, *sizes[:-1])) for sizes in chunks]
    for index in itertools.product(*(range(len(c)) for c in chunks)):
        yield index, tuple(slice(int(starts[d][i]), int(starts[d][i]) + int(chunks[d][i]))
                           for d, i in enumerate(index))


def _sum_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """NumPy's (and Dask's) result dtype of a sum or product without ``dtype=``."""
    return np.zeros(1, dtype=dtype).sum().dtype


def _mean_dtypes(dtype: np.dtype[Any], given: Any) -> tuple[np.dtype[Any], np.dtype[Any]]:
    """The accumulator and the result dtype of a mean (NumPy's rules: float64 for integers
    and booleans, float32 to sum float16)."""
    result = np.dtype(given) if given is not None else np.zeros(1, dtype=dtype).mean().dtype
    if given is not None:
        return result, result
    accumulator = np.dtype("f4") if dtype == np.float16 else result
    return accumulator, result


class FusedArray(da.Array):
    """A dask array whose ``sum``, ``prod``, ``min``, ``max`` and ``mean`` compute each
    block's reduction in one task (:meth:`_block_task`), from the data on disk, instead
    of materializing the block first (see the module docstring)."""

    def _block_task(self, key: tuple[slice, ...], op: str, axes: tuple[int, ...],
                    dtype: Any) -> tuple[Any, ...]:
        """The task that gives the ``op`` of block ``key`` (axes kept)."""
        raise NotImplementedError

    def _files(self) -> list[Any]:
        """The open Files whose nodes the tasks hold."""
        raise NotImplementedError

    def _opened_token(self) -> list[str]:
        """A token of each File the tasks hold, new for every opening.  The tasks hold
        nodes of that opening: a scheduler that still knows a key from an earlier opening
        (distributed forgets finished keys asynchronously) would otherwise send that
        task, whose node is closed, instead of this one."""
        return [opening_token(file) for file in self._files()]

    def _fused(self, op: str, axis: Any, dtype: Any) -> tuple[Any, tuple[int, ...]] | None:
        """The dask array of each block's ``op`` (reduced axes kept, of length 1 per
        block), or None where Dask's own route is the one to take (an empty array)."""
        if 0 in self.shape or self.ndim == 0:
            return None
        axes = _axes(axis, self.ndim)
        name = f"{op}-hyperslab-{tokenize(self.name, self._opened_token(), op, axes, dtype)}"
        graph: dict[Any, Any] = {(name, *index): self._block_task(key, op, axes, dtype)
                                 for index, key in block_keys(self.chunks)}
        chunks = tuple((1,) * len(c) if d in axes else c for d, c in enumerate(self.chunks))
        out_dtype = (np.dtype(dtype) if dtype is not None
                     else _sum_dtype(self.dtype) if op in ("sum", "prod") else self.dtype)
        layer = HighLevelGraph.from_collections(name, graph, dependencies=())
        partials = da.Array(layer, name, chunks,
                            meta=np.empty((0,) * self.ndim, dtype=out_dtype))
        return partials, axes

    def _combined(self, op: str, axis: Any, dtype: Any, keepdims: bool, split_every: Any,
                  out: Any) -> Any:
        """Dask's ``op`` of the per-block results, or None where Dask's own route is taken
        (``out=``, an empty array)."""
        fused = None if out is not None else self._fused(op, axis, dtype)
        if fused is None:
            return None
        partials, axes = fused
        extra = {} if op in ("min", "max") else {"dtype": dtype}
        return getattr(partials, op)(axis=axes, keepdims=keepdims, split_every=split_every,
                                     **extra)

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
            split_every: Any = None, out: Any = None) -> Any:
        """Dask's ``sum``, each block read and summed in one task."""
        combined = self._combined("sum", axis, dtype, keepdims, split_every, out)
        if combined is None:
            return super().sum(axis, dtype, keepdims, split_every, out)
        return combined

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
             split_every: Any = None, out: Any = None) -> Any:
        """Dask's ``prod``, each block read and multiplied out in one task."""
        combined = self._combined("prod", axis, dtype, keepdims, split_every, out)
        if combined is None:
            return super().prod(axis, dtype, keepdims, split_every, out)
        return combined

    def min(self, axis: Any = None, keepdims: bool = False, split_every: Any = None,
            out: Any = None) -> Any:
        """Dask's ``min``, each block read and reduced in one task."""
        combined = self._combined("min", axis, None, keepdims, split_every, out)
        if combined is None:
            return super().min(axis, keepdims, split_every, out)
        return combined

    def max(self, axis: Any = None, keepdims: bool = False, split_every: Any = None,
            out: Any = None) -> Any:
        """Dask's ``max``, each block read and reduced in one task."""
        combined = self._combined("max", axis, None, keepdims, split_every, out)
        if combined is None:
            return super().max(axis, keepdims, split_every, out)
        return combined

    def mean(self, axis: Any = None, dtype: Any = None, keepdims: bool = False,
             split_every: Any = None, out: Any = None) -> Any:
        """Dask's ``mean``: each block read and summed in one task, the sum of the block
        sums divided by the count."""
        if not np.issubdtype(self.dtype, np.number) and self.dtype != np.bool_:
            return super().mean(axis, dtype, keepdims, split_every, out)
        accumulator, result = _mean_dtypes(self.dtype, dtype)
        fused = None if out is not None else self._fused("sum", axis, accumulator)
        if fused is None:
            return super().mean(axis, dtype, keepdims, split_every, out)
        partials, axes = fused
        count = int(np.prod([self.shape[d] for d in axes]))
        total = partials.sum(axis=axes, dtype=accumulator, keepdims=keepdims,
                             split_every=split_every)
        return (total / count).astype(result)


class LeafArray(FusedArray):
    """The dask array of a leaf (:meth:`hyperslab.Array.to_dask`): a ``dask.array.Array``
    whose ``sum``, ``prod``, ``min``, ``max`` and ``mean`` read and reduce each block in one
    task (see the module docstring)."""

    _hyperslab_leaf: Any

    @classmethod
    def of(cls, array: Any, leaf: Any) -> LeafArray:
        """``array`` (the leaf's plain dask array) with fused reductions."""
        made = cls(array.dask, array.name, array.chunks, meta=array._meta)
        made._hyperslab_leaf = leaf
        return made

    def _block_task(self, key: tuple[slice, ...], op: str, axes: tuple[int, ...],
                    dtype: Any) -> tuple[Any, ...]:
        return (block_reduce, self._hyperslab_leaf, key, op, axes, dtype)

    def _files(self) -> list[Any]:
        return [self._hyperslab_leaf._v_file]
