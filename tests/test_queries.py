"""Queries: where, read_where, get_where_list, append_where, will_query_use_indexing.

Two halves:

* unit tests of :mod:`hyperslab.compute.queries` over ``FakeTable`` (an in-memory table
  implementing the protocol, from ``test_conditions``), with NumPy as the oracle;
* integration tests through the real API (``open_file(...).create_table(...)``), with NumPy
  and PyTables as oracles, including hypothesis-generated tables and conditions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numexpr as ne
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.compute import queries
from hyperslab.errors import ClosedFileError, ConditionTypeError, FileModeError
from hyperslab.nodes.tables import recordio as tableio
from test_conditions import FakeFile, FakeTable, make_data

# ============================================================================ fake table


def fake_where(table: Any, condition: str, condvars: Any = None, **kw: Any) -> Any:
    """Stands for ``Table.where``: the user's frame is one level up."""
    return queries.where(table, condition, condvars, depth=1, **kw)


@pytest.fixture
def fake() -> FakeTable:
    return FakeTable(make_data(40), block=6)


def coords_of(rows: Iterator[Any]) -> list[int]:
    return [row.nrow for row in rows]


def test_where_rows_and_values(fake: FakeTable) -> None:
    rows = list(fake_where(fake, "(f8 > 10) & ~b", {}))
    expected = np.flatnonzero((fake.data["f8"] > 10) & ~fake.data["b"])
    assert [r.nrow for r in rows] == list(expected)
    # rows keep their own values although the fake reuses (and poisons) its buffer
    assert [r["f8"] for r in rows] == list(fake.data["f8"][expected])
    assert [r["nested/x"] for r in rows] == list(fake.data["nested"]["x"][expected])


def test_where_scans_the_range_once(fake: FakeTable) -> None:
    list(fake_where(fake, "(f8 > 10) & (i1 < 0) | b", {}))
    assert fake.calls == [(0, 40, 1, "map")]


def test_where_frame_variables(fake: FakeTable) -> None:
    limit = 30.0
    assert coords_of(fake_where(fake, "f8 > limit")) == list(
        np.flatnonzero(fake.data["f8"] > limit))
    # condvars given: the frame is not searched
    with pytest.raises(NameError, match="``limit``"):
        fake_where(fake, "f8 > limit", {})
    # condvars override the frame and the columns
    assert coords_of(fake_where(fake, "f8 > limit", {"limit": 50.0})) == [34, 35, 36, 37,
                                                                          38, 39]
    # a column wins over the frame
    f8 = -1000.0  # noqa: F841
    assert len(coords_of(fake_where(fake, "f8 > 58"))) == 1


def test_where_validates_before_returning(fake: FakeTable) -> None:
    with pytest.raises(NameError):
        fake_where(fake, "nope > 1", {})
    with pytest.raises(ConditionTypeError):
        fake_where(fake, "s > 1", {})
    with pytest.raises(TypeError, match="boolean"):
        fake_where(fake, "f8 + 1", {})
    assert fake.calls == []  # nothing was read
    # even on an empty range (PyTables skips the checks there)
    with pytest.raises(NameError):
        fake_where(fake, "nope > 1", {}, start=3, stop=3)


@pytest.mark.parametrize(("window", "rows"), [
    ({}, range(40)),
    ({"start": 5}, [5]),                 # start alone: that row only (PyTables)
    ({"start": -1}, [39]),
    ({"start": -3, "stop": None, "step": 1}, range(37, 40)),
    ({"start": 3, "stop": 30, "step": 4}, range(3, 30, 4)),
    ({"stop": 10}, range(10)),
    ({"start": -10, "stop": -2}, range(30, 38)),
    ({"start": 30, "stop": 10}, []),
    ({"step": 7}, range(0, 40, 7)),
    ({"start": 100, "stop": 200}, []),
])
def test_where_windows(fake: FakeTable, window: dict[str, Any], rows: Any) -> None:
    assert coords_of(fake_where(fake, "i1 > -100", {}, **window)) == list(rows)
    got = queries.get_where_list(fake, "f8 >= 9", {}, depth=0, **window)
    assert list(got) == [r for r in rows if fake.data["f8"][r] >= 9]


@pytest.mark.parametrize(("window", "error", "match"), [
    ({"start": 40}, IndexError, r"start of range \(40\)"),
    ({"step": -1}, ValueError, "step cannot be negative"),
    ({"start": 30, "stop": 2, "step": -2}, ValueError, "negative"),
    ({"step": 0}, ValueError, "zero"),
])
def test_where_bad_windows(fake: FakeTable, window: dict[str, Any], error: type[Exception],
                           match: str) -> None:
    with pytest.raises(error, match=match):
        fake_where(fake, "i1 > 0", {}, **window)


