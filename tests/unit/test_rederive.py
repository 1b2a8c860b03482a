"""The publish step works out the tier again from GitHub, not from the report (issue 14).

A report is written by the process that ran the change's code; here it claims whatever a
forger would (T0, pass, no sign-off needed, its own approvers). ``confgate github publish``
reads the pull request's files and the base's configuration from a real HTTP server speaking
GitHub's API, and judges the change at no less than the tier they demand.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fakes.github_runner import parse_github_output
from fakes.github_server import FakeGitHubServer
from fakes.reports import HEAD_SHA, honest_report

from pytest_confgate.cli.github import publish
from pytest_confgate.models import ConfidenceResult, Decision, GateReport, Signoffs

BASE = "b" * 40
RULES = "gate:\n  risk_rules:\n    - {paths: ['src/auth/**'], tier: T3}\n"
PYPROJECT = '[project]\nname = "x"\ndependencies = []\n\n[tool.coverage.run]\nbranch = true\n'


@pytest.fixture
def env(tmp_path: Path, github_server: FakeGitHubServer) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "head": {"sha": HEAD_SHA}, "base": {"sha": BASE},
        "user": {"login": "carol"}}}), encoding="utf-8")
    (tmp_path / "out").write_text("", encoding="utf-8")
    github_server.add_pull("o/r", 7, author="carol", head_sha=HEAD_SHA)
    return {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r",
            "GITHUB_TOKEN": github_server.token, "GITHUB_API_URL": github_server.api_url,
            "GITHUB_OUTPUT": str(tmp_path / "out")}


def forged(**fields: Any) -> GateReport:
    """What a change that tampers in-process would write: T0, pass, nobody to ask; its
    evidence (tests, metrics) as measured."""
    values: dict[str, Any] = {"risk_tier": "T0", "risk_reason": "set by gate.risk_tier",
                              "decision": Decision.PASS, "auto_advance": True}
    values.update(fields)
    return honest_report().model_copy(update=values)


def run(tmp_path: Path, env: dict[str, str], report: GateReport) -> tuple[int, GateReport, str]:
    path = tmp_path / "confgate-report.json"
    path.write_text(report.model_dump_json(), encoding="utf-8")
    err = io.StringIO()
    code = publish(str(path), environ=env, comment=False, out=io.StringIO(), err=err)
    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    return code, saved, err.getvalue()


def test_a_forged_t0_pass_on_a_t3_path_still_needs_two_sign_offs(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_content("o/r", BASE, "confgate.yml", RULES)
    github_server.add_file("o/r", 7, "src/auth/policy.py")

    code, saved, err = run(tmp_path, env, forged())

    assert code == 1
    assert (saved.risk_tier, saved.decision) == ("T3", Decision.NEEDS_SIGNOFF)
    assert saved.signoffs.required == 2
    assert saved.auto_advance is False
    assert "raised to T3: in the publish step, from the pull request's 1 files" in saved.risk_reason
    assert f"confgate.yml at {BASE[:12]}" in saved.risk_reason
    assert "the report said T0, it is judged at T3" in err
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "needs_signoff"

    github_server.add_review("o/r", 7, "alice", "APPROVED", commit_id=HEAD_SHA)
    github_server.add_review("o/r", 7, "bob", "APPROVED", commit_id=HEAD_SHA)
    (tmp_path / "out").write_text("", encoding="utf-8")
    code, saved, _ = run(tmp_path, env, forged())
    assert (code, saved.decision) == (0, Decision.PASS)


def test_the_approvers_come_from_the_base_not_from_the_report(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_content("o/r", BASE, "confgate.yml",
                              "gate:\n  risk_tier: T2\n  policy: {signoff: {approvers: [alice]}}\n")
    github_server.add_file("o/r", 7, "src/app.py")
    github_server.add_review("o/r", 7, "mallory", "APPROVED", commit_id=HEAD_SHA)
    report = forged(signoffs=Signoffs(required=1, approvers=["mallory"]))

    code, saved, _ = run(tmp_path, env, report)

    assert code == 1
    assert saved.signoffs.approvers == ["alice"]
    assert saved.signoffs.approved_by == []
    assert saved.signoffs.ignored == [{"login": "mallory", "reason": "not an approver"}]


@pytest.mark.parametrize(
    ("head", "tier"),
    [(PYPROJECT.replace("branch = true", "branch = false"), "T2"),
     (PYPROJECT.replace("dependencies = []", 'dependencies = ["attrs"]'), "T1")],
    ids=["coverage-settings", "a-dependency"],
)
def test_machinery_sections_are_judged_from_both_commits(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer, head: str, tier: str
) -> None:
    github_server.add_content("o/r", BASE, "pyproject.toml", PYPROJECT)
    github_server.add_content("o/r", HEAD_SHA, "pyproject.toml", head)
    github_server.add_file("o/r", 7, "pyproject.toml")

    _, saved, _ = run(tmp_path, env, forged())

    assert saved.risk_tier == tier  # T1: the defaults' tier, the base has no configuration
    assert ("pyproject.toml [tool.coverage.run]" in saved.risk_reason) is (tier == "T2")


def test_a_change_to_the_config_or_a_workflow_is_at_least_t2(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_content("o/r", BASE, "confgate.yml", "gate: {risk_tier: T0}\n")
    github_server.add_file("o/r", 7, "confgate.yml")
    github_server.add_file("o/r", 7, ".github/workflows/ci.yml")

    _, saved, _ = run(tmp_path, env, forged())

    assert saved.risk_tier == "T2"
    assert "edits the gate's configuration" in saved.risk_reason
    assert ".github/workflows/ci.yml" in saved.risk_reason


def test_a_project_in_a_subfolder_is_judged_relative_to_it(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_content("o/r", BASE, "svc/confgate.yml", RULES)
    github_server.add_file("o/r", 7, "svc/src/auth/policy.py")

    _, saved, _ = run(tmp_path, {**env, "CONFGATE_PROJECT_DIR": "./svc/"}, forged())

    assert saved.risk_tier == "T3"


def test_a_tier_that_cannot_be_checked_fails_closed(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.fail_next(403, message="Resource not accessible by integration",
                            path="/repos/o/r/pulls/7/files")

    code, saved, _ = run(tmp_path, env, forged())

    assert code == 1
    assert saved.decision is Decision.FAIL
    assert saved.reasons[0].startswith(
        "change: the risk tier could not be checked against the pull request's files")
    assert github_server.token not in saved.model_dump_json()


def test_a_real_report_at_the_right_tier_is_left_as_it_is(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_file("o/r", 7, "src/app.py")
    report = honest_report()  # T1, pass; no configuration on the base: the defaults, T1

    code, saved, err = run(tmp_path, env, report)

    assert (code, saved.risk_tier, saved.decision) == (0, "T1", Decision.PASS)
    assert "risk tier checked against the pull request's files: T1" in err


def test_without_a_pull_request_to_read_the_tier_is_left_as_the_report_says(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    """GitHub answers 404 for a pull request it does not know (or hides from this token):
    its reviews will not count either, so nothing is approved on its word."""
    github_server.fail_next(404, message="Not Found", path="/repos/o/r/pulls/7/files")

    code, saved, err = run(tmp_path, env, forged())

    assert (code, saved.risk_tier, saved.decision) == (0, "T0", Decision.PASS)
    assert "risk tier not checked against the pull request's files: GitHub GET" in err


def test_a_base_without_configuration_keeps_the_reports_own_approver_list(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    """The defaults accept any reviewer but the author; a report's list can only narrow that."""
    github_server.add_file("o/r", 7, "src/app.py")
    report = honest_report(tier="T3", signoffs=Signoffs(required=2, approvers=["alice", "bob"]))

    _, saved, _ = run(tmp_path, env, report)

    assert (saved.risk_tier, saved.signoffs.approvers) == ("T3", ["alice", "bob"])


