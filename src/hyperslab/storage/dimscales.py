"""HDF5 dimension scales, read: what names a dataset's dimensions (netCDF-4's, h5netcdf's).

netCDF-4 and h5netcdf store a dimension as a dataset marked ``CLASS='DIMENSION_SCALE'``
and attach it to each dimension of the variables that use it (their ``DIMENSION_LIST``
attribute: object references, which :mod:`~hyperslab.storage.attributes` does not read).
These functions read them with h5py's ``h5ds`` API; they never write.
"""

from __future__ import annotations

from typing import Any

import h5py

__all__ = ["NETCDF_DIMENSION_ONLY", "dimension_scale_names", "is_dimension_scale", "scale_name"]

NETCDF_DIMENSION_ONLY = "This is a netCDF dimension but not a netCDF variable"
"""How netCDF-4 and h5netcdf start the ``NAME`` of a scale that is a dimension only (its
data is meaningless: no variable)."""


def is_dimension_scale(dsid: Any) -> bool:
    """Whether the dataset ``dsid`` (an ``h5py.h5d.DatasetID``) is a dimension scale."""
    return bool(h5py.h5ds.is_scale(dsid))


def scale_name(dsid: Any) -> str:
    """The ``NAME`` a dimension scale was given (``''`` when none, or not a scale)."""
    if not is_dimension_scale(dsid):
        return ""
    try:
        raw = h5py.h5ds.get_scale_name(dsid)
    except RuntimeError:  # a scale without a NAME
        return ""
    return raw.decode("utf-8", "replace") if raw else ""


def dimension_scale_names(dsid: Any) -> list[str | None]:
    """For each dimension of the dataset ``dsid``, the base name of the first dimension
    scale attached to it (the scale dataset's name, as netCDF-4 and h5netcdf name
    dimensions), or None where none is."""
    names: list[str | None] = []
    rank = dsid.get_space().get_simple_extent_ndims()
    for dim in range(rank):
        found: list[str] = []
        if h5py.h5ds.get_num_scales(dsid, dim):
            h5py.h5ds.iterate(dsid, dim, _FirstScale(found), 0)
        names.append(found[0] if found else None)
    return names


class _FirstScale:
    """``h5ds.iterate``'s visitor: keeps the base name of the first scale, then stops."""

    def __init__(self, found: list[str]) -> None:
        self.found = found

    def __call__(self, scale: Any) -> bool:
        path = h5py.h5i.get_name(scale) or b""
        self.found.append(path.decode("utf-8", "replace").rsplit("/", 1)[-1])
        return True
