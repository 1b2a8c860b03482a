"""``confgate run``: run agent tasks with their overlays.

Exit status: 0 the task advanced (the gate passed), 1 the gate blocked it, 3 it escalated to
a human, 2 a usage or configuration error; an interrupted run exits 128 + the signal's
number (130 for Ctrl-C, 143 for SIGTERM), as shells report it.

``confgate run TASK --resume RUN_ID --decision approve|reject|retry [--note TEXT]`` answers
an escalation: the decision goes into the run's record and the run goes on (``reject`` exits
1; ``approve`` advances when the gate's last decision was pass; ``retry`` runs one more
iteration).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_confgate.cli.errors import usage_error
from pytest_confgate.exit_codes import ExitCode

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.overlays.run_record import RunRecord


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""
    run = commands.add_parser(
        "run",
        help="run an agent task (or all, in file order) with its overlays: exit 0 advanced, "
        "1 blocked by the gate, 3 escalated, 2 usage error",
    )
    run.add_argument("task", nargs="?", help="the task under `tasks:` (default: every task)")
    run.add_argument("-c", "--config", help="the confgate configuration (default: found in cwd)")
    run.add_argument("--report", metavar="PATH", help="write the run's JSON report here")
    run.add_argument(
        "--resume", metavar="RUN_ID", help="answer the escalation of this run and go on"
    )
    run.add_argument(
        "--decision",
        choices=("approve", "reject", "retry"),
        help="with --resume: approve (advance), reject (stop, exit 1) or retry (one more "
        "iteration)",
    )
    run.add_argument("--note", metavar="TEXT", help="with --resume: why, kept in the record")
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.exceptions import ConfgateError
    from pytest_confgate.overlays.tasks import resolve_prompt

    root = Path.cwd()
    problem = _resume_usage(args)
    if problem:
        print(f"confgate run: {problem}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        loaded = load_config(root, args.config)
        names = _task_names(loaded.config, args.task, loaded.path)
        for name in names:  # every prompt is found before the first agent starts
            resolve_prompt(name, loaded.config.tasks[name], root, str(loaded.path))
        agents = _agents(loaded.config, names)
        resumed = _reopen(root, args)
    except ConfgateError as exc:
        return usage_error("confgate run", exc)
    return _run_tasks(loaded.config, loaded.path, root, names, agents, args, resumed)


def _resume_usage(args: argparse.Namespace) -> str | None:
    """What is wrong with the ``--resume`` / ``--decision`` / ``--note`` combination."""
    if args.resume is None:
        if args.decision or args.note is not None:
            return "--decision and --note answer an escalation: add --resume RUN_ID"
        return None
    if not args.task:
        return "--resume needs the task: confgate run TASK --resume RUN_ID --decision ..."
    if not args.decision:
        return "--resume needs --decision approve, reject or retry"
    return None


def _reopen(root: Path, args: argparse.Namespace) -> RunRecord | None:
    from pytest_confgate.overlays.run_record import RunRecord

    if not args.resume:
        return None
    return RunRecord.reopen(root, args.resume, args.task, args.decision)


def _run_tasks(
    config: ConfgateConfig,
    config_path: Path | None,
    root: Path,
    names: list[str],
    agents: dict[str, Agent],
    args: argparse.Namespace,
    resumed: RunRecord | None = None,
) -> int:
    from pytest_confgate.exceptions import ConfgateError
    from pytest_confgate.overlays.runner import RunInterrupted, TaskRunner, interrupts_as_exceptions

    reports: list[dict[str, Any]] = []
    code = int(ExitCode.OK)
    with interrupts_as_exceptions():
        try:
            for name in names:
                runner = TaskRunner(config, config_path, root, name, agents, sys.stdout, resumed)
                if resumed is not None:
                    code, report = runner.resume(args.decision, args.note)
                else:
                    code, report = runner.run()
                reports.append(report)
                if code != ExitCode.OK:
                    break  # a later task builds on this one: never run it on unadvanced work
        except RunInterrupted as stop:
            if stop.record is not None:
                reports.append(stop.record)
            print(
                f"confgate run: interrupted ({stop}); the record is in .confgate/runs/",
                file=sys.stderr,
            )
            code = 128 + stop.signum
        except ConfgateError as exc:
            print(f"confgate run: {exc}", file=sys.stderr)
            code = int(ExitCode.USAGE_ERROR)
    if args.report:
        shaped: Any = reports[0] if args.task and reports else {"tasks": reports}
        if not _write_report(shaped, Path(args.report)):
            return ExitCode.USAGE_ERROR
    return code


def _task_names(config: ConfgateConfig, wanted: str | None, path: Path | None) -> list[str]:
    from pytest_confgate.exceptions import ConfigError

    where = str(path) if path else "the configuration"
    names = list(config.tasks)
    if not names:
        raise ConfigError(f"{where}: no tasks under `tasks:`; define one to run it")
    if wanted is None:
        return names
    if wanted not in config.tasks:
        close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"{where}: unknown task {wanted!r}{hint}; defined tasks: {', '.join(names)}"
        )
    return [wanted]


def _agents(config: ConfgateConfig, names: list[str]) -> dict[str, Agent]:
    """Build every agent the tasks need, after a preflight of each."""
    from pytest_confgate.agents import build_agent, preflight
    from pytest_confgate.exceptions import ConfigError
    from pytest_confgate.overlays.tasks import agents_needed

    needed = agents_needed(config, names)
    problems = [p for a in needed if (p := preflight(a, config.agents[a])) is not None]
    if problems:
        raise ConfigError(problems)
    return {a: build_agent(a, config.agents[a]) for a in needed}


def _write_report(report: Any, path: Path) -> bool:
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.json_report import write_json_atomic

    try:
        write_json_atomic(report, path)
    except ReportError as exc:
        print(f"confgate run: --report {path}: {exc}", file=sys.stderr)
        return False
    return True
