"""Mutations: byte edits in one region of a base file, or a truncation.

A mutation is drawn from a seeded generator (``numpy.random.default_rng([seed, number])``,
so mutant ``number`` of a run is the same whatever ran before it) and written down as
its *edits* (``spec``): ``"OFFSET:HEX,OFFSET:HEX"`` byte runs, or ``"truncate:LENGTH"``.
The spec alone replays it on a freshly built base (the bases are byte-identical from
build to build), so a failure's replay command does not depend on the generator.

Operators (one to three per mutant, all in the same region): flip one bit, set one byte
or a run of 2-8 bytes to random values, fill 1-8 bytes with 0x00 or 0xFF, or write an
"interesting" integer (0, 1, -1, powers of two near type limits) of 1, 2, 4 or 8 bytes
in either byte order, which is what turns a size or count field into a runaway one.
``extent`` mutants set one dimension of a dataset's dataspace (and half the time its
maximum, so that HDF5 accepts it) to a larger or odd length: a runaway extent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .layout import Region

_INTERESTING = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000,
                0xFFFFFFFF, 2**40, 2**48 + 3, 2**62, 2**63 - 1, 2**64 - 1, 1000, 65536)


@dataclass(frozen=True)
class Mutation:
    """A base file, a kind, the region hit, and the edits (or the truncated length)."""

    base: str
    kind: str
    label: str
    edits: tuple[tuple[int, bytes], ...] = ()
    truncate: int | None = None

    @property
    def spec(self) -> str:
        """The edits as one token: ``truncate:N`` or ``OFFSET:HEX,...``."""
        if self.truncate is not None:
            return f"truncate:{self.truncate}"
        return ",".join(f"{offset}:{data.hex()}" for offset, data in self.edits)

    def describe(self) -> str:
        return f"{self.base} {self.kind} in {self.label}: {self.spec}"

    def apply(self, original: bytes, out: Path) -> None:
        """Write the mutant of ``original`` to ``out``."""
        if self.truncate is not None:
            out.write_bytes(original[: self.truncate])
            return
        data = bytearray(original)
        for offset, new in self.edits:
            data[offset : offset + len(new)] = new
        out.write_bytes(bytes(data))


def parse_spec(base: str, spec: str) -> Mutation:
    """The mutation that ``Mutation.spec`` wrote (kind and label are not recorded)."""
    if spec.startswith("truncate:"):
        return Mutation(base, "replay", "replay", truncate=int(spec.split(":", 1)[1]))
    edits = []
    for item in spec.split(","):
        offset, hexdata = item.split(":")
        edits.append((int(offset), bytes.fromhex(hexdata)))
    return Mutation(base, "replay", "replay", tuple(edits))


def _operator(rng: np.random.Generator, region: Region, original: bytes) -> tuple[int, bytes]:
    """One edit inside ``region``: (offset, new bytes)."""
    span = region.stop - region.start
    op = int(rng.integers(5))
    if op == 4:  # an interesting integer
        width = int(rng.choice([1, 2, 4, 8]))
        width = min(width, span)
        value = int(rng.choice(_INTERESTING)) % (1 << (8 * width))
        order = "little" if rng.integers(2) else "big"
        offset = region.start + int(rng.integers(span - width + 1))
        return offset, value.to_bytes(width, order)
    if op == 0:  # flip one bit
        offset = region.start + int(rng.integers(span))
        return offset, bytes([original[offset] ^ (1 << int(rng.integers(8)))])
    length = 1 if op == 1 else min(int(rng.integers(2, 9)), span)
    offset = region.start + int(rng.integers(span - length + 1))
    if op == 3:  # fill
        return offset, bytes([0xFF if rng.integers(2) else 0x00]) * length
    return offset, rng.integers(0, 256, length, dtype=np.uint8).tobytes()


_EXTENTS = (0, 1, 2**31 - 1, 2**32 + 5, 2**40, 2**47 + 1, 2**62, 2**63 - 1, 2**64 - 2)


def _extent(rng: np.random.Generator, region: Region, original: bytes) -> tuple[tuple[int,
                                                                                      bytes], ...]:
    """One dimension set to a larger (or odd) length; half the time its maximum too, so
    that HDF5 accepts a dataset that did not grow (a runaway extent)."""
    dim = int(rng.integers(region.rank))
    at = region.start + 8 * dim
    old = int.from_bytes(original[at : at + 8], "little")
    value = int(rng.choice([old + 1, old * 2 + 3, old * 1000 + 7, *_EXTENTS])) % 2**64
    edits = [(at, value.to_bytes(8, "little"))]
    has_max = region.stop - region.start == 16 * region.rank
    if has_max and rng.integers(2):
        top = region.start + 8 * (region.rank + dim)
        if original[top : top + 8] != b"\xff" * 8:  # not unlimited: raise the limit too
            edits.append((top, value.to_bytes(8, "little")))
    return tuple(edits)


def draw(rng: np.random.Generator, base: str, kind: str, regions: list[Region],
         original: bytes) -> Mutation:
    """A mutation of ``kind`` in one of ``regions`` (all of that kind)."""
    region = regions[int(rng.integers(len(regions)))]
    if kind == "extent":
        return Mutation(base, kind, region.label, _extent(rng, region, original))
    if kind == "truncate":
        size = len(original)
        # Half anywhere, half near the end (the metadata HDF5 writes last).
        cut = int(rng.integers(1, size)) if rng.integers(2) else size - int(
            rng.integers(1, min(size, 600)))
        return Mutation(base, kind, region.label, truncate=cut)
    count = 1 + int(rng.integers(3)) if rng.integers(3) == 0 else 1
    edits = tuple(_operator(rng, region, original) for _ in range(count))
    # Skip edits that change nothing (a fill with the same bytes): retry once.
    if all(original[o : o + len(d)] == d for o, d in edits):
        edits = (_flip_any(rng, region, original),)
    return Mutation(base, kind, region.label, edits)


def _flip_any(rng: np.random.Generator, region: Region, original: bytes) -> tuple[int, bytes]:
    offset = region.start + int(rng.integers(region.stop - region.start))
    return offset, bytes([original[offset] ^ 0xFF])
