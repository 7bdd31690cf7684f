"""Judging one read: hyperslab's outcome against h5py's and the undamaged file's.

Outcomes are values or exceptions; values are compared after :func:`canonical` by
:func:`same` (the rules are in the package docstring).  Verdicts:

* ``ok`` (equal values), ``ok-error`` (both raised, hyperslab an allowed type),
  ``ok-pristine`` (hyperslab returned what the undamaged file holds), ``skipped``
  (hyperslab could not open the file: its ``open`` read has the verdict);
* ``refusal-damaged`` (hyperslab raised an allowed type where h5py returned data other
  than the undamaged file's), ``stale-index`` (an indexed answer over a damaged index)
  and ``unverified`` (a value other than the undamaged file's, on a mutant h5py could not
  read without crashing or hanging, or could not hold in memory) and ``not-run`` (a read
  skipped because its read path hung on an earlier mutant of the same base and kind, a
  failure already): counted, not failures;
* :data:`FAILURES`: ``unexpected`` (an exception type outside :func:`allowed`),
  ``wrong``, ``wrong-silent`` (h5py reported damage), ``refusal`` (h5py returned the
  undamaged data), ``crash`` and ``hang`` (set by the runner; ``crash-shared`` and
  ``hang-shared`` when h5py failed the same way on the same read).
"""

from __future__ import annotations

import traceback
from typing import Any

import h5py
import numpy as np

from hyperslab import errors

FAILURES = ("unexpected", "wrong", "wrong-silent", "refusal", "crash", "hang")
"""Verdicts that fail the test.  Refusals are counted and reported separately (see the
package docstring for why they fail the test too)."""

QUIET = ("ok", "ok-error", "ok-pristine", "skipped", "not-run")
"""Verdicts that are counted but not reported one by one."""

_OURS = tuple(
    cls for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, Warning)
    and cls.__module__ == errors.__name__
)


def raised_in(exc: BaseException) -> str:
    """The innermost frame of hyperslab's code in ``exc``'s traceback:
    ``package.module:function`` (empty if hyperslab's code is not in it)."""
    place = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if "/hyperslab/" in frame.filename:
            module = frame.filename.rsplit("/hyperslab/", 1)[1].removesuffix(".py")
            place = f"{module.replace('/', '.')}:{frame.name}"
    return place


_MISSING_FIELD = ("nodes.atoms.description:field_of", "compute.conditions:resolve_operands",
                  "nodes.tables.columns:__getattr__")
_NOT_NUMERIC = ("compute.expressions:__init__", "compute.reductions:_check_numeric")


def allowed(exc: BaseException, path: str, oracle: Any) -> bool:
    """Whether ``exc`` is a documented answer of hyperslab to a damaged file.

    See the package docstring for the list and the reasons.  ``oracle`` is h5py's
    outcome for the same probe (a value or an exception).
    """
    if isinstance(exc, _OURS):
        return True
    kind = type(exc)
    if isinstance(exc, MemoryError):  # NumPy's _ArrayMemoryError too
        return True
    if isinstance(exc, OSError) and path == "open":
        return True
    if kind is IndexError:
        return isinstance(oracle, IndexError) or (
            path == "chunk" and raised_in(exc).startswith("nodes.leaves.directchunk:"))
    if kind is ValueError and path == "sorted":
        return "index" in str(exc)
    if kind is ValueError and path == "reduce":
        return type(oracle) is ValueError  # NumPy's own (an empty array's min, argmax)
    if kind is TypeError and path == "reduce":
        return raised_in(exc) in _NOT_NUMERIC
    if kind in (KeyError, NameError, AttributeError) and raised_in(exc) in _MISSING_FIELD:
        return isinstance(oracle, (KeyError, ValueError, NameError))
    if kind is NotImplementedError:
        return raised_in(exc).startswith("nodes.leaves.array:")  # reading an UnImplemented leaf
    return False


