"""Table behaviour: appends, reads, iteration, columns, modifications, against NumPy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (h5py reads the Blosc2 tables)
import numpy as np
import pytest
import tables
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab import Filters

FILTERS = {
    "none": None,
    "zlib": Filters(1, "zlib", shuffle=True),
    "lz4": Filters(5, "blosc2:lz4", shuffle=True),
    "zstd": Filters(5, "blosc2:zstd", shuffle=True),
}

DTYPE = np.dtype([("a", "<i4"), ("b", "<f8"), ("s", "S5"), ("c", "<i2", (2,))])


class Rec(hyperslab.IsDescription):
    a = hyperslab.Int32Col(pos=0)
    b = hyperslab.Float64Col(dflt=-1.0, pos=1)
    s = hyperslab.StringCol(5, pos=2)
    c = hyperslab.Int16Col(shape=(2,), pos=3)


def records(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.zeros(n, dtype=DTYPE)
    data["a"] = np.arange(n)
    data["b"] = rng.normal(size=n)
    data["s"] = [f"r{i % 1000}".encode() for i in range(n)]
    data["c"] = rng.integers(-100, 100, size=(n, 2))
    return data


@pytest.fixture(params=list(FILTERS))
def table_file(request, tmp_path):
    path = tmp_path / f"t_{request.param}.h5"
    data = records(1000)
    with hyperslab.open_file(path, "w") as f:
        t = f.create_table("/", "t", Rec, "a title", filters=FILTERS[request.param],
                           chunkshape=(64,))
        t.append(data[:500])
        t.append(data[500:])
    return path, data


@pytest.mark.parametrize("filters", ["none", "lz4"])
def test_nrows_attribute_follows_appends(tmp_path, filters):
    """NROWS is written on flush and close, and is current whenever the attributes are
    looked at; h5py sees it after ``flush``."""
    path = tmp_path / "nrows.h5"
    data = records(300)
    with hyperslab.open_file(path, "w") as f:
        t = f.create_table("/", "t", Rec, chunkshape=(64,), filters=FILTERS[filters])
        t.append(data[:100])
        assert t.attrs.NROWS == 100
        t.append(data[100:250])
        assert t._v_attrs.NROWS == t.nrows == 250
        t.append(data[250:])
        f.flush()
        with h5py.File(path, "r") as h5:
            assert h5["t"].attrs["NROWS"] == 300
        t.append(data[:10])  # written by close
    with tables.open_file(path) as f:
        assert f.root.t.attrs.NROWS == f.root.t.nrows == 310


@settings(max_examples=30, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(0, 150), st.sampled_from(["", "flush", "read"])),
                   min_size=1, max_size=8),
    filters=st.sampled_from(list(FILTERS)),
    byteorder=st.sampled_from(["little", "big"]),
)
def test_append_sequences_match_h5py(tmp_path_factory, steps, filters, byteorder):
    """Appends of any size, between flushes and reads: whole chunks are written raw and
    the rest waits in the buffer; what the file holds is exactly what was appended."""
    path = tmp_path_factory.mktemp("appends") / "t.h5"
    data = records(sum(n for n, _ in steps) + 1, seed=len(steps))
    done = 0
    with hyperslab.open_file(path, "w") as f:
        t = f.create_table("/", "t", Rec, chunkshape=(32,), filters=FILTERS[filters],
                           byteorder=byteorder)
        for count, then in steps:
            t.append(data[done : done + count])
            done += count
            if then == "flush":
                t.flush()
            elif then == "read":
                np.testing.assert_array_equal(t.read(), data[:done])
        assert t.nrows == done
    with h5py.File(path, "r") as h5:
        np.testing.assert_array_equal(h5["t"][...].astype(DTYPE), data[:done])
        assert h5["t"].attrs["NROWS"] == done


def test_append_and_reopen(table_file):
    path, data = table_file
    with hyperslab.open_file(path) as f:
        t = f.root.t
        assert t.nrows == len(data) == len(t)
        assert t.title == "a title"
        assert t.attrs.NROWS == len(data)
        np.testing.assert_array_equal(t.read(), data)
        assert t.colnames == ["a", "b", "s", "c"]
        assert t.coldtypes["c"] == np.dtype(("<i2", (2,)))
        assert t.rowsize == DTYPE.itemsize


@pytest.mark.parametrize("key", [
    slice(None), slice(3, 700, 7), slice(None, None, -1), slice(900, 10, -13), slice(-5, None),
    slice(5, 5), slice(2000, 3000),
])
def test_slices_match_numpy(table_file, key):
    path, data = table_file
    with hyperslab.open_file(path) as f:
        if key.step is not None and key.step < 0:  # PyTables refuses them in t[key]
            with pytest.raises(ValueError, match="step cannot be negative"):
                f.root.t[key]
            np.testing.assert_array_equal(f.root.t.read(key.start, key.stop, key.step),
                                          data[key])
        else:
            np.testing.assert_array_equal(f.root.t[key], data[key])


def test_items_coordinates_and_masks(table_file):
    path, data = table_file
    with hyperslab.open_file(path) as f:
        t = f.root.t
        assert t[7] == data[7]
        assert t[-1] == data[-1]
        with pytest.raises(IndexError, match="1000"):
            t[1000]
        coords = [999, 3, 3, 500, 64, 63]
        np.testing.assert_array_equal(t[coords], data[coords])
        np.testing.assert_array_equal(t.read_coordinates(coords, field="b"), data["b"][coords])
        mask = data["a"] % 3 == 0
        np.testing.assert_array_equal(t[mask], data[mask])


def test_read_fields_and_out(table_file):
    path, data = table_file
    with hyperslab.open_file(path) as f:
        t = f.root.t
        np.testing.assert_array_equal(t.read(10, 300, 4, field="c"), data["c"][10:300:4])
        out = np.empty(100, dtype=DTYPE)
        assert t.read(100, 200, out=out) is out
        np.testing.assert_array_equal(out, data[100:200])
        with pytest.raises(ValueError, match="shape"):
            t.read(0, 10, out=np.empty(5, dtype=DTYPE))
        with pytest.raises(KeyError, match="nope"):
            t.read(field="nope")


def test_iteration_streams_rows(table_file):
    path, data = table_file
    with hyperslab.open_file(path) as f:
        t = f.root.t
        assert [r["a"] for r in t] == list(data["a"])
        got = [(r.nrow, r["b"], r["s"]) for r in t.iterrows(5, 900, 11)]
        assert got == [(i, data["b"][i], data["s"][i]) for i in range(5, 900, 11)]
        back = [r.nrow for r in t.iterrows(step=-7)]
        assert back == list(range(999, -1, -7))
        rows = t.iterrows(3)
        row = next(rows)
        assert row.fetch_all_fields() == data[3]
        np.testing.assert_array_equal(row["c"], data["c"][3])
        assert [r["a"] for r in t.itersequence([5, 1, 999])] == [5, 1, 999]


@pytest.mark.parametrize("filters", list(FILTERS))
def test_row_appends_after_a_flush_then_appends_keep_every_row(tmp_path, filters):
    """A flush stores part of a chunk; rows appended one by one then fill it up to the
    chunk's end, and an append of many rows continues from there."""
    path = tmp_path / "mixed.h5"
    data = records(1600)
    with hyperslab.open_file(path, "w") as f:
        t = f.create_table("/", "t", Rec, filters=FILTERS[filters], chunkshape=(512,))
        t.append(data[:400])
        t.flush()
        row = t.row
        for record in data[400:600]:
            row["a"], row["b"], row["s"], row["c"] = record
            row.append()
        t.append(data[600:])
        assert t.nrows == 1600
    with tables.open_file(path) as f:
        np.testing.assert_array_equal(f.root.t.read(), data)


