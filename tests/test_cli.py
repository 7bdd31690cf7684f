"""The ``hyperslab`` command: ``ls``, ``demo`` and ``bench``, in process and as a script.

The demo's answers are checked in tests/test_demo.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import tables

import hyperslab
from hyperslab.tools import benchrun
from hyperslab.tools.cli import main
from hyperslab.tools.ls import (
    COLUMNS,
    format_filters,
    format_ratio,
    format_value,
    is_hdf5_file,
    ls_lines,
)

SCRIPT = Path(sys.executable).with_name("hyperslab")
CARRAY = "/data/compressed"
TREE = [
    "/",
    "/data",
    "/data/alias",
    CARRAY,
    "/data/log",
    "/data/raw",
    "/data/raw/deep",
    "/data/small",
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file written by PyTables (the oracle): groups, Array, CArray, EArray, attributes."""
    path = tmp_path_factory.mktemp("cli") / "sample.h5"
    filters = tables.Filters(complevel=5, complib="blosc2:zstd", shuffle=True)
    with tables.open_file(path, "w", title="sample") as f:
        f.create_group("/data/raw", "deep", createparents=True)
        f.create_array("/data", "small", np.arange(6, dtype=np.int16), "six shorts")
        carray = f.create_carray(
            "/data",
            "compressed",
            tables.Float64Atom(),
            (100, 50),
            filters=filters,
            chunkshape=(10, 50),
        )
        carray[...] = np.round(np.linspace(0, 1, 5000).reshape(100, 50), 2)
        carray.attrs.units = "K"
        carray.attrs.sensors = np.array([1, 2, 3])
        earray = f.create_earray("/data", "log", tables.Int32Atom(), (0, 3), expectedrows=100)
        for _ in range(3):
            earray.append(np.zeros((10, 3), dtype=np.int32))
        f.root._v_attrs.author = "tests"
        f.create_soft_link("/data", "alias", "/data/small")
    return path


def rows_of(output: str) -> dict[str, list[str]]:
    """Map each node path to its columns (split on runs of 2+ spaces)."""
    lines = [line for line in output.splitlines() if line.startswith("/")]
    return {line.split()[0]: re.split(r"\s{2,}", line.strip()) for line in lines}


def test_ls_lists_every_node_with_its_layout(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", str(sample)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == list(COLUMNS)
    rows = rows_of(out)
    assert list(rows) == TREE  # depth first, children sorted by name
    with tables.open_file(sample) as f:  # the oracle's own view of the CArray
        node = f.get_node(CARRAY)
        ratio = node.size_in_memory / node.size_on_disk
    assert rows[CARRAY] == [
        CARRAY,
        "CArray",
        "(100, 50)",
        "float64",
        "(10, 50)",
        "blosc2:zstd(5) shuffle",
        f"x{ratio:.1f}",
    ]
    assert rows["/data/small"] == ["/data/small", "Array", "(6,)", "int16", "-", "-", "x1.0"]
    assert rows["/data/log"][1:4] == ["EArray", "(30, 3)", "int32"]
    assert rows["/data"] == ["/data", "Group"]
    assert rows["/data/alias"] == ["/data/alias", "SoftLink", "-> /data/small"]


@pytest.mark.parametrize("show_attrs", [False, True])
def test_ls_of_hyperslab_matches_ls_of_pytables(sample: Path, show_attrs: bool) -> None:
    with hyperslab.open_file(sample, "r") as ours, tables.open_file(sample, "r") as theirs:
        assert ls_lines(ours, show_attrs=show_attrs) == ls_lines(theirs, show_attrs=show_attrs)


def test_ls_attrs_follow_their_node(sample: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "-a", str(sample), CARRAY]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(CARRAY)
    assert lines[2:] == [
        "    CLASS = 'CARRAY'",
        "    TITLE = ''",
        "    VERSION = '1.1'",
        "    sensors = [1, 2, 3] int64",
        "    units = 'K'",
    ]


def test_ls_no_recursive_shows_direct_children_only(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", "--no-recursive", str(sample), "/data"]) == 0
    assert list(rows_of(capsys.readouterr().out)) == [
        "/data",
        "/data/alias",
        CARRAY,
        "/data/log",
        "/data/raw",
        "/data/small",
    ]
    assert main(["ls", "-r", str(sample), "/data/raw"]) == 0
    assert list(rows_of(capsys.readouterr().out)) == ["/data/raw", "/data/raw/deep"]


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "no such file: "),
        ("text", "is not an HDF5 file"),
        ("empty", "is not an HDF5 file"),
        ("directory", "is a directory, not an HDF5 file"),
        ("no_node", "no node '/nope' in "),
    ],
)
def test_ls_errors_are_one_line_and_exit_2(
    kind: str, message: str, sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = {
        "missing": [str(tmp_path / "missing.h5")],
        "text": [str(tmp_path / "notes.txt")],
        "empty": [str(tmp_path / "empty.h5")],
        "directory": [str(tmp_path)],
        "no_node": [str(sample), "/nope"],
    }[kind]
    (tmp_path / "notes.txt").write_text("not HDF5 at all, but long enough to be read\n" * 40)
    (tmp_path / "empty.h5").write_bytes(b"")
    assert main(["ls", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("hyperslab ls: error: ") and message in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_ls_reads_files_with_a_user_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "userblock.h5"
    with h5py.File(path, "w", userblock_size=1024) as f:
        f["x"] = np.arange(4)
    assert is_hdf5_file(path)
    assert main(["ls", str(path)]) == 0
    assert rows_of(capsys.readouterr().out)["/x"][2:4] == ["(4,)", "int64"]


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({}, "-"),
        ({"complevel": 5, "complib": "blosc2:zstd", "shuffle": True}, "blosc2:zstd(5) shuffle"),
        ({"complevel": 1, "complib": "zlib", "shuffle": False}, "zlib(1)"),
        (
            {"complevel": 9, "complib": "blosc2:lz4", "shuffle": False, "bitshuffle": True},
            "blosc2:lz4(9) bitshuffle",
        ),
        ({"fletcher32": True}, "fletcher32"),
    ],
)
def test_format_filters(kwargs: dict[str, object], text: str) -> None:
    assert format_filters(hyperslab.Filters(**kwargs)) == text
    assert format_filters(tables.Filters(**kwargs)) == text


@pytest.mark.parametrize(
    ("in_memory", "on_disk", "text"),
    [
        (320, 100, "x3.2"),
        (100, 100, "x1.0"),
        (100, 0, "-"),
        (12345, 10, "x1234"),
        (360, 65532, "x0.0055"),
    ],
)
def test_format_ratio(in_memory: int, on_disk: int, text: str) -> None:
    assert format_ratio(in_memory, on_disk) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (np.str_("K"), "'K'"),
        (np.int32(7), "7"),
        (np.float64(0.5), "0.5"),
        (np.arange(3), "[0, 1, 2] int64"),
        ("x" * 100, "'" + "x" * 66 + "..."),
    ],
)
def test_format_value(value: object, text: str) -> None:
    assert format_value(value) == text


