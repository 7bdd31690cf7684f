"""Raw attributes: written and read exactly as PyTables writes and reads them.

Oracles both ways: PyTables reads what we write (and the HDF5 types are the same as those
PyTables writes), we read what PyTables writes, and we read h5py-written attributes as
PyTables does (with the documented fixes: big-endian values, enums, UTF-8 NUL padding).
"""

from __future__ import annotations

import enum
import pickle
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables
from h5py import h5a, h5s, h5t

from hyperslab.errors import DataTypeWarning, FileModeError, HDF5ExtError
from hyperslab.storage import attributes as raw


class Colour(enum.IntEnum):
    RED = 1


class _Unpicklable:
    def __reduce__(self) -> Any:
        raise pickle.PicklingError("no pickling here")


# Values PyTables stores natively, as pickles, or with a dtype of its choosing.
VALUES: dict[str, Any] = {
    "str": "hello",
    "str_utf8": "héllo € ☃",
    "str_empty": "",
    "str_dot": "ends with a dot.",
    "np_str": np.str_("xy"),
    "np_str_empty": np.str_(""),
    "bytes": b"abc",
    "bytes_empty": b"",
    "bytes_nul_inside": b"a\x00b",
    "bytes_nul_end": b"ab\x00",
    "bytes_dot": b"abc.",
    "bytes_zero_dot": b"0.",
    "bytes_pickle": pickle.dumps(5, 0),
    "np_bytes": np.bytes_(b"zz"),
    "int": 5,
    "int_neg": -(2**63),
    "int_u64": 2**63,
    "int_huge": 2**70,
    "float": 1.5,
    "float_nan": float("nan"),
    "bool_true": True,
    "bool_false": False,
    "complex": 1 + 2j,
    "none": None,
    "list": [1, "a", 2.5],
    "tuple": (1, "a"),
    "dict": {"a": 1, "b": [1, 2]},
    "nested": {"x": (1, {"y": None}), "z": [b"q"]},
    "set": {1, 2},
    "i1": np.int8(-3),
    "u1": np.uint8(250),
    "i2": np.int16(-300),
    "u2": np.uint16(60000),
    "i4": np.int32(-70000),
    "u4": np.uint32(4_000_000_000),
    "i8": np.int64(-(2**40)),
    "u8": np.uint64(2**64 - 1),
    "f2": np.float16(1.5),
    "f4": np.float32(2.5),
    "f8": np.float64(-0.25),
    "g": np.longdouble("1.25"),
    "c8": np.complex64(1 - 1j),
    "c16": np.complex128(2 + 3j),
    "G": np.clongdouble(1 + 1j),
    "np_bool": np.bool_(True),
    "datetime": np.datetime64("2020-01-02"),
    "a0": np.array(3.0),
    "a0_int": np.array(7, dtype=np.int16),
    "a1": np.arange(5),
    "a2": np.arange(6, dtype="f4").reshape(2, 3),
    "a3_be": np.arange(8, dtype=">f4").reshape(2, 2, 2),
    "a1_be_i4": np.arange(3, dtype=">i4"),
    "be_scalar": np.array(7, dtype=">i4"),
    "a_empty": np.zeros((0,), "f8"),
    "a_bool": np.array([True, False, True]),
    "a_complex": np.array([1 + 2j, 3j], dtype="c8"),
    "a_bytes": np.array([b"a", b"bcd"]),
    "a_bytes_2d": np.array([[b"a"], [b"bb"]]),
    "a_unicode": np.array(["a", "bcd"]),
    "u0": np.array("abc"),
    "u0_empty": np.array(""),
    "a_object": np.array([1, "a"], dtype=object),
    "rec": np.array([(1, 2.0), (3, 4.0)], dtype=[("a", "i4"), ("b", "f8")]),
    "rec0": np.array((1, 2.0), dtype=[("a", "i2"), ("b", "f8")])[()],
    "rec_nested": np.zeros(
        2, dtype=[("a", "i2"), ("b", [("c", "c8"), ("d", "?")]), ("s", "S2"), ("v", "f4", (2,))]
    ),
    "rec_aligned": np.zeros(2, dtype=np.dtype([("a", "i1"), ("b", "f8")], align=True)),
    "rec_trailing_pad": np.ones(2, dtype=np.dtype([("b", "f8"), ("a", "i1")], align=True)),
    "rec_nested_aligned": np.ones(
        3, dtype=np.dtype([("x", np.dtype([("p", "i1"), ("q", "f8")], align=True)), ("y", "i1")])
    ),
    "rec_unicode_field": np.array([("ab",)], dtype=[("a", "U2")]),
    "subarray": np.zeros(2, dtype=("i4", (3,))),
    "int_enum": Colour.RED,  # not exactly an int: pickled
    "EXTDIM": 1,
    "NROWS": 12,
    "AUTO_INDEX": True,
    "DIRTY": "1",
    "FLAVOR": b"numpy",
    "TITLE": b"bytes title",
    "FIELD_0_NAME": b"col",
    "FIELD_0_FILL": b"fill",
}

