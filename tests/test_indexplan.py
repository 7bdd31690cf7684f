"""Index planning: which rows of a condition the column indexes can give.

Oracles: PyTables' ``Table.will_query_use_indexing`` for the spec's examples, and numexpr
(the evaluator of every query) for the rows: a plan's rows must contain the rows numexpr
selects, and equal them when the plan says it is exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numexpr as ne
import numpy as np
import pytest
import tables
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.compute.conditions import resolve_operands
from hyperslab.compute.indexing.plan import (
    And,
    IndexPlan,
    Interval,
    Or,
    PlanNode,
    ValueSet,
    plan_condition,
    value_set_contains,
)


class FakeColumn:
    """What the planner reads of a column: ``pathname`` and ``dtype``."""

    def __init__(self, pathname: str, dtype: Any) -> None:
        self.pathname = pathname
        self.dtype = np.dtype(dtype)


def plan_mask(node: PlanNode, records: np.ndarray) -> np.ndarray:
    """The rows of ``records`` a plan gives."""
    if isinstance(node, ValueSet):
        return value_set_contains(node, records[node.column])
    masks = [plan_mask(part, records) for part in node.parts]
    if isinstance(node, And):
        return np.logical_and.reduce(masks)
    return np.logical_or.reduce(masks)


def check_rows(plan: IndexPlan | None, condition: str, records: np.ndarray,
               condvars: Mapping[str, Any]) -> None:
    """The plan's rows contain numexpr's (and are the same when the plan is exact)."""
    names = records.dtype.names or ()
    expected = ne.evaluate(condition, local_dict={**{n: records[n] for n in names},
                                                  **condvars})
    if plan is None:
        return
    got = plan_mask(plan.node, records)
    missing = np.flatnonzero(expected & ~got)
    assert missing.size == 0, f"{condition}: plan {plan} misses rows {records[missing]}"
    if plan.exact:
        extra = np.flatnonzero(got & ~expected)
        assert extra.size == 0, f"{condition}: exact plan {plan} adds rows {records[extra]}"


# ----------------------------------------------------------------------------- the spec

SPEC_CONDVARS = {"mystr": "foo"}

SPEC_USED = [
    'var1 >= "foo"',
    "var1 >= mystr",
    '(var1 >= "foo") & (var4 > 0.0)',
    '("bar" <= var1) & (var1 < "foo")',
    '(("bar" <= var1) & (var1 < "foo")) & (var4 > 0.0)',
    '(var1 >= "foo") & (var3 > 10)',
    '(var1 >= "foo") | (var3 > 10)',
    '~(var1 >= "foo") | ~(var3 > 10)',
]
SPEC_NOT_USED = [
    "var4 > 0.0",
    # The spec's negation of a complex expression, over two columns here (see below).
    '~((var1 >= "foo") & (var3 > 10)) & (var4 > 0.0)',
]

WORDS = [b"", b"a", b"bar", b"bas", b"baq", b"foo", b"fo", b"fooo", b"zz", b"ba"]


class SpecRow(tables.IsDescription):
    var1 = tables.StringCol(4)
    var2 = tables.Int32Col()
    var3 = tables.Int32Col()
    var4 = tables.Float64Col()


class NumericRow(tables.IsDescription):
    var1 = tables.Float64Col()
    var3 = tables.Int32Col()


class SpecRowHS(hyperslab.IsDescription):
    var1 = hyperslab.StringCol(4)
    var2 = hyperslab.Int32Col()
    var3 = hyperslab.Int32Col()
    var4 = hyperslab.Float64Col()


def _spec_records(n: int = 60) -> np.ndarray:
    rng = np.random.default_rng(7)
    records = np.zeros(n, dtype=[("var1", "S4"), ("var2", "i4"), ("var3", "i4"),
                                 ("var4", "f8")])
    records["var1"] = [WORDS[i % len(WORDS)] for i in range(n)]
    records["var2"] = np.arange(n)
    records["var3"] = rng.integers(0, 20, n)
    records["var4"] = rng.normal(size=n)
    records["var4"][::7] = np.nan
    return records


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyTables tables with var1 and var3 indexed, and a hyperslab twin for the operands."""
    folder: Path = tmp_path_factory.mktemp("spec")
    records = _spec_records()
    with tables.open_file(folder / "pytables.h5", "w") as f:
        table = f.create_table("/", "t", SpecRow)
        table.append(records)
        numeric = f.create_table("/", "num", NumericRow)
        numbers = np.zeros(len(records), dtype=[("var1", "f8"), ("var3", "i4")])
        numbers["var1"], numbers["var3"] = records["var4"], records["var3"]
        numeric.append(numbers)
        for t in (table, numeric):
            t.cols.var1.create_index()
            t.cols.var3.create_index()
        used = {cond: table.will_query_use_indexing(cond, SPEC_CONDVARS)
                for cond in [*SPEC_USED, *SPEC_NOT_USED,
                             '~(("bar" <= var1) & (var1 < "foo")) & (var4 > 0.0)']}
        used["num: var1 != 0.0"] = numeric.will_query_use_indexing("var1 != 0.0")
        colindexed = dict(table.colindexed)
    with hyperslab.open_file(folder / "hyperslab.h5", "w") as f:
        ours = f.create_table("/", "t", SpecRowHS)
        operands = {cond: resolve_operands(ours, cond, SPEC_CONDVARS, None)
                    for cond in used if not cond.startswith("num:")}
    return used, operands, colindexed.__getitem__, records


