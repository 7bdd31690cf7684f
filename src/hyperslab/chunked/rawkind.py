"""Which datasets the chunk engine serves, and how: :class:`RawKind` and :func:`raw_kind`
(decided once per dataset from its type and filter pipeline, which cannot change).

Re-exported by :mod:`~hyperslab.chunked.engine`.
"""

from __future__ import annotations

import enum

from hyperslab.codecs.deflate import DeflatePipeline
from hyperslab.codecs.ids import BLOSC2 as BLOSC2_ID
from hyperslab.storage.datasets import Dataset


class RawKind(enum.Enum):
    """How a dataset's chunks are stored, as far as the engine is concerned."""

    PLAIN = "plain"
    """No filter: a chunk's bytes are its elements in C order."""
    BLOSC2 = "blosc2"
    """Blosc2 is the only filter: a chunk is a Blosc2 frame (b2nd for rank 2..8)."""
    DEFLATE = "deflate"
    """``[deflate]`` or ``[shuffle, deflate]`` (PyTables' zlib): reads of many chunks only
    (see :class:`~hyperslab.codecs.deflate.DeflatePipeline`)."""


def raw_kind(dataset: Dataset) -> RawKind | None:
    """Tell whether the engine can serve ``dataset``, and how (None: HDF5's path only)."""
    dtype = dataset.dtype
    if dataset.chunks is None or dataset.is_scalar or dataset.is_null or dtype.hasobject:
        return None
    if not dataset.raw_itemsize_matches:
        return None  # HDF5 converts this type (e.g. long doubles): its raw bytes are not ours
    steps = dataset.pipeline()
    if not steps:
        return RawKind.PLAIN
    if len(steps) == 1 and steps[0].filter_id == BLOSC2_ID:
        return RawKind.BLOSC2
    # Not strings: h5py cuts them at their first NUL (null-terminated in the file).
    plain_strings = dtype.base.kind == "S" and dtype.fields is None
    deflate = DeflatePipeline.from_steps(steps) is not None and not plain_strings
    return RawKind.DEFLATE if deflate else None


__all__ = ["RawKind", "raw_kind"]
