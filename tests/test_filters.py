"""The codecs layer: filter ids, Filters, pipelines and Blosc2 chunks, against PyTables/h5py.

PyTables is the oracle for ``Filters`` (constructor, repr, packing) and for the pipelines
it writes; h5py + hdf5plugin are the oracle for the Blosc2 filter's chunk frames.
"""

from __future__ import annotations

import copy
import dataclasses
import doctest
import inspect
import pickle
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import blosc2
import h5py
import hdf5plugin
import numpy as np
import pytest
import tables
import tables.leaf

from hyperslab.codecs import blosc2_filter, filters, ids, pipeline
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
from hyperslab.errors import (
    FilterNotAvailableError,
    FiltersError,
    FiltersWarning,
)

TABLE_DTYPE = np.dtype([("a", "<i4"), ("b", "<f8", (2,)), ("c", "S5")])  # 25 bytes
WIDE_DTYPE = np.dtype([("a", "S300")])  # above Blosc's 255-byte typesize limit


@pytest.fixture(autouse=True)
def _no_host_cache_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep PyTables from sizing Blosc2 chunks by this host's L3 (and writing ~/.pytables-*)."""
    monkeypatch.setattr(tables.leaf, "get_cpu_info", lambda: {})


def steps_of(dset: h5py.Dataset) -> tuple[FilterStep, ...]:
    dcpl = dset.id.get_create_plist()
    return tuple(FilterStep.from_tuple(dcpl.get_filter(i)) for i in range(dcpl.get_nfilters()))


