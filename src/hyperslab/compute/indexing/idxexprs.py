"""PyTables' index-expression form of a condition (``Table._compile_condition``).

PyTables describes the part of a condition its indexes can answer as a list of *index
expressions* ``(name, ops, limits)``, such as ``("c_int32", ("gt", "lt"), (0, 5))`` for
``(c_int32 > 0) & (c_int32 < 5)``, and a *string expression* combining them, such as
``"(e0 & e1)"`` (``eN`` is the N-th index expression).  Code written for PyTables, its test
suite among it, inspects these through the object ``Table._compile_condition`` returns.

:func:`index_expressions` derives that form from the condition's syntax tree with PyTables'
rules (``conditions._get_idx_expr``): a comparison ``<``, ``<=``, ``==``, ``>=``, ``>``
between an indexed column and a literal or a bound value (either side), a bare boolean
indexed column (``eq True``) and its negation (``eq False``), negated comparisons (the
operator reversed), a pair ``(a < x) & (x < b)`` of the same column as one range, and
``&``/``|`` of these, where ``&`` keeps any indexable side and ``|`` needs both.  ``!=`` and
negations of compound conditions are not part of this form.  The expressions are numbered
in the order PyTables adds them: each ``&``/``|`` node adds its single-comparison children
after walking both of them.

Two differences keep the form a true description of the condition: a branch that turns out
not to be indexable (``X | (a & b)`` with ``X`` not indexable) leaves nothing behind
(PyTables keeps ``a`` and ``b`` in its list, so ``(X | (a & b)) & c`` reads as
``a & b & c``), and a negated equality is only rewritten for booleans (PyTables turns
``~(c == 0)`` into ``c == 1``, and fails with ``KeyError`` on ``~(c == 3)``); both are
simply not indexable here.

This form is informational: hyperslab's own planner
(:mod:`hyperslab.compute.indexing.plan`) decides which indexes a query uses, and it uses
them for more shapes (``!=``, some negated compounds), so ``will_query_use_indexing`` may
name columns this form leaves out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperslab.compute.indexing.plan import _literal, _parse

__all__ = ["IndexExpression", "IndexedCondition", "index_expressions"]

IndexExpression = tuple[str, tuple[str, ...], tuple[Any, ...]]
"""``(name, ops, limits)``: the rows where column ``name`` compares with each limit by the
matching operator (``"lt"``, ``"le"``, ``"eq"``, ``"ge"``, ``"gt"``)."""

_CMP_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.GtE: "ge", ast.Gt: "gt",
}
_TURN = {"lt": "gt", "le": "ge", "eq": "eq", "ge": "le", "gt": "lt"}
_NEGATE = {"lt": "ge", "le": "gt", "ge": "lt", "gt": "le"}
_SYMBOL = {"and": "&", "or": "|"}


@dataclass(frozen=True, slots=True)
class IndexedCondition:
    """A compiled condition with the part its indexes can answer, in PyTables' form
    (what PyTables' ``CompiledCondition`` holds).

    Attributes
    ----------
    function : numexpr.NumExpr
        The compiled program of the whole condition.
    parameters : list of str
        Names of the program's inputs, in call order.
    index_expressions : list of tuple
        ``(name, ops, limits)`` for each indexable comparison (see :data:`IndexExpression`).
    string_expression : str
        How the index expressions combine, as ``"((e0 & e1) | e2)"``; ``""`` if none.
    """

    function: Any
    parameters: list[str]
    index_expressions: list[IndexExpression]
    string_expression: str

    @property
    def index_variables(self) -> frozenset[str]:
        """Names of the columns taking part in the index expressions."""
        return frozenset(expr[0] for expr in self.index_expressions)


_Cmp = tuple[str, str, Any]  # (name, op, limit)


@dataclass(frozen=True, slots=True)
class _Invert:
    operand: ast.expr


class _Extractor:
    """PyTables' recursive walk, with the list of expressions and the string it builds."""

    def __init__(self, operands: Mapping[str, Any], indexed: Callable[[str], bool]) -> None:
        self.operands = operands
        self.indexed = indexed
        self.exprs: list[IndexExpression] = []
        self.text = ""

    def _column(self, node: ast.expr) -> str | None:
        """The name of an indexed column, if ``node`` is one."""
        if not isinstance(node, ast.Name):
            return None
        value = self.operands.get(node.id)
        if value is None or not hasattr(value, "pathname") or not self.indexed(node.id):
            return None
        return node.id

    def _limit(self, node: ast.expr) -> tuple[bool, Any]:
        """``(True, value)`` for a literal or a name bound to a value, else ``(False,
        None)``."""
        if isinstance(node, ast.Name):
            value = self.operands.get(node.id)
            if isinstance(value, np.ndarray) and value.ndim == 0:
                return True, value.tolist()
            return False, None
        value = _literal(node)
        return (value is not None), value

    def _bool_column(self, node: ast.expr) -> str | None:
        name = self._column(node)
        if name is None or np.dtype(self.operands[name].dtype).kind != "b":
            return None
        return name

    def _cmp(self, node: ast.expr) -> _Cmp | _Invert | None:
        """The indexable comparison ``node`` is, a negation to look into, or None."""
        name = self._bool_column(node)
        if name is not None:
            return name, "eq", True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            name = self._bool_column(node.operand)
            return (name, "eq", False) if name is not None else _Invert(node.operand)
        if (not isinstance(node, ast.Compare) or len(node.ops) != 1
                or type(node.ops[0]) not in _CMP_OPS):
            return None
        op = _CMP_OPS[type(node.ops[0])]
        left, right = node.left, node.comparators[0]
        for column, other, cmp_op in ((left, right, op), (right, left, _TURN[op])):
            name = self._column(column)
            if name is not None:
                ok, value = self._limit(other)
                if ok:
                    return name, cmp_op, value
        return None

    def _single(self, node: ast.expr) -> IndexExpression | None:
        """The index expression of a (possibly negated) comparison, or None."""
        cmp = self._cmp(node)
        invert = False
        while isinstance(cmp, _Invert):
            invert = not invert
            cmp = self._cmp(cmp.operand)
        if cmp is None:
            return None
        name, op, value = cmp
        if invert:
            if op == "eq" and isinstance(value, bool | np.bool_):
                value = not value
            elif op in _NEGATE:
                op = _NEGATE[op]
            else:
                return None
        return name, (op,), (value,)

    def _range(self, op: str, left: ast.expr, right: ast.expr) -> IndexExpression | None:
        """``(a < x) & (x < b)`` (either order) as one range expression."""
        lcmp, rcmp = self._cmp(left), self._cmp(right)
        if (op != "and" or not isinstance(lcmp, tuple) or not isinstance(rcmp, tuple)
                or lcmp[0] != rcmp[0]):
            return None
        if lcmp[1] in ("gt", "ge") and rcmp[1] in ("lt", "le"):
            return lcmp[0], (lcmp[1], rcmp[1]), (lcmp[2], rcmp[2])
        if lcmp[1] in ("lt", "le") and rcmp[1] in ("gt", "ge"):
            return lcmp[0], (rcmp[1], lcmp[1]), (rcmp[2], lcmp[2])
        return None

    def _add(self, expr: IndexExpression | bool, op: str) -> None:
        if isinstance(expr, bool):  # a compound already added
            return
        self.exprs.append(expr)
        count = len(self.exprs)
        self.text = "e0" if count == 1 else f"({self.text} {_SYMBOL[op]} e{count - 1})"

    def walk(self, node: ast.expr) -> IndexExpression | bool | None:
        """An index expression (for a single comparison, not yet added), ``True`` (a
        compound whose expressions were added) or None (not indexable)."""
        if self._cmp(node) is not None:
            return self._single(node)  # None for a negated compound
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.BitAnd | ast.BitOr):
            return None
        op = "and" if isinstance(node.op, ast.BitAnd) else "or"
        ranged = self._range(op, node.left, node.right)
        if ranged is not None:
            return ranged
        saved = (len(self.exprs), self.text)
        left, right = self.walk(node.left), self.walk(node.right)
        if left is not None and (op == "and" or right is not None):
            self._add(left, op)
            if right is not None:
                self._add(right, op)
            return True
        if right is not None and op == "and":
            self._add(right, op)
            return True
        del self.exprs[saved[0]:]  # leave nothing of a branch that is not indexable
        self.text = saved[1]
        return None


