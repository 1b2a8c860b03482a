"""``confgate github publish``: hand a saved gate report to GitHub Actions.

The Action's last step, best run in a job of its own. It first checks that the report is this
run's verdict on the commit under review (``gate.binding``): a missing, unreadable, stale or
foreign report is never published; the step fails closed with ``decision=fail`` and says "the
gate produced no report for <sha>". Then it decides again (``gate.recount``): a report whose
verdict does not follow from its own evidence was altered after the gate decided and is refused
(``decision=fail``, "the report was altered"); the tier, the approvers and the policy come from
the base, the sign-offs from the pull request's reviews, and a gate job that did not succeed
(``--gate-result``, ``CONFGATE_GATE_RESULT``: the workflow's ``needs.gate.result``) never
publishes ``pass``. It rewrites the report so the ``report`` output tells the final verdict,
and writes the summary, outputs, annotations and sticky comment (``github.publish``). The exit
status is the verdict's: 0 on pass, 1 otherwise, 2 when the report cannot be read or the
runner's summary or output file cannot be written (one line says which; the decision is still
printed).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_confgate.exit_codes import ExitCode

if TYPE_CHECKING:
    from pytest_confgate.github.run_report import RunSummary
    from pytest_confgate.models import GateReport

ANNOTATIONS_CAP = 10  # github.publish.ANNOTATIONS_CAP, kept lazy so --help stays fast
ENV_GATE_RESULT = "CONFGATE_GATE_RESULT"
MAX_REPORT_BYTES = 64 * 1024 * 1024  # every byte of the report is untrusted: cap what is read


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""
    github = commands.add_parser(
        "github", help="GitHub Actions: publish a report (summary, outputs, PR comment)"
    ).add_subparsers(title="github commands", metavar="COMMAND")
    publish_command = github.add_parser(
        "publish",
        help="job summary, step outputs, annotations and the sticky PR comment from a report "
        "(exit 0 pass, 1 fail or needs sign-off, 2 bad report or unwritable runner file)",
    )
    publish_command.add_argument(
        "report",
        metavar="REPORT.json",
        help="a report `pytest --confgate` wrote, or `confgate run --report` (its last gate "
        "report is published, and `escalated` says whether it waits for a human)",
    )
    publish_command.add_argument(
        "--comment",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="post or update the sticky PR comment (needs a token and a pull_request event)",
    )
    publish_command.add_argument(
        "--annotations-cap",
        type=int,
        default=ANNOTATIONS_CAP,
        metavar="N",
        help="annotations per level; GitHub shows 10 per step, the rest go to the summary",
    )
    publish_command.add_argument(
        "--gate-result",
        metavar="RESULT",
        default=None,
        help="the gate job's result (the workflow's `needs.gate.result`: success, failure, "
        f"cancelled, skipped; default ${ENV_GATE_RESULT}); anything but success never "
        "publishes pass",
    )
    publish_command.add_argument(
        "--supervised",
        action="store_true",
        help="publish pass only for a report `confgate gate` wrote (the Action's gate step): "
        "any other report's test outcomes are the test process's own word",
    )
    publish_command.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> int:
    return publish(
        args.report,
        environ=os.environ,
        comment=args.comment,
        annotations_cap=max(args.annotations_cap, 0),
        gate_result=args.gate_result,
        supervised=args.supervised,
        out=sys.stdout,
        err=sys.stderr,
    )


def publish(
    report_path: str,
    *,
    environ: Mapping[str, str],
    comment: bool = True,
    annotations_cap: int = ANNOTATIONS_CAP,
    gate_result: str | None = None,
    supervised: bool = False,
    out: TextIO,
    err: TextIO,
) -> int:
    """Summary, outputs, annotations and the sticky comment; returns the exit status.

    ``gate_result``: the gate job's result; None reads ``CONFGATE_GATE_RESULT``."""
    from pytest_confgate.exceptions import GitHubError, ReportError
    from pytest_confgate.gate.binding import binding_problem, expected
    from pytest_confgate.gate.recount import republish
    from pytest_confgate.github.publish import (
        annotation_commands,
        artifacts_url,
        diff_links,
        log_line,
        post_sticky_comment,
        render_artifacts,
        write_runner_files,
    )
    from pytest_confgate.github.run_report import load_run_report, with_run
    from pytest_confgate.models import Decision
    from pytest_confgate.report.json_report import write_json_report
    from pytest_confgate.report.markdown import render_comment, render_markdown

    unpublished = _Unpublished(report_path, environ, comment, out, err)
    try:
        want = expected(environ)
    except GitHubError as exc:
        return unpublished.fail(None, f"the commit under review cannot be told: {exc}")
    try:
        run = load_run_report(Path(report_path), Path.cwd(), MAX_REPORT_BYTES)
        report_file = run.gate_report if run else Path(report_path)
        report = _load(report_file)
    except ReportError as exc:
        print(log_line(f"github publish: {exc}"), file=err)
        unpublished.fail(want.head, str(exc))
        return ExitCode.USAGE_ERROR
    problem = binding_problem(report, want, environ.get("GITHUB_SHA", "").strip())
    if problem is not None:
        return unpublished.fail(want.head, problem)
    if gate_result is None:
        gate_result = environ.get(ENV_GATE_RESULT)
    done = republish(report, environ, gate_result, supervised=supervised)
    for note in done.notes:
        print(log_line(note), file=err)
    if done.tampered:
        _write_refused(report, done.tampered, report_file, err)
        return unpublished.refuse(want.head, done.tampered)
    recounted = done.report
    if recounted is not report:  # the `report` output must tell the final verdict
        report = recounted
        write_json_report(report, report_file)
    against = _base_comparison(environ)
    if against is not None:
        print(log_line(against[1]), file=err)
    files = diff_links(environ)
    for note in render_artifacts(report, report_file.parent, against, files):  # one verdict
        print(log_line(note), file=err)
    annotations = annotation_commands(report, annotations_cap)
    for command in annotations.commands:
        print(command, file=out)
    link = artifacts_url(environ)
    summary = with_run(run, render_markdown(report, report_link=link, artifacts=link,
                                            against=against, diff_link=files))
    if annotations.omitted:
        summary += f"\n{annotations.omitted} more findings: see the SARIF / report.\n"
    written = write_runner_files(environ, summary, _outputs(report, report_path, run), err)
    if comment:
        body = with_run(run, render_comment(report, against=against, link=link,
                                            diff_link=files))
        for note in post_sticky_comment(body, environ):
            print(log_line(note), file=err)
    print(log_line(f"decision {report.decision.value}"), file=out)
    held = run is not None and not run.advanced
    if run is not None and held:
        state = "escalated to a human" if run.escalated else "did not advance"
        print(log_line(f"the run {state}"), file=out)
    if not written:
        return ExitCode.USAGE_ERROR
    if held:
        return ExitCode.GATE_FAILED
    return ExitCode.OK if report.decision is Decision.PASS else ExitCode.GATE_FAILED


