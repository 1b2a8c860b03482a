"""Compatibility corpus: the gate changes no test's outcome, and its figures are coverage.py's.

    python benchmarks/compat_corpus.py                       # every project of the corpus
    python benchmarks/compat_corpus.py --project jinja2 click --json out.json
    python benchmarks/compat_corpus.py --python 3.11 3.12 /opt/py314/bin/python3.14
    python benchmarks/compat_corpus.py --install wheel --project click attrs

Each project is a pinned sdist from the package index, installed (editable) with this
repository (editable, or with ``--install wheel`` a wheel built from the working tree, as users
install it) into a venv under ``.confgate/bench`` (``--cache`` to move it; git-ignored), one venv
per Python, and committed to a git repository of its own, as a user's checkout is. ``--python``
names the interpreters (a version found on PATH or under pyenv, or a path); one that is not on
this machine is skipped with a message. Per project and Python the suite runs, each time with
``--junitxml``:

- bare: ``pytest -p no:confgate`` (the plugin not even loaded);
- ``coverage run -m pytest`` (+ ``coverage combine`` when it left parallel data files) and
  ``coverage json`` on the project's own settings, and again with ``--branch``;
- ``pytest --confgate`` with no configuration at all (zero config: the project's own coverage
  settings), compared with the first;
- ``pytest --confgate`` with ``{type: test_coverage, branch: true}``, compared with the second
  (reused when the project's own settings already measure branches);
- ``pytest --confgate`` with ``{type: test_coverage, branch: false}`` (outcomes only).

Every test's outcome (passed, failed, error, skipped) is compared with the bare run's. A test
whose outcome differs is run again, bare and under the gate variant that differed: a difference
that does not come back in both (a test that fails now and then on a loaded machine) is listed
as flaky, not as a difference. The figures compared are the totals (lines, branches) and, per
file, the statements, branches and missing lines (``_corpus_figures.py``); every file that
differs is listed. The table gives, per project and Python, the tests, the failures of the bare
run, the outcome differences and whether the figures are equal; exit status 1 when any
difference remains. Which project stands for which style or coverage setting is listed in
``CORPUS`` and in docs/compatibility.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET  # our own pytest's junit file, not untrusted
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _corpus_figures as figures  # siblings, found through the line above
import _realproject as rp


@dataclass(frozen=True)
class Entry:
    spec: rp.ProjectSpec
    style: str


def _spec(name: str, version: str, *needs: str, args: tuple[str, ...] = ()) -> rp.ProjectSpec:
    return rp.ProjectSpec(
        name=name, version=version, sources=(), test_requirements=needs, pytest_args=args
    )


CORPUS: dict[str, Entry] = {
    "python-dateutil": Entry(
        _spec("python-dateutil", "4.0.0", "hypothesis", "freezegun", "pytest-cov", "attrs"),
        "src layout, import-time DeprecationWarnings checked with stacklevel, doctests",
    ),
    "jinja2": Entry(
        _spec("jinja2", "3.1.6", "trio"),
        "src layout, filterwarnings = error, async (trio, asyncio), code-object identity "
        "(@internalcode), C-extension user (markupsafe)",
    ),
    "click": Entry(
        _spec("click", "8.5.1"),
        "src layout, filterwarnings = error, branch = true",
    ),
    "more-itertools": Entry(
        _spec("more-itertools", "11.2.1", *rp.PROJECTS["more-itertools"].test_requirements,
              args=rp.PROJECTS["more-itertools"].pytest_args),
        "flat layout, unittest-style, doctests of the docs",
    ),
    "attrs": Entry(
        _spec("attrs", "25.4.0", "hypothesis", "pympler", "cloudpickle",
              args=("--hypothesis-seed=0",)),
        "src layout, hypothesis, pickling and copying of generated classes",
    ),
    "pyparsing": Entry(
        _spec("pyparsing", "3.3.3", "railroad-diagrams", "jinja2", args=("tests",)),
        "flat layout, hot-loop parser",
    ),
    "sqlparse": Entry(_spec("sqlparse", "0.6.1"), "flat layout, branch = true"),
    "marshmallow": Entry(
        _spec("marshmallow", "4.4.0", "simplejson"), "src layout, warnings checked by tests"
    ),
    "markupsafe": Entry(_spec("markupsafe", "3.0.4"), "C extension (built from the sdist)"),
    "pytest-mock": Entry(
        _spec("pytest-mock", "3.17.0", "pytest-asyncio"),
        "a pytest plugin (its modules are rewritten by pytest), pytester, async",
    ),
    "asgiref": Entry(
        _spec("asgiref", "3.13.0", "pytest-asyncio", "mypy"), "async (asyncio, threads)"
    ),
    "toolz": Entry(_spec("toolz", "1.2.0"), "flat layout, doctests (--doctest-modules)"),
    "iniconfig": Entry(_spec("iniconfig", "2.3.1"), "src layout, small"),
    # Projects that set the coverage.py options the figures must honour (issue 35).
    "executing": Entry(
        _spec("executing", "2.3.0", "asttokens", "littleutils", "pysource-minimize", "rich"),
        "relative_files, include, parallel, branch = true; tests run pytest in pytest",
    ),
    "cloudpickle": Entry(
        _spec("cloudpickle", "2.2.1", "psutil", "tests/cloudpickle_testpkg"),
        "flat layout, no coverage settings, tests pickle in child processes",
    ),
    "typeguard": Entry(
        _spec("typeguard", "4.6.1", "mypy", "typing_extensions"),
        "src layout, source = typeguard, an import hook of its own (a pytest plugin)",
    ),
    "freezegun": Entry(_spec("freezegun", "1.5.5"), "flat layout, patches time modules"),
    "wrapt": Entry(
        _spec("wrapt", "2.5.2", "setuptools", args=("tests",)),
        "src layout, C extension, decorators and proxies",
    ),
    "decorator": Entry(
        _spec("decorator", "5.3.1", args=("tests/test.py",)),
        "src layout, one module, generated signatures",
    ),
    "boltons": Entry(
        _spec("boltons", "26.2.0", args=("tests",)),
        "flat layout, many small modules, one-line defs and classes",
    ),
    "structlog": Entry(
        _spec("structlog", "26.1.0", "pytest-asyncio", "simplejson", "time-machine", "freezegun"),
        "src layout, source, [paths], parallel, branch = true, report omit, async",
    ),
    "exceptiongroup": Entry(
        _spec("exceptiongroup", "1.3.2"),
        "src layout, relative_files, source, exclude_also, code for older Pythons",
    ),
    "pluggy": Entry(
        _spec("pluggy", "1.7.0", "pytest-benchmark"),
        "imported by pytest before any plugin: include (tests too), [paths], parallel, "
        "branch = 1, filterwarnings = error",
    ),
    "pyproject-api": Entry(
        _spec("pyproject-api", "1.12.1", "covdefaults", "pytest-mock", "setuptools",
              args=("tests",)),
        "src layout, covdefaults (branch, fail_under = 100), patch = subprocess, parallel, "
        "[paths]; tests build packages in child processes",
    ),
    "pyflakes": Entry(
        _spec("pyflakes", "4.1.0", "covdefaults"),
        "flat layout, covdefaults: source = ., branch, fail_under = 100, its exclude_lines",
    ),
    "python-slugify": Entry(
        _spec("python-slugify", "9.2.0"),
        "relative_files, parallel, branch, a source folder that does not exist, [paths], "
        "fail_under = 97",
    ),
    "humanize": Entry(
        _spec("humanize", "4.17.0", "freezegun", args=("--ignore=tests/test_benchmarks.py",)),
        "src layout, core = sysmon, disable_warnings, exclude_also",
    ),
    "tabulate": Entry(
        _spec("tabulate", "0.10.0", "wcwidth", args=("--doctest-modules", "--ignore=benchmark")),
        "flat layout, no coverage settings, doctests, the CLI run in child processes",
    ),
    "outcome": Entry(
        _spec("outcome", "1.3.0.post0", "pytest-asyncio"),
        "src layout, source includes tests/, omit, branch",
    ),
}

def _gate(branch: bool) -> str:
    coverage = f"{{type: test_coverage, branch: {'true' if branch else 'false'}}}"
    return f"gate:\n  metrics: [{{type: test_pass_rate}}, {coverage}]\n"


GATE_CONFIG = {"zero config": "", "branch: true": _gate(True), "branch: false": _gate(False)}
VARIANTS = tuple(GATE_CONFIG)
FIGURES = {"zero config": False, "branch: true": True}
"""The variants whose figures are compared, and whether ``coverage run`` gets ``--branch``."""
OUTCOMES = ("passed", "failed", "error", "skipped")
DATA = ".confgate/corpus.coverage"
"""The gate's coverage data in the project (git-ignored there), moved beside the results."""


