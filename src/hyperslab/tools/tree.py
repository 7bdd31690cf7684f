"""``hyperslab tree FILE[:/node]``: the hierarchy with the sizes of its branches, the job
of PyTables' ``pttree``.

Every leaf shows the storage HDF5 allocated to its dataset (``size_on_disk``: chunks as
stored, compressed), its uncompressed size (``size_in_memory``), their ratio and its share
of the tree's stored total; every group the sums over the leaves below it.  The ratio is
that of :func:`hyperslab.tools.ls.ratio_parts`: over whole chunks, marked ``*``, where the
data fill only part of their chunks.  Sizes count datasets only: the file is larger by its
HDF5 metadata (object headers, chunk indexes, attributes), which the summary shows apart.

A dataset reached by several hard links is counted once, under the first path met (the
others say ``hard link of PATH``); soft and external links are shown, never followed.
VLArrays do not know their stored size (as in PyTables): they show ``?`` and the summary
counts them apart.  ``max_depth`` cuts the display, not the sums; ``sort="size"`` puts the
largest stored branches first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from hyperslab.storage import tree as storage_tree
from hyperslab.tools.ls import (
    PARTIAL_MARK,
    PARTIAL_NOTE,
    class_name,
    format_ratio,
    is_group,
    is_link,
    open_readonly,
    ratio_parts,
)

SORT_KEYS = ("name", "size")
"""How ``hyperslab tree`` may order the children of a group."""

TREE_COLUMNS = ("node", "class", "stored", "uncompressed", "uncompressed/stored", "share", "note")

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(nbytes: int, exact: bool = False) -> str:
    """Return a size in binary units (``1.5 KiB``), or as a plain integer if ``exact``.

    Examples
    --------
    >>> format_bytes(512), format_bytes(1536), format_bytes(3 * 2**30), format_bytes(1536, True)
    ('512 B', '1.5 KiB', '3.0 GiB', '1536')
    """
    if exact:
        return str(nbytes)
    value = float(nbytes)
    for unit in UNITS:
        if abs(value) < 1024 or unit == UNITS[-1]:
            return f"{nbytes} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class Sizes:
    """The sizes of one leaf, or summed over the leaves of a branch."""

    stored: int = 0
    in_memory: int = 0
    ratio_base: int = 0
    """The uncompressed side of the ratio (see :func:`~hyperslab.tools.ls.ratio_parts`)."""
    partial: bool = False
    leaves: int = 0
    unknown: int = 0
    """Leaves whose sizes are not known (VLArrays)."""

    def add(self, other: Sizes) -> None:
        """Add the sizes of ``other`` (a child) to these."""
        self.stored += other.stored
        self.in_memory += other.in_memory
        self.ratio_base += other.ratio_base
        self.partial = self.partial or other.partial
        self.leaves += other.leaves
        self.unknown += other.unknown

    def ratio(self) -> str:
        """The ratio ``x3.2`` (``*`` if over partly filled chunks, ``-`` if nothing stored)."""
        text = format_ratio(self.ratio_base, self.stored)
        return text + PARTIAL_MARK if self.partial and text != "-" else text


@dataclass
class Branch:
    """One node of the displayed tree, with the sizes summed below it."""

    name: str
    kind: str
    sizes: Sizes
    note: str = ""
    known: bool = True
    """False for a leaf whose sizes are unknown (its size columns show ``?``)."""
    counted: bool = True
    """False for a link or a second hard link (its size columns stay empty)."""
    children: list[Branch] = field(default_factory=list)


def leaf_sizes(node: Any) -> Sizes | None:
    """Return the sizes of one leaf, or None if it does not know them (VLArrays)."""
    try:
        ratio_base, stored, partial = ratio_parts(node)
        in_memory = int(node.size_in_memory)
    except NotImplementedError:
        return None
    return Sizes(stored, in_memory, ratio_base, partial, leaves=1)


def node_address(node: Any) -> int | None:
    """The file address of a node's object, which its hard links share (None if unknown)."""
    if hasattr(type(node), "_get_obj_info"):  # a node of PyTables
        return int(node._get_obj_info()[0])
    if hasattr(type(node), "_g_h5id"):
        return storage_tree.object_address(node._g_h5id)
    return None


def build_branch(node: Any, seen: dict[int, str]) -> Branch:
    """Return the branch of ``node`` with the sizes of every leaf below it summed.

    ``seen`` maps the address of every object counted so far to its path; an object met
    again (a hard link) is shown but not counted or descended into again.
    """
    name = node._v_name or "/"
    kind = class_name(node)
    if is_link(node):
        return Branch(name, kind, Sizes(), note=f"-> {node.target}", counted=False)
    address = node_address(node)
    if address is not None:
        if address in seen:
            return Branch(name, kind, Sizes(), note=f"hard link of {seen[address]}", counted=False)
        seen[address] = node._v_pathname
    if is_group(node):
        branch = Branch(name, kind, Sizes())
        for child in _children(node):
            sub = build_branch(child, seen)
            branch.sizes.add(sub.sizes)
            branch.children.append(sub)
        return branch
    sizes = leaf_sizes(node)
    if sizes is None:
        return Branch(name, kind, Sizes(leaves=1, unknown=1), note="size unknown", known=False)
    return Branch(name, kind, sizes)


