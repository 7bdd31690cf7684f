"""Atoms against PyTables (the oracle): same classes, attributes, reprs, equality and errors."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pandas as pd
import pytest
import tables

from hyperslab.errors import FlavorWarning
from hyperslab.nodes.atoms import atom as hs
from hyperslab.nodes.atoms.atom import atom_from_hdf5_dtype

Factory = Callable[[Any], Any]
"""Builds an atom (or anything) from a module: ``tables`` or ``hyperslab.nodes.atoms.atom``."""


PLAIN: dict[str, Any] = {"legacy": "1.25"} if np.__version__ >= "2" else {}
"""NumPy print options that print scalars as ``0.0``, not ``np.float64(0.0)``."""


def legacy_repr(obj: object) -> str:
    # PyTables' reprs under NumPy 2 print ``np.float64(0.0)`` and ``np.int64(2)`` shapes;
    # with legacy printing they read as PyTables documents them, which is what we print.
    with np.printoptions(**PLAIN):
        return repr(obj)


def describe(atom: Any) -> tuple[Any, ...]:
    """Everything PyTables exposes about an atom, in comparable form."""
    return (
        type(atom).__name__,
        legacy_repr(atom),
        atom.dtype,
        atom.kind,
        atom.type,
        atom.itemsize,
        tuple(int(dim) for dim in atom.shape),
        legacy_repr(atom.dflt),
        np.asarray(atom.dflt).dtype,
        atom.size,
        atom.recarrtype,
        atom.ndim,
        atom.prefix(),
    )


def outcome(factory: Factory, module: Any) -> tuple[Any, ...]:
    """What ``factory(module)`` gives: a description, or the exception's type and text."""
    try:
        with np.printoptions(**PLAIN):  # for reprs inside PyTables' messages
            atom = factory(module)
    except Exception as exc:
        return ("raised", type(exc), str(exc))
    return ("made", *describe(atom))


# ----------------------------------------------------------------------------- construction

CONSTRUCTORS: dict[str, Factory] = {
    "Bool": lambda m: m.BoolAtom(),
    "Bool-dflt-int": lambda m: m.BoolAtom(dflt=1),
    "Bool-shaped": lambda m: m.BoolAtom(shape=(2,), dflt=True),
    "Int": lambda m: m.IntAtom(),
    "Int-2": lambda m: m.IntAtom(2),
    "Int-kw": lambda m: m.IntAtom(itemsize=8, shape=3, dflt=-1),
    "Int8": lambda m: m.Int8Atom(dflt=-128),
    "Int16": lambda m: m.Int16Atom(shape=(2, 2)),
    "Int32": lambda m: m.Int32Atom(),
    "Int32-shaped": lambda m: m.Int32Atom(shape=(2, 3)),
    "Int32-int-shape": lambda m: m.Int32Atom(shape=4),
    "Int32-list-shape": lambda m: m.Int32Atom(shape=[2, 3]),
    "Int32-np-shape": lambda m: m.Int32Atom(shape=np.int64(3)),
    "Int32-zero-dim": lambda m: m.Int32Atom(shape=(0,)),
    "Int32-array-dflt": lambda m: m.Int32Atom(shape=(2,), dflt=[1, 2]),
    "Int32-row-dflt": lambda m: m.Int32Atom(shape=(2, 3), dflt=[1, 2, 3]),
    "Int64": lambda m: m.Int64Atom(dflt=2**40),
    "UInt": lambda m: m.UIntAtom(),
    "UInt-1": lambda m: m.UIntAtom(1, shape=3, dflt=7),
    "UInt8": lambda m: m.UInt8Atom(dflt=255),
    "UInt16": lambda m: m.UInt16Atom(),
    "UInt32": lambda m: m.UInt32Atom(shape=(1,)),
    "UInt64": lambda m: m.UInt64Atom(dflt=2**63),
    "Float": lambda m: m.FloatAtom(),
    "Float-4": lambda m: m.FloatAtom(itemsize=4, shape=2, dflt=3),
    "Float16": lambda m: m.Float16Atom(dflt=0.1),
    "Float32": lambda m: m.Float32Atom(dflt=1.5),
    "Float32-tenth": lambda m: m.Float32Atom(dflt=0.1),
    "Float64": lambda m: m.Float64Atom(),
    "Float64-nan": lambda m: m.Float64Atom(dflt=np.nan),
    "Float64-None": lambda m: m.Float64Atom(dflt=None),
    "Complex-8": lambda m: m.ComplexAtom(8),
    "Complex-16": lambda m: m.ComplexAtom(16, dflt=1 + 2j),
    "Complex-32": lambda m: m.ComplexAtom(itemsize=32),
    "Complex-shaped": lambda m: m.ComplexAtom(itemsize=8, shape=(2,), dflt=[1j, 2]),
    "Complex-np-size": lambda m: m.ComplexAtom(np.int64(8)),
    "String": lambda m: m.StringAtom(5),
    "String-dflt": lambda m: m.StringAtom(5, dflt=b"ab"),
    "String-str-dflt": lambda m: m.StringAtom(5, dflt="ab"),
    "String-truncated": lambda m: m.StringAtom(3, dflt=b"abcdefg"),
    "String-None": lambda m: m.StringAtom(5, dflt=None),
    "String-shaped": lambda m: m.StringAtom(itemsize=4, shape=(2,)),
    "Time": lambda m: m.TimeAtom(),
    "Time-8": lambda m: m.TimeAtom(8),
    "Time32": lambda m: m.Time32Atom(dflt=5),
    "Time64": lambda m: m.Time64Atom(shape=2, dflt=1.5),
    "Reference": lambda m: m.ReferenceAtom(),
    "Reference-shaped": lambda m: m.ReferenceAtom(shape=2),
    "Enum-list": lambda m: m.EnumAtom(["a", "b", "c"], "b", "int8"),
    "Enum-dict": lambda m: m.EnumAtom({"x": 3, "y": 9}, "y", m.UInt16Atom()),
    "Enum-shaped": lambda m: m.EnumAtom(["a", "b"], "b", "int32", shape=(2, 2)),
    "Enum-negative": lambda m: m.EnumAtom({"lo": -5, "hi": 5}, "lo", base="int16"),
}


