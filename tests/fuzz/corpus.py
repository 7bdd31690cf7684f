"""The files the fuzzer damages: small, deterministic, one subject each.

Every base file holds attributes of each kind (numeric scalars and arrays, byte strings,
unicode) on the root, on a group ``/g`` and on its leaves, and one or two subjects in
``/g``: datasets or tables whose chunks the mutations aim at.  The subjects cover the
storage layouts hyperslab reads differently:

* Blosc2 through hyperslab's own writer: b2nd frames (rank >= 2: a CArray with partial
  edge chunks in every dimension, an EArray) and plain super-chunk frames (1-D);
* Blosc2 through h5py + hdf5plugin's filter (a b2nd 2-D and a plain 1-D dataset, no
  PyTables attributes: hyperslab classifies them itself);
* zlib + shuffle, unfiltered chunked, and contiguous (``create_array``) datasets;
* a Blosc2 table indexed by hyperslab (``create_index``), and a zlib table written and
  indexed by PyTables.

Files are built with ``track_times=False`` so that two builds have the same layout and the
same bytes in every chunk and header a mutation aims at, and a mutation (a list of byte
edits) replays on a freshly built base.  (Index datasets still record their times, which
the index writers set, and HDF5 leaves old bytes in freed space: nothing reads those.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np

import hyperslab

ROOT_ATTRS: dict[str, Any] = {
    "count": np.int64(7),
    "ratio": np.float64(0.25),
    "vector": np.arange(5, dtype=np.int16),
    "label": b"bytes label",
    "name": "ünïcödé ☃",
}
GROUP_ATTRS: dict[str, Any] = {
    "level": np.uint8(3),
    "matrix": np.linspace(0, 1, 6).reshape(2, 3),
    "unit": "m/s",
    "tag": b"g",
}
LEAF_ATTRS: dict[str, Any] = {"scale": np.float32(1.5), "comment": "naïve", "raw": b"\x01\x02"}


@dataclass(frozen=True)
class Subject:
    """A leaf the fuzzer reads through every path that applies to it.

    ``kind`` is ``'array'`` (Array/CArray/EArray or an h5py dataset) or ``'table'``;
    ``columns`` names the numeric columns queried (tables), ``indexed`` the indexed one.
    """

    path: str
    kind: str
    columns: tuple[str, ...] = ()
    indexed: str | None = None


@dataclass(frozen=True)
class Base:
    """A base file's recipe: its name, its subjects and the function that writes it."""

    name: str
    subjects: tuple[Subject, ...]
    write: Callable[[Path], None]


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(sum(name.encode()))


