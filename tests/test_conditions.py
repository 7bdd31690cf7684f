"""Conditions: name resolution, validation, compilation and block evaluation.

These tests run against :class:`FakeTable`, a small in-memory object implementing the table
protocol the compute layer relies on (``colinstances``, ``_iter_blocks``, ``_map_blocks``,
``_rows_at``, ``_append_records``, ``_usable_indexes``...), so they do not depend on the real Table.
``test_queries`` uses the same fake, and the real API with NumPy and PyTables as oracles.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from typing import Any

import numexpr as ne
import numpy as np
import pytest

from hyperslab.compute import conditions
from hyperslab.compute.conditions import (
    bind_condition,
    caller_namespace,
    compile_condition,
    condition_names,
    field_of,
    resolve_operands,
)
from hyperslab.errors import ConditionTypeError, FileModeError

# ----------------------------------------------------------------------------- the fake


class FakeColumn:
    """A leaf column: ``pathname``, ``name``, ``dtype`` (of a cell), ``shape``, ``table``."""

    def __init__(self, table: FakeTable, pathname: str, dtype: np.dtype[Any]) -> None:
        self.table = table
        self.pathname = pathname
        self.name = pathname.rsplit("/", 1)[-1]
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.table.nrows, *self.dtype.shape)


class FakeCols:
    """A nested group of columns."""

    def __init__(self, paths: list[str]) -> None:
        self._v_colpathnames = paths


class FakeFile:
    def __init__(self, writable: bool = True) -> None:
        self.writable = writable

    @property
    def mode(self) -> str:
        return "a" if self.writable else "r"

    def _check_writable(self) -> None:
        if not self.writable:
            raise FileModeError("the file is not writable (opened in mode 'r')")


class FakeRow:
    def __init__(self, nrow: int, record: np.ndarray) -> None:
        self.nrow = nrow
        self.record = record

    def __getitem__(self, path: str) -> Any:
        return field_of(self.record, path)[()]


class FakeTable:
    """The table protocol over an in-memory structured array.

    ``_iter_blocks`` copies each block into one reused buffer, as a real table may, so a
    caller keeping ``records`` past the next iteration would see wrong data.
    """

    def __init__(self, data: np.ndarray, path: str = "/t", file: FakeFile | None = None,
                 block: int = 7, defaults: np.ndarray | None = None) -> None:
        self.data = data
        self.path = path
        self._v_file = file if file is not None else FakeFile()
        self.block = block
        self.description = None
        self.flushes = 0
        # (start, stop, step, fields read or "map" for _map_blocks)
        self.calls: list[tuple[int, int, int, tuple[str, ...] | str | None]] = []
        self._defaults = defaults if defaults is not None else np.zeros((), data.dtype)
        self.colinstances: dict[str, Any] = {}
        self._add_columns(data.dtype, "")

    def _add_columns(self, dtype: np.dtype[Any], prefix: str) -> list[str]:
        leaves: list[str] = []
        for name in dtype.names or ():
            sub = dtype.fields[name][0]  # type: ignore[index]
            path = prefix + name
            if sub.names is not None:
                below = self._add_columns(sub, path + "/")
                self.colinstances[path] = FakeCols(below)
                leaves += below
            else:
                self.colinstances[path] = FakeColumn(self, path, sub)
                leaves.append(path)
        return leaves

    @property
    def nrows(self) -> int:
        return len(self.data)

    def _usable_indexes(self, columns: Any = None) -> dict[str, Any]:
        return {}  # the fake has no indexes: queries scan

    def _written_runs(self, start: int, stop: int) -> None:
        return None  # every row of the fake is written

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype

    def _iter_blocks(self, start: int, stop: int, step: int,
                     fields: Sequence[str] | None = None) -> Iterator[tuple[int, np.ndarray]]:
        self.calls.append((start, stop, step, None if fields is None else tuple(fields)))
        return self._blocks(start, stop, step)

    def _map_blocks(self, start: int, stop: int, step: int, work: Any,
                    parallel_context: Any = None) -> Iterator[Any]:
        self.calls.append((start, stop, step, "map"))
        with parallel_context() if parallel_context is not None else nullcontext():
            for first, records in self._blocks(start, stop, step):
                yield work(first, records)

    def _blocks(self, start: int, stop: int, step: int) -> Iterator[tuple[int, np.ndarray]]:
        assert step > 0 and 0 <= start <= stop <= self.nrows, (start, stop, step)
        rows = np.arange(start, stop, step)
        buffer = np.empty(self.block, self.dtype)
        for lo in range(0, len(rows), self.block):
            chunk = rows[lo : lo + self.block]
            buffer[: len(chunk)] = self.data[chunk]
            yield int(chunk[0]), buffer[: len(chunk)]
        buffer[...] = np.zeros((), self.dtype)  # poison: stale views show zeros

    def _rows_at(self, blocks: Iterable[tuple[Any, np.ndarray]]) -> Iterator[FakeRow]:
        for coords, records in blocks:
            for i in range(len(records)):
                yield FakeRow(int(coords[i]), records[i])

    def _append_records(self, records: np.ndarray) -> None:
        assert records.dtype == self.dtype
        self._v_file._check_writable()
        self.data = np.concatenate([self.data, records])

    def _default_record(self) -> np.ndarray:
        return self._defaults.copy()

    def flush(self) -> None:
        self.flushes += 1


RECORD = np.dtype([
    ("i1", "i1"), ("u2", "<u2"), ("u4", "<u4"), ("u8", "<u8"), ("i8", "<i8"),
    ("f2", "<f2"), ("f8", "<f8"), ("c16", "<c16"), ("s", "S4"), ("b", "?"),
    ("m", "<i4", (2,)), ("nested", [("x", "<i4"), ("deep", [("y", "<f4")])]),
])


def make_data(n: int = 20) -> np.ndarray:
    data = np.zeros(n, RECORD)
    k = np.arange(n)
    data["i1"] = k - 10
    data["u2"] = k * 1000
    data["u4"] = k * 200_000_000
    data["u8"] = k
    data["i8"] = k * 10**12
    data["f2"] = k / 4
    data["f8"] = k * 1.5
    data["c16"] = k + 1j * (n - k)
    data["s"] = [b"s%d" % (i % 7) for i in k]
    data["b"] = k % 3 == 0
    data["m"] = np.stack([k, -k], axis=1)
    data["nested"]["x"] = -k
    data["nested"]["deep"]["y"] = k / 2
    return data


@pytest.fixture
def table() -> FakeTable:
    return FakeTable(make_data())


def mask_of(table: FakeTable, condition: str, condvars: dict[str, Any] | None = None) -> Any:
    bound = bind_condition(table, condition, condvars if condvars is not None else {}, None)
    return bound.evaluate(table.data)


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(("condition", "names"), [
    ("a > 1", ("a",)),
    ("(a > 1) & (b < c)", ("a", "b", "c")),
    ("sin(a) > where(b, c, 0)", ("a", "b", "c")),
    ("contains(s, b'x') | ~flag", ("s", "flag")),
    ("(a == True) | (b == None) | (c != False)", ("a", "b", "c")),
    ("a.real > b.imag", ("a", "b")),  # numexpr's functions are not variables
])
def test_condition_names(condition: str, names: tuple[str, ...]) -> None:
    assert condition_names(condition) == names


def test_condition_names_errors() -> None:
    with pytest.raises(SyntaxError):
        condition_names("a b")
    with pytest.raises(TypeError, match="must be a str"):
        condition_names(b"a > 1")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- resolution


def test_resolution_order(table: FakeTable) -> None:
    lim = 3
    ns = (locals(), globals())
    ops = resolve_operands(table, "(f8 > lim) & (i1 < lim)", None, ns)
    assert ops["f8"] is table.colinstances["f8"]
    assert ops["lim"].shape == () and ops["lim"] == 3
    # condvars override columns and disable the frame
    ops = resolve_operands(table, "f8 > lim", {"f8": table.colinstances["i8"], "lim": 1.5}, ns)
    assert ops["f8"].pathname == "i8"
    with pytest.raises(NameError, match="``lim``"):
        resolve_operands(table, "f8 > lim", {}, ns)


OTHER_GLOBAL = 7


def test_resolution_globals_and_locals(table: FakeTable) -> None:
    OTHER_GLOBAL = 1
    ops = resolve_operands(table, "i1 < OTHER_GLOBAL", None, (locals(), globals()))
    assert ops["OTHER_GLOBAL"] == 1
    ops = resolve_operands(table, "i1 < OTHER_GLOBAL", None, ({}, globals()))
    assert ops["OTHER_GLOBAL"] == 7
    assert OTHER_GLOBAL == 1


def test_unknown_name(table: FakeTable) -> None:
    with pytest.raises(NameError, match=r"name ``nope`` is not defined"):
        resolve_operands(table, "nope > 1", None, ({}, {}))


def test_nested_and_multidimensional_columns(table: FakeTable) -> None:
    with pytest.raises(TypeError, match="``nested`` refers to a nested column"):
        resolve_operands(table, "nested > 0", {}, None)
    with pytest.raises(TypeError, match="nested column"):
        resolve_operands(table, "nested/x > 0", {}, None)
    with pytest.raises(NotImplementedError, match="``m`` refers to a multidimensional"):
        resolve_operands(table, "m > 0", {}, None)
    with pytest.raises(NotImplementedError, match="64-bit unsigned"):
        resolve_operands(table, "u8 > 0", {}, None)
    # a nested leaf column through condvars is fine
    x = table.colinstances["nested/x"]
    assert list(np.flatnonzero(mask_of(table, "x < -15", {"x": x}))) == [16, 17, 18, 19]
    y = table.colinstances["nested/deep/y"]
    assert list(np.flatnonzero(mask_of(table, "y >= 9", {"y": y}))) == [18, 19]


def test_column_of_another_table(table: FakeTable) -> None:
    other = FakeTable(make_data(), path="/other")
    with pytest.raises(ValueError, match=r"not part of table ``/t``"):
        resolve_operands(table, "c > 0", {"c": other.colinstances["f8"]}, None)
    same_path_other_file = FakeTable(make_data(), path="/t")
    with pytest.raises(ValueError, match="not part of table"):
        resolve_operands(table, "c > 0", {"c": same_path_other_file.colinstances["f8"]}, None)
    same_file = FakeTable(make_data(), path="/t", file=table._v_file)  # another handle
    ops = resolve_operands(table, "c > 0", {"c": same_file.colinstances["f8"]}, None)
    assert ops["c"].pathname == "f8"


@pytest.mark.parametrize(("value", "expected"), [
    (3, np.array(3)),
    (2.5, np.array(2.5)),
    ("ab", np.array(b"ab")),
    (b"ab", np.array(b"ab")),
    (np.uint64(5), np.array(5, np.int64)),
    ([4], np.array(4)),
    (True, np.array(True)),
])
def test_value_operands(table: FakeTable, value: Any, expected: np.ndarray) -> None:
    ops = resolve_operands(table, "v == i1", {"v": value}, None)
    assert ops["v"].shape == ()
    assert ops["v"].dtype == expected.dtype
    assert ops["v"] == expected


@pytest.mark.parametrize(("value", "error", "match"), [
    (None, TypeError, "data type ``object``"),
    (2**70, TypeError, "data type ``object``"),
    (np.datetime64(3, "s"), TypeError, "datetime64"),
    (np.array(["x"]), TypeError, "str"),
    (np.array([1, 2]), ValueError, r"must be a scalar.*\(2,\)"),
    ("é", UnicodeEncodeError, "ascii"),
    (np.uint64(2**63), TypeError, "does not fit in int64"),
])
def test_bad_values(table: FakeTable, value: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        resolve_operands(table, "v == i1", {"v": value}, None)


# ----------------------------------------------------------------------------- compilation


@pytest.mark.parametrize(("condition", "error", "match"), [
    ("i1 + 1", TypeError, r"``i1 \+ 1`` does not have a boolean type"),
    ("s > 3", ConditionTypeError, r"unsupported operand types for \*gt\*: str, int"),
    ("sin(s) > 0", ValueError, "in condition 'sin"),  # numexpr's own message
    ("abs(c16) > 15", ConditionTypeError, r"\*gt\*: complex, int"),
    ("(f8 > 1) and (f8 < 3)", TypeError, "bitwise counterparts.*in condition"),
    ("f8[0] > 1", ValueError, "forbidden control characters.*in condition"),
    ("sum(f8) > 1", TypeError, "reduction ``sum``"),
    ("3 > 2", ValueError, "no columns taking part"),
    ("f8 > 2 > 1", TypeError, "bitwise counterparts"),  # a chain is an ``and``
])
def test_compile_errors(table: FakeTable, condition: str, error: type[Exception],
                        match: str) -> None:
    with pytest.raises(error, match=match):
        bind_condition(table, condition, {}, None)


def test_condition_type_error_is_both() -> None:
    assert issubclass(ConditionTypeError, NotImplementedError)
    assert issubclass(ConditionTypeError, TypeError)


def test_compile_cache_reuses_programs(table: FakeTable) -> None:
    compile_condition.cache_clear()
    first = bind_condition(table, "(f8 > v) & ~b", {"v": 2.0}, None)
    second = bind_condition(table, "(f8 > v) & ~b", {"v": 9.0}, None)
    assert first.compiled is second.compiled
    info = compile_condition.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert info.maxsize == conditions.COND_CACHE_SLOTS
    # another operand type is another program
    third = bind_condition(table, "(f8 > v) & ~b", {"v": 9}, None)
    assert third.compiled is not first.compiled
    # and the bound values differ
    assert first.evaluate(table.data).sum() != second.evaluate(table.data).sum()


def test_bound_condition_needs_only_its_columns(table: FakeTable) -> None:
    bound = bind_condition(table, "(f8 > 2) & (i1 < x) | b", {"x": table.colinstances["i1"]},
                           None)
    assert sorted(bound.columns) == ["b", "f8", "i1"]


# ----------------------------------------------------------------------------- evaluation

CASES = [
    ("i1 > 0", lambda d: d["i1"] > 0),
    ("u2 >= 5000", lambda d: d["u2"] >= 5000),
    ("u4 > 3000000000", lambda d: d["u4"] > 3_000_000_000),
    ("i8 == 7000000000000", lambda d: d["i8"] == 7 * 10**12),
    ("f2 < 1.5", lambda d: d["f2"] < 1.5),
    ("(f8 > 3) & (f8 < 20) | b", lambda d: (d["f8"] > 3) & (d["f8"] < 20) | d["b"]),
    ("~b", lambda d: ~d["b"]),
    ("c16.imag > 15", lambda d: d["c16"].imag > 15),
    ("real(c16) * 2 > 15", lambda d: d["c16"].real * 2 > 15),
    ("s == b's3'", lambda d: d["s"] == b"s3"),
    ("s == 's3'", lambda d: d["s"] == b"s3"),
    ("s >= b's4'", lambda d: d["s"] >= b"s4"),
    ("contains(s, b'5')", lambda d: np.char.find(d["s"], b"5") >= 0),
    ("sin(f8) > 0.5", lambda d: np.sin(d["f8"]) > 0.5),
    ("log(f8 + 1) < 2", lambda d: np.log(d["f8"] + 1) < 2),
    ("where(b, f8, -f8) > 2", lambda d: np.where(d["b"], d["f8"], -d["f8"]) > 2),
    ("i1 % 3 == 1", lambda d: d["i1"] % 3 == 1),
    ("i1 ** 2 > 20", lambda d: d["i1"].astype(int) ** 2 > 20),
    ("(i1 * 2 + f8) > 0", lambda d: d["i1"] * 2 + d["f8"] > 0),
]


@pytest.mark.parametrize(("condition", "oracle"), CASES, ids=[c for c, _ in CASES])
def test_evaluate_matches_numpy(table: FakeTable, condition: str, oracle: Any) -> None:
    got = mask_of(table, condition)
    np.testing.assert_array_equal(got, oracle(table.data))
    assert got.dtype == bool


def test_evaluate_into_out_and_on_empty(table: FakeTable) -> None:
    bound = bind_condition(table, "f8 > 10", {}, None)
    out = np.ones(len(table.data), bool)
    res = bound.evaluate(table.data, out=out)
    assert res is out
    np.testing.assert_array_equal(out, table.data["f8"] > 10)
    assert bound.evaluate(table.data[:0]).shape == (0,)


@pytest.mark.parametrize("count", [0, 5, 1024, 1025, 3000])
def test_evaluate_here_matches_and_stays_in_numexpr_serial_blocks(
        count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """evaluate_here gives evaluate's mask, handing numexpr blocks small enough that it
    evaluates them in the calling thread (waking its threads costs more than the work
    for the few records of an indexed query)."""
    from hyperslab.compute import conditions

    data = make_data(count)
    table = FakeTable(data)
    bound = bind_condition(table, "(f8 > v) & ~b | (i1 < -5)", {"v": 30.0}, None)
    expected = bound.evaluate(data)
    sizes: list[int] = []
    real = conditions.BoundCondition.evaluate

    def spy(self: Any, records: np.ndarray, out: Any = None) -> np.ndarray:
        sizes.append(len(records))
        return real(self, records, out)

    monkeypatch.setattr(conditions.BoundCondition, "evaluate", spy)
    got = bound.evaluate_here(data)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == bool and got.shape == (count,)
    assert sum(sizes) == count or sizes == [0]
    assert max(sizes) <= conditions.NUMEXPR_SERIAL_ITEMS


def test_evaluate_extended_precision_column() -> None:
    data = np.zeros(5, [("g", np.longdouble), ("k", "<i4")])
    data["g"] = np.arange(5)
    fake = FakeTable(data)
    np.testing.assert_array_equal(mask_of(fake, "g > 2"), [False] * 3 + [True] * 2)


def test_evaluate_big_endian_and_unaligned_columns() -> None:
    dtype = np.dtype({"names": ["a", "f"], "formats": ["i1", ">f8"], "offsets": [0, 1],
                      "itemsize": 9})
    data = np.zeros(11, dtype)
    data["f"] = np.arange(11) * 0.5
    fake = FakeTable(data)
    np.testing.assert_array_equal(mask_of(fake, "f >= 4"), data["f"] >= 4)


def test_field_of(table: FakeTable) -> None:
    np.testing.assert_array_equal(field_of(table.data, "nested/deep/y"),
                                  table.data["nested"]["deep"]["y"])
    assert field_of(table.data, "f8").base is not None  # a view


# ----------------------------------------------------------------------------- frames


def _helper_at(depth: int) -> Any:
    return caller_namespace(depth)


def _one_level_up(depth: int) -> Any:
    marker_in_middle = "middle"  # noqa: F841
    return _helper_at(depth)


def test_caller_namespace_depth() -> None:
    marker_here = "here"  # noqa: F841
    local_ns, global_ns = _helper_at(0)
    assert local_ns["marker_here"] == "here"
    assert global_ns is globals()
    local_ns, _ = _one_level_up(0)
    assert "marker_in_middle" in local_ns
    local_ns, _ = _one_level_up(1)
    assert local_ns["marker_here"] == "here"
    with pytest.raises(ValueError, match="depth"):
        _helper_at(-1)


def test_numexpr_type_mapping_as_pytables() -> None:
    expected = {"?": bool, "i1": ne.necompiler.int_, "u2": ne.necompiler.int_,
                "u4": ne.necompiler.long_, "i8": ne.necompiler.long_, "f2": float,
                "f4": float, "f8": ne.necompiler.double, "c8": complex, "S3": bytes}
    for code, kind in expected.items():
        assert conditions._numexpr_type(np.dtype(code)) is kind, code
