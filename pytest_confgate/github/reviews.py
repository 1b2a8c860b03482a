"""Human sign-offs from a pull request's reviews, through GitHub's REST API (SPEC 6).

Each reviewer's latest APPROVED / CHANGES_REQUESTED / DISMISSED review is their state
(COMMENTED and PENDING change nothing). It counts when it approves the head commit, by an
approver who is not the author. Every review that does not count is kept with the reason, for
the report; an API failure approves no one and says why (fail closed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import PullRequest, pull_request
from pytest_confgate.models import Signoffs

ENV_SIGNOFFS = "CONFGATE_SIGNOFFS"
ENV_REPOSITORY = "GITHUB_REPOSITORY"
_DECISIVE = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})


def signoffs_from_github(
    client: GitHubClient, environ: Mapping[str, str], approvers: list[str]
) -> Signoffs:
    """APPROVED reviews on the head commit by approvers other than the author (SPEC 6).

    Each reviewer's latest APPROVED / CHANGES_REQUESTED / DISMISSED review is their state
    (COMMENTED and PENDING change nothing). Approvers are logins or ``org/team``; an empty
    list accepts anyone but the author. An API failure approves no one and says why.
    """
    try:
        pull = pull_request(environ)
    except ConfgateError as exc:
        return Signoffs(source=f"GitHub reviews could not be read: {exc}")
    if pull is None:
        return Signoffs(source="GitHub reviews: not a pull_request event, no reviews to count")
    repo = environ.get(ENV_REPOSITORY, "").strip()
    if repo.count("/") != 1:
        return Signoffs(source=f"GitHub reviews could not be read: {ENV_REPOSITORY} is not set")
    where = f"{repo}#{pull.number} at {pull.head_sha[:7]}"
    try:
        reviews = client.paginate(f"/repos/{_path(repo)}/pulls/{pull.number}/reviews")
        approved, ignored = _count(client, reviews, pull, approvers)
    except GitHubError as exc:
        return Signoffs(source=f"GitHub reviews of {where} could not be read: {exc}")
    source = f"GitHub reviews of {where}"
    if environ.get(ENV_SIGNOFFS, "").strip():
        source += f" ({ENV_SIGNOFFS} ignored: reviews are the source on a pull request)"
    return Signoffs(approved_by=approved, ignored=ignored, source=source)


def _count(
    client: GitHubClient, reviews: list[Any], pull: PullRequest, approvers: list[str]
) -> tuple[list[str], list[dict[str, str]]]:
    latest: dict[str, dict[str, Any]] = {}
    for review in reviews:  # GitHub lists reviews oldest first
        login = _login(review)
        if login and isinstance(review, dict) and review.get("state") in _DECISIVE:
            latest.pop(login.casefold(), None)  # keep dict order = order of latest decision
            latest[login.casefold()] = review
    approved: list[str] = []
    ignored: list[dict[str, str]] = []
    for review in latest.values():
        login = _login(review)
        reason = _why_not(client, review, login, pull, approvers)
        if reason:
            ignored.append({"login": login, "reason": reason})
        else:
            approved.append(login)
    return approved, ignored


def _why_not(
    client: GitHubClient,
    review: dict[str, Any],
    login: str,
    pull: PullRequest,
    approvers: list[str],
) -> str | None:
    """Why this reviewer's latest review does not count, or None when it does."""
    state = review.get("state")
    if state == "DISMISSED":
        return "dismissed"
    if state == "CHANGES_REQUESTED":
        return "changes requested"
    if login.casefold() == pull.author.casefold():
        return "self-approval by the author"
    commit = str(review.get("commit_id") or "")
    if commit != pull.head_sha:
        return f"stale: approved commit {commit[:7] or 'unknown'}, head is {pull.head_sha[:7]}"
    if approvers and not _is_approver(client, login, approvers):
        return "not an approver"
    return None


def _is_approver(client: GitHubClient, login: str, approvers: list[str]) -> bool:
    """Listed by login, or an active member of a listed ``org/team`` (asked through the API)."""
    if any("/" not in a and a.strip().casefold() == login.casefold() for a in approvers):
        return True
    for entry in approvers:
        org, _, team = entry.strip().partition("/")
        if not team:
            continue
        path = f"/orgs/{_segment(org)}/teams/{_segment(team)}/memberships/{_segment(login)}"
        try:
            membership = client.get(path)
        except GitHubError as exc:
            if exc.status == 404:  # GitHub's answer for "not a member"
                continue
            raise
        if isinstance(membership, dict) and membership.get("state") == "active":
            return True
    return False


def _login(review: Any) -> str:
    user = review.get("user") if isinstance(review, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else ""


def _path(repo: str) -> str:
    """``owner/name`` for a URL: each part quoted, the slash kept."""
    return "/".join(_segment(part) for part in repo.split("/"))


def _segment(text: str) -> str:
    return quote(text.strip(), safe="")
