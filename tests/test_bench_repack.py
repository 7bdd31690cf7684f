"""The ``repack`` benchmark (bench/repack.py): its source file, its rivals' commands, the
check both outputs must pass, and a tiny full run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tables

from bench import benchmark_names
from bench import repack as repack_bench
from bench.harness import BenchmarkError, Timer


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.h5"
    repack_bench.write_source(path, 0.4)
    return path


def test_source_is_zlib_pytables_with_arrays_and_a_table(source: Path) -> None:
    with tables.open_file(str(source)) as f:
        leaves = {leaf._v_pathname: leaf for leaf in f.walk_nodes("/", "Leaf")}
        assert sorted(leaves) == ["/data/counts", "/data/smooth", "/data/wavy", "/events"]
        assert {leaf.filters.complib for leaf in leaves.values()} == {"zlib"}
        assert sorted(leaf.filters.complevel for leaf in leaves.values()) == [1, 2, 3, 5]
        assert isinstance(leaves["/events"], tables.Table) and leaves["/events"].nrows > 0
    assert "repack" in benchmark_names()


@pytest.mark.parametrize("rival", list(repack_bench.RIVALS))
def test_each_rival_recompresses_to_blosc2_zstd_with_the_same_data(
    rival: str, source: Path, tmp_path: Path
) -> None:
    params = {"source": str(source), "folder": str(tmp_path)}
    timer = Timer()
    crcs = repack_bench.run_case(rival, "recompress", params, timer)
    assert timer.seconds is not None and timer.seconds > 0
    assert crcs == repack_bench.node_crcs(source)  # the same bytes as the source's
    out = tmp_path / "kept.h5"
    subprocess.run(repack_bench.command(rival, str(source), str(out)),
                   env=repack_bench._env(), check=True, capture_output=True)
    with tables.open_file(str(out)) as f, tables.open_file(str(source)) as s:
        for leaf in f.walk_nodes("/", "Leaf"):
            assert (leaf.filters.complib, leaf.filters.complevel) == ("blosc2:zstd", 5)
            np.testing.assert_array_equal(leaf.read(), s.get_node(leaf._v_pathname).read())


def test_a_failing_rival_is_a_benchmark_error(tmp_path: Path) -> None:
    params = {"source": str(tmp_path / "missing.h5"), "folder": str(tmp_path)}
    with pytest.raises(BenchmarkError, match=r"hyperslab recompress: .* failed"):
        repack_bench.run_case("hyperslab", "recompress", params, Timer())


def test_tiny_full_run_reports_the_goal(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = repack_bench.main(["--megabytes", "0.3", "--repeat", "1", "--no-plot", "--out",
                              str(out), "--tmpdir", str(tmp_path / "work")])
    assert code == 0
    markdown = (out / "results.md").read_text()
    assert "## Goals" in markdown and "ptrepack (measured " in markdown
    result = json.loads((out / "results.json").read_text())
    assert "recompress" in json.dumps(result)
    assert list((tmp_path / "work").iterdir()) == []  # the files are cleaned up


def test_bad_options_exit_2() -> None:
    with pytest.raises(SystemExit) as exc:
        repack_bench.main(["--rivals", "nope"])
    assert exc.value.code == 2
