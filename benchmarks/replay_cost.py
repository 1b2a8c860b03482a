"""What the replay of edited tests costs against the suite's own run time (issue 27).

The target: for a change that edits at most 5 tests, the replay (the base's version of each
edited test run on the head's code, in its own pytest process after the main run) takes at
most 10% of the suite's run time. On a real project, cloned into a temporary folder::

    python benchmarks/replay_cost.py REPO [--tests-file tests/test_more.py] [--edits 1,3,5]

``REPO`` is a git repository whose tests run with ``PYTHONPATH`` at its root (no install):
more-itertools or pluggy. For each count of edited tests, each edit adds one statement to a
test (a real change to its body, so it is replayed), and ``pytest --confgate --confgate-base
HEAD`` runs with a configuration of only ``test_pass_rate`` and ``test_integrity``. Printed:
the suite's wall time (plain ``pytest``), the gate's, and ``details.replay.duration_s``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = "gate:\n  metrics:\n    - {type: test_pass_rate}\n    - {type: test_integrity}\n"


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def _edit(path: Path, count: int) -> list[str]:
    """Add ``_replayed = None`` at the end of the first ``count`` test functions."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    tests = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
             and n.name.startswith("test") and n.end_lineno][:count]
    lines = text.split("\n")
    for test in sorted(tests, key=lambda n: n.end_lineno or 0, reverse=True):
        last = test.body[-1]
        indent = " " * last.col_offset
        lines.insert(test.end_lineno or 0, f"{indent}_replayed = None")
    path.write_text("\n".join(lines), encoding="utf-8")
    return [t.name for t in tests]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--tests-file", default="tests/test_more.py")
    parser.add_argument("--edits", default="1,3,5")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="replay-cost-") as scratch:
        root = Path(scratch) / "project"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(args.repo.resolve()),
                        str(root)], check=True)
        config = Path(scratch) / "confgate.yml"
        config.write_text(CONFIG, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                 "no:randomly"]
        suite = min(_run(plain, root, env) for _ in range(2))
        print(f"suite (plain pytest, best of 2): {suite:.2f} s")
        for count in (int(n) for n in args.edits.split(",")):
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)
            names = _edit(root / args.tests_file, count)
            report = root / "confgate-report.json"  # the report must be inside the project
            gate = [*plain, "--confgate", f"--confgate-config={config}",
                    "--confgate-base", "HEAD"]
            wall = _run(gate, root, env)
            data = json.loads(report.read_text(encoding="utf-8"))
            integrity = next(m for m in data["metrics"] if m["type"] == "test_integrity")
            replay = integrity["details"].get("replay", {})
            cost = float(replay.get("duration_s", 0.0))
            print(f"{count} edited ({', '.join(names)}): gate {wall:.2f} s, replay {cost:.2f} s "
                  f"({replay.get('reruns')} reruns, {replay.get('tests')} results) = "
                  f"{cost / suite:.1%} of the suite; findings {integrity['details']['findings']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
