"""HDF5 filter pipelines <-> PyTables :class:`~hyperslab.codecs.filters.Filters`.

A pipeline is a tuple of :class:`FilterStep` ``(filter_id, flags, cd_values, name)``, in the
order HDF5 applies the filters when writing.  :func:`filters_to_pipeline` gives the steps
PyTables 3.11 asks HDF5 for (``H5ARRAYOmake``/``H5TBOmake_table``), for the storage layer to
pass to ``H5Pset_filter`` one by one; :func:`pipeline_to_filters` reads any pipeline back
into the ``Filters`` PyTables reports for it.

What the stored cd_values look like
-----------------------------------
Some filters complete their cd_values when the dataset is created (their ``set_local``):
HDF5's shuffle stores the type size, Blosc stores ``(2, 2, typesize, chunkbytes)`` in
[0:4] (``typesize`` 1 when above 255), and Blosc2 stores ``(1, ., typesize, chunkbytes)``
in [0:4] and, for chunks of rank 2..16, appends the default codec if missing, the rank and
the chunk dims.  The steps returned here already hold the values ``set_local`` writes in
[0:4] (so they equal what is read back for those slots) but not Blosc2's rank and dims:
which ranks get them depends on the plugin registered at creation time (hdf5plugin: up to
16, PyTables' own: up to 8), so that filter adds them itself.  Blosc2's cd[1] is the block
size PyTables precomputes (:func:`~hyperslab.codecs.blosc2_filter.compute_blosc2_blocksize`)
unless another is asked for; 0 lets the filter compute the same value for every chunk.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from hyperslab._typing import Shape
from hyperslab.codecs import ids
from hyperslab.codecs.blosc2_filter import (
    DEFAULT_CLEVEL,
    DEFAULT_FILTER_CODE,
    MAX_BUFFERSIZE,
    codec_code,
    codec_name,
    compute_blosc2_blocksize,
)
from hyperslab.codecs.filters import Filters
from hyperslab.errors import FilterNotAvailableError, FiltersError


class FilterStep(NamedTuple):
    """One filter of an HDF5 pipeline."""

    filter_id: int
    """The HDF5 filter id (see :mod:`hyperslab.codecs.ids`)."""
    flags: int
    """``H5Z_FLAG_OPTIONAL`` (1) or ``H5Z_FLAG_MANDATORY`` (0)."""
    cd_values: tuple[int, ...]
    """The filter's client data values."""
    name: str = ""
    """The filter's name (as stored in the file, or :func:`~hyperslab.codecs.ids.filter_name`)."""

    @classmethod
    def from_tuple(cls, step: Sequence[Any]) -> FilterStep:
        """Build a step from ``(id, flags, cd_values[, name])``, e.g. h5py's ``get_filter(i)``.

        A ``bytes`` name is decoded (invalid UTF-8 replaced).

        Raises
        ------
        ValueError
            If `step` does not have 3 or 4 items.
        """
        if isinstance(step, FilterStep):
            return step
        items = tuple(step)
        if len(items) not in (3, 4):
            raise ValueError(f"a filter step is (id, flags, cd_values[, name]), got {step!r}")
        name: Any = items[3] if len(items) == 4 else ""
        if isinstance(name, bytes | bytearray):
            name = bytes(name).decode("utf-8", errors="replace")
        return cls(
            operator.index(items[0]),
            operator.index(items[1]),
            tuple(operator.index(v) for v in items[2]),
            str(name),
        )


_OPTIONAL: Final = ids.H5Z_FLAG_OPTIONAL
_MANDATORY: Final = ids.H5Z_FLAG_MANDATORY

_CLASS_CODES: Final[dict[str, tuple[int, int]]] = {
    # class -> (int(float(VERSION) * 10), PyTables' TablesType), both put in bzip2/lzo cd.
    "TABLE": (27, 0),
    "EARRAY": (11, 2),
    "VLARRAY": (14, 3),
    "CARRAY": (11, 4),
    "INDEXARRAY": (11, 2),
    "CACHEARRAY": (11, 2),
    "LASTROWARRAY": (11, 4),
}
"""What PyTables puts in cd_values[1:3] of bzip2 and LZO for each chunked leaf class
(EArrays get VERSION '1.1' from CArray's creation code; index arrays are E/CArrays)."""