def create_with_steps(
    group: h5py.Group,
    name: str,
    shape: tuple[int, ...],
    maxshape: tuple[int | None, ...],
    dtype: Any,
    chunks: tuple[int, ...],
    steps: Sequence[FilterStep],
) -> h5py.Dataset:
    """Create a dataset with exactly `steps` in its pipeline (as the storage layer will)."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    for step in steps:
        dcpl.set_filter(step.filter_id, step.flags, step.cd_values)
    space = h5py.h5s.create_simple(
        shape, tuple(h5py.h5s.UNLIMITED if m is None else m for m in maxshape)
    )
    tid = h5py.h5t.py_create(np.dtype(dtype), logical=True)
    return h5py.Dataset(h5py.h5d.create(group.id, name.encode(), tid, space, dcpl=dcpl))


def without_names(steps: Sequence[FilterStep]) -> list[tuple[int, int, tuple[int, ...]]]:
    return [(s.filter_id, s.flags, s.cd_values) for s in steps]


# ============================================================================ ids


@pytest.mark.parametrize(
    ("fid", "name", "hint"),
    [
        (ids.DEFLATE, "deflate", "HDF5"),
        (ids.SHUFFLE, "shuffle", "HDF5"),
        (ids.FLETCHER32, "fletcher32", "HDF5"),
        (ids.SZIP, "szip", "HDF5"),
        (ids.LZO, "lzo", "no Python package (LZO is not in hdf5plugin)"),
        (ids.BZIP2, "bzip2", "hdf5plugin"),
        (ids.LZF, "lzf", "h5py"),
        (ids.BLOSC, "blosc", "hdf5plugin"),
        (ids.LZ4, "lz4", "hdf5plugin"),
        (ids.BSHUF, "bitshuffle", "hdf5plugin"),
        (ids.ZSTD, "zstd", "hdf5plugin"),
        (ids.BLOSC2, "blosc2", "hdf5plugin"),
        (np.uint16(32026), "blosc2", "hdf5plugin"),
        (40000, "filter_40000", "40000"),
    ],
)
def test_filter_name_and_plugin_hint(fid: int, name: str, hint: str) -> None:
    assert filter_name(fid) == name
    assert hint in plugin_hint(fid)


def test_ids_match_hdf5plugin_and_h5py() -> None:
    for short, fid in hdf5plugin.FILTERS.items():
        assert fid in ids.known_filter_ids(), short
    assert (ids.DEFLATE, ids.SHUFFLE, ids.FLETCHER32, ids.SZIP) == (
        h5py.h5z.FILTER_DEFLATE,
        h5py.h5z.FILTER_SHUFFLE,
        h5py.h5z.FILTER_FLETCHER32,
        h5py.h5z.FILTER_SZIP,
    )
    assert ids.SCALEOFFSET == h5py.h5z.FILTER_SCALEOFFSET
    assert ids.NBIT == h5py.h5z.FILTER_NBIT
    assert ids.LZF == h5py.h5z.FILTER_LZF


@pytest.mark.parametrize(("bad", "exc"), [(-1, ValueError), (70000, ValueError),
                                          ("1", TypeError), (1.0, TypeError), (True, TypeError)])
def test_filter_name_rejects_bad_ids(bad: Any, exc: type[Exception]) -> None:
    with pytest.raises(exc, match=repr(bad) if exc is TypeError else str(bad)):
        filter_name(bad)
    with pytest.raises(exc):
        plugin_hint(bad)


# ============================================================================ Filters


FILTER_ARGS: list[dict[str, Any]] = [
    {},
    {"complevel": 0, "bitshuffle": True},
    {"complevel": 0, "complib": "nonsense"},
    {"complevel": 0, "fletcher32": 1, "least_significant_digit": 3},
    {"complevel": 1},
    {"complevel": 9, "shuffle": False, "fletcher32": True},
    {"complevel": 1.7},
    {"complevel": True},
    {"complevel": np.int64(4), "complib": "bzip2"},
    {"complevel": 1, "least_significant_digit": 0},
    {"complevel": 1, "least_significant_digit": -3},
    {"complevel": 2, "least_significant_digit": np.int16(127)},
    {"complevel": 3, "complib": "blosc", "shuffle": True, "bitshuffle": True},
    {"complevel": 3, "complib": "blosc2:zstd", "shuffle": False, "bitshuffle": True},
    *({"complevel": 5, "complib": lib, "fletcher32": True} for lib in ALL_COMPLIBS
      if lib != "lzo"),
]

FILTER_ERRORS: list[dict[str, Any]] = [
    {"complevel": 10},
    {"complevel": -1},
    {"complevel": 1, "complib": "foo"},
    {"complevel": 1, "complib": None},
    {"complevel": 1, "complib": "BLOSC"},
    {"complevel": 1, "complib": "blosc:snappy"},
    {"complevel": 1, "bitshuffle": True},
    {"complevel": 1, "complib": "bzip2", "bitshuffle": True},
]


@pytest.mark.parametrize("kwargs", FILTER_ARGS, ids=repr)
def test_filters_like_pytables(kwargs: dict[str, Any]) -> None:
    ours = Filters(**kwargs)
    theirs = tables.Filters(**kwargs)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    for attr in ("complevel", "complib", "shuffle", "bitshuffle", "fletcher32",
                 "least_significant_digit", "shuffle_bitshuffle"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert ours._pack() == int(theirs._pack())
    assert repr(Filters._unpack(ours._pack())) == repr(tables.Filters._unpack(theirs._pack()))


def test_filters_signature_is_pytables_minus_private_flag() -> None:
    ours = inspect.signature(Filters).parameters
    theirs = inspect.signature(tables.Filters).parameters
    assert list(ours) == [name for name in theirs if name != "_new"]
    assert [p.default for p in ours.values()] == [theirs[name].default for name in ours]


@pytest.mark.parametrize("kwargs", FILTER_ERRORS, ids=repr)
def test_filters_errors_like_pytables(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as theirs:
        tables.Filters(**kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        Filters(**kwargs)
    offending = kwargs.get("complib", kwargs["complevel"]) if "bitshuffle" not in kwargs else "bit"
    assert str(offending).lower() in str(ours.value).lower()


def test_filters_type_errors() -> None:
    with pytest.raises(TypeError, match="'1'"):
        Filters(complevel="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'x'"):
        Filters(complevel=1, least_significant_digit="x")  # type: ignore[arg-type]


def test_least_significant_digit_out_of_int8_is_valueerror() -> None:
    # PyTables lets NumPy raise OverflowError; a ValueError naming the value is clearer.
    with pytest.raises(OverflowError):
        tables.Filters(complevel=1, least_significant_digit=200)
    with pytest.raises(ValueError, match="200"):
        Filters(complevel=1, least_significant_digit=200)


def test_lzo_falls_back_to_zlib_with_a_warning_like_pytables() -> None:
    assert tables.which_lib_version("lzo") is None  # this PyTables build has no LZO either
    with pytest.warns(tables.exceptions.FiltersWarning):
        theirs = tables.Filters(complevel=5, complib="lzo")
    with pytest.warns(FiltersWarning, match="lzo"):
        ours = Filters(complevel=5, complib="lzo")
    assert repr(ours) == repr(theirs)
    assert ours.complib == "zlib"


@pytest.mark.parametrize("complib", ALL_COMPLIBS)
def test_pack_every_complib_like_pytables(complib: str) -> None:
    """Byte 1 of FILTERS is the position in PyTables' all_complibs: the lists must agree."""
    assert list(ALL_COMPLIBS) == tables.filters.all_complibs
    kwargs = {"complevel": 7, "complib": complib, "shuffle": False, "fletcher32": True,
              "least_significant_digit": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tables.exceptions.FiltersWarning)  # lzo -> zlib
        warnings.simplefilter("ignore", FiltersWarning)
        theirs = tables.Filters(**kwargs)
        ours = Filters(**kwargs)
    assert ours._pack() == int(theirs._pack())
    # Reading a packed value for every id, LZO included, gives PyTables' Filters.
    flags = 0x0D if complib.startswith("blosc") else 0x07  # bitshuffle only with Blosc
    packed = 7 | (ALL_COMPLIBS.index(complib) + 1) << 8 | flags << 16 | 0xFE << 24
    assert repr(Filters._unpack(packed)) == repr(tables.Filters._unpack(np.int64(packed)))
    assert Filters._unpack(packed).complib == complib
    assert Filters._unpack(packed).least_significant_digit == -2


@pytest.mark.parametrize("packed", [0x3010A, 0x1, 0x1001, 0x1005])
def test_unpack_errors_like_pytables(packed: int) -> None:
    with pytest.raises(ValueError):
        tables.Filters._unpack(np.int64(packed))
    with pytest.raises(ValueError, match=r"9|id"):
        Filters._unpack(packed)


def test_unpack_known_values() -> None:
    assert Filters._unpack(65793) == Filters(complevel=1)
    assert Filters._unpack(0x30109) == Filters(complevel=9, fletcher32=True)
    assert Filters._unpack(np.int64(0)) == Filters()