def test_read_where(fake: FakeTable) -> None:
    data = fake.data
    mask = (data["i1"] % 4 == 0) | (data["s"] == b"s2")
    got = queries.read_where(fake, "(i1 % 4 == 0) | (s == 's2')", {}, depth=0)
    np.testing.assert_array_equal(got, data[mask])
    assert got.dtype == data.dtype
    for field in ["f8", "m", "nested", "nested/deep/y", "s"]:
        got = queries.read_where(fake, "b", {}, field=field, depth=0)
        path = field.split("/")
        expected = data[data["b"]]
        for part in path:
            expected = expected[part]
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype and got.shape == expected.shape


def test_read_where_empty_and_bad_field(fake: FakeTable) -> None:
    got = queries.read_where(fake, "f8 < 0", {}, depth=0)
    assert got.shape == (0,) and got.dtype == fake.dtype
    got = queries.read_where(fake, "f8 < 0", {}, field="m", depth=0)
    assert got.shape == (0, 2) and got.dtype == np.dtype("<i4")
    with pytest.raises(KeyError, match="does not have a column named ``nope``"):
        queries.read_where(fake, "f8 > 0", {}, field="nope", depth=0)


def test_get_where_list(fake: FakeTable) -> None:
    got = queries.get_where_list(fake, "contains(s, b'3')", {}, sort=True, depth=0)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.flatnonzero(fake.data["s"] == b"s3"))
    empty = queries.get_where_list(fake, "f8 < 0", {}, depth=0)
    assert empty.dtype == np.int64 and empty.shape == (0,)


@pytest.mark.parametrize("selectivity", [0.0, 0.001, 0.3, 0.97, 1.0])
@pytest.mark.parametrize("step", [1, 3])
def test_gathering_many_blocks(selectivity: float, step: int) -> None:
    rng = np.random.default_rng(7)
    data = np.zeros(5000, [("v", "<f8"), ("k", "<i4")])
    data["v"] = rng.random(5000)
    data["k"] = np.arange(5000)
    fake = FakeTable(data, block=97)
    cond = "v < sel" if selectivity < 1 else "v <= sel"
    got = queries.read_where(fake, cond, {"sel": selectivity}, step=step, depth=0)
    window = data[::step]
    np.testing.assert_array_equal(got, window[window["v"] < selectivity] if selectivity < 1
                                  else window)
    coords = queries.get_where_list(fake, cond, {"sel": selectivity}, step=step, depth=0)
    np.testing.assert_array_equal(coords, got["k"])


def test_append_where_same_dtype(fake: FakeTable) -> None:
    dest = FakeTable(make_data(3), path="/dest")
    n = queries.append_where(fake, dest, "f8 > 45", {}, depth=0)
    expected = fake.data[fake.data["f8"] > 45]
    assert n == len(expected) == 9
    np.testing.assert_array_equal(dest.data[3:], expected)
    assert dest.flushes == 1


def test_append_where_converts_by_column_name(fake: FakeTable) -> None:
    src = np.zeros(6, [("a", "<i4"), ("n", [("x", "<f8")])])
    src["a"] = np.arange(6)
    src["n"]["x"] = np.arange(6) * 1.5
    table = FakeTable(src)
    dst_dtype = np.dtype([("z", "S2"), ("n", [("x", "<i2")]), ("a", "<f4")])
    defaults = np.array((b"zz", (-1,), -2.0), dst_dtype)
    dest = FakeTable(np.zeros(0, dst_dtype), path="/dest", defaults=defaults)
    assert queries.append_where(table, dest, "a >= 3", {}, depth=0) == 3
    assert dest.data.tolist() == [(b"zz", (4,), 3.0), (b"zz", (6,), 4.0), (b"zz", (7,), 5.0)]


def test_append_where_errors_before_anything(fake: FakeTable) -> None:
    dest = FakeTable(np.zeros(0, [("f8", "<f8")]), path="/dest")
    with pytest.raises(KeyError, match="does not have a column named ``i1``"):
        queries.append_where(fake, dest, "f8 > 1", {}, depth=0)
    readonly = FakeTable(make_data(0), path="/ro", file=FakeFile(writable=False))
    with pytest.raises(FileModeError):
        queries.append_where(fake, readonly, "f8 > 1", {}, depth=0)
    with pytest.raises(NameError):
        queries.append_where(fake, FakeTable(make_data(0)), "zz > 1", {}, depth=0)
    assert fake.calls == []


def test_append_where_without_condition_and_to_itself(fake: FakeTable) -> None:
    dest = FakeTable(make_data(0), path="/dest")
    assert queries.append_where(fake, dest, None, start=30, stop=20, step=-3, depth=0) == 4
    np.testing.assert_array_equal(dest.data, fake.data[30:20:-3])
    before = fake.data.copy()
    assert queries.append_where(fake, fake, "f8 < 6", {}, depth=0) == 4
    np.testing.assert_array_equal(fake.data, np.concatenate([before, before[:4]]))


