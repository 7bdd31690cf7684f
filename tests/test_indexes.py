"""Column indexes end to end: indexed queries equal unindexed scans, indexes follow appends
and changes, sorted reads and sorted copies, and the index nodes follow their table.

The oracle for every query is numexpr over the table's columns in memory (the scan's own
oracle in ``test_queries``), with the start/stop/step window applied the way PyTables does.
Indexed paths are forced (``SCAN_SHARE`` above 1) so that they are what is checked, and a
spy asserts that they ran.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import h5py
import numexpr as ne
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.compute import queries
from hyperslab.compute.indexing import search as indexed
from hyperslab.compute.indexing.matchcache import MatchCache
from hyperslab.compute.indexing.plan import ValueSet
from hyperslab.errors import HDF5ExtError

DTYPE = np.dtype([("i", "<i4"), ("f", "<f8"), ("s", "S3"), ("b", "?"), ("u", "<u2")])
FILTERS = {"none": None, "blosc2": hyperslab.Filters(5, "blosc2:lz4", shuffle=True)}


def _data(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.zeros(n, DTYPE)
    data["i"] = rng.integers(-20, 20, n)
    f = rng.integers(-10, 10, n).astype("f8") / 2
    f[rng.random(n) < 0.1] = np.nan
    data["f"] = f
    data["s"] = rng.choice([b"a", b"ab", b"b", b"ba", b"c", b""], n)
    data["b"] = rng.random(n) < 0.5
    data["u"] = rng.integers(0, 30, n)
    return data


@pytest.fixture
def force_index(indexed_queries: list[int], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Always take the indexed path and count the queries that took it
    (``indexed_queries``).  The match cache of read-only files is off, so that a repeated
    query takes the indexed path again (it is tested on its own)."""
    monkeypatch.setattr(queries, "match_cache", lambda table: None)
    return indexed_queries


def _same_records(got: np.ndarray, expected: np.ndarray) -> None:
    """Records equal field by field (NaNs equal, as assert_array_equal does for floats)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    for name in expected.dtype.names:  # type: ignore[union-attr]
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def _expected(data: np.ndarray, condition: str, condvars: dict[str, Any],
              window: tuple[int | None, int | None, int | None]) -> np.ndarray:
    names = {name: data[name] for name in DTYPE.names}  # type: ignore[union-attr]
    mask = ne.evaluate(condition, local_dict={**names, **condvars})
    rows = np.arange(len(data))[slice(*window)]
    return rows[mask[rows]]


_LEAVES = [
    ("i", st.integers(-22, 22)), ("f", st.sampled_from([-3.0, -0.5, 0.0, 1.5, 4.0, np.nan])),
    ("u", st.integers(-2, 32)), ("s", st.sampled_from([b"a", b"ab", b"b", b"bb", b"", b"c"])),
]
_OPS = ["<", "<=", ">", ">=", "==", "!="]


@st.composite
def _terms(draw: st.DrawFn, depth: int = 0) -> tuple[str, list[Any]]:
    """A condition with ``{}`` where its variables go, and their values in order."""
    kind = draw(st.sampled_from(["leaf", "leaf", "bool", "and", "or", "not"]
                                if depth < 3 else ["leaf", "bool"]))
    if kind == "bool":
        return draw(st.sampled_from(["b", "~b"])), []
    if kind == "leaf":
        column, values = draw(st.sampled_from(_LEAVES))
        value = draw(values)
        op = draw(st.sampled_from(_OPS if column != "s" else ["<", ">=", "==", "!="]))
        if draw(st.booleans()):
            return f"({column} {op} {{}})", [value]
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
        return f"({{}} {flipped} {column})", [value]
    if kind == "not":
        inner, values = draw(_terms(depth + 1))
        return f"~{inner}", values
    left, lvalues = draw(_terms(depth + 1))
    right, rvalues = draw(_terms(depth + 1))
    symbol = "&" if kind == "and" else "|"
    return f"({left} {symbol} {right})", lvalues + rvalues


@st.composite
def _conditions(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A condition over the columns and the variables ``v0``, ``v1``... it uses."""
    text, values = draw(_terms())
    names = [f"v{k}" for k in range(len(values))]
    return text.format(*names), dict(zip(names, values, strict=True))


