"""The ``reductions`` benchmark (bench/reductions.py): data, checks, rivals and a quick run."""

from __future__ import annotations

import importlib
import json
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter)
import numpy as np
import pytest

import hyperslab
from bench import _reductions_data as rdata
from bench import _reductions_report as rreport
from bench import benchmark_names
from bench import reductions as rbench
from bench.harness import (
    BenchmarkError,
    BenchmarkResult,
    BenchmarkSpec,
    Case,
    Measurement,
    Timer,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHAPE = (10, 12, 14)
CHUNKS = (4, 5, 6)
BIG = (40, 40, 40)
"""An array big enough to compress (512 kB)."""
BIG_CHUNKS = (20, 20, 20)


@pytest.fixture(scope="module")
def data() -> Any:
    return rbench.make_data(SHAPE)


@pytest.fixture
def memory(data: Any) -> Iterator[rbench.Memory]:
    """The benchmark's in-memory state, filled for ``SHAPE`` and cleared at the end."""
    mem = rbench._MEMORY
    mem.data = data
    for case in rbench.CASES:
        part = "expression" if case == "expr" else "sums"
        axis = rbench.SUM_CASES.get(case, rbench.EXPR_AXIS)
        mem.expected[case] = rbench.expected_result(data, part, axis)
    try:
        yield mem
    finally:
        mem.clear()


def _available(part: str) -> list[str]:
    return [r.name for r in rbench.PART_RIVALS[part] if r.unavailable_reason() is None]


def test_data_is_the_spec_linspace(data: Any) -> None:
    assert data.dtype == np.float64 and data.shape == SHAPE
    assert data[0, 0, 0] == 0 and data[-1, -1, -1] == rdata.STOP
    steps = np.diff(data.ravel())
    np.testing.assert_allclose(steps, rdata.STOP / (data.size - 1))
    assert data.flags.c_contiguous


def test_expected_results_are_numpys(data: Any) -> None:
    for name, axis in rbench.SUM_CASES.items():
        np.testing.assert_array_equal(rbench.expected_result(data, "sums", axis), data.sum(axis))
        assert np.shape(rbench.expected_result(data, "sums", axis)) == np.shape(data.sum(axis))
        assert name in rbench.CASES
    whole = (data * 2 + np.sin(data)).sum(axis=1)
    got = rbench.expected_result(data, "expression", rbench.EXPR_AXIS)
    assert got.shape == (SHAPE[0], SHAPE[2])
    np.testing.assert_allclose(got, whole, rtol=1e-14)
    old = rbench.SLAB_BYTES
    try:  # slabs of one row give the same result
        rbench.SLAB_BYTES = 1
        np.testing.assert_allclose(rbench.expected_result(data, "expression", 1), whole, rtol=1e-14)
    finally:
        rbench.SLAB_BYTES = old


def test_check_tolerates_summation_order_but_not_wrong_values(data: Any) -> None:
    want = data.sum(axis=0)
    check = rbench.check_of(want, want)
    assert check["shape"] == [12, 14] and check["dtype"] == "<f8"
    assert check["sum"] == float(f"{want.sum():.6g}")
    # Another summation order gives (nearly) the same numbers, and the same check.
    other = np.zeros_like(want)
    for row in data[::-1]:
        other += row
    assert rbench.check_of(other, want) == check
    assert rbench.check_of(want * (1 + 1e-12), want) == check
    wrong = want.copy()
    wrong[3, 4] *= 1 + 1e-6
    with pytest.raises(BenchmarkError, match="differs from NumPy's"):
        rbench.check_of(wrong, want, "x")
    with pytest.raises(BenchmarkError, match="shape"):
        rbench.check_of(want[:, :3], want)
    scalar = rbench.check_of(np.float64(data.sum()), data.sum())
    assert scalar["shape"] == [] and scalar["sum"] == float(f"{data.sum():.6g}")
    assert scalar != check


def test_warming_covers_known_rivals() -> None:
    assert set(rbench.WARM) <= set(rbench.COMPUTE)
    assert ("sums", "h5py") in rbench.WARM and 0 < rbench.WARM_OTHERS < 1
    rbench.warm_memory(0)
    rbench.warm_memory(10_000)


class _FakeLibc:
    """Records glibc's malloc tuning calls (the real effect depends on the heap's state)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def mallopt(self, option: int, value: int) -> int:
        self.calls.append(("mallopt", option, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad, 0))
        return 1


def test_freed_memory_is_kept_during_the_runs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    fake = _FakeLibc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: fake)
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.36"))
    with rreport.keep_freed_memory() as kept:
        assert kept
        assert fake.calls == [("mallopt", rreport.M_MMAP_MAX, 0),
                              ("mallopt", rreport.M_TRIM_THRESHOLD, -1)]
    assert fake.calls[2:] == [
        ("mallopt", rreport.M_MMAP_MAX, rreport.DEFAULT_MMAP_MAX),
        ("mallopt", rreport.M_TRIM_THRESHOLD, rreport.DEFAULT_TRIM_THRESHOLD),
        ("malloc_trim", 0, 0),
    ]
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    with rreport.keep_freed_memory() as kept:  # not glibc: nothing to tune
        assert not kept
    assert len(fake.calls) == 5


def test_slabs_are_whole_chunk_rows() -> None:
    assert rbench.slab_rows((500, 500, 500), (100, 100, 100)) == 100
    assert rbench.slab_rows((500, 500, 500), (2, 500, 500)) == 2 * 16  # 64 MB
    assert rbench.slab_rows((500, 500, 500), (1, 65, 500)) == 32
    assert rbench.slab_rows((10, 12, 14), (4, 5, 6)) % 4 == 0


def test_files_and_their_block_shapes(tmp_path: Path) -> None:
    data, chunks = rbench.make_data(BIG), BIG_CHUNKS
    for codec in rbench.CODECS:
        path = str(tmp_path / f"{codec.replace(':', '-')}.h5")
        used, seconds = rbench.write_hyperslab(path, data, codec, chunks)
        assert used == chunks and seconds > 0
        info = rbench.file_info(path, data.nbytes)
        assert info["chunks"] == list(chunks) and info["bytes"] == Path(path).stat().st_size
        other = str(tmp_path / f"{codec.replace(':', '-')}-plugin.h5")
        assert rbench.write_hdf5plugin(other, data, codec, chunks) > 0
        plugin = rbench.file_info(other, data.nbytes)
        assert plugin["chunks"] == list(chunks)
        if codec == "none":
            assert info["blocks"] is None and plugin["blocks"] is None
            assert 0.9 < info["ratio"] <= 1 and 0.9 < plugin["ratio"] <= 1
        else:
            assert len(info["blocks"]) == 3 and len(plugin["blocks"]) == 3
            assert info["ratio"] > 1.5 and plugin["ratio"] > 1.5
        with h5py.File(path, "r") as f, h5py.File(other, "r") as g:
            np.testing.assert_array_equal(f["a"][...], data)
            np.testing.assert_array_equal(g["a"][...], data)


def test_a_group_shares_hyperslabs_automatic_chunks(tmp_path: Path) -> None:
    data = rbench.make_data(BIG)
    messages: list[str] = []
    for codec in ("blosc2:lz4", "none"):
        group = rbench.Group(codec, None, BIG)
        rbench.write_group(group, data, tmp_path, True, messages.append)
        with hyperslab.open_file(group.files["hyperslab"], "r") as f:
            picked = tuple(f.get_node("/a").chunkshape)
        assert (
            group.setting == "auto" and group.name == f"{codec} auto {rbench.chunks_label(picked)}"
        )
        # Small arrays may get chunks longer than the array: the others get them clipped.
        assert group.chunks == tuple(min(c, n) for c, n in zip(picked, BIG, strict=True))
        assert group.info["hdf5plugin"]["chunks"] == list(group.chunks)
        assert sorted(group.write_seconds) == ["hdf5plugin", "hyperslab"]
    assert len(messages) == 4 and "hdf5plugin's file" in messages[1]
    fixed = rbench.Group("blosc2:zstd", BIG_CHUNKS, BIG)
    rbench.write_group(fixed, data, tmp_path, False, messages.append)
    assert fixed.name == "blosc2:zstd 20x20x20" and fixed.setting == "20x20x20"
    assert fixed.chunks == BIG_CHUNKS and sorted(fixed.files) == ["hyperslab"]


def test_memory_keeps_one_ndarray_at_a_time() -> None:
    data = rbench.make_data(BIG)
    mem = rbench.Memory(data)
    first = mem.ndarray_for("g1", "blosc2:zstd", BIG_CHUNKS)
    assert mem.ndarray_for("g1", "blosc2:zstd", BIG_CHUNKS) is first
    assert first.chunks == BIG_CHUNKS and first.cparams.clevel == rbench.CLEVEL
    assert first.cparams.codec == blosc2.Codec.ZSTD
    assert first.cparams.filters[0] == blosc2.Filter.SHUFFLE
    np.testing.assert_array_equal(first[...], data)
    second = mem.ndarray_for("g2", "none", BIG_CHUNKS)
    assert second is not first and second.cparams.clevel == 0
    assert mem.ndarray_for("g1", "blosc2:zstd", BIG_CHUNKS) is not first  # rebuilt
    assert sorted(mem.ndarray_info) == ["g1", "g2"]
    assert mem.ndarray_info["g1"]["ratio"] > 1.5 and mem.ndarray_info["g2"]["ratio"] < 1.05
    assert mem.ndarray_info["g1"]["blocks"] == list(first.blocks)
    mem.clear()
    assert mem.data is None and not mem.ndarray_info
    with pytest.raises(BenchmarkError, match="no array in memory"):
        mem.ndarray_for("g1", "none", CHUNKS)


def _params(part: str, case: str, files: dict[str, Path], codec: str) -> dict[str, Any]:
    axis = rbench.SUM_CASES.get(case, rbench.EXPR_AXIS)
    return {
        "part": part,
        "group": f"{codec} test",
        "codec": codec,
        "chunks": list(CHUNKS),
        "axis": axis,
        "paths": {k: str(p) for k, p in files.items()},
        "nbytes": 8 * int(np.prod(SHAPE)),
    }


def _write_files(tmp_path: Path, data: Any, codec: str) -> dict[str, Path]:
    files = {
        rbench.HYPERSLAB_FILE: tmp_path / "hyperslab.h5",
        rbench.HDF5PLUGIN_FILE: tmp_path / "hdf5plugin.h5",
    }
    rbench.write_hyperslab(str(files["hyperslab"]), data, codec, CHUNKS)
    rbench.write_hdf5plugin(str(files["hdf5plugin"]), data, codec, CHUNKS)
    return files


def test_every_rival_computes_every_case_right(
    tmp_path: Path, data: Any, memory: rbench.Memory
) -> None:
    files = _write_files(tmp_path, data, "blosc2:lz4")
    sums = _available("sums")
    assert {"hyperslab", "NumPy (memory)", "blosc2 NDArray (memory)", "h5py + NumPy"} <= set(sums)
    for case in rbench.SUM_CASES:
        params = _params("sums", case, files, "blosc2:lz4")
        checks = set()
        for rival in sums:
            timer = Timer()
            checks.add(json.dumps(rbench.run_case(rival, case, params, timer)))
            assert timer.seconds is not None and timer.seconds > 0
        assert len(checks) == 1, (case, checks)
    expression = _available("expression")
    assert {"numexpr (memory)", "NumPy (memory)", "blosc2 lazyexpr (memory)"} <= set(expression)
    params = _params("expression", "expr", files, "blosc2:lz4")
    checks = {json.dumps(rbench.run_case(r, "expr", params, Timer())) for r in expression}
    assert len(checks) == 1
    assert memory.ndarray_info["blosc2:lz4 test"]["chunks"] == list(CHUNKS)


def test_a_wrong_result_fails_the_case(tmp_path: Path, data: Any, memory: rbench.Memory) -> None:
    files = _write_files(tmp_path, data, "none")
    params = _params("sums", "axis1", files, "none")
    memory.expected["axis1"] = data.sum(axis=1) + 1e-3
    with pytest.raises(BenchmarkError, match="h5py \\+ NumPy none test axis1 differs"):
        rbench.run_case("h5py + NumPy", "axis1", params, Timer())
    with pytest.raises(BenchmarkError, match="unknown rival 'numexpr \\(memory\\)'"):
        rbench.run_case("numexpr (memory)", "axis1", params, Timer())
    params["paths"]["hyperslab"] = str(tmp_path / "missing.h5")
    with pytest.raises(BenchmarkError, match=r"hyperslab axis1: .*missing\.h5"):
        rbench.run_case("hyperslab", "axis1", params, Timer())
    memory.clear()
    with pytest.raises(BenchmarkError, match="no NumPy result in memory"):
        rbench.run_case("hyperslab", "axis1", params, Timer())


def _hide_expr(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``hyperslab.Expr`` missing (it may be a module attribute or loaded lazily)."""
    hyperslab = importlib.import_module("hyperslab")
    if "Expr" in vars(hyperslab):
        monkeypatch.delattr(hyperslab, "Expr")

    def missing(name: str) -> object:
        raise AttributeError(f"module 'hyperslab' has no attribute {name!r}")

    monkeypatch.setattr(hyperslab, "__getattr__", missing, raising=False)
    assert not hasattr(hyperslab, "Expr")


def test_the_hyperslab_expression_rival_needs_expr(monkeypatch: pytest.MonkeyPatch) -> None:
    rival = rbench.rival_named("expression", "hyperslab")
    assert rival.probe == "hyperslab:Expr" and rival.file_of == "hyperslab"
    assert rbench.rival_named("sums", "hyperslab").probe is None
    _hide_expr(monkeypatch)
    assert "has no 'Expr'" in str(rival.unavailable_reason())
    assert rbench.rival_named("sums", "hyperslab").unavailable_reason() is None


def test_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = rbench.build_parser()

    def parse(*argv: str) -> rbench.Options:
        return rbench.parse_options(parser, parser.parse_args(list(argv)))

    full = parse()
    assert full.shape == (500, 500, 500) and full.repeat == rbench.DEFAULT_REPEAT
    assert [(g.codec, g.requested) for g in full.groups] == [
        (codec, chunks) for codec in rbench.CODECS for chunks in (None, (100, 100, 100))
    ]
    assert full.cases == list(rbench.CASES) and full.rivals == list(rbench.ALL_RIVALS)
    quick = parse("--quick", "--codecs", "lz4,NONE", "--cases", "axis1,expr")
    assert quick.shape == (60, 60, 60)
    assert [(g.codec, g.setting) for g in quick.groups] == [
        ("blosc2:lz4", "auto"),
        ("blosc2:lz4", "20x20x20"),
        ("none", "auto"),
        ("none", "20x20x20"),
    ]
    assert quick.cases == ["axis1", "expr"]
    shaped = parse("--shape", "30,40,50", "--chunks", "auto;100,8,9", "--repeat", "2")
    assert [g.requested for g in shaped.groups[:2]] == [None, (30, 8, 9)] and shaped.repeat == 2
    assert parse("--shape", "30,40,50").groups[1].requested == (6, 8, 10)
    for argv, message in (
        (["--baseline", "NumPy (memory)"], "--baseline is fixed"),
        (["--chunks", "auto;auto"], "lists a setting twice"),
        (["--codecs", "zlib"], "unknown codec 'zlib'"),
        (["--cases", "axis3"], "unknown case 'axis3'"),
        (["--rivals", "PyTables"], "unknown rival 'PyTables'"),
        (["--shape", "5,5"], "not three positive integers"),
    ):
        with pytest.raises(SystemExit) as exc:
            parse(*argv)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err, argv


def _measurement(case: Case, rival: str, seconds: float) -> Measurement:
    return Measurement(case, rival, {"sum": 1.0}, [seconds])


def test_goals_and_throughput_from_medians() -> None:
    cases = [Case(name, "blosc2:lz4 100x100x100", {"nbytes": 10**9}) for name in ("axis0", "all")]
    times = {
        "hyperslab": (0.1, 0.3),
        "h5py + NumPy": (0.6, 0.9),
        "blosc2 NDArray (memory)": (0.2, 0.25),
        "hyperslab (hdf5plugin's file)": (0.2, 0.5),
        "h5py + NumPy (hdf5plugin's file)": (0.5, 0.9),
    }
    spec = BenchmarkSpec("reductions sums", "t", "bench.reductions:run_case", [], cases)
    result = BenchmarkResult(
        spec=spec,
        repeat=1,
        baseline="h5py + NumPy",
        rivals=list(times),
        skipped={},
        measurements=[
            _measurement(case, rival, t[k])
            for rival, t in times.items()
            for k, case in enumerate(cases)
        ],
        failures={},
        baseline_rss={},
        import_seconds={},
        versions={},
        host={},
        started="",
        elapsed=0.0,
    )
    met = rreport.goals(result)
    assert [m for m, _ in met] == [True, True, False, False]
    assert met[0][1] == (
        "hyperslab >= 1x blosc2 NDArray (memory), blosc2:lz4 100x100x100 axis0: "
        "10.00 vs 5.00 GB/s (2.00x)"
    )
    assert met[1][1] == (
        "hyperslab (hdf5plugin's file) >= 2x h5py + NumPy (hdf5plugin's file), "
        "blosc2:lz4 100x100x100 axis0: 5.00 vs 2.00 GB/s (2.50x)"
    )
    assert met[2][1].endswith("all: 3.33 vs 4.00 GB/s (0.83x)")
    assert met[3][1].endswith("all: 2.00 vs 1.11 GB/s (1.80x)")
    assert rreport.goals(None) == []
    table = rreport.throughput(result, rreport.REFERENCES["sums"])
    entry = table["blosc2:lz4 100x100x100/axis0"]["hyperslab"]
    assert entry["gbps"] == pytest.approx(10.0)
    assert entry["speed_vs"] == {
        "h5py + NumPy": pytest.approx(6.0),
        "blosc2 NDArray (memory)": pytest.approx(2.0),
    }
    lines = rreport.throughput_markdown("sums", result, rreport.REFERENCES["sums"])
    assert "| blosc2:lz4 100x100x100 | axis0 | 10.00 (6.00x, 2.00x) | 1.67 (1.00x, 0.33x) |" in (
        "\n".join(lines)
    )
    markdown = rreport.goals_markdown([*met, (None, "x")])
    assert markdown[:3] == ["## Goals (medians)", "", "- met: " + met[0][1]]
    assert markdown[-1] == "- 1 goal(s) not measured (a rival or case did not run)"
    assert {r for ours, rival, _ in rreport.GOALS for r in (ours, rival)} <= {
        r.name for r in rbench.SUM_RIVALS}


def test_a_goals_rivals_read_equally_laid_out_data() -> None:
    """Each goal's two sides read the same file, or hyperslab's file and an NDArray with
    its chunks, blocks, codec and level."""
    rivals = {r.name: r for r in rbench.SUM_RIVALS}
    for ours, rival, _factor in rreport.GOALS:
        if rivals[rival].method == "blosc2":
            assert rivals[ours].file_of == rbench.HYPERSLAB_FILE
        else:
            assert rivals[ours].file_of == rivals[rival].file_of


def test_quick_run_reports_every_rival_case_and_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--quick", "--repeat", "1", "--no-plot", "--out", str(out), "--tmpdir", str(work)]
    argv += ["--codecs", "blosc2:zstd", "--chunks", "auto;20,20,20"]
    assert rbench.main(argv) == 0
    markdown = capsys.readouterr().out
    assert (out / "results.md").read_text() == markdown[:-1]  # print added a newline
    sums, expression = _available("sums"), _available("expression")
    content = json.loads((out / "results.json").read_text())
    groups = sorted(content["files"])
    assert len(groups) == 2 and groups[0].startswith("blosc2:zstd ")
    assert "blosc2:zstd 20x20x20" in groups
    for group in groups:
        for case in rbench.CASES:
            assert f"| {group} | {case} |" in markdown
        files = content["files"][group]
        assert sorted(files) == ["hdf5plugin", "hyperslab"]
        assert files["hyperslab"]["chunks"] == files["hdf5plugin"]["chunks"]
        assert len(files["hdf5plugin"]["blocks"]) == 3
        assert content["ndarrays"][group]["chunks"] == files["hyperslab"]["chunks"]
        if files["hyperslab"]["blocks"] is not None:  # uncompressed: no frame, no blocks
            assert content["ndarrays"][group]["blocks"] == files["hyperslab"]["blocks"]
    assert "## Files" in markdown and "## sums: GB/s" in markdown
    assert "## expression: GB/s" in markdown
    assert content["parts"]["sums"]["rivals"] == sums
    assert content["parts"]["expression"]["rivals"] == expression
    for part in ("sums", "expression"):
        assert content["parts"][part]["failures"] == {}
        for key, row in content["throughput"][part].items():
            assert all(entry["gbps"] > 0 for entry in row.values()), key
        checks: dict[str, set[str]] = {}
        for row in content["parts"][part]["results"]:
            checks.setdefault(f"{row['group']}/{row['case']}", set()).add(json.dumps(row["check"]))
        assert all(len(c) == 1 for c in checks.values())
        assert len(checks) == 2 * (4 if part == "sums" else 1)
    goal_lines = [line for line in markdown.splitlines() if line.startswith(("- met", "- NOT"))]
    assert len(goal_lines) == len(content["goals"]) == 2 * 4 * 2
    assert (out / "sums" / "results.json").exists() and (out / "expression" / "results.md").exists()
    assert list(work.iterdir()) == []  # the files went with the run


def test_expression_runs_without_hyperslab_expr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide_expr(monkeypatch)
    out = tmp_path / "out"
    argv = ["--quick", "--repeat", "1", "--no-plot", "--out", str(out), "--tmpdir", str(tmp_path)]
    argv += ["--codecs", "none", "--chunks", "20,20,20", "--cases", "expr"]
    assert rbench.main(argv) == 0
    markdown = capsys.readouterr().out
    content = json.loads((out / "results.json").read_text())
    assert list(content["parts"]) == ["expression"]
    assert "hyperslab" not in content["parts"]["expression"]["rivals"]
    assert "numexpr (memory)" in content["parts"]["expression"]["rivals"]
    assert "Skipped hyperslab (expression): hyperslab has no 'Expr' yet." in markdown
    assert "- no goal measured (the sums did not run)" in markdown


def test_python_m_bench_reductions() -> None:
    assert "reductions" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "reductions", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    for option in ("--quick", "--codecs", "--chunks", "--cases", "--rivals", "--tmpdir"):
        assert option in proc.stdout