def run_script(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd)


def test_console_script_ls_and_errors(sample: Path, tmp_path: Path) -> None:
    proc = run_script("ls", str(sample))
    assert proc.returncode == 0 and list(rows_of(proc.stdout)) == TREE
    proc = run_script("ls", str(tmp_path / "missing.h5"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("hyperslab ls: error: no such file: ")
    assert proc.stderr.count("\n") == 1


def test_console_script_demo_runs_in_seconds(tmp_path: Path) -> None:
    t0 = time.perf_counter()
    proc = run_script("demo", "--small", "--path", str(tmp_path / "demo.h5"))
    assert proc.returncode == 0, proc.stderr
    assert "all answers agree" in proc.stdout and proc.stderr == ""
    assert time.perf_counter() - t0 < 20


def test_bench_unknown_name_lists_the_known_ones(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "no_such_bench"]) == 2
    err = capfd.readouterr().err
    assert "unknown benchmark 'no_such_bench'; known benchmarks: " in err and "nodes" in err


def test_bench_passes_options_to_the_benchmark(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # the checkout is found from the installed package
    assert main(["bench", "nodes", "--help"]) == 0
    assert "--node-cache-slots" in capfd.readouterr().out
    assert main(["bench", "nodes", "--files", "XX"]) == 2
    assert "unknown file 'XX'" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["--version"], 0, f"hyperslab {hyperslab.__version__}\n"),
        ([], 2, "COMMAND"),
        (["ls"], 2, "the following arguments are required: file"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ],
)
def test_main_usage(
    args: list[str], code: int, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == code
    captured = capsys.readouterr()
    assert expected in captured.out + captured.err


def test_bench_without_a_checkout_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_install = tmp_path / "site-packages" / "hyperslab" / "__init__.py"
    monkeypatch.setattr(hyperslab, "__file__", str(fake_install))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(benchrun.BenchNotFoundError, match="cannot find the benchmarks"):
        benchrun.find_repo_root()
    assert main(["bench", "nodes"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hyperslab bench: error: cannot find the benchmarks")


def test_bench_root_is_found_from_the_package_or_the_current_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = Path(__file__).resolve().parents[1]
    assert benchrun.find_repo_root(tmp_path) == repo  # from hyperslab.__file__ (src layout)
    monkeypatch.setattr(hyperslab, "__file__", str(tmp_path / "a" / "b" / "__init__.py"))
    assert benchrun.find_repo_root(repo / "bench") == repo  # from a parent of the cwd


def test_cli_defaults_are_the_commands_own() -> None:
    from hyperslab.tools import cli, demo, dump, tree

    assert (cli.DEFAULT_PATH, cli.DEFAULT_ROWS, cli.SORT_KEYS) == (
        demo.DEFAULT_PATH, dump.DEFAULT_ROWS, tree.SORT_KEYS)


def test_repack_imports_only_what_it_needs(tmp_path: Path) -> None:
    src = tmp_path / "a.h5"
    with hyperslab.open_file(src, "w") as f:
        f.create_carray("/", "x", obj=np.arange(100), filters=hyperslab.Filters(1))
    code = ("import sys; from hyperslab.tools.cli import main; "
            f"rc = main(['repack', '--no-progress', {str(src)!r}, {str(tmp_path / 'b.h5')!r}]); "
            "print(rc, sorted(m for m in sys.modules if m.startswith('hyperslab.tools.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ,
                                           "PYTHONPATH": str(Path(hyperslab.__file__).parents[1])})
    assert done.stdout.split()[0] == "0"
    for unneeded in ("benchrun", "demo", "dump", "tree"):
        assert f"hyperslab.tools.{unneeded}" not in done.stdout, done.stdout
