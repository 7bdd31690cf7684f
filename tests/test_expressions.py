"""``hyperslab.Expr``: numexpr expressions over on-disk arrays, against PyTables' ``Expr``
and NumPy in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numexpr as ne
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.compute import expressions

EXPRESSIONS = ["a + b", "a * 2 + sin(b)", "where(a > b, a, b) - c", "a ** 2 - c * b",
               "abs(a) + 1", "exp(-a * a) * b"]
FILTERS = [None, hyperslab.Filters(5, "blosc2:lz4", shuffle=True), hyperslab.Filters(1, "zlib")]


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 12), min_size=ndim, max_size=ndim)))
    # b broadcasts (some dimensions 1, maybe fewer dimensions); c is a scalar or an array
    b_shape = tuple(draw(st.sampled_from([1, n])) for n in shape)[draw(st.integers(0, ndim - 1)):]
    return {
        "shape": shape, "b_shape": b_shape,
        "chunks": tuple(draw(st.integers(1, n)) for n in shape),
        "filters": draw(st.sampled_from(range(len(FILTERS)))),
        "b_on_disk": draw(st.booleans()),
        "c": draw(st.sampled_from([1.5, 3, "array"])),
        "expression": draw(st.sampled_from(EXPRESSIONS)),
        "axis": draw(st.none() | st.integers(-ndim, ndim - 1)),
        "range": draw(st.tuples(st.none() | st.integers(0, shape[0]),
                                st.none() | st.integers(0, shape[0]),
                                st.none() | st.integers(1, 3))),
        "tile_bytes": draw(st.sampled_from([8, 256, expressions._TILE_BYTES])),
        "seed": draw(st.integers(0, 100)),
    }


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=_cases())
def test_expressions_match_numexpr_in_memory(tmp_path_factory: pytest.TempPathFactory,
                                             case: dict[str, Any]) -> None:
    rng = np.random.default_rng(case["seed"])
    a = rng.normal(size=case["shape"]).astype(">f8")
    b = rng.normal(size=case["b_shape"]).astype("<f4")
    c: Any = case["c"]
    if c == "array":
        c = rng.integers(-3, 3, size=case["shape"][-1:]).astype("i4")
    path = tmp_path_factory.mktemp("expr") / "e.h5"
    memory = {"a": a.astype("f8"), "b": b, "c": c}
    with pytest.MonkeyPatch.context() as patch, hyperslab.open_file(path, "w") as f:
        patch.setattr(expressions, "_TILE_BYTES", case["tile_bytes"])
        filters = FILTERS[case["filters"]]
        disk_a = f.create_carray("/", "a", obj=a, chunkshape=case["chunks"], filters=filters)
        disk_b: Any = b
        if case["b_on_disk"]:
            disk_b = f.create_carray("/", "b", obj=b, filters=filters)
        expr = hyperslab.Expr(case["expression"], uservars={"a": disk_a, "b": disk_b, "c": c})
        # PyTables' Expr on the same arrays in memory is the oracle: it is numexpr's
        # result, but where a length along dimension 0 is 1 and others are not (the
        # shortest length wins there, as in PyTables, instead of NumPy's broadcast).
        want = tables.Expr(case["expression"], uservars=memory).eval()
        if np.ndim(want) == 0 or want.shape == ne.evaluate(case["expression"],
                                                             local_dict=memory).shape:
            np.testing.assert_allclose(want, ne.evaluate(case["expression"],
                                                         local_dict=memory), rtol=1e-6)
        np.testing.assert_allclose(expr.eval(), want, rtol=1e-6)
        assert expr.dtype == want.dtype
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(expr.sum(axis=case["axis"]),
                                       want.sum(axis=case["axis"]), rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(expr.max(axis=case["axis"]), want.max(axis=case["axis"]))
        start, stop, step = case["range"]
        expr.set_inputs_range(start, stop, step)
        oracle = tables.Expr(case["expression"], uservars=memory)
        oracle.set_inputs_range(start, stop, step)
        want = oracle.eval()  # want[start:stop:step], but for PyTables' empty ranges
        np.testing.assert_allclose(expr.eval(), want, rtol=1e-6)
        oracle = tables.Expr(case["expression"], uservars=memory)  # (its eval() changes
        oracle.set_inputs_range(start, stop, step)  # what it iterates over: a fresh one)
        assert [row.tolist() for row in expr] == [row.tolist() for row in oracle]


def test_outputs_columns_and_the_callers_names(tmp_path: Path) -> None:
    data = np.zeros(300, dtype=[("x", "<f8"), ("n", "<i4")])
    data["x"] = np.linspace(0, 3, 300)
    data["n"] = np.arange(300) % 7
    with hyperslab.open_file(tmp_path / "c.h5", "w") as f:
        table = f.create_table("/", "t", obj=data, chunkshape=(32,),
                               filters=hyperslab.Filters(5, "blosc2:lz4"))
        x, n = table.cols.x, table.cols.n  # noqa: F841  (found by Expr in this frame)
        scale = 2.0
        expr = hyperslab.Expr("x * scale + n")  # names from this frame, as PyTables
        want = data["x"] * scale + data["n"]
        np.testing.assert_allclose(expr.eval(), want)
        np.testing.assert_allclose(expr.mean(), want.mean())
        out = f.create_earray("/", "o", hyperslab.Float64Atom(), (0,))
        out.truncate(300)
        expr.set_output(out)
        assert expr.eval() is out
        np.testing.assert_allclose(out[:], want)
        memory_out = np.empty(300)
        expr.set_output(memory_out)
        expr.eval()
        np.testing.assert_allclose(memory_out, want)
        short_out = np.zeros(5)  # PyTables' rule: only the rows an output holds
        expr.set_output(short_out)
        expr.eval()
        np.testing.assert_allclose(short_out, want[:5])
        expr.set_output(np.empty((300, 2)))
        with pytest.raises(ValueError, match="Shape for out container does not match"):
            expr.eval()


def test_errors_come_before_any_work(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "err.h5", "w") as f:
        a = f.create_carray("/", "a", obj=np.ones((4, 5)))
        with pytest.raises(NameError, match="'nowhere'"):
            hyperslab.Expr("a + nowhere", uservars={"a": a})
        with pytest.raises(ValueError, match="do not broadcast"):
            hyperslab.Expr("a + b", uservars={"a": a, "b": np.ones(3)})
        with pytest.raises(TypeError, match="not numeric"):
            hyperslab.Expr("a + b", uservars={"a": a, "b": np.array([b"x"])})
        with pytest.raises(ValueError, match="invalid expression"):
            hyperslab.Expr("a +", uservars={"a": a})
        expr = hyperslab.Expr("a * 2", uservars={"a": a})
        with pytest.raises(ValueError, match="positive"):
            expr.set_inputs_range(0, 4, -1)
        assert repr(expr) == "Expr('a * 2') -> shape (4, 5), dtype float64"
        assert hyperslab.Expr("x + 1", uservars={"x": 2}).eval() == 3


def _pytables_rules_script(lib: Any, path: Path) -> list[Any]:
    """What PyTables' rules for Expr give: main dimensions, the shortest length, outputs
    smaller, larger, in a range, appended to, iteration, numexpr's arguments, errors."""
    seen: list[Any] = []
    with lib.open_file(str(path), "w") as f:
        a = np.arange(24, dtype="i4").reshape(2, 3, 4)
        e1 = f.create_earray("/", "e1", atom=lib.Int32Atom(), shape=(2, 0, 4))
        e1.append(a)
        e1.append(a)  # (2, 6, 4), main dimension 1
        e2 = f.create_earray("/", "e2", atom=lib.Int32Atom(), shape=(2, 0, 4))
        e2.append(a)  # (2, 3, 4): the shortest along the main dimension
        expr = lib.Expr("2 * e1 + e2 - 1", uservars={"e1": e1, "e2": e2})
        seen += [expr.maindim, expr.eval().tolist(), [r.tolist() for r in expr]]
        expr.set_inputs_range(1, 3)
        seen.append(expr.eval().tolist())
        c = f.create_carray("/", "c", obj=np.arange(10.0))
        d = np.arange(20.0)
        out = np.zeros(14)
        expr = lib.Expr("c * d", uservars={"c": c, "d": d}, optimization="moderate")
        expr.set_output(out)
        expr.set_output_range(2, 14, 2)
        expr.eval()
        seen.append(out.tolist())
        # (a fresh Expr for each output: PyTables' eval() changes the shape it keeps)
        expr = lib.Expr("c * d", uservars={"c": c, "d": d})
        small = np.zeros(4)
        expr.set_output(small)
        expr.eval()
        seen.append(small.tolist())
        app = f.create_earray("/", "app", atom=lib.Float64Atom(), shape=(0,))
        app.append([-1.0])
        expr = lib.Expr("c * d", uservars={"c": c, "d": d})
        expr.set_output(app, append_mode=True)
        expr.eval()
        seen.append(app[:].tolist())
        expr = lib.Expr("c * d", uservars={"c": c, "d": d})
        expr.set_output(np.zeros((10, 2)))
        with pytest.raises(ValueError):
            expr.eval()
        seen.append(lib.Expr("2 * x + y", uservars={"x": 3, "y": np.int16(2)}).eval().tolist())
        t = f.create_table("/", "t", {"x": lib.Int32Col(), "y": lib.Float64Col()})
        t.append([(i, i / 2) for i in range(5)])
        colout = f.create_table("/", "t2", {"r": lib.Float64Col()})
        colout.append([(0.0,)] * 5)
        expr = lib.Expr("x * y", uservars={"x": t.cols.x, "y": t.cols.y})
        expr.set_output(colout.cols.r)
        expr.eval()
        seen.append(colout.cols.r[:].tolist())
        with pytest.raises(TypeError):
            lib.Expr("t + 1", uservars={"t": t})
        with pytest.raises(NotImplementedError):
            lib.Expr("u + 1", uservars={"u": np.arange(3, dtype="u8")})
        with pytest.raises(IndexError):
            lib.Expr("c * 2", uservars={"c": c}).set_output_range(0, 1)
        with pytest.raises(ValueError):
            lib.Expr("c * 2", uservars={"c": c}).set_output(np.zeros(10), append_mode=True)
    return seen


