"""kill -9 while writing: what a killed writer leaves must open in hyperslab, PyTables and
h5py, and every row it flushed must read back (see ``hyperslab/nodes/flushguard.py``).

A child (``killwriter.py``) appends to Blosc2, zlib and unfiltered tables and EArrays,
brings an index up to date, flushes, and reports the rows each flush made durable; it is
killed with SIGKILL at seeded moments: between flushes, during queries that update the
index, during flushes, and (deterministically) inside a flush after HDF5 flushed some of
its datasets.  The in-process tests check the same rules on copies of a file that is
still open for writing: a copy holds what a kill at that moment would leave.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (the Blosc2 filter for h5py)
import numpy as np
import pytest

import hyperslab
import killwriter
from hyperslab.errors import HDF5ExtError, UnflushedRowsWarning
from hyperslab.nodes.files.flushguard import MARK

WRITER = str(Path(__file__).parent / "killwriter.py")
KILLS = 16  # seeded moments; about 1.2 s each here
IN_FLUSH = ("flush:1:3", "flush:2:9", "flush:3:15", "flush:4:0", "flush:5:20")
IN_APPEND = ("append:2", "append:9", "append:23")  # n-th extent change, before its rows
WRITER_TIMEOUT = 30.0  # seconds a writer may run before the test gives up on killing it


def _run_writer(path: Path, seed: int, kill_at: str | None = None) -> list[str]:
    """Run the writer until it is killed; return its messages."""
    rng = random.Random(seed)
    read_end, write_end = os.pipe()
    args = [sys.executable, WRITER, "write", str(path), str(seed), str(write_end)]
    if kill_at is not None:
        args.append(kill_at)
    child = subprocess.Popen(args, pass_fds=(write_end,))
    os.close(write_end)
    # After the first flush, within 30 ms of the n-th message saying that a flush starts
    # ('F': often during it), that a query starts ('Q': the index is brought up to date),
    # or that a flush returned ('D': often while appending); or at a random moment.
    target = rng.choice(["F", "Q", "D", "D", "time"])
    wanted = rng.randint(1, 4)
    delay = rng.uniform(0.0, 0.6 if target == "time" else 0.03)
    messages: list[str] = []
    buffer = b""
    count = 0
    killed = False
    started: float | None = None
    deadline = time.monotonic() + WRITER_TIMEOUT
    try:
        while True:
            if not select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))[0]:
                child.kill()
                pytest.fail(f"the writer was not killed in {WRITER_TIMEOUT} s: {messages[-3:]}")
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in (line.decode() for line in lines):
                messages.append(line)
                if started is None:
                    started = time.monotonic() if line.startswith("D ") else None
                elif line.startswith(target):
                    count += 1
            if killed or kill_at is not None or started is None:
                continue
            if target == "time" and time.monotonic() - started > delay:
                child.kill()  # SIGKILL
                killed = True
            elif target != "time" and count >= wanted:
                time.sleep(delay)
                child.kill()
                killed = True
    finally:
        os.close(read_end)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, messages[-3:]
    return messages


def _flushed(messages: list[str]) -> dict[str, int]:
    """Rows the last completed flush made durable, per leaf."""
    last = [m for m in messages if m.startswith("D ")][-1]
    return {k: int(v) for k, v in (item.split("=") for item in last[2:].split())}


def _read_hyperslab(path: Path, flushed: dict[str, int]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with hyperslab.open_file(path, "r") as f:
            for name, rows in flushed.items():
                node = f.get_node("/" + name)
                length = node.nrows

                def read(a: int, b: int, node: Any = node) -> Any:
                    return node.read(a, b)

                report[name] = killwriter.report_rows(name, read, rows, length)
            table = f.root.tb2
            try:
                keys = table.col("key")
                found = np.sort(table.get_where_list(killwriter.CONDITION))
                scan = np.flatnonzero((keys > 100) & (keys < 130))
                report["query"] = "same" if np.array_equal(found, scan) else "DIFFERENT"
            except HDF5ExtError:
                report["query"] = "error"
    report["warned"] = {str(w.message).split()[0].lstrip("/") for w in caught
                        if issubclass(w.category, UnflushedRowsWarning)}
    others = [w for w in caught if not issubclass(w.category, UnflushedRowsWarning)]
    assert not others, [str(w.message) for w in others]
    return report


def _read_h5py(path: Path, flushed: dict[str, int]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        for name, rows in flushed.items():
            dataset = f[name]
            length = dataset.shape[0]

            def read(a: int, b: int, dataset: Any = dataset) -> Any:
                return dataset[a:b]

            report[name] = killwriter.report_rows(name, read, rows, length)
            report[name]["mark"] = dataset.attrs.get(MARK)
    return report


def _check(kind: str, libs: dict[str, dict[str, Any]]) -> None:
    """The promises, by where the writer was killed (kind 'between' or 'flush')."""
    hs, h5 = libs["hyperslab"], libs["h5py"]
    for lib, report in libs.items():
        if lib != "h5py":  # an indexed query equals a scan (or fails: never differs)
            assert report["query"] in ("same", "error"), (lib, report)
        for name in killwriter.NODES:
            got = report[name]
            if kind == "between":  # the file is as the last flush left it
                assert got["flushed"] == got["partial"] == got["after"] == "exact", (
                    lib, name, got)
                continue
            # A flush was cut.  Flushed rows read back or fail (HDF5 wrote a chunk index
            # node ahead of the end of allocation), never as other values, but in the
            # chunk the previous flush left partly filled: HDF5 rewrote it in this flush,
            # and may have written the leaf's next chunk where it was (README, "After a
            # crash"); rows after read back, fail or hold the fill value.
            assert got["flushed"] == "exact" or got["flushed"].startswith("error"), (
                lib, name, got)
            assert got["after"] in ("exact", "fill") or got["after"].startswith("error"), (
                lib, name, got)
    for name in killwriter.NODES:
        mark = h5[name]["mark"]
        past_mark = mark is not None and h5[name]["rows"] > mark
        assert (name in hs["warned"]) == past_mark, (name, mark, h5[name], hs["warned"])
        if hs[name]["after"] != "exact":  # rows past the last flush that are not as
            assert name in hs["warned"], (name, hs[name])  # appended are announced
    if kind == "between":
        assert hs["query"] == "same" and libs["tables"]["query"] == "same", libs
        assert not hs["warned"], hs["warned"]


def test_kill_during_writes(tmp_path: Path) -> None:
    """SIGKILL at seeded moments: every flushed row reads back in the three libraries."""
    runs = []
    started = time.monotonic()
    for seed in range(KILLS):
        path = tmp_path / f"killed{seed}.h5"
        messages = _run_writer(path, seed)
        # After 'D' the writer only appends; after 'F' or 'Q' it may be flushing: a query
        # reads rows back, and hyperslab flushes the file before HDF5 writes chunks early.
        last = [m for m in messages if m[0] in "FDQ"][-1]
        kind = "between" if last.startswith("D") else "flush"
        runs.append((path, kind, _flushed(messages)))
    for kill_at in IN_FLUSH + IN_APPEND:
        path = tmp_path / f"killed-{kill_at.replace(':', '-')}.h5"
        messages = _run_writer(path, 7, kill_at)
        runs.append((path, "flush" if kill_at in IN_FLUSH else "between", _flushed(messages)))
    spent = time.monotonic() - started
    answer = subprocess.run(
        [sys.executable, WRITER, "tables", json.dumps([[str(p), f] for p, _, f in runs])],
        capture_output=True, text=True, timeout=300, check=True)
    pytables = [json.loads(line) for line in answer.stdout.splitlines()]
    assert len(pytables) == len(runs)
    for (path, kind, flushed), tables_report in zip(runs, pytables, strict=True):
        libs = {"hyperslab": _read_hyperslab(path, flushed),
                "h5py": _read_h5py(path, flushed), "tables": tables_report}
        _check(kind, libs)
    assert spent < 120, spent


# ---------------------------------------------------------------------- in-process
def _snapshot(path: Path, tmp_path: Path, name: str = "copy.h5") -> Path:
    """A copy of a file open for writing: what SIGKILL at this moment leaves."""
    copy = tmp_path / name
    shutil.copyfile(path, copy)
    return copy


@pytest.mark.parametrize("complib", ["blosc2:lz4", "zlib", None])
def test_between_flushes_the_file_holds_the_flushed_rows(
        tmp_path: Path, complib: str | None) -> None:
    """The issue's case: a killed writer left an EArray with rows past its last flush that
    read as zeros, and nothing said so.  A copy taken at any moment between flushes now
    shows every flushed row; any row past the mark (hyperslab may flush the file itself
    before HDF5 writes chunks early, even in the middle of an append) is as appended or
    the fill value, and announced."""
    path = tmp_path / "live.h5"
    filters = hyperslab.Filters(5, complib) if complib else None
    names = ["e0", "e1", "e2", "e3", "t"]
    with hyperslab.open_file(path, "w") as f:
        for name in names[:4]:
            f.create_earray("/", name, hyperslab.Float64Atom(), (0, 3), filters=filters,
                            chunkshape=(512, 3))
        f.create_table("/", "t", killwriter.ROW, filters=filters, chunkshape=(512,))
        f.flush()
        flushed = dict.fromkeys(names, 0)
        for step in range(12):
            for name in names:
                leaf = f.get_node("/" + name)
                leaf.append(killwriter.expected(name, leaf.nrows, leaf.nrows + 500 + 200 * step))
            copy = _snapshot(path, tmp_path)
            past = set()
            with h5py.File(copy, "r") as g:
                for name in names:
                    rows, mark = g[name].shape[0], g[name].attrs[MARK]
                    assert flushed[name] <= mark <= rows
                    np.testing.assert_array_equal(g[name][:mark],
                                                  killwriter.expected(name, 0, mark))
                    assert killwriter.classify(name, lambda a, b, d=g[name]: d[a:b], mark,
                                               rows) in ("exact", "fill")
                    if rows > mark:
                        past.add(name)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with hyperslab.open_file(copy, "r") as g:
                    for name in names:
                        assert g.get_node("/" + name).nrows >= flushed[name]
            assert {str(w.message).split()[0][1:] for w in caught} == past
            if step % 3 == 2:
                f.flush()
                flushed = {name: f.get_node("/" + name).nrows for name in names}


def test_a_leaf_flush_flushes_the_whole_file(tmp_path: Path) -> None:
    """``leaf.flush()`` writes HDF5's buffers of the whole file, as PyTables' does: one
    dataset's metadata alone reached the file ahead of the end of allocation it records,
    and h5py then refused flushed rows ('addr overflow')."""
    path = tmp_path / "live.h5"
    with hyperslab.open_file(path, "w") as f:
        a = f.create_earray("/", "a", hyperslab.Float64Atom(), (0, 3),
                            filters=hyperslab.Filters(1, "zlib"), chunkshape=(64, 3))
        b = f.create_earray("/", "b", hyperslab.Float64Atom(), (0, 3), chunkshape=(64, 3))
        for step in range(1, 6):
            a.append(killwriter.earray_rows(a.nrows, a.nrows + 1000))
            b.append(killwriter.earray_rows(b.nrows, b.nrows + 1000))
            (a if step % 2 else b).flush()
            with h5py.File(_snapshot(path, tmp_path), "r") as g:
                for name in "ab":
                    np.testing.assert_array_equal(
                        g[name][:], killwriter.earray_rows(0, step * 1000))
                    assert g[name].attrs[MARK] == step * 1000


def test_files_closed_cleanly_carry_no_mark(tmp_path: Path) -> None:
    """The marks and the indexes kept dirty exist only while the file is open."""
    path = tmp_path / "clean.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", killwriter.ROW)
        table.cols.key.create_index()
        earray = f.create_earray("/", "e", hyperslab.Float64Atom(), (0, 3))
        table.append(killwriter.table_rows(0, 3000))
        earray.append(killwriter.earray_rows(0, 100))
        f.flush()
        with h5py.File(_snapshot(path, tmp_path), "r") as g:  # while open
            assert g["t"].attrs[MARK] == 3000 and g["e"].attrs[MARK] == 100
            assert g["_i_t/key"].attrs["DIRTY"] == 1  # PyTables scans meanwhile
        assert MARK not in table.attrs._v_attrnamesuser
        assert not table.colindexes["key"].dirty  # hyperslab still uses it
        assert table.will_query_use_indexing("key == 3")
    with h5py.File(path, "r") as g:
        assert MARK not in g["t"].attrs and MARK not in g["e"].attrs
        assert g["_i_t/key"].attrs["DIRTY"] == 0
    with hyperslab.open_file(path, "a") as f:  # reopened and appended to: same again
        f.root.e.append(killwriter.earray_rows(100, 200))
    with h5py.File(path, "r") as g:
        assert MARK not in g["e"].attrs and g["e"].shape == (200, 3)


def _crashed(path: Path, marked: int, rows: int) -> None:
    """A file as a writer killed after appending ``rows - marked`` unflushed rows leaves it
    (whose extent reached the file without the chunks: they read as zeros)."""
    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "e", hyperslab.Float64Atom(), (0, 3),
                                 filters=hyperslab.Filters(5, "blosc2:lz4"))
        earray.append(killwriter.earray_rows(0, marked))
    with h5py.File(path, "r+") as g:
        g["e"].resize((rows, 3))
        g["e"].attrs[MARK] = np.int64(marked)


def test_rows_past_the_mark_are_announced(tmp_path: Path) -> None:
    """Rows past the last completed flush are shown (PyTables and h5py show them too) with
    an UnflushedRowsWarning naming them, until ``truncate`` drops them."""
    path = tmp_path / "crashed.h5"
    _crashed(path, 1500, 2000)
    for mode in ("r", "a"):
        with pytest.warns(UnflushedRowsWarning,
                          match=r"/e has 2000 rows, but only 1500 were flushed.*rows 1500 to "
                                r"1999 may hold the fill value.*truncate\(1500\)"):
            f = hyperslab.open_file(path, mode)
            assert f.root.e.nrows == 2000
        np.testing.assert_array_equal(f.root.e[:1500], killwriter.earray_rows(0, 1500))
        assert not f.root.e[1500:].any()
        f.close()
    with h5py.File(path, "r") as g:  # a clean close does not forget the rows
        assert g["e"].attrs[MARK] == 1500
    with pytest.warns(UnflushedRowsWarning):
        f = hyperslab.open_file(path, "a")
        f.root.e.append(killwriter.earray_rows(0, 10))  # appending keeps them suspect
    f.close()
    with pytest.warns(UnflushedRowsWarning, match="2010 rows, but only 1500"):
        f = hyperslab.open_file(path, "a")
        f.root.e.truncate(1500)
    f.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with hyperslab.open_file(path, "r") as f:
            np.testing.assert_array_equal(f.root.e[:], killwriter.earray_rows(0, 1500))
    with h5py.File(path, "r") as g:
        assert MARK not in g["e"].attrs


def test_a_crashed_index_is_not_used(tmp_path: Path) -> None:
    """An index kept dirty by a killed writer is never used (hyperslab and PyTables scan);
    a writable hyperslab rebuilds it."""
    path = tmp_path / "live.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", killwriter.ROW, chunkshape=(256,))
        table.cols.key.create_index()
        table.append(killwriter.table_rows(0, 5000))
        f.flush()
        copy = _snapshot(path, tmp_path, "crashed.h5")
    keys = killwriter.table_rows(0, 5000)["key"]
    scan = np.flatnonzero((keys > 100) & (keys < 130))
    with hyperslab.open_file(copy, "r") as f:
        assert not f.root.t.will_query_use_indexing(killwriter.CONDITION)
        np.testing.assert_array_equal(f.root.t.get_where_list(killwriter.CONDITION), scan)
    with hyperslab.open_file(copy, "a") as f:
        f.root.t.flush()  # autoindex: the dirty index is rebuilt
        assert f.root.t.will_query_use_indexing(killwriter.CONDITION)
        np.testing.assert_array_equal(f.root.t.get_where_list(killwriter.CONDITION), scan)
    with h5py.File(copy, "r") as g:
        assert g["_i_t/key"].attrs["DIRTY"] == 0 and MARK not in g["t"].attrs
