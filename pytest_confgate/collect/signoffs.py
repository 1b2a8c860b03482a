"""Human sign-offs (SPEC 6): GitHub pull-request reviews, or ``CONFGATE_SIGNOFFS`` elsewhere.

``collect_signoffs`` chooses: on a GitHub pull-request event with a token, the reviews
(``github.reviews``) are the
only source (``CONFGATE_SIGNOFFS`` is set by the workflow, which the change itself could edit,
so it is not trusted there); otherwise the environment. Entries that do not count are kept,
with the reason, for the report. Nothing here raises: a failure approves no one (fail closed).

Environment path: only logins count; each entry must look like a login, be listed in
``policy.signoff.approvers`` when that list is set, and not be the change's author
(``CONFGATE_AUTHOR``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_confgate.exceptions import ConfgateError
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import ENV_EVENT_PATH, pull_request
from pytest_confgate.github.reviews import ENV_SIGNOFFS, signoffs_from_github
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
        elif allowed and key not in allowed:
            ignored.append({"login": login, "reason": "not in policy.signoff.approvers"})
        else:
            approved.append(login)
    source = ENV_SIGNOFFS if environ.get(ENV_SIGNOFFS, "").strip() else None
    return Signoffs(approved_by=approved, ignored=ignored, source=source)


def collect_signoffs(environ: Mapping[str, str], approvers: list[str]) -> Signoffs:
    """Sign-offs from GitHub reviews on a pull-request event with a token, else the environment."""
    if not environ.get(ENV_EVENT_PATH, "").strip():
        return signoffs_from_env(environ, approvers)
    try:
        client = GitHubClient.from_env(environ)
        pull = pull_request(environ) if client is not None else None
    except ConfgateError as exc:
        return Signoffs(source=f"GitHub reviews could not be read: {exc}")
    if client is None or pull is None:
        return signoffs_from_env(environ, approvers)
    return signoffs_from_github(client, environ, approvers)
