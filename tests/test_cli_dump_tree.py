"""``hyperslab dump``, ``hyperslab tree``, ``ls -v``, the ratios of partly filled chunks,
``python -m hyperslab`` and the usage lines of ``hyperslab bench``.

Every command runs on the same content written by hyperslab and by PyTables; h5py is the
oracle of sizes (``DatasetID.get_storage_size``) and NumPy of the data shown.
"""

from __future__ import annotations

import ast
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from bench import PROG_ENV, prog_name
from bench._report import NO_MATPLOTLIB, write_plot
from hyperslab.tools import benchrun
from hyperslab.tools.cli import main
from hyperslab.tools.dump import DumpOptions, dump_lines, format_item
from hyperslab.tools.ls import (
    PARTIAL_NOTE,
    RATIO_HEADER,
    chunk_bytes,
    ls_lines,
    node_ratio,
    split_source,
)
from hyperslab.tools.tree import tree_lines

ARANGE = np.arange(25, dtype=np.int16)
CARRAY = np.round(np.linspace(0, 1, 5000).reshape(100, 50), 2)
LOG = np.arange(90, dtype=np.int32).reshape(30, 3)
RECORDS = [(i, f"n{i}".encode(), (np.full(2, i / 2),)) for i in range(12)]
NODES = [
    "/",
    "/alias",
    "/g",
    "/g/arr",
    "/g/carr",
    "/g/sub",
    "/g/sub/tab",
    "/hard",
    "/log",
    "/scalar",
]
LEAVES = ["/g/arr", "/g/carr", "/g/sub/tab", "/log", "/scalar"]


def write_sample(lib: ModuleType, path: Path) -> None:
    """The same content through either library's (identical) API."""

    class Inner(lib.IsDescription):
        v = lib.Float64Col(shape=(2,), pos=0)

    class Record(lib.IsDescription):
        x = lib.Int32Col(pos=0)
        name = lib.StringCol(8, pos=1)
        inner = Inner

    filters = lib.Filters(complevel=5, complib="blosc2:zstd", shuffle=True)
    with lib.open_file(str(path), "w", title="sample") as f:
        f.create_group("/g", "sub", createparents=True)
        f.create_array("/g", "arr", ARANGE, "twenty-five shorts")
        carr = f.create_carray(
            "/g", "carr", lib.Float64Atom(), (100, 50), filters=filters, chunkshape=(10, 50)
        )
        carr[...] = CARRAY
        carr.attrs.units = "K"
        log = f.create_earray("/", "log", lib.Int32Atom(), (0, 3), expectedrows=1000)
        log.append(LOG)
        tab = f.create_table("/g/sub", "tab", Record, "records")
        tab.append(RECORDS)
        tab.cols.x.create_index()
        f.create_array("/", "scalar", np.float64(2.5))
        f.create_soft_link("/", "alias", "/g/arr")
        f.create_hard_link("/", "hard", "/g/carr")
        f.root._v_attrs.author = "tests"


