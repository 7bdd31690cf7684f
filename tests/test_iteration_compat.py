"""Iterating over arrays: ``nrow`` and ``nrowsinbuf`` as PyTables has them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hyperslab as hs

tables = pytest.importorskip("tables")


def _iterate(module: object, path: Path, **kwargs: int | None) -> list[tuple[int, int]]:
    with module.open_file(str(path), "r") as f:  # type: ignore[attr-defined]
        earray = f.root.e
        earray.nrowsinbuf = 3
        return [(int(earray.nrow), int(row[0])) for row in earray.iterrows(**kwargs)]


@pytest.mark.parametrize("kwargs", [{}, {"start": 2, "stop": 17, "step": 4}, {"start": 5}])
def test_nrow_follows_the_row_being_read_as_in_pytables(tmp_path: Path,
                                                         kwargs: dict[str, int]) -> None:
    path = tmp_path / "e.h5"
    with hs.open_file(str(path), "w") as f:
        earray = f.create_earray("/", "e", hs.Int32Atom(), shape=(0, 2), chunkshape=(4, 2))
        earray.append(np.arange(40, dtype=np.int32).reshape(20, 2))
    ours = _iterate(hs, path, **kwargs)
    assert ours == _iterate(tables, path, **kwargs)
    assert [nrow for nrow, _ in ours] == list(range(20))[slice(kwargs.get("start"),
                                                               kwargs.get("stop"),
                                                               kwargs.get("step"))]


def test_nrowsinbuf_is_settable_and_checked(tmp_path: Path) -> None:
    with hs.open_file(str(tmp_path / "a.h5"), "w") as f:
        array = f.create_array("/", "a", np.zeros((10, 1000)))
        assert array.nrowsinbuf == (1 << 20) // 8000  # 1 MiB of rows by default
        array.nrowsinbuf = 2
        assert array.nrowsinbuf == 2 and len(list(array)) == 10
        with pytest.raises(ValueError, match="positive"):
            array.nrowsinbuf = 0


@pytest.mark.parametrize("key", [{}, 1.5, None, (0,), [0], 5])
def test_a_row_key_of_the_wrong_type_is_a_type_error_as_in_pytables(tmp_path: Path,
                                                                    key: object) -> None:
    path = tmp_path / "t.h5"
    with hs.open_file(str(path), "w") as f:
        f.create_table("/", "t", np.dtype([("a", "i4"), ("b", "f8")])).append([(1, 2.0)])
    raised = []
    for module in (hs, tables):
        with module.open_file(str(path), "r") as f:
            with pytest.raises((TypeError, KeyError)) as info:
                [row[key] for row in f.root.t]
            raised.append(info.type)
    assert raised[0] is raised[1] is (KeyError if key == 5 else TypeError)