def test_row_append_and_update(tmp_path):
    path = tmp_path / "rows.h5"
    with hyperslab.open_file(path, "w") as f:
        t = f.create_table("/", "t", Rec, filters=FILTERS["lz4"], chunkshape=(16,))
        row = t.row
        for i in range(100):
            row["a"] = i
            if i % 2:
                row["b"] = i / 2
            row["c"] = [i, -i]
            row.append()
        assert t.nrows == 100  # buffered rows count
        assert t[99]["a"] == 99
        for r in t.iterrows():
            if r["a"] % 10 == 0:
                r["s"] = b"ten"
                r.update()
    with hyperslab.open_file(path) as f:
        t = f.root.t
        data = t.read()
        np.testing.assert_array_equal(data["a"], np.arange(100))
        expected_b = np.where(np.arange(100) % 2 == 1, np.arange(100) / 2, -1.0)
        np.testing.assert_array_equal(data["b"], expected_b)
        assert list(data["s"][::10]) == [b"ten"] * 10
        assert set(data["s"]) == {b"", b"ten"}


def test_unflushed_rows_survive_node_cache_eviction(tmp_path):
    path = tmp_path / "evict.h5"
    with hyperslab.open_file(path, "w", node_cache_slots=1) as f:
        f.create_table("/", "t", Rec, filters=FILTERS["zstd"], chunkshape=(64,))
        f.root.t.append(records(10))  # held back: less than a chunk
        for i in range(5):
            f.create_group("/", f"g{i}")
    with hyperslab.open_file(path) as f:
        np.testing.assert_array_equal(f.root.t.read(), records(10))


