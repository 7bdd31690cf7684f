"""codecs layer (see DESIGN.md): filter ids, PyTables Filters <-> HDF5 pipelines, Blosc2 chunks.

Never imports h5py: pipelines are plain :class:`FilterStep` tuples that the storage layer
passes to HDF5.
"""

from __future__ import annotations

from hyperslab.codecs.blosc2_filter import (
    Blosc2Params,
    compute_b2nd_block_shape,
    compute_blosc2_blocksize,
    decode_chunk,
    encode_chunk,
    pad_to_chunkshape,
)
from hyperslab.codecs.filters import ALL_COMPLIBS, Filters
from hyperslab.codecs.ids import filter_name, plugin_hint
from hyperslab.codecs.pipeline import (
    FilterStep,
    filters_to_pipeline,
    pipeline_to_filters,
    sole_blosc2_step,
    unrecognized_steps,
)

__all__ = [
    "ALL_COMPLIBS",
    "Blosc2Params",
    "FilterStep",
    "Filters",
    "compute_b2nd_block_shape",
    "compute_blosc2_blocksize",
    "decode_chunk",
    "encode_chunk",
    "filter_name",
    "filters_to_pipeline",
    "pad_to_chunkshape",
    "pipeline_to_filters",
    "plugin_hint",
    "sole_blosc2_step",
    "unrecognized_steps",
]
