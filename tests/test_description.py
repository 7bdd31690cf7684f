"""Columns and descriptions against PyTables (the oracle): classes, reprs, order, dtypes, errors.

Every case is a factory taking a module (``tables`` or ``HS``, our equivalent namespace) so the
same code builds PyTables' object and ours; the two are then compared in full.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.errors import DataTypeWarning, FlavorWarning, NaturalNameWarning
from hyperslab.nodes.atoms import atom as hs_atom
from hyperslab.nodes.atoms import description as hsd
from hyperslab.nodes.atoms import tablelayout as hsl
from hyperslab.nodes.tables.columns import Cols
from hyperslab.storage.compound import CompoundLayout, layout_of_type

HS = SimpleNamespace(
    **{name: getattr(hs_atom, name) for name in hs_atom.__all__},
    **{name: getattr(hyperslab, name) for name in hyperslab.__all__ if name not in hs_atom.__all__},
    description=hsd,
)
"""Our names, laid out as PyTables lays them out (``m.Int32Col``, ``m.description.X``)."""

Factory = Callable[[Any], Any]
PLAIN: dict[str, Any] = {"legacy": "1.25"} if np.__version__ >= "2" else {}


def legacy(text_of: Callable[[], str]) -> str:
    # PyTables' reprs under NumPy 2 print ``np.int32(0)``; legacy printing reads as we print.
    with np.printoptions(**PLAIN):
        return text_of()


def quiet(factory: Factory, module: Any) -> Any:
    """Call ``factory(module)`` with warnings ignored (PyTables warns before some errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory(module)


# ----------------------------------------------------------------------------- columns

ATOM_CLASSES = [
    "IntAtom", "UIntAtom", "FloatAtom", "TimeAtom", "ComplexAtom", "StringAtom", "BoolAtom",
    "EnumAtom", "Int8Atom", "Int16Atom", "Int32Atom", "Int64Atom", "UInt8Atom", "UInt16Atom",
    "UInt32Atom", "UInt64Atom", "Float16Atom", "Float32Atom", "Float64Atom", "Time32Atom",
    "Time64Atom",
]


def describe_col(col: Any, module: Any) -> tuple[Any, ...]:
    return (
        type(col).__name__,
        legacy(lambda: repr(col)),
        col.dtype,
        col.type,
        col.kind,
        col.itemsize,
        tuple(int(dim) for dim in col.shape),
        legacy(lambda: repr(col.dflt)),
        col._v_pos,
        col._v_col_attrs,
        col.prefix(),
        isinstance(col, module.Col),
        [name for name in ATOM_CLASSES if isinstance(col, getattr(module, name))],
    )


def col_outcome(factory: Factory, module: Any) -> tuple[Any, ...]:
    try:
        col = quiet(factory, module)
    except Exception as exc:
        return ("raised", type(exc))
    return ("made", *describe_col(col, module))


FIXED = [
    "BoolCol", "Int8Col", "Int16Col", "Int32Col", "Int64Col", "UInt8Col", "UInt16Col",
    "UInt32Col", "UInt64Col", "Float16Col", "Float32Col", "Float64Col", "Time32Col",
    "Time64Col", "IntCol", "UIntCol", "FloatCol", "TimeCol",
]

COL_CASES: dict[str, Factory] = {
    **{f"{name}()": (lambda m, n=name: getattr(m, n)()) for name in FIXED},
    **{
        f"{name}(shape=(2, 3), dflt=1, pos=4)": (
            lambda m, n=name: getattr(m, n)(shape=(2, 3), dflt=1, pos=4)
        )
        for name in FIXED
    },
    "IntCol(2)": lambda m: m.IntCol(2),
    "UIntCol(8, pos=1)": lambda m: m.UIntCol(8, pos=1),
    "FloatCol(4, shape=3)": lambda m: m.FloatCol(4, shape=3),
    "TimeCol(8, dflt=2.5)": lambda m: m.TimeCol(8, dflt=2.5),
    "ComplexCol(8)": lambda m: m.ComplexCol(8),
    "ComplexCol(16, shape=2, dflt=1j, pos=0)": lambda m: m.ComplexCol(16, shape=2, dflt=1j, pos=0),
    "StringCol(16)": lambda m: m.StringCol(16),
    "StringCol(16, dflt='abc', pos=2)": lambda m: m.StringCol(16, dflt="abc", pos=2),
    "StringCol(4, shape=(2, 2), dflt=b'xy')": lambda m: m.StringCol(4, shape=(2, 2), dflt=b"xy"),
    "BoolCol(dflt=True, attrs)": lambda m: m.BoolCol(dflt=True, attrs={"unit": "m", "n": 2}),
    "Float64Col(dflt=[1, 2], shape=2)": lambda m: m.Float64Col(dflt=[1, 2], shape=2),
    "EnumCol(list)": lambda m: m.EnumCol(["red", "green"], "green", "uint8", pos=1),
    "EnumCol(dict, shape)": lambda m: m.EnumCol({"a": 3, "b": -1}, "b", "int16", shape=2),
    "EnumCol(Enum, atom base)": lambda m: m.EnumCol(
        m.Enum(["x", "y", "z"]), "z", m.Int32Atom(), pos=0, attrs={"k": 1}
    ),
    "Col.from_type": lambda m: m.Col.from_type("int16", shape=(2,), dflt=3, pos=1),
    "Col.from_type(time32)": lambda m: m.Col.from_type("time32"),
    "Col.from_kind(string)": lambda m: m.Col.from_kind("string", 5, pos=0),
    "Col.from_kind(float)": lambda m: m.Col.from_kind("float", shape=(2, 2), dflt=1),
    "Col.from_kind(uint, 2)": lambda m: m.Col.from_kind("uint", 2),
    "Col.from_dtype(>i2)": lambda m: m.Col.from_dtype(np.dtype(">i2"), pos=1),
    "Col.from_dtype(subarray)": lambda m: m.Col.from_dtype(np.dtype(("<f4", (2, 3))), dflt=7),
    "Col.from_dtype(c8)": lambda m: m.Col.from_dtype(np.dtype("c8")),
    "Col.from_dtype(S7)": lambda m: m.Col.from_dtype(np.dtype("S7"), dflt=b"q"),
    "Col.from_dtype(bool)": lambda m: m.Col.from_dtype(np.dtype("?"), pos=3),
    "Col.from_sctype": lambda m: m.Col.from_sctype("float32", shape=2, pos=0),
    "Col.from_atom(Int32Atom)": lambda m: m.Col.from_atom(m.Int32Atom(shape=2, dflt=4), pos=2),
    "Col.from_atom(StringAtom)": lambda m: m.Col.from_atom(m.StringAtom(3, dflt=b"a")),
    "Col.from_atom(EnumAtom)": lambda m: m.Col.from_atom(
        m.EnumAtom(["a", "b"], "b", "uint8", shape=2), pos=1
    ),
    "Col.from_atom(Time64Atom)": lambda m: m.Col.from_atom(m.Time64Atom()),
    "Col.from_atom(ComplexAtom)": lambda m: m.Col.from_atom(m.ComplexAtom(8)),
    # errors
    "IntCol(3)": lambda m: m.IntCol(3),
    "TimeCol(2)": lambda m: m.TimeCol(2),
    "StringCol(0)": lambda m: m.StringCol(0),
    "ComplexCol(4)": lambda m: m.ComplexCol(4),
    "Complex32Col()": lambda m: m.Complex32Col(),
    "Complex64Col()": lambda m: m.Complex64Col(),
    "Complex128Col()": lambda m: m.Complex128Col(),
    "EnumCol(bad dflt)": lambda m: m.EnumCol(["a"], "b", "int8"),
    "EnumCol(float base)": lambda m: m.EnumCol(["a"], "a", "float64"),
    "Col.from_type(bad)": lambda m: m.Col.from_type("int33"),
    "Col.from_kind(enum)": lambda m: m.Col.from_kind("enum"),
    "Col.from_dtype(compound)": lambda m: m.Col.from_dtype(np.dtype([("a", "i4")])),
    "Int32Col(dflt='x')": lambda m: m.Int32Col(dflt="x"),
}


@pytest.mark.parametrize("case", list(COL_CASES))
def test_column_like_pytables(case: str) -> None:
    factory = COL_CASES[case]
    assert col_outcome(factory, HS) == col_outcome(factory, tables)


def test_col_is_its_atom_and_abstract() -> None:
    col = HS.IntCol(2, pos=1)
    assert type(col) is HS.Int16Col
    assert isinstance(col, hyperslab.Int16Atom)
    assert isinstance(col, hyperslab.IntAtom)
    with pytest.raises(NotImplementedError, match="abstract"):
        HS.Col()
    with pytest.raises(TypeError, match="ObjectAtom"):
        HS.Col.from_atom(hyperslab.nodes.atoms.pseudoatom.ObjectAtom())


def test_col_unicode_dtype_warns_like_pytables() -> None:
    with pytest.warns(FlavorWarning):
        ours = HS.Col.from_dtype(np.dtype("U3"), pos=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = tables.Col.from_dtype(np.dtype("U3"), pos=0)
    assert describe_col(ours, HS) == describe_col(theirs, tables)


EQ_PAIRS: list[tuple[Factory, Factory]] = [
    (lambda m: m.Int32Col(pos=1), lambda m: m.Int32Col(pos=1)),
    (lambda m: m.Int32Col(pos=1), lambda m: m.Int32Col(pos=2)),
    (lambda m: m.Int32Col(), lambda m: m.Int32Atom()),
    (lambda m: m.Int32Atom(), lambda m: m.Int32Col()),
    (lambda m: m.Int32Col(), lambda m: m.Int16Col()),
    (lambda m: m.Int32Col(dflt=1), lambda m: m.Int32Col()),
    (lambda m: m.StringCol(3, pos=0), lambda m: m.Col.from_kind("string", 3, pos=0)),
    (lambda m: m.EnumCol(["a"], "a", "int8"), lambda m: m.EnumCol(["a"], "a", "int8")),
    (lambda m: m.EnumCol(["a"], "a", "int8", pos=0), lambda m: m.EnumCol(["a"], "a", "int8")),
    (lambda m: m.EnumCol(["a"], "a", "int8"), lambda m: m.EnumAtom(["a"], "a", "int8")),
    (lambda m: m.EnumAtom(["a"], "a", "int8"), lambda m: m.EnumCol(["a"], "a", "int8")),
]


@pytest.mark.parametrize("pair", range(len(EQ_PAIRS)))
def test_column_equality_like_pytables(pair: int) -> None:
    left, right = EQ_PAIRS[pair]
    ours = left(HS) == right(HS)
    assert isinstance(ours, bool)
    assert ours == bool(left(tables) == right(tables))
    assert (left(HS) != right(HS)) is not ours


@pytest.mark.parametrize(
    "factory",
    [
        lambda m: m.StringCol(5, dflt=b"ab", pos=3, attrs={"a": 1}),
        lambda m: m.Int32Col(shape=2, dflt=4, pos=1),
        lambda m: m.EnumCol(["a", "b"], "b", "uint8", pos=2),
        lambda m: m.ComplexCol(8, pos=0),
    ],
)
def test_column_copy_keeps_everything_but_attrs(factory: Factory) -> None:
    col = factory(HS)
    copied = col.copy()
    assert copied == col and copied is not col
    assert copied._v_pos == col._v_pos
    assert hash(copied) == hash(col)
    moved = col.copy(pos=9)
    assert moved._v_pos == 9 and moved != col
    assert col.pos == col._v_pos and col.attrs is col._v_col_attrs


# ----------------------------------------------------------------------------- descriptions


def _walk_entry(obj: Any, module: Any) -> tuple[Any, ...]:
    # No ``_v_parent``: in PyTables, the columns of a nested Description built on its own
    # (descr_from_dtype, a Description value) point to that original, not to the copy
    # placed in the tree.  test_parent_links checks ours.
    is_descr = isinstance(obj, module.Description)
    return (
        "Description" if is_descr else type(obj).__name__,
        obj._v_pathname,
        obj._v_name,
        getattr(obj, "_v_pos", None),
        obj._v_nestedlvl if is_descr else None,
    )


def describe_descr(descr: Any, module: Any) -> dict[str, Any]:
    """Everything PyTables exposes about a description, in comparable form."""
    return {
        "repr": legacy(lambda: repr(descr)),
        "str": legacy(lambda: str(descr)),
        "names": descr._v_names,
        "nested_names": descr._v_nested_names,
        "nested_formats": descr._v_nested_formats,
        "nested_descr": descr._v_nested_descr,
        "dtype": descr._v_dtype,
        "dtypes": descr._v_dtypes,
        "types": descr._v_types,
        "dflts": legacy(lambda: repr(descr._v_dflts)),
        "pathnames": descr._v_pathnames,
        "is_nested": descr._v_is_nested,
        "itemsize": descr._v_itemsize,
        "offsets": descr._v_offsets,
        "colobjects": list(descr._v_colobjects),
        "walk": [_walk_entry(obj, module) for obj in descr._f_walk()],
        "walk_col": [obj._v_pathname for obj in descr._f_walk("Col")],
        "walk_descr": [obj._v_pathname for obj in descr._f_walk("Description")],
        "nested": {
            obj._v_pathname: (obj._v_names, obj._v_dtype, obj._v_offsets, obj._v_pathnames,
                              legacy(lambda o=obj: repr(o._v_dflts)))
            for obj in descr._f_walk("Description")
        },
    }


def descr_outcome(factory: Factory, module: Any) -> Any:
    try:
        descr = quiet(factory, module)
    except Exception as exc:
        return ("raised", type(exc))
    return ("made", describe_descr(descr, module))


def _particle(m: Any) -> Any:
    class Info(m.IsDescription):
        _v_pos = 2
        name = m.StringCol(8)
        value = m.Float64Col(pos=0)

    class Particle(m.IsDescription):
        """A particle."""

        z = m.UInt8Col(dflt=1)
        x = m.Col.from_type("int32", 2, 0, pos=0)
        y = m.Col.from_kind("float", dflt=1, shape=(2, 3))
        color = m.StringCol(2, dflt=" ")
        info = Info()
        ref = Info

        class linfo(m.IsDescription):
            _v_pos = 1
            name = m.UInt32Col()
            value = m.Float64Col(pos=0)

            class deeper(m.IsDescription):
                t = m.Time64Col(dflt=1.5)
                e = m.EnumCol(["on", "off"], "off", "uint8", shape=2)

    return m.Description(Particle().columns)


def _inherited(m: Any) -> Any:
    class Base(m.IsDescription):
        a = m.Int32Col()
        b = m.Float32Col(pos=0)

    class Other(m.IsDescription):
        c = m.BoolCol()

    class Child(Base, Other):
        b = m.Int8Col()  # overrides Base.b (and its position)
        d = m.ComplexCol(16)

    return m.Description(Child.columns)


ALL_TYPES = {
    "b": lambda m: m.BoolCol(),
    "i1": lambda m: m.Int8Col(dflt=-1),
    "i2": lambda m: m.Int16Col(),
    "i4": lambda m: m.Int32Col(),
    "i8": lambda m: m.Int64Col(),
    "u1": lambda m: m.UInt8Col(),
    "u2": lambda m: m.UInt16Col(),
    "u4": lambda m: m.UInt32Col(),
    "u8": lambda m: m.UInt64Col(),
    "f2": lambda m: m.Float16Col(),
    "f4": lambda m: m.Float32Col(),
    "f8": lambda m: m.Float64Col(dflt=0.5),
    "c8": lambda m: m.ComplexCol(8),
    "c16": lambda m: m.ComplexCol(16, dflt=1 + 1j),
    "s": lambda m: m.StringCol(5, dflt=b"abc"),
    "t4": lambda m: m.Time32Col(),
    "t8": lambda m: m.Time64Col(),
    "e": lambda m: m.EnumCol({"lo": 1, "hi": 9}, "hi", "int16"),
    "shaped": lambda m: m.Float64Col(shape=(2, 3), dflt=2),
}


def _all_types(m: Any) -> Any:
    return m.Description({name: make(m) for name, make in ALL_TYPES.items()})


DESCR_CASES: dict[str, Factory] = {
    "all types, alphabetical": _all_types,
    "positions first, then names": lambda m: m.Description(
        {"d": m.Int32Col(), "c": m.Int32Col(pos=1), "b": m.Int32Col(pos=0), "a": m.Int32Col()}
    ),
    "tied positions order by name": lambda m: m.Description(
        {"z": m.Int32Col(pos=1), "y": m.Int32Col(pos=1), "x": m.Int32Col(pos=0)}
    ),
    "sparse and negative positions": lambda m: m.Description(
        {"a": m.Int8Col(pos=10), "b": m.Int8Col(pos=-3), "c": m.Int8Col()}
    ),
    "attrs in repr": lambda m: m.Description(
        {"a": m.Int32Col(attrs={"unit": "m"}), "b": m.StringCol(2)}
    ),
    "nested dicts with _v_pos": lambda m: m.Description(
        {
            "a": m.Int32Col(),
            "n": {"_v_pos": 0, "y": m.Float32Col(), "x": {"deep": m.UInt8Col(shape=2)}},
            "b": {"s": m.StringCol(3, pos=0), "t": m.Time32Col()},
        }
    ),
    "IsDescription with nested classes and instances": _particle,
    "IsDescription inheritance": _inherited,
    "single column": lambda m: m.Description({"only": m.Float64Col(shape=(4,))}),
    "Description as nested value": lambda m: m.Description(
        {"a": m.Int32Col(), "n": m.Description({"x": m.Int16Col(), "y": m.BoolCol()})}
    ),
    "special _v_itemsize is ignored when packed": lambda m: m.Description(
        {"_v_itemsize": 64, "a": m.Int32Col()}
    ),
    "offsets without positions stay packed": lambda m: m.Description(
        {"a": m.Col.from_dtype(np.dtype("<i4"), _offset=8),
         "b": m.Col.from_dtype(np.dtype("<i2"), _offset=0)}
    ),
    "offsets with positions make padding": lambda m: m.Description(
        {"a": m.Col.from_dtype(np.dtype("<i4"), pos=1, _offset=8),
         "b": m.Col.from_dtype(np.dtype("<i2"), pos=0, _offset=2)}
    ),
    # errors
    "empty": lambda m: m.Description({}),
    "empty nested": lambda m: m.Description({"a": m.Int32Col(), "n": {}}),
    "not a column": lambda m: m.Description({"a": 1}),
    "string value": lambda m: m.Description({"a": "Int32Col"}),
    "atom value": lambda m: m.Description({"a": m.Int32Atom()}),
    "empty name": lambda m: m.Description({"": m.Int32Col()}),
    "slash in name": lambda m: m.Description({"a/b": m.Int32Col()}),
    "dot name": lambda m: m.Description({".": m.Int32Col()}),
    "non-string name": lambda m: m.Description({1: m.Int32Col()}),
    "reserved prefix _f_": lambda m: m.Description({"_f_x": m.Int32Col()}),
    "reserved prefix _c_": lambda m: m.Description({"_c_x": m.Int32Col()}),
    "__members__": lambda m: m.Description({"__members__": m.Int32Col()}),
    "nested bad name": lambda m: m.Description({"n": {"a/b": m.Int32Col()}}),
    "_v_byteorder": lambda m: m.Description({"_v_byteorder": "big", "a": m.Int32Col()}),
    "method in IsDescription": lambda m: m.Description(
        type("D", (m.IsDescription,), {"a": m.Int32Col(), "f": lambda self: 0})().columns
    ),
}


@pytest.mark.parametrize("case", list(DESCR_CASES))
def test_description_like_pytables(case: str) -> None:
    factory = DESCR_CASES[case]
    ours = descr_outcome(factory, HS)
    if case == "non-string name":  # PyTables: AttributeError ('int' has no 'startswith')
        assert ours == ("raised", TypeError)
        return
    assert ours == descr_outcome(factory, tables)


@pytest.mark.parametrize("case", [c for c in DESCR_CASES if descr_outcome(DESCR_CASES[c], HS)[0]
                                  == "made"])
def test_parent_links(case: str) -> None:
    descr = quiet(DESCR_CASES[case], HS)
    for node in descr._f_walk("Description"):
        for name, child in node._v_colobjects.items():
            assert child._v_parent is node
            assert getattr(node, name) is child
            assert child._v_name == name


DTYPES = {
    "flat": np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3"), ("d", "?")]),
    "nested": np.dtype([("a", "<i4"), ("n", [("x", "<f8"), ("y", "S3", (2,))]), ("b", "?")]),
    "deep": np.dtype([("n", [("m", [("z", "u1"), ("a", "<c16")]), ("k", "<i2")])]),
    "subarrays": np.dtype([("a", "<i2", (2, 3)), ("b", "<f4", (4,))]),
    "big endian": np.dtype([("a", ">i4"), ("b", ">f8"), ("s", "S2")]),
    "irrelevant order": np.dtype([("a", "u1"), ("s", "S4"), ("b", "?")]),
    "all kinds": np.dtype([(f"f{i}", t) for i, t in enumerate(
        ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16", "?"]
    )]),
    "padded": np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [0, 8],
                        "itemsize": 24}),
    "padded, reordered": np.dtype({"names": ["a", "b", "c"], "formats": ["<i4", "<f8", "u1"],
                                   "offsets": [16, 0, 30]}),
    "padded nested": np.dtype({"names": ["a", "n"], "formats": ["<i2", [("x", "<i8")]],
                               "offsets": [0, 8]}),
    "mixed byte orders": np.dtype([("a", "<i4"), ("b", ">i4")]),
    "object field": np.dtype([("a", "<i4"), ("o", "O")]),
    "datetime field": np.dtype([("a", "<M8[s]")]),
    "array of structures": np.dtype([("a", [("x", "<i4")], (2,))]),
    "not structured": np.dtype("<i4"),
}