def _make(path: Path, data: np.ndarray, filters: Any, chunkrows: int,
          indexed_columns: list[str], kind: str = "medium", optlevel: int = 6,
          blocksizes: tuple[int, int, int, int] | None = None) -> None:
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", DTYPE, filters=filters, chunkshape=(chunkrows,))
        table.append(data)
        for name in indexed_columns:
            table.cols._f_col(name).create_index(kind=kind, optlevel=optlevel,
                                                 _blocksizes=blocksizes)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(n=st.integers(0, 200), seed=st.integers(0, 99), codec=st.sampled_from(list(FILTERS)),
       chunkrows=st.sampled_from([7, 32, 100]),
       columns=st.lists(st.sampled_from(["i", "f", "u", "s", "b"]), unique=True, min_size=1),
       condition=_conditions(), start=st.none() | st.integers(-5, 210),
       stop=st.none() | st.integers(-5, 210), step=st.none() | st.integers(1, 4),
       kind=st.sampled_from(["ultralight", "light", "medium", "full"]),
       optlevel=st.sampled_from([0, 6, 9]),
       blocksizes=st.sampled_from([None, (96, 24, 6, 3), (64, 32, 16, 8)]))
def test_indexed_queries_equal_scans(tmp_path_factory: pytest.TempPathFactory,
                                     force_index: list[int], n: int, seed: int, codec: str,
                                     chunkrows: int, columns: list[str],
                                     condition: tuple[str, dict[str, Any]], start: int | None,
                                     stop: int | None, step: int | None, kind: str,
                                     optlevel: int,
                                     blocksizes: tuple[int, int, int, int] | None) -> None:
    """Every kind, in one slice or in many small ones (some keeping one sorted value in 4
    or 8): the same rows as a scan."""
    text, condvars = condition
    data = _data(n, seed)
    path = tmp_path_factory.mktemp("idx") / "t.h5"
    _make(path, data, FILTERS[codec], chunkrows, columns, kind, optlevel, blocksizes)
    window = (start, stop, step)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        nrows = len(data)
        if start is not None and stop is None and step is None and 0 < nrows <= start:
            return  # PyTables' rule: start alone past the end is an IndexError (tested below)
        if start is not None and stop is None and step is None:
            window = (start, nrows if start == -1 else start + 1, 1)
        expected = _expected(data, text, condvars, window)
        used = table.will_query_use_indexing(text, condvars)
        assert used <= set(columns)
        before = len(force_index)
        got = table.get_where_list(text, condvars, start=start, stop=stop, step=step)
        np.testing.assert_array_equal(got, expected, err_msg=text)
        values = table.read_where(text, condvars, field="i", start=start, stop=stop,
                                  step=step)
        np.testing.assert_array_equal(values, data["i"][expected])
        rows = [row.nrow for row in table.where(text, condvars, start, stop, step)]
        assert rows == expected.tolist()
        # The index answered all three queries whenever it applies to the condition.
        scanned_any = len(np.arange(nrows)[slice(*window)]) > 0
        assert len(force_index) - before == (3 if used and scanned_any else 0)
        if used and scanned_any and os.environ.get("HS_COUNT_INDEXED"):
            with open(os.environ["HS_COUNT_INDEXED"], "a") as log:
                log.write("1\n")
        # The same queries with the match cache of the read-only file: the first one
        # goes through the index and keeps its matches, the others read just those rows.
        cache = MatchCache()
        before = len(force_index)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(queries, "match_cache", lambda table: cache)
            got = table.get_where_list(text, condvars, start=start, stop=stop, step=step)
            values = table.read_where(text, condvars, field="i", start=start, stop=stop,
                                      step=step)
            rows = [row.nrow for row in table.where(text, condvars, start, stop, step)]
        np.testing.assert_array_equal(got, expected, err_msg=text)
        np.testing.assert_array_equal(values, data["i"][expected])
        assert rows == expected.tolist()
        indexed_now = used and scanned_any
        assert len(force_index) - before == (1 if indexed_now else 0)
        assert len(cache) == (1 if indexed_now else 0)