def _text(data: bytes) -> str:
    """A fixed-length string as text, up to its first NUL (HDF5's NULLTERM strings:
    h5py's conversion cuts there, PyTables and hyperslab return the raw bytes)."""
    return data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def canonical(value: Any) -> Any:
    """``value`` in a form both libraries' answers compare in."""
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, h5py.Empty):  # h5py's null dataspace: PyTables reads ''
        return "" if np.dtype(value.dtype).kind in "SU" else None
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, (bytes, np.bytes_)):
        return _text(bytes(value))
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind == "S":
            return np.vectorize(_text, otypes=[object])(array) if array.size else array.astype(
                object)
        if array.dtype.kind == "U":
            return array
        return array.astype(array.dtype.newbyteorder("="))
    return value


def same(a: Any, b: Any, approx: bool = False) -> bool:
    """Whether two canonical values are equal (NaN equals NaN)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(same(a[k], b[k], approx) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(same(x, y, approx) for x, y in zip(a, b, strict=True)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _same_arrays(np.asarray(a), np.asarray(b), approx)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _same_arrays(a: np.ndarray, b: np.ndarray, approx: bool) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.names or b.dtype.names:
        return (a.dtype.names == b.dtype.names
                and all(_same_arrays(canonical(a[n]), canonical(b[n]), approx)
                        for n in a.dtype.names or ()))
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            if approx:  # sums of float32 (float16) differ in their 5th (2nd) digit
                rtol = {2: 2e-2, 4: 2e-4}.get(min(a.real.itemsize, b.real.itemsize), 1e-6)
                return bool(np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True))
            return bool(np.array_equal(a, b, equal_nan=True))
    if a.dtype.kind in "SUO" or b.dtype.kind in "SUO":
        return bool(np.array_equal(a.astype(object), b.astype(object)))
    with np.errstate(all="ignore"):
        if approx and a.dtype.kind in "biuf" and b.dtype.kind in "biuf":
            return bool(np.allclose(a, b, rtol=1e-6, atol=0, equal_nan=False))
        return bool(np.array_equal(a, b))


class OracleSkipped(Exception):
    """h5py did not read this mutant (it crashed or hung on it, or corrupted the worker)."""


class NotRun(Exception):
    """The read was not run: it hung on earlier mutants of the same base."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""The pristine value of a probe that raised on the undamaged base."""


def judge(path: str, hs: Any, h5: Any, pristine: Any = MISSING, approx: bool = False,
          stale: bool = False) -> str:
    """The verdict of one probe.

    ``hs`` and ``h5`` are the two libraries' outcomes (values or exceptions), ``pristine``
    hyperslab's value on the undamaged base (or :data:`MISSING`), ``stale`` whether what
    an indexed answer depends on (table and index, as h5py reads them) was changed by the
    mutation.
    """
    if isinstance(hs, NotRun):
        return "not-run"
    if isinstance(hs, BaseException):
        if not allowed(hs, path, h5):
            return "unexpected"
        if type(hs) is IndexError and path == "chunk":
            return "ok-error"  # coordinates outside the (damaged) shape: documented, and
            # h5py's direct chunk read does not check them
        if isinstance(h5, BaseException):
            return "ok-error"
        if path != "reduce" and not stale and pristine is not MISSING and same(
                canonical(h5), canonical(pristine), approx):
            return "refusal"
        # A reduction of h5py's equal to the undamaged file's does not show that h5py
        # decoded the data right (a NaN absorbs everything, sums coincide): refusals are
        # judged on the read paths, which compare every value.
        return "refusal-damaged"
    ours = canonical(hs)
    if not isinstance(h5, BaseException) and same(ours, canonical(h5), approx):
        return "ok"
    if pristine is not MISSING and same(ours, canonical(pristine), approx):
        return "ok-pristine"
    if isinstance(h5, (OracleSkipped, MemoryError)) or (
            isinstance(h5, ValueError) and "array is too big" in str(h5)):
        # h5py could not read it, or not hold it: a damaged extent of 2**40 rows is legal
        # (sparse) data that hyperslab streams or reduces in closed form; those answers
        # are checked against NumPy on sparse arrays by test_reductions and test_queries.
        return "unverified"
    if isinstance(h5, BaseException):
        return "wrong-silent"
    return "stale-index" if stale else "wrong"
