"""Leaves: the nodes that hold data (Array, CArray, EArray, and later Table)."""

from __future__ import annotations

import contextlib
import math
import operator
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hyperslab._typing import AnyArray, Selection, Shape
from hyperslab.chunked.access import read_selection, write_selection
from hyperslab.chunked.engine import ChunkEngine
from hyperslab.codecs.filters import Filters
from hyperslab.codecs.pipeline import FilterStep, pipeline_to_filters
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.atoms.atom_hdf5 import atom_from_hdf5_dtype
from hyperslab.nodes.leaves.directchunk import DirectChunking
from hyperslab.nodes.leaves.flavor import (
    check_flavor,
    internal_flavor,
    internal_to_flavor,
    stored_flavor,
)
from hyperslab.nodes.leaves.rwlock import ReadWriteLock
from hyperslab.nodes.tree.compat import LeafCompat, PlainNode
from hyperslab.storage import attributes as raw
from hyperslab.storage.datasets import Dataset
from hyperslab.storage.tree import Kind

if TYPE_CHECKING:
    from hyperslab.nodes.atoms.enum import Enum
    from hyperslab.nodes.tree.owner import NodeOwner

_OPENING = threading.RLock()
"""Makes a leaf's :class:`Dataset` and :class:`ChunkEngine` once when threads read it first
at the same time (each would otherwise build its own chunk index)."""

_ROW_BUFFER_BYTES = 1 << 20
"""Bytes read at a time when iterating over rows."""

_NO_LOCK: AbstractContextManager[Any] = contextlib.nullcontext()
"""What reads and writes of a leaf of a read-only file hold: nothing can change it."""


def byteorder_of(dtype: np.dtype[Any]) -> str:
    """PyTables' byteorder name of a dtype: 'little', 'big' or 'irrelevant'."""
    base = dtype.base if dtype.subdtype is not None else dtype
    if base.fields:
        orders = {byteorder_of(base.fields[n][0]) for n in base.names or ()}
        orders.discard("irrelevant")
        return orders.pop() if len(orders) == 1 else "irrelevant"
    order = base.byteorder
    if order == "|":
        return "irrelevant"
    if order == "=":
        return sys.byteorder
    return "little" if order == "<" else "big"


def quantize(data: AnyArray, least_significant_digit: int) -> AnyArray:
    """Round ``data`` to keep ``least_significant_digit`` decimal digits, in powers of two.

    The result compresses much better and stays within ``0.5 * 10**-digits`` of the input.
    """
    exponent = -least_significant_digit
    exponent = math.floor(exponent) if exponent < 0 else math.ceil(exponent)
    bits = math.ceil(math.log2(10.0 ** -exponent))
    scale = 2.0**bits
    result: AnyArray = np.around(scale * np.asarray(data)) / scale
    return result


def check_value_type(value: Any, dtype: np.dtype[Any]) -> None:
    """Refuse, as PyTables does (TypeError), to write None, text into numbers, or any other
    object that is no array, scalar, list or tuple: NumPy would turn some into NaN or
    make an object array of them.

    Raises
    ------
    TypeError
        Naming the type of ``value``.
    """
    if isinstance(value, (np.ndarray, list, tuple, int, float, complex, bytes, np.generic)):
        return
    if isinstance(value, str) and dtype.base.kind in "SU":
        return  # text into strings: stored encoded
    if value is None or isinstance(value, str) or np.asarray(value).dtype.kind == "O":
        raise TypeError(
            f"objects of type ``{type(value).__name__}`` are not supported in this context: "
            f"write NumPy arrays or scalars, lists, tuples, int, float, complex or bytes"
        )


def _has_ellipsis(key: Any) -> bool:
    return key is Ellipsis or (isinstance(key, tuple) and any(k is Ellipsis for k in key))


def check_out(out: AnyArray, data: AnyArray) -> None:
    """Check that ``out`` can take ``data`` (a leaf's read): PyTables' checks and messages
    first (size in bytes, then C order), then shape and dtype, whose byte order may differ.

    Raises
    ------
    ValueError
        If it cannot.
    """
    if out.nbytes != data.nbytes:
        raise ValueError(f"output array size invalid, got {out.nbytes} bytes, need "
                         f"{data.nbytes} bytes: it does not match the selection's shape "
                         f"{data.shape} and dtype {data.dtype}")
    if not out.flags.c_contiguous:
        raise ValueError("output array not C contiguous")
    if out.shape != data.shape or out.dtype.newbyteorder("=") != data.dtype.newbyteorder("="):
        raise ValueError(
            f"output array of shape {out.shape} and dtype {out.dtype} does not match "
            f"the selection's shape {data.shape} and dtype {data.dtype}"
        )