BIG_ENDIAN_NAMES = {"a3_be", "a1_be_i4", "be_scalar"}


@contextmanager
def _pt_attrs(path: Path, mode: str = "r") -> Iterator[Any]:
    with tables.open_file(path, mode) as f:
        yield f.get_node("/g")._v_attrs


@contextmanager
def _h5_group(path: Path, mode: str = "r") -> Iterator[h5py.Group]:
    with h5py.File(path, mode) as f:
        yield f["g"] if "g" in f else f.create_group("g")


def _write_pytables(path: Path, name: str, value: Any) -> None:
    with tables.open_file(path, "w") as f, warnings.catch_warnings():
        # PyTables warns that it stores U fields of structured arrays as S.
        warnings.simplefilter("ignore", tables.FlavorWarning)
        g = f.create_group("/", "g")
        setattr(g._v_attrs, name, value)


def _write_ours(path: Path, name: str, value: Any) -> None:
    with _h5_group(path, "w") as g:
        raw.write_attribute(g.id, name, value)


def _same(ours: Any, theirs: Any) -> bool:
    """Equal in type, dtype, shape and value (NaN equals NaN)."""
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, np.ndarray | np.generic):
        if ours.dtype != theirs.dtype or np.shape(ours) != np.shape(theirs):
            return False
        if ours.dtype.kind in "fc":
            return bool(np.array_equal(ours, theirs, equal_nan=True))
        return bool(np.array_equal(ours, theirs))
    return bool(ours == theirs)


def _stored(oid: Any, name: str) -> tuple[Any, int, Any, Any]:
    """(file type, dataspace class, shape, raw bytes) of an attribute, for comparisons.

    Compounds and floats give the repr of their values: their padding bytes are undefined.
    """
    attr = h5a.open(oid, name.encode())
    ftype, space = attr.get_type(), attr.get_space()
    kind = space.get_simple_extent_type()
    if kind == h5s.NULL:
        return ftype, kind, None, b""
    buf = np.zeros(space.shape, dtype=np.dtype((np.void, ftype.get_size())))
    if buf.size:
        attr.read(buf, mtype=ftype)
    if ftype.get_class() in (h5t.COMPOUND, h5t.FLOAT):  # padding bytes (long double too)
        return ftype, kind, space.shape, repr(buf.view(ftype.dtype).tolist())
    return ftype, kind, space.shape, buf.tobytes()


def _member_names(ctype: Any) -> list[bytes]:
    return [ctype.get_member_name(i) for i in range(ctype.get_nmembers())]


# ----------------------------------------------------------------------------- write side


