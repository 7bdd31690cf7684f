"""Selections with several index arrays (``a[np.where(a > 4)]``, ``a[(0, 1), (2, 0)]``):
NumPy's advanced indexing, read and written as element coordinates.

Oracles: NumPy for every key; PyTables for the point selections it accepts, on files
written by either library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tables

import hyperslab

DATA = np.arange(5 * 4 * 3, dtype=np.int32).reshape(5, 4, 3)
KEYS: list[Any] = [
    np.where(DATA % 7 == 0),
    np.where(DATA > 1000),  # no element
    ((0, 0), (0, 1), (0, 0)),
    ((0, 4, 4), (-1, 0, 0), (2, 2, 2)),  # negative and repeated coordinates
    ([1, 3], slice(1, 3), [0, 2]),  # separated arrays: their axis goes first
    (slice(None), [0, 1], [2, 0]),
    ([[0], [4]], [1, 2], 1),  # broadcast arrays and an int
    (np.array([True, False, True, False, True]), [0, 1, 3], 2),
]


@pytest.mark.parametrize("kind", ["array", "carray"])
@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_read_and_write_as_numpy(tmp_path: Path, kind: str, key: Any) -> None:
    with hyperslab.open_file(str(tmp_path / "p.h5"), "w") as f:
        if kind == "array":
            node = f.create_array("/", "a", DATA)
        else:
            node = f.create_carray("/", "a", obj=DATA, chunkshape=(2, 2, 2))
        result = node[key]
        assert result.shape == DATA[key].shape
        np.testing.assert_array_equal(result, DATA[key])
        expected = DATA.copy()
        values = np.arange(DATA[key].size, dtype=np.int32).reshape(DATA[key].shape) + 500
        expected[key] = values
        node[key] = values
        np.testing.assert_array_equal(node[:], expected)
        expected[key] = -1  # a broadcast scalar
        node[key] = -1
        np.testing.assert_array_equal(node[:], expected)


def test_errors(tmp_path: Path) -> None:
    with hyperslab.open_file(str(tmp_path / "p.h5"), "w") as f:
        node = f.create_array("/", "a", DATA)
        with pytest.raises(IndexError):
            node[[0, 5], [0, 0], [0, 0]]  # out of bounds
        with pytest.raises(IndexError):
            node[np.array([[0.0], [1.0]], "f4"), [0]]  # float indices
        with pytest.raises(IndexError):
            node[np.empty((3, 0), "f4")]  # float indices, even without an element
        with pytest.raises(IndexError):
            node[[0, 1], [0, 1, 2]]  # shapes that do not broadcast
        with pytest.raises(ValueError, match="broadcast"):
            node[[0, 1], [0, 1], [0, 1]] = [1, 2, 3]
        # One 2-D key: PyTables reads coordinates, NumPy indices of axis 0: refused.
        with pytest.raises(IndexError):
            node[np.array([[0, 1], [0, 1], [0, 1]])]
        np.testing.assert_array_equal(node[:], DATA)


@pytest.mark.parametrize("writer", ["pytables", "hyperslab"])
def test_same_points_as_pytables(tmp_path: Path, writer: str) -> None:
    path = str(tmp_path / "p.h5")
    lib: Any = tables if writer == "pytables" else hyperslab
    with lib.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=DATA, chunkshape=(2, 2, 2))
    key = np.where(DATA % 5 == 1)
    with hyperslab.open_file(path, "a") as f:
        np.testing.assert_array_equal(f.root.a[key], DATA[key])
        f.root.a[key] = 99
    with tables.open_file(path, "r") as f:
        expected = DATA.copy()
        expected[key] = 99
        np.testing.assert_array_equal(f.root.a[key], expected[key])
        np.testing.assert_array_equal(f.root.a[:], expected)