def test_append_where_frame_variables(fake: FakeTable) -> None:
    dest = FakeTable(make_data(0), path="/dest")
    cut = 55.0
    assert queries.append_where(fake, dest, "f8 > cut", depth=0) == 3
    assert cut == 55.0


def test_will_query_use_indexing(fake: FakeTable) -> None:
    limit = 3  # noqa: F841
    assert queries.will_query_use_indexing(fake, "f8 > limit", depth=0) == frozenset()
    with pytest.raises(NameError):
        queries.will_query_use_indexing(fake, "f8 > nowhere", depth=0)


# ---------------------------------------------------------------- hypothesis on the fake

NUMERIC = {"i1": "i1", "u2": "u2", "i8": "i8", "f8": "f8", "f2": "f2"}
FUNCS: dict[str, Callable[..., Any]] = {
    "sin": np.sin, "cos": np.cos, "where": np.where, "abs": np.abs, "sqrt": np.sqrt,
    "log": np.log, "exp": np.exp,
    "contains": lambda s, sub: np.char.find(s, sub) >= 0,
}


def comparisons() -> st.SearchStrategy[str]:
    """Comparisons whose NumPy evaluation matches numexpr's exactly."""
    numeric = st.builds(lambda c, op, v: f"({c} {op} {v})", st.sampled_from(sorted(NUMERIC)),
                        st.sampled_from(["<", "<=", ">", ">=", "==", "!="]),
                        st.integers(-20, 40))
    floaty = st.builds(lambda fn, op, v: f"({fn}(f8) {op} {v})",
                       st.sampled_from(["sin", "cos", "sqrt"]), st.sampled_from(["<", ">"]),
                       st.floats(-1, 3, allow_nan=False).map(lambda x: round(x, 3)))
    strings = st.builds(lambda op, v: f"(s {op} {v!r})", st.sampled_from(["<", ">=", "==",
                                                                          "!="]),
                        # not b"": numexpr orders it after every string (as PyTables)
                        st.sampled_from([b"s1", b"s3", b"s", b"t"]))
    contains = st.sampled_from([b"1", b"s", b"x", b""]).map(lambda v: f"contains(s, {v!r})")
    mixed = st.builds(lambda a, b: f"(where(b, f8, i1) > {a}) | (f8 * 2 - i8 < {b})",
                      st.integers(-5, 30), st.integers(-5, 30))
    return st.one_of(numeric, floaty, strings, contains, mixed, st.just("b"))


def conditions_strategy() -> st.SearchStrategy[str]:
    return st.recursive(
        comparisons(),
        lambda inner: st.one_of(
            st.builds(lambda a, b: f"({a} & {b})", inner, inner),
            st.builds(lambda a, b: f"({a} | {b})", inner, inner),
            inner.map(lambda a: f"~{a}"),
        ),
        max_leaves=5,
    )


def numpy_eval(condition: str, data: np.ndarray, extra: dict[str, Any] | None = None) -> Any:
    names = {name: data[name] for name in data.dtype.names or ()}
    with np.errstate(all="ignore"):
        return np.asarray(eval(condition, {**FUNCS, **(extra or {})}, names),
                          dtype=bool) & np.ones(len(data), bool)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 60),
    block=st.integers(1, 17),
    condition=conditions_strategy(),
    window=st.tuples(st.none() | st.integers(-70, 70), st.none() | st.integers(-70, 70),
                     st.none() | st.integers(1, 9)),
)
def test_fake_queries_match_numpy(n: int, block: int, condition: str,
                                  window: tuple[Any, Any, Any]) -> None:
    data = make_data(n)
    fake = FakeTable(data, block=block)
    start, stop, step = window
    if start is not None and stop is None and step is None:  # that row only
        if 0 < n <= start:
            with pytest.raises(IndexError):
                queries.get_where_list(fake, condition, {}, start=start, depth=0)
            return
        stop, step = (start + 1 if start != -1 else None), 1
    selected = np.arange(n)[slice(start, stop, step)]
    expected = selected[numpy_eval(condition, data[selected])]
    got = queries.get_where_list(fake, condition, {}, start=start, stop=stop, step=step,
                                 depth=0)
    np.testing.assert_array_equal(got, expected)
    rows = queries.read_where(fake, condition, {}, start=start, stop=stop, step=step, depth=0)
    np.testing.assert_array_equal(rows, data[expected])
    assert coords_of(fake_where(fake, condition, {}, start=start, stop=stop,
                                step=step)) == list(expected)


# ============================================================================ real API

RECORD = np.dtype([
    ("col1", "<i4"), ("col2", "<i4"), ("col3", "<f8"), ("col4", "<f8"), ("i2", "<i2"),
    ("u1", "u1"), ("f4", "<f4"), ("flag", "?"), ("name", "S4"),
])


