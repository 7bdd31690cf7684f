"""Read paths: each probe reads one thing through hyperslab and through h5py + hdf5plugin.

A :class:`Probe` pairs a hyperslab read (given the open ``hyperslab.File``) with the
oracle's (given the open ``h5py.File``).  Selections are read by the oracle the way
NumPy would index: h5py reads the bounding box of the selection with step-1 slices and
NumPy applies the steps, negative steps and index lists to it, so exactly the chunks
hyperslab touches are decoded, and a key out of range raises ``IndexError`` in both.
Queries and reductions are evaluated by NumPy/numexpr on h5py's full read.

Read paths (:data:`PATHS`): ``open``, ``walk`` (``walk_nodes``), ``attrs`` (listing and
values, every node), ``info`` (shape, dtype, chunk shape), ``read``, ``slice``, ``step``,
``negstep``, ``item``, ``points`` (index lists, ``read_coordinates``), ``iterrows``
(rows of arrays and tables, ``row['col']``), ``col`` (table columns), ``where``
(``read_where``, ``get_where_list``, ``where``), ``indexed`` (conditions on the indexed
column, always through the index), ``sorted`` (``read_sorted`` on a full index),
``reduce`` (``sum``, ``mean``, ``std``, ``min``, ``max``, ``argmax`` of leaves and
table columns, and an ``Expr``), ``chunk`` (``chunk_info``/``read_chunk`` against
``get_chunk_info_by_coord``/``read_direct_chunk``) and ``close``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h5py
import numexpr
import numpy as np

import hyperslab

from .corpus import Base, Subject

PATHS = ("open", "walk", "attrs", "info", "read", "slice", "step", "negstep", "item",
         "points", "iterrows", "col", "where", "indexed", "sorted", "reduce", "chunk",
         "close")


@dataclass(frozen=True)
class Probe:
    """One read: ``path`` (a name in :data:`PATHS`), ``label`` (what exactly), the
    hyperslab and oracle readers, and whether values are compared approximately."""

    path: str
    label: str
    hs: Callable[[Any], Any]
    h5: Callable[[h5py.File], Any]
    approx: bool = False
    inputs: Callable[[h5py.File], Any] | None = None
    """For answers that come from more than the subject's data (indexed queries): read
    all they depend on, so that the judge knows whether it is damaged (stale)."""


@dataclass(frozen=True)
class Pristine:
    """What the oracle sees of a subject in the undamaged base."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...] | None
    fields: tuple[str, ...]


# ---------------------------------------------------------------------------- the oracle


def _indices(key: Any, shape: tuple[int, ...]) -> tuple[list[np.ndarray], list[bool]]:
    """Per dimension, the indices a NumPy-style key selects, and whether it is dropped."""
    key = key if isinstance(key, tuple) else (key,)
    key = key + (slice(None),) * (len(shape) - len(key))
    if len(key) > len(shape):
        raise IndexError(f"too many indices for a {len(shape)}-d dataset")
    picks, dropped = [], []
    for k, n in zip(key, shape, strict=True):
        if isinstance(k, slice):
            picks.append(np.arange(n)[k])
            dropped.append(False)
            continue
        items = np.asarray(k, dtype=np.int64).reshape(-1)
        if np.any((items < -n) | (items >= n)):
            raise IndexError(f"index {k} is out of bounds for an axis of size {n}")
        picks.append(items % n)
        dropped.append(isinstance(k, int))
    return picks, dropped


def h5_select(dset: h5py.Dataset, key: Any) -> np.ndarray:
    """``dset[key]`` with NumPy semantics (steps < 0, lists), reading only its bounding box."""
    picks, dropped = _indices(key, dset.shape)
    out_shape = tuple(len(p) for p, d in zip(picks, dropped, strict=True) if not d)
    if any(len(p) == 0 for p in picks):
        return np.empty(out_shape, dset.dtype)
    box = tuple(slice(int(p.min()), int(p.max()) + 1) for p in picks)
    block = dset[box] if dset.shape else dset[()]
    relative = [p - b.start for p, b in zip(picks, box, strict=True)]
    return np.asarray(block[np.ix_(*relative)]).reshape(out_shape)


