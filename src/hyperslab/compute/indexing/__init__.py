"""Indexed queries: which rows the column indexes give, and reusing what they matched.

The compute side of the index (the storage format is :mod:`hyperslab.nodes.indexes`):
planning which part of a condition indexes can answer (``plan``, with the column
values each comparison matches as intervals from ``intervals``), turning a plan into
candidate rows by searching the indexes (``search``), and the per-table cache of the rows
indexed queries matched on read-only files (``matchcache``).  It may import
:mod:`hyperslab.compute.conditions`, the nodes layer and the layers below.
"""
