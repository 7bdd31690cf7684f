"""Column values as intervals: the values a comparison of an indexed column matches.

The planner (:mod:`hyperslab.compute.indexing.plan`) turns each ``column OP constant`` of a
condition into the exact set of column values it matches, as disjoint :class:`Interval`
objects (``_leaf``); the value domain of a column (``_Domain``) numbers its values by
ordinals and gives the union, intersection and complement of sets of intervals.  It touches
no file.

Value semantics.  numexpr compares a column and a value in a common type (an ``int64``
column with a float in ``float64``, an ``int32`` column with a ``float32`` variable in
``float32``, a ``uint32`` column with a negative constant in ``int64``), which does not
match the same values as NumPy's types (``2**53 + 1 == 2.0**53`` in ``float64``).  So each
comparison becomes the exact set of **column values** it matches: bounds are NumPy scalars
of the column's dtype (``numpy.bool_`` for booleans), found by a search over the column's
values with numexpr's casts.  String bounds are ``bytes`` no longer than the column's
width, without trailing NULs (both libraries compare strings as if padded with NULs); a
``str`` literal compares as its ASCII bytes, as in numexpr (non-ASCII: not planned).  An
empty string literal is not planned: numexpr 2.14 gives ``''``/``b''`` literals no
consistent order (``s <= b''`` holds for every string).  numexpr orders bytes as C ``char``,
signed on x86-64 (``b"\\x80" < b"a"``) unlike NumPy; the planner asks numexpr once and,
with signed chars, writes ``s < key`` and its relatives as the NumPy intervals holding
exactly numexpr's answer (one or two per byte of the width; the extra ones are empty for
ASCII data).  An interval never contains NaN; ``ValueSet.nan`` adds a float column's NaNs.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numexpr as ne
import numpy as np

__all__ = ["Interval"]


# ----------------------------------------------------------------------------- intervals


@dataclass(frozen=True, slots=True)
class Interval:
    """A range of column values; a bound of ``None`` is unbounded on that side.

    Attributes
    ----------
    lo, hi : Any
        Bounds: NumPy scalars of the column's dtype, or ``bytes`` for string columns.
    lo_inclusive, hi_inclusive : bool
        Whether the bound itself belongs to the range.
    """

    lo: Any
    lo_inclusive: bool
    hi: Any
    hi_inclusive: bool



# ----------------------------------------------------------------------------- numexpr types

_RANK = ("bool", "int", "long", "float", "double", "complex")
_KIND_DTYPE = {
    "bool": np.dtype(np.bool_),
    "int": np.dtype(np.int32),
    "long": np.dtype(np.int64),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _array_kind(dtype: np.dtype[Any]) -> str | None:
    """numexpr's kind for an array of ``dtype`` (as ``numexpr.necompiler.getType``)."""
    kind, size = dtype.kind, dtype.itemsize
    if kind == "b":
        return "bool"
    if kind in "iu":
        if kind == "u" and size == 8:
            return None
        return "long" if size > 4 or (kind == "u" and size == 4) else "int"
    if kind == "f":
        return "double" if size > 4 else "float"
    if kind == "c":
        return "complex"
    if kind == "S":
        return "bytes"
    return None


def _literal_kind(value: Any) -> str | None:
    """numexpr's kind for a Python constant (as ``numexpr.expressions.ConstantNode``)."""
    if isinstance(value, bytes | str):
        return "bytes"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if _INT32[0] <= value <= _INT32[1]:
            return "int"
        return "long" if _INT64[0] <= value <= _INT64[1] else None
    if isinstance(value, float):
        return "double"
    return None


@dataclass(frozen=True, slots=True)
class _Const:
    """A value compared with a column: a Python literal or a 0-d array."""

    value: Any
    kind: str

    def as_kind(self, kind: str) -> Any:
        """The value converted as numexpr does for an operation in ``kind``."""
        dtype = _KIND_DTYPE[kind]
        with np.errstate(over="ignore", invalid="ignore"):
            if isinstance(self.value, np.ndarray):
                return self.value.astype(dtype)[()]
            return dtype.type(self.value)

    def as_bytes(self) -> bytes | None:
        """The value of a string constant, without trailing NULs (None if not ASCII)."""
        value = self.value
        if isinstance(value, np.ndarray):
            value = value[()]
        if isinstance(value, str):
            try:
                value = value.encode("ascii")
            except UnicodeEncodeError:
                return None
        return bytes(value).rstrip(b"\0")


# ----------------------------------------------------------------------------- value domains

_FLOAT_BITS: dict[int, np.dtype[Any]] = {
    2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64),
}