def test_filters_are_immutable_hashable_and_comparable() -> None:
    f = Filters(complevel=5, complib="blosc2:lz4")
    with pytest.raises(AttributeError):
        f.complevel = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        f._complevel = 3
    with pytest.raises(AttributeError):
        f.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        del f.complib
    assert f == Filters(complevel=5, complib="blosc2:lz4")
    assert f != Filters(complevel=5, complib="blosc2:lz4", shuffle=False)
    assert f != "Filters"
    assert len({f, Filters(complevel=5, complib="blosc2:lz4"), Filters()}) == 2
    assert Filters(complevel=1, least_significant_digit=2) == Filters(
        complevel=1, least_significant_digit=np.int8(2)
    )


def test_filters_copy_like_pytables() -> None:
    base = Filters(complevel=3, complib="zlib")
    assert base.copy() == base
    assert repr(base.copy(complib="blosc2", bitshuffle=True)) == repr(
        tables.Filters(complevel=3, complib="zlib").copy(complib="blosc2", bitshuffle=True)
    )
    with pytest.raises(ValueError, match="None"):
        Filters().copy(complevel=1)  # no complib left, as in PyTables
    with pytest.raises(ValueError):
        tables.Filters().copy(complevel=1)
    with pytest.raises(TypeError, match="foobar"):
        base.copy(foobar=42)


@pytest.mark.parametrize(
    "f",
    [Filters(), Filters(complevel=4, complib="blosc:zstd", least_significant_digit=-2),
     Filters._from_stored(complevel=1, complib="szip")],
    ids=repr,
)
def test_filters_pickle_and_copy(f: Filters) -> None:
    assert pickle.loads(pickle.dumps(f)) == f
    assert repr(pickle.loads(pickle.dumps(f))) == repr(f)
    assert copy.copy(f) is f
    assert copy.deepcopy(f) is f


def test_foreign_filters_like_pytables_szip() -> None:
    f = Filters._from_stored(complevel=1, complib="szip", shuffle=True)
    assert f.complevel == -1
    assert repr(f) == (
        "Filters(complib='szip', shuffle=True, bitshuffle=False, fletcher32=False, "
        "least_significant_digit=None)"
    )
    with pytest.raises(ValueError, match="szip"):
        f._pack()
    with pytest.raises(FiltersError, match="szip"):
        filters_to_pipeline(f, 8, (10,))


# ============================================================================ pipelines


PIPELINE_FILTERS: list[Filters] = [
    Filters(),
    Filters(fletcher32=True),
    Filters(complevel=0, shuffle=True, bitshuffle=True),
    *(Filters(complevel=lvl, complib=lib, shuffle=True)
      for lvl, lib in zip([1, 3, 5, 9, 2, 4, 6, 8, 7, 5, 3, 1, 9, 2], sorted(set(ALL_COMPLIBS)
                                                                          - {"lzo"}),
                          strict=True)),
    *(Filters(complevel=3, complib=lib, shuffle=False, fletcher32=True)
      for lib in ("zlib", "bzip2")),
    *(Filters(complevel=6, complib=lib, bitshuffle=True, fletcher32=True)
      for lib in ("blosc", "blosc2", "blosc:lz4", "blosc2:zstd")),
    Filters(complevel=2, complib="blosc2:lz4hc", shuffle=False),
]

# (kind, dtype, shape) of the PyTables leaves; Tables have the compound dtypes.
LEAF_KINDS = [
    ("carray", np.dtype("<f8"), (1000, 100)),
    ("carray", np.dtype("<i2"), (7, 30, 40)),
    ("earray", np.dtype("<i4"), (0, 4)),
    ("table", TABLE_DTYPE, (0,)),
    ("table", WIDE_DTYPE, (0,)),
]


def _make_pytables_leaf(f: Any, name: str, kind: str, dtype: np.dtype[Any],
                        shape: tuple[int, ...], flt: Any) -> Any:
    if kind == "carray":
        return f.create_carray("/", name, atom=tables.Atom.from_dtype(dtype), shape=shape,
                               filters=flt)
    if kind == "earray":
        return f.create_earray("/", name, atom=tables.Atom.from_dtype(dtype), shape=shape,
                               filters=flt, expectedrows=10**6)
    return f.create_table("/", name, description=dtype, filters=flt)


