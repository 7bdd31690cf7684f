"""``python -m bench._child REQUEST_JSON RESULT_PATH``: one fresh-process run of a case.

Started by :func:`bench.harness.run_in_fresh_process`.  The request names the target
function, the rival's modules, the case and its parameters; the result (JSON) goes to a
file, not stdout, so that whatever the libraries print cannot corrupt it.  With no case, the
process only imports the rival's modules and reports its peak RSS: the memory baseline.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench._threads import apply_from_env
from bench.harness import BenchmarkError, Timer, canonical, peak_rss_bytes, resolve_target


def main(argv: list[str]) -> int:
    """Run the request in ``argv[0]`` and write the result to ``argv[1]``."""
    request = json.loads(argv[0])
    out = Path(argv[1])
    func = resolve_target(request["target"])
    t0 = time.perf_counter()
    for module in request["modules"]:
        importlib.import_module(module)
    import_seconds = time.perf_counter() - t0
    result: dict[str, Any]
    if request["case"] is None:
        result = {"peak_rss": peak_rss_bytes(), "import_seconds": import_seconds}
    else:
        timer = Timer(on_enter=apply_from_env)  # the parent's --blosc-nthreads
        check = func(request["rival"], request["case"], request["params"], timer)
        if timer.seconds is None:
            raise BenchmarkError(f"case {request['case']!r} never used its timer")
        result = {
            "seconds": timer.seconds,
            "peak_rss": timer.peak_rss,
            "check": json.loads(canonical(check)),
        }
    out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
