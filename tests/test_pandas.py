"""pandas and dask.dataframe on hyperslab (``install_as_tables()``), with pandas on PyTables
as the oracle.

pandas imports ``tables`` itself and a process holds only one ``tables``, so the work runs
in child processes (tests/pandas_child.py), one per library and phase: both libraries
write the same frames with pandas (``to_hdf`` in the table and fixed formats, every kind of
column, MultiIndex, time zones, three compressors, ``HDFStore`` appends, indexes and
removals), then each edits its own store and a copy of the other's, then each reads every
file with pandas and dask.  Every answer (frame, keys, ``info()``, index state, error,
warnings) of hyperslab on its own files, hyperslab on PyTables' files and PyTables on
hyperslab's files must equal PyTables' on its own files; PyTables' answers must equal the
frames written; and the files must be PyTables' files to h5py, dataset by dataset.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc and Blosc2 filters for h5py)
import numpy as np
import pandas as pd
import pytest

import hyperslab
import pandas_child as child

CHILD = str(Path(__file__).with_name("pandas_child.py"))
SRC = str(Path(hyperslab.__file__).resolve().parents[1])
TIMEOUT = 240.0  # seconds one phase may take (about 5 s here)
ORACLE = ("PyTables", "PyTables")
"""(reader, folder): PyTables reading the files it wrote."""

Answers = dict[str, dict[tuple[str, str], Any]]


def _phase(phase: str, root: Path) -> Answers:
    """Run ``phase`` for both libraries at once; return each one's answers."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SRC, env.get("PYTHONPATH")]))
    procs = {
        lib: subprocess.Popen(
            [sys.executable, CHILD, lib, phase, str(root), str(root / f"{lib}-{phase}.pickle")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for lib in child.LIBRARIES
    }
    errors = {lib: proc.communicate(timeout=TIMEOUT)[1] for lib, proc in procs.items()}
    for lib, proc in procs.items():
        assert proc.returncode == 0, f"{lib} {phase} failed:\n{errors[lib][-3000:]}"
    return {lib: pickle.loads((root / f"{lib}-{phase}.pickle").read_bytes()) for lib in procs}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Answers, Answers]:
    """The folder of the files, the answers of the writes and those of the reads."""
    root = tmp_path_factory.mktemp("pandas")
    writes = _phase("write", root)
    _phase("edit", root)
    return root, writes, _phase("read", root)


# ----------------------------------------------------------------------------- comparing


def differences(got: Any, ref: Any, where: str = "") -> list[str]:
    """Where ``got`` differs from ``ref`` (frames and series exactly, dtypes included)."""
    if isinstance(ref, pd.DataFrame | pd.Series):
        if type(got) is not type(ref):
            return [f"{where}: {type(got).__name__} {str(got)[:300]}"]
        check: Callable[..., None] = (
            pd.testing.assert_frame_equal
            if isinstance(ref, pd.DataFrame)
            else pd.testing.assert_series_equal
        )
        try:
            check(got, ref, check_exact=True, check_freq=False)
        except AssertionError as exc:
            return [f"{where}: {exc}"]
        return []
    if isinstance(ref, dict):
        if not isinstance(got, dict) or got.keys() != ref.keys():
            return [f"{where}: {str(got)[:300]} != {str(ref)[:300]}"]
        return [d for k in ref for d in differences(got[k], ref[k], f"{where}[{k!r}]")]
    if isinstance(ref, list | tuple):
        if type(got) is not type(ref) or len(got) != len(ref):
            return [f"{where}: {str(got)[:300]} != {str(ref)[:300]}"]
        pairs = enumerate(zip(got, ref, strict=True))
        return [d for i, (g, r) in pairs for d in differences(g, r, f"{where}[{i}]")]
    return [] if got == ref else [f"{where}: {got!r} != {ref!r}"]


def compare(answers: Answers, reader: str, folder: str, oracle: tuple[str, str]) -> None:
    """``reader``'s answers on ``folder`` must be the oracle's, read by read."""
    ref = {what: a for (f, what), a in answers[oracle[0]].items() if f == oracle[1]}
    got = {what: a for (f, what), a in answers[reader].items() if f == folder}
    assert ref and sorted(got) == sorted(ref)
    found = [d for what in ref for d in differences(got[what], ref[what], what)]
    assert not found, "\n".join(found)


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize(
    ("reader", "folder"),
    [("hyperslab", "hyperslab"), ("hyperslab", "PyTables"), ("PyTables", "hyperslab")],
    ids=["hyperslab reads its files", "hyperslab reads PyTables'", "PyTables reads hyperslab's"],
)
def test_reads_answer_as_pytables(
    runs: tuple[Path, Answers, Answers], reader: str, folder: str
) -> None:
    compare(runs[2], reader, folder, ORACLE)


@pytest.mark.parametrize("reader", child.LIBRARIES)
@pytest.mark.parametrize(
    "folder", ["hyperslab-edits-own", "hyperslab-edits-PyTables", "PyTables-edits-hyperslab"]
)
def test_edited_stores_answer_as_pytables(
    runs: tuple[Path, Answers, Answers], reader: str, folder: str
) -> None:
    """Appends, indexes and removals by either library on either library's store."""
    compare(runs[2], reader, folder, ("PyTables", "PyTables-edits-own"))


def test_failed_writes_fail_alike(runs: tuple[Path, Answers, Answers]) -> None:
    """What PyTables cannot write, hyperslab refuses too, with the same exception type: a
    VLArray (the fixed format's strings and objects) with Blosc2, or with Fletcher32."""
    writes = runs[1]
    ours = {what: a for (_, what), a in writes["hyperslab"].items()}
    theirs = {what: a for (_, what), a in writes["PyTables"].items()}
    assert sorted(ours) == sorted(theirs) == [
        "fixed.h5: blosc2 strings",
        "more.h5: VLArray with fletcher32",
    ]
    for what, (ref, ref_warnings) in theirs.items():
        mine, my_warnings = ours[what]
        assert ref[:2] == ("error", "HDF5ExtError"), what
        assert mine[:2] == ref[:2], (what, mine)
        assert my_warnings == ref_warnings, what


def _expected() -> dict[str, Any]:
    """What pandas must answer, from the frames written (the oracle's own check)."""
    fr = child.frames()
    mixed, multi, tz = fr["mixed"], fr["multi"], fr["tzindex"]
    i, s = mixed["i"], mixed["s"]
    table = {
        "mixed": mixed,
        "mixed where numbers": mixed[(i > 50) & (mixed["f"] < 0.5)],
        "mixed where string": mixed[s.isin(["s3", "s10"])],
        "mixed where category": mixed[mixed["c"] == "mid"],
        "mixed where datetime": mixed[mixed["t"] >= pd.Timestamp("2021-03-10")],
        "mixed where index": mixed.loc[30:44],
        "mixed where list": mixed[i.isin([-40, 2, 200, 221])],
        "mixed columns": mixed[["i", "s", "tz"]],
        "mixed start stop": mixed.iloc[10:40],
        "noindex where": mixed[(i > 50) & (s != "s3")],
        "multi": multi,
        "multi where level": multi[
            (multi.index.get_level_values("s") == "s3") & (multi.index.get_level_values("i") > 0)
        ],
        "tz": tz,
        "tz where index": tz[tz.index > pd.Timestamp("2022-10-30 02:00+01:00")],
        "series": fr["series"],
    }
    fixed = {key: fr["fixed"] for key in ("mixed", "zlib")}
    fixed |= {"blosc2": fr["fixed"].drop(columns=["o", "s"]), "multi": multi, "tz": tz}
    fixed |= {"strings": fr["strings"], "empty": fr["empty"]}
    fixed["mixed start stop"] = fr["fixed"].iloc[5:17]
    return {f"table.h5: {k}": v for k, v in table.items()} | {
        f"fixed.h5: {k}": v for k, v in fixed.items()
    }


def test_pytables_answers_are_the_frames(runs: tuple[Path, Answers, Answers]) -> None:
    """The oracle itself: what pandas on PyTables reads back is what it wrote."""
    ref = {what: a for (f, what), a in runs[2]["PyTables"].items() if f == "PyTables"}
    found = [d for what, want in _expected().items() for d in differences(ref[what][0], want, what)]
    assert not found, "\n".join(found)
    errors = sorted(w for w, (a, _) in ref.items() if isinstance(a, tuple) and a[0] == "error")
    assert errors == ["fixed.h5: mixed where", "table.h5: mixed where not a column"]
    mixed = child.frames()["mixed"]
    for what in ("dask mixed", "dask sorted"):
        assert ref[what][0][0] == 3
        pd.testing.assert_frame_equal(ref[what][0][1], mixed, check_dtype=False)
    assert ref["dask files"][0][0] == 4  # both libraries' table.h5, two chunks each
    keys = ref["dask keys"][0]  # /part1 (50 rows: 40 + 10) and /part2 (70: 40 + 30)
    assert keys[0] == 4
    pd.testing.assert_frame_equal(keys[1], mixed[["i", "f", "s", "tz"]], check_dtype=False)
    store = ref["table.h5: HDFStore"][0]
    keys = [k for k in store["keys"] if "/meta/" not in k]  # not the categories' tables
    assert keys == ["/mixed", "/multi", "/noindex", "/part1", "/part2", "/series", "/tz"]
    assert store["chunks"] == [25, 25, 25, 25, 14]  # the 114 rows with i < 300
    indexed = {k: v for k, v in store["indexes"].items() if v is not None}
    assert indexed == {
        "c": ("medium", 6, child.NROWS),
        "f": ("medium", 6, child.NROWS),
        "i": ("medium", 6, child.NROWS),
        "index": ("medium", 6, child.NROWS),
        "s": ("medium", 6, child.NROWS),
        "t": ("medium", 6, child.NROWS),
    }
    assert set(store["no indexes"].values()) == {None}
    edited = {what: a for (f, what), a in runs[2]["PyTables"].items() if f == "PyTables-edits-own"}
    edits = edited["store.h5: HDFStore"][0]
    assert edits["keys"] == ["/app", "/new", "/app/meta/values_block_1/meta"]
    assert edits["indexes"]["i"] == ("full", 9, child.NROWS - 14 + 21 - 5)
    assert edits["indexes"]["f"] == ("light", 3, child.NROWS - 14 + 21 - 5)


def _describe(path: Path) -> dict[str, Any]:
    """Every object of the file at ``path`` as h5py sees it, data included.

    Two things are left out: the attribute ``HS_TABLE_ADDRESS`` that hyperslab adds to the
    indexes it builds (PyTables ignores it), and the order of equal values' row numbers in
    an index's ``indices`` and ``indicesLR`` (sorted here: any order of ties is an index).
    """
    found: dict[str, Any] = {}

    def visit(name: str, obj: Any) -> None:
        attrs = {k: repr(v) for k, v in obj.attrs.items() if k != "HS_TABLE_ADDRESS"}
        entry: dict[str, Any] = {"attrs": attrs}
        if isinstance(obj, h5py.Dataset):
            plist = obj.id.get_create_plist()
            data = obj[()]
            if name.rsplit("/", 1)[-1] in ("indices", "indicesLR"):
                data = np.sort(data, axis=-1)
            entry |= {
                "dtype": str(obj.dtype),
                "shape": obj.shape,
                "maxshape": obj.maxshape,
                "chunks": obj.chunks,
                "filters": [plist.get_filter(k)[:3] for k in range(plist.get_nfilters())],
                "times": h5py.h5o.get_info(obj.id).ctime != 0,
                "data": repr(data.tolist()) if data.dtype == object else data.tobytes(),
            }
        found[name] = entry

    with h5py.File(path, "r") as f:
        found["/"] = {"attrs": {k: repr(v) for k, v in f.attrs.items()}}
        f.visititems(visit)
    return found


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        ("hyperslab/table.h5", "PyTables/table.h5"),
        ("hyperslab/fixed.h5", "PyTables/fixed.h5"),
        ("hyperslab/store.h5", "PyTables/store.h5"),
        ("hyperslab/more.h5", "PyTables/more.h5"),
        ("hyperslab/copy.h5", "PyTables/copy.h5"),
        ("hyperslab-edits-own/store.h5", "PyTables-edits-own/store.h5"),
        ("hyperslab-edits-PyTables/store.h5", "PyTables-edits-own/store.h5"),
        ("PyTables-edits-hyperslab/store.h5", "PyTables-edits-own/store.h5"),
    ],
)
def test_files_are_pytables_files(
    runs: tuple[Path, Answers, Answers], mine: str, theirs: str
) -> None:
    """Same objects, types, shapes, chunks, filters, attributes and bytes as PyTables'."""
    got, ref = _describe(runs[0] / mine), _describe(runs[0] / theirs)
    assert sorted(got) == sorted(ref)
    found = [f"{name}: {k}" for name in ref for k in ref[name] if got[name][k] != ref[name][k]]
    assert not found, found
    assert len(ref) > 20


