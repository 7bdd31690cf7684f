"""PyTables' index-expression form of a condition (``Table._compile_condition``).

Oracle: PyTables' own ``Table._compile_condition`` on the same table, indexed the same way
(a file written by PyTables and read by hyperslab, and one written by hyperslab), except
where PyTables' form does not describe the condition (see
:mod:`hyperslab.compute.indexing.idxexprs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numexpr as ne
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.compute.indexing.idxexprs import index_expressions

CONDITIONS = [
    "c_int32 > 0", "0 < c_int32", "c_int32 > -1", "c_int32 > 2*3", "c_int32 > lim",
    "lim < c_int32", "c_int32 > 1.5", "c_str == b'ab'", "c_str == s", "c_f < flim",
    "c_f > 1e3", "c_int32 == True", "~(c_bool == False)", "~~~c_bool", "c_bool",
    "(c_int32 < 5) & (c_int32 > 0)", "(0 < c_int32) & (c_int32 <= 5)",
    "(c_int32 > 0) & (c_int32 > 4)", "(c_int32 > 0) & (c_extra > 0)",
    "(c_int32 > 0) & ((~c_bool) | (c_extra > 0))",
    "(c_int32 == 3) | ((c_int32 == 4) & (c_int32 == 5))",
    "((c_int32 == 3) | (c_int32 == 4)) & (c_int32 == 5)",
    "(c_int32 == 3) | c_bool | (c_int32 == 5)",
    "~((c_int32 > 0) & c_bool)", "(~(c_int32 > 0) | ~c_bool)",
    "(~(c_int32 > 0) & ~(c_int32 < 2)) & (c_extra > 0)",
    "(c_int32 < 5) & (c_extra > 0) & (c_bool == True) | (c_extra < 4)",
    "c_int32 != 1", "c_bool != True", "sin(c_int32) > 0", "(c_int32 * 2.4) > 0",
    "(c_f > 1) & (c_i64 <= 7) | (c_str >= b'a')", "c_extra > 3",
]


def _fill(table: Any) -> None:
    records = np.zeros(50, table.dtype)
    records["c_bool"] = np.arange(50) % 2 == 0
    for name in ("c_int32", "c_extra", "c_i64"):
        records[name] = np.arange(50)
    records["c_str"] = b"ab"
    records["c_f"] = np.arange(50) * 0.5
    table.append(records)


def _write(lib: Any, path: Path) -> None:
    class Record(lib.IsDescription):
        c_bool = lib.BoolCol()
        c_int32 = lib.Int32Col()
        c_extra = lib.Int32Col()
        c_str = lib.StringCol(4)
        c_f = lib.Float64Col()
        c_i64 = lib.Int64Col()

    with lib.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", Record)
        _fill(table)
        for name in ("c_bool", "c_int32", "c_str", "c_f", "c_i64"):
            getattr(table.cols, name).create_index()


def _forms(lib: Any, path: Path) -> list[tuple[Any, str, frozenset[str]]]:
    lim, flim, s = np.int16(3), 2.5, "ab"  # noqa: F841 (read by the conditions)
    forms = []
    with lib.open_file(str(path), "r") as f:
        table = f.root.t
        for condition in CONDITIONS:
            condvars = table._required_expr_vars(condition, None)
            compiled = table._compile_condition(condition, condvars)
            forms.append((compiled.index_expressions, compiled.string_expression,
                          compiled.index_variables))
    return forms


@pytest.mark.parametrize("writer", ["pytables", "hyperslab"])
def test_same_form_as_pytables(tmp_path: Path, writer: str) -> None:
    path = tmp_path / "t.h5"
    _write(tables if writer == "pytables" else hyperslab, path)
    ours, theirs = _forms(hyperslab, path), _forms(tables, path)
    for condition, mine, expected in zip(CONDITIONS, ours, theirs, strict=True):
        assert mine == expected, condition
        assert [type(v) for e in mine[0] for v in e[2]] == \
            [type(v) for e in expected[0] for v in e[2]], condition


def test_compiled_function_and_required_vars(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    _write(hyperslab, path)
    lim = 7  # noqa: F841 (read through the frame)
    with hyperslab.open_file(str(path), "r") as f:
        table = f.root.t
        condvars = table._required_expr_vars("(c_int32 > lim) & (c_extra < 20)", None)
        assert set(condvars) == {"c_int32", "lim", "c_extra"}
        assert condvars["c_int32"] is table.cols.c_int32
        assert condvars["lim"].shape == () and condvars["lim"] == 7
        compiled = table._compile_condition("(c_int32 > lim) & (c_extra < 20)", condvars)
        assert compiled.index_expressions == [("c_int32", ("gt",), (7,))]
        assert compiled.index_variables == frozenset({"c_int32"})
        records = table.read()
        args = [records[p] if p != "lim" else np.int64(7) for p in compiled.parameters]
        np.testing.assert_array_equal(
            compiled.function(*args),
            ne.evaluate("(c_int32 > 7) & (c_extra < 20)", {n: records[n] for n in
                                                              ("c_int32", "c_extra")}))
        with pytest.raises(NameError):
            table._required_expr_vars("c_int32 > undefined_name", None)
        # Explicit variables: nothing comes from the frame.
        with pytest.raises(NameError):
            table._required_expr_vars("c_int32 > lim", {})
        table._disable_indexing_in_queries()
        compiled = table._compile_condition("c_int32 > 1", {"c_int32": table.cols.c_int32})
        assert compiled.index_expressions == [] and compiled.string_expression == ""


class _Col:
    def __init__(self, dtype: Any) -> None:
        self.pathname = "/x"
        self.dtype = np.dtype(dtype)


@pytest.mark.parametrize(("condition", "expected"), [
    # PyTables keeps (c > 0) and b of the branch its "|" then refuses, reading
    # the condition as (c > 0) & b & (d > 3), which misses rows where (e > 1).
    ("((e > 1) | ((c > 0) & b)) & (d > 3)", ([("d", ("gt",), (3,))], "e0")),
    # PyTables turns ~(c == 0) into c == 1; and fails on ~(c == 3).
    ("~(c == 0)", ([], "")),
    ("~(c == 3)", ([], "")),
    ("~(b == True) & (c == 0)", ([("b", ("eq",), (False,)), ("c", ("eq",), (0,))],
                                "(e0 & e1)")),
])
def test_form_describes_the_condition(condition: str,
                                      expected: tuple[list[Any], str]) -> None:
    operands = {"b": _Col(bool), "c": _Col(np.int32), "d": _Col(np.int64),
                "e": _Col(np.float64)}
    assert index_expressions(condition, operands, lambda name: name != "e") == expected
