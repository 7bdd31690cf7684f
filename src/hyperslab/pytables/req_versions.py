"""PyTables' ``tables.req_versions``: the least versions of the libraries it needs.

They are ``packaging`` ``Version`` objects, as PyTables', where ``packaging`` is installed
(it is not a dependency of hyperslab), and plain strings otherwise.
"""

from __future__ import annotations

from typing import Any


def _version(text: str) -> Any:
    try:
        from packaging.version import Version
    except ImportError:  # pragma: no cover - packaging is nearly always there
        return text
    return Version(text)


min_numpy_version: Any = _version("1.20.0")
min_numexpr_version: Any = _version("2.6.2")
min_hdf5_version: Any = _version("1.10.5")
min_blosc_version: Any = _version("1.11.1")
min_blosc2_version: Any = _version("2.11.0")