def dtype_outcome(dtype: np.dtype[Any], module: Any) -> Any:
    try:
        descr, byteorder = quiet(lambda m: m.description.descr_from_dtype(dtype), module)
    except Exception as exc:
        return ("raised", type(exc))
    return ("made", byteorder, describe_descr(descr, module))


@pytest.mark.parametrize("name", list(DTYPES))
def test_descr_from_dtype_like_pytables(name: str) -> None:
    dtype = DTYPES[name]
    ours = dtype_outcome(dtype, HS)
    if name == "not structured":  # PyTables: "'NoneType' object is not iterable"
        assert ours == ("raised", TypeError)
        return
    assert ours == dtype_outcome(dtype, tables)


def test_descr_from_dtype_converts_length_one_nested_arrays_with_a_warning() -> None:
    dtype = np.dtype([("a", [("x", "<i4")], (1,))])
    with pytest.warns(UserWarning, match="converted to scalar"):
        ours, _ = hsd.descr_from_dtype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, _ = tables.description.descr_from_dtype(dtype)
    assert describe_descr(ours, HS) == describe_descr(theirs, tables)


@pytest.mark.parametrize("byteorder", [None, "|", "little", "big", "<", ">", "="])
@pytest.mark.parametrize("source", ["dict", "class", "instance", "description"])
def test_dtype_from_descr_like_pytables(byteorder: str | None, source: str) -> None:
    def make(m: Any) -> Any:
        class D(m.IsDescription):
            a = m.Int32Col()
            n = {"x": m.Float64Col(shape=2), "s": m.StringCol(3)}  # noqa: RUF012

        return {"dict": dict(D.columns), "class": D, "instance": D(),
                "description": m.Description(dict(D.columns))}[source]

    ours = hsd.dtype_from_descr(make(HS), byteorder)
    assert ours == tables.description.dtype_from_descr(make(tables), byteorder)
    with pytest.raises(ValueError, match="invalid description"):
        hsd.dtype_from_descr(42)


