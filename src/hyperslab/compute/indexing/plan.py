"""Index planning: which rows of a query the column indexes can give.

:func:`plan_condition` reads a condition (numexpr syntax, parsed with :mod:`ast`) and the
operands :func:`~hyperslab.compute.conditions.resolve_operands` bound to its names, and
returns an :class:`IndexPlan`: :class:`ValueSet` leaves (the rows whose value in one indexed
column lies in given intervals) joined by :class:`And` and :class:`Or`.  Its rows are always
a **superset** of the matching rows (the executor evaluates the whole condition on them);
``IndexPlan.exact`` says whether they are the same rows.  Planning touches no file.

What is planned: ``col OP value`` and ``value OP col`` (``OP`` in ``< <= > >= == !=``) for an
indexed column of booleans, integers, floats or strings and a literal (numbers folded as
Python folds them before numexpr sees them) or a name bound to a 0-d array; a bare boolean
column (``col == True``); ``A & B`` (one planned side is enough, inexactly), ``A | B`` (both
sides needed) and ``~A`` when ``A`` is an exact plan of one column.  ValueSets of the same
column inside one ``&`` or ``|`` are merged.  Anything else (arithmetic on columns,
functions, column against column or array, non-indexed, complex, multidimensional, uint64
or extended-precision columns, negation over several columns) plans to nothing.

How each comparison becomes the set of column values it matches, under numexpr's type
rules, is :mod:`hyperslab.compute.indexing.intervals`' job (its "value semantics").

Differences from PyTables' ``will_query_use_indexing``: ``col != value`` is planned (two
intervals, plus the NaNs of a float column; PyTables: "range has two pieces"); ``~A`` is
planned when ``A`` is an exact plan of one column even if compound, such as
``~(("bar" <= var1) & (var1 < "foo"))`` (PyTables refuses every negated compound); ordering
comparisons of boolean columns (numexpr compares them as integers) are planned.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from hyperslab.compute.indexing.intervals import (
    Interval,
    _array_kind,
    _Const,
    _Domain,
    _leaf,
    _literal_kind,
)

__all__ = [
    "And",
    "IndexPlan",
    "Interval",
    "Or",
    "PlanNode",
    "ValueSet",
    "plan_condition",
    "value_set_contains",
]


# ----------------------------------------------------------------------------- plan nodes


@dataclass(frozen=True, slots=True)
class ValueSet:
    """Exactly the rows whose ``column`` value lies in one of ``intervals``.

    Attributes
    ----------
    column : str
        Pathname of the column.
    intervals : tuple of Interval
        Disjoint, in ascending order; ``()`` matches no value.
    nan : bool
        Whether the rows holding NaN belong to the set too (float columns only).
    """

    column: str
    intervals: tuple[Interval, ...]
    nan: bool = False


@dataclass(frozen=True, slots=True)
class And:
    """The rows common to every part."""

    parts: tuple[PlanNode, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """The rows of any part."""

    parts: tuple[PlanNode, ...]


PlanNode: TypeAlias = ValueSet | And | Or


@dataclass(frozen=True, slots=True)
class IndexPlan:
    """What the indexes can do for a condition.

    Attributes
    ----------
    node : PlanNode
        The rows the indexes give: a superset of the rows matching the condition.
    exact : bool
        Whether ``node`` gives exactly the matching rows.
    columns : frozenset of str
        Pathnames of the indexed columns the plan uses.
    """

    node: PlanNode
    exact: bool
    columns: frozenset[str]


def value_set_contains(vs: ValueSet, values: np.ndarray) -> np.ndarray:
    """Which of ``values`` belong to ``vs`` (NumPy comparisons).

    Parameters
    ----------
    vs : ValueSet
        The set.
    values : numpy.ndarray
        Values of ``vs.column`` (any shape).

    Returns
    -------
    numpy.ndarray
        Boolean mask of the shape of ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> vs = ValueSet("x", (Interval(np.int32(1), False, None, False),))
    >>> value_set_contains(vs, np.array([0, 1, 2], dtype=np.int32)).tolist()
    [False, False, True]
    """
    values = np.asarray(values)
    mask = np.zeros(values.shape, dtype=bool)
    nan = np.isnan(values) if values.dtype.kind in "fc" else None
    for iv in vs.intervals:
        part = np.ones(values.shape, dtype=bool) if nan is None else ~nan
        if iv.lo is not None:
            part &= (values >= iv.lo) if iv.lo_inclusive else (values > iv.lo)
        if iv.hi is not None:
            part &= (values <= iv.hi) if iv.hi_inclusive else (values < iv.hi)
        mask |= part
    if vs.nan and nan is not None:
        mask |= nan
    return mask


# ----------------------------------------------------------------------------- planner

_Planned = tuple[PlanNode, bool]  # (node, exact)

_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_AST_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
}

_FOLD_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_MAX_EXPONENT = 1100


def _literal(node: ast.expr) -> Any:
    """The value Python gives a literal expression (numexpr sees that value), or None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        return None
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD_OPS:
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, int | float) and isinstance(right, int | float):
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
                return None  # too big for any column type: not worth computing
            try:
                return _FOLD_OPS[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                return None
    return None


@functools.lru_cache(maxsize=256)
def _parse(condition: str) -> ast.expr:
    return ast.parse(condition.strip(), mode="eval").body


class _Planner:
    def __init__(self, operands: Mapping[str, Any], indexed: Callable[[str], bool]) -> None:
        self.operands = operands
        self.indexed = indexed
        self.domains: dict[str, _Domain] = {}

    def plan(self, node: ast.expr) -> _Planned | None:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
            return self._and(node.left, node.right)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._or(node.left, node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return self._not(node.operand)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Name):
            return self._bare(node)
        return None

    # ------------------------------------------------------------------ operands

    def _column(self, node: ast.expr) -> tuple[str, _Domain, str] | None:
        """(pathname, domain, numexpr kind) of an indexed column named by ``node``."""
        if not isinstance(node, ast.Name):
            return None
        value = self.operands.get(node.id)
        if value is None or not hasattr(value, "pathname"):
            return None
        dtype = np.dtype(value.dtype)
        domain = _Domain.of(dtype)
        kind = _array_kind(dtype)
        if domain is None or kind is None or not self.indexed(value.pathname):
            return None
        self.domains[value.pathname] = domain
        return value.pathname, domain, kind

    def _constant(self, node: ast.expr) -> _Const | None:
        if isinstance(node, ast.Name):
            value = self.operands.get(node.id)
            if not isinstance(value, np.ndarray) or value.ndim != 0:
                return None
            kind = _array_kind(value.dtype)
        else:
            value = _literal(node)
            kind = _literal_kind(value)
            if kind == "bytes" and not value:
                return None  # numexpr compares an empty string literal inconsistently
        return None if kind is None else _Const(value, kind)

    # ------------------------------------------------------------------ nodes

    def _compare(self, node: ast.Compare) -> _Planned | None:
        if len(node.ops) != 1 or type(node.ops[0]) not in _AST_OPS:
            return None
        op = _AST_OPS[type(node.ops[0])]
        left, right = node.left, node.comparators[0]
        column = self._column(left)
        if column is None:
            column, left, right, op = self._column(right), right, left, _FLIP[op]
        const = self._constant(right)
        if column is None or const is None:
            return None
        path, domain, kind = column
        leaf = _leaf(domain, kind, const, op)
        if leaf is None:
            return None
        intervals, nan = leaf
        return ValueSet(path, intervals, nan), True

    def _bare(self, node: ast.Name) -> _Planned | None:
        column = self._column(node)
        if column is None or column[1].kind != "b":
            return None
        true = np.bool_(True)
        return ValueSet(column[0], (Interval(true, True, true, True),)), True

    def _and(self, left: ast.expr, right: ast.expr) -> _Planned | None:
        a, b = self.plan(left), self.plan(right)
        if a is None:
            return None if b is None else (b[0], False)
        if b is None:
            return a[0], False
        return self._combine(And, (a[0], b[0])), a[1] and b[1]

    def _or(self, left: ast.expr, right: ast.expr) -> _Planned | None:
        a = self.plan(left)
        b = self.plan(right) if a is not None else None
        if a is None or b is None:
            return None
        return self._combine(Or, (a[0], b[0])), a[1] and b[1]

    def _not(self, operand: ast.expr) -> _Planned | None:
        planned = self.plan(operand)
        if planned is None or not planned[1] or not isinstance(planned[0], ValueSet):
            return None
        vs = planned[0]
        domain = self.domains[vs.column]
        return ValueSet(vs.column, domain.complement(vs.intervals),
                        domain.has_nan and not vs.nan), True

    def _combine(self, kind: type[And] | type[Or], parts: Iterable[PlanNode]) -> PlanNode:
        """Flatten nested ``kind`` nodes and merge the ValueSets of each column."""
        flat: list[PlanNode] = []
        for part in parts:
            flat.extend(part.parts if isinstance(part, kind) else (part,))
        merged: list[PlanNode] = []
        where: dict[str, int] = {}
        for part in flat:
            if not isinstance(part, ValueSet):
                merged.append(part)
            elif part.column not in where:
                where[part.column] = len(merged)
                merged.append(part)
            else:
                i = where[part.column]
                merged[i] = self._merge(kind, merged[i], part)  # type: ignore[arg-type]
        return merged[0] if len(merged) == 1 else kind(tuple(merged))

    def _merge(self, kind: type[And] | type[Or], a: ValueSet, b: ValueSet) -> ValueSet:
        domain = self.domains[a.column]
        if kind is And:
            return ValueSet(a.column, domain.intersection(a.intervals, b.intervals),
                            a.nan and b.nan)
        return ValueSet(a.column, domain.union(a.intervals + b.intervals), a.nan or b.nan)


def _plan_columns(node: PlanNode) -> frozenset[str]:
    if isinstance(node, ValueSet):
        return frozenset((node.column,))
    return frozenset().union(*(_plan_columns(part) for part in node.parts))


def plan_condition(
    condition: str, operands: Mapping[str, Any], indexed: Callable[[str], bool]
) -> IndexPlan | None:
    """Plan which rows of ``condition`` the column indexes can give.

    Parameters
    ----------
    condition : str
        A query condition (numexpr syntax).
    operands : Mapping
        What each name of the condition refers to, as returned by
        :func:`~hyperslab.compute.conditions.resolve_operands`: column objects (with
        ``pathname`` and ``dtype``) or 0-d arrays.
    indexed : callable
        ``indexed(pathname)`` tells whether that column has a usable index.

    Returns
    -------
    IndexPlan or None
        None when no index helps.

    Raises
    ------
    SyntaxError
        If ``condition`` is not a Python expression.

    Examples
    --------
    >>> import numpy as np
    >>> class Col:
    ...     pathname, dtype = "x", np.dtype(np.int32)
    >>> plan = plan_condition("(x > 1) & (x < 5)", {"x": Col()}, lambda path: True)
    >>> plan.node.intervals
    (Interval(lo=np.int32(1), lo_inclusive=False, hi=np.int32(5), hi_inclusive=False),)
    """
    planned = _Planner(operands, indexed).plan(_parse(condition))
    if planned is None:
        return None
    node, exact = planned
    return IndexPlan(node, exact, _plan_columns(node))
