"""Reductions of ``leaf.to_dask()`` read and reduced in the same task (``LeafArray``).

Oracle: NumPy on the same data in memory (values and dtypes).  The fused route is checked
to be the one taken by making the plain route (the from_array getter) fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperslab
from hyperslab.nodes.files import pickling

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("distributed")

from hyperslab.compute.daskio import arrays, fused  # noqa: E402 (needs dask)

RNG = np.random.default_rng(11)
INTS = (RNG.integers(-500, 500, size=(37, 53, 29))).astype(np.int32)
FLOATS = RNG.random((37, 53, 29)).astype(np.float32)
FLOATS[3, 4, 5] = np.nan  # min and max propagate it, as NumPy's
WIDE = RNG.random((64, 64, 64))
CHUNKS = (5, 10, 7)
OPS = ["sum", "prod", "min", "max", "mean"]
AXES: list[Any] = [None, 0, 1, 2, (0, 2), -1]


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Blosc2, zlib, unfiltered and big-endian copies of the arrays (closed)."""
    path = tmp_path_factory.mktemp("fused") / "fused.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "ints", obj=INTS, chunkshape=CHUNKS,
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
        f.create_carray("/", "floats", obj=FLOATS, chunkshape=CHUNKS,
                        filters=hyperslab.Filters(5, "blosc2:zstd"))
        f.create_carray("/", "zlib", obj=INTS, chunkshape=CHUNKS,
                        filters=hyperslab.Filters(3, "zlib"))
        f.create_carray("/", "plain", obj=FLOATS, chunkshape=CHUNKS)
        f.create_carray("/", "big", obj=INTS.astype(">i4"), chunkshape=CHUNKS,
                        byteorder="big")
        sparse = f.create_carray("/", "sparse", hyperslab.Float64Atom(dflt=2.5),
                                 shape=(40, 30), chunkshape=(4, 5))
        sparse[8:12, 10:15] = 7.0  # one chunk written, the rest is the fill value
        f.create_carray("/", "wide", obj=WIDE, chunkshape=(8, 64, 64),  # read raw
                        filters=hyperslab.Filters(5, "blosc2:lz4"))
    return path


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    pickling.close_reopened_files()


@pytest.fixture
def no_plain_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dask arrays made after this read nothing through the from_array getter."""
    def fail(leaf: Any, key: Any) -> Any:
        raise AssertionError(f"read {key} of {leaf._v_pathname} through the getter")

    monkeypatch.setattr(arrays, "read_block", fail)
    monkeypatch.setattr(arrays, "read_block_here", fail)


def _small_blocks(leaf: Any) -> Any:
    with dask.config.set({"array.chunk-size": "16KiB"}):
        return leaf.to_dask()


def _check(got: Any, expected: Any, atol: float = 0.0) -> None:
    """Same dtype and shape, equal values (floats: to rounding; ``atol`` for float32 sums
    with cancellation, whose error depends on the summation order)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if np.issubdtype(expected.dtype, np.integer):
        assert np.array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=atol, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", AXES)
def test_fused_reductions_match_numpy(path: Path, no_plain_reads: None, op: str,
                                      axis: Any) -> None:
    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        for name, data in [("ints", INTS), ("floats", FLOATS), ("zlib", INTS),
                           ("plain", FLOATS), ("big", INTS)]:
            x = _small_blocks(f.get_node("/" + name))
            assert isinstance(x, fused.LeafArray) and x.numblocks == (4, 3, 3)
            _check(getattr(x, op)(axis=axis).compute(), getattr(data, op)(axis=axis))


def test_fused_arguments_as_numpy(path: Path, no_plain_reads: None) -> None:
    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        x = _small_blocks(f.root.ints)
        _check(x.sum(axis=1, keepdims=True).compute(), INTS.sum(axis=1, keepdims=True))
        _check(x.sum(dtype="f4").compute(), INTS.sum(dtype="f4"))
        _check(x.prod(axis=0, dtype=np.int8).compute(), INTS.prod(axis=0, dtype=np.int8))
        _check(x.mean(axis=(1, 2), dtype="f4").compute(), INTS.mean(axis=(1, 2), dtype="f4"))
        _check(x.max(axis=2, keepdims=True).compute(), INTS.max(axis=2, keepdims=True))
        _check(x.sum(axis=0, split_every=2).compute(), INTS.sum(axis=0))
        y = _small_blocks(f.root.sparse)
        expected = np.full((40, 30), 2.5)
        expected[8:12, 10:15] = 7.0
        for op in OPS:
            _check(getattr(y, op)(axis=0).compute(), getattr(expected, op)(axis=0))
        with pytest.raises(np.exceptions.AxisError):
            x.sum(axis=3)


