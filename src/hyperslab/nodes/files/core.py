"""The file as its mixins see it: what the parts of File use of each other (for mypy).

:class:`~hyperslab.nodes.files.file.File` is put together from mixins, one module per job:
finding and loading nodes (``lookup``), creating them (``creation``), removing, renaming and
moving them (``editing``) and walking the tree (``walking``).  Each uses members that
``File`` or another mixin defines, and hands the file to the nodes it makes as their
:class:`~hyperslab.nodes.tree.owner.NodeOwner`.  :class:`FileCore` declares those members;
the mixins derive from :data:`FileMixin`, which is :class:`FileCore` for type checkers and
``object`` at run time.  So mypy checks each mixin against these declarations, and ``File``
(an explicit subclass of the protocol, through its mixins) against them and against
:class:`~hyperslab.nodes.tree.owner.NodeOwner`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from hyperslab.nodes.tree.owner import NodeOwner

if TYPE_CHECKING:
    from hyperslab.nodes.files.flushguard import FlushGuard
    from hyperslab.nodes.files.nodecache import NodeCache
    from hyperslab.nodes.tree.group import Group, RootGroup
    from hyperslab.nodes.tree.node import Node
    from hyperslab.options import FileOptions


class FileCore(NodeOwner, Protocol):
    """The members of a :class:`~hyperslab.nodes.files.file.File` that its mixins share.

    The attributes that ``File.__init__`` sets are declared as such (settable), where
    :class:`~hyperslab.nodes.tree.owner.NodeOwner` shows them to nodes as read-only.
    """

    filename: str
    mode: str
    root: RootGroup
    _options: FileOptions
    _workers: int
    _unflushed: set[Any]
    _guard: FlushGuard
    _cache: NodeCache
    _loading: threading.RLock

    def _check_open(self) -> None: ...

    def _as_group(self, where: Node | str) -> Group: ...

    def _parent_for_new(self, where: Node | str, createparents: bool) -> Group: ...

    def _new_group(self, parent: Group, name: str, title: str, filters: Any) -> Group: ...

    def create_table(self, *args: Any, **kwargs: Any) -> Any: ...

    def _log_create(self, node: Node) -> None: ...

    def _remove_logged(self, node: Node) -> bool: ...


if TYPE_CHECKING:
    FileMixin = FileCore
else:
    FileMixin = object
"""The base of File's mixins: :class:`FileCore` to type checkers, ``object`` at run time."""
