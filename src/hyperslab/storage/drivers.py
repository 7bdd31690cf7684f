"""HDF5's file drivers and user blocks, as PyTables' ``DRIVER*`` and ``USER_BLOCK_SIZE``
parameters choose them.

PyTables accepts the drivers named in :data:`hyperslab.options.DRIVERS`; of those, h5py
provides ``H5FD_SEC2`` (HDF5's default), ``H5FD_STDIO``, ``H5FD_CORE`` (the file in
memory, written back on close unless ``DRIVER_CORE_BACKING_STORE`` is 0; an existing
file's bytes may be given as ``DRIVER_CORE_IMAGE``) and ``H5FD_SPLIT`` (metadata and raw
data in two files), and ``H5FD_DIRECT`` where HDF5 was built with it.  The others raise
``RuntimeError`` as PyTables does where they are not available.

Only files open read-only with the sec2 driver are read with ``os.pread``
(:func:`hyperslab.storage.preads.file_access`); a user block changes nothing there, since
HDF5 reports chunk addresses and the end of allocation as positions in the whole file,
user block included.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any

import h5py
from h5py import h5p

from hyperslab.errors import HDF5ExtError
from hyperslab.options import DRIVERS, FileOptions

HAVE_DIRECT_DRIVER = "direct" in h5py.registered_drivers()
"""Whether HDF5 was built with the H5FD_DIRECT driver (h5py then registers it)."""

HAVE_WINDOWS_DRIVER = False
"""Whether the H5FD_WINDOWS driver can be named (h5py uses it as the default driver on
Windows but cannot select it by name)."""

_AVAILABLE = {
    "H5FD_SEC2": True,
    "H5FD_STDIO": True,
    "H5FD_CORE": True,
    "H5FD_SPLIT": True,
    "H5FD_DIRECT": HAVE_DIRECT_DRIVER,
    "H5FD_WINDOWS": HAVE_WINDOWS_DRIVER,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Driver:
    """The HDF5 file driver of one open file and its settings (PyTables' ``DRIVER_*``).

    Build it with :meth:`from_options`; :meth:`check` raises PyTables' errors for settings
    it refuses.
    """

    name: str | None = None
    """PyTables' driver name (``"H5FD_CORE"``...), None for HDF5's default (sec2)."""
    core_increment: int = 64 * 1024
    """H5FD_CORE: bytes by which the file's memory grows."""
    core_backing_store: bool = True
    """H5FD_CORE: whether the file is read from and written back to disk."""
    core_image: bytes | None = None
    """H5FD_CORE: the bytes of an existing file to open (no file on disk is read)."""
    split_meta_ext: str = "-m.h5"
    """H5FD_SPLIT: the extension (or ``%s`` pattern) of the metadata file."""
    split_raw_ext: str = "-r.h5"
    """H5FD_SPLIT: the extension (or ``%s`` pattern) of the raw data file."""
    direct: tuple[int, int, int] = (0, 0, 0)
    """H5FD_DIRECT: alignment, block size and copy buffer size."""

    @classmethod
    def from_options(cls, options: FileOptions) -> Driver:
        """The driver that ``options`` (PyTables' parameters of one file) select."""
        def other(name: str, default: Any) -> Any:
            return dict(options.others).get(name, default)

        return cls(
            name=options.driver,
            core_increment=options.driver_core_increment,
            core_backing_store=bool(options.driver_core_backing_store),
            core_image=options.driver_core_image,
            split_meta_ext=options.driver_split_meta_ext,
            split_raw_ext=options.driver_split_raw_ext,
            direct=(int(other("DRIVER_DIRECT_ALIGNMENT", 0)),
                    int(other("DRIVER_DIRECT_BLOCK_SIZE", 0)),
                    int(other("DRIVER_DIRECT_CBUF_SIZE", 0))),
        )

    @property
    def image(self) -> bytes | None:
        """The file image to open (only the core driver opens one)."""
        return self.core_image if self.name == "H5FD_CORE" and self.core_image else None

    def check(self) -> None:
        """Refuse what PyTables refuses of these settings.

        Raises
        ------
        ValueError
            For a driver PyTables does not know.
        RuntimeError
            For a driver this HDF5 build lacks (H5FD_DIRECT, H5FD_WINDOWS).
        TypeError
            For a core driver image that is not ``bytes``.

        Warns
        -----
        UserWarning
            When an image is given to a driver other than H5FD_CORE (it is ignored).
        """
        name = self.name
        if name is not None and name not in DRIVERS:
            raise ValueError(f"Invalid or not supported driver: '{name}'")
        if name is not None and not _AVAILABLE[name]:
            raise RuntimeError(f"The {name} driver is not available")
        if self.core_image:
            if name != "H5FD_CORE":
                warnings.warn(f"DRIVER_CORE_IMAGE is ignored by the '{name}' driver "
                              f"(only H5FD_CORE opens file images)", stacklevel=4)
            elif not isinstance(self.core_image, bytes):
                raise TypeError("DRIVER_CORE_IMAGE must be a bytes object (an HDF5 file "
                                "image)")

    def checked_paths(self, filename: str) -> list[str]:
        """The files on disk whose presence and permissions opening ``filename`` checks
        first (as PyTables: none for the core driver without a backing store, whose
        file HDF5 itself reads if it must; both files of the split driver)."""
        if self.name == "H5FD_SPLIT":
            return [_split_name(filename, self.split_meta_ext),
                    _split_name(filename, self.split_raw_ext)]
        if self.name == "H5FD_CORE" and not self.core_backing_store:
            return []
        return [filename]

    def exists(self, filename: str) -> bool:
        """Whether opening ``filename`` opens an existing file (an image always is one)."""
        if self.image is not None:
            return True
        if self.name == "H5FD_SPLIT":
            return all(os.path.exists(path) for path in self.checked_paths(filename))
        return os.path.exists(filename)

    def set_on(self, fapl: h5p.PropFAID) -> None:
        """Select this driver on the file access property list ``fapl``.

        Raises
        ------
        HDF5ExtError
            If HDF5 refuses the settings (an invalid image, say).
        """
        try:
            self._set(fapl)
        except (OSError, RuntimeError, ValueError, TypeError) as exc:
            raise HDF5ExtError(f"unable to set the file access property list "
                               f"(driver {self.name}): {exc}") from exc

    def _set(self, fapl: h5p.PropFAID) -> None:
        name = self.name
        if name is None:
            return
        if name == "H5FD_SEC2":
            fapl.set_fapl_sec2()
        elif name == "H5FD_STDIO":
            fapl.set_fapl_stdio()
        elif name == "H5FD_CORE":
            fapl.set_fapl_core(int(self.core_increment), bool(self.core_backing_store))
            if self.image is not None:
                fapl.set_file_image(self.image)
        elif name == "H5FD_SPLIT":
            fapl.set_fapl_split(meta_ext=os.fsencode(self.split_meta_ext),
                                raw_ext=os.fsencode(self.split_raw_ext))
        elif name == "H5FD_DIRECT":  # pragma: no cover - not in this HDF5 build
            fapl.set_fapl_direct(*self.direct)


def _split_name(filename: str, ext: str) -> str:
    """The name of one of the split driver's files (HDF5 formats an extension holding
    ``%s`` with the file name, and appends any other)."""
    return ext % filename if "%s" in ext else filename + ext


def check_user_block(size: Any, new: bool) -> int:
    """The user block size of a file being opened, as PyTables accepts it.

    Parameters
    ----------
    size : int
        ``USER_BLOCK_SIZE``: 0 (none), or a power of 2 of at least 512 bytes.
    new : bool
        Whether the file is being created (only a new file gets a user block).

    Returns
    -------
    int
        The size to give HDF5 (0 for none).

    Raises
    ------
    ValueError
        If a new file's size is neither 0 nor a power of 2 of at least 512.

    Warns
    -----
    UserWarning
        When a size is given for a file that exists (it keeps its own).
    """
    if not size:
        return 0
    if not new:
        warnings.warn("the HDF5 file already exists: USER_BLOCK_SIZE is ignored",
                      stacklevel=4)
        return 0
    size = int(size)
    if size < 512 or size & (size - 1):
        raise ValueError(f"USER_BLOCK_SIZE must be 0 or a power of 2 of at least 512, "
                         f"not {size}")
    return size


__all__ = ["HAVE_DIRECT_DRIVER", "HAVE_WINDOWS_DRIVER", "Driver", "check_user_block"]