def test_indexed_path_is_taken(tmp_path: Path, force_index: list[int]) -> None:
    data = _data(500, 1)
    _make(tmp_path / "t.h5", data, FILTERS["blosc2"], 64, ["i", "f"])
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        table = f.root.t
        for condition in ["(i > 3) & (i <= 7)", "(f < 0) | (i == 2)", "~(f >= 1.5)",
                          "(i > 3) & (u < 10)", "i != 4"]:
            before = len(force_index)
            got = table.get_where_list(condition)
            assert len(force_index) == before + 1, condition
            np.testing.assert_array_equal(got, _expected(data, condition, {}, (None,) * 3))
        # Not indexable: a non-indexed column alone, arithmetic, an OR with a non-indexed
        # side: scans.
        for condition in ["u < 10", "(i + 1) > 3", "(i > 3) | (u < 10)"]:
            before = len(force_index)
            np.testing.assert_array_equal(table.get_where_list(condition),
                                          _expected(data, condition, {}, (None,) * 3))
            assert len(force_index) == before, condition
            assert table.will_query_use_indexing(condition) == frozenset()
        assert table.will_query_use_indexing("(i > 3) & (u < 10)") == frozenset({"i"})
        assert table.will_query_use_indexing("(i > 3) | (f < 1)") == frozenset({"i", "f"})


def test_index_properties_and_errors(tmp_path: Path) -> None:
    data = _data(300, 2)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(50,))
        table.append(data)
        assert not table.indexed and table.cols.i.index is None
        assert table.cols.i.create_index(optlevel=7, kind="light") == 300
        index = table.cols.i.index
        assert (index.optlevel, index.kind, index.is_csi, index.nelements, index.dirty) == (
            7, "light", False, 300, False)
        assert table.indexed and table.colindexed["i"] and not table.colindexed["f"]
        assert table.cols.i.is_indexed and table.indexedcolpathnames == ["i"]
        with pytest.raises(ValueError, match="already exists"):
            table.cols.i.create_index()
        with pytest.raises(ValueError, match="'fancy'"):
            table.cols.f.create_index(kind="fancy")
        with pytest.raises(ValueError, match="12"):
            table.cols.f.create_index(optlevel=12)
        table.cols.u.create_csindex()
        assert table.cols.u.index.is_csi and table.cols.u.index.kind == "full"
        table.cols.u.remove_index()
        assert not table.cols.u.is_indexed and table.cols.u.index is None
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        table = f.root.t
        assert table.colindexed == {"i": True, "f": False, "s": False, "b": False, "u": False}
        assert table.will_query_use_indexing("i < 3") == frozenset({"i"})
        with pytest.raises(hyperslab.FileModeError):
            table.cols.f.create_index()


def test_complex_column_cannot_be_indexed(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "c.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("c", "c16"), ("m", "f8", (2,)),
                                                   ("q", "u8")]))
        table.append(np.zeros(3, table.dtype))
        with pytest.raises(NotImplementedError, match="'q'"):
            table.cols.q.create_index()
        with pytest.raises(TypeError, match="'c'"):
            table.cols.c.create_index()
        with pytest.raises(TypeError, match="'m'"):
            table.cols.m.create_index()
        assert not table.indexed


@pytest.mark.parametrize("codec", list(FILTERS))
@pytest.mark.parametrize("auto", [True, False])
def test_indexes_follow_appends(tmp_path: Path, force_index: list[int], codec: str,
                                auto: bool) -> None:
    data = _data(400, 3)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", DTYPE, filters=FILTERS[codec], chunkshape=(32,))
        table.append(data[:150])
        table.cols.i.create_index()
        table.autoindex = auto
        table.append(data[150:230])
        row = table.row
        for record in data[230:]:
            for name in DTYPE.names:  # type: ignore[union-attr]
                row[name] = record[name]
            row.append()
        table.flush()
        assert table.cols.i.index.dirty is not auto
        expected = _expected(data, "(i >= -3) & (i < 5)", {}, (None,) * 3)
        np.testing.assert_array_equal(table.get_where_list("(i >= -3) & (i < 5)"), expected)
        assert table.will_query_use_indexing("i < 5") == (frozenset({"i"}) if auto
                                                          else frozenset())
        if not auto:
            table.reindex_dirty()
            assert not table.cols.i.index.dirty
        assert table.cols.i.index.nelements == 400
    with hyperslab.open_file(path) as f:
        before = len(force_index)
        np.testing.assert_array_equal(f.root.t.get_where_list("(i >= -3) & (i < 5)"),
                                      expected)
        assert len(force_index) == before + 1


@pytest.mark.parametrize("auto", [True, False])
@pytest.mark.parametrize("change", ["modify_rows", "modify_column", "setitem_coords",
                                    "row_update", "remove_rows", "truncate", "column_set"])
