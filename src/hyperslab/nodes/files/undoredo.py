"""Undo and redo: PyTables' action log, kept in the file as PyTables keeps it (a File mixin).

Once :meth:`UndoRedo.enable_undo` is called, every change to the tree (node creation,
removal, move or rename, copy) and to attributes (set, delete) is logged, and
:meth:`~UndoRedo.undo`, :meth:`~UndoRedo.redo` and :meth:`~UndoRedo.goto` walk the log to a
*mark* (a named or numbered point).  Data changes (rows, elements) are not logged.

The log is PyTables' own, so either library undoes what the other logged:

* ``/_p_transactions`` (``CLASS`` ``TRANSGROUP``, ``FORMATVERSION`` ``'1.0'``) holds the table
  ``actionlog`` (columns ``opcode`` uint8, ``arg1`` and ``arg2`` strings of
  ``MAX_UNDO_PATH_LENGTH`` bytes; its attributes ``CURMARK`` and ``CURACTION`` say where
  the file stands, written on flush and close) and the transaction group ``t0`` (``TRANSG``);
* each mark ``n`` has a group ``t0/m<n>`` (``MARKG``), where what an action took away is kept
  under the action's row number ``a<row>``: a removed node (moved there, not deleted), a
  node whose creation was undone, and as attributes of the mark group the values of
  deleted or replaced attributes;
* a row is ``(opcode, arg1, arg2)``: ``MARK`` (0: mark number, name), ``CREATE`` (1: path),
  ``REMOVE`` (2: path), ``MOVE`` (3: old path, new path), ``ADDATTR`` (4: path, name),
  ``DELATTR`` (5: path, name).

Nothing below ``/_p_transactions`` nor any index node (``_i_*``) is logged, nor nodes of a
class marked with :class:`~hyperslab.nodes.tree.node.NotLoggedMixin`; nor is the creation
of links (as PyTables).  Logging an action after an undo forgets the actions that a redo
would have replayed and the marks after the current one (whose names are then free again;
PyTables keeps them reserved until the file is reopened).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hyperslab.codecs.filters import Filters
from hyperslab.errors import UndoRedoError, UndoRedoWarning
from hyperslab.nodes.atoms.cols import StringCol, UInt8Col
from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.tree.group import Group
from hyperslab.nodes.tree.naming import join_path, split_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw

OPCODES = {"MARK": 0, "CREATE": 1, "REMOVE": 2, "MOVE": 3, "ADDATTR": 4, "DELATTR": 5}
"""PyTables' action codes, as the ``opcode`` column stores them."""

OPNAMES = tuple(OPCODES)
"""The action names by code."""

TRANSACTIONS = "/_p_transactions"
"""The group holding the undo log (PyTables' name)."""

ACTION_LOG = "actionlog"
"""The name of the log table in :data:`TRANSACTIONS`."""

_FORMAT_VERSION = "1.0"
_SHADOW_ATTR = re.compile(r"^a[0-9]+$")
"""Names of the attributes of a mark group that keep attribute values (``a<row>``)."""


def _transaction_path(tid: int) -> str:
    return f"{TRANSACTIONS}/t{tid}"


def _mark_path(tid: int, mid: int) -> str:
    return f"{TRANSACTIONS}/t{tid}/m{mid}"


def is_logged_path(path: str) -> bool:
    """Whether changes at ``path`` may be logged: none in the undo log's own group, nor in
    index groups (``_i_*``), whose nodes PyTables never logs."""
    if path == TRANSACTIONS or path.startswith(TRANSACTIONS + "/"):
        return False
    return not any(part.startswith("_i_") for part in path.split("/"))


