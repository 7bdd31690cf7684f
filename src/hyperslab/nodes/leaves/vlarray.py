"""VLArray: a ragged array, each row a run of any number of atoms (PyTables' VLArray).

On disk (as PyTables writes it, see :mod:`hyperslab.storage.vlen`): a 1-D extendible
chunked dataset of ``H5T_VLEN`` of the atom's type, with ``CLASS='VLARRAY'``,
``VERSION='1.4'`` and, for the pseudo-atoms (:class:`VLStringAtom`, :class:`VLUnicodeAtom`,
:class:`ObjectAtom`, whose rows are one Python object each), ``PSEUDOATOM`` naming the
pseudo-atom's kind.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.atoms.atom_hdf5 import atom_from_hdf5_dtype
from hyperslab.nodes.atoms.enum import Enum
from hyperslab.nodes.atoms.pseudoatom import ObjectAtom, PseudoAtom, VLStringAtom, VLUnicodeAtom
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.storage import attributes as raw
from hyperslab.storage import vlen
from hyperslab.storage.compound import decode_time64, encode_time64

if TYPE_CHECKING:
    from hyperslab.nodes.tree.owner import NodeOwner

PSEUDO_ATOMS: dict[str, type[PseudoAtom]] = {
    "vlstring": VLStringAtom, "vlunicode": VLUnicodeAtom, "object": ObjectAtom}
"""The pseudo-atoms by the kind their ``PSEUDOATOM`` attribute names."""

AnyAtom = Atom | PseudoAtom


def storage_atom(atom: AnyAtom) -> Atom:
    """The atom a row is stored as: a pseudo-atom's base, else the atom itself."""
    return atom.base if isinstance(atom, PseudoAtom) else atom


def is_index(key: Any) -> bool:
    """Whether ``key`` selects one row (an int or an object with ``__index__``, not an
    array of one element), as PyTables decides it."""
    if type(key) is int:
        return True
    if hasattr(key, "__index__"):
        if getattr(key, "shape", ()) != ():
            return False
        try:
            operator.index(key)
        except TypeError:
            return False
        return True
    return False


def as_atoms(obj: Any, atom: Atom) -> AnyArray:
    """``obj`` as an array of ``atom``'s base dtype whose trailing dims are the atom's
    shape (NumPy broadcasting applies, as in PyTables)."""
    base = atom.dtype.base
    shape = tuple(atom.shape)
    data = np.asarray(obj)
    if not shape:
        return np.array(data, dtype=base)
    lead = data.shape[: data.ndim - len(shape)] if data.ndim >= len(shape) else ()
    out = np.empty(lead + shape, dtype=base)
    out[...] = data
    return out


def count_objects(data: AnyArray, atom_shape: Shape) -> int:
    """The number of atoms in ``data`` (PyTables' rules: a whole atom is one, a run of
    atoms one per leading index, a 1-D run of ``(1,)`` atoms one per item).

    Raises
    ------
    ValueError
        If ``data``'s shape is not made of atoms of ``atom_shape``.
    """
    shape = data.shape
    if 0 in shape:
        return 0
    if shape == atom_shape:
        return 1
    if len(shape) - len(atom_shape) == 1 and shape[1:] == atom_shape:
        return shape[0]
    if atom_shape == (1,) and len(shape) == 1:
        return shape[0]
    raise ValueError(
        f"The object '{data}' is composed of elements with shape '{shape}', which is not "
        f"compatible with the atom shape ('{atom_shape}')."
    )


