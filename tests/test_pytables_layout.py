"""PyTables' module layout: the names PyTables code imports, and its helpers' behaviour,
checked against PyTables itself (run in a subprocess: PyTables and hyperslab cannot both
be ``tables`` in one process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import hyperslab
from hyperslab.errors import FlavorError, NaturalNameWarning
from hyperslab.pytables import flavor, idxutils, indexesextension, path, utils, utilsextension

SRC = str(Path(hyperslab.__file__).parents[1])

def _run(code: str, *, as_tables: bool) -> object:
    """Run ``code`` (which prints one JSON value) with real PyTables or with hyperslab
    installed as ``tables``; return the value."""
    prelude = "import hyperslab; hyperslab.install_as_tables()\n" if as_tables else ""
    env = dict(os.environ, PYTHONPATH=SRC)
    result = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                            text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def _pytables_available() -> bool:
    result = subprocess.run([sys.executable, "-c", "import tables"], capture_output=True)
    return result.returncode == 0


needs_pytables = pytest.mark.skipif(not _pytables_available(), reason="needs PyTables")

ORACLE = """
import json, sys, tables as tb
out = {
    "calc": [list(tb.idxutils.calc_chunksize(n, optlevel=o, indsize=i, memlevel=m))
             for n in (10, 1000, 10**6, 10**9) for o in (0, 3, 6, 9) for i in (1, 2, 4, 8)
             for m in (1, 4)],
    "join": [tb.path.join_path(p, n) for p, n in
             [("/", "a"), ("/a", "b"), ("/a", "/b/c"), ("/a", "/"), ("/", "/x"), ("/a", "./b")]],
    "split": [list(tb.path.split_path(p)) for p in ("/", "/a", "/a/b/c")],
    "visible": [tb.path.isvisiblepath(p) for p in ("/a", "/_i_a", "/a/_p_b/c", "/a_i_b")],
    "byteorders": tb.utils.byteorders,
    "quantize": tb.utils.quantize(__import__("numpy").array([1.234567, -2.5, 3.14159]), 2).tolist(),
    "flavors": [list(tb.flavor.all_flavors), tb.flavor.alias_map, tb.flavor.description_map,
                sorted(map(list, tb.flavor.converter_map)), tb.flavor.internal_flavor],
    "to_python": [tb.flavor.array_of_flavor(tb.flavor.array_of_flavor([[1, 2], [3, 4]],
                                                                      "numpy"), "python"),
                  repr(tb.flavor.array_of_flavor(["ab", "c"], "numpy"))],
    "flavor_of": [tb.flavor.flavor_of(x) for x in ([1], (1,), 1, 1.5, b"x")],
    "index": [tb.index.default_auto_index, repr(tb.index.default_index_filters)],
    "all_types": sorted(tb.atom.all_types),
    "compcodes": [tb.blosc_compcode_to_compname(i) for i in range(6)],
    "blosc2_info": sorted(tb.blosc2_get_complib_info()),
    "complibs": tb.filters.all_complibs,
    "sizetype": tb.utils.SizeType.__name__,
    "dir": sorted(n for n in dir(tb) if not n.startswith("_")),
}
print(json.dumps(out))
"""


@needs_pytables
def test_helpers_answer_as_pytables() -> None:
    ours = _run(ORACLE, as_tables=True)
    theirs = _run(ORACLE, as_tables=False)
    assert isinstance(ours, dict) and isinstance(theirs, dict)
    for key in theirs:
        if key == "dir":
            continue
        assert ours[key] == theirs[key], key


# Names of PyTables' package that are not API: its own imports (typing, numpy...), its
# compiled modules and private helpers, what hyperslab deliberately leaves out.
NOT_API = {
    "Any", "Callable", "DTypeLike", "Generator", "Literal", "NoReturn", "Sequence", "Shape",
    "SizeType", "dataclass_transform", "inspect", "np", "npt", "pickle", "re", "warnings",
    "copy", "linkextension", "lrucacheextension", "tableextension", "conditions", "indexes",
    "registry", "undoredo", "tests", "test", "MetaAtom", "MetaIsDescription",
    # not yet implemented (see the report of the work on this module):
    "VLArray", "vlarray", "copy_file", "same_position",
}


@needs_pytables
def test_top_level_names_are_pytables() -> None:
    code = 'import json, tables as tb; print(json.dumps(sorted(dir(tb))))'
    ours = set(_run(code, as_tables=True))  # type: ignore[arg-type]
    theirs = set(_run(code, as_tables=False))  # type: ignore[arg-type]
    missing = {n for n in theirs - ours if not n.startswith("_")} - NOT_API
    assert missing == set()


def test_submodules_are_attributes_after_import_tables() -> None:
    code = ("import json, tables as tb; print(json.dumps([tb.utils.SizeType.__name__, "
            "tb.idxutils.calc_chunksize(1000, memlevel=1), tb.file._FILE_OPEN_POLICY, "
            "tb.misc.enum.Enum.__name__, tb.node.NotLoggedMixin.__name__, "
            "tb.index.Index.__name__, tb.indexesextension.keysort.__name__, "
            "tb.hdf5extension.HAVE_DIRECT_DRIVER]))")
    assert _run(code, as_tables=True) == [
        "int64", [16384, 8192, 8192, 1024], "default", "Enum", "NotLoggedMixin",
        "ColumnIndex", "keysort", False]


def test_calc_chunksize_matches_the_sizes_used_by_indexes() -> None:
    assert idxutils.calc_chunksize(1000, memlevel=1) == (16384, 8192, 8192, 1024)
    # with a node, PyTables halves slices bigger than BUFFER_TIMES I/O buffers
    from hyperslab.nodes.indexes.sizes import calc_blocksizes

    assert calc_blocksizes(10**9, 6, 4, 8, io_buffer_size=1024) != \
        idxutils.calc_chunksize(10**9)
    assert calc_blocksizes(1000, 6, 4, 4) == idxutils.calc_chunksize(1000)


@pytest.mark.parametrize("dtype", ["S6", "b1", "i1", "i8", "u4", "u8", "f4", "f8"])
def test_keysort_sorts_both_arrays_by_the_first(dtype: str) -> None:
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 100, size=500)
    keys, values = raw.astype(dtype), raw.astype("i8")
    order = keys.argsort()
    expected_keys, expected_values = keys[order], values[order]
    indexesextension.keysort(keys, values)
    assert (keys == expected_keys).all() and (values == expected_values).all()
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        indexesextension.keysort(keys, values[:-1])


def test_name_checks_follow_pytables() -> None:
    path.check_name_validity("a_b")
    with pytest.warns(NaturalNameWarning):
        path.check_name_validity("a:b")
    for bad in ("", ".", "/a", "_v_x", "__members__"):
        with pytest.raises(ValueError), warnings.catch_warnings():
            warnings.simplefilter("ignore", NaturalNameWarning)  # '.' and '/a' warn first
            path.check_name_validity(bad)
    with pytest.raises(TypeError):
        path.check_attribute_name(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path.check_attribute_name("ok")


def test_flavor_registry_and_restriction() -> None:
    saved = (list(flavor.all_flavors), dict(flavor.alias_map), dict(flavor.converter_map),
             dict(flavor.identifier_map), dict(flavor.description_map))
    try:
        assert flavor.array_of_flavor(np.arange(3), "python") == [0, 1, 2]
        assert flavor.array_of_flavor(np.float64(2.5), "python") == 2.5
        assert flavor.flavor_of(np.int8(1)) == "numpy"
        with pytest.raises(TypeError, match="not supported"):
            flavor.flavor_of({1: 2})
        flavor.restrict_flavors(keep=[])
        assert flavor.all_flavors == ["numpy"] and flavor.alias_map == {}
        with pytest.raises(FlavorError):
            flavor.array_of_flavor2([1], "python", "numpy")
        with pytest.warns(hyperslab.FlavorWarning):
            assert flavor.flavor_to_flavor([1], "python", "numpy") == [1]
    finally:
        flavor.all_flavors[:] = saved[0]
        flavor.alias_map.update(saved[1])
        flavor.converter_map.update(saved[2])
        flavor.identifier_map.update(saved[3])
        flavor.description_map.update(saved[4])


def test_utils_helpers() -> None:
    assert utils.is_idx(3) and utils.is_idx(np.int64(3)) and utils.is_idx(np.array(3))
    assert not utils.is_idx(np.array([3])) and not utils.is_idx(3.0)
    assert utils.idx2long(np.int32(7)) == 7
    with pytest.raises(TypeError):
        utils.idx2long("x")
    assert utils.correct_byteorder("int8", "big") == "irrelevant"
    assert utils.correct_byteorder("int16", "big") == "big"
    assert utils.detect_number_of_cores() >= 1


def test_check_file_access(tmp_path: Path) -> None:
    utils.check_file_access(tmp_path / "new.h5", "w")
    utils.check_file_access(tmp_path / "new.h5", "a")
    with pytest.raises(FileNotFoundError):
        utils.check_file_access(tmp_path / "new.h5", "r")
    with pytest.raises(FileNotFoundError):
        utils.check_file_access(tmp_path / "no" / "new.h5", "w")
    with pytest.raises(IsADirectoryError):
        utils.check_file_access(tmp_path, "r")
    with pytest.raises(ValueError, match="invalid mode"):
        utils.check_file_access(tmp_path / "new.h5", "x")


def test_is_hdf5_and_pytables_file(tmp_path: Path) -> None:
    import h5py

    ours = tmp_path / "ours.h5"
    with hyperslab.open_file(ours, "w"):
        pass
    plain = tmp_path / "plain.h5"
    with h5py.File(plain, "w"):
        pass
    text = tmp_path / "text.txt"
    text.write_text("not hdf5")
    assert utilsextension.is_hdf5_file(ours) and utilsextension.is_hdf5_file(plain)
    assert not utilsextension.is_hdf5_file(text)
    assert utilsextension.is_pytables_file(ours) == "2.1"
    assert utilsextension.is_pytables_file(plain) is None
    assert utilsextension.is_pytables_file(text) is None
    with pytest.raises(FileNotFoundError):
        utilsextension.is_hdf5_file(tmp_path / "missing.h5")


@needs_pytables
def test_is_pytables_file_of_a_pytables_file(tmp_path: Path) -> None:
    name = tmp_path / "pt.h5"
    _run(f"import tables; tables.open_file({str(name)!r}, 'w').close(); print(1)",
         as_tables=False)
    assert utilsextension.is_pytables_file(name) == "2.1"


@needs_pytables
def test_open_file_takes_the_keywords_pandas_passes(tmp_path: Path) -> None:
    # pandas' HDFStore hands its errors= to open_file; PyTables keeps it in File.params.
    with hyperslab.open_file(tmp_path / "a.h5", "w", errors="strict") as f:
        assert f.params["ERRORS"] == "strict"
    code = f"""
