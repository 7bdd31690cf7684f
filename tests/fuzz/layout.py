"""Where things are in a base file: the byte ranges each mutation kind aims at.

Chunks are located with h5py's low-level ``DatasetID.get_chunk_info`` (fine for the few
chunks of a base file), object headers with ``h5o.get_info(...).addr``, and the other
HDF5 metadata (B-trees, heaps, symbol-table nodes, chunk-index structures) by their
signatures outside the chunks.  A Blosc2 chunk is cut in its frame's parts (docs/format.md
§2, C-Blosc2's README_CFRAME_FORMAT): the 87-byte fixed frame header, the metalayers
section up to the header length recorded at byte 11 (the ``b2nd`` metalayer lives
there), the 32-byte header of the inner Blosc2 chunk, and the rest (compressed data,
offsets chunk, trailer).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import h5py

BLOSC2_FILTER = 32026
FRAME_FIXED_HEADER = 87
BLOSC2_CHUNK_HEADER = 32

KINDS = (
    "chunk_data",           # bytes of a chunk of a subject (after any Blosc2 headers)
    "index_data",           # bytes of a chunk of an index dataset (``_i_*`` groups)
    "blosc2_frame_header",  # the fixed 87-byte header of a Blosc2 chunk's frame
    "blosc2_chunk_header",  # the 32-byte header of the frame's inner Blosc2 chunk
    "b2nd_meta",            # the frame's metalayers section (the ``b2nd`` metalayer)
    "extent",               # a dimension (and maybe its maximum) of a dataset's dataspace
    "superblock",
    "object_header",        # object headers (v1 at their address; v2 OHDR/OCHK)
    "btree",                # v1 B-tree nodes (groups and chunk indexes), v2 B-trees, arrays
    "heap",                 # local heaps, global heaps, fractal heaps
    "symbol_table",         # symbol-table nodes (SNOD) of old-style groups
    "anywhere",             # any byte of the file
    "truncate",             # the file cut short
)
"""Every mutation kind, in the order a run cycles through them."""

_SIGNATURES = {
    b"TREE": "btree", b"BTHD": "btree", b"BTIN": "btree", b"BTLF": "btree",
    b"FAHD": "btree", b"FADB": "btree", b"EAHD": "btree", b"EAIB": "btree",
    b"EASB": "btree", b"EADB": "btree",
    b"HEAP": "heap", b"GCOL": "heap", b"FRHP": "heap", b"FHDB": "heap", b"FHIB": "heap",
    b"SNOD": "symbol_table", b"OHDR": "object_header", b"OCHK": "object_header",
}
_SIGNATURE_SPAN = 256  # bytes after a signature that a mutation may hit (capped below)


@dataclass(frozen=True)
class Region:
    """Bytes ``start..stop`` of a file, of mutation kind ``kind``, named by ``label``."""

    kind: str
    start: int
    stop: int
    label: str
    rank: int = 0  # extent regions: the dataspace's rank (dims, then maxdims if stop says so)


def _data_regions(name: str, dset: h5py.Dataset, data: bytes, regions: list[Region]) -> None:
    """The chunks of one dataset, each split into its Blosc2 parts where it has them, or
    its contiguous data."""
    data_kind = "index_data" if "/_i_" in name else "chunk_data"
    if dset.chunks is None:
        offset = dset.id.get_offset()
        if offset is not None and dset.id.get_storage_size() > 0:
            regions.append(Region(data_kind, offset, offset + dset.id.get_storage_size(),
                                  f"{name} contiguous data"))
        return
    dcpl = dset.id.get_create_plist()
    blosc2 = any(dcpl.get_filter(i)[0] == BLOSC2_FILTER for i in range(dcpl.get_nfilters()))
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        start, size, where = info.byte_offset, info.size, f"{name} chunk {info.chunk_offset}"
        if not blosc2 or size < FRAME_FIXED_HEADER + BLOSC2_CHUNK_HEADER:
            regions.append(Region(data_kind, start, start + size, where))
            continue
        header_len = struct.unpack_from(">i", data, start + 11)[0]
        inner = start + header_len
        if b"b2nd" in data[start + FRAME_FIXED_HEADER : inner]:
            regions.append(Region("blosc2_frame_header", start, start + FRAME_FIXED_HEADER,
                                  where))
            regions.append(Region("b2nd_meta", start + FRAME_FIXED_HEADER, inner, where))
        else:  # a plain frame: its (empty) metalayers section is part of the header
            regions.append(Region("blosc2_frame_header", start, inner, where))
        regions.append(Region("blosc2_chunk_header", inner, inner + BLOSC2_CHUNK_HEADER, where))
        regions.append(Region(data_kind, inner + BLOSC2_CHUNK_HEADER, start + size, where))


def _object_header(addr: int, data: bytes, label: str) -> Region:
    """A v1 object header: 16-byte prefix plus the size recorded at byte 8."""
    if data[addr : addr + 4] == b"OHDR":
        return Region("object_header", addr, min(addr + _SIGNATURE_SPAN, len(data)), label)
    size = struct.unpack_from("<I", data, addr + 8)[0]
    return Region("object_header", addr, min(addr + 16 + size, len(data)), label)


def _extent(addr: int, data: bytes, name: str) -> Region | None:
    """The dims (and maxdims) of the dataspace message of a v1 object header (its first
    block or a continuation block)."""
    if data[addr] != 1:
        return None
    size = struct.unpack_from("<I", data, addr + 8)[0]
    blocks = [(addr + 16, addr + 16 + size)]
    while blocks:
        pos, end = blocks.pop(0)
        end = min(end, len(data))
        while pos + 8 <= end:
            mtype, msize = struct.unpack_from("<HH", data, pos)
            body = pos + 8
            if mtype == 1:  # dataspace: version, rank, flags; dims at +8 (v1) or +4 (v2)
                version, rank, flags = data[body], data[body + 1], data[body + 2]
                dims = body + (8 if version == 1 else 4)
                slots = rank * (2 if flags & 1 else 1)
                return Region("extent", dims, dims + 8 * slots, f"dataspace of {name}", rank)
            if mtype == 0x10:  # continuation: offset and length of another block
                offset, length = struct.unpack_from("<QQ", data, body)
                blocks.append((offset, offset + length))
            pos = body + msize
    return None


def _superblock(data: bytes) -> Region:
    version = data[8]
    size = {0: 96, 1: 100}.get(version, 48)
    return Region("superblock", 0, size, f"superblock v{version}")


def regions_of(path: Path) -> list[Region]:
    """Every region of the file at ``path`` that some mutation kind aims at."""
    data = path.read_bytes()
    regions = [_superblock(data)]
    objects: dict[int, str] = {}
    datasets: set[str] = set()
    with h5py.File(path, "r") as f:
        objects[h5py.h5o.get_info(f.id).addr] = "/"

        def visit(name: str, obj: h5py.HLObject) -> None:
            objects.setdefault(h5py.h5o.get_info(obj.id).addr, "/" + name)
            if isinstance(obj, h5py.Dataset):
                datasets.add("/" + name)
                _data_regions("/" + name, obj, data, regions)

        f.visititems(visit)
    for addr, name in objects.items():
        regions.append(_object_header(addr, data, f"object header of {name}"))
        if name in datasets and "/_i_" not in name:
            extent = _extent(addr, data, name)
            if extent is not None and extent.rank:
                regions.append(extent)
    _signature_regions(data, regions)
    regions.append(Region("anywhere", 0, len(data), "whole file"))
    regions.append(Region("truncate", 1, len(data), "file length"))
    return regions


def _signature_regions(data: bytes, regions: list[Region]) -> None:
    """Metadata found by signature, outside the chunks already located."""
    taken = sorted((r.start, r.stop) for r in regions if r.kind not in ("superblock",))
    starts = sorted({r.start for r in regions} | {len(data)})

    def inside_chunk(pos: int) -> bool:
        return any(lo <= pos < hi for lo, hi in taken)

    for signature, kind in _SIGNATURES.items():
        pos = data.find(signature)
        while pos >= 0:
            if not inside_chunk(pos):
                stop = min((s for s in starts if s > pos), default=len(data))
                stop = min(stop, pos + _SIGNATURE_SPAN)
                regions.append(Region(kind, pos, stop, f"{signature.decode()} at {pos}"))
            pos = data.find(signature, pos + 1)
