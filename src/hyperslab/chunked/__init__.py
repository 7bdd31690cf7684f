"""Chunked layer: the chunk engine, between the nodes and the bytes on disk.

It turns NumPy-style selections into chunks and in-chunk regions (``selection``,
``regions``, ``gather``), reads and writes them bypassing HDF5's filter pipeline where the
chunks allow it (``engine``) and through it otherwise (``access``), checks Blosc2 frames
before HDF5 decodes them (``frameaudit``), picks chunk shapes (``chunkshape``), tiles
datasets for streaming work (``tiles``), hands decoded blocks to such work
(``blockvisit``), runs ordered work in a thread pool (``ordered``)
and refuses results no machine could hold (``allocation``).  It knows nothing of groups,
tables or queries, and may import only :mod:`hyperslab.storage`, :mod:`hyperslab.codecs`
and the shared ``errors``, ``options``, ``_typing`` and ``parameters`` modules.
"""
