"""The ``confgate`` command: parses arguments and calls the same core as the pytest plugin.

``main(argv)`` returns an exit code; only ``console_main`` exits (as coverage.py does).
The command groups (``gate``, ``github``, ``rank``, ``run``, ``trust``) live in sibling modules,
each adding its own subcommands; handlers import the core lazily so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_confgate.cli import gate, github, rank, run, trust
from pytest_confgate.cli.errors import usage_error
from pytest_confgate.exit_codes import ExitCode

REPORT_FORMATS = ("md", "html", "sarif", "json")  # report.writers.FORMATS, kept lazy


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``confgate`` subcommand and return its exit status."""
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if rank.asks_feedback_help(words):  # a word, not a subparser: argparse shows rank's help
        rank.feedback_parser().print_help()
        return ExitCode.OK
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return ExitCode.OK if not exc.code else ExitCode.USAGE_ERROR
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return ExitCode.USAGE_ERROR
    result: int = handler(args)
    return result


def console_main() -> None:  # pragma: no cover - the console-script shim
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `confgate trust report --json | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 141  # what a shell reports for SIGPIPE
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-confgate")
    except PackageNotFoundError:
        return "0+unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="confgate",
        description="Quality gate for changes: tests, coverage, lint and security -> pass/fail. "
        "Run the gate itself with `pytest --confgate`.",
    )
    parser.add_argument(
        "--version", action="version", version=f"confgate {_version()}",
        help="print the version of pytest-confgate and exit",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    validate = commands.add_parser(
        "validate",
        help="check a configuration file (exit 0 when valid, 2 with one line per problem)",
    )
    validate.add_argument(
        "path",
        nargs="?",
        help="the file to check (default: confgate.yml, confgate.yaml or [tool.confgate] in "
        "pyproject.toml in the current directory)",
    )
    validate.set_defaults(handler=_validate)
    schema = commands.add_parser(
        "schema", help="print the JSON Schema of the gate report",
        description="Print the JSON Schema (draft 2020-12) that every confgate-report.json "
        "follows, to validate a report or generate a client: confgate schema > schema.json",
    )
    schema.set_defaults(handler=_schema)
    report = commands.add_parser(
        "report", help="render a saved JSON gate report as Markdown, HTML, SARIF or JSON"
    )
    report.add_argument(
        "--format", required=True, choices=REPORT_FORMATS, dest="fmt",
        help="md: the PR comment publish posts (a local preview), html: one self-contained "
        "page, sarif: code scanning, json: the report again",
    )
    report.add_argument("report", metavar="REPORT.json", help="a report `pytest --confgate` wrote")
    report.add_argument("-o", "--output", help="write here (atomically) instead of stdout")
    report.add_argument(
        "--compare", metavar="BASE_REPORT.json",
        help="show each metric's change against a saved report of the base branch (md, html)",
    )
    report.set_defaults(handler=_report)
    merge = commands.add_parser(
        "merge",
        help="combine the JSON reports of CI shards and decide once (exit 0 pass, 1 fail or "
        "needs sign-off, 2 bad input)",
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD.json", help="one report per shard")
    merge.add_argument("-o", "--output", required=True, help="where to write the merged report")
    merge.add_argument("--expect", type=int, help="the number of shards the CI job started")
    merge.add_argument(
        "--coverage",
        nargs="+",
        action="extend",
        default=[],
        metavar="DATA",
        help="each shard's coverage.py data file (.coverage); coverage is re-measured from them",
    )
    merge.add_argument("--config", help="the confgate configuration (default: found in cwd)")
    merge.set_defaults(handler=_merge)
    for group in (gate, github, rank, run, trust):
        group.add_commands(commands)
    return parser


def _validate(args: argparse.Namespace) -> int:
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.exceptions import ConfigError

    try:
        loaded = load_config(Path.cwd(), args.path)
    except ConfigError as exc:
        return usage_error("confgate validate", exc)
    gate = loaded.config.gate
    metrics = ", ".join(m.type for m in gate.metrics)
    if loaded.path is None:
        print(
            f"no configuration file in {Path.cwd()}; the defaults apply: "
            f"{gate.risk_tier} gate over {metrics}"
        )
    else:
        print(f"{args.path or loaded.path.name}: valid ({gate.risk_tier} gate over {metrics})")
    if loaded.passed_over:
        print(f"note: also found, not read: {', '.join(loaded.passed_over)}")
    return ExitCode.OK


def _schema(_: argparse.Namespace) -> int:
    from pytest_confgate.report.json_report import report_schema

    print(json.dumps(report_schema(), indent=2))
    return ExitCode.OK


def _report(args: argparse.Namespace) -> int:
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.writers import load_report, render, write_text_atomic

    try:
        report = load_report(Path(args.report))
        if args.compare and args.fmt == "md":  # the comment's own comparison, in its place
            from pytest_confgate.report.compare import base_name_of
            from pytest_confgate.report.markdown import render_comment

            base = load_report(Path(args.compare))
            text = render_comment(report, against=(base, base_name_of(base, args.compare)))
        elif args.compare:
            from pytest_confgate.report.compare import with_comparison

            base = load_report(Path(args.compare))
            text = with_comparison(render(report, args.fmt), args.fmt, report, base,
                                   args.compare)
        else:
            text = render(report, args.fmt)
        _note_dropped_results(text, args.fmt)
        if args.output:
            write_text_atomic(text, Path(args.output))
        else:
            sys.stdout.write(text)
    except ReportError as exc:
        print(f"confgate report: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.OK


def _note_dropped_results(text: str, fmt: str) -> None:
    from pytest_confgate.report.sarif import dropped_note

    note = dropped_note(text) if fmt == "sarif" else None
    if note is not None:
        print(f"confgate report: {note}", file=sys.stderr)


def _merge(args: argparse.Namespace) -> int:
    from pytest_confgate.exceptions import ConfgateError
    from pytest_confgate.gate.merge import run_merge
    from pytest_confgate.models import Decision
    from pytest_confgate.report.terminal import summary_lines

    try:
        report, path, notes = run_merge(
            args.shards,
            output=args.output,
            root=Path.cwd(),
            environ=os.environ,
            expect=args.expect,
            coverage=args.coverage,
            config=args.config,
        )
    except ConfgateError as exc:
        print(f"confgate merge: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    for note in notes:
        print(note)
    print("\n".join(summary_lines(report, str(path))))
    return ExitCode.OK if report.decision is Decision.PASS else ExitCode.GATE_FAILED
