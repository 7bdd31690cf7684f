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


_NATURAL_NAMING_LOST = ("you will not be able to use natural naming to access this object; "
                        "using ``getattr()`` will still work, though")


def check_attribute_name(name: object) -> None:
    """Check an attribute name as PyTables does (``tables.path.check_attribute_name``).

    Names that natural naming cannot reach (not a Python identifier, or a keyword) pass
    with a :class:`~hyperslab.errors.NaturalNameWarning`.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` is empty, ``__members__``, or starts with a prefix PyTables reserves
        for members (``_c_``, ``_f_``, ``_g_``, ``_v_``).
    """
    if not isinstance(name, str):
        raise TypeError(f"object name is not a string: {name!r}")
    if not name:
        raise ValueError("the empty string is not allowed as an object name")
    if not _PYTHON_ID.match(name):
        warnings.warn(f"object name is not a valid Python identifier: {name!r}; it does not "
                      f"match the pattern ``{_PYTHON_ID.pattern}``; {_NATURAL_NAMING_LOST}",
                      NaturalNameWarning, stacklevel=2)
        return
    if keyword.iskeyword(name):
        warnings.warn(f"object name is a Python keyword: {name!r}; {_NATURAL_NAMING_LOST}",
                      NaturalNameWarning, stacklevel=2)
        return
    if _RESERVED_PREFIX.match(name):
        raise ValueError(f"object name starts with a reserved prefix: {name!r}; it matches "
                         f"the pattern ``{_RESERVED_PREFIX.pattern}``")
    if name == "__members__":
        raise ValueError("``__members__`` is not allowed as an object name")


def check_name_validity(name: object) -> None:
    """Check a node name by PyTables' rules (``tables.path.check_name_validity``): those of
    :func:`check_attribute_name`, and neither ``.`` nor ``/`` in it.

    hyperslab's own :func:`check_name` is more lenient: it accepts with a warning the
    reserved prefixes, which files of other libraries may hold.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` is not valid.
    """
    check_attribute_name(name)
    assert isinstance(name, str)
    if name == ".":
        raise ValueError("``.`` is not allowed as an object name")
    if "/" in name:
        raise ValueError(f"the ``/`` character is not allowed in object names: {name!r}")


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


def is_visible_path(path: str) -> bool:
    """Whether no component of the canonical ``path`` below the root is hidden (PyTables'
    ``isvisiblepath``)."""
    return _HIDDEN_PATH.search(path) is None


def join_path(parent: str, name: str) -> str:
    """Join a canonical parent path and a name (``'/'`` + ``'a'`` -> ``'/a'``), as PyTables'
    ``join_path``: a name may be relative (``'./a'``) or a path (``'/a/b'``, joined below
    the parent), and a trailing ``/`` is dropped.

    Examples
    --------
    >>> join_path("/", "a"), join_path("/a", "b"), join_path("/a", "/b/c"), join_path("/a", "/")
    ('/a', '/a/b', '/a/b/c', '/a')
    """
    if name.startswith("./"):
        name = name[2:]
    if parent == "/" and name.startswith("/"):
        joined = name
    elif parent == "/" or name.startswith("/"):
        joined = parent + name
    else:
        joined = f"{parent}/{name}"
    return joined[:-1] if joined.endswith("/") else joined


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
