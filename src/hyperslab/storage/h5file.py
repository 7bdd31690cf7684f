"""Opening HDF5 files in PyTables' modes, with h5py's errors turned into ours."""

from __future__ import annotations

import functools
import os
from typing import Any

import h5py
import hdf5plugin  # noqa: F401  (registers the Blosc, Blosc2, BZip2... HDF5 filters)
from h5py import h5f, h5fd, h5p

from hyperslab.errors import HDF5ExtError
from hyperslab.storage.drivers import Driver, check_user_block

MODES = ("r", "r+", "a", "w")


def open_h5(
    path: str | os.PathLike[str],
    mode: str,
    *,
    chunk_cache_size: int,
    chunk_cache_nelmts: int,
    chunk_cache_preempt: float,
    metadata_cache_size: int | None = None,
    track_order: bool = False,
    driver: Driver | None = None,
    user_block_size: int = 0,
) -> h5py.File:
    """Open ``path`` with h5py in one of PyTables' modes.

    Parameters
    ----------
    path : str or os.PathLike
        The file name.
    mode : {'r', 'r+', 'a', 'w'}
        PyTables' modes: read-only, read/write of an existing file, read/write creating it if
        needed, and create (truncating any existing file).
    chunk_cache_size, chunk_cache_nelmts, chunk_cache_preempt
        HDF5's raw data chunk cache settings for every dataset of the file.
    metadata_cache_size : int, optional
        Bytes of HDF5's metadata cache (its initial and maximum size).  Without a bound,
        HDF5 2.0 lets the cache grow by ~3 KB for every object visited: a walk over
        100,000 nodes then holds ~280 MB.  PyTables bounds it to 1 MB the same way.
    track_order : bool
        Whether new groups track creation order (PyTables: no).
    driver : Driver, optional
        The HDF5 file driver and its settings (default: HDF5's, sec2).
    user_block_size : int
        Bytes of user block before the HDF5 data of a new file (0: none; see
        :func:`~hyperslab.storage.drivers.check_user_block`).

    Raises
    ------
    ValueError
        If ``mode`` is not one of PyTables' modes, or the driver or user block size is
        refused (see :meth:`Driver.check`).
    RuntimeError
        If the driver is not in this HDF5 build.
    FileNotFoundError
        If the file does not exist in modes 'r' and 'r+'.
    HDF5ExtError
        If the file exists but is not an HDF5 file, or HDF5 refuses to open it.
    """
    if mode not in MODES:
        raise ValueError(f"invalid mode string {mode!r}; allowed modes are {', '.join(MODES)}")
    driver = Driver() if driver is None else driver
    driver.check()
    filename = os.fspath(path)
    for checked in driver.checked_paths(filename):
        _check_access(checked, mode)
    new = not (mode in ("r", "r+") or (mode == "a" and driver.exists(filename)))
    user_block = check_user_block(user_block_size, new)
    # A file access list made here (cache settings included) costs a fifth less than
    # h5py's File(path, ...) and a metadata cache reconfiguration after opening.
    fapl = h5p.create(h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5f.LIBVER_EARLIEST, h5f.LIBVER_LATEST)  # as h5py does
    fapl.set_cache(0, chunk_cache_nelmts, chunk_cache_size, chunk_cache_preempt)
    if metadata_cache_size is not None:
        fapl.set_mdc_config(_metadata_cache_config(int(metadata_cache_size)))
    driver.set_on(fapl)
    name = os.fsencode(filename)
    try:
        if not new:
            fid = h5f.open(name, h5f.ACC_RDONLY if mode == "r" else h5f.ACC_RDWR, fapl=fapl)
        else:
            fid = h5f.create(name, h5f.ACC_TRUNC if mode == "w" else h5f.ACC_EXCL, fapl=fapl,
                             fcpl=_file_creation(track_order, user_block))
    except OSError as exc:
        raise _open_error(filename, mode, exc) from exc
    return h5py.File(fid)


def _check_access(filename: str, mode: str) -> None:
    """PyTables' checks of a file on disk before it is opened in ``mode``."""
    exists = os.path.exists(filename)
    if mode in ("r", "r+") and not exists:
        raise FileNotFoundError(f"``{filename}`` does not exist")
    if exists and os.path.isdir(filename):
        raise IsADirectoryError(f"``{filename}`` is not a regular file")
    if mode in ("r", "r+") and not os.access(filename, os.R_OK):
        raise PermissionError(f"file ``{filename}`` exists but it can not be read")
    if mode in ("r+", "a") and exists and not os.access(filename, os.W_OK):
        raise PermissionError(f"file ``{filename}`` exists but it can not be written")


def _file_creation(track_order: bool, user_block: int) -> h5p.PropFCID:
    """The file creation list of a new file, as h5py makes it (no times recorded on the
    root group), with a user block of ``user_block`` bytes."""
    fcpl = h5p.create(h5p.FILE_CREATE)
    if track_order:
        order = h5p.CRT_ORDER_TRACKED | h5p.CRT_ORDER_INDEXED
        fcpl.set_link_creation_order(order)
        fcpl.set_attr_creation_order(order)
    fcpl.set_obj_track_times(False)
    if user_block:
        fcpl.set_userblock(user_block)
    return fcpl


def _open_error(filename: str, mode: str, exc: OSError) -> HDF5ExtError:
    return HDF5ExtError(f"unable to open HDF5 file ``{filename}`` in mode {mode!r}: {exc}")