if hasattr(np, "float128"):  # extended precision, where NumPy has it
    CONSTRUCTORS["Float128"] = lambda m: m.Float128Atom(dflt=1.25)
    CONSTRUCTORS["Float-16"] = lambda m: m.FloatAtom(16)


@pytest.mark.parametrize("factory", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_constructors_match_pytables(factory: Factory) -> None:
    expected = outcome(factory, tables)
    assert expected[0] == "made"
    assert outcome(factory, hs) == expected


FACTORIES: dict[str, Factory] = {
    "sctype-int16": lambda m: m.Atom.from_sctype(np.int16, shape=(2, 2)),
    "sctype-name": lambda m: m.Atom.from_sctype("float64"),
    "sctype-bool": lambda m: m.Atom.from_sctype(np.bool_),
    "sctype-complex-name": lambda m: m.Atom.from_sctype("c16"),
    "sctype-positional": lambda m: m.Atom.from_sctype(np.float32, 3, 1.0),
    "dtype-f8": lambda m: m.Atom.from_dtype(np.dtype("float64")),
    "dtype-big-endian": lambda m: m.Atom.from_dtype(np.dtype(">f8")),
    "dtype-big-endian-int": lambda m: m.Atom.from_dtype(np.dtype(">i2")),
    "dtype-big-endian-complex": lambda m: m.Atom.from_dtype(np.dtype(">c8")),
    "dtype-subarray": lambda m: m.Atom.from_dtype(np.dtype(("i4", (2, 3)))),
    "dtype-subarray-dflt": lambda m: m.Atom.from_dtype(np.dtype(("f4", (2,))), dflt=[1, 2]),
    "dtype-string": lambda m: m.Atom.from_dtype(np.dtype("S7")),
    "dtype-string-dflt": lambda m: m.Atom.from_dtype(np.dtype("S5"), dflt=b"xy"),
    "dtype-string-subarray": lambda m: m.Atom.from_dtype(np.dtype(("S3", (2,)))),
    "dtype-bool": lambda m: m.Atom.from_dtype(np.dtype("?")),
    "dtype-f2": lambda m: m.Atom.from_dtype(np.dtype("f2")),
    "dtype-longdouble": lambda m: m.Atom.from_dtype(np.dtype("g")),
    "dtype-clongdouble": lambda m: m.Atom.from_dtype(np.dtype("G")),
    "dtype-c8": lambda m: m.Atom.from_dtype(np.dtype("c8")),
    "dtype-u8": lambda m: m.Atom.from_dtype(np.dtype("u8")),
    "type-bool": lambda m: m.Atom.from_type("bool"),
    "type-int16-shape": lambda m: m.Atom.from_type("int16", (2, 2)),
    "type-positional": lambda m: m.Atom.from_type("uint64", 3, 7),
    "type-complex64": lambda m: m.Atom.from_type("complex64"),
    "type-complex256": lambda m: m.Atom.from_type("complex256"),
    "type-time32": lambda m: m.Atom.from_type("time32"),
    "type-time64": lambda m: m.Atom.from_type("time64"),
    "type-float16": lambda m: m.Atom.from_type("float16"),
    "type-float128": lambda m: m.Atom.from_type("float128"),
    "kind-int-2": lambda m: m.Atom.from_kind("int", itemsize=2, shape=(2, 2)),
    "kind-int-default": lambda m: m.Atom.from_kind("int", shape=(2, 2)),
    "kind-int-shape-1": lambda m: m.Atom.from_kind("int", shape=1),
    "kind-string": lambda m: m.Atom.from_kind("string", 10),
    "kind-string-dflt": lambda m: m.Atom.from_kind("string", 4, dflt=b"hey"),
    "kind-complex": lambda m: m.Atom.from_kind("complex"),
    "kind-complex-8": lambda m: m.Atom.from_kind("complex", 8, shape=2, dflt=1),
    "kind-bool": lambda m: m.Atom.from_kind("bool"),
    "kind-time": lambda m: m.Atom.from_kind("time"),
    "kind-time-8": lambda m: m.Atom.from_kind("time", 8),
    "kind-float-16": lambda m: m.Atom.from_kind("float", 16),
    "kind-float-np-size": lambda m: m.Atom.from_kind("float", np.int64(4)),
    "kind-uint-dflt": lambda m: m.Atom.from_kind("uint", 1, dflt=200),
    "subclass-call": lambda m: m.Int8Atom.from_type("float32"),
}


@pytest.mark.parametrize("factory", FACTORIES.values(), ids=FACTORIES.keys())
def test_factories_match_pytables(factory: Factory) -> None:
    expected = outcome(factory, tables)
    assert expected[0] == "made"
    assert outcome(factory, hs) == expected


COPIES: dict[str, Factory] = {
    "plain": lambda m: m.Int32Atom(shape=12).copy(),
    "shape": lambda m: m.Int32Atom(shape=12).copy(shape=(2, 2)),
    "dflt": lambda m: m.Int32Atom(shape=(2, 3)).copy(dflt=4),
    "string-itemsize": lambda m: m.StringAtom(5, dflt=b"ab").copy(itemsize=7),
    "string-shape": lambda m: m.StringAtom(3, shape=2).copy(shape=()),
    "complex": lambda m: m.ComplexAtom(8, dflt=1j).copy(),
    "time": lambda m: m.Time32Atom(dflt=3).copy(shape=(4,)),
    "abstract-made": lambda m: m.IntAtom(2, dflt=3).copy(),
    "enum": lambda m: m.EnumAtom(["a", "b"], "b", "uint16").copy(dflt="a"),
    "enum-shape": lambda m: m.EnumAtom(["a", "b"], "b", "int8").copy(shape=(3,)),
}


@pytest.mark.parametrize("factory", COPIES.values(), ids=COPIES.keys())
def test_copy_matches_pytables(factory: Factory) -> None:
    expected = outcome(factory, tables)
    assert expected[0] == "made"
    assert outcome(factory, hs) == expected


def test_copy_is_a_new_object_and_rejects_unknown_arguments() -> None:
    atom = hs.Int32Atom(shape=(2,), dflt=[1, 2])
    clone = atom.copy()
    assert clone is not atom
    assert clone == atom
    with pytest.raises(TypeError, match="foobar"):
        atom.copy(foobar=42)


def test_examples_from_the_brief() -> None:
    string = hs.StringAtom(5, dflt=b"ab")
    assert (string.itemsize, string.dflt, string.dtype) == (5, b"ab", np.dtype("S5"))
    assert isinstance(string.dflt, np.bytes_)
    single = hs.Float32Atom(dflt=1.5)
    assert single.dflt == 1.5
    assert isinstance(single.dflt, np.float32)
    shaped = hs.Int32Atom(shape=(2, 3))
    assert shaped.dtype == np.dtype(("<i4", (2, 3)))
    assert shaped.shape == (2, 3)
    assert all(type(dim) is int for dim in shaped.shape)
    assert repr(hs.Float64Atom()) == "Float64Atom(shape=(), dflt=0.0)"
    assert repr(shaped) == "Int32Atom(shape=(2, 3), dflt=0)"
    assert repr(string) == "StringAtom(itemsize=5, shape=(), dflt=b'ab')"


def test_abstract_classes_make_concrete_instances() -> None:
    assert type(hs.IntAtom(2)) is hs.Int16Atom
    assert type(hs.UIntAtom()) is hs.UInt32Atom
    assert type(hs.FloatAtom(4)) is hs.Float32Atom
    assert type(hs.TimeAtom(8)) is hs.Time64Atom
    assert isinstance(hs.Int8Atom(), hs.IntAtom)
    assert hs.Int32Atom().signed is True
    assert hs.UInt32Atom().signed is False


@pytest.mark.parametrize(
    "name",
    sorted(name for name in dir(tables.atom) if name.endswith("Atom") and name[0].isupper()),
)
def test_every_pytables_atom_class_exists(name: str) -> None:
    if name == "MetaAtom":  # PyTables' registry metaclass; we register explicitly
        assert not hasattr(hs, name)
        return
    ours = getattr(hs, name)
    theirs = getattr(tables.atom, name)
    assert ours.__name__ == theirs.__name__
    if hasattr(theirs, "prefix"):
        assert ours.prefix() == theirs.prefix()
    if hasattr(theirs, "kind"):
        assert ours.kind == theirs.kind


def test_registries_match_pytables() -> None:
    assert set(hs.all_types) == set(tables.atom.all_types)
    for kind, entry in tables.atom.atom_map.items():
        ours = hs.atom_map[kind]
        if isinstance(entry, dict):
            assert isinstance(ours, dict)
            assert {size: cls.__name__ for size, cls in ours.items()} == {
                size: cls.__name__ for size, cls in entry.items()
            }
        else:
            assert ours.__name__ == entry.__name__
    expected = dict(tables.atom.deftype_from_kind)
    del expected["reference"]  # PyTables' 'NoneType' just makes from_kind fail oddly
    assert hs.deftype_from_kind == expected


@pytest.mark.parametrize("type_", ["int32", "string", "float128", "time64", "foo bar", "int20"])
def test_split_type_matches_pytables(type_: str) -> None:
    try:
        expected: Any = tables.atom.split_type(type_)
    except ValueError as exc:
        with pytest.raises(ValueError) as info:
            hs.split_type(type_)
        assert str(info.value) == str(exc)
    else:
        assert hs.split_type(type_) == expected


# ----------------------------------------------------------------------------- errors

ERRORS: dict[str, Factory] = {
    "abstract-atom": lambda m: m.Atom("i4", (), 0),
    "int-itemsize": lambda m: m.IntAtom(3),
    "int-itemsize-none": lambda m: m.IntAtom(itemsize=None),
    "float-itemsize": lambda m: m.FloatAtom(12),
    "time-itemsize": lambda m: m.TimeAtom(2),
    "complex-itemsize": lambda m: m.ComplexAtom(4),
    "complex-itemsize-none": lambda m: m.ComplexAtom(None),
    "complex64-old-name": lambda m: m.Complex64Atom(),
    "complex128-old-name": lambda m: m.Complex128Atom(),
    "string-negative": lambda m: m.StringAtom(-1),
    "string-not-int": lambda m: m.StringAtom("a"),
    "shape-zero": lambda m: m.Int32Atom(shape=0),
    "shape-negative-int": lambda m: m.Int32Atom(shape=-1),
    "shape-not-sequence": lambda m: m.Int32Atom(shape=None),
    "shape-rank-33": lambda m: m.Int32Atom(shape=(1,) * 33),
    "dflt-overflow": lambda m: m.Int8Atom(dflt=300),
    "dflt-not-a-number": lambda m: m.Float64Atom(dflt="x"),
    "dflt-not-ascii": lambda m: m.StringAtom(3, dflt="héllo"),
    "kind-unknown": lambda m: m.Atom.from_kind("Float"),
    "kind-not-a-string": lambda m: m.Atom.from_kind(5),
    "kind-itemsize": lambda m: m.Atom.from_kind("int", 3),
    "kind-itemsize-str": lambda m: m.Atom.from_kind("int", "4"),
    "kind-bool-itemsize": lambda m: m.Atom.from_kind("bool", 2),
    "kind-float-itemsize": lambda m: m.Atom.from_kind("float", 12),
    "kind-complex-itemsize": lambda m: m.Atom.from_kind("complex", 4),
    "kind-string-no-itemsize": lambda m: m.Atom.from_kind("string"),
    "kind-string-negative": lambda m: m.Atom.from_kind("string", -1),
    "kind-enum": lambda m: m.Atom.from_kind("enum"),
    "type-unknown": lambda m: m.Atom.from_type("Float64"),
    "type-string40": lambda m: m.Atom.from_type("string40"),
    "type-bool8": lambda m: m.Atom.from_type("bool8"),
    "type-string": lambda m: m.Atom.from_type("string"),
    "type-enum": lambda m: m.Atom.from_type("enum"),
    "type-object": lambda m: m.Atom.from_type("object"),
    "type-not-a-string": lambda m: m.Atom.from_type(5),
    "sctype-sized-string": lambda m: m.Atom.from_sctype("S5"),
    "sctype-record": lambda m: m.Atom.from_sctype("i4,i4"),
    "sctype-unknown": lambda m: m.Atom.from_sctype("foo"),
    "sctype-flexible-type": lambda m: m.Atom.from_sctype(np.bytes_),
    "dtype-compound": lambda m: m.Atom.from_dtype(np.dtype([("a", "i4")])),
    "dtype-void": lambda m: m.Atom.from_dtype(np.dtype("V4")),
    "dtype-object": lambda m: m.Atom.from_dtype(np.dtype("O")),
    "dtype-datetime": lambda m: m.Atom.from_dtype(np.dtype("M8[s]")),
    # pandas' extension dtypes, as its fixed format asks for their atoms (ValueError: none)
    "dtype-pandas-datetime-tz": lambda m: m.Atom.from_dtype(pd.DatetimeTZDtype("ns", "UTC")),
    "dtype-pandas-categorical": lambda m: m.Atom.from_dtype(pd.CategoricalDtype(["a"])),
    "dtype-pandas-period": lambda m: m.Atom.from_dtype(pd.PeriodDtype("D")),
    "enum-dflt-unknown": lambda m: m.EnumAtom(["a", "b"], "c", "int8"),
    "enum-float-base": lambda m: m.EnumAtom(["a", "b"], "a", "float64"),
    "enum-lacks-precision": lambda m: m.EnumAtom({"a": 1000}, "a", "int8"),
    "enum-negative-unsigned": lambda m: m.EnumAtom({"a": -1}, "a", "uint8"),
    "enum-enum-base": lambda m: m.EnumAtom(["a"], "a", m.EnumAtom(["a"], "a", "int8")),
    "enum-shaped-base": lambda m: m.EnumAtom(["a", "b"], "a", m.Int8Atom(shape=2)),
    "enum-bad-base-type": lambda m: m.EnumAtom(["a", "b"], "b", "bogus"),
    "enum-not-an-enum": lambda m: m.EnumAtom(5, "b", "int8"),
    "enum-string-values": lambda m: m.EnumAtom({"a": "x"}, "a", "int8"),
    "enum-tuple-values": lambda m: m.EnumAtom({"a": (1, 2)}, "a", "int8"),
}


@pytest.mark.parametrize("factory", ERRORS.values(), ids=ERRORS.keys())
def test_errors_match_pytables(factory: Factory) -> None:
    expected = outcome(factory, tables)
    assert expected[0] == "raised"
    _, exc_type, message = expected
    with pytest.raises(exc_type) as info:
        factory(hs)
    assert str(info.value).startswith(message)  # ours may add the offending value


def test_extension_dtypes_without_a_numpy_base_are_refused() -> None:
    # PyTables fails on reading their missing ``.base``/``.shape`` (AttributeError).
    for dtype in (pd.Int64Dtype(), pd.StringDtype(), pd.SparseDtype("float64")):
        with pytest.raises(TypeError, match="Cannot interpret"):
            hs.Atom.from_dtype(dtype)


def test_error_messages_name_the_offending_value() -> None:
    with pytest.raises(ValueError, match="``int``: 3;"):
        hs.Atom.from_kind("int", 3)
    with pytest.raises(ValueError, match="'Float'"):
        hs.Atom.from_kind("Float")
    with pytest.raises(ValueError, match="'string40'"):
        hs.Atom.from_type("string40")
    with pytest.raises(ValueError, match="-1"):
        hs.StringAtom(-1)
    with pytest.raises(KeyError, match="'c'"):
        hs.EnumAtom(["a", "b"], "c", "int8")


# Where we deliberately differ from PyTables: each case says what PyTables does.
def test_stricter_than_pytables() -> None:
    # PyTables truncates 2.5 to 2 and keeps a (3,) default for a (2,) atom.
    assert tables.Int32Atom(shape=(2.5,)).shape == (2,)
    with pytest.raises(TypeError, match=r"2\.5"):
        hs.Int32Atom(shape=(2.5,))
    assert hs.Int32Atom(shape=(2.0,)).shape == (2,)
    assert tables.Int32Atom(shape=(2,), dflt=[1, 2, 3]).dflt.shape == (3,)
    with pytest.raises(ValueError, match=r"\[1, 2, 3\]"):
        hs.Int32Atom(shape=(2,), dflt=[1, 2, 3])
    with pytest.raises(ValueError, match="must not be negative"):
        hs.Int32Atom(shape=(2, -1))
    # PyTables fails an assertion on anything but a NumPy scalar type or a string.
    with pytest.raises(AssertionError):
        tables.Atom.from_sctype(int)
    with pytest.raises(TypeError, match="<class 'int'>"):
        hs.Atom.from_sctype(int)
    # PyTables' from_kind('reference') fails parsing its own 'NoneType' default.
    with pytest.raises(ValueError, match="reference"):
        hs.Atom.from_kind("reference")
    # A 0-byte string: NumPy's error in PyTables, ours names the item size.
    with pytest.raises(ValueError, match="``string``: 0"):
        hs.StringAtom(0)


def test_from_dtype_unicode_warns_and_gives_a_string_atom() -> None:
    with pytest.warns(FlavorWarning):
        ours = hs.Atom.from_dtype(np.dtype("U20"))
    with pytest.warns(tables.FlavorWarning):
        theirs = tables.Atom.from_dtype(np.dtype("U20"))
    assert describe(ours) == describe(theirs)


def test_from_dtype_accepts_dtype_likes() -> None:
    assert hs.Atom.from_dtype("f4") == hs.Float32Atom()
    assert hs.Atom.from_dtype(np.int16) == hs.Int16Atom()


# ----------------------------------------------------------------------------- equality

EQUALITY_ATOMS: dict[str, Factory] = {
    "int32": lambda m: m.Int32Atom(),
    "int32-abstract": lambda m: m.IntAtom(4),
    "int32-dflt1": lambda m: m.Int32Atom(dflt=1),
    "int32-shape2": lambda m: m.Int32Atom(shape=2),
    "int32-shape2-tuple": lambda m: m.Int32Atom(shape=(2,)),
    "int32-shape2-dflt": lambda m: m.Int32Atom(shape=(2,), dflt=[1, 2]),
    "int32-shape21": lambda m: m.Int32Atom(shape=(2, 1)),
    "int64": lambda m: m.Int64Atom(),
    "uint32": lambda m: m.UInt32Atom(),
    "time32": lambda m: m.Time32Atom(),
    "float64": lambda m: m.Float64Atom(),
    "float64-nan": lambda m: m.Float64Atom(dflt=np.nan),
    "string5": lambda m: m.StringAtom(5),
    "string5-kind": lambda m: m.Atom.from_kind("string", 5),
    "string6": lambda m: m.StringAtom(6),
    "complex8": lambda m: m.ComplexAtom(8),
    "enum-int8": lambda m: m.EnumAtom(["a", "b"], "a", "int8"),
    "enum-int8-atom": lambda m: m.EnumAtom({"a": 0, "b": 1}, "a", m.Int8Atom()),
    "enum-int8-dflt-b": lambda m: m.EnumAtom(["a", "b"], "b", "int8"),
    "enum-int16": lambda m: m.EnumAtom(["a", "b"], "a", "int16"),
    "int8": lambda m: m.Int8Atom(),
}


@pytest.mark.parametrize("left", EQUALITY_ATOMS)
def test_equality_matches_pytables(left: str) -> None:
    make_left = EQUALITY_ATOMS[left]
    for right, make_right in EQUALITY_ATOMS.items():
        expected = bool(make_left(tables) == make_right(tables))
        ours_left, ours_right = make_left(hs), make_right(hs)
        assert (ours_left == ours_right) is expected, right
        assert (ours_left != ours_right) is (not expected), right
        if expected:
            assert hash(ours_left) == hash(ours_right), right


@pytest.mark.parametrize("other", ["foo", 3, None, np.dtype("i4"), hs.Enum(["a"])])
def test_atoms_never_equal_other_objects(other: object) -> None:
    assert (hs.Int32Atom() == other) is False
    assert (hs.Int32Atom() != other) is True
    assert (hs.EnumAtom(["a"], "a", "int8") == other) is False


def test_atoms_are_hashable_unlike_pytables() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(tables.Float64Atom())
    table = {hs.Float64Atom(): "f8", hs.EnumAtom(["a"], "a", "int8"): "enum"}
    assert table[hs.FloatAtom()] == "f8"
    assert table[hs.EnumAtom({"a": 0}, "a", hs.Int8Atom())] == "enum"


def test_base_is_the_scalar_atom_of_the_same_type() -> None:
    assert hs.Int32Atom(shape=(2, 3), dflt=7).base == hs.Int32Atom(dflt=7)
    assert hs.Int32Atom(shape=(2,), dflt=[1, 2]).base == hs.Int32Atom()
    assert hs.StringAtom(4, shape=3, dflt=b"x").base == hs.StringAtom(4, dflt=b"x")
    assert type(hs.Time64Atom(shape=2).base) is hs.Time64Atom
    assert hs.ComplexAtom(8, shape=2).base.dtype == np.dtype("c8")
    # An enum atom's base is its storage atom, as in PyTables.
    enum_atom = hs.EnumAtom(["a", "b"], "b", "int16", shape=(2,))
    assert enum_atom.base == hs.Int16Atom()
    assert legacy_repr(tables.EnumAtom(["a", "b"], "b", "int16", shape=(2,)).base) == repr(
        enum_atom.base
    )


def test_atoms_pickle() -> None:
    for atom in (hs.Int32Atom(shape=(2,), dflt=[1, 2]), hs.EnumAtom(["a", "b"], "b", "int8")):
        assert pickle.loads(pickle.dumps(atom)) == atom


def test_enum_atom_internals_used_to_write_hdf5() -> None:
    ours = hs.EnumAtom({"x": 3, "y": 9}, "y", "uint8")
    theirs = tables.EnumAtom({"x": 3, "y": 9}, "y", "uint8")
    assert ours._names == theirs._names
    np.testing.assert_array_equal(ours._values, theirs._values)
    assert ours._values.dtype == theirs._values.dtype
    assert ours.enum == hs.Enum({"x": 3, "y": 9})


# ----------------------------------------------------------------------------- Enum

ENUMS: dict[str, Factory] = {
    "list": lambda m: m.Enum(["a", "b"]),
    "tuple": lambda m: m.Enum(("a", "b")),
    "dict": lambda m: m.Enum({"red": 20, "orange": 10, "green": 0}),
    "copy": lambda m: m.Enum(m.Enum(["a"])),
    "numpy-values": lambda m: m.Enum({"a": np.int8(0), "b": np.int8(1)}),
}
ENUM_ERRORS: dict[str, Factory] = {
    "from-str": lambda m: m.Enum("ab"),
    "from-int": lambda m: m.Enum(5),
    "non-str-name": lambda m: m.Enum([1]),
    "underscore": lambda m: m.Enum(["_a"]),
    "duplicate-name": lambda m: m.Enum(["a", "a"]),
    "duplicate-value": lambda m: m.Enum({"a": 1, "b": 1}),
    "unhashable-value": lambda m: m.Enum({"a": [1]}),
    "missing-item": lambda m: m.Enum(["a"])["b"],
    "missing-attribute": lambda m: m.Enum(["a"]).b,
    "missing-value": lambda m: m.Enum(["a"])(5),
    "contains-non-str": lambda m: 0 in m.Enum(["a"]),
    "setattr": lambda m: setattr(m.Enum(["a"]), "a", 1),
    "delattr": lambda m: delattr(m.Enum(["a"]), "a"),
    "setitem": lambda m: m.Enum(["a"]).__setitem__("a", 1),
    "delitem": lambda m: m.Enum(["a"]).__delitem__("a"),
}


@pytest.mark.parametrize("factory", ENUMS.values(), ids=ENUMS.keys())
def test_enum_matches_pytables(factory: Factory) -> None:
    theirs, ours = factory(tables.misc.enum), factory(hs)
    assert legacy_repr(theirs) == repr(ours)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)
    for name, value in theirs:
        assert ours[name] == value
        assert getattr(ours, name) == value
        assert ours(value) == name
        assert name in ours
    assert "nope" not in ours
    assert ours(-99, "dflt") == theirs(-99, "dflt")
    assert ours == hs.Enum(dict(theirs))
    assert hash(ours) == hash(hs.Enum(ours))


