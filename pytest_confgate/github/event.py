"""The GitHub Actions event (``GITHUB_EVENT_PATH``): read once, with a size cap, never trusted.

The event file is written by the runner, not by the change, so it is where a pull request's
number, head and base commits and author come from. Its text fields (title, body) are the
author's words: data to show or to judge, never instructions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import GitHubError

ENV_EVENT_PATH = "GITHUB_EVENT_PATH"
MAX_EVENT_BYTES = 32 * 1024 * 1024
"""GitHub caps webhook payloads at 25 MB; a larger file is not an event."""


PULL_REQUEST_EVENTS = frozenset(
    {
        "pull_request",
        "pull_request_target",
        "pull_request_review",
        "pull_request_review_comment",
    }
)
"""Events whose payload carries ``pull_request``: on each of them a change is under review."""


@dataclass(frozen=True)
class PullRequest:
    """The fields of ``pull_request`` the gate relies on."""

    number: int
    head_sha: str
    author: str
    title: str = ""
    body: str = ""
    base_sha: str = ""
    """``pull_request.base.sha``: the base branch's commit the runner compares against."""
    base_ref: str = ""
    """``pull_request.base.ref``: the base branch's name (``main``)."""


def load_event(environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The event payload, or None when ``GITHUB_EVENT_PATH`` is not set.

    Raises ``GitHubError`` naming the file when it cannot be read, is too large or is not a
    JSON object.
    """
    path = environ.get(ENV_EVENT_PATH, "").strip()
    if not path:
        return None
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_EVENT_BYTES + 1)
    except OSError as exc:
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: cannot be read ({exc})") from exc
    if len(raw) > MAX_EVENT_BYTES:
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: larger than {MAX_EVENT_BYTES} bytes")
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: cannot be read ({exc})") from exc
    if not isinstance(event, dict):
        raise GitHubError(f"{ENV_EVENT_PATH} {path}: not a JSON object")
    return event


def pull_request_number(environ: Mapping[str, str]) -> tuple[int | None, str]:
    """The PR number from the event file (``GITHUB_EVENT_PATH``), or None and why not."""
    if not environ.get(ENV_EVENT_PATH, "").strip():
        return None, f"{ENV_EVENT_PATH} is not set (not running in GitHub Actions)"
    try:
        event = load_event(environ) or {}
    except GitHubError as exc:
        return None, str(exc)
    pull = event.get("pull_request")
    number = pull.get("number") if isinstance(pull, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        return None, "the event is not a pull_request event"
    return number, ""


def pull_request(environ: Mapping[str, str]) -> PullRequest | None:
    """The pull request of the event; None when there is no event or it is another kind.

    Raises ``GitHubError`` when the file is unreadable or its ``pull_request`` is malformed.
    """
    event = load_event(environ)
    pull = event.get("pull_request") if event is not None else None
    if not isinstance(pull, dict):
        return None
    where = f"{ENV_EVENT_PATH} {environ.get(ENV_EVENT_PATH, '').strip()}"
    try:
        number = pull["number"]
        sha = pull["head"]["sha"]
        author = pull["user"]["login"]
    except (KeyError, TypeError) as exc:
        raise GitHubError(f"{where}: pull_request lacks {exc}") from exc
    valid_number = isinstance(number, int) and not isinstance(number, bool) and number > 0
    if not valid_number or not isinstance(sha, str) or not isinstance(author, str):
        raise GitHubError(f"{where}: pull_request fields have the wrong type")
    return PullRequest(
        number=number,
        head_sha=sha,
        author=author,
        title=_text(pull.get("title")),
        body=_text(pull.get("body")),
        base_sha=_base_sha(pull),
        base_ref=_base_ref(pull),
    )


def _base_ref(pull: Mapping[str, Any]) -> str:
    base = pull.get("base")
    ref = base.get("ref") if isinstance(base, dict) else None
    return ref if isinstance(ref, str) and 0 < len(ref) <= 255 else ""


def is_pull_request_run(environ: Mapping[str, str]) -> bool:
    """Whether this run reviews a pull request: the event's name, ``GITHUB_BASE_REF``, or an
    event file that carries ``pull_request`` (a review event has one too).

    An event file that is named but cannot be read counts as one: what it would allow (a
    sign-off from the environment, a configuration from addopts) is the unsafe side.
    """
    name = environ.get("GITHUB_EVENT_NAME", "").strip()
    if name in PULL_REQUEST_EVENTS or environ.get("GITHUB_BASE_REF", "").strip():
        return True
    try:
        event = load_event(environ)
    except GitHubError:
        return True
    return event is not None and isinstance(event.get("pull_request"), dict)


def pull_request_base_sha(environ: Mapping[str, str]) -> str | None:
    """``pull_request.base.sha`` of the event, or None when there is none to read.

    Lenient on purpose: the base is looked for before anything else, and an event without it
    falls back to ``GITHUB_BASE_REF``; a file that cannot be read is that case too.
    """
    try:
        event = load_event(environ)
    except GitHubError:
        return None
    pull = event.get("pull_request") if event is not None else None
    return (_base_sha(pull) or None) if isinstance(pull, dict) else None


def _base_sha(pull: Mapping[str, Any]) -> str:
    base = pull.get("base")
    sha = base.get("sha") if isinstance(base, dict) else None
    if isinstance(sha, str) and len(sha) in (40, 64) and all(c in _HEX for c in sha):
        return sha.lower()
    return ""


_HEX = frozenset("0123456789abcdefABCDEF")


def _text(value: object) -> str:
    """A text field as a string that any writer can encode (JSON can carry lone surrogates)."""
    if not isinstance(value, str):
        return ""
    return value.encode("utf-8", "replace").decode("utf-8")
