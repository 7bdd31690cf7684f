"""Running tasks in a thread pool a few at a time, and taking their results in order."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

Result = TypeVar("Result")


def in_order(
    pool: Callable[[], Executor],
    task: Callable[..., Result],
    items: Iterable[tuple[Any, ...]],
    ahead: int,
) -> Iterator[Result]:
    """``task(*item)`` of every item run in the pool, at most ``ahead`` at a time, the
    results yielded in item order.

    The pool is asked for at each submission (so a closed file refuses new work).
    Abandoning the iterator (or an error) cancels the tasks not started and waits for
    the running ones: no task is still running when this returns.
    """
    pending: deque[Future[Result]] = deque()
    queued = iter(items)
    try:
        for item in queued:
            pending.append(pool().submit(task, *item))
            if len(pending) >= ahead:
                break
        while pending:
            result = pending.popleft().result()
            for item in queued:
                pending.append(pool().submit(task, *item))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        for future in pending:
            if not future.cancelled():
                future.exception()


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """``items`` in lists of ``size`` (the last one shorter)."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


__all__ = ["batches", "in_order"]
