"""``hyperslab dump FILE[:/node]``: the nodes of a file with their metadata, attributes and
data, the job of PyTables' ``ptdump``.

Every node gets a header line (path, class, shape, dtype and title); options add, indented
under it, the layout (``verbose``: shape, dtype, chunk shape, filters, sizes and a table's
columns with their types and index flags), the attributes (``attrs``: the user's apart from
the system ones PyTables writes), the column descriptions of tables (``columns``) and the
first rows of the data (``data``, at most ``rows`` rows, long rows summarized by NumPy).
Like :mod:`hyperslab.tools.ls`, the lines are built from PyTables' File API only, so the same
code dumps a file opened by PyTables.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from hyperslab.tools.ls import (
    class_name,
    format_dtype,
    format_filters,
    format_shape,
    format_value,
    is_group,
    is_link,
    is_table,
    iter_tree,
    node_ratio,
    open_readonly,
    table_column_lines,
)

DEFAULT_ROWS = 10
"""Rows of data ``dump -d`` shows per leaf unless told otherwise."""

ROW_THRESHOLD = 20
"""Elements of one row beyond which NumPy summarizes it (``[0, 1, 2, ..., 97, 98, 99]``)."""

INDENT = "  "


@dataclass(frozen=True)
class DumpOptions:
    """What ``hyperslab dump`` shows besides each node's header line.

    Parameters
    ----------
    verbose : bool
        The layout of leaves: shape, dtype, chunk shape, filters, sizes, a table's columns.
    attrs : bool
        The attributes of every node, the user's apart from the system ones.
    data : bool
        The first ``rows`` rows of every leaf.
    columns : bool
        The description (``Col``) of every column of tables.
    rows : int
        How many rows ``data`` shows per leaf (at least 0).
    """

    verbose: bool = False
    attrs: bool = False
    data: bool = False
    columns: bool = False
    rows: int = DEFAULT_ROWS

    def __post_init__(self) -> None:
        if self.rows < 0:
            raise ValueError(f"rows must be 0 or more, not {self.rows!r}")


# ----------------------------------------------------------------------------- parts


def header_line(node: Any) -> str:
    """Return ``PATH (Class) shape dtype 'title'`` (a link: ``PATH (Class) -> target``)."""
    path = node._v_pathname
    kind = class_name(node)
    if is_link(node):
        return f"{path} ({kind}) -> {node.target}"
    title = repr(str(node._v_title))
    if is_group(node) or not hasattr(node, "shape"):
        return f"{path} ({kind}) {title}"
    return f"{path} ({kind}) {format_shape(node.shape)} {format_dtype(node.dtype)} {title}"


def layout_lines(node: Any) -> list[str]:
    """Return the ``verbose`` lines of a node: what a leaf is and how it is stored."""
    if is_group(node):
        return [f"{INDENT}children: {len(node._v_children)}"]
    if is_link(node) or not hasattr(node, "shape"):
        return []
    chunks = getattr(node, "chunkshape", None)
    lines = [
        f"{INDENT}shape: {format_shape(node.shape)}  dtype: {np.dtype(node.dtype)}",
        f"{INDENT}chunkshape: {'- (contiguous)' if chunks is None else format_shape(chunks)}",
        f"{INDENT}filters: {format_filters(getattr(node, 'filters', None))}",
        f"{INDENT}nrows: {node.nrows}  maindim: {node.maindim}  byteorder: {node.byteorder}",
    ]
    try:
        stored, in_memory = int(node.size_on_disk), int(node.size_in_memory)
    except NotImplementedError:  # VLArrays
        pass
    else:
        lines.append(
            f"{INDENT}size: {in_memory} B uncompressed, {stored} B stored, ratio {node_ratio(node)}"
        )
    if is_table(node):
        lines.extend(table_column_lines(node, INDENT))
    return lines


def attribute_sections(node: Any) -> list[str]:
    """Return the user attributes of a node, then its system attributes, one per line."""
    if is_link(node):
        return []
    attrs = node._v_attrs
    lines = []
    for label, kind in (("user", "user"), ("system", "sys")):
        names = attrs._f_list(kind)
        lines.append(f"{INDENT}{label} attributes:{'' if names else ' none'}")
        lines.extend(f"{INDENT * 2}{name} = {format_value(attrs[name])}" for name in names)
    return lines


def column_description_lines(table: Any) -> list[str]:
    """Return ``column PATH: Col(...)`` for every column of a table, nested ones by path."""
    lines = []
    for path in table.colpathnames:
        col = table.description
        for part in path.split("/"):
            col = col._v_colobjects[part]
        lines.append(f"{INDENT}column {path}: {col!r}")
    return lines


def format_item(item: Any) -> str:
    """Return one row of data as one line: arrays summarized beyond :data:`ROW_THRESHOLD`
    elements, strings and bytes quoted, numbers as NumPy prints them."""
    if isinstance(item, np.ndarray):
        text = np.array2string(item, threshold=ROW_THRESHOLD, edgeitems=3, separator=", ")
        text = " ".join(text.split())  # one line, without NumPy's padding for alignment
        return re.sub(r"\s+([,\]])", r"\1", re.sub(r"\[\s+", "[", text))
    if isinstance(item, np.generic) and not isinstance(item, np.void):
        if isinstance(item, np.str_ | np.bytes_):
            return repr(item.item())
        return str(item)
    if isinstance(item, str | bytes):
        return repr(item)
    return " ".join(str(item).split())


def data_lines(leaf: Any, rows: int) -> list[str]:
    """Return the first ``rows`` rows of a leaf, ``[i] value`` each, along its main
    dimension, then how many more there are."""
    if leaf.shape == ():
        return [f"{INDENT}data: {format_item(leaf.read())}"]
    total = int(leaf.nrows)
    count = min(rows, total)
    lines = [f"{INDENT}data ({count} of {total} rows):"]
    data = leaf.read(0, count) if count else []
    if isinstance(data, np.ndarray) and not is_table(leaf):
        data = np.moveaxis(data, leaf.maindim, 0)
    lines.extend(f"{INDENT * 2}[{i}] {format_item(item)}" for i, item in enumerate(data))
    if total > count:
        lines.append(f"{INDENT * 2}... {total - count} more rows")
    return lines


def is_readable_leaf(node: Any) -> bool:
    """Whether ``node`` is a leaf whose data can be read (not a link, not UnImplemented)."""
    return (
        not is_group(node)
        and not is_link(node)
        and hasattr(node, "shape")
        and class_name(node) != "UnImplemented"
    )


# ----------------------------------------------------------------------------- the dump


def node_lines(node: Any, options: DumpOptions) -> list[str]:
    """Return the header line of one node and the lines ``options`` ask for."""
    lines = [header_line(node)]
    if options.verbose:
        lines.extend(layout_lines(node))
    if options.attrs:
        lines.extend(attribute_sections(node))
    if options.columns and is_table(node):
        lines.extend(column_description_lines(node))
    if options.data and is_readable_leaf(node):
        lines.extend(data_lines(node, options.rows))
    return lines


def dump_lines(fileh: Any, where: str = "/", options: DumpOptions | None = None) -> list[str]:
    """Return the dump of ``where`` and everything below it, depth first, by name.

    Parameters
    ----------
    fileh : File
        An open file (hyperslab's, or anything with PyTables' File API).
    where : str
        A group (dumped with its descendants) or a leaf.
    options : DumpOptions, optional
        What to show; headers only by default.

    Examples
    --------
    >>> import numpy as np, hyperslab
    >>> with hyperslab.open_file("dump.h5", "w", driver="H5FD_CORE",
    ...                          driver_core_backing_store=0) as f:
    ...     _ = f.create_array("/", "x", np.arange(3), "three")
    ...     print("\\n".join(dump_lines(f, options=DumpOptions(data=True))))
    / (Group) ''
    /x (Array) (3,) int64 'three'
      data (3 of 3 rows):
        [0] 0
        [1] 1
        [2] 2
    """
    options = DumpOptions() if options is None else options
    lines = []
    for node in iter_tree(fileh, where):
        lines.extend(node_lines(node, options))
    return lines


def run_dump(
    path: str | os.PathLike[str],
    where: str = "/",
    options: DumpOptions | None = None,
    out: TextIO | None = None,
) -> None:
    """Open ``path`` read-only with hyperslab and print the dump of ``where`` to ``out``.

    Raises
    ------
    ListingError
        With a one-line message if the file is missing, not HDF5, unreadable, or has no
        node ``where``.
    """
    with open_readonly(path, where) as fileh:
        lines = dump_lines(fileh, where, options)
    print("\n".join(lines), file=out)
