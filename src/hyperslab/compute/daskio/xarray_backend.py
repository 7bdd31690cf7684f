"""xarray's ``engine="hyperslab"``: a group's arrays as a lazily read ``xarray.Dataset``.

``xarray.open_dataset(path, engine="hyperslab", group="/g")`` opens the file read-only
and maps every array leaf of the group (Array, CArray, EArray; never tables, VLArrays or
subgroups) to a variable:

* **dimensions**: the names of the HDF5 dimension scales attached to its dimensions
  (``DIMENSION_LIST``, as netCDF-4 and h5netcdf write them; a scale names its own
  dimension), else ``phony_dim_<n>`` as h5netcdf names them: one per distinct length in
  the group, numbered in order of first use, variables taken by name (a variable with two
  dimensions of the same length uses two).  Scales that netCDF marks as a dimension only
  are no variables.
* **attributes**: the node's user attributes (not PyTables' system ones, nor the
  dimension-scale bookkeeping ``DIMENSION_LIST``, ``REFERENCE_LIST``, ``NAME``,
  ``_Netcdf4*``); the group's user attributes are the dataset's.  CF decoding
  (``mask_and_scale``, ``decode_times``, ...) is xarray's, as for any backend.
* **data**: read lazily, each indexing of a variable reading only what it selects through
  ``leaf[...]`` (outer indexing: one integer array per key, the rest done by xarray);
  ``chunks=`` makes Dask arrays (the leaves pickle, so they compute on clusters too);
  ``chunks={}`` cuts them along the HDF5 chunks (the variables' ``preferred_chunks``).

The file stays open until the dataset is closed (``ds.close()`` or its ``with`` block).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from hyperslab.storage import dimscales

try:  # xarray is optional: without it, this module imports but offers no entry point.
    from xarray.backends import BackendArray, BackendEntrypoint
except ImportError:  # pragma: no cover - xarray is installed for the tests
    BackendArray = object  # type: ignore[assignment,misc]
    BackendEntrypoint = object  # type: ignore[assignment,misc]

__all__ = ["HyperslabBackendArray", "HyperslabBackendEntrypoint", "open_group"]

_HIDDEN = frozenset({"DIMENSION_LIST", "REFERENCE_LIST", "NAME", "CLASS", "_nc3_strict"})
"""Attributes of dimension-scale and netCDF bookkeeping, not the user's."""


class HyperslabBackendArray(BackendArray):
    """A leaf seen by xarray: shape, dtype and outer indexing through ``leaf[...]``."""

    def __init__(self, leaf: Any) -> None:
        self.leaf = leaf
        self.shape = tuple(leaf.shape)
        self.dtype = np.dtype(leaf.dtype)

    def __getitem__(self, key: Any) -> Any:
        from xarray.core import indexing

        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.OUTER_1VECTOR, self._raw_indexing)

    def _raw_indexing(self, key: tuple[Any, ...]) -> Any:
        if any(isinstance(k, np.ndarray) and k.size == 0 for k in key):
            shape = [len(range(*k.indices(n))) if isinstance(k, slice) else len(k)
                     for k, n in zip(key, self.shape, strict=True)
                     if not isinstance(k, (int, np.integer))]
            return np.zeros(shape, self.dtype)
        picked = tuple(k.tolist() if isinstance(k, np.ndarray) else k for k in key)
        return np.asarray(self.leaf[picked])


def _user_attrs(node: Any) -> dict[str, Any]:
    attrs = node._v_attrs
    return {name: attrs[name] for name in attrs._f_list("user")
            if name not in _HIDDEN and not name.startswith("_Netcdf4")}


def _array_leaves(group: Any) -> list[Any]:
    from hyperslab.nodes.leaves.array import Array

    return [leaf for leaf in group._f_list_nodes("Leaf") if isinstance(leaf, Array)]


def _dimensions(leaves: Iterable[Any]) -> dict[str, tuple[str, ...]]:
    """Each leaf's dimension names: its scales', else h5netcdf's phony ones."""
    phony: dict[int, list[str]] = {}
    count = 0
    result: dict[str, tuple[str, ...]] = {}
    for leaf in leaves:
        oid = leaf._g_h5id
        names = ([leaf._v_name] if dimscales.is_dimension_scale(oid)
                 else dimscales.dimension_scale_names(oid))
        used: Counter[int] = Counter()
        dims: list[str] = []
        for name, length in zip(names, leaf.shape, strict=True):
            if name is None:
                of_length = phony.setdefault(length, [])
                if used[length] == len(of_length):
                    of_length.append(f"phony_dim_{count}")
                    count += 1
                name = of_length[used[length]]
                used[length] += 1
            dims.append(name)
        result[leaf._v_name] = tuple(dims)
    return result


