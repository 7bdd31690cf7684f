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
alone that nothing matched), so PyTables' answers to those are not checked.
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

    @initialize(lib=lib_names, count=st.integers(0, 150))
    def create(self, lib: str, count: int) -> None:
        self.records = self._next_rows(count)
        with self._open(lib, "w") as f:
            table = f.create_table("/", "t", DTYPE, chunkshape=(CHUNKROWS,))
            table.append(self.records)

    # ------------------------------------------------------------------ changes
    @rule(lib=lib_names, column=st.sampled_from(COLUMNS), kind=st.sampled_from(KINDS),
          optlevel=st.sampled_from([0, 3, 6, 9]), blocksizes=st.sampled_from(BLOCKSIZES))
    def create_index(self, lib: str, column: str, kind: str, optlevel: int,
                     blocksizes: Any) -> None:
        if column in self.indexed:
            return
        with self._open(lib, "a") as f, warnings.catch_warnings():
            warnings.filterwarnings("ignore", "OPSI was not able", UserWarning)
            f.root.t.cols._f_col(column).create_index(kind=kind, optlevel=optlevel,
                                                      _blocksizes=blocksizes)
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
                    got = np.sort(table.get_where_list(condition))
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
