"""Long-lived worker processes that read mutants, with per-probe timeouts.

Each worker (:mod:`.worker`) reads many mutants; the pool sends a request to an idle
worker and follows its progress messages.  A worker that says nothing for
``probe_seconds`` while reading a mutant is killed and the probe it was in gets a
``hang``; one that dies gets a ``crash`` (with its signal and the tail of its stderr,
where :mod:`faulthandler` writes the Python traceback).  Either way a fresh worker takes
its place.  Worker processes are the pool's own children and are killed by process id
only.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import hyperslab

STARTUP_SECONDS = 60.0
"""How long a fresh worker may take to import its libraries (a loaded 2-core machine)."""
JUDGE_SECONDS = 60.0
"""How long a worker may take to compare the answers of one mutant (the harness's time)."""


@dataclass
class Job:
    """One mutant to read: ``request`` is what the worker gets (without its id)."""

    number: int
    request: dict[str, Any]
    payload: Any = None
    oracle_failed: str = ""  # 'hang:I' or 'crash:I' when h5py failed at probe I
    confirming: bool = False  # read again without h5py after hyperslab crashed or hung


@dataclass
class Result:
    """A job's answer: the worker's verdicts, or how the worker failed and where."""

    job: Job
    verdicts: list[dict[str, Any]] | None = None
    failure: str | None = None      # 'crash' or 'hang'
    at: str = ""                    # 'h5:I' or 'hs:I': the probe running when it failed
    detail: str = ""


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    log_path: Path
    ready: bool = False
    job: Job | None = None
    at: str = ""
    deadline: float = 0.0
    buffer: bytes = b""
    lines: deque[bytes] = field(default_factory=deque)


def _child_env() -> dict[str, str]:
    """The environment of a worker: ``tests/`` and this hyperslab first on the path."""
    tests_dir = Path(__file__).resolve().parents[1]
    src_dir = Path(hyperslab.__file__).resolve().parents[1]
    env = dict(os.environ)
    paths = [str(tests_dir), str(src_dir), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _signal_name(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


class Pool:
    """``count`` workers logging into ``log_dir``; use :meth:`run` then :meth:`close`."""

    def __init__(self, count: int, log_dir: Path, probe_seconds: float = 5.0) -> None:
        self.count = count
        self.log_dir = log_dir
        self.probe_seconds = probe_seconds
        self.started = 0
        self.selector = selectors.DefaultSelector()
        self.workers: list[_Worker] = []
        self._jobs: Iterator[Job] = iter(())
        self._pending: deque[Job] = deque()
        self._exhausted = False
        self._on_result: Callable[[Result], list[Job]] = lambda result: []

    def _start(self) -> _Worker:
        self.started += 1
        log_path = self.log_dir / f"worker-{self.started}.log"
        log = open(log_path, "wb")
        proc = subprocess.Popen([sys.executable, "-m", "fuzz.worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=log, env=_child_env())
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        worker = _Worker(proc, log, log_path, deadline=time.monotonic() + STARTUP_SECONDS)
        self.selector.register(proc.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def _stop(self, worker: _Worker) -> None:
        assert worker.proc.stdout is not None
        self.selector.unregister(worker.proc.stdout)
        self.workers.remove(worker)
        if worker.proc.poll() is None:
            worker.proc.kill()
        worker.proc.wait()
        for stream in (worker.proc.stdin, worker.proc.stdout):
            if stream is not None:
                stream.close()
        worker.log.close()

    def close(self) -> None:
        """Stop every worker."""
        for worker in list(self.workers):
            self._stop(worker)
        self.selector.close()

    def _send(self, worker: _Worker, job: Job) -> None:
        worker.job, worker.at = job, "sent"
        worker.deadline = time.monotonic() + self.probe_seconds
        assert worker.proc.stdin is not None
        try:
            worker.proc.stdin.write((json.dumps({"id": job.number, **job.request}) +
                                     "\n").encode())
            worker.proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: noticed when its stdout closes

    def _read(self, worker: _Worker) -> bool:
        """Move what the worker wrote into its lines; False at end of file."""
        assert worker.proc.stdout is not None
        try:
            chunk = os.read(worker.proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        *complete, worker.buffer = (worker.buffer + chunk).split(b"\n")
        worker.lines.extend(complete)
        return True

    def _fail(self, worker: _Worker, failure: str) -> Result | None:
        job, at = worker.job, worker.at
        self._stop(worker)
        if job is None:
            if not worker.ready:
                raise RuntimeError(f"a fuzz worker failed to start ({failure}, "
                                   f"{_signal_name(worker.proc.returncode)}):\n"
                                   f"{_tail(worker.log_path, 30)}")
            return None
        detail = (f"no answer in {self.probe_seconds:g} s" if failure == "hang" else
                  _signal_name(worker.proc.returncode))
        tail = _tail(worker.log_path)
        return Result(job, failure=failure, at=at,
                      detail=detail + (f"\n{tail}" if tail else ""))

    def _messages(self, worker: _Worker) -> Iterator[Result]:
        while worker.lines:
            message = json.loads(worker.lines.popleft())
            if message.get("ready"):
                worker.ready = True
                worker.deadline = 0.0
            elif "at" in message:
                worker.at = message["at"]
                wait = JUDGE_SECONDS if worker.at.startswith("judge") else self.probe_seconds
                worker.deadline = time.monotonic() + wait
            elif "done" in message:
                assert worker.job is not None
                yield Result(worker.job, verdicts=message["done"])
                worker.job, worker.at, worker.deadline = None, "", 0.0

    def run(self, jobs: Iterator[Job], on_result: Callable[[Result], list[Job]]) -> None:
        """Read every job of ``jobs``; ``on_result`` may give jobs to read again (first)."""
        self._jobs, self._pending, self._exhausted = jobs, deque(), False
        self._on_result = on_result
        while True:
            while len(self.workers) < self.count:
                self._start()
            self._dispatch()
            if self._exhausted and not self._pending and all(
                    w.job is None for w in self.workers):
                return
            self._poll()

    def _next_job(self) -> Job | None:
        if not self._pending and not self._exhausted:
            job = next(self._jobs, None)
            if job is None:
                self._exhausted = True
            else:
                self._pending.append(job)
        return self._pending.popleft() if self._pending else None

    def _dispatch(self) -> None:
        for worker in self.workers:
            if worker.ready and worker.job is None:
                job = self._next_job()
                if job is None:
                    return
                self._send(worker, job)

    def _handle(self, result: Result | None) -> None:
        if result is not None:
            self._pending.extendleft(reversed(self._on_result(result)))

    def _poll(self) -> None:
        """Wait for messages (or the next deadline) and act on them."""
        now = time.monotonic()
        deadlines = [w.deadline for w in self.workers if w.deadline]
        timeout = max(0.0, min(deadlines) - now) if deadlines else 1.0
        for key, _ in self.selector.select(timeout):
            worker = key.data
            alive = self._read(worker)
            for result in self._messages(worker):
                self._handle(result)
            if not alive:
                self._handle(self._fail(worker, "crash"))
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.deadline and now > worker.deadline and not worker.lines:
                self._handle(self._fail(worker, "hang"))