@pytest.mark.parametrize(
    ("name", "category"),
    [("a b", NaturalNameWarning), ("class", NaturalNameWarning), ("_v_names", UserWarning)],
)
def test_description_warnings_like_pytables(name: str, category: type[Warning]) -> None:
    def make(m: Any) -> Any:
        return m.Description({name: m.Int32Col(), "ok": m.Int8Col()})

    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        make(tables)
    assert theirs and {w.category.__name__ for w in theirs} == {category.__name__}
    with pytest.warns(category):
        ours = make(HS)
    assert describe_descr(ours, HS) == quiet(lambda m: describe_descr(make(m), m), tables)


def test_other_inputs_equal_the_dict_form() -> None:
    class D(hyperslab.IsDescription):
        b = hyperslab.Int32Col()
        a = {"x": hyperslab.Float32Col(pos=1), "y": hyperslab.UInt8Col(pos=0)}  # noqa: RUF012

    expected = describe_descr(hsd.Description(D().columns), HS)
    for source in (D, D(), hsd.Description(D().columns)):
        assert describe_descr(hsd.Description(source), HS) == expected
    dtype = np.dtype([("a", "<i4"), ("n", [("x", "<f8")])])
    from_dtype = describe_descr(hsd.descr_from_dtype(dtype)[0], HS)
    assert describe_descr(hsd.Description(dtype), HS) == from_dtype
    assert describe_descr(hsd.Description(np.zeros(3, dtype)), HS) == from_dtype
    with pytest.raises(TypeError, match="not of a supported type"):
        hsd.Description([1, 2])