@functools.cache
def _metadata_cache_config(size: int) -> Any:
    """A metadata cache configuration fixed at ``size`` bytes (HDF5's minimum: 1 KiB)."""
    size = max(size, 1024)
    config = h5p.create(h5p.FILE_ACCESS).get_mdc_config()
    config.set_initial_size = True
    config.initial_size = size
    config.max_size = size
    config.min_size = min(size, config.min_size)
    return config


def file_image(h5: h5py.File) -> bytes:
    """A copy of the bytes of the open file ``h5`` (flush it first), whatever its driver.

    Raises
    ------
    HDF5ExtError
        If the driver cannot give an image of the file.
    """
    try:
        return bytes(h5.id.get_file_image())
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"unable to retrieve the file image of {h5.filename!r} (not "
                           f"every driver gives one): {exc}") from exc


def file_size(h5: h5py.File) -> int:
    """The size of the open file ``h5`` in bytes: its user block, its HDF5 data and
    anything written past them (for a file in memory, the memory it holds).

    Raises
    ------
    HDF5ExtError
        If HDF5 cannot tell.
    """
    try:
        return int(h5.id.get_filesize())
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"unable to retrieve the size of {h5.filename!r}: {exc}") from exc


def user_block_size(h5: h5py.File) -> int:
    """The bytes of user block before the HDF5 data of the open file ``h5`` (0: none)."""
    try:
        return int(h5.id.get_create_plist().get_userblock())
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"unable to retrieve the user block size of {h5.filename!r}: "
                           f"{exc}") from exc


def file_descriptor(h5: h5py.File) -> int:
    """The operating system's descriptor of the open file ``h5``.

    Raises
    ------
    HDF5ExtError
        If its driver holds no descriptor of its own (core, stdio, split).
    """
    fid = h5.id
    driver = fid.get_access_plist().get_driver()
    if driver not in _DESCRIPTOR_DRIVERS:
        raise HDF5ExtError(f"the file {h5.filename!r} has no file descriptor of its own "
                           f"(open with the {h5.driver!r} driver)")
    try:
        return int(fid.get_vfd_handle())
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"problems getting the file descriptor of {h5.filename!r}: "
                           f"{exc}") from exc


_DESCRIPTOR_DRIVERS = frozenset({h5fd.SEC2, h5fd.DIRECT})  # DIRECT: -1 where not built


def root_group(h5: h5py.File, root_uep: str) -> h5py.h5g.GroupID:
    """The id of the group at ``root_uep`` (the file's user entry point).

    Raises
    ------
    KeyError
        If there is no group at ``root_uep``.
    HDF5ExtError
        If the root group cannot be opened (a damaged file).
    """
    try:
        root = h5py.h5g.open(h5.id, b"/")
    except (KeyError, OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot open the root group of {h5.filename!r}: {exc}") from exc
    if root_uep.strip("/") == "":
        return root
    try:
        gid = h5py.h5o.open(root, root_uep.strip("/").encode("utf-8", "surrogateescape"))
    except (KeyError, OSError, ValueError) as exc:
        raise KeyError(root_uep) from exc
    if not isinstance(gid, h5py.h5g.GroupID):
        raise KeyError(root_uep)
    return gid


# ---------------------------------------------------------------------- flush order
# HDF5 writes a file in place, without a journal: a flush writes each changed piece of
# metadata where it lives, the superblock (with the end of allocation) last, and between
# flushes the metadata cache writes whatever it evicts.  A program killed at any moment
# leaves whatever pieces were written.  The two functions below are what hyperslab does
# about it (see :mod:`hyperslab.nodes.files.flushguard` for the rules and what they buy).


def hold_metadata(h5: h5py.File) -> Any:
    """Keep every change of HDF5 metadata in memory until the next flush.

    The metadata cache stops evicting (it grows past its size if it must), so a dataset's
    new extent or chunk index never reaches the file ahead of the chunks it describes.
    Returns the cache configuration to give back to :func:`release_metadata`.

    Raises
    ------
    HDF5ExtError
        If HDF5 refuses the configuration.
    """
    fid = h5.id
    try:
        saved = fid.get_mdc_config()
        config = fid.get_mdc_config()
        config.incr_mode = 0  # H5C_incr__off: required with evictions disabled
        config.flash_incr_mode = 0
        config.decr_mode = 0
        config.evictions_enabled = False
        fid.set_mdc_config(config)
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot hold the metadata of {h5.filename!r}: {exc}") from exc
    return saved


def release_metadata(h5: h5py.File, saved: Any) -> None:
    """Let the metadata cache evict again, with the configuration ``saved`` by
    :func:`hold_metadata`."""
    try:
        h5.id.set_mdc_config(saved)
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot release the metadata of {h5.filename!r}: {exc}") from exc


def flush_in_order(h5: h5py.File) -> None:
    """Flush the file one dataset at a time, then the rest (``H5Fflush``).

    Flushing a dataset writes its cached chunks (HDF5 may then reuse the space a chunk
    it rewrites used to hold) and its metadata before any other dataset's chunk is
    written: the space of a chunk stored before is never given to another dataset's
    chunk while the file on disk still points at it.

    Raises
    ------
    HDF5ExtError
        If HDF5 fails to write (the message names the file).
    """
    fid = h5.id
    try:
        for dsid in h5f.get_obj_ids(fid, h5f.OBJ_DATASET | h5f.OBJ_LOCAL):
            dsid.flush()
        h5f.flush(fid)
    except (OSError, RuntimeError, ValueError) as exc:
        raise HDF5ExtError(f"cannot flush {h5.filename!r}: {exc}") from exc
