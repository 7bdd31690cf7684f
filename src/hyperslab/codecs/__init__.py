"""Codecs layer: filter ids, PyTables Filters <-> HDF5 pipelines, Blosc2 chunk frames.

It holds the filter registry (``ids``), PyTables' ``Filters`` (``filters``) and their HDF5
pipelines (``pipeline``: plain :class:`~hyperslab.codecs.pipeline.FilterStep` tuples that the
storage layer hands to HDF5), the Blosc2 filter's parameters and block shapes
(``blosc2_filter``, ``blockshape``), and encoding and decoding of its chunk frames, whole or
by region (``cframe*``).  It never imports h5py, and imports nothing of hyperslab's other
layers but the shared ``errors``, ``options``, ``_typing`` and ``parameters`` modules.
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
