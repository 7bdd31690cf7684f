"""A kit for compatibility tests: the same tree built by any PyTables-like library, and
descriptions of files and nodes that two libraries must agree on.

Builders take the library module (``tables`` or ``hyperslab``) as their first argument and
only use the API both share, so a file written by one can be compared, node by node and
byte layout by byte layout, with the same file written by the other.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np

import hyperslab

# NumPy 2 prints scalars as ``np.int8(0)``; hyperslab prints atoms in NumPy 1 style (as
# PyTables documents them).  Reprs are compared with NumPy's legacy printing on.
LEGACY_PRINT = {"legacy": "1.25"}


@dataclasses.dataclass(frozen=True)
class AtomSpec:
    """An atom, by class name and arguments, that any library can instantiate."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def make(self, lib: ModuleType) -> Any:
        """The atom of library ``lib``."""
        return getattr(lib, self.name)(*self.args, **self.kwargs)

    @property
    def id(self) -> str:
        """A short test id."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({','.join(parts)})".replace(" ", "")


SCALAR_ATOMS = [
    AtomSpec("BoolAtom"),
    AtomSpec("Int8Atom"),
    AtomSpec("Int16Atom"),
    AtomSpec("Int32Atom"),
    AtomSpec("Int64Atom"),
    AtomSpec("UInt8Atom"),
    AtomSpec("UInt16Atom"),
    AtomSpec("UInt32Atom"),
    AtomSpec("UInt64Atom"),
    AtomSpec("Float16Atom"),
    AtomSpec("Float32Atom"),
    AtomSpec("Float64Atom"),
    AtomSpec("ComplexAtom", (8,)),
    AtomSpec("ComplexAtom", (16,)),
    AtomSpec("StringAtom", (5,)),
]
"""One atom of every PyTables type hyperslab supports in arrays."""

SPECIAL_ATOMS = [
    AtomSpec("Int32Atom", (), {"shape": (2,)}),
    AtomSpec("BoolAtom", (), {"shape": (2,)}),
    AtomSpec("Float64Atom", (), {"shape": (2, 2)}),
    AtomSpec("StringAtom", (3,), {"shape": (2,)}),
    AtomSpec("Int16Atom", (), {"dflt": -7}),
    AtomSpec("Float64Atom", (), {"dflt": 1.5}),
    AtomSpec("ComplexAtom", (16,), {"dflt": 1 - 2j}),
    AtomSpec("BoolAtom", (), {"dflt": True}),
    AtomSpec("StringAtom", (4,), {"dflt": b"ab"}),
]
"""Shaped atoms (HDF5 array types) and atoms with a non-zero default (the fill value)."""

ALL_ATOMS = SCALAR_ATOMS + SPECIAL_ATOMS

COMPLIBS = [
    "zlib", "bzip2",
    "blosc", "blosc:blosclz", "blosc:lz4", "blosc:lz4hc", "blosc:zlib", "blosc:zstd",
    "blosc2", "blosc2:blosclz", "blosc2:lz4", "blosc2:lz4hc", "blosc2:zlib", "blosc2:zstd",
]
"""Every compression library both libraries write."""


def filter_variants() -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, Filters keyword arguments) covering every complib and the shuffle variants.

    Every complib is written with byte shuffle and without it (bitshuffle instead for the
    Blosc ones, which do it inside); Fletcher32 is combined with one complib of each
    family and written alone; quantization once.
    """
    for complib in COMPLIBS:
        yield f"{complib}-shuffle", {"complevel": 5, "complib": complib, "shuffle": True}
        if complib.startswith("blosc"):
            yield f"{complib}-bitshuffle", {"complevel": 1, "complib": complib,
                                            "shuffle": False, "bitshuffle": True}
        else:
            yield f"{complib}-noshuffle", {"complevel": 3, "complib": complib,
                                           "shuffle": False}
    for complib in ("blosc", "blosc2"):
        yield f"{complib}-noshuffle", {"complevel": 9, "complib": complib, "shuffle": False}
    for complib in ("zlib", "bzip2", "blosc:lz4", "blosc2:zstd"):
        yield f"{complib}-fletcher32", {"complevel": 9, "complib": complib, "shuffle": True,
                                        "fletcher32": True}
    yield "fletcher32-only", {"complevel": 0, "fletcher32": True}
    yield "lsd-zlib", {"complevel": 1, "complib": "zlib", "least_significant_digit": 2}


