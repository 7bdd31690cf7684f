"""Reductions of on-disk arrays against NumPy on the same data in memory.

Generated shapes, chunk shapes, dtypes (big-endian included), codecs (Blosc2 through the
fast path, zlib through h5py, none), operations, axes, ``keepdims``, ``ddof``, ``where``
masks and tile sizes (tiny tiles force many tiles, read in parallel and combined).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.chunked import tiles

DTYPES = ["i1", "<u2", ">i4", "<i8", "<f2", "<f4", ">f8", "<c8", "?"]
FILTERS = {"none": None, "blosc2": hyperslab.Filters(5, "blosc2:lz4", shuffle=True),
           "zlib": hyperslab.Filters(1, "zlib")}
OPS = ["sum", "prod", "mean", "std", "var", "min", "max", "any", "all", "argmin", "argmax"]
TOLERANCE = {"e": 2e-2, "f": 2e-4, "d": 1e-9, "F": 2e-4, "D": 1e-9}


def _values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.7
    if dt.kind in "iu":
        info = np.iinfo(dt)
        low, high = max(info.min, -50), min(info.max, 50)
        return rng.integers(low, high + 1, size=shape).astype(dt)
    data = rng.normal(scale=3, size=shape)
    if dt.kind == "c":
        data = data + 1j * rng.normal(size=shape)
    return data.astype(dt)


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    op = draw(st.sampled_from(OPS))
    if op.startswith("arg"):
        axis: Any = draw(st.none() | st.integers(-ndim, ndim - 1))
    else:
        axis = draw(st.none() | st.integers(-ndim, ndim - 1) | st.lists(
            st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim).map(tuple))
    where = None
    if not op.startswith("arg") and draw(st.booleans()):
        mask_shape = tuple(draw(st.sampled_from([1, n])) for n in shape)
        where = np.random.default_rng(draw(st.integers(0, 99))).random(mask_shape) < 0.6
    return {
        "shape": shape,
        "chunkshape": tuple(draw(st.integers(1, n)) for n in shape),
        "dtype": draw(st.sampled_from(DTYPES)),
        "filters": draw(st.sampled_from(list(FILTERS))),
        "op": op, "axis": axis, "where": where,
        "keepdims": draw(st.booleans()),
        "ddof": draw(st.integers(0, 1)),
        "tile_bytes": draw(st.sampled_from([1, 64, tiles.TILE_BYTES])),
        "seed": draw(st.integers(0, 1000)),
    }


def _kwargs(case: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"axis": case["axis"], "keepdims": case["keepdims"]}
    op = case["op"]
    if case["where"] is not None:
        kwargs["where"] = case["where"]
        if op in ("min", "max"):
            kwargs["initial"] = 0
    if op in ("std", "var"):
        kwargs["ddof"] = case["ddof"]
    return kwargs


def _numpy(data: np.ndarray, op: str, kwargs: dict[str, Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(np, op)(data, **kwargs)
    except (ValueError, TypeError) as exc:
        return exc


def _assert_same(got: Any, want: Any, dtype: np.dtype[Any], where: str) -> None:
    assert np.shape(got) == np.shape(want), where
    assert np.asarray(got).dtype == np.asarray(want).dtype, where
    if np.asarray(want).dtype.kind == "c":
        # A complex result that overflowed has no one right value: the order of the
        # multiplications decides which of its parts come out inf or nan, and NumPy's own
        # answer changes with it (np.prod(a) is nan-infj where np.prod(a[::-1]) is
        # inf-infj).  Those must overflow too; the others match within the tolerance.
        got, want = np.asarray(got), np.asarray(want)
        overflowed = ~np.isfinite(want)
        np.testing.assert_array_equal(~np.isfinite(got), overflowed, err_msg=where)
        got, want = got[~overflowed], want[~overflowed]
    if np.asarray(want).dtype.kind in "fc":
        tolerance = TOLERANCE.get(np.asarray(want).dtype.char, 1e-9)
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 10,
                                   equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_cases())
def test_reductions_match_numpy(tmp_path_factory: pytest.TempPathFactory,
                                case: dict[str, Any]) -> None:
    data = _values(case["shape"], case["dtype"], case["seed"])
    path = tmp_path_factory.mktemp("reduce") / "a.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=case["chunkshape"],
                        filters=FILTERS[case["filters"]])
    op, kwargs = case["op"], _kwargs(case)
    native = data.astype(data.dtype.newbyteorder("="))
    want = _numpy(native, op, kwargs)
    with pytest.MonkeyPatch.context() as patch, hyperslab.open_file(path) as f:
        patch.setattr(tiles, "TILE_BYTES", case["tile_bytes"])
        if isinstance(want, Exception):
            with pytest.raises(type(want)):
                getattr(f.root.a, op)(**kwargs)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            got = getattr(f.root.a, op)(**kwargs)
    if op == "prod" and native.dtype.kind == "f" and not np.all(np.isfinite(want)):
        # A real product NumPy overflowed in its own order of multiplications may not
        # overflow in another (float16: partial products above 65504 that later factors
        # bring back): where the product computed in float64 is finite in the dtype,
        # that value is right too.
        with np.errstate(all="ignore"):
            exact = _numpy(native.astype(np.float64), op, kwargs)
            exact = np.asarray(exact).astype(native.dtype)
        want = np.where(np.isfinite(exact) & np.isfinite(got), exact, want)[()]
    _assert_same(got, want, data.dtype, f"{op}({kwargs})")


@pytest.mark.parametrize("filters", list(FILTERS))
def test_earray_reductions_and_many_tiles(tmp_path: Path, filters: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiles, "TILE_BYTES", 4096)
    data = _values((200, 30), ">f8", 3)
    with hyperslab.open_file(tmp_path / "e.h5", "w") as f:
        earray = f.create_earray("/", "e", hyperslab.Float64Atom(), (0, 30),
                                 chunkshape=(16, 30), filters=FILTERS[filters])
        earray.append(data)
        for op in OPS:
            for axis in (None, 0, 1):
                with np.errstate(over="ignore", under="ignore"):  # prod of 6000 normals
                    want = getattr(np, op)(data, axis=axis)
                    got = getattr(earray, op)(axis=axis)
                _assert_same(got, want, data.dtype, f"{op} axis={axis}")


def test_big_sum_is_as_accurate_as_numpys(tmp_path: Path) -> None:
    """Tile sums are pairwise sums (NumPy's) added in order: the error stays at NumPy's."""
    rng = np.random.default_rng(7)
    data = rng.normal(size=2_000_000) * 10.0 ** rng.integers(-8, 8, size=2_000_000)
    exact = math.fsum(data)
    with hyperslab.open_file(tmp_path / "big.h5", "w") as f:
        arr = f.create_carray("/", "a", obj=data, chunkshape=(50_000,),
                              filters=FILTERS["blosc2"])
        ours = arr.sum()
        theirs = data.sum()
    scale = math.fsum(np.abs(data))
    assert abs(ours - exact) <= max(4 * abs(theirs - exact), 1e-15 * scale)
    np.testing.assert_allclose(arr_mean := ours / data.size, data.mean(), rtol=1e-12)
    assert arr_mean == pytest.approx(exact / data.size, rel=1e-12)


def test_errors_are_numpys(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "err.h5", "w") as f:
        arr = f.create_carray("/", "a", obj=np.arange(12.0).reshape(3, 4),
                              filters=FILTERS["blosc2"])
        with pytest.raises(np.exceptions.AxisError):
            arr.sum(axis=2)
        with pytest.raises(ValueError, match="duplicate"):
            arr.sum(axis=(0, 0))
        with pytest.raises(TypeError, match="axis"):
            arr.sum(axis=1.5)
        with pytest.raises(ValueError, match="does not broadcast"):
            arr.sum(where=np.ones(5, bool))
        with pytest.raises(TypeError, match="where"):
            arr.argmin(where=True)  # type: ignore[call-arg]
        with pytest.raises(ValueError, match="no identity"):
            arr.min(where=np.zeros((3, 4), bool))
        assert arr.min(where=np.zeros((3, 4), bool), initial=5.0) == 5.0
        strings = f.create_carray("/", "s", obj=np.array([b"ab", b"cd"]))
        with pytest.raises(TypeError, match="not numeric"):
            strings.sum()
        empty = f.create_earray("/", "e", hyperslab.Float64Atom(), (0, 3))
        assert empty.sum() == 0.0
        with pytest.raises(ValueError, match="empty"):
            empty.argmax()
        with pytest.raises(ValueError, match="no identity"):
            empty.max()


def test_nans_as_numpy(tmp_path: Path) -> None:
    data = np.arange(24.0).reshape(4, 6)
    data[1, 2] = data[3, 0] = np.nan
    with hyperslab.open_file(tmp_path / "nan.h5", "w") as f:
        arr = f.create_carray("/", "a", obj=data, chunkshape=(2, 2), filters=FILTERS["blosc2"])
        for op in ("sum", "min", "max", "mean", "argmin", "argmax"):
            for axis in (None, 0, 1):
                _assert_same(getattr(arr, op)(axis=axis), getattr(np, op)(data, axis=axis),
                             data.dtype, f"{op} axis={axis}")


def test_variance_that_overflows_is_inf_as_numpys(tmp_path: Path) -> None:
    """Squared deviations past the float range make NumPy's var and std inf; combining
    tiles must not turn that into nan (inf times the zero weight of the first tile)."""
    data = np.array([1.0, 2.0, 1e200, 3.0, 4.0, 5.0] * 3).reshape(9, 2)
    with hyperslab.open_file(tmp_path / "big.h5", "w") as f:
        arr = f.create_carray("/", "a", obj=data, chunkshape=(4, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for op in ("var", "std"):
                for axis in (None, 0):
                    got, want = getattr(arr, op)(axis=axis), getattr(np, op)(data, axis=axis)
                    np.testing.assert_array_equal(got, want, err_msg=f"{op} axis={axis}")


@pytest.mark.parametrize("filters", list(FILTERS))
@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_table_column_reductions(tmp_path: Path, filters: str, byteorder: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``table.cols.x.sum()`` and friends, nested and multidimensional columns included,
    streamed in many table blocks."""
    from hyperslab.nodes.tables import recordio as tableio

    monkeypatch.setattr(tableio, "BLOCK_BYTES", 1)  # one chunk per block: many blocks
    rng = np.random.default_rng(11)
    dtype = np.dtype([("i", "<i4"), ("x", "<f8"), ("cell", "<i2", (2, 3)),
                      ("inner", [("y", "<f4"), ("flag", "?")])])
    data = np.zeros(700, dtype=dtype)
    data["i"] = rng.integers(-1000, 1000, 700)
    data["x"] = rng.normal(size=700)
    data["cell"] = rng.integers(-9, 9, (700, 2, 3))
    data["inner"]["y"] = rng.normal(size=700)
    data["inner"]["flag"] = rng.random(700) < 0.5
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", obj=data, chunkshape=(64,), byteorder=byteorder,
                               filters=FILTERS[filters])
        cols = table.cols
        for column, values in [(cols.i, data["i"]), (cols.x, data["x"]),
                               (cols.cell, data["cell"]),
                               (cols._f_col("inner/y"), data["inner"]["y"]),
                               (cols._f_col("inner/flag"), data["inner"]["flag"])]:
            for op in OPS:
                axes = [None, 0] if values.ndim == 1 or op.startswith("arg") else [None, 0, 2]
                for axis in axes:
                    _assert_same(getattr(column, op)(axis=axis),
                                 getattr(np, op)(values, axis=axis), values.dtype,
                                 f"{column.pathname}.{op}(axis={axis})")
        mask = data["i"] > 0
        _assert_same(cols.x.sum(where=mask), data["x"].sum(where=mask), data["x"].dtype,
                     "where")


