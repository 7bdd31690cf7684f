"""The out-of-core sort that builds column indexes (hyperslab.nodes.indexes.sort), checked
against NumPy's stable argsort."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hyperslab.nodes.indexes.sort import (
    progress_total,
    run_rows_for,
    sorted_pieces,
    stable_argsort,
)

SORT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?", "S3"]


def _column(dtype: str) -> st.SearchStrategy[np.ndarray]:
    """Short columns with many ties (and NaNs, infinities, -0.0 for floats)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        elements: st.SearchStrategy[Any] = st.sampled_from(
            [0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 1e-300, 3.0, 65504.0]
        ) | st.floats(width=8 * dt.itemsize, allow_nan=True)
    elif dt.kind == "S":
        elements = st.binary(max_size=3).map(lambda b: b.rstrip(b"\0"))
    else:
        elements = hnp.from_dtype(dt)
    return hnp.arrays(dt, st.integers(0, 60), elements=elements)


def _sorted_all(column: np.ndarray, **options: Any) -> tuple[np.ndarray, np.ndarray]:
    pieces = list(sorted_pieces(lambda lo, hi: column[lo:hi], len(column), **options))
    if not pieces:
        return column[:0], np.empty(0, dtype=np.int64)
    return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])


# ---------------------------------------------------------------------- the sort
@settings(max_examples=120, deadline=None)
@given(dtype=st.sampled_from(SORT_DTYPES), data=st.data())
def test_sorted_pieces_is_a_stable_argsort(dtype: str, data: st.DataObject) -> None:
    column = data.draw(_column(dtype))
    run_rows = data.draw(st.integers(1, 70))
    piece_rows = data.draw(st.integers(1, 70))
    values, rows = _sorted_all(column, run_rows=run_rows, piece_rows=piece_rows)
    expected = np.argsort(column, kind="stable")
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(rows, expected)
    assert values.dtype == column.dtype
    np.testing.assert_array_equal(values, column[expected])  # NaNs compare equal here


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from(SORT_DTYPES), data=st.data())
def test_stable_argsort_equals_numpy(dtype: str, data: st.DataObject) -> None:
    column = data.draw(_column(dtype))
    np.testing.assert_array_equal(stable_argsort(column),
                                  np.argsort(column, kind="stable"))


@pytest.mark.parametrize("name", ["wide", "colliding", "narrow", "ints", "sorted", "nan"])
def test_stable_argsort_on_bigger_arrays(name: str) -> None:
    """The packed-key paths: collisions of shortened keys, re-sorted groups, presorted."""
    rng = np.random.default_rng(7)
    n = 50_000
    column = {
        "wide": rng.normal(size=n) * 1e300,
        "colliding": np.concatenate([1.0 + rng.integers(0, 50, n) * 2.2e-16, [0.0, np.inf]]),
        "narrow": rng.integers(0, 5, n).astype("f8"),
        "ints": np.concatenate([rng.integers(-(2**63), 2**63 - 1, n // 2),
                                rng.integers(0, 100, n // 2)]),
        "sorted": np.arange(n, dtype="i8"),
        "nan": np.where(rng.random(n) < 0.3, np.nan, rng.random(n).astype("f4")),
    }[name]
    np.testing.assert_array_equal(stable_argsort(column), np.argsort(column, kind="stable"))


@pytest.mark.parametrize("nrows", [0, 1])
@pytest.mark.parametrize("run_rows", [1, 5])
def test_sorted_pieces_tiny(nrows: int, run_rows: int) -> None:
    column = np.array([2.5])[:nrows]
    values, rows = _sorted_all(column, run_rows=run_rows)
    assert rows.tolist() == list(range(nrows))
    assert values.tolist() == column.tolist()


def test_sorted_pieces_many_runs_and_progress(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    column = rng.integers(0, 100, 5000).astype("f8")
    column[rng.integers(0, 5000, 300)] = np.nan
    spill = tmp_path / "spill"
    spill.mkdir()
    seen: list[int] = []
    _, rows = _sorted_all(column, run_rows=450, piece_rows=256, tmp_dir=str(spill),
                          progress=seen.append)
    np.testing.assert_array_equal(rows, np.argsort(column, kind="stable"))
    assert seen == sorted(seen) and seen[-1] == progress_total(5000, 450) == 10000
    assert os.listdir(spill) == []


def test_sorted_pieces_spills_and_cleans_up_when_abandoned(tmp_path: Path) -> None:
    column = np.arange(1000, 0, -1, dtype="i4")
    pieces = sorted_pieces(lambda lo, hi: column[lo:hi], 1000, run_rows=100,
                           piece_rows=10, tmp_dir=str(tmp_path))
    first = next(pieces)
    assert first[0].tolist() == list(range(1, 11))
    assert len(os.listdir(tmp_path)) == 1  # the runs' directory
    assert len(os.listdir(tmp_path / os.listdir(tmp_path)[0])) == 20  # 10 runs x 2 files
    pieces.close()
    assert os.listdir(tmp_path) == []


def test_sorted_pieces_cleans_up_on_error(tmp_path: Path) -> None:
    def read(lo: int, hi: int) -> np.ndarray:
        if lo >= 300:
            raise OSError(f"cannot read rows {lo}..{hi}")
        return np.zeros(hi - lo)

    with pytest.raises(OSError, match=r"cannot read rows 300\.\.400"):
        list(sorted_pieces(read, 1000, run_rows=100, tmp_dir=str(tmp_path)))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"nrows": -1}, ValueError, "nrows must be at least 0, not -1"),
    ({"run_rows": 0}, ValueError, "run_rows must be at least 1, not 0"),
    ({"piece_rows": True}, TypeError, "piece_rows must be an integer, not True"),
    ({"tmp_dir": "/no/such/dir"}, ValueError, "'/no/such/dir'"),
])
def test_sorted_pieces_rejects_bad_arguments(kwargs: dict[str, Any], error: type,
                                             match: str) -> None:
    options: dict[str, Any] = {"nrows": 10} | kwargs
    nrows = options.pop("nrows")
    with pytest.raises(error, match=match):
        sorted_pieces(lambda lo, hi: np.zeros(hi - lo), nrows, **options)


def test_sorted_pieces_rejects_a_bad_read() -> None:
    with pytest.raises(ValueError, match=r"read\(0, 10\) must return a 1-D array of 10"):
        list(sorted_pieces(lambda lo, hi: np.zeros(3), 10))
    with pytest.raises(TypeError, match="complex128"):
        list(sorted_pieces(lambda lo, hi: np.zeros(hi - lo, complex), 10))


def test_run_rows_scale_with_itemsize() -> None:
    assert run_rows_for(np.dtype("S1000")) < run_rows_for(np.dtype("f8"))
    assert run_rows_for(np.dtype("f8"), budget=1) == 1024
