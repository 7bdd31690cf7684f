"""The ``indexes`` benchmark (bench/indexes.py): limits, checks, rivals and a quick full run."""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import _indexes_ops as ops
from bench import benchmark_names
from bench import indexes as ibench
from bench._indexes_report import CREATE_WARMUP, HARNESS_WARMUP
from bench._report import format_seconds
from bench.harness import BenchmarkError, BenchmarkSpec, Case, Rival, Timer

REPO_ROOT = Path(__file__).resolve().parents[1]
NROWS = 5000

COUNTING_TARGET = """
def run(rival, case, params, timer):
    with open(params["log"], "a") as log:
        log.write(rival + "\\n")
    with open(params["log"]) as log:
        calls = [line.strip() for line in log].count(rival)
    with timer:
        pass
    answers = params["answers"][rival]
    return answers[min(calls, len(answers)) - 1]
"""
"""A harness target that logs its calls and returns its rival's answer to the Nth call."""


@pytest.fixture(autouse=True)
def fresh_smoke_tests() -> Iterator[None]:
    """Each test runs its own smoke tests (some patch the libraries)."""
    ops.smoke_test.cache_clear()
    yield
    ops.smoke_test.cache_clear()


@pytest.fixture(scope="module")
def records() -> Any:
    return ibench.make_records(NROWS)


@pytest.fixture
def prepared(tmp_path: Path) -> ibench.Prepared:
    """Both libraries' tables (none), indexed and sorted copies, and SQLite, at NROWS rows."""
    sorters = [lib for lib in ibench.LIBRARIES if ops.smoke_test(lib)["sorted"] is None]
    prepared = ibench.prepare(
        tmp_path, NROWS, [1, 10, 1000], ["none"], ibench.LIBRARIES, True, lambda m: None
    )
    ibench.prepare_query_files(prepared, sorters, {}, lambda m: None)
    return prepared


def _patch_create_index(monkeypatch: pytest.MonkeyPatch, error: type[Exception]) -> None:
    """Make hyperslab's Column.create_index raise ``error``."""
    column = importlib.import_module("hyperslab.nodes.tables.columns").Column

    def create_index(self: Any, *args: Any, **kwargs: Any) -> None:
        raise error("create_index is not written yet")

    monkeypatch.setattr(column, "create_index", create_index)


@pytest.mark.parametrize("fresh", [False, True])
def test_run_checked_times_and_checks_every_run_without_an_untimed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: bool
) -> None:
    (tmp_path / "counting_target.py").write_text(COUNTING_TARGET)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    answers = {
        "agree": {"a": ["x"], "b": ["x"]},
        "b differs": {"a": ["x"], "b": ["y"]},
        "b changes": {"a": ["x"], "b": ["x", "z"]},
    }
    cases = [
        Case(name, "g", {"log": str(tmp_path / f"{name}.log"), "answers": answers[name]})
        for name in answers
    ]
    rivals = [Rival("a", ("json",)), Rival("b", ("json",)), Rival("c", ("no_such_module",))]
    spec = BenchmarkSpec("t", "t", "counting_target:run", rivals, cases, fresh, baseline="b")
    messages: list[str] = []
    result = ops.run_checked(spec, 2, 60.0, messages.append)
    assert result.rivals == ["a", "b"] and result.baseline == "b"
    assert "cannot import no_such_module" in result.skipped["c"]
    assert (tmp_path / "agree.log").read_text().split() == ["a", "b", "a", "b"]  # no extra run
    assert [(m.case.name, m.rival, m.check, len(m.seconds)) for m in result.measurements] == [
        ("agree", "a", "x", 2),
        ("agree", "b", "x", 2),
    ]
    assert all(t >= 0 for m in result.measurements for t in m.seconds)
    assert all(len(m.peak_rss) == (2 if fresh else 0) for m in result.measurements)
    assert len(result.baseline_rss["a"]) == (2 if fresh else 0)
    assert result.failures == {
        "g/b differs": 'g/b differs: b returned "y" but a returned "x"',
        "g/b changes": 'g/b changes: b returned "z" but a returned "x"',
    }
    assert (tmp_path / "b differs.log").read_text().split() == ["a", "b"]  # stops at once
    summary = ", ".join(f"{m.rival} {format_seconds(m.time.median)}" for m in result.measurements)
    assert messages[0].startswith("skipping c: ")
    assert re.fullmatch(rf"\[1/3\] g/agree: {re.escape(summary)}  \(\d+ s elapsed\)", messages[1])
    assert messages[2].startswith("[2/3] FAILED: g/b differs: ")
    with pytest.raises(ValueError, match="repeat must be at least 1, not 0"):
        ops.run_checked(spec, 0, 60.0, messages.append)


