"""``confgate github publish``: hand a saved gate report to GitHub Actions (SPEC 10).

The Action's last step. It first re-counts sign-offs from the pull request's reviews when the
tier needs them (``gate.recount``), rewrites the report so the ``report`` output tells the final
verdict, then writes the summary, outputs, annotations and sticky comment
(``github.publish``). The exit status is the gate's: 0 on pass, 1 otherwise, 2 when the report
cannot be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from pytest_confgate.exit_codes import ExitCode

ANNOTATIONS_CAP = 10  # github.publish.ANNOTATIONS_CAP, kept lazy so --help stays fast


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""
    github = commands.add_parser(
        "github", help="GitHub Actions: publish a report (summary, outputs, PR comment)"
    ).add_subparsers(title="github commands", metavar="COMMAND")
    publish_command = github.add_parser(
        "publish",
        help="job summary, step outputs, annotations and the sticky PR comment from a report "
        "(exit 0 pass, 1 fail or needs sign-off, 2 bad report)",
    )
    publish_command.add_argument(
        "report", metavar="REPORT.json", help="a report `pytest --confgate` wrote"
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
    publish_command.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> int:
    return publish(
        args.report,
        environ=os.environ,
        comment=args.comment,
        annotations_cap=max(args.annotations_cap, 0),
        out=sys.stdout,
        err=sys.stderr,
    )


def publish(
    report_path: str,
    *,
    environ: Mapping[str, str],
    comment: bool = True,
    annotations_cap: int = ANNOTATIONS_CAP,
    out: TextIO,
    err: TextIO,
) -> int:
    """Summary, outputs, annotations and the sticky comment; returns the exit status."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.gate.recount import recount_from_reviews
    from pytest_confgate.github.publish import (
        COMMENT_LIMIT,
        annotation_commands,
        log_line,
        post_sticky_comment,
        step_outputs,
        write_outputs,
        write_summary,
    )
    from pytest_confgate.models import Decision
    from pytest_confgate.report.json_report import write_json_report
    from pytest_confgate.report.markdown import render_markdown
    from pytest_confgate.report.writers import load_report

    try:
        report = load_report(Path(report_path))
    except ReportError as exc:
        print(log_line(f"github publish: {exc}"), file=err)
        return ExitCode.USAGE_ERROR
    recounted, notes = recount_from_reviews(report, environ)
    for note in notes:
        print(log_line(note), file=err)
    if recounted is not report:  # the `report` output must tell the final verdict
        report = recounted
        write_json_report(report, Path(report_path))
    annotations = annotation_commands(report, annotations_cap)
    for command in annotations.commands:
        print(command, file=out)
    summary = render_markdown(report)
    if annotations.omitted:
        summary += f"\n{annotations.omitted} more findings: see the SARIF / report.\n"
    write_summary(environ, summary, err)
    if environ.get("GITHUB_OUTPUT"):
        write_outputs(Path(environ["GITHUB_OUTPUT"]), step_outputs(report, report_path))
    else:
        print(log_line("GITHUB_OUTPUT is not set: no step outputs written"), file=err)
    if comment:
        body = render_markdown(report, limit_bytes=COMMENT_LIMIT)
        for note in post_sticky_comment(body, environ):
            print(log_line(note), file=err)
    print(log_line(f"decision {report.decision.value}"), file=out)
    return ExitCode.OK if report.decision is Decision.PASS else ExitCode.GATE_FAILED
