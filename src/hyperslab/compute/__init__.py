"""Compute layer: expressions, queries, reductions and indexes (later issues).

It must not touch h5py; it works on nodes and the chunk engine.
"""
