"""The frozen, per-File options object.

:func:`hyperslab.open_file` reads the defaults of :mod:`hyperslab.parameters` once, applies
the keyword overrides of the call, and freezes the result into a :class:`FileOptions`.
Nothing else holds mutable settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

DRIVERS = ("H5FD_SEC2", "H5FD_DIRECT", "H5FD_WINDOWS", "H5FD_STDIO", "H5FD_CORE",
           "H5FD_SPLIT")
"""The HDF5 drivers PyTables' ``DRIVER`` parameter may name (PyTables'
``hdf5extension._supported_drivers``); whether HDF5 provides each one is asked when a
file is opened (:mod:`hyperslab.storage.drivers`)."""

PASSED_THROUGH = frozenset({"errors"})
"""Keyword names that are no setting but that PyTables' clients pass to ``open_file``.

PyTables keeps every keyword it is given in ``File.params`` (upper-cased) and ignores the
ones it does not know; hyperslab refuses unknown names (a misspelt setting would otherwise
be lost), except these: pandas' ``HDFStore`` passes its ``errors=`` (the text encoding
policy of its own reading) on to ``open_file``.  They are kept for ``File.params`` only.
"""


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
    allow_padding: bool = True
    max_blosc_threads: int | None = 1
    max_threads: int | None = None
    driver: str | None = None
    driver_core_increment: int = 64 * 1024
    driver_core_backing_store: int = 1
    driver_core_image: bytes | None = None
    driver_split_meta_ext: str = "-m.h5"
    driver_split_raw_ext: str = "-r.h5"
    user_block_size: int = 0
    others: tuple[tuple[str, Any], ...] = ()
    """PyTables' other parameters given (upper-case name, value), accepted and kept for
    ``File.params`` only."""

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
            Keyword arguments given to ``open_file``; an unknown name raises ``TypeError``
            (except those of :data:`PASSED_THROUGH`).

        Raises
        ------
        TypeError
            If an override names no known option.
        """
        known = {f.name for f in dataclasses.fields(cls)} - {"others"}
        accepted = known | PASSED_THROUGH | {name.lower() for name in defaults
                                             if name.isupper() and not name.startswith("_")}
        values: dict[str, Any] = {}
        for name, value in defaults.items():
            if name.isupper() and not name.startswith("_"):
                values[name.lower()] = value
        _check_driver(overrides.get("driver", overrides.get("DRIVER", values.get("driver"))))
        for name, value in overrides.items():
            key = name.lower()
            if key not in accepted:
                raise TypeError(
                    f"open_file() got an unknown parameter {name!r}; "
                    f"known parameters: {', '.join(sorted(k.upper() for k in accepted))}"
                )
            values[key] = value
        others = tuple(sorted((key.upper(), values.pop(key)) for key in list(values)
                              if key not in known))
        return cls(**values, others=others)

    def as_dict(self) -> dict[str, Any]:
        """Every setting by PyTables' upper-case name (PyTables' ``File.params``)."""
        params = {f.name.upper(): getattr(self, f.name) for f in dataclasses.fields(self)
                  if f.name != "others"}
        params.update(self.others)
        return params

    def __getitem__(self, name: str) -> Any:
        """A setting by PyTables' upper-case name, as ``File.params[name]`` in PyTables.

        Raises
        ------
        KeyError
            If no setting has that name.
        """
        return self.as_dict()[name]

    def __contains__(self, name: object) -> bool:
        return name in self.as_dict()

    def keys(self) -> list[str]:
        """The upper-case names of the settings."""
        return list(self.as_dict())

    def get(self, name: str, default: Any = None) -> Any:
        """A setting by upper-case name, or ``default``."""
        return self.as_dict().get(name, default)


def _check_driver(driver: Any) -> None:
    """Refuse a ``DRIVER`` PyTables does not know (before any other parameter is looked
    at, as PyTables: its other drivers take parameters of their own).

    Raises
    ------
    ValueError
        If ``driver`` is neither None nor one of :data:`DRIVERS`.
    """
    if driver is not None and driver not in DRIVERS:
        raise ValueError(f"Invalid or not supported driver: '{driver}'")
