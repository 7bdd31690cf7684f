"""A huge extent (a damaged dataspace, or a dataset grown sparse) must not run away.

A flipped byte can give a table 2.7e14 rows.  Reading all of them (or every third) must
fail at once with a ``MemoryError`` naming the size, as NumPy and h5py fail, leaving the
file usable; reading a few of them (a long step, points) must read only what it returns
(h5py never returns from ``d[::10**11]`` there: HDF5 visits every chunk of the bounding
box); streaming reads (iteration, queries, reductions) must start at once and hold a
bounded amount of memory.  The operations run in a child process with a memory limit
and a timeout, so that a runaway fails the test instead of the machine.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

import hyperslab as hs
from hyperslab.chunked import allocation, gather, tiles
from hyperslab.chunked.gather import gather_pieces, spans_more_chunks
from hyperslab.storage.datasetinfo import DatasetInfo

HUGE = 270_000_000_000_000
ROWS = 10_000

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc")


class Rec(hs.IsDescription):
    i = hs.Int64Col()
    x = hs.Float64Col()


def _make(path: Path) -> None:
    """Tables and arrays of 10,000 rows (Blosc2, unfiltered, zlib) grown to 2.7e14 rows
    with h5py (the state a damaged extent gives), and a CArray whose dataspace message
    is patched in the file's bytes."""
    records = np.array([(i, i * 0.5) for i in range(ROWS)], dtype=[("i", "<i8"), ("x", "<f8")])
    with hs.open_file(path, "w") as f:
        for name, filters in (("t", hs.Filters(5, "blosc2")), ("tz", hs.Filters(1, "zlib"))):
            table = f.create_table("/", name, Rec, filters=filters)
            table.append(records)
        for name, filters in (("e", hs.Filters(5, "blosc2")), ("e2", None),
                              ("ez", hs.Filters(1, "zlib"))):
            f.create_earray("/", name, hs.Float64Atom(), (0,), filters=filters,
                            obj=np.arange(ROWS, dtype=np.float64))
        f.create_earray("/", "m", hs.Float64Atom(), (0, 3), filters=None,
                        obj=np.arange(3 * ROWS, dtype=np.float64).reshape(ROWS, 3))
        f.create_carray("/", "c", obj=np.arange(ROWS, dtype=np.int64), chunkshape=(1000,),
                        filters=hs.Filters(5, "blosc2"))
    with h5py.File(path, "r+") as h5:
        for name in ("t", "tz", "e", "e2", "ez"):
            h5[name].resize((HUGE,))
        h5["m"].resize((HUGE, 3))
    data = path.read_bytes()
    dims = struct.pack("<QQ", ROWS, ROWS)  # the CArray's size and maximum size
    assert data.count(dims) == 1
    at = data.index(dims)
    path.write_bytes(data[:at] + struct.pack("<QQ", HUGE, HUGE) + data[at + 16:])


CHILD = textwrap.dedent(r"""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    import numpy as np
    import hyperslab as hs

    f = hs.open_file(sys.argv[1], "r")
    n = f.root
    results = {}
    for name, expr in json.loads(sys.argv[2]):
        began = time.perf_counter()
        try:
            value = eval(expr)
            outcome = ["ok", repr(np.asarray(value).tolist()) if np.size(value) < 4
                       else [int(np.size(value)), float(np.nansum(np.asarray(value,
                                                                             dtype=float)))]]
        except Exception as exc:
            outcome = [type(exc).__name__, str(exc)]
        outcome.append(time.perf_counter() - began)
        results[name] = outcome
        print(json.dumps({name: outcome}), flush=True)
    # The file is still usable, and closes.
    check = [float(n.e[5]), int(n.t[7]["i"]), float(n.e2[9999]), int(n.c[9999])]
    f.close()
    print(json.dumps({"after": check}), flush=True)
""")


