"""Storage layer: everything hyperslab asks of HDF5, and the only code that touches h5py.

It may import h5py, hdf5plugin (whose import registers the Blosc, Blosc2... HDF5 filters),
NumPy and the standard library, and of hyperslab only :mod:`hyperslab.errors`,
:mod:`hyperslab._typing`, :mod:`hyperslab.options` and :mod:`hyperslab.parameters`: never
codecs, chunked, nodes, compute or tools, never PyTables (the import-linter contracts in
``pyproject.toml``).  h5py's builtin exceptions are turned into ours here, once.  Its
modules import one another without cycles:

* files and the hierarchy: :mod:`~hyperslab.storage.h5file` opens files in PyTables' modes,
  with the drivers and user blocks of :mod:`~hyperslab.storage.drivers`;
  :mod:`~hyperslab.storage.tree` lists, opens, links, moves and deletes objects by their
  low-level ids; :mod:`~hyperslab.storage.superblock` reads the end of allocation that raw
  reads stay within;
* attributes: :mod:`~hyperslab.storage.attributes` reads and writes them exactly as PyTables
  does (the public API), :mod:`~hyperslab.storage.attrread` decodes the value an open
  attribute holds, the private :mod:`~hyperslab.storage._attrtypes` maps their HDF5 types
  to NumPy and back;
* datasets: :mod:`~hyperslab.storage.create` makes them (arrays and tables);
  :mod:`~hyperslab.storage.datasetinfo` says what one is (types, shape, chunks, pipeline,
  fill value) and :mod:`~hyperslab.storage.datasets` moves its data (``Dataset``: reads,
  writes, rows, extents, raw chunks); :mod:`~hyperslab.storage.compound` holds the layout
  and raw-layout I/O of compound (table) records; :mod:`~hyperslab.storage.extent` checks
  selections against what HDF5 can address; :mod:`~hyperslab.storage.vectors` reads 1-D
  datasets by ranges with the fewest HDF5 calls;
  :mod:`~hyperslab.storage.vlen` creates, reads and writes variable-length datasets
  (PyTables' VLArrays);
* raw chunks: :mod:`~hyperslab.storage.chunkindex` lists where every chunk is stored;
  :mod:`~hyperslab.storage.rawchunks` keeps that index never stale and reads and writes
  single chunks past the filter pipeline, with the closures of
  :mod:`~hyperslab.storage.fastlookups`; :mod:`~hyperslab.storage.preads` reads chunks of
  read-only files with ``os.pread`` (no HDF5 call), those read in part into buffers that
  :mod:`~hyperslab.storage.recycled` hands out again once done with;
  :mod:`~hyperslab.storage.spans` reads the same number of bytes at many file addresses at
  once; :mod:`~hyperslab.storage.chunktree` reads a read-only file's chunk index from
  HDF5's version 1 chunk B-tree, a tenth of a ``chunk_iter`` pass.
"""