@pytest.mark.parametrize("condition", SPEC_USED)
def test_spec_usable_examples_use_the_columns_pytables_uses(spec: Any, condition: str) -> None:
    used, operands, indexed, records = spec
    plan = plan_condition(condition, operands[condition], indexed)
    assert plan is not None
    assert used[condition], "PyTables uses an index for this example"
    assert plan.columns == used[condition]
    check_rows(plan, condition, records, {"mystr": np.array(b"foo")})


@pytest.mark.parametrize("condition", SPEC_NOT_USED)
def test_spec_unusable_examples_plan_nothing(spec: Any, condition: str) -> None:
    used, operands, indexed, _ = spec
    assert used[condition] == frozenset()
    assert plan_condition(condition, operands[condition], indexed) is None


def test_spec_two_piece_range_is_planned_unlike_pytables(spec: Any) -> None:
    used, _, indexed, _ = spec
    assert used["num: var1 != 0.0"] == frozenset()
    operands = {"var1": FakeColumn("var1", "f8")}
    plan = plan_condition("var1 != 0.0", operands, indexed)
    assert plan == IndexPlan(
        ValueSet("var1", (Interval(None, False, 0.0, False), Interval(0.0, False, None, False)),
                 nan=True),
        exact=True, columns=frozenset({"var1"}))
    values = np.array([np.nan, -0.0, 0.0, 1.0, -np.inf])
    assert value_set_contains(plan.node, values).tolist() == [True, False, False, True, True]


def test_spec_negated_range_of_one_column_is_planned_unlike_pytables(spec: Any) -> None:
    condition = '~(("bar" <= var1) & (var1 < "foo")) & (var4 > 0.0)'
    used, operands, indexed, records = spec
    assert used[condition] == frozenset()
    plan = plan_condition(condition, operands[condition], indexed)
    assert plan is not None and isinstance(plan.node, ValueSet)
    assert (plan.exact, plan.columns) == (False, frozenset({"var1"}))
    check_rows(plan, condition, records, {})
    inner = plan_condition('("bar" <= var1) & (var1 < "foo")', operands[condition], indexed)
    assert inner is not None and isinstance(inner.node, ValueSet)
    words = np.array([*WORDS, b"ba\xff", b"\xff", b"fo\x80"], dtype="S4")
    assert (value_set_contains(plan.node, words)
            == ~value_set_contains(inner.node, words)).all()


# ----------------------------------------------------------------------------- shapes

COLUMNS = {
    "i": FakeColumn("i", "i4"), "l": FakeColumn("l", "i8"), "u": FakeColumn("u", "u2"),
    "w": FakeColumn("w", "u4"), "f": FakeColumn("f", "f8"), "g": FakeColumn("g", "f4"),
    "b": FakeColumn("b", "?"), "s": FakeColumn("s", "S3"), "n": FakeColumn("n", "i4"),
    "c": FakeColumn("c", "c16"), "m": FakeColumn("m", ("f8", (2,))),
    "x": FakeColumn("grp/x", "i2"), "q": FakeColumn("q", "u8"),
}
VARS = {
    "nan": np.array(np.nan), "big": np.array(2**40), "f32": np.array(np.float32(16777217.0)),
    "word": np.array(b"foo"), "vec": np.array([1, 2]), "flag": np.array(True),
}
OPERANDS = {**COLUMNS, **VARS}


def indexed(path: str) -> bool:
    return path != "n"


def plan(condition: str) -> IndexPlan | None:
    return plan_condition(condition, OPERANDS, indexed)


