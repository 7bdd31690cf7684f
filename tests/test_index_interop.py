"""One file, two libraries: hyperslab and PyTables take turns changing an indexed table.

A hypothesis state machine interleaves, from either library, index creation (every kind),
appends, modifications, row removals, reindexing and autoindex changes (hyperslab also
truncates), each step in its own open and close of the file.  After every step both
libraries must report the same indexed columns (each sees the other's indexes) and answer
every query as a NumPy scan of the model does; hyperslab must answer through the index
whenever the index is clean.

PyTables' own limits are kept out of the model rather than tested: its indexed queries
miss rows of float columns holding NaN, and its ``truncate`` leaves an index untouched
(stale), so the model has no NaNs and only hyperslab truncates; and a condition on two
indexed columns, one of whose indexes keeps one sorted value in several (a reduction),
can come back empty from PyTables (``_table__where_indexed`` decides from the last index
alone that nothing matched), so PyTables' answers to those are not checked.  Two more
limits of PyTables 3.11, each reproduced on files PyTables alone wrote:

- its autoindex (``Table.flush_rows_to_index``) adds the same rows to every index of a
  table, counted in the slice size of the last one, so indexes of one table built with
  different ``_blocksizes`` drift apart (one stays at its old length, not dirty); the
  model gives every index of its table the same ``_blocksizes``, as PyTables' own tests do;
- ``Index.get_chunkmap`` of a light or ultralight index whose ``reduction`` exceeds 1
  reads its last row's indices past their end (``stops = (starts + lengths) *
  reduction``), so once the last row has shrunk (after an append completed a slice) a
  stale bucket number can fall outside the chunk map and PyTables raises ``IndexError``;
  that error is accepted from PyTables for such an index, and any answer it gives is still
  checked.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numexpr
import numpy as np
import pytest
import tables
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import hyperslab
from hyperslab.compute.indexing import search as indexed

DTYPE = np.dtype([("i", "<i4"), ("f", "<f8"), ("s", "S2")])
COLUMNS = ("i", "f", "s")
KINDS = ("ultralight", "light", "medium", "full")
BLOCKSIZES = (None, (768, 192, 48, 12))
LIBRARIES: dict[str, ModuleType] = {"hyperslab": hyperslab, "pytables": tables}
CONDITIONS = (
    "i == 3", "(i >= -5) & (i < 7)", "f > 0.5", "(f > -0.3) & (f <= 0.1)", "s == b'ab'",
    "s >= b'b'", "(i > 0) | (f < -1.0)", "(i < 2) & (s == b'a')",
)
CHUNKROWS = 20


def _rows(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.zeros(count, DTYPE)
    rows["i"] = rng.integers(-20, 20, count)
    rows["f"] = np.round(rng.normal(size=count), 3)
    rows["s"] = rng.choice([b"", b"a", b"ab", b"b", b"bz", b"z"], count)
    return rows


def _scan(records: np.ndarray, condition: str) -> np.ndarray:
    names = {name: records[name] for name in COLUMNS}
    return np.flatnonzero(numexpr.evaluate(condition, names))


lib_names = st.sampled_from(sorted(LIBRARIES))


class IndexInterop(RuleBasedStateMachine):
    """The model: the table's rows, its indexed columns and its autoindex setting."""

    path: Path
    blocksizes: Any

    def __init__(self) -> None:
        super().__init__()
        self.records = np.zeros(0, DTYPE)
        self.indexed: dict[str, str] = {}  # column -> kind
        self.autoindex = True
        self.seed = 0
        self.indexed_queries = 0

    def _open(self, lib: str, mode: str) -> Any:
        return LIBRARIES[lib].open_file(str(self.path), mode)

    def _next_rows(self, count: int) -> np.ndarray:
        self.seed += 1
        return _rows(count, self.seed)

    @initialize(lib=lib_names, count=st.integers(0, 150),
                blocksizes=st.sampled_from(BLOCKSIZES))
    def create(self, lib: str, count: int, blocksizes: Any) -> None:
        self.records = self._next_rows(count)
        self.blocksizes = blocksizes  # every index of the table: see the module docstring
        with self._open(lib, "w") as f:
            table = f.create_table("/", "t", DTYPE, chunkshape=(CHUNKROWS,))
            table.append(self.records)

    # ------------------------------------------------------------------ changes
    @rule(lib=lib_names, column=st.sampled_from(COLUMNS), kind=st.sampled_from(KINDS),
          optlevel=st.sampled_from([0, 3, 6, 9]))
    def create_index(self, lib: str, column: str, kind: str, optlevel: int) -> None:
        if column in self.indexed:
            return
        with self._open(lib, "a") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
            f.root.t.cols._f_col(column).create_index(kind=kind, optlevel=optlevel,
                                                      _blocksizes=self.blocksizes)
        self.indexed[column] = kind

    @rule(lib=lib_names, count=st.integers(1, 120))
    def append(self, lib: str, count: int) -> None:
        rows = self._next_rows(count)
        with self._open(lib, "a") as f:
            f.root.t.append(rows)
        self.records = np.concatenate([self.records, rows])

    @precondition(lambda self: len(self.records) > 0)
    @rule(lib=lib_names, column=st.sampled_from(COLUMNS), data=st.data())
    def modify_column(self, lib: str, column: str, data: st.DataObject) -> None:
        n = len(self.records)
        start = data.draw(st.integers(0, n - 1))
        stop = data.draw(st.integers(start + 1, min(n, start + 30)))
        values = self._next_rows(stop - start)[column]
        with self._open(lib, "a") as f:
            f.root.t.cols._f_col(column)[start:stop] = values
        self.records[column][start:stop] = values

    @precondition(lambda self: len(self.records) > 0)
    @rule(lib=lib_names, data=st.data())
    def modify_rows(self, lib: str, data: st.DataObject) -> None:
        n = len(self.records)
        start = data.draw(st.integers(0, n - 1))
        stop = data.draw(st.integers(start + 1, min(n, start + 10)))
        rows = self._next_rows(stop - start)
        with self._open(lib, "a") as f:
            f.root.t.modify_rows(start, stop, 1, rows)
        self.records[start:stop] = rows

    @precondition(lambda self: len(self.records) > 1)
    @rule(lib=lib_names, data=st.data())
    def remove_rows(self, lib: str, data: st.DataObject) -> None:
        n = len(self.records)
        start = data.draw(st.integers(0, n - 1))
        stop = data.draw(st.integers(start + 1, min(n, start + 40)))
        with self._open(lib, "a") as f:
            f.root.t.remove_rows(start, stop)
        self.records = np.delete(self.records, np.arange(start, stop))

    @rule(size=st.integers(0, 40))
    def truncate(self, size: int) -> None:
        """hyperslab only: PyTables' truncate leaves the indexes as they were."""
        size = min(size, len(self.records))
        with self._open("hyperslab", "a") as f:
            f.root.t.truncate(size)
        self.records = self.records[:size]

    @rule(lib=lib_names, dirty_only=st.booleans())
    def reindex(self, lib: str, dirty_only: bool) -> None:
        with self._open(lib, "a") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
            table = f.root.t
            table.reindex_dirty() if dirty_only else table.reindex()

    @rule(lib=lib_names, value=st.booleans())
    def set_autoindex(self, lib: str, value: bool) -> None:
        with self._open(lib, "a") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
            f.root.t.autoindex = value
        self.autoindex = value

    @precondition(lambda self: bool(self.indexed))
    @rule(lib=lib_names, data=st.data())
    def remove_index(self, lib: str, data: st.DataObject) -> None:
        column = data.draw(st.sampled_from(sorted(self.indexed)))
        with self._open(lib, "a") as f:
            f.root.t.cols._f_col(column).remove_index()
        del self.indexed[column]

    def _bucketed(self) -> set[str]:
        """The columns whose index keeps bucket numbers (light and ultralight)."""
        return {c for c, kind in self.indexed.items() if kind in ("ultralight", "light")}

    # ------------------------------------------------------------------ checks
    @invariant()
    def both_libraries_agree_with_a_scan(self) -> None:
        expected = {c: _scan(self.records, c) for c in CONDITIONS}
        wanted = {c: c in self.indexed for c in COLUMNS}
        used: dict[str, list[frozenset[str]]] = {}
        for lib in ("pytables", "hyperslab"):
            with self._open(lib, "r") as f:
                table = f.root.t
                assert table.nrows == len(self.records), lib
                assert table.colindexed == wanted, lib
                found = {c: table.cols._f_col(c).index for c in self.indexed}
                assert {c: index.kind for c, index in found.items()} == self.indexed, lib
                if self.autoindex:  # changes kept every index up to date
                    assert not any(index.dirty for index in found.values()), lib
                    assert all(index.nelements == len(self.records)
                               for index in found.values()), lib
                reduced = {c for c in self.indexed
                           if table.cols._f_col(c).index.reduction > 1}
                for condition in CONDITIONS:
                    columns = set(re.findall(r"\b[ifs]\b", re.sub(r"b'[^']*'", "",
                                                                     condition)))
                    if lib == "pytables" and reduced and len(columns & set(self.indexed)) > 1:
                        continue  # PyTables' own bug, see the module docstring
                    try:
                        got = np.sort(table.get_where_list(condition))
                    except IndexError:
                        if lib == "pytables" and columns & reduced & self._bucketed():
                            continue  # PyTables' own bug, see the module docstring
                        raise
                    np.testing.assert_array_equal(got, expected[condition],
                                                  err_msg=f"{lib}: {condition}")
                used[lib] = [frozenset(table.will_query_use_indexing(c))
                             for c in ("i == 3", "f > 0.5", "s == b'ab'")]
        assert used["hyperslab"] == used["pytables"]  # the same indexes, clean or dirty


