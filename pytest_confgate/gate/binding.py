"""Whether a saved report is this run's verdict on this commit (issue 14): the publish step asks.

A report can outlive its run: the change can commit a passing ``confgate-report.json`` and then
break the run so that nothing new is written, or an artifact can come from another commit.
``confgate github publish`` therefore publishes a report only when its ``provenance`` says it
was written by this workflow run (``GITHUB_RUN_ID``; an earlier attempt of the same run counts)
for the commit under review (the event's ``pull_request.head.sha``, else ``GITHUB_SHA``).

This defends against stale and committed reports, not against a run that forges its own
report: the change's code runs in the process that writes it (SECURITY.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_confgate.exceptions import GitHubError
from pytest_confgate.github.event import is_pull_request_run, pull_request
from pytest_confgate.models import GateReport

_SAFE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
_CHECKOUT_HEAD = (
    "; the gate ran on the test-merge commit actions/checkout picks by default: check out "
    "the pull request's head instead (actions/checkout `with: ref: "
    "${{ github.event.pull_request.head.sha }}`)"
)


@dataclass(frozen=True)
class Expected:
    """The commit a report must be for, what it is called, and this run's id."""

    head: str | None
    what: str
    run: str | None
    attempt: int


def expected(environ: Mapping[str, str]) -> Expected:
    """What the environment says this run judges. Raises ``GitHubError`` when a pull
    request's event file cannot name its head (a head we cannot check is a mismatch)."""
    run = environ.get("GITHUB_RUN_ID", "").strip() or None
    attempt_text = environ.get("GITHUB_RUN_ATTEMPT", "").strip()
    attempt = int(attempt_text) if attempt_text.isdigit() else 1
    if is_pull_request_run(environ):
        pull = pull_request(environ)
        if pull is None:
            raise GitHubError("the pull request's event file names no pull request")
        return Expected(pull.head_sha, "the pull request's head", run, attempt)
    sha = environ.get("GITHUB_SHA", "").strip() or None
    return Expected(sha, "GITHUB_SHA", run, attempt)


def binding_problem(report: GateReport, want: Expected, github_sha: str = "") -> str | None:
    """Why ``report`` is not this run's verdict on ``want.head``, or None when it is."""
    found = report.provenance
    if found is None:
        return "the report carries no provenance, so nothing ties it to this run"
    if want.run is not None:
        run, _, attempt = found.run_id.rpartition("-")
        if run != want.run or not attempt.isdigit() or int(attempt) > want.attempt:
            return (
                f"the report was written by run {shown(found.run_id)}, not by this workflow "
                f"run ({want.run}-{want.attempt}): it is from before this run"
            )
    if want.head is not None and found.head_sha != want.head:
        hint = _CHECKOUT_HEAD if github_sha and found.head_sha == github_sha else ""
        judged = shown(found.head_sha) if found.head_sha else "no commit"
        return f"the report judged {judged}, not {want.what} {want.head}{hint}"
    return None


def shown(value: str | None) -> str:
    """A value from the untrusted report, shown only when it looks like an id."""
    if value and _SAFE.match(value):
        return value
    return "(a value that is not an id)"