@dataclass
class Result:
    name: str
    version: str
    style: str
    python: str = ""
    tests: int = 0
    bare_failed: int = 0
    differences: dict[str, list[str]] = field(default_factory=dict)
    flaky: dict[str, list[str]] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str = ""
    install: str = "editable"


def main() -> int:
    args = _arguments()
    args.cache = args.cache.resolve()  # the suites run in their own folders
    if args.here:
        results = _run_here(args)
    else:
        results = []
        for wanted in args.python:
            python = _interpreter(wanted)
            if python is None:
                print(f"Python {wanted}: not on this machine, skipped", flush=True)
            elif Path(python).resolve() == Path(sys.executable).resolve():
                results += _run_here(args)
            else:
                results += _run_child(python, args)
        print("\n" + _table(results, args.variant) + "\n\n" + _matrix(results, args.variant))
    out = args.json or args.cache / "compat_corpus.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n", encoding="utf-8")
    failed = any(r.problem or any(r.differences.values())
                 or not all(f.get("equal") for f in r.figures.values()) for r in results)
    return 1 if failed else 0


def _run_here(args: argparse.Namespace) -> list[Result]:
    results = []
    with rp.exclusive(args.cache):
        for name in args.project:
            result = _project(CORPUS[name], args.cache, args.variant, args.install)
            results.append(result)
            print(_row(result, args.variant), flush=True)
    return results


