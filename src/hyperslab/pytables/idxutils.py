"""PyTables' ``tables.idxutils``: the sizes of column indexes."""

from __future__ import annotations

from hyperslab.nodes.indexes.sizes import (
    calc_chunksize,
    compute_blocksize,
    compute_chunksize,
    compute_slicesize,
    reduction_level,
)

computechunksize = compute_chunksize
computeslicesize = compute_slicesize
computeblocksize = compute_blocksize
get_reduction_level = reduction_level

__all__ = ["calc_chunksize", "computeblocksize", "computechunksize", "computeslicesize",
           "get_reduction_level"]