def test_pytables_rules_as_pytables(tmp_path: Path) -> None:
    ours = _pytables_rules_script(hyperslab, tmp_path / "ours.h5")
    theirs = _pytables_rules_script(tables, tmp_path / "theirs.h5")
    assert ours == theirs


def test_reductions_evaluate_tiles_into_the_threads_kept_buffer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An expression's reductions evaluate every tile into one buffer per thread (work
    keeps nothing of a tile), and eval() into fresh memory (its tiles are kept); a
    buffer numexpr refuses falls back to fresh memory."""
    data = np.linspace(0, 10, 128 * 256 * 64).reshape(128, 256, 64)  # 4 tiles of 4 MiB
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        a = f.create_carray("/", "a", obj=data, chunkshape=(4, 256, 64),
                            filters=hyperslab.Filters(5, "blosc2:lz4"))
        outs: list[Any] = []
        evaluate = ne.evaluate

        def spy(*args: Any, out: Any = None, **kwargs: Any) -> Any:
            outs.append(None if out is None else out.base if out.base is not None else out)
            return evaluate(*args, out=out, **kwargs)

        monkeypatch.setattr(expressions.ne, "evaluate", spy)
        e = hyperslab.Expr("a * 2 + sin(a)", uservars={"a": a})
        expected = data * 2 + np.sin(data)
        np.testing.assert_allclose(e.sum(axis=0), expected.sum(axis=0))
        assert len(outs) >= 4 and all(o is not None for o in outs)
        assert len({id(o) for o in outs}) <= a._engine.workers  # one buffer per thread
        outs.clear()
        np.testing.assert_allclose(e.eval(), expected)
        assert outs and all(o is None for o in outs)
        outs.clear()
        monkeypatch.setattr(expressions, "_tile_out",
                            lambda values, dtype: np.empty(3, dtype=np.int8))
        np.testing.assert_allclose(e.max(axis=(1, 2)), expected.max(axis=(1, 2)))
