"""PyTables' ``tables.hdf5extension``: the names of it PyTables code reads.

hyperslab opens files with HDF5's default driver only (see ``DRIVER`` in
:mod:`hyperslab.parameters`).
"""

from __future__ import annotations

from hyperslab.errors import HDF5ExtError

_supported_drivers = ("H5FD_SEC2",)
"""The HDF5 drivers ``open_file`` accepts (``DRIVER``)."""

HAVE_DIRECT_DRIVER = False
"""Whether the H5FD_DIRECT driver can be used."""

HAVE_WINDOWS_DRIVER = False
"""Whether the H5FD_WINDOWS driver can be used."""

__all__ = ["HAVE_DIRECT_DRIVER", "HAVE_WINDOWS_DRIVER", "HDF5ExtError"]
