"""Issue 26 compatibility corpus: the gate must not change the outcome of any test it measures.

    python benchmarks/compat_corpus.py                       # every project of the corpus
    python benchmarks/compat_corpus.py --project jinja2 click --json out.json

Each project is a pinned sdist from the package index, installed (editable) with this
repository into a venv under ``.confgate/bench`` (``--cache`` to move it; git-ignored) and
committed to a git repository of its own, as a user's checkout is. Its suite then runs three
times, each with ``--junitxml``:

- bare: ``pytest -p no:confgate`` (the plugin not even loaded);
- ``pytest --confgate`` with no configuration at all (zero config: the project's own coverage
  settings, so branch coverage where the project turns it on);
- ``pytest --confgate`` with a ``confgate.yml`` of ``{type: test_coverage, branch: false}``
  (line probes for every measured module).

Every test's outcome (passed, failed, error, skipped) is compared with the bare run's. A test
whose outcome differs is run again, bare and under the gate variant that differed: a difference
that does not come back in both (a test that fails now and then on a loaded machine) is listed
as flaky, not as a difference. The table gives, per project, the tests, the failures of the
bare run, and the differences of each gate variant; exit status 1 when any difference remains.
Which project stands for which style (src layout, doctests, plugins, ``filterwarnings =
error``, async, C extensions) is listed in ``CORPUS`` and in docs/compatibility.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET  # our own pytest's junit file, not untrusted
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _realproject as rp  # siblings, found through the line above


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
}

BRANCH_OFF = "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage, branch: false}]\n"
VARIANTS = ("zero config", "branch: false")
OUTCOMES = ("passed", "failed", "error", "skipped")


@dataclass
class Result:
    name: str
    version: str
    style: str
    tests: int = 0
    bare_failed: int = 0
    differences: dict[str, list[str]] = field(default_factory=dict)
    flaky: dict[str, list[str]] = field(default_factory=dict)
    problem: str = ""


def main() -> int:
    args = _arguments()
    args.cache = args.cache.resolve()  # the suites run in their own folders
    results = []
    with rp.exclusive(args.cache):
        for name in args.project:
            result = _project(CORPUS[name], args.cache)
            results.append(result)
            print(_row(result), flush=True)
    print("\n" + _table(results))
    out = args.json or args.cache / "compat_corpus.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([r.__dict__ for r in results], indent=2) + "\n", encoding="utf-8")
    failed = any(r.problem or any(r.differences.values()) for r in results)
    return 1 if failed else 0


def _project(entry: Entry, cache: Path) -> Result:
    spec = entry.spec
    result = Result(spec.name, spec.version, entry.style)
    try:
        ws = rp.prepare(spec, cache)
        _make_repository(ws)
    except (RuntimeError, OSError) as exc:
        result.problem = f"setup failed: {str(exc)[:2000]}"
        return result
    out = cache / f"corpus-{spec.sdist_stem}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    bare = _outcomes(ws, out / "bare.xml", gate=None)
    result.tests = len(bare)
    result.bare_failed = sum(1 for o in bare.values() if o in ("failed", "error"))
    if not bare or "<run>" in bare:
        result.problem = f"the bare run reported no test or crashed: see {out / 'bare.log'}"
        return result
    for variant in VARIANTS:
        config = BRANCH_OFF if variant == "branch: false" else ""
        gated = _outcomes(ws, out / f"{variant.replace(' ', '-').strip(':')}.xml", gate=config)
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
    return result


def _make_repository(ws: rp.Workspace) -> None:
    """The pristine project committed as ``main``: a user's checkout, gate outputs ignored."""
    git = ["git", "-c", "init.defaultBranch=main"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        ws.run([*git, *step], env=rp.GIT_ENV).require()
        if step == ["init", "-q"]:
            exclude = ws.project / ".git" / "info" / "exclude"
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text("confgate.yml\nconfgate-report.json\n.confgate/\n")


def _outcomes(ws: rp.Workspace, junit: Path, gate: str | None) -> dict[str, str]:
    """Each test's outcome in one run of the suite (``gate``: None bare, "" zero config)."""
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
    junit.unlink(missing_ok=True)
    done = ws.run([*argv, f"--junitxml={junit}"], timeout_s=3600)
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


def _row(result: Result) -> str:
    if result.problem:
        return f"| {result.name} {result.version} | - | - | {result.problem[:200]} |"
    counts = " | ".join(str(len(result.differences.get(v, []))) for v in VARIANTS)
    flaky = sum(len(v) for v in result.flaky.values())
    note = f" ({flaky} flaky, not counted)" if flaky else ""
    return (f"| {result.name} {result.version} | {result.tests} | {result.bare_failed} | "
            f"{counts}{note} |")


def _table(results: list[Result]) -> str:
    head = ("| project | tests | failing bare | differences, zero config "
            "| differences, branch: false |")
    lines = [head, "|---|---|---|---|---|", *(_row(r) for r in results)]
    for result in results:
        for variant, tests in result.differences.items():
            lines += [f"  {result.name} ({variant}): {t}" for t in tests]
    return "\n".join(lines)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", nargs="+", choices=list(CORPUS), default=list(CORPUS))
    parser.add_argument("--cache", type=Path, default=rp.REPO_CACHE, help="venvs and sdists")
    parser.add_argument("--json", type=Path, default=None, help="where to write the results")
    return parser.parse_args()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())

