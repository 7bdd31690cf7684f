"""The hierarchy seen from HDF5: listing, opening, linking, moving and deleting objects.

Everything here works on h5py's low-level ids (``GroupID``, ``DatasetID``) because the
high-level objects cost several times more to create, and a walk over 100,000 nodes needs
names and kinds, not fully built objects.
"""

from __future__ import annotations

import ctypes
import enum

import h5py
from h5py import h5g, h5l, h5o

from hyperslab.errors import HDF5ExtError, NodeError

_HDF5_ERRORS = (OSError, RuntimeError, ValueError)
"""What h5py raises when HDF5 fails (a damaged file); ``KeyError`` means not found."""


def _damaged(action: str, exc: Exception) -> HDF5ExtError:
    return HDF5ExtError(f"cannot {action}: {exc}")


class Kind(enum.IntEnum):
    """What a link in a group points at."""

    GROUP = 0
    DATASET = 1
    SOFTLINK = 2
    EXTLINK = 3
    NAMED_TYPE = 4
    UNKNOWN = 5


_OBJ_KIND = {h5o.TYPE_GROUP: Kind.GROUP, h5o.TYPE_DATASET: Kind.DATASET}
if hasattr(h5o, "TYPE_NAMED_DATATYPE"):
    _OBJ_KIND[h5o.TYPE_NAMED_DATATYPE] = Kind.NAMED_TYPE
_STAT_KIND = {h5g.GROUP: Kind.GROUP, h5g.DATASET: Kind.DATASET, h5g.TYPE: Kind.NAMED_TYPE}

# H5Oget_info (h5o.get_info) also sums the object's metadata sizes, which for a chunked
# dataset means reading every node of its chunk B-tree (17 reads for a 240 MB table, more
# for bigger ones).  H5Gget_objinfo (h5g.get_objinfo) answers the address and the type
# from the object header alone; it is used where this h5py has it.
_HAS_OBJINFO = hasattr(h5g, "get_objinfo")
_LONG_BITS = 8 * ctypes.sizeof(ctypes.c_long)


def list_links(gid: h5g.GroupID) -> dict[str, Kind | None]:
    """Every link of a group in name order: name -> SOFTLINK/EXTLINK, or None for hard links.

    One HDF5 iteration; the kind of the object behind a hard link is not looked up.
    """
    links: dict[str, Kind | None] = {}
    soft, external = h5l.TYPE_SOFT, h5l.TYPE_EXTERNAL

    def collect(name: bytes, info: h5l.LinkInfo) -> None:
        link_type = info.type
        kind = None
        if link_type == soft:
            kind = Kind.SOFTLINK
        elif link_type == external:
            kind = Kind.EXTLINK
        links[name.decode("utf-8", "surrogateescape")] = kind

    try:
        gid.links.iterate(collect, info=True)
    except _HDF5_ERRORS as exc:
        raise _damaged(f"list the links of group {_name_of(gid)!r}", exc) from exc
    return links


def _name_of(oid: h5o.ObjectID) -> str:
    """An object's path, for messages (``'?'`` where HDF5 cannot tell it)."""
    try:
        name = h5py.h5i.get_name(oid)
    except Exception:  # the object is damaged: the message goes without its name
        return "?"
    return "?" if name is None else name.decode("utf-8", "surrogateescape")


def child_kind(gid: h5g.GroupID, name: str) -> Kind:
    """Return what the link ``name`` of a group points at, without opening it.

    Raises
    ------
    HDF5ExtError
        If the link, or the header of the object behind a hard link, cannot be read (a
        damaged file): what it points at is unknown, a group maybe.
    """
    bname = name.encode("utf-8", "surrogateescape")
    try:
        link_type = gid.links.get_info(bname).type
    except _HDF5_ERRORS as exc:
        raise _damaged(f"read the link {name!r} of group {_name_of(gid)!r}", exc) from exc
    kind = _link_type_kind(link_type)
    if kind is not None:
        return kind
    try:
        if _HAS_OBJINFO:
            return _STAT_KIND.get(h5g.get_objinfo(gid, bname).type, Kind.UNKNOWN)
        objinfo = h5o.get_info(gid, bname)
    except (KeyError, *_HDF5_ERRORS) as exc:  # the hard link is there: its object is not
        raise _damaged(f"read the object at {name!r} in group {_name_of(gid)!r}",
                       exc) from exc
    return _OBJ_KIND.get(objinfo.type, Kind.UNKNOWN)


