"""Every kind of selection, read and written, against NumPy on the same data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperslab
from hyperslab.chunked.selection import plan_selection


def _slice_for(length: int) -> st.SearchStrategy[slice]:
    bound = st.one_of(st.none(), st.integers(-length - 2, length + 2))
    step = st.one_of(st.none(), st.integers(-4, 4).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@st.composite
def selections(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    items: list[Any] = []
    fancy_used = False
    for length in shape:
        choices = ["slice"]
        if length:
            choices.append("int")
            if not fancy_used:
                choices += ["list", "mask"]
        kind = draw(st.sampled_from(choices))
        if kind == "int":
            items.append(draw(st.integers(-length, length - 1)))
        elif kind == "slice":
            items.append(draw(_slice_for(length)))
        elif kind == "list":
            fancy_used = True
            items.append(draw(st.lists(st.integers(-length, length - 1), max_size=6)))
        else:
            fancy_used = True
            items.append(np.array(draw(st.lists(st.booleans(), min_size=length,
                                                max_size=length)), dtype=bool))
    if items and draw(st.booleans()):
        cut = draw(st.integers(0, len(items)))
        items = [*items[:cut], Ellipsis]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


FIXTURE_OK = [HealthCheck.function_scoped_fixture]
SHAPES = [(0,), (7,), (5, 6), (4, 3, 5), (2, 0, 3)]


@pytest.fixture(scope="module")
def arrays(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = Path(tmp_path_factory.mktemp("sel")) / "sel.h5"
    f = hyperslab.open_file(path, "w")
    data = {}
    for i, shape in enumerate(SHAPES):
        a = np.arange(int(np.prod(shape)), dtype="f8").reshape(shape)
        f.create_array("/", f"a{i}", a)
        chunks = tuple(max(1, d // 2) for d in shape)
        filters = hyperslab.Filters(5, "blosc2:lz4")
        if a.size:
            f.create_carray("/", f"c{i}", obj=a, chunkshape=chunks, filters=filters)
        else:  # CArrays cannot have zero-length dimensions (PyTables' rule); EArrays can
            f.create_earray("/", f"c{i}", hyperslab.Float64Atom(), shape=shape,
                            chunkshape=chunks, filters=filters)
        data[i] = a
    yield f, data
    f.close()


@pytest.mark.parametrize("index", range(len(SHAPES)))
@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
def test_read_matches_numpy(arrays: Any, index: int, data: st.DataObject) -> None:
    f, expected_all = arrays
    expected = expected_all[index]
    key = data.draw(selections(expected.shape))
    for node in (f.root[f"a{index}"], f.root[f"c{index}"]):
        np.testing.assert_array_equal(node[key], expected[key])


@pytest.mark.parametrize("index", [1, 2, 3])
@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(data=st.data())
def test_write_matches_numpy(arrays: Any, index: int, data: st.DataObject) -> None:
    f, expected_all = arrays
    expected = expected_all[index].copy()
    key = data.draw(selections(expected.shape))
    node = f.root[f"c{index}"]
    node[...] = expected
    view_shape = expected[key].shape
    value = np.arange(int(np.prod(view_shape)), dtype="f8").reshape(view_shape) + 1000
    expected[key] = value
    node[key] = value
    np.testing.assert_array_equal(node[...], expected)


def test_scalar_broadcast_write(h5file: hyperslab.File) -> None:
    ca = h5file.create_carray("/", "c", hyperslab.Int32Atom(), shape=(6, 4))
    ca[::2, 1:] = 7
    expected = np.zeros((6, 4), dtype="i4")
    expected[::2, 1:] = 7
    np.testing.assert_array_equal(ca[:], expected)


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ((5,), "out of bounds"),
        ((0, 0, 0), "too many indices"),
        (([0, 9],), "out of bounds"),
        ((np.array([True, False]),), "does not match"),
        ((np.array([[0, 1]]),), "only 1-D index arrays"),
        ((1.5,), "valid indices"),
        ((..., ...), "single ellipsis"),
    ],
)
def test_bad_selections_raise_index_error(key: Any, error: str) -> None:
    with pytest.raises(IndexError, match=error):
        plan_selection(key, (5, 4))