@pytest.mark.parametrize("factory", ENUM_ERRORS.values(), ids=ENUM_ERRORS.keys())
def test_enum_errors_match_pytables(factory: Factory) -> None:
    with pytest.raises(Exception) as expected:
        factory(tables.misc.enum)
    with pytest.raises(type(expected.value)) as info:
        factory(hs)
    assert str(info.value).startswith(str(expected.value))  # ours may name the value


def test_enum_equality() -> None:
    enum1 = hs.Enum({"T0": 0, "T1": 2})
    assert enum1 == hs.Enum(enum1) == hs.Enum({"T1": 2, "T0": 0})
    assert enum1 != hs.Enum({"T0": 0, "T1": 2, "T2": 5})
    assert enum1 != hs.Enum({"T0": 10, "T1": 20})
    assert enum1 != {"T0": 0, "T1": 2}
    assert enum1 != ["T0", "T1"]
    assert pickle.loads(pickle.dumps(enum1)) == enum1


# ----------------------------------------------------------------------------- pseudo-atoms

PSEUDO: list[tuple[str, Any]] = [
    ("VLStringAtom", b"hello \x00 bytes"),
    ("VLStringAtom", b""),
    ("VLUnicodeAtom", "A unicode string: hbar = \u210f"),
    ("VLUnicodeAtom", ""),
    ("ObjectAtom", {"a": [1, 2.5, None]}),
]


