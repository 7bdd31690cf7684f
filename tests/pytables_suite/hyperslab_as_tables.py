"""pytest plugin: PyTables' own test suite, run against hyperslab.

Loaded by ``tests/pytables_suite/pytest.ini``.  Before collection it calls
:func:`hyperslab.install_as_tables`, so that PyTables' test modules (collected with
``--pyargs tables.tests tables.nodes.tests`` from the installed PyTables wheel, unmodified)
import hyperslab as ``tables``.  Then:

* only the tests PyTables' own ``tables.tests.test_suite.suite()`` runs in light mode are
  kept (pytest alone would collect heavy variants and base classes too);
* tests listed in ``broken_on_pytables.txt`` are deselected: they fail on PyTables itself
  here, so they say nothing about hyperslab;
* tests listed in ``expected_failures.txt`` are marked ``xfail(strict=True)`` with the reason
  given there: the list may only shrink, since a listed test that passes fails the run.

Options: ``--against-pytables`` runs the same tests on PyTables itself (no install, lists
not applied, same light-mode selection), to measure what passes there; ``--outcomes PATH``
writes every test's outcome and the first line of its error as JSON
(``{"test_array.py::BasicTestCase::test00_char": ["passed", ""], ...}``).
"""

from __future__ import annotations

import ast
import json
import re
import unittest
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
EXPECTED_FAILURES = HERE / "expected_failures.txt"
BROKEN_ON_PYTABLES = HERE / "broken_on_pytables.txt"


def read_list(path: Path) -> dict[str, str]:
    """``test key -> reason`` from a list file (``KEY  # reason`` lines, ``#`` comments)."""
    entries: dict[str, str] = {}
    if not path.exists():
        return entries
    reason = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            # a heading comment gives the reason for what follows (its count left out)
            reason = re.sub(r" \(\d+\)$", "", line.lstrip("# "))
            continue
        key, _, own = line.partition("  # ")
        entries[key.strip()] = own.strip() or reason
    return entries


def key_of(nodeid: str) -> str:
    """The test's key: its module's file name, class and name (PyTables' test module names
    are unique across ``tables.tests`` and ``tables.nodes.tests``).

    >>> key_of("../site-packages/tables/tests/test_aux.py::TestAux::test_keysort")
    'test_aux.py::TestAux::test_keysort'
    """
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest


def suite_modules() -> set[str]:
    """The test modules PyTables' ``tables.tests.test_suite.suite()`` runs.

    Read from that function's source (its ``test_modules`` list and what it appends), not
    by calling it: it imports every module at once, and one that cannot import would hide
    the rest.
    """
    import importlib.util

    spec = importlib.util.find_spec("tables.tests.test_suite")
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("tables.") and ".test" in node.value:
            names.add(node.value)
    return names


def light_suite(modules: set[Any]) -> set[str]:
    """``module.Class.method`` of every test PyTables' own suite runs in light mode.

    pytest would collect more than PyTables runs: the heavy variants of generated tests
    (``test_queries`` alone has 60,000) and base classes its ``suite()`` functions leave out.
    Each module's own ``suite()`` says which it runs.
    """
    from tables.tests import common

    common.heavy = False
    wanted = suite_modules()
    names: set[str] = set()

    def walk(suite: unittest.TestSuite) -> None:
        for test in suite:
            if isinstance(test, unittest.TestSuite):
                walk(test)
            elif isinstance(test, unittest.TestCase):
                cls = type(test)
                names.add(f"{cls.__module__}.{cls.__qualname__}.{test._testMethodName}")

    for module in modules:
        if module.__name__ in wanted and hasattr(module, "suite"):
            walk(module.suite())
    return names


def _suite_name(item: pytest.Item) -> str | None:
    cls = getattr(item, "cls", None)
    if cls is None:
        return None
    return f"{cls.__module__}.{cls.__qualname__}.{item.name}"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hyperslab_as_tables")
    group.addoption("--against-pytables", action="store_true",
                    help="run on PyTables itself, to measure what passes there")
    group.addoption("--outcomes", default=None, help="write every test's outcome as JSON")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("--against-pytables"):
        import hyperslab

        hyperslab.install_as_tables()
    config.stash[_OUTCOMES] = {}


_OUTCOMES = pytest.StashKey[dict[str, tuple[str, str]]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    light = light_suite({item.module for item in items
                         if getattr(item, "module", None) is not None})
    against_pytables = config.getoption("--against-pytables")
    broken = {} if against_pytables else read_list(BROKEN_ON_PYTABLES)
    expected = {} if against_pytables else read_list(EXPECTED_FAILURES)
    kept, deselected = [], []
    for item in items:
        key = key_of(item.nodeid)
        if _suite_name(item) not in light or key in broken:
            deselected.append(item)
            continue
        if key in expected:
            item.add_marker(pytest.mark.xfail(reason=expected[key], strict=True))
        kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A test module listed as a whole in ``expected_failures.txt`` may fail to import
    (reported as skipped, with the reason); one listed that imports fails the run."""
    outcome = yield
    report = outcome.get_result()
    if not isinstance(collector, pytest.Module) or collector.config.getoption(
            "--against-pytables"):
        return
    key = key_of(report.nodeid)
    reason = read_list(EXPECTED_FAILURES).get(key)
    if reason is None:
        return
    if report.failed:
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, f"expected failure: {reason}")
    else:
        report.outcome = "failed"
        report.longrepr = f"{key} imports now: remove it from expected_failures.txt"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    outcomes = _config.stash[_OUTCOMES] if _config is not None else None
    if outcomes is not None and report.failed and report.nodeid.endswith(".py"):
        outcomes[key_of(report.nodeid)] = ("error", _crash_line(report))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcomes = _config.stash[_OUTCOMES] if _config is not None else None
    if outcomes is None:
        return
    key = key_of(report.nodeid)
    if report.when == "call" or report.outcome != "passed":
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        if report.when != "call" and report.outcome == "failed":
            outcome = "error"
        if outcomes.get(key, ("passed",))[0] == "passed":
            outcomes[key] = (outcome, _crash_line(report))


def _crash_line(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The first line of what went wrong (``ExcType: message``), or ``""``."""
    if report.outcome == "passed":
        return ""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    if lines and lines[0].startswith("ImportError while importing") and errors:
        return errors[-1][:300]  # the import's own error, not pytest's preamble
    return lines[0][:300] if lines else ""


_config: pytest.Config | None = None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    global _config
    _config = session.config


def pytest_sessionfinish(session: pytest.Session, exitstatus: Any) -> None:
    path = session.config.getoption("--outcomes")
    if path:
        Path(path).write_text(json.dumps(session.config.stash[_OUTCOMES], indent=0,
                                         sort_keys=True))