@pytest.mark.parametrize("name", list(VALUES))
def test_both_ways_against_pytables(tmp_path: Path, name: str) -> None:
    """Same HDF5 type, dataspace and bytes as PyTables; each reads the other's file alike."""
    value = VALUES[name]
    pt_path, our_path = tmp_path / "pt.h5", tmp_path / "ours.h5"
    _write_pytables(pt_path, name, value)
    _write_ours(our_path, name, value)
    with _h5_group(pt_path) as pg, _h5_group(our_path) as og:
        ptype, *pt_rest = _stored(pg.id, name)
        otype, *our_rest = _stored(og.id, name)
        assert otype == ptype  # H5Tequal: class, size, order, cset, padding, members
        assert our_rest == pt_rest
        if otype.get_class() == h5t.COMPOUND:  # and the same member order
            assert _member_names(otype) == _member_names(ptype)
        ours_from_pt = raw.read_attribute(pg.id, name)
        ours_from_ours = raw.read_attribute(og.id, name)
    with _pt_attrs(pt_path) as pa, _pt_attrs(our_path) as oa:
        pt_from_pt, pt_from_ours = pa[name], oa[name]
    assert _same(pt_from_ours, pt_from_pt)
    assert _same(ours_from_ours, ours_from_pt)
    if name in BIG_ENDIAN_NAMES:
        # PyTables reads big-endian numbers without conversion (byte-swapped garbage).
        array = np.asarray(value)
        expected = array.astype(array.dtype.newbyteorder("="))
        assert _same(ours_from_pt, expected if expected.ndim else expected[()])
        assert _same(np.asarray(pt_from_pt).byteswap(), np.asarray(ours_from_pt))
    else:
        assert _same(ours_from_pt, pt_from_pt)


def test_structured_fields_out_of_offset_order(tmp_path: Path) -> None:
    """Same layout as PyTables (fields sorted by offset), but values assigned by name.

    PyTables casts to its layout by position, so it stores a=2, b=1 here (a bug).
    """
    dtype = {"names": ["a", "b"], "formats": ["i2", "i4"], "offsets": [8, 0], "itemsize": 12}
    value = np.array([(1, 2)], dtype=dtype)
    _write_pytables(tmp_path / "pt.h5", "x", value)
    _write_ours(tmp_path / "ours.h5", "x", value)
    with _h5_group(tmp_path / "pt.h5") as pg, _h5_group(tmp_path / "ours.h5") as og:
        assert og.attrs.get_id("x").get_type() == pg.attrs.get_id("x").get_type()
        theirs, ours = pg.attrs["x"], og.attrs["x"]
        assert ours.dtype.names == theirs.dtype.names == ("b", "a")
        assert (ours["a"][0], ours["b"][0]) == (1, 2)
        assert (theirs["a"][0], theirs["b"][0]) == (2, 1)
        assert _same(raw.read_attribute(og.id, "x"), ours)


@pytest.mark.parametrize(
    ("value", "size", "kind"),
    [("GROUP", 5, h5s.SCALAR), ("héllo", 6, h5s.SCALAR), ("", 1, h5s.NULL)],
)
def test_sys_string_layout(tmp_path: Path, value: str, size: int, kind: int) -> None:
    path = tmp_path / "sys.h5"
    with _h5_group(path, "w") as g:
        raw.write_sys_string(g.id, "CLASS", value)
        ftype = g.attrs.get_id("CLASS").get_type()
        assert ftype.get_class() == h5t.STRING
        assert ftype.get_size() == size
        assert ftype.get_cset() == h5t.CSET_UTF8
        assert ftype.get_strpad() == h5t.STR_NULLTERM
        assert not ftype.is_variable_str()
        assert g.attrs.get_id("CLASS").get_space().get_simple_extent_type() == kind
        assert raw.read_string_attribute(g.id, "CLASS") == value
    with _pt_attrs(path) as pa:
        assert _same(pa.CLASS, np.str_(value))


def test_sys_strings_match_pytables_nodes(tmp_path: Path) -> None:
    pt_path, our_path = tmp_path / "pt.h5", tmp_path / "ours.h5"
    with tables.open_file(pt_path, "w") as f:
        f.create_group("/", "g", title="")
        f.create_group("/", "h", title="a title")
    with h5py.File(our_path, "w") as f:
        for name, title in (("g", ""), ("h", "a title")):
            oid = f.create_group(name).id
            for attr, text in (("CLASS", "GROUP"), ("TITLE", title), ("VERSION", "1.0")):
                raw.write_sys_string(oid, attr, text)
    with h5py.File(pt_path) as pf, h5py.File(our_path) as of:
        for node in ("g", "h"):
            for attr in ("CLASS", "TITLE", "VERSION"):
                ours, theirs = _stored(of[node].id, attr), _stored(pf[node].id, attr)
                assert ours[0] == theirs[0] and ours[1:] == theirs[1:]