@pytest.mark.parametrize(("name", "value"), PSEUDO)
def test_pseudo_atoms_match_pytables(name: str, value: Any) -> None:
    ours, theirs = getattr(hs, name)(), getattr(tables, name)()
    assert (repr(ours), ours.kind, ours.type, ours.shape) == (
        repr(theirs),
        theirs.kind,
        theirs.type,
        theirs.shape,
    )
    assert ours.base == hs.Atom.from_dtype(theirs.base.dtype)
    array = ours.toarray(value)
    expected = theirs.toarray(value)
    assert array.dtype == expected.dtype
    if name != "ObjectAtom":  # pickles may differ byte-wise, objects must not
        np.testing.assert_array_equal(array, expected)
    assert ours.fromarray(expected) == value
    assert theirs.fromarray(array) == value


def test_pseudo_atoms_reject_wrong_types_and_empty_objects() -> None:
    with pytest.raises(TypeError, match="'ab'"):
        hs.VLStringAtom().toarray("ab")
    with pytest.raises(TypeError, match="b'ab'"):
        hs.VLUnicodeAtom().toarray(b"ab")
    assert hs.ObjectAtom().fromarray(np.array([], dtype="u1")) is None


# ----------------------------------------------------------------------------- from HDF5


def _inner_class(dataset: h5py.Dataset) -> str | None:
    """The HDF5 class of the innermost element type (what the storage layer must pass)."""
    htype = dataset.id.get_type()
    while htype.get_class() in (h5py.h5t.ARRAY, h5py.h5t.VLEN):
        htype = htype.get_super()
    names = {h5py.h5t.BITFIELD: "BITFIELD", h5py.h5t.TIME: "TIME", h5py.h5t.ENUM: "ENUM"}
    return names.get(htype.get_class())


