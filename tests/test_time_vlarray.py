"""VLArrays of PyTables' time atoms (Time32Atom, Time64Atom): rows of HDF5 ``H5T_TIME``
elements, which h5py cannot read, read here without conversion.

PyTables and h5py are the oracles, both ways: rows (scalar and shaped atoms, empty rows,
either byte order asked for) written by either library read alike by both, and the HDF5
element types are PyTables' (time types in the machine's order, whatever ``byteorder``).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab

LIBS = {"hyperslab": hyperslab, "tables": tables}
PAIRS = [(a, b) for a in LIBS for b in LIBS]

# name -> (atom factory, rows)
CASES: dict[str, tuple[Any, list[Any]]] = {
    "t32": (lambda lib: lib.Time32Atom(), [[1, 2, -3], [], [2**31 - 1]]),
    # (no empty Time64 rows: PyTables 3.11 divides by zero reading one)
    "t64": (lambda lib: lib.Time64Atom(), [[1.25, -2.5, 1_178_896_298.832258], [0.0]]),
    "t32_2": (lambda lib: lib.Time32Atom(shape=(2,)), [[[1, 2], [3, 4]], []]),
    "t64_2x2": (lambda lib: lib.Time64Atom(shape=(2, 2)),
                [np.arange(8.0).reshape(2, 2, 2) / 4, [[[1, 2], [3, 4.5]]]]),
}


def _write(lib: ModuleType, path: Path) -> None:
    with lib.open_file(str(path), "w") as f:
        for name, (atom, rows) in CASES.items():
            for order in ("little", "big"):
                vlarray = f.create_vlarray("/", f"{name}_{order}", atom(lib), byteorder=order)
                for row in rows:
                    vlarray.append(row)


def _expected(name: str) -> list[np.ndarray]:
    atom, rows = CASES[name]
    dtype = atom(hyperslab).dtype
    return [np.asarray(row, dtype=dtype.base).reshape((-1, *dtype.shape)) for row in rows]


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_time_rows_read_alike(tmp_path: Path, writer: str, reader: str) -> None:
    path = tmp_path / "t.h5"
    _write(LIBS[writer], path)
    with LIBS[reader].open_file(str(path), "r") as f:
        for name in CASES:
            for order in ("little", "big"):
                vlarray = f.get_node(f"/{name}_{order}")
                rows = vlarray.read()
                expected = _expected(name)
                assert len(rows) == len(expected)
                for got, want in zip(rows, expected, strict=True):
                    assert got.dtype == want.dtype and got.shape == want.shape
                    np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(vlarray[0], expected[0])
                np.testing.assert_array_equal(vlarray[-1], expected[-1])
                for got, want in zip(vlarray[::2], expected[::2], strict=True):
                    np.testing.assert_array_equal(got, want)
                for got, want in zip(vlarray.iterrows(), expected, strict=True):
                    np.testing.assert_array_equal(got, want)


def test_hdf5_types_are_pytables(tmp_path: Path) -> None:
    _write(hyperslab, tmp_path / "ours.h5")
    _write(tables, tmp_path / "theirs.h5")
    with h5py.File(tmp_path / "ours.h5", "r") as ours, \
            h5py.File(tmp_path / "theirs.h5", "r") as theirs:
        assert set(ours) == set(theirs)
        for name in ours:
            vlen = ours[name].id.get_type()
            assert vlen.equal(theirs[name].id.get_type()), name
            element = vlen.get_super()
            while element.get_class() == h5py.h5t.ARRAY:
                element = element.get_super()
            assert element.get_class() == h5py.h5t.TIME
            native = {4: h5py.h5t.UNIX_D32LE, 8: h5py.h5t.UNIX_D64LE}[element.get_size()]
            assert element.equal(native)  # the machine's order (x86-64), as PyTables


def test_rows_written_after_reading_keep_their_values(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    with tables.open_file(str(path), "w") as f:
        f.create_vlarray("/", "t", tables.Time64Atom()).append([1.5, 2.25])
    with hyperslab.open_file(path, "a") as f:
        vlarray = f.root.t
        row = vlarray[0]
        row[0] = 7.75  # rows are the reader's own, writable arrays
        vlarray.append(row)
        vlarray[0] = [-1.5, 3.0]
    with tables.open_file(str(path)) as f:
        rows = f.root.t.read()
        np.testing.assert_array_equal(rows[0], [-1.5, 3.0])
        np.testing.assert_array_equal(rows[1], [7.75, 2.25])


def test_empty_time64_rows(tmp_path: Path) -> None:
    """PyTables cannot read these back (it divides by zero): checked here alone."""
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        for name, atom in (("s", hyperslab.Time64Atom()),
                           ("v", hyperslab.Time64Atom(shape=(3,)))):
            vlarray = f.create_vlarray("/", name, atom)
            vlarray.append(np.arange(6.0).reshape(-1, *atom.shape) / 8)
            vlarray.append([])
    with hyperslab.open_file(path) as f:
        for name, shape in (("s", ()), ("v", (3,))):
            rows = f.get_node("/" + name).read()
            np.testing.assert_array_equal(rows[0], np.arange(6.0).reshape(-1, *shape) / 8)
            assert rows[1].shape == (0, *shape) and rows[1].dtype == np.float64
    with h5py.File(path, "r") as h5:
        assert h5["s"].id.get_storage_size() > 0 and h5["s"].shape == (2,)


def _resident_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="Linux only")
def test_reading_frees_what_hdf5_allocates(tmp_path: Path) -> None:
    path = tmp_path / "big.h5"
    with hyperslab.open_file(path, "w") as f:
        vlarray = f.create_vlarray("/", "t", hyperslab.Time64Atom())
        for _ in range(8):
            vlarray.append(np.arange(2**14, dtype="f8"))  # 1 MiB in all
    with hyperslab.open_file(path) as f:
        vlarray = f.root.t
        vlarray.read()
        before = _resident_bytes()
        for _ in range(200):  # 200 MiB if HDF5's buffers were never freed
            vlarray.read()
        assert _resident_bytes() - before < 50 * 2**20