def test_inputs_are_not_modified() -> None:
    col = hyperslab.Int32Col()
    nested = hsd.Description({"x": hyperslab.Int8Col(pos=5)})
    columns = {"b": col, "a": hyperslab.Int8Col(), "n": nested}
    descr = hsd.Description(columns)
    assert columns["b"] is col and col._v_pos is None and not hasattr(col, "_v_name")
    assert descr.b is not col and descr.b._v_pos == 1
    assert descr.n is not nested and nested.x._v_pathname == "x"
    assert descr.n.x._v_pathname == "n/x"


def test_natural_naming_and_missing_attributes() -> None:
    descr = quiet(_particle, HS)
    assert descr.linfo.deeper.e is descr._v_colobjects["linfo"]._v_colobjects["deeper"].e
    assert descr.linfo.deeper.e._v_parent is descr.linfo.deeper
    with pytest.raises(AttributeError, match="nope"):
        _ = descr.nope
    with pytest.raises(ValueError, match="type can only take"):
        list(descr._f_walk("Leaf"))  # type: ignore[arg-type]


def test_too_many_columns_warns() -> None:
    descr = hsd.Description({f"c{i}": hyperslab.Int8Col() for i in range(5)})
    hsd.warn_if_too_many_columns(descr, "/t", max_columns=5)
    with pytest.warns(hyperslab.PerformanceWarning, match="/t"):
        hsd.warn_if_too_many_columns(descr, "/t", max_columns=4)