def link_kind(gid: h5g.GroupID, name: str) -> Kind | None:
    """Kind of the link ``name``: SOFTLINK, EXTLINK, None for a hard link, UNKNOWN if absent."""
    bname = name.encode("utf-8", "surrogateescape")
    try:  # one HDF5 call: asking whether the link exists first costs a second one
        info = gid.links.get_info(bname)
    except (KeyError, OSError, ValueError, RuntimeError):  # h5py: RuntimeError if absent
        return Kind.UNKNOWN
    return _link_type_kind(info.type)


def _link_type_kind(link_type: int) -> Kind | None:
    """SOFTLINK or EXTLINK for those link types, None for a hard link."""
    if link_type == h5l.TYPE_SOFT:
        return Kind.SOFTLINK
    if link_type == h5l.TYPE_EXTERNAL:
        return Kind.EXTLINK
    return None


def kind_of_id(oid: h5o.ObjectID) -> Kind:
    """What an open object is (from its id class, no HDF5 call)."""
    if isinstance(oid, h5g.GroupID):
        return Kind.GROUP
    if isinstance(oid, h5py.h5d.DatasetID):
        return Kind.DATASET
    if isinstance(oid, h5py.h5t.TypeID):
        return Kind.NAMED_TYPE
    return Kind.UNKNOWN


def open_child(gid: h5g.GroupID, name: str) -> h5o.ObjectID:
    """Open the object behind link ``name``: a ``GroupID`` or a ``DatasetID``.

    Raises
    ------
    KeyError
        If there is no such link, or it is a soft or external link that dangles.
    HDF5ExtError
        If the link is there but the object behind it cannot be opened (a damaged file).
    """
    bname = name.encode("utf-8", "surrogateescape")
    try:
        return h5o.open(gid, bname)
    except (KeyError, *_HDF5_ERRORS) as exc:
        # h5py says KeyError for a missing link and for an object it cannot read alike.
        if link_kind(gid, name) is None:  # a hard link: the object itself is damaged
            raise _damaged(f"open the object at {name!r} in group {_name_of(gid)!r}",
                           exc) from exc
        raise KeyError(name) from exc


def open_path(root: h5g.GroupID, path: str) -> h5o.ObjectID:
    """Open the object at an absolute or root-relative ``path``."""
    rel = path.strip("/")
    if not rel:
        return root
    return open_child(root, rel)


def soft_link_target(gid: h5g.GroupID, name: str) -> str:
    """Return the target path of the soft link ``name``."""
    value: bytes = gid.links.get_val(name.encode("utf-8", "surrogateescape"))
    return value.decode("utf-8", "surrogateescape")


def create_group(gid: h5g.GroupID, name: str, *, track_order: bool = False) -> h5g.GroupID:
    """Create a new group ``name`` inside ``gid`` and return its id."""
    gcpl = None
    if track_order:
        gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        gcpl.set_link_creation_order(h5py.h5p.CRT_ORDER_TRACKED | h5py.h5p.CRT_ORDER_INDEXED)
    return h5g.create(gid, name.encode("utf-8", "surrogateescape"), gcpl=gcpl)


def move_link(src: h5g.GroupID, src_name: str, dst: h5g.GroupID, dst_name: str) -> None:
    """Move (rename) a link; open objects behind it stay valid."""
    try:
        src.links.move(
            src_name.encode("utf-8", "surrogateescape"),
            dst,
            dst_name.encode("utf-8", "surrogateescape"),
        )
    except (KeyError, OSError) as exc:
        raise NodeError(f"cannot move {src_name!r} to {dst_name!r}: {exc}") from exc


def delete_link(gid: h5g.GroupID, name: str) -> None:
    """Delete the link ``name`` (the object goes when its last link does)."""
    gid.unlink(name.encode("utf-8", "surrogateescape"))


