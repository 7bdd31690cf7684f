"""The ``queries`` benchmark's data: the spec's records, the query's limits and the checks.

What :mod:`bench.queries` (and :mod:`bench.indexes`) query, apart from how the rivals run
it: the ``Record`` rows filled as PyTables' ``bench/indexed_search.py`` does
(:func:`make_records`), the limits that make :data:`CONDITION` match a given fraction of
them (:func:`choose_limits`), NumPy's answer (:func:`numpy_hits`) and the checks compared
across rivals (:func:`check_of`, :func:`records_crc32`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

SEED = 19
"""Seed of the random values (``indexed_search.py`` seeds with 19)."""
SCALE = 0.1
"""Standard deviation of the noise, relative to ``nrows`` (``indexed_search.py``'s SCALE)."""

CONDITION = (
    "((col4 >= lim1) & (col4 < lim2)) | ((col2 > lim3) & (col2 < lim4)) & "
    "((col1+3.1*col2+col3*col4) > lim5)"
)
"""The spec's in-kernel condition ("In-kernel searches"); ``&`` binds tighter than ``|``."""
COLUMNS = ("col1", "col2", "col3", "col4")


# ----------------------------------------------------------------------------- the data


def record_dtype() -> Any:
    """The NumPy dtype of the spec's ``Record`` (packed, native order)."""
    import numpy as np

    return np.dtype([("col1", "i4"), ("col2", "i4"), ("col3", "f8"), ("col4", "f8")])


def make_records(nrows: int, seed: int = SEED) -> Any:
    """Return ``nrows`` records filled as ``indexed_search.py`` does (module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    values = np.arange(nrows, dtype=np.float64)
    values += rng.normal(0.0, max(nrows * SCALE, 1.0), nrows)
    records = np.empty(nrows, dtype=record_dtype())
    records["col3"] = records["col4"] = values
    records["col1"] = records["col2"] = values.astype(np.int32)
    return records


def choose_limits(records: Any, fraction: float) -> dict[str, float]:
    """Return ``lim1..lim5`` so that about ``fraction`` of the rows match :data:`CONDITION`.

    ``[lim1, lim2)`` is the col4 window from the 25% quantile holding ``fraction / 2`` of
    the rows; ``(lim3, lim4)`` the col2 window from the 75% quantile holding ``fraction``
    of them, of which ``lim5`` (a midpoint between two values, so that no row sits on it)
    lets half pass the arithmetic term.  The windows do not overlap (col2 is col4
    truncated), so the hits are about ``fraction`` of the rows.
    """
    import numpy as np

    col2, col4 = records["col2"], records["col4"]
    lim1, lim2 = (float(q) for q in np.quantile(col4, [0.25, 0.25 + fraction / 2]))
    lim3, lim4 = (float(q) for q in np.quantile(col2, [0.75, 0.75 + fraction]))
    window = records[(col2 > lim3) & (col2 < lim4)]
    term = np.sort(window["col1"] + 3.1 * window["col2"] + window["col3"] * window["col4"])
    k = len(term) // 2
    lim5 = float((term[k - 1] + term[k]) / 2) if k else float(lim4 * lim4)
    return {"lim1": lim1, "lim2": lim2, "lim3": lim3, "lim4": lim4, "lim5": lim5}


def numpy_hits(records: Any, limits: Mapping[str, float]) -> Any:
    """Return the col2 values of the rows matching :data:`CONDITION`, evaluated by NumPy."""
    fields = {name: records[name] for name in COLUMNS}
    mask = eval(_CODE, {"__builtins__": {}}, {**fields, **limits})
    return records["col2"][mask]


_CODE = compile(CONDITION, "<condition>", "eval")

def check_of(values: Any) -> dict[str, int]:
    """Return the check of a query result: number of hits, their sum and CRC-32."""
    import numpy as np

    array = np.ascontiguousarray(np.asarray(values, dtype=np.int32))
    return {
        "hits": len(array),
        "sum": int(array.sum(dtype=np.int64)),
        "crc32": zlib.crc32(array.data),
    }


def records_crc32(records: Any) -> int:
    """CRC-32 of the bytes of ``records``."""
    import numpy as np

    return zlib.crc32(np.ascontiguousarray(records).data)