# ----------------------------------------------------------------------------- files

TABLES: dict[str, Factory] = {
    "all types": lambda m: {name: make(m) for name, make in ALL_TYPES.items()},
    "nested": lambda m: {
        "a": m.Int32Col(dflt=3),
        "n": {"_v_pos": 0, "y": m.Float32Col(dflt=2), "x": {"deep": m.UInt8Col(shape=2)}},
        "b": {"s": m.StringCol(3, pos=0, dflt=b"q"), "t": m.Time32Col(dflt=7)},
        "e": m.EnumCol(["r", "g", "b"], "g", "uint8", shape=(2,)),
    },
    "positions": lambda m: {"z": m.BoolCol(dflt=True, pos=0), "a": m.Time64Col(dflt=1.25),
                            "c": m.ComplexCol(8, dflt=2j, shape=2)},
}


def _write_pytables(path: Path, columns: Any, byteorder: str | None = None) -> None:
    with tables.open_file(path, "w") as f:
        f.create_table("/", "t", columns, byteorder=byteorder)
        f.root.t.row.append()
        f.root.t.flush()


def _read_layout(path: Path) -> tuple[CompoundLayout, list[Any]]:
    with h5py.File(path, "r") as f:
        dset = f["t"]
        layout = layout_of_type(dset.id.get_type())
        fills = []
        while f"FIELD_{len(fills)}_FILL" in dset.attrs:
            fills.append(dset.attrs[f"FIELD_{len(fills)}_FILL"])
    return layout, fills