def copy_object(
    src: h5g.GroupID, src_name: str, dst: h5g.GroupID, dst_name: str, *, shallow: bool = False
) -> None:
    """Copy an object (a whole subtree for groups unless ``shallow``) with HDF5's H5Ocopy."""
    copypl = h5py.h5p.create(h5py.h5p.OBJECT_COPY)
    if shallow:
        copypl.set_copy_object(h5o.COPY_SHALLOW_HIERARCHY_FLAG)
    h5o.copy(
        src,
        src_name.encode("utf-8", "surrogateescape"),
        dst,
        dst_name.encode("utf-8", "surrogateescape"),
        copypl=copypl,
    )


def object_address(oid: h5o.ObjectID) -> int:
    """The file address of an object's header: it identifies the object in its file (a
    new object at the same path has another one; a moved or renamed one keeps it)."""
    if _HAS_OBJINFO:
        low, high = h5g.get_objinfo(oid).objno  # the address, in two C longs
        return int(low) | (int(high) << _LONG_BITS)
    return int(h5o.get_info(oid).addr)


def external_link_target(gid: h5g.GroupID, name: str) -> tuple[str, str]:
    """Return ``(filename, path)`` of the external link ``name``."""
    filename, path = gid.links.get_val(name.encode("utf-8", "surrogateescape"))
    return (filename.decode("utf-8", "surrogateescape"), path.decode("utf-8", "surrogateescape"))


def _link_error(action: str, name: str, gid: h5g.GroupID, exc: Exception) -> NodeError:
    return NodeError(f"cannot {action} {name!r} in group {_name_of(gid)!r}: {exc}")


def create_soft_link(gid: h5g.GroupID, name: str, target: str) -> None:
    """Create the soft link ``name`` in a group, pointing at path ``target`` (any path:
    HDF5 resolves it when the link is followed, so it may dangle)."""
    try:
        gid.links.create_soft(name.encode("utf-8", "surrogateescape"),
                              target.encode("utf-8", "surrogateescape"))
    except _HDF5_ERRORS as exc:
        raise _link_error("create the soft link", name, gid, exc) from exc


def create_hard_link(gid: h5g.GroupID, name: str, root: h5g.GroupID, target: str) -> None:
    """Create the hard link ``name`` in a group to the object at ``target`` (a path from
    ``root``, a group of the same file): one more name of that object."""
    try:
        gid.links.create_hard(name.encode("utf-8", "surrogateescape"), root,
                              target.encode("utf-8", "surrogateescape"))
    except (KeyError, *_HDF5_ERRORS) as exc:
        raise _link_error("create the hard link", name, gid, exc) from exc


def create_external_link(gid: h5g.GroupID, name: str, filename: str, path: str) -> None:
    """Create the external link ``name`` in a group to ``path`` in file ``filename``
    (stored as given; HDF5 opens the file when the link is followed)."""
    try:
        gid.links.create_external(name.encode("utf-8", "surrogateescape"),
                                  filename.encode("utf-8", "surrogateescape"),
                                  path.encode("utf-8", "surrogateescape"))
    except _HDF5_ERRORS as exc:
        raise _link_error("create the external link", name, gid, exc) from exc


def copy_link(src: h5g.GroupID, src_name: str, dst: h5g.GroupID, dst_name: str) -> None:
    """Copy the soft or external link ``src_name`` (the link itself, not what it points
    at) to ``dst_name`` in group ``dst``, which may be in another file."""
    kind = link_kind(src, src_name)
    if kind is Kind.SOFTLINK:
        create_soft_link(dst, dst_name, soft_link_target(src, src_name))
    elif kind is Kind.EXTLINK:
        create_external_link(dst, dst_name, *external_link_target(src, src_name))
    else:
        raise NodeError(f"{src_name!r} in group {_name_of(src)!r} is not a soft or external "
                        f"link")


def hard_link_count(oid: h5o.ObjectID) -> int:
    """How many hard links name an object (two or more: it is reached by several paths)."""
    if _HAS_OBJINFO:
        return int(h5g.get_objinfo(oid).nlink)
    return int(h5o.get_info(oid).rc)
