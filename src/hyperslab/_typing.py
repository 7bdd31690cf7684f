"""Type aliases shared by every layer."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

Shape: TypeAlias = tuple[int, ...]
"""A dataset or chunk shape."""

Coords: TypeAlias = tuple[int, ...]
"""Coordinates of an element or of a chunk start."""

AnyArray: TypeAlias = npt.NDArray[Any]
"""Any NumPy array."""

DTypeLike: TypeAlias = npt.DTypeLike
"""Anything NumPy accepts as a dtype."""

Selection: TypeAlias = Any
"""Whatever ``__getitem__`` accepts: ints, slices, Ellipsis, lists, arrays, tuples of them."""

CdValues: TypeAlias = tuple[int, ...]
"""An HDF5 filter's client data values."""

__all__ = ["AnyArray", "CdValues", "Coords", "DTypeLike", "Selection", "Shape", "np"]