def _pytables_view(path: Path) -> tuple[dict[str, Any], np.ndarray]:
    with tables.open_file(path, "r") as f:
        return describe_descr(f.root.t.description, tables), f.root.t[0]


@pytest.mark.parametrize("byteorder", ["little", "big"])
@pytest.mark.parametrize("name", list(TABLES))
def test_description_from_layout_like_pytables(tmp_path: Path, name: str, byteorder: str) -> None:
    path = tmp_path / "t.h5"
    _write_pytables(path, TABLES[name](tables), byteorder)
    layout, fills = _read_layout(path)
    theirs, first_row = _pytables_view(path)
    ours = hsl.description_from_layout(layout, fills)
    assert describe_descr(ours, HS) == theirs
    assert [c._v_pathname for c in hsd.flat_columns(ours)] == theirs["walk_col"]
    # The default row is what PyTables appended with no value set.  (Not in big-endian
    # files: PyTables reads big-endian complex and enum cells back wrong.)
    row = hsd.default_row(ours)
    assert row.dtype == first_row.dtype
    if byteorder == "little":
        assert row.tobytes() == first_row.tobytes()


@pytest.mark.parametrize("byteorder", ["little", "big", None])
@pytest.mark.parametrize("name", list(TABLES))
def test_storage_spec_matches_pytables_files(tmp_path: Path, name: str,
                                             byteorder: str | None) -> None:
    path = tmp_path / "t.h5"
    _write_pytables(path, TABLES[name](tables), byteorder)
    layout, _ = _read_layout(path)
    dtype, times, enums = hsl.storage_spec(hsd.Description(TABLES[name](HS)), byteorder)
    assert dtype == layout.dtype
    assert dtype.itemsize == layout.dtype.itemsize
    assert times == layout.time_fields
    if byteorder == "big":
        # PyTables inserts the native bytes of each value into a big-endian enum type, so
        # HDF5 (and PyTables, reading) see them byte-swapped.
        enums = {path: {name: int(np.array(value, layout.dtype[path].base.newbyteorder("="))
                                  .byteswap()) for name, value in members.items()}
                 for path, members in enums.items()}
    assert {k: list(v.items()) for k, v in enums.items()} == {
        k: list(v.items()) for k, v in layout.enums.items()
    }
    bools = {c._v_pathname for c in hsd.flat_columns(hsd.Description(TABLES[name](HS)))
             if c.kind == "bool"}
    assert bools == set(layout.bitfield_fields)