@pytest.fixture(scope="module")
def pytables_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A PyTables file with one leaf per (Filters, leaf kind)."""
    path = tmp_path_factory.mktemp("pt") / "pytables.h5"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tables.leaf, "get_cpu_info", lambda: {})
        with tables.open_file(path, "w") as f:
            for i, ours in enumerate(PIPELINE_FILTERS):
                flt = tables.Filters(**_kwargs(ours))
                for j, (kind, dtype, shape) in enumerate(LEAF_KINDS):
                    _make_pytables_leaf(f, f"n{i}_{j}", kind, dtype, shape, flt)
                # PyTables refuses Blosc2 VLArrays; HDF5 refuses Fletcher32 on variable-length data.
                if not (ours.complib or "").startswith("blosc2") and not ours.fletcher32:
                    f.create_vlarray("/", f"v{i}", atom=tables.Int32Atom(), filters=flt)
    yield path


def _kwargs(f: Filters) -> dict[str, Any]:
    return {"complevel": f.complevel, "complib": f.complib or "zlib", "shuffle": f.shuffle,
            "bitshuffle": f.bitshuffle, "fletcher32": f.fletcher32}


def _classname(kind: str) -> str:
    return {"carray": "CARRAY", "earray": "EARRAY", "table": "TABLE"}[kind]


@pytest.mark.parametrize("index", range(len(PIPELINE_FILTERS)),
                         ids=[repr(f) for f in PIPELINE_FILTERS])
def test_pipeline_both_directions_like_pytables(
    pytables_file: Path, tmp_path: Path, index: int
) -> None:
    ours = PIPELINE_FILTERS[index]
    ours_path = tmp_path / "ours.h5"
    with h5py.File(pytables_file, "r") as theirs, h5py.File(ours_path, "w") as mine:
        for j, (kind, dtype, _) in enumerate(LEAF_KINDS):
            dset = theirs[f"n{index}_{j}"]
            stored = steps_of(dset)
            # PyTables -> us: the Filters PyTables reports for its own leaf.
            with tables.open_file(pytables_file, "r") as ptf:
                reported = ptf.get_node(f"/n{index}_{j}").filters
            assert repr(pipeline_to_filters(stored)) == repr(reported)
            # us -> file: the steps we ask for end up exactly as PyTables' after set_local.
            steps = filters_to_pipeline(ours, dtype.itemsize, dset.chunks,
                                        classname=_classname(kind))
            created = create_with_steps(mine, f"n{j}", dset.shape, dset.maxshape, dtype,
                                        dset.chunks, steps)
            assert without_names(steps_of(created)) == without_names(stored)
            # Before set_local, only Blosc2's rank/dims (and default codec) may be missing.
            for asked, got in zip(steps, steps_of(created), strict=True):
                assert got.cd_values[: len(asked.cd_values)] == asked.cd_values
                assert asked.name == got.name
    # us -> PyTables: PyTables reads our datasets' filters as it reads its own.
    with tables.open_file(ours_path, "r") as ptf, tables.open_file(pytables_file, "r") as ref:
        for j in range(len(LEAF_KINDS)):
            assert repr(ptf.get_node(f"/n{j}").filters) == repr(
                ref.get_node(f"/n{index}_{j}").filters
            )


def test_vlarray_pipelines_like_pytables(pytables_file: Path) -> None:
    with h5py.File(pytables_file, "r") as f, tables.open_file(pytables_file, "r") as ptf:
        for i, ours in enumerate(PIPELINE_FILTERS):
            if f"v{i}" not in f:
                continue
            dset = f[f"v{i}"]
            assert repr(pipeline_to_filters(steps_of(dset))) == repr(
                ptf.get_node(f"/v{i}").filters
            )
            expected = filters_to_pipeline(ours, 16, dset.chunks, classname="VLARRAY")
            stored = steps_of(dset)
            assert [s.filter_id for s in expected] == [s.filter_id for s in stored]
            for want, got in zip(expected, stored, strict=True):
                if want.filter_id == ids.BZIP2:  # the one filter with no set_local
                    assert want.cd_values == got.cd_values


def test_blosc2_table_with_wide_rows_keeps_its_typesize() -> None:
    """Blosc stores typesize 1 above 255 bytes; Blosc2 keeps the row size (verified)."""
    steps = filters_to_pipeline(Filters(5, "blosc"), 300, (218,), classname="TABLE")
    assert steps[0].cd_values[:4] == (2, 2, 1, 300 * 218)
    steps = filters_to_pipeline(Filters(3, "blosc2"), 300, (3495,), classname="TABLE")
    assert steps[0].cd_values[:4] == (1, 65400, 300, 300 * 3495)


H5PY_WRITTEN: dict[str, dict[str, Any]] = {
    "blosc2_zstd_bitshuffle": dict(hdf5plugin.Blosc2(cname="zstd", clevel=5,
                                                     filters=hdf5plugin.Blosc2.BITSHUFFLE)),
    "blosc2_lz4_shuffle": dict(hdf5plugin.Blosc2(cname="lz4", clevel=7)),
    "blosc2_delta": dict(hdf5plugin.Blosc2(cname="zlib", clevel=1,
                                           filters=hdf5plugin.Blosc2.DELTA)),
    "blosc_lz4": dict(hdf5plugin.Blosc(cname="lz4", clevel=5)),
    "blosc_bitshuffle": dict(hdf5plugin.Blosc(cname="blosclz", clevel=9,
                                              shuffle=hdf5plugin.Blosc.BITSHUFFLE)),
    "bzip2": dict(hdf5plugin.BZip2(blocksize=7)),
    "gzip_shuffle_fletcher32": {"compression": "gzip", "compression_opts": 4, "shuffle": True,
                                "fletcher32": True},
    "gzip": {"compression": "gzip"},
    "shuffle_only": {"shuffle": True},
    "fletcher32_only": {"fletcher32": True},
    "szip": {"compression": "szip"},
}

# Filters PyTables cannot name: it reports the data as uncompressed; we name the filter.
H5PY_FOREIGN: dict[str, tuple[dict[str, Any], str]] = {
    "lzf": ({"compression": "lzf", "shuffle": True}, "lzf"),
    "lz4": (dict(hdf5plugin.LZ4()), "lz4"),
    "zstd": (dict(hdf5plugin.Zstd(clevel=3)), "zstd"),
    "bitshuffle": (dict(hdf5plugin.Bitshuffle(cname="lz4")), "bitshuffle"),
    "scaleoffset": ({"scaleoffset": 2}, "scaleoffset"),
}


@pytest.mark.parametrize("shape", [(100,), (10, 10)])
@pytest.mark.parametrize("name", list(H5PY_WRITTEN))
def test_pipeline_to_filters_of_h5py_datasets_like_pytables(
    tmp_path: Path, name: str, shape: tuple[int, ...]
) -> None:
    path = tmp_path / "h5py.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(100.0).reshape(shape),
                         chunks=tuple(s // 2 for s in shape), **H5PY_WRITTEN[name])
        stored = steps_of(f["x"])
    with tables.open_file(path, "r") as ptf:
        reported = ptf.root.x.filters
    assert repr(pipeline_to_filters(stored)) == repr(reported)
    assert unrecognized_steps(stored) == ()


@pytest.mark.parametrize("name", list(H5PY_FOREIGN))
def test_pipeline_to_filters_names_filters_pytables_ignores(tmp_path: Path, name: str) -> None:
    kwargs, complib = H5PY_FOREIGN[name]
    path = tmp_path / "h5py.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(100.0).reshape(10, 10), chunks=(5, 5), **kwargs)
        stored = steps_of(f["x"])
    with tables.open_file(path, "r") as ptf:
        assert ptf.root.x.filters.complevel == 0  # PyTables: "not compressed"
    ours = pipeline_to_filters(stored)
    assert (ours.complib, ours.complevel) == (complib, -1)
    assert ours.shuffle == (name == "lzf")  # the HDF5 shuffle before LZF is kept
    assert [s.filter_id for s in unrecognized_steps(stored)] == [
        s.filter_id for s in stored if s.filter_id != ids.SHUFFLE
    ]


def test_pipeline_to_filters_unknown_and_mixed_ids() -> None:
    unknown = FilterStep(40000, 1, (1, 2), "who knows")
    assert repr(pipeline_to_filters([unknown])) == (
        "Filters(complib='filter_40000', shuffle=False, bitshuffle=False, fletcher32=False, "
        "least_significant_digit=None)"
    )
    mixed = [(ids.SCALEOFFSET, 1, (0, 2)), unknown, (ids.DEFLATE, 1, (5,), b"deflate"),
             (ids.FLETCHER32, 0, ())]
    assert pipeline_to_filters(mixed) == Filters(5, "zlib", shuffle=False, fletcher32=True)
    assert [s.filter_id for s in unrecognized_steps(mixed)] == [ids.SCALEOFFSET, 40000]
    assert pipeline_to_filters([]) == Filters()


def test_cd_values_parsed_once_give_the_same_parameters_and_errors_each_time() -> None:
    """Leaves made alike share their parsed Blosc2 parameters (immutable); values that do
    not parse raise every time, never a remembered result."""
    cd = (2, 0, 8, 400, 5, 1, 5, 2, 10, 5)
    first = Blosc2Params.from_cd_values(cd)
    assert Blosc2Params.from_cd_values(list(cd)) is first
    assert first.to_cd_values()[1:] == cd[1:] and first.chunkshape == (10, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.clevel = 9  # type: ignore[misc]
    for _ in range(2):
        with pytest.raises(ValueError, match="chunk rank 3"):
            Blosc2Params.from_cd_values((1, 0, 8, 200, 5, 1, 0, 3, 5, 5))


def test_pipeline_to_filters_tolerates_short_or_odd_cd_values() -> None:
    # The filters' own defaults apply to missing values (clevel 5, shuffle, blosclz).
    assert pipeline_to_filters([(ids.BLOSC2, 1, (1, 0, 8, 800))]) == Filters(5, "blosc2")
    assert pipeline_to_filters([(ids.BLOSC, 1, (2, 2, 8, 800, 3, 2, 3))]) == (
        Filters._from_stored(complevel=3, complib="blosc:snappy", bitshuffle=True)
    )
    assert pipeline_to_filters([(ids.BLOSC2, 1, (1, 0, 8, 800, 4, 0, 32))]).complib == (
        "blosc2:ndlz"
    )
    assert pipeline_to_filters([(ids.DEFLATE, 1, (12,))]).complevel == 9
    assert pipeline_to_filters([(ids.BZIP2, 1, ())]) == Filters(9, "bzip2", shuffle=False)
    lzo = pipeline_to_filters([(ids.LZO, 1, (3, 11, 4))])
    assert (lzo.complib, lzo.complevel) == ("lzo", 3)


def test_filters_to_pipeline_errors() -> None:
    lzo = pipeline_to_filters([(ids.LZO, 1, (3, 11, 4))])
    with pytest.raises(FilterNotAvailableError, match="LZO is not in hdf5plugin"):
        filters_to_pipeline(lzo, 8, (100,))
    with pytest.raises(FiltersError, match="NODE"):
        filters_to_pipeline(Filters(1, "bzip2"), 8, (100,), classname="NODE")
    with pytest.raises(FiltersError, match=str(2**31)):
        filters_to_pipeline(Filters(1, "blosc2"), 8, (2**28,))
    with pytest.raises(FiltersError, match="blosc"):
        filters_to_pipeline(Filters(1, "blosc"), 8, (2**28,))
    with pytest.raises(ValueError, match="chunkshape"):
        filters_to_pipeline(Filters(1), 8, (0, 3))
    with pytest.raises(ValueError, match="basetypesize"):
        filters_to_pipeline(Filters(1), 8, (3,), basetypesize=3)
    with pytest.raises(ValueError, match="-1"):
        filters_to_pipeline(Filters(1, "blosc2"), 8, (3,), blosc2_blocksize=-1)
    # Nothing to compress with: a chunk size limit does not matter.
    assert filters_to_pipeline(Filters(), 8, (2**28,)) == ()


def test_filters_to_pipeline_blosc2_blocksize_choices() -> None:
    f = Filters(5, "blosc2:zstd")
    assert filters_to_pipeline(f, 8, (1310, 100))[0].cd_values == (1, 524288, 8, 1048000, 5, 1, 5)
    assert filters_to_pipeline(f, 8, (1310, 100), blosc2_blocksize=0)[0].cd_values[1] == 0
    assert filters_to_pipeline(f, 8, (9, 9), blosc2_blocksize=4096)[0].cd_values[1] == 4096
    # Array atoms: Blosc2 compresses base-type items, chunk bytes count whole elements.
    assert filters_to_pipeline(f, 24, (10,), basetypesize=8)[0].cd_values[2:4] == (8, 240)


def test_filter_step_from_tuple_and_sole_blosc2() -> None:
    step = FilterStep.from_tuple((np.int32(32026), 1, [1, 0, 8, 200], b"blosc2\xff"))
    assert step == FilterStep(32026, 1, (1, 0, 8, 200), "blosc2\ufffd")
    assert FilterStep.from_tuple(step) is step
    with pytest.raises(ValueError, match="cd_values"):
        FilterStep.from_tuple((1, 2))
    assert sole_blosc2_step([step]) == step
    assert sole_blosc2_step([step, (ids.FLETCHER32, 0, ())]) is None
    assert sole_blosc2_step([(ids.DEFLATE, 1, (1,))]) is None
    assert sole_blosc2_step([]) is None


# ============================================================================ Blosc2


@pytest.mark.parametrize(
    ("cd", "codec", "chunkshape"),
    [
        ((1, 0, 8, 200, 5, 2, 5, 2, 5, 5), "zstd", (5, 5)),  # h5py + hdf5plugin, 2-D
        ((1, 524288, 8, 1048000, 5, 1, 5, 2, 1310, 100), "zstd", (1310, 100)),  # PyTables
        ((1, 131050, 25, 1048575, 5, 1, 1), "lz4", None),  # PyTables Table
        ((1, 65525, 25, 1048575, 3, 1), "blosclz", None),  # PyTables 'blosc2' Table
    ],
)
def test_blosc2_params_round_trip(cd: tuple[int, ...], codec: str,
                                  chunkshape: tuple[int, ...] | None) -> None:
    params = Blosc2Params.from_cd_values(cd)
    assert params.to_cd_values() == cd
    assert params.codec == codec
    assert params.chunkshape == chunkshape
    assert params.is_b2nd == (chunkshape is not None)


def test_blosc2_params_defaults_and_validation() -> None:
    p = Blosc2Params.from_cd_values((0, 0, 0 + 4, 400))
    assert (p.clevel, p.filter_code, p.compcode, p.codec) == (5, 1, None, "blosclz")
    # set_local's form for a 2-D chunk: default codec, then rank and dims.
    assert Blosc2Params(0, 4, 400, chunkshape=[10, 10]).to_cd_values() == (
        1, 0, 4, 400, 5, 1, 0, 2, 10, 10
    )
    assert Blosc2Params(0, 4, 400, chunkshape=(100,)).to_cd_values() == (1, 0, 4, 400, 5, 1)
    for bad, match in [
        ({"clevel": 10}, "clevel"),
        ({"typesize": 0}, "typesize"),
        ({"chunkbytes": 2**31}, "chunkbytes"),
        ({"filter_code": 256}, "filter_code"),
        ({"compcode": -1}, "compcode"),
        ({"chunkshape": (3, 0)}, r"chunkshape\[1\]"),
        ({"blocksize": 1.5}, "blocksize"),
    ]:
        kwargs: dict[str, Any] = {"blocksize": 0, "typesize": 4, "chunkbytes": 400, **bad}
        with pytest.raises(ValueError, match=match):
            Blosc2Params(**kwargs)
    with pytest.raises(ValueError, match="at least 4"):
        Blosc2Params.from_cd_values((1, 0, 8))
    with pytest.raises(ValueError, match="rank 3"):
        Blosc2Params.from_cd_values((1, 0, 8, 200, 5, 1, 0, 3, 5, 5))
    with pytest.raises(ValueError, match="chunkshape is None"):
        Blosc2Params(0, 4, 400).block_shape()
    assert blosc2_filter.codec_code("zstd") == 5
    with pytest.raises(ValueError, match="snappy"):
        blosc2_filter.codec_code("snappy")
    assert blosc2_filter.codec_name(33) == "zfp_acc"
    assert blosc2_filter.codec_name(200) == "codec200"


# (shape, chunks, dtype, hdf5plugin.Blosc2 kwargs)
BLOSC2_CASES = [
    ((10, 10), (5, 5), "<f8", {"cname": "zstd", "clevel": 5, "filters": 2}),
    ((300, 300), (200, 256), "<i4", {"cname": "lz4", "clevel": 3, "filters": 1}),
    ((40, 30, 20), (16, 30, 7), "<f4", {"cname": "blosclz", "clevel": 9, "filters": 0}),
    ((3, 2, 50, 4), (2, 2, 32, 4), "<u2", {"cname": "zlib", "clevel": 1, "filters": 3}),
    ((6, 6), (4, 4), TABLE_DTYPE, {"cname": "lz4hc", "clevel": 4, "filters": 1}),
    ((100,), (64,), "<f4", {"cname": "blosclz", "clevel": 1, "filters": 1}),
    ((1000,), (300,), "<c16", {"cname": "zstd", "clevel": 2, "filters": 2}),
    ((30,), (16,), WIDE_DTYPE, {"cname": "lz4", "clevel": 5, "filters": 1}),
]


def _sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    raw = rng.integers(0, 20, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


def _chunk_slices(dset: h5py.Dataset, coords: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(c, min(c + k, n)) for c, k, n in zip(coords, dset.chunks, dset.shape,
                                                           strict=True))


def _all_chunk_coords(dset: h5py.Dataset) -> list[tuple[int, ...]]:
    grids = [range(0, n, k) for n, k in zip(dset.shape, dset.chunks, strict=True)]
    return [
        tuple(g[i] for g, i in zip(grids, idx, strict=True))
        for idx in np.ndindex(*(len(g) for g in grids))
    ]


def _frame_summary(frame: bytes) -> tuple[Any, ...]:
    obj = blosc2.from_cframe(frame)
    schunk = obj.schunk if isinstance(obj, blosc2.NDArray) else obj
    cp = schunk.cparams
    layout = (obj.shape, obj.chunks, obj.blocks, str(obj.dtype), dict(schunk.meta)) if (
        isinstance(obj, blosc2.NDArray)) else (schunk.chunksize, list(schunk.meta))
    header = blosc2.get_cbuffer_sizes(schunk.get_chunk(0))
    return (type(obj).__name__, layout, schunk.nchunks, header[0], header[2], cp.codec,
            cp.clevel, cp.typesize, list(cp.filters), cp.splitmode)


@pytest.mark.parametrize(("shape", "chunks", "dtype", "kw"), BLOSC2_CASES)
def test_encode_chunk_equals_the_hdf5_filter(
    tmp_path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: Any,
    kw: dict[str, Any]
) -> None:
    """Our frames are the HDF5 filter's, and read back through HDF5 and PyTables."""
    data = _sample(shape, dtype)
    path = tmp_path / "b2.h5"
    with h5py.File(path, "w") as f:
        by_filter = f.create_dataset("filter", shape=shape, chunks=chunks, dtype=dtype,
                                     **hdf5plugin.Blosc2(**kw))
        by_filter[...] = data
        direct = f.create_dataset("direct", shape=shape, chunks=chunks, dtype=dtype,
                                  **hdf5plugin.Blosc2(**kw))
        params = Blosc2Params.from_cd_values(steps_of(direct)[0].cd_values)
        for coords in _all_chunk_coords(direct):
            chunk = pad_to_chunkshape(data[_chunk_slices(direct, coords)], chunks)
            frame = encode_chunk(chunk, params)
            theirs = bytes(by_filter.id.read_direct_chunk(coords)[1])
            # Same frame layout and parameters; the compressed bytes are often identical too,
            # but hdf5plugin bundles its own C-Blosc2 (zlib, lz4 builds may differ).
            assert _frame_summary(frame) == _frame_summary(theirs)
            direct.id.write_direct_chunk(coords, frame)
        np.testing.assert_array_equal(direct[...], data)
        frame = bytes(direct.id.read_direct_chunk((0,) * len(shape))[1])
        inner = blosc2.from_cframe(frame)
        if len(shape) > 1:
            assert inner.blocks == params.block_shape()
            assert inner.chunks == chunks
    if np.dtype(dtype).names is None and np.dtype(dtype).kind != "c":
        with tables.open_file(path, "r") as ptf:  # PyTables' optimized b2nd path, too
            np.testing.assert_array_equal(ptf.root.direct[...], data)


