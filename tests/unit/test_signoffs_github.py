"""Sign-off from GitHub pull-request reviews (SPEC 6), against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.github_server import FakeGitHubServer

from pytest_confgate.collect.signoffs import collect_signoffs, signoffs_from_github
from pytest_confgate.config import GateConfig
from pytest_confgate.gate.policy import decide
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.models import Decision, EvalMetric, Signoffs, TestOutcomes

REPO = "octo/app"
HEAD = "h" * 40
OLD = "a" * 40


@pytest.fixture
def environ(github_server: FakeGitHubServer, tmp_path: Path) -> dict[str, str]:
    """A pull_request run: PR #7 by carol at HEAD, reviews served by the fake."""
    github_server.add_pull(REPO, 7, author="carol", head_sha=HEAD)
    event = tmp_path / "event.json"
    pull = {"number": 7, "head": {"sha": HEAD}, "user": {"login": "carol"}, "title": "t"}
    event.write_text(json.dumps({"action": "synchronize", "pull_request": pull}))
    return {
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_TOKEN": github_server.token,
        "GITHUB_API_URL": github_server.api_url,
    }


def review(server: FakeGitHubServer, login: str, state: str = "APPROVED", sha: str = HEAD) -> None:
    server.add_review(REPO, 7, login, state, commit_id=sha)


def reasons(found: Signoffs) -> dict[str, str]:
    return {entry["login"]: entry["reason"] for entry in found.ignored}


def test_an_approval_of_the_head_commit_by_an_approver_counts(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "alice")

    found = collect_signoffs(environ, ["alice", "bob"])

    assert found.approved_by == ["alice"]
    assert found.ignored == []
    assert found.source == f"GitHub reviews of {REPO}#7 at hhhhhhh"
    assert github_server.requests[0].path == f"/repos/{REPO}/pulls/7/reviews"


def test_a_stale_approval_names_both_commits(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "alice", sha=OLD)

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == []
    assert reasons(found) == {"alice": "stale: approved commit aaaaaaa, head is hhhhhhh"}


def test_the_author_cannot_approve_their_own_change(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "Carol")

    found = collect_signoffs(environ, [])

    assert found.approved_by == []
    assert reasons(found) == {"Carol": "self-approval by the author"}


def test_an_approval_by_someone_not_listed_does_not_count(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "mallory")
    review(github_server, "alice")

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == ["alice"]
    assert reasons(found) == {"mallory": "not an approver"}


def test_an_empty_approver_list_accepts_anyone_but_the_author(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "mallory")

    assert collect_signoffs(environ, []).approved_by == ["mallory"]


@pytest.mark.parametrize(
    ("states", "approved", "reason"),
    [
        (["APPROVED", "DISMISSED"], False, "dismissed"),
        (["APPROVED", "CHANGES_REQUESTED"], False, "changes requested"),
        (["CHANGES_REQUESTED", "APPROVED"], True, None),
        (["APPROVED", "COMMENTED"], True, None),
        (["DISMISSED", "COMMENTED", "APPROVED"], True, None),
        (["COMMENTED"], False, None),
    ],
    ids=[
        "dismissed",
        "changes-requested-after-approval",
        "approval-after-changes-requested",
        "comment-keeps-approval",
        "re-approved-after-dismissal",
        "comment-only",
    ],
)
def test_the_latest_review_per_person_wins(
    github_server: FakeGitHubServer,
    environ: dict[str, str],
    states: list[str],
    approved: bool,
    reason: str | None,
) -> None:
    for state in states:
        review(github_server, "alice", state)

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == (["alice"] if approved else [])
    assert reasons(found) == ({"alice": reason} if reason else {})