# ---------------------------------------------------------------------------------- data
def sample(dtype: np.dtype[Any], shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Deterministic, varied data of ``dtype`` (subarray dtypes add their trailing axes)."""
    dtype = np.dtype(dtype)
    base, item_shape = dtype.subdtype if dtype.subdtype is not None else (dtype, ())
    full = tuple(shape) + tuple(item_shape)
    n = math.prod(full)
    values = (np.arange(n, dtype=np.int64) * 7 + seed) % 97
    if base.kind == "b":
        data = values % 3 == 0
    elif base.kind == "S":
        data = np.array([f"s{v}".encode()[: base.itemsize] for v in values], dtype=base)
    elif base.kind == "c":
        data = values + 1j * (values[::-1] - 50)
    elif base.kind == "f":
        data = values / 4 - 10
    elif base.kind == "i":
        data = values - 48
    else:
        data = values
    return np.asarray(data, dtype=base).reshape(full)


def byteorder_matters(dtype: np.dtype[Any]) -> bool:
    """Whether a dtype has a byte order (multi-byte numbers)."""
    base = np.dtype(dtype).base
    return base.kind in "iufc" and base.itemsize > 1


# ---------------------------------------------------------------------------------- building
def build_leaves(lib: ModuleType, path: Path, spec: AtomSpec) -> dict[str, Any]:
    """Every leaf class, 0-d, empty and big-endian arrays of one atom, in one file.

    Returns what reading each leaf must give.
    """
    # A fresh atom for every leaf: PyTables changes a shaped atom's dflt into an array
    # when it creates a leaf with it, and then stores a fill value for the next leaves.
    atom = spec.make(lib)
    dtype = atom.dtype
    data = sample(dtype, (4, 3))
    fill_row = np.broadcast_to(np.asarray(atom.dflt, dtype=dtype.base), (3, *atom.shape))
    expected: dict[str, Any] = {
        "array": data,
        "scalar": data.reshape(-1)[:1].reshape(()),
        "empty": np.empty((0, 3), dtype=dtype.base),
        "pylist": [b"a"] if dtype.kind == "S" else data[:2, 0].tolist(),
        "carray": np.concatenate([data[:3], fill_row[np.newaxis]]),
        "carray_auto": sample(dtype, (5, 2), seed=3),
        "earray": data,
        "earray_dim1": sample(dtype, (2, 5), seed=5),
        "earray_empty": np.empty((0, *atom.shape), dtype=dtype.base),
    }
    with lib.open_file(str(path), "w", title=f"leaves of {spec.id}") as f:
        f.create_array("/", "array", data, title="plain array")
        f.create_array("/", "scalar", expected["scalar"], title="0-d")
        f.create_array("/", "empty", expected["empty"], title="empty")
        f.create_array("/", "pylist", expected["pylist"])
        ca = f.create_carray("/", "carray", spec.make(lib), shape=(4, 3), title="carray",
                             chunkshape=(2, 3))
        ca[:3] = data[:3]  # row 3 keeps the fill value (the atom's dflt)
        ca_auto = f.create_carray("/", "carray_auto", spec.make(lib), shape=(5, 2))
        ca_auto[...] = expected["carray_auto"]
        ea = f.create_earray("/", "earray", spec.make(lib), shape=(0, 3), title="earray",
                             chunkshape=(2, 3))
        ea.append(data[:1])
        ea.append(data[1:])
        ea1 = f.create_earray("/", "earray_dim1", spec.make(lib), shape=(2, 0),
                              expectedrows=50)
        ea1.append(expected["earray_dim1"])
        f.create_earray("/", "earray_empty", spec.make(lib), shape=(0,))
        if byteorder_matters(dtype):
            big = f.create_carray("/", "big", spec.make(lib), shape=(4, 3), byteorder="big")
            big[...] = data
            f.create_array("/", "big_array", data.astype(data.dtype.newbyteorder(">")))
            ebig = f.create_earray("/", "big_earray", spec.make(lib), shape=(0, 3),
                                   byteorder="big")
            ebig.append(data)
            expected.update(big=data, big_array=data, big_earray=data)
    return expected


def build_filters(lib: ModuleType, path: Path, filter_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Leaves and groups with one set of filters (given and inherited).

    Returns what reading each leaf must give (before any lossy quantization).
    """
    filters = lib.Filters(**filter_kwargs)
    data = np.arange(600, dtype="f8").reshape(30, 20) / 7
    ints = sample(np.dtype("i4"), (30, 20))
    expected = {"carray": data, "carray_auto": ints, "earray": data.astype("f4"),
                "carray_1d": np.zeros(100, dtype="i2"),
                "group/inherited": np.arange(40, dtype="u1"),
                "shaped": sample(np.dtype(("f4", (3,))), (20, 4))}
    with lib.open_file(str(path), "w") as f:
        f.create_carray("/", "carray", obj=data, filters=filters, chunkshape=(8, 20))
        # Blosc2 chunks are 16x larger (MBs, mostly padding here): auto chunkshapes are
        # checked on the other complibs only, to keep the tests fast.
        auto = (16, 20) if str(filters.complib).startswith("blosc2") else None
        ca = f.create_carray("/", "carray_auto", lib.Int32Atom(), shape=(30, 20),
                             filters=filters, chunkshape=auto)
        ca[...] = ints
        f.create_carray("/", "carray_1d", lib.Int16Atom(), shape=(100,), filters=filters,
                        chunkshape=(30,))
        ea = f.create_earray("/", "earray", lib.Float32Atom(), shape=(0, 20),
                             filters=filters, chunkshape=(4, 20))
        ea.append(data)
        shaped = f.create_carray("/", "shaped", lib.Float32Atom(shape=(3,)), shape=(20, 4),
                                 filters=filters, chunkshape=(8, 4))
        shaped[...] = expected["shaped"]
        g = f.create_group("/", "group", "with filters", filters=filters)
        inherited = f.create_carray(g, "inherited", lib.UInt8Atom(), shape=(40,),
                                    chunkshape=(16,))
        inherited[...] = expected["group/inherited"]
        f.create_group(g, "subgroup", "inherits the filters")
    return expected


def build_groups(lib: ModuleType, path: Path) -> None:
    """Nested groups, titles, group filters and file-level filters."""
    with lib.open_file(str(path), "w", title="root title",
                       filters=lib.Filters(complevel=2, complib="blosc")) as f:
        a = f.create_group("/", "a", "group a")
        b = f.create_group(a, "b", "group b", filters=lib.Filters(complevel=0))
        c = f.create_group(b, "c", "", filters=lib.Filters(1, "zlib", fletcher32=True))
        f.create_group("/a/b/c", "d", "deep")
        f.create_group("/", "unicode_title", "título ✓")
        f.create_array(c, "leaf", np.arange(5), title="in c")
        f.create_carray(a, "inherit_root", lib.Float64Atom(), shape=(10,))
        f.create_carray(b, "inherit_none", lib.Float64Atom(), shape=(10,))
        f.create_earray(c, "inherit_c", lib.Int8Atom(), shape=(0,))


ATTRIBUTE_VALUES: dict[str, Any] = {
    "int": 3,
    "negative": -(2**40),
    "huge_uint": 2**63 + 5,
    "float": 2.5,
    "true": True,
    "complex": 1 + 2j,
    "text": "some text",
    "unicode": "ünïcödé ✓",
    "empty_text": "",
    "bytes": b"raw bytes",
    "empty_bytes": b"",
    "i1": np.int8(-3),
    "u2": np.uint16(65535),
    "i4": np.int32(-(2**31)),
    "u8": np.uint64(2**64 - 1),
    "f2": np.float16(1.5),
    "f4": np.float32(1.25),
    "c8": np.complex64(1j),
    "np_bool": np.bool_(False),
    "np_bytes": np.bytes_(b"xy"),
    "np_str": np.str_("uni"),
    "int_array": np.arange(6, dtype="i2").reshape(2, 3),
    "float_array": np.linspace(0.0, 1.0, 3),
    "bytes_array": np.array([b"a", b"bc"]),
    "bool_array": np.array([True, False]),
    "complex_array": np.array([1j, 2.0]),
    "empty_array": np.array([], dtype="f4"),
    "zero_d": np.array(5.0),  # read back as a scalar
    "record": np.array([(1, 2.0)], dtype=[("x", "i4"), ("y", "f8")]),
    "list": [1, 2, 3],
    "tuple": (1.0, "two"),
    "dict": {"a": 1, "b": [2, 3]},
    "none": None,
    "unicode_array": np.array(["a", "bcé"]),
}
"""Attribute values of every kind PyTables stores (numbers, strings, arrays, pickles)."""

BIG_ENDIAN_ATTRIBUTES: dict[str, Any] = {
    "big_ints": np.array([513, -2], dtype=">i4"),
    "big_array": np.arange(3, dtype=">f8"),
}
"""Big-endian attributes: PyTables reads them back byte-swapped (a PyTables bug)."""


def build_attributes(lib: ModuleType, path: Path, values: dict[str, Any]) -> None:
    """The same attributes on the root, a group, an Array, a CArray and an EArray."""
    with lib.open_file(str(path), "w") as f:
        g = f.create_group("/", "g")
        nodes = [f.root, g, f.create_array(g, "a", np.arange(3)),
                 f.create_carray("/", "c", lib.Int8Atom(), shape=(2,)),
                 f.create_earray("/", "e", lib.Int8Atom(), shape=(0,))]
        for node in nodes:
            for name, value in values.items():
                setattr(node._v_attrs, name, value)
        f.set_node_attr("/g/a", "set_node_attr", "via file")


# ---------------------------------------------------------------------------------- describing
def _int_tuple(value: Any) -> Any:
    return None if value is None else tuple(int(v) for v in value)


def atom_repr(atom: Any) -> str:
    """An atom's repr in NumPy 1 style, comparable between PyTables and hyperslab."""
    with np.printoptions(**LEGACY_PRINT):
        return repr(atom)


def describe_node(node: Any) -> dict[str, Any]:
    """What PyTables (or hyperslab) says about a node, with the PyTables API."""
    desc: dict[str, Any] = {
        "class": type(node).__name__,
        "title": node._v_title,
        "sys_attrs": sorted(node._v_attrs._f_list("sys")),
        "user_attrs": sorted(node._v_attrs._f_list("user")),
    }
    if hasattr(node, "_v_filters"):
        desc["filters"] = repr(node._v_filters)
        desc["children"] = sorted(node._v_children)
        return desc
    desc.update(
        shape=_int_tuple(node.shape),
        dtype=node.dtype,
        atom=atom_repr(node.atom),
        filters=repr(node.filters),
        chunkshape=_int_tuple(node.chunkshape),
        byteorder=node.byteorder,
        nrows=int(node.nrows),
        maindim=int(node.maindim),
        extdim=int(getattr(node, "extdim", -1)),
        flavor=node.flavor,
        ndim=node.ndim,
        size_in_memory=int(node.size_in_memory),
    )
    return desc


def walk(lib_file: Any) -> Iterator[Any]:
    """Every node of an open PyTables or hyperslab file, root first."""
    yield from lib_file.walk_nodes("/")


def assert_same_value(ours: Any, theirs: Any, what: str) -> None:
    """Equal values of the same Python type (NumPy: same dtype and shape too)."""
    assert type(ours) is type(theirs), f"{what}: {type(ours)} != {type(theirs)}"
    if isinstance(ours, np.ndarray | np.generic):
        assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
        assert np.shape(ours) == np.shape(theirs), f"{what}: shape"
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
    else:
        assert ours == theirs, f"{what}: {ours!r} != {theirs!r}"


def _filters_repr(value: Any) -> str:
    """A FILTERS attribute as a Filters repr (hyperslab returns the packed int for now)."""
    if isinstance(value, int | np.integer):
        value = hyperslab.Filters._unpack(int(value))
    return repr(value)


def assert_same_nodes(ours_file: Any, theirs_file: Any, *, data: bool = True) -> None:
    """Two open files (any two libraries) describe the same tree, attributes and data."""
    ours = {node._v_pathname: node for node in walk(ours_file)}
    theirs = {node._v_pathname: node for node in walk(theirs_file)}
    assert sorted(ours) == sorted(theirs)
    for path, node in ours.items():
        other = theirs[path]
        assert describe_node(node) == describe_node(other), path
        for name in node._v_attrs._f_list("all"):
            ours_value, theirs_value = node._v_attrs[name], other._v_attrs[name]
            if name == "FILTERS":  # see test_filters_attribute_reads_as_filters
                ours_value, theirs_value = _filters_repr(ours_value), _filters_repr(theirs_value)
            assert_same_value(ours_value, theirs_value, f"{path}.{name}")
        if data and not hasattr(node, "_v_filters"):
            assert_same_value(node.read(), other.read(), f"{path} data")


# ---------------------------------------------------------------------------------- raw HDF5
def _type_info(htype: Any) -> tuple[Any, ...]:
    cls = htype.get_class()
    info: list[Any] = [cls, htype.get_size()]
    if cls == h5py.h5t.STRING:
        info += [htype.get_strpad(), htype.get_cset(), htype.is_variable_str()]
    elif cls == h5py.h5t.ARRAY:
        info += [htype.get_array_dims(), _type_info(htype.get_super())]
    elif cls == h5py.h5t.COMPOUND:
        info += [(htype.get_member_name(i), _type_info(htype.get_member_type(i)))
                 for i in range(htype.get_nmembers())]
    elif cls == h5py.h5t.ENUM:
        info += [_type_info(htype.get_super())]
    elif cls in (h5py.h5t.INTEGER, h5py.h5t.FLOAT, h5py.h5t.BITFIELD):
        info += [htype.get_order()]
    return tuple(info)


def _space_info(space: Any) -> tuple[Any, ...]:
    kind = space.get_simple_extent_type()
    if kind != h5py.h5s.SIMPLE:
        return (kind,)
    return (kind, space.get_simple_extent_dims(), space.get_simple_extent_dims(True))


def _attr_info(obj: Any) -> dict[str, Any]:
    infos = {}
    for name in obj.attrs:
        attr = h5py.h5a.open(obj.id, name.encode())
        infos[name] = (_type_info(attr.get_type()), _space_info(attr.get_space()))
    return infos


def _dataset_info(dset: h5py.Dataset) -> dict[str, Any]:
    dcpl = dset.id.get_create_plist()
    return {
        "type": _type_info(dset.id.get_type()),
        "space": _space_info(dset.id.get_space()),
        "layout": dcpl.get_layout(),
        "chunks": dset.chunks,
        "pipeline": [dcpl.get_filter(i)[:3] for i in range(dcpl.get_nfilters())],
        "fill_defined": dcpl.fill_value_defined(),
        "fill_time": dcpl.get_fill_time(),
        "alloc_time": dcpl.get_alloc_time(),
    }


def describe_hdf5(path: Path) -> dict[str, Any]:
    """The HDF5-level layout of a file: every object's type, space, layout, filters,
    attributes (with their HDF5 types and dataspaces)."""
    result: dict[str, Any] = {}
    with h5py.File(path, "r") as h:
        def visit(name: str, obj: Any) -> None:
            entry = {"attrs": _attr_info(obj)}
            if isinstance(obj, h5py.Dataset):
                entry.update(_dataset_info(obj))
            result["/" + name] = entry

        visit("", h)
        h.visititems(visit)
    result["/"] = result.pop("/")
    return result


def hdf5_attribute_values(path: Path) -> dict[str, Any]:
    """Every attribute value as h5py reads it (strings of NULL dataspace as Empty)."""
    values: dict[str, Any] = {}
    with h5py.File(path, "r") as h:
        def visit(name: str, obj: Any) -> None:
            for key in obj.attrs:
                values[f"/{name}.{key}"] = obj.attrs[key]

        visit("", h)
        h.visititems(visit)
    return values


def assert_same_hdf5(ours: Path, theirs: Path) -> None:
    """Two files have the same HDF5 layout, object by object (types, filters, attributes)."""
    a, b = describe_hdf5(ours), describe_hdf5(theirs)
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], name


