"""Automatic chunk shapes against PyTables' ``_calc_chunkshape`` (docs/format.md §3.6).

PyTables sizes Blosc2 chunks by the host's L3 cache when py-cpuinfo reports an L3 larger
than L2; hyperslab never looks at the host.  The comparisons below therefore patch
PyTables' ``get_cpu_info`` to report no cache sizes (the result PyTables gives on a host
where L3 <= L2, like the one docs/format.md was written on), and a separate test feeds both
sides the same cache sizes to show that this is the only difference.
"""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables
import tables.leaf

from hyperslab.chunked import chunkshape
from hyperslab.chunked.chunkshape import (
    calc_chunksize,
    compute_chunkshape,
    compute_maxshape_carray,
    validate_chunkshape,
)

COMPLIBS = [None, "zlib", "blosc", "blosc2", "blosc2:zstd", "bzip2"]


@pytest.fixture(autouse=True)
def _no_host_cache_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables.leaf, "get_cpu_info", lambda: {})


def _filters(complib: str | None) -> Any:
    return tables.Filters() if complib is None else tables.Filters(1, complib)


@pytest.mark.parametrize(
    ("shape", "itemsize", "kwargs", "expected"),
    [
        # docs/format.md §3.6 worked examples
        ((0,), 25, {"expectedrows": 10**5, "complib": "zlib", "classname": "TABLE"}, (2621,)),
        ((0,), 25, {"expectedrows": 10**5, "complib": "blosc", "classname": "TABLE"}, (2621,)),
        ((0,), 25, {"expectedrows": 10**5, "complib": "blosc2", "classname": "TABLE"},
         (41943,)),
        ((0, 4), 4, {"expectedrows": 10**6, "classname": "EARRAY"}, (8192, 4)),
        ((1000, 100), 8, {"complib": "blosc2"}, (1310, 100)),
        ((0,), 4, {"expectedrows": 1000, "classname": "VLARRAY"}, (16384,)),
        ((0,), 1, {"expectedrows": 1000, "classname": "VLARRAY"}, (65536,)),
        # edge cases
        ((), 8, {}, (1,)),
        ((10, 10**6), 8, {"complib": "zlib"}, (1, 16384)),
        ((5,), 2**20, {}, (1,)),
        ((4, 4), 8, {"complib": "blosc2", "classname": "VLARRAY", "expectedrows": 10},
         (8192,)),
    ],
)
def test_worked_examples(shape: tuple[int, ...], itemsize: int, kwargs: dict[str, Any],
                         expected: tuple[int, ...]) -> None:
    result = compute_chunkshape(shape, itemsize, **kwargs)
    assert result == expected
    assert all(type(c) is int for c in result)


CARRAY_CASES = [
    ((1000, 100), "f8"), ((10**6,), "i4"), ((3, 4, 5), "i1"), ((10, 10**6), "f8"),
    ((10**4, 3, 3, 3), "c16"), ((1,), "f2"), ((2**20, 64), "u2"), ((7, 2**22), "i8"),
]


@pytest.mark.parametrize("complib", COMPLIBS)
def test_carray_chunkshapes_like_pytables(tmp_path: Path, complib: str | None) -> None:
    with tables.open_file(tmp_path / "c.h5", "w") as f:
        for i, (shape, dtype) in enumerate(CARRAY_CASES):
            atom = tables.Atom.from_dtype(np.dtype(dtype))
            node = f.create_carray("/", f"c{i}", atom=atom, shape=shape, filters=_filters(complib))
            ours = compute_chunkshape(shape, atom.size, complib=complib, classname="CARRAY")
            assert ours == node.chunkshape, (shape, dtype)


EARRAY_CASES = [
    ((0, 4), "i4", 10**6, 0), ((0,), "f8", 1000, 0), ((5, 0, 3), "f4", 10**7, 1),
    ((0, 512, 512), "u1", 10**5, 0), ((3, 0), "i8", 10**9, 1), ((0, 2), "f8", 0, 0),
]


