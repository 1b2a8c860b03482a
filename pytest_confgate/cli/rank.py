"""``confgate rank``: rank parallel candidate solutions.

``confgate rank A B C [--baseline X] [--jobs N] [--format md|json|html] [-o FILE]`` ranks;
``confgate rank feedback RANKING_ID --chose ID | --accepted-winner | --rejected-all`` stores
what the user decided, which later rankings learn from. Exit 0 when ranked (whatever the
answer), 2 for bad input (a candidate that does not exist, a bad config, an unknown ranking).
``--apply`` (``--apply-branch NAME``) then checks the accepted winner out (``rank.apply``)
and exits 1, having checked nothing out, when no winner was accepted.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_confgate.cli.errors import usage_error
from pytest_confgate.exit_codes import ExitCode

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.rank.feedback_store import RankStore
    from pytest_confgate.rank.service import RankOutcome

_USAGE = (
    "confgate rank CANDIDATE [CANDIDATE ...] [--baseline DIR|REF] [--jobs N] "
    "[--format md|json|html] [-o FILE] [--markdown FILE] [--config PATH] [--task TEXT|@FILE] "
    "[--apply] [--apply-branch NAME]\n"
    "       confgate rank feedback RANKING_ID (--chose ID | --accepted-winner | --rejected-all)"
)


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add this group's subcommands to the ``confgate`` parser."""
    rank = commands.add_parser(
        "rank",
        usage=_USAGE,
        help="evaluate candidate solutions (directories or git refs), rank them and say how "
        "sure the ranking is (exit 0 ranked, 2 bad input)",
        description="Rank candidate solutions of one task. A candidate is a directory "
        "or a git ref (checked out into a temporary worktree). `rank feedback` records which "
        "solution you took; later rankings adjust their category weights.",
    )
    rank.add_argument("candidates", nargs="+", metavar="CANDIDATE",
                      help="directories or git refs; `feedback RANKING_ID` to give feedback")
    rank.add_argument("--baseline", metavar="DIR|REF",
                      help="the tree before the task: new lint/type errors, LOC, coverage and "
                      "test-count deltas are measured against it")
    rank.add_argument("--jobs", type=int, default=None, metavar="N",
                      help="candidates evaluated at once (default: the number of cores)")
    rank.add_argument("--fresh-baseline", action="store_true",
                      help="evaluate the baseline again even if an identical tree's evidence is "
                      "kept in .confgate/rank-cache/")
    rank.add_argument("--format", choices=("md", "json", "html"), default="md", dest="fmt")
    rank.add_argument("-o", "--output", help="write the result here instead of stdout")
    rank.add_argument("--markdown", metavar="FILE", help="also write the Markdown report here")
    rank.add_argument("--apply", action="store_true",
                      help="check the accepted winner out into the working tree (exit 1, "
                      "nothing checked out, when no winner was accepted)")
    rank.add_argument("--apply-branch", metavar="NAME",
                      help="with --apply: check the winner out onto this new branch")
    rank.add_argument("--config", help="the confgate configuration (default: found in cwd)")
    rank.add_argument("--task", metavar="TEXT|@FILE",
                      help="what the candidates were asked to do, shown to the evaluator agent "
                      "that compares them (@FILE reads it from a file; default: none)")
    rank.add_argument("--chose", metavar="ID", help="feedback: you took this solution")
    rank.add_argument("--accepted-winner", action="store_true",
                      help="feedback: you took the ranking's winner")
    rank.add_argument("--rejected-all", action="store_true",
                      help="feedback: you took none of the solutions")
    rank.set_defaults(handler=_handle)


def asks_feedback_help(argv: list[str]) -> bool:
    """``confgate rank feedback --help``: its own help, not all of ``rank``'s."""
    return argv[:2] == ["rank", "feedback"] and bool({"-h", "--help"} & set(argv[2:]))


def feedback_parser() -> argparse.ArgumentParser:
    """``confgate rank feedback``'s options, for its help (``rank`` parses them)."""
    feedback = argparse.ArgumentParser(
        prog="confgate rank feedback",
        usage="confgate rank feedback RANKING_ID (--chose ID | --accepted-winner | "
        "--rejected-all) [--config PATH]",
        description="Record which solution of a ranking you took; later rankings adjust their "
        "category weights from it (stored in rank.db beside the trust store).",
    )
    feedback.add_argument("ranking_id", metavar="RANKING_ID",
                          help="the ranking's id, printed by `confgate rank`")
    choice = feedback.add_mutually_exclusive_group(required=True)
    choice.add_argument("--chose", metavar="ID", help="you took this solution")
    choice.add_argument("--accepted-winner", action="store_true",
                        help="you took the ranking's winner")
    choice.add_argument("--rejected-all", action="store_true",
                        help="you took none of the solutions")
    feedback.add_argument("--config", metavar="PATH",
                          help="the confgate configuration (default: found in cwd)")
    return feedback


def _handle(args: argparse.Namespace) -> int:
    from pytest_confgate.config.loader import load_config
    from pytest_confgate.exceptions import ConfgateError, ConfigError

    choices = [args.chose is not None, args.accepted_winner, args.rejected_all]
    feedback = args.candidates[0] == "feedback"
    if any(choices) and not feedback:
        return _usage("--chose, --accepted-winner and --rejected-all belong to "
                      "`confgate rank feedback RANKING_ID`")
    try:
        loaded = load_config(Path.cwd(), args.config)
    except ConfigError as exc:
        return usage_error("confgate rank", exc)
    store = _store(loaded.config, Path.cwd())  # like trust.db: relative to the working directory
    try:
        if feedback:
            return _feedback(args, store, sum(choices))
        return _rank(args, loaded.config, store)
    except ConfgateError as exc:
        return usage_error("confgate rank", exc)


