"""``hyperslab repack`` (ptrepack's job): files written by hyperslab and by PyTables,
repacked with new filters and chunks, checked node by node with PyTables and h5py."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc2 filter for h5py)
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.tools import repack as repack_module
from hyperslab.tools.cli import main
from hyperslab.tools.repack import RepackError, RepackOptions, repack

CARRAY = np.arange(12_000, dtype="f8").reshape(600, 20) / 7
EARRAY = np.arange(3 * 700, dtype="i4").reshape(3, 700)
RECORDS = np.array([(i % 97, -i / 3, f"r{i}".encode()) for i in range(3000)],
                   dtype=[("a", "i4"), ("b", "f8"), ("s", "S6")])
LEAVES = ["/arr", "/g/carr", "/g/sub/earr", "/g/sub/tab", "/vl"]


def write_sample(lib: ModuleType, path: Path) -> None:
    """The same content with hyperslab or PyTables: every kind of leaf, nested groups,
    attributes, an index, a soft link and a hard link."""
    with lib.open_file(str(path), "w", title="sample") as f:
        f.root._v_attrs.origin = "test"
        g = f.create_group("/", "g", "group g", filters=lib.Filters(1))
        sub = f.create_group(g, "sub", "group sub")
        sub._v_attrs.level = np.int32(2)
        f.create_array("/", "arr", np.arange(10, dtype="i2"), "an array")
        carr = f.create_carray(g, "carr", obj=CARRAY, filters=lib.Filters(3, "zlib"),
                               chunkshape=(50, 20), title="a carray")
        carr.attrs.unit = "m"
        carr.attrs.scale = np.float32(0.5)
        earr = f.create_earray(sub, "earr", atom=lib.Int32Atom(), shape=(3, 0),
                               filters=lib.Filters(1, shuffle=False), chunkshape=(3, 64))
        earr.append(EARRAY)
        tab = f.create_table(sub, "tab", RECORDS, "a table", filters=lib.Filters(2),
                             chunkshape=(256,))
        tab.attrs.note = "rows"
        tab.cols.b.create_csindex()
        tab.cols.a.create_index(kind="light", optlevel=3)
        vl = f.create_vlarray("/", "vl", lib.Int32Atom(), filters=lib.Filters(1))
        for n in range(5):
            vl.append(np.arange(n, dtype="i4"))
        f.create_soft_link("/", "soft", "/g/carr")
        f.create_hard_link("/", "hard", "/g/carr")


@pytest.fixture(params=["hyperslab", "tables"])
def sample(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"src_{request.param}.h5"
    write_sample(hyperslab if request.param == "hyperslab" else tables, path)
    return path


def _user_attrs(node: Any) -> dict[str, Any]:
    return {n: node._v_attrs[n] for n in node._v_attrs._v_attrnamesuser}


def _check_copy(src: Path, dst: Path, filters: Any, chunks: dict[str, Any]) -> None:
    """Every node of ``src`` in ``dst`` (PyTables' view): class, data, title, attributes,
    filters of the chunked leaves as asked, chunk shapes; h5py reads the same data."""
    with tables.open_file(str(src)) as s, tables.open_file(str(dst)) as d:
        assert d.title == s.title
        assert _user_attrs(d.root) == _user_attrs(s.root)
        for node in s.walk_nodes("/"):
            copy = d.get_node(node._v_pathname)
            assert type(copy).__name__ == type(node).__name__, node._v_pathname
            if isinstance(node, tables.link.Link):
                assert copy.target == node.target
                continue
            assert copy._v_title == node._v_title
            assert _user_attrs(copy).keys() == _user_attrs(node).keys()
            for name, value in _user_attrs(node).items():
                np.testing.assert_array_equal(_user_attrs(copy)[name], value)
            if isinstance(node, tables.Group):
                continue
            if isinstance(node, tables.VLArray):
                assert [r.tolist() for r in copy.read()] == [r.tolist() for r in node.read()]
                continue
            np.testing.assert_array_equal(copy.read(), node.read())
            assert copy.flavor == node.flavor
            if isinstance(node, tables.Array) and not isinstance(node, tables.CArray):
                continue
            if filters is not None:
                assert copy.filters == filters, node._v_pathname
            else:
                assert copy.filters == node.filters, node._v_pathname
            want = chunks.get(node._v_pathname, node.chunkshape)
            if want is not None:
                assert copy.chunkshape == want, node._v_pathname
    with h5py.File(dst) as h5, tables.open_file(str(src)) as s:
        np.testing.assert_array_equal(h5["g/carr"][...], CARRAY)
        np.testing.assert_array_equal(h5["g/sub/earr"][...], EARRAY)
        np.testing.assert_array_equal(h5["g/sub/tab"][...], s.root.g.sub.tab.read())
        assert h5["g/carr"].id == h5["hard"].id  # one object, hard-linked again
        assert h5.get("soft", getlink=True).path == "/g/carr"


@pytest.mark.parametrize("complib", ["blosc2:zstd", "zlib"])
def test_repack_new_filters(sample: Path, tmp_path: Path, complib: str) -> None:
    dst = tmp_path / "dst.h5"
    assert main(["repack", "--complib", complib, "--complevel", "5", "--no-progress",
                 str(sample), str(dst)]) == 0
    filters = tables.Filters(5, complib, shuffle=True)
    _check_copy(sample, dst, filters, {})
    with tables.open_file(str(dst)) as d:  # indexes are not propagated unless asked
        assert not d.root.g.sub.tab.indexed


def test_repack_keeps_filters_and_sets_chunkshape(sample: Path, tmp_path: Path) -> None:
    dst = tmp_path / "dst.h5"
    assert main(["repack", "--complevel", "4", "--keep-source-filters", "--chunkshape",
                 "auto", str(sample), str(dst)]) == 0
    _check_copy(sample, dst, None, {"/g/carr": None, "/hard": None, "/g/sub/earr": None,
                                    "/g/sub/tab": None, "/vl": None})
    dst2 = tmp_path / "dst2.h5"
    assert main(["repack", "--complib", "blosc2:lz4", "--complevel", "1", "--chunkshape",
                 "40,10", "--blockshape", "8,10", f"{sample}:/g/carr", f"{dst2}:/x/c2"]) == 0
    with tables.open_file(str(dst2)) as d:
        assert d.root.x.c2.chunkshape == (40, 10)
        np.testing.assert_array_equal(d.root.x.c2.read(), CARRAY)
    with h5py.File(dst2) as h5:
        np.testing.assert_array_equal(h5["x/c2"][...], CARRAY)


def test_repack_writes_slabs_of_whole_chunks(sample: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    slabs: list[tuple[int, int]] = []
    original = repack_module._Repack._slabs

    def spy(self: Any, leaf: Any, new: Any) -> list[tuple[int, int]]:
        found = original(self, leaf, new)
        chunkrows = new.chunkshape[new.maindim]
        assert all(lo % chunkrows == 0 for lo, _ in found)
        slabs.extend(found)
        return found

    monkeypatch.setattr(repack_module._Repack, "_slabs", spy)
    options = RepackOptions(filters=hyperslab.Filters(5, "blosc2:zstd"), slab_bytes=4000,
                            progress=False)
    stats = repack(sample, tmp_path / "dst.h5", options=options)
    assert len(slabs) > 20  # bounded slabs, several per leaf
    assert (stats.leaves, stats.hardlinks, stats.links) == (5, 1, 1)
    _check_copy(sample, tmp_path / "dst.h5", tables.Filters(5, "blosc2:zstd"), {})


def test_repack_sortby_and_propindexes_as_pytables(sample: Path, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.h5", tmp_path / "theirs.h5"
    assert main(["repack", "--sortby", "b", "--checkCSI", "--propindexes", "--no-progress",
                 f"{sample}:/g/sub", f"{ours}:/"]) == 0
    with tables.open_file(str(sample)) as s, tables.open_file(str(theirs), "w") as t:
        s.root.g.sub.tab.copy(t.root, "tab", sortby="b", checkCSI=True, propindexes=True)
    with tables.open_file(str(ours)) as o, tables.open_file(str(theirs)) as t:
        mine, ref = o.root.tab, t.root.tab
        np.testing.assert_array_equal(mine.read(), np.sort(RECORDS, order="b", kind="stable"))
        np.testing.assert_array_equal(mine.read(), ref.read())
        assert sorted(mine.colindexes) == sorted(ref.colindexes) == ["a", "b"]
        for col in ("a", "b"):
            assert mine.colindexes[col].kind == ref.colindexes[col].kind
            assert mine.colindexes[col].optlevel == ref.colindexes[col].optlevel
        assert mine.colindexes["b"].is_csi
        assert sorted(mine.read_where("(a > 90) & (b < -100)")["b"].tolist()) == sorted(
            ref.read_where("(a > 90) & (b < -100)")["b"].tolist())
        np.testing.assert_array_equal(o.root.earr.read(), EARRAY)


def test_repack_propindexes_without_sorting(sample: Path, tmp_path: Path) -> None:
    dst = tmp_path / "dst.h5"
    assert main(["repack", "--propindexes", "--complib", "blosc2", "--complevel", "3",
                 str(sample), str(dst)]) == 0
    with tables.open_file(str(dst)) as d:
        tab = d.root.g.sub.tab
        np.testing.assert_array_equal(tab.read(), RECORDS)
        assert tab.colindexes["b"].is_csi and tab.colindexes["a"].kind == "light"
        assert tab.will_query_use_indexing("b < 0") == frozenset({"b"})
        assert len(tab.read_where("b < -900")) == len(RECORDS[RECORDS["b"] < -900])


def test_overwrite_semantics(sample: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    dst = tmp_path / "dst.h5"
    assert main(["repack", f"{sample}:/g/carr", f"{dst}:/c"]) == 0
    # An existing DST gets copies added; a name taken is an error, DST unchanged.
    assert main(["repack", f"{sample}:/g/sub/earr", f"{dst}:/"]) == 0
    capsys.readouterr()
    assert main(["repack", f"{sample}:/g/carr", f"{dst}:/c"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/c exists" in err and "--overwrite-nodes" in err
    with tables.open_file(str(dst)) as d:
        assert sorted(d.root._v_children) == ["c", "earr"]
    assert main(["repack", "--complevel", "9", "--overwrite-nodes", f"{sample}:/g/carr",
                 f"{dst}:/c"]) == 0
    with tables.open_file(str(dst)) as d:
        assert sorted(d.root._v_children) == ["c", "earr"]
        assert d.root.c.filters.complevel == 9
    assert main(["repack", "-o", f"{sample}:/g/sub/earr", str(dst)]) == 0
    with tables.open_file(str(dst)) as d:
        assert sorted(d.root._v_children) == ["earr"]


@pytest.mark.parametrize(("args", "match"), [
    (["--complevel", "10"], "0 to 9"),
    (["--complib", "lz5"], "invalid choice: 'lz5'"),
    (["--chunkshape", "big"], "'big'"),
    (["--chunkshape", "10,10,10"], "chunkshape (10, 10, 10) has 3 dimensions"),
    (["--blockshape", "8,8"], "blockshape needs Blosc2"),
    (["--sortby", "nope"], "no column 'nope'"),
    (["--shuffle", "2"], "invalid choice: 2"),
])
def test_bad_options_are_one_line_errors(sample: Path, tmp_path: Path, args: list[str],
                                         match: str, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    dst = tmp_path / "dst.h5"
    assert main(["repack", *args, str(sample), str(dst)]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err
    assert not dst.exists()


def test_bad_sources_are_one_line_errors(sample: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    for args in ([str(tmp_path / "none.h5"), str(tmp_path / "d.h5")],
                 [f"{sample}:/nope", str(tmp_path / "d.h5")],
                 [str(sample), str(sample)]):
        assert main(["repack", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hyperslab repack: error: ") and err.count("\n") == 1
    with pytest.raises(RepackError, match="the source file"):
        repack(sample, sample)
    with pytest.raises(TypeError, match="'yes'"):
        RepackOptions(progress="yes")  # type: ignore[arg-type]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(sample: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repack", str(sample), str(tmp_path / "a.h5")]) == 0
    assert capsys.readouterr().err == ""  # stderr is not a terminal: silent
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["repack", str(sample), str(tmp_path / "b.h5")]) == 0
    assert "repack: 100%" in terminal.getvalue()
    terminal.truncate(0)
    assert main(["repack", "--no-progress", str(sample), str(tmp_path / "c.h5")]) == 0
    assert terminal.getvalue().strip("\0") == ""
    monkeypatch.undo()
    assert main(["repack", "--progress", str(sample), str(tmp_path / "d.h5")]) == 0
    assert "repack: 100%" in capsys.readouterr().err


def test_the_statistics_count_the_bytes_copied_once(tmp_path: Path) -> None:
    """``RepackStats.bytes`` is the leaf data copied; a hard link's data is not copied
    again."""
    src = tmp_path / "src.h5"
    with hyperslab.open_file(src, "w") as f:
        a = f.create_carray("/", "a", obj=np.arange(1000, dtype=np.int64))
        f.create_hard_link("/", "b", a)
    stats = repack(src, tmp_path / "dst.h5", options=RepackOptions(progress=False))
    assert (stats.leaves, stats.hardlinks, stats.bytes) == (1, 1, 8000)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("progress", "shown"), [(None, True), (False, False), (True, True)])
def test_a_sorted_table_copy_shows_its_rows_on_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, progress: Any, shown: bool) -> None:
    """``Table.copy(sortby=...)`` draws a bar of the rows copied: by default for a million
    rows or more where stderr is a terminal (the threshold lowered here), never with
    ``progress=False``; the rows come out sorted either way."""
    from hyperslab.nodes.files import copying

    monkeypatch.setattr(copying, "PROGRESS_MIN_ROWS", 10)
    stderr = _Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    values = np.random.default_rng(3).permutation(500).astype(np.int64)
    with hyperslab.open_file(tmp_path / "t.h5", "w") as f:
        table = f.create_table("/", "t", np.dtype([("a", "<i8")]))
        table.append(values.view([("a", "<i8")]))
        table.cols.a.create_csindex(progress=False)
        kwargs = {} if progress is None else {"progress": progress}
        copy = table.copy(newname="s", sortby="a", **kwargs)
        np.testing.assert_array_equal(copy.cols.a[:], np.arange(500))
    assert ("copying /t" in stderr.getvalue() and "500/500" in stderr.getvalue()) == shown


def test_index_builds_show_a_bar_by_default_only_on_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``create_index()`` with no ``progress``: a bar for big builds on a terminal only."""
    from hyperslab.nodes.indexes import progress as index_progress

    monkeypatch.setattr(index_progress, "PROGRESS_MIN_ROWS", 10)
    values = np.arange(300, dtype=np.int64).view([("a", "<i8")])
    for terminal in (True, False):
        stderr = _Terminal() if terminal else io.StringIO()
        monkeypatch.setattr("sys.stderr", stderr)
        with hyperslab.open_file(tmp_path / f"i{terminal}.h5", "w") as f:
            table = f.create_table("/", "t", np.dtype([("a", "<i8")]))
            table.append(values)
            table.cols.a.create_index()
        assert ("300/300" in stderr.getvalue()) == terminal
