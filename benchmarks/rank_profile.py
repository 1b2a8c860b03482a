"""Where one 4-candidate ``confgate rank`` spends its CPU, process by process (issue 28).

    python benchmarks/rank_profile.py [--project attrs|iniconfig|...] [--candidates 4]
                                      [--fresh-baseline]

The trees and settings of ``rank_speed.py`` (the baseline's evidence kept by content, after one
ranking that keeps it). The ranking runs in the project's venv with ``--jobs 1``, so the CPU
seconds of each child process (user + system, itself and what it waited for) are exact; every
process the ranker starts is counted by kind (the gate run, the import check, the regression
rerun, new tests run without their marks, a cross-test run; the runs forked from the warm
pytest, ``rank/warm.py``, together with its start-up), beside the ranker's own CPU (tree
reading, tamper analysis, ranking) and its ruff and bandit runs on the trees' copies
(``rank/lint_copy``: waited for here before any candidate starts, so their CPU is theirs
alone). A stage that repeats per candidate shows as a kind whose count grows with the
candidates.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # siblings, found through the line above
import rank_speed

DRIVER = r'''
import json, resource, sys, time
from pytest_confgate.rank import evaluate, lint_copy

rows = []
original = evaluate.Processes.run


def kind(argv, cwd):
    text = " ".join(argv)
    if "--confgate" in text:
        return "gate run (tests, coverage)"
    if "--runxfail" in text:
        return "new tests without their xfail/skip marks"
    if "/regression/" in str(cwd) + "/":
        return "regression rerun (the baseline's tests)"
    if "/x" in str(cwd) and "/g" in str(cwd):
        return "cross-test run"
    if "importlib" in text:
        return "import check"
    return "other: " + " ".join(argv[:3])[-60:]


def run(self, argv, **kw):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        return original(self, argv, **kw)
    finally:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        rows.append((kind(argv, kw.get("cwd")), time.perf_counter() - started, cpu))


evaluate.Processes.run = run
tools = [0.0]
original_tools = lint_copy.ToolRuns.__init__


def tool_runs(self, *args, **kw):
    # Waited for at once (before any candidate starts), so their children's CPU is theirs alone.
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    original_tools(self, *args, **kw)
    self._thread.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tools[0] += after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


lint_copy.ToolRuns.__init__ = tool_runs
forked = []
try:
    from pytest_confgate.rank import warm
except ImportError:  # a version without the warm pytest
    warm = None
if warm is not None:
    original_warm = warm.WarmPytest.run

    def warm_run(self, argv, **kw):
        started = time.perf_counter()
        done = original_warm(self, argv, **kw)
        if done is not None:  # forked: its CPU is the server's, counted as it ends
            forked.append(time.perf_counter() - started)
        return done

    warm.WarmPytest.run = warm_run
from pytest_confgate.cli import main

children = resource.getrusage(resource.RUSAGE_CHILDREN)

start = resource.getrusage(resource.RUSAGE_SELF)
code = main(sys.argv[2:])
end = resource.getrusage(resource.RUSAGE_SELF)
own = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
after = resource.getrusage(resource.RUSAGE_CHILDREN)
total = after.ru_utime - children.ru_utime + after.ru_stime - children.ru_stime
with open(sys.argv[1], "w") as out:
    json.dump({"rows": rows, "own": own, "tools": tools[0], "code": code, "forked": forked,
               "children": total}, out)
'''


def main() -> int:
    args = _arguments()
    spec = rank_speed.PROJECTS[args.project]
    with rp.exclusive(args.cache):
        ws = rp.prepare(spec, args.cache)
        work = Path(tempfile.mkdtemp(prefix="confgate-rank-profile-"))
        try:
            config = rank_speed.build_trees(ws, work)
            extra = ["--fresh-baseline"] if args.fresh_baseline else []
            if not args.fresh_baseline:  # keep the baseline's evidence, as rank_speed does
                _profile(ws, work, config, ["cand1"], extra)
            names = [f"cand{n}" for n in range(1, args.candidates + 1)]
            found, wall = _profile(ws, work, config, names, extra)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    _print(found, wall, len(names))
    return 0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(rank_speed.PROJECTS), default="attrs")
    parser.add_argument("--candidates", type=int, choices=range(1, 5), default=4)
    parser.add_argument("--cache", type=Path, default=rp.DEFAULT_CACHE)
    parser.add_argument("--fresh-baseline", action="store_true",
                        help="evaluate the baseline in the ranking instead of keeping it")
    return parser.parse_args()


def _profile(ws: rp.Workspace, work: Path, config: Path, names: list[str], extra: list[str]
             ) -> tuple[dict[str, object], float]:
    record = work / "profile.json"
    argv = [ws.python, "-c", DRIVER, str(record), "rank", *names, "--baseline", "base", *extra,
            "--jobs", "1", "--format", "json", "-o", str(work / "out.json"),
            "--config", str(config)]
    done = rp.run(argv, cwd=work, env=ws.env).require()
    found: dict[str, object] = json.loads(record.read_text())
    return found, done.seconds


def _print(found: dict[str, object], wall: float, candidates: int) -> None:
    totals: dict[str, list[float]] = {}
    for kind, seconds, cpu in found["rows"]:  # type: ignore[attr-defined]
        row = totals.setdefault(kind, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += seconds
        row[2] += cpu
    own = float(found["own"])  # type: ignore[arg-type]
    print(f"{candidates} candidates, --jobs 1: {wall:.1f} s wall\n")
    print(f"{'process':<46} {'count':>5} {'wall s':>8} {'CPU s':>8} {'CPU s each':>10}")
    for kind, (count, seconds, cpu) in sorted(totals.items(), key=lambda kv: -kv[1][2]):
        print(f"{kind:<46} {count:>5.0f} {seconds:>8.1f} {cpu:>8.1f} {cpu / count:>10.2f}")
    tools = float(found.get("tools", 0.0))  # type: ignore[arg-type]
    forked: list[float] = found.get("forked", [])  # type: ignore[assignment]
    if forked:  # the warm pytest's CPU (its forked cross-test runs): what no row above holds
        rest = float(found["children"]) - tools - sum(row[2] for row in totals.values())  # type: ignore[arg-type]
        print(f"{'cross-test runs forked from the warm pytest':<46} {len(forked):>5} "
              f"{sum(forked):>8.1f} {rest:>8.1f} {rest / len(forked):>10.2f}")
        print("  (CPU: the warm pytest's start-up and every run forked from it)")
    print(f"{'ruff and bandit, run by the ranker (waited for)':<46} {'':>5} {'':>8} {tools:>8.1f}")
    print(f"{'the ranker itself (trees, tamper, ranking)':<46} {'':>5} {'':>8} {own:>8.1f}")


if __name__ == "__main__":
    sys.exit(main())
