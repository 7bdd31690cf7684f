"""``hyperslab repack``: copy a file, a group or a leaf into another file with new filters,
chunk shapes or Blosc2 blocks (PyTables' ``ptrepack``), in bounded memory.

What is copied, as ``ptrepack`` copies it: groups (recreated, with their titles, filters and
attributes), leaves with their titles, attributes and flavors, tables with their
descriptions (sorted by a column with ``sortby``; their indexes rebuilt in PyTables' layout
with ``propindexes``), soft and external links as links, and objects reached by several
hard links once, hard-linked again in the copy.

The data of chunked leaves go slab by slab: each slab is a whole number of the copy's
chunks along the main dimension (at most ``slab_bytes``, 64 MiB by default, unless one band
of chunks is bigger), read from the source and written with ``dst[lo:hi] = src[lo:hi]`` or
appended, so with Blosc2 filters the chunks of a slab are compressed in parallel and written
raw (hyperslab's fast write path).  Contiguous Arrays (which take no filters) and nodes
hyperslab does not represent are copied by HDF5 as they are.  VLArrays cannot take Blosc2
filters (neither in PyTables): asked for Blosc2, they keep their own filters.

A progress bar (``progress``; by default only when stderr is a terminal) counts the bytes
of the leaves copied.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

import hyperslab
from hyperslab.errors import NoSuchNodeError
from hyperslab.progress import progress_bar, should_show
from hyperslab.storage import tree as storage_tree
from hyperslab.tools.ls import ListingError, open_readonly

SLAB_BYTES = 64 << 20
"""Default bound of the bytes read and written at a time (per leaf)."""

CHUNKSHAPE_CHOICES = ("keep", "auto")


class RepackError(ValueError):
    """A repack that cannot be done as asked; the message is meant for the user as it is."""


@dataclasses.dataclass(frozen=True)
class RepackOptions:
    """How to repack (PyTables' ``ptrepack`` options).

    Parameters
    ----------
    filters : Filters, optional
        Filters of every leaf copied (and of the groups created); None keeps each leaf's own.
    chunkshape : 'keep', 'auto' or tuple of int
        The source's chunk shapes, ones computed from the shapes, or this one for every
        chunked leaf (of its rank).
    blockshape : tuple of int, optional
        Blosc2 block shape of the CArrays and EArrays of its rank (Blosc2 filters only).
    sortby : str, optional
        Copy tables sorted by this column (it needs a full index; see ``Table.copy``).
    checkCSI : bool
        With ``sortby``: refuse a column whose index is not completely sorted.
    propindexes : bool
        Rebuild the indexes of the source's tables in their copies.
    overwrite : bool
        Replace the destination file; otherwise nodes are added to it if it exists.
    overwrite_nodes : bool
        Replace nodes of the destination whose names the copies take.
    title : str, optional
        Title of a new destination file (the source's by default).
    copyuserattrs : bool
        Copy the user attributes.
    progress : bool, optional
        Show a progress bar: always (True), never (False), or if stderr is a terminal.
    slab_bytes : int
        Bound of the bytes moved at a time.
    """

    filters: Any = None
    chunkshape: str | tuple[int, ...] = "keep"
    blockshape: tuple[int, ...] | None = None
    sortby: str | None = None
    checkCSI: bool = False
    propindexes: bool = False
    overwrite: bool = False
    overwrite_nodes: bool = False
    title: str | None = None
    copyuserattrs: bool = True
    progress: bool | None = None
    slab_bytes: int = SLAB_BYTES

    def __post_init__(self) -> None:
        chunkshape = self.chunkshape
        if isinstance(chunkshape, str):
            if chunkshape not in CHUNKSHAPE_CHOICES:
                raise RepackError(f"chunkshape must be 'keep', 'auto' or a shape, not "
                                  f"{chunkshape!r}")
        elif not _is_shape(chunkshape):
            raise RepackError(f"chunkshape must be 'keep', 'auto' or a shape, not "
                              f"{chunkshape!r}")
        if self.blockshape is not None:
            if not _is_shape(self.blockshape):
                raise RepackError(f"blockshape must be a shape, not {self.blockshape!r}")
            if self.filters is None or not str(self.filters.complib).startswith("blosc2") \
                    or not self.filters.complevel:
                raise RepackError("blockshape needs Blosc2 filters (complib 'blosc2...' and "
                                  f"complevel > 0), not {self.filters!r}")
        if self.slab_bytes < 1:
            raise RepackError(f"slab_bytes must be positive, not {self.slab_bytes!r}")
        should_show(self.progress)  # TypeError for a bad value


@dataclasses.dataclass
class RepackStats:
    """What a repack copied: counts of groups, leaves, links and hard links, and the bytes
    of the leaves' data (uncompressed)."""

    groups: int = 0
    leaves: int = 0
    links: int = 0
    hardlinks: int = 0
    bytes: int = 0


def _is_shape(value: Any) -> bool:
    return (isinstance(value, tuple) and len(value) > 0
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in value))


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse ``'N,N,...'`` (or ``'(N, N)'``) into a shape of positive ints.

    Raises
    ------
    RepackError
        If ``text`` is not such a list.

    Examples
    --------
    >>> parse_shape("100,20")
    (100, 20)
    >>> parse_shape("(64,)")
    (64,)
    """
    body = text.strip().strip("()")
    try:
        shape = tuple(int(part) for part in body.split(",") if part.strip())
    except ValueError:
        shape = ()
    if not _is_shape(shape):
        raise RepackError(f"expected positive integers separated by commas, not {text!r}")
    return shape


def repack(src: str | os.PathLike[str], dst: str | os.PathLike[str], srcnode: str = "/",
           dstnode: str = "/", options: RepackOptions | None = None) -> RepackStats:
    """Copy ``src:srcnode`` into ``dst:dstnode`` as ``options`` say (see the module).

    A group's children are copied into the group ``dstnode`` (created if missing); a leaf
    becomes ``dstnode``, or a child of it if it is an existing group or ends with ``/``.

    Parameters
    ----------
    src, dst : str or PathLike
        The source and destination files (different files).
    srcnode, dstnode : str
        The node copied and where its copy goes.
    options : RepackOptions, optional
        Filters, chunk shapes, sorting, overwriting, progress.

    Returns
    -------
    RepackStats

    Raises
    ------
    RepackError
        For a source that cannot be read, a destination node that exists (without
        ``overwrite_nodes``), a chunk or block shape of the wrong rank, a ``sortby`` column
        no table has, or ``dst`` being ``src``.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> with hyperslab.open_file(os.path.join(tmp, "a.h5"), "w") as f:
    ...     _ = f.create_carray("/", "x", obj=np.arange(1000), filters=hyperslab.Filters(1))
    >>> stats = repack(os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5"),
    ...                options=RepackOptions(filters=hyperslab.Filters(5, "blosc2:zstd")))
    >>> stats.leaves, stats.bytes
    (1, 8000)
    """
    options = options or RepackOptions()
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.exists(dst) and os.path.samefile(src, dst):
        raise RepackError(f"the destination {dst!r} is the source file")
    try:
        with open_readonly(src, srcnode) as srcfile:
            return _Repack(srcfile, options).run(srcfile.get_node(srcnode), dst, dstnode)
    except ListingError as exc:
        raise RepackError(str(exc)) from None


class _Repack:
    """One repack: the source file, the options, the stats and the progress bar."""

    def __init__(self, srcfile: Any, options: RepackOptions) -> None:
        self.srcfile = srcfile
        self.options = options
        self.stats = RepackStats()
        self.copied: dict[int, str] = {}  # object address -> path of its copy
        self.bar: Any = None

    # ------------------------------------------------------------------ plan
    def run(self, node: Any, dst: str, dstnode: str) -> RepackStats:
        leaves = ([node] if isinstance(node, hyperslab.Leaf) else
                  list(node._f_walknodes("Leaf")) if isinstance(node, hyperslab.Group) else [])
        self._check_leaves(leaves)
        fresh = self.options.overwrite or not os.path.exists(dst)
        title = self.options.title if self.options.title is not None else self.srcfile.title
        mode, kwargs = ("w", {"title": title, "filters": self.options.filters}) if fresh \
            else ("a", {})
        try:
            dstfile = hyperslab.open_file(dst, mode, **kwargs)
        except (OSError, ValueError) as exc:
            raise RepackError(f"cannot open {dst!r} for writing: {exc}") from None
        total = sum(_nbytes(leaf) for leaf in leaves)
        with dstfile, progress_bar(total, "repack", show=self.options.progress, unit="B",
                                   unit_scale=True) as self.bar:
            if isinstance(node, hyperslab.Group):
                self._copy_children(node, dstfile, dstnode, created=fresh)
            else:
                self._copy_top(node, dstfile, dstnode)
        return self.stats

    def _check_leaves(self, leaves: list[Any]) -> None:
        """Refuse, before writing anything, options that do not fit the leaves."""
        options = self.options
        for leaf in leaves:
            chunked = leaf.chunkshape is not None
            rank = len(leaf.shape)
            if isinstance(options.chunkshape, tuple) and chunked and \
                    len(options.chunkshape) != rank:
                raise RepackError(f"chunkshape {options.chunkshape} has {len(options.chunkshape)}"
                                  f" dimensions; {leaf._v_pathname} has {rank}")
        if options.sortby is not None:
            tables = [leaf for leaf in leaves if isinstance(leaf, hyperslab.Table)]
            lacking = [t._v_pathname for t in tables if options.sortby not in t.colpathnames]
            if not tables or lacking:
                where = ", ".join(lacking) if lacking else "the source (it has no tables)"
                raise RepackError(f"no column {options.sortby!r} to sort by in {where}")

    def _copy_children(self, group: Any, dstfile: Any, dstnode: str, created: bool) -> None:
        try:
            target = dstfile.get_node(dstnode)
        except NoSuchNodeError:
            target = dstfile.create_group(*_split(dstnode), title=group._v_title,
                                          filters=self._group_filters(group),
                                          createparents=True)
            created = True
        if not isinstance(target, hyperslab.Group):
            self._make_room(dstfile, target._v_pathname)
            target = dstfile.create_group(*_split(dstnode), title=group._v_title,
                                          filters=self._group_filters(group))
            created = True
        names = list(group._v_children)
        for name in names:
            if name in target._v_children:
                self._make_room(dstfile, f"{target._v_pathname.rstrip('/')}/{name}")
        if created and self.options.copyuserattrs:
            group._v_attrs._f_copy(target)
        stack = [(group, target)]
        while stack:
            srcgroup, dstgroup = stack.pop()
            for child in srcgroup._f_iter_nodes():
                new = self._copy_node(child, dstgroup, child._v_name)
                if isinstance(child, hyperslab.Group) and new is not None:
                    stack.append((child, new))

    def _copy_top(self, leaf: Any, dstfile: Any, dstnode: str) -> None:
        path = dstnode
        try:
            existing = dstfile.get_node(dstnode)
        except NoSuchNodeError:
            existing = None
        if dstnode.endswith("/") or isinstance(existing, hyperslab.Group):
            path = f"{dstnode.rstrip('/')}/{leaf._v_name}"
            try:
                existing = dstfile.get_node(path)
            except NoSuchNodeError:
                existing = None
        if existing is not None:
            self._make_room(dstfile, path)
        parentpath, name = _split(path)
        try:
            parent = dstfile.get_node(parentpath)
        except NoSuchNodeError:
            parent = dstfile.create_group(*_split(parentpath), createparents=True)
        self._copy_node(leaf, parent, name)

    def _make_room(self, dstfile: Any, path: str) -> None:
        if not self.options.overwrite_nodes:
            raise RepackError(f"{dstfile.filename}:{path} exists; use --overwrite-nodes to "
                              f"replace it or --overwrite to replace the file")
        dstfile.remove_node(path, recursive=True)

    def _group_filters(self, group: Any) -> Any:
        if self.options.filters is not None:
            return self.options.filters
        return group._v_filters if "FILTERS" in group._v_attrs._v_attrnamessys else None

    def _advance(self, nbytes: int) -> None:
        """Count ``nbytes`` of leaf data copied (the statistics and the progress bar)."""
        self.stats.bytes += nbytes
        self.bar.update(nbytes)

    # ------------------------------------------------------------------ nodes
    def _copy_node(self, node: Any, dstgroup: Any, name: str) -> Any:
        """Copy ``node`` as ``dstgroup``'s child ``name``; return the copy (None for links
        and hard links)."""
        if isinstance(node, hyperslab.Link):
            self.srcfile.copy_node(node, newparent=dstgroup, newname=name)
            self.stats.links += 1
            return None
        address = storage_tree.object_address(node._g_h5id)
        if address in self.copied:
            dstgroup._v_file.create_hard_link(dstgroup, name, self.copied[address])
            self.stats.hardlinks += 1
            if isinstance(node, hyperslab.Leaf):
                self.bar.update(_nbytes(node))  # its data: copied once, under its first name
            return None
        if isinstance(node, hyperslab.Group):
            new = dstgroup._v_file.create_group(dstgroup, name, title=node._v_title,
                                                filters=self._group_filters(node))
            self.stats.groups += 1
        else:
            new = self._copy_leaf(node, dstgroup, name)
            self.stats.leaves += 1
        if self.options.copyuserattrs or not isinstance(node, hyperslab.Group):
            _copy_attrs(node, new, self.options.copyuserattrs)
        self.copied[address] = new._v_pathname
        return new

    def _copy_leaf(self, leaf: Any, dstgroup: Any, name: str) -> Any:
        file = dstgroup._v_file
        if isinstance(leaf, hyperslab.Table):
            return self._copy_table(leaf, dstgroup, name)
        if isinstance(leaf, (hyperslab.CArray, hyperslab.EArray)):
            return self._copy_array(leaf, dstgroup, name)
        if isinstance(leaf, hyperslab.VLArray):
            filters = self._filters(leaf)
            if filters.complevel and str(filters.complib).startswith("blosc2"):
                filters = leaf.filters  # VLArrays cannot be Blosc2 (in PyTables neither)
            new = file.create_vlarray(dstgroup, name, atom=leaf.atom, title=leaf.title,
                                      filters=filters,
                                      expectedrows=max(leaf.nrows, 1),
                                      chunkshape=self._chunkshape(leaf))
            rows = max(1, self.options.slab_bytes // max(_nbytes(leaf) // max(leaf.nrows, 1),
                                                        1))
            for lo in range(0, leaf.nrows, rows):
                hi = min(lo + rows, leaf.nrows)
                for row in leaf.read(lo, hi):
                    new.append(row)
                self._advance(_nbytes(leaf) * (hi - lo) // max(leaf.nrows, 1))
            return new
        # Contiguous Arrays (no filters, no chunks) and unknown datasets: HDF5's own copy.
        self._advance(_nbytes(leaf))
        return self.srcfile.copy_node(leaf, newparent=dstgroup, newname=name)

    def _filters(self, leaf: Any) -> Any:
        return self.options.filters if self.options.filters is not None else leaf.filters

    def _chunkshape(self, leaf: Any) -> Any:
        chunkshape = self.options.chunkshape
        if chunkshape == "keep":
            return leaf.chunkshape
        return None if chunkshape == "auto" else chunkshape

    def _blockshape(self, leaf: Any) -> Any:
        blockshape = self.options.blockshape
        return blockshape if blockshape is not None and len(blockshape) == leaf.ndim else None

    def _copy_array(self, leaf: Any, dstgroup: Any, name: str) -> Any:
        file = dstgroup._v_file
        common = {"atom": leaf.atom, "title": leaf.title, "filters": self._filters(leaf),
                  "chunkshape": self._chunkshape(leaf), "blockshape": self._blockshape(leaf)}
        if isinstance(leaf, hyperslab.EArray):
            shape = list(leaf.shape)
            shape[leaf.extdim] = 0
            new = file.create_earray(dstgroup, name, shape=tuple(shape),
                                     expectedrows=max(leaf.nrows, 1), **common)
            for lo, hi in self._slabs(leaf, new):
                new.append(_as_numpy(leaf.read(lo, hi), leaf))
                self._advance(_nbytes(leaf) * (hi - lo) // leaf.nrows)
            return new
        new = file.create_carray(dstgroup, name, shape=leaf.shape, **common)
        for lo, hi in self._slabs(leaf, new):
            new[lo:hi] = _as_numpy(leaf.read(lo, hi), leaf)
            self._advance(_nbytes(leaf) * (hi - lo) // leaf.shape[0])
        return new

    def _slabs(self, leaf: Any, new: Any) -> list[tuple[int, int]]:
        """Row ranges along the main dimension, each a whole number of the copy's chunks
        (but the last) and at most ``slab_bytes`` unless one band of chunks is more."""
        nrows = leaf.nrows
        if nrows == 0 or _nbytes(leaf) == 0:
            return []
        chunkrows = int(new.chunkshape[new.maindim]) if new.chunkshape else 1
        row_bytes = max(_nbytes(leaf) // nrows, 1)
        step = max(1, self.options.slab_bytes // (row_bytes * chunkrows)) * chunkrows
        return [(lo, min(lo + step, nrows)) for lo in range(0, nrows, step)]

    def _copy_table(self, table: Any, dstgroup: Any, name: str) -> Any:
        options = self.options
        if options.sortby is not None:
            new = table.copy(dstgroup, name, filters=self._filters(table),
                             chunkshape=options.chunkshape, copyuserattrs=False,
                             sortby=options.sortby, checkCSI=options.checkCSI,
                             propindexes=options.propindexes,
                             progress=False)  # the repack's own bar counts it
            self._advance(_nbytes(table))
            return new
        new = dstgroup._v_file.create_table(
            dstgroup, name, description=table.description, title=table.title,
            filters=self._filters(table), expectedrows=max(table.nrows, 1),
            chunkshape=self._chunkshape(table))
        for lo, hi in self._slabs(table, new):
            new.append(table.read(lo, hi))
            self._advance(table.rowsize * (hi - lo))
        new.flush()
        if options.propindexes:
            show = should_show(options.progress)
            for path, index in table.colindexes.items():
                new.cols._f_col(path).create_index(
                    optlevel=index.optlevel, kind=index.kind, filters=index.filters,
                    progress=show)
        return new


def _split(path: str) -> tuple[str, str]:
    parent, _, name = path.rstrip("/").rpartition("/")
    return parent or "/", name


def _nbytes(leaf: Any) -> int:
    if isinstance(leaf, hyperslab.Table):
        return int(leaf.nrows) * int(leaf.rowsize)
    return int(leaf.size_in_memory)


def _as_numpy(data: Any, leaf: Any) -> Any:
    return data if isinstance(data, np.ndarray) else np.asarray(data, dtype=leaf.dtype)


def _copy_attrs(node: Any, new: Any, user: bool) -> None:
    """The attributes of ``node`` on its copy: all but those describing its own layout
    (PyTables' copies), or only the system ones without ``user``."""
    if user:
        node._v_attrs._f_copy(new)
        return
    for name in node._v_attrs._v_attrnamessys:
        if name == "FLAVOR":
            new._v_attrs[name] = node._v_attrs[name]


__all__ = ["RepackError", "RepackOptions", "RepackStats", "parse_shape", "repack"]