def _fill_value(dataset: h5py.Dataset) -> Any:
    try:
        return dataset.fillvalue
    except (RuntimeError, TypeError):  # ARRAY and TIME types: h5py cannot convert
        return None


def _write_h5py(path: Path) -> None:
    with h5py.File(path, "w") as f:
        f["bool"] = np.array([True, False])
        f["c16"] = np.array([1 + 2j])
        f["c8"] = np.array([1 + 2j], dtype="c8")
        f["c16be"] = np.zeros(2, dtype=">c16")
        f["f8be"] = np.array([1.0], dtype=">f8")
        f["i2be"] = np.array([1], dtype=">i2")
        f["s5"] = np.array([b"ab"], dtype="S5")
        f.create_dataset("s5utf8", shape=(1,), dtype=h5py.string_dtype("utf-8", 5))
        f["f2"] = np.array([1.0], dtype="f2")
        f["g"] = np.zeros(2, dtype="g")
        f["u8"] = np.zeros(2, dtype="u8")
        f.create_dataset("f4fill", shape=(2,), dtype="f4", fillvalue=2.5)
        rgb = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="u1")
        f.create_dataset("enum", data=np.array([0, 1, 2], dtype="u1"), dtype=rgb)
        f.create_dataset("enum2", shape=(1,), dtype=h5py.enum_dtype({"B": 5, "A": 3}, "i4"))
        xy = np.dtype((h5py.enum_dtype({"X": 1, "Y": 2}, "i2"), (3,)))
        f.create_dataset("enumarr", shape=(2,), dtype=xy)
        f.create_dataset("subarray", shape=(3,), dtype=("f4", (2, 3)), chunks=(3,))
        f.create_dataset("vlint", shape=(2,), dtype=h5py.vlen_dtype(np.int32), chunks=(2,))
        f.create_dataset("vlbool", shape=(2,), dtype=h5py.vlen_dtype(np.bool_), chunks=(2,))
        f.create_dataset("vlbe", shape=(2,), dtype=h5py.vlen_dtype(np.dtype(">f8")), chunks=(2,))
        f.create_dataset("vlbytes", shape=(2,), dtype=h5py.vlen_dtype(np.dtype("S3")), chunks=(2,))
        vlsub = h5py.vlen_dtype(np.dtype(("i4", (2,))))
        f.create_dataset("vlsub", shape=(2,), dtype=vlsub, chunks=(2,))
        f["rimixed"] = np.zeros(2, dtype=[("r", "<f4"), ("i", "<f8")])
        f["target"] = np.zeros(2)
        f.create_dataset("ref", shape=(2,), dtype=h5py.ref_dtype)