def _run(path: Path, operations: dict[str, str], timeout: float = 120) -> dict[str, list]:
    """Run each ``name: expression`` (``n`` is the root group) in a child process."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), json.dumps(list(operations.items()))],
            capture_output=True, text=True, timeout=timeout, env=dict(os.environ),
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        pytest.fail(f"the operations ran away (timeout after {timeout} s); done: {out}")
    results: dict[str, list] = {}
    for line in proc.stdout.splitlines():
        results.update(json.loads(line))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return results


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "huge.h5"
    _make(path)
    return path


TOO_BIG = {
    "table step": "n.t[::3]",
    "table all": "n.t[:]",
    "table read": "n.t.read()",
    "table read step": "n.t.read(step=2)",
    "zlib table": "n.tz[:]",
    "column": "n.t.col('i')",
    "column slice": "n.t.cols.x[::5]",
    "earray step": "n.e[::3]",
    "earray all": "n.e[:]",
    "earray read": "n.e.read()",
    "plain earray": "n.e2[::3]",
    "zlib earray": "n.ez[1:]",
    "2-d earray": "n.m[::2, 1]",
    "patched carray": "n.c[::3]",
    "expression": "hs.Expr('e + 1', {'e': n.e}).eval()",
    "reduction along": "n.m.sum(axis=1)",
}


def test_results_too_big_raise_memoryerror_at_once(huge: Path) -> None:
    results = _run(huge, TOO_BIG)
    for name, (kind, message, seconds) in ((k, results[k]) for k in TOO_BIG):
        assert kind == "MemoryError", (name, kind, message)
        assert seconds < 2, (name, seconds)
        assert "PiB" in message or "TiB" in message, (name, message)  # the size, in words
    for name, node in NAMED_IN_MESSAGE.items():  # the dataset, named when refused
        assert f"of '{node}'" in results[name][1], (name, results[name][1])
    assert results["after"] == [5.0, 7, 9999.0, 9999]


NAMED_IN_MESSAGE = {"table all": "/t", "zlib table": "/tz", "column slice": "/t",
                    "earray all": "/e", "plain earray": "/e2", "2-d earray": "/m",
                    "patched carray": "/c"}


def _expected(rows: range, offset: float = 0.0, scale: float = 1.0) -> list:
    """[count, sum] of ``value(row) = row * scale + offset`` over ``rows`` (zero past the
    rows written)."""
    values = np.array([r * scale + offset if r < ROWS else 0.0 for r in rows])
    return [len(rows), float(values.sum())]


SPARSE = {
    "table step": ("n.t.read(4, None, 10**11, field='i')", _expected(range(4, HUGE, 10**11))),
    "zlib table step": ("n.tz[5::10**11]['x']", _expected(range(5, HUGE, 10**11), scale=0.5)),
    "column step": ("n.t.cols.i[6::10**11]", _expected(range(6, HUGE, 10**11))),
    "earray step": ("n.e[8::10**11]", _expected(range(8, HUGE, 10**11))),
    "earray back": (f"n.e[{9 + 2000 * 10**11}::-10**11]",
                    _expected(range(9 + 2000 * 10**11, -1, -10**11))),
    "plain step": ("n.e2[3::10**11]", _expected(range(3, HUGE, 10**11))),
    "zlib step": ("n.ez[7::10**11]", _expected(range(7, HUGE, 10**11))),
    "2-d step": ("n.m[::10**11, 1:]", [2 * 2700, float(sum(3 * r + 1 + 3 * r + 2
                                                           for r in range(0, ROWS, 10**11)))]),
    "carray step": ("n.c[2::10**11]", _expected(range(2, HUGE, 10**11))),
    "zlib points": ("n.ez[[9999, 10**13, 2 * 10**13]]", "[9999.0, 0.0, 0.0]"),
    "plain points": ("n.e2[[3, 10**14]]", "[3.0, 0.0]"),
    "table points": ("n.tz.read_coordinates([9, 10**14], field='i')", "[9, 0]"),
    # (the iterator must live while its row is read)
    "first row": ("(lambda rows: next(rows)['i'])(iter(n.t))", "0"),
    "first match": ("(lambda rows: next(rows)['i'])(n.t.where('i > 5'))", "6"),
    "first zlib match": ("(lambda rows: next(rows)['i'])(n.tz.where('x > 5'))", "11"),
    "first stepped row": ("(lambda rows: next(rows)['i'])(n.t.iterrows(3, None, 10**11))",
                          "3"),
    "first earray row": ("next(n.e2.iterrows(step=10**11))", "0.0"),
    "bounded query": ("n.t.read_where('i >= 9998', stop=10**6)['i']", "[9998, 9999]"),
}


def test_sparse_reads_read_only_what_they_return(huge: Path) -> None:
    results = _run(huge, {name: expr for name, (expr, _) in SPARSE.items()})
    for name, (_, expected) in SPARSE.items():
        kind, value, seconds = results[name]
        assert kind == "ok", (name, kind, value)
        assert value == expected, (name, value, expected)
        assert seconds < 20, (name, seconds)
    assert results["after"] == [5.0, 7, 9999.0, 9999]


def test_memoryerror_from_numpy_leaves_the_file_usable(tmp_path: Path) -> None:
    """A result that passes the check but that the process cannot allocate (its memory
    limit here) fails with NumPy's MemoryError; the file still reads and closes."""
    path = tmp_path / "grown.h5"
    with hs.open_file(path, "w") as f:
        f.create_earray("/", "e", hs.Float64Atom(), (0,), filters=hs.Filters(5, "blosc2"),
                        obj=np.arange(ROWS, dtype=np.float64))
        table = f.create_table("/", "t", Rec, filters=hs.Filters(5, "blosc2"))
        table.append([(i, i * 0.5) for i in range(ROWS)])
        f.create_earray("/", "e2", hs.Float64Atom(), (0,), obj=np.arange(ROWS, dtype=float))
        f.create_carray("/", "c", obj=np.arange(ROWS, dtype=np.int64))
    with h5py.File(path, "r+") as h5:
        h5["e"].resize((10**9,))  # 8 GB: more than the child's 6 GB limit
        h5["t"].resize((10**9,))
    results = _run(path, {"earray": "n.e[:]", "table": "n.t[:]"})
    assert results["earray"][0] == "MemoryError"
    assert results["table"][0] == "MemoryError"
    assert results["after"] == [5.0, 7, 9999.0, 9999]


