"""Checking integer arguments with one clear message (shapes, sizes, filter parameters)."""

from __future__ import annotations

import operator
from typing import Any


def as_int(name: str, value: Any, minimum: int = 0, maximum: int | None = None) -> int:
    """Return ``value`` as an int in ``minimum..maximum``.

    Raises
    ------
    ValueError
        If ``value`` is a bool, not an integer, or out of range; the message names
        ``name`` and the value.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if maximum is not None and not minimum <= number <= maximum:
        raise ValueError(f"{name} must be in {minimum}..{maximum}, got {value!r}")
    if number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return number