class VLArray(Leaf):
    """Variable-length (ragged) array: each row holds any number of atoms.

    Reading a row gives an object of the current flavor (a NumPy array of the row's atoms,
    or a list with flavor 'python'); with a pseudo-atom, the row's Python object.  Reading
    several rows gives a Python list of them.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "vlarray.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     vla = f.create_vlarray("/", "v", hyperslab.Int32Atom(), "ragged ints")
    ...     vla.append([1, 2])
    ...     vla.append(np.arange(4))
    ...     print(vla.nrows, vla[1], vla.read(0, 1))
    2 [0 1 2 3] [array([1, 2], dtype=int32)]
    """

    _c_classid: ClassVar[str] = "VLARRAY"
    _c_version: ClassVar[str] = "1.4"

    def __init__(self, file: NodeOwner, path: str, h5id: Any, class_value: Any = None) -> None:
        super().__init__(file, path, h5id, class_value)
        self._atom_: AnyAtom | None = None
        self.nrowsinbuf = 100
        """Rows read at a time by the iterators."""
        self.nrow: int | None = None
        """On iterators, the index of the current row."""

    # ------------------------------------------------------------------ description
    @property
    def atom(self) -> AnyAtom:  # type: ignore[override]
        """The atom of the row elements, or the pseudo-atom of the rows."""
        if self._atom_ is None:
            self._atom_ = self._read_atom()
        return self._atom_

    def _read_atom(self) -> AnyAtom:
        if raw.has_attribute(self._g_h5id, "PSEUDOATOM"):
            kind = raw.read_string_attribute(self._g_h5id, "PSEUDOATOM")
            if kind not in PSEUDO_ATOMS:
                raise ValueError(f"pseudo-atom name ``{kind}`` not known.")
            return PSEUDO_ATOMS[kind]()
        dataset = self._dataset
        return atom_from_hdf5_dtype(vlen.element_dtype(dataset),
                                    hdf5_class=vlen.element_class(dataset))

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of the atom (pseudo-atoms have none: AttributeError)."""
        return self.atom.dtype  # type: ignore[union-attr]

    @property
    def shape(self) -> Shape:
        """``(nrows,)``."""
        return (self.nrows,)

    @property
    def nrows(self) -> int:
        """The number of rows."""
        return int(self._dataset.shape[0])

    @property
    def extdim(self) -> int:
        """The enlargeable dimension: always 0."""
        return 0

    @property
    def maindim(self) -> int:
        """The dimension rows are counted along: always 0."""
        return 0

    @property
    def byteorder(self) -> str:
        """Byte order of the stored atoms: 'little', 'big' or 'irrelevant' (one-byte atoms,
        strings and bools, as PyTables reports them)."""
        stored = storage_atom(self.atom)
        if stored.type in ("string", "bool", "int8", "uint8", "object"):
            return "irrelevant"
        return vlen.element_order(self._dataset) or "irrelevant"

    @property
    def size_on_disk(self) -> int:
        """Not available for VLArrays (HDF5 does not tell it): NotImplementedError."""
        raise NotImplementedError("size_on_disk not implemented for VLArrays")

    @property
    def size_in_memory(self) -> int:
        """Bytes all the rows take in memory, as stored (pickles for ObjectAtom)."""
        if self.nrows == 0:
            return 0
        with self._shared():
            return vlen.memory_size(self._dataset)

    def get_enum(self) -> Enum:
        """The Enum of the atom.

        Raises
        ------
        TypeError
            If the atom is not an enumerated one.
        """
        return self._atom_enum()

    # ------------------------------------------------------------------ conversions
    def _file_dtype(self) -> np.dtype[Any]:
        return vlen.element_dtype(self._dataset)

    def _to_row(self, obj: Any) -> tuple[AnyArray, int]:
        """An appended or assigned object as an array of stored atoms, and its count."""
        atom = self.atom
        if isinstance(atom, PseudoAtom):
            obj = atom.toarray(obj)
        stored = storage_atom(atom)
        if len(obj) == 0:  # an empty row, whatever the atom's shape
            return np.empty((0, *stored.shape), dtype=stored.dtype.base), 0
        data = as_atoms(obj, stored)
        return data, count_objects(data, tuple(stored.shape))

    def _encoded(self, data: AnyArray, nobjects: int) -> AnyArray:
        """Rows' atoms in the file's layout: shape ``(n, *atom.shape)``, file dtype."""
        stored = storage_atom(self.atom)
        data = data.reshape((nobjects, *stored.shape))
        file_dtype = self._file_dtype()
        base = file_dtype.base if file_dtype.subdtype is not None else file_dtype
        if stored.type == "time64":
            return encode_time64(data, base)
        if stored.type == "bool":
            return np.ascontiguousarray(data, dtype=np.bool_).view(np.uint8)
        return np.ascontiguousarray(data, dtype=base.newbyteorder("=") if base.byteorder == "|"
                                    else base)

    def _decoded(self, row: AnyArray) -> AnyArray:
        """A stored row in memory form: native order, bools, Time64 seconds."""
        stored = storage_atom(self.atom)
        if stored.type == "time64":
            return decode_time64(row)
        if stored.type == "bool":
            return row.view(np.bool_)
        if row.dtype.byteorder not in ("=", "|") and not row.dtype.isnative:
            row = row.astype(row.dtype.newbyteorder("="))
        if stored.kind == "enum" or stored.dtype.base != row.dtype:
            row = row.astype(stored.dtype.base, copy=False)
        return row

    def _as_result(self, row: AnyArray) -> Any:
        atom = self.atom
        if isinstance(atom, PseudoAtom):
            return atom.fromarray(row)
        return self._flavored(row)

    # ------------------------------------------------------------------ writing
    def append(self, sequence: Any) -> None:
        """Append ``sequence`` as one new row.

        With a pseudo-atom, ``sequence`` is the row's object (bytes, str, any picklable
        object); otherwise a sequence of atoms (any number of them, none included).

        Raises
        ------
        TypeError
            If ``sequence`` is not a sequence (or not what the pseudo-atom takes).
        ValueError
            If its elements do not have the atom's shape.
        """
        self._g_check_writable()
        if not isinstance(self.atom, PseudoAtom):
            try:
                len(sequence)
            except TypeError:
                raise TypeError("argument is not a sequence") from None
        data, nobjects = self._to_row(sequence)
        row = self._encoded(data, nobjects)
        with self._exclusive():
            vlen.append_rows(self._dataset, [row])

    def __setitem__(self, key: Any, value: Any) -> None:
        """Overwrite rows (an int, a slice, a list of rows or a mask): each new value
        is broadcast into the existing row, whose length never changes.

        Raises
        ------
        ValueError
            If a value has more atoms than its row, or does not fit it.
        IndexError
            For an invalid key or a row out of range.
        """
        self._g_check_writable()
        coords: Sequence[int] | AnyArray
        if is_index(key):
            coords, values = [operator.index(key)], [value]
        elif isinstance(key, slice):
            coords, values = range(*self._process_range(key.start, key.stop, key.step)), value
        elif type(key) in (list, tuple) or isinstance(key, np.ndarray):
            coords, values = self._point_selection(key), value
        else:
            raise IndexError(f"Invalid index or slice: {key!r}")
        nrows = self.nrows
        for nrow, item in zip(coords, values, strict=False):
            nrow = int(nrow)
            if nrow >= nrows:
                raise IndexError("First index out of range")
            if nrow < 0:
                nrow += nrows
            self._assign(nrow, item)

    def _assign(self, nrow: int, item: Any) -> None:
        data, _count = self._to_row(item)
        with self._exclusive():
            current = self._decoded(vlen.read_rows(self._dataset, nrow, 1)[0]).copy()
            if len(data) > len(current):
                raise ValueError(f"Length of value ({len(data)}) is larger than number of "
                                 f"elements in row ({len(current)})")
            try:
                current[:] = data
            except Exception as exc:
                raise ValueError(
                    f"Value parameter:\n'{data!r}'\ncannot be converted into an array object "
                    f"compliant vlarray[{nrow}] row: \n'{current!r}'\nThe error was: <{exc}>"
                ) from exc
            if current.size:
                vlen.write_rows(self._dataset, nrow, [self._encoded(current, len(current))])

    def get_row_size(self, row: int) -> int:
        """Bytes the atoms of row ``row`` take in memory.

        Raises
        ------
        HDF5ExtError
            If ``row`` is past the last row.
        """
        if row >= self.nrows:
            raise HDF5ExtError("Asking for a range of rows exceeding the available ones!.")
        with self._shared():
            return int(vlen.read_rows(self._dataset, int(row), 1)[0].nbytes)

    # ------------------------------------------------------------------ reading
    def _process_range(self, start: Any, stop: Any, step: Any) -> tuple[int, int, int]:
        if step is not None and step < 0:
            raise ValueError("slice step cannot be negative")
        return slice(start, stop, step).indices(self.nrows)

    def _process_range_read(self, start: Any, stop: Any, step: Any) -> tuple[int, int, int]:
        nrows = self.nrows
        if start is not None and stop is None and step is None:
            if 0 < nrows <= start:
                raise IndexError(f"start of range ({start}) is greater than number of rows "
                                 f"({nrows})")
            step = 1
            stop = nrows if start == -1 else start + 1
        return self._process_range(start, stop, step)

    def _point_selection(self, key: Any) -> AnyArray:
        """Row numbers from a list of rows or a boolean mask (PyTables' rules)."""
        if type(key) in (list, tuple):
            if isinstance(key, tuple) and len(key) > 1:
                raise IndexError(f"Invalid index or slice: {key!r}")
            try:
                key = np.array(key)
            except ValueError:
                raise TypeError(f"Invalid index or slice: {key!r}") from None
        if len(key) == 0:
            return np.array([], dtype="i8")
        nrows = self.nrows
        if key.dtype.kind == "b":
            if key.shape != (nrows,):
                raise IndexError("Boolean indexing array has incompatible shape")
            return np.asarray(key.nonzero()[0], dtype="i8")
        if key.dtype.kind not in "iu":
            raise TypeError("Only integer coordinates allowed.")
        if key.ndim > 2 or (key.ndim == 2 and key.shape[0] != 1):
            raise IndexError("Coordinate indexing array has incompatible shape")
        coords = np.array(key, dtype="i8").reshape(-1)
        coords[coords < 0] += nrows
        if np.any(coords < 0) or np.any(coords >= nrows):
            raise IndexError("Index out of bounds")
        return coords

    def _read_rows(self, start: int, stop: int, step: int) -> list[AnyArray]:
        count = len(range(start, stop, step))
        if count <= 0:
            return []
        if start + count > self.nrows:
            raise HDF5ExtError("Asking for a range of rows exceeding the available ones!.")
        with self._shared():
            rows = vlen.read_rows(self._dataset, start, count, step)
        return [self._decoded(row) for row in rows]

    def read(self, start: int | None = None, stop: int | None = None,  # type: ignore[override]
             step: int | None = None) -> list[Any]:
        """Read rows ``start:stop:step`` as a list of objects of the current flavor.

        ``start`` alone reads that one row (in a list); no arguments read them all.

        Raises
        ------
        ValueError
            If ``step`` is negative.
        IndexError
            If ``start`` alone is past the last row.
        """
        start, stop, step = self._process_range_read(start, stop, step)
        return [self._as_result(row) for row in self._read_rows(start, stop, step)]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> AnyArray:
        """The rows as a one-dimensional object array (``numpy.asarray(vlarray)``), each
        element a row as :meth:`read` gives it.

        Raises
        ------
        ValueError
            If ``copy`` is False (reading always makes a new array).
        """
        if copy is False:
            raise ValueError(
                f"reading {self._v_pathname!r} into an array always makes a new array: "
                f"numpy.asarray(leaf, copy=False) cannot be honoured")
        rows = self.read()
        data = np.empty(len(rows), dtype=object)
        data[:] = rows
        return data if dtype is None else data.astype(dtype)

    def __getitem__(self, key: Any) -> Any:
        """Read a row (an int: its object), or a list of rows (a slice, a list of row
        numbers or a boolean mask).

        Raises
        ------
        IndexError
            For a row out of range or an invalid key.
        """
        if is_index(key):
            index = operator.index(key)
            nrows = self.nrows
            if index >= nrows:
                raise IndexError("Index out of range")
            if index < 0:
                index += nrows
            start, stop, step = self._process_range(index, index + 1, 1)
            return self.read(start, stop, step)[0]
        if isinstance(key, slice):
            return self.read(*self._process_range(key.start, key.stop, key.step))
        if type(key) in (list, tuple) or isinstance(key, np.ndarray):
            return [self.read(int(c), int(c) + 1, 1)[0] for c in self._point_selection(key)]
        raise IndexError(f"Invalid index or slice: {key!r}")

    def iterrows(self, start: int | None = None, stop: int | None = None,
                 step: int | None = None) -> Iterator[Any]:
        """Iterate over rows ``start:stop:step`` (``nrow`` is the current row's number)."""
        start, stop, step = self._process_range(start, stop, step)
        return self._iterate(start, stop, step)

    def _iterate(self, start: int, stop: int, step: int) -> Iterator[Any]:
        block = max(1, int(self.nrowsinbuf)) * step
        for first in range(start, stop, block):
            rows = self.read(first, min(first + block, stop), step)
            for i, row in enumerate(rows):
                self.nrow = first + i * step
                yield row

    def __iter__(self) -> Iterator[Any]:
        return self.iterrows()

    # ------------------------------------------------------------------ copying
    def _copy_rows(self, target: VLArray, start: Any, stop: Any, step: Any) -> None:
        """Append rows ``start:stop:step`` to ``target`` (a VLArray of the same atom)."""
        start, stop, step = self._process_range_read(start, stop, step)
        for first in range(start, stop, step * self.nrowsinbuf):
            end = min(first + step * self.nrowsinbuf, stop)
            rows = self._read_rows(first, end, step)
            encoded = [target._encoded(r, len(r)) for r in rows]
            with target._exclusive():
                vlen.append_rows(target._dataset, encoded)

    def __repr__(self) -> str:
        if not self.isopen:
            return super().__repr__()
        return (f"{self}\n  atom = {self.atom!r}\n  byteorder = {self.byteorder!r}\n"
                f"  nrows = {self.nrows}\n  flavor = {self.flavor!r}")


__all__ = ["VLArray"]