def full(nan: bool = False) -> tuple[tuple[Interval, ...], bool]:
    return (Interval(None, False, None, False),), nan


def between(lo: Any, lo_inc: bool, hi: Any, hi_inc: bool) -> Interval:
    return Interval(lo, lo_inc, hi, hi_inc)


SHAPES: list[tuple[str, str, tuple[Interval, ...], bool]] = [
    ("i > 3", "i", (between(3, False, None, False),), False),
    ("3 < i", "i", (between(3, False, None, False),), False),
    ("i >= -3", "i", (between(-3, True, None, False),), False),
    ("i <= 3", "i", (between(None, False, 3, True),), False),
    ("i == 3", "i", (between(3, True, 3, True),), False),
    ("i != 3", "i", (between(None, False, 3, False), between(3, False, None, False)), False),
    ("(i > 1) & (i < 5)", "i", (between(1, False, 5, False),), False),
    ("(i > 5) & (i < 1)", "i", (), False),
    ("(i < 1) | (i > 5)", "i", (between(None, False, 1, False), between(5, False, None, False)),
     False),
    ("(i <= 1) | (i >= 2)", "i", *full()),
    ("(i < 3) | (i > 1)", "i", *full()),
    ("~((i > 1) & (i < 5))", "i",
     (between(None, False, 1, True), between(5, True, None, False)), False),
    ("~~(i > 3)", "i", (between(3, False, None, False),), False),
    ("i > 1.5", "i", (between(1, False, None, False),), False),
    ("i == 1.5", "i", (), False),
    ("i > 2 * 3 - 1", "i", (between(5, False, None, False),), False),
    ("i > 2 ** 40", "i", (), False),
    ("i < -2 ** 40", "i", (), False),
    ("i != big", "i", *full()),
    ("i != nan", "i", *full()),
    ("i < nan", "i", (), False),
    # float32 compare: 16777217 is 16777216.0 in float32, so is 16777217
    ("i == f32", "i", (between(16777216, True, 16777217, True),), False),
    ("u > -1", "u", *full()),
    ("u < -1", "u", (), False),
    ("w >= -1", "w", *full()),
    ("x > 3", "grp/x", (between(3, False, None, False),), False),
    ("l == 9007199254740992.0", "l", (between(2**53, True, 2**53 + 1, True),), False),
    ("f != 3", "f", (between(None, False, 3.0, False), between(3.0, False, None, False)), True),
    ("f < nan", "f", (), False),
    ("f >= nan", "f", (), False),
    ("f != nan", "f", *full(nan=True)),
    ("~(f < 0)", "f", (between(0.0, True, None, False),), True),
    ("~(f != nan)", "f", (), False),
    ("(f > 1) & (f != 2)", "f",
     (between(1.0, False, 2.0, False), between(2.0, False, None, False)), False),
    ("g == 0.1", "g", (), False),
    ("b", "b", (between(True, True, True, True),), False),
    ("~b", "b", (between(False, True, False, True),), False),
    ("b == False", "b", (between(False, True, False, True),), False),
    ("b != 0", "b", (between(True, True, True, True),), False),
    ("b > 0.5", "b", (between(True, True, True, True),), False),
    ("b | ~b", "b", *full()),
    ("b & ~b", "b", (), False),
    ("s == 'foo'", "s", (between(b"foo", True, b"foo", True),), False),
    ("s == word", "s", (between(b"foo", True, b"foo", True),), False),
    ("b'fo\\x00' == s", "s", (between(b"fo", True, b"fo", True),), False),
    ("s == b'fooo'", "s", (), False),
    ("s != b'fooo'", "s", *full()),
    ("s != b'a'", "s", (between(None, False, b"a", False), between(b"a", False, None, False)),
     False),
]


@pytest.mark.parametrize(("condition", "column", "intervals", "nan"), SHAPES,
                         ids=[s[0] for s in SHAPES])
def test_single_column_plans(condition: str, column: str, intervals: tuple[Interval, ...],
                             nan: bool) -> None:
    got = plan(condition)
    assert got == IndexPlan(ValueSet(column, intervals, nan), True, frozenset({column}))


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_string_literals_compare_as_their_bytes(op: str) -> None:
    plans = [plan(f"s {op} {const}") for const in ("'foo'", "b'foo'", "word")]
    assert plans[0] is not None and plans[0] == plans[1] == plans[2]


