"""Issue 34: what ``confgate gate`` (the supervisor) adds to a full gate on a real suite.

    python benchmarks/supervisor_cost.py --rounds 3             # click 8.5.1
    python benchmarks/supervisor_cost.py --project pyparsing --rounds 1

Each round runs ``pytest --confgate`` and ``confgate gate`` once, alternately (A B A B: load
from elsewhere on the machine hits both alike), both warm (the gate's caches kept from a
first, unmeasured run of each), in the pinned project's pristine tree committed to a throwaway
git repository. Prints the medians, the ratio (target <= 1.03) and whether both wrote the
same figures and decision. Exit status 1 when the figures differ, never for a missed target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import _realproject as rp


def main() -> int:
    args = _arguments()
    spec = rp.PROJECTS[args.project]
    with rp.exclusive():
        space = rp.prepare(spec)
        project, env = space.project, space.env
        python = str(space.venv / "bin" / "python")
        rp.run(["git", "init", "-q", "-b", "main"], cwd=project, env=env)
        rp.run(["git", "add", "-A"], cwd=project, env=env)
        rp.run(["git", "commit", "-q", "-m", "pristine"], cwd=project, env={**env, **rp.GIT_ENV})
        pytest_args = ["-p", "no:cacheprovider", *spec.pytest_args]
        commands = {
            "pytest --confgate": [python, "-m", "pytest", "--confgate", *pytest_args],
            "confgate gate": [python, "-m", "pytest_confgate.cli", "gate", "--", *pytest_args],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        figures: dict[str, object] = {}
        for round_ in range(args.rounds + 1):
            for name, argv in commands.items():
                done = rp.run(argv, cwd=project, env=env)
                if round_:  # the first round fills the caches
                    times[name].append(done.seconds)
                    cpu[name].append(done.cpu_seconds)
                figures[name] = _figures(project / "confgate-report.json")
    base, supervised = (statistics.median(times[name]) for name in commands)
    for name in commands:
        print(f"{name:20} median {statistics.median(times[name]):7.2f}s  runs "
              + " ".join(f"{t:.2f}" for t in times[name]))
    print(f"confgate gate / pytest --confgate: {supervised / base:.3f} wall (target <= 1.03)")
    base_cpu, supervised_cpu = (statistics.median(cpu[name]) for name in commands)
    print(f"  cpu medians {base_cpu:.2f}s / {supervised_cpu:.2f}s: "
          f"{supervised_cpu / base_cpu:.3f}")
    same = figures["pytest --confgate"] == figures["confgate gate"]
    print(f"same figures and decision: {same}")
    if args.json:
        data = {"times": times, "cpu": cpu, "same": same}
        Path(args.json).write_text(json.dumps(data), encoding="utf-8")
    return 0 if same else 1


def _figures(path: Path) -> object:
    report = json.loads(path.read_text(encoding="utf-8"))
    tests = {k: v for k, v in report["tests"].items() if k != "duration_s"}
    metrics = [(m["type"], m["value"], m["passed"]) for m in report["metrics"]]
    return report["decision"], tests, metrics


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="click", choices=sorted(rp.PROJECTS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write every run's seconds here")
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(main())