def test_indexes_follow_changes(tmp_path: Path, force_index: list[int], auto: bool,
                                change: str) -> None:
    data = _data(300, 4)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(40,))
        table.append(data)
        table.cols.i.create_index()
        table.autoindex = auto
        new = data.copy()
        if change == "modify_rows":
            table.modify_rows(10, 20, 1, data[200:210])
            new[10:20] = data[200:210]
        elif change == "modify_column":
            table.modify_column(5, 60, 5, np.full(11, 17, "i4"), "i")
            new["i"][5:60:5] = 17
        elif change == "setitem_coords":
            table[[3, 99, 250]] = data[:3]
            new[[3, 99, 250]] = data[:3]
        elif change == "row_update":
            for row in table.where("u < 5"):
                row["i"] = -19
                row.update()
            new["i"][new["u"] < 5] = -19
        elif change == "remove_rows":
            table.remove_rows(30, 200, 3)
            new = np.delete(new, np.arange(30, 200, 3))
        elif change == "truncate":
            table.truncate(120)
            new = new[:120]
        else:
            table.cols.i[[0, 7, 8]] = 19
            new["i"][[0, 7, 8]] = 19
        table.flush()
        if not auto:
            assert table.cols.i.index.dirty
            assert table.will_query_use_indexing("i > 3") == frozenset()
        for condition in ["i > 3", "(i == 17) | (i == -19)", "~(i < 19)"]:
            np.testing.assert_array_equal(table.get_where_list(condition),
                                          _expected(new, condition, {}, (None,) * 3))
        table.reindex_dirty()
        assert not table.cols.i.index.dirty
        assert table.cols.i.index.nelements == len(new)
        np.testing.assert_array_equal(table.get_where_list("i > 3"),
                                      _expected(new, "i > 3", {}, (None,) * 3))


def _read_sorted_window(order: np.ndarray, start: Any, stop: Any, step: Any) -> np.ndarray:
    """What PyTables' read_sorted reads of ``order`` (Index.read_indices' rules, bounds
    clipped): a start alone is one row, and a negative step takes start:stop of the
    descending order."""
    if start is not None and stop is None:
        stop = start + 1
    start, stop = (None if v is None else max(v, 0) for v in (start, stop))
    if step is not None and step < 0:
        return order[::-1][start:stop:-step]
    return order[start:stop:step]


@pytest.mark.parametrize("window", [(None, None, None), (5, 50, 3), (None, None, -1),
                                    (250, 10, -7), (-20, None, None), (3, 4, None),
                                    (7, None, 2), (10, 60, -3), (0, 400, -1)])
def test_read_sorted_and_itersorted(tmp_path: Path, window: tuple[Any, Any, Any]) -> None:
    data = _data(257, 5)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(16,),
                               filters=FILTERS["blosc2"])
        table.append(data)
        for name in ("i", "f", "s"):
            table.cols._f_col(name).create_csindex()
        for name in ("i", "f", "s"):
            full = np.argsort(data[name], kind="stable")
            _same_records(table.read_sorted(name, checkCSI=True, start=window[0],
                                            stop=window[1], step=window[2]),
                          data[_read_sorted_window(full, *window)])
            order = full[slice(*window)]  # itersorted: slice rules
            got = [row.nrow for row in table.itersorted(table.cols._f_col(name), False,
                                                        *window)]
            assert got == order.tolist()
        np.testing.assert_array_equal(table.read_sorted("i", field="u"),
                                      data["u"][np.argsort(data["i"], kind="stable")])


def test_sorting_needs_a_full_clean_index(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE)
        table.append(_data(20, 6))
        with pytest.raises(ValueError, match="'full' index"):
            table.read_sorted("i")
        table.cols.i.create_index()  # medium
        with pytest.raises(ValueError, match="'full' index"):
            table.read_sorted("i")
        table.cols.u.create_index(kind="full", optlevel=6, _blocksizes=(96, 24, 6, 3))
        table.read_sorted("u", checkCSI=True)  # a complete sort
        table.append(_data(5, 7))  # slices added after the first: no longer a CSI
        table.read_sorted("u")
        with pytest.raises(ValueError, match="CSI"):
            table.read_sorted("u", checkCSI=True)
        with pytest.raises(TypeError, match="sortby"):
            table.read_sorted(3)