_BLOSC_MAX_TYPESIZE: Final = 255
_BLOSC_MAX_BUFFERSIZE: Final = 2**31 - 1 - 16
_BLOSC_FORMAT: Final = (2, 2)  # hdf5-blosc's FILTER_BLOSC_VERSION, BLOSC_VERSION_FORMAT
_BLOSC2_REVISION: Final = 1


def _check_sizes(typesize: Any, chunkshape: Any, basetypesize: Any) -> tuple[int, Shape, int]:
    try:
        size = operator.index(typesize)
        dims = tuple(operator.index(d) for d in chunkshape)
        base = size if basetypesize is None else operator.index(basetypesize)
    except TypeError:
        raise ValueError(
            "typesize, basetypesize and chunkshape must be integers, got "
            f"typesize={typesize!r}, basetypesize={basetypesize!r}, chunkshape={chunkshape!r}"
        ) from None
    if size < 1 or base < 1 or size % base:
        raise ValueError(
            f"typesize must be a positive multiple of basetypesize, got typesize={typesize!r}, "
            f"basetypesize={basetypesize!r}"
        )
    if not dims or min(dims) < 1:
        raise ValueError(f"chunkshape must hold positive integers, got {chunkshape!r}")
    return size, dims, base


def filters_to_pipeline(
    filters: Filters,
    typesize: int,
    chunkshape: Sequence[int],
    *,
    basetypesize: int | None = None,
    classname: str = "CARRAY",
    blosc2_blocksize: int | None = None,
) -> tuple[FilterStep, ...]:
    """Return the HDF5 filter steps PyTables writes for `filters`.

    The order is HDF5's shuffle (not with Blosc/Blosc2, which shuffle inside), the
    compressor, then Fletcher32 (PyTables >= 3.10).  Every filter but Fletcher32 is
    optional (``H5Z_FLAG_OPTIONAL``), as in PyTables.

    Parameters
    ----------
    filters : Filters
        What to write.
    typesize : int
        Size in bytes of one dataset element (``H5Tget_size`` of the file type).
    chunkshape : sequence of int
        The dataset's chunk shape.
    basetypesize : int, optional
        For HDF5 array types, the size of the base type, which Blosc and Blosc2 use as
        their type size; defaults to `typesize`.
    classname : str, default 'CARRAY'
        The leaf's PyTables CLASS; only bzip2's cd_values depend on it.
    blosc2_blocksize : int, optional
        Blosc2 block size in bytes for cd[1]; ``None`` computes PyTables' value and 0 lets
        the filter choose per chunk (the same value).

    Returns
    -------
    tuple of FilterStep
        Empty when nothing is to be applied.

    Raises
    ------
    FilterNotAvailableError
        For ``complib='lzo'`` (read from a file): no installable package writes LZO.
    FiltersError
        For a foreign compressor (``complevel == -1``), an unknown `classname`, or a chunk
        too large for Blosc/Blosc2.
    ValueError
        For non-positive sizes.
    """
    size, dims, base = _check_sizes(typesize, chunkshape, basetypesize)
    if filters.complevel < 0:
        raise FiltersError(
            f"cannot write data with the foreign compression library {filters.complib!r}"
        )
    steps: list[FilterStep] = []
    complib = filters.complib
    if filters.complevel > 0 and complib is not None:
        if filters.shuffle and not complib.startswith("blosc"):
            steps.append(FilterStep(ids.SHUFFLE, _OPTIONAL, (size,), "shuffle"))
        steps.append(_compressor_step(filters, complib, size, dims, base, classname,
                                      blosc2_blocksize))
    if filters.fletcher32:
        steps.append(FilterStep(ids.FLETCHER32, _MANDATORY, (), "fletcher32"))
    return tuple(steps)