def test_reads_ask_for_no_dataset_name(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that fits in memory never works out its dataset's name, which only the
    message of a refused one needs (an HDF5 call, ~60 us at a dataset's first read)."""
    path = tmp_path / "f.h5"
    data = np.arange(1000, dtype="f8").reshape(100, 10)
    with hs.open_file(path, "w") as f:
        f.create_carray("/", "c", obj=data, chunkshape=(10, 10),
                        filters=hs.Filters(5, complib="blosc2:lz4"))
        f.create_table("/", "t", obj=np.zeros(50, dtype=[("i", "i4"), ("x", "f8")]))
        f.create_array("/", "a", obj=data)  # contiguous: its storage is checked

    def refuse(self: object) -> str:
        raise AssertionError("the dataset's name was asked for")

    monkeypatch.setattr(DatasetInfo, "name", property(refuse))
    with hs.open_file(path, "r") as f:
        np.testing.assert_array_equal(f.root.c[::3, 2:], data[::3, 2:])
        np.testing.assert_array_equal(f.root.c[[1, 5], [2, 3]], data[[1, 5], [2, 3]])
        assert f.root.t[:].shape == (50,) and len(f.root.t.read(step=2)) == 25
        np.testing.assert_array_equal(f.root.a[3:7], data[3:7])


def test_a_lazy_what_is_asked_for_only_when_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocation, "machine_memory", lambda: 1 << 30)
    asked: list[int] = []

    def what() -> str:
        asked.append(1)
        return "rows of '/t'"

    allocation.check_result_size((1 << 27,), 8, what)
    assert asked == []
    with pytest.raises(MemoryError, match=r"cannot read rows of '/t': the result would hold"):
        allocation.check_result_size(((1 << 27) + 1,), 8, what)
    assert asked == [1]


def test_check_result_size_names_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocation, "machine_memory", lambda: 1 << 30)
    allocation.check_result_size((1 << 27,), 8, "x")  # exactly the memory: allowed
    with pytest.raises(MemoryError, match=r"cannot read rows of '/t': the result would hold "
                       r"134217729 items of 8 bytes \(1 GiB\), more than the 1 GiB"):
        allocation.check_result_size(((1 << 27) + 1,), 8, "rows of '/t'")