@pytest.mark.parametrize("codec", list(FILTERS))
def test_copy_sortby(tmp_path: Path, codec: str) -> None:
    data = _data(333, 7)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, filters=FILTERS[codec], chunkshape=(32,))
        table.append(data)
        table.attrs.note = "kept"
        table.cols.f.create_csindex()
        table.cols.i.create_index()
        copy = table.copy("/", "sorted", sortby="f", propindexes=True)
        order = np.argsort(data["f"], kind="stable")
        _same_records(copy.read(), data[order])
        assert copy.colindexed["f"] and copy.colindexed["i"]
        assert copy.cols.f.index.is_csi and copy.attrs.note == "kept"
        desc = table.copy("/", "desc", sortby=table.cols.f, step=-2)
        _same_records(desc.read(), data[order[::-2]])
        assert not desc.indexed
        with pytest.raises(ValueError, match="'full' index"):
            table.copy("/", "bad", sortby="u")
        assert "bad" not in f.root
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        np.testing.assert_array_equal(
            f.root.sorted.get_where_list("(f > 0) & (f < 3)"),
            np.flatnonzero((data["f"][order] > 0) & (data["f"][order] < 3)))


def test_index_nodes_follow_the_table(tmp_path: Path) -> None:
    data = _data(100, 8)
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", DTYPE)
        table.append(data)
        table.cols.i.create_index()
        f.create_group("/", "g")
        visible = sorted(n._v_pathname for n in f.walk_nodes("/"))
        assert visible == ["/", "/g", "/t"]
        table.rename("t2")
        assert f.root.t2.cols.i.is_indexed
        f.move_node("/t2", "/g", "t3")
        moved = f.root.g.t3
        assert moved.cols.i.is_indexed
        np.testing.assert_array_equal(moved.get_where_list("i < 0"), np.flatnonzero(
            data["i"] < 0))
        f.create_table("/", "t2", DTYPE)  # same name as before: no index of its own
        assert not f.root.t2.indexed
    with h5py.File(path, "r") as h:
        assert sorted(h) == ["g", "t2"]
        assert sorted(h["g"]) == ["_i_t3", "t3"]
    with hyperslab.open_file(path, "a") as f:
        f.remove_node("/g/t3")
        assert f.root.g._v_nchildren == 0
    with h5py.File(path, "r") as h:
        assert list(h["g"]) == []


def test_pytables_reads_files_with_our_indexes(tmp_path: Path) -> None:
    data = _data(120, 9)
    path = tmp_path / "t.h5"
    _make(path, data, FILTERS["blosc2"], 32, ["i", "s"])
    with tables.open_file(str(path)) as f:
        assert [n._v_pathname for n in f.walk_nodes("/")] == ["/", "/t"]
        table = f.root.t
        assert table.indexed and table.indexedcolpathnames == ["i", "s"]
        assert table.will_query_use_indexing("i > 3") == frozenset({"i"})
        _same_records(table.read_where("i > 3"), data[data["i"] > 3])
        _same_records(table.read_where("s == b'ab'"), data[data["s"] == b"ab"])


def test_many_candidates_scan_unless_clustered(tmp_path: Path, index_reads: list[bool]) -> None:
    """Beyond SCAN_SHARE of the rows, spread candidates are scanned, clustered ones (a
    table sorted by the column) still read through the index; both give the scan's rows."""
    data = _data(20_000, 10)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(500,))
        table.append(data)
        table.cols.i.create_csindex()
        ordered = table.copy("/", "sorted", sortby="i", propindexes=True,
                             chunkshape=(500,))
        condition = "(i >= 0) & (i < 5)"  # about 12% of the rows, 40 chunks
        np.testing.assert_array_equal(table.get_where_list(condition),
                                      _expected(data, condition, {}, (None,) * 3))
        by_i = data[np.argsort(data["i"], kind="stable")]
        np.testing.assert_array_equal(ordered.get_where_list(condition),
                                      _expected(by_i, condition, {}, (None,) * 3))
        assert index_reads == [False, True]


def test_an_index_never_serves_another_table(tmp_path: Path) -> None:
    """PyTables renames a table (its indexes follow it) and a new table takes the old
    name: the new one has no index, the renamed one keeps ours."""
    path = tmp_path / "t.h5"
    data = _data(200, 11)
    _make(path, data, None, 32, ["i"])
    with tables.open_file(str(path), "a") as f:
        f.rename_node("/t", "renamed")
        other = f.create_table("/", "t", DTYPE)
        other.append(np.ascontiguousarray(data[::-1]))
    with hyperslab.open_file(path) as f:
        assert not f.root.t.indexed and f.root.renamed.cols.i.index.current
        np.testing.assert_array_equal(f.root.t.get_where_list("i > 3"),
                                      np.flatnonzero(data["i"][::-1] > 3))
        np.testing.assert_array_equal(f.root.renamed.get_where_list("i > 3"),
                                      np.flatnonzero(data["i"] > 3))