# ---------------------------------------------------------------------------------- h5py files
H5PY_DTYPES = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8",
               "c16", "S5", ">i2", ">u4", ">f4", ">f8", ">c16"]
"""Dtypes h5py writes that PyTables maps to atoms (h5py's bools are an int8 enum)."""


def build_h5py_layouts(path: Path, dtype: str) -> dict[str, np.ndarray]:
    """Every layout of one dtype, written by plain h5py; returns the data written."""
    dt = np.dtype(dtype)
    data = sample(dt, (6, 4)).astype(dt)
    written = {}
    with h5py.File(path, "w") as h:
        h["contiguous"] = written["contiguous"] = data
        h.create_dataset("chunked", data=data, chunks=(4, 3))
        h.create_dataset("extendable0", data=data, chunks=(2, 4), maxshape=(None, 4))
        h.create_dataset("extendable1", data=data, chunks=(6, 2), maxshape=(6, None))
        h.create_dataset("gzip", data=data, chunks=(3, 4), compression="gzip",
                         compression_opts=6, shuffle=True, fletcher32=True)
        h["scalar"] = data[0, 0]
        h["zero_length"] = data[:0]
        fill = data[1, 1]
        h.create_dataset("filled", shape=(5,), dtype=dt, chunks=(2,), fillvalue=fill)
        h["filled"][0] = data[0, 0]
        written.update(chunked=data, extendable0=data, extendable1=data, gzip=data,
                       scalar=np.asarray(data[0, 0]), zero_length=data[:0],
                       filled=np.array([data[0, 0]] + [fill] * 4, dtype=dt))
        if dt.kind != "S":
            sub = np.dtype((dt, (2,)))
            arr = h.create_dataset("subarray", shape=(3,), dtype=sub, chunks=(2,))
            values = sample(sub, (3,)).astype(dt)
            arr[...] = values
            h.create_dataset("subarray_contiguous", shape=(3,), dtype=sub)[...] = values
            written.update(subarray=values, subarray_contiguous=values)
    return written


