"""``hyperslab ls``: list the nodes of a file, one aligned line each.

Each node gets one line: its path, class, shape, dtype, chunk shape, filters (compact, e.g.
``blosc2:zstd(5) shuffle``) and compression ratio (uncompressed size / stored size, e.g.
``x3.2``; see :func:`node_ratio` for datasets whose data fill only part of a chunk); with
``show_attrs`` its attributes follow, indented, and with ``verbose`` a table's columns
(name, type, shape, index).  The listing works on any object with PyTables' File API, so the
same code can render a file opened by PyTables.

This module also holds what ``hyperslab dump`` and ``hyperslab tree`` share with it: the
``FILE[:/node]`` argument (:func:`split_source`), opening a file read-only with one-line
errors (:func:`open_readonly`) and walking a tree (:func:`iter_tree`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import hyperslab

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
"""The 8 bytes that start an HDF5 superblock (at offset 0, 512, 1024, 2048, ...)."""

MAX_VALUE_WIDTH = 70
"""Attribute values longer than this are cut with an ellipsis."""

RATIO_HEADER = "uncompressed/stored"
"""Header of the ratio column: the data's size in memory over its size in the file."""

COLUMNS = ("path", "class", "shape", "dtype", "chunks", "filters", RATIO_HEADER)

PARTIAL_MARK = "*"
"""Follows a ratio computed over whole chunks, for data that fill only part of them."""

PARTIAL_NOTE = (
    f"{PARTIAL_MARK} data that fill part of their chunks (stored whole): "
    "ratio of the chunks' uncompressed size to their stored size"
)
"""The footnote of listings with a :data:`PARTIAL_MARK`."""

TABLE_COLUMNS = ("column", "type", "shape", "index")


class ListingError(Exception):
    """The file cannot be listed; the message is meant for the user as it is."""


def split_source(source: str) -> tuple[str, str]:
    """Split a ``FILE[:/node]`` argument into the file name and the node path.

    A name that exists as it is stays whole (a file may have ``:`` in its name); else the
    part after the last ``:`` is the node if it is empty (the root) or starts with ``/``.

    Examples
    --------
    >>> split_source("data.h5:/run1/cube")
    ('data.h5', '/run1/cube')
    >>> split_source("data.h5")
    ('data.h5', '/')
    >>> split_source("data.h5:")
    ('data.h5', '/')
    """
    head, sep, tail = source.rpartition(":")
    if not sep or not head or os.path.exists(source) or not (tail == "" or tail[0] == "/"):
        return source, "/"
    return head, tail or "/"