def _store(config: ConfgateConfig, root: Path) -> RankStore:
    """``rank.db``: by default beside the trust store (``.confgate/``), or in its server."""
    from pytest_confgate.rank.feedback_store import open_rank_store

    return open_rank_store(config, root)


def _rank(args: argparse.Namespace, config: ConfgateConfig, store: RankStore) -> int:
    from pytest_confgate.interrupts import Interrupted, sigterm_raises
    from pytest_confgate.rank.evaluate import Settings
    from pytest_confgate.rank.service import RankRequest, run_ranking

    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        return _usage(f"--jobs {args.jobs}: give at least 1")
    task = _task(args.task)
    problem, agent = _agent(config)
    if problem:
        return _usage(problem)
    apply = args.apply or args.apply_branch is not None
    if apply and (problem := _apply_problem(args.apply_branch)):
        return _usage(problem)  # before any candidate is evaluated
    command = tuple(config.rank.test_command or (sys.executable, "-m", "pytest"))
    python = command[0] if "python" in Path(command[0]).name else sys.executable
    settings = Settings(
        test_command=command, python=python, type_check=config.rank.type_check,
        timeouts=config.rank.timeouts, sources=tuple(config.source) if config.source else None,
    )
    cache = None if args.fresh_baseline else store.local_dir / "rank-cache"
    request = RankRequest(candidates=tuple(args.candidates), cwd=Path.cwd(),
                          baseline=args.baseline, jobs=jobs, task=task, baseline_cache=cache)
    try:
        with sigterm_raises():
            outcome = run_ranking(request, config, settings, store, _progress, agent)
    except (KeyboardInterrupt, Interrupted) as stop:
        signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
        print(f"confgate rank: stopped by {signal.Signals(signum).name}: every candidate's "
              "processes were killed and its temporary tree removed", file=sys.stderr)
        return 128 + signum
    _write(outcome, args.fmt, args.output)
    if args.markdown:
        _write(outcome, "md", args.markdown)
    winner = outcome.ranking.winner
    print(f"confgate rank: ranking {outcome.ranking_id}: winner "
          f"{winner.solution_id if winner else 'none'} (confidence "
          f"{outcome.ranking.confidence:.2f}); auto-accept: "
          f"{'yes' if outcome.auto_accept.accept else 'no'} ({outcome.auto_accept.reason})",
          file=sys.stderr)
    return _apply(outcome, args.apply_branch) if apply else ExitCode.OK


def _apply_problem(branch: str | None) -> str | None:
    from pytest_confgate.rank.apply import apply_problem

    return apply_problem(Path.cwd(), branch)


def _apply(outcome: RankOutcome, branch: str | None) -> int:
    from pytest_confgate.exceptions import CandidateError
    from pytest_confgate.rank.apply import apply_winner

    try:
        print(f"confgate rank: {apply_winner(outcome, Path.cwd(), branch)}", file=sys.stderr)
    except CandidateError as exc:
        print(f"confgate rank: {exc}", file=sys.stderr)
        return ExitCode.GATE_FAILED
    return ExitCode.OK


def _task(value: str | None) -> str | None:
    from pytest_confgate.config.textfile import read_text_file

    if value is None or not value.startswith("@"):
        return value
    return read_text_file(Path(value[1:]), 1_000_000, "task file", "give the task as UTF-8 text")


def _agent(config: ConfgateConfig) -> tuple[str | None, Agent | None]:
    """(problem, agent): the stage-3 evaluator, checked before any candidate is evaluated."""
    from pytest_confgate.agents import build_agent, preflight
    from pytest_confgate.exceptions import AgentError

    name = config.rank.evaluator_agent
    if name is None:
        return None, None
    problem = preflight(name, config.agents[name])
    if problem:
        return problem, None
    try:
        return None, build_agent(name, config.agents[name])
    except AgentError as exc:
        return str(exc), None


def _write(outcome: RankOutcome, fmt: str, output: str | None) -> None:
    import json

    from pytest_confgate.rank.report import ranking_json, ranking_markdown
    from pytest_confgate.rank.report_html import ranking_html
    from pytest_confgate.report.json_report import write_text_atomic

    if fmt == "json":
        text = json.dumps(ranking_json(outcome), indent=2) + "\n"
    elif fmt == "html":
        text = ranking_html(outcome)
    else:
        text = ranking_markdown(outcome)
    if output:
        write_text_atomic(text, Path(output))
    else:
        sys.stdout.write(text)


def _feedback(args: argparse.Namespace, store: RankStore, chosen: int) -> int:
    from datetime import datetime

    from pytest_confgate.rank.feedback import Choice

    if len(args.candidates) != 2:
        return _usage("give exactly one RANKING_ID: confgate rank feedback RANKING_ID "
                      "(--chose ID | --accepted-winner | --rejected-all)")
    if chosen != 1:
        return _usage("give exactly one of --chose ID, --accepted-winner, --rejected-all")
    ranking_id = args.candidates[1]
    choice: Choice = ("chose_other" if args.chose is not None
                      else "accepted_winner" if args.accepted_winner else "rejected_all")
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    store.record_feedback(ranking_id, choice, args.chose, now)
    what = f"chose {args.chose}" if args.chose else choice.replace("_", " ")
    print(f"feedback stored for ranking {ranking_id}: {what} ({store.path})")
    return ExitCode.OK


def _progress(line: str) -> None:
    print(f"confgate rank: {line}", file=sys.stderr, flush=True)


def _usage(message: str) -> int:
    print(f"confgate rank: {message}", file=sys.stderr)
    return ExitCode.USAGE_ERROR