# ---------------------------------------------------------------------------------- known gaps
def normalized_layout(desc: dict[str, Any]) -> dict[str, Any]:
    """An HDF5 layout without the differences hyperslab keeps on purpose (or for now).

    * Fixed-length string datasets: hyperslab keeps h5py's ``H5T_STR_NULLPAD``; PyTables
      writes ``H5T_STR_NULLTERM``.  h5py writes through a NULLPAD memory type, and HDF5
      converting that to NULLTERM would cut full-length strings by one byte.  Both
      libraries (and h5py) read either padding back identically.
    * ``CLASS``/``VERSION``/``TITLE`` of a new CArray/EArray: PyTables' C code writes them
      with the ASCII character set, hyperslab with UTF-8 (as PyTables does for every other
      node).  Both read the same strings (see ``test_carray_sys_attrs_are_ascii``).
    """
    result: dict[str, Any] = {}
    for name, entry in desc.items():
        entry = dict(entry)
        if "type" in entry and entry["type"][0] == h5py.h5t.STRING:
            entry["type"] = (*entry["type"][:2], "strpad", *entry["type"][3:])
        if "type" in entry and entry["type"][0] == h5py.h5t.ARRAY:
            inner = entry["type"][3]
            if inner[0] == h5py.h5t.STRING:
                entry["type"] = (*entry["type"][:3], (*inner[:2], "strpad", *inner[3:]))
        attrs = {}
        for attr, (atype, space) in entry["attrs"].items():
            if attr in ("CLASS", "VERSION", "TITLE") and atype[0] == h5py.h5t.STRING:
                atype = (*atype[:3], "cset", *atype[4:])
            attrs[attr] = (atype, space)
        entry["attrs"] = attrs
        result[name] = entry
    return result


def assert_same_layout(ours: Path, theirs: Path) -> None:
    """Same HDF5 layout, but for the known differences of :func:`normalized_layout`."""
    a = normalized_layout(describe_hdf5(ours))
    b = normalized_layout(describe_hdf5(theirs))
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], name


def assert_reads(lib_file: Any, expected: dict[str, Any]) -> None:
    """Every leaf of an open file reads as ``expected`` (same type, dtype, shape, values)."""
    for path, want in expected.items():
        node = lib_file.get_node("/" + path)
        got = node.read()
        if isinstance(want, np.ndarray) and want.dtype.byteorder == ">":
            want = want.astype(want.dtype.newbyteorder("="))
        assert_same_value(got, want, path)
