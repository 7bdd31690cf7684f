"""``hyperslab.install_as_tables()``: ``import tables`` gives hyperslab, PyTables' layout.

Each case runs in a child process: a process has one ``tables``, and this test process
imports PyTables itself as an oracle elsewhere.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def run_child(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120,
                            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_tables_gives_hyperslab_in_pytables_layout() -> None:
    out = run_child("""
        import hyperslab
        hyperslab.install_as_tables()
        hyperslab.install_as_tables()  # a second call does nothing
        import tables, tables.file, tables.exceptions, tables.parameters
        from tables.file import open_file
        from packaging.version import Version
        import hyperslab.pytables, hyperslab.pytables.file
        print(tables is hyperslab.pytables, tables.file is hyperslab.pytables.file,
              tables.parameters is hyperslab.parameters, open_file is hyperslab.open_file,
              tables.exceptions.NoSuchNodeError is hyperslab.NoSuchNodeError,
              Version(tables.__version__).public)
    """)
    assert out == "True True True True True 3.11.0"


def test_missing_modules_are_missing() -> None:
    out = run_child("""
        import hyperslab
        hyperslab.install_as_tables()
        try:
            import tables.no_such_module
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc.name)
    """)
    assert out == "ModuleNotFoundError tables.no_such_module"


def test_pytables_test_packages_load_from_the_pytables_wheel() -> None:
    pytest.importorskip("tables")
    out = run_child("""
        import importlib.util
        wheel = importlib.util.find_spec("tables").origin
        import hyperslab
        hyperslab.install_as_tables()
        import tables, tables.tests.common as common
        print(tables.__name__, common.__file__.startswith(wheel.rsplit("/", 1)[0]))
    """)
    assert out == "hyperslab.pytables True"


def test_refused_once_pytables_itself_is_imported() -> None:
    pytest.importorskip("tables")
    out = run_child("""
        import tables
        import hyperslab
        try:
            hyperslab.install_as_tables()
        except ImportError as exc:
            print("ImportError", "already" in str(exc))
    """)
    assert out == "ImportError True"
