"""The ``nodes`` benchmark: opening and browsing files with many nodes.

This reproduces "Optimization of file openings in PyTables" (Altet & Vilata, 2005), scaled to
this machine, with hyperslab, PyTables and h5py as rivals.  The files are those of PyTables'
``bench/create-large-number-of-objects.py``: ``nlevels`` levels; on each level ``ngroups``
groups ``group0``, ``group1``... and ``ndatasets`` small arrays ``array0``... per group (the
arrays of a level go into the level's own group and into all of its ``group<j>`` but the last,
which stays empty), and a group ``ngroup<k>`` that holds the next level.  So
``/ngroup0/ngroup1/array9`` always exists.

=========  =======  =======  =========  ======================================
file       levels   groups   datasets   nodes
=========  =======  =======  =========  ======================================
LR         3        1        1000       3000 arrays, 6 groups (+ root)
MR         3        10       100        3000 arrays, 33 groups (+ root)
HR         30       10       10         3000 arrays, 330 groups (+ root)
MR100k     10       100      100        100,000 arrays, 1010 groups (+ root)
=========  =======  =======  =========  ======================================

MR100k keeps MR's group/dataset ratio (0.01) for 100,000 arrays.  Every array is the paper's
``numpy.array([-1, 2, 4], numpy.int16)``.  Each use case of the paper runs in a fresh
process; its time covers opening, the work and closing (``only_open``: opening only).

Run ``python -m bench nodes --help`` (or ``hyperslab bench nodes --help``) for the options.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench import prog_name
from bench.harness import (
    HYPERSLAB_MODULES,
    BenchmarkError,
    BenchmarkSpec,
    Case,
    DataInfo,
    Rival,
    Timer,
    add_common_arguments,
    comma_list,
    pick,
    print_progress,
    run_and_report,
    with_thread_option,
)

LAYOUT_VERSION = 1
"""Bump when the files' layout or content changes: cached files are then rewritten."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """The shape of a file's hierarchy (see the module docstring)."""

    name: str
    nlevels: int
    ngroups: int
    ndatasets: int

    @property
    def narrays(self) -> int:
        """Number of arrays in the file."""
        return self.nlevels * self.ngroups * self.ndatasets

    @property
    def ngroups_total(self) -> int:
        """Number of groups in the file, root excluded."""
        return self.nlevels * (self.ngroups + 1)

    @property
    def nnodes(self) -> int:
        """Number of nodes a full walk visits (root included)."""
        return self.narrays + self.ngroups_total + 1

    @property
    def description(self) -> str:
        """One line for the reports."""
        return (
            f"{self.nlevels} levels x {self.ngroups} groups x {self.ndatasets} arrays: "
            f"{self.narrays:,} arrays, {self.ngroups_total:,} groups + root"
        )


LAYOUTS = {
    layout.name: layout
    for layout in (
        Layout("LR", 3, 1, 1000),
        Layout("MR", 3, 10, 100),
        Layout("HR", 30, 10, 10),
        Layout("MR100k", 10, 100, 100),
    )
}
QUICK_FILES = ("MR",)
"""The file of ``--quick`` (3000 arrays in 33 groups): well under a minute."""

CASES = (
    "open_close",
    "only_open",
    "full_browse",
    "partial_browse",
    "full_browse_attrs",
    "partial_browse_attrs",
    "full_browse_meta",
    "partial_browse_meta",
    "open_group",
    "open_leaf",
)

RIVALS = (
    Rival("hyperslab", HYPERSLAB_MODULES, probe="hyperslab:open_file"),
    Rival("PyTables", ("tables",)),
    Rival("h5py", ("h5py",)),
)
PYTABLES_LIKE = {"hyperslab": "hyperslab", "PyTables": "tables"}


# ----------------------------------------------------------------------------- the files


def writer_name() -> str:
    """Return the library that writes the files: hyperslab once it can, else PyTables."""
    try:
        hyperslab = importlib.import_module("hyperslab")
    except Exception:  # not installed, or broken while it is being written
        return "PyTables"
    return "hyperslab" if hasattr(hyperslab, "open_file") else "PyTables"


def create_file(path: Path, layout: Layout, writer: str) -> None:
    """Write the file of ``layout`` to ``path`` with ``writer`` (hyperslab or PyTables).

    The loop is the one of PyTables' ``create-large-number-of-objects.py`` (see the module
    docstring); both writers share the PyTables API.
    """
    import numpy as np

    lib: Any = importlib.import_module(PYTABLES_LIKE[writer])
    data = np.array([-1, 2, 4], dtype=np.int16)
    with lib.open_file(str(path), mode="w") as f:
        level = f.root  # the group of the current level
        target = f.root  # where the next arrays go
        for k in range(layout.nlevels):
            for j in range(layout.ngroups):
                for i in range(layout.ndatasets):
                    f.create_array(target, f"array{i}", data, "Signed short array")
                target = f.create_group(level, f"group{j}")
            level = target = f.create_group(level, f"ngroup{k}")


def cache_dir(writer: str, root: Path | None = None) -> Path:
    """Folder of the cached files: ``<tmp>/hyperslab-bench-nodes/v<LAYOUT_VERSION>-<writer>``."""
    base = Path(tempfile.gettempdir()) / "hyperslab-bench-nodes" if root is None else root
    return base / f"v{LAYOUT_VERSION}-{writer}"


def ensure_file(folder: Path, layout: Layout, writer: str, progress: Any = print_progress) -> Path:
    """Return the path of the file of ``layout`` in ``folder``, writing it if not there yet.

    The file is written under a temporary name and renamed when complete, so an interrupted
    run never leaves a truncated file that a later run would reuse.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{layout.name}.h5"
    if not path.exists():
        progress(f"writing {path} ({layout.description}) with {writer}...")
        t0 = time.perf_counter()
        partial = path.with_suffix(".h5.partial")
        create_file(partial, layout, writer)
        os.replace(partial, path)
        progress(f"  done in {time.perf_counter() - t0:.1f} s, {path.stat().st_size:,} bytes")
    return path