def spec_records(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.zeros(n, RECORD)
    data["col1"] = rng.integers(-100, 100, n)
    data["col2"] = np.arange(n)
    data["col3"] = rng.normal(size=n)
    data["col4"] = rng.random(n) * 10
    data["i2"] = rng.integers(-300, 300, n)
    data["u1"] = rng.integers(0, 256, n)
    data["f4"] = rng.normal(size=n).astype("f4")
    data["flag"] = rng.random(n) < 0.5
    data["name"] = [b"n%d" % (i % 37) for i in range(n)]
    return data


def make_tables(tmp_path: Path, data: np.ndarray, chunkshape: int = 50,
                name: str = "t", filters: hyperslab.Filters | None = None) -> tuple[Path, Path]:
    """The same table written by hyperslab (with ``filters``) and by PyTables (the oracle,
    uncompressed)."""
    ours, theirs = tmp_path / f"{name}_hs.h5", tmp_path / f"{name}_pt.h5"
    with hyperslab.open_file(ours, "w") as f:
        f.create_table("/", "t", obj=data, chunkshape=(chunkshape,), filters=filters)
    with tables.open_file(theirs, "w") as f:
        f.create_table("/", "t", obj=data, chunkshape=(chunkshape,))
    return ours, theirs


@pytest.fixture(scope="module")
def spec_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, np.ndarray]:
    data = spec_records(1000)
    ours, theirs = make_tables(tmp_path_factory.mktemp("queries"), data)
    return ours, theirs, data


SPEC_CONDITIONS = [
    "(col1 > 0) & (col2 <= 500)",
    "((col1 > 0) & (col2 <= 300)) | (col3 > 1.5) & ~flag",
    "(sin(col3) > 0.5) | (log(col4 + 1) < 0.3)",
    "where(flag, col3, -col3) > 1",
    "contains(name, b'n1')",
    "name >= b'n30'",
    "name == 'n5'",
    "(col1 * 2 + i2 > 100) & (u1 < 128)",
    "(col1 / 3 > 10) | (col1 % 7 == 1)",  # integer division, as numexpr/PyTables
    "f4 ** 2 > 1.5",
    "abs(i2 - col1) < 20",
    "flag",
    "~flag & (col4 > 9.5)",
]


@pytest.mark.parametrize("condition", SPEC_CONDITIONS)
@pytest.mark.parametrize("window", [(None, None, None), (100, 900, 3), (None, 10, None),
                                    (-50, None, 1), (5, None, None)])
def test_real_queries_match_pytables(spec_files: tuple[Path, Path, np.ndarray],
                                     condition: str, window: tuple[Any, Any, Any]) -> None:
    ours, theirs, data = spec_files
    start, stop, step = window
    with tables.open_file(theirs) as pt, hyperslab.open_file(ours) as hs:
        expected = pt.root.t.get_where_list(condition, {}, start=start, stop=stop, step=step)
        t = hs.root.t
        got = t.get_where_list(condition, {}, start=start, stop=stop, step=step)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(t.read_where(condition, {}, start=start, stop=stop,
                                                   step=step), data[expected])
        np.testing.assert_array_equal(
            t.read_where(condition, {}, field="col2", start=start, stop=stop, step=step),
            data["col2"][expected])
        rows = [(r.nrow, r["col3"]) for r in t.where(condition, {}, start, stop, step)]
        assert rows == [(int(i), data["col3"][i]) for i in expected]


def test_real_where_caller_frame_and_mixed_filter(
        spec_files: tuple[Path, Path, np.ndarray]) -> None:
    ours, _, data = spec_files
    lo, hi = -20, 40
    with hyperslab.open_file(ours) as f:
        t = f.root.t
        # the spec's mixed query: in-kernel condition + a Python filter on the rows
        got = [r["col2"] for r in t.where("(col1 > lo) & (col1 < hi)") if r["col4"] > 5]
        mask = (data["col1"] > lo) & (data["col1"] < hi) & (data["col4"] > 5)
        assert got == list(data["col2"][mask])
        np.testing.assert_array_equal(t.read_where("col1 > hi"), data[data["col1"] > hi])
        np.testing.assert_array_equal(t.get_where_list("col3 < lo / 10"),
                                      np.flatnonzero(data["col3"] < lo / 10))
        assert t.will_query_use_indexing("col1 > hi") == frozenset()
        col = t.cols.col4
        np.testing.assert_array_equal(t.get_where_list("c > 9", {"c": col}),
                                      np.flatnonzero(data["col4"] > 9))


def inner_function_uses_its_own_frame(t: Any) -> Any:
    lim = 95  # noqa: F841 - read by the query through this frame
    return t.get_where_list("col1 > lim")


def test_real_frame_is_the_direct_caller(spec_files: tuple[Path, Path, np.ndarray]) -> None:
    ours, _, data = spec_files
    lim = -1000  # noqa: F841 - must not be seen by the inner function
    with hyperslab.open_file(ours) as f:
        got = inner_function_uses_its_own_frame(f.root.t)
    np.testing.assert_array_equal(got, np.flatnonzero(data["col1"] > 95))


