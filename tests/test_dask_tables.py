"""Tables as dask dataframes: partitions of whole chunks, columns, pushed-down queries.

Oracles: PyTables writes the tables and reads them back (``read``, ``read_where``) as the
expected rows, pandas builds the expected frames.  The cluster tests share one
``LocalCluster`` of two worker processes (module scope).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import tables

import hyperslab
from hyperslab.compute.daskio.tables import partition_rows
from hyperslab.nodes.files import pickling

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

N = 1_000
CHUNK = 64


class Info(tables.IsDescription):
    x = tables.Float32Col(pos=0)
    k = tables.Int16Col(pos=1)


class Record(tables.IsDescription):
    a = tables.Int64Col(pos=0)
    b = tables.Float64Col(pos=1)
    info = Info()
    vec = tables.Float64Col(shape=(2,), pos=3)


def _rows() -> list[Any]:
    rng = np.random.default_rng(7)
    b = rng.normal(size=N)
    return [(i, b[i], (i * 0.5, i % 7), (i, -i)) for i in range(N)]


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table written by PyTables, Blosc2-compressed, with an indexed column."""
    path = tmp_path_factory.mktemp("tables") / "t.h5"
    with tables.open_file(path, "w") as f:
        t = f.create_table("/", "t", Record, chunkshape=(CHUNK,),
                           filters=tables.Filters(5, "blosc2:lz4"))
        t.append(_rows())
        t.cols.b.create_csindex()
        f.create_table("/", "empty", Record)
    return path


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    pickling.close_reopened_files()


def _expected(path: Path, columns: list[str], where: str | None = None,
              condvars: dict[str, Any] | None = None) -> pd.DataFrame:
    """The frame PyTables' rows give (index: row numbers)."""
    with tables.open_file(path) as f:
        t = f.root.t
        if where is None:
            records, index = t.read(), np.arange(t.nrows)
        else:
            records = t.read_where(where, condvars)
            index = t.get_where_list(where, condvars)
    data = {}
    for name in columns:
        value = records
        for part in name.split("/"):
            value = value[part]
        data[name] = value
    return pd.DataFrame(data, index=pd.Index(index, dtype=np.int64), columns=columns)


def _check(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


SCALARS = ["a", "b", "info/x", "info/k"]


def test_whole_table_flattened_with_known_divisions(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        df = f.root.t.to_dask(columns=["a", "b", "info"], chunksize=200)
        # 200 rows round up to 4 chunks of 64.
        assert df.divisions == (0, 256, 512, 768, N - 1)
        assert list(df.columns) == SCALARS
        assert df.npartitions == 4
        _check(df.compute(scheduler="threads"), _expected(path, SCALARS))
        # meta from the description: the dtypes the partitions have.
        assert dict(df.dtypes) == {"a": np.int64, "b": np.float64, "info/x": np.float32,
                                   "info/k": np.int16}


def test_where_pushed_into_each_partition(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        for where, condvars in [("(a % 3 == 0) & (b < 1)", None),
                                ("b > lim", {"lim": 0.5}),  # the indexed column
                                ("a < 0", None)]:
            df = f.root.t.to_dask(columns=["b", "a"], chunksize=CHUNK * 3,
                                  where=where, condvars=condvars)
            assert df.known_divisions
            _check(df.compute(scheduler="threads"),
                   _expected(path, ["b", "a"], where, condvars))


def test_nested_column_in_condition_through_condvars(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        x = f.root.t.cols.info.x
        df = f.root.t.to_dask(columns="info/k", where="x >= 400", condvars={"x": x})
        got = df.compute(scheduler="threads")
    expected = _expected(path, SCALARS).query("`info/x` >= 400")[["info/k"]]
    _check(got, expected)


def test_dask_reductions_equal_pandas(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        df = f.root.t.to_dask(columns=SCALARS, chunksize=100)
        expected = _expected(path, SCALARS)
        assert df.b.sum().compute(scheduler="threads") == pytest.approx(expected.b.sum())
        assert df.a.max().compute(scheduler="threads") == N - 1
        _check(df.loc[300:420].compute(scheduler="threads"), expected.loc[300:420])
        got = df.groupby("info/k").a.count().compute(scheduler="threads").sort_index()
        pd.testing.assert_series_equal(got, expected.groupby("info/k").a.count())


def test_default_partitions_follow_dask_chunk_size(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        t = f.root.t
        with dask.config.set({"array.chunk-size": f"{t.rowsize * CHUNK * 5}B"}):
            df = t.to_dask(columns=["a"])
        assert df.npartitions == -(-N // (CHUNK * 5))
        assert all(d % CHUNK == 0 for d in df.divisions[:-1])
        assert df.a.sum().compute(scheduler="threads") == sum(range(N))


def test_empty_table(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        df = f.root.empty.to_dask(columns=["a", "info"])
        got = df.compute(scheduler="threads")
    assert len(got) == 0 and list(got.columns) == ["a", "info/x", "info/k"]


def test_partition_rows() -> None:
    assert partition_rows(10, 4, 8, chunksize=5) == [0, 8, 10]
    assert partition_rows(8, 4, 8, chunksize=4) == [0, 4, 8]
    assert partition_rows(0, 4, 8, chunksize=4) == [0, 0]


def test_bad_arguments_say_what(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        t = f.root.t
        with pytest.raises(KeyError, match="nope"):
            t.to_dask(columns=["a", "nope"])
        with pytest.raises(ValueError, match="vec"):
            t.to_dask()  # an array column
        with pytest.raises(ValueError, match="-3"):
            t.to_dask(columns=["a"], chunksize=-3)
        with pytest.raises(NameError, match="undefined"):
            t.to_dask(columns=["a"], where="a > undefined")


def test_same_graph_same_keys_for_a_read_only_file(path: Path) -> None:
    with hyperslab.open_file(path) as f:
        one = f.root.t.to_dask(columns=["a"], where="a > 3")
        two = f.root.t.to_dask(columns=["a"], where="a > 3")
        three = f.root.t.to_dask(columns=["a"], where="a > 4")
    assert one._name == two._name != three._name


def test_on_a_cluster_of_processes(path: Path, client: Any) -> None:
    with hyperslab.open_file(path) as f:
        df = f.root.t.to_dask(columns=["a", "b", "info"], chunksize=CHUNK * 2)
        filtered = f.root.t.to_dask(columns=SCALARS, where="(b > lim) & (a % 2 == 0)",
                                    condvars={"lim": -0.25}, chunksize=CHUNK * 2)
        got, got_filtered, total = client.compute([df, filtered, df.b.sum()], sync=True)
    _check(got, _expected(path, SCALARS))
    _check(got_filtered, _expected(path, SCALARS, "(b > lim) & (a % 2 == 0)",
                                   {"lim": -0.25}))
    assert total == pytest.approx(got.b.sum())