@pytest.mark.parametrize(("shape", "chunks", "dtype", "kw"), BLOSC2_CASES)
def test_decode_chunk_of_hdf5_filter_output(
    tmp_path: Path, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: Any,
    kw: dict[str, Any]
) -> None:
    data = _sample(shape, dtype, seed=1)
    with h5py.File(tmp_path / "b2.h5", "w") as f:
        dset = f.create_dataset("x", data=data, chunks=chunks, **hdf5plugin.Blosc2(**kw))
        for coords in _all_chunk_coords(dset):
            raw = dset.id.read_direct_chunk(coords)[1]
            sl = _chunk_slices(dset, coords)
            valid = tuple(slice(0, s.stop - s.start) for s in sl)
            chunk = decode_chunk(raw, dset.dtype, chunks)
            assert chunk.shape == chunks
            assert chunk.dtype == dset.dtype
            np.testing.assert_array_equal(chunk[valid], data[sl])
            # Partial decompression of a box, and of a strided/int selection.
            box = tuple(slice(1, max(2, s.stop - s.start - 1)) for s in sl)
            np.testing.assert_array_equal(decode_chunk(raw, dset.dtype, chunks, selection=box),
                                          chunk[box])
            for key in [(0, *(slice(None, None, 2) for _ in chunks[1:])),
                        (slice(None, None, -3), ...), ([0, chunks[0] - 1, 0],),
                        (chunks[0] - 1,)]:
                np.testing.assert_array_equal(
                    decode_chunk(raw, dset.dtype, chunks, selection=key), chunk[key]
                )


