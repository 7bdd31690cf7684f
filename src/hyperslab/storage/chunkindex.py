"""The chunk index of a chunked dataset: grid coordinates -> where each chunk is stored.

HDF5 answers "where is chunk X?" (``H5Dget_chunk_info_by_coord``) and "where is the i-th
chunk?" (``H5Dget_chunk_info``) by scanning its chunk index on every call: milliseconds each
with 100,000 chunks, tens of milliseconds with a million.  :class:`ChunkIndex` instead lists
every written chunk once with ``H5Dchunk_iter`` (O(n), about 1.5 us a chunk here) into
compact NumPy arrays, after which a look-up is array indexing.

Chunks are named by their *grid coordinates*: the chunk numbers along each dimension
(element start // chunkshape).  The grid has ``ceil(shape / chunkshape)`` chunks per
dimension.

Look-ups go through one of two maps from grid coordinates to a row of the compact arrays:

* **dense**: an ``int64`` array over the whole grid (row number, -1 for a chunk never
  written), used when the grid has at most ``max(DENSE_MIN_CELLS, DENSE_MAX_RATIO *
  nwritten)`` cells, so it costs at most 8 bytes a cell and 32 bytes per written chunk;
* **hash**: a dict keyed by the coordinate tuple, for sparse grids (a huge grid with few
  written chunks, e.g. an EArray resized far beyond its data).

A :class:`ChunkIndex` is an immutable snapshot.  Keeping it current while a dataset is
written is the job of :mod:`hyperslab.storage.rawchunks`, helped by :func:`touched_chunks`
(exactly which chunks a write at an h5py selection touches).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, product
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from hyperslab._typing import Shape
from hyperslab.errors import HDF5ExtError

DENSE_MIN_CELLS = 1 << 16
"""A grid with at most this many cells always gets a dense map (512 KiB)."""

DENSE_MAX_RATIO = 4
"""A bigger grid gets a dense map only if it has at most this many cells per written chunk."""

COLLECT_BATCH = 1024
"""Chunks buffered as h5py objects before conversion to arrays while iterating.

