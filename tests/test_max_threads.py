"""``MAX_THREADS``: the threads hyperslab uses per open file, for benchmarks run with equal
thread counts and for users sharing a machine."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

import hyperslab
from hyperslab import parameters
from hyperslab.codecs import cframe


def _blosc2_array(path: Path) -> np.ndarray:
    data = np.arange(8 * 256 * 256, dtype=np.float64).reshape(8, 256, 256)
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(1, 256, 256),
                        filters=hyperslab.Filters(complib="blosc2:lz4", complevel=5))
    return data


def _decoding_threads(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    names: set[str] = set()
    real = cframe._decompress

    def spy(src: object, dst: object, nthreads: int) -> None:
        names.add(threading.current_thread().name)
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe, "_decompress", spy)
    return names


def test_default_is_every_cpu_this_process_may_use(tmp_path: Path) -> None:
    assert parameters.MAX_THREADS is None
    with hyperslab.open_file(tmp_path / "a.h5", "w") as f:
        assert f._workers == len(os.sched_getaffinity(0))
        assert f.params["MAX_THREADS"] is None


@pytest.mark.parametrize("how", ["keyword", "parameter"])
def test_one_thread_decodes_every_chunk_in_the_caller(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    data = _blosc2_array(tmp_path / "a.h5")
    names = _decoding_threads(monkeypatch)
    if how == "parameter":
        monkeypatch.setattr(parameters, "MAX_THREADS", 1)
    kwargs = {"max_threads": 1} if how == "keyword" else {}
    with hyperslab.open_file(tmp_path / "a.h5", **kwargs) as f:
        np.testing.assert_array_equal(f.root.a[:], data)
        assert f.params["MAX_THREADS"] == 1
    assert names == {threading.current_thread().name}


def test_several_threads_decode_in_the_pool(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = _blosc2_array(tmp_path / "a.h5")
    names = _decoding_threads(monkeypatch)
    with hyperslab.open_file(tmp_path / "a.h5", max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[:], data)
    assert names and all(name.startswith("hyperslab") for name in names)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_a_bad_count_is_refused_before_the_file_opens(tmp_path: Path, bad: object) -> None:
    path = tmp_path / "a.h5"
    with pytest.raises(ValueError, match=r"MAX_THREADS must be None or an integer >= 1, not"):
        hyperslab.open_file(path, "w", max_threads=bad)
    assert not path.exists()


@pytest.mark.parametrize(("value", "expected"), [("1", "1 1"), ("abc", "ValueError 'abc'"),
                                                 ("", "None 2")])
def test_the_environment_sets_the_default(tmp_path: Path, value: str, expected: str) -> None:
    """``HYPERSLAB_MAX_THREADS`` (read at import) is the default of ``MAX_THREADS``; a value
    that is not a count is refused, with the value, when a file opens."""
    import subprocess
    import sys

    code = f"""
import hyperslab
from hyperslab import parameters
try:
    with hyperslab.open_file({str(tmp_path / 'a.h5')!r}, "w") as f:
        print(parameters.MAX_THREADS, f._workers)
except ValueError as exc:
    print("ValueError", str(exc).rsplit(" ", 1)[-1])
"""
    env = {**os.environ, "HYPERSLAB_MAX_THREADS": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout.split()
    workers = str(len(os.sched_getaffinity(0)))
    assert " ".join(out) == expected.replace("None 2", f"None {workers}")
