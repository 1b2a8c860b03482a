"""SPEC 11 speed targets, measured side by side on a real third-party test suite.

    python benchmarks/gate_speed.py [--project attrs|more-itertools] [--rounds 3]

Each round runs every variant once, in the same order, so load from elsewhere on the machine
hits all of them alike; the table shows medians and ratios. Measured:

- ``pytest --confgate`` vs ``pytest --cov`` (target <= 1.03x): the full gate against the job
  users run today;
- pull-request mode (only ``scope: changed`` coverage, a change to one module) vs a bare
  ``pytest`` (target <= 1.15x), with ``pytest --cov`` alongside for scale;
- lint + security collection on a warm re-run with nothing changed vs a cold run (<= 10%);
- ``pytest -n 2 --confgate`` figures vs the serial run's (must be identical);
- plugin installed but not enabled: start-up overhead of ``pytest --co -q`` (<= 15 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # a sibling module, found through the line above

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
FULL = "gate:\n  risk_tier: T0\n"
PR_MODE = (
    "base_ref: main\ngate:\n  risk_tier: T0\n  metrics:\n    - {type: test_pass_rate}\n"
    "    - {type: test_coverage, scope: changed}\n    - {type: lint_score, scope: changed}\n"
    "    - {type: security_score, scope: changed}\n"
)


def main() -> int:
    args = _arguments()
    spec = rp.PROJECTS[args.project]
    with rp.exclusive(args.cache):
        ws = rp.prepare(spec, args.cache)
        ws.run([ws.python, "-m", "pip", "install", "-q", "pytest-cov", "pytest-xdist"]).require()
        _make_repository(ws)
        print(f"{spec.name} {spec.version} on {os.cpu_count()} cores, {args.rounds} rounds\n")
        rows = _timed_variants(ws, args.rounds)
        rows += _warm_rerun(ws)
        rows += _startup(ws, max(15, args.rounds * 5))
        same = _xdist_figures(ws)
    _print(rows)
    print(f"\npytest -n 2 --confgate figures equal the serial run's: {'yes' if same else 'NO'}")
    return 0 if same else 1


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(rp.PROJECTS), default="attrs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=rp.DEFAULT_CACHE)
    return parser.parse_args()


def _make_repository(ws: rp.Workspace) -> None:
    """Commit the pristine project as ``main``, then change one module on a branch.

    The gate's config and outputs are git-ignored, as if the config were committed on ``main``:
    a change that brings its own config is judged by the base's (full coverage, at T2), which
    would time the wrong thing.
    """
    git = ["git", "-c", "init.defaultBranch=main"]
    exclude = ws.project / ".git" / "info" / "exclude"
    for step in (
        ["init", "-q"],
        ["add", "-A"],
        ["commit", "-q", "-m", "base"],
        ["checkout", "-q", "-b", "change"],
    ):
        ws.run([*git, *step], env=GIT_ENV).require()
        if step == ["init", "-q"]:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text("confgate.yml\nconfgate-report.json\n.confgate/\n")
    target = ws.project / ws.spec.sources[0] / "validators.py"
    if not target.exists():
        target = next((ws.project / ws.spec.sources[0]).glob("*.py"))
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef _confgate_bench(value):\n    return value is not None\n")


def _pytest(ws: rp.Workspace, *extra: str) -> list[str]:
    return [ws.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ws.spec.pytest_args, *extra]


def _with_config(ws: rp.Workspace, text: str) -> Callable[[], None]:
    def write() -> None:
        (ws.project / "confgate.yml").write_text(text, encoding="utf-8")

    return write


def _timed_variants(ws: rp.Workspace, rounds: int) -> list[tuple[str, float, str]]:
    cov = ",".join(f"--cov={source}" for source in ws.spec.sources)
    variants: dict[str, tuple[list[str], Callable[[], None]]] = {
        "bare pytest": (_pytest(ws, "-p", "no:confgate"), _with_config(ws, FULL)),
        "pytest --cov": (_pytest(ws, *cov.split(","), "-p", "no:confgate"), _with_config(ws, FULL)),
        "pytest --confgate": (_pytest(ws, "--confgate"), _with_config(ws, FULL)),
        "pytest --confgate (PR mode)": (_pytest(ws, "--confgate"), _with_config(ws, PR_MODE)),
    }
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, (argv, prepare) in variants.items():
            prepare()
            run = ws.run(argv).require(0, 1)
            seconds[name].append(run.seconds)
            cpu[name].append(run.cpu_seconds)
            if name.endswith("(PR mode)"):
                _require_pull_request_mode(ws)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    return [
        (
            "CPU time: pytest --confgate / pytest --cov",
            median_cpu["pytest --confgate"] / median_cpu["pytest --cov"],
            "(steadier)",
        ),
        (
            "CPU time: PR mode / bare pytest",
            median_cpu["pytest --confgate (PR mode)"] / median_cpu["bare pytest"],
            "(steadier)",
        ),
        (
            "pytest --confgate / pytest --cov",
            median["pytest --confgate"] / median["pytest --cov"],
            "<= 1.03",
        ),
        (
            "PR mode / bare pytest",
            median["pytest --confgate (PR mode)"] / median["bare pytest"],
            "<= 1.15",
        ),
        (
            "pytest --cov / bare pytest (for scale)",
            median["pytest --cov"] / median["bare pytest"],
            "-",
        ),
        *[(f"median seconds: {name}", value, "-") for name, value in median.items()],
    ]


def _require_pull_request_mode(ws: rp.Workspace) -> None:
    """Refuse to report a PR-mode time that was not measured in PR mode."""
    report = json.loads((ws.project / "confgate-report.json").read_text(encoding="utf-8"))
    coverage = next(m for m in report["metrics"] if m["type"] == "test_coverage")["details"]
    change = report.get("change") or {}
    if change.get("config_changed") or coverage.get("engine") != "line probes":
        raise SystemExit(f"PR mode was not measured: change={change}, coverage={coverage}")


def _tool_seconds(ws: rp.Workspace) -> float:
    report = json.loads((ws.project / "confgate-report.json").read_text(encoding="utf-8"))
    return sum(
        float(m["details"].get("duration_s", 0.0))
        for m in report["metrics"]
        if m["type"] in ("lint_score", "security_score")
    )


def _warm_rerun(ws: rp.Workspace) -> list[tuple[str, float, str]]:
    _with_config(ws, FULL)()
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(3):
        shutil.rmtree(ws.project / ".confgate" / "cache", ignore_errors=True)
        ws.run(_pytest(ws, "--confgate")).require(0, 1)
        cold.append(_tool_seconds(ws))
        ws.run(_pytest(ws, "--confgate")).require(0, 1)
        warm.append(_tool_seconds(ws))
    ratio = statistics.median(warm) / statistics.median(cold)
    return [
        ("lint+security warm / cold", ratio, "<= 0.10"),
        ("median seconds: lint+security cold", statistics.median(cold), "-"),
        ("median seconds: lint+security warm", statistics.median(warm), "-"),
    ]


def _startup(ws: rp.Workspace, runs: int) -> list[tuple[str, float, str]]:
    """``pytest --co`` of one small test file with the plugin installed, enabled or not.

    One file, not the suite: collecting a whole suite varies by +-100 ms between runs, which
    would drown a 15 ms target. The plugin's own import time (``-X importtime``) is shown too.
    """
    first = sorted((ws.project / "tests").glob("test_*.py"))[:1]
    target = [str(first[0])] if first else []
    on: list[float] = []
    off: list[float] = []
    for _ in range(runs):
        on.append(ws.run(_pytest(ws, "--co", *target)).require().seconds)
        off.append(ws.run(_pytest(ws, "--co", "-p", "no:confgate", *target)).require().seconds)
    overhead_ms = (statistics.median(on) - statistics.median(off)) * 1000
    probe = ws.run([ws.python, "-X", "importtime", "-c", "import pytest, pytest_confgate.plugin"])
    own_us = sum(
        int(line.split("|")[0].split(":")[1])
        for line in probe.stderr.splitlines()
        if "pytest_confgate" in line and line.startswith("import time:")
    )
    return [
        ("start-up overhead, installed not enabled (ms)", overhead_ms, "<= 15"),
        ("plugin import, self time of its modules (ms)", own_us / 1000, "-"),
    ]


def _figures(ws: rp.Workspace) -> dict[str, Any]:
    report = json.loads((ws.project / "confgate-report.json").read_text(encoding="utf-8"))
    coverage = next(m for m in report["metrics"] if m["type"] == "test_coverage")["details"]
    keys = ("covered_lines", "num_statements", "num_branches", "covered_branches", "missing")
    tests = {k: v for k, v in report["tests"].items() if k != "duration_s"}
    return {"coverage": {k: coverage.get(k) for k in keys}, "tests": tests}


def _xdist_figures(ws: rp.Workspace) -> bool:
    _with_config(ws, FULL)()
    ws.run(_pytest(ws, "--confgate")).require(0, 1)
    serial = _figures(ws)
    ws.run(_pytest(ws, "--confgate", "-n", "2")).require(0, 1)
    distributed = _figures(ws)
    if serial != distributed:
        print(f"serial:      {serial}\ndistributed: {distributed}")
    return serial == distributed


def _print(rows: list[tuple[str, float, str]]) -> None:
    width = max(len(name) for name, _, _ in rows)
    print(f"{'measure':<{width}}  {'value':>9}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>9.3f}  {target}")


if __name__ == "__main__":
    sys.exit(main())
