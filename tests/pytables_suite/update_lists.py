"""Rewrite ``broken_on_pytables.txt`` and ``expected_failures.txt`` from measured outcomes.

Usage (see README.md for producing the two outcome files)::

    python tests/pytables_suite/update_lists.py PYTABLES.json HYPERSLAB.json

* ``broken_on_pytables.txt``: every test PyTables does not pass here (failed, error or
  skipped), so that the comparison is on exactly the tests PyTables passes.
* ``expected_failures.txt``: every test PyTables passes and hyperslab fails, grouped under
  a heading that gives the reason: the category of :data:`REASONS` its error matches, or
  else the error itself.  A test already listed keeps a reason written by hand (one not
  derived from an error).
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from hyperslab_as_tables import read_list  # noqa: E402

REASONS: list[tuple[str, str]] = [
    # (regular expression on the first error line, reason)
    (r"tables\.scripts", "tables.scripts (PyTables' ptdump, pttree and ptrepack modules, "
     "which test_utils imports) is not provided: hyperslab's own commands do their jobs "
     "(hyperslab dump, tree, repack)"),
    (r"will_query_use_indexing|IndexedTableUsage",
     "hyperslab's planner uses indexes for more conditions than PyTables (!=, negations)"),
    (r"flush_rows_to_index|_indexedrows|_unsaved_indexedrows|_v_dtype",
     "PyTables' Table internals for index bookkeeping (flush_rows_to_index, _indexedrows, "
     "_v_dtype) are not provided"),
    (r"is read-only", "system attributes PyTables lets users set or remove are read-only"),
    (r"has no attribute '(get|set|del)_attr'",
     "Leaf.get_attr/set_attr/del_attr are not provided"),
    (r"HS_FLUSHED_ROWS", "hyperslab's flush mark (HS_FLUSHED_ROWS) shows in attribute lists"),
    (r"np\.(int64|str_|float64)\(", "PyTables' reprs show NumPy scalars (np.int64 row counts, "
     "np.str_ titles) where hyperslab shows Python ones"),
    (r"allow_align", "PyTables' tests pass a misspelt allow_align=, which PyTables ignores and "
     "hyperslab refuses on purpose (a misspelt setting would be lost)"),
    (r"nrowsinbuf", "Table/EArray.nrowsinbuf is not provided"),
]
"""Known causes, most specific first; filled in as causes are understood."""


def _outcome(value: object) -> tuple[str, str]:
    if isinstance(value, list | tuple):
        return str(value[0]), str(value[1]) if len(value) > 1 else ""
    return str(value), ""


def _normalized(line: str) -> str:
    line = re.sub(r"/[\w./-]+", "<path>", line)
    line = re.sub(r"0x[0-9a-f]+", "<addr>", line)
    line = re.sub(r"\b\d+\b", "N", line)
    return line[:160]


def reason_of(line: str) -> str:
    """The reason heading for a failure whose first error line is ``line``."""
    for pattern, reason in REASONS:
        if re.search(pattern, line):
            return reason
    return f"fails with: {_normalized(line)}" if line else "fails (no error line)"


def main(pytables_path: str, hyperslab_path: str) -> None:
    pytables = {k: _outcome(v) for k, v in json.loads(Path(pytables_path).read_text()).items()}
    ours = {k: _outcome(v) for k, v in json.loads(Path(hyperslab_path).read_text()).items()}
    old_reasons = read_list(HERE / "expected_failures.txt")
    broken = sorted(k for k, (outcome, _) in pytables.items() if outcome != "passed")
    lines = ["# Tests PyTables 3.11 itself does not pass on this machine (failed, error or",
             "# skipped): deselected, so the comparison is on the tests PyTables passes.", ""]
    by_outcome: dict[str, list[str]] = defaultdict(list)
    for key in broken:
        by_outcome[pytables[key][0]].append(key)
    for outcome, keys in sorted(by_outcome.items()):
        lines.append(f"# {outcome} on PyTables")
        lines.extend(keys)
        lines.append("")
    (HERE / "broken_on_pytables.txt").write_text("\n".join(lines))

    groups: dict[str, list[str]] = defaultdict(list)
    for key, (outcome, line) in ours.items():
        if "::" not in key:  # a module that cannot import: counted if PyTables passes in it
            if not any(k.startswith(key + "::") and o == "passed"
                       for k, (o, _) in pytables.items()):
                continue
        elif pytables.get(key, ("",))[0] != "passed":
            continue
        if outcome in ("failed", "error"):
            kept = old_reasons.get(key, "")
            # a reason written by hand stays; one derived from an error is derived again
            written = kept and not kept.startswith(("fails with:", "fails (no error"))
            groups[kept if written else reason_of(line)].append(key)
        elif outcome == "xfailed":
            groups[old_reasons.get(key, "still failing")].append(key)
    out = ["# Tests PyTables passes and hyperslab does not (yet), under their reason.",
           "# They run as xfail(strict=True): remove the lines your change makes pass.", ""]
    for reason, keys in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        out.append(f"# {reason} ({len(keys)})")
        out.extend(sorted(keys))
        out.append("")
    (HERE / "expected_failures.txt").write_text("\n".join(out))
    passed_pytables = sum(1 for o, _ in pytables.values() if o == "passed")
    passed_ours = sum(1 for k, (o, _) in ours.items()
                      if o == "passed" and pytables.get(k, ("",))[0] == "passed")
    print(f"PyTables passes {passed_pytables} tests; hyperslab passes {passed_ours} of them "
          f"({100 * passed_ours / max(passed_pytables, 1):.1f}%); "
          f"{sum(len(v) for v in groups.values())} expected failures in {len(groups)} groups")


if __name__ == "__main__":
    main(*sys.argv[1:3])
