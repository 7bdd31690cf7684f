"""Creating nodes: groups, Arrays, CArrays, EArrays, VLArrays and Tables (a mixin of File)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hyperslab.codecs.filters import Filters
from hyperslab.errors import NodeError
from hyperslab.nodes.atoms.atom import Atom
from hyperslab.nodes.files.core import FileMixin
from hyperslab.nodes.leaves import create
from hyperslab.nodes.leaves.array import Array, CArray, EArray
from hyperslab.nodes.leaves.leaf import Leaf
from hyperslab.nodes.leaves.vlarray import VLArray
from hyperslab.nodes.leaves.vlcreate import (
    checked_atom,
    checked_chunkshape,
    create_vlarray_dataset,
    default_chunkshape,
)
from hyperslab.nodes.tables.create import create_table
from hyperslab.nodes.tables.table import Table
from hyperslab.nodes.tree.group import Group, warn_if_shadowed
from hyperslab.nodes.tree.naming import check_name, join_path, normalize_path
from hyperslab.nodes.tree.node import Node
from hyperslab.storage import attributes as raw
from hyperslab.storage import tree
from hyperslab.storage.tree import Kind


def _lsd_of(filters: Filters) -> int | None:
    digits = filters.least_significant_digit
    return None if digits is None else int(digits)


class NodeCreation(FileMixin):
    """The ``create_*`` methods of File and what they share (File's part)."""

    def _parent_for_new(self, where: Node | str, createparents: bool) -> Group:
        self._check_writable()
        if isinstance(where, Node) or not createparents:
            return self._as_group(where)
        path = normalize_path(where)
        group: Group = self.root
        for part in [p for p in path.split("/") if p]:
            if part in group:
                group = self._as_group(join_path(group._v_pathname, part))
            else:
                group = self._new_group(group, part, "", None)
        return group

    def _check_new_name(self, parent: Group, name: str) -> str:
        check_name(name)
        if name in parent:
            raise NodeError(
                f"group ``{parent._v_pathname}`` already has a child node named ``{name}``"
            )
        warn_if_shadowed(parent, name)
        return name

    def _new_group(self, parent: Group, name: str, title: str, filters: Filters | None) -> Group:
        self._check_new_name(parent, name)
        gid = tree.create_group(parent._g_h5id, name)
        if self._options.pytables_sys_attrs:
            raw.write_sys_string(gid, "CLASS", "GROUP")
            raw.write_sys_string(gid, "VERSION", "1.0")
            raw.write_sys_string(gid, "TITLE", title)
        # As PyTables: explicit filters are written; otherwise the parent's FILTERS attribute
        # is inherited only when the parent has one.
        if filters is None and raw.has_attribute(parent._g_h5id, "FILTERS"):
            filters = parent._v_filters
        if filters is not None:
            raw.write_int_attribute(gid, "FILTERS", filters._pack(), "int64")
        parent._g_child_added(name, Kind.GROUP)
        group: Group = self._load_child(parent, name)  # type: ignore[assignment]
        self._log_create(group)
        return group

    def create_group(
        self,
        where: Node | str,
        name: str,
        title: str = "",
        filters: Filters | None = None,
        createparents: bool = False,
    ) -> Group:
        """Create a group ``name`` in ``where`` and return it.

        Raises
        ------
        NodeError
            If ``where`` already has a child ``name``.
        FileModeError
            If the file is read-only.
        """
        parent = self._parent_for_new(where, createparents)
        return self._new_group(parent, name, title, filters)

    def _finish_leaf(self, parent: Group, name: str, cls: type[Leaf], dataset: Any) -> Any:
        """Register a just-created leaf and return its node (no re-reading of the file)."""
        parent._g_child_added(name, Kind.DATASET)
        class_value = np.str_(cls._c_classid) if self._options.pytables_sys_attrs else None
        node = cls(self, join_path(parent._v_pathname, name), dataset.dsid, class_value)
        self._cache.add(node)
        self._guard.created(node)
        self._log_create(node)
        return node

    def create_array(
        self,
        where: Node | str,
        name: str,
        obj: Any = None,
        title: str = "",
        byteorder: str | None = None,
        createparents: bool = False,
        atom: Atom | None = None,
        shape: Any = None,
        track_times: bool = True,
    ) -> Array:
        """Create a contiguous :class:`Array` holding ``obj`` (or ``atom`` x ``shape``).

        Raises
        ------
        TypeError
            If neither ``obj`` nor both ``atom`` and ``shape`` are given, or ``obj`` cannot
            be stored.
        """
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        if obj is None:
            if atom is None or shape is None:
                raise TypeError("if the obj parameter is not specified, both the atom and "
                                "shape parameters must be given")
            data, _ = create.as_data(create.filled(atom, shape), atom)
            flavor = "numpy"
        else:
            data, flavor = create.as_data(obj, atom)
        data = data.astype(create.with_byteorder(data.dtype, byteorder), copy=False)
        dataset = create.create_array_dataset(
            parent._g_h5id, name, data, track_times=track_times
        )
        if self._options.pytables_sys_attrs:
            create.write_leaf_sys_attrs(dataset.dsid, Array._c_classid, Array._c_version,
                                        title, flavor=flavor)
        return self._finish_leaf(parent, name, Array, dataset)

    def create_carray(
        self,
        where: Node | str,
        name: str,
        atom: Atom | None = None,
        shape: Any = None,
        title: str = "",
        filters: Filters | None = None,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
        blockshape: Any = None,
    ) -> CArray:
        """Create a chunked, fixed-shape :class:`CArray`, filled from ``obj`` if given.

        ``blockshape`` (Blosc2 compression only) sets the b2nd blocks each chunk is cut
        into: the unit of partial decompression (a selection decodes only the blocks it
        touches).  By default blocks are chosen for the CPU's L2 cache
        (:func:`hyperslab.codecs.blockshape.choose_blockshape`).  Chunks written whole
        (``arr[...] = x`` covering them, ``append``) get these blocks; chunks HDF5's filter
        writes in part get the filter's own.

        Raises
        ------
        TypeError
            If neither ``obj`` nor ``atom`` and ``shape`` are given.
        ValueError
            If ``obj`` disagrees with ``atom``/``shape``, or ``chunkshape`` or
            ``blockshape`` is invalid (nothing is created).
        """
        return self._new_chunked(
            CArray, where, name, atom, shape, obj, title=title, filters=filters,
            chunkshape=chunkshape, byteorder=byteorder, createparents=createparents,
            track_times=track_times, expectedrows=None, blockshape=blockshape,
        )

    def create_earray(
        self,
        where: Node | str,
        name: str,
        atom: Atom | None = None,
        shape: Any = None,
        title: str = "",
        filters: Filters | None = None,
        expectedrows: int | None = None,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
        blockshape: Any = None,
    ) -> EArray:
        """Create an extendable :class:`EArray` (one dimension of ``shape`` must be 0).

        ``blockshape`` is as in :meth:`create_carray`.

        Raises
        ------
        ValueError
            If ``shape`` has no zero dimension or more than one, or ``blockshape`` is
            invalid.
        """
        node = self._new_chunked(
            EArray, where, name, atom, shape, obj, title=title, filters=filters,
            chunkshape=chunkshape, byteorder=byteorder, createparents=createparents,
            track_times=track_times, expectedrows=expectedrows, blockshape=blockshape,
        )
        assert isinstance(node, EArray)
        return node

    def _new_chunked(
        self,
        cls: type[CArray],
        where: Node | str,
        name: str,
        atom: Atom | None,
        shape: Any,
        obj: Any,
        *,
        title: str,
        filters: Filters | None,
        chunkshape: Any,
        byteorder: str | None,
        createparents: bool,
        track_times: bool,
        expectedrows: int | None,
        blockshape: Any = None,
    ) -> CArray:
        """Create a CArray or (``cls`` EArray) an EArray; see their ``create_*`` methods."""
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        extendable = cls is EArray
        atom, shape, data = create.resolve_atom_shape(atom, shape, obj, extendable=extendable)
        extdim = create.extendable_dim(shape) if extendable else None
        if expectedrows is None:
            expectedrows = self._options.expected_rows_earray if extendable else (
                shape[0] if shape else 1)
        filters = filters if filters is not None else parent._v_filters
        chunks = create.chunked_layout(shape, atom, filters, maindim=extdim or 0,
                                       expectedrows=int(expectedrows), chunkshape=chunkshape,
                                       classname=cls._c_classid)
        blocks = create.check_blockshape(blockshape, chunks, filters)
        dataset = create.create_chunked_dataset(
            parent._g_h5id, name, shape=shape, atom=atom, filters=filters, chunkshape=chunks,
            extdim=extdim, byteorder=byteorder, track_times=track_times,
        )
        if self._options.pytables_sys_attrs:
            create.write_leaf_sys_attrs(dataset.dsid, cls._c_classid, cls._c_version, title,
                                        extdim=extdim)
        node: CArray = self._finish_leaf(parent, name, cls, dataset)
        node._lsd = _lsd_of(filters)
        if blocks is not None:
            node._engine.set_blockshape(blocks)
        if data is not None:
            if isinstance(node, EArray):
                node.append(data)
            else:
                node[...] = data
        return node

    def create_table(
        self,
        where: Node | str,
        name: str,
        description: Any = None,
        title: str = "",
        filters: Filters | None = None,
        expectedrows: int = 10_000,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
    ) -> Table:
        """Create a :class:`Table` of rows described by ``description`` (or ``obj``'s dtype).

        ``description`` is an IsDescription subclass or instance, a dict of Cols, a NumPy
        structured dtype or array, or a Description; ``obj`` (a structured array or rows)
        fills the table.  ``expectedrows`` sizes the chunks when ``chunkshape`` is None.

        Raises
        ------
        TypeError
            If neither ``description`` nor ``obj`` describes the rows.
        ValueError
            If ``obj`` does not fit ``description``, or ``chunkshape`` is invalid.
        """
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        return create_table(
            self, parent, name, description, title=title, filters=filters,
            expectedrows=expectedrows, chunkshape=chunkshape, byteorder=byteorder, obj=obj,
            track_times=track_times,
        )

    def create_vlarray(
        self,
        where: Node | str,
        name: str,
        atom: Any = None,
        title: str = "",
        filters: Filters | None = None,
        expectedrows: int | None = None,
        chunkshape: Any = None,
        byteorder: str | None = None,
        createparents: bool = False,
        obj: Any = None,
        track_times: bool = True,
    ) -> VLArray:
        """Create a :class:`VLArray`: rows of any number of ``atom`` elements each.

        ``atom`` may be a pseudo-atom (:class:`VLStringAtom`, :class:`VLUnicodeAtom`,
        :class:`ObjectAtom`): each row is then one bytes, str or pickled object.  ``obj``,
        if given, is appended as the first row (its dtype gives the atom when ``atom`` is
        None).  ``expectedrows`` sizes the chunks when ``chunkshape`` is None.

        Raises
        ------
        ValueError
            If neither ``atom`` nor ``obj`` is given, the atom has a zero dimension, or
            ``chunkshape`` is not of rank 1.
        TypeError
            If ``atom`` disagrees with the dtype of ``obj``.
        """
        if obj is not None:
            data, _flavor = create.as_data(obj, None)
            if atom is not None and atom.dtype != data.dtype:
                raise TypeError("the atom parameter is not consistent with the data type "
                                "of the obj parameter")
            if atom is None:
                atom = Atom.from_dtype(data.dtype)
            obj = data
        atom = checked_atom(atom)
        chunks = checked_chunkshape(chunkshape)
        parent = self._parent_for_new(where, createparents)
        self._check_new_name(parent, name)
        if expectedrows is None:
            expectedrows = self._options.expected_rows_vlarray
        if chunks is None:
            chunks = default_chunkshape(atom, int(expectedrows))
        dataset = create_vlarray_dataset(
            parent._g_h5id, name, atom, title=title,
            filters=filters if filters is not None else parent._v_filters, chunkshape=chunks,
            byteorder=byteorder, track_times=track_times,
            sys_attrs=self._options.pytables_sys_attrs,
        )
        node: VLArray = self._finish_leaf(parent, name, VLArray, dataset)
        node._atom_ = atom
        if obj is not None:
            node.append(obj)
        return node
