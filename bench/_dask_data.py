"""The ``daskbench`` benchmark's data and rivals: the files, and how each rival computes.

What :mod:`bench.daskbench` times, apart from the schedulers and the reports:

* the float64 array (:func:`write_arrays`): ``np.linspace(0, 1000, n)`` in C order, written
  slab by slab with hyperslab three times (Blosc2 LZ4, Blosc2 Zstd, no compression), with
  the same chunk shape in every file;
* the table (:func:`write_table`): a seeded frame of four numeric columns written by pandas
  on PyTables (``to_hdf(format="table", data_columns=True)``), which ``dd.read_hdf`` reads
  and hyperslab reads as the table ``/df/table``;
* each rival's computation (:data:`ARRAY_METHODS`, :data:`TABLE_METHODS`), given an open
  operand and a *scheduler* (``"threads"`` or a ``distributed.Client``): building the dask
  graph and computing it are what the benchmark times;
* the checks compared across rivals (:func:`array_check`, :func:`table_check`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STOP = 1000.0
"""The array is ``np.linspace(0, STOP, n)`` in C order."""
CLEVEL = 5
CODECS: dict[str, str | None] = {"blosc2:lz4": "lz4", "blosc2:zstd": "zstd", "none": None}
"""Codec name -> Blosc2 codec (None: no compression)."""
NODE = "a"
"""The array of every file (``/a``)."""
EXPRESSION = "a * 2 + sin(a)"
ARRAY_CASES: dict[str, int | None] = {
    "sum(axis=0)": 0,
    "sum(axis=1)": 1,
    "sum(axis=2)": 2,
    f"({EXPRESSION}).sum()": None,
}
"""Case name -> axis of the sum (None: the expression, summed in all)."""
SLAB_BYTES = 64_000_000
"""About how many bytes each write of the array covers."""

TABLE_KEY = "df"
"""pandas' key of the table (``/df/table`` in the file)."""
TABLE_NODE = f"/{TABLE_KEY}/table"
COLUMNS = ("a", "b", "c", "d")
"""The table's columns: int64 ramp, float64 uniform, float64 normal, int32."""
B_LOW, B_HIGH = 0.25, 0.30
WHERE = f"(b > {B_LOW}) & (b < {B_HIGH}) & (d > 0)"
"""The in-kernel query (hyperslab, PyTables' ``read_where``): about 2.5% of the rows."""
PANDAS_WHERE = f"b > {B_LOW} & b < {B_HIGH} & d > 0"
"""The same condition in pandas' ``where=`` syntax."""
TABLE_SEED = 2023
SIG = 6
"""Significant digits of the sums in the checks (summation orders differ)."""


# ----------------------------------------------------------------------------- files


def _rounded(value: float) -> float:
    return float(f"{value:.{SIG}g}")