def _advisory(met: bool) -> ConfidenceResult:
    return ConfidenceResult(method="formula", mode="composite", score=0.9 if met else 0.3,
                            scores={}, threshold=0.5,
                            advisory="confidence threshold met" if met else None)


@pytest.mark.parametrize(
    ("policy", "met", "advance"),
    [("", True, True), ("", False, False),
     ("  policy:\n    tiers: {T2: {auto_advance: false}}\n", True, False)],
    ids=["confident", "not-confident", "tier-forbids-it"],
)
def test_a_change_signed_off_in_the_publish_step_auto_advances_per_spec_6(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer,
    policy: str, met: bool, advance: bool,
) -> None:
    """Issue 17: the recount kept ``auto_advance`` false once the gate step said needs_signoff."""
    github_server.add_content(
        "o/r", BASE, "confgate.yml",
        "gate:\n  risk_rules:\n    - {paths: ['src/**'], tier: T2}\n" + policy)
    github_server.add_file("o/r", 7, "src/app.py")
    github_server.add_review("o/r", 7, "alice", "APPROVED", commit_id=HEAD_SHA)
    waiting = honest_report(tier="T2", signoffs=Signoffs(required=1), confidence=_advisory(met))
    assert waiting.decision is Decision.NEEDS_SIGNOFF
    code, saved, _ = run(tmp_path, env, waiting)
    assert (code, saved.decision) == (0, Decision.PASS)
    assert saved.auto_advance is advance
    assert parse_github_output((tmp_path / "out").read_text())["auto_advance"] == str(
        advance).lower()


