"""``confgate trust``: record review outcomes and score agents.

``record`` and ``resolve`` are silent on success and do not fail for the store's sake: a write
that cannot be made is spooled, with one line on stderr. Only an event that can be neither
stored nor spooled (or not stored, with ``--require-stored``) exits 1, printed on stderr as a
JSON line that ``confgate trust import`` takes back (issue 18). ``triage`` never fails for the
store's sake (multiplier 1.0 with a warning). Bad input is exit 2 with one line. ``migrate``,
``export``, ``import`` and ``retract`` live in ``trust_data``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_confgate.cli import trust_data
from pytest_confgate.cli.trust_data import with_store
from pytest_confgate.exit_codes import ExitCode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.trust.events import TrustEvent
    from pytest_confgate.trust.store import RecordOutcome, TrustStore

MAX_FINDINGS_BYTES = 32 * 1024 * 1024
_SEVERITIES = ("P0", "P1", "P2", "P3")


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""
    group = commands.add_parser(
        "trust", help="agent trust from review findings: record, resolve, triage, report, "
        "retract, export, import, migrate"
    ).add_subparsers(title="trust commands", metavar="COMMAND")
    record = _command(group, "record", "record one accepted or discarded finding (silent)")
    record.add_argument("--event", required=True, choices=("finding_accepted", "finding_discarded"))
    record.add_argument("--agent", required=True, help="the review agent that raised the finding")
    record.add_argument("--finding", required=True, metavar="ID", help="the finding's id")
    record.add_argument("--severity", required=True, choices=_SEVERITIES)
    record.add_argument("--run", required=True, help="the review run's id")
    _project_option(record)
    _at_option(record)
    _require_stored_option(record)
    record.set_defaults(handler=_record)
    resolve = _command(
        group, "resolve", "record the outcome of findings from a findings file (silent)"
    )
    resolve.add_argument(
        "findings", metavar="FINDINGS.json",
        help='{"findings": [{"id", "agent", "severity", ...}]} with the agent attribution',
    )
    resolve.add_argument("--accepted", default="", metavar="ID,...", help="findings acted on")
    resolve.add_argument("--discarded", default="", metavar="ID,...", help="findings dismissed")
    resolve.add_argument(
        "--run", help="the review run (default: the file's review_run_id or run, else a hash "
        "of the file, so resolving the same file twice records nothing new)",
    )
    _project_option(resolve)
    _at_option(resolve)
    _require_stored_option(resolve)
    resolve.set_defaults(handler=_resolve)
    triage = _command(group, "triage", "rank candidate agents by base score x trust")
    triage.add_argument(
        "--candidates", required=True, metavar="A=0.9,B=0.7", help="agents and base scores"
    )
    triage.add_argument("--json", action="store_true", help="a JSON list instead of a table")
    _project_option(triage)
    _now_option(triage)
    triage.set_defaults(handler=_triage)
    report = _command(group, "report", "trust per agent, per project and global")
    report.add_argument("--json", action="store_true", help="a JSON list of rows (raw numbers)")
    report.add_argument("--html", metavar="FILE", help="also write a page with a trust chart")
    report.add_argument("--project", help="only this project's rows (global rows stay)")
    _now_option(report)
    report.set_defaults(handler=_report)
    trust_data.add_commands(group, _command)


def _command(
    group: argparse._SubParsersAction[Any], name: str, text: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = group.add_parser(name, help=text, description=text)
    parser.add_argument(
        "-c", "--config", metavar="FILE", help="the confgate configuration (default: found in cwd)"
    )
    parser.add_argument(
        "--db", metavar="PATH|URL",
        help="the trust store: a path (SQLite) or postgresql://USER@HOST:PORT/DB, its password "
        "from the variable trust.password_env names (default: trust.db)",
    )
    return parser


def _require_stored_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-stored", action="store_true",
        help="exit 1 unless the event(s) reached the database (they are still spooled): for "
        "CI runners whose spool folder is gone when the job ends",
    )


def _project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", help="the trust scope (default: config project, GITHUB_REPOSITORY or cwd name)"
    )


def _at_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--at", metavar="ISO-8601", help="when it was decided (default: now)")


def _now_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", metavar="ISO-8601", help="score as of this time (default: the current time)"
    )


def _record(args: argparse.Namespace) -> int:
    from pytest_confgate.trust.events import TrustEvent, validated

    def run(config: ConfgateConfig, store: TrustStore) -> int:
        event = validated(TrustEvent(
            args.event, args.agent, _project(args, config), args.finding, args.severity,
            args.run, _time(args.at, "--at"),
        ))
        return _report_write(store, [event], "record", args.require_stored)

    return with_store(args, "record", run)


def _resolve(args: argparse.Namespace) -> int:
    from pytest_confgate.exceptions import EvidenceError
    from pytest_confgate.trust.events import findings_run, resolve_events, split_ids

    def run(config: ConfgateConfig, store: TrustStore) -> int:
        raw, data = _read_findings(Path(args.findings))
        accepted, discarded = split_ids(args.accepted), split_ids(args.discarded)
        both = sorted(set(accepted) & set(discarded))
        if both:
            raise EvidenceError(f"--accepted and --discarded both name {', '.join(both)}")
        if not accepted and not discarded:
            raise EvidenceError("nothing to record: give --accepted ID,... and/or --discarded")
        outcomes = dict.fromkeys(accepted, "finding_accepted")
        outcomes.update(dict.fromkeys(discarded, "finding_discarded"))
        file_project = data.get("project") if isinstance(data, dict) else None
        project = args.project or (file_project if isinstance(file_project, str) else None)
        digest = hashlib.sha256(raw).hexdigest()[:12]
        run_id = args.run or findings_run(data) or f"findings-{digest}"
        events = resolve_events(
            data, args.findings, outcomes, project=project or _project(args, config),
            run=run_id, at=_time(args.at, "--at"),
        )
        return _report_write(store, events, "resolve", args.require_stored)

    return with_store(args, "resolve", run)


def _triage(args: argparse.Namespace) -> int:
    from pytest_confgate.trust import triage_with_store
    from pytest_confgate.trust.triage import parse_candidates

    def run(config: ConfgateConfig, store: TrustStore) -> int:
        candidates = parse_candidates(args.candidates)
        project = _project(args, config)
        rows = triage_with_store(
            store, candidates, project, _time(args.now, "--now"), warn=_warning("triage")
        )
        if os.environ.get("CONFGATE_DEBUG", "") not in ("", "0"):
            for row in rows:
                print(
                    f"confgate trust triage: {row.agent} @ {project}: base {row.base_score!r} "
                    f"x trust {row.trust!r} = {row.final_score!r}",
                    file=sys.stderr,
                )
        if args.json:
            print(json.dumps([row.to_json() for row in rows], indent=2))
        else:
            for row in rows:
                print(f"{row.agent}\t{row.final_score:.4f}\t(base {row.base_score:g} x trust "
                      f"{row.trust:.4f})")
        return ExitCode.OK

    return with_store(args, "triage", run)


def _report(args: argparse.Namespace) -> int:
    from pytest_confgate.report.json_report import write_text_atomic
    from pytest_confgate.trust.report import (
        render_html,
        render_table,
        report_rows,
        shown_retractions,
    )

    def run(config: ConfgateConfig, store: TrustStore) -> int:
        trust = config.trust
        table = store.table(_time(args.now, "--now"))
        retracted = shown_retractions(store.retracted(), args.project)
        rows = report_rows(table, trust.low_trust, args.project, retracted)
        if args.html:
            page = render_html(rows, trust.low_trust, table.mode, retracted)
            write_text_atomic(page, Path(args.html))
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            sys.stdout.write(render_table(rows, trust.low_trust, table.mode, retracted))
        waiting = store.spooled_count()
        if waiting:
            print(
                f"confgate trust report: {waiting} event(s) wait in the spool "
                f"({store.spool.describe()}); the next `confgate trust record` stores them",
                file=sys.stderr,
            )
        _spool_problems(store, "report")
        return ExitCode.OK

    return with_store(args, "report", run)


def _project(args: argparse.Namespace, config: ConfgateConfig) -> str:
    from pytest_confgate.trust import default_project

    return str(args.project or default_project(config.project, Path.cwd()))


def _time(text: str | None, flag: str) -> float:
    """The clock is read here, at the front door, and nowhere in the formula."""
    from pytest_confgate.trust.events import parse_time

    return time.time() if text is None else parse_time(text, flag)


def _read_findings(path: Path) -> tuple[bytes, Any]:
    from pytest_confgate.exceptions import EvidenceError

    try:
        if path.stat().st_size > MAX_FINDINGS_BYTES:
            raise EvidenceError(f"{path}: over the {MAX_FINDINGS_BYTES} byte limit")
        raw = path.read_bytes()
        return raw, json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise EvidenceError(f"{path}: no such findings file; check the path") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise EvidenceError(
            f'{path}: not a UTF-8 JSON findings file ({exc}); expected {{"findings": [...]}}'
        ) from exc


def _report_write(
    store: TrustStore, events: Sequence[TrustEvent], name: str, require_stored: bool
) -> int:
    """Silent when stored; one line when spooled (exit 0: the caller must go on). An event
    that was not kept (or, with ``require_stored``, not stored) is printed on stderr as a JSON
    line ``confgate trust import`` takes back, and the exit is 1 so CI can retry."""
    outcome: RecordOutcome = store.record(events)
    _spool_problems(store, name)
    if not outcome.spooled:
        return ExitCode.OK
    where = (
        f"kept in {outcome.spool} and replayed by the next write"
        if outcome.spool is not None
        else "NOT kept: the spool folders cannot be written either "
        f"({store.spool.describe()})"
    )
    print(f"confgate trust {name}: {outcome.reason}; the event(s) were {where}",
          file=sys.stderr)
    if outcome.spool is not None and not require_stored:
        return ExitCode.OK
    print(f"confgate trust {name}: not stored; each event follows as a JSON line for "
          "`confgate trust import`:", file=sys.stderr)
    for event in events:
        print(json.dumps(event.to_line()), file=sys.stderr)
    return ExitCode.GATE_FAILED


def _spool_problems(store: TrustStore, name: str) -> None:
    """Spool files that cannot be replayed, reported until someone fixes or deletes them."""
    problems = store.spool.problems()
    if problems:
        print(f"confgate trust {name}: {len(problems)} spool file(s) cannot be replayed and "
              "wait for you (fix them and rename them to .json, or delete them):",
              file=sys.stderr)
        for line in problems:
            print(f"  {line}", file=sys.stderr)


def _warning(name: str) -> Any:
    def warn(message: str) -> None:
        print(f"confgate trust {name}: warning: {message}", file=sys.stderr)

    return warn
