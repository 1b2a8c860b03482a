"""Issue 19's speed targets, measured side by side on a real third-party test suite.

    python benchmarks/gate_speed.py --rounds 5                  # click, then pyparsing
    python benchmarks/gate_speed.py --project click --rounds 1  # one project, a quick check
    python benchmarks/gate_speed.py --project click pyparsing networkx --json out.json

Each project is the pinned sdist from the package index (click 8.5.1 and pyparsing 3.3.3 by
default, networkx 3.6.1 opt-in), installed with this repository into a venv under
``.confgate/bench`` (``--cache`` to move it). Projects are measured one after the other;
within a project every round runs every command once, in the same order (A B C A B C: load
from elsewhere on the machine hits them alike), each gate run with a cold ``.confgate/``
unless it says warm. Each project's table shows medians and ratios with the target beside
each; the JSON file has every run's seconds and the machine's load average. Measured:

- full gate with the project's own coverage settings (no ``confgate.yml``: zero config, so
  click's ``branch = true`` holds) vs bare ``pytest`` (<= 1.15x) and vs ``pytest --cov`` with
  the same settings (<= 0.75x), cold (a fresh CI checkout) and warm (the gate's caches kept,
  as on a developer's next run or a CI job that restores ``.confgate/cache``);
- full gate, line coverage (``branch: false`` forced; T0, default metrics) vs bare ``pytest``
  (<= 1.15x) and vs ``pytest --cov`` (<= 0.75x), cold and warm;
- full gate, branch coverage (``branch: true`` forced) vs bare ``pytest`` (<= 1.15x) and vs
  ``pytest --cov --cov-branch`` (<= 0.75x);
- pull-request gate (``scope: changed``, one changed module, the project's own branch setting)
  vs bare ``pytest`` (<= 1.10x), cold and warm (the Action restores the default branch's
  caches);
- after the projects, the README's sample project (5 tests): the gate's fixed cost, warm and
  cold, vs bare ``pytest`` (<= 1.30x; ``fixed_cost.py``, ``--no-sample`` to skip);
- lint + security on a warm re-run vs a cold one (<= 10%); plugin start-up overhead (<= 15 ms);
- in the same run: the gate's figures against coverage.py's own (pytest-cov's JSON report:
  lines, and branches where measured) in all three settings, the engine each used (branch
  probes on Python 3.10/3.11), and ``pytest -n 2 --confgate`` against the serial run.

``--quick`` measures the rounds and figures only (no side measures), for a loaded machine.
``--against COMMIT`` adds, beside each warm gate run and in the same rounds, the same run with
this repository's code at ``COMMIT`` (a git worktree put first on ``PYTHONPATH``), and the
ratio of the two: a speed change measured side by side, whatever the machine's load does.

Exit status 1 when a figure differs (never for a missed speed target: timings on a loaded
machine are evidence, not a verdict).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # siblings, found through the line above
from compare_real_project import branch_off_rcfile

REPO = Path(__file__).resolve().parent.parent
LINES_ENGINE = "sys.monitoring" if sys.version_info >= (3, 12) else "line probes"
BRANCH_ENGINE = "sys.monitoring" if sys.version_info >= (3, 12) else "branch probes"
"""The engines the gate uses on the Python running this script (and the benchmark's venv)."""
DEFAULT_CACHE, GIT_ENV = rp.REPO_CACHE, rp.GIT_ENV


def gate_config(sources: tuple[str, ...], *, branch: bool | None, changed: bool = False) -> str:
    """The gate's configuration: T0, the default metrics, the benchmark's sources.

    ``branch=None`` leaves branch coverage to the project's own coverage settings.
    """
    scope = "changed" if changed else "all"
    base = "base_ref: main\n" if changed else ""
    forced = "" if branch is None else f"branch: {str(branch).lower()}, "
    return (
        f"{base}source: {json.dumps(list(sources))}\ngate:\n  risk_tier: T0\n  metrics:\n"
        f"    - {{type: test_pass_rate}}\n"
        f"    - {{type: test_coverage, {forced}scope: {scope}}}\n"
        f"    - {{type: lint_score, scope: {scope}}}\n"
        f"    - {{type: security_score, scope: {scope}}}\n"
    )


@dataclass
class Variant:
    """One command of a round: how to prepare the tree, what to run, what to check after."""

    argv: list[str]
    config: str | None = None
    """The ``confgate.yml`` to write first; None keeps the last one, ``""`` removes it."""
    cold: bool = True
    after: Callable[[], None] | None = None
    env: dict[str, str] | None = None
    """Added to the environment (``--against``: ``PYTHONPATH`` naming the older code)."""
    own_caches: bool = False
    """Run with ``.confgate`` of its own (``--against``: each version keeps its warm caches;
    the tools' cache files are rewritten whole, in each version's format)."""
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


@dataclass
class Bench:
    ws: rp.Workspace
    out: Path
    variants: dict[str, Variant] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    """Each figure comparison made (gate = coverage.py), for the printed table."""

    @property
    def project(self) -> Path:
        return self.ws.project

    def pytest(self, *extra: str) -> list[str]:
        base = [self.ws.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        return [*base, *self.ws.spec.pytest_args, *extra]

    def report(self) -> dict[str, Any]:
        text = (self.project / "confgate-report.json").read_text(encoding="utf-8")
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    def coverage_details(self) -> dict[str, Any]:
        metric = next(m for m in self.report()["metrics"] if m["type"] == "test_coverage")
        if metric["status"] != "ok":
            raise SystemExit(f"the gate's coverage is {metric['status']}: {metric['reason']}")
        details: dict[str, Any] = metric["details"]
        return details


DEFAULT_PROJECTS = ("click", "pyparsing")


def main() -> int:
    args = _arguments()
    results: list[dict[str, Any]] = []
    problems = 0
    with rp.exclusive(args.cache):
        for name in args.project:
            spec = rp.PROJECTS[name]
            bench, rows = _measure(spec, args.cache, args.rounds, quick=args.quick,
                                   against=args.against)
            _print(f"{spec.name} {spec.version}", rows, bench.problems, bench.checked)
            results.append(_results(spec, bench, rows))
            problems += len(bench.problems)
        if args.sample:
            from fixed_cost import measure  # it imports this module: not at the top

            lines, _ = measure(args.cache, args.rounds)
            print("\n".join(["", "The README's sample project: the fixed cost", *lines]))
            results.append({"project": "sample project (fixed cost)", "table": lines})
    _write_json(args.json or args.cache / "gate_speed.json", results)
    return 1 if problems else 0


def _measure(
    spec: rp.ProjectSpec, cache: Path, rounds: int, *, quick: bool = False,
    against: str | None = None,
) -> tuple[Bench, list[Row]]:
    """Every measure of one project; its commands interleaved round by round."""
    ws = rp.prepare(spec, cache)
    pip = [ws.python, "-m", "pip", "install", "-q", "pytest-cov", "pytest-xdist"]
    ws.run(pip).require()
    _make_repository(ws)
    bench = Bench(ws, cache / f"runs-{spec.sdist_stem}")
    bench.out.mkdir(parents=True, exist_ok=True)
    print(f"{spec.name} {spec.version}, {os.cpu_count()} cores, {rounds} rounds\n")
    _define_variants(bench)
    older = _worktree(against, cache) if against else None
    if older is not None:
        _add_older(bench, older, against or "")
    try:
        _timed_rounds(bench, rounds)
    finally:
        if older is not None:
            _run_git("worktree", "remove", "--force", str(older))
    rows = _ratios(bench) + _against_rows(bench)
    if quick:
        return bench, rows
    repeats = min(3, rounds)  # the side measures: 3 runs each, fewer for a quick check
    rows += _tail(bench, repeats)
    rows += _warm_tools(bench, repeats)
    rows += _startup(bench, max(5, rounds * 5))
    _xdist_figures(bench)
    rows += _merge_cost(bench, shards=8)
    return bench, rows


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Run on a quiet machine for figures to quote; 5 rounds take ~10 min for click.",
    )
    parser.add_argument(
        "--project",
        nargs="+",
        choices=sorted(rp.PROJECTS),
        default=list(DEFAULT_PROJECTS),
        help="the projects to measure, one after the other (default: click pyparsing; "
        "networkx is opt-in: minutes per run on 2 cores)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (median)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="venvs and sdists")
    parser.add_argument(
        "--quick", action="store_true",
        help="only the interleaved rounds and the figures (no tail, tools, start-up, xdist)",
    )
    parser.add_argument(
        "--against", metavar="COMMIT", default=None,
        help="also time each warm gate run with this repository at COMMIT, side by side",
    )
    parser.add_argument(
        "--no-sample", dest="sample", action="store_false",
        help="skip the README's sample project (the gate's fixed cost, fixed_cost.py)",
    )
    parser.add_argument(
        "--json", type=Path, default=None,
        help="where to write the results (default: gate_speed.json in the cache folder)",
    )
    return parser.parse_args()


def _make_repository(ws: rp.Workspace) -> None:
    """Commit the pristine project as ``main``, then change one module on a branch.

    The gate's config and outputs are git-ignored, as if the config were committed on ``main``:
    a change that brings its own config is judged by the base's (full coverage, at T2), which
    would time the wrong thing.
    """
    git = ["git", "-c", "init.defaultBranch=main"]
    exclude = ws.project / ".git" / "info" / "exclude"
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"],
                 ["checkout", "-q", "-b", "change"]):
        ws.run([*git, *step], env=GIT_ENV).require()
        if step == ["init", "-q"]:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text("confgate.yml\nconfgate-report.json\n.confgate/\n*.json\n"
                               ".confgate-older/\n.confgate-swap/\n")
    target = ws.project / (ws.spec.changed or ws.spec.sources[0])
    if target.is_dir():
        target = sorted(target.glob("*.py"))[-1]
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef _confgate_bench(value):\n    return value is not None\n")


def _define_variants(bench: Bench) -> None:
    sources = bench.ws.spec.sources
    cov = [f"--cov={source}" for source in sources]
    line_rc = branch_off_rcfile(bench.project, bench.out)
    line_cov = [*cov, *([f"--cov-config={line_rc}"] if line_rc else [])]
    lines_json, branches_json = bench.out / "cov-lines.json", bench.out / "cov-branches.json"
    own_json = bench.out / "cov-own.json"
    own_branch, own_source = _own_settings(bench)
    no_gate = ["-p", "no:confgate"]
    bench.variants = {
        "bare pytest": Variant(bench.pytest(*no_gate)),
        "pytest --cov, own settings": Variant(
            bench.pytest(*no_gate, *(["--cov"] if own_source else cov),
                         f"--cov-report=json:{own_json}")
        ),
        "gate, zero config": Variant(
            bench.pytest("--confgate"),
            "",
            after=lambda: _same_figures(
                bench, own_json, branch=own_branch,
                engine=BRANCH_ENGINE if own_branch else LINES_ENGINE,
            ),
        ),
        "gate, zero config, warm": Variant(bench.pytest("--confgate"), "", False),
        "pytest --cov": Variant(
            bench.pytest(*no_gate, *line_cov, f"--cov-report=json:{lines_json}")
        ),
        "pytest --cov --cov-branch": Variant(
            bench.pytest(*no_gate, *cov, "--cov-branch", f"--cov-report=json:{branches_json}")
        ),
        "gate, lines": Variant(
            bench.pytest("--confgate"),
            gate_config(sources, branch=False),
            after=lambda: _same_figures(bench, lines_json, branch=False, engine=LINES_ENGINE),
        ),
        "gate, lines, warm": Variant(
            bench.pytest("--confgate"), gate_config(sources, branch=False), False
        ),
        "gate, branches": Variant(
            bench.pytest("--confgate"),
            gate_config(sources, branch=True),
            after=lambda: _same_figures(bench, branches_json, branch=True, engine=BRANCH_ENGINE),
        ),
        "gate, pull request": Variant(
            bench.pytest("--confgate"),
            gate_config(sources, branch=None, changed=True),
            after=lambda: _require_pull_request_mode(bench),
        ),
        "gate, pull request, warm": Variant(bench.pytest("--confgate"), None, False),
    }


def _timed_rounds(bench: Bench, rounds: int) -> None:
    for number in range(1, rounds + 1):
        for variant in bench.variants.values():
            if variant.config == "":
                (bench.project / "confgate.yml").unlink(missing_ok=True)
            elif variant.config is not None:
                (bench.project / "confgate.yml").write_text(variant.config, encoding="utf-8")
            if variant.cold:
                shutil.rmtree(bench.project / ".confgate", ignore_errors=True)
            if variant.own_caches:
                _swap(bench.project / ".confgate", bench.project / ".confgate-older")
            try:
                if variant.own_caches and number == 1:  # its caches are warmed first, untimed
                    bench.ws.run(variant.argv, env=variant.env).require(0, 1)
                run = bench.ws.run(variant.argv, env=variant.env).require(0, 1)
            finally:
                if variant.own_caches:
                    _swap(bench.project / ".confgate", bench.project / ".confgate-older")
            variant.seconds.append(run.seconds)
            variant.cpu.append(run.cpu_seconds)
            if variant.after is not None:
                variant.after()
        line = ", ".join(f"{n} {v.seconds[-1]:.2f}s" for n, v in bench.variants.items())
        print(f"round {number}/{rounds}: {line}", flush=True)


Row = tuple[str, float, str, str]
"""(measure, value, target, "yes"/"NO"/"-")."""


def _ratios(bench: Bench) -> list[Row]:
    wall = {name: statistics.median(v.seconds) for name, v in bench.variants.items()}
    cpu = {name: statistics.median(v.cpu) for name, v in bench.variants.items()}

    def ratio(a: str, b: str, target: float | None, measure: dict[str, float] = wall) -> Row:
        value = measure[a] / measure[b]
        kind = "" if measure is wall else "CPU: "
        met = "-" if target is None else ("yes" if value <= target else "NO")
        return (f"{kind}{a} / {b}", value, f"<= {target:.2f}" if target else "-", met)

    rows = [
        ratio("gate, zero config", "bare pytest", 1.15),
        ratio("gate, zero config", "pytest --cov, own settings", 0.75),
        ratio("gate, zero config, warm", "bare pytest", 1.15),
        ratio("gate, zero config, warm", "pytest --cov, own settings", 0.75),
        ratio("gate, zero config", "bare pytest", 1.15, cpu),
        ratio("gate, zero config, warm", "bare pytest", 1.15, cpu),
        ratio("gate, branches", "bare pytest", 1.15),
        ratio("gate, branches", "pytest --cov --cov-branch", 0.75),
        ratio("gate, lines", "bare pytest", 1.15),
        ratio("gate, lines", "pytest --cov", 0.75),
        ratio("gate, lines, warm", "bare pytest", 1.15),
        ratio("gate, lines, warm", "pytest --cov", 0.75),
        ratio("gate, pull request", "bare pytest", 1.10),
        ratio("gate, pull request, warm", "bare pytest", 1.10),
        ratio("pytest --cov", "bare pytest", None),
        ratio("gate, lines, warm", "gate, lines", None),
        ratio("gate, lines", "bare pytest", 1.15, cpu),
        ratio("gate, pull request", "bare pytest", 1.10, cpu),
        ratio("gate, pull request, warm", "bare pytest", 1.10, cpu),
    ]
    rows += [(f"median seconds: {name}", value, "-", "-") for name, value in wall.items()]
    return rows


AGAINST = " (older code)"
"""Suffix of a variant run with the code of ``--against``."""
WARM = ("gate, zero config, warm", "gate, lines, warm", "gate, pull request, warm")


def _run_git(*args: str) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def _worktree(commit: str, cache: Path) -> Path:
    """This repository at ``commit``, checked out beside the benchmark's venvs and compiled
    once, as the current code is (``PYTHONDONTWRITEBYTECODE`` would recompile it each run)."""
    import compileall

    sha = _run_git("rev-parse", "--verify", f"{commit}^{{commit}}")
    where = cache / f"against-{sha[:12]}"
    if where.exists():
        _run_git("worktree", "remove", "--force", str(where))
    _run_git("worktree", "add", "--detach", str(where), sha)
    compileall.compile_dir(where / "pytest_confgate", quiet=1)
    return where


def _add_older(bench: Bench, older: Path, commit: str) -> None:
    """Each warm gate run once more, right after it, with the older code first on the path
    (the same configuration and caches: both versions' entries live side by side)."""
    variants: dict[str, Variant] = {}
    for name, variant in bench.variants.items():
        variants[name] = variant
        if name in WARM:
            variants[name + AGAINST] = Variant(variant.argv, None, False,
                                               env={"PYTHONPATH": str(older)}, own_caches=True)
    bench.variants = variants
    print(f"beside each warm gate run: the code at {commit} ({older})\n")


def _swap(one: Path, other: Path) -> None:
    aside = one.with_name(one.name + "-swap")
    if one.exists():
        one.rename(aside)
    if other.exists():
        other.rename(one)
    if aside.exists():
        aside.rename(other)


def _against_rows(bench: Bench) -> list[Row]:
    rows: list[Row] = []
    for name in WARM:
        older = bench.variants.get(name + AGAINST)
        if older is None:
            continue
        now = statistics.median(bench.variants[name].seconds)
        then = statistics.median(older.seconds)
        bare = statistics.median(bench.variants["bare pytest"].seconds)
        rows.append((f"{name}: now / older code", now / then, "-", "-"))
        rows.append((f"{name}{AGAINST} / bare pytest", then / bare, "-", "-"))
    return rows


def _own_settings(bench: Bench) -> tuple[bool, bool]:
    """Whether the project's own coverage settings measure branches (click: yes), and whether
    they choose the source (then a bare ``--cov`` measures what zero config measures)."""
    import coverage

    here = Path.cwd()
    try:
        os.chdir(bench.project)  # coverage.py finds the project's settings from its folder
        cov = coverage.Coverage(data_file=None)
        chosen = bool(cov.get_option("run:source") or cov.get_option("run:source_pkgs"))
        return bool(cov.get_option("run:branch")), chosen
    finally:
        os.chdir(here)


def _same_figures(bench: Bench, reference: Path, *, branch: bool, engine: str) -> None:
    """The gate's figures are coverage.py's (pytest-cov's JSON of the same round)."""
    if not reference.is_file():
        return  # the reference command runs later in the first round
    theirs = json.loads(reference.read_text(encoding="utf-8"))["totals"]
    ours = bench.coverage_details()
    keys = ["covered_lines", "num_statements"]
    keys += ["num_branches", "covered_branches", "missing_branches"] if branch else []
    for key in keys:
        if ours.get(key) != theirs.get(key):
            bench.problems.append(f"{key}: gate {ours.get(key)} vs coverage.py {theirs.get(key)}")
    bench.checked.append(
        f"{engine}: " + ", ".join(f"{key} {ours.get(key)}={theirs.get(key)}" for key in keys)
    )
    if not ours["engine"].startswith(engine):
        bench.problems.append(f"engine: gate used {ours['engine']!r}, expected {engine!r}")


def _require_pull_request_mode(bench: Bench) -> None:
    """Refuse to report a pull-request time that was not measured in pull-request mode."""
    report = bench.report()
    details = bench.coverage_details()
    change = report.get("change") or {}
    branch = _own_settings(bench)[0]
    engine = BRANCH_ENGINE if branch else LINES_ENGINE
    if (change.get("config_changed") or details.get("engine") != engine
            or bool(details.get("branch")) != branch):
        raise SystemExit(f"PR mode was not measured: change={change}, coverage={details}")


TAIL_PLUGIN = """\
import os, time
last = [0.0]
def pytest_runtest_logfinish():
    last[0] = time.time()
def pytest_unconfigure():
    with open(os.environ["CONFGATE_BENCH_TAIL"], "w") as out:
        out.write(repr(last[0]))
"""


def _tail(bench: Bench, repeats: int) -> list[Row]:
    """Seconds from the end of the last test to the end of the process, bare and gated.

    The difference is what the gate adds after the tests (coverage.py's report, waiting for
    bandit, writing the report); a tiny plugin stamps the last test's end.
    """
    (bench.out / "confgate_bench_tail.py").write_text(TAIL_PLUGIN, encoding="utf-8")
    stamp = bench.out / "last-test"
    env = {"PYTHONPATH": str(bench.out), "CONFGATE_BENCH_TAIL": str(stamp)}
    (bench.project / "confgate.yml").write_text(
        gate_config(bench.ws.spec.sources, branch=False), encoding="utf-8"
    )
    tails: dict[str, list[float]] = {"bare": [], "gate": [], "report": []}
    for _ in range(repeats):
        for name, extra in (("bare", ["-p", "no:confgate"]), ("gate", ["--confgate"])):
            shutil.rmtree(bench.project / ".confgate", ignore_errors=True)
            bench.ws.run(bench.pytest("-p", "confgate_bench_tail", *extra), env=env).require(0, 1)
            ended = time.time()
            tails[name].append(ended - float(stamp.read_text(encoding="utf-8")))
        tails["report"].append(float(bench.coverage_details().get("duration_s", 0.0)))
    bare, gate, report = (statistics.median(tails[n]) for n in ("bare", "gate", "report"))
    return [
        ("seconds after the last test: bare pytest", bare, "-", "-"),
        ("seconds after the last test: gate, lines", gate, "-", "-"),
        ("  of which coverage.py's report (gate, lines)", report, "-", "-"),
    ]


def _tool_seconds(bench: Bench) -> float:
    return sum(
        float(m["details"].get("duration_s", 0.0))
        for m in bench.report()["metrics"]
        if m["type"] in ("lint_score", "security_score")
    )


def _warm_tools(bench: Bench, repeats: int) -> list[Row]:
    (bench.project / "confgate.yml").write_text(
        gate_config(bench.ws.spec.sources, branch=False), encoding="utf-8"
    )
    argv = bench.pytest("--confgate")
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(repeats):
        shutil.rmtree(bench.project / ".confgate", ignore_errors=True)
        bench.ws.run(argv).require(0, 1)
        cold.append(_tool_seconds(bench))
        bench.ws.run(argv).require(0, 1)
        warm.append(_tool_seconds(bench))
    ratio = statistics.median(warm) / max(statistics.median(cold), 1e-9)
    return [
        ("lint+security, warm / cold", ratio, "<= 0.10", "yes" if ratio <= 0.10 else "NO"),
        ("median seconds: lint+security cold", statistics.median(cold), "-", "-"),
    ]


def _startup(bench: Bench, runs: int) -> list[Row]:
    """``pytest --co`` of one small test file with the plugin installed, enabled or not."""
    tests = bench.project / "tests"
    first = sorted(tests.glob("test_*.py"))[:1] if tests.is_dir() else []
    target = [str(first[0])] if first else []
    base = [bench.ws.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", *target]
    on: list[float] = []
    off: list[float] = []
    for _ in range(runs):
        on.append(bench.ws.run(base).require(0, 5).seconds)
        off.append(bench.ws.run([*base, "-p", "no:confgate"]).require(0, 5).seconds)
    overhead_ms = (statistics.median(on) - statistics.median(off)) * 1000
    met = "yes" if overhead_ms <= 15 else "NO"
    return [("start-up overhead, installed not enabled (ms)", overhead_ms, "<= 15", met)]


def _xdist_figures(bench: Bench) -> None:
    (bench.project / "confgate.yml").write_text(
        gate_config(bench.ws.spec.sources, branch=False), encoding="utf-8"
    )
    keys = ("covered_lines", "num_statements", "missing")
    bench.ws.run(bench.pytest("--confgate")).require(0, 1)
    serial = {k: bench.coverage_details().get(k) for k in keys}
    bench.ws.run(bench.pytest("--confgate", "-n", "2")).require(0, 1)
    details = bench.coverage_details()
    if {k: details.get(k) for k in keys} != serial:
        bench.problems.append("pytest -n 2 --confgate figures differ from the serial run's")
    if details.get("engine") != LINES_ENGINE:
        bench.problems.append(f"xdist workers used {details.get('engine')!r}, not line probes")


def _merge_cost(bench: Bench, shards: int) -> list[Row]:
    """Seconds ``confgate merge`` takes over ``shards`` shard reports and their coverage data.

    Each shard is this suite's own gate run (its report made unique, as a real shard's is):
    the cost is the merge's, re-measuring coverage from every shard's data, not the tests'.
    """
    data = bench.out / "shard.coverage"
    (bench.project / "confgate.yml").write_text(
        gate_config(bench.ws.spec.sources, branch=False), encoding="utf-8"
    )
    bench.ws.run(bench.pytest("--confgate", f"--confgate-coverage-data={data}")).require(0, 1)
    report = bench.report()
    names: list[str] = []
    for index in range(shards):
        shard = bench.out / f"shard-{index}.json"
        shard.write_text(json.dumps({**report, "generated_at": f"shard {index}"}), "utf-8")
        shutil.copy(data, bench.out / f"shard-{index}.coverage")
        names.append(str(shard))
    confgate = bench.ws.tool("confgate")
    merged = bench.project / "confgate-merged.json"  # merge writes inside the working tree only
    argv = [confgate, "merge", *names, "--expect", str(shards), "-o", str(merged)]
    argv += ["--coverage", *(str(bench.out / f"shard-{i}.coverage") for i in range(shards))]
    seconds = statistics.median(bench.ws.run(argv).require(0, 1).seconds for _ in range(3))
    return [(f"seconds: confgate merge of {shards} shards", seconds, "-", "-")]


def _print(title: str, rows: list[Row], problems: list[str], checked: list[str]) -> None:
    width = max(len(row[0]) for row in rows)
    print(f"\n{title}\n{'measure':<{width}}  {'value':>9}  {'target':>8}  met")
    for name, value, target, met in rows:
        print(f"{name:<{width}}  {value:>9.3f}  {target:>8}  {met}")
    print("\nfigures compared (gate=coverage.py):\n  " + "\n  ".join(dict.fromkeys(checked)))
    same = "yes" if not problems else "NO:\n  " + "\n  ".join(problems)
    print(f"\nfigures equal coverage.py's (lines, branches) and xdist's equal serial: {same}")


def _results(spec: rp.ProjectSpec, bench: Bench, rows: list[Row]) -> dict[str, Any]:
    return {
        "project": f"{spec.name} {spec.version}",
        "rows": [{"measure": r[0], "value": r[1], "target": r[2], "met": r[3]} for r in rows],
        "runs": {n: {"seconds": v.seconds, "cpu_seconds": v.cpu}
                 for n, v in bench.variants.items()},
        "figures_equal": not bench.problems,
        "figures_compared": list(dict.fromkeys(bench.checked)),
        "problems": bench.problems,
    }


def _write_json(path: Path, projects: list[dict[str, Any]]) -> None:
    data = {
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average": list(os.getloadavg()),
        "projects": projects,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"results: {path}")


if __name__ == "__main__":
    sys.exit(main())
