"""``python -m bench NAME [options]``: run the benchmark ``bench/NAME.py``."""

from __future__ import annotations

import importlib
import sys

from bench import benchmark_names, prog_name

ALIASES = {"dask": "daskbench"}
"""Other names of benchmarks (``dask``, as the issues call it, is ``daskbench``: a module
``bench/dask.py`` would shadow the dask library)."""


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark by name and return its exit code.

    Parameters
    ----------
    argv : list of str, optional
        ``[NAME, *options]``; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        The benchmark's exit code, or 2 for a missing or unknown name.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    names = benchmark_names()
    if not args or args[0] in ("-h", "--help"):
        print(f"usage: {prog_name()} NAME [options]  (NAME --help for the options)")
        print(f"known benchmarks: {', '.join(names)} (dask: daskbench)")
        return 0 if args else 2
    name, rest = ALIASES.get(args[0], args[0]), args[1:]
    if name not in names:
        print(
            f"{prog_name()}: error: unknown benchmark {name!r}; "
            f"known benchmarks: {', '.join(names)}",
            file=sys.stderr,
        )
        return 2
    module = importlib.import_module(f"bench.{name}")
    result: int = module.main(rest)
    return result


if __name__ == "__main__":
    sys.exit(main())
