"""``gate/loop_evidence``: what the gate step collects for a task's loop, and what decides."""

from __future__ import annotations

import pytest

from pytest_confgate.config import ConfgateConfig
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.gate.loop_evidence import check_task, loop_metrics_for, loop_only_marked
from pytest_confgate.models import EvalMetric

CONFIG = ConfgateConfig.model_validate(
    {
        "agents": {"dev": {"provider": "command", "command": ["dev"]}},
        "tasks": {
            "fix": {
                "agent": "dev",
                "overlays": {
                    "confidence_loop": {
                        "enabled": True,
                        "metrics": [{"type": "test_coverage"}, {"type": "lint_score"}],
                    }
                },
            }
        },
    }
)


def test_an_unknown_task_on_the_command_line_is_named() -> None:
    check_task(CONFIG, "fix", "confgate.yml")
    check_task(CONFIG, None, "confgate.yml")
    with pytest.raises(ConfigError, match=r"--confgate-task fxi: confgate.yml defines no such "
                       r"task under tasks \(defined: fix\)"):
        check_task(CONFIG, "fxi", "confgate.yml")


def test_only_the_types_the_gate_lacks_are_added() -> None:
    gate_only_tests = [m for m in CONFIG.gate.metrics if m.type == "test_pass_rate"]
    added = loop_metrics_for(CONFIG, "fix", gate_only_tests)
    assert [m.type for m in added] == ["test_coverage", "lint_score"]
    assert loop_metrics_for(CONFIG, "fix", CONFIG.gate.metrics) == []
    assert loop_metrics_for(CONFIG, None, gate_only_tests) == []


def test_loop_only_metrics_are_reported_marked_and_left_out_of_the_decision() -> None:
    tests = EvalMetric(type="test_pass_rate", value=1.0)
    lint = EvalMetric(type="lint_score", value=0.2)
    plugin = EvalMetric(type="docs_built", value=1.0)
    reported, counted = loop_only_marked([tests, lint, plugin], 1, 1, "fix")
    assert counted == [tests, plugin]
    assert (reported[0], reported[2]) == (tests, plugin)
    assert reported[1].details["measured_for"] == "tasks.fix.overlays.confidence_loop"
    assert loop_only_marked([tests], 1, 0, "fix") == ([tests], [tests])


def test_a_loops_project_coverage_joins_a_gates_patch_coverage() -> None:
    from pytest_confgate.config import CoverageMetricConfig

    patch = [CoverageMetricConfig(type="test_coverage", scope="changed")]
    added = loop_metrics_for(CONFIG, "fix", patch)
    assert [(m.type, getattr(m, "scope", None)) for m in added] == [
        ("test_coverage", "all"), ("lint_score", "all")
    ]
