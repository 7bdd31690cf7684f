"""PyTables' ``tables.exceptions``: every exception and warning class, under its name."""

from __future__ import annotations

from hyperslab.errors import *  # noqa: F403
from hyperslab.errors import __all__  # noqa: F401
