"""What the run-time audit (``collect/runtime_audit``) costs on a real suite: the gate on click's
tests with the audit, and the same gate with the audit left out, runs alternated.

    python benchmarks/audit_cost.py PROJECT_DIR [--repeat N]

PROJECT_DIR is a checkout of a project (click 8.5.1's sdist here) installed, with this repo, in
the running interpreter's environment. The audit is left out by a ``-p`` plugin of this script
that replaces the plugin's ``_start_audit`` with one that creates the recorder but installs no
hook: everything else (the output checks, the module snapshot) still runs, so the difference
is the hook's cost on every audit event of the run. Each side's best of N CPU seconds (the
pytest process and its children: the wall clock of a shared machine measures the neighbours)
is reported, and every test's outcome is compared between the two sides.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

_OFF = '''\
from pytest_confgate import plugin
from pytest_confgate.collect.runtime_audit import Recorder
from pytest_confgate.gate.engine import STATE_DIR


def _no_hook(root, report_path):
    return Recorder(root, root / STATE_DIR, report_path)


plugin._start_audit = _no_hook
'''


def _run(project: Path, extra: list[str], plugin_dir: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": plugin_dir, "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", "pytest", "--confgate", "-p", "no:cacheprovider", "-q",
            "-rA", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True,
                          check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds, not wall time: on a shared machine the wall clock measures the neighbours.
    seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    outcomes = sorted(line for line in done.stdout.splitlines()
                      if line.startswith(("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL")))
    return seconds, "\n".join(outcomes)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("project", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as plugin_dir:
        Path(plugin_dir, "_confgate_audit_off.py").write_text(_OFF, encoding="utf-8")
        _run(args.project, [], plugin_dir)  # warm the gate's caches once
        on: list[float] = []
        off: list[float] = []
        outcomes: set[str] = set()
        for _ in range(args.repeat):
            seconds, seen = _run(args.project, [], plugin_dir)
            on.append(seconds)
            outcomes.add(seen)
            seconds, seen = _run(args.project, ["-p", "_confgate_audit_off"], plugin_dir)
            off.append(seconds)
            outcomes.add(seen)
    best_on, best_off = min(on), min(off)
    print(f"audit on : best {best_on:.2f} CPU s  runs {', '.join(f'{s:.2f}' for s in on)}")
    print(f"audit off: best {best_off:.2f} CPU s  runs {', '.join(f'{s:.2f}' for s in off)}")
    print(f"cost: {100 * (best_on / best_off - 1):+.1f}%  same outcomes: {len(outcomes) == 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