EXIT_HOOK = "import atexit\n\natexit.register(print)\n\n\ndef test_x():\n    assert True\n"


def test_code_that_games_the_gate_needs_a_sign_off_even_where_the_policy_asks_none(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    """Issue 29: the report passes and its evidence is consistent, but the change adds a test
    module with an exit hook; the base's policy asks no sign-off at T2 and still one is
    needed, and the finding is in the report for every writer's tamper section."""
    github_server.add_content("o/r", BASE, "confgate.yml",
                              "gate:\n  policy:\n    tiers: {T2: {signoffs: 0}}\n")
    github_server.add_content("o/r", HEAD_SHA, "tests/test_hook.py", EXIT_HOOK)
    github_server.add_file("o/r", 7, "tests/test_hook.py", "added")

    code, saved, err = run(tmp_path, env, honest_report())

    assert code == 1
    assert (saved.risk_tier, saved.decision) == ("T2", Decision.NEEDS_SIGNOFF)
    assert saved.signoffs.required == 1
    assert "code that games the gate or its tests: tests/test_hook.py:3" in saved.risk_reason
    assert "a human must sign off" in err
    [found] = [m for m in saved.metrics if m.type == "tamper_patterns"]
    [item] = found.details["items"]
    assert (item["rule"], item["file"], item["line"]) == ("gate_escape", "tests/test_hook.py", 3)
    assert "atexit.register" in item["head"]

    github_server.add_review("o/r", 7, "alice", "APPROVED", commit_id=HEAD_SHA)
    code, saved, _ = run(tmp_path, env, honest_report())
    assert (code, saved.decision) == (0, Decision.PASS)  # a human looked and signed off


def test_the_gates_machinery_needs_a_sign_off_even_where_the_policy_asks_none(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    github_server.add_content("o/r", BASE, "confgate.yml",
                              "gate:\n  policy:\n    tiers: {T2: {signoffs: 0}}\n")
    github_server.add_file("o/r", 7, "tests/conftest.py", "added")

    code, saved, _ = run(tmp_path, env, honest_report())

    assert (code, saved.risk_tier, saved.decision) == (1, "T2", Decision.NEEDS_SIGNOFF)
    assert saved.signoffs.required == 1


PATCHES_THE_GATE = (
    "import pytest_confgate\n\n\ndef test_x(monkeypatch):\n"
    "    monkeypatch.setattr(pytest_confgate, 'VERSION', '0')\n    assert True\n"
)


@pytest.mark.parametrize("own", [True, False], ids=["the-project-itself", "another-project"])
def test_patching_the_gate_is_gaming_it_unless_the_base_is_the_gate_itself(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer, own: bool
) -> None:
    """Which packages are the project's own is read from the base, so a change cannot make
    pytest_confgate its own by adding a folder of that name."""
    if own:
        github_server.add_content("o/r", BASE, "pytest_confgate/__init__.py", "")
    github_server.add_content("o/r", HEAD_SHA, "pytest_confgate/__init__.py", "")
    github_server.add_content("o/r", HEAD_SHA, "tests/test_patch.py", PATCHES_THE_GATE)
    github_server.add_file("o/r", 7, "tests/test_patch.py", "added")
    if not own:
        github_server.add_file("o/r", 7, "pytest_confgate/__init__.py", "added")

    _, saved, _ = run(tmp_path, env, honest_report())

    rules = [item["rule"] for m in saved.metrics if m.type == "tamper_patterns"
             for item in m.details["items"]]
    # another project's change also added pytest_confgate/ at its root: a runner of its own
    assert rules == ([] if own else ["harness_replaced", "harness_patched"])


def test_a_risk_path_one_commit_added_and_a_later_one_removed_still_raises_the_tier(
    tmp_path: Path, env: dict[str, str], github_server: FakeGitHubServer
) -> None:
    """The final file list shows only ``src/app.py``; the pull request's commits show
    ``src/auth/policy.py`` coming and going: the T3 rule holds (issue 34)."""
    github_server.add_content("o/r", BASE, "confgate.yml", RULES)
    github_server.add_file("o/r", 7, "src/app.py")
    github_server.add_commit("o/r", 7, author="carol", files=("src/auth/policy.py",))
    github_server.add_commit("o/r", 7, author="carol", files=("src/auth/policy.py",
                                                              "src/app.py"))

    code, saved, _ = run(tmp_path, env, forged())

    assert code == 1
    assert (saved.risk_tier, saved.decision) == ("T3", Decision.NEEDS_SIGNOFF)
    assert "src/auth/policy.py matched gate.risk_rules[0]" in saved.risk_reason
    assert "a commit of the change touched it" in saved.risk_reason
