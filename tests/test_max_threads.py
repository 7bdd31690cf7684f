"""``MAX_THREADS``: the threads hyperslab uses per open file, for benchmarks run with equal
thread counts and for users sharing a machine."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

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


def test_files_opened_one_after_another_share_their_threads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file opened to read a slice does not start threads of its own: files with the
    same thread count decode in the same threads, before and after one is closed."""
    data = _blosc2_array(tmp_path / "a.h5")
    threads: list[set[threading.Thread]] = []  # (the objects: a dead thread's id is reused)
    real = cframe._decompress

    def spy(src: object, dst: object, nthreads: int) -> None:
        threads[-1].add(threading.current_thread())
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe, "_decompress", spy)
    for _ in range(3):
        threads.append(set())
        with hyperslab.open_file(tmp_path / "a.h5", max_threads=2) as f:
            np.testing.assert_array_equal(f.root.a[:], data)
    from hyperslab.chunked.pools import shared_pool

    caller = {threading.current_thread()}
    pool_threads = set(shared_pool(2)._threads)  # (the process's pool of 2 threads)
    assert all(opened - caller for opened in threads)  # 8 chunks: decoded in the pool
    assert all(opened - caller <= pool_threads for opened in threads)
    assert all(thread.is_alive() for thread in pool_threads)  # kept after each close
    with hyperslab.open_file(tmp_path / "a.h5", max_threads=2) as one, \
            hyperslab.open_file(tmp_path / "a.h5", max_threads=2) as two:
        assert one._executor() is not two._executor()  # each file's own view


def test_closing_a_file_waits_for_its_own_tasks_only(tmp_path: Path) -> None:
    """Closing a file waits for the tasks it started, not for another open file's,
    although both run in the same threads; a closed file's pool takes no task."""
    from hyperslab.chunked.pools import FilePool

    _blosc2_array(tmp_path / "a.h5")
    release = threading.Event()
    ran: list[str] = []

    def blocked() -> None:
        release.wait(30)
        ran.append("one")

    one = hyperslab.open_file(tmp_path / "a.h5", max_threads=2)
    two = hyperslab.open_file(tmp_path / "a.h5", max_threads=2)
    try:
        waiting = one._executor().submit(blocked)
        two._executor().submit(ran.append, "two").result(30)
        two.close()  # returns while one's task still waits
        assert ran == ["two"] and not waiting.done()
        closer = threading.Thread(target=one.close)
        closer.start()
        closer.join(0.2)
        assert closer.is_alive()  # it waits for its task
        release.set()
        closer.join(30)
        assert not closer.is_alive() and ran == ["two", "one"]
    finally:
        release.set()
        one.close()
        two.close()
    view = FilePool(2)
    view.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        view.submit(print)


def test_a_forked_child_reads_with_threads_of_its_own(tmp_path: Path) -> None:
    """The parent's pool threads do not exist in a child made by fork: the child's reads
    start threads of their own instead of waiting forever for the parent's."""
    import multiprocessing

    data = _blosc2_array(tmp_path / "a.h5")
    with hyperslab.open_file(tmp_path / "a.h5", max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[:], data)  # the parent's threads exist
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as children:
        total = children.apply_async(_sum_in_child, (str(tmp_path / "a.h5"),)).get(60)
    assert total == float(data.sum())


def _sum_in_child(path: str) -> float:
    with hyperslab.open_file(path, max_threads=2) as f:
        return float(f.root.a[:].sum())


def test_one_chunk_of_other_writers_blocks_is_decoded_by_both_threads(
        plugin_file: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read of one chunk whose blocks are not C-ordered slabs (hdf5plugin's) splits its
    blocks between the calling thread and the pool, each decoding its own into place: no
    whole decoding and reordering pass.  A pool that does not start its part (busy)
    leaves it to the calling thread.  Exact against h5py + hdf5plugin."""
    from concurrent.futures import Future

    data = np.arange(4 * 100 * 300, dtype=np.float64).reshape(4, 100, 300) / 3
    read = plugin_file(tmp_path / "p.h5", data, (4, 100, 300))  # 3 blocks of (4, 100, 128)

    def whole(*args: object) -> None:
        raise AssertionError("decoded whole and reordered")

    monkeypatch.setattr(cframe, "from_block_order", whole)
    threads: list[str] = []
    real = cframe._decompress
    in_pool = threading.Event()
    caller = threading.current_thread().name

    def spy(src: object, dst: object, nthreads: int) -> None:
        assert nthreads == 1
        threads.append(threading.current_thread().name)
        if threads[-1] == caller:
            in_pool.wait(10)  # (the pool's part has started: it is not done here)
        else:
            in_pool.set()
        real(src, dst, nthreads)

    monkeypatch.setattr(cframe, "_decompress", spy)
    with hyperslab.open_file(tmp_path / "p.h5", max_threads=2) as f:
        np.testing.assert_array_equal(f.root.a[:], read)
    assert len(threads) == 2 and len(set(threads)) == 2  # 2 blocks here, 1 in the pool
    in_pool.set()

    class BusyPool:
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            return Future()  # never run

    threads.clear()
    with hyperslab.open_file(tmp_path / "p.h5", max_threads=2) as f:
        monkeypatch.setattr(f.root.a._engine, "_executor", BusyPool)
        np.testing.assert_array_equal(f.root.a[:], read)
    assert threads == [threading.current_thread().name] * 2
