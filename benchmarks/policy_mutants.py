"""Mutation check of the policy (issue 30): each rule of ``gate/policy.py`` removed or weakened
by one step must make ``tests/unit/test_policy*.py`` fail.

Each mutant is one textual edit of ``policy.py`` applied to a copy of the package in a
temporary folder (the checkout is never touched); the unit tests run against that copy. Run:
``python benchmarks/policy_mutants.py`` (about a minute); it exits 1 if a mutant survives.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICY = Path("pytest_confgate/gate/policy.py")

MUTANTS: list[tuple[str, str, str]] = [
    # (what the mutant does, the text of the rule, the mutated text)
    ("errors no longer counted as broken tests",
     "broken = tests.failed + tests.errors", "broken = tests.failed"),
    ("max_failed_tests weakened by one",
     '_Check("tests_failed", broken <= limit,', '_Check("tests_failed", broken <= limit + 1,'),
    ("max_failed_tests removed",
     '_Check("tests_failed", broken <= limit,', '_Check("tests_failed", True,'),
    ("failed tests block only where the tier blocks",
     '(blocking or check.name == "tests_failed") and not advisory', "blocking and not advisory"),
    ("min_tests weakened by one",
     '_Check("tests_ran", ran >= need,', '_Check("tests_ran", ran >= need - 1,'),
    ("min_tests removed", '_Check("tests_ran", ran >= need,', '_Check("tests_ran", True,'),
    ("missing evidence passes",
     'return [_Check("evidence", False,', 'return [_Check("evidence", True,'),
    ("evidence that is not ok but carries a value counts",
     "if metric is None or not metric.available or metric.value is None:",
     "if metric is None or metric.value is None:"),
    ("min weakened by one display step (0.01%)",
     "ok = metric.value >= config.min", "ok = metric.value + 0.0001 >= config.min"),
    ("min removed", "ok = metric.value >= config.min", "ok = True"),
    ("max_high_severity weakened by one",
     '_Check("max_high_severity", high <= limit,',
     '_Check("max_high_severity", high <= limit + 1,'),
    ("max_high_severity removed",
     '_Check("max_high_severity", high <= limit,', '_Check("max_high_severity", True,'),
    ("max_lint_violations weakened by one",
     '_Check("max_lint_violations", count <= limit,',
     '_Check("max_lint_violations", count <= limit + 1,'),
    ("max_lint_violations removed",
     '_Check("max_lint_violations", count <= limit,', '_Check("max_lint_violations", True,'),
    ("required checklist items removed",
     '_Check("checklist_required", not missing,', '_Check("checklist_required", True,'),
    ("required checklist items never checked",
     'if not getattr(_config, "required", None):', "if True:"),
    ("a path floor no file matches passes",
     'checks.append(_Check("min", False, message, None, floor))',
     'checks.append(_Check("min", True, message, None, floor))'),
    ("path floors weakened by one display step",
     'checks.append(_Check("min", value >= floor, message, value, floor))',
     'checks.append(_Check("min", value + 0.0001 >= floor, message, value, floor))'),
    ("max_test_tampering weakened by one",
     '_Check("max_test_tampering", count <= limit,',
     '_Check("max_test_tampering", count <= limit + 1,'),
    ("max_test_tampering removed",
     '_Check("max_test_tampering", count <= limit,', '_Check("max_test_tampering", True,'),
    ("advisory metrics block",
     "advisory = config.advisory or partial is not None", "advisory = partial is not None"),
    ("a suspect judge that saw part of the diff is advisory",
     'if not details.get("diff_truncated") or details.get("injection_suspected"):',
     'if not details.get("diff_truncated"):'),
    ("allow_truncated_diff ignored", "if config.allow_truncated_diff:", "if False:"),
    ("a judge that saw part of the diff blocks",
     "if metric is None or not isinstance(config, LlmJudgeMetricConfig):", "if True:"),
    ("plugin conditions dropped", "for condition in extra or []:", "for condition in []:"),
    ("plugin conditions never block",
     '"blocking": condition.blocking and blocking', '"blocking": False'),
    ("sign-offs weakened by one", "passed=got >= needed,", "passed=got >= needed - 1,"),
    ("sign-offs removed", "    if needed:\n", "    if False:\n"),
    ("failing evidence is only needs_signoff",
     'if any(c.metric != "signoff" for c in failing):', "if False:"),
    ("auto_advance without a pass",
     "auto_advance=decision is Decision.PASS and auto_advance_allowed",
     "auto_advance=auto_advance_allowed"),
    ("a recount drops the other conditions",
     'conditions = [c for c in verdict.conditions if c.metric != "signoff"]', "conditions = []"),
    ("a recount forgets the sign-off condition", "if signoffs.required:", "if False:"),
    ("a recount grants auto_advance",
     "allowed = verdict.auto_advance if auto_advance_allowed is None",
     "allowed = True if auto_advance_allowed is None"),
    ("a metric's row passes whatever its conditions say",
     "passed = all(c.passed for c in checked)", "passed = True"),
    ("two coverage entries no longer told apart by scope",
     'found = [m for m in found if m.details.get("scope", "all") == scope] or found',
     "found = found"),
]


def _copy(into: Path) -> None:
    shutil.copytree(ROOT / "pytest_confgate", into / "pytest_confgate")
    shutil.copytree(ROOT / "tests", into / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")


def _run(where: Path) -> bool:
    """Whether the policy's unit tests pass against the copy in ``where``."""
    env = {**os.environ, "PYTHONPATH": str(where), "PYTHONDONTWRITEBYTECODE": "1"}
    unit = where / "tests" / "unit"
    tests = sorted(str(p.relative_to(where)) for p in unit.glob("test_policy*.py"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:xdist",
         "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=where, env=env, capture_output=True, text=True, check=False,
    )
    return done.returncode == 0


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="confgate-mutants-") as tmp:
        where = Path(tmp)
        _copy(where)
        env = {**os.environ, "PYTHONPATH": str(where)}
        imported = subprocess.run(
            [sys.executable, "-c", "import pytest_confgate; print(pytest_confgate.__file__)"],
            cwd=where, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        if not imported.startswith(str(where)):
            print(f"the copy is not what the tests import ({imported})")
            return 2
        if not _run(where):
            print("the unit tests fail without any mutant")
            return 2
        original = (where / POLICY).read_text(encoding="utf-8")
        survivors = []
        for what, rule, mutated in MUTANTS:
            if original.count(rule) != 1:
                print(f"cannot apply {what!r}: the rule's text occurs {original.count(rule)} times")
                return 2
            (where / POLICY).write_text(original.replace(rule, mutated), encoding="utf-8")
            caught = not _run(where)
            print(f"{'caught  ' if caught else 'SURVIVED'} {what}")
            if not caught:
                survivors.append(what)
        print(f"{len(MUTANTS) - len(survivors)} of {len(MUTANTS)} mutants caught")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
