"""File nodes (``tables.nodes.filenode``): PyTables as oracle, both directions.

Every scenario runs on both libraries and the answers must be equal; files written by one
are read by the other, and the HDF5 layout (dataset, attributes) is compared through h5py.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import tables
from tables.nodes import filenode as their_filenode

import hyperslab
from hyperslab.nodes.files import filenode as our_filenode

LIBS: dict[str, tuple[Any, Any]] = {
    "hyperslab": (hyperslab, our_filenode),
    "tables": (tables, their_filenode),
}
PAYLOAD = b"first line\nsecond\n\nlast without newline" + bytes(range(256)) * 40
V1_FILE = Path(tables.__file__).parent / "nodes" / "tests" / "test_filenode_v1.h5"


def _write(lib: str, path: Path, data: bytes = PAYLOAD, **kwargs: Any) -> None:
    mod, fn = LIBS[lib]
    with mod.open_file(path, "w") as h5:
        fnode = fn.new_node(h5, where="/", name="fnode", **kwargs)
        assert fnode.write(data) == len(data)
        fnode.attrs.user = "kept"
        fnode.close()


def _read(lib: str, path: Path, name: str = "/fnode") -> tuple[bytes, str]:
    mod, fn = LIBS[lib]
    with mod.open_file(path, "r") as h5:
        fnode = fn.open_node(h5.get_node(name))
        data = fnode.read()
        user = getattr(fnode.attrs, "user", "")
        fnode.close()
    return data, user


@pytest.mark.parametrize(("writer", "reader"), [("hyperslab", "tables"),
                                                ("tables", "hyperslab")])
def test_each_reads_the_others_file_nodes(tmp_path: Path, writer: str, reader: str) -> None:
    path = tmp_path / "f.h5"
    _write(writer, path, filters=LIBS[writer][0].Filters(5, "zlib"), expectedsize=20000)
    assert _read(reader, path) == (PAYLOAD, "kept")


def test_same_hdf5_layout_as_pytables(tmp_path: Path) -> None:
    for lib in LIBS:
        _write(lib, tmp_path / f"{lib}.h5", filters=LIBS[lib][0].Filters(1, "zlib"))
    with h5py.File(tmp_path / "tables.h5", "r") as theirs, \
            h5py.File(tmp_path / "hyperslab.h5", "r") as ours:
        a, b = theirs["fnode"], ours["fnode"]
        assert (a.shape, a.maxshape, a.dtype, a.chunks) == (b.shape, b.maxshape, b.dtype, b.chunks)
        assert a.compression == b.compression
        assert a[...].tobytes() == b[...].tobytes() == PAYLOAD
        assert dict(a.attrs) == dict(b.attrs)
        assert a.attrs["NODE_TYPE"] == b"file" and a.attrs["NODE_TYPE_VERSION"] == 2


def test_reads_and_appends_pytables_version_1_file_nodes(tmp_path: Path) -> None:
    # PyTables' own reader fails on these with NumPy >= 2.4 (int() of the 1-array
    # NODE_TYPE_VERSION); h5py is the oracle.
    copy = tmp_path / "v1.h5"
    copy.write_bytes(V1_FILE.read_bytes())
    with h5py.File(copy, "r") as raw:
        stored = raw["test"][...].tobytes()
        assert raw["test"].shape == (len(stored), 1)
    with hyperslab.open_file(copy, "a") as h5:
        fnode = our_filenode.open_node(h5.get_node("/test"), "a+")
        assert fnode.read() == stored
        fnode.seek(0)
        assert b"".join(fnode.readlines()) == stored
        fnode.write(b"appended\n")
        fnode.seek(-9, 2)
        assert fnode.readline() == b"appended\n"
        fnode.close()
    with h5py.File(copy, "r") as raw:
        assert raw["test"].shape == (len(stored) + 9, 1)
        assert raw["test"][...].tobytes() == stored + b"appended\n"
        assert raw["test"].attrs["NODE_TYPE_VERSION"] == 1


def _lines(fnode: Any) -> list[Any]:
    out: list[Any] = []
    fnode.seek(0)
    out.append(fnode.readline())
    out.append(fnode.readline(4))
    out.append(fnode.readline(100))
    out.append(fnode.tell())
    out.append(fnode.read(7))
    fnode.seek(3)
    out.append(list(fnode)[:3])
    fnode.seek(0)
    out.append(fnode.readlines())
    fnode.seek(-5, 1)
    out.append(fnode.read())
    out.append(fnode.read(3))
    buf = bytearray(12)
    fnode.seek(2)
    out.append((fnode.readinto(buf), bytes(buf)))
    return out


def _appending(fnode: Any) -> list[Any]:
    out: list[Any] = [fnode.tell(), fnode.seek(0, 2)]
    out.append(fnode.seek(5, 1))
    out.append(fnode.write(memoryview(b"after a gap")))
    out.append(fnode.truncate(fnode.tell() + 4))
    out.append(fnode.seek(-30, 2))
    out.append(fnode.read())
    fnode.writelines([b"a\n", bytearray(b"b\n")])
    out.append(fnode.write(b""))
    out.append((fnode.readable(), fnode.writable(), fnode.seekable(), fnode.mode))
    fnode.flush()
    fnode.seek(0)
    out.append(fnode.read())
    return out


def _errors(fnode: Any) -> list[Any]:
    calls: list[Callable[[], Any]] = [
        lambda: fnode.truncate(1),
        lambda: fnode.write("text"),
        lambda: fnode.seek(-1),
        lambda: fnode.seek(0, 3),
        lambda: fnode.seek(1.5),
        lambda: fnode.truncate(-1),
    ]
    out = []
    for call in calls:
        with pytest.raises(Exception) as info:
            call()
        out.append((type(info.value).__mro__[-3].__name__, isinstance(info.value, OSError),
                    isinstance(info.value, ValueError), isinstance(info.value, TypeError)))
    return out


@pytest.mark.parametrize("scenario", [_lines, _appending, _errors])
@pytest.mark.parametrize("writer", list(LIBS))
def test_streams_answer_as_pytables_streams(
        tmp_path: Path, writer: str, scenario: Callable[[Any], list[Any]]) -> None:
    answers = {}
    for lib, (mod, fn) in LIBS.items():
        path = tmp_path / f"{lib}.h5"
        _write(writer, path)
        with mod.open_file(path, "a") as h5:
            fnode = fn.open_node(h5.get_node("/fnode"), "a+")
            answers[lib] = scenario(fnode)
            fnode.close()
        answers[lib].append(_read("tables", path))
    assert answers["hyperslab"] == answers["tables"]


def _closed_and_readonly(lib: str, path: Path) -> list[Any]:
    mod, fn = LIBS[lib]
    out: list[Any] = []
    with mod.open_file(path, "r") as h5:
        fnode = fn.open_node(h5.get_node("/fnode"))
        for call in (lambda: fnode.write(b"x"), lambda: fnode.truncate(),
                     lambda: fn.open_node(h5.get_node("/fnode"), "a+"),
                     lambda: fn.open_node(h5.get_node("/fnode"), "w")):
            with pytest.raises(Exception) as info:
                call()
            out.append((isinstance(info.value, OSError), isinstance(info.value, ValueError)))
        out.append((fnode.readable(), fnode.writable(), fnode.mode))
        fnode.close()
        fnode.close()
        for name in ("read", "readline", "readlines", "tell", "flush", "truncate"):
            with pytest.raises(ValueError):
                getattr(fnode, name)()
        with pytest.raises(ValueError):
            next(fnode)
        with pytest.raises(AttributeError):
            _ = fnode.attrs
    return out


def test_closed_and_read_only_streams_refuse_as_pytables(tmp_path: Path) -> None:
    _write("tables", tmp_path / "f.h5")
    assert _closed_and_readonly("hyperslab", tmp_path / "f.h5") \
        == _closed_and_readonly("tables", tmp_path / "f.h5")


def test_stream_of_a_closed_file_raises_and_warns_on_close(tmp_path: Path) -> None:
    h5 = hyperslab.open_file(tmp_path / "f.h5", "w")
    fnode = our_filenode.new_node(h5, where="/", name="fnode")
    h5.close()
    with pytest.raises(ValueError):
        fnode.write(b"data")
    with pytest.raises(ValueError):
        _ = fnode.attrs
    with pytest.warns(UserWarning, match="already closed"), pytest.raises(ValueError):
        fnode.close()
    assert fnode.closed


@pytest.mark.parametrize("lib", list(LIBS))
def test_nodes_that_are_not_file_nodes_are_refused(tmp_path: Path, lib: str) -> None:
    mod, fn = LIBS[lib]
    with mod.open_file(tmp_path / "f.h5", "w") as h5:
        plain = h5.create_earray("/", "plain", atom=mod.UInt8Atom(), shape=(0,))
        floats = h5.create_earray("/", "floats", atom=mod.Float64Atom(), shape=(0,))
        with pytest.raises(ValueError, match="invalid type of node object"):
            fn.open_node(plain)
        plain.attrs.NODE_TYPE = "file"
        plain.attrs.NODE_TYPE_VERSION = 3
        with pytest.raises(ValueError, match="unsupported type version"):
            fn.open_node(plain, "a+")
        with pytest.raises(TypeError, match="UInt8Atom"):
            fn.open_node(floats)
        with pytest.raises(TypeError):
            fn.new_node(h5)
        with pytest.raises(TypeError, match="expectedrows"):
            fn.new_node(h5, where="/", name="x", expectedrows=10)
        with pytest.raises(OSError, match="invalid mode"):
            fn.open_node(plain, "w")
        assert "x" not in h5.root


@pytest.mark.parametrize(("saver", "loader"), [("hyperslab", "tables"), ("tables", "hyperslab")])
def test_save_to_and_read_from_file_nodes_across_libraries(
        tmp_path: Path, saver: str, loader: str) -> None:
    source = tmp_path / "my data-1.bin"
    source.write_bytes(PAYLOAD)
    h5path = tmp_path / "f.h5"
    with LIBS[saver][0].open_file(h5path, "w") as h5:
        h5.create_group("/", "g")
    LIBS[saver][1].save_to_filenode(h5path, source, "/g/")
    LIBS[saver][1].save_to_filenode(h5path, source, "/g/second")
    with pytest.raises(OSError, match="already exists"):
        LIBS[saver][1].save_to_filenode(h5path, source, "/g/second")
    LIBS[saver][1].save_to_filenode(h5path, tmp_path / "f.h5", "/g/second", overwrite=True)
    with h5py.File(h5path, "r") as raw:
        assert sorted(raw["g"]) == ["my_data_1_bin", "second"]
        assert raw["g/my_data_1_bin"].attrs["_filename"] == b"my data-1.bin"
    outdir = tmp_path / "out"
    outdir.mkdir()
    LIBS[loader][1].read_from_filenode(h5path, outdir, "/g", "my data-1.bin")
    assert (outdir / "my data-1.bin").read_bytes() == PAYLOAD
    with pytest.raises(OSError, match="already exists"):
        LIBS[loader][1].read_from_filenode(h5path, outdir, "/g", "my_data_1_bin")
    target = tmp_path / "deep" / "copy.bin"
    LIBS[loader][1].read_from_filenode(h5path, str(target), "/g", "my_data_1_bin",
                                       create_target=True)
    assert target.read_bytes() == PAYLOAD
    with pytest.raises(LIBS[loader][0].NoSuchNodeError):
        LIBS[loader][1].read_from_filenode(h5path, outdir, "/g", "missing")
    with LIBS[loader][0].open_file(h5path, "r") as h5, pytest.raises(OSError, match="read-only"):
        LIBS[loader][1].save_to_filenode(h5, source, "/g/third")


def test_large_reads_and_buffered_wrappers(tmp_path: Path) -> None:
    data = np.random.default_rng(1).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    with hyperslab.open_file(tmp_path / "f.h5", "w") as h5:
        fnode = our_filenode.new_node(h5, where="/", name="big", expectedsize=len(data))
        buffered = io.BufferedWriter(fnode)
        buffered.write(data)
        buffered.flush()
        fnode.seek(0)
        reader = io.BufferedReader(fnode)
        assert reader.read() == data
        fnode.seek(0)
        assert b"".join(fnode) == data
        reader.close()
        assert buffered.closed and fnode.closed
    assert _read("tables", tmp_path / "f.h5", "/big")[0] == data


def test_pytables_layout_module_reexports() -> None:
    from hyperslab.pytables.nodes import filenode

    assert filenode.new_node is our_filenode.new_node
    assert filenode.NodeType == their_filenode.NodeType
    assert filenode.NodeTypeVersions == their_filenode.NodeTypeVersions