def _run_child(python: str, args: argparse.Namespace) -> list[Result]:
    """The corpus under another interpreter: this script again, run by it (stdlib only)."""
    out = args.cache / f"compat_corpus-{Path(python).parent.parent.name}.json"
    out.unlink(missing_ok=True)
    argv = [python, __file__, "--here", "--cache", str(args.cache), "--json", str(out)]
    argv += ["--project", *args.project, "--variant", *args.variant, "--install", args.install]
    subprocess.run(argv, check=False)  # our own script, an argv list
    if not out.is_file():
        print(f"{python}: the corpus run wrote no results", flush=True)
        return []
    return [Result(**data) for data in json.loads(out.read_text(encoding="utf-8"))]


def _interpreter(wanted: str) -> str | None:
    """A path, or a version found under pyenv or on PATH; None when this machine lacks it."""
    found: list[str] = []
    if os.sep in wanted:
        found = [wanted]
    else:
        pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
        found = [str(p) for p in sorted(pyenv.glob(f"{wanted}*/bin/python"))]
        found += [w for w in [shutil.which(f"python{wanted}")] if w]
    for python in found:
        probe = subprocess.run(  # an interpreter path, an argv list
            [python, "-c", "import sys; print(*sys.version_info[:2], sep='.')"],
            capture_output=True, text=True, check=False,
        )
        version = probe.stdout.strip()
        if probe.returncode == 0 and (os.sep in wanted or f"{wanted}.".startswith(f"{version}.")):
            return python
    return None


