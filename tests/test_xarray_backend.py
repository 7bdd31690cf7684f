"""xarray's ``engine="hyperslab"``: groups of array leaves as lazily read Datasets.

Oracles: h5py writes the files the way netCDF-4 and h5netcdf do (dimension scales attached
with ``DIMENSION_LIST``), PyTables writes arrays with user attributes; NumPy gives the
expected values of every selection.  One module-scoped ``LocalCluster`` of processes.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np
import pytest
import tables

from hyperslab.compute.daskio.xarray_backend import HyperslabBackendEntrypoint
from hyperslab.nodes.files import pickling

xr = pytest.importorskip("xarray")
distributed = pytest.importorskip("distributed")

T = np.arange(3 * 40 * 6, dtype=np.float64).reshape(3, 40, 6)
Q = np.arange(20, dtype=np.int32).reshape(4, 5)
S = np.arange(36, dtype=np.int16).reshape(6, 6)
TIME = np.array([10, 20, 30])
NETCDF_DIM = "This is a netCDF dimension but not a netCDF variable.         40"


@pytest.fixture(scope="module")
def netcdf_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Group /g as netCDF-4 writes it (h5py): a coordinate, a dimension-only scale, a
    chunked Blosc2 variable on both, and arrays without scales."""
    path = tmp_path_factory.mktemp("xr") / "nc.h5"
    with h5py.File(path, "w") as h:
        g = h.create_group("g")
        g.attrs["title"] = "a run"
        time = g.create_dataset("time", data=TIME)
        time.make_scale("time")
        time.attrs["units"] = "s"
        y = g.create_dataset("y", data=np.zeros(40), dtype="f4")
        y.make_scale(NETCDF_DIM)
        t = g.create_dataset("t", data=T, chunks=(1, 8, 6),
                             **hdf5plugin.Blosc2(cname="zstd", clevel=5))
        t.attrs["units"] = "K"
        t.dims[0].attach_scale(time)
        t.dims[1].attach_scale(y)
        g.create_dataset("q", data=Q)
        g.create_dataset("s", data=S)  # two dimensions of one length
        g.create_group("sub").create_dataset("ignored", data=[1])
    return path


@pytest.fixture(scope="module")
def pytables_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("xr") / "pt.h5"
    with tables.open_file(path, "w") as f:
        a = f.create_carray("/", "a", obj=Q, chunkshape=(2, 5))
        a.attrs.units = "m"
        a.attrs.scale = 2.5
        f.create_earray("/", "e", obj=T[0])
        f.create_table("/", "tab", {"x": tables.Int32Col()})
        f.root._v_attrs.owner = "me"
    return path


@pytest.fixture(autouse=True)
def _close_reopened() -> Iterator[None]:
    yield
    pickling.close_reopened_files()


def _open(path: Path, **kwargs: Any) -> Any:
    return xr.open_dataset(path, engine=HyperslabBackendEntrypoint, **kwargs)


def test_dimension_scales_and_phony_dimensions(netcdf_like: Path) -> None:
    with _open(netcdf_like, group="/g") as ds:
        assert set(ds.data_vars) == {"t", "q", "s"}  # y is a dimension only
        # Phony dimensions numbered in the order of the variables' names.
        assert ds.q.dims == ("phony_dim_0", "phony_dim_1")
        assert ds.s.dims == ("phony_dim_2", "phony_dim_3")  # length 6, twice
        assert ds.t.dims == ("time", "y", "phony_dim_2")
        assert ds.sizes["y"] == 40
        np.testing.assert_array_equal(ds.time.values, TIME)
        assert ds.attrs == {"title": "a run"}
        assert ds.t.attrs == {"units": "K"}
        assert ds.time.attrs == {"units": "s"}
        np.testing.assert_array_equal(ds.t.values, T)
        np.testing.assert_array_equal(ds.q.values, Q)
        np.testing.assert_array_equal(ds.s.values, S)


def test_lazy_outer_indexing_equals_numpy(netcdf_like: Path) -> None:
    with _open(netcdf_like, group="/g") as ds:
        t = ds.t
        assert not t.variable._in_memory
        cases = [
            ({"time": 1}, T[1]),
            ({"time": [2, 0], "y": slice(3, 30, 4)}, T[[2, 0], 3:30:4]),
            ({"y": [39, 1, 5, 5], "phony_dim_2": [4, 0]}, T[:, [39, 1, 5, 5]][:, :, [4, 0]]),
            ({"time": slice(None, None, -1), "y": -1}, T[::-1, -1]),
            ({"time": [], "y": 0}, T[[], 0]),
        ]
        for selection, expected in cases:
            got = t.isel(selection).values
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == T.dtype
        np.testing.assert_array_equal(t.sel(time=20).values, T[1])
        # Vectorized (pointwise) indexing is xarray's on top of outer reads.
        pts = t.isel(time=xr.DataArray([0, 2], dims="p"), y=xr.DataArray([1, 7], dims="p"))
        np.testing.assert_array_equal(pts.values, T[[0, 2], [1, 7]])


def test_chunks_give_dask_arrays_of_whole_chunks(netcdf_like: Path) -> None:
    with _open(netcdf_like, group="/g", chunks={}) as ds:
        assert ds.t.chunks == ((1, 1, 1), (8,) * 5, (6,))
        assert float(ds.t.sum().compute(scheduler="threads")) == T.sum()
    with _open(netcdf_like, group="/g", chunks={"y": 16}) as ds:
        np.testing.assert_array_equal(
            ds.t.mean("y").compute(scheduler="threads").values, T.mean(axis=1))


def test_pytables_file_root_group(pytables_file: Path) -> None:
    with _open(pytables_file) as ds:
        assert set(ds.data_vars) == {"a", "e"}  # the table is no variable
        assert ds.a.attrs == {"units": "m", "scale": 2.5}  # no CLASS, VERSION, TITLE...
        assert ds.attrs == {"owner": "me"}
        np.testing.assert_array_equal(ds.a.values, Q)
        np.testing.assert_array_equal(ds.e.values, T[0])


def test_drop_variables_and_missing_group(netcdf_like: Path) -> None:
    with _open(netcdf_like, group="/g", drop_variables=["q"]) as ds:
        assert "q" not in ds and "t" in ds
    from hyperslab.errors import NoSuchNodeError

    with pytest.raises(NoSuchNodeError, match="nope"):
        _open(netcdf_like, group="/nope")


def test_entry_point_declared() -> None:
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
    target = declared["xarray.backends"]["hyperslab"]
    module, name = target.split(":")
    assert (module, name) == (HyperslabBackendEntrypoint.__module__,
                              HyperslabBackendEntrypoint.__name__)


def test_on_a_cluster_of_processes(netcdf_like: Path, client: Any) -> None:
    with _open(netcdf_like, group="/g", chunks={}) as ds:
        total, means = client.compute([ds.t.sum(), ds.t.mean("time")], sync=True)
    assert float(total) == T.sum()
    np.testing.assert_array_equal(means.values, T.mean(axis=0))