@pytest.mark.parametrize(
    ("dtype", "value"), [("int32", 3), ("int64", 2**40), (np.uint8, 255), ("int64", -1)]
)
def test_write_int_attribute(tmp_path: Path, dtype: Any, value: int) -> None:
    with _h5_group(tmp_path / "i.h5", "w") as g:
        raw.write_int_attribute(g.id, "NROWS", value, dtype)
        got = raw.read_attribute(g.id, "NROWS")
        assert _same(got, np.array(value, dtype=dtype)[()])
        assert g.attrs.get_id("NROWS").get_space().get_simple_extent_type() == h5s.SCALAR


def test_write_int_attribute_rejects_bad_input(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "i.h5", "w") as g:
        raw.write_int_attribute(g.id, "EXTDIM", 1, "int32")
        with pytest.raises(TypeError, match="float64"):
            raw.write_int_attribute(g.id, "EXTDIM", 1, "float64")
        with pytest.raises(OverflowError):
            raw.write_int_attribute(g.id, "EXTDIM", 2**40, "int32")
        with pytest.raises(TypeError, match="shape"):
            raw.write_int_attribute(g.id, "EXTDIM", [1, 2], "int32")  # type: ignore[arg-type]
        assert _same(raw.read_attribute(g.id, "EXTDIM"), np.int32(1))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("text", np.arange(4)),
        (np.arange(4), ""),
        ("", {"a": 1}),
        (b"x" * 100, "y"),
        (np.zeros((2, 2)), np.ones(3, dtype="S4")),
    ],
)
def test_overwrite_replaces_type_and_shape(tmp_path: Path, first: Any, second: Any) -> None:
    path = tmp_path / "o.h5"
    with _h5_group(path, "w") as g:
        raw.write_attribute(g.id, "other", 1)
        raw.write_attribute(g.id, "x", first)
        raw.write_attribute(g.id, "x", second)
        assert raw.attribute_names(g.id) == ["other", "x"]
    _write_pytables(tmp_path / "pt.h5", "x", second)
    with _pt_attrs(path) as oa, _pt_attrs(tmp_path / "pt.h5") as pa:
        assert _same(oa.x, pa.x)


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (_Unpicklable(), pickle.PicklingError),
        (np.zeros(2, dtype=[("a", "O")]), TypeError),
        (np.zeros(2, dtype="V4"), TypeError),
        (np.array([("é",)], dtype=[("a", "U1")]), UnicodeEncodeError),
    ],
)
def test_bad_values_leave_the_old_attribute(tmp_path: Path, bad: Any, error: type) -> None:
    with _h5_group(tmp_path / "b.h5", "w") as g:
        raw.write_attribute(g.id, "x", "kept")
        with pytest.raises(error):
            raw.write_attribute(g.id, "x", bad)
        assert raw.read_attribute(g.id, "x") == "kept"
        assert raw.attribute_names(g.id) == ["x"]


def test_too_large_attribute_leaves_the_old_one(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "big.h5", "w") as g:
        raw.write_attribute(g.id, "x", np.arange(3))
        with pytest.raises(HDF5ExtError, match="'x'"):
            raw.write_attribute(g.id, "x", np.zeros(100_000))  # > 64 KiB object header message
        assert _same(raw.read_attribute(g.id, "x"), np.arange(3))
        big = b"z" * 40_000
        raw.write_attribute(g.id, "y", big)
        raw.write_attribute(g.id, "y", big + b"!")
        assert raw.read_attribute(g.id, "y") == big + b"!"
        assert raw.attribute_names(g.id) == ["x", "y"]


def test_read_only_file_raises_file_mode_error(tmp_path: Path) -> None:
    path = tmp_path / "ro.h5"
    with _h5_group(path, "w") as g:
        raw.write_attribute(g.id, "x", 1)
    with _h5_group(path, "r") as g:
        with pytest.raises(FileModeError, match="'x'"):
            raw.write_attribute(g.id, "x", 2)
        with pytest.raises(FileModeError, match="'y'"):
            raw.write_sys_string(g.id, "y", "text")
        with pytest.raises(FileModeError):
            raw.delete_attribute(g.id, "x")
        assert raw.read_attribute(g.id, "x") == 1