def _project(entry: Entry, cache: Path, variants: list[str], install: str) -> Result:
    spec = entry.spec
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    result = Result(spec.name, spec.version, entry.style, python=sys.version.split()[0],
                    install=install)
    try:
        ws = rp.prepare(spec, cache, install=install)
        _make_repository(ws)
    except (RuntimeError, OSError) as exc:
        result.problem = f"setup failed: {str(exc)[:2000]}"
        return result
    out = cache / f"corpus-{spec.sdist_stem}-py{python}"
    if install != "editable":
        out = out.with_name(f"{out.name}-{install}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    bare = _outcomes(ws, out / "bare.xml", gate=None)
    result.tests = len(bare)
    result.bare_failed = sum(1 for o in bare.values() if o in ("failed", "error"))
    if not bare or "<run>" in bare:
        result.problem = f"the bare run reported no test or crashed: see {out / 'bare.log'}"
        return result
    references: dict[bool, tuple[dict[str, Any] | None, str]] = {}
    for variant in variants:
        config = GATE_CONFIG[variant]
        tag = variant.replace(" ", "-").replace(":", "")
        gated = _outcomes(ws, out / f"{tag}.xml", gate=config, keep=out / f"gate-{tag}")
        differ = _differences(bare, gated)
        if differ:
            again_bare = _outcomes(ws, out / "bare-again.xml", gate=None)
            again = _outcomes(ws, out / "gate-again.xml", gate=config)
            real = [t for t in differ if again_bare.get(t) == bare.get(t)
                    and again.get(t) == gated.get(t)]
            result.flaky[variant] = [t for t in differ if t not in real]
            differ = real
        result.differences[variant] = [
            f"{t}: bare {bare.get(t, 'absent')}, gate {gated.get(t, 'absent')}" for t in differ
        ]
        if variant in FIGURES:
            result.figures[variant] = _figures(ws, out, tag, FIGURES[variant], references)
    return result


def _figures(
    ws: rp.Workspace, out: Path, tag: str, branch: bool,
    references: dict[bool, tuple[dict[str, Any] | None, str]],
) -> dict[str, Any]:
    """The gate run ``tag`` against ``coverage run`` (one run per setting, shared)."""
    report = out / f"gate-{tag}.json"
    if not report.is_file():
        return {"equal": False, "reason": "the gate wrote no report"}
    gate = json.loads(report.read_text(encoding="utf-8"))
    source = None
    if not figures.chooses_source(ws):
        source = figures.coverage_details(gate).get("source") or None
    if branch not in references:
        argv = ["-q", "-p", "no:cacheprovider", *ws.spec.pytest_args]
        argv.append(f"--junitxml={out / ('coverage-branch.xml' if branch else 'coverage.xml')}")
        name = "branch" if branch else "own"
        references[branch] = figures.coverage_reference(
            ws, out, name, argv, branch=branch, source=source
        )
        reference = references[branch][0]
        if not branch and reference and reference["meta"].get("branch_coverage"):
            references[True] = references[branch]  # --branch would measure the same
    reference, why = references[branch]
    if reference is None:
        return {"equal": False, "reason": why}
    files = figures.gate_files(ws, out / f"gate-{tag}.coverage", out, tag)
    compared = figures.compare(gate, files, reference, ws.project)
    return {**compared, "source": f"--source={','.join(source)}" if source else "own settings"}


def _make_repository(ws: rp.Workspace) -> None:
    """The pristine project committed as ``main``: a user's checkout, gate outputs ignored."""
    git = ["git", "-c", "init.defaultBranch=main"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        ws.run([*git, *step], env=rp.GIT_ENV).require()
        if step == ["init", "-q"]:
            exclude = ws.project / ".git" / "info" / "exclude"
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text("confgate.yml\nconfgate-report.json\n.confgate/\n")


def _outcomes(
    ws: rp.Workspace, junit: Path, gate: str | None, keep: Path | None = None
) -> dict[str, str]:
    """Each test's outcome in one run of the suite (``gate``: None bare, "" zero config).

    ``keep``: where the gate's report (``.json``) and coverage data (``.coverage``) go.
    """
    config = ws.project / "confgate.yml"
    config.unlink(missing_ok=True)
    shutil.rmtree(ws.project / ".confgate", ignore_errors=True)
    argv = [ws.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *ws.spec.pytest_args]
    if gate is None:
        argv += ["-p", "no:confgate"]
    else:
        argv.append("--confgate")
        if gate:
            config.write_text(gate, encoding="utf-8")
    # The gate writes inside the working tree only: its files are moved to ``keep`` after.
    made = {ws.project / "confgate-report.json": ".json", ws.project / DATA: ".coverage"}
    if gate is not None and keep is not None:
        for written, suffix in made.items():
            written.unlink(missing_ok=True)
            keep.with_suffix(suffix).unlink(missing_ok=True)
        argv.append(f"--confgate-coverage-data={DATA}")
    junit.unlink(missing_ok=True)
    done = ws.run([*argv, f"--junitxml={junit}"], timeout_s=3600)
    if gate is not None and keep is not None:
        for written, suffix in made.items():
            if written.is_file():
                shutil.move(written, keep.with_suffix(suffix))
    (junit.with_suffix(".log")).write_text(
        f"{' '.join(argv)}\nexit {done.returncode}, {done.seconds:.1f} s\n"
        f"{done.stdout[-20000:]}\n--- stderr\n{done.stderr[-20000:]}", encoding="utf-8"
    )
    outcomes = _read_junit(junit)
    if "INTERNALERROR" in done.stdout + done.stderr:
        outcomes["<run>"] = "internal error"
    return outcomes


def _read_junit(junit: Path) -> dict[str, str]:
    if not junit.is_file():
        return {}
    outcomes: dict[str, str] = {}
    for case in ET.parse(junit).iter("testcase"):  # noqa: S314  # written by our own run
        key = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                break
        # A test with a failing teardown appears twice (call passed, teardown error).
        if outcomes.get(key) in ("failed", "error"):
            continue
        outcomes[key] = outcome
    return outcomes


def _differences(bare: dict[str, str], gated: dict[str, str]) -> list[str]:
    return sorted(t for t in bare.keys() | gated.keys() if bare.get(t) != gated.get(t))


def _row(result: Result, variants: list[str]) -> str:
    installed = "" if result.install == "editable" else f" ({result.install})"
    head = f"| {result.name} {result.version} | {result.python}{installed} "
    if result.problem:
        return head + f"| - | - | {result.problem[:200]} |"
    counts = " / ".join(str(len(result.differences.get(v, []))) for v in variants)
    flaky = sum(len(v) for v in result.flaky.values())
    note = f" ({flaky} flaky, not counted)" if flaky else ""
    cells = [_figures_cell(result.figures.get(v)) for v in variants if v in FIGURES]
    return (head + f"| {result.tests} | {result.bare_failed} | {counts}{note} | "
            + " | ".join(cells) + " |")


def _figures_cell(compared: dict[str, Any] | None) -> str:
    """``equal``, or the totals that differ (gate vs coverage.py) and how many files."""
    if compared is None:
        return "-"
    if compared.get("equal"):
        return "equal"
    if "totals" not in compared:
        return f"not compared: {compared.get('reason', '')[:120]}"
    parts = []
    for kind, covered, total in (("lines", "covered_lines", "num_statements"),
                                 ("branches", "covered_branches", "num_branches")):
        ours, theirs = compared["totals"].get(covered), compared["totals"].get(total)
        if ours and ours[0] is not None and (ours != compared["totals"][covered]
                                             or ours[0] != ours[1] or theirs[0] != theirs[1]):
            parts.append(f"{kind} {ours[0]}/{theirs[0]} vs {ours[1]}/{theirs[1]}")
    if compared.get("below_fail_under") and compared.get("decision") == "pass":
        parts.append("below coverage.py's fail_under, gate decision pass")
    if compared.get("status") not in (None, "ok"):
        parts.append(f"gate {compared['status']}: {compared.get('reason', '')[:100]}")
    files = len(compared.get("files", []))
    parts.append(f"{files} file{'s' if files != 1 else ''} differ")
    return "; ".join(parts)


def _table(results: list[Result], variants: list[str]) -> str:
    compared = [v for v in variants if v in FIGURES]
    head = (f"| project | Python | tests | failing bare | outcome differences "
            f"({' / '.join(variants)}) | "
            + " | ".join(f"figures, {v}" for v in compared) + " |")
    lines = [head, "|" + "---|" * (5 + len(compared)), *(_row(r, variants) for r in results)]
    for result in results:
        tag = f"{result.name} {result.python}"
        for variant, tests in result.differences.items():
            lines += [f"  {tag} ({variant}): {t}" for t in tests]
        for variant, compared_figures in result.figures.items():
            lines += [f"  {tag} ({variant}): {f}" for f in compared_figures.get("files", [])]
    return "\n".join(lines)


def _matrix(results: list[Result], variants: list[str]) -> str:
    """Projects x Pythons: outcomes the same?, figures equal? (files that differ)."""
    pythons = sorted({r.python for r in results}, key=lambda v: tuple(map(int, v.split("."))))
    cells: dict[str, dict[str, str]] = {}
    for result in results:
        cells.setdefault(f"{result.name} {result.version}", {})[result.python] = _cell(
            result, variants
        )
    compared = " / ".join(v for v in variants if v in FIGURES)
    lines = [f"| project | {' | '.join(pythons)} |", "|---|" + "---|" * len(pythons),
             *(f"| {name} | " + " | ".join(row.get(v, "-") for v in pythons) + " |"
               for name, row in cells.items())]
    return f"outcomes; figures ({compared})\n" + "\n".join(lines)


def _cell(result: Result, variants: list[str]) -> str:
    if result.problem:
        return "not run"
    differ = sum(len(result.differences.get(v, [])) for v in variants)
    outcomes = "same" if not differ else f"{differ} differ"
    figures = []
    for variant in (v for v in variants if v in FIGURES):
        compared = result.figures.get(variant, {})
        files = len(compared.get("files", []))
        figures.append("equal" if compared.get("equal") else
                       f"differ ({files} file{'s' if files != 1 else ''})" if "totals" in compared
                       else "not compared")
    return f"{outcomes}; {' / '.join(figures)}"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", nargs="+", choices=list(CORPUS), default=list(CORPUS))
    parser.add_argument("--python", nargs="+", default=[sys.executable],
                        help="interpreters: versions (3.12) or paths; absent ones are skipped")
    parser.add_argument("--variant", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--cache", type=Path, default=rp.REPO_CACHE, help="venvs and sdists")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    parser.add_argument("--install", choices=rp.INSTALLS, default="editable",
                        help="this repository in each venv: editable (default) or a wheel "
                        "built from the working tree, as users install it")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())

