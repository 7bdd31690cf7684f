"""The child process of tests/test_pandas.py: pandas (and dask) on one ``tables``.

``python tests/pandas_child.py LIBRARY PHASE FOLDER RESULT``, where LIBRARY is
``hyperslab`` (``import tables`` gives hyperslab, through ``install_as_tables()``) or
``PyTables``.  A process can hold only one ``tables``, so each library runs in its own
child and the test compares what the two did.  The phases, run in this order:

``write``
    Write the files of :data:`FILES` into ``FOLDER/LIBRARY/`` with pandas (both formats,
    every kind of column, three compressors, store operations), then copy ``store.h5`` to
    ``FOLDER/LIBRARY-edits-own/``.
``edit``
    Run :func:`edit_store` on ``FOLDER/*-edits-own/store.h5`` (this library's copy) and on
    a copy of the other library's ``store.h5`` in ``FOLDER/LIBRARY-edits-OTHER/``: appends,
    an index built afterwards, removals, to a file the other library wrote.
``read``
    Run every read of :func:`reads` on every folder of FOLDER and pickle the answers, a
    ``{(folder, read): answer}`` dict, to RESULT.  An answer is what pandas returned, or
    ``("error", type name, message)``; the warnings of each read are kept beside it.

Nothing at module level imports pandas or ``tables``: the test imports this module for
:func:`frames`, in a process where PyTables may be imported already.
"""

from __future__ import annotations

import pickle
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

LIBRARIES = ("hyperslab", "PyTables")
NROWS = 120
FILES = ("table.h5", "fixed.h5", "store.h5", "more.h5")