def test_big_unfiltered_chunks_are_read_raw_in_parallel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read-only files with big unfiltered chunks are reduced from raw chunk reads (no
    h5py read), in several tiles."""
    from hyperslab.nodes.leaves import reducible
    from hyperslab.storage.datasets import Dataset

    data = _values((64, 64, 64), ">f8", 5)  # 2 MiB, chunks of 256 KiB
    with hyperslab.open_file(tmp_path / "raw.h5", "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(32, 32, 32))
    monkeypatch.setattr(tiles, "TILE_BYTES", 1 << 18)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read through h5py")

    monkeypatch.setattr(reducible, "read_selection", refuse)
    # Whole chunks go straight into the tile buffers (preadv), never through a bytes copy.
    monkeypatch.setattr(Dataset, "read_raw_chunk", refuse)
    with hyperslab.open_file(tmp_path / "raw.h5") as f:
        for axis in (None, 0, 1, (0, 2)):
            _assert_same(f.root.a.sum(axis=axis), data.sum(axis=axis), data.dtype, f"{axis}")
        _assert_same(f.root.a.argmax(axis=2), data.argmax(axis=2), data.dtype, "argmax")


def test_sum_and_prod_take_initial_once(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``initial`` starts the result: it is not added (multiplied) once per tile."""
    monkeypatch.setattr(tiles, "TILE_BYTES", 1000)
    data = np.arange(1.0, 401.0).reshape(40, 10) / 100
    with hyperslab.open_file(tmp_path / "i.h5", "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 10))
    with hyperslab.open_file(tmp_path / "i.h5") as f:
        a = f.root.a
        for axis in (None, 0, 1):
            _assert_same(a.sum(axis=axis, initial=5), data.sum(axis=axis, initial=5),
                         data.dtype, f"sum axis={axis}")
            _assert_same(a.prod(axis=axis, initial=2), data.prod(axis=axis, initial=2),
                         data.dtype, f"prod axis={axis}")
            _assert_same(a.max(axis=axis, initial=3.5), data.max(axis=axis, initial=3.5),
                         data.dtype, f"max axis={axis}")


@pytest.mark.parametrize(("shape", "chunkshape"), [
    ((50, 40, 30), (1, 7, 30)),   # edge chunks along the middle axis, padded in the file
    ((50, 40, 30), (1, 1, 30)),
    ((37, 30), (5, 30)),
    ((1000,), (64,)),
])
def test_small_unfiltered_chunks_are_read_with_few_preadv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...],
        chunkshape: tuple[int, ...]) -> None:
    """Small unfiltered chunks of read-only files are read many at once with os.preadv
    (never through h5py, never one chunk at a time), and reduce as NumPy does."""
    import os

    from hyperslab.nodes.leaves import reducible

    data = _values(shape, "<f8", 11)
    with hyperslab.open_file(tmp_path / "s.h5", "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=chunkshape)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read through h5py")

    calls: list[int] = []
    real_preadv = os.preadv

    def counting_preadv(fd: int, buffers: Any, offset: int) -> int:
        calls.append(len(buffers))
        return real_preadv(fd, buffers, offset)

    monkeypatch.setattr(reducible, "read_selection", refuse)
    monkeypatch.setattr(os, "preadv", counting_preadv)
    with hyperslab.open_file(tmp_path / "s.h5") as f:
        for axis in (None, 0, -1):
            _assert_same(f.root.a.sum(axis=axis), data.sum(axis=axis), data.dtype,
                         f"sum axis={axis}")
        _assert_same(f.root.a.argmin(axis=0), data.argmin(axis=0), data.dtype, "argmin")
        _assert_same(f.root.a.std(axis=0), data.std(axis=0), data.dtype, "std")
    nchunks = math.prod(-(-n // c) for n, c in zip(shape, chunkshape, strict=True))
    assert sum(calls) >= nchunks  # every chunk was read ...
    assert len(calls) < 5 * nchunks / 2  # ... several per call (5 passes over the data)


def test_scattered_reads_fall_back_for_unwritten_chunks(tmp_path: Path) -> None:
    """A chunk never written reads as the fill value, through the general path."""
    data = np.arange(60.0).reshape(6, 10)
    with hyperslab.open_file(tmp_path / "u.h5", "w") as f:
        a = f.create_carray("/", "a", hyperslab.Float64Atom(dflt=-1.0), (6, 10),
                            chunkshape=(1, 10))
        a[:3] = data[:3]
        a[4:] = data[4:]
    want = data.copy()
    want[3] = -1.0
    with hyperslab.open_file(tmp_path / "u.h5") as f:
        engine = f.root.a._engine
        assert engine.read_plain_scattered((slice(0, 6), slice(0, 10))) is None
        np.testing.assert_array_equal(  # chunks all written: read in one go
            engine.read_plain_scattered((slice(4, 6), slice(0, 10))), data[4:])
        out = np.full((2, 5), np.nan)
        assert engine.read_plain_scattered((slice(0, 2), slice(5, 10)), out) is out
        np.testing.assert_array_equal(out, data[:2, 5:])
        _assert_same(f.root.a.sum(axis=0), want.sum(axis=0), want.dtype, "sum")
        _assert_same(f.root.a.min(), want.min(), want.dtype, "min")


def test_scattered_reads_refuse_bad_runs(tmp_path: Path) -> None:
    """Runs outside their chunk or the target, and writable files, are refused (the
    caller then reads chunk by chunk)."""
    data = np.arange(40.0).reshape(4, 10)
    with hyperslab.open_file(tmp_path / "b.h5", "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(1, 10))
        raw = f.root.a._dataset.raw_chunks()
        assert not raw.read_scattered([((0, 0), 0, 0, 80)], bytearray(80))  # writable
    with hyperslab.open_file(tmp_path / "b.h5") as f:
        raw = f.root.a._dataset.raw_chunks()
        target = bytearray(160)
        assert not raw.read_scattered([((0, 0), 8, 0, 80)], target)   # past the chunk
        assert not raw.read_scattered([((0, 0), 0, 100, 80)], target)  # past the target
        assert not raw.read_scattered([((9, 0), 0, 0, 80)], target)   # outside the grid
        assert raw.read_scattered([((1, 0), 0, 0, 80), ((0, 0), 0, 80, 80)], target)
        got = np.frombuffer(target, dtype=data.dtype).reshape(2, 10)
        np.testing.assert_array_equal(got, data[[1, 0]])


SPARSE_OPS = [("sum", {}), ("prod", {}), ("min", {}), ("max", {}), ("mean", {}),
              ("var", {}), ("std", {"ddof": 1}), ("any", {}), ("all", {}),
              ("argmin", {}), ("argmax", {})]


@pytest.mark.parametrize("fill", [0, 3])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
@pytest.mark.parametrize(("op", "kwargs"), SPARSE_OPS)
def test_reductions_of_a_mostly_unwritten_array_equal_numpys(
        tmp_path: Path, fill: int, axis: Any, op: str, kwargs: dict[str, Any]) -> None:
    """Chunks never written read as the fill value; slabs of them are reduced in closed
    form, and every result equals NumPy's on the array read whole."""
    import h5py

    if op.startswith("arg") and isinstance(axis, tuple):
        return  # NumPy's argmin/argmax take one axis
    path = tmp_path / "sparse.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_earray("/", "e", hyperslab.Int64Atom(dflt=fill), (0, 6, 5),
                        chunkshape=(4, 3, 5), filters=hyperslab.Filters(5, "blosc2"),
                        expectedrows=1000)
    rng = np.random.default_rng(3)
    with h5py.File(path, "a") as h5:
        e = h5["e"]
        e.resize((4 * 400, 6, 5))  # 400 chunk rows, 6 of them written
        for row in (0, 7, 8, 200, 397, 399):
            e[4 * row : 4 * row + 4] = rng.integers(-9, 9, (4, 6, 5))
        e[9:11, 3:, :] = 1  # part of a chunk row: a slab holding some written chunks
        whole = e[...]
    with hyperslab.open_file(path) as f:
        got = getattr(f.root.e, op)(axis=axis, **kwargs)
    want = getattr(np, op)(whole, axis=axis, **kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(("op", "kwargs"), SPARSE_OPS)
def test_column_reductions_of_a_mostly_unwritten_table_equal_numpys(
        tmp_path: Path, op: str, kwargs: dict[str, Any]) -> None:
    import h5py

    path = tmp_path / "sparse_table.h5"
    data = np.zeros(300, dtype=[("x", "<f8"), ("c", "<i4", (2,))])
    data["x"] = np.linspace(-3, 5, 300)
    data["c"] = np.arange(600).reshape(300, 2)
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", data, chunkshape=(100,),
                       filters=hyperslab.Filters(5, "blosc2"))
    with h5py.File(path, "a") as h5:
        h5["t"].resize((100 * 500,))
        h5["t"][30_000:30_300] = data
        whole = h5["t"][...]
    with hyperslab.open_file(path) as f:
        for column in ("x", "c"):
            got = getattr(f.root.t.cols._f_col(column), op)(**kwargs)
            np.testing.assert_allclose(got, getattr(np, op)(whole[column], **kwargs),
                                       rtol=1e-12)


def test_reductions_over_a_runaway_extent_take_the_time_of_the_written_chunks(
        tmp_path: Path) -> None:
    """2**40 rows over a few written chunks (a flipped byte in the extent): reductions
    answer at once, as NumPy would on the rows read whole (which no machine holds)."""
    import time

    import h5py

    path = tmp_path / "runaway.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_earray("/", "e", obj=np.arange(60.0).reshape(20, 3), chunkshape=(4, 3))
        f.create_table("/", "t", np.zeros(50, dtype=[("x", "<f8")]), chunkshape=(10,))
        f.root.t.modify_column(column=np.arange(50.0), colname="x")
    with h5py.File(path, "a") as h5:
        h5["e"].resize((2**40, 3))
        h5["t"].resize((2**40,))
    with hyperslab.open_file(path) as f:
        began = time.perf_counter()
        e, x = f.root.e, f.root.t.cols.x
        assert e.sum() == np.arange(60.0).sum() and e.argmax() == 59
        np.testing.assert_array_equal(e.max(axis=0), [57.0, 58.0, 59.0])
        assert x.sum() == np.arange(50.0).sum() and x.mean() == np.arange(50.0).sum() / 2**40
        assert time.perf_counter() - began < 10


def test_uniform_tiles_of_more_than_2_64_elements_wrap_as_numpy_integers_do() -> None:
    """Closed forms for counts past 2**64: integer sums and products wrap as repeated
    additions and products would (modulo 2**64), floats overflow to inf."""
    from hyperslab.compute.reductions import _uniform_fold

    count = 2**70 + 3
    tile = tiles.Uniform(np.int64(3), (count,))
    assert _uniform_fold("sum", np.add, tile, (0,), {})[0] == 9  # 3 * 3 modulo 2**64
    assert _uniform_fold("prod", np.multiply, tile, (0,), {})[0] == 27  # 3**(2**62) == 1
    even = tiles.Uniform(np.int64(2), (count,))
    assert _uniform_fold("prod", np.multiply, even, (0,), {})[0] == 0
    small = tiles.Uniform(np.int64(3), (5,))
    assert _uniform_fold("prod", np.multiply, small, (0,), {})[0] == 243
    with np.errstate(over="ignore"):
        huge = tiles.Uniform(np.float64(1.5), (count,))
        assert _uniform_fold("prod", np.multiply, huge, (0,), {})[0] == np.inf


def test_half_float_products_of_one_element_tiles_do_not_overflow_early(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Partials of float16 tiles combine in single precision, as NumPy's half loops
    compute: one-element tiles multiplied in half precision overflowed to inf where
    NumPy's product is 5.475e4 (a case hypothesis found)."""
    data = _values((1, 3, 3, 6), "<f2", 0)
    with hyperslab.open_file(tmp_path / "h.h5", "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(1, 1, 1, 1))
    monkeypatch.setattr(tiles, "TILE_BYTES", 1)
    with hyperslab.open_file(tmp_path / "h.h5") as f, np.errstate(all="ignore"):
        for op in ("prod", "sum"):
            _assert_same(getattr(f.root.a, op)(axis=(2, 3)),
                         getattr(np, op)(data, axis=(2, 3)), data.dtype, op)


@pytest.mark.parametrize("dtype", ["<f8", "<i2"])
def test_reductions_of_hdf5plugins_file_decode_its_blocks_one_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """A file of h5py + hdf5plugin, whose filter picks blocks that are not the chunks' C
    order ((32, 32, 50) blocks of (50, 50, 50) chunks, padded to (64, 64, 50)): reduced
    from chunks decoded a block at a time in the pool's threads (not through h5py, not
    decoded whole and reordered), equal to NumPy's reductions of h5py's read."""
    h5py = pytest.importorskip("h5py")
    hdf5plugin = pytest.importorskip("hdf5plugin")
    from hyperslab.codecs import cframe
    from hyperslab.nodes.leaves import reducible

    # Integers (as floats too): every summation order gives the same sums.
    data = (np.arange(100 * 50 * 60) % 1000 - 300).astype(dtype).reshape(100, 50, 60)
    with h5py.File(tmp_path / "plugin.h5", "w") as f:
        f.create_dataset("a", data=data, chunks=(50, 50, 50),
                         **hdf5plugin.Blosc2(cname="lz4", filters=1))
    with h5py.File(tmp_path / "plugin.h5", "r") as f:
        read = f["a"][...]  # the filter's reading of its own file
    np.testing.assert_array_equal(read, data)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read through h5py, or decoded whole and reordered")

    monkeypatch.setattr(reducible, "read_selection", refuse)
    monkeypatch.setattr(cframe, "from_block_order", refuse)
    monkeypatch.setattr(tiles, "TILE_BYTES", 1 << 20)  # several tiles, one chunk each
    with hyperslab.open_file(tmp_path / "plugin.h5") as f:
        node = f.root.a
        for axis in (None, 0, 1, 2, (0, 2)):
            for op in ("sum", "max"):
                got, want = getattr(node, op)(axis=axis), getattr(np, op)(read, axis=axis)
                assert np.asarray(got).dtype == np.asarray(want).dtype
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {axis}")
        np.testing.assert_array_equal(node.argmin(axis=1), read.argmin(axis=1))
        np.testing.assert_allclose(node.mean(axis=0), read.mean(axis=0), rtol=1e-12)


@pytest.mark.parametrize("value", [np.float64(3.5), np.int32(-7), np.bool_(True),
                                   np.float32(np.nan)])
def test_reductions_of_a_scalar_array_are_numpys(tmp_path: Path, value: Any) -> None:
    """A 0-d Array (and an expression of constants) reduces as NumPy reduces the value:
    the fold's 0-d result was indexed to a copy of its value, which it could not add into
    (TypeError)."""
    with hyperslab.open_file(tmp_path / "s.h5", "w") as f:
        node = f.create_array("/", "s", obj=value)
        for op in ("sum", "prod", "mean", "max", "min", "std", "var", "any", "all",
                   "argmin", "argmax"):
            got, want = getattr(node, op)(), getattr(np, op)(value)
            assert np.asarray(got).dtype == np.asarray(want).dtype, op
            np.testing.assert_array_equal(got, want, err_msg=op)
    constant = hyperslab.Expr("arccos(0.5) * 2", {})
    for op in ("sum", "prod", "max"):
        assert getattr(constant, op)() == getattr(np, op)(np.arccos(0.5) * 2)
