"""A ``# noqa``/``# nosec`` the change added hides nothing: real ruff and bandit, run twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_confgate.collect.lint import collect_lint_score
from pytest_confgate.collect.security import collect_security_score
from pytest_confgate.collect.unsuppressed import reveal
from pytest_confgate.models import EvalMetric, MetricStatus

# Line 5: B602 subprocess with shell=True (HIGH); line 8: B307 eval (MEDIUM).
SHELL = (
    "import subprocess  # nosec B404\n\n\n"
    "def run(cmd):\n    return subprocess.call(cmd, shell=True)  # nosec\n\n\n"
    "def evaluate(text):\n    return eval(text)  # nosec B307 -- on the base: keeps working\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "app").mkdir(parents=True)
    (root / "app" / "shell.py").write_text(SHELL, encoding="utf-8")
    (root / "app" / "tidy.py").write_text("import os  # noqa: F401\n", encoding="utf-8")
    (root / "app" / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    return root


def test_a_high_finding_behind_an_added_nosec_counts_again(project: Path) -> None:
    sources = [project / "app"]
    first = collect_security_score(project, sources)
    assert first.value == 1.0
    assert first.details["by_severity"]["HIGH"] == 0
    shell = [project / "app" / "shell.py"]
    unmasked = collect_security_score(project, shell, extra_args=("--ignore-nosec",))
    assert {i["rule"] for i in unmasked.details["items"]} >= {"B602", "B307"}

    found = reveal(first, unmasked, {"app/shell.py": [(5, 5)]}, "# nosec")

    [item] = found.details["items"]
    assert (item["rule"], item["line"], item["severity"]) == ("B602", 5, "HIGH")
    assert item["message"].endswith("(hidden by a `# nosec` this change added)")
    assert found.details["by_severity"]["HIGH"] == 1
    assert found.details["findings"] == 1
    assert found.details["files_with_findings"] == 1
    assert found.details["suppressed_by_change"] == 1
    assert found.value == pytest.approx(2 / 3)  # the eval's nosec from the base still works


def test_a_lint_violation_behind_an_added_noqa_counts_again(project: Path) -> None:
    first = collect_lint_score(project, [project / "app"])
    assert first.details["violations"] == 0
    unmasked = collect_lint_score(
        project, [project / "app" / "tidy.py"], extra_args=("--ignore-noqa",)
    )
    assert unmasked.details["command"][-2] == "--ignore-noqa"

    found = reveal(first, unmasked, {"app/tidy.py": [(1, 1)]}, "# noqa")

    assert [(i["rule"], i["file"], i["line"]) for i in found.details["items"]] == [
        ("F401", "app/tidy.py", 1)
    ]
    assert (found.details["violations"], found.details["files_with_violations"]) == (1, 1)
    assert found.value == pytest.approx(2 / 3)


def test_nothing_hidden_leaves_the_metric_as_it_was_and_says_so() -> None:
    metric = EvalMetric(type="lint_score", value=1.0, details={"items": [], "files_checked": 2})
    unmasked = EvalMetric(type="lint_score", value=1.0, details={"items": []})
    found = reveal(metric, unmasked, {"a.py": [(1, 1)]}, "# noqa")
    assert (found.value, found.details["suppressed_by_change"]) == (1.0, 0)


def test_a_second_run_that_fails_fails_the_metric_closed() -> None:
    metric = EvalMetric(type="security_score", value=1.0, details={"items": []})
    broken = EvalMetric(type="security_score", status=MetricStatus.ERROR, reason="bandit died")
    found = reveal(metric, broken, {"a.py": [(1, 1)]}, "# nosec")
    assert found.status is MetricStatus.ERROR
    assert found.reason == "cannot check the lines where the change added `# nosec`: bandit died"