def _compressor_step(
    filters: Filters,
    complib: str,
    size: int,
    dims: Shape,
    base: int,
    classname: str,
    blosc2_blocksize: int | None,
) -> FilterStep:
    lib, _, codec = complib.partition(":")
    if lib == "zlib":
        return FilterStep(ids.DEFLATE, _OPTIONAL, (filters.complevel,), "deflate")
    if lib in ("bzip2", "lzo"):
        return _bzip2_step(filters.complevel, lib, classname)
    chunkbytes = size * math.prod(dims)
    limit = _BLOSC_MAX_BUFFERSIZE if lib == "blosc" else MAX_BUFFERSIZE
    if chunkbytes > limit:
        raise FiltersError(
            f"a {lib} chunk holds at most {limit} bytes, "
            f"got {chunkbytes} (chunkshape {dims}, typesize {size})"
        )
    compcode = codec_code(codec) if codec else None
    head: tuple[int, ...]
    if lib == "blosc":
        head = (*_BLOSC_FORMAT, base if base <= _BLOSC_MAX_TYPESIZE else 1, chunkbytes)
        step_id, name = ids.BLOSC, "blosc"
    elif lib == "blosc2":
        blocksize = _blosc2_blocksize(blosc2_blocksize, chunkbytes, size, filters, compcode)
        head = (_BLOSC2_REVISION, blocksize, base, chunkbytes)
        step_id, name = ids.BLOSC2, "blosc2"
    else:  # pragma: no cover - Filters only admits the libraries above
        raise FiltersError(f"cannot write compression library {complib!r}")
    cd: tuple[int, ...] = (*head, filters.complevel, filters.shuffle_bitshuffle)
    if compcode is not None:
        cd = (*cd, compcode)
    return FilterStep(step_id, _OPTIONAL, cd, name)


def _bzip2_step(level: int, lib: str, classname: str) -> FilterStep:
    try:
        version, class_code = _CLASS_CODES[classname.upper()]
    except (KeyError, AttributeError):
        raise FiltersError(
            f"unknown leaf class {classname!r}; known: {', '.join(_CLASS_CODES)}"
        ) from None
    if lib == "lzo":
        raise FilterNotAvailableError(
            f"cannot write complib 'lzo' (HDF5 filter {ids.LZO}): {ids.plugin_hint(ids.LZO)}"
        )
    return FilterStep(ids.BZIP2, _OPTIONAL, (level, version, class_code), "bzip2")


def _blosc2_blocksize(
    requested: int | None, chunkbytes: int, size: int, filters: Filters, compcode: int | None
) -> int:
    if requested is None:
        codec = 0 if compcode is None else compcode
        return compute_blosc2_blocksize(chunkbytes, size, filters.complevel, codec)
    blocksize = operator.index(requested)
    if blocksize < 0:
        raise ValueError(f"blosc2_blocksize must be >= 0, got {requested!r}")
    return blocksize


# ----------------------------------------------------------------------------- reading


def _blosc_like(step: FilterStep, family: str) -> tuple[str, int, int]:
    """Return (complib, complevel, shuffle code) from Blosc/Blosc2 cd_values."""
    cd = step.cd_values
    level = cd[4] if len(cd) > 4 else DEFAULT_CLEVEL
    shuffle = cd[5] if len(cd) > 5 else DEFAULT_FILTER_CODE
    complib = family
    if len(cd) > 6:
        complib = f"{family}:{_blosc_codec_name(cd[6]) if family == 'blosc' else codec_name(cd[6])}"
    return complib, level, shuffle


_BLOSC1_CODECS: Final = {0: "blosclz", 1: "lz4", 2: "lz4hc", 3: "snappy", 4: "zlib", 5: "zstd"}


def _blosc_codec_name(code: int) -> str:
    return _BLOSC1_CODECS.get(code, f"codec{code}")


def _level(cd: tuple[int, ...], default: int) -> int:
    return min(cd[0], 9) if cd else default


