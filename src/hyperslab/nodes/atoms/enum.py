"""PyTables' ``Enum``: an immutable enumerated type, names mapped to concrete values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn

from hyperslab.nodes.atoms._reprs import np_repr
from hyperslab.nodes.members import is_member, member_failed


class Enum:
    """An immutable enumerated type: names mapped to unique concrete values.

    Parameters
    ----------
    enum : list, tuple, dict or Enum
        A sequence of names (values 0, 1, 2, ... in order), a mapping of names to
        concrete values, or another Enum (copied).

    Examples
    --------
    >>> colors = Enum({'red': 4, 'green': 2})
    >>> colors.red, colors['green'], colors(4)
    (4, 2, 'red')
    """

    _names: dict[str, Any]
    _values: dict[Any, str]

    def __init__(self, enum: Sequence[str] | Mapping[str, Any] | Enum) -> None:
        object.__setattr__(self, "_names", {})
        object.__setattr__(self, "_values", {})
        pairs: Any
        if isinstance(enum, list | tuple):
            pairs = ((name, value) for value, name in enumerate(enum))
        elif isinstance(enum, dict):
            pairs = enum.items()
        elif isinstance(enum, Enum):
            pairs = enum._names.items()
        else:
            raise TypeError(
                "enumerations can only be created from sequences, mappings and other "
                f"enumerations, not {enum!r}"
            )
        for name, value in pairs:
            self._add(name, value)

    def _add(self, name: Any, value: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name of enumerated value is not a string: {name!r}")
        if name.startswith("_"):
            raise ValueError(f"name of enumerated value can not start with ``_``: {name!r}")
        if name in self._names:
            raise ValueError(f"enumerated values contain duplicate names: {name!r}")
        if value in self._values:
            raise ValueError(f"enumerated values contain duplicate concrete values: {value!r}")
        self._names[name] = value
        self._values[value] = name

    def __getitem__(self, name: str) -> Any:
        """Return the concrete value named `name` (KeyError if there is none)."""
        try:
            return self._names[name]
        except KeyError:
            raise KeyError(f"no enumerated value with that name: {name!r}") from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never a value name; keeps copy/pickle probes sane
            raise AttributeError(name)
        if is_member(self, name):  # a member's own code failed: its error, not a value's
            return member_failed(self, name)
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(*exc.args) from None

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("operation not allowed")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("operation not allowed")

    def __setitem__(self, name: Any, value: Any) -> NoReturn:
        raise IndexError("operation not allowed")

    def __delitem__(self, name: Any) -> NoReturn:
        raise IndexError("operation not allowed")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            raise TypeError(f"name of enumerated value is not a string: {name!r}")
        return name in self._names

    def __call__(self, value: Any, *default: Any) -> Any:
        """Return the name of concrete `value`, else `default` if given, else ValueError."""
        try:
            return self._values[value]
        except KeyError:
            if default:
                return default[0]
            raise ValueError(f"no enumerated value with that concrete value: {value!r}") from None

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """Yield ``(name, value)`` pairs."""
        yield from self._names.items()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Enum) and self._names == other._names

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(frozenset(self._names.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Enum, (dict(self._names),))

    def __repr__(self) -> str:
        return f"Enum({np_repr(self._names)})"


__all__ = ["Enum"]