def test_planning_is_lazy_and_skips_unselected_chunks() -> None:
    # A step longer than the chunks: a piece per selected item, none for the others.
    shape, pieces = gather_pieces((slice(5, HUGE, 10**10),), (HUGE,), (1000,))
    assert shape == (27000,)
    assert not isinstance(pieces, list)  # more than LISTED_PIECES: planned as consumed
    pieces = iter(pieces)
    first = next(pieces)
    assert first.grid == (0,) and first.in_chunk == (slice(5, 6, 10**10),)
    second = next(pieces)
    assert second.grid == ((5 + 10**10) // 1000,)
    assert second.in_out == (slice(1, 2),)
    assert sum(1 for _ in pieces) == 26998
    # Every chunk of a huge selection is planned only when reached.
    _, everything = gather_pieces((slice(None), slice(0, 3)), (HUGE, 3), (10, 3))
    assert next(iter(everything)).grid == (0, 0)
    boxes = tiles.tiles((HUGE, 3), (1 << 20, 3))
    assert next(boxes) == ((0, 1 << 20), (0, 3))
    assert tiles.count_tiles((HUGE, 3), (1 << 20, 3)) == -(-HUGE // (1 << 20))
    assert spans_more_chunks((slice(0, HUGE, 10**11),), (HUGE,), (1000,))
    assert not spans_more_chunks((slice(0, 10**6, 3),), (10**6,), (1000,))


def test_table_spans_jump_over_blocks_without_rows(h5file: hs.File) -> None:
    table = h5file.create_table("/", "t", Rec)
    table.append([(i, i) for i in range(100)])
    io = table._ready()
    io.block_rows = 10
    for start, stop, step in [(3, 100, 7), (0, 100, 1), (5, 95, 3), (0, 100, 45), (9, 10, 4),
                              (11, 99, 10), (0, 100, 200)]:
        # Each span: from the first selected row of a block of 10 to its end (or stop).
        expected = []
        for block in range(10):
            rows = [r for r in range(start, stop, step) if r // 10 == block]
            if rows:
                expected.append((rows[0], min(stop, 10 * block + 10)))
        assert list(io.spans(start, stop, step)) == expected
        assert list(io.spans(start, stop, step, reverse=True)) == expected[::-1]
        assert io.nspans(start, stop, step) >= len(expected)
    assert list(io.spans(0, 100, 45)) == [(0, 10), (45, 50), (90, 100)]
    assert io.nspans(0, 100, 45) == 3
    assert list(io.spans(0, 30, 1)) == [(0, 10), (10, 20), (20, 30)]
    huge = io.spans(0, HUGE, 1)
    assert next(huge) == (0, 10)  # generated as consumed: no list of 2.7e13 spans


@pytest.mark.parametrize("key, shape, chunks", [
    ((slice(3, 97, 4), slice(None)), (100, 7), (10, 3)),
    ((np.array([0, 5, 6, 50, 99]), 4, slice(1, 9, 3)), (100, 10, 10), (7, 4, 4)),
    ((slice(0, 1000, 301),), (1000,), (100,)),
    ((2, slice(5, 6)), (10, 10), (3, 3)),
])
def test_listed_and_lazy_pieces_are_the_same(monkeypatch: pytest.MonkeyPatch, key: tuple,
                                             shape: tuple, chunks: tuple) -> None:
    out, listed = gather_pieces(key, shape, chunks)
    assert isinstance(listed, list)
    monkeypatch.setattr(gather, "LISTED_PIECES", 0)
    lazy_out, lazy = gather_pieces(key, shape, chunks)
    assert not isinstance(lazy, list)
    as_tuples = [(p.grid, repr(p.in_chunk), p.bounds, p.in_out, p.full_chunk) for p in listed]
    assert lazy_out == out
    assert [(p.grid, repr(p.in_chunk), p.bounds, p.in_out, p.full_chunk)
            for p in lazy] == as_tuples
