"""Node names and paths: validation, joining, splitting and PyTables' hidden-name rule."""

from __future__ import annotations

import keyword
import re
import warnings

from hyperslab.errors import NaturalNameWarning

_PYTHON_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HIDDEN_NAME = re.compile(r"^_[pi]_")
_HIDDEN_PATH = re.compile(r"/_[pi]_")
_RESERVED_PREFIX = re.compile(r"^_[cfgv]_")


def check_name(name: object) -> str:
    """Validate a new node name and return it.

    Names must be non-empty strings without ``/`` and not ``.``; like PyTables, names that
    cannot be used with natural naming (not a Python identifier, or a keyword) are accepted
    with a :class:`~hyperslab.errors.NaturalNameWarning`.  So are names in the forms PyTables
    reserves for group members (``_c_*``, ``_f_*``, ``_g_*``, ``_v_*``), which PyTables
    refuses (files written by other libraries may hold them).

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` is empty, ``.``, or contains ``/``.
    """
    if not isinstance(name, str):
        raise TypeError(f"node name must be a string, not {type(name).__name__}: {name!r}")
    if not name:
        raise ValueError("the empty string is not allowed as a node name")
    if "/" in name:
        raise ValueError(f"the '/' character is not allowed in node names: {name!r}")
    if name == ".":
        raise ValueError(f"'.' is not allowed as a node name: {name!r}")
    if not _PYTHON_ID.match(name):
        warnings.warn(
            f"object name is not a valid Python identifier: {name!r}; it does not match the "
            f"pattern ``{_PYTHON_ID.pattern}``; you will not be able to use natural naming "
            f"to access this object; using ``getattr()`` will still work, though",
            NaturalNameWarning,
            stacklevel=3,
        )
    elif keyword.iskeyword(name):
        warnings.warn(
            f"object name is a Python keyword: {name!r}; you will not be able to use natural "
            f"naming to access this object; using ``getattr()`` will still work, though",
            NaturalNameWarning,
            stacklevel=3,
        )
    elif _RESERVED_PREFIX.match(name):
        warnings.warn(
            f"object name starts with a prefix PyTables reserves: {name!r}; natural naming "
            f"may give a member of the group, not this node; use group[{name!r}] instead",
            NaturalNameWarning,
            stacklevel=3,
        )
    return name


def not_utf8(names: list[str]) -> list[str]:
    """The names listed from bytes that are not UTF-8 (a damaged file, or another
    program's): hyperslab lists them faithfully, the stray bytes as surrogate escapes
    (``bytes.decode('utf-8', 'surrogateescape')``), where h5py lists their bytes."""
    return [name for name in names if not name.isascii()
            and any("\udc80" <= char <= "\udcff" for char in name)]


def is_hidden_name(name: str) -> bool:
    """Whether PyTables hides a node of this name (``_i_*`` indexes, ``_p_*`` private)."""
    return bool(_HIDDEN_NAME.match(name))


def is_hidden_path(path: str) -> bool:
    """Whether any component of ``path`` is hidden."""
    return bool(_HIDDEN_PATH.search(path)) or is_hidden_name(path.lstrip("/"))


def join_path(parent: str, name: str) -> str:
    """Join a parent path and a child name (``'/'`` + ``'a'`` -> ``'/a'``)."""
    if parent == "/":
        return "/" + name
    return f"{parent}/{name}"


def split_path(path: str) -> tuple[str, str]:
    """Split ``'/a/b/c'`` into ``('/a/b', 'c')`` and ``'/a'`` into ``('/', 'a')``."""
    parent, _, name = path.rpartition("/")
    return (parent or "/", name)


def normalize_path(path: str) -> str:
    """Make ``path`` absolute and canonical: one leading ``/``, no trailing or repeated ones.

    Raises
    ------
    TypeError
        If ``path`` is not a string.
    """
    if not isinstance(path, str):
        raise TypeError(f"node path must be a string, not {type(path).__name__}: {path!r}")
    parts = [p for p in path.split("/") if p and p != "."]
    return "/" + "/".join(parts)


def depth_of(path: str) -> int:
    """Depth of ``path`` in the tree: 0 for the root."""
    return 0 if path == "/" else path.count("/")


def is_under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` or lies below it."""
    if prefix == "/":
        return True
    return path == prefix or path.startswith(prefix + "/")
