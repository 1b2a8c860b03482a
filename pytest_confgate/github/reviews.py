"""Human sign-offs from a pull request's reviews, through GitHub's REST API.

Each reviewer's latest APPROVED / CHANGES_REQUESTED / DISMISSED review is their state
(COMMENTED and PENDING change nothing). It counts when it approves the head commit, by an
approver who is not the author, wrote none of the pull request's commits (author or
``Co-authored-by:``, issue 14) and is a person, not a ``[bot]`` account (unless that exact login
is listed). Every review that does not count is kept with the reason, for the report; an API
failure approves no one and says why (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.github.event import PullRequest, pull_request
from pytest_confgate.models import Signoffs

if TYPE_CHECKING:  # a client is passed in; the gate imports the HTTP stack only to make one
    from pytest_confgate.github.api import GitHubClient

ENV_SIGNOFFS = "CONFGATE_SIGNOFFS"
ENV_REPOSITORY = "GITHUB_REPOSITORY"
BOT_SUFFIX = "[bot]"
BOT_REASON = (
    "a bot account: only a bot listed by its exact login in policy.signoff.approvers can sign off"
)
_DECISIVE = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})
_CO_AUTHOR = re.compile(r"^[ \t]*co-authored-by:[ \t]*(.*?)[ \t]*<([^<>\n]*)>[ \t]*$", re.I | re.M)
_NOREPLY = re.compile(r"^(?:\d+\+)?([A-Za-z0-9-]+)@users\.noreply\.github\.com$", re.I)


def ignored_env_signoffs(environ: Mapping[str, str], why: str) -> list[dict[str, str]]:
    """Each login in ``CONFGATE_SIGNOFFS``, with ``why`` it does not count here."""
    logins = dict.fromkeys(e.strip() for e in environ.get(ENV_SIGNOFFS, "").split(","))
    return [{"login": login[:80], "reason": why} for login in logins if login]


def is_bot(login: str, user_type: object = None) -> bool:
    """A GitHub App or bot account: ``name[bot]``, or a user object typed ``Bot``."""
    return login.casefold().endswith(BOT_SUFFIX) or user_type == "Bot"


def signoffs_from_github(
    client: GitHubClient, environ: Mapping[str, str], approvers: list[str]
) -> Signoffs:
    """APPROVED reviews on the head commit by approvers other than the author.

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
    env_ignored = ignored_env_signoffs(
        environ, f"{ENV_SIGNOFFS} is ignored on a pull request: the reviews are the source"
    )
    try:
        reviews = client.paginate(f"/repos/{_path(repo)}/pulls/{pull.number}/reviews")
        authors = _Authors(client, f"/repos/{_path(repo)}/pulls/{pull.number}/commits")
        approved, ignored = _count(client, reviews, pull, approvers, authors)
    except GitHubError as exc:
        source = f"GitHub reviews of {where} could not be read: {exc}"
        return Signoffs(ignored=env_ignored, source=source)
    source = f"GitHub reviews of {where}"
    if env_ignored:
        source += f" ({ENV_SIGNOFFS} ignored: reviews are the source on a pull request)"
    return Signoffs(approved_by=approved, ignored=ignored + env_ignored, source=source)


class _Authors:
    """Who wrote the pull request's commits, asked once and only if an approval needs it.

    login (casefolded) -> why it is an author. A commit's author is GitHub's account for it
    (else its git name); co-authors come from ``Co-authored-by:`` trailers, by the login in a
    ``users.noreply.github.com`` address or by a name equal to a login: a false match only
    ever discounts an approval, the safe side.
    """

    def __init__(self, client: GitHubClient, path: str) -> None:
        self._client = client
        self._path = path
        self._found: dict[str, str] | None = None

    def why(self, login: str) -> str | None:
        if self._found is None:
            self._found = _commit_authors(self._client.paginate(self._path))
        return self._found.get(login.casefold())


def _commit_authors(commits: list[Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for commit in map(_mapping, commits):
        short = str(commit.get("sha") or "")[:7] or "unknown"
        git, user = _mapping(commit.get("commit")), commit.get("author")
        written = _mapping(git.get("author"))
        names = [user.get("login") if isinstance(user, dict) else written.get("name")]
        names.append(_noreply_login(written.get("email")))
        for name in names:
            if isinstance(name, str) and name:
                found.setdefault(name.casefold(), f"authored commit {short} of the pull request")
        message = git.get("message")
        for name, email in _CO_AUTHOR.findall(message if isinstance(message, str) else ""):
            for login in (name.strip(), _noreply_login(email)):
                if login:
                    why = f"co-authored commit {short} of the pull request"
                    found.setdefault(login.casefold(), why)
    return found


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _noreply_login(email: object) -> str | None:
    match = _NOREPLY.match(email.strip()) if isinstance(email, str) else None
    return match.group(1) if match else None


def _count(
    client: GitHubClient,
    reviews: list[Any],
    pull: PullRequest,
    approvers: list[str],
    authors: _Authors,
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
        reason = _why_not(client, review, login, pull, approvers) or authors.why(login)
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
    user = review.get("user")
    listed = any(a.strip().casefold() == login.casefold() for a in approvers)
    if is_bot(login, user.get("type") if isinstance(user, dict) else None) and not listed:
        return BOT_REASON
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
