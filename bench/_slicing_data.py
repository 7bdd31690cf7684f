"""The ``slicing`` benchmark's data: the array, its chunkshape groups and the cases.

What :mod:`bench.slicing` reads and :mod:`bench._slicing_report` reports on, apart from
how the rivals read it: the 4-D int64 array (:func:`make_slab`, :func:`make_data`), the
chunkshapes (:data:`SPEC_CHUNKS`, :func:`scale_chunks`) and the :class:`Group` of files
written with each, the cases' selections (:func:`make_cases`, :data:`Selection`) and the
checks of what a case reads (:func:`check_of`, :func:`expected_checks`).
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

FULL_SHAPE = (50, 100, 100, 100)
"""The array of the default run (400 MB of int64)."""
QUICK_SHAPE = (10, 40, 40, 40)
"""The array of ``--quick`` (5 MB)."""
SPEC_CHUNKS = {"small": (10, 25, 50, 50), "big": (25, 50, 50, 50)}
"""Chunkshapes for :data:`FULL_SHAPE`, scaled to other shapes by :func:`scale_chunks`."""
ITEMSIZE = 8
SEED = 20231123
"""Seed of the boxes (the date the spec's benchmarks were redone)."""
NBOXES = 20
BOX = (5, 10, 10, 10)
CASES = ("axis0", "axis1", "axis2", "axis3", "strided", "boxes")
AXIS_CASES = CASES[:4]
"""The one-index cases, whose goals are PyTables' and b2h5py's speed."""

Selection = list[Any]
"""A JSON-able selection: one item per leading dimension, an int or ``[start, stop, step]``
(``null`` for an omitted bound), as :func:`to_index` reads it."""


# ----------------------------------------------------------------------------- the data


def make_slab(shape: Sequence[int], start: int, stop: int) -> Any:
    """Return rows ``start:stop`` (along axis 0) of the benchmark's array of ``shape``.

    Item ``(i, j, k, l)`` is ``4000 + round(800 sin(0.21 i + 0.3)) + round(700 sin(0.083 j
    + 1.1)) + round(600 sin(0.061 k + 0.5)) + round(500 sin(0.047 l + 2))`` plus noise
    from 0 to 7: the top 3 bits of the item's flat index times a Fibonacci-hashing constant
    (mod 2**64).  It depends only on the coordinates (slabs of any size give the same
    array) and compresses about 6x with LZ4 + shuffle.  The array may have any rank >= 1;
    the terms use its first four dimensions.
    """
    import numpy as np

    terms = ((800, 0.21, 0.3), (700, 0.083, 1.1), (600, 0.061, 0.5), (500, 0.047, 2.0))
    dims = [range(start, stop), *(range(n) for n in shape[1:])]
    out = np.full([len(d) for d in dims], 4000, dtype=np.int64)
    for axis, (dim, (amplitude, freq, phase)) in enumerate(zip(dims, terms, strict=False)):
        term = np.rint(amplitude * np.sin(freq * np.arange(dim.start, dim.stop) + phase))
        view = [1] * out.ndim
        view[axis] = len(dim)
        out += term.astype(np.int64).reshape(view)
    rest = math.prod(shape[1:])
    noise = np.arange(start * rest, stop * rest, dtype=np.uint64)
    noise *= np.uint64(0x9E3779B97F4A7C15)
    noise >>= np.uint64(61)
    out += noise.reshape(out.shape).astype(np.int64)
    return out


def make_data(shape: Sequence[int], rows: int = 10) -> Any:
    """Return the whole array of ``shape``, made ``rows`` rows (along axis 0) at a time."""
    import numpy as np

    data = np.empty(tuple(shape), dtype=np.int64)
    for start in range(0, shape[0], rows):
        stop = min(start + rows, shape[0])
        data[start:stop] = make_slab(shape, start, stop)
    return data


def scale_chunks(chunks: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """Scale a chunkshape meant for :data:`FULL_SHAPE` to ``shape`` (at least 1 each)."""
    return tuple(
        max(1, min(n, round(c * n / full)))
        for c, n, full in zip(chunks, shape, FULL_SHAPE, strict=True)
    )


def make_cases(shape: Sequence[int], seed: int = SEED) -> dict[str, list[Selection]]:
    """Return the selections of every case (:data:`CASES`) for an array of ``shape``.

    The axis cases take the middle index of their dimension (``a[25]``, ``a[:, 50]``...
    for :data:`FULL_SHAPE`); ``strided`` is ``a[::2, ::3, n/10:9n/10:4, ::5]``; ``boxes``
    are :data:`NBOXES` boxes of :data:`BOX` (clipped to the shape) at random places drawn
    with ``seed``.
    """
    import numpy as np

    full: list[Any] = [None, None, None]
    cases: dict[str, list[Selection]] = {}
    for axis in range(4):
        cases[f"axis{axis}"] = [[*([full] * axis), shape[axis] // 2]]
    n2 = shape[2]
    cases["strided"] = [
        [[None, None, 2], [None, None, 3], [round(n2 / 10), round(9 * n2 / 10), 4], [None, None, 5]]
    ]
    rng = np.random.default_rng(seed)
    box = [min(b, n) for b, n in zip(BOX, shape, strict=True)]
    boxes = []
    for _ in range(NBOXES):
        starts = [int(rng.integers(0, n - b + 1)) for b, n in zip(box, shape, strict=True)]
        boxes.append([[s, s + b, None] for s, b in zip(starts, box, strict=True)])
    cases["boxes"] = boxes
    return cases


def to_index(selection: Selection) -> tuple[int | slice, ...]:
    """Return the NumPy index of a JSON selection (see :data:`Selection`)."""
    return tuple(item if isinstance(item, int) else slice(*item) for item in selection)


def check_of(values: Sequence[Any]) -> dict[str, Any]:
    """Return the check of the arrays read by one case: shapes, dtype, bytes and CRC-32.

    The CRC-32 is that of the concatenated bytes of the arrays (each in C order).
    """
    import numpy as np

    crc, nbytes = 0, 0
    for value in values:
        array = np.ascontiguousarray(value)
        crc = zlib.crc32(array.data, crc)
        nbytes += array.nbytes
    return {
        "count": len(values),
        "shapes": [list(np.shape(v)) for v in values],
        "dtype": np.asarray(values[0]).dtype.str if values else "",
        "nbytes": nbytes,
        "crc32": crc,
    }


def expected_checks(data: Any, cases: Mapping[str, list[Selection]]) -> dict[str, dict]:
    """Return NumPy's check of every case on the in-memory array ``data``."""
    return {
        name: check_of([data[to_index(s)] for s in selections])
        for name, selections in cases.items()
    }


# ----------------------------------------------------------------------------- the groups


@dataclasses.dataclass
class Group:
    """One chunkshape: its files (by whose file it is) and what they look like."""

    name: str
    chunks: tuple[int, ...]
    files: dict[str, Path] = dataclasses.field(default_factory=dict)
    info: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    write_seconds: dict[str, float] = dataclasses.field(default_factory=dict)


def group_name(label: str, chunks: Sequence[int]) -> str:
    """``small 10x25x50x50``: a label and the chunkshape."""
    return f"{label} {'x'.join(str(c) for c in chunks)}"