@pytest.fixture(scope="module", params=["hyperslab", "tables"])
def sample(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dumptree") / f"by_{request.param}.h5"
    write_sample(hyperslab if request.param == "hyperslab" else tables, path)
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def section(out: str, header_start: str) -> list[str]:
    """The lines of the node whose header starts with ``header_start``, header excluded."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] == "/"), len(lines))
    return lines[start + 1 : end]


# ----------------------------------------------------------------------------- dump


def test_dump_headers_list_every_node(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["dump", str(sample)], capsys)
    assert [line.split()[0] for line in out.splitlines()] == NODES
    assert "/g/arr (Array) (25,) int16 'twenty-five shorts'" in out.splitlines()
    assert "/alias (SoftLink) -> /g/arr" in out.splitlines()
    assert "/g/sub/tab (Table) (12,) record[3 fields] 'records'" in out.splitlines()


def test_dump_data_equals_what_was_written(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(["dump", "-d", "--rows", "5", str(sample)], capsys)
    arr = section(out, "/g/arr ")
    assert arr[0] == "  data (5 of 25 rows):"
    assert [int(line.split("] ")[1]) for line in arr[1:6]] == ARANGE[:5].tolist()
    assert arr[6] == "    ... 20 more rows"
    log = section(out, "/log ")
    assert [ast.literal_eval(line.split("] ")[1]) for line in log[1:6]] == LOG[:5].tolist()
    assert log[6] == "    ... 25 more rows"
    tab = section(out, "/g/sub/tab ")
    for i, line in enumerate(tab[1:6]):
        x, name, (v,) = RECORDS[i]
        assert line.startswith(f"    [{i}] ({x}, {name!r}, ")
        assert str(v[0]) in line
    carr = section(out, "/g/carr ")
    first = carr[1].split("] ", 1)[1]  # 50 values, summarized by NumPy
    assert first == "[0., 0., 0., ..., 0.01, 0.01, 0.01]"
    assert section(out, "/scalar ") == ["  data: 2.5"]


def test_dump_rows_zero_and_a_single_leaf(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["dump", "-d", "--rows", "0", f"{sample}:/g/arr"], capsys)
    assert out.splitlines() == [
        "/g/arr (Array) (25,) int16 'twenty-five shorts'",
        "  data (0 of 25 rows):",
        "    ... 25 more rows",
    ]


def test_dump_attrs_keep_user_and_system_apart(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(["dump", "-a", f"{sample}:/g/carr"], capsys)
    lines = section(out, "/g/carr ")
    assert lines[:2] == ["  user attributes:", "    units = 'K'"]
    assert lines[2] == "  system attributes:"
    assert "    CLASS = 'CARRAY'" in lines[3:]
    root = section(run(["dump", "-a", f"{sample}:/"], capsys), "/ ")
    assert root[:2] == ["  user attributes:", "    author = 'tests'"]
    arr = section(run(["dump", "-a", f"{sample}:/g/arr"], capsys), "/g/arr ")
    assert arr[0] == "  user attributes: none"


def test_dump_verbose_shows_layout_columns_and_indexes(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(["dump", "-v", str(sample)], capsys)
    carr = section(out, "/g/carr ")
    assert "  chunkshape: (10, 50)" in carr
    assert "  filters: blosc2:zstd(5) shuffle" in carr
    with h5py.File(sample, "r") as h5:
        stored = h5["g/carr"].id.get_storage_size()
    assert f"  size: {CARRAY.nbytes} B uncompressed, {stored} B stored, " in "\n".join(carr)
    assert "  chunkshape: - (contiguous)" in section(out, "/g/arr ")
    tab = [line.split() for line in section(out, "/g/sub/tab ")]
    assert ["column", "type", "shape", "index"] in tab
    assert ["x", "int32", "()", "medium(6)"] in tab
    assert ["name", "string(8)", "()", "-"] in tab
    assert ["inner/v", "float64", "(2,)", "-"] in tab


def test_dump_column_descriptions(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["dump", "-c", f"{sample}:/g/sub/tab"], capsys)
    assert section(out, "/g/sub/tab ") == [
        "  column x: Int32Col(shape=(), dflt=0, pos=0)",
        "  column name: StringCol(itemsize=8, shape=(), dflt=b'', pos=1)",
        "  column inner/v: Float64Col(shape=(2,), dflt=0.0, pos=0)",
    ]


def test_dump_of_hyperslab_matches_dump_of_pytables(sample: Path) -> None:
    options = DumpOptions(verbose=True, attrs=True, data=True, rows=4)
    with hyperslab.open_file(sample, "r") as ours, tables.open_file(sample, "r") as theirs:
        assert dump_lines(ours, options=options) == dump_lines(theirs, options=options)


@pytest.mark.parametrize(
    ("item", "text"),
    [
        (np.int16(3), "3"),
        (np.bytes_(b"ab"), "b'ab'"),
        (np.str_("ab"), "'ab'"),
        (np.arange(100), "[0, 1, 2, ..., 97, 98, 99]"),
        (np.array([[1.5, -2.0], [3.0, 4.0]]), "[[1.5, -2.], [3., 4.]]"),
        ([1, 2], "[1, 2]"),
    ],
)
def test_format_item(item: Any, text: str) -> None:
    assert format_item(item) == text


def test_dump_options_refuse_negative_rows() -> None:
    with pytest.raises(ValueError, match="-1"):
        DumpOptions(rows=-1)


# ----------------------------------------------------------------------------- tree


def parse_tree(out: str) -> dict[str, list[str]]:
    """Map each node's path to its cells (class, stored, uncompressed, ratio, share, note)."""
    lines = out.splitlines()
    end = lines.index("")
    rows: dict[str, list[str]] = {}
    stack: list[str] = []
    for line in lines[1:end]:
        match = re.fullmatch(r"([│├└─ ]*)(\S+)\s+(.*)", line.rstrip())
        assert match is not None, line
        prefix, name, rest = match.groups()
        depth = len(prefix) // 4
        stack[depth:] = [name]
        path = "/" + "/".join(stack[1:]) if depth else name
        rows[path] = re.split(r"\s{2,}", rest)
    return rows


def h5py_storage(path: Path) -> dict[str, tuple[int, int]]:
    """``{path: (storage size, size in memory)}`` of every visible dataset, by h5py."""
    sizes: dict[str, tuple[int, int]] = {}

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and not any(p.startswith("_i_") for p in name.split("/")):
            sizes["/" + name] = (obj.id.get_storage_size(), obj.size * obj.dtype.itemsize)

    with h5py.File(path, "r") as f:
        f.visititems(visit)  # each object once: the hard link /hard is /g/carr
    return sizes


def test_tree_sizes_equal_h5py_storage_sizes(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = parse_tree(run(["tree", "--bytes", str(sample)], capsys))
    assert list(rows) == NODES
    oracle = h5py_storage(sample)
    assert sorted(oracle) == LEAVES
    for leaf, (stored, in_memory) in oracle.items():
        assert rows[leaf][1:3] == [str(stored), str(in_memory)], leaf
    total = sum(stored for stored, _ in oracle.values())
    assert rows["/"][1:3] == [str(total), str(sum(m for _, m in oracle.values()))]
    g = [leaf for leaf in LEAVES if leaf.startswith("/g/")]
    assert int(rows["/g"][1]) == sum(oracle[leaf][0] for leaf in g)
    assert rows["/g/sub"][1] == rows["/g/sub/tab"][1]
    assert rows["/hard"] == ["CArray", "hard link of /g/carr"]  # counted once
    assert rows["/alias"] == ["SoftLink", "-> /g/arr"]
    stored, in_memory = oracle["/g/carr"]
    assert rows["/g/carr"][3:] == [f"x{in_memory / stored:.1f}", f"{100 * stored / total:.1f}%"]


def test_tree_summary_and_file_size(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(["tree", "-b", str(sample)], capsys)
    oracle = h5py_storage(sample)
    summary = out.splitlines()[out.splitlines().index("") + 1 :]
    assert summary[0] == f"leaves: {len(LEAVES)}"
    assert summary[1].startswith(f"stored: {sum(s for s, _ in oracle.values())}, ")
    assert summary[2].startswith(f"file: {os.path.getsize(sample)} ")
    assert summary[3] == PARTIAL_NOTE  # /log and the table fill part of one chunk


def test_tree_sorts_largest_first_and_limits_depth(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = parse_tree(run(["tree", "-b", "--sort", "size", "-L", "1", str(sample)], capsys))
    children = [path for path in rows if path != "/"]
    stored = [int(rows[p][1]) if rows[p][1].isdigit() else -1 for p in children]
    assert stored == sorted(stored, reverse=True)
    assert "/g/carr" not in rows and rows["/g"][-1] == "3 leaves below"
    top = parse_tree(run(["tree", "-L", "0", f"{sample}:/g"], capsys))
    assert list(top) == ["/g"] and top["/g"][-1] == "3 leaves below"


def test_tree_of_hyperslab_matches_tree_of_pytables(sample: Path) -> None:
    with hyperslab.open_file(sample, "r") as ours, tables.open_file(sample, "r") as theirs:
        assert tree_lines(ours, exact=True) == tree_lines(theirs, exact=True)


def test_tree_refuses_bad_options(sample: Path) -> None:
    with hyperslab.open_file(sample, "r") as f:
        with pytest.raises(ValueError, match="'big'"):
            tree_lines(f, sort="big")
        with pytest.raises(ValueError, match="-2"):
            tree_lines(f, max_depth=-2)


# ----------------------------------------------------------------------------- ls


def test_ls_verbose_shows_table_columns_and_index_flags(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(["ls", "-v", f"{sample}:/g/sub"], capsys)
    lines = out.splitlines()
    assert lines[0].split()[-1] == RATIO_HEADER == "uncompressed/stored"
    assert [line.split() for line in lines[3:7]] == [
        ["column", "type", "shape", "index"],
        ["x", "int32", "()", "medium(6)"],
        ["name", "string(8)", "()", "-"],
        ["inner/v", "float64", "(2,)", "-"],
    ]


def test_ls_ratio_of_a_nearly_empty_chunk(sample: Path) -> None:
    with hyperslab.open_file(sample, "r") as f, h5py.File(sample, "r") as h5:
        log = f.root.log
        stored = h5["log"].id.get_storage_size()
        assert LOG.nbytes < stored  # the data fill part of one chunk, stored whole
        assert chunk_bytes(log) == math.prod(log.chunkshape) * 4
        assert node_ratio(log) == f"x{chunk_bytes(log) / stored:.1f}*"
        assert (
            node_ratio(f.root.g.carr)
            == f"x{CARRAY.nbytes / h5['g/carr'].id.get_storage_size():.1f}"
        )
        lines = ls_lines(f)
    row = next(line for line in lines if line.startswith("/log "))
    assert row.endswith("x1.0*")  # unfiltered: the chunk as it is, not x0.0055
    assert lines[-1] == PARTIAL_NOTE


def test_ls_of_a_node_given_as_file_colon_path(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run(["ls", f"{sample}:/g/sub"], capsys)
    paths = [line.split()[0] for line in out.splitlines() if line.startswith("/")]
    assert paths == ["/g/sub", "/g/sub/tab"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a.h5:/x/y", ("a.h5", "/x/y")),
        ("a.h5:", ("a.h5", "/")),
        ("a.h5", ("a.h5", "/")),
        ("C:data.h5", ("C:data.h5", "/")),
        ("dir/a:b.h5:/n", ("dir/a:b.h5", "/n")),
    ],
)
def test_split_source(source: str, expected: tuple[str, str]) -> None:
    assert split_source(source) == expected


def test_a_file_named_with_a_colon_is_taken_whole(tmp_path: Path) -> None:
    path = tmp_path / "a:"
    path.write_bytes(b"")
    assert split_source(str(path)) == (str(path), "/")


@pytest.mark.parametrize("command", ["dump", "tree"])
def test_errors_are_one_line_and_exit_2(
    command: str, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, str(tmp_path / "missing.h5")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hyperslab {command}: error: no such file: ") and err.count("\n") == 1
    assert main([command, f"{sample}:/nope"]) == 2
    err = capsys.readouterr().err
    assert f"hyperslab {command}: error: no node '/nope' in " in err and err.count("\n") == 1


# ----------------------------------------------------------------------------- entry points


def test_python_dash_m_hyperslab(sample: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(hyperslab.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-m", "hyperslab", "--help"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: hyperslab ")
    assert all(name in proc.stdout for name in ("ls", "dump", "tree", "demo", "bench"))
    proc = subprocess.run(
        [sys.executable, "-m", "hyperslab", "tree", "-b", str(sample)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert list(parse_tree(proc.stdout)) == NODES


def test_bench_help_names_hyperslab_bench(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PROG_ENV, raising=False)
    assert main(["bench", "chunks", "--help"]) == 0
    assert capfd.readouterr().out.startswith("usage: hyperslab bench chunks ")
    assert main(["bench"]) == 2
    assert capfd.readouterr().out.startswith("usage: hyperslab bench NAME ")
    assert benchrun.PROG_ENV == PROG_ENV


def test_python_dash_m_bench_help_names_python_dash_m_bench(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PROG_ENV, raising=False)
    assert prog_name("nodes") == "python -m bench nodes"
    monkeypatch.setenv(PROG_ENV, "hyperslab bench")
    assert prog_name("nodes") == "hyperslab bench nodes"
    assert prog_name() == "hyperslab bench"


def test_bench_plot_without_matplotlib_says_how_to_get_plots(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    assert write_plot(None, tmp_path / "x.png") == NO_MATPLOTLIB
    assert "pip install -e '.[bench]'" in NO_MATPLOTLIB and "make bench" in NO_MATPLOTLIB
    assert not (tmp_path / "x.png").exists()