def test_padded_table_from_pytables(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    dtype = DTYPES["padded, reordered"]
    with tables.open_file(path, "w") as f:
        f.create_table("/", "t", np.zeros(2, dtype))
    layout, fills = _read_layout(path)
    theirs, _ = _pytables_view(path)
    ours = hsl.description_from_layout(layout, fills)
    assert describe_descr(ours, HS) == theirs
    assert ours._v_dtype == layout.dtype.newbyteorder("=") or ours._v_offsets == [0, 16, 30]


def test_h5py_table_with_bools_and_no_fills(tmp_path: Path) -> None:
    path = tmp_path / "t.h5"
    dtype = np.dtype([("flag", "?"), ("x", "<f4"), ("n", [("k", "<i2", (2,))])])
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=np.zeros(3, dtype), maxshape=(None,), chunks=(4,))
    layout, fills = _read_layout(path)
    assert fills == []
    ours = hsl.description_from_layout(layout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, _ = _pytables_view(path)
    assert describe_descr(ours, HS) == theirs
    assert type(ours.flag).__name__ == "EnumCol"


def make_layout(dtype: Any, *, times: frozenset[str] = frozenset(),
                bits: frozenset[str] = frozenset(),
                enums: dict[str, dict[str, int]] | None = None) -> CompoundLayout:
    return CompoundLayout(np.dtype(dtype), times, bits, enums or {})


def test_description_from_layout_by_hand() -> None:
    layout = make_layout(
        {"names": ["e", "t", "n"], "formats": ["<u2", ">i4", [("b", "?"), ("t8", "<f8")]],
         "offsets": [8, 0, 12], "itemsize": 24},
        times=frozenset({"t", "n/t8"}), bits=frozenset({"n/b"}),
        enums={"e": {"one": 1, "zero": 0}},
    )
    descr = hsl.description_from_layout(layout, [5, 0, True, 2.5])
    assert descr._v_names == ["t", "e", "n"]
    assert [type(c).__name__ for c in hsd.flat_columns(descr)] == [
        "Time32Col", "EnumCol", "BoolCol", "Time64Col"
    ]
    assert descr.e._defname == "zero" and list(descr.e.enum) == [("one", 1), ("zero", 0)]
    assert descr.e.base == hyperslab.UInt16Atom()
    assert descr._v_dflts == {"t": 5, "e": 0}
    assert descr.n._v_dflts == {"b": True, "t8": 2.5}
    assert hsl.description_from_layout(layout).e._defname == "one"


def test_description_from_layout_bad_inputs() -> None:
    layout = make_layout([("a", "<i4"), ("e", "u1")], enums={"e": {"x": 1}})
    with pytest.raises(ValueError, match="1 column defaults given for 2 columns"):
        hsl.description_from_layout(layout, [1])
    descr = hsl.description_from_layout(layout, [1, 7])  # 7 is no member: PyTables' rule
    assert descr.e._defname == "x" and descr.e.dflt == 7 and descr._v_dflts["e"] == 7
    with pytest.warns(DataTypeWarning, match="'e'"):
        descr = hsl.description_from_layout(layout, [1, 300])  # 300 does not fit uint8
    assert descr.e._defname == "x" and descr.e.dflt == 1
    with pytest.warns(DataTypeWarning, match="'a'"):
        descr = hsl.description_from_layout(layout, ["not a number", None])
    assert descr.a.dflt == 0
    with pytest.raises(TypeError, match="'s'"):
        hsl.description_from_layout(make_layout([("s", [("x", "<i4")], (2,))]))
    with pytest.raises(TypeError, match="'u'"):
        hsl.description_from_layout(make_layout([("u", "<U2")]))


def test_complex_fill_given_as_a_record() -> None:
    fill = np.array((1.5, -2.0), dtype=[("r", "<f8"), ("i", "<f8")])
    descr = hsl.description_from_layout(make_layout([("c", "<c16")]), [fill])
    assert descr.c.dflt == 1.5 - 2j


def test_default_row_in_another_layout() -> None:
    descr = hsd.Description({"a": hyperslab.Int16Col(dflt=-2),
                             "n": {"s": hyperslab.StringCol(2, dflt=b"hi", shape=2)}})
    dtype = np.dtype({"names": ["n", "a"], "formats": [[("s", "S2", (2,))], ">i2"],
                      "offsets": [0, 6], "itemsize": 10})
    row = hsd.default_row(descr, dtype)
    assert row.dtype == dtype and row["a"] == -2 and row["n"]["s"].tolist() == [b"hi", b"hi"]


def test_storage_spec_enum_default_first_and_bad_byteorder() -> None:
    descr = hsd.Description({"e": hyperslab.EnumCol(["a", "b", "c"], "c", "int8")})
    _, _, enums = hsl.storage_spec(descr)
    assert list(enums["e"].items()) == [("c", 2), ("a", 0), ("b", 1)]
    with pytest.raises(ValueError, match="'middle'"):
        hsl.storage_spec(descr, "middle")


@pytest.mark.parametrize("byteorder", ["little", "big"])
@pytest.mark.parametrize("name", list(TABLES))
def test_columns_of_an_opened_table_before_its_description(tmp_path: Path, name: str,
                                                           byteorder: str) -> None:
    """Right after opening, ``table.cols`` comes from the record dtype (a query needs the
    columns' names and dtypes, not their defaults): the columns, their order, dtypes and
    nesting are those of the description made later, which they then use."""
    path = tmp_path / "t.h5"
    _write_pytables(path, TABLES[name](tables), byteorder)
    with hyperslab.open_file(path) as f:
        table = f.root.t
        instances = table.colinstances
        assert table._description_ is None  # not made yet
        descr = table.description

        def paths(d: Any) -> list[str]:
            found = []
            for child in (d._v_colobjects[n] for n in d._v_names):
                found.append(child._v_pathname)
                if isinstance(child, hyperslab.Description):
                    found += paths(child)
            return found

        assert list(instances) == paths(descr)
        for path_name, column in instances.items():
            if not isinstance(column, Cols):
                col = descr
                for part in path_name.split("/"):
                    col = col._v_colobjects[part]
                assert column.dtype == col.dtype and column._col is col
                assert column.descr is col._v_parent and column.type == col.type
            else:
                assert column._v_desc._v_pathname == path_name
        assert table.cols._v_colnames == list(descr._v_names)


def test_columns_of_a_table_with_arrays_of_records_are_refused(tmp_path: Path) -> None:
    """No column holds an array of records: listing the columns of such a table says so,
    naming the field (the columns are not made from the record dtype then)."""
    path = tmp_path / "a.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=np.zeros(3, [("a", "<i4"), ("s", [("x", "<i4")], (2,))]))
        f["t"].attrs["CLASS"] = np.bytes_(b"TABLE")
    with hyperslab.open_file(path) as f:
        with pytest.raises(TypeError, match="column 's': arrays of structures"):
            _ = f.root.t.colinstances