class _Domain:
    """The values a column can hold (NaN aside), with set operations on intervals.

    Values are numbered by *ordinals*: consecutive integers in value order (for floats,
    from their bits, ``-0.0`` and ``0.0`` sharing one; for strings of ``n`` bytes, the
    big-endian number their NUL-padded bytes spell), so that interval ends compare exactly
    and an empty or adjacent interval is seen as such.
    """

    def __init__(self, dtype: np.dtype[Any]) -> None:
        self.dtype = dtype
        self.kind = dtype.kind
        self.has_nan = dtype.kind == "f"
        if dtype.kind == "f":
            self._bits = _FLOAT_BITS[dtype.itemsize]
            self._mask = (1 << (8 * dtype.itemsize - 1)) - 1
            self.omin = self.ordinal(dtype.type(-np.inf))
            self.omax = self.ordinal(dtype.type(np.inf))
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            self.omin, self.omax = int(info.min), int(info.max)
        elif dtype.kind == "S":
            self.omin, self.omax = 0, 256**dtype.itemsize - 1
        else:  # "b"
            self.omin, self.omax = 0, 1

    @staticmethod
    def of(dtype: np.dtype[Any]) -> _Domain | None:
        """The domain of a column of ``dtype``, or None if its indexes cannot be planned."""
        if dtype.shape != () or dtype.names is not None:
            return None
        if dtype.kind in "bS" or (dtype.kind == "f" and dtype.itemsize in _FLOAT_BITS):
            return _Domain(dtype)
        if dtype.kind in "iu" and not (dtype.kind == "u" and dtype.itemsize == 8):
            return _Domain(dtype)
        return None

    def ordinal(self, value: Any) -> int:
        if self.kind == "S":
            return int.from_bytes(bytes(value).ljust(self.dtype.itemsize, b"\0"), "big")
        if self.kind != "f":
            return int(value)
        bits = int(np.asarray(value, dtype=self.dtype).view(self._bits))
        return bits if bits >= 0 else -(bits & self._mask)

    def value(self, ordinal: int) -> Any:
        if self.kind == "b":
            return np.bool_(ordinal)
        if self.kind == "S":
            return ordinal.to_bytes(self.dtype.itemsize, "big").rstrip(b"\0")
        if self.kind != "f":
            return self.dtype.type(ordinal)
        bits = ordinal if ordinal >= 0 else -ordinal - (self._mask + 1)
        return np.asarray(bits, dtype=self._bits).view(self.dtype)[()]

    # ------------------------------------------------------------------ interval algebra

    def _lo_key(self, iv: Interval) -> tuple[Any, ...]:
        if iv.lo is None:
            return (0,)
        return (1, self.ordinal(iv.lo), 0 if iv.lo_inclusive else 1)

    def _hi_key(self, iv: Interval) -> tuple[Any, ...]:
        if iv.hi is None:
            return (2,)
        return (1, self.ordinal(iv.hi), 1 if iv.hi_inclusive else 0)

    def _first(self, iv: Interval) -> int:
        if iv.lo is None:
            return self.omin
        return self.ordinal(iv.lo) + (0 if iv.lo_inclusive else 1)

    def _last(self, iv: Interval) -> int:
        if iv.hi is None:
            return self.omax
        return self.ordinal(iv.hi) - (0 if iv.hi_inclusive else 1)

    def is_empty(self, iv: Interval) -> bool:
        return self._first(iv) > self._last(iv)

    def _reaches(self, left: Interval, right: Interval) -> bool:
        """Whether ``right`` (which starts no earlier) overlaps or touches ``left``."""
        return self._first(right) <= self._last(left) + 1

    def interval(self, first: int, last: int) -> Interval | None:
        """The interval of ordinals ``first..last`` (None if empty), open at the ends."""
        if first > last:
            return None
        lo = None if first <= self.omin else self.value(first)
        hi = None if last >= self.omax else self.value(last)
        return Interval(lo, lo is not None, hi, hi is not None)

    def union(self, intervals: Iterable[Interval]) -> tuple[Interval, ...]:
        ordered = sorted((iv for iv in intervals if not self.is_empty(iv)), key=self._lo_key)
        merged: list[Interval] = []
        for iv in ordered:
            if merged and self._reaches(merged[-1], iv):
                last = merged[-1]
                if self._hi_key(iv) > self._hi_key(last):
                    merged[-1] = Interval(last.lo, last.lo_inclusive, iv.hi, iv.hi_inclusive)
            else:
                merged.append(iv)
        return self._canonical(merged)

    def intersection(
        self, left: tuple[Interval, ...], right: tuple[Interval, ...]
    ) -> tuple[Interval, ...]:
        parts = []
        for a in left:
            for b in right:
                lo = a if self._lo_key(a) >= self._lo_key(b) else b
                hi = a if self._hi_key(a) <= self._hi_key(b) else b
                parts.append(Interval(lo.lo, lo.lo_inclusive, hi.hi, hi.hi_inclusive))
        return self.union(parts)

    def complement(self, intervals: tuple[Interval, ...]) -> tuple[Interval, ...]:
        gaps: list[Interval] = []
        lo: Any = None
        lo_inclusive = False
        for iv in intervals:
            if iv.lo is not None:
                gaps.append(Interval(lo, lo_inclusive, iv.lo, not iv.lo_inclusive))
            if iv.hi is None:
                return self.union(gaps)
            lo, lo_inclusive = iv.hi, not iv.hi_inclusive
        gaps.append(Interval(lo, lo_inclusive, None, False))
        return self.union(gaps)

    def _canonical(self, intervals: list[Interval]) -> tuple[Interval, ...]:
        """Booleans are written as ``[False, False]``, ``[True, True]`` or unbounded."""
        if self.kind != "b" or not intervals:
            return tuple(intervals)
        first, last = self._first(intervals[0]), self._last(intervals[-1])
        if first == 0 and last == 1:
            return (Interval(None, False, None, False),)
        value = np.bool_(first)
        return (Interval(value, True, value, True),)