def test_cols_accessor(table_file):
    path, data = table_file
    with hyperslab.open_file(path, "a") as f:
        t = f.root.t
        np.testing.assert_array_equal(t.cols.a[:], data["a"])
        np.testing.assert_array_equal(t.cols._f_col("b")[5:50:5], data["b"][5:50:5])
        assert t.cols.c.shape == (1000, 2)
        assert t.cols.a.dtype == np.dtype("int32")
        assert t.cols.a.name == "a"
        t.cols.b[10:20] = 7.5
        t.cols.a[[0, 999]] = [-1, -2]
        t.cols.s[3] = b"xyz"
        data = data.copy()
        data["b"][10:20] = 7.5
        data["a"][[0, 999]] = [-1, -2]
        data["s"][3] = b"xyz"
        np.testing.assert_array_equal(t.read(), data)
        assert t.cols.a[999] == -2
        assert list(t.cols.a)[:3] == [-1, 1, 2]


def test_modify_and_setitem(table_file):
    path, data = table_file
    data = data.copy()
    new = records(30, seed=5)
    with hyperslab.open_file(path, "a") as f:
        t = f.root.t
        assert t.modify_rows(100, 130, 1, new) == 30
        data[100:130] = new
        assert t.modify_rows(200, None, 3, new[:10]) == 10
        data[200:230:3] = new[:10]
        t.modify_column(0, 60, 2, column=np.arange(30), colname="a")
        data["a"][0:60:2] = np.arange(30)
        t.modify_columns(5, 8, columns=[[1.0, 2.0, 3.0], [b"p", b"q", b"r"]], names=["b", "s"])
        data["b"][5:8] = [1.0, 2.0, 3.0]
        data["s"][5:8] = [b"p", b"q", b"r"]
        t[3] = new[0]
        data[3] = new[0]
        t[900:890:-2] = new[:5]
        data[900:890:-2] = new[:5]
        t[[7, 1]] = new[1:3]
        data[[7, 1]] = new[1:3]
        np.testing.assert_array_equal(t.read(), data)
        with pytest.raises(IndexError, match="exceed"):
            t.modify_rows(995, 1005, 1, new[:10])
        with pytest.raises(ValueError, match="rows"):
            t.modify_rows(0, 5, 1, new[:3])
        np.testing.assert_array_equal(t.read(), data)


@pytest.mark.parametrize(("start", "stop", "step"), [
    (10, 20, None), (0, None, 3), (995, None, None), (-10, -5, 2), (100, 100, None),
])
def test_remove_rows(table_file, start, stop, step):
    path, data = table_file
    with hyperslab.open_file(path, "a") as f:
        t = f.root.t
        removed = t.remove_rows(start, stop, step)
        keep = np.ones(len(data), bool)
        keep[slice(start, stop, step)] = False
        assert removed == (~keep).sum()
        np.testing.assert_array_equal(t.read(), data[keep])
        assert t.attrs.NROWS == keep.sum()


def test_remove_row_and_truncate(table_file):
    path, data = table_file
    with hyperslab.open_file(path, "a") as f:
        t = f.root.t
        t.remove_row(-1)
        t.truncate(600)
        np.testing.assert_array_equal(t.read(), data[:600])
        t.truncate(700)
        tail = t.read(600)
        assert len(tail) == 100
        assert (tail["b"] == -1.0).all() and (tail["a"] == 0).all()
        assert t.nrows == 700 == t.attrs.NROWS


def test_create_from_obj_dtype_and_dict(tmp_path):
    data = records(50)
    with hyperslab.open_file(tmp_path / "obj.h5", "w") as f:
        t1 = f.create_table("/", "from_obj", obj=data)
        np.testing.assert_array_equal(t1.read(), data)
        t2 = f.create_table("/", "from_dtype", DTYPE)
        assert t2.colnames == ["a", "b", "s", "c"]
        t3 = f.create_table("/", "from_dict", {"x": hyperslab.Int8Col(), "y": hyperslab.BoolCol()})
        t3.append([(1, True), (2, False)])
        assert t3.read()["y"].tolist() == [True, False]
        t4 = f.create_table("/", "big", Rec, byteorder="big")
        t4.append(data)
        assert t4.byteorder == "big"
        np.testing.assert_array_equal(t4.read(), data)
        with pytest.raises(TypeError, match="description"):
            f.create_table("/", "bad", 42)
        with pytest.raises(ValueError, match="converted"):
            t1.append([("not an int", 1.0, b"", (0, 0))])
        assert t1.nrows == 50