class UndoRedo(FileMixin):
    """Undo/redo of changes to the tree and to attributes (File's part).

    Examples
    --------
    >>> import hyperslab, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "undo.h5")
    >>> with hyperslab.open_file(path, "w") as f:
    ...     f.enable_undo()
    ...     _ = f.create_group("/", "first")
    ...     f.mark("one")
    ...     f.remove_node("/first")
    ...     f.undo("one")
    ...     print("/first" in f, f.get_current_mark())
    ...     f.undo()
    ...     print("/first" in f)
    ...     f.goto(-1)
    ...     print("/first" in f)
    1
    True 1
    False
    False
    """

    _undoEnabled: bool  # PyTables' name (its tests read it)
    _undo_paused: int
    _curtransaction: int
    _curmark: int
    _curaction: int
    _nmarks: int
    _seqmarkers: list[int]
    _markers: dict[str, int]
    _actionlog: Any

    # ------------------------------------------------------------------ switching
    def is_undo_enabled(self) -> bool:
        """Whether undo/redo is enabled (it persists in the file: a file opened for writing
        with a log has it enabled)."""
        self._check_open()
        return self._undoEnabled

    def _check_undo_enabled(self) -> None:
        if not self._undoEnabled:
            raise UndoRedoError("Undo/Redo feature is currently disabled!")

    def enable_undo(self, filters: Filters = Filters(complevel=1)) -> None:  # noqa: B008
        """Enable undo/redo: start a log (implicit mark 0), or take up the file's log.

        Parameters
        ----------
        filters : Filters
            Compression of a new log table (PyTables' default: zlib level 1).

        Raises
        ------
        UndoRedoError
            If undo/redo is already enabled.
        FileModeError
            If there is no log yet and the file is read-only.
        """
        self._check_open()
        if self._undoEnabled:
            raise UndoRedoError("Undo/Redo feature is already enabled!")
        self._markers = {}
        self._seqmarkers = []
        self._nmarks = 0
        self._curtransaction = 0
        if TRANSACTIONS in self:
            self._take_up_log()
        else:
            self._check_writable()
            self._start_log(filters)
        self._undoEnabled = True

    def _start_log(self, filters: Filters) -> None:
        with self._undo_pause():
            tgroup = self._undo_group(self.root, TRANSACTIONS[1:], "TRANSGROUP",
                                      "Transaction information container")
            raw.write_sys_string(tgroup._g_h5id, "FORMATVERSION", _FORMAT_VERSION)
            self._undo_group(tgroup, split_path(_transaction_path(0))[1], "TRANSG",
                             "Transaction number 0")
            maxlen = int(self._options["MAX_UNDO_PATH_LENGTH"])
            description = {
                "opcode": UInt8Col(pos=0),
                "arg1": StringCol(maxlen, pos=1, dflt=b""),
                "arg2": StringCol(maxlen, pos=2, dflt=b""),
            }
            self._actionlog = self.create_table(tgroup, ACTION_LOG, description, "Action log",
                                                filters=filters)
            self._actionlog.append([(OPCODES["MARK"], b"0", b"")])
            self._new_mark_group(0)
        self._nmarks = 1
        self._seqmarkers = [0]
        self._curmark = 0
        self._curaction = 0

    def _take_up_log(self) -> None:
        log = self.get_node(join_path(TRANSACTIONS, ACTION_LOG))
        self._actionlog = log
        opcodes = log.col("opcode")
        names = log.col("arg2")
        for row in (opcodes == OPCODES["MARK"]).nonzero()[0]:
            self._markers[bytes(names[row]).decode("utf-8")] = self._nmarks
            self._seqmarkers.append(int(row))
            self._nmarks += 1
        attrs = log._v_attrs
        if "CURMARK" in attrs and "CURACTION" in attrs:
            self._curmark = int(attrs["CURMARK"])
            self._curaction = int(attrs["CURACTION"])
        else:  # a writer that never closed the file: take it as standing at the end
            warnings.warn(
                f"the undo log of ``{self.filename}`` does not say where the file stands "
                f"(the file was not closed); taking the end of the log", UndoRedoWarning,
                stacklevel=3)
            self._curmark = self._nmarks - 1
            self._curaction = log.nrows - 1

    def disable_undo(self) -> None:
        """Disable undo/redo, forgetting the log (the file stays as it is now).

        Raises
        ------
        UndoRedoError
            If undo/redo is not enabled.
        FileModeError
            If the file is read-only.
        """
        self._check_open()
        if not self._undoEnabled:
            raise UndoRedoError("Undo/Redo feature is already disabled!")
        self._check_writable()
        del self._markers, self._seqmarkers, self._curmark, self._curaction
        del self._curtransaction, self._nmarks, self._actionlog
        self._undoEnabled = False
        with self._undo_pause():
            self.remove_node(TRANSACTIONS, recursive=True)

    def _save_undo_state(self) -> None:
        """Write where the file stands in the log (``CURMARK``, ``CURACTION``), as
        PyTables reads it when it opens the file."""
        if self._undoEnabled and self.mode != "r":
            oid = self._actionlog._g_h5id
            raw.write_int_attribute(oid, "CURMARK", int(self._curmark), "int64")
            raw.write_int_attribute(oid, "CURACTION", int(self._curaction), "int64")

    # ------------------------------------------------------------------ the log
    def _undo_group(self, parent: Group, name: str, classid: str, title: str) -> Group:
        """A group of the log (a group of class ``classid``, as PyTables makes them)."""
        group = self._new_group(parent, name, title, None)
        if self._options.pytables_sys_attrs:
            raw.write_sys_string(group._g_h5id, "CLASS", classid)
        return group

    def _new_mark_group(self, mid: int) -> None:
        parent = self._get_group(_transaction_path(self._curtransaction))
        self._undo_group(parent, f"m{mid}", "MARKG", f"Mark number {mid}")

    @contextmanager
    def _undo_pause(self) -> Iterator[None]:
        """Log nothing inside (undo and redo themselves, copies' inner nodes, the log)."""
        self._undo_paused += 1
        try:
            yield
        finally:
            self._undo_paused -= 1

    def _undo_logs(self, node: Node) -> bool:
        """Whether a change to ``node`` is to be logged now."""
        return (self._undoEnabled and not self._undo_paused
                and getattr(node, "_c_logged", True) and is_logged_path(node._v_pathname))

    def _log(self, action: str, *args: str) -> None:
        """Append an action to the log, forgetting first the actions after the current one
        (those a redo would replay).

        Raises
        ------
        UndoRedoError
            If an argument is longer than ``MAX_UNDO_PATH_LENGTH`` bytes.
        """
        arg1, arg2 = (*args, "", "")[:2]
        encoded = arg1.encode("utf-8"), arg2.encode("utf-8")
        if max(map(len, encoded)) > int(self._options["MAX_UNDO_PATH_LENGTH"]):
            raise UndoRedoError(f"Parameter arg1 or arg2 is too long: ({arg1!r}, {arg2!r})")
        log = self._actionlog
        if self._curaction != log.nrows - 1:
            self._forget_future(log)
        log.append([(OPCODES[action], encoded[0], encoded[1])])
        self._curaction += 1

    def _forget_future(self, log: Any) -> None:
        """Drop the log past the current action, what its marks keep, and later marks."""
        log.remove_rows(self._curaction + 1, log.nrows)
        with self._undo_pause():
            group = self._get_group(_mark_path(self._curtransaction, self._curmark))
            for name in list(group._g_link_table()):
                if name in group:  # a table's index group goes with the table
                    self.remove_node(group, name, recursive=True)
            oid = group._g_h5id
            for name in raw.attribute_names(oid):
                if _SHADOW_ATTR.match(name):
                    raw.delete_attribute(oid, name)
            for mid in range(self._curmark + 1, self._nmarks):
                self.remove_node(_mark_path(self._curtransaction, mid), recursive=True)
        self._nmarks = self._curmark + 1
        self._seqmarkers = self._seqmarkers[: self._nmarks]
        self._markers = {k: v for k, v in self._markers.items() if v < self._nmarks}

    def _shadow(self) -> tuple[Group, str]:
        """Where the current action keeps what it takes away: (mark group, ``a<row>``)."""
        group = self._get_group(_mark_path(self._curtransaction, self._curmark))
        return group, f"a{self._curaction}"

    # ------------------------------------------------------------------ hooks
    def _log_create(self, node: Node) -> None:
        """Log the creation of ``node`` (called once it exists)."""
        if self._undo_logs(node):
            self._log("CREATE", node._v_pathname)

    def _remove_logged(self, node: Node) -> bool:
        """Remove ``node`` by logging it and keeping it in the current mark, if changes to
        it are logged; False (nothing done) otherwise."""
        if not self._undo_logs(node):
            return False
        self._log("REMOVE", node._v_pathname)
        self._to_shadow(node._v_pathname)
        return True

    def _attr_to_shadow(self, node: Node, name: str) -> None:
        """Log the deletion of attribute ``name`` of ``node`` and keep its value in the
        current mark."""
        self._log("DELATTR", node._v_pathname, name)
        self._attr_away(node._v_pathname, name)

    def _warn_cross_file_copy(self, dstfile: Any) -> None:
        """PyTables' warning for a copy into another file while this one logs."""
        if dstfile is not self and self._undoEnabled:
            warnings.warn("copying across databases can not be undone nor redone from "
                          "this database", UndoRedoWarning, stacklevel=4)

    # ------------------------------------------------------------------ moving things
    def _to_shadow(self, path: str) -> None:
        parent, name = self._shadow()
        with self._undo_pause():
            self.move_node(path, parent, name)

    def _from_shadow(self, path: str) -> None:
        shadow_parent, shadow_name = self._shadow()
        parent, name = split_path(path)
        with self._undo_pause():
            self.move_node(shadow_parent, self._get_group(parent), name, shadow_name)

    def _move_back(self, frompath: str, topath: str) -> None:
        parent, name = split_path(topath)
        with self._undo_pause():
            self.move_node(frompath, self._get_group(parent), name)

    def _attr_away(self, path: str, name: str) -> None:
        """Keep attribute ``name`` of the node at ``path`` in the current mark (unless kept
        there already, by an earlier undo or redo of this action) and delete it."""
        node = self.get_node(path)
        parent, shadow_name = self._shadow()
        if not raw.has_attribute(parent._g_h5id, shadow_name):
            raw.copy_attribute(node._g_h5id, name, parent._g_h5id, shadow_name)
        raw.delete_attribute(node._g_h5id, name)
        node._g_attr_changed(name)

    def _attr_back(self, path: str, name: str) -> None:
        """Set attribute ``name`` of the node at ``path`` from the current mark (which
        keeps it, for a later redo or undo)."""
        node = self.get_node(path)
        parent, shadow_name = self._shadow()
        raw.copy_attribute(parent._g_h5id, shadow_name, node._g_h5id, name)
        node._g_attr_changed(name)

    def _apply(self, opcode: int, arg1: str, arg2: str, undo: bool) -> None:
        """Undo (or redo) one logged action."""
        action = OPNAMES[opcode] if opcode < len(OPNAMES) else str(opcode)
        if action in ("CREATE", "REMOVE"):
            if (action == "CREATE") == undo:
                self._to_shadow(arg1)
            else:
                self._from_shadow(arg1)
        elif action == "MOVE":
            if undo:
                self._move_back(arg2, arg1)
            else:
                self._move_back(arg1, arg2)
        elif action in ("ADDATTR", "DELATTR"):
            if (action == "ADDATTR") == undo:
                self._attr_away(arg1, arg2)
            else:
                self._attr_back(arg1, arg2)
        else:
            raise UndoRedoError(f"the undo log holds an unknown action code {opcode} "
                                f"(arguments {arg1!r}, {arg2!r})")

    # ------------------------------------------------------------------ marks
    def mark(self, name: str | None = None) -> int:
        """Mark the current state and return the mark's number (optionally named).

        Raises
        ------
        UndoRedoError
            If undo/redo is not enabled, or another mark has this name.
        TypeError
            If ``name`` is not a string.
        """
        self._check_open()
        self._check_undo_enabled()
        if name is None:
            name = ""
        else:
            if not isinstance(name, str):
                raise TypeError(f"Only strings are allowed as mark names. You passed "
                                f"object: '{name}'")
            if name in self._markers:
                raise UndoRedoError(f"Name '{name}' is already used as a marker name. Try "
                                    f"another one.")
        self._check_writable()
        markid = self._curmark + 1
        self._log("MARK", str(markid), name)
        if name:
            self._markers[name] = markid
        self._curmark = markid
        self._nmarks = markid + 1
        self._seqmarkers.append(self._curaction)
        with self._undo_pause():
            self._new_mark_group(markid)
        return markid

    def get_current_mark(self) -> int:
        """The number of the current mark (0, the implicit mark, after ``enable_undo``)."""
        self._check_open()
        self._check_undo_enabled()
        return self._curmark

    def _get_mark_id(self, mark: int | str) -> int:
        if isinstance(mark, int):
            return mark
        if isinstance(mark, str):
            if mark not in self._markers:
                raise UndoRedoError(f"The mark that you have specified has not been found in "
                                    f"the internal marker list: {sorted(self._markers)!r}")
            return self._markers[mark]
        raise TypeError(f"Parameter mark can only be an integer or a string, and you passed "
                        f"a type <{type(mark)}>")

    def _get_final_action(self, markid: int) -> int:
        """The log row of mark ``markid`` (past the end for later marks, 0 for earlier)."""
        if markid > self._nmarks - 1:
            return int(self._actionlog.nrows)
        if markid <= 0:
            return 0
        return self._seqmarkers[markid]

    # ------------------------------------------------------------------ moving in the log
    def _doundo(self, finalaction: int, direction: int) -> None:
        """Replay the log from the current action towards ``finalaction``: backwards
        (undoing, ``direction`` -1) or forwards (redoing, 1)."""
        log = self._actionlog
        if direction < 0:
            rows = log.read(finalaction + 1, self._curaction + 1)[::-1]
        else:
            rows = log.read(self._curaction, finalaction)
        for opcode, arg1, arg2 in zip(rows["opcode"], rows["arg1"], rows["arg2"], strict=True):
            if opcode != OPCODES["MARK"]:
                self._apply(int(opcode), arg1.decode("utf-8"), arg2.decode("utf-8"),
                            undo=direction < 0)
            elif direction > 0:
                self._curmark = int(arg1)
            else:
                self._curmark = max(int(arg1) - 1, 0)
            self._curaction += direction

    def undo(self, mark: int | str | None = None) -> None:
        """Go back to a past mark (default: the last one before the current state).

        Raises
        ------
        UndoRedoError
            If undo/redo is not enabled, the mark is unknown, or it is not older than the
            current state.
        """
        self._check_open()
        self._check_undo_enabled()
        log = self._actionlog
        if mark is None:
            markid = self._curmark
            if log.cols.opcode[self._curaction] == OPCODES["MARK"]:
                markid -= 1  # standing on a mark: go to the one before
        else:
            markid = self._get_mark_id(mark)
        finalaction = self._get_final_action(markid)
        if finalaction > self._curaction:
            raise UndoRedoError(f"Mark ``{mark}`` is newer than the current mark. Use "
                                f"`redo()` or `goto()` instead.")
        self._check_writable()
        self._doundo(finalaction - 1, -1)
        if self._curaction < log.nrows - 1:
            self._curaction += 1
        self._curmark = int(log.cols.arg1[self._curaction])

    def redo(self, mark: int | str | None = None) -> None:
        """Go forward to a future mark (default: the next one; -1: the end of the log).

        Nothing happens at the end of the log.

        Raises
        ------
        UndoRedoError
            If undo/redo is not enabled, the mark is unknown, or it is older than the
            current state.
        """
        self._check_open()
        self._check_undo_enabled()
        log = self._actionlog
        if self._curaction >= log.nrows - 1:
            return
        if mark is None:
            mark = self._curmark + 1
        elif mark == -1:
            mark = self._nmarks
        finalaction = self._get_final_action(self._get_mark_id(mark))
        if finalaction < self._curaction + 1:
            raise UndoRedoError(f"Mark ``{mark}`` is older than the current mark. Use "
                                f"`redo()` or `goto()` instead.")
        self._check_writable()
        self._curaction += 1
        self._doundo(finalaction, 1)
        if self._curmark < self._nmarks - 1:
            self._curmark += 1
        self._curaction = min(self._curaction, int(log.nrows) - 1)

    def goto(self, mark: int | str) -> None:
        """Go to a mark, past or future (-1: the end of the log).

        Raises
        ------
        UndoRedoError
            If undo/redo is not enabled or the mark is unknown.
        """
        self._check_open()
        self._check_undo_enabled()
        if mark == -1:
            mark = self._nmarks
        if self._get_final_action(self._get_mark_id(mark)) < self._curaction:
            self.undo(mark)
        else:
            self.redo(mark)

