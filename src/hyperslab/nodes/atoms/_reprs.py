"""Reprs of NumPy values as PyTables documents them, whatever NumPy's print mode."""

from __future__ import annotations

from typing import Any

import numpy as np

# NumPy 2 prints scalars as ``np.float64(0.0)``; PyTables documents ``0.0`` (NumPy 1 style).
_PLAIN_SCALARS: dict[str, Any] = (
    {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}
)


def np_repr(obj: Any) -> str:
    """Return ``repr(obj)`` with NumPy scalars printed as PyTables documents them."""
    with np.printoptions(**_PLAIN_SCALARS):
        return repr(obj)
