"""The ``daskbench`` benchmark (bench/daskbench.py): its files, every rival of every case on
the threaded scheduler against NumPy / pandas, one case on a cluster of processes, and the
report's goal lines."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import h5py
import hdf5plugin  # noqa: F401 - registers the Blosc2 filter for h5py
import numpy as np
import pytest
import tables

from bench import _dask_data as data
from bench import benchmark_names
from bench import daskbench as dbench
from bench.harness import BenchmarkError, Timer

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHAPE, CHUNKS = (6, 16, 24), (3, 8, 8)
NROWS = 3000
TINY = ["--shape", "6,16,24", "--chunks", "3,8,8", "--block-kib", "2", "--rows", str(NROWS),
        "--repeat", "1", "--no-plot"]


def _rivals(part: str, scheduler: str = "threads") -> list[str]:
    return [r.name for r in dbench.RIVALS
            if r.part == part and (scheduler == "threads" or r.on_cluster)]


def test_files_hold_the_array_and_the_table(tmp_path: Path) -> None:
    for codec in data.CODECS:
        path = tmp_path / f"{codec.replace(':', '-')}.h5"
        data.write_array(path, SHAPE, CHUNKS, codec)
        with h5py.File(path, "r") as f:  # h5py as the oracle of what hyperslab wrote
            np.testing.assert_array_equal(f["a"][...], data.array_slab(SHAPE, 0, SHAPE[0]))
            np.testing.assert_allclose(
                f["a"][...], np.linspace(0, data.STOP, np.prod(SHAPE)).reshape(SHAPE),
                rtol=1e-15)
            assert f["a"].chunks == CHUNKS
            assert (f["a"].compression is None) == (codec == "none")
    path = tmp_path / "table.h5"
    chunkrows, _ = data.write_table(path, NROWS)
    with tables.open_file(path) as f:  # PyTables: what pandas wrote
        t = f.get_node(data.TABLE_NODE)
        assert t.chunkshape == (chunkrows,) and t.nrows == NROWS
        assert set(data.COLUMNS) <= set(t.colnames) and not any(t.colindexed.values())
        assert len(t.read_where(data.WHERE)) == data.expected_table_check(NROWS)["rows"]
    assert 0.01 * NROWS < data.expected_table_check(NROWS)["rows"] < 0.05 * NROWS


def test_reopen_wrapper_pickles_and_opens_once(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    data.write_array(path, SHAPE, CHUNKS, "blosc2:lz4")
    source = pickle.loads(pickle.dumps(data.H5Reopen(str(path), "/a", SHAPE, "float64")))
    try:
        np.testing.assert_array_equal(source[1:3, 2], data.array_slab(SHAPE, 1, 3)[:, 2])
        assert source[0, 0, 0] == 0.0 and list(data._OPEN) == [str(path)]
    finally:
        data.close_reopened()
    assert data._OPEN == {}


def test_every_case_and_rival_on_threads_matches_numpy_and_pandas(tmp_path: Path) -> None:
    path = tmp_path / "a.h5"
    data.write_array(path, SHAPE, CHUNKS, "blosc2:zstd")
    table = tmp_path / "t.h5"
    chunkrows, _ = data.write_table(table, NROWS)
    base = {"scheduler": "threads", "group": "g", "path": str(path), "node": "/a",
            "shape": list(SHAPE), "blocks": [3, 8, 16], "part": "arrays"}
    try:
        for case, axis in data.ARRAY_CASES.items():
            expected = data.expected_array_check(SHAPE, axis)
            for rival in _rivals("arrays"):
                timer = Timer()
                got = dbench.run_case(rival, case, {**base, "axis": axis}, timer)
                assert got == expected, (rival, case)
                assert timer.seconds is not None
        params = {"scheduler": "threads", "group": "table", "path": str(table), "part": "table",
                  "node": data.TABLE_NODE, "nrows": NROWS,
                  "rows": data.partition_rows(NROWS, chunkrows, 4)}
        for rival in _rivals("table"):
            got = dbench.run_case(rival, "query", params, Timer())
            assert got == data.expected_table_check(NROWS), rival
    finally:
        data.close_reopened()


def test_run_case_errors_name_the_rival_and_case(tmp_path: Path) -> None:
    params = {"part": "arrays", "scheduler": "threads", "group": "g", "node": "/a",
              "path": str(tmp_path / "missing.h5"), "shape": [2, 2, 2], "blocks": [1, 1, 1],
              "axis": 0}
    with pytest.raises(BenchmarkError, match="unknown rival 'nobody'"):
        dbench.run_case("nobody", "sum(axis=0)", params, Timer())
    with pytest.raises(BenchmarkError, match=r"dask \+ h5py \(lock\) threads sum\(axis=0\)"):
        dbench.run_case("dask + h5py (lock)", "sum(axis=0)", params, Timer())
    with pytest.raises(BenchmarkError, match="'cluster' is not running"):
        dbench.run_case(dbench.HYPERSLAB_DASK, "sum(axis=0)",
                        {**params, "scheduler": "cluster"}, Timer())


def _paths_by_case() -> dict[str, dict[str, set[str]]]:
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for case, rival, path in dbench.OPENED:
        found[case][rival].add(path)
    return found


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:
    dbench.OPENED.clear()
    assert dbench.main(argv) == 0  # checks differing across rivals would fail the run
    out = Path(argv[argv.index("--out") + 1])
    return capsys.readouterr().out, json.loads((out / "summary.json").read_text())


def test_tiny_run_on_threads_every_case(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = [*TINY, "--schedulers", "threads", "--codecs", "blosc2:zstd,none", "--out", str(out),
            "--tmpdir", str(work)]
    markdown, summary = _run(argv, capsys)
    goals = [line for line in markdown.splitlines() if line.startswith(("- met:", "- NOT MET:"))]
    assert len(goals) == 2 + 1  # one per codec, one for the query
    assert all("threads" in g for g in goals) and any("table" in g for g in goals)
    assert [g["goal"][:30] for g in summary["goals"]] == [g.split(": ", 1)[1][:30] for g in goals]
    medians = summary["medians"]
    assert sorted(medians) == ["arrays threads", "table threads"]
    cases = medians["arrays threads"]
    assert len(cases) == 2 * len(data.ARRAY_CASES)
    assert all(sorted(m) == sorted(_rivals("arrays")) for m in cases.values())
    assert sorted(medians["table threads"]["table/query"]) == sorted(_rivals("table"))
    assert all(t > 0 for m in cases.values() for t in m.values())
    assert "dask" in markdown and "distributed" in markdown and "Threads:" in markdown
    # Every rival of a case read the same file, and every case read its own.
    by_case = _paths_by_case()
    assert len(by_case) == len(cases) + 1
    for case, rivals in by_case.items():
        assert len(set().union(*rivals.values())) == 1, case
    assert list(work.iterdir()) == []  # the files went with the run
    assert (out / "arrays-threads" / "results.json").exists()


def test_one_case_on_a_cluster_of_processes(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = [*TINY, "--schedulers", "cluster", "--parts", "arrays", "--codecs", "blosc2:lz4",
            "--cases", "axis1", "--out", str(out), "--tmpdir", str(work)]
    markdown, summary = _run(argv, capsys)
    assert "LocalCluster(n_workers=2, processes=True, threads_per_worker=1)" in markdown
    medians = summary["medians"]["arrays cluster"]["blosc2:lz4/sum(axis=1)"]
    # h5py datasets travel by distributed's h5py serializer: that rival runs there too.
    assert sorted(medians) == sorted(_rivals("arrays", "cluster"))
    assert "dask + h5py (lock)" in medians and "hyperslab alone" not in medians
    assert len(summary["goals"]) == 1 and summary["goals"][0]["goal"].startswith("cluster")
    by_case = _paths_by_case()["cluster blosc2:lz4/sum(axis=1)"]
    assert len(set().union(*by_case.values())) == 1
    assert list(work.iterdir()) == []


def test_bad_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--schedulers", "mpi"], ["--cases", "axis9"], ["--baseline", "h5py"]):
        with pytest.raises(SystemExit) as exc:
            dbench.main(argv)
        assert exc.value.code == 2
    assert "unknown scheduler 'mpi'" in capsys.readouterr().err


def test_python_m_bench_daskbench_and_hyperslab_bench() -> None:
    assert "daskbench" in benchmark_names() and "dask" not in benchmark_names()
    for cmd in ([sys.executable, "-m", "bench", "daskbench", "--help"],
                [sys.executable, "-m", "hyperslab.tools.cli", "bench", "daskbench", "--help"],
                [sys.executable, "-m", "bench", "dask", "--help"],  # the name
                [sys.executable, "-m", "hyperslab.tools.cli", "bench", "dask", "--help"]):
        proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert "--quick" in proc.stdout and "--tmpdir" in proc.stdout
        assert "daskbench" in proc.stdout.splitlines()[0]
