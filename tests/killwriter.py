"""The writer that ``test_kill.py`` kills, and the PyTables side of its checks.

``python killwriter.py write PATH SEED FD [KILL_AT]`` appends to three tables (Blosc2 with
an index, zlib, unfiltered) and three EArrays (Blosc2, zlib, unfiltered), flushing now and
then and querying the indexed table between flushes (which brings its index up to date).
It writes to the pipe ``FD``: ``F n`` before flush ``n``, ``D name=rows ...`` once that
flush returned (the rows it made durable), ``Q`` before a query.  With ``KILL_AT = k:i``,
it kills itself in flush ``k``, after HDF5 flushed its ``i``-th dataset.

``python killwriter.py tables JSON`` opens each ``[path, {name: flushed rows}]`` of the
JSON list with PyTables and prints one JSON line per file (see :func:`tables_report`).

Every row is a function of its row number (:func:`table_rows`, :func:`earray_rows`), so
a reader rebuilds what was appended.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from typing import Any

import numpy as np

ROW = np.dtype([("i", "<i8"), ("key", "<i4"), ("x", "<f8"), ("s", "S6")])
NODES = ("tb2", "tzl", "tpl", "eb2", "ezl", "epl")
CONDITION = "(key > 100) & (key < 130)"
APPEND_SIZES = (1, 7, 300, 511, 1300)
CHUNKROWS = 512


def table_rows(lo: int, hi: int) -> Any:
    """Rows ``lo .. hi - 1`` of every table."""
    i = np.arange(lo, hi)
    rows = np.empty(hi - lo, ROW)
    rows["i"] = i
    rows["key"] = (i * 7919) % 1000 + 1  # never 0: a fill-value row never looks appended
    rows["x"] = i * 0.5 + 1
    rows["s"] = [b"r%d" % (k % 9973) for k in i]
    return rows


def earray_rows(lo: int, hi: int) -> Any:
    """Rows ``lo .. hi - 1`` of every EArray."""
    return (np.arange(lo, hi)[:, None] * 3 + np.arange(3) + 1).astype("<f8")


def expected(name: str, lo: int, hi: int) -> Any:
    return table_rows(lo, hi) if name[0] == "t" else earray_rows(lo, hi)


def kill_in_flush(after: int) -> None:
    """Kill this process in the next flush, once HDF5 flushed ``after`` of its datasets
    (:func:`hyperslab.storage.h5file.flush_in_order` goes one dataset at a time)."""
    from hyperslab.storage import h5file

    def flush_in_order(h5: Any) -> None:
        ids = h5file.h5f.get_obj_ids(h5.id, h5file.h5f.OBJ_DATASET | h5file.h5f.OBJ_LOCAL)
        for dsid in ids[:after]:
            dsid.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    h5file.flush_in_order = flush_in_order


def kill_in_append(count: int) -> None:
    """Kill this process in the ``count``-th append from now, right after the extent grew
    (before the rows are written)."""
    from hyperslab.storage.datasets import Dataset

    real = Dataset.resize
    calls = [0]

    def resize(self: Any, shape: Any) -> None:
        real(self, shape)
        calls[0] += 1
        if calls[0] == count:
            os.kill(os.getpid(), signal.SIGKILL)

    Dataset.resize = resize  # type: ignore[method-assign]


def write(path: str, seed: int, fd: int, kill_at: str | None = None) -> None:
    import hyperslab as hs

    rng = random.Random(seed)

    def say(message: str) -> None:
        os.write(fd, (message + "\n").encode())

    blosc2 = hs.Filters(complevel=5, complib="blosc2:lz4", shuffle=True)
    zlib = hs.Filters(complevel=1, complib="zlib", shuffle=True)
    with hs.open_file(path, "w") as f:
        nodes: dict[str, Any] = {
            "tb2": f.create_table("/", "tb2", ROW, filters=blosc2, chunkshape=(CHUNKROWS,)),
            "tzl": f.create_table("/", "tzl", ROW, filters=zlib, chunkshape=(CHUNKROWS,)),
            "tpl": f.create_table("/", "tpl", ROW, chunkshape=(CHUNKROWS,)),
        }
        for name, filters in (("eb2", blosc2), ("ezl", zlib), ("epl", None)):
            nodes[name] = f.create_earray("/", name, hs.Float64Atom(), (0, 3),
                                          filters=filters, chunkshape=(CHUNKROWS, 3))
        nodes["tb2"].cols.key.create_index()
        counts = dict.fromkeys(NODES, 100)
        for name in NODES:
            nodes[name].append(expected(name, 0, 100))
        nodes["tb2"].get_where_list(CONDITION)  # the index is kept dirty from here on
        f.flush()
        durable = dict(counts)
        say("D " + " ".join(f"{n}={v}" for n, v in durable.items()))
        if kill_at is not None and kill_at.startswith("append:"):
            kill_in_append(int(kill_at.split(":")[1]))
        number = 0
        while True:
            for _ in range(rng.randint(1, 4)):
                name = rng.choice(NODES)
                lo = counts[name]
                counts[name] = hi = lo + rng.choice(APPEND_SIZES)
                nodes[name].append(expected(name, lo, hi))
            if rng.random() < 0.3:
                say("Q")
                nodes["tb2"].get_where_list(CONDITION)
            if rng.random() < 0.4:
                number += 1
                say(f"F {number}")
                if kill_at is not None and kill_at.startswith(f"flush:{number}:"):
                    kill_in_flush(int(kill_at.split(":")[2]))
                if rng.random() < 0.75:
                    f.flush()
                    durable = dict(counts)
                else:  # one leaf's flush: HDF5's buffers of the whole file, as PyTables
                    name = rng.choice(NODES)
                    nodes[name].flush()
                    durable.update({n: counts[n] for n in NODES if n[0] == "e" or n == name})
                say("D " + " ".join(f"{n}={v}" for n, v in durable.items()))


def tables_report(path: str, flushed: dict[str, int]) -> dict[str, Any]:
    """What PyTables reads: per leaf, its rows and whether the flushed ones, and the rest,
    are as appended (``exact``), the fill value (``fill``), other values (``WRONG``) or
    an error (``error``); the indexed query on ``tb2`` against a scan."""
    import tables

    report: dict[str, Any] = {}
    with tables.open_file(path, "r") as f:
        for name, rows in flushed.items():
            node = f.get_node("/" + name)
            length = int(node.nrows)
            report[name] = report_rows(name, node.read, rows, length)
        table = f.root.tb2
        try:
            keys = table.col("key")
            found = np.sort(table.get_where_list(CONDITION))
            scan = np.flatnonzero((keys > 100) & (keys < 130))
            report["query"] = "same" if np.array_equal(found, scan) else "DIFFERENT"
        except tables.HDF5ExtError:
            report["query"] = "error"
    return report


def report_rows(name: str, read: Any, flushed: int, rows: int) -> dict[str, Any]:
    """How ``read(lo, hi)`` reads a leaf of ``rows`` rows, ``flushed`` of them flushed:
    its rows before the last chunk that the flush left partly filled (``flushed``), the
    flushed rows in that chunk (``partial``) and the rows after (``after``)."""
    whole = flushed // CHUNKROWS * CHUNKROWS
    return {"rows": rows, "flushed": classify(name, read, 0, whole),
            "partial": classify(name, read, whole, flushed),
            "after": classify(name, read, flushed, rows)}


def classify(name: str, read: Any, lo: int, hi: int) -> str:
    """``exact``, ``fill``, ``WRONG`` or ``error`` for rows ``lo .. hi - 1``."""
    if hi <= lo:
        return "exact"
    try:
        data = read(lo, hi)
    except Exception as exc:  # each library's own error types
        return "error: " + type(exc).__name__
    want = expected(name, lo, hi)
    if data.shape != want.shape:
        return "WRONG shape"
    same = data == want
    fill = data == np.zeros(1, data.dtype)
    if name[0] == "e":
        same, fill = same.all(axis=1), fill.all(axis=1)
    if same.all():
        return "exact"
    return "fill" if (same | fill).all() else "WRONG"


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
              sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        for path, rows in json.loads(sys.argv[2]):
            print(json.dumps(tables_report(path, rows)), flush=True)