def test_decode_chunk_reads_numeric_dtype_frames_and_rejects_garbage() -> None:
    data = np.arange(24, dtype="<i8").reshape(4, 6)
    frame = blosc2.asarray(data, chunks=(4, 6), blocks=(2, 3)).to_cframe()  # '<i8' metalayer
    np.testing.assert_array_equal(decode_chunk(frame, "<i8", (4, 6)), data)
    np.testing.assert_array_equal(decode_chunk(memoryview(frame), "<u8", (4, 6)),
                                  data.view("<u8"))
    with pytest.raises(ValueError, match=r"\(4, 6\).*\(6, 4\)"):
        decode_chunk(frame, "<i8", (6, 4))
    with pytest.raises(ValueError, match="8-byte items, not 4"):
        decode_chunk(frame, "<i4", (4, 6))
    with pytest.raises(ValueError, match="not a Blosc2 frame"):
        decode_chunk(b"\x00" * 64, "<i8", (4, 6))
    params = Blosc2Params(0, 8, 8 * 50)
    flat = encode_chunk(np.arange(50.0), params)
    with pytest.raises(ValueError, match="400 bytes"):
        decode_chunk(flat, "<f8", (60,))
    np.testing.assert_array_equal(decode_chunk(flat, "<f8", (50,), selection=slice(45, 99)),
                                  np.arange(45.0, 50.0))