def test_write_sys_string_requires_str(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "s.h5", "w") as g, pytest.raises(TypeError, match="CLASS"):
        raw.write_sys_string(g.id, "CLASS", b"GROUP")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- read side


def _h5py_values() -> dict[str, Callable[[h5py.AttributeManager], None]]:
    def setter(value: Any, **kw: Any) -> Callable[[h5py.AttributeManager], None]:
        return lambda attrs, v=value: attrs.create("x", v, **kw)

    return {
        "vlen_str": setter("hello"),
        "vlen_str_utf8": setter("héllo"),
        "vlen_str_empty": setter(""),
        "vlen_ascii": setter(np.array(b"xyz.", dtype=h5py.string_dtype("ascii"))),
        "vlen_str_array": setter(["a", "bc"]),
        "vlen_ascii_array": setter(np.array([b"a", b"bc"], dtype=h5py.string_dtype("ascii"))),
        "fixed_bytes": setter(np.bytes_(b"abc")),
        "fixed_nullpad_spaces": setter(np.bytes_(b"ab  ")),
        "fixed_ascii_array": setter(np.array([b"a", b"bcd"])),
        "fixed_utf8_array": setter(np.array([b"ab", b"c"], dtype=h5py.string_dtype("utf-8", 3))),
        "int": setter(5),
        "float": setter(2.5),
        "complex": setter(1 + 1j),
        "array": setter(np.arange(4).reshape(2, 2)),
        "empty_bytes": setter(h5py.Empty("S1")),
        "compound": setter(np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")])),
        "compound_be": setter(np.array([(1, 2.5)], dtype=[("a", ">i4"), ("b", ">f8")])),
    }


H5PY_VALUES = _h5py_values()


@pytest.mark.parametrize("name", list(H5PY_VALUES))
def test_we_read_h5py_attributes_as_pytables_does(tmp_path: Path, name: str) -> None:
    path = tmp_path / "h5.h5"
    with _h5_group(path, "w") as g:
        H5PY_VALUES[name](g.attrs)
    with _pt_attrs(path) as pa:
        theirs = pa.x
    with _h5_group(path) as g:
        ours = raw.read_attribute(g.id, "x")
    if name == "compound_be":  # PyTables: no byte-order conversion, garbage
        assert _same(ours, np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")]))
    else:
        assert _same(ours, theirs)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.array(7, dtype=">i4"), np.int32(7)),
        (np.arange(3, dtype=">f8"), np.arange(3, dtype="f8")),
        (True, np.True_),
        (np.array([True, False]), np.array([True, False])),
        (
            np.array([1, 2], dtype=h5py.enum_dtype({"A": 1, "B": 2}, basetype=">i2")),
            np.array([1, 2], dtype="i2"),
        ),
        (np.array(b"h\xc3\xa9llo", dtype=h5py.string_dtype("utf-8", 8)), np.str_("héllo")),
        (h5py.Empty("f8"), np.float64(0.0)),
        (np.array([(True, 1j)], dtype=[("b", "?"), ("c", "c16")]), None),
    ],
)
def test_h5py_values_pytables_gets_wrong(tmp_path: Path, value: Any, expected: Any) -> None:
    """Big-endian values, enums (h5py bools), NUL-padded UTF-8: we return the true value."""
    with _h5_group(tmp_path / "h5.h5", "w") as g:
        g.attrs["x"] = value
        ours = raw.read_attribute(g.id, "x")
        if expected is None:
            expected = g.attrs["x"]  # h5py itself is the oracle
    assert _same(ours, expected)


def test_unsupported_types_warn_and_read_none(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "u.h5", "w") as g:
        g.attrs["ref"] = g.ref
        g.attrs.create("vlen", [np.arange(2), np.arange(3)], dtype=h5py.vlen_dtype("i4"))
        for name in ("ref", "vlen"):
            with pytest.warns(DataTypeWarning, match=name):
                assert raw.read_attribute(g.id, name) is None
        with pytest.raises(TypeError, match="'ref'"):
            raw.read_string_attribute(g.id, "ref")


