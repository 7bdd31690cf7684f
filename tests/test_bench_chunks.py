"""The ``chunks`` benchmark: its options, its cases, and that every rival of a case reads the
same dataset of the same file, timed from a fresh open."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from bench import chunks as cbench
from bench.harness import Timer


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cbench.ensure_file(tmp_path_factory.mktemp("chunks"), 40, progress=lambda _: None)


def test_read_counts_option() -> None:
    assert cbench.read_counts("2000,1,100") == [1, 100, 2000]
    for bad in ("0,5", "a"):
        with pytest.raises(argparse.ArgumentTypeError, match="read counts"):
            cbench.read_counts(bad)
    args = cbench.build_parser().parse_args([])
    assert args.read_counts == [1, 100, 2000, 100_000]


def test_one_reads_case_per_count(small_file: Path) -> None:
    args = cbench.build_parser().parse_args(["--read-counts", "1,7", "--capped-reads", "3"])
    spec = cbench.build_spec(small_file, 40, list(cbench.CASES), ["raw"],
                             ["hyperslab", "h5py"], "hyperslab", args)
    assert [c.name for c in spec.cases] == ["index", "random_reads_1", "random_reads_7"]
    reads = {c.name: (c.params["reads"], c.params["capped_reads"]) for c in spec.cases[1:]}
    assert reads == {"random_reads_1": (1, 1), "random_reads_7": (7, 3)}


@pytest.mark.parametrize("case", ["index", "random_reads_5"])
@pytest.mark.parametrize("dataset", list(cbench.DATASETS))
def test_every_rival_reads_the_same_dataset_of_the_same_file(
    small_file: Path, monkeypatch: pytest.MonkeyPatch, case: str, dataset: str
) -> None:
    opened: dict[str, list[tuple[str, str]]] = {}
    original = cbench._open_reader
    current = [""]

    def spy(rival: str, path: str, name: str) -> Any:
        opened.setdefault(current[0], []).append((str(Path(path).resolve()), name))
        return original(rival, path, name)

    monkeypatch.setattr(cbench, "_open_reader", spy)
    params = {"path": str(small_file), "nchunks": 40, "sample": 4, "dataset": dataset,
              "reads": 5, "capped_reads": 5}
    results = {}
    for rival in (r.name for r in cbench.RIVALS):
        current[0] = rival
        results[rival] = cbench.run_case(rival, case, params, Timer())
    assert set(opened) == {r.name for r in cbench.RIVALS}
    assert len({tuple(v) for v in opened.values()}) == 1  # one file and dataset, once each
    assert opened["h5py"] == [(str(small_file.resolve()), dataset)]
    assert len({repr(r) for r in results.values()}) == 1  # and the same answers


def test_reads_are_timed_from_a_fresh_open_with_nothing_read_before(
    small_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hyperslab

    reads: list[bool] = []
    timer = Timer()
    original = cbench._open_reader

    def spy(rival: str, path: str, name: str) -> Any:
        f, get = original(rival, path, name)

        class Spy:
            def __getitem__(self, i: int) -> Any:
                reads.append(timer._start is not None)  # inside the timed block?
                return node[i]

        def timed_get() -> Any:
            nonlocal node
            reads.append(timer._start is not None)  # the node is looked up in the timer
            node = get()
            return Spy()

        node: Any = None
        return f, timed_get

    monkeypatch.setattr(cbench, "_open_reader", spy)
    params = {"path": str(small_file), "nchunks": 40, "dataset": "raw", "reads": 3,
              "capped_reads": 3}
    result = cbench.run_case("hyperslab", "random_reads_3", params, timer)
    assert reads == [True, True, True, True] and result["reads"] == 3
    assert hyperslab  # (the rival's library)


def test_tiny_run(tmp_path: Path) -> None:
    code = cbench.main(["--nchunks", "24", "--read-counts", "1,3", "--repeat", "1",
                        "--workdir", str(tmp_path / "work"), "--out", str(tmp_path / "out"),
                        "--no-plot", "--datasets", "raw"])
    assert code == 0
    text = (tmp_path / "out" / "results.md").read_text()
    assert "random_reads_1" in text and "random_reads_3" in text and "per item read" in text
    assert not (tmp_path / "work" / "hyperslab-bench-chunks" / "v1").exists()