def _write_pytables(path: Path) -> None:
    with tables.open_file(path, "w") as f:
        f.create_array("/", "bool", np.array([True, False]))
        f.create_carray("/", "boolshaped", tables.BoolAtom(shape=(2,), dflt=True), (2,))
        f.create_carray("/", "t32", tables.Time32Atom(dflt=7), (2,))
        f.create_carray("/", "t64", tables.Time64Atom(), (2,))
        f.create_carray("/", "c8", tables.ComplexAtom(8, dflt=1j), (2,))
        f.create_carray("/", "enum", tables.EnumAtom(["a", "b", "c"], "c", "uint8"), (2,))
        shaped_enum = tables.EnumAtom({"z": 5, "y": -3, "x": 7}, "y", "int16", shape=(2,))
        f.create_carray("/", "enumshaped", shaped_enum, (2,))
        f.create_carray("/", "str", tables.StringAtom(3, dflt=b"ab"), (2,))
        f.create_carray("/", "strshaped", tables.StringAtom(4, shape=(2,)), (2,))
        f.create_array("/", "f8be", np.array([1.0], dtype=">f8"))
        f.create_carray("/", "f2", tables.Float16Atom(dflt=0.5), (2,))
        f.create_carray("/", "f4shaped", tables.Float32Atom(shape=(2, 3)), (2,))
        f.create_carray("/", "i4dflt", tables.Int32Atom(dflt=-4), (2,))
        f.create_vlarray("/", "vlbool", tables.BoolAtom())
        f.create_vlarray("/", "vlt64", tables.Time64Atom())


