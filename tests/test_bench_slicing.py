"""The ``slicing`` benchmark (bench/slicing.py): its data, cases, readers and a quick run."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import _slicing_data as sdata
from bench import _slicing_report as sreport
from bench import benchmark_names
from bench import slicing as sbench
from bench.harness import BenchmarkError, Timer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHAPE = (6, 9, 10, 11)
CHUNKS = (2, 4, 5, 6)
RIVALS = [r.name for r in sbench.BASE_RIVALS]


@pytest.fixture(scope="module")
def data() -> Any:
    return sbench.make_data(SHAPE)


def test_data_is_deterministic_and_independent_of_the_slabs(data: Any) -> None:
    assert data.dtype == np.int64 and data.shape == SHAPE
    np.testing.assert_array_equal(data, sbench.make_data(SHAPE, rows=4))
    np.testing.assert_array_equal(data[2:5], sdata.make_slab(SHAPE, 2, 5))
    assert 1000 < data.min() < data.max() < 7000
    # Smooth: neighbours along the last axis differ by little more than the noise (0..7).
    steps = np.abs(np.diff(data, axis=-1))
    assert steps.max() < 60 and steps.mean() > 1
    assert len(np.unique(data)) > 500


def test_data_compresses_moderately_with_lz4_and_shuffle() -> None:
    import blosc2

    slab = sdata.make_slab(sbench.FULL_SHAPE, 0, 2)
    packed = blosc2.compress2(
        slab.tobytes(),
        typesize=8,
        codec=blosc2.Codec.LZ4,
        clevel=sbench.CLEVEL,
        filters=[blosc2.Filter.SHUFFLE],
    )
    assert 3 < slab.nbytes / len(packed) < 12


def test_chunks_scale_from_the_full_shape() -> None:
    small, big = sbench.SPEC_CHUNKS["small"], sbench.SPEC_CHUNKS["big"]
    assert sbench.scale_chunks(small, sbench.FULL_SHAPE) == small == (10, 25, 50, 50)
    assert sbench.scale_chunks(big, sbench.FULL_SHAPE) == big
    assert sbench.scale_chunks(small, sbench.QUICK_SHAPE) == (2, 10, 20, 20)
    assert sbench.scale_chunks(big, sbench.QUICK_SHAPE) == (5, 20, 20, 20)
    assert sbench.scale_chunks(small, (1, 1, 1, 1)) == (1, 1, 1, 1)


def test_cases_at_full_size_are_the_spec_selections() -> None:
    cases = sbench.make_cases(sbench.FULL_SHAPE)
    assert list(cases) == list(sbench.CASES)
    every = slice(None)
    assert sbench.to_index(cases["axis0"][0]) == (25,)
    assert sbench.to_index(cases["axis1"][0]) == (every, 50)
    assert sbench.to_index(cases["axis2"][0]) == (every, every, 50)
    assert sbench.to_index(cases["axis3"][0]) == (every, every, every, 50)
    assert sbench.to_index(cases["strided"][0]) == (
        slice(None, None, 2),
        slice(None, None, 3),
        slice(10, 90, 4),
        slice(None, None, 5),
    )
    boxes = [sbench.to_index(s) for s in cases["boxes"]]
    assert len(boxes) == sbench.NBOXES == 20
    for box in boxes:
        ranges = [s for s in box if isinstance(s, slice)]
        assert len(ranges) == 4 and all(s.step is None for s in ranges)
        assert [s.stop - s.start for s in ranges] == list(sbench.BOX)
        bounds = zip(ranges, sbench.FULL_SHAPE, strict=True)
        assert all(0 <= s.start and s.stop <= n for s, n in bounds)
    assert len({str(b) for b in boxes}) == 20
    assert cases == sbench.make_cases(sbench.FULL_SHAPE)  # seeded
    assert cases["boxes"] != sbench.make_cases(sbench.FULL_SHAPE, seed=1)["boxes"]


def test_every_case_equals_numpy_through_h5py(tmp_path: Path, data: Any) -> None:
    import h5py
    import hdf5plugin

    path = tmp_path / "h5py.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("a", data=data, chunks=CHUNKS, **hdf5plugin.Blosc2(cname="lz4"))
    with h5py.File(path, "r") as f:
        for name, selections in sbench.make_cases(SHAPE).items():
            for selection in selections:
                index = sbench.to_index(selection)
                got = f["a"][index]
                np.testing.assert_array_equal(got, data[index], err_msg=name)
                assert got.shape == data[index].shape


def test_check_of_names_content_shapes_and_type(data: Any) -> None:
    check = sbench.check_of([data[1], data[2]])
    assert check["count"] == 2 and check["shapes"] == [list(SHAPE[1:])] * 2
    assert check["nbytes"] == 2 * data[1].nbytes and check["dtype"] == "<i8"
    assert check == sbench.check_of([data[1:3].reshape(2, *SHAPE[1:])[0], data[2]])
    assert check != sbench.check_of([data[2], data[1]])
    assert check != sbench.check_of([data[1:3]])  # same bytes, other shapes
    assert check != sbench.check_of([data[1].astype(np.int32), data[2]])


def _params(path: Path, expected: dict[str, Any], selections: list) -> dict:
    rivals = {
        r.name: {"reader": r.reader, "path": str(path), "pipeline": r.pipeline}
        for r in sbench.BASE_RIVALS
    }
    return {"rivals": rivals, "selections": selections, "expected": expected}


@pytest.mark.parametrize("writer", sbench.WRITERS)
def test_every_rival_reads_every_writers_file_right(tmp_path: Path, data: Any,
                                                    writer: str) -> None:
    path = tmp_path / f"{writer}.h5"
    sbench.write_file(writer, str(path), data, CHUNKS)
    info = sbench.file_info(str(path), data)
    assert info["matches"] and info["chunks"] == list(CHUNKS)
    assert info["ratio"] > 1.5 and info["bytes"] == path.stat().st_size
    assert info["blocks"] is not None  # a b2nd frame, whoever wrote it
    cases = sbench.make_cases(SHAPE)
    expected = sbench.expected_checks(data, cases)
    for name, selections in cases.items():
        params = _params(path, expected[name], selections)
        for rival in RIVALS:
            timer = Timer()
            assert sbench.run_case(rival, name, params, timer) == expected[name], rival
            assert timer.seconds is not None and timer.seconds > 0


def test_a_goals_rivals_read_the_same_file(tmp_path: Path) -> None:
    """Each goal compares hyperslab with a rival reading the same file (same chunks,
    blocks, codec and level), one group per chunkshape and writer."""
    group = sbench.Group("small 2x4x5x6", CHUNKS)
    for k, writer in enumerate(sbench.WRITERS):
        group.files[writer] = tmp_path / f"{k}.h5"
    selections = sbench.make_cases(SHAPE)
    cases = sbench.build_cases([group], list(sbench.BASE_RIVALS), selections,
                               {key: {} for key in selections}, list(selections))
    assert sorted({c.group for c in cases}) == sorted(
        f"small 2x4x5x6, {sreport.possessive(w)} file" for w in sbench.WRITERS)
    for case in cases:
        paths = {how["path"] for how in case.params["rivals"].values()}
        assert paths == {str(group.files[case.params["writer"]])}
    result = type("R", (), {"spec": type("S", (), {"cases": cases})()})()
    pairs = sreport.goal_pairs(result)  # type: ignore[arg-type]
    assert {(c.params["writer"], rival, factor) for c, rival, factor in pairs
            if c.name == "axis0"} == {
        ("hyperslab", "PyTables", 1.5), ("hyperslab", "b2h5py", 1.5),
        ("PyTables", "PyTables", 1.0), ("PyTables", "b2h5py", 1.0),
        ("hdf5plugin", "PyTables", 1.0), ("hdf5plugin", "b2h5py", 1.0)}
    assert {(c.params["writer"], factor) for c, rival, factor in pairs
            if c.name == "strided"} == {(w, 2.0) for w in sbench.WRITERS}
    for case, rival, _factor in pairs:
        mine = case.params["rivals"]["hyperslab"]["path"]
        assert case.params["rivals"][rival]["path"] == mine


def test_a_result_unlike_numpys_fails_the_case(tmp_path: Path, data: Any) -> None:
    path = tmp_path / "PyTables.h5"
    sbench.write_file("PyTables", str(path), data, CHUNKS)
    selections = sbench.make_cases(SHAPE)["axis1"]
    wrong = sbench.check_of([data[:, 0]])
    params = _params(path, wrong, selections)
    with pytest.raises(BenchmarkError, match="PyTables axis1: the result differs from NumPy's"):
        sbench.run_case("PyTables", "axis1", params, Timer())
    with pytest.raises(BenchmarkError, match="unknown rival 'nobody'"):
        sbench.run_case("nobody", "axis1", params, Timer())
    params["rivals"]["PyTables"]["path"] = str(tmp_path / "missing.h5")
    with pytest.raises(BenchmarkError, match=r"PyTables axis1: .*missing\.h5"):
        sbench.run_case("PyTables", "axis1", params, Timer())


def test_the_switch_is_set_for_the_read_and_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    b2: Any = importlib.import_module("b2h5py.blosc2")  # untyped: no stubs

    monkeypatch.setenv(sbench.ENV_SWITCH, "7")
    with sbench.blosc2_filter_env(True):
        assert os.environ[sbench.ENV_SWITCH] == "1"
        assert not b2.opt_slicing_enabled()
    assert os.environ[sbench.ENV_SWITCH] == "7"
    with sbench.blosc2_filter_env(False):
        assert sbench.ENV_SWITCH not in os.environ
        assert b2.opt_slicing_enabled()
    assert os.environ[sbench.ENV_SWITCH] == "7"
    monkeypatch.delenv(sbench.ENV_SWITCH)
    with pytest.raises(RuntimeError), sbench.blosc2_filter_env(True):
        raise RuntimeError("the read failed")
    assert sbench.ENV_SWITCH not in os.environ


def test_b2h5py_is_active_only_for_its_rival(tmp_path: Path, data: Any) -> None:
    b2h5py: Any = importlib.import_module("b2h5py")  # untyped: no stubs
    path = tmp_path / "PyTables.h5"
    sbench.write_file("PyTables", str(path), data, CHUNKS)
    with sbench.open_node("b2h5py", str(path)) as get:
        assert b2h5py.is_fast_slicing_enabled()
        assert get()._blosc2_opt_slicing_ok  # the file is one b2h5py optimizes
    assert not b2h5py.is_fast_slicing_enabled()
    with sbench.open_node("h5py", str(path)) as get:
        assert not b2h5py.is_fast_slicing_enabled()
        assert get().shape == data.shape
    with b2h5py.fast_slicing(), pytest.raises(BenchmarkError, match="patched by b2h5py"):
        with sbench.open_node("h5py", str(path)):
            pass


def test_blockshapes_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert sbench.parse_blockshape("auto", (2, 4, 5, 6)) is None
    assert sbench.parse_blockshape("5,25,50,50", (2, 4, 50, 60)) == (2, 4, 50, 50)
    assert sbench.block_rival("1,5,50,50").name == "hyperslab blocks=1x5x50x50"
    assert sbench.block_rival(" auto").name == "hyperslab blocks=auto"
    with pytest.raises(ValueError, match="positive integers"):
        sbench.parse_blockshape("0,1,1,1", None)
    argv = ["--quick", "--repeat", "1", "--no-plot", "--out", str(tmp_path / "out")]
    argv += ["--tmpdir", str(tmp_path / "work"), "--cases", "axis3"]
    mine, auto = "hyperslab blocks=1x5x20x20", "hyperslab blocks=auto"
    argv += ["--rivals", f"hyperslab,PyTables,{mine},{auto}"]
    argv += ["--blockshapes", "auto;1,5,20,20"]
    if not sbench.has_blockshape_keyword():
        with pytest.raises(SystemExit) as exc:
            sbench.main(argv)
        assert exc.value.code == 2
        assert "does not have yet; run without --blockshapes" in capsys.readouterr().err
        return
    assert sbench.main(argv) == 0
    content = json.loads((tmp_path / "out" / "results.json").read_text())
    assert content["failures"] == {}
    assert content["rivals"] == ["hyperslab", "PyTables", auto, mine]
    for group in ("small 2x10x20x20", "big 5x20x20x20"):
        files = content["files"][group]
        assert files[mine]["blocks"] == [1, 5, 20, 20]
        assert files[auto]["blocks"] == files["hyperslab"]["blocks"]  # hyperslab's choice
    assert f"| {mine} |" in capsys.readouterr().out


def test_quick_run_reports_every_rival_case_and_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--quick", "--repeat", "1", "--no-plot", "--out", str(out), "--tmpdir", str(work)]
    assert sbench.main(argv) == 0
    markdown = capsys.readouterr().out
    assert (out / "results.md").read_text() == markdown[:-1]  # print added a newline
    assert not (out / "results.png").exists()
    for rival in RIVALS:
        assert f"| {rival} |" in markdown or f" {rival} | " in markdown, rival
    groups = ["small 2x10x20x20", "big 5x20x20x20"]
    for group in groups:
        for writer in sbench.WRITERS:
            for case in sbench.CASES:
                assert f"| {group}, {sreport.possessive(writer)} file | {case} |" in markdown
    assert "## Files" in markdown and "## Throughput" in markdown
    goal_lines = [line for line in markdown.splitlines() if line.startswith(("- met", "- NOT"))]
    # per chunkshape and writer: 4 axes x 2 rivals + strided
    assert len(goal_lines) == 2 * 3 * (4 + 4 + 1)
    content = json.loads((out / "results.json").read_text())
    assert content["failures"] == {} and content["skipped_rivals"] == {}
    assert content["rivals"] == RIVALS and content["baseline_rival"] == "PyTables"
    assert sorted(content["files"]) == sorted(groups)
    assert content["files"]["big 5x20x20x20"]["PyTables"]["chunks"] == [5, 20, 20, 20]
    for key, row in content["throughput"]["cases"].items():
        assert sorted(row) == sorted(RIVALS), key
        assert all(entry["mbps"] > 0 for entry in row.values()), key
    assert len(content["goals"]) == 54 and all(g["met"] is not None for g in content["goals"])
    checks: dict[str, set[str]] = {}
    for row in content["results"]:
        checks.setdefault(f"{row['group']}/{row['case']}", set()).add(json.dumps(row["check"]))
    assert len(checks) == 36 and all(len(c) == 1 for c in checks.values())
    assert list(work.iterdir()) == []  # the files went with the run


def test_report_text_helpers_and_goals() -> None:
    assert sbench.possessive is sreport.possessive and sbench.report is sreport.report
    assert sreport.possessive("PyTables") == "PyTables'"
    assert sreport.possessive("hyperslab") == "hyperslab's"
    strided = sbench.make_cases(sbench.FULL_SHAPE)["strided"][0]
    assert sreport._index_text(strided) == "[::2, ::3, 10:90:4, ::5]"
    assert sreport._index_text([1, [None, 4, None]]) == "[1, :4]"
    info = {"chunks": [2, 4], "blocks": None, "ratio": 6.125}
    assert sreport._file_text(info) == "chunks (2, 4), blocks -, ratio 6.12x"
    info["blocks"] = [1, 2]
    assert sreport._file_text(info) == "chunks (2, 4), blocks (1, 2), ratio 6.12x"
    # The goals' one-index cases are the benchmark's one-index cases.
    assert sreport.AXIS_CASES == ("axis0", "axis1", "axis2", "axis3")
    assert {rival for _, rival, _, _ in sreport.GOALS} <= {r.name for r in sbench.BASE_RIVALS}
    assert all(set(cases) <= set(sbench.CASES) for cases, _, _, _ in sreport.GOALS)
    lines = sreport.goals_markdown([(True, "a"), (False, "b"), (None, "c")])
    assert lines == [
        "## Goals (medians)",
        "",
        "- met: a",
        "- NOT MET: b",
        "- 1 goal(s) not measured (a rival or case did not run)",
    ]


def test_python_m_bench_slicing() -> None:
    assert "slicing" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "slicing", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert "--blockshapes" in proc.stdout and "--chunks" in proc.stdout


@pytest.mark.parametrize("reader", ["hyperslab", "PyTables", "h5py"])
def test_looking_the_array_up_is_timed_with_the_reads(
        tmp_path: Path, data: Any, reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTables opens the dataset in get_node, hyperslab at the first read: each reader's
    look-up is inside the timer, opening the file is not."""
    import time

    import h5py
    import tables

    import hyperslab

    path = tmp_path / "hyperslab.h5"
    sbench.write_file("hyperslab", str(path), data, CHUNKS)
    looked_up: list[float] = []
    cls = {"hyperslab": hyperslab.File, "PyTables": tables.File, "h5py": h5py.File}[reader]
    name = "__getitem__" if reader == "h5py" else "get_node"
    real = getattr(cls, name)

    def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)
        looked_up.append(time.perf_counter())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, slow)
    timer = Timer()
    values = sbench.read_selections(reader, str(path), [[1]], False, timer)
    np.testing.assert_array_equal(values[0], data[1])
    assert len(looked_up) == 1 and timer.seconds is not None and timer.seconds >= 0.05