STRING_ALPHABET = [b"\0", b"\x01", b"a", b"\x7f", b"\x80", b"\xff"]


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_string_order_is_numexpr_order(op: str) -> None:
    # numexpr compares C chars: signed on x86 ("\x80" < "a"), unlike NumPy
    words = sorted({b"".join(p) for n in range(3)
                    for p in itertools.product(STRING_ALPHABET, repeat=n)})
    records = np.array(words, dtype=[("s", "S2")])
    columns = {"s": FakeColumn("s", "S2")}
    for n in range(1, 4):
        for key in itertools.product(STRING_ALPHABET, repeat=n):
            condvars = {"k": np.array(b"".join(key))}
            text = f"s {op} k"
            got = plan_condition(text, {**columns, **condvars}, lambda path: True)
            assert got is not None and got.exact
            check_rows(got, text, records, condvars)


def test_numeric_bounds_have_the_column_dtype() -> None:
    for condition, dtype in [("i > 1.5", np.int32), ("x < 2", np.int16),
                             ("g > 0.1", np.float32), ("u < 2.5", np.uint16)]:
        got = plan(condition)
        assert got is not None and isinstance(got.node, ValueSet)
        bounds = [b for iv in got.node.intervals for b in (iv.lo, iv.hi) if b is not None]
        assert bounds and all(type(b) is dtype for b in bounds), condition


def test_float32_bound_is_rounded_in_the_column_domain() -> None:
    # numexpr compares a float32 column with 0.1 in float64, where float32(0.1) > 0.1
    tenth = np.float32(0.1)
    below = np.nextafter(tenth, np.float32(0))
    assert tenth > np.float64(0.1) > below
    got = plan("g > 0.1")
    assert got is not None and isinstance(got.node, ValueSet)
    assert got.node.intervals == (Interval(below, False, None, False),)
    assert value_set_contains(got.node, np.array([below, tenth])).tolist() == [False, True]


@pytest.mark.parametrize("condition", [
    "(i + 1) > 3",         # arithmetic on a column
    "abs(i) > 3",          # function
    "i > l",               # column against column
    "i > vec",             # column against an array
    "n > 3",               # not indexed
    "c == 1",              # complex column
    "m > 1",               # multidimensional column
    "q > 1",               # uint64 column
    "s > 1",               # string against number: numexpr refuses it
    "i > 'a'",
    "s > 'é'",             # not ASCII: numexpr refuses it
    "i > 1j",
    "i == None",
    "1 < i < 3",           # chained comparison
    "i",                   # not boolean
    "flag",                # no column
    "(i > 1) | (n > 1)",   # one side unplannable
    "~((i > 1) & (f > 1))",  # negation over two columns
    "~((i > 1) & (n > 1))",  # negation of an inexact plan
    "~((i > 1) | (f > 1))",
    "(i > 1) ^ (f > 1)",
    "i > 2 ** 5000",
    "i > 1 / 0",
    "s > b''",             # numexpr gives empty string literals no consistent order
    "'' == s",
])
def test_unplannable(condition: str) -> None:
    assert plan(condition) is None


@pytest.mark.parametrize(("condition", "node", "exact"), [
    ("(i > 1) & (n > 1)", ValueSet("i", (between(1, False, None, False),)), False),
    ("(n > 1) & ~(i > 1)", ValueSet("i", (between(None, False, 1, True),)), False),
    ("(i > 1) & ((n > 1) | (f < 0))", ValueSet("i", (between(1, False, None, False),)), False),
    ("(i > 1) & flag", ValueSet("i", (between(1, False, None, False),)), False),
    ("(i > 1) & (f > 2)", And((ValueSet("i", (between(1, False, None, False),)),
                               ValueSet("f", (between(2.0, False, None, False),)))), True),
    ("(i > 1) & (f > 2) & (i < 5) & (n < 0)",
     And((ValueSet("i", (between(1, False, 5, False),)),
          ValueSet("f", (between(2.0, False, None, False),)))), False),
    ("(i > 1) | (f > 2) | (i < 0)",
     Or((ValueSet("i", (between(None, False, 0, False), between(1, False, None, False))),
         ValueSet("f", (between(2.0, False, None, False),)))), True),
    ("((i > 1) & (n > 2)) | (i < 0)",
     ValueSet("i", (between(None, False, 0, False), between(1, False, None, False))), False),
    ("((i > 1) & (f > 2)) | b",
     Or((And((ValueSet("i", (between(1, False, None, False),)),
              ValueSet("f", (between(2.0, False, None, False),)))),
         ValueSet("b", (between(True, True, True, True),)))), True),
])
def test_compound_plans(condition: str, node: PlanNode, exact: bool) -> None:
    got = plan(condition)
    assert got is not None
    assert (got.node, got.exact) == (node, exact)
    paths: set[str] = set()
    stack = [node]
    while stack:
        part = stack.pop()
        if isinstance(part, ValueSet):
            paths.add(part.column)
        else:
            stack.extend(part.parts)
    assert got.columns == paths