def test_nested_columns(tmp_path):
    class Info(hyperslab.IsDescription):
        x = hyperslab.Float32Col(pos=0)
        y = hyperslab.Int64Col(pos=1)

    class Outer(hyperslab.IsDescription):
        id = hyperslab.Int32Col(pos=0)
        info = Info()

    with hyperslab.open_file(tmp_path / "nested.h5", "w") as f:
        t = f.create_table("/", "t", Outer)
        t.append([(i, (i / 2, -i)) for i in range(20)])
        assert t.colpathnames == ["id", "info/x", "info/y"]
        np.testing.assert_array_equal(t.cols._f_col("info/y")[:], -np.arange(20))
        np.testing.assert_array_equal(t.cols.info.x[::5], np.arange(0, 20, 5) / 2)
        assert [r["info/y"] for r in t.iterrows(0, 3)] == [0, -1, -2]
        assert t.read(field="info")["x"][4] == 2.0


def _count_index_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets an item each time a chunk index is built (until monkeypatch's undo)."""
    from hyperslab.storage import rawchunks

    built: list[int] = []
    real_build = rawchunks.RawChunks._build

    def counting_build(*args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(rawchunks.RawChunks, "_build", counting_build)
    return built


def test_few_rows_of_an_unfiltered_read_only_table_are_read_raw(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few rows by coordinates (indexed queries) of a read-only unfiltered table: one
    pread each, the same bytes HDF5 gives; many rows, or a writable file, go through HDF5."""
    from hyperslab.storage import compound

    dtype = np.dtype([("a", "<i4"), ("t", "S3"), ("b", "?"), ("f", "<f8", (2,))])
    rows = np.zeros(1000, dtype)
    rows["a"] = np.arange(1000)
    rows["t"] = [b"x%d" % (i % 50) for i in range(1000)]
    rows["b"] = rows["a"] % 3 == 0
    rows["f"] = rows["a"][:, None] / 7
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", rows, chunkshape=(64,))
    coords = [999, 3, 64, 3, 500]
    from hyperslab.storage import rawchunks

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read through HDF5, or every chunk listed")

    with hyperslab.open_file(path) as f, monkeypatch.context() as patch:
        # Right after opening, a few rows need no chunk index: HDF5 finds their chunks.
        patch.setattr(rawchunks.RawChunks, "_build", refuse)
        patch.setattr(compound, "point_spaces", refuse)
        first = f.root.t.read_coordinates(coords)
    assert first.tobytes() == rows[coords].astype(first.dtype).tobytes()
    from hyperslab.storage import preads

    with hyperslab.open_file(path) as f:
        # Repeated reads ask HDF5 once per chunk; once its look-ups have cost about as
        # much as listing every chunk, the index is built.
        built = _count_index_builds(monkeypatch)
        monkeypatch.setattr(preads, "LOOKUP_BUDGET", 6)
        raw = f.root.t._dataset.raw_chunks()
        for _ in range(5):
            again = f.root.t.read_coordinates(coords)
        assert again.tobytes() == first.tobytes()
        assert raw._lookups == len({c // 64 for c in coords}) and not built
        for start in range(0, 1000, 64):  # a new chunk each time
            again = f.root.t.read_coordinates([start, start + 1])
            assert again.tobytes() == rows[[start, start + 1]].astype(again.dtype).tobytes()
        assert built == [1] and raw._lookups == 6
        monkeypatch.undo()
    with hyperslab.open_file(path) as f:
        hdf5_read = f.root.t.read_coordinates(np.arange(0, 1000, 3))  # many: through HDF5
        monkeypatch.setattr(compound, "point_spaces", refuse)
        got = f.root.t.read_coordinates(coords)
    assert got.tobytes() == rows[coords].astype(got.dtype).tobytes()
    assert hdf5_read.tobytes() == rows[::3].astype(hdf5_read.dtype).tobytes()


def test_few_rows_of_a_blosc2_read_only_table_list_no_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after opening a read-only Blosc2 table, a few rows by coordinates find their
    chunks with HDF5's look-up instead of listing every chunk first; rows of unwritten
    chunks read as the fill value, as HDF5 gives them."""
    from hyperslab.storage import rawchunks

    dtype = np.dtype([("a", "<i4"), ("f", "<f8")])
    rows = np.zeros(1000, dtype)
    rows["a"] = np.arange(1000)
    rows["f"] = rows["a"] / 7
    path = tmp_path / "t.h5"
    filters = hyperslab.Filters(5, "blosc2:lz4", shuffle=True)
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", rows, chunkshape=(64,), filters=filters)
        table.truncate(2000)  # rows 1000.. are in chunks never written
    expected = np.zeros(2000, dtype)
    expected[:1000] = rows
    coords = [999, 3, 64, 3, 500]

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("every chunk listed")

    with hyperslab.open_file(path) as f, monkeypatch.context() as patch:
        patch.setattr(rawchunks.RawChunks, "_build", refuse)
        got = f.root.t.read_coordinates(coords)
        assert got.tobytes() == expected[coords].tobytes()
        patch.undo()
        unwritten = f.root.t.read_coordinates([1500, 1999, 5])  # falls back to the index
        assert unwritten.tobytes() == expected[[1500, 1999, 5]].tobytes()
    with hyperslab.open_file(path) as f, monkeypatch.context() as patch:
        patch.setattr(rawchunks.RawChunks, "_build", refuse)  # slices (sorted tables) too
        assert f.root.t.read(100, 300).tobytes() == expected[100:300].tobytes()
        assert f.root.t[5:70:3].tobytes() == expected[5:70:3].tobytes()
    with h5py.File(path) as f:
        assert f["t"][[5, 1500, 1999]].tobytes() == expected[[5, 1500, 1999]].tobytes()


def test_runs_of_rows_of_an_unfiltered_read_only_table_are_one_read_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive rows (a sorted table's hits) are one pread per chunk they touch, found
    without listing every chunk, however many rows the run has."""
    import os

    from hyperslab.storage import rawchunks

    rows = np.zeros(1000, [("a", "<i4"), ("f", "<f8")])
    rows["a"] = np.arange(1000)
    rows["f"] = rows["a"] / 3
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", rows, chunkshape=(64,))
    reads: list[int] = []
    real_pread = os.pread

    def counted(fd: int, size: int, offset: int) -> bytes:
        reads.append(size)
        return real_pread(fd, size, offset)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("every chunk listed")

    coords = [*range(100, 200), 5, 6, 900]
    with hyperslab.open_file(path) as f, monkeypatch.context() as patch:
        patch.setattr(rawchunks.RawChunks, "_build", refuse)
        patch.setattr(os, "pread", counted)
        got = f.root.t.read_coordinates(coords)
    assert got.tobytes() == rows[coords].tobytes()
    assert len(reads) == 5  # rows 5..6; 100..127, 128..191, 192..199; 900
    assert sum(reads) == len(coords) * rows.dtype.itemsize


def test_a_slice_of_a_few_chunks_of_a_small_grid_lists_no_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing even a few chunks costs a fixed ~0.1 ms: a slice of 8 of a grid's 40 chunks,
    read right after opening, finds them with HDF5's look-ups (walking 228 entries, more
    than 4 per chunk of the grid) and builds no chunk index."""
    data = np.arange(10 * 32 * 64 * 64, dtype=np.int64).reshape(10, 32, 64, 64)
    path = tmp_path / "a.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(2, 16, 32, 32),
                        filters=Filters(5, "blosc2:lz4"))  # 5 x 2 x 2 x 2 chunks of 256 KB
    built = _count_index_builds(monkeypatch)
    with hyperslab.open_file(path) as f:
        raw = f.root.a._dataset.raw_chunks()
        np.testing.assert_array_equal(f.root.a[7], data[7])  # chunks 24 to 31
        assert raw._lookups == 8 and raw._walked == sum(range(25, 33)) and not built


def test_look_ups_stop_once_they_walked_as_much_as_an_index_costs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HDF5 finds a chunk by walking its chunk index from the start: look-ups far into a
    big table cost as much as listing every chunk, so after a few the index is built."""
    from hyperslab.storage import preads

    rows = np.zeros(2000, [("a", "<i4")])
    rows["a"] = np.arange(2000)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_table("/", "t", rows, chunkshape=(10,))  # 200 chunks
    built = _count_index_builds(monkeypatch)
    monkeypatch.setattr(preads, "LOOKUP_SCAN_FACTOR", 1)  # 200 entries walked at most
    monkeypatch.setattr(preads, "LOOKUP_SCAN_FLOOR", 0)
    with hyperslab.open_file(path) as f:
        raw = f.root.t._dataset.raw_chunks()
        for row, walked in [(1505, 151), (1006, 252)]:  # chunks 150 and 100
            assert f.root.t.read_coordinates([row])["a"].tolist() == [row]
            assert raw._walked == walked and not built
        assert f.root.t.read_coordinates([1999])["a"].tolist() == [1999]
        assert built == [1] and raw._walked == 252  # the index, not a look-up
