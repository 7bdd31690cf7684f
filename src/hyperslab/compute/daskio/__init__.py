"""Dask glue: hyperslab leaves as dask arrays, and dask arrays stored as CArrays.

``arrays`` makes a dask array of an Array, CArray or EArray whose blocks are whole HDF5
chunks (:meth:`~hyperslab.nodes.leaves.array.Array.to_dask`), each task reading its block
through the leaf's fast path; ``store`` writes a dask array into a new CArray whose chunks
its blocks cover whole (:func:`~hyperslab.compute.daskio.store.to_hyperslab`), the blocks
computed by the tasks and written by this one process.  The graphs hold leaves, which
pickle when their file is open read-only (:mod:`hyperslab.nodes.files.pickling`), so they
run on any scheduler, ``dask.distributed`` clusters of processes included.

Dask is optional: it is imported inside the functions here (an ``ImportError`` naming
``pip install dask`` when missing), and nothing below the compute layer imports this
package except the thin, lazily importing ``to_dask`` method of arrays.
"""
