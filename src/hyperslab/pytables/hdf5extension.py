"""PyTables' ``tables.hdf5extension``: the names of it PyTables code reads."""

from __future__ import annotations

from hyperslab.errors import HDF5ExtError
from hyperslab.options import DRIVERS as _supported_drivers
from hyperslab.storage.drivers import HAVE_DIRECT_DRIVER, HAVE_WINDOWS_DRIVER

__all__ = ["HAVE_DIRECT_DRIVER", "HAVE_WINDOWS_DRIVER", "HDF5ExtError", "_supported_drivers"]