def test_hdf5_complex_class(tmp_path: Path) -> None:
    if not hasattr(h5t, "COMPLEX_IEEE_F64BE"):
        pytest.skip("HDF5 without a native complex class")
    with _h5_group(tmp_path / "c.h5", "w") as g:
        attr = h5a.create(g.id, b"z", h5t.COMPLEX_IEEE_F64BE, h5s.create_simple((2,)))
        attr.write(np.array([1 + 2j, -3j], dtype=">c16"), mtype=h5t.COMPLEX_IEEE_F64BE)
        assert _same(raw.read_attribute(g.id, "z"), np.array([1 + 2j, -3j]))


def test_missing_attribute(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "m.h5", "w") as g:
        with pytest.raises(KeyError, match="nope"):
            raw.read_attribute(g.id, "nope")
        assert raw.read_string_attribute(g.id, "nope") is None
        assert not raw.has_attribute(g.id, "nope")


def _low_level_string(oid: Any, name: str, data: bytes, cset: int, pad: int, **kw: Any) -> None:
    ftype = h5t.C_S1.copy()
    ftype.set_size(max(len(data), 1))
    ftype.set_cset(cset)
    ftype.set_strpad(pad)
    space = h5s.create(h5s.NULL) if kw.get("null") else h5s.create(h5s.SCALAR)
    attr = h5a.create(oid, name.encode(), ftype, space)
    if not kw.get("null"):
        attr.write(np.array(data, dtype=f"S{len(data)}"), mtype=ftype)


@pytest.mark.parametrize(
    ("data", "cset", "pad", "expected"),
    [
        (b"GROUP", h5t.CSET_UTF8, h5t.STR_NULLTERM, "GROUP"),
        ("héllo".encode(), h5t.CSET_UTF8, h5t.STR_NULLTERM, "héllo"),
        (b"GROUP", h5t.CSET_ASCII, h5t.STR_NULLTERM, "GROUP"),
        (b"ab\x00\x00", h5t.CSET_ASCII, h5t.STR_NULLPAD, "ab"),
        (b"abcd", h5t.CSET_UTF8, h5t.STR_NULLPAD, "abcd"),
        (b"abcd", h5t.CSET_ASCII, h5t.STR_NULLPAD, "abcd"),
        (b"ab  ", h5t.CSET_UTF8, h5t.STR_SPACEPAD, "ab"),
        (b"ab  ", h5t.CSET_ASCII, h5t.STR_SPACEPAD, "ab"),
        (b"a\x00bc", h5t.CSET_ASCII, h5t.STR_NULLTERM, "a"),
        (b"a\x00bc", h5t.CSET_UTF8, h5t.STR_NULLTERM, "a"),
        (b"x" * 300, h5t.CSET_UTF8, h5t.STR_NULLTERM, "x" * 300),
    ],
)
def test_read_string_attribute_fixed(
    tmp_path: Path, data: bytes, cset: int, pad: int, expected: str
) -> None:
    with _h5_group(tmp_path / "s.h5", "w") as g:
        _low_level_string(g.id, "s", data, cset, pad)
        got = raw.read_string_attribute(g.id, "s")
        assert type(got) is str and got == expected


@pytest.mark.parametrize("cset", [h5t.CSET_ASCII, h5t.CSET_UTF8])
def test_read_string_attribute_null_dataspace(tmp_path: Path, cset: int) -> None:
    with _h5_group(tmp_path / "n.h5", "w") as g:
        _low_level_string(g.id, "s", b"", cset, h5t.STR_NULLTERM, null=True)
        assert raw.read_string_attribute(g.id, "s") == ""
        expected = np.str_("") if cset == h5t.CSET_UTF8 else np.bytes_(b"")
        assert _same(raw.read_attribute(g.id, "s"), expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hello", "hello"),
        ("héllo", "héllo"),
        ("", ""),
        (np.array(b"ascii", dtype=h5py.string_dtype("ascii")), "ascii"),
        (np.bytes_(b"fixed"), "fixed"),
        (h5py.Empty("S1"), ""),
    ],
)
def test_read_string_attribute_h5py(tmp_path: Path, value: Any, expected: str) -> None:
    with _h5_group(tmp_path / "s.h5", "w") as g:
        g.attrs["s"] = value
        assert raw.read_string_attribute(g.id, "s") == expected


