"""The frozen, per-File options object.

:func:`hyperslab.open_file` reads the defaults of :mod:`hyperslab.parameters` once, applies
the keyword overrides of the call, and freezes the result into a :class:`FileOptions`.
Nothing else holds mutable settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class FileOptions:
    """Settings of one open file (see :mod:`hyperslab.parameters` for their meaning)."""

    node_cache_slots: int = 32
    chunk_cache_size: int = 16 * 1024 * 1024
    chunk_cache_nelmts: int = 521
    chunk_cache_preempt: float = 0.0
    metadata_cache_size: int = 1024 * 1024
    io_buffer_size: int = 16 * 1024 * 1024
    max_group_width: int = 16384
    max_node_attrs: int = 4096
    max_tree_depth: int = 2048
    pytables_sys_attrs: bool = True
    expected_rows_earray: int = 1000
    expected_rows_table: int = 10000
    expected_rows_vlarray: int = 1000
    track_times: bool = True

    @classmethod
    def from_defaults(
        cls, defaults: Mapping[str, Any], overrides: Mapping[str, Any]
    ) -> FileOptions:
        """Build options from a defaults mapping (upper-case names) and call overrides.

        Parameters
        ----------
        defaults : Mapping[str, Any]
            Usually ``vars(hyperslab.parameters)``; names are matched case-insensitively and
            unknown names are ignored.
        overrides : Mapping[str, Any]
            Keyword arguments given to ``open_file``; an unknown name raises ``TypeError``.

        Raises
        ------
        TypeError
            If an override names no known option.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for name, value in defaults.items():
            if name.lower() in known and name.isupper():
                values[name.lower()] = value
        for name, value in overrides.items():
            key = name.lower()
            if key not in known:
                raise TypeError(
                    f"open_file() got an unknown parameter {name!r}; "
                    f"known parameters: {', '.join(sorted(k.upper() for k in known))}"
                )
            values[key] = value
        return cls(**values)
