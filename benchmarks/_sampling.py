"""A stack-sampling profiler for ``fixed_cost.py --profile``: ``_sampling.py OUT -m MOD ...``.

cProfile is a ``sys.setprofile`` profiler: under it the branch probes refuse the measured
modules (a profiler could see their frames) and the gate falls back to coverage.py's tracer,
so a cProfile run times another engine than a user's run (coverage.py's ``Collector`` start,
its ``short_stack()``, showed up only there). This samples the stack on ``SIGPROF`` (CPU
time) and touches nothing the gate checks. It writes ``OUT`` as JSON: ``samples`` (the total)
and ``inclusive`` (``"path:function"`` -> samples with that frame on the stack), paths
relative to site-packages or to this repository.
"""

from __future__ import annotations

import atexit
import collections
import json
import runpy
import signal
import sys
from pathlib import Path
from types import FrameType

REPO = str(Path(__file__).resolve().parent.parent) + "/"
IMPORTING = "(importing, under the gate)"
"""Samples spent importing modules while a frame of the gate was on the stack."""


def _key(frame: FrameType) -> str:
    name = frame.f_code.co_filename.split("site-packages/")[-1].replace(REPO, "")
    return f"{name}:{frame.f_code.co_name}"


def main() -> None:
    out, module, args = sys.argv[1], sys.argv[3], sys.argv[4:]
    inclusive: collections.Counter[str] = collections.Counter()
    total = [0]

    def sample(_signum: int, frame: FrameType | None) -> None:
        total[0] += 1
        keys = set()
        while frame is not None:
            keys.add(_key(frame))
            frame = frame.f_back
        inclusive.update(keys)
        if any("pytest_confgate/" in k for k in keys) and any("_find_and_load" in k for k in keys):
            inclusive[IMPORTING] += 1

    def dump() -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        Path(out).write_text(json.dumps({"samples": total[0], "inclusive": inclusive}))

    atexit.register(dump)
    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
