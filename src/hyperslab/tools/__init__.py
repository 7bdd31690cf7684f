"""Tools layer: the ``hyperslab`` command line (``ls``, ``dump``, ``tree``, ``demo``,
``bench``; ``python -m hyperslab`` runs it too).

The top layer: it uses the public API of :mod:`hyperslab` (and of the storage layer only
:func:`hyperslab.storage.tree.object_address`, which tells hard links apart) and runs the
benchmarks of a checkout's ``bench/`` package; nothing in the library imports it.
:mod:`~hyperslab.tools.cli` parses the arguments; :mod:`~hyperslab.tools.ls` lists nodes
and holds what the other commands share with it (``FILE:/node``, opening, walking,
formatting, ratios); :mod:`~hyperslab.tools.dump` and :mod:`~hyperslab.tools.tree` are
PyTables' ``ptdump`` and ``pttree``; :mod:`~hyperslab.tools.demo` and
:mod:`~hyperslab.tools.benchrun` are ``demo`` and ``bench``.
"""
