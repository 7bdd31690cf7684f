"""``hyperslab ls``: list the nodes of a file as a tree, like PyTables' ``ptdump``.

Each node gets one line: its path, class, shape, dtype, chunk shape, filters (compact, e.g.
``blosc2:zstd(5) shuffle``) and compression ratio (``size_in_memory / size_on_disk``, e.g.
``x3.2``); with ``show_attrs`` its attributes follow, indented.  The listing works on any
object with PyTables' File API, so the same code can render a file opened by PyTables.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import hyperslab

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
"""The 8 bytes that start an HDF5 superblock (at offset 0, 512, 1024, 2048, ...)."""

MAX_VALUE_WIDTH = 70
"""Attribute values longer than this are cut with an ellipsis."""

COLUMNS = ("path", "class", "shape", "dtype", "chunks", "filters", "ratio")


class ListingError(Exception):
    """The file cannot be listed; the message is meant for the user as it is."""


def is_hdf5_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with an HDF5 signature (user blocks included).

    Parameters
    ----------
    path : str or PathLike
        A readable file.

    Returns
    -------
    bool
        True if an HDF5 superblock signature is at offset 0, 512, 1024, 2048, ...
    """
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        offset = 0
        while offset + len(HDF5_SIGNATURE) <= size:
            stream.seek(offset)
            if stream.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE:
                return True
            offset = 512 if offset == 0 else offset * 2
    return False


def check_readable_hdf5(path: str | os.PathLike[str]) -> None:
    """Raise :class:`ListingError` with a one-line reason if ``path`` is not an HDF5 file."""
    p = Path(path)
    if not p.exists():
        raise ListingError(f"no such file: {str(path)!r}")
    if p.is_dir():
        raise ListingError(f"{str(path)!r} is a directory, not an HDF5 file")
    try:
        ok = is_hdf5_file(p)
    except OSError as exc:
        raise ListingError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    if not ok:
        raise ListingError(f"{str(path)!r} is not an HDF5 file")


# ----------------------------------------------------------------------------- formatting


def format_filters(filters: Any) -> str:
    """Return a compact description of a ``Filters`` object, or ``-`` for none.

    Examples
    --------
    >>> import hyperslab
    >>> format_filters(hyperslab.Filters(complevel=5, complib="blosc2:zstd", shuffle=True))
    'blosc2:zstd(5) shuffle'
    """
    if filters is None:
        return "-"
    parts = []
    if filters.complevel > 0:
        parts.append(f"{filters.complib}({filters.complevel})")
        if filters.shuffle:
            parts.append("shuffle")
        if filters.bitshuffle:
            parts.append("bitshuffle")
    elif filters.complevel < 0:  # a compressor PyTables cannot name (szip...)
        parts.append(str(filters.complib))
    if filters.fletcher32:
        parts.append("fletcher32")
    return " ".join(parts) or "-"


def format_ratio(size_in_memory: int, size_on_disk: int) -> str:
    """Return the compression ratio as ``x3.2`` (``-`` if nothing is on disk)."""
    if size_on_disk <= 0:
        return "-"
    value = size_in_memory / size_on_disk
    if value < 1:  # more on disk than in memory: a mostly empty chunk
        return f"x{value:.2g}"
    return f"x{value:.1f}" if value < 100 else f"x{value:.0f}"


def format_shape(shape: Any) -> str:
    """Return a shape as a tuple string, ``-`` for None."""
    return "-" if shape is None else str(tuple(int(n) for n in shape))


def format_dtype(dtype: Any) -> str:
    """Return a dtype's name; a compound dtype is summarized by its field count."""
    dtype = np.dtype(dtype)
    if dtype.names:
        return f"record[{len(dtype.names)} fields]"
    return str(dtype)


def format_value(value: Any) -> str:
    """Return a short, library-independent text for an attribute value."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        text = np.array2string(value, separator=", ", threshold=10, max_line_width=10**6)
        text = f"{text} {value.dtype}"
    else:
        text = repr(value)
    text = " ".join(text.split())
    if len(text) > MAX_VALUE_WIDTH:
        text = text[: MAX_VALUE_WIDTH - 3] + "..."
    return text


def class_name(node: Any) -> str:
    """Return the node's class name (``RootGroup`` is shown as ``Group``)."""
    name = type(node).__name__
    return "Group" if name == "RootGroup" else name