def test_derived_arrays_take_dasks_route(path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """Only the leaf's own array is fused: a slice or an expression of it reads its blocks
    through the getter, and reduces them as Dask does."""
    reads: list[Any] = []
    getter = arrays.read_block_here

    def counted(leaf: Any, key: Any) -> Any:
        reads.append(key)
        return getter(leaf, key)

    monkeypatch.setattr(arrays, "read_block_here", counted)  # several blocks, native
    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        x = _small_blocks(f.root.ints)
        _check(x.sum(axis=0).compute(), INTS.sum(axis=0))
        assert reads == []
        _check(x[::2].sum(axis=0).compute(), INTS[::2].sum(axis=0))
        _check((x * 2).max().compute(), (INTS * 2).max())
        assert reads
        assert type(x[::2]) is da.Array and type(x * 2) is da.Array


def test_empty_arrays_and_out_take_dasks_route(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "e.h5", "w") as f:
        e = f.create_earray("/", "e", hyperslab.Int16Atom(), shape=(0, 6), chunkshape=(4, 6))
        x = e.to_dask()
        assert x.sum().compute(scheduler="threads") == 0
        assert x.sum(axis=0).compute(scheduler="threads").tolist() == [0] * 6
        e.append(np.ones((9, 6), dtype=np.int16))
        y = e.to_dask()
        target = da.zeros((), dtype=np.int64)
        assert int(y.sum(out=target).compute(scheduler="threads")) == 54


def test_fused_reductions_on_a_cluster_of_processes(path: Path, client: Any) -> None:
    with hyperslab.open_file(path) as f:
        x = _small_blocks(f.root.ints)
        y = _small_blocks(f.root.floats)
        got = client.compute([x.sum(axis=0), x.max(), y.mean(axis=(0, 1)), y.min(axis=2)],
                             sync=True)
    _check(got[0], INTS.sum(axis=0))
    _check(got[1], INTS.max())
    _check(got[2], FLOATS.mean(axis=(0, 1)))
    _check(got[3], FLOATS.min(axis=2))


def test_tiles_reuse_the_threads_buffer(path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """Every tile read by the tasks of one thread lands in the same buffer (no fresh
    memory per tile or per block)."""
    seen: set[int] = set()
    reader = fused.read_leaf_box

    def spy(leaf: Any, key: Any, serial: bool, buffers: Any = None, owner: Any = None
            ) -> Any:
        assert serial and buffers is fused._BUFFERS
        data = reader(leaf, key, serial, buffers, owner)
        base = data
        while base.base is not None:
            base = base.base
        seen.add(id(base))
        return data

    monkeypatch.setattr(fused, "read_leaf_box", spy)
    with hyperslab.open_file(path) as f:
        with dask.config.set({"array.chunk-size": "512KiB"}):
            x = f.root.wide.to_dask()
        assert x.numblocks == (4, 1, 1)
        _check(x.sum(axis=1).compute(scheduler="synchronous"), WIDE.sum(axis=1))
    assert len(seen) == 1


# ---------------------------------------------------------------------- Expr.to_dask
def test_expr_to_dask_values_and_reductions(path: Path, no_plain_reads: None) -> None:
    """An expression of leaves, their dask arrays and NumPy arrays, broadcast: its values
    and its reductions per block, as NumPy computes them in memory."""
    row = np.linspace(-1, 1, 29)
    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        x = _small_blocks(f.root.floats)
        e = hyperslab.Expr("a * 2 + sin(b) - r", uservars={"a": x, "b": f.root.ints,
                                                           "r": row})
        expected = e.eval()  # numexpr's dtypes; the values are NumPy's:
        np.testing.assert_allclose(expected, FLOATS * 2 + np.sin(INTS) - row, rtol=1e-6)
        with dask.config.set({"array.chunk-size": "16KiB"}):
            y = e.to_dask()
        assert isinstance(y, fused.FusedArray) and y.numblocks[0] > 1
        # Whole chunks of the first on-disk operand of the result's shape.
        assert all(all(n % c == 0 for n in sizes[:-1])
                   for sizes, c in zip(y.chunks, CHUNKS, strict=True))
        _check(y.compute(), expected)
        for op in ["sum", "min", "max", "mean"]:
            for axis in [None, 0, (1, 2)]:
                _check(getattr(y, op)(axis=axis).compute(), getattr(expected, op)(axis=axis),
                       atol=1e-3)
        small = hyperslab.Expr("a % 3 - 1", uservars={"a": f.root.ints}).to_dask()
        _check(small.prod(axis=2).compute(), (INTS % 3 - 1).prod(axis=2))
        _check(y[::3, 5].compute(), expected[::3, 5])  # derived: plain dask


def test_expr_to_dask_reduces_without_evaluating_blocks(path: Path,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    from hyperslab.compute.daskio import exprs

    def fail(spec: Any, key: Any) -> Any:
        raise AssertionError(f"block {key} evaluated whole")

    monkeypatch.setattr(exprs, "expr_block_eval", fail)
    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        y = hyperslab.Expr("a + 1", uservars={"a": f.root.wide}).to_dask(chunks=(16, 64, 64))
        _check(y.sum(axis=0).compute(), (WIDE + 1).sum(axis=0))
        with pytest.raises(AssertionError, match="evaluated whole"):
            y.compute()


def test_expr_to_dask_tasks_read_no_row_to_find_the_shape(path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The tasks know their block's shape and the result's dtype: none evaluates a first
    row to find them, as making an ``Expr`` does (the chunks of that row decoded in every
    task)."""
    from hyperslab.compute.expressions import Expr

    with hyperslab.open_file(path) as f, dask.config.set(scheduler="threads"):
        expr = hyperslab.Expr("a % 3 - 1", uservars={"a": f.root.ints})
        y = expr.to_dask(chunks=(10, 20, 29))
        calls: list[int] = []
        real = Expr._guess_shape

        def count(self: Any) -> Any:
            calls.append(1)
            return real(self)

        monkeypatch.setattr(Expr, "_guess_shape", count)
        _check(y.compute(), INTS % 3 - 1)
        _check(y.sum(axis=1).compute(), (INTS % 3 - 1).sum(axis=1))
        assert y.dtype == np.int32 and y.compute().dtype == np.int32
    assert calls == []


def test_expr_to_dask_on_a_cluster_of_processes(path: Path, client: Any) -> None:
    with hyperslab.open_file(path) as f:
        e = hyperslab.Expr("where(a > 0.5, a, 0) * b", uservars={"a": f.root.floats,
                                                                  "b": f.root.ints})
        with dask.config.set({"array.chunk-size": "16KiB"}):
            y = e.to_dask()
        got = client.compute([y.sum(axis=1), y.max(), y], sync=True)
        expected = e.eval()
    np.testing.assert_allclose(expected, np.where(FLOATS > 0.5, FLOATS, 0) * INTS, rtol=1e-6)
    _check(got[0], expected.sum(axis=1), atol=1e-3)
    _check(got[1], expected.max())
    _check(got[2], expected)


def test_expr_to_dask_refuses_what_it_cannot_cut(path: Path) -> None:
    """Scalars, table columns (Table.to_dask is their route) and ranges: clear errors."""
    with hyperslab.open_file(path) as f:
        with pytest.raises(ValueError, match="broadcast"):
            hyperslab.Expr("a + 1", uservars={"a": np.float64(2)}).to_dask()
    with hyperslab.open_file(path.with_name("t.h5"), "w") as f:
        table = f.create_table("/", "t", {"x": hyperslab.Float64Col()})
        table.append([(1.0,), (2.0,)])
        with pytest.raises(TypeError, match=r"'x' .* is Column"):
            hyperslab.Expr("x * 2", uservars={"x": table.cols.x}).to_dask()
    with hyperslab.open_file(path) as f:
        e = hyperslab.Expr("a + 1", uservars={"a": f.root.ints})
        e.set_inputs_range(2, 10)
        with pytest.raises(ValueError, match="inputs range"):
            e.to_dask()


def test_keys_are_new_for_every_opening(path: Path, client: Any) -> None:
    """Two openings of the same file give different fused keys (a scheduler that still
    holds the first opening's tasks must not run them: their nodes are closed); one
    opening gives the same keys twice."""
    names = []
    for _ in range(3):
        with hyperslab.open_file(path) as f:
            x = _small_blocks(f.root.ints)
            assert x.sum(axis=0).name == x.sum(axis=0).name
            e = hyperslab.Expr("a * 2", uservars={"a": f.root.ints}).to_dask()
            names.append((x.sum(axis=0).name, e.name, e.sum().name))
            got = client.compute([x.sum(axis=0), e.sum()], sync=True)
            _check(got[0], INTS.sum(axis=0))
            _check(got[1], (INTS * 2).sum())
    assert len({n for triple in names for n in triple}) == 9


def test_blocks_are_read_in_the_tasks_thread(path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    """Arrays of several blocks read each block in the task's own thread (Dask runs the
    tasks in parallel; the File's pool would only add threads); one block reads through
    ``leaf[key]`` as before.  Values and dtypes as NumPy's."""
    from concurrent.futures import ThreadPoolExecutor

    submit = ThreadPoolExecutor.submit
    pooled: list[Any] = []

    def spy(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        pooled.append(fn)
        return submit(self, fn, *args, **kwargs)

    with hyperslab.open_file(path) as f, dask.config.set(scheduler="synchronous"):
        with dask.config.set({"array.chunk-size": "512KiB"}):
            x = f.root.wide.to_dask()
        assert x.numblocks == (4, 1, 1)
        monkeypatch.setattr(ThreadPoolExecutor, "submit", spy)
        np.testing.assert_array_equal(x[::3, 5:60].compute(), WIDE[::3, 5:60])
        assert pooled == []  # no block went to the pool
        whole = f.root.wide.to_dask(chunks=-1)
        assert whole.numblocks == (1, 1, 1)
        np.testing.assert_array_equal(whole[::2].compute(), WIDE[::2])
        assert pooled  # the single block was decoded in the pool, as leaf[key] does
        big = _small_blocks(f.root.big)  # stored big-endian, read in native order
        got = big[:, ::2].compute()
        assert got.dtype == big.dtype and np.array_equal(got, INTS[:, ::2])
