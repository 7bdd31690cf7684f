"""PyTables' ``tables.nodes.filenode``: binary files stored in EArrays of bytes."""

from __future__ import annotations

from hyperslab.nodes.files.filenode import (
    NodeType,
    NodeTypeVersions,
    RAFileNode,
    RawPyTablesIO,
    ROFileNode,
    new_node,
    open_node,
    read_from_filenode,
    save_to_filenode,
)

__all__ = ["NodeType", "NodeTypeVersions", "RAFileNode", "ROFileNode", "RawPyTablesIO",
           "new_node", "open_node", "read_from_filenode", "save_to_filenode"]