@pytest.mark.parametrize("complib", COMPLIBS)
def test_earray_chunkshapes_like_pytables(tmp_path: Path, complib: str | None) -> None:
    with tables.open_file(tmp_path / "e.h5", "w") as f:
        for i, (shape, dtype, rows, maindim) in enumerate(EARRAY_CASES):
            atom = tables.Atom.from_dtype(np.dtype(dtype))
            node = f.create_earray("/", f"e{i}", atom=atom, shape=shape,
                                   filters=_filters(complib), expectedrows=rows)
            assert node.maindim == maindim
            ours = compute_chunkshape(shape, atom.size, maindim=maindim, expectedrows=rows,
                                      complib=complib, classname="EARRAY")
            assert ours == node.chunkshape, (shape, dtype, rows)


TABLE_CASES = [
    ({"a": "i4", "b": "f8", "c": "S13"}, 10**4),
    ({"a": "i4", "b": "f8", "c": "S13"}, 10**8),
    ({"x": "S1000"}, 10**5),
    ({"x": "i1"}, 1),
    ({"x": "f8", "y": "f8", "z": "f8"}, 10**12),
]


@pytest.mark.parametrize("complib", COMPLIBS)
def test_table_chunkshapes_like_pytables(tmp_path: Path, complib: str | None) -> None:
    with tables.open_file(tmp_path / "t.h5", "w") as f:
        for i, (fields, rows) in enumerate(TABLE_CASES):
            dtype = np.dtype(list(fields.items()))
            node = f.create_table("/", f"t{i}", description=dtype, filters=_filters(complib),
                                  expectedrows=rows)
            ours = compute_chunkshape((0,), node.rowsize, expectedrows=rows, complib=complib,
                                      classname="TABLE")
            assert ours == node.chunkshape, (fields, rows)


@pytest.mark.parametrize("complib", [None, "zlib", "blosc:lz4"])
def test_vlarray_chunkshapes_like_pytables(tmp_path: Path, complib: str | None) -> None:
    with tables.open_file(tmp_path / "v.h5", "w") as f:
        for i, (atom, rows) in enumerate([(tables.Int32Atom(), 1000), (tables.Float64Atom(), 10**8),
                                          (tables.VLStringAtom(), 10**5),
                                          (tables.Int16Atom(shape=(3,)), 10**6)]):
            node = f.create_vlarray("/", f"v{i}", atom=atom, filters=_filters(complib),
                                    expectedrows=rows)
            base = node._basesize
            assert compute_chunkshape((0,), base, expectedrows=rows, complib=complib,
                                      classname="VLARRAY") == node.chunkshape


@pytest.mark.parametrize(
    ("l2", "l3"), [(2**20, 2**19), (2**20, 32 * 2**20), (2**20, 2**20), (2**21, 3 * 2**30)]
)
def test_host_cache_sizes_are_the_only_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, l2: int, l3: int
) -> None:
    """Given PyTables' host cache sizes, we compute what PyTables computes on that host."""
    monkeypatch.setattr(tables.leaf, "get_cpu_info",
                        lambda: {"l2_cache_size": l2, "l3_cache_size": l3})
    with tables.open_file(tmp_path / "h.h5", "w") as f:
        node = f.create_carray("/", "c", atom=tables.Float64Atom(), shape=(1000, 100),
                               filters=tables.Filters(1, "blosc2"))
        table = f.create_table("/", "t", description={"x": tables.Float64Col()},
                               filters=tables.Filters(1, "blosc2"), expectedrows=10**6)
        host = compute_chunkshape((1000, 100), 8, complib="blosc2", cache_sizes=(l2, l3))
        assert host == node.chunkshape
        assert compute_chunkshape((0,), 8, expectedrows=10**6, complib="blosc2",
                                  classname="TABLE", cache_sizes=(l2, l3)) == table.chunkshape
    # Without cache sizes, the result never depends on the host: always the 16x branch.
    assert compute_chunkshape((1000, 100), 8, complib="blosc2") == (1310, 100)
    if l3 > l2:
        expected_rows = min(l3, chunkshape.BLOSC2_MAX_CHUNKSIZE) // 8 // 100
        assert host == (expected_rows, 100)


