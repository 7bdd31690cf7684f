"""What a writer killed mid-way leaves in the file, and the rules that bound it.

HDF5 writes a file in place and without a journal.  A flush writes every changed piece of
metadata where it lives (object headers with the extents, chunk index nodes, the
superblock with the end of allocation, last); between flushes the metadata cache writes
whatever it evicts, ``H5Dflush`` writes one dataset's chunks and metadata with nothing
else, and a chunk that HDF5 rewrites with another size frees the space it held, which the
next chunk written may take.  ``SIGKILL`` leaves whatever pieces were written.  Measured
before these rules (HDF5 2.0; a child appending to Blosc2, zlib and unfiltered tables and
EArrays, one table indexed, killed at every write system call and at random moments): a
Blosc2 EArray's grown extent reached the file ahead of its chunks (hyperslab's own
``H5Dflush`` before a chunk look-up), so rows past the last flush read as zeros; chunk
index nodes reached it ahead of the superblock, so HDF5, PyTables and h5py refused rows
that were flushed ("addr overflow"); and rows that were flushed read as another chunk's
values, or an index answered for rows it did not hold.

The rules, per :class:`~hyperslab.nodes.files.file.File` (one :class:`FlushGuard` each):

1. **Between flushes, the file stays as the last flush left it.**  From the first change
   of an extent (or a new leaf) after a flush until the next one, the metadata cache
   keeps every change in memory (:func:`~hyperslab.storage.h5file.hold_metadata`).  No
   dataset is flushed alone: ``Leaf.flush`` flushes the file, as PyTables' does, and
   before HDF5 is asked about chunks it holds in its chunk cache (which makes it write
   them), the whole file is flushed first (:attr:`RawChunks.before_lookup
   <hyperslab.storage.rawchunks.RawChunks.before_lookup>`).
2. **A flush writes one dataset at a time, then the rest**
   (:func:`~hyperslab.storage.h5file.flush_in_order`): no dataset's chunk is written into
   the space another dataset's rewritten chunk freed while the file on disk still points
   at it.
3. **Flush marks.**  Each Table and EArray that this session creates or changes carries
   the attribute :data:`MARK`: the rows a completed flush made durable.  It is written
   before the first change (and flushed, for a leaf that existed), updated by each flush
   that no append can be in the middle of (the user's, a leaf's first change, an index's
   protection), and removed when the file is closed: files closed cleanly carry none.  A
   leaf opened with more rows than its mark lost its writer after appending them and
   before a flush: :class:`~hyperslab.errors.UnflushedRowsWarning` names those rows, which
   may hold the fill value.  The mark then stays (across clean closes too) until the leaf
   is truncated to at most the marked rows.  ``node.attrs`` lists only the node's own
   attributes, never the mark (:data:`~hyperslab.nodes.tree.attributeset.HIDDEN_ATTRS`).
4. **Indexes that a session builds or changes are dirty in the file until it is
   closed.**  Their ``DIRTY`` attribute is set, and flushed, when they are built and
   before their table or they first change (an index that covers fewer rows than its
   table is not clean for PyTables, which would answer from it); the session keeps using
   them (their real state is kept here), and closing the file writes it back.
   PyTables and hyperslab never use a dirty index (queries scan; a writable session
   rebuilds it), so after a crash no index answers from a half-written state.

What no rule here can prevent: a kill *during* a flush leaves that flush partly written.
Rows appended since the previous flush may read as zeros or fail (the marks tell); rows
flushed before may fail to read where HDF5 wrote a chunk index node ahead of the
superblock ("addr overflow"; ``h5clear --increment`` repairs it); and the flushed rows of
a leaf's last partly filled chunk may read another chunk's values when HDF5, flushing
that leaf, rewrote the chunk and wrote the leaf's next chunk where it was (rule 2 orders
datasets, not the chunks of one).  Measured with the final rules, SIGKILL at every third
write system call of the writer above: kills between flushes left every flushed row
exact in hyperslab, PyTables and h5py; kills inside flushes left flushed rows failing to
read at 54 to 68 of 100 points (by library) and reading other values at 2 (zlib leaves);
the same writer before these rules read other values at 9 of 58 points inside flushes.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any

from hyperslab.errors import HDF5ExtError, UnflushedRowsWarning
from hyperslab.nodes.tree.naming import is_hidden_path
from hyperslab.storage import attributes as raw
from hyperslab.storage import h5file, tree

if TYPE_CHECKING:
    from hyperslab._typing import Shape
    from hyperslab.nodes.files.file import File
    from hyperslab.nodes.indexes.store import ColumnIndex
    from hyperslab.nodes.leaves.leaf import Leaf
    from hyperslab.storage.datasets import Dataset

MARK = "HS_FLUSHED_ROWS"
"""The attribute of a Table or EArray that hyperslab changed while the file is open: the
rows the last completed flush made durable (see the module docstring)."""


class _Mark:
    """The flush mark of one dataset (whatever leaf objects show it)."""

    __slots__ = ("dataset", "leftover", "lock", "maindim", "written")

    def __init__(self, leaf: Leaf, dataset: Dataset, maindim: int, written: int,
                 leftover: int | None) -> None:
        self.dataset = dataset
        self.lock = leaf._rwlock  # held exclusive while the mark is updated
        self.maindim = maindim
        self.written = written  # the value in the file (or about to be flushed there)
        self.leftover = leftover  # a mark found on opening, kept until truncated below

    @property
    def rows(self) -> int:
        """The dataset's rows now."""
        return int(self.dataset.shape[self.maindim])


