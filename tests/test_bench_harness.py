"""The benchmark harness (bench/harness.py, bench/_report.py) and the nodes benchmark's cases."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import benchmark_names
from bench import nodes as nodes_bench
from bench._report import (
    format_bytes,
    format_markdown,
    format_seconds,
    format_time_stats,
    result_to_dict,
    write_reports,
)
from bench.harness import (
    BenchmarkError,
    BenchmarkSpec,
    Case,
    CheckMismatchError,
    DataInfo,
    Rival,
    Stats,
    Timer,
    library_versions,
    peak_rss_bytes,
    pick,
    ratio,
    run_and_report,
    run_benchmark,
    summarize,
)

REPO_ROOT = Path(__file__).resolve().parents[1]

FAKE_TARGET = """
import time

def run(rival, case, params, timer):
    if case == "boom":
        raise RuntimeError("boom from " + rival)
    with timer:
        time.sleep(params.get("sleep", {}).get(rival, 0.0))
        block = b"\\x01" * (params.get("alloc_mb", {}).get(rival, 0) * 2**20)
        del block
    return params.get("answer", {}).get(rival, {"seen": case})
"""

VERSIONS = {"python": "3", "fake": "1.0"}
FAST, SLOW = Rival("fast", ("json",)), Rival("slow", ("json", "fractions"))
MIB = 2**20


@pytest.fixture(scope="module")
def fake_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fake_bench")
    (folder / "fake_bench_target.py").write_text(FAKE_TARGET)
    return folder


@pytest.fixture
def fake_target(fake_target_dir: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The target's name, importable here and in child processes."""
    monkeypatch.syspath_prepend(str(fake_target_dir))
    monkeypatch.setenv("PYTHONPATH", str(fake_target_dir))
    return "fake_bench_target:run"


def quiet(_message: str) -> None:
    """A progress sink that drops the messages."""


def fake_spec(target: str, cases: list[Case], fresh: bool, rivals: Any = (FAST, SLOW)) -> Any:
    return BenchmarkSpec(
        name="fake",
        title="a fake benchmark",
        target=target,
        rivals=list(rivals),
        cases=cases,
        fresh_process=fresh,
        baseline="fast",
        data=[DataInfo("g1", "nothing at all", 1234)],
        notes=["a note"],
    )


SLEEP_CASE = Case("sleep", "g1", {"sleep": {"fast": 0.001, "slow": 0.02}})
WORK_CASE = Case("work", "g1", {"sleep": {"fast": 0.001, "slow": 0.03}, "alloc_mb": {"slow": 40}})


# ----------------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([3.0], Stats(3.0, 3.0, 3.0, 1)),
        ([5.0, 1.0, 3.0], Stats(3.0, 1.0, 5.0, 3)),
        ([4.0, 1.0, 2.0, 10.0], Stats(3.0, 1.0, 10.0, 4)),
    ],
)
def test_summarize(values: list[float], expected: Stats) -> None:
    assert summarize(values) == expected


def test_summarize_empty_raises() -> None:
    with pytest.raises(ValueError, match="empty"):
        summarize([])


@pytest.mark.parametrize(
    ("value", "reference", "expected"),
    [(6.0, 2.0, 3.0), (1.0, 4.0, 0.25), (None, 1.0, None), (1.0, None, None), (1.0, 0.0, None)],
)
def test_ratio(value: float | None, reference: float | None, expected: float | None) -> None:
    assert ratio(value, reference) == expected


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0000123, "12.3 µs"), (0.0456, "45.6 ms"), (2.5, "2.5 s"), (123.4, "123 s")],
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_format_time_stats_uses_the_median_unit() -> None:
    assert format_time_stats(Stats(0.0015, 0.0009, 0.0021, 3)) == "1.5 ms (0.9..2.1)"
    assert format_time_stats(Stats(2.0, 2.0, 2.0, 1)) == "2 s"
    assert format_time_stats(Stats(0.9, 0.5, 1.0104, 3)) == "900 ms (500..1010)"


@pytest.mark.parametrize(
    ("nbytes", "text"), [(512, "512 B"), (2048, "2 KiB"), (3 * MIB, "3 MiB"), (2**31, "2 GiB")]
)
def test_format_bytes(nbytes: int, text: str) -> None:
    assert format_bytes(nbytes) == text