TestIndexInterop = IndexInterop.TestCase
TestIndexInterop.settings = settings(
    max_examples=60, stateful_step_count=15, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _file_and_index_spy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    IndexInterop.path = tmp_path / "shared.h5"
    monkeypatch.setattr(indexed, "SCAN_SHARE", float("inf"))  # always through the index


@pytest.mark.parametrize("autoindex", [True, False])
def test_pytables_changes_reach_hyperslab_indexes(tmp_path: Path, autoindex: bool) -> None:
    """The issue's case: hyperslab indexes a column, PyTables changes 10 of its values;
    hyperslab then finds those 10 rows (PyTables rebuilt the index, or marked it dirty
    and hyperslab scans)."""
    path = tmp_path / "t.h5"
    values = np.arange(100_000, dtype=np.int64)
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", np.dtype([("a", "<i8")]))
        table.append(values.view([("a", "<i8")]))
        table.cols.a.create_index()
        table.autoindex = autoindex
    with tables.open_file(str(path), "a") as f:
        f.root.t.cols.a[0:10] = np.full(10, 5000)
    with hyperslab.open_file(path) as f:
        index = f.root.t.cols.a.index
        assert index.dirty != autoindex
        assert len(f.root.t.read_where("a == 5000")) == 11
        assert f.root.t.will_query_use_indexing("a == 5000") == (
            frozenset({"a"}) if autoindex else frozenset())


def test_hyperslab_changes_reach_pytables_indexes(tmp_path: Path) -> None:
    """The other way round: PyTables indexes, hyperslab appends and modifies; PyTables'
    indexed queries see the new rows and values."""
    path = tmp_path / "t.h5"
    with tables.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", {"a": tables.Int64Col()})
        table.append(np.arange(50_000).reshape(-1, 1).view([("a", "<i8")]).ravel())
        table.cols.a.create_index()
    with hyperslab.open_file(path, "a") as f:
        f.root.t.append(np.full(5, 7).view([("a", "<i8")]))
        f.root.t.cols.a[100:103] = np.full(3, 7)
    with tables.open_file(str(path)) as f:
        table = f.root.t
        assert table.will_query_use_indexing("a == 7") == frozenset({"a"})
        assert not table.cols.a.index.dirty
        np.testing.assert_array_equal(table.get_where_list("a == 7"),
                                      [7, 100, 101, 102, *range(50_000, 50_005)])


@pytest.mark.parametrize("lib", sorted(LIBRARIES))
def test_turning_autoindex_on_rebuilds_dirty_indexes(tmp_path: Path, lib: str) -> None:
    """Indexes left dirty while autoindex was off are rebuilt once it is on again, by the
    next flush (PyTables' Table.flush), whichever library turns it on."""
    path = tmp_path / "t.h5"
    records = _rows(300, 1)
    with tables.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", records)
        table.cols.i.create_index()
        table.autoindex = False
        table.cols.i[0:10] = np.full(10, 99)
        assert table.cols.i.index.dirty
    with LIBRARIES[lib].open_file(str(path), "a") as f:
        f.root.t.autoindex = True
    records["i"][:10] = 99
    for reader in LIBRARIES.values():
        with reader.open_file(str(path)) as f:
            assert not f.root.t.cols.i.index.dirty
            np.testing.assert_array_equal(f.root.t.get_where_list("i == 99"),
                                          _scan(records, "i == 99"))


def test_hyperslab_scans_past_an_index_pytables_left_behind(tmp_path: Path) -> None:
    """PyTables' autoindex, on a table whose indexes have different slice sizes, appends
    to one of them only and leaves the other short but clean (the module docstring):
    PyTables then answers from the short index and misses the new rows; hyperslab sees
    that the index covers fewer rows than the table and scans."""
    path = tmp_path / "t.h5"
    with tables.open_file(str(path), "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(CHUNKROWS,))
        table.append(_rows(85, 1))
        table.cols.i.create_index(kind="ultralight", optlevel=0)
        table.cols.f.create_index(kind="ultralight", optlevel=0,
                                  _blocksizes=(768, 192, 48, 12))
    with tables.open_file(str(path), "a") as f:
        f.root.t.append(_rows(107, 2))
    records = np.concatenate([_rows(85, 1), _rows(107, 2)])
    with tables.open_file(str(path)) as f:  # the limit this test guards against
        index = f.root.t.cols.i.index
        assert (index.nelements, bool(index.dirty), f.root.t.nrows) == (85, False, 192)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        assert table.will_query_use_indexing("i == 3") == frozenset()
        for condition in CONDITIONS:
            np.testing.assert_array_equal(np.sort(table.get_where_list(condition)),
                                          _scan(records, condition), err_msg=condition)


def test_hyperslab_keeps_indexes_of_different_slice_sizes_complete(tmp_path: Path) -> None:
    """hyperslab's autoindex appends to every index by its own geometry, so both indexes
    cover every row and PyTables answers right from them."""
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", DTYPE, chunkshape=(CHUNKROWS,))
        table.append(_rows(85, 1))
        table.cols.i.create_index(kind="ultralight", optlevel=0)
        table.cols.f.create_index(kind="ultralight", optlevel=0,
                                  _blocksizes=(768, 192, 48, 12))
    with hyperslab.open_file(path, "a") as f:
        f.root.t.append(_rows(107, 2))
    records = np.concatenate([_rows(85, 1), _rows(107, 2)])
    for lib in LIBRARIES.values():
        with lib.open_file(str(path)) as f:
            table = f.root.t
            assert [table.cols._f_col(c).index.nelements for c in "if"] == [192, 192]
            for condition in ("i == 3", "f > 0.5", "(f > -0.3) & (f <= 0.1)"):
                np.testing.assert_array_equal(np.sort(table.get_where_list(condition)),
                                              _scan(records, condition), err_msg=condition)


def test_hyperslab_reads_a_reduced_light_index_pytables_cannot(tmp_path: Path) -> None:
    """A light index with reduction 2 whose last row shrank after an append: PyTables'
    get_chunkmap reads stale bucket numbers past the last row and raises IndexError (the
    module docstring); hyperslab answers from the index, exactly."""
    path = tmp_path / "t.h5"
    with tables.open_file(str(path), "w") as f, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
        table = f.create_table("/", "t", DTYPE, chunkshape=(CHUNKROWS,))
        table.append(_rows(85, 1))
        table.cols.f.create_index(kind="light", optlevel=6, _blocksizes=(768, 192, 48, 12))
    with tables.open_file(str(path), "a") as f:
        f.root.t.append(_rows(108, 3))
    records = np.concatenate([_rows(85, 1), _rows(108, 3)])
    with tables.open_file(str(path)) as f, pytest.raises(IndexError):
        f.root.t.get_where_list("f > 0.5")
    with hyperslab.open_file(path) as f:
        table = f.root.t
        assert table.cols.f.index.reduction == 2
        assert table.will_query_use_indexing("f > 0.5") == frozenset({"f"})
        np.testing.assert_array_equal(np.sort(table.get_where_list("f > 0.5")),
                                      _scan(records, "f > 0.5"))