def _floats(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    data = np.round(rng.normal(size=shape) * 100, 2)
    data.flat[:: max(1, data.size // 3)] = np.nan  # NaN-equality is part of the oracle
    return data


def _attrs_hs(f: hyperslab.File, leaves: list[str]) -> None:
    for name, value in ROOT_ATTRS.items():
        f.root._v_attrs[name] = value
    for name, value in GROUP_ATTRS.items():
        f.root.g._v_attrs[name] = value
    for leaf in leaves:
        for name, value in LEAF_ATTRS.items():
            f.get_node(leaf).attrs[name] = value


def _attrs_h5(f: h5py.File, leaves: list[str]) -> None:
    for name, value in ROOT_ATTRS.items():
        f.attrs[name] = value
    for name, value in GROUP_ATTRS.items():
        f["g"].attrs[name] = value
    for leaf in leaves:
        for name, value in LEAF_ATTRS.items():
            f[leaf].attrs[name] = value


def _b2nd(path: Path) -> None:
    rng = _rng("b2nd")
    with hyperslab.open_file(path, "w", title="b2nd") as f:
        f.create_group("/", "g")
        f.create_carray("/g", "cube", obj=_floats(rng, (13, 11, 7)), chunkshape=(5, 4, 3),
                        filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True),
                        track_times=False)
        _attrs_hs(f, ["/g/cube"])


def _b2nd_earray(path: Path) -> None:
    rng = _rng("b2nd_earray")
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        log = f.create_earray("/g", "log", hyperslab.Int32Atom(), shape=(0, 9),
                              chunkshape=(8, 4), track_times=False,
                              filters=hyperslab.Filters(5, "blosc2:zstd", bitshuffle=True))
        log.append(rng.integers(-1000, 1000, (37, 9), dtype=np.int32))
        _attrs_hs(f, ["/g/log"])


def _blosc2_plain(path: Path) -> None:
    rng = _rng("blosc2_plain")
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        f.create_carray("/g", "line", obj=np.cumsum(rng.integers(0, 9, 1000)),
                        chunkshape=(128,), track_times=False,
                        filters=hyperslab.Filters(5, "blosc2:blosclz", shuffle=True))
        _attrs_hs(f, ["/g/line"])


def _h5py_blosc2(path: Path) -> None:
    rng = _rng("h5py_blosc2")
    with h5py.File(path, "w") as f:
        g = f.create_group("g")
        g.create_dataset("grid", data=_floats(rng, (30, 20)).astype(np.float32),
                         chunks=(8, 6), **hdf5plugin.Blosc2(cname="lz4", clevel=5))
        g.create_dataset("ramp", data=(np.arange(500) * 7 % 1000).astype(np.uint16),
                         chunks=(64,), **hdf5plugin.Blosc2(cname="zstd", clevel=3))
        _attrs_h5(f, ["g/grid", "g/ramp"])


def _zlib(path: Path) -> None:
    rng = _rng("zlib")
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        f.create_carray("/g", "plane", obj=rng.integers(-300, 300, (21, 17)).astype(np.int16),
                        chunkshape=(6, 5), track_times=False,
                        filters=hyperslab.Filters(4, "zlib", shuffle=True))
        _attrs_hs(f, ["/g/plane"])


def _unfiltered(path: Path) -> None:
    rng = _rng("unfiltered")
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        stack = f.create_earray("/g", "stack", hyperslab.Float32Atom(), shape=(0, 5, 3),
                                chunkshape=(4, 2, 2), track_times=False)
        stack.append(_floats(rng, (19, 5, 3)).astype(np.float32))
        f.create_array("/g", "small", rng.integers(-100, 100, (7, 6)).astype(np.int8),
                       track_times=False)
        _attrs_hs(f, ["/g/stack", "/g/small"])


INDEX_BLOCKSIZES = (768, 192, 48, 12)
"""Small index slices, so that a few hundred rows fill sorted slices besides the last row."""
TABLE_DTYPE = np.dtype([("id", "<i4"), ("x", "<f8"), ("name", "S6"), ("n", "<i2")])


def _records(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = np.zeros(count, TABLE_DTYPE)
    rows["id"] = np.arange(count)
    rows["x"] = np.round(rng.normal(size=count) * 10, 1)
    rows["name"] = rng.choice([b"a", b"bb", b"ccc", b"dd", b"eeeeee"], count)
    rows["n"] = rng.integers(-50, 50, count)
    return rows


def _table_indexed(path: Path) -> None:
    rng = _rng("table_indexed")
    with hyperslab.open_file(path, "w") as f:
        f.create_group("/", "g")
        t = f.create_table("/g", "t", _records(rng, 300), chunkshape=(32,),
                           filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True),
                           track_times=False)
        t.cols.x.create_index(kind="full", _blocksizes=INDEX_BLOCKSIZES,
                              filters=hyperslab.Filters(5, "blosc2:lz4", shuffle=True))
        _attrs_hs(f, ["/g/t"])


def _table_pytables(path: Path) -> None:
    import tables  # the oracle library writes this base only

    rng = _rng("table_pytables")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTables' own NaturalNameWarning & co.
        with tables.open_file(str(path), "w") as f:
            f.create_group("/", "g")
            t = f.create_table("/g", "t", _records(rng, 200), chunkshape=(24,),
                               filters=tables.Filters(3, "zlib", shuffle=True),
                               track_times=False)
            t.cols.n.create_index(_blocksizes=INDEX_BLOCKSIZES)
            for name, value in ROOT_ATTRS.items():
                f.root._v_attrs[name] = value
            for name, value in GROUP_ATTRS.items():
                f.root.g._v_attrs[name] = value
            for name, value in LEAF_ATTRS.items():
                t.attrs[name] = value


BASES: tuple[Base, ...] = (
    Base("b2nd", (Subject("/g/cube", "array"),), _b2nd),
    Base("b2nd_earray", (Subject("/g/log", "array"),), _b2nd_earray),
    Base("blosc2_plain", (Subject("/g/line", "array"),), _blosc2_plain),
    Base("h5py_blosc2", (Subject("/g/grid", "array"), Subject("/g/ramp", "array")),
         _h5py_blosc2),
    Base("zlib", (Subject("/g/plane", "array"),), _zlib),
    Base("unfiltered", (Subject("/g/stack", "array"), Subject("/g/small", "array")),
         _unfiltered),
    Base("table_indexed", (Subject("/g/t", "table", ("id", "x", "n"), "x"),), _table_indexed),
    Base("table_pytables", (Subject("/g/t", "table", ("id", "x", "n"), "n"),),
         _table_pytables),
)
BASES_BY_NAME = {base.name: base for base in BASES}


def build(directory: Path, names: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Write the base files (all, or those named) into ``directory``; name -> path."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for base in BASES:
        if names is None or base.name in names:
            path = directory / f"{base.name}.h5"
            base.write(path)
            paths[base.name] = path
    return paths