@pytest.mark.parametrize(("condition", "condvars", "error"), [
    ("nope > 1", {}, NameError),
    ("col1 + 1", {}, TypeError),
    ("name > 1", {}, NotImplementedError),
    ("col1 > v", {"v": None}, TypeError),
    ("(col1 > 1) and flag", {}, TypeError),
    ("3 > 2", {}, ValueError),
    ("col1 > 0", {"col1": 4}, ValueError),  # no column left in the condition
])
def test_real_errors_as_pytables(spec_files: tuple[Path, Path, np.ndarray], condition: str,
                                 condvars: dict[str, Any], error: type[Exception]) -> None:
    ours, theirs, _ = spec_files
    with tables.open_file(theirs) as pt, pytest.raises(error):
        pt.root.t.where(condition, condvars)
    with hyperslab.open_file(ours) as hs, pytest.raises(error):
        hs.root.t.where(condition, condvars)


def test_real_column_errors(tmp_path: Path) -> None:
    class Nested(hyperslab.IsDescription):
        x = hyperslab.Int32Col()

    class Rec(hyperslab.IsDescription):
        a = hyperslab.Int32Col(pos=0)
        m = hyperslab.Float64Col(shape=(2,), pos=1)
        big = hyperslab.UInt64Col(pos=2)
        nested = Nested()

    with hyperslab.open_file(tmp_path / "c.h5", "w") as f:
        t = f.create_table("/", "t", Rec)
        other = f.create_table("/", "o", Rec)
        t.append([(i, (i, -i), i, (i,)) for i in range(10)])
        with pytest.raises(NotImplementedError, match="multidimensional"):
            t.where("m > 0")
        with pytest.raises(NotImplementedError, match="64-bit unsigned"):
            t.read_where("big > 0")
        with pytest.raises(TypeError, match="nested column"):
            t.read_where("nested > 0")
        with pytest.raises(ValueError, match="not part of table"):
            t.read_where("c > 0", {"c": other.cols.a})
        x = t.cols._f_col("nested/x")
        np.testing.assert_array_equal(t.get_where_list("x >= 7", {"x": x}), [7, 8, 9])
        np.testing.assert_array_equal(t.read_where("a < 2", field="nested/x"), [0, 1])


def test_real_append_where(tmp_path: Path) -> None:
    data = spec_records(500, seed=3)
    with hyperslab.open_file(tmp_path / "a.h5", "w") as f:
        src = f.create_table("/", "src", obj=data, chunkshape=(64,))
        dst = f.create_table("/", "dst", RECORD)
        n = src.append_where(dst, "(col1 > 50) | flag", start=10, stop=400)
        window = data[10:400]
        expected = window[(window["col1"] > 50) | window["flag"]]
        assert n == len(expected) == dst.nrows
        np.testing.assert_array_equal(dst.read(), expected)
    with tables.open_file(tmp_path / "a.h5") as pt:
        np.testing.assert_array_equal(pt.root.dst.read(), expected)


def test_real_read_only_and_empty(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "e.h5", "w") as f:
        t = f.create_table("/", "t", RECORD)
        assert t.read_where("col1 > 0").shape == (0,)
        assert list(t.where("col1 > 0")) == []
        assert t.get_where_list("col1 > 0").dtype == np.int64
        f.create_table("/", "d", RECORD)
    with hyperslab.open_file(tmp_path / "e.h5", "r") as f, pytest.raises(FileModeError):
        f.root.t.append_where(f.root.d, "col1 > 0")


def _pt_where_list(path: Path, condition: str, window: tuple[Any, Any, Any]) -> Any:
    with tables.open_file(path) as pt:
        start, stop, step = window
        return pt.root.t.get_where_list(condition, {}, start=start, stop=stop, step=step)


RICH_FUNCS = ["sin", "cos", "exp", "sqrt", "abs", "log"]


