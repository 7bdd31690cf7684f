"""``hyperslab demo``: the numbers it prints are the file's, as NumPy and PyTables find them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tables

from hyperslab.tools import demo
from hyperslab.tools.cli import main

NUMBER = r"([-+0-9.e,]+)"


def _number(pattern: str, out: str) -> float:
    found = re.search(pattern, out)
    assert found is not None, f"{pattern!r} not in the demo's output:\n{out}"
    return float(found.group(1).replace(",", ""))


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("demo") / "demo.h5"
    capture = _Capture()
    assert demo.run_demo(str(path), small=True, out=capture) == 0
    return path, capture.text


class _Capture:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_query_hits_match_numpy_on_pytables_read(small_demo: tuple[Path, str]) -> None:
    path, out = small_demo
    with tables.open_file(str(path)) as f:
        x = f.root.readings.col("x")
        assert f.root.readings.nrows == demo.SMALL.rows
        assert f.root.readings.cols.x.is_indexed
    hits = x[(x > 3.0) & (x < 3.1)]
    assert hits.size > 0
    assert _number(r"hits: ([0-9,]+)", out) == hits.size
    assert _number(r"sum of their x: " + NUMBER, out) == pytest.approx(hits.sum(), abs=1e-6)
    assert "same rows both ways: yes" in out


def test_array_answers_match_numpy(small_demo: tuple[Path, str]) -> None:
    path, out = small_demo
    with tables.open_file(str(path)) as f:
        field = f.root.field[:]
        assert f.root.field.filters.complib == "blosc2:zstd"
    slabs = demo.field_slabs(demo.SMALL)
    expected = np.concatenate([demo.field_slab(demo.SMALL, a, b) for a, b in slabs])
    np.testing.assert_array_equal(field, expected)
    total = np.sum(field.sum(axis=0), dtype=np.float64)
    assert _number(r"sum\(axis=0\)\.sum\(\): " + NUMBER, out) == pytest.approx(total, rel=1e-6)
    assert _number(r"mean\(\): " + NUMBER, out) == pytest.approx(field.mean(), rel=1e-6)
    i, j, k = (n // 2 for n in field.shape)
    sums = [np.sum(p, dtype=np.float64) for p in (field[i], field[:, j], field[:, :, k])]
    line = re.search(r"checksums \(float64 sums\): (.*)", out)
    assert line is not None
    printed = [float(v) for v in line.group(1).split()]
    assert printed == pytest.approx(sums, rel=1e-6)


def test_pytables_agrees_and_file_is_kept_and_listed(small_demo: tuple[Path, str]) -> None:
    path, out = small_demo
    assert "PyTables 3." in out and "DIFFERENT" not in out
    assert out.count("  same") == 3
    assert f"$ hyperslab ls {path}" in out
    assert re.search(r"^/field +CArray +\(32, 64, 128\) +float32", out, re.MULTILINE)
    assert re.search(r"^/readings +Table +\(25000,\)", out, re.MULTILINE)
    assert f"kept {path}" in out and "all answers agree" in out and path.exists()


def test_without_pytables_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = demo.importlib.util.find_spec
    monkeypatch.setattr(
        demo.importlib.util, "find_spec", lambda name: None if name == "tables" else real(name)
    )
    path = tmp_path / "d.h5"
    assert main(["demo", "--small", "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "PyTables not installed" in out and "all answers agree" in out and path.exists()


def test_default_path_is_in_the_current_folder() -> None:
    from hyperslab.tools.cli import build_parser

    args = build_parser().parse_args(["demo"])
    assert args.path == "hyperslab-demo.h5" and not args.small