def open_group(file: Any, group: str | None = None,
               drop_variables: Iterable[str] | None = None) -> Any:
    """The undecoded ``xarray.Dataset`` of ``group``'s array leaves in the open ``file``."""
    import xarray as xr
    from xarray.core import indexing

    node = file.get_node(group or "/")
    dropped = set(drop_variables or ())
    leaves = sorted(_array_leaves(node), key=lambda leaf: leaf._v_name)
    dims = _dimensions(leaves)
    variables = {}
    for leaf in leaves:
        name = leaf._v_name
        if name in dropped or dimscales.scale_name(leaf._g_h5id).startswith(
                dimscales.NETCDF_DIMENSION_ONLY):
            continue
        data = indexing.LazilyIndexedArray(HyperslabBackendArray(leaf))
        encoding: dict[str, Any] = {}
        if leaf.chunks is not None:  # chunks={} gives blocks of whole HDF5 chunks
            encoding["chunksizes"] = tuple(leaf.chunks)
            encoding["preferred_chunks"] = dict(zip(dims[name], leaf.chunks, strict=True))
        variables[name] = xr.Variable(dims[name], data, _user_attrs(leaf), encoding)
    return xr.Dataset(variables, attrs=_user_attrs(node))


class HyperslabBackendEntrypoint(BackendEntrypoint):
    """``engine="hyperslab"``: HDF5 files (PyTables', h5py's, netCDF-4's) read through
    hyperslab.

    Examples
    --------
    >>> import hyperslab, numpy as np, tempfile, os, xarray as xr
    >>> path = os.path.join(tempfile.mkdtemp(), "x.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     a = f.create_carray("/g", "a", obj=np.arange(6.0).reshape(2, 3),
    ...                         createparents=True)
    ...     a.attrs.units = "m"
    >>> with xr.open_dataset(path, engine=HyperslabBackendEntrypoint, group="/g") as ds:
    ...     print(dict(ds.sizes), ds.a.attrs["units"], float(ds.a[1].sum()))
    {'phony_dim_0': 2, 'phony_dim_1': 3} m 12.0
    """

    description = "HDF5 files (PyTables', h5py's, netCDF-4's) read through hyperslab"
    url = "https://github.com/hyperslab/hyperslab/blob/main/docs/dask.md"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "group")

    def open_dataset(
        self, filename_or_obj: Any, *, drop_variables: Iterable[str] | None = None,
        group: str | None = None, mask_and_scale: bool = True, decode_times: bool = True,
        concat_characters: bool = True, decode_coords: bool = True,
        use_cftime: bool | None = None, decode_timedelta: bool | None = None,
    ) -> Any:
        """Open ``group`` of the file ``filename_or_obj`` read-only as a Dataset."""
        import xarray as xr

        from hyperslab.nodes.files.file import open_file

        file = open_file(os.fspath(filename_or_obj), "r")
        try:
            raw = open_group(file, group, drop_variables)
            ds = xr.decode_cf(raw, mask_and_scale=mask_and_scale, decode_times=decode_times,
                              concat_characters=concat_characters,
                              decode_coords=decode_coords, use_cftime=use_cftime,
                              decode_timedelta=decode_timedelta)
        except BaseException:
            file.close()
            raise
        ds.set_close(_Closer(file))
        return ds

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """HDF5 files by their extension (``.h5``, ``.hdf5``, ``.he5``, ``.nc``)."""
        try:
            ext = os.path.splitext(os.fspath(filename_or_obj))[1].lower()
        except TypeError:
            return False
        return ext in {".h5", ".hdf5", ".he5", ".hdf", ".nc", ".nc4"}


class _Closer:
    """Closes the dataset's file once, whichever of its copies is closed first."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.lock = threading.Lock()

    def __call__(self) -> None:
        with self.lock:
            if self.file.isopen:
                self.file.close()
