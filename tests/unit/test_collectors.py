"""The engine's wiring table: every built-in metric has a collector, or is asked last."""

from __future__ import annotations

import typing

from pytest_confgate.config.metrics import MetricConfig
from pytest_confgate.gate.collectors import BACKGROUND, COLLECTORS


def _builtin_types() -> set[str]:
    union = typing.get_args(typing.get_args(MetricConfig)[0])
    return {typing.get_args(cls.model_fields["type"].annotation)[0] for cls in union}


def test_every_built_in_metric_has_a_collector_except_the_judge_which_is_asked_last() -> None:
    assert set(COLLECTORS) == _builtin_types() - {"llm_judge"}


def test_tools_that_run_beside_the_tests_are_read_back_by_a_collector() -> None:
    assert set(BACKGROUND) <= set(COLLECTORS)
    assert set(BACKGROUND) == {"lint_score", "security_score", "test_integrity"}


def test_a_loop_requirement_coverage_without_a_file_is_an_error_naming_the_fix() -> None:
    """Seed 000's loop block lists requirement_coverage without `requirements:` and must load
    as written (issue 4); its gate step then says what is missing instead of a 0.0 that blames
    the sources (issue 17)."""
    from typing import cast

    from pytest_confgate.config import RequirementMetricConfig
    from pytest_confgate.gate.collectors import Evidence, collect_metric

    config = RequirementMetricConfig(type="requirement_coverage", weight=0.2)
    metric = collect_metric(config, cast(Evidence, None))  # it reads no evidence at all
    assert (metric.status, metric.value, metric.weight) == ("error", None, 0.2)
    assert metric.reason is not None
    assert metric.reason.startswith("requirement_coverage needs `requirements: PATH`")
