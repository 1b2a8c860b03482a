"""``confgate gate``: run the tests under a supervisor that decides outside the test process.

``confgate gate [--config PATH] [--base REF] [--report PATH] [-- PYTEST_ARGS...]`` starts
``python -m pytest PYTEST_ARGS --confgate`` as a child, counts its test outcomes as they
stream in, and writes the report and its digest line itself once every process of the run
ended (``gate.supervisor``). The Action's gate step runs it; ``pytest --confgate`` stays for
local use and gives the same figures and decision on an honest change.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_confgate.exit_codes import ExitCode


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``confgate gate`` to the ``confgate`` parser."""
    gate = commands.add_parser(
        "gate",
        help="run pytest with the gate as a child process and decide outside it: the test "
        "outcomes are counted as they happen, the report is written after every process of "
        "the run ended (exit 0 pass, 1 fail or needs sign-off, 2 bad input)",
        description="Arguments after `--` go to pytest unchanged.",
    )
    gate.add_argument("--config", metavar="PATH", default=None,
                      help="the confgate configuration (passed to pytest as --confgate-config)")
    gate.add_argument("--base", metavar="REF", default=None,
                      help="the git ref the change is compared against (--confgate-base)")
    gate.add_argument("--report", metavar="PATH", default=None,
                      help="where to write the JSON report (default: confgate-report.json)")
    gate.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS",
                      help="pytest's own arguments")
    gate.set_defaults(handler=_gate)


def _gate(args: argparse.Namespace) -> int:
    from pytest_confgate.cli.errors import usage_error
    from pytest_confgate.exceptions import ConfgateError
    from pytest_confgate.gate.supervisor import open_run, supervise

    if TYPE_CHECKING:
        from pytest_confgate.gate.engine import GateRun

    root = Path.cwd()
    pytest_args = list(args.pytest_args)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    if args.config is not None:
        pytest_args.append(f"--confgate-config={args.config}")  # a path: only the = form
    if args.base is not None:
        pytest_args += ["--confgate-base", args.base]
    out = sys.stdout.buffer
    sys.stdout.flush()

    def output(line: bytes) -> None:
        out.write(line)
        out.flush()

    def settle() -> tuple[GateRun, Path]:
        return open_run(root, os.environ, args.config, args.base, args.report, pytest_args)

    try:
        done = supervise(root, pytest_args, os.environ, output, settle)
    except ConfgateError as exc:
        return usage_error("confgate gate", exc)
    from pytest_confgate.github.action_run import DIGEST_LINE
    from pytest_confgate.models import Decision

    report = done.report
    decision = report.decision.value if report is not None else "none"
    print(f"confgate gate: the test process exited with status {done.child_status}; "
          f"decision {decision}")
    for problem in done.problems:
        print(f"confgate gate: {problem}")
    if report is not None and report.decision is not Decision.PASS:
        from pytest_confgate.report.terminal import verdict_block

        for line in verdict_block(report):  # what blocks and its fix, as pytest --confgate
            print(line)
    sys.stdout.flush()
    if done.digest is not None:
        output(DIGEST_LINE + done.digest.encode() + b"\n")
    passed = report is not None and report.decision is Decision.PASS
    return ExitCode.OK if passed else ExitCode.GATE_FAILED