def _children(group: Any) -> list[Any]:
    return sorted(group._v_file.list_nodes(group), key=lambda n: n._v_name)


def _sort_key(sort: str) -> Any:
    if sort == "size":
        return lambda b: (-b.sizes.stored, b.name)
    return lambda b: b.name


def _rows(
    branch: Branch, prefix: str, last: bool, top: bool, depth: int, context: _Context
) -> Iterable[tuple[str, ...]]:
    lead = "" if top else prefix + ("└── " if last else "├── ")
    yield (lead + branch.name, *context.size_cells(branch, depth))
    if depth >= context.max_depth:
        return
    children = sorted(branch.children, key=_sort_key(context.sort))
    inner = "" if top else prefix + ("    " if last else "│   ")
    for i, child in enumerate(children):
        yield from _rows(child, inner, i == len(children) - 1, False, depth + 1, context)


@dataclass(frozen=True)
class _Context:
    total: int
    exact: bool
    max_depth: int
    sort: str

    def size_cells(self, branch: Branch, depth: int) -> tuple[str, ...]:
        sizes = branch.sizes
        note = branch.note
        if branch.children and depth >= self.max_depth:
            plural = "leaf" if sizes.leaves == 1 else "leaves"
            note = f"{sizes.leaves} {plural} below"
        if not branch.counted:
            return (branch.kind, "", "", "", "", note)
        if not branch.known:
            return (branch.kind, "?", "?", "?", "", note)
        share = f"{100 * sizes.stored / self.total:.1f}%" if self.total else "-"
        return (
            branch.kind,
            format_bytes(sizes.stored, self.exact),
            format_bytes(sizes.in_memory, self.exact),
            sizes.ratio(),
            share,
            note,
        )


def tree_lines(
    fileh: Any,
    where: str = "/",
    max_depth: int | None = None,
    sort: str = "name",
    exact: bool = False,
) -> list[str]:
    """Return the tree of ``where`` with sizes, as aligned lines, then a summary.

    Parameters
    ----------
    fileh : File
        An open file (hyperslab's, or anything with PyTables' File API).
    where : str
        The node at the top of the tree.
    max_depth : int, optional
        Show nodes at most this many levels below ``where`` (0: ``where`` alone); a group
        at the limit shows the sums of its branch and how many leaves it holds.
    sort : {"name", "size"}
        Order the children of each group by name, or by stored size, largest first.
    exact : bool
        Show sizes in bytes rather than in binary units (``1.5 KiB``).

    Raises
    ------
    ValueError
        For an unknown ``sort`` or a negative ``max_depth``.
    """
    if sort not in SORT_KEYS:
        raise ValueError(f"sort must be one of {SORT_KEYS}, not {sort!r}")
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"max_depth must be 0 or more, not {max_depth!r}")
    node = fileh.get_node(where)
    top = build_branch(node, {})
    top.name = node._v_pathname
    total = top.sizes.stored
    context = _Context(total, exact, 2**31 if max_depth is None else max_depth, sort)
    rows = [TREE_COLUMNS, *_rows(top, "", True, True, 0, context)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TREE_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    return lines + summary_lines(fileh, top.sizes, exact)


def summary_lines(fileh: Any, sizes: Sizes, exact: bool) -> list[str]:
    """Return the totals of a tree and the size of its file."""
    known = sizes.leaves - sizes.unknown
    unknown = f" (and {sizes.unknown} of unknown size: VLArrays)" if sizes.unknown else ""
    lines = [
        "",
        f"leaves: {known}{unknown}",
        f"stored: {format_bytes(sizes.stored, exact)}, uncompressed: "
        f"{format_bytes(sizes.in_memory, exact)}, uncompressed/stored: {sizes.ratio()}",
        f"file: {format_bytes(os.path.getsize(fileh.filename), exact)} "
        "(datasets and HDF5 metadata: object headers, chunk indexes, attributes)",
    ]
    if sizes.partial:
        lines.append(PARTIAL_NOTE)
    return lines


def run_tree(
    path: str | os.PathLike[str],
    where: str = "/",
    max_depth: int | None = None,
    sort: str = "name",
    exact: bool = False,
    out: TextIO | None = None,
) -> None:
    """Open ``path`` read-only with hyperslab and print the tree of ``where`` to ``out``.

    Raises
    ------
    ListingError
        With a one-line message if the file is missing, not HDF5, unreadable, or has no
        node ``where``.
    """
    with open_readonly(path, where) as fileh:
        lines = tree_lines(fileh, where, max_depth, sort, exact)
    print("\n".join(lines), file=out)