class Leaf(DirectChunking, LeafCompat, PlainNode):
    """Base class of the data-holding nodes.

    Shapes, dtypes and filters are read from the file on access (cheap), so a leaf object
    costs almost nothing until its data is used.
    """

    _c_classid: ClassVar[str] = "LEAF"
    _c_kind: ClassVar[Kind] = Kind.DATASET

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self._dataset_: Dataset | None = None
        self._taken: Dataset | None = None  # made by the file to classify the leaf
        self._engine_: ChunkEngine | None = None
        self._lsd: int | None = None
        self._flavor: str | None = None  # read once: every read result depends on it
        # Threads share a leaf of a writable file through this lock (see nodes/leaves/rwlock.py).
        self._rwlock: ReadWriteLock | None = None if file.mode == "r" else ReadWriteLock()

    @property
    def _dataset(self) -> Dataset:
        dataset = self._dataset_
        if dataset is None or not self._v__isopen:
            with _OPENING:
                if self._dataset_ is not None and self._dataset_ is not dataset:
                    return self._dataset_  # made meanwhile by another thread
                h5id, taken = self._g_h5id, self._taken
                self._taken = None
                dataset = self._dataset_ = (
                    taken if taken is not None and taken.dsid is h5id
                    else Dataset(h5id, self._v_file._file_access))
                self._engine_ = None
                self._v_file._guard.attach(self, dataset)
        return dataset

    def _g_take_dataset(self, dataset: Dataset) -> None:
        """Open the leaf's dataset as ``dataset`` (over its HDF5 object, made by the file
        to classify a leaf without ``CLASS``) rather than making another (~30 us)."""
        self._taken = dataset

    @property
    def _engine(self) -> ChunkEngine:
        """The raw-chunk engine of this leaf's dataset (made on first use)."""
        dataset = self._dataset
        engine = self._engine_
        if engine is None:
            with _OPENING:
                engine = self._engine_
                if engine is None:
                    file = self._v_file
                    engine = self._engine_ = ChunkEngine(dataset, file._executor, file._workers,
                                                         file.params.chunk_cache_size)
        return engine

    def _shared(self, owner: int | None = None) -> AbstractContextManager[Any]:
        """Hold the leaf's lock shared (for one read of its data; ``owner``: the thread a
        pool task reads for)."""
        lock = self._rwlock
        return _NO_LOCK if lock is None else lock.shared(owner)

    def _exclusive(self) -> AbstractContextManager[Any]:
        """Hold the leaf's lock exclusive (for one whole change of its data)."""
        lock = self._rwlock
        return _NO_LOCK if lock is None else lock.exclusive()

    # ------------------------------------------------------------------ description
    @property
    def shape(self) -> Shape:
        """The shape of the data."""
        return self._dataset.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the elements, in native byte order (as read results have)."""
        dtype = self._dataset.dtype
        if dtype.subdtype is not None:  # shaped atoms: the base's byte order
            base, shape = dtype.subdtype
            return np.dtype((base.newbyteorder("=") if not base.isnative else base, shape))
        return dtype if dtype.isnative else dtype.newbyteorder("=")

    @property
    def atom(self) -> Atom:
        """The atom (PyTables' element type description) of the leaf."""
        dataset = self._dataset
        hdf5_class = dataset.hdf5_class
        # Enums are recognised from h5py's dtype metadata (h5py's bools are an int8 enum).
        dtype = dataset.raw_dtype if hdf5_class == "ENUM" else dataset.dtype
        return atom_from_hdf5_dtype(dtype, hdf5_class=hdf5_class, dflt=self._atom_dflt())

    def _atom_dflt(self) -> Any:
        try:
            value = self._dataset.fillvalue()
        except (OSError, ValueError, TypeError, RuntimeError):
            return None
        return value

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def maindim(self) -> int:
        """The dimension along which rows are read and iterated (0 unless extendable)."""
        extdim = self.extdim
        return extdim if extdim >= 0 else 0

    @property
    def extdim(self) -> int:
        """The first unlimited dimension (-1 for leaves that cannot grow).

        As in PyTables, this holds for any leaf: a dataset written elsewhere (h5py) may be
        unlimited and yet be opened as a CArray (complex numbers, say).
        """
        return next((i for i, m in enumerate(self._dataset.maxshape) if m is None), -1)

    @property
    def nrows(self) -> int:
        """The number of rows along the main dimension (1 for scalars)."""
        shape = self.shape
        return shape[self.maindim] if shape else 1

    @property
    def chunkshape(self) -> Shape | None:
        """The chunk shape, or None for contiguous leaves."""
        return self._dataset.chunks

    @property
    def chunks(self) -> Shape | None:
        """The chunk shape, or None for contiguous leaves: h5py's ``Dataset.chunks``, the
        same as PyTables' :attr:`chunkshape` (what Dask and xarray look for)."""
        return self.chunkshape

    @property
    def filters(self) -> Filters:
        """The filters applied to the data, read back from the file's filter pipeline."""
        steps = [FilterStep(s.filter_id, s.flags, s.cd_values, s.name)
                 for s in self._dataset.pipeline()]
        return pipeline_to_filters(steps)

    @property
    def byteorder(self) -> str:
        """Byte order of the data in the file: 'little', 'big' or 'irrelevant'.

        As in PyTables, one-byte numbers, strings and bools are 'irrelevant', but enums
        report their HDF5 type's order whatever their size (h5py's bools are int8 enums).
        """
        dataset = self._dataset
        order = byteorder_of(dataset.dtype)
        if order == "irrelevant" and dataset.hdf5_class == "ENUM":
            return dataset.hdf5_order or order
        return order

    @property
    def size_on_disk(self) -> int:
        """Bytes the data takes in the file (compressed)."""
        return self._dataset.storage_size()

    @property
    def size_in_memory(self) -> int:
        """Bytes the data takes in memory (uncompressed)."""
        return int(math.prod(self.shape)) * self._dataset.dtype.itemsize

    @property
    def flavor(self) -> str:
        """The flavor of read results: 'numpy' or 'python' (lists and Python scalars).

        Kept in the ``FLAVOR`` attribute, as PyTables does: setting it writes the
        attribute, deleting it removes the attribute (back to 'numpy').  A flavor stored
        that is not available (e.g. 'numeric' of PyTables 1.x files) is reported as it
        is, and reads give NumPy arrays with a :class:`~hyperslab.errors.FlavorWarning`.

        Raises
        ------
        FlavorError
            When set to something else than 'numpy' or 'python'.
        """
        if self._flavor is None:
            # Most leaves store none (PyTables' CArrays): asking first costs ~1.5 us, the
            # failed open of a missing attribute ~10 us (an h5py exception).
            h5id = self._g_h5id
            try:
                present = raw.has_attribute(h5id, "FLAVOR")
            except HDF5ExtError:  # damaged attribute messages: the read decides, as before
                present = True
            stored = raw.read_string_attribute(h5id, "FLAVOR") if present else None
            self._flavor = stored_flavor(stored)
        return self._flavor

    @flavor.setter
    def flavor(self, flavor: str) -> None:
        self._g_check_writable()
        check_flavor(flavor)
        self._v_attrs.FLAVOR = flavor
        self._flavor = flavor

    @flavor.deleter
    def flavor(self) -> None:
        del self._v_attrs.FLAVOR
        self._flavor = internal_flavor

    def _g_attr_changed(self, name: str) -> None:
        if name == "FLAVOR":
            self._flavor = None

    def _atom_enum(self) -> Enum:
        """The :class:`Enum` of the leaf's atom (``get_enum`` of arrays and VLArrays).

        Raises
        ------
        TypeError
            If the atom is not an enumerated one.
        """
        atom: Any = self.atom
        if atom.kind != "enum":
            raise TypeError(f"array ``{self._v_pathname}`` is not of an enumerated type")
        enum: Enum = atom.enum
        return enum

    @property
    def rowsize(self) -> int:
        """Bytes of one row along the main dimension."""
        shape = list(self.shape)
        if shape:
            shape[self.maindim] = 1
        return int(math.prod(shape)) * self._dataset.dtype.itemsize

    # ------------------------------------------------------------------ reading
    def _native(self, data: AnyArray) -> AnyArray:
        if data.dtype.isnative or data.dtype.byteorder == "|":
            return data
        return data.astype(data.dtype.newbyteorder("="))

    def _flavored(self, data: Any) -> Any:
        """``data`` (an array or NumPy scalar) in the leaf's flavor (as it is, with a
        FlavorWarning, for a flavor stored by another tool that is not available here)."""
        flavor = self.flavor
        if flavor == "numpy":
            return data
        return internal_to_flavor(data, flavor)

    def _check_out_flavor(self) -> None:
        if self.flavor != "numpy":
            raise TypeError(f"Optional 'out' argument may only be supplied if array flavor "
                            f"is 'numpy', currently is {self.flavor}")

    def __getitem__(self, key: Selection) -> Any:
        """Read a selection: ints, slices (any step), Ellipsis, index lists and masks."""
        if type(key) is int and self._rwlock is None and self._flavor == internal_flavor:
            # One item of a read-only leaf read before (loops of arr[i]): no lock, no
            # flavor to apply, the engine's shortest path (about 1 us less a read).
            engine = self._engine_
            if engine is not None and self._v__isopen:
                value = engine.read_int_item(key)
                if value is not None:
                    return value
        engine = self._engine
        with self._shared():
            item = engine.item_index(key)
            if item is not None:  # one element: the shortest path there is
                value = engine.read_item(item)
            else:  # one image stored per chunk (arr[c]): no selection to plan
                whole = engine.read_whole_chunk(key)
                data = self._native(read_selection(self._dataset, key, engine)
                                    if whole is None else whole)
        if item is not None:
            if type(value) is not np.ndarray and value.dtype.isnative:
                return self._flavored(value)
            data = self._native(np.asarray(value))
            return self._flavored(data[()] if data.ndim == 0 else data)
        if data.ndim == 0 and self.shape != () and not _has_ellipsis(key):
            # NumPy: ints only give a scalar, an Ellipsis a 0-d array
            return self._flavored(data[()])
        return self._flavored(data)

    def read(
        self,
        start: int | None = None,
        stop: int | None = None,
        step: int | None = None,
        out: AnyArray | None = None,
    ) -> Any:
        """Read rows ``start:stop:step`` along the main dimension.

        Parameters
        ----------
        start, stop, step : int, optional
            A slice of rows, as in Python (``step`` may be negative).
        out : numpy.ndarray, optional
            A C-contiguous array of the result's shape and dtype to read into.

        Raises
        ------
        ValueError
            If ``out`` has the wrong size (PyTables' "output array size invalid"), is not
            C-contiguous, or has another shape or dtype (byte order aside).
        """
        if out is not None:
            self._check_out_flavor()
        key: list[Any] = [slice(None)] * self.ndim
        if key:
            key[self.maindim] = slice(start, stop, step)
        with self._shared():
            if not key:
                data = self._native(read_selection(self._dataset, ()))
            else:
                data = self._native(read_selection(self._dataset, tuple(key), self._engine,
                                                   out))
        if out is not None:
            if data is out:  # decoded straight into it
                return out
            check_out(out, data)
            out[...] = data  # in out's byte order, as PyTables
            return out
        return self._flavored(data)

    def _read_numpy(self, start: int, stop: int) -> AnyArray:
        """Rows ``start:stop`` as a NumPy array whatever the flavor, without its warning
        (for file nodes, whose bytes old files may store with a flavor not available)."""
        key: list[Any] = [slice(None)] * self.ndim
        key[self.maindim] = slice(start, stop)
        with self._shared():
            return self._native(read_selection(self._dataset, tuple(key), self._engine))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> AnyArray:
        """The whole leaf read as a NumPy array (``numpy.asarray(leaf)``), whatever its
        flavor.

        Parameters
        ----------
        dtype : data-type, optional
            Convert the result to this dtype.
        copy : bool, optional
            NumPy 2's argument: reading always makes a new array, so ``False`` (never
            copy) cannot be honoured.

        Raises
        ------
        ValueError
            If ``copy`` is False.
        """
        if copy is False:
            raise ValueError(
                f"reading {self._v_pathname!r} into an array always makes a new array: "
                f"numpy.asarray(leaf, copy=False) cannot be honoured")
        data = self.read()
        if type(data) is not np.ndarray:  # a NumPy scalar, or lists of the 'python' flavor
            data = np.asarray(data, dtype=self.dtype)
        return data if dtype is None else data.astype(dtype, copy=False)

    def __len__(self) -> int:
        """The number of rows (``nrows``)."""
        return self.nrows

    def iterrows(
        self, start: int | None = None, stop: int | None = None, step: int | None = None
    ) -> Iterator[Any]:
        """Iterate over rows along the main dimension, reading them in buffered blocks."""
        if self.shape == ():
            yield self.read()
            return
        indices = range(*slice(start, stop, step).indices(self.nrows))
        rows_per_block = self.nrowsinbuf
        maindim = self.maindim
        for first in range(0, len(indices), rows_per_block):
            part = indices[first : first + rows_per_block]
            key: list[Any] = [slice(None)] * self.ndim
            key[maindim] = slice(part.start, part.stop, part.step)
            with self._shared():
                block = self._native(read_selection(self._dataset, tuple(key),
                                                    self._engine))
            if maindim > 0:  # PyTables swaps the main axis with the first, not moves it
                block = block.swapaxes(maindim, 0)
            for i in range(len(part)):
                self.nrow = part[i]
                yield self._flavored(block[i])

    def __iter__(self) -> Iterator[Any]:
        return self.iterrows()

    nrow: int | None = None
    """The number of the row the current iteration is at (PyTables' ``nrow``; None before
    any iteration)."""

    _nrowsinbuf: int | None = None

    @property
    def nrowsinbuf(self) -> int:
        """Rows read at a time when iterating (PyTables' ``nrowsinbuf``; settable).

        By default as many as fit in 1 MiB; tables read whole chunks whatever it says.
        """
        if self._nrowsinbuf is None:
            return max(1, _ROW_BUFFER_BYTES // max(1, self.rowsize))
        return self._nrowsinbuf

    @nrowsinbuf.setter
    def nrowsinbuf(self, value: int) -> None:
        rows = int(value)
        if rows < 1:
            raise ValueError(f"nrowsinbuf must be a positive number of rows, not {value!r}")
        self._nrowsinbuf = rows

    # ------------------------------------------------------------------ writing
    def _quantized(self, value: Any) -> Any:
        """Apply ``least_significant_digit`` rounding (PyTables' lossy quantization)."""
        base = self._dataset.dtype.base
        if self._lsd is None or base.kind != "f":
            return value
        return quantize(np.asarray(value, dtype=base), self._lsd)

    def __setitem__(self, key: Selection, value: Any) -> None:
        """Write ``value`` (broadcast as NumPy does) into a selection."""
        self._g_check_writable()
        check_value_type(value, self._dataset.dtype)
        with self._exclusive():
            write_selection(self._dataset, key, self._quantized(value), self._engine)

    def truncate(self, size: int | Sequence[int]) -> None:
        """Grow or shrink the leaf to ``size`` rows along its enlargeable dimension.

        Only the dataset's extent changes: no chunk data is written, so growing is cheap
        (new rows read as the fill value, and :meth:`write_chunk` can then fill whole
        chunks) and shrinking drops the chunks past the new end.

        Parameters
        ----------
        size : int or sequence of one int
            The new number of rows.

        Raises
        ------
        TypeError
            If the leaf is not enlargeable (an Array or CArray).
        ValueError
            If ``size`` is negative.
        """
        self._g_check_writable()
        if self.extdim < 0:
            raise TypeError("non-enlargeable datasets cannot be truncated")
        if not isinstance(size, (int, np.integer)):
            values = list(size)
            if len(values) != 1:
                raise ValueError(f"truncate takes a number of rows, not {size!r}")
            size = values[0]
        rows = operator.index(size)
        if rows < 0:
            raise ValueError(f"truncate size must be non-negative, not {rows}")
        with self._exclusive():
            shape = list(self.shape)
            shape[self.extdim] = rows
            self._dataset.resize(tuple(shape))

    def flush(self) -> None:
        """Flush HDF5's buffers to the file (the whole file's, as PyTables does: one
        dataset alone would reach the file ahead of the end of allocation that the file
        records; see :mod:`hyperslab.nodes.files.flushguard`)."""
        if self._v_file.mode != "r":
            self._v_file._guard.flush()

    # ------------------------------------------------------------------ reprs
    def _g_class_label(self) -> str:
        filters = self.filters
        label = f"{type(self).__name__}{self.shape}"
        if filters.fletcher32:
            label += ", fletcher32"
        if filters.complevel:
            if filters.shuffle:
                label += ", shuffle"
            if filters.bitshuffle:
                label += ", bitshuffle"
            label += f", {filters.complib}({filters.complevel})"
        return label

    def __repr__(self) -> str:
        if not self.isopen:
            return super().__repr__()
        lines = [
            str(self),
            f"  atom := {self.atom!r}",
            f"  maindim := {self.maindim}",
            f"  flavor := {self.flavor!r}",
            f"  byteorder := {self.byteorder!r}",
            f"  chunkshape := {self.chunkshape!r}",
        ]
        return "\n".join(lines)
