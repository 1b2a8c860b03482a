"""What ``confgate github publish`` writes to GitHub Actions from a finished report.

The job summary, the step outputs, annotations (``github.annotations``: tamper findings, lint and
security findings on the changed lines, uncovered changed lines)
and one sticky PR comment. Everything printed is a workflow command built here, with
GitHub's escaping, or a line prefixed ``confgate:`` whose text is escaped: text from the report
(findings, PR text, paths) can never start a command such as ``::set-output``. Deciding what to
publish (re-counting sign-offs, the exit status) is the command's job, in ``cli.github``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from pytest_confgate.exceptions import GitHubError
from pytest_confgate.github.annotations import (
    ANNOTATIONS_CAP,
    Annotations,
    annotation_commands,
    escape_data,
    escape_property,
)
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import pull_request_number
from pytest_confgate.models import GateReport
from pytest_confgate.report.markdown import COMMENT_LIMIT, MARKER

__all__ = [
    "ANNOTATIONS_CAP",
    "COMMENT_LIMIT",
    "Annotations",
    "annotation_commands",
    "escape_data",
    "escape_property",
    "log_line",
    "post_sticky_comment",
    "render_artifacts",
    "step_outputs",
    "write_outputs",
    "write_runner_files",
    "write_summary",
]

_ERROR_SEVERITIES = frozenset({"high", "critical", "error"})
_MEMBERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def log_line(text: object) -> str:
    """A line of our own prose for the log: prefixed and escaped, so it is never a command."""
    return f"confgate: {escape_data(text)}"


def step_outputs(report: GateReport, report_path: str) -> dict[str, str]:
    """The Action's outputs; ``escalated`` is false until reports carry an escalation."""
    confidence = report.confidence
    return {
        "decision": report.decision.value,
        "confidence": repr(confidence.score) if confidence is not None else "",
        "auto_advance": "true" if report.auto_advance else "false",
        "escalated": "false",
        "report": report_path,
    }


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append ``name<<DELIM`` blocks; each delimiter is random and absent from its value.

    A fixed or guessable delimiter would let a value (a path, a message) end its block early
    and set outputs of its own; a name is checked before anything is written, since a
    newline, ``=`` or ``<<`` in it would do the same.
    """
    for name in outputs:
        if not _OUTPUT_NAME.fullmatch(name):
            raise GitHubError(
                f"step output name {name!r} is not a name GitHub reads (letters, digits, _ "
                "and -, starting with a letter or _): a newline, '=' or '<<' in it would set "
                "other outputs; nothing was written to GITHUB_OUTPUT"
            )
    blocks: list[str] = []
    for name, value in outputs.items():
        delimiter = _delimiter()
        while delimiter in value or delimiter in name:  # refuse, pick another
            delimiter = _delimiter()
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    _append("GITHUB_OUTPUT", path, "".join(blocks))


_OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _delimiter() -> str:
    return f"ghadelimiter_{secrets.token_hex(16)}"


def write_summary(environ: Mapping[str, str], text: str, err: TextIO) -> None:
    """Append ``text`` to the job summary (``GITHUB_STEP_SUMMARY``), or say why not."""
    name = "GITHUB_STEP_SUMMARY"
    target = environ.get(name)
    if not target:
        print(log_line(f"{name} is not set: no job summary written"), file=err)
        return
    _append(name, Path(target), text)


def _append(variable: str, path: Path, text: str) -> None:
    """Append to a file the runner named in ``variable``; a ``GitHubError`` naming both when
    it cannot be written (a folder, a missing folder, a full disk)."""
    try:
        with path.open("a", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except OSError as exc:
        raise GitHubError(
            f"{variable}={path} cannot be written ({exc.strerror or exc}); point it at a "
            "writable file (the runner sets it: a step that overrides it breaks it)"
        ) from exc


def write_runner_files(
    environ: Mapping[str, str], summary: str, outputs: Mapping[str, str], err: TextIO
) -> bool:
    """The job summary and the step outputs, each tried; False when the runner's file for
    one could not be written (said in one line: the step then exits 2, never a traceback)."""
    written = True
    try:
        write_summary(environ, summary, err)
    except GitHubError as exc:
        print(log_line(f"ERROR: {exc}"), file=err)
        written = False
    if not environ.get("GITHUB_OUTPUT"):
        print(log_line("GITHUB_OUTPUT is not set: no step outputs written"), file=err)
        return written
    try:
        write_outputs(Path(environ["GITHUB_OUTPUT"]), outputs)
    except GitHubError as exc:
        print(log_line(f"ERROR: {exc}"), file=err)
        written = False
    return written


ARTIFACTS = {"confgate.sarif": "sarif", "confgate-report.html": "html"}
"""The files the Action keeps beside the JSON report, with their formats."""


def render_artifacts(
    report: GateReport,
    folder: Path,
    against: tuple[GateReport | None, str] | None = None,
    diff_link: Callable[[str, int], str] | None = None,
) -> list[str]:
    """SARIF and HTML rendered again from the report publish decided, beside the JSON, so the
    page the comment links to never tells another verdict; returns notes for the log (a file
    that cannot be written is said, never fatal: the verdict is in the outputs). ``against``:
    the base's report, compared in the HTML page; ``diff_link``: the pull request's diff,
    linked from the page's file names."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.compare import with_comparison
    from pytest_confgate.report.html import render_html
    from pytest_confgate.report.writers import render, write_text_atomic

    notes = []
    for name, fmt in ARTIFACTS.items():
        try:
            if fmt == "html":
                text = render_html(report, diff_link=diff_link)
            else:
                text = render(report, fmt)
            if fmt == "html" and against is not None and against[0] is not None:
                text = with_comparison(text, fmt, report, against[0], against[1])
            write_text_atomic(text, folder / name)
        except (ReportError, OSError) as exc:
            notes.append(f"{name} not rendered again from the published verdict: {exc}")
    return notes