@pytest.fixture(scope="module")
def hdf5_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("atoms")
    paths = {"h5py": root / "h5py.h5", "pytables": root / "pytables.h5"}
    _write_h5py(paths["h5py"])
    _write_pytables(paths["pytables"])
    return paths


H5PY_NODES = [
    "bool", "c16", "c8", "c16be", "f8be", "i2be", "s5", "s5utf8", "f2", "g", "u8", "f4fill",
    "enum", "enum2", "enumarr", "subarray", "vlint", "vlbool", "vlbe", "vlbytes", "vlsub",
    "rimixed", "ref", "target",
]  # fmt: skip
PYTABLES_NODES = [
    "bool", "boolshaped", "t32", "t64", "c8", "enum", "enumshaped", "str", "strshaped",
    "f8be", "f2", "f4shaped", "i4dflt", "vlbool", "vlt64",
]  # fmt: skip
NODES = [("h5py", n) for n in H5PY_NODES] + [("pytables", n) for n in PYTABLES_NODES]


@pytest.mark.parametrize(("writer", "name"), NODES, ids=[f"{w}-{n}" for w, n in NODES])
def test_atom_from_hdf5_dtype_matches_pytables(
    hdf5_files: dict[str, Path], writer: str, name: str
) -> None:
    path = hdf5_files[writer]
    with tables.open_file(path) as f:
        theirs = f.get_node("/" + name).atom
        expected = describe(theirs)
        expected_enum = list(getattr(theirs, "enum", []))
    with h5py.File(path) as f:
        dataset = f[name]
        htype = dataset.id.get_type()
        inner = _inner_class(dataset)
        if inner == "TIME":  # h5py cannot map TIME to NumPy: pass a dtype of its size
            time_type = htype.get_super() if htype.get_class() == h5py.h5t.VLEN else htype
            dtype = np.dtype(f"i{time_type.get_size()}")
        else:
            dtype = dataset.dtype
        vlen = htype.get_class() == h5py.h5t.VLEN  # PyTables ignores a VLArray's fill value
        fill = None if vlen else _fill_value(dataset)
    ours = atom_from_hdf5_dtype(dtype, hdf5_class=inner, dflt=fill)
    ours_enum = list(getattr(ours, "enum", []))
    assert [(n, type(v), v) for n, v in ours_enum] == [
        (n, type(v), v) for n, v in expected_enum
    ]
    if fill is None and not vlen:
        # h5py cannot read the fill value of ARRAY and TIME types: compare all but dflt.
        ignored = (1, 7, 8)  # the repr, the default and its dtype
        ours_described = [v for i, v in enumerate(describe(ours)) if i not in ignored]
        assert ours_described == [v for i, v in enumerate(expected) if i not in ignored]
    else:
        assert describe(ours) == expected


