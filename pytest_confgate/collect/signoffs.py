"""Human sign-offs (SPEC 6): GitHub pull-request reviews, or ``CONFGATE_SIGNOFFS`` elsewhere.

``collect_signoffs`` chooses: on a GitHub pull-request event with a token, the reviews are the
only source (``CONFGATE_SIGNOFFS`` is set by the workflow, which the change itself could edit,
so it is not trusted there); otherwise the environment. Entries that do not count are kept,
with the reason, for the report. Nothing here raises: a failure approves no one (fail closed).

Environment path: only logins count; each entry must look like a login, be listed in
``policy.signoff.approvers`` when that list is set, and not be the change's author
(``CONFGATE_AUTHOR``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.models import Signoffs

ENV_SIGNOFFS = "CONFGATE_SIGNOFFS"
ENV_AUTHOR = "CONFGATE_AUTHOR"
ENV_REPOSITORY = "GITHUB_REPOSITORY"
ENV_EVENT_PATH = "GITHUB_EVENT_PATH"
_EVENT_LIMIT = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
_DECISIVE = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")


def signoffs_from_env(environ: Mapping[str, str], approvers: list[str]) -> Signoffs:
    """Parse ``CONFGATE_SIGNOFFS`` (comma-separated logins) against the approver list."""
    allowed = {a.casefold() for a in approvers}
    author = environ.get(ENV_AUTHOR, "").strip().casefold()
    approved: list[str] = []
    ignored: list[dict[str, str]] = []
    seen: set[str] = set()
    for entry in environ.get(ENV_SIGNOFFS, "").split(","):
        login = entry.strip()
        key = login.casefold()
        if not login or key in seen:
            continue
        seen.add(key)
        if not _LOGIN.match(login):
            ignored.append({"login": login[:80], "reason": "not a valid login"})
        elif author and key == author:
            ignored.append({"login": login, "reason": "the author cannot sign off their change"})
        elif allowed and key not in allowed:
            ignored.append({"login": login, "reason": "not in policy.signoff.approvers"})
        else:
            approved.append(login)
    source = ENV_SIGNOFFS if environ.get(ENV_SIGNOFFS, "").strip() else None
    return Signoffs(approved_by=approved, ignored=ignored, source=source)


@dataclass(frozen=True)
class _PullRequest:
    number: int
    head_sha: str
    author: str


def collect_signoffs(environ: Mapping[str, str], approvers: list[str]) -> Signoffs:
    """Sign-offs from GitHub reviews on a pull-request event with a token, else the environment."""
    if not environ.get(ENV_EVENT_PATH, "").strip():
        return signoffs_from_env(environ, approvers)
    try:
        client = GitHubClient.from_env(environ)
        pull = _pull_request(environ) if client is not None else None
    except ConfgateError as exc:
        return Signoffs(source=f"GitHub reviews could not be read: {exc}")
    if client is None or pull is None:
        return signoffs_from_env(environ, approvers)
    return signoffs_from_github(client, environ, approvers)


def signoffs_from_github(
    client: GitHubClient, environ: Mapping[str, str], approvers: list[str]
) -> Signoffs:
    """APPROVED reviews on the head commit by approvers other than the author (SPEC 6).

    Each reviewer's latest APPROVED / CHANGES_REQUESTED / DISMISSED review is their state
    (COMMENTED and PENDING change nothing). Approvers are logins or ``org/team``; an empty
    list accepts anyone but the author. An API failure approves no one and says why.
    """
    try:
        pull = _pull_request(environ)
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
    client: GitHubClient, reviews: list[Any], pull: _PullRequest, approvers: list[str]
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
    pull: _PullRequest,
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


def _pull_request(environ: Mapping[str, str]) -> _PullRequest | None:
    """Number, head commit and author from the event file; None when it is not a PR event."""
    path = environ.get(ENV_EVENT_PATH, "").strip()
    if not path:
        return None
    try:
        with Path(path).open("rb") as handle:
            event = json.loads(handle.read(_EVENT_LIMIT))
    except (OSError, ValueError) as exc:
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: cannot be read ({exc})") from exc
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        return None
    try:
        number = pull["number"]
        sha = pull["head"]["sha"]
        author = pull["user"]["login"]
    except (KeyError, TypeError) as exc:
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: pull_request lacks {exc}") from exc
    if not isinstance(number, int) or not isinstance(sha, str) or not isinstance(author, str):
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: pull_request fields have the wrong type")
    return _PullRequest(number=number, head_sha=sha, author=author)


def _login(review: Any) -> str:
    user = review.get("user") if isinstance(review, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else ""


def _path(repo: str) -> str:
    """``owner/name`` for a URL: each part quoted, the slash kept."""
    return "/".join(_segment(part) for part in repo.split("/"))


def _segment(text: str) -> str:
    return quote(text.strip(), safe="")