@pytest.mark.parametrize(
    "value",
    [
        np.int32(5),
        np.array([b"ab", b"cd"]),
        np.array([b"abcdef"]),
        np.array(["x", "y"], dtype=h5py.string_dtype()),
        np.arange(3.0),
        h5py.Empty("f8"),
    ],
)
def test_read_string_attribute_rejects_non_strings(tmp_path: Path, value: Any) -> None:
    with _h5_group(tmp_path / "s.h5", "w") as g:
        g.attrs["s"] = value
        with pytest.raises(TypeError, match="'s'"):
            raw.read_string_attribute(g.id, "s")


def test_read_string_attribute_on_pytables_nodes(tmp_path: Path) -> None:
    path = tmp_path / "pt.h5"
    with tables.open_file(path, "w", title="root title") as f:
        f.create_group("/", "g", title="é title")
        f.create_earray("/", "e", tables.Int32Atom(), (0, 3))
        f.create_table("/", "t", {"x": tables.Int32Col()})
    with h5py.File(path) as f, tables.open_file(path) as pf:
        for node in ("/", "/g", "/e", "/t"):
            attrs = pf.get_node(node)._v_attrs
            for name in attrs._v_attrnamessys:
                value = attrs[name]
                got = (
                    raw.read_string_attribute(f[node].id, name) if isinstance(value, str) else None
                )
                assert got is None or got == value
                assert _same(raw.read_attribute(f[node].id, name), value)


# ----------------------------------------------------------------------------- management


def test_attribute_names_are_in_name_order(tmp_path: Path) -> None:
    names = ["zeta", "Alpha", "beta", "é", "CLASS", "a_1"]
    with h5py.File(tmp_path / "n.h5", "w", track_order=True) as f:
        oid = f.create_group("g", track_order=True).id
        for name in names:
            raw.write_attribute(oid, name, 1)
        assert raw.attribute_names(oid) == sorted(names)
        assert list(f["g"].attrs) == names  # h5py follows creation order here


def test_has_delete_rename(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "m.h5", "w") as g:
        raw.write_attribute(g.id, "a", np.arange(3, dtype=">i2"))
        raw.write_attribute(g.id, "b", "bee")
        before = _stored(g.id, "a")
        assert raw.has_attribute(g.id, "a")
        raw.rename_attribute(g.id, "a", "c")
        assert not raw.has_attribute(g.id, "a")
        after = _stored(g.id, "c")
        assert after[0] == before[0] and after[1:] == before[1:]
        raw.rename_attribute(g.id, "c", "b")  # replaces "b", as PyTables' _f_rename
        assert raw.attribute_names(g.id) == ["b"]
        raw.rename_attribute(g.id, "b", "b")
        assert _same(raw.read_attribute(g.id, "b"), np.arange(3, dtype="i2"))
        with pytest.raises(KeyError, match="'zz'"):
            raw.rename_attribute(g.id, "zz", "yy")
        raw.delete_attribute(g.id, "b")
        assert raw.attribute_names(g.id) == []
        with pytest.raises(KeyError, match="'b'"):
            raw.delete_attribute(g.id, "b")