import json, tables
with tables.open_file({str(tmp_path / "a.h5")!r}, "r", errors="replace") as f:
    print(json.dumps(f.params["ERRORS"]))
"""
    assert _run(code, as_tables=True) == _run(code, as_tables=False) == "replace"


def test_open_file_takes_every_parameter_name(tmp_path: Path) -> None:
    with hyperslab.open_file(tmp_path / "a.h5", "w", allow_padding=False, MAX_BLOSC_THREADS=3,
                             COND_CACHE_SLOTS=5, max_numexpr_threads=2,
                             DRIVER_CORE_INCREMENT=4096) as f:
        assert f.params["ALLOW_PADDING"] is False
        assert f.params["MAX_BLOSC_THREADS"] == 3 and f.params["COND_CACHE_SLOTS"] == 5
        assert f.params["MAX_NUMEXPR_THREADS"] == 2
        assert f.params["IO_BUFFER_SIZE"] == hyperslab.parameters.IO_BUFFER_SIZE
        assert f.params.io_buffer_size == hyperslab.parameters.IO_BUFFER_SIZE
        assert "NODE_CACHE_SLOTS" in f.params
        # opening a file resets the recorded Blosc thread setting, as in PyTables
        assert utilsextension.set_blosc_max_threads(4) == 3
        assert utilsextension.set_blosc_max_threads(1) == 4
    with pytest.raises(TypeError, match="unknown parameter 'no_such'"):
        hyperslab.open_file(tmp_path / "b.h5", "w", no_such=1)
    with pytest.raises(ValueError, match="H5FD_FAMILY"):
        hyperslab.open_file(tmp_path / "c.h5", "w", driver="H5FD_FAMILY")
    with pytest.raises(ValueError, match="USER_BLOCK_SIZE"):
        hyperslab.open_file(tmp_path / "d.h5", "w", USER_BLOCK_SIZE=500)
    assert not (tmp_path / "c.h5").exists() and not (tmp_path / "d.h5").exists()


def test_allow_padding_false_packs_new_tables(tmp_path: Path) -> None:
    padded = np.dtype({"names": ["a", "b"], "formats": ["i1", "f8"], "offsets": [0, 8],
                       "itemsize": 16})
    with hyperslab.open_file(tmp_path / "a.h5", "w", allow_padding=False) as f:
        table = f.create_table("/", "t", padded)
        assert table.description._v_dtype.itemsize == 9


def test_compressor_info() -> None:
    assert utilsextension.blosc_compcode_to_compname_(3) == "unknown (report this to developers)"
    assert utilsextension.blosc_compcode_to_compname_(5) == "zstd"
    info = utilsextension.blosc2_get_complib_info_()
    assert set(info) == {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}
    assert info["zstd"][0] == "Zstd"
    assert set(utilsextension.blosc_get_complib_info_()) == set(info)


def test_not_logged_mixin_is_a_marker(tmp_path: Path) -> None:
    from hyperslab.pytables.node import NotLoggedMixin

    class NotLoggedArray(NotLoggedMixin, hyperslab.Array):
        pass

    assert issubclass(NotLoggedArray, hyperslab.Array)
    assert NotLoggedArray._c_logged is False


def test_public_names_importable_from_hyperslab() -> None:
    for name in ("Table", "Cols", "Column", "FlavorError", "FiltersWarning", "ObjectAtom",
                 "VLStringAtom", "descr_from_dtype", "dtype_from_descr", "split_type",
                 "restrict_flavors", "TimeAtom"):
        assert name in hyperslab.__all__ and hasattr(hyperslab, name), name