LEFT_OPEN = """
import sys
if sys.argv[1] == "hyperslab":
    import hyperslab
    hyperslab.install_as_tables()
import numpy as np, pandas as pd, tables
store = pd.HDFStore(sys.argv[2] + "/store.h5", "w")
for _ in range(2):
    store.append("x", pd.DataFrame({"a": np.arange(1000)}), data_columns=["a"])
f = tables.open_file(sys.argv[2] + "/table.h5", "w")
t = f.create_table("/", "t", np.dtype([("a", "i8")]))
t.append(np.zeros(10, dtype=t.dtype))  # buffered: only closing writes these rows
"""


@pytest.mark.parametrize("library", child.LIBRARIES)
def test_files_left_open_are_closed_at_exit(tmp_path: Path, library: str) -> None:
    """As PyTables does, with its warning: rows buffered and the indexes' state are written."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [SRC, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", LEFT_OPEN, library, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("store.h5", "table.h5"):
        assert f"UnclosedFileWarning: Closing remaining open file: {tmp_path / name}" in proc.stderr
    with h5py.File(tmp_path / "store.h5", "r") as f:
        assert f["x/table"].shape == (2000,)
        assert set(f["x/table"].attrs) >= {"CLASS", "NROWS"}
        assert "HS_FLUSHED_ROWS" not in f["x/table"].attrs
        assert f["x/_i_table/a"].attrs["DIRTY"] == 0
    with h5py.File(tmp_path / "table.h5", "r") as f:
        assert f["t"].shape == (10,)