def pipeline_to_filters(steps: Iterable[FilterStep | Sequence[Any]]) -> Filters:
    """Return the :class:`Filters` that PyTables reports for a dataset with `steps`.

    Steps may be :class:`FilterStep` or ``(id, flags, cd_values[, name])`` tuples such as
    h5py's ``dcpl.get_filter(i)``.  Filters are recognized by id (not by the stored name):
    deflate -> ``'zlib'``, bzip2, LZO, Blosc and Blosc2 (``'blosc:<codec>'`` /
    ``'blosc2:<codec>'`` when cd[6] is present; cd[5] 1/2 -> shuffle/bitshuffle; missing
    values take the filters' defaults), HDF5 shuffle, Fletcher32, and SZIP as PyTables'
    foreign ``complib='szip'`` (``complevel == -1``).

    Other filters (LZF, stand-alone LZ4/Zstd, Bitshuffle, N-bit, scale-offset, unknown ids)
    are never dropped silently as PyTables does (it reports such datasets as uncompressed):
    when no known compressor is present, the first of them becomes a foreign complib named
    by :func:`~hyperslab.codecs.ids.filter_name` (``'lzf'``, ``'zstd'``, ``'filter_<id>'``)
    with ``complevel == -1``; when a known compressor is present, they are ignored (see
    :func:`unrecognized_steps`).  Levels above 9 in a file are read as 9.

    Examples
    --------
    >>> pipeline_to_filters([(2, 1, (8,), b"shuffle"), (1, 1, (4,), b"deflate")])
    Filters(complevel=4, complib='zlib', shuffle=True, bitshuffle=False, \
fletcher32=False, least_significant_digit=None)
    >>> pipeline_to_filters([(32000, 1, (4, 261, 200), b"lzf")])
    Filters(complib='lzf', shuffle=False, bitshuffle=False, fletcher32=False, \
least_significant_digit=None)
    """
    kwargs: dict[str, Any] = {"complevel": 0, "complib": None}
    shuffle = bitshuffle = fletcher32 = False
    foreign: str | None = None
    for raw in steps:
        step = FilterStep.from_tuple(raw)
        fid, cd = step.filter_id, step.cd_values
        if fid == ids.SHUFFLE:
            shuffle = True
        elif fid == ids.FLETCHER32:
            fletcher32 = True
        elif fid == ids.DEFLATE:
            kwargs.update(complib="zlib", complevel=_level(cd, 6))
        elif fid == ids.BZIP2:
            kwargs.update(complib="bzip2", complevel=_level(cd, 9))
        elif fid == ids.LZO:
            kwargs.update(complib="lzo", complevel=_level(cd, 1))
        elif fid in (ids.BLOSC, ids.BLOSC2):
            complib, level, code = _blosc_like(step, "blosc" if fid == ids.BLOSC else "blosc2")
            kwargs.update(complib=complib, complevel=min(level, 9))
            shuffle = shuffle or code == 1
            bitshuffle = bitshuffle or code == 2
        elif fid == ids.SZIP:
            kwargs.update(complib="szip", complevel=1)
        elif foreign is None:
            foreign = ids.filter_name(fid)
    if kwargs["complib"] is None and foreign is not None:
        kwargs.update(complib=foreign, complevel=1)
    return Filters._from_stored(
        shuffle=shuffle, bitshuffle=bitshuffle, fletcher32=fletcher32, **kwargs
    )


_DESCRIBED: Final = frozenset(
    {ids.SHUFFLE, ids.FLETCHER32, ids.DEFLATE, ids.BZIP2, ids.LZO, ids.BLOSC, ids.BLOSC2,
     ids.SZIP}
)


def unrecognized_steps(steps: Iterable[FilterStep | Sequence[Any]]) -> tuple[FilterStep, ...]:
    """Return the steps that a PyTables :class:`Filters` cannot describe (LZF, N-bit, ...)."""
    parsed = (FilterStep.from_tuple(s) for s in steps)
    return tuple(s for s in parsed if s.filter_id not in _DESCRIBED)


def sole_blosc2_step(steps: Iterable[FilterStep | Sequence[Any]]) -> FilterStep | None:
    """Return the Blosc2 step if it is the only filter of the pipeline, else ``None``.

    Only then are the stored chunks plain Blosc2 frames that can be read and written
    raw (PyTables' and b2h5py's condition for their fast paths).
    """
    parsed = [FilterStep.from_tuple(s) for s in steps]
    if len(parsed) == 1 and parsed[0].filter_id == ids.BLOSC2:
        return parsed[0]
    return None


__all__ = [
    "FilterStep",
    "filters_to_pipeline",
    "pipeline_to_filters",
    "sole_blosc2_step",
    "unrecognized_steps",
]