@pytest.mark.parametrize("change", ["modify_rows", "modify_column"])
def test_changes_while_appended_rows_wait_reach_the_index(tmp_path: Path,
                                                          force_index: list[int],
                                                          change: str) -> None:
    """Rows appended through ``row`` still wait in the buffer when earlier rows change:
    writing the buffer first must not leave the index clean but without the change."""
    data = _data(100, 12)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(16,))
        table.append(data[:60])
        table.cols.i.create_index()
        row = table.row
        for record in data[60:]:
            for name in DTYPE.names:  # type: ignore[union-attr]
                row[name] = record[name]
            row.append()  # buffered
        new = data.copy()
        if change == "modify_rows":
            table.modify_rows(0, 5, 1, data[90:95])
            new[0:5] = data[90:95]
        else:
            table.modify_column(0, 5, 1, np.full(5, 21, "i4"), "i")
            new["i"][0:5] = 21
        for condition in ["i > 15", "i == 21", "(i >= -3) & (i < 5)"]:
            np.testing.assert_array_equal(table.get_where_list(condition),
                                          _expected(new, condition, {}, (None,) * 3))


def test_read_only_queries_open_only_the_indexes_they_use(
        tmp_path: Path, force_index: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a read-only file a query opens the indexes of its own columns only (each costs
    attribute reads right after opening); listing the indexes later finds the same
    objects."""
    from hyperslab.nodes.tables import indexing as tableindex

    data = _data(400, 7)
    _make(tmp_path / "t.h5", data, FILTERS["blosc2"], 64, ["i", "f", "u"])
    opened: list[str] = []
    real_open, real_all = tableindex.open_index, tableindex.TableIndexes._find_all

    def spy(table: Any, colpath: str) -> Any:
        opened.append(colpath)
        return real_open(table, colpath)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("every index of the table opened")

    with hyperslab.open_file(tmp_path / "t.h5") as f, monkeypatch.context() as patch:
        patch.setattr(tableindex, "open_index", spy)
        patch.setattr(tableindex.TableIndexes, "_find_all", refuse)
        table = f.root.t
        for _ in range(2):
            got = table.get_where_list("(i > 3) & (i <= 7)")
            np.testing.assert_array_equal(got, _expected(data, "(i > 3) & (i <= 7)", {},
                                                         (None,) * 3))
        assert opened == ["i"]  # once
        assert table.will_query_use_indexing("(i > 3) | (s == b'a')") == frozenset()
        assert table.will_query_use_indexing("(i > 3) & (s == b'a')") == frozenset({"i"})
        assert sorted(opened) == ["i", "s"]
        assert len(force_index) == 2
        used = table._indexing._opened["i"]
        patch.setattr(tableindex.TableIndexes, "_find_all", real_all)
        assert table.colindexed == {"i": True, "f": True, "s": False, "b": False, "u": True}
        assert table._indexing.indexes["i"] is used


def test_read_only_queries_load_no_index_nodes(tmp_path: Path, force_index: list[int]) -> None:
    """On a read-only file the index is read through the storage layer: a query right
    after opening loads no node of the index group (each node costs its creation), and
    answers as the scan does; sorted reads too."""
    data = _data(400, 7)
    _make(tmp_path / "t.h5", data, FILTERS["blosc2"], 64, ["i"], kind="full")
    condition = "(i > 3) & (i <= 7)"
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        table = f.root.t
        got = table.get_where_list(condition)
        np.testing.assert_array_equal(got, _expected(data, condition, {}, (None,) * 3))
        assert len(force_index) == 1
        assert table._description_ is None  # names and dtypes suffice, not the defaults
        assert table.read_sorted("i")["i"].tolist() == sorted(data["i"].tolist())
        loaded = [node._v_pathname for node in f._cache.live_nodes()]
        assert loaded == ["/t"]


def test_an_index_without_its_arrays_is_a_clear_error(tmp_path: Path) -> None:
    """A column group that says it is a complete index but lacks an array: the query
    names what is missing instead of failing somewhere inside."""
    data = _data(100, 3)
    _make(tmp_path / "t.h5", data, None, 16, ["i"])
    with h5py.File(tmp_path / "t.h5", "a") as f:
        del f["_i_t/i/indices"]
    with hyperslab.open_file(tmp_path / "t.h5") as f:
        with pytest.raises(HDF5ExtError, match="no 'indices' dataset"):
            f.root.t.get_where_list("i > 3")


@pytest.mark.parametrize("lib", [hyperslab, tables], ids=["hyperslab", "pytables"])
def test_pytables_index_counters_and_query_switch(tmp_path: Path, lib: Any) -> None:
    """PyTables' testing hooks behave alike in both libraries: ``_indexedrows`` and
    ``_unsaved_indexedrows`` count the rows in and out of the indexes,
    ``flush_rows_to_index`` adds appended rows to clean indexes before the next flush,
    appends with ``autoindex`` off make the indexes dirty, and
    ``_disable_indexing_in_queries`` makes queries scan (same results)."""
    data = _data(400, 5)
    with lib.open_file(str(tmp_path / "t.h5"), "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(50,))
        table.append(data[:200])
        table.cols.i.create_index()
        assert (table._indexedrows, table._unsaved_indexedrows) == (200, 0)
        assert table._v_dtype == table.description._v_dtype
        table.append(data[200:300])
        assert table.flush_rows_to_index() > 0
        assert (table._indexedrows, table._unsaved_indexedrows) == (300, 0)
        assert not table.cols.i.index.dirty and table.cols.i.index.nelements == 300
        assert table.flush_rows_to_index() == 0
        expected = _expected(data[:300], "(i > 2) & (i < 9)", {}, (None,) * 3)
        assert table.will_query_use_indexing("(i > 2) & (i < 9)") == frozenset({"i"})
        table._disable_indexing_in_queries()
        assert table.will_query_use_indexing("(i > 2) & (i < 9)") == frozenset()
        np.testing.assert_array_equal(table.get_where_list("(i > 2) & (i < 9)"), expected)
        table._enable_indexing_in_queries()
        assert table.will_query_use_indexing("(i > 2) & (i < 9)") == frozenset({"i"})
        np.testing.assert_array_equal(table.get_where_list("(i > 2) & (i < 9)"), expected)
        table.autoindex = False
        table.append(data[300:])
        table.flush_rows_to_index()
        table.flush()
        assert table.cols.i.index.dirty and table.cols.i.index.nelements == 300
        assert (table._indexedrows, table._unsaved_indexedrows) == (300, 100)
        table.reindex_dirty()
    with lib.open_file(str(tmp_path / "t.h5")) as f:
        assert f.root.t._indexedrows == 400 and f.root.t._unsaved_indexedrows == 0


def test_unindexable_columns_say_so_in_pytables_words(tmp_path: Path) -> None:
    """PyTables' tests skip unindexable columns by the words "can not be indexed"."""
    with hyperslab.open_file(tmp_path / "c.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("c", "c16"), ("m", "f8", (2,))]))
        for name in ["c", "m"]:
            with pytest.raises(TypeError, match="columns can not be indexed"):
                table.cols._f_col(name).create_index()


def test_and_leaves_out_parts_that_would_remove_few_candidates(
        tmp_path: Path, force_index: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """In an ``&``, a part with more than INTERSECT_SHARE of the rows and INTERSECT_RATIO
    times the candidates of the smaller parts is not looked up (its entries are not read);
    a selective one still is; both give the scan's rows (the whole condition is evaluated
    on every candidate)."""
    looked_up: list[str] = []
    real = indexed.candidate_rows

    def spy(node: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(node, ValueSet):
            looked_up.append(node.column)
        return real(node, *args, **kwargs)

    monkeypatch.setattr(indexed, "candidate_rows", spy)
    data = _data(20_000, 11)
    data["i"] = np.arange(len(data)) // 10  # a ramp: 10 rows a value
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(500,))
        table.append(data)
        table.cols.i.create_index()  # medium: bucketed candidates
        table.cols.u.create_index()
        for condition, used in [("(i >= 100) & (i < 110) & (u < 20)", ["i"]),
                                ("(i >= 100) & (i < 200) & (u == 3)", ["u", "i"])]:
            looked_up.clear()
            before = len(force_index)
            np.testing.assert_array_equal(table.get_where_list(condition),
                                          _expected(data, condition, {}, (None,) * 3))
            assert len(force_index) == before + 1
            assert looked_up == used, condition
