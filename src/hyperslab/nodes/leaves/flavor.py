"""Flavors: the kind of object a leaf's reads return, with PyTables' registry.

A *flavor* names a family of array-like objects.  hyperslab supports PyTables 3's two:
``'numpy'`` (arrays, records and scalars of NumPy; the internal flavor, what is stored
and computed with) and ``'python'`` (lists, tuples and Python scalars).  The registry
(:data:`all_flavors`, :data:`alias_map`, :data:`description_map`, :data:`identifier_map`,
:data:`converter_map`) has PyTables' names and contents, and :func:`restrict_flavors`
disables flavors in it for the whole process, as PyTables' does: these maps are PyTables'
public API (its test suite saves and restores them), hence module state.

Conversions are those of PyTables 3: NumPy to Python gives ``tolist()`` (``item()`` for a
0-d array); Python or NumPy to NumPy gives a contiguous array, text turned into bytes
where it is ASCII.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hyperslab._typing import AnyArray
from hyperslab.errors import FlavorError, FlavorWarning

internal_flavor = "numpy"
"""The flavor data is held in internally."""

all_flavors: list[str] = ["numpy", "python"]
"""The flavors available, in the order :func:`flavor_of` tries them."""

alias_map: dict[str, str] = dict.fromkeys(
    ["List", "Tuple", "Int", "Float", "String", "VLString", "Object"], "python")
"""Old (PyTables 1.x) flavor names -> the flavor that replaces them."""

description_map: dict[str, str] = {
    "numpy": "NumPy array, record or scalar",
    "python": "homogeneous list or tuple, integer, float, complex or bytes",
}
"""Flavor -> what objects of it are."""


def _is_numpy(array: Any) -> bool:
    return isinstance(array, (np.ndarray, np.generic))


def _is_python(array: Any) -> bool:
    return isinstance(array, (tuple, list, int, float, complex, bytes))


identifier_map: dict[str, Callable[[Any], bool]] = {"numpy": _is_numpy, "python": _is_python}
"""Flavor -> a function telling whether an object is of that flavor."""


def _contiguous(array: AnyArray) -> AnyArray:
    """``array``, copied if it is not contiguous (0-strided arrays are kept as they are)."""
    if not array.flags.contiguous and sum(array.strides) != 0:
        return array.copy()
    return array


def _text_as_bytes(array: AnyArray) -> AnyArray:
    if array.dtype.kind == "U":
        try:
            return array.astype("S")
        except UnicodeEncodeError:
            return array  # true unicode: left for the caller to refuse
    return array


def _numpy_to_numpy(array: Any) -> AnyArray:
    return _contiguous(_text_as_bytes(np.asarray(array)))


def _python_to_numpy(array: Any) -> AnyArray:
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.VisibleDeprecationWarning)
        try:
            data = np.array(array)
        except np.exceptions.VisibleDeprecationWarning:  # pragma: no cover - NumPy < 1.24
            raise ValueError("cannot guess the desired dtype from the input") from None
    return _contiguous(_text_as_bytes(data))


def _numpy_to_python(array: Any) -> Any:
    return array.tolist() if array.shape != () else array.item()


def _identity(array: Any) -> Any:
    return array


converter_map: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("numpy", "numpy"): _numpy_to_numpy,
    ("numpy", "python"): _numpy_to_python,
    ("python", "numpy"): _python_to_numpy,
    ("python", "python"): _identity,
}
"""``(source flavor, destination flavor)`` -> converter function."""


def check_flavor(flavor: str) -> None:
    """Raise :class:`~hyperslab.errors.FlavorError` if ``flavor`` is not available."""
    if flavor not in all_flavors:
        raise FlavorError(
            f"flavor ``{flavor}`` is unsupported or unavailable; available flavors in this "
            f"system are: {', '.join(all_flavors)}")


def stored_flavor(value: Any) -> str:
    """The flavor a ``FLAVOR`` attribute value stands for, as PyTables reads it: an old
    name's replacement, the internal flavor for a missing one, and an unavailable one
    kept as it is (reads then warn and give the internal flavor).

    Examples
    --------
    >>> stored_flavor("Tuple"), stored_flavor(b"python"), stored_flavor(None)
    ('python', 'python', 'numpy')
    >>> stored_flavor("numeric")
    'numeric'
    """
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        return internal_flavor
    return alias_map.get(value, value)


def warn_unavailable(flavor: str, pathname: str) -> None:
    """Warn (:class:`~hyperslab.errors.FlavorWarning`) if the flavor stored for the node
    ``pathname`` is not available here, as PyTables' reads do when a node is copied."""
    if flavor not in all_flavors:
        warnings.warn(f"flavor ``{flavor}`` of ``{pathname}`` is unsupported or unavailable "
                      f"in this system; its data are copied as ``{internal_flavor}``",
                      FlavorWarning, stacklevel=3)