def frames() -> dict[str, Any]:
    """The frames and series written, by name (the same in every process)."""
    import numpy as np
    import pandas as pd

    n = NROWS
    rng = np.random.default_rng(21)
    mixed = pd.DataFrame(
        {
            "i": np.arange(n, dtype="int64") * 3 - 40,
            "f": rng.random(n),
            "b": np.arange(n) % 3 == 0,
            "i8": (np.arange(n) % 100).astype("int8"),
            "u4": np.arange(n, dtype="uint32") * 1000,
            "f4": np.linspace(-1, 1, n, dtype="float32"),
            "s": [f"s{i % 37}" for i in range(n)],
            "c": pd.Categorical(["low", "mid", "high", "mid"] * (n // 4)),
            "t": pd.date_range("2021-03-01", periods=n, freq="7h"),
            "tz": pd.date_range("2021-03-27", periods=n, freq="h", tz="Europe/Paris"),
            "td": pd.to_timedelta(np.arange(n) * 90, unit="s"),
        }
    )
    mixed.loc[5, "f"] = np.nan
    fixed = mixed.drop(columns=["c"])  # pandas stores no categoricals in the fixed format
    fixed["o"] = pd.Series([("tuple", i) if i % 4 else f"x{i}" for i in range(n)], dtype=object)
    multi = mixed[["i", "f", "s"]].set_index(["s", "i"])
    tzindex = pd.DataFrame(
        {"v": np.arange(n, dtype="float64")},
        index=pd.date_range("2022-10-29", periods=n, freq="30min", tz="Europe/Paris"),
    )
    return {
        "mixed": mixed,
        "fixed": fixed,
        "multi": multi,
        "tzindex": tzindex,
        "series": pd.Series(rng.random(n), name="x"),
        "strings": pd.Series([f"é{i}" * (i % 5) for i in range(n)], name="text"),
        "empty": pd.DataFrame({"a": np.array([], dtype="float64")}),
    }


# ----------------------------------------------------------------------------- write


def write(folder: Path) -> dict[tuple[str, str], Any]:
    """Write the files of :data:`FILES` into ``folder``; the answers of the writes that fail.

    A VLArray (the fixed format's string columns) takes no Blosc2 compression in PyTables.
    """
    import pandas as pd

    fr = frames()
    table = folder / "table.h5"
    opts: dict[str, Any] = {"format": "table", "complevel": 5, "complib": "blosc2:zstd"}
    fr["mixed"].to_hdf(table, key="mixed", mode="w", data_columns=["i", "f", "s", "c", "t"], **opts)
    fr["mixed"].to_hdf(table, key="noindex", data_columns=["i", "s"], index=False, **opts)
    fr["multi"].to_hdf(table, key="multi", data_columns=True, format="table")
    fr["tzindex"].to_hdf(table, key="tz", format="table", complevel=1, complib="zlib")
    fr["series"].to_hdf(table, key="series", format="table")
    plain = fr["mixed"][["i", "f", "s", "tz"]]  # no categorical: dask concatenates the keys
    plain.iloc[:50].to_hdf(table, key="part1", format="table")
    plain.iloc[50:].to_hdf(table, key="part2", format="table")
    fixed = folder / "fixed.h5"
    fr["fixed"].to_hdf(fixed, key="mixed", mode="w")
    fr["fixed"].to_hdf(fixed, key="zlib", complevel=1, complib="zlib")
    numbers = fr["fixed"].drop(columns=["o", "s"])
    numbers.to_hdf(fixed, key="blosc2", complevel=5, complib="blosc2:lz4")
    fr["multi"].to_hdf(fixed, key="multi")
    fr["tzindex"].to_hdf(fixed, key="tz")
    fr["strings"].to_hdf(fixed, key="strings")
    fr["empty"].to_hdf(fixed, key="empty")
    failed = {
        (folder.name, "fixed.h5: blosc2 strings"): answer(
            lambda: fr["fixed"].to_hdf(fixed, key="bad", complevel=5, complib="blosc2:lz4")
        )
    }
    with pd.HDFStore(folder / "store.h5", "w", complevel=5, complib="blosc:lz4") as store:
        mixed = fr["mixed"]
        store.append("app", mixed.iloc[:70], data_columns=["i", "f"], index=False)
        store.append("app", mixed.iloc[70:], data_columns=["i", "f"], index=False)
        store.create_table_index("app", columns=["i"], optlevel=9, kind="full")
        store.put("gone", mixed[["i"]], format="table", track_times=False)
        store.put("kept", fr["series"], track_times=False)
        store.remove("gone")
        store.remove("app", where="i < 0")
    failed[folder.name, "more.h5: VLArray with fletcher32"] = write_more(folder / "more.h5")
    own = folder.parent / f"{folder.name}-edits-own"
    own.mkdir()
    shutil.copy(folder / "store.h5", own / "store.h5")
    return failed


def write_more(path: Path) -> tuple[Any, list[tuple[str, str]]]:
    """Less common writes: several tables for one frame, missing strings, bzip2 with
    checksums, Unicode, long strings, a copy of the store with its indexes; return the
    answer of a write that fails (HDF5 takes no Fletcher32 checksums on a VLArray)."""
    import numpy as np
    import pandas as pd

    n = 60
    frame = pd.DataFrame(
        {
            "a": np.arange(n),
            "b": np.arange(n) * 0.5,
            "s": [None if i % 7 == 0 else f"v{i}" for i in range(n)],
        }
    )
    with pd.HDFStore(path, "w", complevel=9, complib="bzip2", fletcher32=True) as store:
        store.append("x", frame, data_columns=["a", "s"], min_itemsize={"s": 20}, nan_rep="NA")
        store.append("x", frame, data_columns=["a", "s"])
        store.append_to_multiple({"left": ["a", "b"], "right": None}, frame, selector="left")
        text = pd.DataFrame({"u": ["ü", "日本語", "", "a" * 3000]})
        store.put("text", text, format="table", data_columns=True, track_times=False)
        copied = store.copy(str(path.with_name("copy.h5")), propindexes=True, keys=["/x"])
        copied.close()
        objects = pd.Series([1, "a", None, 2.5], dtype=object)
        return answer(lambda: store.put("objects", objects, track_times=False))


def _more_reads(path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    import numpy as np
    import pandas as pd

    def store_reads() -> Any:
        with pd.HDFStore(path, "r") as store, np.printoptions(legacy="1.25"):
            # hyperslab prints atoms' defaults as PyTables documents them (NumPy 1 style)
            table = store.get_storer("x").table
            return {
                "x": store["x"],
                "multiple": store.select_as_multiple(
                    ["left", "right"], where=["a > 40"], selector="left"
                ),
                "terms": store.select("x", where=["a > 10", "a < 20", "s != 'v15'"]),
                "missing": store.select("x", where="s == 'NA'", columns=["a"]),
                "groups": sorted(g._v_pathname for g in store.groups()),
                "walk": [(p, sorted(g), sorted(leaves)) for p, g, leaves in store.walk()],
                "iterated": [len(c) for c in store.select("x", iterator=True, chunksize=33)],
                "description": repr(table.description),
                "filters": repr(table.filters),
                "text where": store.select("text", where="u == '日本語'"),
                "text": store["text"],
            }

    yield "HDFStore", store_reads

    def copied() -> Any:
        with pd.HDFStore(path.with_name("copy.h5"), "r") as store:
            table = store.get_storer("x").table
            return store.keys(), table.colindexed, store.select("x", where="a < 3")

    yield "copy", copied


def edit_store(path: Path) -> None:
    """Append to, index and remove from the store at ``path``."""
    import pandas as pd

    mixed = frames()["mixed"]
    with pd.HDFStore(path, "a") as store:
        more = mixed.iloc[:30].copy()
        more.index = more.index + 1000
        store.append("app", more)
        store.create_table_index("app", columns=["f"], kind="light", optlevel=3)
        store.remove("app", where="index > 1020")
        store.remove("app", start=0, stop=5)
        store.append("new", mixed[["i", "s"]], data_columns=["s"])
        store.remove("kept")


def edit(root: Path, library: str) -> None:
    """Edit this library's copy of its store and a copy of the other library's."""
    other = next(lib for lib in LIBRARIES if lib != library)
    edit_store(root / f"{library}-edits-own" / "store.h5")
    folder = root / f"{library}-edits-{other}"
    folder.mkdir()
    shutil.copy(root / other / "store.h5", folder / "store.h5")
    edit_store(folder / "store.h5")


# ----------------------------------------------------------------------------- read


def _index_state(store: Any, key: str) -> dict[str, Any]:
    table = store.get_storer(key).table
    state = {}
    for name, indexed in sorted(table.colindexed.items()):
        index = getattr(table.cols, name).index if indexed else None
        state[name] = None if index is None else (index.kind, index.optlevel, index.nelements)
    return state


def _info(store: Any, path: Path) -> str:
    return str(store.info()).replace(str(path), "PATH")


def _table_reads(path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    import pandas as pd

    def select(key: str, **kwargs: Any) -> Callable[[], Any]:
        return lambda: pd.read_hdf(path, key, **kwargs)

    yield "mixed", select("mixed")
    yield "mixed where numbers", select("mixed", where="i > 50 & f < 0.5")
    yield "mixed where string", select("mixed", where="s == 's3' | s == 's10'")
    yield "mixed where category", select("mixed", where="c == 'mid'")
    yield "mixed where datetime", select("mixed", where="t >= Timestamp('2021-03-10')")
    yield "mixed where index", select("mixed", where="index >= 30 & index < 45")
    yield "mixed where list", select("mixed", where="i in [-40, 2, 200, 221]")
    yield "mixed columns", select("mixed", columns=["i", "s", "tz"])
    yield "mixed start stop", select("mixed", start=10, stop=40)
    yield "mixed where not a column", select("mixed", where="u4 > 3")
    yield "noindex where", select("noindex", where="i > 50 & s != 's3'")
    yield "multi", select("multi")
    yield "multi where level", select("multi", where="s == 's3' & i > 0")
    yield "tz", select("tz")
    yield "tz where index", select("tz", where="index > Timestamp('2022-10-30 02:00+01:00')")
    yield "series", select("series")

    def store_reads() -> Any:
        with pd.HDFStore(path, "r") as store:
            chunks = list(store.select("mixed", where="i < 300", chunksize=25))
            return {
                "keys": store.keys(),
                "keys tables": store.keys(include="native"),
                "info": _info(store, path),
                "chunks": [len(c) for c in chunks],
                "iterated": pd.concat(chunks),
                "select_column s": store.select_column("mixed", "s"),
                "select_column index": store.select_column("mixed", "index", start=3, stop=9),
                "coordinates": store.select_as_coordinates("mixed", "c == 'high'").tolist(),
                "indexes": _index_state(store, "mixed"),
                "no indexes": _index_state(store, "noindex"),
                "nrows": store.get_storer("mixed").nrows,
            }

    yield "HDFStore", store_reads


def _fixed_reads(path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    import pandas as pd

    for key in ("mixed", "zlib", "blosc2", "multi", "tz", "strings", "empty"):
        yield key, lambda key=key: pd.read_hdf(path, key)
    yield "mixed where", lambda: pd.read_hdf(path, "mixed", where="index > 3")
    yield "mixed start stop", lambda: pd.read_hdf(path, "mixed", start=5, stop=17)

    def store_reads() -> Any:
        with pd.HDFStore(path, "r") as store:
            return {"keys": store.keys(), "info": _info(store, path)}

    yield "HDFStore", store_reads


def _store_reads(path: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    import pandas as pd

    def store_reads() -> Any:
        with pd.HDFStore(path, "r") as store:
            keys = store.keys()
            return {
                "keys": keys,
                "info": _info(store, path),
                "frames": {key: store[key] for key in keys},
                "where": store.select("app", where="f > 0.3 & i < 200"),
                "indexes": _index_state(store, "app"),
            }

    yield "HDFStore", store_reads


def _dask_reads(folder: Path) -> Iterator[tuple[str, Callable[[], Any]]]:
    import dask
    import dask.dataframe as dd

    def computed(*args: Any, **kwargs: Any) -> Callable[[], Any]:
        def run() -> Any:
            with dask.config.set(scheduler="sync"):  # lock=True: one reader at a time anyway
                frame = dd.read_hdf(*args, **kwargs)
                return frame.npartitions, frame.compute()

        return run

    table = folder / "table.h5"
    yield "dask mixed", computed(table, "mixed", chunksize=50)
    yield "dask columns", computed(table, "/mixed", columns=["i", "t"], chunksize=1000)
    yield "dask sorted", computed(table, "mixed", chunksize=40, sorted_index=True)
    yield "dask start stop", computed(table, "noindex", start=5, stop=90, chunksize=30)
    yield "dask keys", computed(table, "/part*", chunksize=40)
    yield "dask files", computed(str(folder.parent / "*" / "table.h5"), "/mixed", chunksize=100)


READS: dict[str, Callable[[Path], Iterator[tuple[str, Callable[[], Any]]]]] = {
    "table.h5": _table_reads,
    "fixed.h5": _fixed_reads,
    "store.h5": _store_reads,
    "more.h5": _more_reads,
}


def answer(func: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    """What ``func()`` returned (or ``("error", type, message)``), and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = func()
        except Exception as exc:  # the answer of a read that fails is its error
            value = ("error", type(exc).__name__, str(exc))
    return value, sorted({(w.category.__name__, str(w.message)) for w in caught})


def read(root: Path) -> dict[tuple[str, str], Any]:
    """Every read of every folder of ``root``."""
    answers = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        for name, reads in READS.items():
            if (folder / name).exists():
                for what, func in reads(folder / name):
                    answers[folder.name, f"{name}: {what}"] = answer(func)
        if (folder / "table.h5").exists():
            for what, func in _dask_reads(folder):
                answers[folder.name, what] = answer(func)
    return answers


def main(argv: list[str]) -> int:
    """Run one phase for one library (see the module docstring)."""
    library, phase, root, result = argv[0], argv[1], Path(argv[2]), Path(argv[3])
    if library == "hyperslab":
        import hyperslab

        hyperslab.install_as_tables()
    import tables

    expected = "hyperslab.pytables" if library == "hyperslab" else "tables"
    if tables.__name__ != expected:
        raise RuntimeError(f"import tables gave {tables.__name__}, not {expected}")
    if phase == "write":
        (root / library).mkdir()
        result.write_bytes(pickle.dumps(write(root / library)))
    elif phase == "edit":
        edit(root, library)
        result.write_bytes(pickle.dumps({}))
    else:
        result.write_bytes(pickle.dumps(read(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