def _base_comparison(environ: Mapping[str, str]) -> tuple[GateReport | None, str] | None:
    """The base branch's latest report and where it came from (or why there is none); None
    outside a pull request or without a token: then nothing is said of the base."""
    from pytest_confgate.exceptions import GitHubError
    from pytest_confgate.github.api import GitHubClient
    from pytest_confgate.github.base_report import find_base_report
    from pytest_confgate.github.event import pull_request

    repo = environ.get("GITHUB_REPOSITORY", "").strip()
    client = GitHubClient.from_env(environ)
    try:
        pull = pull_request(environ)
    except GitHubError:
        return None
    if client is None or pull is None or repo.count("/") != 1:
        return None
    branch = pull.base_ref or environ.get("GITHUB_BASE_REF", "").strip()
    found = find_base_report(client, repo, branch, pull.base_sha)
    return found.report, found.where


def _outputs(report: GateReport, report_path: str, run: RunSummary | None) -> dict[str, str]:
    """The gate report's outputs; a run adds whether it escalated and whether it advanced."""
    from pytest_confgate.github.publish import step_outputs

    outputs = step_outputs(report, report_path)
    if run is not None:
        outputs["escalated"] = "true" if run.escalated else "false"
        outputs["confidence"] = run.confidence or outputs["confidence"]
        if not run.advanced:
            outputs["auto_advance"] = "false"
    return outputs


