"""Array (contiguous), CArray (chunked, fixed shape), EArray (chunked, extendable)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.chunked.access import write_selection
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.enum import Enum
from hyperslab.nodes.leaves.leaf import Leaf, check_value_type
from hyperslab.nodes.leaves.reducible import Reducible, TileReadable
from hyperslab.storage import attributes as raw


class Array(Reducible, TileReadable, Leaf):
    """A homogeneous array stored contiguously (no chunks, no compression).

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "array.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     arr = f.create_array("/", "a", np.arange(10), title="ten ints")
    ...     print(arr[2:8:3], arr.shape, arr.title)
    [2 5] (10,) ten ints
    """

    _c_classid: ClassVar[str] = "ARRAY"
    _c_version: ClassVar[str] = "2.4"

    def get_enum(self) -> Enum:
        """The :class:`Enum` of the array's atom (PyTables' ``Array.get_enum``).

        Raises
        ------
        TypeError
            If the atom is not an enumerated one.
        """
        return self._atom_enum()

    def to_dask(self, chunks: Any = None, name: str | None = None) -> Any:
        """A dask array of this array's data, each task reading whole HDF5 chunks.

        Tasks read their blocks with ``self[block]`` (raw chunks decoded in parallel, in
        part where a block cuts a chunk).  The graph holds this leaf, which pickles when
        its file is open read-only, so it also runs on ``dask.distributed`` clusters of
        processes (each worker reopens the file once).  Its ``sum``, ``prod``, ``min``,
        ``max`` and ``mean`` read and reduce each block in one task, tile by tile in
        cache, without materializing the block.  See ``docs/dask.md``.

        Parameters
        ----------
        chunks : optional
            None (default): blocks of whole chunks, as many per block as Dask's
            ``array.chunk-size`` config allows.  Else Dask's ``chunks`` argument (ints,
            tuples, ``-1``, ``'auto'``, byte sizes such as ``'64MiB'``), taken as given.
        name : str, optional
            The dask name of the array.  By default it is derived from the file (path,
            size and modification time), the node and the blocks when the file is open
            read-only, and new every time otherwise.

        Returns
        -------
        dask.array.Array
            A subclass of it (``hyperslab.compute.daskio.fused.LeafArray``) with the
            fused reductions above; arrays derived from it are plain dask arrays.

        Raises
        ------
        ImportError
            If dask is not installed (``pip install 'dask[array]'``).

        Examples
        --------
        >>> import hyperslab, numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "dask.h5")
        >>> with hyperslab.open_file(path, "w") as f:
        ...     _ = f.create_carray("/", "x", obj=np.arange(100.0).reshape(10, 10),
        ...                         chunkshape=(5, 5))
        >>> with hyperslab.open_file(path) as f:
        ...     x = f.root.x.to_dask()
        ...     print(x.chunks, float(x.sum().compute()))
        ((10,), (10,)) 4950.0
        """
        from hyperslab.compute.daskio.arrays import leaf_to_dask

        return leaf_to_dask(self, chunks, name)


class CArray(Array):
    """A chunked array of fixed shape, compressed with any :class:`Filters`."""

    _c_classid: ClassVar[str] = "CARRAY"
    _c_version: ClassVar[str] = "1.1"


class EArray(CArray):
    """A chunked array that grows along one dimension with :meth:`append`.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "earray.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     ea = f.create_earray("/", "e", hyperslab.Int32Atom(), shape=(0, 2))
    ...     ea.append(np.ones((3, 2), dtype="i4"))
    ...     ea.append([[5, 6]])
    ...     print(ea.nrows, ea[-1])
    4 [5 6]
    """

    _c_classid: ClassVar[str] = "EARRAY"
    _c_version: ClassVar[str] = "1.1"

    @property
    def extdim(self) -> int:
        """The extendable dimension (``EXTDIM``, or the first unlimited one).

        An ``EXTDIM`` that names no unlimited dimension of the dataset, or that cannot be
        read (a damaged file), is not trusted: the dataset's own first unlimited dimension
        is used.
        """
        maxshape = self._dataset.maxshape
        try:
            extdim = (raw.read_attribute(self._g_h5id, "EXTDIM")
                      if raw.has_attribute(self._g_h5id, "EXTDIM") else None)
        except HDF5ExtError:  # damaged attribute messages: the data may still read
            extdim = None
        if isinstance(extdim, (int, np.integer)) and 0 <= extdim < len(maxshape) and (
                maxshape[extdim] is None):
            return int(extdim)
        return next((i for i, m in enumerate(maxshape) if m is None), 0)

    @property
    def maindim(self) -> int:
        """The dimension rows are counted along: the extendable one."""
        return self.extdim

    def append(self, sequence: Any) -> None:
        """Append rows along the extendable dimension.

        Parameters
        ----------
        sequence : array_like
            Data of the EArray's rank whose shape equals the EArray's in every dimension
            but the extendable one.

        Raises
        ------
        ValueError
            If the rank or the shape of ``sequence`` does not fit, or it cannot be converted
            to the EArray's dtype.  The EArray is left unchanged.
        """
        self._g_check_writable()
        dtype = self._dataset.dtype
        check_value_type(sequence, dtype)
        # Shaped atoms (HDF5 array types): each row element brings atom.shape trailing axes.
        base, item_shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
        try:
            data = np.asarray(self._quantized(sequence), dtype=base)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"cannot append {sequence!r:.80} to {self._v_pathname}: not convertible to "
                f"{dtype}: {exc}"
            ) from exc
        shape = self.shape
        full_shape = shape + tuple(item_shape)
        extdim = self.extdim
        if data.ndim != len(full_shape):
            raise ValueError(
                f"the rank of the appended object ({data.ndim}) differs from the rank of "
                f"{self._v_pathname} ({len(full_shape)}); shapes {data.shape} and {full_shape}"
            )
        expected = list(full_shape)
        expected[extdim] = data.shape[extdim]
        if tuple(expected) != data.shape:
            raise ValueError(
                f"the shape of the appended object {data.shape} differs from the shape of "
                f"{self._v_pathname} {full_shape} in a dimension other than the extendable one "
                f"({extdim})"
            )
        added = data.shape[extdim]
        if added == 0:
            return
        with self._exclusive():  # readers see the rows before or after, never half
            self._append_along(data, extdim, added)

    def _append_along(self, data: AnyArray, extdim: int, added: int) -> None:
        shape = self.shape
        old = shape[extdim]
        new_shape = list(shape)
        new_shape[extdim] = old + added
        self._dataset.resize(tuple(new_shape))
        key: list[Any] = [slice(None)] * len(shape)
        key[extdim] = slice(old, old + added)
        try:
            write_selection(self._dataset, tuple(key), data, self._engine)
        except HDF5ExtError:
            self._dataset.resize(tuple(shape))
            raise


class UnImplemented(Leaf):
    """A dataset hyperslab cannot represent yet; its attributes are available."""

    _c_classid: ClassVar[str] = "UNIMPLEMENTED"

    def __getitem__(self, key: Any) -> Any:
        raise NotImplementedError(
            f"reading {self._v_pathname} is not supported: its kind of dataset "
            f"(CLASS={raw.read_string_attribute(self._g_h5id, 'CLASS')!r}) is not implemented"
        )

    def read(self, start: int | None = None, stop: int | None = None,
             step: int | None = None, out: Any = None) -> Any:
        """Not supported; raises NotImplementedError naming the node."""
        return self[()]

    def __repr__(self) -> str:
        # No atom: the element type may be one no atom describes (PyTables' repr has none).
        if not self.isopen:
            return super().__repr__()
        return (f"{self}\n  NOTE: a dataset of a kind hyperslab does not implement, in "
                f"{self._v_file.filename!r}; its attributes are available")