@st.composite
def rich_conditions(draw: st.DrawFn) -> str:
    """Conditions with arithmetic over mixed types, evaluated by PyTables as the oracle."""
    columns = st.sampled_from(["col1", "col2", "col3", "col4", "i2", "u1", "f4"])

    def number(depth: int, column: bool = False) -> str:
        """A numeric expression; with ``column``, one that reads a column."""
        choice = draw(st.integers(0, 4 if depth < 2 else 1))
        if choice == 0 or (choice == 1 and column):
            return draw(columns)
        if choice == 1:
            return str(draw(st.integers(-50, 50) | st.floats(-5, 5).map(lambda x: round(x, 2))))
        if choice == 2:
            op = draw(st.sampled_from(["+", "-", "*"]))
            return f"({number(depth + 1, column)} {op} {number(depth + 1)})"
        if choice == 3:
            fn = draw(st.sampled_from(RICH_FUNCS))
            inner = number(depth + 1, column)
            return f"{fn}(abs({inner}) + 1.0)" if fn in ("sqrt", "log") else f"{fn}({inner})"
        return f"where(flag, {number(depth + 1)}, {number(depth + 1)})"

    def boolean(depth: int) -> str:
        choice = draw(st.integers(0, 5 if depth < 2 else 2))
        if choice == 0:
            op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
            return f"({number(0, column=True)} {op} {number(0)})"
        if choice == 1:
            lit = draw(st.sampled_from([b"n1", b"n22", b"n", b"m"]))
            op = draw(st.sampled_from(["<", ">=", "=="]))
            return draw(st.sampled_from([f"(name {op} {lit!r})", f"contains(name, {lit!r})"]))
        if choice == 2:
            return "flag"
        if choice == 3:
            return f"~{boolean(depth + 1)}"
        op = draw(st.sampled_from(["&", "|"]))
        return f"({boolean(depth + 1)} {op} {boolean(depth + 1)})"

    return boolean(0)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(st.tuples(
        st.integers(-100, 100), st.integers(-10**6, 10**6), st.floats(-1e3, 1e3),
        st.floats(0, 10), st.integers(-2**15, 2**15 - 1), st.integers(0, 255),
        st.floats(-10, 10, width=32), st.booleans(),
        st.binary(max_size=4).filter(lambda b: not b.endswith(b"\0")),
    ), max_size=300).map(lambda rows: np.array(rows, dtype=RECORD)),
    condition=rich_conditions(),
    window=st.tuples(st.none() | st.integers(-320, 320), st.none() | st.integers(-320, 320),
                     st.none() | st.integers(1, 40)),
    chunk=st.integers(1, 64),
    block_bytes=st.sampled_from([tableio.BLOCK_BYTES, 1]),
    complib=st.sampled_from([None, "blosc2:lz4"]),
)
def test_real_generated_queries_match_pytables(tmp_path_factory: pytest.TempPathFactory,
                                               data: np.ndarray, condition: str,
                                               window: tuple[Any, Any, Any], chunk: int,
                                               block_bytes: int, complib: str | None) -> None:
    """``block_bytes=1`` makes every chunk a block: the scan then runs in the pool's
    threads, several blocks at a time."""
    filters = None if complib is None else hyperslab.Filters(5, complib, shuffle=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tableio, "BLOCK_BYTES", block_bytes)
        _check_generated_query(tmp_path_factory, data, condition, window, chunk, filters)


def _check_generated_query(tmp_path_factory: pytest.TempPathFactory, data: np.ndarray,
                           condition: str, window: tuple[Any, Any, Any], chunk: int,
                           filters: hyperslab.Filters | None) -> None:
    folder = tmp_path_factory.mktemp("gen")
    ours, theirs = make_tables(folder, data, chunkshape=chunk, filters=filters)
    start, stop, step = window
    try:
        with np.errstate(all="ignore"):
            expected = _pt_where_list(theirs, condition, window)
    except (IndexError, ValueError) as exc:  # start alone past the end, as PyTables
        with hyperslab.open_file(ours) as f, pytest.raises(type(exc)):
            f.root.t.get_where_list(condition, {}, start=start, stop=stop, step=step)
        return
    with hyperslab.open_file(ours) as f, np.errstate(all="ignore"):
        t = f.root.t
        got = t.get_where_list(condition, {}, start=start, stop=stop, step=step)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(
            t.read_where(condition, {}, start=start, stop=stop, step=step), data[expected])
        assert [r.nrow for r in t.where(condition, {}, start, stop, step)] == list(expected)


def test_real_queries_on_pytables_file_with_special_columns(tmp_path: Path) -> None:
    """A file written by PyTables (time, enum, bool, uint, float16 columns), queried by both."""
    colors = tables.Enum(["red", "green", "blue"])

    class Special(tables.IsDescription):
        t32 = tables.Time32Col(pos=0)
        t64 = tables.Time64Col(pos=1)
        color = tables.EnumCol(colors, "red", "uint8", pos=2)
        ok = tables.BoolCol(pos=3)
        u4 = tables.UInt32Col(pos=4)
        h = tables.Float16Col(pos=5)
        word = tables.StringCol(3, pos=6)

    path = tmp_path / "special.h5"
    n = 300
    with tables.open_file(path, "w") as f:
        t = f.create_table("/", "t", Special, chunkshape=(32,))
        row = t.row
        for i in range(n):
            row["t32"], row["t64"], row["color"] = i, i / 4, i % 3
            row["ok"], row["u4"], row["h"] = i % 5 == 0, 4_000_000_000 - i, i / 8
            row["word"] = b"w%d" % (i % 11)
            row.append()
        t.flush()
    cases = [
        ("(t32 > 100) & (t64 < 60.5)", {}),
        ("color == green", {"green": colors.green}),
        ("ok | (u4 > 3999999990)", {}),
        ("h >= 30", {}),
        ("word == w", {"w": "w7"}),  # str values become ASCII bytes
        ("(word > b'w5') & ~ok", {}),
    ]
    with tables.open_file(path) as pt, hyperslab.open_file(path) as hs:
        for condition, condvars in cases:
            expected = pt.root.t.get_where_list(condition, condvars)
            assert len(expected) > 0, condition
            np.testing.assert_array_equal(hs.root.t.get_where_list(condition, condvars),
                                          expected)
            np.testing.assert_array_equal(hs.root.t.read_where(condition, condvars),
                                          pt.root.t.read_where(condition, condvars))