def array_of_flavor2(array: Any, src_flavor: str, dst_flavor: str) -> Any:
    """``array`` (of ``src_flavor``) converted to ``dst_flavor``.

    Raises
    ------
    FlavorError
        If the conversion is not available.
    """
    convert = converter_map.get((src_flavor, dst_flavor))
    if convert is None:
        raise FlavorError(
            f"conversion from flavor ``{src_flavor}`` to flavor ``{dst_flavor}`` is "
            "unsupported or unavailable in this system")
    return convert(array)


def flavor_to_flavor(array: Any, src_flavor: str, dst_flavor: str) -> Any:
    """As :func:`array_of_flavor2`, but an unavailable conversion returns ``array`` as it
    is, with a :class:`~hyperslab.errors.FlavorWarning`."""
    try:
        return array_of_flavor2(array, src_flavor, dst_flavor)
    except FlavorError as exc:
        warnings.warn(f"{exc.args[0]}; returning an object of the ``{src_flavor}`` flavor "
                      "instead", FlavorWarning, stacklevel=2)
        return array


def internal_to_flavor(array: Any, dst_flavor: str) -> Any:
    """``array`` (of the internal flavor) in ``dst_flavor`` (see :func:`flavor_to_flavor`)."""
    return flavor_to_flavor(array, internal_flavor, dst_flavor)


def array_as_internal(array: Any, src_flavor: str) -> AnyArray:
    """``array`` (of ``src_flavor``) in the internal flavor (see :func:`array_of_flavor2`)."""
    result: AnyArray = array_of_flavor2(array, src_flavor, internal_flavor)
    return result


def flavor_of(array: Any) -> str:
    """The flavor of ``array``, the first of :data:`all_flavors` that identifies it.

    Raises
    ------
    TypeError
        If no flavor identifies it.
    """
    for flavor in all_flavors:
        if identifier_map[flavor](array):
            return flavor
    supported = "; ".join(description_map[flavor] for flavor in all_flavors)
    raise TypeError(f"objects of type ``{type(array).__name__}`` are not supported in this "
                    f"context, sorry; supported objects are: {supported}")


def array_of_flavor(array: Any, dst_flavor: str) -> Any:
    """``array``, of whatever flavor, converted to ``dst_flavor``.

    Raises
    ------
    FlavorError
        If the conversion is not available.
    TypeError
        If the flavor of ``array`` is unknown.
    """
    return array_of_flavor2(array, flavor_of(array), dst_flavor)


def restrict_flavors(keep: Sequence[str] = ("python",)) -> None:
    """Disable every flavor but those in ``keep`` (the internal one always stays).

    A disabled flavor cannot be enabled again (as in PyTables): its aliases, description,
    identifier and converters leave the registry.
    """
    for flavor in set(all_flavors) - set(keep) - {internal_flavor}:
        for alias in [alias for alias, target in alias_map.items() if target == flavor]:
            del alias_map[alias]
        description_map.pop(flavor, None)
        identifier_map.pop(flavor, None)
        for pair in [pair for pair in converter_map if flavor in pair]:
            del converter_map[pair]
        all_flavors.remove(flavor)


__all__ = [
    "alias_map", "all_flavors", "array_as_internal", "array_of_flavor", "array_of_flavor2",
    "check_flavor", "converter_map", "description_map", "flavor_of", "flavor_to_flavor",
    "identifier_map", "internal_flavor", "internal_to_flavor", "restrict_flavors",
    "stored_flavor",
    "warn_unavailable",
]