Converting in batches keeps the memory of a build bounded (a million ``StoreInfo`` tuples
kept until the end take ~220 MB and, with the garbage collector on, ~20% longer) at no
measurable cost in time.
"""

IntArray = npt.NDArray[np.int64]

_INT64_END = 2**63
_OFFSET = itemgetter(0)
_MASK = itemgetter(1)
_ADDR = itemgetter(2)
_SIZE = itemgetter(3)


class ChunkLocation(NamedTuple):
    """Where one written chunk is stored.

    Attributes
    ----------
    offset : int
        The byte address of the chunk in the file.
    size : int
        The stored (filtered) size of the chunk in bytes.
    filter_mask : int
        Bit ``i`` set means filter ``i`` of the pipeline was skipped for this chunk.
    """

    offset: int
    size: int
    filter_mask: int


def grid_shape(shape: Sequence[int], chunkshape: Sequence[int]) -> Shape:
    """Return the number of chunks along each dimension: ``ceil(shape / chunkshape)``."""
    return tuple(-(-int(s) // int(c)) for s, c in zip(shape, chunkshape, strict=True))


def check_grid_coords(coords: Any, grid: Shape, where: str = "") -> tuple[int, ...]:
    """``coords`` as a tuple of ints inside ``grid`` (``where`` ends the error messages).

    Raises
    ------
    TypeError
        If ``coords`` is not a sequence of ints.
    ValueError
        If it has another rank than ``grid``.
    IndexError
        If it lies outside ``grid``.
    """
    try:
        key = tuple(operator.index(c) for c in coords)
    except TypeError:
        raise TypeError(f"grid coordinates must be a sequence of ints, not {coords!r}") from None
    if len(key) != len(grid):
        raise ValueError(
            f"grid coordinates {key} have {len(key)} dimension(s), the chunk grid "
            f"{grid}{where} has {len(grid)}"
        )
    for c, g in zip(key, grid, strict=True):
        if not 0 <= c < g:
            raise IndexError(f"grid coordinates {key} are outside the chunk grid {grid}{where}")
    return key


def uses_dense_map(grid: Sequence[int], nwritten: int) -> bool:
    """Whether an index over ``grid`` with ``nwritten`` chunks uses a dense map (see module)."""
    return math.prod(grid) <= max(DENSE_MIN_CELLS, DENSE_MAX_RATIO * nwritten)


def _strides(grid: Sequence[int]) -> Shape:
    """C-order strides (in cells) of an array of shape ``grid``."""
    strides = []
    step = 1
    for n in reversed(grid):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def _representable(info: Any, ndim: int) -> bool:
    """Whether a ``StoreInfo``'s fields fit the index's arrays (int64, uint32)."""
    try:
        return (len(info[0]) == ndim and all(0 <= int(c) < _INT64_END for c in info[0])
                and 0 <= int(info[1]) < 2**32 and 0 <= int(info[2]) < _INT64_END
                and 0 <= int(info[3]) < _INT64_END)
    except (TypeError, ValueError):
        return False


def _to_arrays(
    buffer: list[Any], ndim: int, strict: bool = True
) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.uint32]]:
    """Convert buffered ``StoreInfo`` tuples to arrays (vectorised: no Python loop).

    Entries whose values do not fit (past 2**63: a damaged chunk index) raise
    HDF5ExtError, or are left out when not ``strict``.
    """
    n = len(buffer)
    try:
        starts = np.fromiter(chain.from_iterable(map(_OFFSET, buffer)), np.int64, n * ndim)
        offsets = np.fromiter(map(_ADDR, buffer), dtype=np.int64, count=n)
        sizes = np.fromiter(map(_SIZE, buffer), dtype=np.int64, count=n)
        masks = np.fromiter(map(_MASK, buffer), dtype=np.uint32, count=n)
    except TypeError:  # an unallocated chunk (no address): h5py lists none, but be safe
        return _to_arrays([info for info in buffer if info[2] is not None], ndim, strict)
    except OverflowError as exc:  # past 2**63: what a damaged chunk index holds
        if not strict:
            return _to_arrays([info for info in buffer if _representable(info, ndim)], ndim)
        raise HDF5ExtError(
            f"the chunk index lists a chunk whose coordinates, address, size or filter mask "
            f"are out of range ({exc}): the file is damaged"
        ) from exc
    return starts.reshape(n, ndim), offsets, sizes, masks


def collect_chunks(
    iterate: Callable[[Callable[[Any], None]], Any], ndim: int, strict: bool = True
) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.uint32]]:
    """Run one chunk iteration and return its chunks as arrays.

    The callback only appends h5py's tuple to a list (a closure, the cheapest Python
    callback measured: ~0.1-0.2 us a chunk on top of h5py's ~1.1 us); every
    ``COLLECT_BATCH`` chunks the list is converted to arrays and emptied.

    Parameters
    ----------
    iterate : callable
        ``DatasetID.chunk_iter``: calls its argument once per written chunk with h5py's
        ``StoreInfo(chunk_offset, filter_mask, byte_offset, size)``.
    ndim : int
        The rank of the dataset.
    strict : bool, default True
        Whether an entry whose coordinates, address, size or filter mask are out of range
        (past 2**63: a damaged chunk index) raises HDF5ExtError; else it is left out, as
        HDF5's look-ups, which cannot find it, leave it out (its chunk reads as the fill
        value).

    Returns
    -------
    starts : ndarray of int64, shape (n, ndim)
        Element coordinates of the chunks' first elements.
    offsets, sizes : ndarray of int64, shape (n,)
        Byte addresses and stored sizes.
    filter_masks : ndarray of uint32, shape (n,)
    """
    buffer: list[Any] = []
    append = buffer.append
    parts = []
    batch = COLLECT_BATCH

    def callback(info: Any) -> None:
        append(info)
        if len(buffer) >= batch:
            parts.append(_to_arrays(buffer, ndim, strict))
            buffer.clear()

    iterate(callback)
    parts.append(_to_arrays(buffer, ndim, strict))
    if len(parts) == 1:
        return parts[0]
    starts, offsets, sizes, masks = zip(*parts, strict=True)
    return (
        np.concatenate(starts),
        np.concatenate(offsets),
        np.concatenate(sizes),
        np.concatenate(masks),
    )


class ChunkIndex:
    """Where every written chunk of a dataset is, as of when the index was made.

    Use :meth:`build` (one ``chunk_iter`` pass) or :meth:`from_arrays`.

    Attributes
    ----------
    chunkshape : tuple of int
        The chunk shape in elements.
    grid : tuple of int
        Chunks per dimension (``ceil(shape / chunkshape)``) when the index was made.
    nwritten : int
        Number of written (allocated) chunks.
    coords : ndarray of int64, shape (nwritten, ndim)
        Grid coordinates of the written chunks, in C order of the grid.
    offsets, sizes : ndarray of int64, shape (nwritten,)
        Byte address and stored size of each written chunk (rows as in ``coords``).
    filter_masks : ndarray of uint32, shape (nwritten,)
        Filter mask of each written chunk.
    dense : bool
        Whether look-ups use a dense map over the grid (else a dict; see the module).
    dense_rows : ndarray of int64 or None
        The dense map: for each cell of the grid, flattened in C order, its row in the
        arrays above or -1 for an unwritten chunk.  None for a hash map.
    """

    __slots__ = (
        "_rows",
        "_strides",
        "chunkshape",
        "coords",
        "dense",
        "dense_rows",
        "filter_masks",
        "grid",
        "ndim",
        "nwritten",
        "offsets",
        "sizes",
    )

    def __init__(
        self,
        chunkshape: Shape,
        grid: Shape,
        coords: IntArray,
        offsets: IntArray,
        sizes: IntArray,
        filter_masks: npt.NDArray[np.uint32],
        rows: Any,
    ) -> None:
        self.chunkshape = chunkshape
        self.grid = grid
        self.ndim = len(grid)
        self.coords = coords
        self.offsets = offsets
        self.sizes = sizes
        self.filter_masks = filter_masks
        self.nwritten = len(offsets)
        self.dense = isinstance(rows, np.ndarray)
        self.dense_rows: IntArray | None = rows if self.dense else None
        self._rows = rows
        self._strides = _strides(grid)
        for array in (coords, offsets, sizes, filter_masks):
            array.flags.writeable = False

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, dsid: Any, shape: Sequence[int], chunkshape: Sequence[int],
              strict: bool = True) -> ChunkIndex:
        """Index the chunks of an open dataset with one ``chunk_iter`` pass.

        Parameters
        ----------
        dsid : h5py.h5d.DatasetID
            The chunked dataset.
        shape, chunkshape : sequence of int
            Its current shape and its chunk shape.
        strict : bool, default True
            As for :func:`collect_chunks`.
        """
        chunks = tuple(int(c) for c in chunkshape)
        starts, offsets, sizes, masks = collect_chunks(dsid.chunk_iter, len(chunks), strict)
        coords = starts // np.asarray(chunks, dtype=np.int64)
        return cls.from_arrays(chunks, grid_shape(shape, chunks), coords, offsets, sizes, masks)

    @classmethod
    def from_arrays(
        cls,
        chunkshape: Sequence[int],
        grid: Sequence[int],
        coords: npt.ArrayLike,
        offsets: npt.ArrayLike,
        sizes: npt.ArrayLike,
        filter_masks: npt.ArrayLike,
    ) -> ChunkIndex:
        """Make an index from the grid coordinates and locations of the written chunks.

        ``sizes`` and ``filter_masks`` may be scalars (the same for every chunk).  Rows are
        put in C order of the grid.  Chunks outside ``grid`` are dropped; if a chunk is
        listed twice, the last listing wins.
        """
        grid = tuple(int(g) for g in grid)
        ndim = len(grid)
        coords = np.asarray(coords, dtype=np.int64).reshape(-1, ndim)
        offsets = np.asarray(offsets, dtype=np.int64).reshape(-1)
        sizes = np.broadcast_to(np.asarray(sizes, dtype=np.int64), offsets.shape).copy()
        masks = np.broadcast_to(np.asarray(filter_masks, dtype=np.uint32), offsets.shape).copy()
        inside = np.all((coords >= 0) & (coords < np.asarray(grid, dtype=np.int64)), axis=1)
        if not inside.all():
            coords, offsets, sizes, masks = (
                coords[inside],
                offsets[inside],
                sizes[inside],
                masks[inside],
            )
        linear = coords @ np.asarray(_strides(grid), dtype=np.int64)
        if len(linear) > 1 and not bool(np.all(linear[1:] > linear[:-1])):
            # Not in C order, or duplicates: keep the last listing of each chunk, sorted.
            reverse_unique = np.unique(linear[::-1], return_index=True)[1]
            order = len(linear) - 1 - reverse_unique
            coords, offsets, sizes, masks, linear = (
                coords[order],
                offsets[order],
                sizes[order],
                masks[order],
                linear[order],
            )
        n = len(offsets)
        rows: Any
        if uses_dense_map(grid, n):
            rows = np.full(math.prod(grid), -1, dtype=np.int64)
            rows[linear] = np.arange(n, dtype=np.int64)
        else:
            rows = dict(zip(map(tuple, coords.tolist()), range(n), strict=True))
        return cls(tuple(int(c) for c in chunkshape), grid, coords, offsets, sizes, masks, rows)

    # ------------------------------------------------------------------ look-ups
    def _check(self, coords: Sequence[int]) -> tuple[int, ...]:
        return check_grid_coords(coords, self.grid)

    def row(self, coords: tuple[int, ...]) -> int:
        """Row of the chunk at ``coords`` in the arrays, or -1; ``coords`` must be in the grid.

        This is the unchecked fast path (a tuple of ints inside :attr:`grid` is assumed);
        :meth:`locate` checks its argument.
        """
        rows = self._rows
        if self.dense:
            if self.ndim == 1:
                return rows.item(coords[0])
            linear = 0
            for c, s in zip(coords, self._strides):  # noqa: B905  (hot path)
                linear += c * s
            return rows.item(linear)
        return rows.get(coords, -1)

    def locate(self, coords: Sequence[int]) -> ChunkLocation | None:
        """Return where the chunk at grid ``coords`` is, or None if it was never written.

        Raises
        ------
        IndexError
            If ``coords`` is outside :attr:`grid`.
        """
        row = self.row(self._check(coords))
        if row < 0:
            return None
        return ChunkLocation(
            self.offsets.item(row), self.sizes.item(row), self.filter_masks.item(row)
        )

    def is_written(self, coords: Sequence[int]) -> bool:
        """Whether the chunk at grid ``coords`` was written (IndexError outside the grid)."""
        return self.row(self._check(coords)) >= 0

    def rows_of(self, coords: npt.ArrayLike) -> IntArray:
        """Rows of many chunks at once (-1 for unwritten ones), vectorised.

        Parameters
        ----------
        coords : array_like of int, shape (k, ndim)
            Grid coordinates, each inside :attr:`grid`.

        Raises
        ------
        IndexError
            If any coordinates are outside the grid.
        """
        coords = np.asarray(coords, dtype=np.int64).reshape(-1, self.ndim)
        if len(coords) and (bool(np.any(coords < 0)) or bool(np.any(coords >= self.grid))):
            bad = coords[np.any((coords < 0) | (coords >= self.grid), axis=1)][0]
            raise IndexError(
                f"grid coordinates {tuple(bad.tolist())} are outside the chunk grid {self.grid}"
            )
        if self.dense:
            linear = coords @ np.asarray(self._strides, dtype=np.int64)
            return np.asarray(self._rows[linear], dtype=np.int64)
        get = self._rows.get
        return np.fromiter(
            (get(key, -1) for key in map(tuple, coords.tolist())),
            dtype=np.int64,
            count=len(coords),
        )

    def lookup(self, coords: npt.ArrayLike) -> tuple[IntArray, IntArray, IntArray]:
        """Offsets, sizes and filter masks of many chunks (-1, -1, 0 for unwritten ones).

        ``coords`` is as for :meth:`rows_of`.
        """
        rows = self.rows_of(coords)
        written = rows >= 0
        if not self.nwritten:
            return np.full(len(rows), -1), np.full(len(rows), -1), np.zeros(len(rows), np.int64)
        safe = np.where(written, rows, 0)
        return (
            np.where(written, self.offsets[safe], -1),
            np.where(written, self.sizes[safe], -1),
            np.where(written, self.filter_masks[safe], 0).astype(np.int64),
        )

    def dense_offsets(self) -> IntArray:
        """Byte offsets over the whole grid (shape :attr:`grid`), -1 for unwritten chunks."""
        out = np.full(math.prod(self.grid), -1, dtype=np.int64)
        if self.nwritten:
            out[self.coords @ np.asarray(self._strides, dtype=np.int64)] = self.offsets
        return out.reshape(self.grid)

    def __iter__(self) -> Iterator[tuple[tuple[int, ...], ChunkLocation]]:
        """``(grid coords, location)`` of every written chunk, in C order of the grid."""
        for coords, offset, size, mask in zip(
            map(tuple, self.coords.tolist()),
            self.offsets.tolist(),
            self.sizes.tolist(),
            self.filter_masks.tolist(),
            strict=True,
        ):
            yield coords, ChunkLocation(offset, size, mask)

    def __len__(self) -> int:
        return self.nwritten

    def __repr__(self) -> str:
        kind = "dense" if self.dense else "hash"
        return (
            f"ChunkIndex(grid={self.grid}, chunkshape={self.chunkshape}, "
            f"nwritten={self.nwritten}, {kind})"
        )

    # ------------------------------------------------------------------ updates
    def updated(
        self,
        changes: Mapping[tuple[int, ...], ChunkLocation | None],
        grid: Sequence[int],
        limit: Sequence[int] | None = None,
    ) -> ChunkIndex:
        """Return a new index with some chunks changed and the grid resized.

        Parameters
        ----------
        changes : mapping
            Grid coordinates -> new location, or None for a chunk that no longer exists.
        grid : sequence of int
            The new grid; chunks outside it are dropped.
        limit : sequence of int, optional
            Chunks of this index at or beyond ``limit`` along any dimension are dropped
            (they were deleted by a shrink, even if the grid grew again since).
        """
        grid = tuple(int(g) for g in grid)
        bound = np.minimum(np.asarray(grid, dtype=np.int64), self.grid)
        if limit is not None:
            bound = np.minimum(bound, np.asarray(limit, dtype=np.int64))
        keep = np.all(self.coords < bound, axis=1)
        new = [(k, v) for k, v in changes.items() if v is not None]
        if changes:
            inside = [
                k for k in changes if all(0 <= c < g for c, g in zip(k, self.grid, strict=True))
            ]
            if inside:
                rows = self.rows_of(inside)
                keep[rows[rows >= 0]] = False
        coords = np.concatenate(
            [
                self.coords[keep],
                np.asarray([k for k, _ in new], dtype=np.int64).reshape(-1, self.ndim),
            ]
        )
        offsets = np.concatenate([self.offsets[keep], [v.offset for _, v in new]]).astype(np.int64)
        sizes = np.concatenate([self.sizes[keep], [v.size for _, v in new]]).astype(np.int64)
        masks = np.concatenate([self.filter_masks[keep], [v.filter_mask for _, v in new]])
        return ChunkIndex.from_arrays(self.chunkshape, grid, coords, offsets, sizes, masks)


ChunkSet = list[Any] | IntArray
"""Chunks touched by a selection: one sequence of chunk numbers per dimension (all
combinations are touched), or an ``(n, ndim)`` array of grid coordinates."""


# ----------------------------------------------------------------------------- selections


_INTEGERS = (int, np.integer)
_BOOLS = (bool, np.bool_)
_NAMES = (str, bytes)


def _axis_chunks(item: Any, n: int, c: int) -> range | IntArray | None:
    """Chunk numbers along one axis touched by one index ``item`` (None: unknown kind)."""
    if isinstance(item, _INTEGERS) and not isinstance(item, _BOOLS):
        i = int(item)
        i = i + n if i < 0 else i
        return range(i // c, i // c + 1)
    if isinstance(item, slice):
        r = range(*item.indices(n))
        if not r:
            return range(0)
        lo, hi = min(r[0], r[-1]), max(r[0], r[-1])
        step = abs(r.step)
        if step <= c:
            return range(lo // c, hi // c + 1)
        return np.unique(np.arange(lo, hi + 1, step, dtype=np.int64) // c)
    if isinstance(item, (list, np.ndarray)):
        array = np.asarray(item)
        if array.size == 0:
            return range(0)
        if array.ndim != 1:
            return None
        if array.dtype == np.bool_:
            if len(array) != n:
                return None
            index = np.flatnonzero(array).astype(np.int64)
        elif array.dtype.kind in "iu":
            index = array.astype(np.int64)
            index = np.where(index < 0, index + n, index)
        else:
            return None
        return np.unique(index // c)
    return None


def touched_chunks(key: Any, shape: Shape, chunkshape: Shape) -> ChunkSet | None:
    """Return the chunks that writing at ``key`` (an h5py selection) touches.

    Parameters
    ----------
    key : object
        What ``h5py.Dataset.__setitem__`` got: ints, slices (any step), Ellipsis, field
        names, one integer or boolean list/array per axis, or a boolean mask of the
        dataset's shape.
    shape, chunkshape : tuple of int
        The dataset's shape and chunk shape.

    Returns
    -------
    list or ndarray or None
        One ``range`` or array of chunk numbers per dimension (the touched chunks are all
        their combinations); an ``(n, ndim)`` array of grid coordinates for a boolean mask;
        None when the key is of a kind not understood here (the caller must assume that
        anything may have been written).
    """
    ndim = len(shape)
    items = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, _NAMES) for k in items):
        items = tuple(k for k in items if not isinstance(k, _NAMES))  # compound field names
    if (
        len(items) == 1
        and isinstance(items[0], np.ndarray)
        and items[0].dtype == np.bool_
        and items[0].shape == tuple(shape)
        and ndim > 1
    ):
        points = np.argwhere(items[0]) // np.asarray(chunkshape, dtype=np.int64)
        return np.unique(points, axis=0) if len(points) else points.reshape(0, ndim)
    at = [i for i, k in enumerate(items) if k is Ellipsis]  # not ``in``: arrays compare
    if at:
        if len(at) > 1:
            return None
        fill = (slice(None),) * (ndim - len(items) + 1)
        items = items[: at[0]] + fill + items[at[0] + 1 :]
    if len(items) > ndim:
        return None
    items = items + (slice(None),) * (ndim - len(items))
    axes = []
    for item, n, c in zip(items, shape, chunkshape, strict=True):
        chunks = _axis_chunks(item, int(n), int(c))
        if chunks is None:
            return None
        axes.append(chunks)
    return axes


def count_chunks(chunks: ChunkSet) -> int:
    """How many chunks a :data:`ChunkSet` holds."""
    if isinstance(chunks, np.ndarray):
        return len(chunks)
    return math.prod(len(axis) for axis in chunks)


def chunk_keys(chunks: ChunkSet) -> Any:
    """The grid-coordinate tuples of a :data:`ChunkSet`."""
    if isinstance(chunks, np.ndarray):
        return map(tuple, chunks.tolist())
    return product(*(a.tolist() if isinstance(a, np.ndarray) else a for a in chunks))


__all__ = [
    "COLLECT_BATCH",
    "DENSE_MAX_RATIO",
    "DENSE_MIN_CELLS",
    "ChunkIndex",
    "ChunkLocation",
    "ChunkSet",
    "chunk_keys",
    "collect_chunks",
    "count_chunks",
    "grid_shape",
    "touched_chunks",
    "uses_dense_map",
]