def _parallel_table(tmp_path: Path, nrows: int = 20_000) -> tuple[Path, np.ndarray]:
    """A Blosc2 table of many small chunks, streamed in one-chunk blocks (the scan runs in
    the pool's threads)."""
    data = spec_records(nrows)
    path = tmp_path / "parallel.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", obj=data, chunkshape=(500,),
                       filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True))
    return path, data


def test_concurrent_queries_from_threads(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads querying one table with one condition at the same time (numexpr programs
    are not shareable between threads: each thread gets its own)."""
    monkeypatch.setattr(tableio, "BLOCK_BYTES", 1)
    path, data = _parallel_table(tmp_path)
    condition = "((col1 > 10) & (col3 < 4000.5)) | (sin(col4) > 0.9)"
    with np.errstate(all="ignore"):
        expected = np.flatnonzero(((data["col1"] > 10) & (data["col3"] < 4000.5))
                                  | (np.sin(data["col4"]) > 0.9))
    with hyperslab.open_file(path) as f:
        t = f.root.t

        def query(_: int) -> bool:
            ok = True
            for _ in range(5):
                ok &= np.array_equal(t.get_where_list(condition, {}), expected)
                ok &= np.array_equal(t.read_where(condition, {}, field="col2"),
                                     data["col2"][expected])
            return ok

        with ThreadPoolExecutor(4) as pool:
            assert all(pool.map(query, range(8)))


def test_queries_leave_numexpr_threads_as_they_were(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tableio, "BLOCK_BYTES", 1)
    path, data = _parallel_table(tmp_path)
    before = ne.get_num_threads()
    try:
        ne.set_num_threads(3)
        with hyperslab.open_file(path) as f:
            t = f.root.t
            rows = t.where("col1 > 10", {})
            first = next(rows)
            assert first.nrow == int(np.flatnonzero(data["col1"] > 10)[0])
            # Numexpr is serial while a parallel scan is open, and restored when the
            # last one ends, however it ends.
            assert ne.get_num_threads() == 1
            assert len(t.read_where("col2 < 100", {})) == np.count_nonzero(data["col2"] < 100)
            assert ne.get_num_threads() == 1
            rows.close()
            assert ne.get_num_threads() == 3
            assert len(t.get_where_list("col2 < 100", {})) == np.count_nonzero(
                data["col2"] < 100)
            assert ne.get_num_threads() == 3
    finally:
        ne.set_num_threads(before)


def test_abandoned_where_stops_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaving a ``where`` loop early leaves nothing reading the file: it closes cleanly
    and the next query sees every row."""
    monkeypatch.setattr(tableio, "BLOCK_BYTES", 1)
    path, data = _parallel_table(tmp_path)
    with hyperslab.open_file(path) as f:
        t = f.root.t
        for row in t.where("col1 >= 0", {}):
            if row.nrow == 1234:
                break
        assert t.get_where_list("col1 >= 0", {}).tolist() == list(
            np.flatnonzero(data["col1"] >= 0))
    with hyperslab.open_file(path) as f:
        rows = f.root.t.where("col1 >= 0", {})
        next(rows)
    # the file closed with the iterator still open: it now fails cleanly
    with pytest.raises(ClosedFileError):
        list(rows)


def test_repeated_queries_bind_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query repeated with equal, hashable condition variables is bound once per table;
    other values (or the same number as another type) bind again, and every result is
    NumPy's."""
    data = np.zeros(50, dtype=[("i", "<i4"), ("f", "<f8")])
    data["i"] = np.arange(50) % 7
    data["f"] = np.arange(50) / 4
    with hyperslab.open_file(tmp_path / "b.h5", "w") as f:
        f.create_table("/", "t", data)
    binds: list[str] = []
    real = queries.bind_condition

    def counting(table: Any, condition: str, *args: Any) -> Any:
        binds.append(condition)
        return real(table, condition, *args)

    monkeypatch.setattr(queries, "bind_condition", counting)
    with hyperslab.open_file(tmp_path / "b.h5") as f:
        t = f.root.t
        for _ in range(3):
            np.testing.assert_array_equal(t.get_where_list("i > v", {"v": 3}),
                                          np.flatnonzero(data["i"] > 3))
        assert len(binds) == 1
        np.testing.assert_array_equal(t.get_where_list("i > v", {"v": 5}),
                                      np.flatnonzero(data["i"] > 5))
        np.testing.assert_array_equal(t.get_where_list("f > v", {"v": 3.0}),
                                      np.flatnonzero(data["f"] > 3.0))
        np.testing.assert_array_equal(t.get_where_list("i > v", {"v": 3.5}),
                                      np.flatnonzero(data["i"] > 3.5))
        np.testing.assert_array_equal(t.get_where_list("i > v", {"v": 3.0}),  # 3.0 == 3
                                      np.flatnonzero(data["i"] > 3.0))
        assert len(binds) == 5
        # Unhashable values bind every time.
        limit = np.array(2)
        for _ in range(2):
            np.testing.assert_array_equal(t.read_where("i > v", {"v": limit})["i"],
                                          data["i"][data["i"] > 2])
        assert len(binds) == 7


def test_remembered_bindings_do_not_keep_closed_tables_alive(tmp_path: Path) -> None:
    """A bound condition refers to its table's columns: remembering it must not keep the
    table (and its caches of decoded chunks) alive after the file is closed."""
    import gc
    import weakref

    data = np.zeros(20, dtype=[("i", "<i4")])
    data["i"] = np.arange(20)
    with hyperslab.open_file(tmp_path / "g.h5", "w") as f:
        f.create_table("/", "t", data)
    with hyperslab.open_file(tmp_path / "g.h5") as f:
        t = f.root.t
        assert len(t.get_where_list("i > v", {"v": 5})) == 14
        gone = weakref.ref(t)
        del t
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("condition", ["(a > 5) & (a < 900)", "a >= 0", "b != 0"])
def test_queries_on_a_sparse_table_skip_unwritten_chunks_and_equal_a_scan(
        tmp_path: Path, condition: str) -> None:
    """A table grown past its written chunks (by h5py, or by a damaged extent): the
    unwritten rows read as the fill value; a query evaluates it once and scans only the
    written chunks when it does not match, everything when it does."""
    import h5py

    path = tmp_path / "sparse.h5"
    data = np.zeros(1000, dtype=[("a", "<i8"), ("b", "<f8")])
    data["a"], data["b"] = np.arange(1000), np.linspace(-1, 1, 1000)
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", data, chunkshape=(100,),
                       filters=hyperslab.Filters(5, "blosc2"))
    with h5py.File(path, "a") as h5:
        h5["t"].resize((100 * 1000,))  # 1000 chunks, 10 written
        h5["t"][50_000:50_100] = data[:100]  # one more, far away
        expected = np.flatnonzero(ne.evaluate(condition, {
            "a": h5["t"]["a"], "b": h5["t"]["b"]}))
    with hyperslab.open_file(path) as f:
        table = f.root.t
        np.testing.assert_array_equal(table.get_where_list(condition), expected)
        assert [r.nrow for r in table.where(condition, start=3, stop=60_000, step=7)] == [
            int(r) for r in expected if 3 <= r < 60_000 and (r - 3) % 7 == 0]


