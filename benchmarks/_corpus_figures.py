"""Coverage figures of one suite, the gate's and coverage.py's own, compared file by file.

Used by ``compat_corpus.py``. coverage.py's side is what a user runs by hand: ``coverage run
-m pytest`` (``--branch`` when the gate forces branches on), ``coverage combine`` when the run
left parallel data files (``parallel``, ``patch = ["subprocess"]``, ``concurrency =
["multiprocessing"]``), then ``coverage json``, all on the project's own settings. The gate's
side is its report (totals and missing lines) and, for the per-file statements and branches,
``coverage json`` over the data file the gate saved (``--confgate-coverage-data``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _realproject as rp  # sibling, found through the path compat_corpus.py sets

TOTALS = ("covered_lines", "num_statements", "covered_branches", "num_branches")


@dataclass(frozen=True)
class FileFigures:
    """One file's figures as coverage.py's JSON report gives them."""

    statements: int
    covered: int
    branches: int
    covered_branches: int
    missing: tuple[int, ...]


def chooses_source(ws: rp.Workspace) -> bool:
    """Whether the project's coverage settings choose what is measured (source, include),
    after coverage.py initialised: a configuring plugin (covdefaults) can choose it."""
    names = "'run:source', 'run:source_pkgs', 'run:include'"
    code = ("import coverage; c = coverage.Coverage(); c._init(); "
            f"print(any(map(c.get_option, ({names}))))")
    return ws.run([ws.python, "-c", code]).stdout.strip() == "True"


def coverage_reference(
    ws: rp.Workspace, out: Path, tag: str, pytest_argv: list[str], *, branch: bool,
    source: list[str] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """coverage.py's JSON report of ``coverage run -m pytest``; None and why when it failed.

    ``source``: for a project whose settings choose nothing, what the gate chose (the packages
    it finds, tests left out): bare ``coverage run`` would measure the tests too.
    """
    data = out / f"coverage-{tag}.data"
    for stale in out.glob(f"{data.name}*"):
        stale.unlink()
    env = {"COVERAGE_FILE": str(data)}  # the project's data_file would land in its tree
    coverage = [ws.python, "-m", "coverage"]
    argv = [*coverage, "run", *(["--branch"] if branch else [])]
    argv += [f"--source={','.join(source)}"] if source else []
    argv += ["-m", "pytest", *pytest_argv]
    done = ws.run([*argv, "-p", "no:confgate"], env=env, timeout_s=3600)
    _log(out / f"coverage-{tag}.log", done)
    if any(out.glob(f"{data.name}.*")):  # parallel data files: the main one too, or beside it
        combined = ws.run([*coverage, "combine", "--append", "-q"], env=env)
        if combined.returncode:
            return None, f"coverage combine failed: {combined.stderr[-300:]}"
    report = out / f"coverage-{tag}.json"
    made = ws.run([*coverage, "json", "-q", "-o", str(report)], env=env)
    # Exit 2: under the project's fail_under, the report written all the same (the case the
    # floor's comparison is for: refusing it left such projects never compared).
    if made.returncode not in (0, 2) or not report.is_file():
        return None, f"coverage json failed (exit {made.returncode}): {made.stdout[-300:]}"
    result = json.loads(report.read_text(encoding="utf-8"))
    # `coverage report` exits 2 below the project's fail_under, the floor the gate must keep.
    floor = ws.run([*coverage, "report", "--format=total"], env=env)
    result["below_fail_under"] = floor.returncode == 2
    return result, ""


def coverage_details(gate: dict[str, Any]) -> dict[str, Any]:
    """The gate report's ``test_coverage`` details, with its status and reason."""
    for metric in gate.get("metrics", []):
        if metric["type"] == "test_coverage":
            found: dict[str, Any] = metric.get("details", {})
            return {**found, "status": metric.get("status"), "reason": metric.get("reason")}
    return {}