def index_expressions(
    condition: str, operands: Mapping[str, Any], indexed: Callable[[str], bool]
) -> tuple[list[IndexExpression], str]:
    """PyTables' index expressions and string expression of ``condition``.

    Parameters
    ----------
    condition : str
        A query condition (numexpr syntax).
    operands : Mapping
        What each name of the condition refers to, as returned by
        :func:`~hyperslab.compute.conditions.resolve_operands`.
    indexed : callable
        ``indexed(name)`` tells whether the column bound to ``name`` has a usable index.

    Returns
    -------
    tuple
        ``(index_expressions, string_expression)``: ``([], "")`` when no index helps.

    Examples
    --------
    >>> import numpy as np
    >>> class Col:
    ...     pathname, dtype = "/x", np.dtype(np.int32)
    >>> index_expressions("(x > 0) & (x < 5) & (y > 1)", {"x": Col(), "y": np.array(1)},
    ...                   lambda name: name == "x")
    ([('x', ('gt', 'lt'), (0, 5))], 'e0')
    """
    extractor = _Extractor(operands, indexed)
    result = extractor.walk(_parse(condition))
    if result is None:
        return [], ""
    if result is True:
        return extractor.exprs, extractor.text
    assert not isinstance(result, bool)
    return [result], "e0"
