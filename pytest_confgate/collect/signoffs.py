"""Human sign-offs from the environment (``CONFGATE_SIGNOFFS``) for CI systems without reviews.

Only logins count: each entry must look like a login, be listed in
``policy.signoff.approvers`` when that list is set, and not be the change's author
(``CONFGATE_AUTHOR``). Entries that do not count are kept, with the reason, for the report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_confgate.models import Signoffs

ENV_SIGNOFFS = "CONFGATE_SIGNOFFS"
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