class FlushGuard:
    """The flush order and marks of one open file (see the module docstring)."""

    def __init__(self, file: File) -> None:
        self._file = file
        self._marks: dict[int, _Mark] = {}  # dataset address -> its mark
        self._held: Any = None  # the metadata cache configuration to restore
        # Index group address -> (its group id, the DIRTY it really has) for the indexes
        # kept dirty in the file while this session changes them (rule 4).
        self._kept: dict[int, tuple[Any, bool]] = {}
        self._warned: set[int] = set()  # addresses of leaves warned about
        self._lock = threading.RLock()  # threads that change leaves share the marks

    # ------------------------------------------------------------------ leaves
    def attach(self, leaf: Leaf, dataset: Dataset) -> None:
        """Called when ``leaf`` opens its dataset: warn about rows past its mark, and on
        writable files follow its extent changes."""
        if is_hidden_path(leaf._v_pathname):
            return  # indexes have rule 4
        try:
            marked = raw.has_attribute(dataset.dsid, MARK)
        except HDF5ExtError:  # damaged attribute messages: the data may still read
            marked = False
        if marked:
            self._found(leaf, dataset)
        if self._file.mode != "r":
            dataset.before_resize = _ResizeHook(self, leaf, dataset)
            dataset.before_lookup = self._before_lookup

    def _before_lookup(self) -> None:
        """HDF5 is about to write chunks of a leaf that it holds in its chunk cache (one
        rewritten since the last flush frees the space that the file on disk still
        points at): flush the whole file in order first, if this session changed it.
        The marks stay: this may happen in the middle of an append."""
        if self._held is not None:
            self._commit(marks=False)

    def _found(self, leaf: Leaf, dataset: Dataset) -> None:
        """A mark found on opening: warn about the rows past it, if any; else a writable
        file removes it when closed (it was left by a writer killed between flushes)."""
        with self._lock:
            address = tree.object_address(dataset.dsid)
            if address in self._warned or address in self._marks:
                return
            try:
                marked = raw.read_int_attribute(dataset.dsid, MARK)
            except (KeyError, TypeError):
                return
            maindim = leaf.maindim
            rows = int(dataset.shape[maindim])
            if rows <= marked:
                if self._file.mode != "r":
                    self._marks[address] = _Mark(leaf, dataset, maindim, marked, None)
            else:
                self._warned.add(address)
                path = leaf._v_pathname
                warnings.warn(UnflushedRowsWarning(
                    f"{path} has {rows} rows, but only {marked} were flushed before its writer "
                    f"stopped without closing the file: rows {marked} to {rows - 1} may hold "
                    f"the fill value instead of the appended data, or fail to read; "
                    f"truncate({marked}) drops them"), stacklevel=5)

    def created(self, leaf: Leaf) -> None:
        """Mark a Table or EArray created in this session (its object header gets the
        mark now: adding it later may need an object header continuation, which a kill
        during that flush can leave unreadable)."""
        with self._lock:
            self.changing()  # the new node reaches the file whole, at the next flush
            dataset = leaf._dataset
            if is_hidden_path(leaf._v_pathname) or leaf.extdim < 0:
                return
            maindim = leaf.maindim
            rows = int(dataset.shape[maindim])
            raw.write_int_attribute(dataset.dsid, MARK, rows, "int64")
            address = tree.object_address(dataset.dsid)
            self._marks[address] = _Mark(leaf, dataset, maindim, rows, None)

    def mark(self, leaf: Leaf, dataset: Dataset) -> _Mark:
        """The mark of ``leaf``'s dataset; at its first change in this session it is
        written, the leaf's indexes are kept dirty, and both are flushed (rules 3, 4)."""
        with self._lock:
            self.changing()
            address = tree.object_address(dataset.dsid)
            mark = self._marks.get(address)
            if mark is None:
                maindim = leaf.maindim
                rows = int(dataset.shape[maindim])
                try:
                    found: int | None = raw.read_int_attribute(dataset.dsid, MARK)
                except (KeyError, TypeError):
                    found = None
                if found is not None and found < rows:  # left by a writer that was killed
                    mark = _Mark(leaf, dataset, maindim, found, found)
                else:
                    raw.write_int_attribute(dataset.dsid, MARK, rows, "int64")
                    mark = _Mark(leaf, dataset, maindim, rows, None)
                self._marks[address] = mark
                indexing = getattr(leaf, "_indexing", None)  # a Table's indexes
                indexes = list(indexing.indexes.values()) if indexing is not None else []
                self._keep_dirty(indexes)
                self._commit()
            return mark

    def changing(self) -> None:
        """Called before an extent changes or a leaf is created: hold the metadata until
        the next flush."""
        with self._lock:
            if self._held is None:
                self._held = h5file.hold_metadata(self._file._h5)

    # ------------------------------------------------------------------ indexes
    def protect(self, indexes: list[ColumnIndex]) -> None:
        """Keep ``indexes`` dirty in the file until it is closed, before they change;
        flushed at once for those not kept yet (rule 4)."""
        with self._lock:
            if self._keep_dirty(indexes):
                self.changing()
                self._commit()

    def _keep_dirty(self, indexes: list[ColumnIndex]) -> bool:
        """Write ``DIRTY`` in the indexes not kept dirty yet; whether there were any."""
        new = False
        for index in indexes:
            address = tree.object_address(index._gid)
            if address not in self._kept:
                self._kept[address] = (index._gid, index.dirty)
                raw.write_int_attribute(index._gid, "DIRTY", 1, "int32")
                new = True
        return new

    def kept_dirty(self, gid: Any) -> bool | None:
        """The real ``DIRTY`` of the index group ``gid`` if the file shows it dirty only
        because this session changes it (None otherwise)."""
        if not self._kept:
            return None
        found = self._kept.get(tree.object_address(gid))
        return None if found is None else found[1]

    def set_kept_dirty(self, gid: Any, value: bool) -> bool:
        """Record ``value`` as the real ``DIRTY`` of ``gid`` if it is kept dirty in the file
        (then nothing is written now); whether it is."""
        with self._lock:
            if not self._kept:
                return False
            address = tree.object_address(gid)
            if address not in self._kept:
                return False
            self._kept[address] = (gid, value)
            return True

    # ------------------------------------------------------------------ flushing
    def _commit(self, marks: bool = True) -> None:
        """Flush the file in order, then (with ``marks``) the marks of what it made
        durable (rules 2 and 3).  Only flushes that no append is in the middle of update
        the marks (the user's flushes, a leaf's first change, an index's protection)."""
        h5 = self._file._h5
        with self._lock:
            if not marks:
                h5file.flush_in_order(h5)
                return
            # A mark is updated only while its leaf's lock is held, from the flush that
            # ends before it is released: no other thread can be amid an append to it.  A
            # leaf that another thread is changing or reading right now keeps its mark
            # (lower than its durable rows at worst: a warning too many after a kill,
            # never one too few).  Never waiting here keeps threads that hold a leaf's
            # lock and then flush (a leaf's first change) free of deadlocks.
            held = [mark for mark in list(self._marks.values())
                    if mark.lock is None or mark.lock.try_exclusive()]
            try:
                h5file.flush_in_order(h5)
                changed = False
                for mark in held:
                    value = mark.leftover if mark.leftover is not None else mark.rows
                    if value != mark.written:
                        raw.write_int_attribute(mark.dataset.dsid, MARK, value, "int64")
                        mark.written = value
                        changed = True
                if changed:
                    h5file.flush_in_order(h5)
            finally:
                for mark in held:
                    if mark.lock is not None:
                        mark.lock.release_exclusive()

    def flush(self) -> None:
        """What ``File.flush`` does once the leaves' buffers are written: flush in order,
        update the marks, and let the metadata cache evict again (rules 1 to 3)."""
        with self._lock:
            self._commit()
            if self._held is not None:
                held, self._held = self._held, None
                h5file.release_metadata(self._file._h5, held)

    def close(self) -> None:
        """Flush; then remove the marks (but those of rows a killed writer left) and give
        the kept indexes their real ``DIRTY`` (the file's close writes both)."""
        with self._lock:
            self.flush()
            for mark in self._marks.values():
                if mark.leftover is None:
                    try:
                        raw.delete_attribute(mark.dataset.dsid, MARK)
                    except KeyError:
                        pass  # deleted through ``attrs``
            for gid, dirty in self._kept.values():
                try:
                    raw.write_int_attribute(gid, "DIRTY", int(dirty), "int32")
                except HDF5ExtError:
                    continue  # removed (a rebuild replaced it)
            self._marks.clear()
            self._kept.clear()


class _ResizeHook:
    """``Dataset.before_resize`` of a leaf on a writable file (rules 1 and 3)."""

    __slots__ = ("_dataset", "_guard", "_leaf", "_mark")

    def __init__(self, guard: FlushGuard, leaf: Leaf, dataset: Dataset) -> None:
        self._guard = guard
        self._leaf = leaf
        self._dataset = dataset
        self._mark: _Mark | None = None

    def __call__(self, shape: Shape) -> None:
        mark = self._mark
        if mark is None:
            mark = self._mark = self._guard.mark(self._leaf, self._dataset)
        else:
            self._guard.changing()
        if mark.leftover is not None and int(shape[mark.maindim]) <= mark.leftover:
            mark.leftover = None  # the rows past the old mark are gone


__all__ = ["MARK", "FlushGuard"]
