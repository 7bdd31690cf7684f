"""The ``pandas`` benchmark (bench/pandas.py): its frame, its cases and a tiny full run.

Cases run on PyTables in this process only if this process's ``tables`` is PyTables (no
test here installs hyperslab as ``tables``); hyperslab runs in the fresh processes of the
full run, whose checks the harness compares with PyTables' before timing anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tables

from bench import benchmark_names
from bench import pandas as pbench
from bench.harness import BenchmarkError, Timer

REPO_ROOT = Path(__file__).resolve().parents[1]
NROWS = 4000


def test_frame_is_seeded_and_typed() -> None:
    frame = pbench.make_frame(NROWS)
    pd.testing.assert_frame_equal(frame, pbench.make_frame(NROWS))
    assert list(frame.columns) == ["a", "b", "s", "v0", "v1", "v2", "v3", "n", "t", "k"]
    assert [str(t) for t in frame.dtypes] == [
        "int64", "float64", "str", *["float64"] * 4, "int32", "datetime64[s]", "bool",
    ]
    assert frame["s"].str.len().eq(8).all() and frame["s"].nunique() <= 1000
    hits = frame.query(pbench.where_of(NROWS).replace("&", "and"))
    assert 0.005 * NROWS < len(hits) < 0.02 * NROWS


def test_every_case_runs_on_pytables_with_consistent_checks(tmp_path: Path) -> None:
    assert tables.__name__ == "tables"  # PyTables is this process's tables
    path = tmp_path / "PyTables.h5"
    pbench.write_files("PyTables", str(path), NROWS)
    params = {
        "nrows": NROWS,
        "files": {"PyTables": str(path)},
        "scratch": {"PyTables": str(tmp_path / "scratch.h5")},
    }
    checks = {}
    for case in pbench.CASES:
        timer = Timer()
        checks[case] = pbench.run_case("PyTables", case, params, timer)
        assert timer.seconds is not None and timer.seconds > 0, case
    frame = pbench.make_frame(NROWS)
    assert checks["read_hdf"] == checks["dask"] == pbench.frame_check(frame)
    hits = frame.query(pbench.where_of(NROWS).replace("&", "and"))
    assert checks["where indexed"] == checks["where not indexed"] == pbench.frame_check(hits)
    assert checks["to_hdf"] == {"crc32": pbench.table_crc32(str(path), pbench.KEY)}
    assert not (tmp_path / "scratch.h5").exists()
    with tables.open_file(path) as f:
        indexed = sorted(n for n, i in f.root.df.table.colindexed.items() if i)
        assert indexed == ["a", "b", "index", "s"]  # the data columns and the index
        assert not any(f.root.noindex.table.colindexed.values())
        assert f.root.df.table.filters.complib == pbench.COMPLIB
        np.testing.assert_array_equal(f.root.df.table.cols.a[:], frame["a"].to_numpy())


@pytest.mark.parametrize(
    ("rival", "case", "match"),
    [
        ("nobody", "read_hdf", "unknown rival 'nobody'"),
        ("PyTables", "delete", "unknown case 'delete'"),
        ("PyTables", "read_hdf", "PyTables read_hdf: .*missing.h5"),
    ],
)
def test_run_case_errors_name_the_rival_and_case(
    rival: str, case: str, match: str, tmp_path: Path
) -> None:
    params = {"nrows": NROWS, "files": {"PyTables": str(tmp_path / "missing.h5")}}
    with pytest.raises(BenchmarkError, match=match):
        pbench.run_case(rival, case, params, Timer())


def test_tiny_run_compares_hyperslab_with_pytables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--rows", "3000", "--repeat", "1", "--no-plot", "--out", str(out)]
    argv += ["--tmpdir", str(work), "--cases", "to_hdf,where indexed"]
    assert pbench.main(argv) == 0  # a case whose checks differ would fail the run
    markdown = capsys.readouterr().out
    assert "| hyperslab / PyTables |" in markdown
    versions = next(line for line in markdown.splitlines() if line.startswith("Versions:"))
    assert all(f" {name} " in versions for name in ("pandas", "dask", "pyarrow", "tables"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nrows"] == 3000
    assert sorted(summary["medians"]) == ["to_hdf", "where indexed"]
    for medians in summary["medians"].values():
        assert sorted(medians) == ["PyTables", "hyperslab"] and min(medians.values()) > 0
    assert all(r > 0 for r in summary["ratios"].values())
    assert sorted(summary["file_bytes"]) == ["PyTables.h5", "hyperslab.h5"]
    assert min(summary["file_bytes"].values()) > 3000 * 8 * 3
    assert {"pandas", "dask", "pyarrow", "tables", "hyperslab"} <= set(summary["versions"])
    content = json.loads((out / "results.json").read_text())
    assert content["failures"] == {}
    assert list(work.iterdir()) == []  # the files went with the run


def test_python_m_bench_pandas() -> None:
    assert "pandas" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "pandas", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "--rows" in proc.stdout and "--quick" in proc.stdout
