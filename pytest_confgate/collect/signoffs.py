"""Human sign-offs: GitHub pull-request reviews, or ``CONFGATE_SIGNOFFS`` elsewhere.

``collect_signoffs`` chooses: on every pull-request event (``pull_request``,
``pull_request_target``, ``pull_request_review``, ...) the reviews (``github.reviews``) are the
only source, read when there is a token and otherwise not at all: ``CONFGATE_SIGNOFFS`` is set
by the workflow or an earlier step, which the change itself could edit, so it is never trusted
there (issue 14). Elsewhere, the environment. Entries that do not count are kept, with the
reason, for the report. Nothing here raises: a failure approves no one (fail closed).

Environment path: only logins count; each entry must look like a login, be listed in
``policy.signoff.approvers`` when that list is set, not be the change's author
(``CONFGATE_AUTHOR``), and not be a ``[bot]`` unless listed by that exact login.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_confgate.exceptions import ConfgateError
from pytest_confgate.github.event import is_pull_request_run, pull_request
from pytest_confgate.github.reviews import (
    BOT_REASON,
    ENV_SIGNOFFS,
    ignored_env_signoffs,
    is_bot,
    signoffs_from_github,
)
from pytest_confgate.models import Signoffs

ENV_AUTHOR = "CONFGATE_AUTHOR"
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
        elif is_bot(login) and key not in allowed:
            ignored.append({"login": login, "reason": BOT_REASON})
        elif allowed and key not in allowed:
            ignored.append({"login": login, "reason": "not in policy.signoff.approvers"})
        else:
            approved.append(login)
    source = ENV_SIGNOFFS if environ.get(ENV_SIGNOFFS, "").strip() else None
    return Signoffs(approved_by=approved, ignored=ignored, source=source)


def collect_signoffs(environ: Mapping[str, str], approvers: list[str]) -> Signoffs:
    """Reviews on any pull-request event (none without a token); elsewhere the environment."""
    if not is_pull_request_run(environ):
        return signoffs_from_env(environ, approvers)
    env_ignored = ignored_env_signoffs(
        environ, f"{ENV_SIGNOFFS} is ignored on a pull request: only reviews count there"
    )
    from pytest_confgate.github.api import GitHubClient  # HTTP, on pull-request runs only

    try:
        client = GitHubClient.from_env(environ)
        pull = pull_request(environ)
    except ConfgateError as exc:
        return Signoffs(ignored=env_ignored, source=f"GitHub reviews could not be read: {exc}")
    if client is None:
        source = (
            "GitHub reviews: no token in this step, so none were read (the Action reads them "
            "in its publish step)"
        )
        return Signoffs(ignored=env_ignored, source=source)
    if pull is None:
        source = "GitHub reviews: the event file names no pull request, so none were read"
        return Signoffs(ignored=env_ignored, source=source)
    return signoffs_from_github(client, environ, approvers)
