"""HDF5 drivers, in-memory files and user blocks, as PyTables' ``open_file`` selects them.

PyTables and h5py are the oracles, both ways: file images, split and stdio files and files
with a user block written by either library are opened by the other, and raw chunk reads
with ``os.pread`` (read-only sec2 files) stay right past a user block.
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.errors import HDF5ExtError

LIBS = {"hyperslab": hyperslab, "tables": tables}
PAIRS = [(a, b) for a in LIBS for b in LIBS]
SIGNATURE = b"\x89HDF\r\n\x1a\n"
DATA = np.arange(3000, dtype="i8")


def _fill(lib: ModuleType, f: Any) -> None:
    """The same small tree in a file of either library."""
    f.root._v_attrs.testattr = 41
    f.create_array("/", "array", [1, 2], title="array")
    f.create_carray("/", "carray", obj=DATA, chunkshape=(256,),
                    filters=lib.Filters(complevel=5, complib="blosc2:zstd"))
    table = f.create_table("/", "table", {"var1": lib.IntCol()}, title="table")
    table.append([(i,) for i in range(10)])


def _check(f: Any) -> None:
    assert f.get_node_attr("/", "testattr") == 41
    assert f.root.array.read() == [1, 2]
    assert f.root.array._v_title == "array"
    np.testing.assert_array_equal(f.root.carray[:], DATA)
    np.testing.assert_array_equal(f.root.table.col("var1"), np.arange(10))


def _image(lib: ModuleType, name: str) -> bytes:
    with lib.open_file(name, "w", driver="H5FD_CORE", driver_core_backing_store=0) as f:
        _fill(lib, f)
        return f.get_file_image()


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_file_images_open_in_either_library(tmp_path: Path, writer: str, reader: str) -> None:
    name = str(tmp_path / "in-memory.h5")
    image = _image(LIBS[writer], name)
    assert image.startswith(SIGNATURE)
    assert not os.path.exists(name)  # nothing was written to disk
    with LIBS[reader].open_file(name, "r", driver="H5FD_CORE", driver_core_image=image,
                                driver_core_backing_store=0) as f:
        _check(f)
    with h5py.File(io.BytesIO(image), "r") as h5:
        np.testing.assert_array_equal(h5["carray"][:], DATA)
    assert not os.path.exists(name)


def test_an_image_grows_in_memory_and_is_read_back(tmp_path: Path) -> None:
    name = str(tmp_path / "m.h5")
    image = _image(hyperslab, name)
    big = np.arange(2 * hyperslab.parameters.DRIVER_CORE_INCREMENT)
    with hyperslab.open_file(name, "a", driver="H5FD_CORE", driver_core_image=image,
                             driver_core_backing_store=0) as f:
        f.create_array("/", "big", big)
        f.root._v_attrs.testattr2 = 42
        grown = f.get_file_image()
        assert f.get_filesize() >= len(grown) > len(image)
    assert not os.path.exists(name)
    with tables.open_file(name, "r", driver="H5FD_CORE", driver_core_image=grown,
                          driver_core_backing_store=0) as f:
        _check(f)
        np.testing.assert_array_equal(f.root.big.read(), big)
        assert f.get_node_attr("/", "testattr2") == 42


@pytest.mark.parametrize("mode", ["a", "r+"])
def test_no_backing_store_leaves_an_existing_file_unchanged(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "f.h5"
    with tables.open_file(str(path), "w") as f:
        _fill(tables, f)
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    with hyperslab.open_file(path, mode, driver="H5FD_CORE",
                             driver_core_backing_store=False) as f:
        _check(f)
        f.create_array("/", "array2", [3, 4])
        f.root._v_attrs.testattr2 = 42
        assert f.root.array2.read() == [3, 4]
    assert hashlib.md5(path.read_bytes()).hexdigest() == digest


def test_no_backing_store_finds_no_file_to_read(tmp_path: Path) -> None:
    for mode in ("r", "r+"):
        with pytest.raises(HDF5ExtError):
            hyperslab.open_file(tmp_path / "none.h5", mode, driver="H5FD_CORE",
                                driver_core_backing_store=0)
    assert not (tmp_path / "none.h5").exists()


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
@pytest.mark.parametrize("driver", ["H5FD_SEC2", "H5FD_STDIO", "H5FD_CORE"])
def test_files_of_each_driver_open_in_either_library(
    tmp_path: Path, writer: str, reader: str, driver: str
) -> None:
    path = str(tmp_path / "f.h5")
    lib = LIBS[writer]
    with lib.open_file(path, "w", driver=driver) as f:
        _fill(lib, f)
        image = f.get_file_image()
        assert image.startswith(SIGNATURE)
    with h5py.File(path, "r") as h5:  # any driver writes a plain HDF5 file
        np.testing.assert_array_equal(h5["carray"][:], DATA)
    for mode in ("r", "a"):
        with LIBS[reader].open_file(path, mode, driver=driver) as f:
            _check(f)


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_split_files_open_in_either_library(tmp_path: Path, writer: str, reader: str) -> None:
    path = str(tmp_path / "s")
    params = {"driver": "H5FD_SPLIT", "driver_split_meta_ext": "-xm.h5",
              "driver_split_raw_ext": "-xr.h5"}
    lib = LIBS[writer]
    with lib.open_file(path, "w", **params) as f:
        _fill(lib, f)
    assert sorted(os.listdir(tmp_path)) == ["s-xm.h5", "s-xr.h5"]
    with h5py.File(path, "r", driver="split", meta_ext=b"-xm.h5", raw_ext=b"-xr.h5") as h5:
        np.testing.assert_array_equal(h5["carray"][:], DATA)
    with LIBS[reader].open_file(path, "r", **params) as f:
        _check(f)
    with LIBS[reader].open_file(path, "a", **params) as f:  # both files exist: opened
        _check(f)
    (tmp_path / "s-xr.h5").unlink()
    with pytest.raises(FileNotFoundError):
        hyperslab.open_file(path, "r", **params)


def test_split_extensions_may_be_patterns(tmp_path: Path) -> None:
    path = str(tmp_path / "p")
    with hyperslab.open_file(path, "w", driver="H5FD_SPLIT", driver_split_meta_ext="%s.meta",
                             driver_split_raw_ext="%s.raw") as f:
        f.create_array("/", "a", [1, 2, 3])
    assert sorted(os.listdir(tmp_path)) == ["p.meta", "p.raw"]
    with tables.open_file(path, "r", driver="H5FD_SPLIT", driver_split_meta_ext="%s.meta",
                          driver_split_raw_ext="%s.raw") as f:
        assert f.root.a.read() == [1, 2, 3]


@pytest.mark.parametrize(("writer", "reader"), PAIRS)
def test_user_blocks_in_either_library(tmp_path: Path, writer: str, reader: str) -> None:
    path = tmp_path / "u.h5"
    lib = LIBS[writer]
    with lib.open_file(str(path), "w", user_block_size=1024) as f:
        _fill(lib, f)
        assert f.get_userblock_size() == 1024
    with path.open("r+b") as raw:  # the user block is the user's: write into it
        raw.write(b"user data")
    with h5py.File(path, "r") as h5:
        assert h5.userblock_size == 1024
        np.testing.assert_array_equal(h5["carray"][:], DATA)
    with LIBS[reader].open_file(str(path), "r") as f:
        assert f.get_userblock_size() == 1024
        assert f.get_filesize() == path.stat().st_size
        _check(f)
    assert path.read_bytes().startswith(b"user data")


def test_raw_reads_past_a_user_block_read_the_right_bytes(tmp_path: Path) -> None:
    path = tmp_path / "u.h5"
    with tables.open_file(str(path), "w", user_block_size=4096) as f:
        _fill(tables, f)
        f.create_carray("/", "plain", obj=DATA.reshape(30, 100), chunkshape=(7, 9))
    with hyperslab.open_file(path, "r") as f, h5py.File(path, "r") as h5:
        for name in ("carray", "plain"):
            leaf = f.get_node("/" + name)
            raw = leaf._dataset.raw_chunks()
            assert raw.uses_pread  # read-only sec2 file: the os.pread path
            dsid = h5[name].id
            for index in range(dsid.get_num_chunks()):
                info = dsid.get_chunk_info(index)
                assert info.byte_offset > 4096
                coords = tuple(o // c for o, c in zip(info.chunk_offset, leaf.chunkshape,
                                                      strict=True))
                data, mask = leaf._dataset.read_raw_chunk(coords)
                assert (mask, bytes(data)) == tuple(dsid.read_direct_chunk(info.chunk_offset))
        np.testing.assert_array_equal(f.root.carray[:], DATA)
        np.testing.assert_array_equal(f.root.carray[100:2000:7], DATA[100:2000:7])
        np.testing.assert_array_equal(f.root.plain[3:29, 5:97], h5["plain"][3:29, 5:97])
        np.testing.assert_array_equal(f.root.table.read_where("var1 > 4")["var1"],
                                      np.arange(5, 10))


def test_in_memory_files_are_not_read_with_pread(tmp_path: Path) -> None:
    name = str(tmp_path / "m.h5")
    image = _image(hyperslab, name)
    with hyperslab.open_file(name, "r", driver="H5FD_CORE", driver_core_image=image,
                             driver_core_backing_store=0) as f:
        assert not f.root.carray._dataset.raw_chunks().uses_pread
        _check(f)
        with pytest.raises(HDF5ExtError, match="no file descriptor"):
            f.fileno()
        assert "Last modif.: '<in-memory file>'" in str(f)


def test_upper_case_parameter_names(tmp_path: Path) -> None:
    name = str(tmp_path / "m.h5")
    with hyperslab.open_file(name, "w", DRIVER="H5FD_CORE", DRIVER_CORE_BACKING_STORE=0,
                             DRIVER_CORE_INCREMENT=4096) as f:
        f.create_array("/", "a", [1, 2])
        image = f.get_file_image()
        assert f.params["DRIVER"] == "H5FD_CORE" and f.params["DRIVER_CORE_INCREMENT"] == 4096
    assert not os.path.exists(name)
    with pytest.raises(FileNotFoundError):  # as PyTables: a backing store must exist
        hyperslab.open_file(name, "r", DRIVER="H5FD_CORE", DRIVER_CORE_IMAGE=image)
    with hyperslab.open_file(name, "r", DRIVER="H5FD_CORE", DRIVER_CORE_IMAGE=image,
                             DRIVER_CORE_BACKING_STORE=0) as f:
        assert f.root.a.read() == [1, 2]
    with hyperslab.open_file(name, "w", USER_BLOCK_SIZE=2048) as f:
        assert f.get_userblock_size() == 2048


def test_file_properties_match_pytables(tmp_path: Path) -> None:
    for lib_name, lib in LIBS.items():
        path = tmp_path / f"{lib_name}.h5"
        with lib.open_file(str(path), "w") as f:
            f.create_array("/", "array", np.zeros((200, 200)))
            assert f.get_userblock_size() == 0
            size = f.get_filesize()
            assert size >= 200 * 200 * 8
        assert size == path.stat().st_size
        with hyperslab.open_file(path) as f:
            assert os.path.samestat(os.fstat(f.fileno()), path.stat())
            assert f.get_filesize() == path.stat().st_size
            assert f.get_userblock_size() == 0
            assert f.get_file_image() == path.read_bytes()


@pytest.mark.parametrize("lib_name", list(LIBS))
def test_refusals_match_pytables(tmp_path: Path, lib_name: str) -> None:
    lib = LIBS[lib_name]
    path = str(tmp_path / "x.h5")
    for driver in ("H5FD_FAMILY", "H5FD_MULTI", "H5FD_MPIO", "H5FD_STREAM", "nonsense"):
        with pytest.raises(ValueError, match="driver"):
            lib.open_file(path, "w", driver=driver)
    with pytest.raises(ValueError, match="driver"):  # before its own parameters
        lib.open_file(path, "w", driver="H5FD_LOG", driver_log_file=path + ".log")
    for driver in ("H5FD_DIRECT", "H5FD_WINDOWS"):
        with pytest.raises(RuntimeError, match="not available"):
            lib.open_file(path, "w", driver=driver)
    for size in (12, 1025, 256, 1536):
        with pytest.raises(ValueError, match="USER_BLOCK_SIZE"):
            lib.open_file(path, "w", user_block_size=size)
    with pytest.raises(TypeError, match="DRIVER_CORE_IMAGE"):
        lib.open_file(path, "r", driver="H5FD_CORE", driver_core_image="not bytes")
    assert not os.path.exists(path)
    lib.open_file(path, "w").close()
    with pytest.warns(UserWarning, match="USER_BLOCK_SIZE"):
        lib.open_file(path, "a", user_block_size=512).close()
    with pytest.warns(UserWarning, match="DRIVER_CORE_IMAGE"):
        lib.open_file(path, "r", driver="H5FD_SEC2", driver_core_image=b"x").close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with lib.open_file(path, "r", user_block_size=0) as f:
            assert f.get_userblock_size() == 0