def test_limits_give_exact_hit_counts(records: Any) -> None:
    hits = ibench.fitting_hits(NROWS, ibench.HIT_COUNTS)
    assert hits == [1, 10, 100, 1000]  # 10,000 do not fit after the 0.3 quantile
    limits = ibench.query_limits(records, hits)
    for n, lim in limits.items():
        assert lim["lim1"] < lim["lim2"]
        assert len(ops.numpy_values(records, "col4", lim)) == n
    assert len({lim["lim1"] for lim in limits.values()}) == 1  # one start for all
    with pytest.raises(ValueError, match="10,000 hits do not fit in 5,000 rows"):
        ibench.query_limits(records, [10_000])


def test_sorted_check_ignores_order_only() -> None:
    check = ops.sorted_check([3, 1, 2])
    assert check == ops.sorted_check(np.array([2, 3, 1], dtype=np.int32))
    assert check["hits"] == 3 and check["sum"] == 6
    assert check != ops.sorted_check([3, 1, 1])


@pytest.mark.parametrize("column", ["col2", "col4"])
def test_probe_selects_a_few_rows(records: Any, column: str) -> None:
    probe = ops.probe_of(records, column)
    assert probe["condition"] == f"(lim1 <= {column}) & ({column} < lim2)"
    assert 1 <= probe["expected"]["hits"] <= 0.01 * NROWS


def test_parse_kinds() -> None:
    assert ibench.parse_kinds("medium:6,full:9") == [("medium", 6), ("full", 9)]
    assert ibench.parse_kinds(" ultralight:0 ") == [("ultralight", 0)]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("medium", "bad index 'medium'"),
        ("huge:6", "bad index 'huge:6'"),
        ("full:10", "bad index 'full:10'"),
        ("full:x", "bad index 'full:x'"),
        ("full:9,light:3,full:9", "index 'full:9' given twice"),
    ],
)
def test_parse_kinds_names_the_bad_entry(text: str, match: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=match):
        ibench.parse_kinds(text)


def test_every_query_rival_agrees_with_numpy(prepared: ibench.Prepared) -> None:
    assert prepared.dropped == {}
    assert prepared.hits == {1: 1, 10: 10, 1000: 1000}
    assert "USING INDEX" in prepared.sqlite_info["plan"]
    cases = ibench.query_cases(prepared, ["none"])
    assert [c.key for c in cases[:3]] == [
        "none cold/1 hit",
        "none cold/10 hits",
        "none cold/1,000 hits",
    ]
    rivals = ibench.PART_RIVALS["query"]
    assert {r.name: r.unavailable_reason() for r in rivals} == dict.fromkeys(r.name for r in rivals)
    ran = set()
    for case in cases:
        for rival in rivals:
            timer = Timer()
            check = ibench.run_case(rival.name, case.name, dict(case.params), timer)
            assert check == case.params["expected"], (rival.name, case.key)
            assert timer.seconds is not None and timer.seconds > 0
            ran.add(rival.name)
    assert (
        ran
        == {r.name for r in rivals}
        == {
            *(f"{lib} {mode}" for lib in ("hyperslab", "PyTables") for mode in ops.MODES),
            "SQLite indexed",
            "hyperslab indexed (index by PyTables)",
            "hyperslab sorted (index by PyTables)",
        }
    )


def test_a_wrong_result_fails_the_case(prepared: ibench.Prepared) -> None:
    case = ibench.query_cases(prepared, ["none"])[1]
    params = {**case.params, "expected": {**case.params["expected"], "hits": 11}}
    for rival in ("PyTables in-kernel", "SQLite indexed"):
        with pytest.raises(BenchmarkError, match=f"{rival} query 10 hits: got .*'hits': 10"):
            ibench.run_case(rival, case.name, params, Timer())


@pytest.mark.parametrize(
    ("column", "kind", "optlevel"), [("col2", "medium", 6), ("col4", "full", 9)]
)
def test_create_case_builds_and_checks_the_index(
    prepared: ibench.Prepared, column: str, kind: str, optlevel: int
) -> None:
    cases = ibench.create_cases(prepared, [(kind, optlevel)])
    case = next(c for c in cases if c.params["column"] == column)
    assert case.key == f"none/{column} {kind}:{optlevel}"
    expected = case.params["expected"]
    assert expected["is_csi"] == (kind == "full") and expected["nelements"] == NROWS
    assert [r.name for r in ibench.PART_RIVALS["create"]] == ["hyperslab", "PyTables"]
    for rival in ibench.PART_RIVALS["create"]:
        assert rival.unavailable_reason() is None
        timer = Timer()
        assert ibench.run_case(rival.name, case.name, dict(case.params), timer) == expected
        scratch = Path(case.params["scratch"][rival.name])
        plain = Path(case.params["plain"][rival.name])
        assert scratch.stat().st_size > plain.stat().st_size  # the index is in the file
        assert timer.seconds is not None and timer.seconds > 0


