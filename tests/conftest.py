"""Shared fixtures: every file lives in pytest's tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import hyperslab


@pytest.fixture
def h5path(tmp_path: Path) -> Path:
    """A fresh file name in a temporary directory."""
    return tmp_path / "test.h5"


@pytest.fixture
def h5file(h5path: Path) -> Iterator[hyperslab.File]:
    """A new writable hyperslab file, closed after the test."""
    f = hyperslab.open_file(h5path, "w", title="test file")
    try:
        yield f
    finally:
        f.close()
