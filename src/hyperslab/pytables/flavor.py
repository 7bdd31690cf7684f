"""PyTables' ``tables.flavor``: the ``'numpy'`` and ``'python'`` flavors and their registry.

The registry's maps are the very objects hyperslab uses (changing them changes hyperslab).
"""

from __future__ import annotations

from hyperslab.nodes.leaves.flavor import *  # noqa: F403
from hyperslab.nodes.leaves.flavor import __all__  # noqa: F401