@pytest.mark.parametrize(
    ("rival", "part", "match"),
    [
        ("nobody", "query", "unknown rival 'nobody'"),
        ("PyTables", "delete", "unknown part 'delete'"),
        ("PyTables in-kernel", "query", "PyTables in-kernel query q: .*missing.h5"),
        ("SQLite indexed", "query", "SQLite indexed query q: OperationalError"),
    ],
)
def test_run_case_errors_name_the_rival_and_part(
    rival: str, part: str, match: str, tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.h5")
    params = {
        "part": part,
        "cache": "cold",
        "limits": {"lim1": 0.0, "lim2": 1.0},
        "files": {"PyTables": {"plain": missing, "indexed": missing}},
        "sqlite": str(tmp_path / "missing.sqlite"),
        "expected": {},
    }
    with pytest.raises(BenchmarkError, match=match):
        ibench.run_case(rival, "q", params, Timer())


@pytest.mark.parametrize("error", [NotImplementedError, AttributeError, ValueError])
def test_a_broken_index_api_is_a_failed_smoke_test(
    monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    _patch_create_index(monkeypatch, error)
    reasons = ops.smoke_test("hyperslab")
    why = f"smoke test (none, indexed) failed: {error.__name__}: create_index is not written yet"
    assert reasons == {"in-kernel": None, "indexed": why, "sorted": why}
    assert ibench.rival_named("hyperslab").unavailable_reason() == why
    assert ibench.rival_named("hyperslab sorted").unavailable_reason() == why
    assert ibench.rival_named("hyperslab in-kernel").unavailable_reason() is None


def test_a_broken_hyperslab_index_api_fails_the_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _patch_create_index(monkeypatch, NotImplementedError)
    out = tmp_path / "out"
    argv = ["--rows", "2000", "--repeat", "1", "--no-plot", "--out", str(out)]
    argv += ["--codecs", "none", "--hits", "10", "--kinds", "light:3", "--modes", "indexed"]
    argv += ["--rivals", "hyperslab,PyTables", "--tmpdir", str(tmp_path / "work")]
    assert ibench.main(argv) == 1
    err = capsys.readouterr().err
    for rival in ("hyperslab", "hyperslab indexed"):
        assert f"indexes: {rival} failed: smoke test (none, indexed) failed: " in err
    summary = json.loads((out / "results.json").read_text())  # the others still measured
    assert summary["medians"]["query"]["none cold/10 hits"]["PyTables indexed"] > 0
    assert summary["medians"]["create"]["none/col4 light:3"]["PyTables"] > 0


def test_quick_run_reports_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[tuple[str, str]] = []

    def counted_build_index(library: str, plain: str, path: str, *args: Any) -> None:
        built.append((library, Path(path).name))
        ops.build_index(library, plain, path, *args)

    monkeypatch.setattr(ibench, "build_index", counted_build_index)
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--quick", "--repeat", "1", "--no-plot", "--out", str(out), "--tmpdir", str(work)]
    argv += ["--hits", "1,10000", "--create-repeat", "2"]
    assert ibench.main(argv) == 0
    markdown = capsys.readouterr().out
    for section in ("## Files", "## Index creation", "## Time", "## Goals (issue 7"):
        assert section in markdown
    assert CREATE_WARMUP in markdown and HARNESS_WARMUP not in markdown
    assert HARNESS_WARMUP in (out / "query" / "results.md").read_text()
    assert CREATE_WARMUP in (out / "create" / "results.md").read_text()
    summary = json.loads((out / "results.json").read_text())
    assert summary["nrows"] == ibench.QUICK_ROWS
    assert summary["hits"] == {"1": 1, "10000": 10000}
    assert summary["dropped"] == {}
    queries = summary["medians"]["query"]
    assert sorted(queries) == sorted(
        f"{codec} {cache}/{hits}"
        for codec in ibench.DEFAULT_CODECS
        for cache in ibench.CACHES
        for hits in ("1 hit", "10,000 hits")
    )
    assert summary["skipped"] == {"create": {}, "query": {}}
    measured = {f"{lib} {mode}" for lib in ("hyperslab", "PyTables") for mode in ops.MODES}
    measured |= {"SQLite indexed", "hyperslab indexed (index by PyTables)",
                 "hyperslab sorted (index by PyTables)"}
    creators = {"hyperslab", "PyTables"}
    for medians in queries.values():
        assert {r for r, t in medians.items() if t is not None and t > 0} == measured
    creation = summary["medians"]["create"]
    assert sorted(creation) == sorted(
        f"{codec}/{column} {kind}"
        for codec in ibench.DEFAULT_CODECS
        for column in ("col2", "col4")
        for kind in ("medium:6", "full:9")
    )
    for key, sizes in summary["index_bytes"].items():
        for lib in creators:
            assert creation[key][lib] > 0
            assert sizes[lib] > 0, (key, lib)
    reused = {b["library"] for b in summary["built"] if b["what"].endswith("(create part)")}
    assert reused == creators  # the queries used the create part's full:9 index of col4
    # Each index built once per timed run (2 here), library and case (no untimed run),
    # and none for the queries.
    assert sorted(built) == sorted(
        (lib, f"{lib}-{codec.replace(':', '-')}-{column}-{kind.replace(':', '-')}.h5")
        for lib in creators
        for codec in ibench.DEFAULT_CODECS
        for column in ("col2", "col4")
        for kind in ("medium:6", "full:9")
        for _run in range(2)
    )
    goals = [g["what"] for g in summary["goals"]]
    # indexed per query case and index writer, creation per case, sorted per writer
    query_cases = len(ibench.DEFAULT_CODECS) * len(ibench.CACHES) * 2  # 2 hit counts
    assert len(goals) == 2 * query_cases + 8 + 2 * query_cases
    for part in ibench.PARTS:
        content = json.loads((out / part / "results.json").read_text())
        assert content["failures"] == {}
    assert list(work.iterdir()) == []  # the files went with the run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rows", "50"], "--rows must be at least 100, not 50"),
        (["--quick", "--hits", "100000"], "--hits [100000] do not fit in 20,000 rows"),
        (["--hits", "ten"], "--hits wants integers"),
        (["--modes", "fast"], "unknown mode 'fast'"),
        (["--codecs", "lzo"], "unknown codec 'lzo'"),
        (["--baseline", "SQLite"], "--baseline is fixed here"),
        (["--kinds", "full:99"], "bad index 'full:99'"),
    ],
)
def test_bad_options_are_named(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        ibench.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_python_m_bench_indexes() -> None:
    assert "indexes" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "indexes", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    for option in ("--rows", "--codecs", "--kinds", "--hits", "--modes", "--create-repeat"):
        assert option in proc.stdout


def _hyperslab_indexed_case(prepared: ibench.Prepared, cache: str) -> Case:
    return next(c for c in ibench.query_cases(prepared, ["none"])
                if c.params["cache"] == cache and c.params["expected"]["hits"] == 10)


@pytest.mark.parametrize(("cache", "kept"), [("warm", 10), ("warm-equal", 0)])
def test_warm_equal_keeps_no_more_matches_than_pytables(
        prepared: ibench.Prepared, monkeypatch: pytest.MonkeyPatch, cache: str,
        kept: int) -> None:
    """hyperslab keeps up to 65,536 matches per indexed query, PyTables 1,024: the
    ``warm-equal`` mode gives hyperslab PyTables' limit (here made 5, below the query's 10
    hits, so that keeping and not keeping differ)."""
    from hyperslab.compute.indexing import matchcache

    monkeypatch.setattr(ops, "_pytables_matches_kept", lambda: 5)
    made: list[Any] = []
    real_init = matchcache.MatchCache.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(matchcache.MatchCache, "__init__", spy)
    case = _hyperslab_indexed_case(prepared, cache)
    assert ibench.run_case("hyperslab indexed", case.name, dict(case.params), Timer())
    assert [cache.rows for cache in made] == [kept]
    assert matchcache.MATCH_ENTRY_ROWS == 1 << 16  # restored


def test_cold_queries_compile_their_condition_again(prepared: ibench.Prepared,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTables keeps compiled conditions on the table object, gone when the file closes;
    hyperslab's module-level caches are emptied before each cold query, so it compiles
    again too."""
    from hyperslab.compute import conditions

    case = _hyperslab_indexed_case(prepared, "cold")
    for _ in range(2):
        ibench.run_case("hyperslab in-kernel", case.name, dict(case.params), Timer())
        assert conditions.compile_condition.cache_info().misses >= 1
        assert conditions.compile_condition.cache_info().hits == 0
