"""Sign-off from GitHub reviews inside `pytest --confgate` (SPEC 6, issue 5).

The reviews come from a real HTTP server on 127.0.0.1 speaking GitHub's REST API
(``tests/fakes/github_server.py``); the gate's own client reads them as it would GitHub's.
"""

from __future__ import annotations

import json

import pytest
from conftest import read_report, write_config
from fakes.github_server import FakeGitHubServer

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

HEAD = "c0ffee" + "0" * 34
OLD = "bad" + "1" * 37


@pytest.fixture
def pull_request(
    project: pytest.Pytester, github_server: FakeGitHubServer, monkeypatch: pytest.MonkeyPatch
) -> FakeGitHubServer:
    """A T3 project run as GitHub runs a pull_request workflow for PR #7 by carol."""
    write_config(
        project,
        "gate:\n  risk_tier: T3\n  metrics: [{type: test_pass_rate}]\n"
        "  policy: {signoff: {approvers: [alice, bob]}}\n",
    )
    event = project.path / "event.json"
    pull = {"number": 7, "head": {"sha": HEAD}, "user": {"login": "carol"}}
    event.write_text(json.dumps({"pull_request": pull}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/app")
    monkeypatch.setenv("GITHUB_TOKEN", github_server.token)
    monkeypatch.setenv("GITHUB_API_URL", github_server.api_url)
    monkeypatch.delenv("CONFGATE_GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("CONFGATE_SIGNOFFS", raising=False)
    return github_server


def test_t3_needs_two_fresh_approvals_from_reviews(
    project: pytest.Pytester, pull_request: FakeGitHubServer
) -> None:
    pull_request.add_review("octo/app", 7, "alice", "APPROVED", commit_id=HEAD)
    pull_request.add_review("octo/app", 7, "bob", "APPROVED", commit_id=OLD)

    result = project.runpytest("--confgate")

    assert result.ret == 1, result.stdout.str()
    signoffs = read_report(project)["signoffs"]
    assert read_report(project)["decision"] == "needs_signoff"
    assert signoffs["approved_by"] == ["alice"]
    assert signoffs["ignored"] == [
        {"login": "bob", "reason": "stale: approved commit bad1111, head is c0ffee0"}
    ]
    result.stdout.fnmatch_lines(["sign-offs: 1/2 (alice)", "confgate: NEEDS SIGN-OFF",
                                 "  1. sign-offs: 2 needed for tier T3, got 1"])

    pull_request.add_review("octo/app", 7, "bob", "APPROVED", commit_id=HEAD)
    result = project.runpytest("--confgate")

    assert result.ret == 0, result.stdout.str()
    report = read_report(project)
    assert (report["decision"], report["signoffs"]["approved_by"]) == ("pass", ["alice", "bob"])


def test_an_unreadable_review_list_blocks_with_the_reason(
    project: pytest.Pytester, pull_request: FakeGitHubServer
) -> None:
    pull_request.add_review("octo/app", 7, "alice", "APPROVED", commit_id=HEAD)
    pull_request.add_review("octo/app", 7, "bob", "APPROVED", commit_id=HEAD)
    pull_request.fail_next(500, message="Server Error")

    result = project.runpytest("--confgate")

    assert result.ret == 1, result.stdout.str()
    report = read_report(project)
    assert report["decision"] == "needs_signoff"
    assert report["signoffs"]["approved_by"] == []
    assert "HTTP 500: Server Error" in report["signoffs"]["source"]
    assert pull_request.token not in result.stdout.str()