def test_syntax_errors_are_raised() -> None:
    with pytest.raises(SyntaxError):
        plan("(i > 1")


def test_value_set_contains_follows_numpy() -> None:
    vs = ValueSet("f", (between(None, False, -1.0, True), between(0.0, False, 2.0, False)),
                  nan=True)
    values = np.array([-np.inf, -1.0, -0.5, 0.0, 1.0, 2.0, np.inf, np.nan])
    expected = (values <= -1) | ((values > 0) & (values < 2)) | np.isnan(values)
    assert value_set_contains(vs, values).tolist() == expected.tolist()
    strings = np.array([b"", b"a", b"ab", b"b"], dtype="S2")
    vs = ValueSet("s", (between(b"a", True, b"ab", False),))
    assert value_set_contains(vs, strings).tolist() == [False, True, False, False]
    assert value_set_contains(ValueSet("i", ()), np.arange(3)).tolist() == [False] * 3
    everything = (between(None, False, None, False),)
    values = np.array([np.nan, -np.inf, 1.0, np.inf])
    assert value_set_contains(ValueSet("f", everything), values).tolist() == [
        False, True, True, True]
    assert value_set_contains(ValueSet("f", (), nan=True), values).tolist() == [
        True, False, False, False]


# ----------------------------------------------------------------------------- hypothesis

