"""``make docs``: its pdoc command builds the API reference from the docstrings."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pdoc.__main__
import pdoc.render

ROOT = Path(__file__).resolve().parents[1]


def _docs_command() -> list[str]:
    """Return the arguments of the pdoc line of the Makefile's ``docs`` target."""
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(r"^docs:.*\n\t\$\(BIN\)/pdoc (.*)$", makefile, re.MULTILINE)
    assert found is not None, "no `$(BIN)/pdoc ...` line under the Makefile's docs target"
    return shlex.split(found.group(1))


def test_make_docs_command_writes_the_api_reference(tmp_path: Path) -> None:
    args = _docs_command()
    out = args.index("--output-directory") + 1
    assert args[out] == "docs/api"
    args[out] = str(tmp_path)
    try:
        pdoc.__main__.cli(args)
    finally:
        pdoc.render.configure()  # pdoc keeps its options globally
    index = tmp_path / "index.html"
    assert index.exists()
    page = (tmp_path / "hyperslab.html").read_text()
    for name in ("open_file", "File", "Table", "Array.to_dask", "Filters", "Expr"):
        assert f'id="{name}"' in page, name
    assert "create_table" in page and "Parameters" in page


def test_docs_are_ignored_and_linked() -> None:
    assert "docs/api/" in (ROOT / ".gitignore").read_text().splitlines()
    readme = (ROOT / "README.md").read_text()
    assert "docs/differences.md" in readme and "make docs" in readme