@contextmanager
def open_readonly(path: str | os.PathLike[str], where: str = "/") -> Iterator[Any]:
    """Open ``path`` read-only with hyperslab, checking that it has a node ``where``.

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
            fileh.get_node(where)
        except LookupError as exc:
            raise ListingError(f"no node {where!r} in {str(path)!r}: {_first_line(exc)}") from None
        yield fileh
    finally:
        fileh.close()


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


def chunk_bytes(node: Any) -> int:
    """Return the uncompressed size of the chunks that hold a chunked leaf's data.

    That is the number of chunks its shape covers times the size of one chunk (edge chunks
    are stored whole); 0 for a leaf that is not chunked or holds no data.
    """
    chunks = getattr(node, "chunkshape", None)
    if not chunks:
        return 0
    count = math.prod(-(-int(n) // int(c)) for n, c in zip(node.shape, chunks, strict=True))
    return count * math.prod(int(c) for c in chunks) * np.dtype(node.dtype).itemsize


def ratio_parts(node: Any) -> tuple[int, int, bool]:
    """Return ``(uncompressed, stored, partial)``: the two sides of a leaf's ratio.

    ``uncompressed`` is the data's size in memory, except where that is smaller than the
    stored size because the data fill only part of their chunks (which HDF5 stores whole:
    an EArray of a few rows has one mostly empty chunk).  The ratio of data to storage
    would then read like a failure of compression (``x0.0009``); ``uncompressed`` is the
    size of the chunks holding the data instead, and ``partial`` is True.
    """
    stored = int(node.size_on_disk)
    in_memory = int(node.size_in_memory)
    if 0 < in_memory < stored:
        whole = chunk_bytes(node)
        if whole > in_memory:
            return whole, stored, True
    return in_memory, stored, False


def node_ratio(node: Any) -> str:
    """Return a leaf's compression ratio, ``x3.2``, marked ``x1.0*`` if computed over
    partly filled chunks (see :func:`ratio_parts`); ``-`` when nothing is stored."""
    uncompressed, stored, partial = ratio_parts(node)
    text = format_ratio(uncompressed, stored)
    return text + PARTIAL_MARK if partial and text != "-" else text


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
        _safe_ratio(node),
    )


def _safe_ratio(node: Any) -> str:
    try:
        return node_ratio(node)
    except NotImplementedError:  # VLArrays (PyTables' too) do not know their stored size
        return "?"


def attribute_lines(node: Any, indent: str = "    ") -> list[str]:
    """Return ``NAME = value`` lines for every attribute of ``node`` (system ones too)."""
    if is_link(node):
        return []
    attrs = node._v_attrs
    return [f"{indent}{name} = {format_value(attrs[name])}" for name in attrs._f_list("all")]


def is_table(node: Any) -> bool:
    """Whether ``node`` is a table (it has PyTables' column path names)."""
    return not is_link(node) and hasattr(node, "colpathnames")


def column_type(table: Any, name: str) -> str:
    """Return a table column's PyTables type, with the size of strings (``string(8)``)."""
    kind = str(table.coltypes[name])
    if kind == "string":
        return f"string({np.dtype(table.coldtypes[name]).base.itemsize})"
    return kind


def index_flags(table: Any, name: str) -> str:
    """Return ``kind(optlevel)`` of a column's index, then ``dirty`` if it is; ``-`` if none."""
    if not table.colindexed[name]:
        return "-"
    index = table.colinstances[name].index
    text = f"{index.kind}({index.optlevel})"
    return f"{text} dirty" if index.dirty else text


def table_column_rows(table: Any) -> list[tuple[str, ...]]:
    """Return ``(column, type, shape, index)`` for every column of a table, nested ones by
    their path (``outer/inner``)."""
    return [
        (
            name,
            column_type(table, name),
            format_shape(np.dtype(table.coldtypes[name]).shape),
            index_flags(table, name),
        )
        for name in table.colpathnames
    ]


def table_column_lines(table: Any, indent: str = "    ") -> list[str]:
    """Return the aligned column listing of a table, header first, for ``ls -v``."""
    rows = [TABLE_COLUMNS, *table_column_rows(table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    return [indent + _join(row, widths) for row in rows]


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
    fileh: Any,
    where: str = "/",
    recursive: bool = True,
    show_attrs: bool = False,
    verbose: bool = False,
) -> list[str]:
    """Return the listing of an open file as lines of aligned columns, header first.

    A footnote ends the listing if a ratio is marked ``*`` (see :func:`ratio_parts`).

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
    verbose : bool
        Follow each table's line with its columns: name, type, shape and index (its kind
        and optimization level, and ``dirty`` if it needs a rebuild).
    """
    entries = []
    for node in iter_tree(fileh, where, recursive):
        extra = table_column_lines(node) if verbose and is_table(node) else []
        entries.append((node_row(node), extra + (attribute_lines(node) if show_attrs else [])))
    rows = [COLUMNS] + [row for row, _ in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [_join(COLUMNS, widths)]
    for row, extra_lines in entries:
        lines.append(_join(row, widths))
        lines.extend(extra_lines)
    if any(row[-1].endswith(PARTIAL_MARK) for row, _ in entries):
        lines.append(PARTIAL_NOTE)
    return lines


def _join(row: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()


def run_ls(
    path: str | os.PathLike[str],
    where: str = "/",
    recursive: bool = True,
    show_attrs: bool = False,
    out: TextIO | None = None,
    verbose: bool = False,
) -> None:
    """Open ``path`` read-only with hyperslab and print its listing to ``out``.

    Raises
    ------
    ListingError
        With a one-line message if the file is missing, not HDF5, unreadable, or has no
        node ``where``.
    """
    with open_readonly(path, where) as fileh:
        lines = ls_lines(fileh, where, recursive, show_attrs, verbose)
    print("\n".join(lines), file=out)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
