"""rank's own ruff and bandit run (issue 36): on a copy of the tree no candidate's code ran in,
with the findings the gate's collectors give on the tree, and none from a copy that changed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_confgate.collect.lint import collect_lint_score
from pytest_confgate.collect.security import collect_security_score
from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank import lint_copy
from pytest_confgate.rank.evaluate import Processes, Settings, collect_evidence
from pytest_confgate.rank.trees import read_tree

SOURCE = (
    "import subprocess\nimport os, sys\n\n\n"
    "def run(command):\n    return subprocess.call(command, shell=True)\n"
)
TEST = "from calc import run\n\n\ndef test_run():\n    assert run('true') == 0\n"
# A conftest that steers the gate it runs in: every lint and security result reads clean.
STEERING = '''
from pytest_confgate.gate import background
from pytest_confgate.models import EvalMetric, MetricStatus


def clean(self, kind):
    details = {"items": [], "files_scanned": 1, "files_checked": 1}
    return EvalMetric(type=kind, value=1.0, status=MetricStatus.OK, details=details)


background.BackgroundTools.result = clean
'''


def project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(SOURCE)
    (root / "tests" / "test_calc.py").write_text(TEST)
    return root


def rules(metric_items: object) -> list[tuple[str, str, int]]:
    return sorted((i["rule"], i["file"], i["line"]) for i in metric_items)  # type: ignore[attr-defined, index]


def test_the_copy_gives_the_gate_collectors_findings_on_the_tree(tmp_path: Path) -> None:
    tree = project(tmp_path / "tree")
    found = lint_copy.measure(tree, tmp_path / "copy", read_tree(tree), ["calc.py"])
    lint = collect_lint_score(tree, [tree / "calc.py"])
    security = collect_security_score(tree, [tree / "calc.py"])
    assert found.lint.available
    assert found.security.available
    assert rules(found.lint.details["items"]) == rules(lint.details["items"])
    assert rules(found.security.details["items"]) == rules(security.details["items"])
    assert ("B602", "calc.py", 6) in rules(found.security.details["items"])
    assert not (tmp_path / "copy" / ".ruff_cache").exists()  # nothing written into the copy


def test_a_copy_written_while_the_tools_read_it_gives_no_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = project(tmp_path / "tree")
    real = lint_copy._tools

    def tampered(projects: dict[str, tuple[Path, list[Path]]]) -> object:
        for root, _ in projects.values():
            (root / "calc.py").write_text("def run(command):\n    return 0\n")
        return real(projects)

    monkeypatch.setattr(lint_copy, "_tools", tampered)
    found = lint_copy.measure(tree, tmp_path / "copy", read_tree(tree), ["calc.py"])
    assert not found.lint.available
    assert not found.security.available
    assert "changed while they read it" in (found.security.reason or "")


def test_a_tree_that_changed_since_rank_read_it_gives_no_findings(tmp_path: Path) -> None:
    tree = project(tmp_path / "tree")
    snapshot = read_tree(tree)
    (tree / "calc.py").write_text("def run(command):\n    return 0\n")
    found = lint_copy.measure(tree, tmp_path / "copy", snapshot, ["calc.py"])
    assert not found.lint.available
    assert "changed after rank read it" in (found.lint.reason or "")


def test_a_conftest_that_steers_its_gate_run_cannot_hide_a_finding(tmp_path: Path) -> None:
    # The candidate's tests run in one process with its gate run: there its conftest could
    # answer for ruff and bandit. rank's own run on the copy is out of its reach.
    tree = project(tmp_path / "tree")
    (tree / "tests" / "conftest.py").write_text(STEERING)
    settings = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                        type_check=False, timeouts=RankTimeouts(tests_s=120),
                        sources=("calc.py",))
    tools = lint_copy.start(tree, tmp_path / "copy", read_tree(tree), settings.sources)
    found = collect_evidence("c", tree, tmp_path / "state", settings, Processes(), tools)
    assert found.tests is not None
    assert found.tests.passed == 1
    assert found.security is not None
    assert ("B602", "calc.py", 6) in {(i.rule, i.path, i.line) for i in found.security}
    assert found.lint is not None
    assert {i.rule for i in found.lint} >= {"F401"}


def test_one_bandit_for_several_trees_gives_each_its_own_findings(tmp_path: Path) -> None:
    # bandit runs once for trees whose bandit reads no settings; a tree with a .bandit of its
    # own (which would apply to every tree of a shared run) is measured alone, as the gate does
    one, two, three = (project(tmp_path / name) for name in ("one", "two", "three"))
    (two / "calc.py").write_text(SOURCE + "\n\ndef check(x):\n    assert x\n")
    (three / ".bandit").write_text("[bandit]\nskips: B602\n")
    runs = lint_copy.ToolRuns(
        {tree.name: (tree, tmp_path / f"copy-{tree.name}", read_tree(tree))
         for tree in (one, two, three)}, ["calc.py"])
    for tree in (one, two, three):
        alone = collect_security_score(tree, [tree / "calc.py"])
        found = runs.result(tree.name).security
        assert found.available
        assert found.details["files_scanned"] == 1
        assert rules(found.details["items"]) == rules(alone.details["items"])
    assert ("B101", "calc.py", 10) in rules(runs.result("two").security.details["items"])
    skipped = rules(runs.result("three").security.details["items"])
    assert "B602" not in {rule for rule, _, _ in skipped}
    shared = " ".join(runs.result("one").security.details["command"])
    assert str(tmp_path / "copy-two") in shared
    assert str(tmp_path / "copy-three") not in shared