def slab_rows(shape: Sequence[int], chunks: Sequence[int]) -> int:
    """Rows (along axis 0) of each write: whole chunk rows, about :data:`SLAB_BYTES`."""
    row_bytes = chunks[0] * math.prod(shape[1:]) * 8
    return chunks[0] * max(1, SLAB_BYTES // max(1, row_bytes))


def array_slab(shape: Sequence[int], lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of the array (see :data:`STOP`), made without the rest of it."""
    import numpy as np

    n, plane = math.prod(shape), math.prod(shape[1:])
    step = STOP / (n - 1) if n > 1 else 0.0
    values = np.arange(lo * plane, hi * plane, dtype=np.float64) * step
    return values.reshape((hi - lo, *shape[1:]))


def write_array(path: Path, shape: Sequence[int], chunks: Sequence[int], codec: str) -> float:
    """Write the array as the CArray ``/a`` of ``path`` with ``codec``; return the seconds."""
    import hyperslab

    name = CODECS[codec]
    filters = None if name is None else hyperslab.Filters(CLEVEL, codec, shuffle=True)
    t0 = time.perf_counter()
    with hyperslab.open_file(str(path), "w") as f:
        node = f.create_carray("/", NODE, atom=hyperslab.Float64Atom(), shape=tuple(shape),
                               chunkshape=tuple(chunks), filters=filters)
        rows = slab_rows(shape, chunks)
        for lo in range(0, shape[0], rows):
            hi = min(lo + rows, shape[0])
            node[lo:hi] = array_slab(shape, lo, hi)
    return time.perf_counter() - t0


def dask_blocks(path: Path, block_bytes: int) -> list[int]:
    """The block shape hyperslab's ``to_dask()`` picks for ``/a`` of ``path`` with Dask's
    ``array.chunk-size`` at ``block_bytes`` (whole chunks): every rival uses it."""
    import dask

    import hyperslab

    with hyperslab.open_file(str(path)) as f, dask.config.set(
        {"array.chunk-size": f"{block_bytes}B"}
    ):
        return [int(c) for c in f.get_node("/" + NODE).to_dask().chunksize]


def make_frame(nrows: int) -> Any:
    """The table's frame (seeded): see :data:`COLUMNS`."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(TABLE_SEED)
    return pd.DataFrame({
        "a": np.arange(nrows, dtype=np.int64),
        "b": rng.random(nrows),
        "c": rng.normal(size=nrows),
        "d": rng.integers(-1000, 1000, nrows, dtype=np.int32),
    })


def write_table(path: Path, nrows: int) -> tuple[int, float]:
    """Write the frame with pandas on PyTables (table format, every column a data column,
    no PyTables index, Blosc2 LZ4 level 5); return the table's chunk rows and the seconds.
    """
    import tables

    frame = make_frame(nrows)
    t0 = time.perf_counter()
    frame.to_hdf(str(path), key=TABLE_KEY, format="table", data_columns=True, index=False,
                 complevel=CLEVEL, complib="blosc2:lz4")
    seconds = time.perf_counter() - t0
    with tables.open_file(str(path)) as f:
        chunkrows = int(f.get_node(TABLE_NODE).chunkshape[0])
    return chunkrows, seconds


def partition_rows(nrows: int, chunkrows: int, partitions: int) -> int:
    """Rows of each partition: ``nrows / partitions`` (at most 1,000,000, dask's default),
    rounded up to whole table chunks."""
    rows = min(1_000_000, -(-nrows // partitions))
    return max(chunkrows, -(-rows // chunkrows) * chunkrows)


# ----------------------------------------------------------------------------- operands


class H5Reopen:
    """An h5py dataset by path: ``__getitem__`` opens the file once per process.

    The usual workaround for h5py datasets on clusters of processes: the object pickles
    as the path and the dataset name, and each process keeps one open file
    (:data:`_OPEN`).  ``shape``, ``dtype`` and ``ndim`` are what ``da.from_array`` needs.
    """

    def __init__(self, path: str, name: str, shape: Sequence[int], dtype: str) -> None:
        self.path, self.name = path, name
        self.shape, self.dtype = tuple(shape), dtype
        self.ndim = len(self.shape)

    def __getitem__(self, key: Any) -> Any:
        return _dataset(self.path, self.name)[key]

    def __reduce__(self) -> tuple[Any, ...]:
        return (H5Reopen, (self.path, self.name, self.shape, self.dtype))


_OPEN: dict[str, Any] = {}
"""Files :class:`H5Reopen` opened in this process, by path."""
_OPEN_LOCK = threading.Lock()


def _dataset(path: str, name: str) -> Any:
    with _OPEN_LOCK:
        f = _OPEN.get(path)
        if f is None:
            import h5py
            import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)

            f = _OPEN[path] = h5py.File(path, "r")
    return f[name]


def close_reopened() -> None:
    """Close the files :class:`H5Reopen` opened in this process."""
    with _OPEN_LOCK:
        for f in _OPEN.values():
            f.close()
        _OPEN.clear()


# ----------------------------------------------------------------------------- arrays


def _compute(scheduler: Any, *values: Any) -> tuple[Any, ...]:
    import dask

    return tuple(dask.compute(*values, scheduler=scheduler))


def _reduce(x: Any, axis: int | None) -> Any:
    """The dask graph of a case on the dask array ``x``."""
    import dask.array as da

    if axis is None:
        return (x * 2 + da.sin(x)).sum()
    return x.sum(axis=axis)


def array_hyperslab_dask(node: Any, axis: int | None, blocks: Sequence[int],
                         scheduler: Any) -> Any:
    """hyperslab on Dask, reduced on ``scheduler``: ``node.to_dask(chunks=blocks)
    .sum(axis=k)``, or the expression as ``hyperslab.Expr(...).to_dask(chunks=blocks)
    .sum()`` (each task evaluates its block with numexpr and sums it tile by tile)."""
    import hyperslab

    if axis is None:
        expr = hyperslab.Expr(EXPRESSION, uservars={"a": node})
        return _compute(scheduler, expr.to_dask(chunks=tuple(blocks)).sum())[0]
    return _compute(scheduler, node.to_dask(chunks=tuple(blocks)).sum(axis=axis))[0]


def array_hyperslab_dask_ops(node: Any, axis: int | None, blocks: Sequence[int],
                             scheduler: Any) -> Any:
    """``node.to_dask(chunks=blocks)`` in the same graph as the h5py rivals (the
    expression in Dask's NumPy operations), reduced on ``scheduler``."""
    return _compute(scheduler, _reduce(node.to_dask(chunks=tuple(blocks)), axis))[0]


def array_h5py_lock(dset: Any, axis: int | None, blocks: Sequence[int], scheduler: Any) -> Any:
    """``da.from_array(h5py_dataset, chunks=blocks, lock=True)``, reduced on ``scheduler``."""
    import dask.array as da

    x = da.from_array(dset, chunks=tuple(blocks), lock=True)
    return _compute(scheduler, _reduce(x, axis))[0]


def array_h5py_reopen(source: H5Reopen, axis: int | None, blocks: Sequence[int],
                      scheduler: Any) -> Any:
    """``da.from_array(H5Reopen(...), chunks=blocks)``, reduced on ``scheduler``."""
    import dask.array as da
    import numpy as np

    meta = np.empty((0,) * source.ndim, dtype=source.dtype)
    x = da.from_array(source, chunks=tuple(blocks), lock=False, meta=meta)
    return _compute(scheduler, _reduce(x, axis))[0]


def array_hyperslab_alone(node: Any, axis: int | None, blocks: Sequence[int],
                          scheduler: Any) -> Any:
    """hyperslab in this process: ``node.sum(axis=k)``, or ``hyperslab.Expr(...).sum()``."""
    import hyperslab

    if axis is None:
        return hyperslab.Expr(EXPRESSION, uservars={"a": node}).sum()
    return node.sum(axis=axis)


ArrayMethod = Callable[[Any, "int | None", Sequence[int], Any], Any]
ARRAY_METHODS: dict[str, tuple[str, ArrayMethod]] = {
    "hyperslab-dask": ("hyperslab", array_hyperslab_dask),
    "hyperslab-dask-ops": ("hyperslab", array_hyperslab_dask_ops),
    "h5py-lock": ("h5py", array_h5py_lock),
    "h5py-reopen": ("reopen", array_h5py_reopen),
    "hyperslab": ("hyperslab", array_hyperslab_alone),
}
"""Method -> (operand kind, function(operand, axis, blocks, scheduler))."""


def array_check(result: Any) -> dict[str, Any]:
    """Shape and the float sum of a result to :data:`SIG` significant digits."""
    import numpy as np

    got = np.asarray(result, dtype=np.float64)
    return {"shape": list(got.shape), "sum": _rounded(float(got.sum()))}


def expected_array_check(shape: Sequence[int], axis: int | None) -> dict[str, Any]:
    """NumPy's check of a case (the whole array in memory: tests only)."""
    import numpy as np

    data = array_slab(shape, 0, shape[0])
    result = (data * 2 + np.sin(data)).sum() if axis is None else data.sum(axis=axis)
    return array_check(result)


# ----------------------------------------------------------------------------- tables


def _aggregate(df: Any, scheduler: Any) -> Any:
    """The row count and the sums of ``a`` and ``c`` of the dask frame ``df``."""
    return _compute(scheduler, df.a.size, df.a.sum(), df.c.sum())


def table_hyperslab_dask(table: Any, path: str, rows: int, scheduler: Any) -> Any:
    """hyperslab's ``table.to_dask(where=...)``, aggregated on ``scheduler``."""
    df = table.to_dask(columns=list(COLUMNS), where=WHERE, chunksize=rows)
    return _aggregate(df, scheduler)


_PANDAS_LOCK: Any = None


def _pandas_lock() -> Any:
    """One lock per process around PyTables (it is not thread-safe), as ``dd.read_hdf``."""
    global _PANDAS_LOCK
    if _PANDAS_LOCK is None:
        from dask.utils import SerializableLock

        _PANDAS_LOCK = SerializableLock("hyperslab-bench-daskbench-pandas")
    return _PANDAS_LOCK


def read_hdf_where(part: tuple[str, int, int], lock: Any) -> Any:
    """One partition of the pushdown rival: ``pd.read_hdf(path, key, where=..., start=,
    stop=)`` (pandas runs the condition in PyTables' kernel on those rows)."""
    import pandas as pd

    path, start, stop = part
    with lock:
        return pd.read_hdf(path, TABLE_KEY, where=PANDAS_WHERE, columns=list(COLUMNS),
                           start=start, stop=stop)


def table_pandas_where(nrows: int, path: str, rows: int, scheduler: Any) -> Any:
    """``dd.from_map(read_hdf_where, partitions)``: pandas' where pushdown per partition
    (``dd.read_hdf`` has no ``where=``), aggregated on ``scheduler``."""
    import dask.dataframe as dd

    parts = [(path, lo, min(lo + rows, nrows)) for lo in range(0, nrows, rows)]
    meta = make_frame(0)
    df = dd.from_map(read_hdf_where, parts, lock=_pandas_lock(), meta=meta,
                     enforce_metadata=False)
    return _aggregate(df, scheduler)


def table_read_hdf_filter(nrows: int, path: str, rows: int, scheduler: Any) -> Any:
    """``dd.read_hdf(path, key, chunksize=rows)`` then the condition as a dask filter."""
    import dask.dataframe as dd

    df = dd.read_hdf(path, TABLE_KEY, columns=list(COLUMNS), chunksize=rows)
    df = df[(df.b > B_LOW) & (df.b < B_HIGH) & (df.d > 0)]
    return _aggregate(df, scheduler)


def table_hyperslab_alone(table: Any, path: str, rows: int, scheduler: Any) -> Any:
    """hyperslab in this process: ``table.read_where(...)``."""
    found = table.read_where(WHERE)
    return len(found), found["a"].sum(), found["c"].sum()


TableMethod = Callable[[Any, str, int, Any], Any]
TABLE_METHODS: dict[str, tuple[str, TableMethod]] = {
    "hyperslab-dask": ("hyperslab", table_hyperslab_dask),
    "pandas-where": ("nrows", table_pandas_where),
    "read_hdf-filter": ("nrows", table_read_hdf_filter),
    "hyperslab": ("hyperslab", table_hyperslab_alone),
}
"""Method -> (operand kind, function(operand, path, partition rows, scheduler))."""


def table_check(result: Sequence[Any]) -> dict[str, Any]:
    """The row count (exact) and the sums of ``a`` and ``c`` (:data:`SIG` digits)."""
    rows, sum_a, sum_c = result
    return {"rows": int(rows), "sum a": int(sum_a), "sum c": _rounded(float(sum_c))}


def expected_table_check(nrows: int) -> dict[str, Any]:
    """pandas' check of the query on the frame in memory (tests)."""
    frame = make_frame(nrows)
    hits = frame[(frame.b > B_LOW) & (frame.b < B_HIGH) & (frame.d > 0)]
    return table_check((len(hits), hits.a.sum(), hits.c.sum()))