def gate_files(ws: rp.Workspace, data: Path, out: Path, tag: str) -> dict[str, Any] | None:
    """``coverage json`` over the data the gate measured, on the project's settings."""
    if not data.is_file():
        return None
    report = out / f"gate-{tag}-files.json"
    argv = [ws.python, "-m", "coverage", "json", "-q", f"--data-file={data}", "-o", str(report)]
    done = ws.run(argv)
    if done.returncode not in (0, 2) or not report.is_file():  # 2: under fail_under
        return None
    files: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return files


def compare(
    gate: dict[str, Any], files: dict[str, Any] | None, reference: dict[str, Any], root: Path
) -> dict[str, Any]:
    """Totals side by side, and one line for every file whose figures differ."""
    details = coverage_details(gate)
    branch = bool(reference["meta"].get("branch_coverage"))
    keys = TOTALS if branch else TOTALS[:2]
    theirs = reference["totals"]
    totals = {key: [details.get(key), theirs.get(key)] for key in keys}
    differing = _files(details, files, reference, root)
    equal = all(ours == cov for ours, cov in totals.values()) and not differing
    if reference.get("below_fail_under") and gate.get("decision") == "pass":
        equal = False  # coverage.py fails the run on its floor: the gate must not pass it
    return {
        "equal": equal,
        "totals": totals,
        "files": differing,
        "status": details.get("status"),
        "reason": (details.get("reason") or "")[:300],
        "engine": details.get("engine"),
        "decision": gate.get("decision"),
        "below_fail_under": bool(reference.get("below_fail_under")),
    }


def _files(
    details: dict[str, Any], files: dict[str, Any] | None, reference: dict[str, Any], root: Path
) -> list[str]:
    theirs = per_file(reference, root)
    ours = per_file(files, root) if files is not None else {}
    # The gate's report is the authority for missing lines; its data file for the counts.
    reported = {name: tuple(lines) for name, lines in details.get("missing", {}).items()}
    lines = []
    for name in sorted(theirs.keys() | ours.keys() | reported.keys()):
        cov, gate = theirs.get(name), ours.get(name)
        missing = reported.get(name, ())
        if cov is None and gate is None:
            lines.append(f"{name}: only in the gate's missing lines")
            continue
        if cov is None:
            lines.append(f"{name}: measured by the gate only")
            continue
        if gate is None and files is not None:
            lines.append(f"{name}: measured by coverage.py only ({_counts(cov)})")
            continue
        problems = []
        if gate is not None and _counts(gate) != _counts(cov):
            problems.append(f"gate {_counts(gate)} vs coverage.py {_counts(cov)}")
        if missing != cov.missing:
            problems.append(_missing_difference(missing, cov.missing))
        if problems:
            lines.append(f"{name}: {'; '.join(problems)}")
    return lines


def per_file(report: dict[str, Any], root: Path) -> dict[str, FileFigures]:
    """Each file of a coverage.py JSON report by its path relative to ``root``."""
    result = {}
    for name, data in report.get("files", {}).items():
        summary = data["summary"]
        result[_relative(name, root)] = FileFigures(
            statements=summary["num_statements"],
            covered=summary["covered_lines"],
            branches=summary.get("num_branches", 0),
            covered_branches=summary.get("covered_branches", 0),
            missing=tuple(data["missing_lines"]),
        )
    return result


def _counts(figures: FileFigures) -> str:
    text = f"lines {figures.covered}/{figures.statements}"
    if figures.branches:
        text += f", branches {figures.covered_branches}/{figures.branches}"
    return text


def _missing_difference(gate: tuple[int, ...], cov: tuple[int, ...]) -> str:
    only_gate = sorted(set(gate) - set(cov))
    only_cov = sorted(set(cov) - set(gate))
    return (f"missing only under the gate {_short(only_gate)}, "
            f"only under coverage.py {_short(only_cov)}")


def _short(lines: list[int]) -> str:
    return str(lines) if len(lines) <= 8 else f"{lines[:8]}... ({len(lines)})"


def _relative(name: str, root: Path) -> str:
    path = Path(name)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _log(path: Path, done: rp.Run) -> None:
    path.write_text(
        f"{' '.join(done.argv)}\nexit {done.returncode}, {done.seconds:.1f} s\n"
        f"{done.stdout[-20000:]}\n--- stderr\n{done.stderr[-20000:]}", encoding="utf-8"
    )