@pytest.mark.parametrize("expected_mb", [0, 0.5, 1, 9, 10, 99.9, 12345, 10**7, 10**9, 3.3e5])
def test_calc_chunksize_like_pytables(expected_mb: float) -> None:
    assert calc_chunksize(expected_mb) == tables.leaf.calc_chunksize(expected_mb)


@pytest.mark.parametrize(
    ("shape", "itemsize", "kwargs", "match"),
    [
        ((-1, 3), 8, {}, r"shape\[0\]"),
        ((3, 0), 8, {}, "zero-length dimension 1"),
        ((3, 4), 0, {}, "itemsize"),
        ((3, 4), 8, {"maindim": 2}, "maindim 2"),
        ((3, 4), 8, {"expectedrows": -5}, "-5"),
        ((3, 4.5), 8, {}, "4.5"),
        (5, 8, {}, "shape must be a sequence"),
        ((3,), True, {}, "itemsize"),
    ],
)
def test_compute_chunkshape_errors(shape: Any, itemsize: Any, kwargs: dict[str, Any],
                                   match: str) -> None:
    with pytest.raises(ValueError, match=match):
        compute_chunkshape(shape, itemsize, **kwargs)


@pytest.mark.parametrize(
    ("chunk", "shape", "expected"),
    [((10, 20), (100, 100), (10, 20)), (7, (0,), (7,)), (np.int64(5), [9], (5,)),
     ([np.int32(3), 4], (1, 1), (3, 4)), (np.array([2, 2]), (4, 4), (2, 2))],
)
def test_validate_chunkshape_accepts(chunk: Any, shape: Any, expected: tuple[int, ...]) -> None:
    result = validate_chunkshape(chunk, shape)
    assert result == expected
    assert all(type(c) is int for c in result)


@pytest.mark.parametrize(
    ("chunk", "shape", "exc", "match"),
    [
        ((10,), (100, 100), ValueError, "rank 1"),
        ((10, 0), (100, 100), ValueError, r"chunkshape\[1\].*0"),
        ((10, -2), (100, 100), ValueError, "-2"),
        ((10, 2.5), (100, 100), ValueError, "2.5"),
        ((10, "2"), (100, 100), ValueError, "'2'"),
        ((True, 2), (100, 100), ValueError, "True"),
        (True, (100,), ValueError, "True"),
        (2.0, (100,), TypeError, "float"),
        ((2**17, 2**16), (10, 10), ValueError, "4 GiB"),
    ],
)
def test_validate_chunkshape_rejects(chunk: Any, shape: Any, exc: type[Exception],
                                     match: str) -> None:
    with pytest.raises(exc, match=match):
        validate_chunkshape(chunk, shape, itemsize=1)


def test_validate_chunkshape_errors_like_pytables(tmp_path: Path) -> None:
    """PyTables refuses the same chunk shapes (with ValueError) for a CArray."""
    with tables.open_file(tmp_path / "v.h5", "w") as f:
        for chunk in [(10,), (10, 0)]:
            with pytest.raises(ValueError):
                f.create_carray("/", "c", atom=tables.Float64Atom(), shape=(100, 100),
                                chunkshape=chunk)
            with pytest.raises(ValueError):
                validate_chunkshape(chunk, (100, 100))


@pytest.mark.parametrize(
    ("shape", "chunk"), [((1000, 100), (1310, 100)), ((5, 5), (2, 7)), ((3,), (3,))]
)
def test_maxshape_carray_like_pytables(tmp_path: Path, shape: tuple[int, ...],
                                       chunk: tuple[int, ...]) -> None:
    path = tmp_path / "m.h5"
    with tables.open_file(path, "w") as f:
        f.create_carray("/", "c", atom=tables.Float64Atom(), shape=shape, chunkshape=chunk)
    with h5py.File(path, "r") as f:
        assert compute_maxshape_carray(shape, chunk) == f["c"].maxshape
    with pytest.raises(ValueError, match="ranks"):
        compute_maxshape_carray(shape, (*chunk, 1))


def test_doctests_of_chunkshape() -> None:
    result = doctest.testmod(chunkshape)
    assert result.failed == 0
    assert result.attempted > 0
