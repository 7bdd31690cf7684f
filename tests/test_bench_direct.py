"""The ``direct`` benchmark (bench/direct.py): its images, its cases and a tiny full run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import blosc2
import h5py
import numpy as np
import pytest

from bench import benchmark_names
from bench import direct as direct_bench
from bench.harness import BenchmarkError, Timer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHAPE = (3, 96, 128)
NOT_HYPERSLAB = [r for r in direct_bench.APPROACHES if not r.startswith("hyperslab")]


@pytest.fixture(autouse=True)
def no_cached_images(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test loads its own stacks (the module caches them per process)."""
    monkeypatch.setattr(direct_bench, "_IMAGES", {})


@pytest.fixture
def source(tmp_path: Path) -> tuple[Path, Any]:
    path = tmp_path / "images.npy"
    return path, direct_bench.write_images(path, *SHAPE)


def test_images_are_deterministic_different_and_compressible() -> None:
    first = direct_bench.make_image(0, 256, 320)
    assert first.dtype == np.uint16 and first.shape == (256, 320)
    np.testing.assert_array_equal(first, direct_bench.make_image(0, 256, 320))
    second = direct_bench.make_image(1, 256, 320)
    assert (first != second).mean() > 0.5
    assert 10 < first.mean() < 2000 and first.std() > 5  # image-like, not constant
    ratio = first.nbytes / len(direct_bench.encode(first))
    assert 1.5 < ratio < 5


def test_encode_decode_round_trip() -> None:
    image = direct_bench.make_image(2, 40, 50)
    frame = direct_bench.encode(image)
    assert blosc2.ndarray_from_cframe(frame).schunk.cparams.codec == blosc2.Codec.ZSTD
    decoded = direct_bench.decode(frame)
    assert decoded.shape == (1, 40, 50)
    np.testing.assert_array_equal(decoded[0], image)


@pytest.mark.parametrize("rival", list(direct_bench.APPROACHES))
def test_each_rival_writes_and_reads_the_images(
    rival: str, source: tuple[Path, Any], tmp_path: Path
) -> None:
    path, images = source
    expected = {"crc32": direct_bench.crc32s(images)}
    params = {"source": str(path), "files": {rival: str(tmp_path / "f.h5")}}
    for case in direct_bench.CASES:
        timer = Timer()
        check = direct_bench.run_case(rival, case, params, timer)
        assert timer.seconds is not None and timer.seconds > 0
        assert json.loads(json.dumps(check)) == expected
    with h5py.File(tmp_path / "f.h5", "r") as f:
        dset = f[direct_bench.NODE]
        assert dset.chunks == (1, *SHAPE[1:])
        np.testing.assert_array_equal(dset[...], images)


@pytest.mark.parametrize(
    ("rival", "case", "match"),
    [
        ("nobody", "read", "unknown rival 'nobody'"),
        ("h5py direct", "delete", "unknown case 'delete'"),
        ("PyTables regular", "read", "PyTables regular read: .*missing.h5"),
        ("h5py direct", "read", "h5py direct read: "),
    ],
)
def test_run_case_errors_name_the_rival_and_case(
    rival: str, case: str, match: str, tmp_path: Path
) -> None:
    params = {"source": "unused.npy", "files": {rival: str(tmp_path / "missing.h5")}}
    with pytest.raises(BenchmarkError, match=match):
        direct_bench.run_case(rival, case, params, Timer())


def test_smoke_test_reports_a_failing_rival(monkeypatch: pytest.MonkeyPatch) -> None:
    assert direct_bench.smoke_test("h5py direct") is None

    def broken(rival: str, path: str, images: Any, timer: Timer) -> None:
        raise AttributeError("'EArray' object has no attribute 'write_chunk'")

    monkeypatch.setattr(direct_bench, "write_stack", broken)
    reason = direct_bench.smoke_test("PyTables direct")
    assert reason == (
        "smoke test failed: AttributeError: 'EArray' object has no attribute 'write_chunk'"
    )
    rival = next(r for r in direct_bench.RIVALS if r.name == "PyTables direct")
    assert rival.unavailable_reason() == reason


@pytest.mark.parametrize(
    ("text", "size"), [("4096", (4096, 4096)), ("100x200", (100, 200)), ("7X3", (7, 3))]
)
def test_image_size_option(text: str, size: tuple[int, int]) -> None:
    assert direct_bench.image_size(text) == size


@pytest.mark.parametrize("text", ["0", "axb", "1x2x3", "-4", "64x0"])
def test_image_size_option_rejects(text: str) -> None:
    with pytest.raises(Exception, match=repr(text).replace("+", r"\+")):
        direct_bench.image_size(text)


def test_tiny_run_reports_throughput_and_cleans_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--images", "2", "--size", "64x80", "--repeat", "1", "--no-plot"]
    argv += ["--rivals", ",".join(NOT_HYPERSLAB), "--out", str(out), "--tmpdir", str(work)]
    assert direct_bench.main(argv) == 0
    markdown = capsys.readouterr().out
    assert "## Throughput" in markdown and "PyTables direct" in markdown
    content = json.loads((out / "results.json").read_text())
    assert content["baseline_rival"] == "PyTables direct"
    table = content["throughput"]["rivals"]
    assert sorted(table) == sorted(NOT_HYPERSLAB)
    assert table["PyTables direct"]["write"]["vs_baseline"] == 1.0
    writers = [r for r in NOT_HYPERSLAB if not direct_bench.APPROACHES[r].direct]
    reads = [f"{w}'s file/read" for w in writers]
    reads.append(f"{next(r for r in NOT_HYPERSLAB if direct_bench.APPROACHES[r].direct)} "
                 "(direct frames)'s file/read")
    for rival in NOT_HYPERSLAB:
        assert sorted(table[rival]) == sorted(["write", *reads])
        assert all(case["median_gbps"] > 0 for case in table[rival].values())
        assert content["file_sizes"][rival] > 0
    assert (out / "results.md").read_text() == markdown.rstrip("\n") + "\n"
    assert list(work.iterdir()) == []  # the files went with the run


def test_python_m_bench_direct() -> None:
    assert "direct" in benchmark_names()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "direct", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0
    assert "--tmpdir" in proc.stdout and "--quick" in proc.stdout


def test_every_rival_reads_the_same_file_in_each_read_case(tmp_path: Path) -> None:
    """The read cases compare libraries, not layouts: one file per layout (each regular
    writer's, and the direct frames every direct writer stores alike), read by all."""
    files = {name: tmp_path / f"{k}.h5" for k, name in enumerate(direct_bench.APPROACHES)}
    for path in files.values():
        path.write_bytes(b"x")
    spec = direct_bench.build_spec(tmp_path / "images.npy", (2, 8, 8), files, tmp_path,
                                   ["write", "read"], "hyperslab regular")
    reads = [c for c in spec.cases if c.name == "read"]
    assert [c.group for c in reads] == [
        "hyperslab regular's file", "PyTables regular's file", "h5py regular's file",
        "hyperslab direct (direct frames)'s file"]
    for case in reads:
        assert set(case.params["files"]) == set(files)
        assert len(set(case.params["files"].values())) == 1
    assert len({c.params["files"]["h5py direct"] for c in reads}) == len(reads)
    write = next(c for c in spec.cases if c.name == "write")
    assert len(set(write.params["files"].values())) == len(files)  # each writes its own
