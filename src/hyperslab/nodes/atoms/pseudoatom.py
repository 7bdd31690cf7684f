"""Pseudo-atoms: the VLArray-only atoms whose rows are Python objects (bytes, str, pickles)."""

from __future__ import annotations

import pickle
import sys
from typing import Any, ClassVar

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.nodes.atoms.atom import Atom, UInt8Atom, UInt32Atom


class PseudoAtom:
    """Base of the VLArray-only pseudo-atoms: a `base` storage atom, no dflt nor itemsize."""

    kind: ClassVar[str]
    type: ClassVar[str]
    base: ClassVar[Atom]
    shape: ClassVar[Shape] = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def toarray(self, object_: Any) -> AnyArray:
        """Convert `object_` into a 1-D array of base atoms."""
        raise NotImplementedError

    def fromarray(self, array: AnyArray) -> Any:
        """Convert a 1-D array of base atoms back into an object."""
        raise NotImplementedError


class VLStringAtom(PseudoAtom):
    """One ``bytes`` object per VLArray row, stored as uint8."""

    kind = "vlstring"
    type = "vlstring"
    base = UInt8Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the bytes of `object_` as a uint8 array."""
        if not isinstance(object_, bytes):
            raise TypeError(f"object is not bytes: {object_!r}")
        return np.frombuffer(object_, dtype=np.uint8)

    def fromarray(self, array: AnyArray) -> bytes:
        """Return the bytes held in `array`."""
        return np.ascontiguousarray(array, dtype=np.uint8).tobytes()


class VLUnicodeAtom(PseudoAtom):
    """One ``str`` per VLArray row, stored as UCS-4 code points (uint32)."""

    kind = "vlunicode"
    type = "vlunicode"
    base = UInt32Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the code points of `object_` as a uint32 array."""
        if not isinstance(object_, str):
            raise TypeError(f"object is not a string: {object_!r}")
        encoded = object_.encode(f"utf-32-{sys.byteorder[0]}e", "surrogatepass")
        return np.frombuffer(encoded, dtype=np.uint32)

    def fromarray(self, array: AnyArray) -> str:
        """Return the string whose code points `array` holds (trailing NULs dropped)."""
        if len(array) == 0:
            return ""
        codes = np.ascontiguousarray(array, dtype=np.uint32)
        return str(codes.view(f"U{len(codes)}")[0])


class ObjectAtom(PseudoAtom):
    """One pickled Python object per VLArray row, stored as uint8.

    Reading unpickles, so only read files you trust (as with PyTables).
    """

    kind = "object"
    type = "object"
    base = UInt8Atom()

    def toarray(self, object_: Any) -> AnyArray:
        """Return the pickle of `object_` as a uint8 array."""
        return np.frombuffer(pickle.dumps(object_, pickle.HIGHEST_PROTOCOL), dtype=np.uint8)

    def fromarray(self, array: AnyArray) -> Any:
        """Unpickle `array`; an empty array gives None."""
        if array.size == 0:
            return None
        return pickle.loads(np.ascontiguousarray(array, dtype=np.uint8).tobytes())


__all__ = ["ObjectAtom", "PseudoAtom", "VLStringAtom", "VLUnicodeAtom"]