def _h5_records(f: h5py.File, path: str, stop: int | None = None) -> np.ndarray:
    """A table's records (the first ``stop``); string fields as stored, with any bytes after
    a NUL (h5py's conversion of NULLTERM strings cuts there, PyTables and hyperslab query
    the raw bytes)."""
    dset = f[path]
    if stop is not None and stop < dset.shape[0]:
        records = np.asarray(dset[:stop])
        space = dset.id.get_space()
        space.select_hyperslab((0,), (stop,))
        memory = h5py.h5s.create_simple((stop,))
    else:
        records = np.asarray(dset[...])
        space = memory = h5py.h5s.ALL
    strings = [name for name in records.dtype.names or () if records.dtype[name].kind == "S"]
    if strings:
        raw = np.empty(records.shape, dset.dtype)
        dset.id.read(memory, space, raw, mtype=dset.id.get_type())
        for name in strings:
            records[name] = raw[name]
    return records


def _h5_where(f: h5py.File, path: str, condition: str) -> np.ndarray:
    records = _h5_records(f, path)
    names = {name: records[name] for name in records.dtype.names or ()}
    return np.flatnonzero(numexpr.evaluate(condition, names))


# ------------------------------------------------------------------------ key formatting


def _fmt(key: Any) -> str:
    def one(k: Any) -> str:
        if isinstance(k, slice):
            parts = ["" if v is None else str(v) for v in (k.start, k.stop, k.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if k.step is not None else "")
        return str(k)

    return ", ".join(one(k) for k in (key if isinstance(key, tuple) else (key,)))


def _select(path: str, subject: str, key: Any) -> Probe:
    return Probe(path, f"{subject}[{_fmt(key)}]",
                 lambda f: f.get_node(subject)[key],
                 lambda f: h5_select(f[subject], key))


# ------------------------------------------------------------------------- file probes


def _walk_h5(f: h5py.File) -> list[str]:
    """The paths h5py's ``visit`` lists; a name that is not UTF-8 (a damaged file), which
    h5py gives as bytes, as text with surrogate escapes, as hyperslab lists it."""
    names = ["/"]

    def visit(name: str | bytes) -> None:
        name = _name_text(name)
        if not any(part.startswith("_i_") for part in name.split("/")):
            names.append("/" + name)

    f.visit(visit)
    return sorted(names)


def _attrs_hs(f: Any, where: str) -> tuple[list[str], dict[str, Any]]:
    attrs = f.get_node(where)._v_attrs
    return (sorted(attrs._f_list("all")),
            {name: attrs[name] for name in attrs._f_list("user")})


def _attrs_h5(f: h5py.File, where: str) -> tuple[list[str], dict[str, Any]]:
    """h5py's attributes, names as text: h5py lists a name that is not UTF-8 (a damaged
    file) as its bytes, which hyperslab lists as text with surrogate escapes (with a
    ``DataTypeWarning``), both faithful to the stored bytes."""
    attrs = f[where].attrs
    names = {_name_text(name): name for name in attrs.keys()}
    return sorted(names), {text: attrs[name] for text, name in sorted(names.items())
                           if not _is_sys_attr(text)}


def _name_text(name: str | bytes) -> str:
    return name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name


def _is_sys_attr(name: str) -> bool:
    """PyTables' system attributes, which ``_f_list('user')`` leaves out."""
    return name in _SYS_ATTRS or name.startswith("FIELD_")


_SYS_ATTRS = frozenset({
    "CLASS", "VERSION", "TITLE", "NROWS", "EXTDIM", "ENCODING", "PYTABLES_FORMAT_VERSION",
    "FLAVOR", "FILTERS", "AUTO_INDEX", "DIRTY", "NODE_TYPE", "NODE_TYPE_VERSION", "PSEUDOATOM",
})


def file_probes(base: Base) -> list[Probe]:
    """``walk`` and ``attrs`` of every node that holds attributes."""
    probes = [Probe("walk", "walk_nodes('/')",
                    lambda f: sorted(n._v_pathname for n in f.walk_nodes("/")), _walk_h5)]
    for where in ("/", "/g", *(s.path for s in base.subjects)):
        probes.append(Probe("attrs", f"{where}._v_attrs", lambda f, w=where: _attrs_hs(f, w),
                            lambda f, w=where: _attrs_h5(f, w)))
    return probes


# ------------------------------------------------------------------------ array probes


def _info_hs(node: Any) -> tuple[Any, ...]:
    return tuple(node.shape), node.dtype.newbyteorder("="), node.chunkshape


def _info_h5(dset: h5py.Dataset) -> tuple[Any, ...]:
    return tuple(dset.shape), dset.dtype.newbyteorder("="), dset.chunks


def _edge_keys(shape: tuple[int, ...]) -> dict[str, list[Any]]:
    """Selections by read path; slices reach the partial edge chunks."""
    first = shape[0]
    rest = tuple(slice(None) for _ in shape[1:])
    return {
        "slice": [tuple(slice(n // 3, n) for n in shape),
                  tuple(slice(1, max(2, n // 2)) for n in shape)],
        "step": [(slice(None, None, 2), *rest),
                 tuple(slice(1, None, 3) for _ in shape)],
        "negstep": [(slice(None, None, -1), *rest),
                    tuple(slice(n - 1, 0, -2) for n in shape)],
        "item": [tuple(n - 1 for n in shape), tuple(n // 2 for n in shape)],
        "points": [[0, first // 2, first - 1], ([first - 1, 0], *rest[:1])],
    }


def _chunk_hs(node: Any, coords: tuple[int, ...]) -> tuple[Any, ...]:
    """A chunk's start, size and stored bytes (its address and filter mask are whatever
    the chunk index records, damaged or not: the bytes say whether it was found)."""
    info = node.chunk_info(coords)
    return tuple(info.start), info.size, bytes(node.read_chunk(coords))


def _chunk_h5(dset: h5py.Dataset, coords: tuple[int, ...]) -> tuple[Any, ...]:
    info = dset.id.get_chunk_info_by_coord(coords)
    _, data = dset.id.read_direct_chunk(coords)
    return tuple(info.chunk_offset), info.size, bytes(data)


def _chunk_probes(subject: str, pristine: Pristine) -> list[Probe]:
    if pristine.chunks is None:
        return []
    last = tuple((n - 1) // c * c for n, c in zip(pristine.shape, pristine.chunks,
                                                 strict=True))
    probes = []
    for coords in {tuple(0 for _ in last), last}:
        probes.append(Probe("chunk", f"{subject}.read_chunk({coords})",
                            lambda f, c=coords: _chunk_hs(f.get_node(subject), c),
                            lambda f, c=coords: _chunk_h5(f[subject], c)))
    return probes


_REDUCTIONS = (("sum", None), ("mean", -1), ("std", 0), ("min", None), ("max", 0),
               ("argmax", None))


def _reduce_probes(subject: str, ndim: int) -> list[Probe]:
    probes = []
    for op, axis in _REDUCTIONS:
        axis = None if axis is None or ndim == 1 else axis
        probes.append(Probe("reduce", f"{subject}.{op}(axis={axis})",
                            lambda f, o=op, a=axis: getattr(f.get_node(subject), o)(axis=a),
                            lambda f, o=op, a=axis: getattr(np, o)(f[subject][...], axis=a),
                            approx=op in ("sum", "mean", "std")))
    probes.append(Probe("reduce", f"Expr('a * 2 + 1', a={subject}).eval()",
                        lambda f: hyperslab.Expr("a * 2 + 1",
                                                 {"a": f.get_node(subject)}).eval(),
                        lambda f: numexpr.evaluate("a * 2 + 1", {"a": f[subject][...]})))
    return probes


def array_probes(subject: str, pristine: Pristine) -> list[Probe]:
    """Every read path of an Array, CArray, EArray or plain h5py dataset."""
    shape = pristine.shape
    probes = [
        Probe("info", f"{subject} shape/dtype/chunkshape",
              lambda f: _info_hs(f.get_node(subject)), lambda f: _info_h5(f[subject])),
        Probe("read", f"{subject}.read()", lambda f: f.get_node(subject).read(),
              lambda f: f[subject][...]),
        Probe("read", f"{subject}.read(1, {shape[0]}, 3)",
              lambda f: f.get_node(subject).read(1, shape[0], 3),
              lambda f: h5_select(f[subject], slice(1, shape[0], 3))),
        Probe("iterrows", f"{subject}.iterrows(1, {shape[0]}, 2)",
              lambda f: list(f.get_node(subject).iterrows(1, shape[0], 2)),
              lambda f: list(h5_select(f[subject], slice(1, shape[0], 2)))),
    ]
    for path, keys in _edge_keys(shape).items():
        probes.extend(_select(path, subject, key) for key in keys)
    return probes + _reduce_probes(subject, len(shape)) + _chunk_probes(subject, pristine)


# ------------------------------------------------------------------------ table probes


ITERATED_ROWS = 100_000
"""Rows an iteration probe consumes at most: an iteration streams, and a damaged extent
of 2**40 rows is a stream that a reader stops, not one to drain (h5py's side reads the
same rows as one selection)."""


def _rows_hs(rows: Any, fields: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``row[name]`` of the first :data:`ITERATED_ROWS` rows, gathered by field (compared
    as arrays: fast)."""
    columns: dict[str, list[Any]] = {name: [] for name in fields}
    for row in itertools.islice(rows, ITERATED_ROWS):
        for name in fields:
            columns[name].append(row[name])
    return {name: np.asarray(values) for name, values in columns.items()}


def _rows_h5(records: np.ndarray, fields: tuple[str, ...]) -> dict[str, np.ndarray]:
    return {name: np.asarray(records[name]) for name in fields}


def _conditions(subject: Subject) -> tuple[list[str], list[str]]:
    """Conditions on columns that are not indexed, and on the indexed one."""
    if subject.indexed == "n":
        return (["(id > 10) & (x < 5)", "name == b'bb'", "x > 0"],
                ["n > 10", "(n >= -3) & (n < 4)", "(n < -40) | (n == 7)"])
    return (["(id > 10) & (n < 20)", "name == b'bb'", "n >= 0"],
            ["x > 5.0", "(x >= -3) & (x < 4)", "(x < -12) | (x == 0.5)"])


def _table_reads(subject: str, nrows: int, fields: tuple[str, ...]) -> list[Probe]:
    probes = [
        Probe("info", f"{subject} shape/dtype/chunkshape",
              lambda f: _info_hs(f.get_node(subject)), lambda f: _info_h5(f[subject])),
        Probe("read", f"{subject}.read()", lambda f: f.get_node(subject).read(),
              lambda f: _h5_records(f, subject)),
        Probe("read", f"{subject}.read(5, {nrows - 3}, field='x')",
              lambda f: f.get_node(subject).read(5, nrows - 3, field="x"),
              lambda f: h5_select(f[subject], slice(5, nrows - 3))["x"]),
        _select("slice", subject, slice(10, nrows - 7)),
        _select("step", subject, slice(None, None, 7)),
        Probe("step", f"{subject}.read(3, None, 5)",
              lambda f: f.get_node(subject).read(3, None, 5),
              lambda f: h5_select(f[subject], slice(3, None, 5))),
        Probe("negstep", f"{subject}.read(None, None, -3)",  # t[::-3] is PyTables' ValueError
              lambda f: f.get_node(subject).read(None, None, -3),
              lambda f: h5_select(f[subject], slice(None, None, -3))),
        _select("item", subject, nrows - 1),
        _select("item", subject, 0),
        _select("points", subject, [3, 5, nrows // 2]),
        Probe("points", f"{subject}.read_coordinates([0, 17, {nrows - 1}])",
              lambda f: f.get_node(subject).read_coordinates([0, 17, nrows - 1]),
              lambda f: h5_select(f[subject], [0, 17, nrows - 1])),
        Probe("iterrows", f"{subject}.iterrows(0, None, 3)",
              lambda f: _rows_hs(f.get_node(subject).iterrows(0, None, 3), fields),
              lambda f: _rows_h5(h5_select(f[subject], slice(0, 3 * ITERATED_ROWS, 3)),
                                 fields)),
        Probe("iterrows", f"for row in {subject}",
              lambda f: _rows_hs(f.get_node(subject), fields),
              lambda f: _rows_h5(_h5_records(f, subject, ITERATED_ROWS), fields)),
        Probe("col", f"{subject}.col('x')", lambda f: f.get_node(subject).col("x"),
              lambda f: _h5_records(f, subject)["x"]),
        Probe("col", f"{subject}.cols.n[5:50:2]", lambda f: f.get_node(subject).cols.n[5:50:2],
              lambda f: h5_select(f[subject], slice(5, 50, 2))["n"]),
    ]
    for op, column in (("sum", "x"), ("max", "n"), ("mean", "id"), ("argmax", "x")):
        probes.append(Probe(
            "reduce", f"{subject}.cols.{column}.{op}()",
            lambda f, o=op, c=column: getattr(getattr(f.get_node(subject).cols, c), o)(),
            lambda f, o=op, c=column: getattr(np, o)(_h5_records(f, subject)[c]),
            approx=op in ("sum", "mean")))
    return probes


def _index_inputs(f: h5py.File, table: str, column: str) -> list[Any]:
    """Everything an indexed answer depends on: the table, the index's datasets and
    their attributes."""
    parent, name = table.rsplit("/", 1)
    group = f[f"{parent}/_i_{name}/{column}"]
    out: list[Any] = [_h5_records(f, table), sorted(group.attrs.items())]
    for key in sorted(group):
        out += [key, group[key][...], sorted(group[key].attrs.items())]
    return out


def _query_probes(subject: Subject, fields: tuple[str, ...]) -> list[Probe]:
    where = subject.path
    plain, indexed = _conditions(subject)
    column = subject.indexed or ""
    probes = []
    for path, conditions in (("where", plain), ("indexed", indexed)):
        inputs = None if path == "where" else (lambda f: _index_inputs(f, where, column))
        for cond in conditions:
            probes.append(Probe(
                path, f"{where}.read_where({cond!r})",
                lambda f, c=cond: f.get_node(where).read_where(c, {}),
                lambda f, c=cond: _h5_records(f, where)[_h5_where(f, where, c)],
                inputs=inputs))
            probes.append(Probe(
                path, f"{where}.get_where_list({cond!r})",
                lambda f, c=cond: f.get_node(where).get_where_list(c, {}),
                lambda f, c=cond: _h5_where(f, where, c), inputs=inputs))
        cond = conditions[0]
        probes.append(Probe(
            path, f"[row[col] for row in {where}.where({cond!r})]",
            lambda f, c=cond: _rows_hs(f.get_node(where).where(c, {}), fields),
            lambda f, c=cond: _rows_h5(_h5_records(f, where)[_h5_where(f, where, c)], fields),
            inputs=inputs))
    if column == "x":  # a full index: sorted reads
        probes.append(Probe(
            "sorted", f"{where}.read_sorted('x', field='x')",
            lambda f: f.get_node(where).read_sorted("x", field="x"),
            lambda f: np.sort(_h5_records(f, where)["x"], kind="stable"),
            inputs=lambda f: _index_inputs(f, where, column)))
    return probes


def table_probes(subject: Subject, pristine: Pristine) -> list[Probe]:
    """Every read path of a Table."""
    probes = _table_reads(subject.path, pristine.shape[0], pristine.fields)
    return probes + _query_probes(subject, pristine.fields) + _chunk_probes(subject.path,
                                                                             pristine)


def probes_for(base: Base, pristine: dict[str, Pristine]) -> list[Probe]:
    """The probes of a base file, after ``open`` and before ``close``."""
    probes = file_probes(base)
    for subject in base.subjects:
        if subject.kind == "table":
            probes += table_probes(subject, pristine[subject.path])
        else:
            probes += array_probes(subject.path, pristine[subject.path])
    return probes


def pristine_of(f: h5py.File, base: Base) -> dict[str, Pristine]:
    """Shapes, chunk shapes and fields of the subjects of an undamaged base."""
    out = {}
    for subject in base.subjects:
        dset = f[subject.path]
        out[subject.path] = Pristine(tuple(dset.shape), dset.chunks,
                                     tuple(dset.dtype.names or ()))
    return out
