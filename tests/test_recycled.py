"""Buffers for chunks read in part, used again once the reads that held them are done.

A chunk decoded in part is read into a buffer of its whole stored size, of which only
the frame's structure and the decoded blocks' streams are filled.  New memory costs a page
fault per 4 KB touched on every read, so these buffers are handed out again once their
last view is gone (:mod:`hyperslab.storage.recycled`).  What a user relies on: a buffer is
never handed out while anything still sees it, reads over memory an earlier chunk filled
are exact (h5py + hdf5plugin and NumPy as oracles), and the memory kept is bounded.
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import h5py
import hdf5plugin  # noqa: F401  (the Blosc2 filter for h5py)
import numpy as np
import pytest

import hyperslab
from hyperslab.storage import recycled
from hyperslab.storage.recycled import (
    KEEP_MAX_BYTES,
    RECYCLE_MAX_BYTES,
    RECYCLE_MIN_BYTES,
    chunk_buffer,
)

MIB = 1 << 20


@pytest.fixture
def recycler(monkeypatch: pytest.MonkeyPatch) -> recycled._Recycler:
    """A recycler of its own for the test (no buffers of earlier tests)."""
    own = recycled._Recycler(KEEP_MAX_BYTES)
    monkeypatch.setattr(recycled, "_RECYCLER", own)
    return own


def _address(array: np.ndarray) -> int:
    return int(array.ctypes.data)


def test_memory_is_handed_out_again_only_once_its_last_view_is_gone(
        recycler: recycled._Recycler) -> None:
    first = chunk_buffer(MIB)
    first[:] = 7
    address = _address(first)
    view = memoryview(first[1000:2000])  # what a frame's parsed blocks keep
    del first
    second = chunk_buffer(MIB)  # the view still sees the first buffer: new memory
    assert _address(second) != address
    second[:] = 1
    assert bytes(view) == b"\x07" * 1000
    del view
    third = chunk_buffer(MIB)
    assert _address(third) == address
    assert third.flags.writeable and third.dtype == np.uint8 and third.shape == (MIB,)


def test_a_buffer_fits_a_slightly_bigger_chunk_but_not_one_twice_its_size(
        recycler: recycled._Recycler) -> None:
    buffer = chunk_buffer(4_000_000)
    address = _address(buffer)
    del buffer
    bigger = chunk_buffer(4_050_000)  # chunks of a dataset differ a little in size
    assert _address(bigger) == address and bigger.shape == (4_050_000,)
    del bigger
    small = chunk_buffer(1_000_000)  # a quarter of it: not worth holding 4 MB for
    assert _address(small) != address


def test_sizes_outside_the_recycled_range_are_new_memory_each_time(
        recycler: recycled._Recycler) -> None:
    for nbytes in (RECYCLE_MIN_BYTES - 1, RECYCLE_MAX_BYTES + 1):
        buffer = chunk_buffer(nbytes)
        assert buffer.shape == (nbytes,)
        del buffer
    assert recycler.idle_bytes() == 0


def test_idle_memory_kept_is_bounded(recycler: recycled._Recycler) -> None:
    buffers = [chunk_buffer(4 * MIB) for _ in range(KEEP_MAX_BYTES // (4 * MIB) + 4)]
    assert len({_address(b) for b in buffers}) == len(buffers)
    del buffers
    gc.collect()
    assert 0 < recycler.idle_bytes() <= KEEP_MAX_BYTES


def test_threads_never_share_a_buffer_in_use(recycler: recycled._Recycler) -> None:
    """Threads taking and dropping buffers at once: each buffer's bytes stay its holder's
    until it drops it."""
    errors: list[str] = []

    def work(mark: int) -> None:
        for _ in range(200):
            buffer = chunk_buffer(300_000 + mark * 1000)
            buffer[::4096] = mark
            kept = buffer[::4096].copy()
            buffer2 = chunk_buffer(300_000)
            buffer2[::4096] = 255 - mark
            if not np.array_equal(buffer[::4096], kept):
                errors.append(f"thread {mark}: a buffer in use was handed out again")
            del buffer, buffer2

    threads = [threading.Thread(target=work, args=(n,)) for n in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert recycler.idle_bytes() <= KEEP_MAX_BYTES


def _big_chunked_file(path: Path) -> np.ndarray:
    """A file of 4 Blosc2 chunks of about 1 MB stored each, in 16 blocks (read in part)."""
    rng = np.random.default_rng(5)
    data = rng.normal(size=(8, 128, 256)).round(2)  # hardly compressible: big frames
    with hyperslab.open_file(path, "w") as f:
        f.create_carray("/", "a", obj=data, chunkshape=(4, 128, 256),
                        blockshape=(1, 32, 256), filters=hyperslab.Filters(5, "blosc2:lz4"))
    with h5py.File(path, "r") as h5:
        assert h5["a"].id.get_chunk_info(0).size >= RECYCLE_MIN_BYTES
    return data


@pytest.mark.parametrize("threads", [1, 2])
def test_partial_reads_of_big_chunks_use_the_memory_of_earlier_reads(
        tmp_path: Path, recycler: recycled._Recycler, monkeypatch: pytest.MonkeyPatch,
        threads: int) -> None:
    """Reads that decode chunks in part, one after another, each chunk over memory an
    earlier chunk's streams were read into: every value exact (h5py + hdf5plugin), and
    after the first read no new memory is taken."""
    path = tmp_path / "big.h5"
    data = _big_chunked_file(path)
    new_memory: list[int] = []
    real = recycled._capacity

    def counted(nbytes: int) -> int:
        new_memory.append(nbytes)
        return real(nbytes)

    monkeypatch.setattr(recycled, "_capacity", counted)
    keys = [(1, slice(None), 5), (slice(None), 100), (6, slice(3, 90, 7)), (2,), (5, 0)]
    with h5py.File(path, "r") as h5:
        expected = [h5["a"][key] for key in keys]
    with hyperslab.open_file(path, max_threads=threads) as f:
        node = f.root.a
        np.testing.assert_array_equal(node[(slice(None), 7)], data[:, 7])
        first = len(new_memory)
        assert first > 0  # the chunks were read in part, into buffers of this module
        for _ in range(3):
            for key, want in zip(keys, expected, strict=True):
                np.testing.assert_array_equal(node[key], want)
                np.testing.assert_array_equal(node[key], data[key])
        assert len(new_memory) == first


def test_a_forked_child_takes_buffers_though_a_thread_held_the_lock_at_the_fork() -> None:
    """A thread of the parent holding the recycler's lock at the fork does not leave the
    child waiting for it forever: the child starts with a recycler of its own."""
    import os
    import signal
    import time

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with recycled._RECYCLER._lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        pid = os.fork()
        if pid == 0:  # the child: report by exit status only
            status = 1
            try:
                status = 0 if chunk_buffer(MIB).shape == (MIB,) else 1
            finally:
                os._exit(status)
    finally:
        release.set()
        holder.join()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("the forked child waits for a lock a thread of its parent held")


def test_a_chunk_read_whole_into_a_buffer_of_the_callers_takes_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk read whole into the caller's buffer (``load_all_into``, a chunk decoded
    whole) takes no buffer of its own; one read in part takes one, at its first load."""
    from hyperslab.storage import preads
    from hyperslab.storage.chunkindex import ChunkLocation

    taken: list[int] = []
    real = preads.chunk_buffer

    def counted(nbytes: int) -> np.ndarray:
        taken.append(nbytes)
        return real(nbytes)

    monkeypatch.setattr(preads, "chunk_buffer", counted)
    path = tmp_path / "raw.bin"
    path.write_bytes(bytes(range(256)) * 2048)  # 512 KiB
    with path.open("rb") as handle:
        whole = preads.SparseChunk(handle.fileno(), ChunkLocation(256, RECYCLE_MIN_BYTES, 0))
        assert whole.size == RECYCLE_MIN_BYTES
        mine = np.empty(RECYCLE_MIN_BYTES, dtype=np.uint8)
        whole.load_all_into(mine)
        assert whole.buffer is mine and taken == []
        assert mine[:4].tolist() == [0, 1, 2, 3]
        part = preads.SparseChunk(handle.fileno(), ChunkLocation(256, RECYCLE_MIN_BYTES, 0))
        assert taken == []
        part.load(1000, 1004)
        assert taken == [RECYCLE_MIN_BYTES]
        assert part.buffer[1000:1004].tolist() == [232, 233, 234, 235]
