"""The ``queries`` benchmark (bench/queries.py): its data, limits, cases and a tiny full run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import benchmark_names
from bench import queries as qbench
from bench.harness import BenchmarkError, Timer

REPO_ROOT = Path(__file__).resolve().parents[1]
NROWS = 20_000
SEARCH = [r.name for r in qbench.SEARCH_RIVALS if r.library != "pandas"]  # pandas: optional
PYTABLES_SEARCH = [r.name for r in qbench.SEARCH_RIVALS if r.library == "PyTables"]


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    """Each test loads its own data and runs its own smoke tests."""
    qbench._SOURCES.clear()
    qbench.smoke_test.cache_clear()
    yield
    qbench._SOURCES.clear()
    qbench.smoke_test.cache_clear()


@pytest.fixture(scope="module")
def records() -> Any:
    return qbench.make_records(NROWS)


@pytest.fixture
def source(tmp_path: Path, records: Any) -> Path:
    path = tmp_path / "records.npy"
    np.save(path, records)
    return path


def test_records_are_those_of_indexed_search(records: Any) -> None:
    assert records.dtype == np.dtype(
        [("col1", "<i4"), ("col2", "<i4"), ("col3", "<f8"), ("col4", "<f8")]
    )
    assert records.dtype.itemsize == qbench.ROW_BYTES
    np.testing.assert_array_equal(records["col1"], records["col2"])
    np.testing.assert_array_equal(records["col3"], records["col4"])
    np.testing.assert_array_equal(records["col2"], np.trunc(records["col4"]).astype(np.int32))
    noise = records["col4"] - np.arange(NROWS)
    assert 0.08 * NROWS < noise.std() < 0.12 * NROWS  # normal(0, 0.1 * nrows)
    np.testing.assert_array_equal(records, qbench.make_records(NROWS))  # seeded


@pytest.mark.parametrize("fraction", list(qbench.SELECTIVITIES.values()))
def test_limits_give_the_wanted_selectivity(records: Any, fraction: float) -> None:
    limits = qbench.choose_limits(records, fraction)
    assert sorted(limits) == ["lim1", "lim2", "lim3", "lim4", "lim5"]
    assert limits["lim1"] < limits["lim2"] < limits["lim3"] < limits["lim4"]
    hits = qbench.numpy_hits(records, limits)
    assert abs(len(hits) - fraction * NROWS) <= max(2, 0.05 * fraction * NROWS)
    # Both sides of the `|` contribute about half of the hits.
    first = (records["col4"] >= limits["lim1"]) & (records["col4"] < limits["lim2"])
    assert 0.3 < first.sum() / len(hits) < 0.7


def test_pandas_condition_marks_the_outer_variables() -> None:
    assert qbench.PANDAS_CONDITION.count("@lim") == 5
    assert qbench.PANDAS_CONDITION.replace("@", "") == qbench.CONDITION


def test_check_of_a_result() -> None:
    assert qbench.check_of([3, 4]) == qbench.check_of(np.array([3, 4], dtype=np.int32))
    check = qbench.check_of(np.array([3, 4], dtype=np.int32))
    assert check["hits"] == 2 and check["sum"] == 7
    assert check != qbench.check_of([4, 3])


@pytest.mark.parametrize("codec", list(qbench.CODECS))
def test_every_case_agrees_with_numpy(
    codec: str, tmp_path: Path, source: Path, records: Any
) -> None:
    files = {lib: str(tmp_path / f"{lib}.h5") for lib in qbench.LIBRARIES}
    for library, path in files.items():
        qbench.write_table(library, path, records, codec, Timer(), block=7000)
        crc, chunks = qbench.file_info(path)
        assert crc == qbench.records_crc32(records) and chunks is not None
    limits = qbench.choose_limits(records, 0.01)
    params = {"part": "search", "codec": codec, "source": str(source), "limits": limits}
    params["files"] = files
    expected = qbench.check_of(qbench.numpy_hits(records, limits))
    for rival in SEARCH:
        timer = Timer()
        assert qbench.run_case(rival, "q", params, timer) == expected, rival
        assert timer.seconds is not None and timer.seconds > 0
    params["part"] = "iterate"
    total = int(records["col2"].sum(dtype=np.int64))
    scratch = {lib: str(tmp_path / f"scratch-{lib}.h5") for lib in qbench.LIBRARIES}
    for library in qbench.LIBRARIES:
        assert qbench.run_case(library, "it", params, Timer()) == {"sum": total}
        append = {**params, "part": "append", "scratch": scratch}
        assert qbench.run_case(library, "ap", append, Timer()) == {"crc32": crc}
        assert not Path(scratch[library]).exists()


def test_pandas_agrees_with_numpy(source: Path, records: Any) -> None:
    limits = qbench.choose_limits(records, 0.01)
    params = {"part": "search", "codec": "none", "source": str(source), "limits": limits}
    expected = qbench.check_of(qbench.numpy_hits(records, limits))
    assert qbench.run_case("pandas", "q", {**params, "files": {}}, Timer()) == expected


@pytest.mark.parametrize(
    ("rival", "part", "match"),
    [
        ("nobody", "search", "unknown rival 'nobody'"),
        ("PyTables", "delete", "unknown part 'delete'"),
        ("PyTables", "iterate", "PyTables iterate it: .*missing.h5"),
        ("PyTables where", "search", "PyTables where search it: "),
    ],
)
def test_run_case_errors_name_the_rival_and_part(
    rival: str, part: str, match: str, tmp_path: Path
) -> None:
    params = {"part": part, "limits": {}, "files": {"PyTables": str(tmp_path / "missing.h5")}}
    with pytest.raises(BenchmarkError, match=match):
        qbench.run_case(rival, "it", params, Timer())


def test_smoke_test_reports_a_failing_library(monkeypatch: pytest.MonkeyPatch) -> None:
    assert qbench.smoke_test("PyTables") is None
    qbench.smoke_test.cache_clear()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise AttributeError("'File' object has no attribute 'create_table'")

    monkeypatch.setattr(qbench, "write_table", broken)
    reason = qbench.smoke_test("PyTables")
    assert reason == (
        "smoke test (none) failed: AttributeError: 'File' object has no attribute 'create_table'"
    )
    rival = qbench.rival_named("PyTables read_where")
    assert rival.unavailable_reason() == reason


def test_tiny_run_reports_and_cleans_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--rows", "3000", "--repeat", "1", "--no-plot", "--out", str(out)]
    argv += ["--rivals", "PyTables,NumPy,numexpr", "--tmpdir", str(work)]
    argv += ["--codecs", "none,blosc2:lz4"]
    assert qbench.main(argv) == 0
    markdown = capsys.readouterr().out
    assert "## Files" in markdown and "## Goals" in markdown
    assert "search: Mrows/s, GB/s" in markdown and "iterate: Mrows/s" in markdown
    summary = json.loads((out / "results.json").read_text())
    assert summary["hits"] == {"1%": 30, "0.01%": 0}
    assert sorted(summary["files"]) == ["blosc2:lz4", "none"]
    assert summary["files"]["none"]["PyTables"]["bytes"] > 3000 * qbench.ROW_BYTES
    medians = summary["medians"]["search"]["none/col2 at 1%"]
    assert sorted(medians) == sorted(["NumPy", "numexpr", *PYTABLES_SEARCH])
    assert all(m > 0 for m in medians.values())
    assert summary["medians"]["append"]["blosc2:lz4/append"]["PyTables"] > 0
    for part in qbench.PARTS:
        content = json.loads((out / part / "results.json").read_text())
        assert content["failures"] == {}
    assert list(work.iterdir()) == []  # the files went with the run


def test_python_m_bench_queries() -> None:
    assert "queries" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "queries", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "--rows" in proc.stdout and "--codecs" in proc.stdout
