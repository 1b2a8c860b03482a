"""``test_integrity``: the metric, its floor rule, its hard limit and when it is measured."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_confgate.collect.integrity import NO_BASE, integrity_metric
from pytest_confgate.collect.tamper import ChangeAnalysis, GitTree
from pytest_confgate.config import GateConfig, IntegrityMetricConfig, PassRateMetricConfig
from pytest_confgate.config.metrics import effective_metrics
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.gate.change import ChangeView
from pytest_confgate.gate.collectors import Evidence, collect_metric
from pytest_confgate.gate.policy import decide
from pytest_confgate.gate.tiers import integrity_floor, raise_for_evidence
from pytest_confgate.models import (
    ChangeSet,
    Decision,
    EvalMetric,
    FileChange,
    MetricStatus,
    Signoffs,
    TestOutcomes,
)

TESTS = "def test_a():\n    assert 1 + 1 == 2\n\n\ndef test_b():\n    assert 2 * 2 == 4\n"
SKIPPED = "import pytest\n\n\n@pytest.mark.skip\n" + TESTS
CONFIG = IntegrityMetricConfig(type="test_integrity")
_PATH = "tests/test_x.py"


def _git(path: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def _analysis(root: Path, head: str) -> ChangeAnalysis:
    """A repository whose base has TESTS, with ``head`` in the working tree."""
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text(TESTS, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    (root / "tests" / "test_x.py").write_text(head, encoding="utf-8")
    base = _git(root, "rev-parse", "HEAD").strip()
    change = ChangeSet("main", base, (FileChange("tests/test_x.py", None, "modified"),))
    return ChangeAnalysis(root, change)


def test_a_clean_change_scores_one(tmp_path: Path) -> None:
    metric = integrity_metric(CONFIG, _analysis(tmp_path, TESTS + "\n# a comment\n"))
    assert (metric.value, metric.status) == (1.0, MetricStatus.OK)
    assert metric.details["items"] == []
    assert metric.details["files_compared"] == 1
    assert integrity_floor(metric) is None


def test_any_finding_scores_zero_names_the_file_and_raises_the_tier(tmp_path: Path) -> None:
    metric = integrity_metric(CONFIG, _analysis(tmp_path, SKIPPED))
    assert metric.value == 0.0
    assert metric.details["by_rule"] == {"skip_added": 1}
    [item] = metric.details["items"]
    assert (item["file"], item["line"], item["rule"]) == ("tests/test_x.py", 4, "skip_added")
    assert metric.details["tier_floor"] == "T2"
    tier, reason = raise_for_evidence("T1", "set by gate.risk_tier", [metric])
    assert tier == "T2"
    assert reason == (
        "set by gate.risk_tier; raised to T2: test_integrity found 1 sign of tampering with "
        "tests or checks, so a human must look: tests/test_x.py:4: skip mark added: "
        "tests/test_x.py::test_a no longer runs as before"
    )


@pytest.mark.parametrize(
    ("settings", "floor"),
    [
        ({"advisory": True}, None),
        ({"max_test_tampering": 0}, None),
        ({"raise_tier_to": "T3"}, "T3"),
    ],
)
def test_advisory_or_a_hard_limit_replace_the_raise(
    tmp_path: Path, settings: dict[str, object], floor: str | None
) -> None:
    config = IntegrityMetricConfig.model_validate({"type": "test_integrity", **settings})
    metric = integrity_metric(config, _analysis(tmp_path, SKIPPED))
    assert metric.value == 0.0
    assert metric.details["tier_floor"] == floor


def test_excluded_files_do_not_count(tmp_path: Path) -> None:
    config = IntegrityMetricConfig(type="test_integrity", exclude=["tests/**"])
    metric = integrity_metric(config, _analysis(tmp_path, SKIPPED))
    assert (metric.value, metric.details["excluded"], metric.details["items"]) == (1.0, 1, [])


def test_without_a_base_or_a_readable_change_the_metric_is_an_error() -> None:
    assert integrity_metric(CONFIG, None).reason == NO_BASE
    broken = integrity_metric(CONFIG, ChangeAnalysis(Path("."), None, "git is missing"))
    assert broken.status is MetricStatus.ERROR
    assert broken.reason == "cannot compare the change with its base: git is missing"
    assert integrity_floor(broken) is None


def _finding_metric(count: int) -> EvalMetric:
    items = [
        {"rule": "test_removed", "file": f"tests/test_{i}.py", "line": i + 1, "message": "gone"}
        for i in range(count)
    ]
    return EvalMetric(type="test_integrity", value=0.0 if count else 1.0,
                      details={"findings": count, "items": items, "tier_floor": "T2"})


def test_the_floor_reason_lists_ten_findings_and_counts_the_rest() -> None:
    _, why = integrity_floor(_finding_metric(12)) or ("", "")
    assert why.count("gone") == 10
    assert why.endswith("tests/test_9.py:10: gone; and 2 more")


def test_max_test_tampering_fails_the_gate_naming_the_findings() -> None:
    gate = GateConfig.model_validate(
        {"metrics": [{"type": "test_pass_rate"}, {"type": "test_integrity",
                                                  "max_test_tampering": 0}]}
    )
    metrics = [EvalMetric(type="test_pass_rate", value=1.0), _finding_metric(2)]
    verdict = decide(gate, "T1", metrics, TestOutcomes(passed=3), Signoffs())
    assert verdict.decision is Decision.FAIL
    assert verdict.reasons == [
        "test_integrity: 2 signs of tampering with tests or checks (max_test_tampering: 0): "
        "test_removed at tests/test_0.py:1, test_removed at tests/test_1.py:2"
    ]
    clean = decide(gate, "T1", [metrics[0], _finding_metric(0)], TestOutcomes(passed=3),
                   Signoffs())
    assert clean.decision is Decision.PASS


def test_the_metric_joins_whenever_a_base_is_known_and_leaves_when_disabled() -> None:
    listed = [PassRateMetricConfig(type="test_pass_rate")]
    assert effective_metrics(listed, base_known=False) == listed
    [_, added] = effective_metrics(listed, base_known=True)
    assert added == IntegrityMetricConfig(type="test_integrity")
    off = [*listed, IntegrityMetricConfig(type="test_integrity", enabled=False)]
    assert effective_metrics(off, base_known=True) == listed
    own = [*listed, IntegrityMetricConfig(type="test_integrity", advisory=True)]
    assert effective_metrics(own, base_known=True) == own


def test_the_gate_reads_the_base_through_git_once(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / _PATH).write_text(TESTS, encoding="utf-8")
    (tmp_path / "tests" / "we ird*.py").write_text("x = 1\n", encoding="utf-8")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "base")
    base = _git(tmp_path, "rev-parse", "HEAD").strip()
    assert GitTree(tmp_path, base).read_many([_PATH, "tests/we ird*.py", "nope.py"]) == {
        _PATH: TESTS, "tests/we ird*.py": "x = 1\n", "nope.py": None,
    }
    (tmp_path / _PATH).write_text(SKIPPED, encoding="utf-8")
    changes = ChangeSet("main", base, (FileChange(_PATH, None, "modified"),))
    analysis = ChangeAnalysis(tmp_path, changes)
    report = analysis.report()
    assert [(f.rule, f.file, f.line) for f in report.findings] == [("skip_added", _PATH, 4)]
    assert analysis.report() is report
    broken = ChangeAnalysis(tmp_path, ChangeSet("main", "0" * 40, changes.files))
    with pytest.raises(EvidenceError, match="is not in the repository"):
        broken.report()
    with pytest.raises(EvidenceError, match="cannot tell"):
        ChangeAnalysis(tmp_path, None, "cannot tell what changed").report()


def test_without_sources_the_metric_is_measured_when_the_tests_end(tmp_path: Path) -> None:
    view = ChangeView("main", None, frozenset(), None)
    evidence = Evidence(
        root=tmp_path, environ={}, sources=[], change=view, tests=TestOutcomes(), links={},
        coverage=None, background=None, requirements={},
        analysis=_analysis(tmp_path, SKIPPED),
    )
    metric = collect_metric(IntegrityMetricConfig(type="test_integrity", weight=2.0), evidence)
    assert (metric.value, metric.weight, metric.details["findings"]) == (0.0, 2.0, 1)
    alone = collect_metric(CONFIG, replace(evidence, analysis=None))
    assert alone.reason == NO_BASE


def test_a_package_the_change_adds_does_not_make_patching_it_the_project_s_own(
    tmp_path: Path,
) -> None:
    """``harness_patched`` spares a project patching its own package; which packages are its
    own the base says: adding a ``pytest_confgate/`` folder made patching the gate look like
    the project's business."""
    patches = TESTS + ("\n\nimport pytest_confgate\n\n\ndef test_gate(monkeypatch):\n"
                       "    monkeypatch.setattr(pytest_confgate, 'VERSION', '0')\n")
    analysis = _analysis(tmp_path, patches)
    (tmp_path / "pytest_confgate").mkdir()
    (tmp_path / "pytest_confgate" / "__init__.py").write_text('"""Not the gate."""\n',
                                                             encoding="utf-8")
    assert analysis.changes is not None
    files = (*analysis.changes.files, FileChange("pytest_confgate/__init__.py", None, "added"))
    analysis = ChangeAnalysis(tmp_path, ChangeSet("main", analysis.changes.merge_base, files))
    rules = {f.rule for f in analysis.report().findings}
    assert {"harness_replaced", "harness_patched"} <= rules