# ----------------------------------------------------------------------------- leaves

_PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}


def _first_true(test: Callable[[int], bool], guess: int, omin: int, omax: int) -> int:
    """Smallest ordinal in ``omin..omax`` where the monotone ``test`` holds (omax+1: none).

    Gallops from ``guess`` and then bisects, so a boundary near the guess costs a few tests.
    """
    guess = min(max(guess, omin), omax)
    if test(guess):
        good, step = guess, 1  # search down for a failing ordinal
        while True:
            bad = good - step
            if bad <= omin:
                if test(omin):
                    return omin
                bad = omin
                break
            if not test(bad):
                break
            good, step = bad, step * 2
    else:
        bad, step = guess, 1  # search up for a passing ordinal
        while True:
            good = bad + step
            if good >= omax:
                if not test(omax):
                    return omax + 1
                good = omax
                break
            if test(good):
                break
            bad, step = good, step * 2
    while good - bad > 1:
        mid = (bad + good) // 2
        if test(mid):
            good = mid
        else:
            bad = mid
    return good


def _guess(domain: _Domain, threshold: Any) -> int:
    """An ordinal of ``domain`` near the value ``threshold`` (a scalar of the compare type)."""
    if domain.kind == "f":
        with np.errstate(over="ignore", invalid="ignore"):
            return domain.ordinal(domain.dtype.type(threshold))
    value = float(threshold) if isinstance(threshold, np.floating) else int(threshold)
    if math.isinf(value):
        return domain.omax if value > 0 else domain.omin
    return math.floor(value)


def _numeric_intervals(domain: _Domain, ctype: np.dtype[Any], threshold: Any,
                       op: str) -> tuple[Interval, ...]:
    """The column values ``v`` with ``ctype(v) OP threshold``, as intervals of ``domain``."""

    def cast(ordinal: int) -> Any:
        return np.asarray(domain.value(ordinal), dtype=domain.dtype).astype(ctype)[()]

    guess = _guess(domain, threshold)
    omin, omax = domain.omin, domain.omax
    # first_ge: first value >= threshold; last_le: last value <= threshold.
    first_ge = last_le = 0
    if op in ("ge", "lt", "eq", "ne"):
        first_ge = _first_true(lambda o: bool(cast(o) >= threshold), guess, omin, omax)
    if op in ("gt", "le", "eq", "ne"):
        last_le = _first_true(lambda o: bool(cast(o) > threshold), guess, omin, omax) - 1
    if op == "ge":
        pieces = [domain.interval(first_ge, omax)]
    elif op == "gt":
        pieces = [domain.interval(last_le + 1, omax)]
    elif op == "le":
        pieces = [domain.interval(omin, last_le)]
    elif op == "lt":
        pieces = [domain.interval(omin, first_ge - 1)]
    elif op == "eq":
        pieces = [domain.interval(first_ge, last_le)]
    elif first_ge > last_le:  # "ne" with no equal value
        pieces = [domain.interval(omin, omax)]
    else:
        pieces = [domain.interval(omin, first_ge - 1), domain.interval(last_le + 1, omax)]
    return domain.union(_natural(domain, iv, op) for iv in pieces if iv is not None)


def _natural(domain: _Domain, iv: Interval, op: str) -> Interval:
    """Write ``> 1`` as ``(1, ...`` rather than ``[2, ...``: the bound the user gave."""
    lo, lo_inc, hi, hi_inc = iv.lo, iv.lo_inclusive, iv.hi, iv.hi_inclusive
    if domain.kind == "b":
        return iv
    if op in ("gt", "ne") and lo is not None:
        lo, lo_inc = domain.value(domain.ordinal(lo) - 1), False
    if op in ("lt", "ne") and hi is not None:
        hi, hi_inc = domain.value(domain.ordinal(hi) + 1), False
    return Interval(lo, lo_inc, hi, hi_inc)


