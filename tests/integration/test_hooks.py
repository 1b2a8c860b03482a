"""Our own hooks: plugins add evidence and conditions, can only make the gate stricter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import metric, read_report

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

FIXTURES = Path(__file__).parent.parent / "fixtures"

HEADER = "from pytest_confgate import Condition, EvalMetric, hookimpl\n\n"


def _conftest(pytester: pytest.Pytester, body: str) -> None:
    pytester.path.joinpath("conftest.py").write_text(HEADER + body, encoding="utf-8")


def test_a_conftest_plugin_adds_a_metric_to_the_report(project: pytest.Pytester) -> None:
    _conftest(
        project,
        "@hookimpl\ndef confgate_collect_metrics(root, tests):\n"
        "    return [EvalMetric(type='docs_built', value=0.5, "
        "details={'ran': tests.passed, 'root': root.name})]\n",
    )
    assert project.runpytest("--confgate").ret == 0
    extra = metric(read_report(project), "docs_built")
    assert extra["value"] == 0.5
    assert extra["details"] == {"ran": 2, "root": project.path.name}


def test_a_failing_plugin_condition_fails_the_gate(project: pytest.Pytester) -> None:
    _conftest(
        project,
        "@hookimpl\ndef confgate_extra_conditions(metrics, tier):\n"
        "    return [Condition(metric='changelog', name='entry', passed=False,\n"
        "                      message=f'changelog: no entry for this change ({tier})')]\n",
    )
    result = project.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(project)
    assert report["reasons"] == ["changelog: no entry for this change (T1)"]
    result.stdout.fnmatch_lines(["confgate: FAIL: the tests passed but the gate did not: "
                                 "changelog: no entry*"])


def test_a_passing_plugin_condition_cannot_rescue_a_failing_gate(
    project: pytest.Pytester,
) -> None:
    project.path.joinpath("confgate.yml").write_text(
        "gate:\n  metrics: [{type: test_pass_rate, min_tests: 50}]\n", encoding="utf-8"
    )
    _conftest(
        project,
        "@hookimpl\ndef confgate_extra_conditions():\n"
        "    return [Condition(metric='test_pass_rate', name='tests_ran', passed=True,\n"
        "                      message='all good, trust me')]\n",
    )
    assert project.runpytest("--confgate").ret == 1
    assert read_report(project)["decision"] == "fail"


def test_at_t0_plugin_conditions_are_advisory_like_everything_else(
    project: pytest.Pytester,
) -> None:
    project.path.joinpath("confgate.yml").write_text("gate: {risk_tier: T0}\n", encoding="utf-8")
    _conftest(
        project,
        "@hookimpl\ndef confgate_extra_conditions():\n"
        "    return [Condition(metric='x', name='y', passed=False, message='x: not yet')]\n",
    )
    assert project.runpytest("--confgate").ret == 0
    assert read_report(project)["reasons"] == ["advisory: x: not yet"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("@hookimpl\ndef confgate_collect_metrics():\n    raise RuntimeError('boom')\n",
         "plugin conftest: confgate_collect_metrics raised RuntimeError: boom"),
        ("@hookimpl\ndef confgate_collect_metrics():\n    return [{'type': 'x'}]\n",
         "plugin conftest: confgate_collect_metrics must return a list of EvalMetric, got dict"),
        ("def confgate_colect_metrics():\n    return []\n",
         "plugin conftest: unknown hook 'confgate_colect_metrics'; "
         "did you mean 'confgate_collect_metrics'?"),
        ("@hookimpl\ndef confgate_collect_metrics():\n"
         "    return [EvalMetric(type='test_coverage', value=1.0)]\n",
         "a plugin returned a second 'test_coverage' metric; plugins add evidence, "
         "they cannot replace it"),
    ],
    ids=["raises", "wrong-type", "typo-in-hook-name", "replaces-a-builtin"],
)
def test_a_broken_plugin_is_named_and_fails_the_gate_closed(
    project: pytest.Pytester, body: str, message: str
) -> None:
    _conftest(project, body)
    result = project.runpytest("--confgate")
    assert result.ret == 1
    assert message in read_report(project)["reasons"]
    assert "Traceback" not in result.stdout.str()


def test_gate_finished_receives_the_final_report(project: pytest.Pytester) -> None:
    _conftest(
        project,
        "import json\n\n"
        "@hookimpl\ndef confgate_gate_finished(report):\n"
        "    with open('seen.json', 'w') as f:\n"
        "        json.dump({'decision': report.decision.value, 'n': len(report.metrics)}, f)\n",
    )
    assert project.runpytest("--confgate").ret == 0
    seen = json.loads((project.path / "seen.json").read_text(encoding="utf-8"))
    assert seen == {"decision": "pass", "n": 4}


def test_an_installed_plugin_is_found_through_the_entry_point_group(
    project: pytest.Pytester,
) -> None:
    project.syspathinsert(FIXTURES / "entrypoint_plugin")
    assert project.runpytest("--confgate").ret == 0
    extra = metric(read_report(project), "sample_plugin")
    assert extra["details"] == {"root": project.path.name}


def test_gate_finished_cannot_change_the_report_it_is_shown(project: pytest.Pytester) -> None:
    """Issue 17: a notification hook that appends a reason in place must not reach the report
    that is written (a reason under PASS), nor flip anything else in it."""
    _conftest(
        project,
        "@hookimpl\ndef confgate_gate_finished(report):\n"
        "    report.reasons.append('injected by a notification hook')\n"
        "    report.metrics[0].details['forged'] = True\n"
        "    report.signoffs.approved_by.append('mallory')\n",
    )
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert report["decision"] == "pass"
    assert report["reasons"] == []
    assert "forged" not in report["metrics"][0]["details"]
    assert report["signoffs"]["approved_by"] == []


def test_extra_conditions_cannot_edit_the_metrics_it_reads(project: pytest.Pytester) -> None:
    """Only the conditions a hook returns count: editing its arguments in place changes nothing."""
    _conftest(
        project,
        "@hookimpl\ndef confgate_extra_conditions(metrics, config):\n"
        "    metrics[0].details['forged'] = True\n"
        "    config.gate.metrics.clear()\n"
        "    return []\n",
    )
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert "forged" not in report["metrics"][0]["details"]
    assert len(report["conditions"]) > 0