def _write_refused(report: GateReport, problems: list[str], path: Path, err: TextIO) -> None:
    """The report file as the ``report`` output shows it: a ``fail`` that says why."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.github.publish import log_line
    from pytest_confgate.models import Condition, Decision
    from pytest_confgate.report.json_report import write_json_report

    message = f"report: altered after the gate decided: {'; '.join(problems[:5])}"
    refused = report.model_copy(update={
        "decision": Decision.FAIL, "auto_advance": False, "reasons": [message],
        "conditions": [Condition(metric="report", name="altered", passed=False,
                                 message=message), *report.conditions],
    })
    try:
        write_json_report(refused, path)
    except ReportError as exc:
        print(log_line(f"the refused report was not rewritten: {exc}"), file=err)


def _load(path: Path) -> GateReport:
    """The report, refused unread when it is larger than any real report could be."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.writers import load_report

    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # load_report says what is wrong with the path
    if size > MAX_REPORT_BYTES:
        raise ReportError(f"{path}: larger than {MAX_REPORT_BYTES} bytes; not a gate report")
    return load_report(path)


class _Unpublished:
    """Fail closed without a report: ``decision=fail``, and the summary and sticky comment
    say "the gate produced no report for <sha>" and why."""

    def __init__(
        self, report_path: str, environ: Mapping[str, str], comment: bool, out: TextIO, err: TextIO
    ) -> None:
        self.report_path = report_path
        self.environ = environ
        self.comment = comment
        self.out = out
        self.err = err

    def fail(self, sha: str | None, why: str) -> int:
        headline = f"the gate produced no report for {sha or 'this run'}"
        return self._publish_fail(headline, why, (
            "Nothing from an earlier run or from the repository is published in its place; "
            "see the gate job's log for why it wrote no report."
        ))

    def refuse(self, sha: str | None, problems: list[str]) -> int:
        """The report does not follow from its own evidence: code that ran in the gate job
        rewrote it after the gate decided. Nothing of it is published but the refusal."""
        headline = f"the report for {sha or 'this run'} was altered after the gate decided"
        return self._publish_fail(headline, "; ".join(problems[:5]), (
            "Its verdict does not follow from its own evidence, so none of it is published. "
            "Code that ran in the gate job (a test, a conftest, a plugin) rewrote it: look for "
            "code in the change that writes confgate-report.json or registers an `atexit` hook."
        ))

    def _publish_fail(self, headline: str, why: str, then: str) -> int:
        from pytest_confgate.github.publish import (
            log_line,
            post_sticky_comment,
            write_runner_files,
        )
        from pytest_confgate.report.markdown import MARKER

        print(log_line(f"{headline}: {why}"), file=self.err)
        text = f"{MARKER}\n## confgate: FAIL\n\n**{headline}**: {_plain(why)}.\n\n{then}\n"
        outputs = {"decision": "fail", "confidence": "", "auto_advance": "false",
                   "escalated": "false", "report": self.report_path}
        written = write_runner_files(self.environ, text, outputs, self.err)
        if self.comment:
            for note in post_sticky_comment(text, self.environ):
                print(log_line(note), file=self.err)
        print(log_line("decision fail"), file=self.out)
        return ExitCode.GATE_FAILED if written else ExitCode.USAGE_ERROR


def _plain(text: str) -> str:
    """Text for Markdown: no HTML, no links, no mentions, on one line."""
    for char in "\\<>[]@`|*":  # the backslash first, or it would double the others' escapes
        text = text.replace(char, f"\\{char}")
    return " ".join(text.split())
