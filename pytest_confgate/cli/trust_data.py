"""``confgate trust migrate|export|import|retract``: look after the trust store's data.

``export`` writes JSON lines (events, then retractions) and ``import`` reads them back,
idempotent by event id, so a SQLite file can move to a PostgreSQL server and back (issue 20).
``migrate`` brings a store to this version's schema: the only way an older store changes.
``retract`` takes a mis-recorded event back (issue 17): it stops counting, stays in history.
Exit 0 done, 1 partly done (import), 2 bad input or a store that cannot be used.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pytest_confgate.cli.errors import usage_error
from pytest_confgate.exit_codes import ExitCode

if TYPE_CHECKING:
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.trust.events import Retraction, TrustEvent
    from pytest_confgate.trust.store import TrustStore

Factory = Callable[["argparse._SubParsersAction[Any]", str, str], argparse.ArgumentParser]
PROGRESS_EVERY = 100_000


def add_commands(group: argparse._SubParsersAction[Any], command: Factory) -> None:
    """Add ``migrate``, ``export``, ``import`` and ``retract`` to the ``trust`` group."""
    migrate = command(group, "migrate", "bring the trust store to this version's schema "
                      "(creates it when missing; back it up first)")
    migrate.set_defaults(handler=_migrate)
    export = command(group, "export", "write every event and retraction as JSON lines")
    export.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(handler=_export)
    load = command(group, "import", "store the events and retractions of an export "
                   "(idempotent: ids already stored are skipped)")
    load.add_argument("source", metavar="FILE", help="JSON lines from `confgate trust export`, "
                      "or - for stdin")
    load.set_defaults(handler=_import)
    retract = command(group, "retract", "take a mis-recorded event back: it stops counting "
                      "and stays in the history and the report")
    retract.add_argument("event_id", metavar="EVENT_ID",
                         help="the event's id (`confgate trust export` shows it), or its first "
                         "8 or more digits")
    retract.add_argument("--reason", required=True, help="why, kept with the retraction")
    retract.add_argument("--by", help="who retracts (default: GITHUB_ACTOR, else your user)")
    retract.set_defaults(handler=_retract)


def _migrate(args: argparse.Namespace) -> int:
    def run(_config: ConfgateConfig, store: TrustStore) -> int:
        before, after = store.migrate()
        if before == after:
            state = f"already at schema {after}"
        elif before == 0:
            state = f"created at schema {after}"
        else:
            state = f"migrated from schema {before} to {after}"
        print(f"confgate trust migrate: {store.shown}: {state}")
        return ExitCode.OK

    return with_store(args, "migrate", run)


def _export(args: argparse.Namespace) -> int:
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.trust.events import Retraction

    def run(_config: ConfgateConfig, store: TrustStore) -> int:
        counts = {"event": 0, "retraction": 0}
        try:
            with _output(args.output) as out:
                for item in store.export():
                    out.write(json.dumps(item.to_line()) + "\n")
                    counts["retraction" if isinstance(item, Retraction) else "event"] += 1
        except OSError as exc:
            raise ReportError(f"{args.output}: cannot write the export ({exc})") from exc
        print(f"confgate trust export: {store.shown}: {counts['event']} event(s), "
              f"{counts['retraction']} retraction(s)", file=sys.stderr)
        return ExitCode.OK

    return with_store(args, "export", run)


def _import(args: argparse.Namespace) -> int:
    def run(_config: ConfgateConfig, store: TrustStore) -> int:
        lines = _Lines(args.source)
        outcome = store.import_records(lines)
        if lines.error is not None:
            print(f"confgate trust import: {lines.error}; the {outcome.events} event(s) "
                  "before that line were imported (importing again is safe: ids already "
                  "stored are skipped)", file=sys.stderr)
            return ExitCode.USAGE_ERROR
        print(f"confgate trust import: {store.shown}: {outcome.new_events} new event(s) of "
              f"{outcome.events} read ({outcome.events - outcome.new_events} already stored), "
              f"{outcome.new_retractions} new retraction(s) of {outcome.retractions}",
              file=sys.stderr)
        if outcome.unknown:
            print(f"confgate trust import: {len(outcome.unknown)} retraction(s) name events "
                  f"that are neither stored nor in {args.source}, so they were not kept: "
                  f"{', '.join(outcome.unknown[:10])}", file=sys.stderr)
            return ExitCode.GATE_FAILED
        return ExitCode.OK

    return with_store(args, "import", run)


def _retract(args: argparse.Namespace) -> int:
    from pytest_confgate.exceptions import EvidenceError

    def run(_config: ConfgateConfig, store: TrustStore) -> int:
        wanted = args.event_id.strip().lower()
        if not (8 <= len(wanted) <= 32 and all(c in "0123456789abcdef" for c in wanted)):
            raise EvidenceError(f"EVENT_ID {args.event_id!r}: give the event's id (32 hex "
                                "digits, or its first 8 or more)")
        who = args.by or os.environ.get("GITHUB_ACTOR") or _user()
        kept, new = store.retract(wanted, args.reason, who, time.time())
        event = store.find_event(kept.event_id)
        what = (f"{kept.event_id} ({event.event} by {event.agent} @ {event.project}, "
                f"finding {event.finding}, run {event.run})")
        if new:
            print(f"confgate trust retract: retracted {what}: it no longer counts")
        else:
            print(f"confgate trust retract: {what} was already retracted by {kept.by}: "
                  f"{kept.reason}")
        return ExitCode.OK

    return with_store(args, "retract", run)


def with_store(args: argparse.Namespace, name: str, run: Any) -> int:
    """Load the configuration and open the store, then ``run``; our errors become exit 2."""
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.exceptions import ConfgateError
    from pytest_confgate.trust import open_store

    try:
        config = load_config(Path.cwd(), args.config).config
        result: int = run(config, open_store(config.trust, args.db))
    except ConfgateError as exc:
        return usage_error(f"confgate trust {name}", exc)
    return result


class _Lines:
    """The records of an export file (or stdin), parsed one line at a time. The first bad line
    ends the records and is kept in ``error`` (FILE:LINE: what is wrong), so everything before
    it is still imported. Long imports show progress on stderr."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.error: str | None = None

    def __iter__(self) -> Iterator[TrustEvent | Retraction]:
        from pytest_confgate.exceptions import EvidenceError
        from pytest_confgate.trust.events import record_from_json

        shown = "<stdin>" if self.source == "-" else self.source
        try:
            handle = (sys.stdin if self.source == "-"
                      else Path(self.source).open(encoding="utf-8"))  # noqa: SIM115 - closed below
        except OSError as exc:
            self.error = f"{shown}: cannot read it ({exc})"
            return
        number = 0
        try:
            for line in handle:
                number += 1
                if line.strip():
                    yield record_from_json(json.loads(line))
                if number % PROGRESS_EVERY == 0:
                    print(f"confgate trust import: {number} lines read", file=sys.stderr)
        except UnicodeDecodeError as exc:
            self.error = f"{shown}:{number + 1}: not UTF-8 ({exc})"
        except (ValueError, EvidenceError) as exc:
            self.error = f"{shown}:{number}: {exc}"
        finally:
            if handle is not sys.stdin:
                handle.close()


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[IO[str]]:
    """stdout, or a file written beside its target and renamed into place when complete."""
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