def _data() -> np.ndarray:
    """Rows with the values where type conversions and comparisons change behaviour."""
    i32, i64 = np.iinfo(np.int32), np.iinfo(np.int64)
    specials: dict[str, list[Any]] = {
        "i": [i32.min, i32.max, 0, 1, -1, 2, 3, 5, 16777216, 16777217, -16777217, 100],
        "l": [i64.min, i64.max, 2**53, 2**53 + 1, -(2**53) - 1, 2**31, 0, 1, -1, 3,
              2**62 + 1, 2**24 + 1],
        "u": [0, 1, 2, 3, 65535, 100, 7],
        "f": [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.1, 1.5, 2.0**53, 1e300, 5e-324, -1.0, 3.0],
        "g": [np.nan, np.inf, -np.inf, 0.1, 16777216.0, 3.4e38, 1e-45, -0.0, 1.0, -2.5, 3.0],
        "b": [True, False],
        "s": [b"", b"a", b"fo", b"foo", b"a\x00b", b"zz", b"\xff", b"f", b"ab", b"\x80a",
              b"f\xe9"],
        "n": [0, 1, 2, 3],
    }
    dtype = [("i", "i4"), ("l", "i8"), ("u", "u2"), ("f", "f8"), ("g", "f4"), ("b", "?"),
             ("s", "S3"), ("n", "i4")]
    rows = 48
    records = np.zeros(rows, dtype=dtype)
    for k, (name, values) in enumerate(specials.items()):
        picks = [values[(j * (k + 3) + j // len(values)) % len(values)] for j in range(rows)]
        records[name] = np.array(picks, dtype=records.dtype[name])
    return records


RECORDS = _data()
HYPO_COLUMNS = {name: FakeColumn(name, RECORDS.dtype[name]) for name in RECORDS.dtype.names}
NUMERIC = ["i", "l", "u", "f", "g"]
INT_SPECIALS = [0, 1, -1, 2, 3, 5, 100, 2**24, 2**24 + 1, 2**31 - 1, 2**31, -(2**31) - 1,
                2**53, 2**53 + 1, 2**62, 2**63 - 1, -(2**63), 65535, 65536]
FLOAT_SPECIALS = [0.0, -0.0, 0.1, 1.5, 2.5, -1.0, 1e300, -1e300, 5e-324, 16777217.0,
                  9007199254740993.0, 3.4e38, 3.5e38]


OPS = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
VAR_FLOATS = [np.nan, np.inf, -np.inf, *FLOAT_SPECIALS, *map(float, INT_SPECIALS)]


def _var_value(dtype: str) -> st.SearchStrategy[Any]:
    if dtype in ("f4", "f8"):
        return st.sampled_from(VAR_FLOATS)
    if dtype == "?":
        return st.booleans()
    info = np.iinfo(dtype)
    return st.sampled_from([v for v in INT_SPECIALS if info.min <= v <= info.max])


# A numeric constant: ("lit", value) or ("var", dtype, value).
NUMERIC_CONST = st.one_of(
    st.tuples(st.just("lit"), st.sampled_from(INT_SPECIALS) | st.integers(-10, 10)),
    st.tuples(st.just("lit"), st.sampled_from(FLOAT_SPECIALS) | st.floats(-10, 10, width=16)),
    *(st.tuples(st.just("var"), st.just(d), _var_value(d))
      for d in ("f4", "f8", "i4", "i8", "u1", "?")),
)
STRING_CONST = st.tuples(
    st.sampled_from(["lit", "var"]),
    st.binary(max_size=4).map(lambda b: bytes(c for c in b if c in b"\0abfoz\xff")),
)
LEAVES = st.one_of(
    st.tuples(st.just("cmp"), st.sampled_from(NUMERIC), OPS, NUMERIC_CONST, st.booleans()),
    st.tuples(st.just("cmp"), st.just("b"), OPS,
              st.tuples(st.just("lit"), st.sampled_from([True, False, 0, 1, 0.5])),
              st.booleans()),
    st.tuples(st.just("cmp"), st.just("s"), OPS, STRING_CONST, st.booleans()),
    st.tuples(st.just("raw"), st.sampled_from(["b", "~b", "((i + 1) > 3)", "(n > 1)", "(i < l)",
                                               "((f * 2) <= 1.5)", "((f > 1) | (n == 2))"])),
)
TREES = st.recursive(
    LEAVES,
    lambda children: st.one_of(st.tuples(st.sampled_from(["&", "|"]), children, children),
                               st.tuples(st.just("~"), children)),
    max_leaves=8,
)


class Renderer:
    """Writes a generated tree as a condition, with its condvars."""

    def __init__(self, str_literals: bool) -> None:
        # numexpr cannot compile str and bytes literals in one condition
        self.str_literals = str_literals
        self.condvars: dict[str, np.ndarray] = {}

    def var(self, value: np.ndarray) -> str:
        name = f"v{len(self.condvars)}"
        self.condvars[name] = value
        return name

    def const(self, column: str, spec: tuple[Any, ...]) -> str:
        if spec[0] == "var" and column == "s":
            return self.var(np.array(spec[1]))
        if spec[0] == "var":
            with np.errstate(over="ignore"):
                return self.var(np.array(spec[2]).astype(spec[1]))
        value = spec[1]
        if column == "s" and self.str_literals:
            return repr(value.replace(b"\xff", b"z").decode("ascii"))
        return repr(value)

    def render(self, tree: tuple[Any, ...]) -> str:
        if tree[0] == "raw":
            return str(tree[1])
        if tree[0] == "cmp":
            _, column, op, spec, flipped = tree
            const = self.const(column, spec)
            return f"({const} {op} {column})" if flipped else f"({column} {op} {const})"
        if tree[0] == "~":
            return f"~({self.render(tree[1])})"
        return f"({self.render(tree[1])} {tree[0]} {self.render(tree[2])})"


@settings(max_examples=250, deadline=None)
@given(TREES, st.booleans())
def test_plan_rows_contain_the_matching_rows(tree: tuple[Any, ...], str_literals: bool) -> None:
    renderer = Renderer(str_literals)
    text = renderer.render(tree)
    operands = {**HYPO_COLUMNS, **renderer.condvars}
    got = plan_condition(text, operands, lambda path: path != "n")
    check_rows(got, text, RECORDS, renderer.condvars)


def _leaf_matrix() -> list[str]:
    consts = [*map(repr, INT_SPECIALS), *map(repr, FLOAT_SPECIALS)]
    return [f"{c} {op} {k}" for c in NUMERIC for op in ("<", "<=", ">", ">=", "==", "!=")
            for k in consts]


def test_every_numeric_leaf_is_exact() -> None:
    for text in _leaf_matrix():
        got = plan_condition(text, HYPO_COLUMNS, lambda path: True)
        assert got is not None and got.exact, text
        check_rows(got, text, RECORDS, {})


def test_planner_uses_the_indexed_predicate() -> None:
    seen: list[str] = []

    def predicate(path: str) -> bool:
        seen.append(path)
        return path == "f"

    got = plan_condition("(i > 1) & (f > 1)", HYPO_COLUMNS, predicate)
    assert got is not None and got.columns == frozenset({"f"}) and not got.exact
    assert set(seen) == {"i", "f"}