LINK_CLASSIDS = frozenset({"SOFTLINK", "EXTERNALLINK"})


def is_group(node: Any) -> bool:
    """Whether ``node`` is a group (root included), rather than a leaf or a link."""
    return getattr(node, "_c_classid", None) == "GROUP"


def is_link(node: Any) -> bool:
    """Whether ``node`` is a soft or external link (which has no attributes of its own)."""
    return getattr(node, "_c_classid", None) in LINK_CLASSIDS


def node_row(node: Any) -> tuple[str, ...]:
    """Return the columns of :data:`COLUMNS` for one node."""
    path = node._v_pathname
    if is_group(node):
        return (path, class_name(node), "", "", "", "", "")
    # Test links first: PyTables' soft links pass attribute look-ups on to their target.
    if is_link(node) or not hasattr(node, "shape"):
        target = getattr(node, "target", None)
        return (path, class_name(node), "" if target is None else f"-> {target}", "", "", "", "")
    chunks = getattr(node, "chunkshape", None)
    return (
        path,
        class_name(node),
        format_shape(node.shape),
        format_dtype(node.dtype),
        format_shape(chunks),
        format_filters(getattr(node, "filters", None)),
        format_ratio(int(node.size_in_memory), int(node.size_on_disk)),
    )


def attribute_lines(node: Any, indent: str = "    ") -> list[str]:
    """Return ``NAME = value`` lines for every attribute of ``node`` (system ones too)."""
    if is_link(node):
        return []
    attrs = node._v_attrs
    return [f"{indent}{name} = {format_value(attrs[name])}" for name in attrs._f_list("all")]


# ----------------------------------------------------------------------------- walking


def iter_tree(fileh: Any, where: str = "/", recursive: bool = True) -> Iterator[Any]:
    """Yield ``where`` and its descendants depth first, children sorted by name.

    With ``recursive=False``, ``where`` and its direct children only.
    """
    top = fileh.get_node(where)
    yield top
    if is_group(top):
        yield from _iter_children(fileh, top, recursive)


def _iter_children(fileh: Any, group: Any, recursive: bool) -> Iterator[Any]:
    for child in sorted(fileh.list_nodes(group), key=lambda n: n._v_name):
        yield child
        if recursive and is_group(child):
            yield from _iter_children(fileh, child, recursive)


def ls_lines(
    fileh: Any, where: str = "/", recursive: bool = True, show_attrs: bool = False
) -> list[str]:
    """Return the listing of an open file as lines of aligned columns, header first.

    Parameters
    ----------
    fileh : File
        An open file (hyperslab's, or anything with PyTables' File API).
    where : str
        The node to start from.
    recursive : bool
        Descend into subgroups (else ``where`` and its children only).
    show_attrs : bool
        Follow each node's line with its attributes.
    """
    entries = [
        (node_row(node), attribute_lines(node) if show_attrs else [])
        for node in iter_tree(fileh, where, recursive)
    ]
    rows = [COLUMNS] + [row for row, _ in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [_join(COLUMNS, widths)]
    for row, attr_lines in entries:
        lines.append(_join(row, widths))
        lines.extend(attr_lines)
    return lines


def _join(row: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()


def run_ls(
    path: str | os.PathLike[str],
    where: str = "/",
    recursive: bool = True,
    show_attrs: bool = False,
    out: TextIO | None = None,
) -> None:
    """Open ``path`` read-only with hyperslab and print its listing to ``out``.

    Raises
    ------
    ListingError
        With a one-line message if the file is missing, not HDF5, unreadable, or has no
        node ``where``.
    """
    check_readable_hdf5(path)
    try:
        fileh = hyperslab.open_file(os.fspath(path), mode="r")
    except (OSError, ValueError, RuntimeError) as exc:
        raise ListingError(f"cannot open {str(path)!r}: {_first_line(exc)}") from None
    try:
        try:
            lines = ls_lines(fileh, where, recursive, show_attrs)
        except LookupError as exc:
            raise ListingError(f"no node {where!r} in {str(path)!r}: {_first_line(exc)}") from None
    finally:
        fileh.close()
    print("\n".join(lines), file=out)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