def post_sticky_comment(
    body: str, environ: Mapping[str, str], marker: str = MARKER
) -> list[str]:
    """Create or update the one PR comment that starts with ``marker``; returns notes to log.

    Never fails the step: without a token, outside a pull request, or when GitHub refuses,
    the notes say why and the gate's decision stands.
    """
    number, why = pull_request_number(environ)
    repository = environ.get("GITHUB_REPOSITORY", "").strip()
    if number is None:
        return [f"no PR comment: {why}"]
    if repository.count("/") != 1:
        return ["no PR comment: GITHUB_REPOSITORY is not set to OWNER/REPO"]
    try:
        client = GitHubClient.from_env(environ)
        if client is None:
            return ["no PR comment: no token (set the github-token input or GITHUB_TOKEN)"]
        path = f"repos/{repository}/issues/{number}/comments"
        existing = _marked_comment(client.paginate(path), marker)
        if existing is None:
            client.post(path, {"body": body})
            return [f"PR comment created on #{number}"]
        client.patch(f"repos/{repository}/issues/comments/{existing}", {"body": body})
        return [f"PR comment updated on #{number}"]
    except GitHubError as exc:
        return [f"no PR comment: {exc}"]


def _marked_comment(comments: Iterable[Any], marker: str = MARKER) -> int | None:
    """Our comment: it starts with the marker and was written by a bot or a repo member.

    Anyone can paste the marker into a comment; editing a stranger's comment would rewrite
    their words (or fail with 403), so only the Actions token's bot, or a maintainer whose
    personal token posts the comment, counts. A bot's comment wins; then the oldest.
    """
    marked: list[tuple[int, int]] = []
    for item in comments:
        if not isinstance(item, dict):
            continue
        body, ident, user = item.get("body"), item.get("id"), item.get("user")
        if not (isinstance(body, str) and body.startswith(marker) and isinstance(ident, int)):
            continue
        if isinstance(user, dict) and user.get("type") == "Bot":
            marked.append((0, ident))
        elif item.get("author_association") in _MEMBERS:
            marked.append((1, ident))
    return min(marked)[1] if marked else None


_SERVER = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]+)?")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def artifacts_url(environ: Mapping[str, str]) -> str | None:
    """The run's page at its artifacts, where the gate job keeps the HTML report and SARIF;
    None unless every part is what GitHub sets (the URL goes into a Markdown link)."""
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").strip().rstrip("/")
    repository = environ.get("GITHUB_REPOSITORY", "").strip()
    run = environ.get("GITHUB_RUN_ID", "").strip()
    if not (_SERVER.fullmatch(server) and _REPOSITORY.fullmatch(repository) and run.isdigit()):
        return None
    return f"{server}/{repository}/actions/runs/{run}#artifacts"


def diff_links(environ: Mapping[str, str]) -> Callable[[str, int], str] | None:
    """Links into the pull request's "Files changed" page at a file (and its line on the
    head side), as GitHub anchors them: ``#diff-<sha256 of the path>R<line>``; None outside
    a pull request or when any part is not what GitHub sets."""
    import hashlib

    from pytest_confgate.exceptions import GitHubError

    server = environ.get("GITHUB_SERVER_URL", "https://github.com").strip().rstrip("/")
    repository = environ.get("GITHUB_REPOSITORY", "").strip()
    try:
        number, _ = pull_request_number(environ)
    except GitHubError:
        return None
    if number is None or not (_SERVER.fullmatch(server) and _REPOSITORY.fullmatch(repository)):
        return None
    page = f"{server}/{repository}/pull/{number}/files"

    def link(file: str, line: int) -> str:
        anchor = hashlib.sha256(file.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{page}#diff-{anchor}" + (f"R{line}" if line > 0 else "")

    return link
