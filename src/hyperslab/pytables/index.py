"""PyTables' ``tables.index``: column indexes and their defaults."""

from __future__ import annotations

from hyperslab.nodes.indexes.layout import DEFAULT_INDEX_FILTERS
from hyperslab.nodes.indexes.store import ColumnIndex

Index = ColumnIndex
"""The index of a table column (``Column.index``)."""

default_index_filters = DEFAULT_INDEX_FILTERS
"""The filters of new indexes when none are given."""

default_auto_index = True
"""Whether tables keep their indexes up to date when rows change, unless told otherwise."""

__all__ = ["Index", "default_auto_index", "default_index_filters"]
