"""Query conditions: name resolution, validation and compilation with numexpr.

A condition is a numexpr expression over column names and outer variables, such as
``'(col1 > 0) & (col3 < lim)'``.  Its life has three steps, all done before any row is read:

1. :func:`resolve_operands` finds what each name in the condition refers to, with PyTables'
   rules: ``condvars`` first when given, then the table's top-level columns, then (only when
   ``condvars`` is ``None``) the caller's local and global variables (see
   :func:`caller_namespace`, the only code in hyperslab that reads frames).
2. :func:`compile_condition` parses and type-checks the condition and compiles it into a
   numexpr program, once per (condition, operand types): the result is kept in an LRU of
   :data:`COND_CACHE_SLOTS` entries, as PyTables does.
3. :func:`bind_condition` pairs the compiled program with the operands of one query; the
   resulting :class:`BoundCondition` evaluates a block of records into a boolean mask,
   passing numexpr the column views of the block (no copies) and the outer values.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numexpr as ne
import numpy as np

from hyperslab.errors import ConditionTypeError
from hyperslab.nodes.atoms.description import field_of

__all__ = [
    "COND_CACHE_SLOTS",
    "NUMEXPR_SERIAL_ITEMS",
    "BoundCondition",
    "CompiledCondition",
    "bind_condition",
    "caller_namespace",
    "compile_condition",
    "condition_key",
    "condition_names",
    "field_of",
    "resolve_operands",
    "serial_numexpr",
]

COND_CACHE_SLOTS = 128
"""Compiled conditions kept in the LRU (PyTables' ``COND_CACHE_SLOTS`` default)."""

_NEC = ne.necompiler
_REDUCTIONS = frozenset({"sum", "prod", "min", "max"})
_NO_OPCODE = re.compile(r"'([a-z0-9]+)_([a-z]+)'")
_RESERVED = frozenset({"None", "False", "True"})

Operand = Any
"""A column object (it has ``pathname``) or a 0-d NumPy array (an outer value)."""


def caller_namespace(depth: int) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Return the local and global variables of a caller's frame.

    This is the only place where hyperslab reads interpreter frames.  It must be called
    directly from the body of the public query function that received ``depth``.

    Parameters
    ----------
    depth : int
        ``0`` is the frame that called the function calling this helper; each unit goes
        one frame further up.  ``Table.where`` passes ``depth=1`` to the query functions,
        so the names are those of the code that called ``Table.where``.

    Returns
    -------
    tuple of Mapping
        ``(f_locals, f_globals)`` of that frame.
    """
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    frame = sys._getframe(depth + 2)
    return frame.f_locals, frame.f_globals


@functools.lru_cache(maxsize=1024)
def condition_names(condition: str) -> tuple[str, ...]:
    """Names of the variables used by ``condition``, in order of first appearance.

    Function names known to numexpr and ``None``/``True``/``False`` are left out.

    Raises
    ------
    TypeError
        If ``condition`` is not a ``str``.
    SyntaxError
        If ``condition`` is not a Python expression.
    """
    if not isinstance(condition, str):
        raise TypeError(f"a condition must be a str, not {type(condition).__name__}: "
                        f"{condition!r}")
    code = compile(condition, "<condition>", "eval")
    return tuple(name for name in code.co_names
                 if name not in _RESERVED and name not in ne.expressions.functions)


def _same_table(column_table: Any, table: Any) -> bool:
    if column_table is table:
        return True
    return bool(getattr(column_table, "_v_file", None) is table._v_file
                and getattr(column_table, "path", None) == table.path)


def _check_column(name: str, column: Any, table: Any) -> None:
    """Raise if ``column`` cannot take part in a condition on ``table``."""
    if tuple(column.shape[1:]) != ():
        raise NotImplementedError(
            f"variable ``{name}`` refers to a multidimensional column "
            f"``{column.pathname}`` (cells of shape {tuple(column.shape[1:])}), "
            f"not supported in conditions"
        )
    if not _same_table(column.table, table):
        raise ValueError(
            f"variable ``{name}`` refers to a column which is not part of table "
            f"``{table.path}``"
        )
    if column.dtype.kind == "u" and column.dtype.itemsize == 8:
        raise NotImplementedError(
            f"variable ``{name}`` refers to a 64-bit unsigned integer column "
            f"``{column.pathname}``, not supported in conditions; "
            f"please use regular Python selections"
        )
    if column.dtype.kind not in "biufcS":
        raise TypeError(
            f"variable ``{name}`` refers to column ``{column.pathname}`` of data type "
            f"``{column.dtype}``, not allowed in conditions"
        )


def _value_operand(name: str, value: Any) -> np.ndarray:
    """Convert an outer value to the 0-d array numexpr receives."""
    if isinstance(value, str):
        value = value.encode("ascii")
    array = np.asarray(value)
    if array.dtype.kind == "u" and array.dtype.itemsize == 8:
        if array.size and int(array.max()) > np.iinfo(np.int64).max:
            raise TypeError(f"variable ``{name}`` = {value!r} does not fit in int64, "
                            f"not allowed in conditions")
        array = array.astype(np.int64)
    try:
        _NEC.getType(array)
    except ValueError:
        raise TypeError(f"variable ``{name}`` has data type ``{array.dtype.name}``, "
                        f"not allowed in conditions") from None
    if array.size != 1:
        raise ValueError(f"variable ``{name}`` must be a scalar in a condition, "
                         f"got an array of shape {array.shape}")
    return array.reshape(())


def resolve_operands(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None,
    namespace: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
) -> dict[str, Operand]:
    """Find and check what each name of ``condition`` refers to.

    Parameters
    ----------
    table : Table
        The table queried (its ``colinstances``, ``path`` and ``_v_file`` are used).
    condition : str
        The condition.
    condvars : Mapping or None
        Explicit variables; they override the table's columns.  When ``None``, names that
        are not columns are looked up in ``namespace``.
    namespace : tuple of Mapping or None
        ``(locals, globals)`` of the user's frame, used only when ``condvars`` is ``None``.

    Returns
    -------
    dict
        Name -> column object or 0-d array (strings encoded as ASCII bytes).

    Raises
    ------
    NameError
        For a name defined nowhere.
    TypeError
        For a nested column group or a value of a type numexpr cannot handle.
    NotImplementedError
        For a multidimensional or uint64 column.
    ValueError
        For a column of another table.
    """
    names = condition_names(condition)
    colinstances = table.colinstances
    user_locals: Mapping[str, Any] = {}
    user_globals: Mapping[str, Any] = {}
    if condvars is None and namespace is not None:
        user_locals, user_globals = namespace
    operands: dict[str, Operand] = {}
    for name in names:
        if condvars is not None and name in condvars:
            value = condvars[name]
        elif name in colinstances:
            value = colinstances[name]
        elif condvars is None and name in user_locals:
            value = user_locals[name]
        elif condvars is None and name in user_globals:
            value = user_globals[name]
        else:
            raise NameError(f"name ``{name}`` is not defined (in condition {condition!r})")
        if hasattr(value, "pathname"):
            _check_column(name, value, table)
        elif hasattr(value, "_v_colpathnames"):
            raise TypeError(f"variable ``{name}`` refers to a nested column, "
                            f"not allowed in conditions")
        else:
            value = _value_operand(name, value)
        operands[name] = value
    return operands


def _numexpr_type(dtype: np.dtype[Any]) -> type:
    """The numexpr type of a column or value of ``dtype`` (PyTables' mapping)."""
    return _NEC.getType(np.empty(0, dtype))


def _cast_for_numexpr(dtype: np.dtype[Any]) -> np.dtype[Any] | None:
    """Dtype a column must be converted to before numexpr, or None if it takes it as is.

    numexpr casts the narrow integers, uint32, float16 and complex64 itself (safely, with
    its buffered iterator); only extended precision floats need an explicit conversion.
    """
    if dtype.kind == "f" and dtype.itemsize > 8:
        return np.dtype(np.float64)
    if dtype.kind == "c" and dtype.itemsize > 16:
        return np.dtype(np.complex128)
    return None


@dataclass(frozen=True, slots=True)
class CompiledCondition:
    """A condition compiled by numexpr for given operand types.

    A numexpr program keeps its working memory in the program object, so two threads must
    never run the same one at once: :meth:`program` hands each thread its own copy
    (compiled there on first use).

    Attributes
    ----------
    condition : str
        The condition text.
    signature : tuple of (str, type)
        ``(name, numexpr type)`` of the program's inputs, in call order.
    parameters : tuple of str
        Names of the variables the program takes, in call order.
    uses_vml : bool
        Whether the program uses VML functions (numexpr needs to know).
    """

    condition: str
    signature: tuple[tuple[str, type], ...]
    parameters: tuple[str, ...]
    uses_vml: bool
    _programs: threading.local = field(default_factory=threading.local, repr=False,
                                       compare=False)

    def program(self) -> Any:
        """The numexpr program of the calling thread (a ``numexpr.NumExpr``)."""
        programs = self._programs
        compiled = getattr(programs, "program", None)
        if compiled is None:
            compiled = programs.program = _NEC.NumExpr(self.condition, list(self.signature))
        return compiled


_serial_lock = threading.Lock()
_serial_users = 0
_saved_threads = 1


@contextlib.contextmanager
def serial_numexpr() -> Iterator[None]:
    """Make numexpr evaluate in the calling thread only, while inside.

    Parallel scans evaluate one block per pool thread; numexpr's own threads would only
    serialize them (numexpr runs one multithreaded evaluation at a time).  numexpr's
    thread count is process-wide: it is set to 1 when the first scan enters and set back
    to what it was when the last one leaves.
    """
    global _serial_users, _saved_threads
    with _serial_lock:
        if _serial_users == 0:
            _saved_threads = ne.set_num_threads(1)
        _serial_users += 1
    try:
        yield
    finally:
        with _serial_lock:
            _serial_users -= 1
            if _serial_users == 0:
                ne.set_num_threads(_saved_threads)


def _variable_names(expr: Any) -> tuple[str, ...]:
    names: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.astType == "variable":
            names.add(node.value)
        elif node.astType == "op" and node.value in _REDUCTIONS:
            raise TypeError(f"reduction ``{node.value}`` not allowed in conditions")
        stack.extend(getattr(node, "children", ()))
    return tuple(sorted(names))


def _uses_vml(expr: Any) -> bool:
    if not _NEC.use_vml:
        return False
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.astType == "op" and node.value in _NEC.vml_functions:
            return True
        stack.extend(getattr(node, "children", ()))
    return False


def _unsupported(exc: NotImplementedError, condition: str) -> ConditionTypeError:
    """Turn numexpr's "couldn't find matching opcode for 'gt_bsi'" into a clear error."""
    match = _NO_OPCODE.search(str(exc))
    if match is None:
        return ConditionTypeError(f"{exc} (in condition {condition!r})")
    op, codes = match.groups()
    kinds = ", ".join(_NEC.typecode_to_kind.get(c, c) for c in codes[1:])
    return ConditionTypeError(
        f"unsupported operand types for *{op}*: {kinds} (in condition {condition!r})"
    )


@functools.lru_cache(maxsize=COND_CACHE_SLOTS)
def compile_condition(
    condition: str, types: tuple[tuple[str, type], ...]
) -> CompiledCondition:
    """Compile ``condition`` for the numexpr ``types`` of its variables (cached).

    Parameters
    ----------
    condition : str
        The condition.
    types : tuple of (str, type)
        ``(name, numexpr type)`` for every variable (``bool``, ``int``, ``long``,
        ``float``, ``double``, ``complex``, ``bytes``), sorted by name.

    Returns
    -------
    CompiledCondition

    Raises
    ------
    TypeError
        If the condition does not have a boolean type, uses a reduction or Python's
        ``and``/``or``/``not``.
    ConditionTypeError
        (a ``NotImplementedError`` and a ``TypeError``) for operand types numexpr has no
        operation for, e.g. a string compared with a number.
    ValueError
        For what numexpr refuses to parse (``[``, ``;``, attribute access...).
    """
    typemap = dict(types)
    try:
        expr = _NEC.stringToExpression(condition, typemap, {})
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{exc} (in condition {condition!r})") from exc
    if expr.astKind != "bool":
        raise TypeError(f"condition ``{condition}`` does not have a boolean type "
                        f"(it is {expr.astKind})")
    names = _variable_names(expr)
    signature = tuple((name, typemap[name]) for name in names)
    try:
        program = _NEC.NumExpr(expr, list(signature))
    except NotImplementedError as exc:
        raise _unsupported(exc, condition) from exc
    compiled = CompiledCondition(condition, signature, tuple(program.input_names),
                                 _uses_vml(expr))
    compiled._programs.program = program  # the compiling thread's copy
    return compiled


@dataclass(frozen=True, slots=True)
class _ColumnArg:
    path: str
    cast: np.dtype[Any] | None


NUMEXPR_SERIAL_ITEMS = 1024
"""numexpr evaluates arrays of at most this many items in the calling thread (numexpr
2.x: two of its 1,024-item blocks or more go to its threads)."""


@dataclass(frozen=True, slots=True)
class BoundCondition:
    """A compiled condition with the operands of one query.

    Attributes
    ----------
    compiled : CompiledCondition
        The program.
    columns : tuple of str
        Pathnames of the columns the condition reads (the only ones a query needs).
    operands : Mapping
        What each name of the condition refers to (see :func:`resolve_operands`): the
        index planner reads it.
    key : tuple
        The condition and its operands as a hashable value (see :func:`condition_key`):
        the same for every binding of the same query on the same table.
    """

    compiled: CompiledCondition
    columns: tuple[str, ...]
    _args: tuple[_ColumnArg | np.ndarray, ...]
    operands: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    key: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    def evaluate(self, records: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Evaluate the condition on a block of ``records``.

        Parameters
        ----------
        records : numpy.ndarray
            1-D structured array of the table's record dtype.
        out : numpy.ndarray, optional
            Boolean array of ``len(records)`` to write the result into.

        Returns
        -------
        numpy.ndarray
            Boolean mask of the records satisfying the condition.
        """
        args: list[np.ndarray] = []
        for arg in self._args:
            if isinstance(arg, _ColumnArg):
                view = field_of(records, arg.path)
                args.append(view if arg.cast is None else view.astype(arg.cast))
            else:
                args.append(arg)
        compiled = self.compiled
        return compiled.program()(*args, out=out, ex_uses_vml=compiled.uses_vml)

    def evaluate_here(self, records: np.ndarray) -> np.ndarray:
        """:meth:`evaluate`, in the calling thread only (for the few records of an indexed
        query).

        numexpr gives evaluations of more than :data:`NUMEXPR_SERIAL_ITEMS` items to its
        threads, and waking them costs more than the work for a few thousand records
        (measured on 2 cores: 10,000 float64 comparisons took 200 us that way, 30 us in
        one thread).  Blocks of that size stay in the calling thread; numexpr's
        process-wide thread count is left alone.
        """
        count = len(records)
        if count <= NUMEXPR_SERIAL_ITEMS:
            return self.evaluate(records)
        mask = np.empty(count, dtype=bool)
        for lo in range(0, count, NUMEXPR_SERIAL_ITEMS):
            hi = min(lo + NUMEXPR_SERIAL_ITEMS, count)
            self.evaluate(records[lo:hi], out=mask[lo:hi])
        return mask


def bind_condition(
    table: Any,
    condition: str,
    condvars: Mapping[str, Any] | None,
    namespace: tuple[Mapping[str, Any], Mapping[str, Any]] | None,
) -> BoundCondition:
    """Resolve, check and compile ``condition`` for a query on ``table``.

    Everything that can be wrong with a condition is raised here, before any row is read
    (see :func:`resolve_operands` and :func:`compile_condition` for the exceptions).

    Raises
    ------
    ValueError
        Also when no column takes part in the condition.
    """
    operands = resolve_operands(table, condition, condvars, namespace)
    types = []
    for name, value in sorted(operands.items()):
        dtype = value.dtype
        cast = _cast_for_numexpr(dtype) if hasattr(value, "pathname") else None
        types.append((name, _numexpr_type(cast or dtype)))
    compiled = compile_condition(condition, tuple(types))
    args: list[_ColumnArg | np.ndarray] = []
    columns: list[str] = []
    for name in compiled.parameters:
        value = operands[name]
        if hasattr(value, "pathname"):
            args.append(_ColumnArg(value.pathname, _cast_for_numexpr(value.dtype)))
            if value.pathname not in columns:
                columns.append(value.pathname)
        else:
            args.append(value)
    if not columns:
        raise ValueError(f"there are no columns taking part in condition ``{condition}``")
    return BoundCondition(compiled, tuple(columns), tuple(args), operands,
                          condition_key(condition, operands))


def _operand_key(value: Any) -> tuple[Any, ...]:
    if hasattr(value, "pathname"):
        return ("column", value.pathname, value.dtype.str)
    array = np.asarray(value)
    return ("value", array.dtype.str, array.shape, array.tobytes())


def condition_key(condition: str, operands: Mapping[str, Any]) -> tuple[Any, ...]:
    """A hashable value naming ``condition`` with ``operands`` (from
    :func:`resolve_operands`): columns by pathname and dtype, values by dtype and bytes,
    so that two bindings of the same query on one table have equal keys."""
    return (condition, tuple((name, _operand_key(value))
                             for name, value in sorted(operands.items())))
