"""The pytest front door: ``pytest --confgate`` translates pytest events into engine calls.

Without ``--confgate`` this module registers three options and does nothing else: every
import of the engine (pydantic, yaml, coverage) happens only once the gate is enabled.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_confgate.collect.tests import TestTally
    from pytest_confgate.engine import GateRun
    from pytest_confgate.models import GateReport

_PLUGIN_NAME = "confgate-gate"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("confgate", "quality gate (pytest-confgate)")
    group.addoption(
        "--confgate",
        action="store_true",
        default=False,
        help="evaluate the quality gate (tests, coverage, lint, security) and exit non-zero "
        "unless it passes",
    )
    group.addoption(
        "--confgate-config",
        metavar="PATH",
        default=None,
        help="configuration file (default: confgate.yml, confgate.yaml or [tool.confgate] "
        "in pyproject.toml in the rootdir; or $CONFGATE_CONFIG)",
    )
    group.addoption(
        "--confgate-report",
        metavar="PATH",
        default=None,
        help="where to write the JSON report (default: confgate-report.json in the rootdir)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Start as early as pytest allows, so import-time lines of conftest-imported code count."""
    options = early_config.known_args_namespace
    if not getattr(options, "confgate", False) or hasattr(early_config, "workerinput"):
        return
    from pytest_confgate.exceptions import ConfgateError

    try:
        gate = _GatePlugin.create(early_config, options)
    except ConfgateError as exc:
        problems = getattr(exc, "problems", None) or [str(exc)]
        raise pytest.UsageError(*problems) from None
    early_config.pluginmanager.register(gate, _PLUGIN_NAME)
    gate.run.start()


class _GatePlugin:
    """Hooks that exist only while the gate is on; all work is delegated to ``GateRun``."""

    def __init__(self, run: GateRun, tally: TestTally, report_path: Path) -> None:
        self.run = run
        self.tally = tally
        self.report_path = report_path
        self.report: GateReport | None = None
        self.error: str | None = None
        self.tests_passed = False
        self._started = time.perf_counter()

    @classmethod
    def create(cls, config: pytest.Config, options: Any) -> _GatePlugin:
        from pathlib import Path

        from pytest_confgate.collect.tests import TestTally
        from pytest_confgate.config_loader import load_config
        from pytest_confgate.engine import GateRun
        from pytest_confgate.report.json_report import resolve_report_path

        root = Path(config.rootpath)
        explicit = options.confgate_config or os.environ.get("CONFGATE_CONFIG") or None
        loaded = load_config(root, explicit)
        report_path = resolve_report_path(root, options.confgate_report)
        distributed = bool(getattr(options, "numprocesses", None)) or getattr(
            options, "dist", "no"
        ) not in ("no", None)
        run = GateRun(loaded, root, os.environ, distributed=distributed)
        return cls(run, TestTally(), report_path)

    def pytest_sessionstart(self) -> None:
        self._started = time.perf_counter()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.tally.add_collection_error()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.tally.add_report(report.when, report.outcome, xfail=hasattr(report, "wasxfail"))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_confgate.exceptions import ConfgateError
        from pytest_confgate.models import Decision
        from pytest_confgate.report.json_report import write_json_report

        self.run.stop_tracing()
        outcomes = self.tally.outcomes(time.perf_counter() - self._started)
        try:
            self.report = self.run.finish(outcomes)
            write_json_report(self.report, self.report_path)
        except ConfgateError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug of ours must still fail closed, not pass or crash
            self.error = (
                f"internal error in pytest-confgate ({type(exc).__name__}: {exc}); "
                "the gate fails closed. Please report it with this message."
            )
        self.tests_passed = session.exitstatus == pytest.ExitCode.OK
        failed = self.error is not None or (
            self.report is not None and self.report.decision is not Decision.PASS
        )
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        from pytest_confgate.models import Decision
        from pytest_confgate.report.terminal import summary_lines

        terminalreporter.write_sep("-", "confgate")
        lines = summary_lines(self.report, _display_path(self.report_path)) if self.report else []
        passed = self.error is None and self.report is not None and (
            self.report.decision is Decision.PASS
        )
        for line in lines:
            if line.startswith("confgate: "):
                if self.error is not None:  # no verdict stands when the gate itself failed
                    break
                terminalreporter.write_line(line, green=passed, red=not passed, bold=True)
            else:
                terminalreporter.write_line(line)
        if self.error is not None:
            terminalreporter.write_line(f"confgate: ERROR: {self.error}", red=True, bold=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Say it on the very last line when the tests passed but the gate did not."""
        self.run.stop_tracing()
        if not self.tests_passed or (self.report is None and self.error is None):
            return
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        from pytest_confgate.report.terminal import verdict_line

        line = (
            f"confgate: ERROR: the tests passed but the gate could not decide: {self.error}"
            if self.error is not None or self.report is None
            else verdict_line(self.report)
        )
        if line is not None:
            reporter.write_line(line, red=True, bold=True)


def _display_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
