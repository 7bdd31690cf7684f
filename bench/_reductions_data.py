"""The ``reductions`` benchmark's data: the array, its codecs, the cases and NumPy's results.

What :mod:`bench.reductions` computes and :mod:`bench._reductions_report` describes, apart
from how the rivals compute it: the float64 array (:func:`make_data`), the codecs it is
stored with (:data:`CODECS`), the cases of each part (:data:`SUM_CASES`,
:data:`EXPRESSION`), NumPy's result of each (:func:`expected_result`) and the check of a
rival's result against it (:func:`check_of`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bench.harness import BenchmarkError

FULL_SHAPE = (500, 500, 500)
"""The array of the default run (1 GB of float64)."""
QUICK_SHAPE = (60, 60, 60)
"""The array of ``--quick`` (1.7 MB)."""
FULL_CHUNKS = (100, 100, 100)
QUICK_CHUNKS = (20, 20, 20)
STOP = 1000.0
"""The array is ``np.linspace(0, STOP, n)`` in C order."""
CLEVEL = 5
CODECS: dict[str, str | None] = {"blosc2:lz4": "lz4", "blosc2:zstd": "zstd", "none": None}
"""Codec name -> Blosc2 codec (None: no compression)."""
SUM_CASES: dict[str, int | None] = {"axis0": 0, "axis1": 1, "axis2": 2, "all": None}
EXPRESSION = "a * 2 + sin(a)"
EXPR_AXIS = 1
CASES = (*SUM_CASES, "expr")
PARTS = ("sums", "expression")
RTOL = 1e-9
"""Relative tolerance of the comparison with NumPy's result."""
SLAB_BYTES = 64_000_000
"""About how many bytes each write (and each slab of the expected expression) covers."""


# ----------------------------------------------------------------------------- the data


def make_data(shape: Sequence[int]) -> Any:
    """Return the array: ``np.linspace(0, 1000, n)`` reshaped to ``shape`` (float64)."""
    import numpy as np

    return np.linspace(0.0, STOP, math.prod(shape)).reshape(tuple(shape))


def expected_result(data: Any, part: str, axis: int | None) -> Any:
    """Return NumPy's result of ``part`` (a sum along ``axis``, or the expression summed
    along :data:`EXPR_AXIS`) on the array ``data``.

    The expression is evaluated a slab of rows (along axis 0) at a time, so that its
    temporaries stay small.
    """
    import numpy as np

    if part == "sums":
        return data.sum(axis=axis)
    rows = max(1, SLAB_BYTES // max(1, data[:1].nbytes))
    return np.concatenate(
        [
            (data[lo : lo + rows] * 2 + np.sin(data[lo : lo + rows])).sum(axis=EXPR_AXIS)
            for lo in range(0, data.shape[0], rows)
        ]
    )


def check_of(result: Any, expected: Any, what: str = "result") -> dict[str, Any]:
    """Return the check of a result, after comparing it with NumPy's ``expected``.

    Returns
    -------
    dict
        ``shape``, ``dtype``, ``sum`` (the float sum of the result to 6 significant digits:
        equal across summation orders) and ``close_to_numpy`` (the tolerance met).

    Raises
    ------
    BenchmarkError
        If the shape differs or the values are not ``allclose`` to ``expected`` (relative
        tolerance :data:`RTOL`, absolute ``RTOL`` times the largest magnitude).
    """
    import numpy as np

    got, want = np.asarray(result), np.asarray(expected)
    if got.shape != want.shape:
        raise BenchmarkError(f"{what}: shape {got.shape} differs from NumPy's {want.shape}")
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    if not np.allclose(got, want, rtol=RTOL, atol=RTOL * scale):
        worst = float(np.max(np.abs(got - want)))
        raise BenchmarkError(f"{what} differs from NumPy's (largest difference {worst:.6g})")
    return {
        "shape": list(got.shape),
        "dtype": got.dtype.str,
        "sum": float(f"{float(np.sum(got, dtype=np.float64)):.6g}"),
        "close_to_numpy": f"rtol={RTOL:g}",
    }
