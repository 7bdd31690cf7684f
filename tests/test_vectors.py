"""Vector: 1-D datasets read by ranges, against h5py's reading of the same datasets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

from hyperslab.errors import HDF5ExtError
from hyperslab.storage.vectors import Vector


@pytest.mark.parametrize("data", [
    np.arange(37, dtype=">i4") - 10,
    np.linspace(-1, 1, 37).astype(">f8"),
    np.arange(37, dtype="<u2"),
    np.arange(37, dtype="i1"),
    np.array([b"a", b"bcd", b"", b"xyz"] * 9 + [b"q"], dtype="S3"),
], ids=["i4-big", "f8-big", "u2", "i1", "S3"])
@pytest.mark.parametrize("chunks", [None, (8,)])
def test_ranges_match_h5py_in_native_order(tmp_path: Path, data: np.ndarray,
                                           chunks: Any) -> None:
    path = tmp_path / "v.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=data, chunks=chunks,
                         **(hdf5plugin.Blosc2() if chunks else {}))
    with h5py.File(path, "r") as f:
        vector = Vector(f["v"].id, "/v")
        assert len(vector) == len(data) and vector.chunks == chunks
        assert vector.dtype.isnative or vector.dtype.byteorder == "|"
        for start, stop in [(0, 37), (3, 9), (8, 16), (36, 37), (5, 5)]:
            got = vector.read(start, stop)
            np.testing.assert_array_equal(got, f["v"][start:stop])
            assert got.dtype == vector.dtype


def test_pytables_booleans_read_as_bool(tmp_path: Path) -> None:
    path = tmp_path / "b.h5"
    values = np.arange(20) % 3 == 0
    with tables.open_file(path, "w") as f:
        f.create_earray("/", "b", tables.BoolAtom(), shape=(0,), chunkshape=(8,)).append(values)
    with h5py.File(path, "r") as f:
        vector = Vector(f["b"].id, "/b")
        assert vector.dtype == np.dtype(bool)
        np.testing.assert_array_equal(vector.read(2, 19), values[2:19])


def test_bad_datasets_and_ranges_are_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("two", data=np.zeros((3, 4)))
        f.create_dataset("c", data=np.zeros(4, "c16"))
        f.create_dataset("v", data=np.arange(5.0))
        f.create_group("g")
    with h5py.File(path, "r") as f:
        with pytest.raises(TypeError, match="/two is not one-dimensional"):
            Vector(f["two"].id, "/two")
        with pytest.raises(TypeError, match="holds complex128"):
            Vector(f["c"].id, "/c")
        with pytest.raises(TypeError, match="/g is not a dataset"):
            Vector(f["g"].id, "/g")
        vector = Vector(f["v"].id, "/v")
        for start, stop in [(-1, 2), (3, 2), (0, 6)]:
            with pytest.raises(IndexError, match=re.escape(
                    f"elements {start}..{stop} are not within the 5 of /v")):
                vector.read(start, stop)


def test_an_unreadable_chunk_is_an_hdf5_ext_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=np.arange(100.0), chunks=(10,), compression="gzip")
    with h5py.File(path, "r+") as f:
        f["v"].id.write_direct_chunk((20,), b"not a gzip stream")
    with h5py.File(path, "r") as f:
        vector = Vector(f["v"].id, "/v")
        np.testing.assert_array_equal(vector.read(0, 10), np.arange(10.0))
        with pytest.raises(HDF5ExtError, match=r"cannot read elements 15\.\.25 of /v"):
            vector.read(15, 25)
