"""Issue 26 item 4: the gate's fixed cost on the README's sample project (5 tests).

    python benchmarks/fixed_cost.py --rounds 5
    python benchmarks/fixed_cost.py --rounds 3 --profile    # + where the gate's time goes

The sample project (``examples/sample-project``, its own ``confgate.yml``: pass rate, branch
coverage, ruff, bandit) is copied under ``.confgate/bench/sample`` and committed to a git
repository of its own; a venv there gets this repository (editable) and nothing else, as a
user's would. Each round runs, interleaved, bare ``pytest -p no:confgate`` and ``pytest
--confgate`` (warm: the gate's own caches under ``.confgate/`` kept, as on a developer's second
run), ``pytest --confgate`` cold (caches removed first), and warm with the sample's config but
``branch: false`` (line probes instead of coverage.py's tracer). The table gives medians of wall and
CPU seconds (user + system of pytest and every child process, the tools' helper included) and
the ratio to bare beside the target (gate <= 1.30x bare). ``--profile`` adds where a warm gate
run's CPU goes, from stack samples (``_sampling``; cProfile would change the engine the gate
measures with): start-up (configuration, git, the tools' cached answers or their helper,
coverage), the imports under the gate, the tests, and the finish (coverage reporting, writing
the report).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # siblings, found through the line above
from _sampling import IMPORTING

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample-project"
TARGET = 1.30
PHASES = {
    "start-up: the plugin (config, git, GateRun)": "pytest_confgate/plugin.py:create",
    "start-up: the tools and coverage": "pytest_confgate/plugin.py:begin",
    "  of which the tools (cached answers, or starting the helper)":
        "pytest_confgate/gate/background.py:start",
    "  of which coverage's start (probes, coverage.py)":
        "pytest_confgate/collect/coverage/session.py:start",
    "importing, under the gate (all phases)": IMPORTING,
    "  of which pydantic and the report models": "pytest_confgate/models.py:<module>",
    "  of which the configuration models": "pytest_confgate/config/__init__.py:<module>",
    "  of which coverage.py": "coverage/__init__.py:<module>",
    "finish (tools, coverage report, report files)":
        "pytest_confgate/plugin.py:pytest_sessionfinish",
    "  of which coverage.py's report": "coverage/control.py:json_report",
    "  of which waiting for the helper (ruff, bandit)": "pytest_confgate/gate/background.py:_wait",
    "per test (between_tests hook)": "pytest_confgate/plugin.py:pytest_runtest_logfinish",
    "terminal summary": "pytest_confgate/plugin.py:pytest_terminal_summary",
}


def main() -> int:
    args = _arguments()
    lines, (project, python, env) = measure(args.cache, args.rounds)
    print("\n".join(lines))
    if args.profile:
        _profile(project, python, env, args.rounds)
    return 0


def measure(cache: Path, rounds: int) -> tuple[list[str], tuple[Path, str, dict[str, str]]]:
    """The table's lines (``gate_speed`` prints it beside the projects'), and what
    ``--profile`` runs in (project, its Python, the environment)."""
    project, python = _prepare(cache)
    commands = {
        "bare": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:confgate"],
        "gate (warm)": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confgate"],
        # Before the cold run, which removes every cache: after it this run was cold too.
        "gate (warm), branch: false": [
            python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confgate",
            "--confgate-config=confgate-lines.yml",
        ],
        "gate (cold)": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confgate"],
    }
    config = (project / "confgate.yml").read_text(encoding="utf-8")
    (project / "confgate-lines.yml").write_text(
        config.replace("branch: true", "branch: false"), encoding="utf-8"
    )
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    env = rp._clean_env(Path(python).parent.parent)  # the benchmarks' scrubbed env
    # Python files of an editable install are compiled once and then read from __pycache__, as
    # for a user; without it every gate run compiles the gate (~0.3 s) and bare pytest not.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for warm in ("gate (warm)", "gate (warm), branch: false"):  # warms the caches once
        rp.run(commands[warm], cwd=project, env=env)
    for _ in range(rounds):
        for name, argv in commands.items():
            if name == "gate (cold)":
                shutil.rmtree(project / ".confgate", ignore_errors=True)
            done = rp.run(argv, cwd=project, env=env)
            if done.returncode not in (0,):
                raise SystemExit(f"{name} exited {done.returncode}:\n{done.stdout[-3000:]}")
            wall[name].append(done.seconds)
            cpu[name].append(done.cpu_seconds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"sample project, 5 tests, {rounds} rounds, load average {load:.1f}", "",
             "| command | wall (median) | ratio | CPU (median) | ratio | target |",
             "|---|---|---|---|---|---|"]
    base_wall, base_cpu = statistics.median(wall["bare"]), statistics.median(cpu["bare"])
    for name in commands:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        target = "" if name == "bare" else f"<= {TARGET:.2f}x"
        lines.append(f"| {name} | {w:.2f} s | {w / base_wall:.2f}x | {c:.2f} s "
                     f"| {c / base_cpu:.2f}x | {target} |")
    return lines, (project, python, env)


def _prepare(cache: Path) -> tuple[Path, str]:
    cache = cache.resolve()
    venv = cache / "venv-sample"
    python = str(venv / "bin" / "python")
    if not Path(python).is_file():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "-e", str(REPO)], check=True)
    project = cache / "sample"
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(SAMPLE, project)
    git = ["git", "-c", "init.defaultBranch=main"]
    env = {**os.environ, **rp.GIT_ENV}
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *step], cwd=project, env=env, check=True, capture_output=True)
        if step == ["init", "-q"]:
            (project / ".git" / "info" / "exclude").write_text(
                "confgate-report.json\n.confgate/\n*.samples.json\nconfgate-lines.yml\n",
                encoding="utf-8",
            )
    return project, python


def _profile(project: Path, python: str, env: dict[str, str], rounds: int) -> None:
    """Where a warm gate run's CPU goes, from stack samples of ``rounds`` runs (``_sampling``:
    cProfile would make the probes refuse the modules and time coverage.py's tracer instead)."""
    sampler = str(Path(__file__).resolve().parent / "_sampling.py")
    samples, cpu = 0, 0.0
    inclusive: dict[str, int] = {}
    for index in range(rounds):
        out = project / f"gate-{index}.samples.json"
        argv = [python, sampler, str(out), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--confgate"]
        cpu += rp.run(argv, cwd=project, env=env).require().cpu_seconds
        data = json.loads(out.read_text(encoding="utf-8"))
        samples += data["samples"]
        for key, count in data["inclusive"].items():
            inclusive[key] = inclusive.get(key, 0) + count
    per_sample = cpu / rounds / max(samples / rounds, 1)
    print(f"\none warm gate run, stack-sampled ({rounds} runs, {samples} samples): "
          f"{cpu / rounds:.2f} s CPU, the helper included")
    for label, key in PHASES.items():
        print(f"  {label}: {inclusive.get(key, 0) / rounds * per_sample:.3f} s")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=rp.REPO_CACHE)
    parser.add_argument("--profile", action="store_true")
    return parser.parse_args()


if __name__ == "__main__":
    raise SystemExit(main())
