"""The table an index belongs to, as the index code sees it.

Indexes are stored beside their table and follow it (rows appended, modified, the
table's chunk shape and byte order), but the table classes sit above this subpackage
(:mod:`hyperslab.nodes.tables`) and may not be imported from it.  The index code names
them through these protocols, which :class:`~hyperslab.nodes.tables.table.Table` and its
:class:`~hyperslab.nodes.tables.columns.Column` implement (mypy checks it wherever a table
hands itself to an index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from hyperslab.nodes.tree.group import Group
    from hyperslab.nodes.tree.owner import NodeOwner


class IndexedColumn(Protocol):
    """A column an index can hold (one scalar value per row), read by row ranges."""

    @property
    def dtype(self) -> np.dtype[Any]: ...

    def __getitem__(self, key: Any) -> Any: ...


class TableIndexing(Protocol):
    """The table's bookkeeping of its indexes."""

    def reload(self) -> None: ...


class TableSource(Protocol):
    """The members of a table that its indexes use."""

    @property
    def _v_file(self) -> NodeOwner: ...

    @property
    def _v_pathname(self) -> str: ...

    @property
    def _g_h5id(self) -> Any: ...

    @property
    def parent(self) -> Group: ...

    @property
    def nrows(self) -> int: ...

    @property
    def chunkshape(self) -> tuple[int, ...] | None: ...

    @property
    def byteorder(self) -> str: ...

    @property
    def _expectedrows(self) -> int: ...

    @property
    def _indexing(self) -> TableIndexing: ...

    def _ready(self) -> object: ...

    def _g_check_writable(self) -> None: ...

    def _indexable_column(self, colpath: str) -> IndexedColumn: ...
