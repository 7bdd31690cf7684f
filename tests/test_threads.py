"""Threads sharing a File: one writer per node and any number of readers lose nothing and
read exact data (what a reader gets is a node before or after each change, never half of
one).  Every run is checked row by row against what was appended, in hyperslab and in
PyTables and h5py after the file is closed."""

from __future__ import annotations

import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (the Blosc2 filter for h5py)
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.nodes.leaves.rwlock import ReadWriteLock

PER_APPEND = 700
"""Rows of one append: not a multiple of the chunk rows, so appends leave partial chunks."""


class Row(hyperslab.IsDescription):
    id = hyperslab.Int64Col(pos=0)
    v = hyperslab.Float64Col(pos=1)
    k = hyperslab.Int32Col(pos=2)


def rows(first: int, count: int) -> np.ndarray:
    """Rows ``first .. first + count - 1``: each row's values follow from its id."""
    ids = np.arange(first, first + count, dtype=np.int64)
    return np.rec.fromarrays([ids, ids * 0.5, (ids % 97).astype(np.int32)], names="id,v,k")


def run_threads(writer: Callable[[], None], readers: list[Callable[[threading.Event], None]]
                ) -> list[str]:
    """Run ``writer`` and the ``readers`` (until the writer is done); the errors seen."""
    done = threading.Event()
    errors: list[str] = []

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except Exception as exc:  # every failure is reported, whatever its type
                errors.append(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")

        return run

    def write() -> None:
        try:
            writer()
        finally:
            done.set()

    threads = [threading.Thread(target=guarded(write))]
    threads += [threading.Thread(target=guarded(lambda r=r: r(done))) for r in readers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hangs"
    for error in errors:
        print(error)
    return errors


def table_readers(table: Any, seed: int) -> list[Callable[[threading.Event], None]]:
    """Readers checking everything they read against the rows' formula."""

    def check(condition: bool, what: str) -> None:
        if not condition:
            raise AssertionError(what)

    def growing(done: threading.Event, body: Callable[[int, np.random.Generator], None],
                salt: int) -> None:
        rng = np.random.default_rng(seed * 10 + salt)
        last = 0
        while not done.is_set():
            n = table.nrows
            check(n >= last, f"nrows went back from {last} to {n}")
            last = n
            body(n, rng)

    def slices(done: threading.Event) -> None:
        def body(n: int, rng: np.random.Generator) -> None:
            a = int(rng.integers(0, n))
            b = min(n, a + int(rng.integers(1, 3000)))
            got = table[a:b]
            check(np.array_equal(got["id"], np.arange(a, b)), f"rows {a}:{b} differ")
            check(np.array_equal(got["v"], np.arange(a, b) * 0.5), f"v of {a}:{b} differs")
            step = int(rng.integers(2, 9))
            check(np.array_equal(table.read(a, n, step, field="id"), np.arange(a, n, step)),
                  f"rows {a}:{n}:{step} differ")
            points = np.sort(rng.integers(0, n, 20))
            check(np.array_equal(table.read_coordinates(points)["id"], points),
                  "points differ")
            check(table[n - 1]["id"] == n - 1, f"the last row of {n} differs")

        growing(done, body, 1)

    def queries(done: threading.Event) -> None:
        def body(n: int, rng: np.random.Generator) -> None:
            k = int(rng.integers(0, 97))
            found = table.read_where("k == kk", {"kk": k})["id"]  # the indexed column
            check(np.array_equal(found, np.arange(k, k + 97 * len(found), 97)),
                  f"indexed query k == {k} gives other rows")
            check(len(found) >= len(range(k, n, 97)), f"indexed query k == {k} lost rows")
            lo = float(rng.integers(0, n)) / 2
            hits = table.get_where_list("(v >= lo) & (v < lo + 300)", {"lo": lo})
            first = int(np.ceil(lo * 2))
            check(np.array_equal(hits, np.arange(first, first + len(hits))),
                  f"query on v from {lo} gives other rows")

        growing(done, body, 2)

    def iterations(done: threading.Event) -> None:
        def body(n: int, rng: np.random.Generator) -> None:
            step = int(rng.integers(1, 12))
            ids = [row["id"] for row in table.iterrows(0, n, step)]
            check(ids == list(range(0, n, step)), f"iterrows(0, {n}, {step}) differs")
            total = int(table.cols.id.sum())
            m = int((1 + np.sqrt(1 + 8 * total)) / 2)
            check(m * (m - 1) // 2 == total and m >= n,
                  f"sum of ids {total} is not that of rows 0..m-1 with m >= {n}")

        growing(done, body, 3)

    return [slices, queries, iterations]


def check_closed_file(path: Path, expected: int) -> None:
    """Row by row, in hyperslab, PyTables and h5py."""
    want = rows(0, expected)
    with hyperslab.open_file(path) as f:
        got = f.root.t[:]
        assert np.array_equal(got["id"], want["id"]) and np.array_equal(got["v"], want["v"])
        assert np.array_equal(f.root.t.read_where("k == 5")["id"], np.arange(5, expected, 97))
    with tables.open_file(path) as f:
        assert np.array_equal(f.root.t.col("id"), want["id"])
        assert np.array_equal(f.root.t.read_where("k == 5")["id"], np.arange(5, expected, 97))
    with h5py.File(path) as f:
        assert np.array_equal(f["t"]["id"], want["id"])


@pytest.mark.parametrize("complib", ["blosc2:lz4", "zlib", None])
@pytest.mark.parametrize("seed", [1, 2])
def test_appends_while_threads_read_lose_nothing(tmp_path: Path, complib: str | None,
                                                 seed: int) -> None:
    path = tmp_path / "t.h5"
    filters = hyperslab.Filters(5, complib) if complib else None
    appends = 60
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", Row, filters=filters, chunkshape=(512,))
        table.append(rows(0, PER_APPEND))
        table.cols.k.create_index()

        def writer() -> None:
            for number in range(1, appends + 1):
                if number % 3 == 0:  # row by row, through the writing thread's Row
                    row = table.row
                    for record in rows(number * PER_APPEND, PER_APPEND):
                        row["id"], row["v"], row["k"] = record
                        row.append()
                else:
                    table.append(rows(number * PER_APPEND, PER_APPEND))
                if number % 5 == 0:
                    table.flush()

        errors = run_threads(writer, table_readers(table, seed))
        assert errors == []
        assert table.nrows == (appends + 1) * PER_APPEND
    check_closed_file(path, (appends + 1) * PER_APPEND)


def test_threads_appending_to_one_table_keep_each_append_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", Row, filters=hyperslab.Filters(5, "blosc2"),
                               chunkshape=(512,))
        nthreads, appends = 3, 30

        def append_from(thread: int) -> Callable[[], None]:
            def work() -> None:
                for number in range(appends):
                    table.append(rows((thread * appends + number) * PER_APPEND, PER_APPEND))
                    row = table.row  # each thread has a Row of its own
                    row["id"] = -1 - thread
                    row.append()
            return work

        workers = [threading.Thread(target=append_from(t)) for t in range(nthreads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        ids = table.col("id")
    appended = ids[ids >= 0]
    assert np.array_equal(np.sort(appended), np.arange(nthreads * appends * PER_APPEND))
    blocks = appended.reshape(-1, PER_APPEND)  # every append is one run of rows
    assert (np.diff(blocks, axis=1) == 1).all() and (blocks[:, 0] % PER_APPEND == 0).all()
    assert sorted(ids[ids < 0].tolist()) == sorted([-1 - t for t in range(nthreads)] * appends)


@pytest.mark.parametrize("complib", ["blosc2:zstd", "zlib", None])
def test_earray_appends_while_threads_read_are_exact(tmp_path: Path,
                                                     complib: str | None) -> None:
    path = tmp_path / "e.h5"
    filters = hyperslab.Filters(5, complib) if complib else None
    width, per, appends = 3, 500, 80

    def block(first: int, count: int) -> np.ndarray:
        return (np.arange(first, first + count)[:, None] * width
                + np.arange(width)).astype(np.float64)

    with hyperslab.open_file(path, "w") as f:
        earray = f.create_earray("/", "e", hyperslab.Float64Atom(), (0, width),
                                 filters=filters, chunkshape=(300, width))
        earray.append(block(0, per))

        def writer() -> None:
            for number in range(1, appends + 1):
                earray.append(block(number * per, per))
                if number % 7 == 0:
                    earray.flush()

        def reader(done: threading.Event) -> None:
            rng = np.random.default_rng(7)
            last = 0
            while not done.is_set():
                n = earray.nrows
                assert n >= last
                last = n
                a = int(rng.integers(0, n))
                got = earray[a:]  # the shape is read with the rows
                assert len(got) >= n - a and np.array_equal(got, block(a, len(got)))
                total = float(earray.sum())  # the sum of whole appends, n rows at least
                sums = {float(block(0, m).sum()) for m in range(n, (appends + 2) * per, per)}
                assert total in sums, f"sum {total} is no sum of whole appends from {n} rows"

        errors = run_threads(writer, [reader, reader])
        assert errors == []
    with h5py.File(path) as f:
        assert np.array_equal(f["e"][:], block(0, (appends + 1) * per))


def test_a_file_is_opened_for_writing_once(tmp_path: Path) -> None:
    """A second File object of a file open for writing is refused (ValueError, PyTables'
    messages where PyTables refuses too); reading it twice is fine."""
    path = tmp_path / "f.h5"
    with hyperslab.open_file(path, "w") as f:
        f.create_array("/", "a", [1, 2, 3])
        for mode in ("r", "a", "r+", "w"):
            with pytest.raises(ValueError, match="already opened"):
                hyperslab.open_file(path, mode)
        assert f.root.a[1] == 2  # the first File is untouched
    with hyperslab.open_file(path) as first, hyperslab.open_file(path) as second:
        assert first.root.a[2] == second.root.a[2] == 3
        for mode in ("a", "r+", "w"):
            with pytest.raises(ValueError, match="already opened"):
                hyperslab.open_file(path, mode)
    with tables.open_file(path) as oracle:  # PyTables refuses the same two
        for mode in ("a", "w"):
            with pytest.raises(ValueError, match="already opened"):
                tables.open_file(path, mode)
        assert oracle.root.a[0] == 1
    with hyperslab.open_file(path, "a") as again:  # closed: opens again
        assert again.root.a[0] == 1


def test_another_process_cannot_open_a_file_being_written(tmp_path: Path) -> None:
    """HDF5's file locks: a process writing a file keeps others out, with a clear error."""
    path = tmp_path / "p.h5"
    script = (
        "import sys, hyperslab\n"
        "try:\n"
        f"    hyperslab.open_file({str(path)!r}, sys.argv[1])\n"
        "except hyperslab.HDF5ExtError as exc:\n"
        "    print('refused', exc)\n"
    )
    with hyperslab.open_file(path, "w") as f:
        f.create_array("/", "a", [1, 2, 3])
        f.flush()
        for mode in ("r", "a"):
            result = subprocess.run([sys.executable, "-c", script, mode],
                                    capture_output=True, text=True, timeout=60)
            assert result.stdout.startswith("refused"), result.stdout + result.stderr
            assert "lock" in result.stdout


def test_lock_lets_a_writer_read_and_refuses_a_reader_writing() -> None:
    lock = ReadWriteLock()
    with lock.exclusive(), lock.shared(), lock.exclusive():
        assert lock.written_by_me
    with lock.shared(), pytest.raises(RuntimeError, match="cannot write"):
        lock.acquire_exclusive()
    assert not lock.written_by_me


def test_lock_lets_pool_work_read_for_a_writer() -> None:
    """Work handed to another thread reads for its owner: no wait for the owner's lock."""
    lock = ReadWriteLock()
    seen: list[str] = []
    with lock.exclusive():
        owner = threading.get_ident()

        def task() -> None:
            with lock.shared(owner):
                seen.append("read")

        worker = threading.Thread(target=task)
        worker.start()
        worker.join(timeout=10)
        assert seen == ["read"]


def test_lock_lets_a_waiting_writer_in_before_new_readers() -> None:
    lock = ReadWriteLock()
    order: list[str] = []
    reading = threading.Event()
    release = threading.Event()

    def first_reader() -> None:
        with lock.shared():
            reading.set()
            release.wait(10)
            order.append("reader 1")

    def writer() -> None:
        with lock.exclusive():
            order.append("writer")

    def second_reader() -> None:
        with lock.shared():
            order.append("reader 2")

    threads = [threading.Thread(target=first_reader)]
    threads[0].start()
    reading.wait(10)
    threads.append(threading.Thread(target=writer))
    threads[1].start()
    while not lock._writers_waiting:  # the writer is queued
        threading.Event().wait(0.001)
    threads.append(threading.Thread(target=second_reader))
    threads[2].start()
    release.set()
    for thread in threads:
        thread.join(timeout=10)
    assert order == ["reader 1", "writer", "reader 2"]


def test_sorted_reads_during_appends_are_sorted_or_refused(tmp_path: Path) -> None:
    """A sorted read follows one state of the index: it completes in that order, or says
    that the index changed under it (RuntimeError), never mixes two orders."""
    path = tmp_path / "s.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", Row, filters=hyperslab.Filters(5, "blosc2"),
                               chunkshape=(512,))
        table.append(rows(0, 5 * PER_APPEND))
        table.cols.v.create_csindex()
        outcomes: list[str] = []

        def writer() -> None:
            for number in range(5, 40):
                table.append(rows(number * PER_APPEND, PER_APPEND))
                table.flush()

        def reader(done: threading.Event) -> None:
            while not done.is_set():
                try:
                    ids = table.read_sorted("v", field="id", step=3)
                except RuntimeError as exc:
                    assert "changed while its rows were read" in str(exc)
                    outcomes.append("refused")
                    continue
                assert np.array_equal(ids, np.arange(0, len(ids) * 3, 3))
                outcomes.append("read")

        assert run_threads(writer, [reader]) == []
        assert outcomes  # each read completed in order or was refused
        assert np.array_equal(table.read_sorted("v", field="id"), np.arange(40 * PER_APPEND))
        with pytest.raises(RuntimeError, match="changed while its rows were read"):
            for number, _row in enumerate(table.itersorted("v")):
                if number == 10:
                    table.append(rows(table.nrows, 2000))
                    table.flush()  # the index takes the new rows in: the order changes


def test_flushes_while_threads_append_to_other_leaves(tmp_path: Path) -> None:
    """File.flush from one thread while others append to their own leaves (each leaf's
    flush mark is updated only while no append to it is under way): no deadlock, every
    row there, no mark left after the close."""
    path = tmp_path / "f.h5"
    with hyperslab.open_file(path, "w") as f:
        table = f.create_table("/", "t", Row, filters=hyperslab.Filters(5, "blosc2"),
                               chunkshape=(512,))
        earray = f.create_earray("/", "e", hyperslab.Int64Atom(), (0,),
                                 filters=hyperslab.Filters(5, "zlib"), chunkshape=(400,))

        def to_table() -> None:
            for number in range(40):
                table.append(rows(number * PER_APPEND, PER_APPEND))

        def to_earray(done: threading.Event) -> None:
            first = 0
            while not done.is_set() or first < 40 * PER_APPEND:
                earray.append(np.arange(first, first + PER_APPEND))
                first += PER_APPEND

        def flusher(done: threading.Event) -> None:
            while not done.is_set():
                f.flush()

        assert run_threads(to_table, [to_earray, flusher]) == []
        total_e = earray.nrows
    with h5py.File(path) as h5:
        assert np.array_equal(h5["t"]["id"], np.arange(40 * PER_APPEND))
        assert np.array_equal(h5["e"][:], np.arange(total_e))
        assert "HS_FLUSHED_ROWS" not in h5["t"].attrs and "HS_FLUSHED_ROWS" not in h5["e"].attrs