def test_a_query_over_a_runaway_extent_reads_only_written_chunks(tmp_path: Path) -> None:
    """2**40 rows over 10 written chunks (a flipped byte in the extent): the query answers
    in the time the written chunks take, not the extent's."""
    import time

    import h5py

    path = tmp_path / "runaway.h5"
    data = np.zeros(1000, dtype=[("a", "<i8"), ("b", "<f8")])
    data["a"] = np.arange(1000)
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", data, chunkshape=(100,))
    with h5py.File(path, "a") as h5:
        h5["t"].resize((2**40,))
    with hyperslab.open_file(path) as f:
        began = time.perf_counter()
        rows = f.root.t.get_where_list("(a > 5) & (b == 0)")
        assert time.perf_counter() - began < 10
    np.testing.assert_array_equal(rows, np.arange(6, 1000))


def test_a_query_whose_fill_value_matches_a_runaway_extent_is_refused_at_once(
        tmp_path: Path) -> None:
    """The fill value of 2**40 unwritten rows fulfils the condition: gathering them is
    refused before any row is read (MemoryError naming the table); iterating streams."""
    import itertools
    import time

    import h5py

    path = tmp_path / "runaway.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", np.ones(1000, dtype=[("a", "<i8")]), chunkshape=(100,))
    with h5py.File(path, "a") as h5:
        h5["t"].resize((2**40,))
    with hyperslab.open_file(path) as f:
        table = f.root.t
        began = time.perf_counter()
        with pytest.raises(MemoryError, match="/t"):
            table.get_where_list("a == 0")
        with pytest.raises(MemoryError, match="/t"):
            table.read_where("a == 0")
        assert time.perf_counter() - began < 10
        first = [row.nrow for row in itertools.islice(table.where("a == 0"), 3)]
        assert first == [1000, 1001, 1002]
