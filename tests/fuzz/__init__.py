"""Fuzzing hyperslab's readers with damaged files, h5py + hdf5plugin as the oracle.

``tests/test_fuzz.py`` runs a bounded, seeded campaign in ``make test``; ``make fuzz``
runs a long one (``FUZZ_SECONDS``, ``FUZZ_SEED``); ``python -m fuzz replay BASE SPEC``
replays one mutant (every failure prints that command).

How it works
------------
* :mod:`.corpus` writes small base files (Blosc2 b2nd and plain frames from hyperslab
  and from hdf5plugin's filter, zlib + shuffle, unfiltered and contiguous datasets,
  N-d with partial edge chunks; a Blosc2 table indexed by hyperslab, a zlib table written
  and indexed by PyTables; attributes of every kind on groups and leaves).
* :mod:`.layout` finds the byte ranges of each mutation kind: chunks (with h5py's
  ``get_chunk_info``) cut into Blosc2 frame header, ``b2nd`` metalayer, inner chunk
  header and data; index chunks; superblock, object headers, B-trees, heaps,
  symbol-table nodes; anywhere; truncation.
* :mod:`.mutate` draws one mutation per mutant from ``default_rng([seed, number])`` and
  writes it down as byte edits, so it replays on a freshly built base.
* :mod:`.probes` lists the read paths (open, walk, attrs, info, read, slices, steps,
  negative steps, items, points, row iteration, columns, queries, indexed queries,
  sorted reads, reductions and ``Expr``, direct chunk reads, close), each read by
  hyperslab and by h5py (NumPy semantics on h5py's reads).
* :mod:`.worker` is the child process: h5py reads the mutant first, then hyperslab, each
  probe in its own ``try`` (h5py's ``open`` opens the root group as well, as
  ``open_file`` does: ``h5py.File`` alone does not read its object header, and
  nothing in a file whose root group cannot be opened reads in either library);
  :mod:`.pool` keeps two of them busy, with a timeout per read, and replaces a worker
  that crashes or hangs; :mod:`.campaign` drives a run and counts.
* :mod:`.verdict` judges each read.

Failures
--------
A read fails the test if the worker crashes or hangs on it (unless h5py crashed or hung
on the same read: HDF5's own fault, counted apart), if hyperslab raises an exception
type outside the list below, if hyperslab returns values that differ from h5py's
(``wrong``) or, where h5py reports damage, from the undamaged file's (``wrong-silent``:
returning what was written is always right, anything else is garbage), or if hyperslab
refuses a read that h5py answers with exactly the undamaged file's data (``refusal``).

Refusals are failures because the data came out right for another reader: the issue
asks hyperslab to accept what C-Blosc2 and HDF5 accept.  A refusal where h5py's answer
differs from the undamaged file (the damage decodes silently in the filter, or HDF5
returns fill values for a chunk it cannot find) is counted as ``refusal-damaged`` and
does not fail: raising is then at least as good as h5py's answer.  A refused reduction is
always ``refusal-damaged``: h5py's reduction equal to the undamaged file's does not show
that it decoded the data right (a NaN absorbs every value, sums coincide); the read paths
of the same node, which compare every value, judge the refusal.  Indexed queries and
sorted reads also depend on the index, which h5py does not use: their oracle reads the
table and the whole index with h5py; if that fails, hyperslab may raise; if the
mutation changed what they hold (the index no longer matches the table, or its values
changed), an answer that differs from a scan is ``stale-index``, counted, not a failure.

Allowed exceptions (:func:`.verdict.allowed`)
---------------------------------------------
* every exception class of :mod:`hyperslab.errors` (``HDF5ExtError`` for damage HDF5 or
  hyperslab detects, ``NoSuchNodeError`` for a node whose link is damaged,
  ``FiltersError``/``FilterNotAvailableError`` for a damaged filter pipeline,
  ``ChunkError`` and its subclasses for direct chunk reads, ...): errors.py says h5py's
  builtins are translated into these at the storage boundary;
* ``MemoryError``: an impossible size (a damaged extent or chunk size) refused before
  anything is allocated, as h5py does;
* ``OSError`` from ``open_file`` only: a file that cannot be opened;
* ``IndexError`` where h5py's read of the same selection also raises ``IndexError`` (a
  damaged extent put the selection out of range), PyTables' documented answer, and from
  ``read_chunk``/``chunk_info`` for coordinates outside the (damaged) shape, as they
  document (h5py's direct chunk read does not check the shape: not a refusal);
* ``ValueError`` from a reduction where NumPy raises it on h5py's data too (the minimum
  of an empty array: a damaged extent of 0);
* ``ValueError`` from ``read_sorted`` when the column has no usable full index (a damaged
  index group hides it): PyTables documents it;
* ``TypeError`` from a reduction or ``Expr`` of an operand that is not numeric (raised by
  ``compute.reductions``/``compute.expressions``' own checks): documented there;
* ``KeyError`` from ``row['name']``, ``AttributeError`` from ``table.cols.name`` and
  ``NameError`` from a condition naming a column the (damaged) description no longer has,
  where h5py's records lack it too: PyTables' answers to unknown names;
* ``NotImplementedError`` from reading an ``UnImplemented`` leaf (a damaged ``CLASS``):
  documented by ``UnImplemented.read``.

Everything else (``ValueError``, ``TypeError``, ``RuntimeError``, ``KeyError``,
``AttributeError``, ``RecursionError``, ``UnicodeDecodeError``, an ``OSError`` while
reading, blosc2's or the codecs' ``FrameError``) is a raw exception escaping.

Comparisons
-----------
NaN equals NaN; sums, means and standard deviations compare to a relative 1e-6 (2e-4
in float32, 2e-2 in float16); fixed-length strings compare up to their first NUL (h5py's
conversion of HDF5's NULLTERM strings cuts there, PyTables and hyperslab return the raw
bytes), and the oracle evaluates query conditions on the raw bytes, as PyTables does;
h5py's ``Empty`` string attributes equal ``''`` (what PyTables reads); byte order is
ignored.
"""