def test_encode_chunk_errors_and_options() -> None:
    params = Blosc2Params(0, 8, 8 * 20, clevel=3, compcode=5, chunkshape=(4, 5))
    with pytest.raises(ValueError, match="160 bytes"):
        encode_chunk(np.zeros((3, 5)), params)
    with pytest.raises(ValueError, match=r"\(4, 5\)"):
        encode_chunk(np.zeros((5, 4)), params)
    with pytest.raises(ValueError, match="block shape"):
        encode_chunk(np.zeros((4, 5)), params, blockshape=(8, 1))
    data = np.arange(20.0).reshape(4, 5)
    frame = encode_chunk(data, params, blockshape=(1, 5), nthreads=2)
    assert blosc2.ndarray_from_cframe(frame).blocks == (1, 5)
    np.testing.assert_array_equal(decode_chunk(frame, "<f8", (4, 5)), data)
    with pytest.raises(ValueError, match=r"\(5, 5\)"):
        pad_to_chunkshape(np.zeros((5, 5)), (4, 5))
    padded = pad_to_chunkshape(np.ones((2, 3)), (4, 5), fill_value=-1)
    assert padded.sum() == 6 - 14


@pytest.mark.parametrize(
    ("chunkbytes", "typesize", "clevel", "codec"),
    [(1048000, 8, 3, 0), (2097152, 4, 3, 0), (1048575, 25, 3, 0), (1048500, 300, 3, 0),
     (1048000, 8, 5, 5), (10, 1, 1, 1), (7, 7, 9, 2), (2**31 - 64, 8, 5, 5)],
)
def test_compute_blosc2_blocksize_matches_pytables_values(
    chunkbytes: int, typesize: int, clevel: int, codec: int
) -> None:
    """Values PyTables stored in cd[1] (see the pipeline tests), plus edge sizes."""
    expected = {(1048000, 8, 3, 0): 262144, (2097152, 4, 3, 0): 131072,
                (1048575, 25, 3, 0): 65525, (1048500, 300, 3, 0): 65400,
                (1048000, 8, 5, 5): 524288, (10, 1, 1, 1): 10, (7, 7, 9, 2): 7,
                (2**31 - 64, 8, 5, 5): 524288}
    assert compute_blosc2_blocksize(chunkbytes, typesize, clevel, codec) == expected[
        (chunkbytes, typesize, clevel, codec)
    ]


def test_compute_blosc2_blocksize_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="1001"):
        compute_blosc2_blocksize(1001, 8, 5, 0)
    with pytest.raises(ValueError, match=str(2**31)):
        compute_blosc2_blocksize(2**31, 8, 5, 0)


@pytest.mark.parametrize(
    ("blocksize", "typesize", "chunkshape", "expected"),
    [
        (524288, 8, (1310, 100), (512, 100)),
        (131072, 4, (131072, 4), (8192, 4)),
        (8, 8, (5, 5), (2, 2)),  # never below 2 per dim
        (10**6, 8, (1, 7, 1), (1, 7, 1)),
        (256 * 256 * 8, 8, (1000, 1000), (256, 256)),
    ],
)
def test_compute_b2nd_block_shape(blocksize: int, typesize: int, chunkshape: tuple[int, ...],
                                  expected: tuple[int, ...]) -> None:
    assert compute_b2nd_block_shape(blocksize, typesize, chunkshape) == expected


def test_doctests_of_codecs_modules() -> None:
    for module in (ids, filters, pipeline, blosc2_filter):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, module.__name__