def test_copy_attributes_is_exact(tmp_path: Path) -> None:
    src_path, dst_path = tmp_path / "src.h5", tmp_path / "dst.h5"
    with h5py.File(src_path, "w") as f:
        src = f.create_group("g")
        raw.write_sys_string(src.id, "TITLE", "")
        raw.write_attribute(src.id, "pickled", {"a": [1, 2]})
        raw.write_attribute(src.id, "rec", VALUES["rec_nested"])
        raw.write_attribute(src.id, "be", np.arange(3, dtype=">f8"))
        src.attrs["vlen"] = ["x", "yz"]
        src.attrs["vlen_scalar"] = "héllo"
        src.attrs["empty"] = h5py.Empty("f8")
        names = raw.attribute_names(src.id)
        with h5py.File(dst_path, "w") as d:
            dst = d.create_group("h")
            raw.write_attribute(dst.id, "be", "to be replaced")
            raw.copy_attributes(src.id, dst.id, names)
            assert raw.attribute_names(dst.id) == names
            for name in names:
                if name.startswith("vlen"):
                    assert _same(raw.read_attribute(dst.id, name), raw.read_attribute(src.id, name))
                    assert dst.attrs.get_id(name).get_type() == src.attrs.get_id(name).get_type()
                else:
                    s_type, *s_rest = _stored(src.id, name)
                    d_type, *d_rest = _stored(dst.id, name)
                    assert d_type == s_type and d_rest == s_rest
            with pytest.raises(KeyError, match="missing"):
                raw.copy_attributes(src.id, d.create_group("k").id, ["TITLE", "missing"])
            assert raw.attribute_names(d["k"].id) == []
            raw.copy_attributes(src.id, d.create_group("all").id)
            assert raw.attribute_names(d["all"].id) == names


def test_non_str_names_are_rejected(tmp_path: Path) -> None:
    with _h5_group(tmp_path / "n.h5", "w") as g, pytest.raises(TypeError, match="str"):
        raw.write_attribute(g.id, b"x", 1)  # type: ignore[arg-type]


def test_sys_attr_names() -> None:
    assert raw.is_sys_attr_name("CLASS") and raw.is_sys_attr_name("FIELD_3_FILL")
    assert not raw.is_sys_attr_name("class") and not raw.is_sys_attr_name("my_attr")
    assert raw.SYS_ATTRS == frozenset(tables.attributeset.SYS_ATTRS)


def test_read_attributes_of_a_child(tmp_path: Path) -> None:
    with h5py.File(tmp_path / "c.h5", "w") as f:
        raw.write_sys_string(f.create_group("g").id, "CLASS", "GROUP")
        dset = f.create_dataset("d", data=np.arange(3))
        raw.write_sys_string(dset.id, "CLASS", "ARRAY")
        f.create_group("plain")
        f["soft"] = h5py.SoftLink("/g")
        f["dangling"] = h5py.SoftLink("/nowhere")
        raw.write_attribute(f["plain"].id, "number", 3)
        root = f.id
        for child, expected in (("g", "GROUP"), ("d", "ARRAY"), ("soft", "GROUP")):
            fast = raw.read_string_attribute_of(root, child, "CLASS")
            assert type(fast) is str and fast == expected
            assert _same(raw.read_attribute_of(root, child, "CLASS"), np.str_(expected))
        for child in ("plain", "missing", "dangling"):
            assert raw.read_string_attribute_of(root, child, "CLASS") is None
            assert raw.read_attribute_of(root, child, "CLASS") is None
        assert _same(raw.read_attribute_of(root, "plain", "number"), np.int64(3))
        with pytest.raises(TypeError, match="'number'"):
            raw.read_string_attribute_of(root, "plain", "number")


def test_read_int_attribute_converts_numbers_and_refuses_the_rest(tmp_path: Path) -> None:
    """The fast integer read of the library's own metadata: any integer or float type and
    byte order as an int, arrays by their first element (never past the buffer), strings
    and missing attributes as clear errors."""
    with h5py.File(tmp_path / "a.h5", "w") as f:
        attrs = f.create_group("g").attrs
        attrs["i32"], attrs["u8"], attrs["i64"] = np.int32(-5), np.uint8(200), 2**40
        attrs["be"], attrs["f"], attrs["b"] = np.array(7, ">i2"), 3.0, True
        attrs["arr"], attrs["s"] = np.arange(1000, 1100), "abc"
    expected = {"i32": -5, "u8": 200, "i64": 2**40, "be": 7, "f": 3, "b": 1, "arr": 1000}
    with h5py.File(tmp_path / "a.h5", "r") as f:
        gid = f["g"].id
        for name, value in expected.items():
            got = raw.read_int_attribute(gid, name)
            assert got == value and type(got) is int
        with pytest.raises(TypeError, match="'s' is not an integer"):
            raw.read_int_attribute(gid, "s")
        with pytest.raises(KeyError, match="'nope' does not exist"):
            raw.read_int_attribute(gid, "nope")
