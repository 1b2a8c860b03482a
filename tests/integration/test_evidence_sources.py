"""Checklist and requirement evidence through `pytest --confgate`, serial and under xdist."""

from __future__ import annotations

import json

import pytest
from conftest import metric, read_report, write_config

REQUIREMENTS = """\
- {id: REQ-1, title: Adding numbers}
- {id: REQ-2, title: Scaling}
- {id: REQ-3, title: Dividing}
"""

LINKED_TESTS = """\
import pytest
from calc import add, scale


@pytest.mark.requirement("REQ-1")
def test_add():
    assert add(1, 2) == 3


@pytest.mark.requirement("REQ-2", "REQ-9")
def test_scale_is_wrong():
    assert scale(2) == 99
"""


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_requirement_coverage_counts_requirements_with_a_passing_linked_test(
    project: pytest.Pytester, xdist: bool
) -> None:
    project.path.joinpath("requirements.yml").write_text(REQUIREMENTS, encoding="utf-8")
    project.path.joinpath("tests", "test_calc.py").write_text(LINKED_TESTS, encoding="utf-8")
    write_config(
        project,
        "gate:\n  metrics:\n    - {type: requirement_coverage, requirements: requirements.yml, "
        "min: 0.5}\n",
    )
    args = ["-n", "2", "-p", "xdist"] if xdist else ["-p", "no:xdist"]
    result = project.runpytest("--confgate", "--strict-markers", *args)
    assert result.ret == 1  # test_scale_is_wrong fails
    req = metric(read_report(project), "requirement_coverage")
    assert req["value"] == pytest.approx(1 / 3)
    assert req["details"]["uncovered"] == ["REQ-2", "REQ-3"]
    assert req["details"]["uncovered_titles"] == {"REQ-2": "Scaling", "REQ-3": "Dividing"}
    assert [u["id"] for u in req["details"]["unknown_ids"]] == ["REQ-9"]
    reasons = read_report(project)["reasons"]
    expected = (
        "requirement_coverage: 33.33% is below the minimum 50.00% (uncovered: REQ-2, REQ-3)"
    )
    assert expected in reasons


def test_the_requirement_marker_is_known_without_the_gate(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_calc.py").write_text(LINKED_TESTS, encoding="utf-8")
    result = project.runpytest("--strict-markers", "-k", "test_add")
    assert result.ret == 0


def test_a_broken_requirements_file_stops_the_run_before_any_test(
    project: pytest.Pytester,
) -> None:
    duplicated = "- {id: REQ-1}\n- {id: REQ-1}\n"
    project.path.joinpath("requirements.yml").write_text(duplicated, encoding="utf-8")
    write_config(
        project,
        "gate:\n  metrics: [{type: requirement_coverage, requirements: requirements.yml}]\n",
    )
    result = project.runpytest("--confgate")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: *requirements.yml*REQ-1*"])


def _event(pytester: pytest.Pytester, body: object) -> str:
    path = pytester.path / "event.json"
    path.write_text(json.dumps({"pull_request": {"body": body, "number": 7}}), encoding="utf-8")
    return str(path)


def test_a_required_checklist_item_left_unchecked_fails_the_gate(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "## Checklist\n- [x] Tests added\n- [ ] Docs updated\n* [X] Changelog\n"
    monkeypatch.setenv("GITHUB_EVENT_PATH", _event(project, body))
    write_config(
        project,
        "gate:\n  metrics:\n    - {type: checklist_completion, source: pr_body, "
        "required: [docs updated, tests added]}\n",
    )
    result = project.runpytest("--confgate")
    assert result.ret == 1
    check = metric(read_report(project), "checklist_completion")
    assert (check["details"]["checked"], check["details"]["total"]) == (2, 3)
    assert check["value"] == pytest.approx(2 / 3)
    assert read_report(project)["reasons"] == [
        "checklist_completion: required item(s) not checked: 'docs updated'"
    ]


def test_pull_request_text_is_data_and_never_runs(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "- [x] $(touch pwned) `touch pwned2`\n- [x] ::set-output name=decision::pass\n"
    monkeypatch.setenv("GITHUB_EVENT_PATH", _event(project, body))
    write_config(project, "gate:\n  metrics: [{type: checklist_completion}]\n")
    assert project.runpytest("--confgate").ret == 0
    items = metric(read_report(project), "checklist_completion")["details"]["items"]
    assert [i["text"] for i in items] == [
        "$(touch pwned) `touch pwned2`",
        "::set-output name=decision::pass",
    ]
    assert not (project.path / "pwned").exists()


def test_no_pull_request_event_is_missing_evidence_and_fails_closed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    write_config(project, "gate:\n  metrics: [{type: checklist_completion}]\n")
    assert project.runpytest("--confgate").ret == 1
    check = metric(read_report(project), "checklist_completion")
    assert check["status"] == "unavailable"
