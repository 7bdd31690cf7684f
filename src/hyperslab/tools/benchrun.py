"""``hyperslab bench NAME [options]``: run ``python -m bench NAME [options]`` of a checkout.

The benchmarks live in the repository's ``bench/`` folder, not in the installed package, so
this command finds the checkout: first from ``hyperslab.__file__`` (the src layout puts the
package at ``<repo>/src/hyperslab``), then from the current folder and its parents.  The
benchmark runs in a child interpreter with the checkout first on ``sys.path`` and the
caller's current folder unchanged, so relative paths in the options (``--out``) mean what
the caller expects, and with :data:`PROG_ENV` set so that usage lines and errors say
``hyperslab bench NAME`` (``bench.prog_name`` reads it).  ``bench/__main__.py`` checks the
name and lists the known ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import hyperslab

_LAUNCH = (
    "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
    "runpy.run_module('bench', run_name='__main__', alter_sys=True)"
)


PROG_ENV = "HYPERSLAB_BENCH_PROG"
"""The environment variable that tells the benchmarks which command runs them."""

PROG = "hyperslab bench"
"""The command the benchmarks name in their usage lines when this module runs them."""


class BenchNotFoundError(Exception):
    """No ``bench/`` folder was found; the message says where it was looked for."""


def candidate_roots(cwd: Path | None = None) -> list[Path]:
    """Return the folders that may hold ``bench/``, in the order they are tried."""
    cwd = Path.cwd() if cwd is None else cwd
    roots = [Path(hyperslab.__file__).resolve().parents[2], cwd, *cwd.parents]
    return list(dict.fromkeys(roots))


def find_repo_root(cwd: Path | None = None) -> Path:
    """Return the first candidate root with a ``bench/__main__.py``.

    Raises
    ------
    BenchNotFoundError
        Naming the folders that were searched.
    """
    roots = candidate_roots(cwd)
    for root in roots:
        if (root / "bench" / "__main__.py").is_file():
            return root
    searched = ", ".join(str(r) for r in roots[:3])
    raise BenchNotFoundError(
        f"cannot find the benchmarks (a bench/ folder with __main__.py) in {searched} or "
        "above; run this from a hyperslab checkout (installed with pip install -e .)"
    )


def bench_command(root: Path, args: Sequence[str]) -> list[str]:
    """Return the command line that runs ``python -m bench *args`` from ``root``."""
    return [sys.executable, "-c", _LAUNCH, str(root), *args]


def run_bench(args: Sequence[str], cwd: Path | None = None) -> int:
    """Run ``python -m bench *args`` of the checkout found; return its exit code.

    Raises
    ------
    BenchNotFoundError
        If no checkout with ``bench/`` is found.
    """
    root = find_repo_root(cwd)
    try:
        env = {**os.environ, PROG_ENV: PROG}
        return subprocess.run(bench_command(root, args), cwd=cwd, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130