UNSUPPORTED: dict[str, tuple[Any, str]] = {
    "vlen-str": (h5py.string_dtype(), "variable length strings"),
    "real-imag": (np.dtype([("real", "f8"), ("imag", "f8")]), "COMPOUND"),
    "ri-int": (np.dtype([("r", "i4"), ("i", "i4")]), "COMPOUND"),
    "region-ref": (h5py.regionref_dtype, "REFERENCE"),
    "opaque": (np.dtype("V4"), "OPAQUE"),
}


@pytest.mark.parametrize(("dtype", "fragment"), UNSUPPORTED.values(), ids=UNSUPPORTED.keys())
def test_atom_from_hdf5_dtype_rejects_what_pytables_cannot_load(
    tmp_path: Path, dtype: Any, fragment: str
) -> None:
    path = tmp_path / "unsupported.h5"
    with h5py.File(path, "w") as f:
        read_dtype = f.create_dataset("x", shape=(2,), dtype=dtype).dtype
    with tables.open_file(path) as f, pytest.warns(UserWarning, match="UnImplemented"):
        assert type(f.get_node("/x")).__name__ == "UnImplemented"
    with pytest.raises(TypeError, match=fragment):
        atom_from_hdf5_dtype(read_dtype)


def test_atom_from_hdf5_dtype_hints() -> None:
    assert atom_from_hdf5_dtype(np.dtype("u1"), hdf5_class="BITFIELD") == hs.BoolAtom()
    assert atom_from_hdf5_dtype(np.dtype("?"), hdf5_class="h5t_bitfield") == hs.BoolAtom()
    assert type(atom_from_hdf5_dtype(np.dtype("f8"), hdf5_class="TIME")) is hs.Time64Atom
    assert type(atom_from_hdf5_dtype(np.dtype("i4"), hdf5_class="TIME")) is hs.Time32Atom
    shaped = atom_from_hdf5_dtype(np.dtype(("u1", (2, 2))), hdf5_class="BITFIELD")
    assert shaped == hs.BoolAtom(shape=(2, 2))
    assert atom_from_hdf5_dtype(np.dtype("u1"), hdf5_class="INTEGER") == hs.UInt8Atom()
    with pytest.raises(ValueError, match="'BITFEILD'"):
        atom_from_hdf5_dtype(np.dtype("u1"), hdf5_class="BITFEILD")
    with pytest.raises(ValueError, match="``time``: 2"):
        atom_from_hdf5_dtype(np.dtype("i2"), hdf5_class="TIME")
    with pytest.raises(TypeError, match="object dtype"):
        atom_from_hdf5_dtype(np.dtype("O"))


def test_atom_from_hdf5_dtype_fill_values() -> None:
    assert atom_from_hdf5_dtype("f4", dflt=2.5).dflt == np.float32(2.5)
    shaped = atom_from_hdf5_dtype(np.dtype(("i4", (2,))), dflt=3)
    np.testing.assert_array_equal(shaped.dflt, [3, 3])
    # An h5py bool fill value lands in PyTables' int8 FALSE/TRUE enum.
    boolean = atom_from_hdf5_dtype(np.dtype("?"), dflt=np.True_)
    assert (boolean.dflt, boolean.dflt.dtype) == (1, np.dtype("i1"))
    assert "dflt='FALSE'" in repr(boolean)
    assert atom_from_hdf5_dtype(np.dtype("?"), hdf5_class="BITFIELD", dflt=True).dflt
