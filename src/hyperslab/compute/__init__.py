"""Compute layer: conditions, queries, indexed queries, reductions and expressions.

Query conditions are resolved and compiled with numexpr (``conditions``) and run chunk by
chunk in-kernel (``queries``), with the rows column indexes give where they can
(:mod:`~hyperslab.compute.indexing`); reductions (``reductions``) and ``Expr``
(``expressions``) stream over on-disk arrays tile by tile; :mod:`~hyperslab.compute.daskio`
makes leaves dask arrays and stores dask arrays into CArrays.  It works on nodes and the chunk
engine and never touches h5py.  Inside it, ``queries`` and ``expressions`` sit above
``indexing``, which sits above ``conditions`` and ``reductions`` (an import-linter
contract), with ``daskio`` above them all.
"""
