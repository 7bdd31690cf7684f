"""Tools layer: the ``hyperslab`` command line (``ls``, ``demo``, ``bench``).

The top layer: it uses the public API of :mod:`hyperslab` and runs the benchmarks of a
checkout's ``bench/`` package; nothing in the library imports it.
"""