def _bool_intervals(ctype: np.dtype[Any], threshold: Any, op: str) -> tuple[Interval, ...]:
    matches = _PY_OPS[op](np.array([False, True]).astype(ctype), threshold)
    if matches.all():
        return (Interval(None, False, None, False),)
    return tuple(Interval(np.bool_(v), True, np.bool_(v), True)
                 for v in (False, True) if matches[int(v)])


@functools.cache
def _signed_chars() -> bool:
    """Whether numexpr orders string bytes as signed ``char`` (x86) rather than unsigned.

    numexpr compares strings with C ``char``, whose signedness depends on the platform: with
    signed chars, ``b"\\x80"`` sorts before ``b"a"``, the opposite of NumPy's order.
    """
    probe = ne.evaluate("a < b", local_dict={"a": np.array([b"\x80"]), "b": np.array([b"a"])})
    return bool(probe[0])


def _signed_less(key: bytes, width: int) -> list[Interval]:
    """The strings of ``width`` bytes below ``key`` in signed-byte order, as NumPy intervals.

    A string is below ``key`` when, at the first byte ``i`` where they differ (both padded
    with NULs), its byte is the smaller as a signed char: the strings sharing ``key``'s
    first ``i`` bytes with such a byte at ``i`` form one or two NumPy (unsigned) intervals.
    """
    padded = key.ljust(width, b"\0")
    pieces: list[Interval] = []
    for i in range(width):
        prefix, byte, tail = padded[:i], padded[i], b"\xff" * (width - i - 1)
        ranges = [(0x80, byte - 1)] if byte >= 0x80 else [(0, byte - 1), (0x80, 0xFF)]
        for first, last in ranges:
            if first <= last:
                lo = (prefix + bytes((first,))).rstrip(b"\0")
                hi = (prefix + bytes((last,)) + tail).rstrip(b"\0")
                pieces.append(Interval(lo, True, hi, True))
    beyond = padded[width:].lstrip(b"\0")
    if beyond and beyond[0] < 0x80:  # key[:width] followed by a positive byte
        equal = padded[:width].rstrip(b"\0")
        pieces.append(Interval(equal, True, equal, True))
    return pieces


def _string_intervals(domain: _Domain, key: bytes, op: str) -> tuple[Interval, ...]:
    """The strings ``x`` of the column with ``x OP key`` in numexpr's order."""
    width = domain.dtype.itemsize
    fits = len(key) <= width  # else no value equals key
    if op in ("eq", "ne"):
        if op == "eq":
            return (Interval(key, True, key, True),) if fits else ()
        if not fits:
            return (Interval(None, False, None, False),)
        return (Interval(None, False, key, False), Interval(key, False, None, False))
    if _signed_chars():
        below = _signed_less(key, width)
        if op in ("le", "gt") and fits:
            below.append(Interval(key, True, key, True))
        below_set = domain.union(below)
        return below_set if op in ("lt", "le") else domain.complement(below_set)
    if not fits:  # x < key is x <= key[:width], x >= key is x > key[:width]
        key, op = key[:width].rstrip(b"\0"), {"lt": "le", "ge": "gt"}.get(op, op)
    if op in ("gt", "ge"):
        return (Interval(key, op == "ge", None, False),)
    return (Interval(None, False, key, op == "le"),)


def _leaf(domain: _Domain, column_kind: str, const: _Const,
          op: str) -> tuple[tuple[Interval, ...], bool] | None:
    """Intervals and NaN flag of ``column OP const``, or None if not plannable."""
    if domain.kind == "S" or const.kind == "bytes":
        if domain.kind != "S" or const.kind != "bytes":
            return None  # numexpr refuses strings against numbers
        key = const.as_bytes()
        return None if key is None else (_string_intervals(domain, key, op), False)
    kind = _RANK[max(_RANK.index(column_kind), _RANK.index(const.kind))]
    if kind == "complex":
        return None
    if kind == "bool" and op not in ("eq", "ne"):
        kind = "int"  # numexpr orders booleans as integers
    ctype = _KIND_DTYPE[kind]
    threshold = const.as_kind(kind)
    if domain.kind == "b":
        return _bool_intervals(ctype, threshold, op), False
    if isinstance(threshold, np.floating) and np.isnan(threshold):
        if op == "ne":  # NaN != x is true, even for NaN
            return (Interval(None, False, None, False),), domain.has_nan
        return (), False
    return _numeric_intervals(domain, ctype, threshold, op), domain.has_nan and op == "ne"
