"""``merge``: shard reports -> one report (SPEC 4 "a missing CI shard is an error", 10, 12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.reports import gate_report

from pytest_confgate.config import ConfgateConfig
from pytest_confgate.config.loader import LoadedConfig
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.gate.merge import (
    Shard,
    agreed_metric,
    empty_shards,
    load_shards,
    merge_reports,
    merged_tier,
    sum_outcomes,
)
from pytest_confgate.models import (
    Condition,
    ConfidenceResult,
    Decision,
    EvalMetric,
    GateReport,
    MetricStatus,
    RiskTier,
    TestOutcomes,
)

LINT = EvalMetric(type="lint_score", value=0.5, details={"files": 2, "duration_s": 0.1})


def report(
    passed: int = 1,
    failed: int = 0,
    *,
    tier: RiskTier = "T1",
    metrics: list[EvalMetric] | None = None,
    duration: float = 1.0,
    conditions: list[Condition] | None = None,
) -> GateReport:
    """A hand-built shard report: only the parts the merge reads matter."""
    return gate_report(
        tool_version="0",
        generated_at="2026-01-01T00:00:00+00:00",
        risk_tier=tier,
        risk_reason="gate.risk_tier",
        metrics=[LINT] if metrics is None else metrics,
        conditions=conditions or [],
        tests=TestOutcomes(passed=passed, failed=failed, duration_s=duration),
    )


def loaded(*types: str) -> LoadedConfig:
    kinds = types or ("test_pass_rate", "lint_score")
    config = ConfgateConfig.model_validate({"gate": {"metrics": [{"type": t} for t in kinds]}})
    return LoadedConfig(config=config, path=None)


def merge(shards: list[Shard], config: LoadedConfig | None = None) -> GateReport:
    return merge_reports(shards, config or loaded(), root=Path.cwd(), environ={})


def write(path: Path, gate_report: GateReport) -> str:
    path.write_text(gate_report.model_dump_json(), encoding="utf-8")
    return str(path)


def test_counts_add_up_and_the_pass_rate_is_recomputed_from_the_sums() -> None:
    merged = merge([("a.json", report(3, 1, duration=2.0)), ("b.json", report(4, 0))])
    assert merged.tests.passed == 7
    assert merged.tests.failed == 1
    assert merged.tests.duration_s == 2.0  # the slowest shard: shards run side by side
    rate = next(m for m in merged.metrics if m.type == "test_pass_rate")
    assert rate.value == 7 / 8
    assert rate.details["shards"] == ["a.json", "b.json"]
    assert merged.decision is Decision.FAIL
    assert merged.reasons[0].startswith("test_pass_rate")


def test_identical_lint_is_taken_once_and_a_disagreement_is_an_error_naming_the_shards() -> None:
    other = LINT.model_copy(update={"value": 0.25})
    same = LINT.model_copy(update={"details": {**LINT.details, "duration_s": 9.0}})
    assert agreed_metric("lint_score", [("a", report()), ("b", report(metrics=[same]))]) == LINT
    differ = agreed_metric("lint_score", [("a", report()), ("b", report(metrics=[other]))])
    assert differ.status is MetricStatus.ERROR
    assert differ.reason is not None
    assert "shards disagree (a vs b)" in differ.reason


def test_a_metric_missing_from_one_shard_is_an_error_naming_it() -> None:
    metric = agreed_metric("lint_score", [("a", report()), ("b", report(metrics=[]))])
    assert metric.status is MetricStatus.ERROR
    assert metric.reason == "merge: missing from b; every shard must measure it"


def test_coverage_without_data_fails_closed_instead_of_averaging() -> None:
    config = loaded("test_pass_rate", "test_coverage")
    cov = EvalMetric(type="test_coverage", value=1.0)
    merged = merge([("a", report(metrics=[cov])), ("b", report(metrics=[cov]))], config)
    metric = next(m for m in merged.metrics if m.type == "test_coverage")
    assert metric.status is MetricStatus.ERROR
    assert metric.value is None
    assert merged.decision is Decision.FAIL


def test_plugin_metrics_and_conditions_of_the_shards_are_kept() -> None:
    plugin = EvalMetric(type="docs_score", value=1.0)
    broken = Condition(metric="plugin", name="plugin", passed=False, message="plugin x broke")
    low = Condition(metric="docs_score", name="docs", passed=False, message="docs too short")
    shards = [
        ("a", report(metrics=[LINT, plugin], conditions=[broken])),
        ("b", report(metrics=[LINT, plugin], conditions=[broken, low])),
    ]
    merged = merge(shards)
    assert [m.type for m in merged.metrics] == ["test_pass_rate", "lint_score", "docs_score"]
    assert sorted(merged.reasons) == ["docs too short", "plugin x broke"]


def test_tiers_that_disagree_take_the_highest_and_say_why() -> None:
    tier, reason = merged_tier([("a", report(tier="T1")), ("b", report(tier="T2"))])
    assert tier == "T2"
    assert reason == "shards disagree on the risk tier (a: T1, b: T2); the highest applies"
    assert merge([("a", report(tier="T1")), ("b", report(tier="T2"))]).decision is (
        Decision.NEEDS_SIGNOFF
    )


def test_a_shard_where_no_test_ran_is_allowed_and_noted() -> None:
    shards = [("a", report(0)), ("b", report(2))]
    assert empty_shards(shards) == ["a"]
    assert sum_outcomes([r for _, r in shards]).passed == 2
    rate = next(m for m in merge(shards).metrics if m.type == "test_pass_rate")
    assert rate.details["empty_shards"] == ["a"]


def test_load_shards_reads_good_reports(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", report(1))
    b = write(tmp_path / "b.json", report(2))
    assert [name for name, _ in load_shards([a, b], expect=2)] == [a, b]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a gate report (a JSON object is expected)"),
        ('{"schema_version": "1.0", "project": 3}', "not a gate report"),
        ('{"schema_version": "0.9"}', "schema_version '0.9', this confgate reads '1.0'"),
    ],
    ids=["missing", "invalid-json", "not-an-object", "schema", "schema-version"],
)
def test_a_bad_shard_is_refused_by_name(tmp_path: Path, content: str | None, expected: str) -> None:
    good = write(tmp_path / "good.json", report())
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    with pytest.raises(EvidenceError, match=r"bad\.json") as caught:
        load_shards([good, str(bad)])
    assert expected in str(caught.value)


def test_the_same_shard_twice_is_refused_as_duplicated(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", report())
    copy = write(tmp_path / "copy.json", report())
    with pytest.raises(EvidenceError) as caught:
        load_shards([a, a, copy])
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{a}: duplicated (same file as {a})")
    assert lines[1].startswith(f"{copy}: duplicated (identical content to {a})")


def test_a_shard_count_other_than_expected_is_refused(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", report())
    with pytest.raises(EvidenceError) as caught:
        load_shards([a], expect=4)
    assert str(caught.value) == f"expected 4 shards, got 1: missing one? shard names given: {a}"


def with_provenance(shard: GateReport, head: str, run_id: str) -> GateReport:
    assert shard.provenance is not None
    return shard.model_copy(update={"provenance": shard.provenance.model_copy(
        update={"head_sha": head, "run_id": run_id})})


def test_shards_of_one_commit_and_run_keep_their_provenance() -> None:
    merged = merge([("a.json", with_provenance(report(), "a" * 40, "9-1")),
                    ("b.json", with_provenance(report(), "a" * 40, "9-2"))])
    assert merged.provenance is not None
    assert (merged.provenance.head_sha, merged.provenance.run_id) == ("a" * 40, "9-2")


def test_shards_of_two_commits_are_refused() -> None:
    with pytest.raises(EvidenceError, match=r"the shards judged different commits \(a.json"):
        merge([("a.json", with_provenance(report(), "a" * 40, "9-1")),
               ("b.json", with_provenance(report(), "b" * 40, "9-1"))])


def test_shards_of_different_runs_or_without_provenance_give_an_unbound_report() -> None:
    other_run = [("a.json", with_provenance(report(), "a" * 40, "9-1")),
                 ("b.json", with_provenance(report(), "a" * 40, "10-1"))]
    assert merge(other_run).provenance is None
    unbound = [("a.json", report()), ("b.json", report().model_copy(update={"provenance": None}))]
    assert merge(unbound).provenance is None


def confident(method: str = "formula", **confidence: object) -> LoadedConfig:
    config = ConfgateConfig.model_validate({"gate": {
        "metrics": [{"type": "test_pass_rate"}, {"type": "lint_score"}],
        "confidence": {"enabled": True, "threshold": 0.5, "method": method, **confidence},
    }, "agents": {"r": {"provider": "command", "command": ["judge"]}}})
    return LoadedConfig(config=config, path=None)


def test_merge_scores_confidence_and_auto_advances_a_confident_t1_pass() -> None:
    """Issue 17: merge decided without the advisory, so ``auto_advance`` was always false."""
    merged = merge([("a.json", report(2)), ("b.json", report(3))], confident())
    assert merged.decision is Decision.PASS
    assert merged.confidence is not None
    assert merged.confidence.score == pytest.approx((1.0 + 0.5) / 2)
    assert merged.confidence.advisory == "confidence threshold met"
    assert merged.auto_advance is True
    t3 = merge([("a.json", report(2, tier="T3")), ("b.json", report(3, tier="T3"))], confident())
    assert t3.auto_advance is False


def test_merge_takes_the_lowest_llm_score_of_the_shards_and_asks_no_one() -> None:
    def with_llm(score: float) -> GateReport:
        result = ConfidenceResult(method="llm", mode="composite", score=score, scores={},
                                  threshold=0.5, breakdown={"llm_score": score})
        return report(2).model_copy(update={"confidence": result})

    merged = merge([("a.json", with_llm(0.9)), ("b.json", with_llm(0.4))],
                   confident("llm", evaluator_agent="r"))
    assert merged.confidence is not None
    assert merged.confidence.score == pytest.approx(0.4)
    assert merged.confidence.advisory is None
    assert merged.auto_advance is False
    assert "not asked again" in merged.confidence.breakdown["llm"]["source"]
