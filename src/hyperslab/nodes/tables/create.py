"""Creating tables: descriptions from every accepted input, layout, filters, attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hyperslab._typing import AnyArray, Shape
from hyperslab.chunked.chunkshape import compute_chunkshape, validate_chunkshape
from hyperslab.codecs.filters import Filters
from hyperslab.codecs.pipeline import filters_to_pipeline
from hyperslab.nodes.atoms.description import (
    Description,
    IsDescription,
    default_row,
    descr_from_dtype,
    flat_columns,
)
from hyperslab.nodes.atoms.tablelayout import storage_spec
from hyperslab.nodes.leaves.create import check_pipeline_available, write_leaf_sys_attrs
from hyperslab.nodes.tables.recordio import encode_time64_fields, time64_paths
from hyperslab.nodes.tables.table import Table
from hyperslab.storage import attributes as raw
from hyperslab.storage.create import create_table_dataset

if TYPE_CHECKING:
    from hyperslab.nodes.tree.group import Group
    from hyperslab.nodes.tree.owner import NodeOwner


def as_description(description: Any, ptparams: Any = None) -> Description:
    """A :class:`Description` from any input ``create_table`` accepts (``ptparams``: the
    file's options, whose ``allow_padding`` says whether a dtype's padding is kept).

    Raises
    ------
    TypeError
        For anything that does not describe a row type.
    """
    if isinstance(description, Description):
        return description
    if isinstance(description, np.ndarray):
        description = description.dtype
    if isinstance(description, np.dtype):
        if description.names is None:
            raise TypeError(f"a table description needs a structured dtype, not {description}")
        return descr_from_dtype(description, ptparams)[0]
    if isinstance(description, type) and issubclass(description, IsDescription):
        return Description(description.columns, ptparams=ptparams)
    if isinstance(description, IsDescription):
        return Description(description.columns, ptparams=ptparams)
    if isinstance(description, dict):
        return Description(description, ptparams=ptparams)
    raise TypeError(
        f"the description of a table must be an IsDescription subclass or instance, a dict "
        f"of Cols, a NumPy structured dtype or array, or a Description; got {description!r:.80}"
    )


def _obj_records(obj: Any, descr: Description | None, ptparams: Any = None
                 ) -> tuple[AnyArray, Description]:
    """``obj`` as a structured array, and the description (from ``obj`` if not given)."""
    if descr is None:
        array = np.asarray(obj)
        if array.dtype.names is None:
            raise TypeError(
                f"obj must be a structured array (or convertible to one) when no description "
                f"is given; got dtype {array.dtype}"
            )
        return (array.reshape(-1) if array.ndim == 0 else array,
                as_description(array.dtype, ptparams))
    dtype = descr._v_dtype
    try:
        array = np.asarray(obj, dtype=dtype) if not (
            isinstance(obj, np.ndarray) and obj.dtype == dtype) else obj
    except (ValueError, TypeError) as exc:
        raise ValueError(f"obj does not fit the table description ({dtype}): {exc}") from exc
    return array.reshape(-1) if array.ndim == 0 else array, descr


def _chunkshape(chunkshape: Any, rowsize: int, expectedrows: int, filters: Filters) -> Shape:
    if chunkshape is not None:
        if isinstance(chunkshape, (int, np.integer)):
            chunkshape = (int(chunkshape),)
        return validate_chunkshape(chunkshape, (1,))
    return compute_chunkshape(
        (0,), rowsize, maindim=0, expectedrows=int(expectedrows),
        complib=filters.complib if filters.complevel else None, classname="TABLE",
    )


def _write_table_attrs(dsid: Any, descr: Description, title: str) -> None:
    """PyTables' TABLE attributes: CLASS, VERSION, TITLE, NROWS, FIELD_<i>_NAME/_FILL."""
    write_leaf_sys_attrs(dsid, Table._c_classid, Table._c_version, title)
    for i, name in enumerate(descr._v_names):
        raw.write_sys_string(dsid, f"FIELD_{i}_NAME", name)
    for j, col in enumerate(flat_columns(descr)):
        raw.write_attribute(dsid, f"FIELD_{j}_FILL", col.dflt)
    raw.write_int_attribute(dsid, "NROWS", 0, "int64")


def _write_column_attrs(table: Table, descr: Description) -> None:
    """The ``attrs`` of the description's columns, as PyTables stores them when it makes
    a table's columns (table attributes ``FIELD_<pos>_ATTR_<name>``)."""
    for col in flat_columns(descr):
        for name, value in col._v_col_attrs.items():
            table.attrs[f"FIELD_{col._v_pos}_ATTR_{name}"] = value


def create_table(
    file: NodeOwner,
    parent: Group,
    name: str,
    description: Any,
    *,
    title: str,
    filters: Filters | None,
    expectedrows: int,
    chunkshape: Any,
    byteorder: str | None,
    obj: Any,
    track_times: bool,
) -> Table:
    """Create table ``name`` in ``parent``; see :meth:`File.create_table`."""
    records: AnyArray | None = None
    if isinstance(description, np.ndarray) and obj is None:
        obj, description = description, None
    options = file._options
    descr = as_description(description, options) if description is not None else None
    if obj is not None:
        records, descr = _obj_records(obj, descr, options)
    if descr is None:
        raise TypeError("create_table needs a description or an obj to take it from")
    if expectedrows is None or expectedrows < 0:
        raise ValueError(f"expectedrows must be a non-negative int, not {expectedrows!r}")
    dtype, time_fields, enums = storage_spec(descr, byteorder)
    filters = filters if filters is not None else parent._v_filters
    chunks = _chunkshape(chunkshape, dtype.itemsize, expectedrows, filters)
    check_pipeline_available(filters)
    pipeline = [
        (step.filter_id, step.flags, step.cd_values)
        for step in filters_to_pipeline(filters, dtype.itemsize, chunks, classname="TABLE")
    ]
    fill = np.asarray(default_row(descr)).astype(dtype)
    encode_time64_fields(fill, time64_paths(dtype, time_fields))
    dataset = create_table_dataset(
        parent._g_h5id, name, dtype=dtype, time_fields=time_fields, enums=enums, chunks=chunks,
        pipeline=pipeline, fill_row=fill, track_times=track_times, byteorder=byteorder,
    )
    if file._options.pytables_sys_attrs:
        _write_table_attrs(dataset.dsid, descr, title)
    table: Table = file._finish_leaf(parent, name, Table, dataset)
    table._description_ = descr
    table._expectedrows = int(expectedrows)
    _write_column_attrs(table, descr)
    if records is not None and len(records):
        table.append(records)
        table.flush()
    return table


__all__ = ["as_description", "create_table"]