def test_a_team_approver_is_checked_through_the_membership_api(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    github_server.add_team_member("octo", "reviewers", "dave")
    review(github_server, "dave")
    review(github_server, "erin")

    found = collect_signoffs(environ, ["octo/reviewers"])

    assert found.approved_by == ["dave"]
    assert reasons(found) == {"erin": "not an approver"}
    asked = [r.path for r in github_server.requests if "/memberships/" in r.path]
    assert asked == [
        "/orgs/octo/teams/reviewers/memberships/dave",
        "/orgs/octo/teams/reviewers/memberships/erin",
    ]


def test_two_fresh_approvals_pass_t3_and_one_needs_signoff(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    gate = GateConfig.model_validate({"metrics": [{"type": "test_pass_rate"}]})
    evidence = [EvalMetric(type="test_pass_rate", value=1.0, details={"passed": 3})]
    tests = TestOutcomes(passed=3)
    review(github_server, "alice")
    review(github_server, "bob", sha=OLD)

    one = collect_signoffs(environ, ["alice", "bob"])
    assert decide(gate, "T3", evidence, tests, one).decision is Decision.NEEDS_SIGNOFF

    review(github_server, "bob")
    two = collect_signoffs(environ, ["alice", "bob"])
    assert two.approved_by == ["alice", "bob"]
    assert decide(gate, "T3", evidence, tests, two).decision is Decision.PASS


def test_reviews_are_read_across_pages(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    for index in range(150):
        review(github_server, f"user{index}", "COMMENTED")
    review(github_server, "alice")  # on page 2 of 100
    review(github_server, "bob")

    found = collect_signoffs(environ, ["alice", "bob"])

    assert found.approved_by == ["alice", "bob"]
    assert [r.path.rsplit("/", 1)[1] for r in github_server.requests] == [
        "reviews", "reviews", "commits"
    ]


def test_an_api_failure_fails_closed_with_the_reason(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "alice")
    github_server.fail_next(500, message="Server Error")

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == []
    assert found.source == (
        f"GitHub reviews of {REPO}#7 at hhhhhhh could not be read: "
        f"GitHub GET /repos/{REPO}/pulls/7/reviews: HTTP 500: Server Error"
    )


def test_a_failed_team_check_fails_closed(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "dave")
    github_server.add_team_member("octo", "reviewers", "dave")
    membership = "/orgs/octo/teams/reviewers/memberships/dave"
    github_server.fail_next(403, message="Resource not accessible by integration", path=membership)

    found = collect_signoffs(environ, ["octo/reviewers"])

    assert found.approved_by == []
    assert found.source is not None
    assert f"GET {membership}: HTTP 403: Resource not accessible" in found.source


def test_the_token_never_reaches_the_report(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    github_server.fail_next(401, message=f"Bad credentials: {github_server.token}")

    found = collect_signoffs(environ, ["alice"])

    assert found.source is not None
    assert "HTTP 401" in found.source
    assert github_server.token not in found.model_dump_json()


@pytest.mark.parametrize(
    "event_name", ["pull_request", "pull_request_target", "pull_request_review", None]
)
def test_without_a_token_confgate_signoffs_is_still_ignored_on_a_pull_request(
    github_server: FakeGitHubServer, environ: dict[str, str], event_name: str | None
) -> None:
    """The workflow, or a step before the gate, is the change's to edit: no env sign-off."""
    del environ["GITHUB_TOKEN"]
    environ["CONFGATE_SIGNOFFS"] = "alice,bob"
    if event_name:
        environ["GITHUB_EVENT_NAME"] = event_name

    found = collect_signoffs(environ, ["alice", "bob"])

    assert found.approved_by == []
    assert reasons(found) == dict.fromkeys(
        ["alice", "bob"], "CONFGATE_SIGNOFFS is ignored on a pull request: only reviews count there"
    )
    assert found.source is not None
    assert found.source.startswith("GitHub reviews: no token in this step")
    assert github_server.requests == []


def test_outside_a_pull_request_the_environment_is_the_source(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    Path(environ["GITHUB_EVENT_PATH"]).write_text(json.dumps({"ref": "refs/heads/main"}))
    environ["CONFGATE_SIGNOFFS"] = "alice"

    found = collect_signoffs(environ, ["alice"])
    assert (found.approved_by, found.source) == (["alice"], "CONFGATE_SIGNOFFS")
    assert github_server.requests == []

    client = GitHubClient.from_env(environ)
    assert client is not None
    direct = signoffs_from_github(client, environ, ["alice"])
    assert direct.approved_by == []
    assert direct.source == "GitHub reviews: not a pull_request event, no reviews to count"


def test_confgate_signoffs_is_ignored_on_a_pull_request(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    environ["CONFGATE_SIGNOFFS"] = "alice,bob"  # the workflow is editable by the change itself

    found = collect_signoffs(environ, ["alice", "bob"])

    assert found.approved_by == []
    assert found.source is not None
    assert "CONFGATE_SIGNOFFS ignored" in found.source
    assert {e["login"] for e in found.ignored} == {"alice", "bob"}


def test_an_author_of_a_commit_of_the_pull_request_cannot_approve_it(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    """carol opened the PR; dave pushed a commit to it; erin co-authored one; frank did not."""
    github_server.add_commit(REPO, 7, author="carol")
    dave = github_server.add_commit(REPO, 7, author="Dave")
    erin = github_server.add_commit(
        REPO, 7, author="carol",
        message="fix\n\nCo-authored-by: Erin Example <123+erin@users.noreply.github.com>\n")
    gus = github_server.add_commit(REPO, 7, author=None, name="x",
                                   message="y\n\nco-authored-by: gus <gus@corp.example>")
    for login in ("dave", "erin", "gus", "frank"):
        review(github_server, login)

    found = collect_signoffs(environ, [])

    assert found.approved_by == ["frank"]
    assert reasons(found) == {
        "dave": f"authored commit {dave['sha'][:7]} of the pull request",
        "erin": f"co-authored commit {erin['sha'][:7]} of the pull request",
        "gus": f"co-authored commit {gus['sha'][:7]} of the pull request",
    }


def test_the_commit_list_is_read_only_when_an_approval_could_count(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "alice", sha=OLD)
    collect_signoffs(environ, ["alice"])
    assert [r.path for r in github_server.requests] == [f"/repos/{REPO}/pulls/7/reviews"]


def test_an_unreadable_commit_list_approves_no_one(
    github_server: FakeGitHubServer, environ: dict[str, str]
) -> None:
    review(github_server, "alice")
    github_server.fail_next(502, path=f"/repos/{REPO}/pulls/7/commits")
    github_server.fail_next(502, path=f"/repos/{REPO}/pulls/7/commits")

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == []
    assert found.source is not None
    assert f"GET /repos/{REPO}/pulls/7/commits: HTTP 502" in found.source


@pytest.mark.parametrize(
    ("approvers", "counted"),
    [([], False), (["alice", "octo/reviewers"], False), (["renovate[bot]"], True),
     (["Renovate[Bot]"], True)],
    ids=["anyone", "not-listed", "listed", "listed-any-case"],
)
def test_a_bot_counts_only_when_listed_by_its_exact_login(
    github_server: FakeGitHubServer, environ: dict[str, str], approvers: list[str], counted: bool
) -> None:
    review(github_server, "renovate[bot]")

    found = collect_signoffs(environ, approvers)

    assert found.approved_by == (["renovate[bot]"] if counted else [])
    if not counted:
        assert reasons(found)["renovate[bot]"].startswith("a bot account")


def test_an_unreadable_event_file_fails_closed(environ: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "event.json").write_text("{not json")
    environ["CONFGATE_SIGNOFFS"] = "alice"

    found = collect_signoffs(environ, ["alice"])

    assert found.approved_by == []
    assert found.source is not None
    assert found.source.startswith("GitHub reviews could not be read: GITHUB_EVENT_PATH")