def ensure_files(
    names: Iterable[str], folder: Path, writer: str, progress: Any = print_progress
) -> dict[str, Path]:
    """Return ``{name: path}`` of the named files (see :data:`LAYOUTS`) in ``folder``."""
    return {name: ensure_file(folder, LAYOUTS[name], writer, progress) for name in names}


# ----------------------------------------------------------------------------- the cases


def _open_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    slots = params.get("node_cache_slots")
    return {} if slots is None else {"node_cache_slots": slots}


def _pytables_case(lib: Any, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """The paper's code, for PyTables and for hyperslab (which shares its API)."""
    path, kw = params["path"], _open_kwargs(params)
    if case == "only_open":
        with timer:
            fileh = lib.open_file(path, **kw)
        fileh.close()
        return "opened"
    with timer:
        fileh = lib.open_file(path, **kw)
        if case == "open_close":
            check: Any = "opened"
        elif case == "full_browse":
            check = sum(1 for _ in fileh)
        elif case == "partial_browse":
            check = sum(1 for _ in fileh.root.ngroup0.ngroup1)
        elif case == "full_browse_attrs":
            check = Counter(node._v_attrs.CLASS for node in fileh)
        elif case == "partial_browse_attrs":
            check = Counter(node._v_attrs.CLASS for node in fileh.root.ngroup0.ngroup1)
        elif case == "full_browse_meta":
            check = Counter(_node_meta(lib, node) for node in fileh)
        elif case == "partial_browse_meta":
            check = Counter(_node_meta(lib, node) for node in fileh.root.ngroup0.ngroup1)
        elif case == "open_group":
            check = fileh.root.ngroup0.ngroup1._v_attrs.CLASS
        elif case == "open_leaf":
            check = fileh.root.ngroup0.ngroup1.array9._v_attrs.CLASS
        else:
            fileh.close()
            raise BenchmarkError(f"unknown case {case!r}")
        fileh.close()
    return check


def _node_meta(lib: Any, node: Any) -> str:
    """What every walker can say of a node: ``group``, or a leaf's shape and dtype (which
    hyperslab reads only when asked, and PyTables when it builds the node)."""
    if isinstance(node, lib.Group):
        return "group"
    return f"{tuple(int(n) for n in node.shape)} {node.dtype}"


def _h5py_meta(obj: Any) -> str:
    import h5py

    if isinstance(obj, h5py.Group):
        return "group"
    return f"{tuple(int(n) for n in obj.shape)} {obj.dtype}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _h5py_browse(f: Any, case: str) -> Any:
    """The h5py equivalents of the browsing cases (root counted, as PyTables walks it)."""
    if case == "full_browse":
        count = [1]
        f.visititems(lambda _name, _obj: count.__setitem__(0, count[0] + 1))
        return count[0]
    if case == "full_browse_attrs":
        classes = Counter([_text(f.attrs["CLASS"])])
        f.visititems(lambda _name, obj: classes.update([_text(obj.attrs["CLASS"])]))
        return classes
    if case == "full_browse_meta":
        metas = Counter([_h5py_meta(f)])
        f.visititems(lambda _name, obj: metas.update([_h5py_meta(obj)]))
        return metas
    group = f["/ngroup0/ngroup1"]
    if case == "partial_browse":
        return sum(1 for _ in group.values())
    if case == "partial_browse_meta":
        return Counter(_h5py_meta(obj) for obj in group.values())
    return Counter(_text(obj.attrs["CLASS"]) for obj in group.values())


def _h5py_case(case: str, params: dict[str, Any], timer: Timer) -> Any:
    import h5py

    path = params["path"]
    if case not in CASES:
        raise BenchmarkError(f"unknown case {case!r}")
    if case == "only_open":
        with timer:
            f = h5py.File(path, "r")
        f.close()
        return "opened"
    with timer:
        f = h5py.File(path, "r")
        if case == "open_close":
            check: Any = "opened"
        elif case == "open_group":
            check = _text(f["/ngroup0/ngroup1"].attrs["CLASS"])
        elif case == "open_leaf":
            check = _text(f["/ngroup0/ngroup1/array9"].attrs["CLASS"])
        else:
            check = _h5py_browse(f, case)
        f.close()
    return check


def run_case(rival: str, case: str, params: dict[str, Any], timer: Timer) -> Any:
    """Run one use case of the paper for one rival (the harness's target function).

    Parameters
    ----------
    rival : str
        ``"hyperslab"``, ``"PyTables"`` or ``"h5py"``.
    case : str
        One of :data:`CASES`.
    params : dict
        ``path`` of the file, optional ``node_cache_slots`` (hyperslab and PyTables).
    timer : Timer
        Times the case.

    Returns
    -------
    object
        What the case saw, compared across rivals: a node count, the count of each CLASS
        value, the CLASS read, or ``"opened"``.
    """
    if rival == "h5py":
        return _h5py_case(case, params, timer)
    if rival not in PYTABLES_LIKE:
        raise BenchmarkError(f"unknown rival {rival!r}")
    lib = importlib.import_module(PYTABLES_LIKE[rival])
    return _pytables_case(lib, case, params, timer)


# ----------------------------------------------------------------------------- the CLI


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m bench nodes``."""
    parser = argparse.ArgumentParser(
        prog=prog_name("nodes"),
        description="Open and browse files with many nodes: hyperslab vs PyTables vs h5py "
        "(the use cases of the PyTables node-cache paper, each run in a fresh process).",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--quick", action="store_true", help="2 repeats, only the 3000-node MR file"
    )
    parser.add_argument(
        "--cases",
        type=comma_list,
        default=None,
        help=f"cases to run (default all: {','.join(CASES)})",
    )
    parser.add_argument(
        "--files", type=comma_list, default=None, help=f"files (default all: {','.join(LAYOUTS)})"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the files for the next run (default: delete)"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the PNG")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the files are cached (default: /tmp)"
    )
    parser.add_argument(
        "--node-cache-slots",
        type=int,
        default=None,
        help="NODE_CACHE_SLOTS for hyperslab and PyTables (default: their own)",
    )
    return parser


def build_spec(
    files: dict[str, Path],
    cases: list[str],
    rivals: list[str],
    baseline: str,
    writer: str,
    node_cache_slots: int | None = None,
) -> BenchmarkSpec:
    """Return the benchmark description for the given files, cases and rivals."""
    params_extra = {} if node_cache_slots is None else {"node_cache_slots": node_cache_slots}
    spec_cases = [
        Case(case, name, {"path": str(path), **params_extra})
        for name, path in files.items()
        for case in cases
    ]
    data = [
        DataInfo(name, LAYOUTS[name].description, path.stat().st_size)
        for name, path in files.items()
    ]
    slots = "their defaults" if node_cache_slots is None else str(node_cache_slots)
    notes = [
        "Files: the layouts of PyTables' create-large-number-of-objects.py (LR, MR, HR: "
        "3000 arrays each; MR100k: MR's group/dataset ratio with 100,000 arrays), every "
        f"array int16 [-1, 2, 4], written by {writer}.",
        "Cases (the paper's): time covers open + work + close (only_open: open only). "
        "Browsing is `for node in f` / `for node in f.root.ngroup0.ngroup1` in hyperslab "
        "and PyTables, `visititems` / `group.values()` in h5py; *_attrs cases read "
        f"`CLASS` of every node. Node cache slots: {slots}.",
    ]
    return BenchmarkSpec(
        name="nodes",
        title="opening and browsing files with many nodes",
        target="bench.nodes:run_case",
        rivals=[r for r in RIVALS if r.name in rivals],
        cases=spec_cases,
        fresh_process=True,
        baseline=baseline,
        data=data,
        notes=notes,
    )


@with_thread_option
def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, or 1/2 on failure / bad options."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        files = pick(list(LAYOUTS), args.files or (QUICK_FILES if args.quick else None), "file")
        cases = pick(CASES, args.cases, "case")
        rivals = pick([r.name for r in RIVALS], args.rivals, "rival")
        wanted = args.baseline or ("hyperslab" if "hyperslab" in rivals else rivals[0])
        baseline = pick(rivals, [wanted], "baseline")[0]
    except BenchmarkError as exc:
        parser.error(str(exc))
    repeat = args.repeat or (2 if args.quick else 5)
    writer = writer_name()
    folder = cache_dir(writer, args.workdir)
    try:
        paths = ensure_files(files, folder, writer)
        spec = build_spec(paths, cases, rivals, baseline, writer, args.node_cache_slots)
        return run_and_report(spec, repeat, args.out, timeout=args.timeout,
                              plot=not args.no_plot)
    finally:
        if args.keep:
            print_progress(f"kept the files in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            if args.workdir is None:  # our folder in /tmp, if no other version is cached
                with contextlib.suppress(OSError):
                    folder.parent.rmdir()


if __name__ == "__main__":
    sys.exit(main())
