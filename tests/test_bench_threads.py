"""``--blosc-nthreads``: every benchmark can give every library the same thread count, and
every report says which threads each rival used and which C-Blosc2 each compresses with."""

from __future__ import annotations

import os
from pathlib import Path

import blosc2
import numexpr
import pytest
import tables

from bench import _threads, benchmark_names
from bench._report import format_markdown
from bench.harness import (
    BenchmarkSpec,
    Case,
    Rival,
    add_common_arguments,
    run_benchmark,
    thread_setting,
    with_thread_option,
)
from hyperslab import parameters

TARGET = """
import os

def run(rival, case, params, timer):
    import blosc2, numexpr, tables
    from hyperslab import parameters
    with timer:
        pass
    return {"hyperslab": parameters.MAX_THREADS, "blosc2": blosc2.nthreads,
            "numexpr": numexpr.get_num_threads(),
            "tables": tables.parameters.MAX_BLOSC_THREADS,
            "env": os.environ.get("BLOSC_NTHREADS")}
"""


def _settings() -> dict[str, object]:
    return {"hyperslab": parameters.MAX_THREADS, "blosc2": blosc2.nthreads,
            "numexpr": numexpr.get_num_threads(),
            "tables": tables.parameters.MAX_BLOSC_THREADS,
            "env": os.environ.get("BLOSC_NTHREADS")}


def test_one_count_for_every_library_then_their_defaults_back() -> None:
    before = _settings()
    with thread_setting(1):
        assert _settings() == {"hyperslab": 1, "blosc2": 1, "numexpr": 1, "tables": 1,
                               "env": "1"}
        report = _threads.thread_report()
        assert {report[k] for k in ("hyperslab", "python-blosc2", "numexpr", "PyTables",
                                    "h5py + hdf5plugin filter", "setting")} == {"1"}
    assert _settings() == before
    assert _threads.thread_report()["setting"] == "library defaults"


def test_no_setting_changes_nothing() -> None:
    before = _settings()
    with thread_setting(None):
        assert _settings() == before


def test_a_bad_count_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1, not 0"), thread_setting(0):
        pass


@pytest.mark.parametrize("fresh", [False, True])
def test_the_setting_reaches_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       fresh: bool) -> None:
    (tmp_path / "threads_target.py").write_text(TARGET)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    spec = BenchmarkSpec(name="t", title="threads", target="threads_target:run",
                         rivals=[Rival("only", ("json",))], cases=[Case("c", "g", {})],
                         fresh_process=fresh)
    with thread_setting(1):
        result = run_benchmark(spec, 1, progress=lambda _m: None)
    assert not result.failures
    assert result.measurements[0].check == {"hyperslab": 1, "blosc2": 1, "numexpr": 1,
                                            "tables": 1, "env": "1"}
    assert result.threads["hyperslab"] == "1" and result.threads["setting"] == "1"
    text = format_markdown(result)
    assert "Threads: hyperslab 1," in text
    assert "C-Blosc2 (PyTables) " in text and "C-Blosc2 (hdf5plugin filter) " in text


def test_the_builds_of_c_blosc2_are_named() -> None:
    builds = _threads.cblosc2_builds()
    assert builds["C-Blosc2 (hyperslab, python-blosc2)"] == blosc2.blosclib_version.split()[0]
    assert builds["C-Blosc2 (PyTables)"] == tables.which_lib_version("blosc2")[1]
    assert builds["C-Blosc2 (hdf5plugin filter)"][0].isdigit()


def test_the_decorated_main_runs_inside_the_setting() -> None:
    import argparse

    seen: list[object] = []

    @with_thread_option
    def main(argv: list[str] | None = None) -> int:
        parser = argparse.ArgumentParser()
        add_common_arguments(parser)
        parser.parse_args(argv)
        seen.append(parameters.MAX_THREADS)
        return 0

    assert main(["--blosc-nthreads", "1"]) == 0
    assert main([]) == 0
    assert seen == [1, None]
    with pytest.raises(SystemExit):
        main(["--blosc-nthreads", "0"])


@pytest.mark.parametrize("name", benchmark_names())
def test_every_benchmark_takes_the_option(name: str) -> None:
    import importlib

    module = importlib.import_module(f"bench.{name}")
    assert module.main.__wrapped__ is not None  # with_thread_option
    parser = module.build_parser()
    assert parser.parse_args(["--blosc-nthreads", "1"]).blosc_nthreads == 1