def test_timer_times_one_block_and_records_peak_rss() -> None:
    timer = Timer()
    assert timer.seconds is None
    with timer:
        sum(range(1000))
    assert timer.seconds is not None and 0 < timer.seconds < 1
    assert timer.peak_rss is not None and timer.peak_rss >= 10 * MIB
    with pytest.raises(BenchmarkError, match="only one block"), timer:
        pass


def test_peak_rss_grows_with_an_allocation() -> None:
    code = (
        "from bench.harness import peak_rss_bytes as p; a = p(); "
        "b = b'x' * (64 * 2**20); print(a, p())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    before, after = map(int, out.split())
    assert after - before >= 60 * MIB
    assert peak_rss_bytes() > 0


def test_pick_checks_every_name() -> None:
    assert pick(["LR", "MR"], None, "file") == ["LR", "MR"]
    assert pick(["LR", "MR"], ["mr"], "file") == ["MR"]
    with pytest.raises(BenchmarkError, match=r"unknown file 'XX'; known: LR, MR"):
        pick(["LR", "MR"], ["XX"], "file")


def test_library_versions_without_hdf5() -> None:
    versions = library_versions(["numpy", "surely-not-a-package"], hdf5=False)
    assert versions["python"] == sys.version.split()[0]
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert versions["surely-not-a-package"] == "not installed"


# ----------------------------------------------------------------------------- running


def test_fresh_process_benchmark_times_memory_and_reports(fake_target: str, tmp_path: Path) -> None:
    spec = fake_spec(fake_target, [WORK_CASE], fresh=True)
    messages: list[str] = []
    result = run_benchmark(spec, repeat=2, progress=messages.append, versions=VERSIONS)

    assert result.rivals == ["fast", "slow"] and result.baseline == "fast"
    work_fast, work_slow = result.get(WORK_CASE, "fast"), result.get(WORK_CASE, "slow")
    assert len(work_fast.seconds) == len(work_slow.seconds) == 2
    assert work_fast.check == work_slow.check == {"seen": "work"}
    assert work_slow.time.min >= 0.03 > work_fast.time.max
    assert result.time_ratio(WORK_CASE, "slow") > 5
    # Memory: the 40 MB allocation shows above the baseline of interpreter + imports.
    above_slow = result.memory_above_baseline(work_slow)
    above_fast = result.memory_above_baseline(work_fast)
    assert above_slow is not None and above_fast is not None
    assert above_slow.min >= 35 * MIB > 10 * MIB > above_fast.max
    assert len(result.baseline_rss["slow"]) == 2 and min(result.baseline_rss["slow"]) > 5 * MIB
    assert any("[1/1] g1/work: fast " in m for m in messages)

    paths, notes = write_reports(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["benchmark"] == "fake" and data["baseline_rival"] == "fast"
    assert data["versions"] == VERSIONS and data["data"][0]["nbytes"] == 1234
    rows = {(r["case"], r["rival"]): r for r in data["results"]}
    assert rows["work", "slow"]["time"]["median"] == pytest.approx(work_slow.time.median)
    assert rows["work", "slow"]["time_ratio_vs_baseline"] > 5
    assert rows["work", "slow"]["memory_above_baseline"]["min"] >= 35 * MIB
    assert rows["work", "slow"]["seconds"] == work_slow.seconds
    markdown = paths["markdown"].read_text()
    assert markdown == format_markdown(result)
    assert "| group | case | fast | slow | slow / fast |" in markdown
    assert "## Peak memory above the baseline (MiB)" in markdown and "a note" in markdown
    if importlib.util.find_spec("matplotlib") is None:
        assert "png" not in paths and "matplotlib is not installed" in notes[0]
    else:
        assert notes == [] and paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_in_process_benchmark_has_no_memory(fake_target: str) -> None:
    spec = fake_spec(fake_target, [SLEEP_CASE], fresh=False)
    result = run_benchmark(spec, repeat=3, progress=quiet, versions=VERSIONS)
    measurement = result.get(SLEEP_CASE, "slow")
    assert len(measurement.seconds) == 3 and measurement.memory is None
    assert result.memory_above_baseline(measurement) is None
    assert result.memory_ratio(SLEEP_CASE, "slow") is None
    markdown = format_markdown(result)
    assert "## Time" in markdown and "Peak memory" not in markdown
    assert result_to_dict(result)["mode"] == "in process"


def test_rivals_that_disagree_are_not_timed_and_the_others_go_on(fake_target: str) -> None:
    lie = Case("lie", "", {"answer": {"fast": [1, 2], "slow": [1, 3]}})
    spec = fake_spec(fake_target, [lie, SLEEP_CASE], fresh=False)
    result = run_benchmark(spec, repeat=1, progress=quiet, versions=VERSIONS)
    assert list(result.failures) == ["lie"]
    assert result.failures["lie"].startswith("lie: slow returned [1, 3] but fast returned [1, 2]")
    assert not result.measured(lie) and result.measured(SLEEP_CASE)
    assert {m.case.key for m in result.measurements} == {"g1/sleep"}
    with pytest.raises(KeyError, match="no measurement of 'lie'"):
        result.get(lie, "fast")
    markdown = format_markdown(result)
    assert (
        "## Failures (not timed)" in markdown
        and "| - | lie | failed | failed | failed |" in markdown
    )
    assert result_to_dict(result)["failures"] == result.failures


def test_a_failing_child_is_reported_with_its_stderr(fake_target: str) -> None:
    spec = fake_spec(fake_target, [Case("boom")], fresh=True, rivals=[FAST])
    result = run_benchmark(spec, repeat=1, progress=quiet, versions=VERSIONS)
    first, *rest = result.failures["boom"].splitlines()
    assert first == "fast boom: child exited with 1: RuntimeError: boom from fast"
    assert rest[0] == "Traceback (most recent call last):"
    assert issubclass(CheckMismatchError, BenchmarkError)


def test_unavailable_rivals_are_skipped_and_the_baseline_falls_back(fake_target: str) -> None:
    ghost = Rival("ghost", ("no_such_module_for_hyperslab_tests",))
    spec = dataclasses.replace(
        fake_spec(fake_target, [SLEEP_CASE], fresh=False, rivals=[ghost, SLOW]), baseline="ghost"
    )
    messages: list[str] = []
    result = run_benchmark(spec, repeat=1, progress=messages.append, versions=VERSIONS)
    assert result.rivals == ["slow"] and result.baseline == "slow"
    assert "no_such_module_for_hyperslab_tests" in result.skipped["ghost"]
    assert any(m.startswith("skipping ghost") for m in messages)
    with pytest.raises(BenchmarkError, match="no rival is available"):
        run_benchmark(
            fake_spec(fake_target, [SLEEP_CASE], fresh=False, rivals=[ghost]),
            progress=quiet,
            versions=VERSIONS,
        )


def test_run_and_report_prints_markdown_and_writes_files(
    fake_target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = fake_spec(fake_target, [SLEEP_CASE], fresh=False)
    assert run_and_report(spec, 1, tmp_path, progress=quiet, plot=False) == 0
    out = capsys.readouterr().out
    assert out.startswith("# fake: a fake benchmark") and "| g1 | sleep |" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "results.md"]
    bad = fake_spec(fake_target, [Case("lie", "", {"answer": {"fast": 1, "slow": 2}})], False)
    assert run_and_report(bad, 1, tmp_path / "bad", progress=quiet, plot=False) == 1
    captured = capsys.readouterr()
    assert "fake: 1 case(s) failed:\n  lie: slow returned 2 but fast returned 1" in captured.err
    assert "| - | lie | failed |" in captured.out and (tmp_path / "bad" / "results.md").is_file()


# ----------------------------------------------------------------------------- python -m bench


def test_benchmark_names_lists_benchmarks_only() -> None:
    names = benchmark_names()
    assert "nodes" in names
    assert not {"harness", "_child", "_report", "__main__", "__init__"} & set(names)


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["no_such_bench"], 2, "unknown benchmark 'no_such_bench'; known benchmarks: "),
        ([], 2, "known benchmarks: "),
        (["nodes", "--files", "XX"], 2, "unknown file 'XX'; known: LR, MR, HR, MR100k"),
        (["nodes", "--help"], 0, "--node-cache-slots"),
    ],
)
def test_python_m_bench(args: list[str], code: int, expected: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert proc.returncode == code
    assert expected in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- nodes benchmark

TINY = nodes_bench.Layout("tiny", 3, 2, 10)


def test_layout_counts_match_the_paper() -> None:
    layouts = nodes_bench.LAYOUTS
    assert [layouts[n].narrays for n in ("LR", "MR", "HR")] == [3000, 3000, 3000]
    assert layouts["MR100k"].narrays == 100_000
    assert [layouts[n].ngroups_total for n in ("LR", "MR", "HR", "MR100k")] == [6, 33, 330, 1010]
    assert TINY.nnodes == 60 + 9 + 1


def expected_check(case: str, layout: nodes_bench.Layout) -> Any:
    """What each case must see in a file of ``layout`` (3 levels or more)."""
    children = layout.ndatasets + layout.ngroups + 1  # of /ngroup0/ngroup1
    return {
        "open_close": "opened",
        "only_open": "opened",
        "full_browse": layout.nnodes,
        "partial_browse": children,
        "full_browse_attrs": {"ARRAY": layout.narrays, "GROUP": layout.ngroups_total + 1},
        "partial_browse_attrs": {"ARRAY": layout.ndatasets, "GROUP": layout.ngroups + 1},
        "full_browse_meta": {"(3,) int16": layout.narrays, "group": layout.ngroups_total + 1},
        "partial_browse_meta": {"(3,) int16": layout.ndatasets, "group": layout.ngroups + 1},
        "open_group": "GROUP",
        "open_leaf": "ARRAY",
    }[case]


@pytest.fixture(scope="module", params=["PyTables", "hyperslab"])
def tiny_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file of the TINY layout written by each writer."""
    folder = tmp_path_factory.mktemp(f"nodes_{request.param}")
    return nodes_bench.ensure_file(folder, TINY, request.param, quiet)


@pytest.mark.parametrize("rival", ["hyperslab", "PyTables", "h5py"])
@pytest.mark.parametrize("case", nodes_bench.CASES)
def test_nodes_cases_agree_with_the_layout(tiny_file: Path, rival: str, case: str) -> None:
    timer = Timer()
    check = nodes_bench.run_case(rival, case, {"path": str(tiny_file)}, timer)
    assert timer.seconds is not None and timer.seconds > 0
    assert json.loads(json.dumps(check)) == expected_check(case, TINY)


def test_nodes_files_are_written_once_and_atomically(tmp_path: Path) -> None:
    first = nodes_bench.ensure_file(tmp_path, TINY, "PyTables", quiet)
    stamp = first.stat().st_mtime_ns
    again = nodes_bench.ensure_file(tmp_path, TINY, "PyTables", quiet)
    assert again == first and again.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.h5"]


def test_nodes_spec_describes_files_and_cases(tmp_path: Path) -> None:
    path = nodes_bench.ensure_file(tmp_path, TINY, "PyTables", quiet)
    spec = nodes_bench.build_spec(
        {"MR": path}, ["open_leaf", "full_browse"], ["PyTables", "h5py"], "PyTables", "PyTables", 7
    )
    assert [c.key for c in spec.cases] == ["MR/open_leaf", "MR/full_browse"]
    assert spec.cases[0].params == {"path": str(path), "node_cache_slots": 7}
    assert [r.name for r in spec.rivals] == ["PyTables", "h5py"]
    assert spec.data[0].nbytes == path.stat().st_size > 0
    assert spec.fresh_process and spec.target == "bench.nodes:run_case"


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_a_progress_bar_of_the_cases_on_a_terminal_only(
        fake_target: str, monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    stderr = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    spec = fake_spec(fake_target, [SLEEP_CASE, WORK_CASE], fresh=False)
    result = run_benchmark(spec, 1, progress=quiet)
    assert not result.failures
    shown = stderr.getvalue()
    assert ("fake: cases" in shown and "2/2" in shown) == terminal


def test_every_benchmark_takes_no_plot() -> None:
    """``--no-plot`` (reports without matplotlib's PNG) is accepted by every benchmark."""
    import importlib

    for name in benchmark_names():
        parser = importlib.import_module(f"bench.{name}").build_parser()
        assert parser.parse_known_args(["--no-plot"])[1] == [], name


def test_scratch_folder_is_removed_however_the_block_ends(tmp_path: Path) -> None:
    from bench.harness import scratch_folder

    parent = tmp_path / "made" / "here"
    with scratch_folder("x", parent) as folder:
        (folder / "data.h5").write_bytes(b"1234")
        assert folder.parent == parent and folder.name.startswith("hyperslab-bench-x-")
    assert not folder.exists() and parent.exists()
    with pytest.raises(RuntimeError), scratch_folder("y", parent) as failed:
        (failed / "data.h5").write_bytes(b"1234")
        raise RuntimeError("a rival failed")
    assert not failed.exists()
