"""What a column index group says of itself, read as PyTables' ``Index`` reads it.

:func:`read_state` reads the sizes, the optimization level, ``DIRTY`` and the counts of a
column index group (PyTables' version 2.1, or 2.0 where the last row's count is the last
entry of ``indicesLR``) and opens the arrays a lookup reads, checking that they fit each
other: a malformed index is an :class:`~hyperslab.errors.HDF5ExtError` naming what is
wrong, never a wrong answer.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hyperslab.errors import HDF5ExtError
from hyperslab.nodes.indexes.sizes import Geometry, bucket_rows
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.vectors import Matrix, Vector

_GAP = object()  # no value


class State(NamedTuple):
    """What a column index group says of itself (read when the index is opened)."""

    version: str
    geometry: Geometry
    optlevel: int
    dirty: bool
    nslices: int
    nelements_slr: int  # sorted values in the last row
    nelements_ilr: int  # entries in the last row

    @property
    def nelements(self) -> int:
        """Rows indexed: rows ``0 .. nelements - 1`` of the table."""
        return self.nslices * self.geometry.slicesize + self.nelements_ilr


class MalformedIndexError(HDF5ExtError):
    """An index group HDF5 reads whose attributes or arrays are missing or do not fit
    each other (queries raise it, naming what is wrong; an index HDF5 cannot read at
    all, a damaged file, makes them scan instead)."""


def malformed(path: str, why: str) -> MalformedIndexError:
    return MalformedIndexError(f"the column index {path} is malformed: {why}")


def _int_attribute(gid: Any, path: str, name: str, default: Any = _GAP) -> int:
    try:
        return raw.read_int_attribute(gid, name)
    except KeyError:
        if default is not _GAP:
            return int(default)
        raise malformed(path, f"it has no {name!r} attribute") from None
    except TypeError:
        raise malformed(path, f"its {name!r} attribute is not an integer") from None


class _Arrays(NamedTuple):
    """The datasets a lookup reads, opened without nodes."""

    sorted: Matrix
    indices: Matrix
    sorted_lr: Vector
    indices_lr: Vector


def open_array(gid: Any, path: str, name: str, two_d: bool) -> Any:
    try:
        oid = tree.open_child(gid, name)
        return (Matrix if two_d else Vector)(oid, f"{path}/{name}")
    except KeyError:
        raise malformed(path, f"it has no {name!r} dataset") from None
    except TypeError as exc:
        raise malformed(path, str(exc)) from None


def read_state(gid: Any, path: str, table_chunkrows: int) -> tuple[State, _Arrays]:
    """The state of the index in column group ``gid`` (at ``path``) and its arrays, as
    PyTables' ``Index`` reads them (version 2.0 and later).

    Raises
    ------
    HDF5ExtError
        If an attribute or array is missing or does not fit the others.
    """
    version = raw.read_string_attribute(gid, "VERSION") or "2.1"
    sizes = [_int_attribute(gid, path, name) for name in
             ("superblocksize", "blocksize", "slicesize", "chunksize")]
    optlevel = _int_attribute(gid, path, "optlevel")
    dirty = bool(_int_attribute(gid, path, "DIRTY", 0))
    reduction = _int_attribute(gid, path, "reduction") if version > "2.0" else 1
    arrays = _Arrays(*(open_array(gid, path, name, two_d) for name, two_d in (
        ("sorted", True), ("indices", True), ("sortedLR", False), ("indicesLR", False))))
    superblocksize, blocksize, slicesize, chunksize = sizes
    indsize = arrays.indices.dtype.itemsize
    if (min(sizes) < 1 or reduction < 1 or indsize not in (1, 2, 4, 8)
            or arrays.indices.dtype.kind not in "iu"
            or arrays.indices.shape[1] != slicesize
            or arrays.sorted.shape != (arrays.indices.shape[0], slicesize // reduction)
            or chunksize // reduction < 1 or slicesize // reduction <= chunksize // reduction
            or len(arrays.indices_lr) < slicesize):
        raise malformed(path, f"sizes {sizes}, reduction {reduction}, sorted "
                               f"{arrays.sorted.shape}, indices {arrays.indices.shape} of "
                               f"{arrays.indices.dtype}")
    lbucket = bucket_rows(indsize, table_chunkrows, chunksize, slicesize, blocksize)
    geometry = Geometry(superblocksize, blocksize, slicesize, chunksize, reduction, indsize,
                        lbucket)
    if version > "2.0":
        nslr = _int_attribute(arrays.sorted_lr.dsid, path + "/sortedLR", "nelements")
        nilr = _int_attribute(arrays.indices_lr.dsid, path + "/indicesLR", "nelements")
    else:
        nilr = int(arrays.indices_lr.read(len(arrays.indices_lr) - 1,
                                          len(arrays.indices_lr))[0])
        nslr = nilr
    if not (0 <= nilr < slicesize and nslr == geometry.kept(nilr)
            and len(arrays.sorted_lr) >= nslr + 2 + geometry.nbounds):
        raise malformed(path, f"its last row holds {nslr} sorted values for {nilr} "
                               f"entries (reduction {reduction})")
    state = State(version, geometry, optlevel, dirty, arrays.sorted.shape[0], nslr, nilr)
    return state, arrays


__all__ = ["MalformedIndexError", "State", "malformed", "open_array", "read_state"]
