"""The pytest front door: ``pytest --confgate`` translates pytest events into engine calls.

Without ``--confgate`` this module registers its options and does nothing else: every import
of the engine (pydantic, yaml, coverage) happens only once the gate is enabled.

Under pytest-xdist each process has a role (``gate.roles``): the controller decides, workers
only measure coverage. This module reads pytest's objects and hands the role plain facts.

The deciding process measures until pytest's last cleanup (added before any other, so run after
all of them, ``pytest_unconfigure`` included), and decides, reports and sets the exit status
there: code run after the tests counts as under ``coverage run``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import ast
    from collections.abc import Callable, Generator, Iterator, Mapping
    from pathlib import Path

    from pytest_confgate.collect.plugin_audit import PluginWatch
    from pytest_confgate.collect.runtime_audit import Recorder, RuntimeFinding
    from pytest_confgate.collect.tests import TestTally
    from pytest_confgate.collect.tests_audit import TestWatch
    from pytest_confgate.gate.channel import Channel
    from pytest_confgate.gate.engine import GateRun
    from pytest_confgate.gate.roles import ProcessRole
    from pytest_confgate.models import GateReport, TestOutcomes
    from pytest_confgate.outcomes import OutcomeStream

_PLUGIN_NAME = "confgate-gate"
_LINKS_KEY = "confgate_requirements"
_FINDINGS_KEY = "confgate_findings"
"""In ``workerinput``: where a worker sends its findings; in ``workeroutput``: that it did."""


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
        help="configuration file (default: $CONFGATE_CONFIG outside a pull request, else "
        "confgate.yml, confgate.yaml "
        "or [tool.confgate] in pyproject.toml in the rootdir); only the =PATH form",
    )
    group.addoption(
        "--confgate-base",
        metavar="REF",
        default=None,
        help="git ref the change is compared against for `scope: changed` and risk rules "
        "(default: the GitHub event's pull_request.base.sha, else GITHUB_BASE_REF, else "
        "base_ref in the config; on a pull request only the command line overrides the "
        "event)",
    )
    group.addoption(
        "--confgate-task",
        metavar="NAME",
        default=None,
        help="also collect the metrics task NAME's confidence loop scores (confgate run "
        "passes it); they are reported and never decide",
    )
    group.addoption(
        "--confgate-report",
        metavar="PATH",
        default=None,
        help="where to write the JSON report (default: confgate-report.json in the rootdir); "
        "only the =PATH form",
    )
    group.addoption(
        "--confgate-compare",
        metavar="BASE_REPORT.json",
        default=None,
        help="show each metric's change against a saved report of the base branch; only the "
        "=PATH form",
    )
    group.addoption(
        "--confgate-coverage-data",
        metavar="PATH",
        default=None,
        help="also write the coverage.py data this run measured (a CI shard's part for "
        "`confgate merge --coverage`); only the =PATH form",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Registered with or without --confgate, so --strict-markers never trips on it.
    config.addinivalue_line(
        "markers",
        "requirement(*ids): link this test to requirement ids for the confgate "
        "requirement_coverage metric",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Start as early as pytest allows, so import-time lines of conftest-imported code count."""
    options = early_config.known_args_namespace
    gated = bool(getattr(options, "confgate", False))
    if gated:
        separate = _separate_path_value(args)
        if separate is not None:
            raise pytest.UsageError(separate)
        from pytest_confgate.collect.coverage import early_restart

        restart = early_restart.needed(early_config)
        if restart is not None:  # a measured module ran unmeasured: start again, measured
            early_restart.restart(early_config, restart)
    # The outcome stream of a run we started (issue 34), claimed once no restart can follow:
    # the process that claims it is the one that runs the tests.
    stream = None
    if not hasattr(early_config, "workerinput"):
        from pytest_confgate.outcomes import OutcomeStream, claim

        channel = claim()
        if channel is not None:
            stream = OutcomeStream(channel)
            early_config.pluginmanager.register(stream)
    if not gated:
        return
    from pytest_confgate.collect import cache_trust

    # Before any conftest: cache entries changed from here on must be the gate's own.
    # An xdist worker (execnet starts it as `python -c`) runs after its controller imported the
    # conftests; a pytest merely started inside a worker inherits the variable, not that past.
    worker = bool(os.environ.get("PYTEST_XDIST_WORKER")) and sys.argv[:1] == ["-c"]
    cache_trust.begin(cache_trust.project_code_since_ns(parent_too=worker))
    from pytest_confgate.exceptions import ConfgateError

    try:
        gate = _GatePlugin.create(early_config, options)
    except ConfgateError as exc:
        from pytest_confgate.collect.runtime_audit import stop_all

        stop_all()
        problems = getattr(exc, "problems", None) or [str(exc)]
        raise pytest.UsageError(*problems) from None
    early_config.pluginmanager.register(gate, _PLUGIN_NAME)
    if stream is not None:  # a ranked candidate's gate run: its end names the report
        stream.hold_end()
        gate.outcome_stream = stream
    gate.begin()


PATH_OPTIONS = (
    "--confgate-config", "--confgate-report", "--confgate-compare", "--confgate-coverage-data"
)
"""Options that take a path: only their ``--option=PATH`` form is accepted."""


def _separate_path_value(args: list[str]) -> str | None:
    """Why ``--confgate-report PATH`` (two arguments) is refused, or None.

    pytest picks its rootdir before it loads plugins, so it reads a separate ``PATH`` as a
    test path: one outside the project moves the rootdir (and with it the ini file, the
    conftests and the report's folder) to a common ancestor. ``--confgate-report=PATH`` is
    one argument and never taken for a test path.
    """
    options = args[: args.index("--")] if "--" in args else args
    for flag, value in itertools.pairwise(options):
        if flag in PATH_OPTIONS:
            return (
                f"{flag} {value}: write {flag}={value} (one argument): pytest reads a "
                "separate path as a test path when it picks its rootdir, before plugins load"
            )
    return None


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while the gate's own start-up and finish run (issue 35):
    they allocate tens of thousands of objects that live on (modules, models, the snapshot),
    so collections in between free nothing. The collector is as it was afterwards."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _GatePlugin:
    """Hooks that exist only while the gate is on; all work is delegated to ``GateRun``."""

    def __init__(
        self,
        config: pytest.Config,
        run: GateRun,
        tally: TestTally,
        report_path: Path,
        role: ProcessRole,
    ) -> None:
        self.config = config
        self.run = run
        self.tally = tally
        self.report_path = report_path
        self.role = role
        self.report: GateReport | None = None
        self.error: str | None = None
        self.tests_passed = False
        self._started = time.perf_counter()
        self._cov_failed: str | None = None
        self.channel: Channel | None = None
        self._report_digest: str | None = None
        """The sha256 of the report as this process wrote it (for ``confgate gate``)."""
        """To ``confgate gate``, when it started this run (issue 34): outcomes as they happen."""
        self.audit: Recorder | None = None
        self.modules: Mapping[tuple[str, str], object] = {}
        self.plugins: PluginWatch | None = None
        """Plugins and relabelled reports the project's code adds (``plugin_audit``)."""
        self.watch: TestWatch | None = None
        """Marks added, tests replaced, failures lost, project imports skipped (``tests_audit``)."""
        self._outputs: tuple[object, ...] | None = None
        self.findings_out: Channel | None = None
        """Where this process's run-time findings go as they are recorded: the channel, or an
        xdist worker's own write end of its controller's (``confgate gate`` only)."""
        self.outcome_stream: OutcomeStream | None = None
        """A run rank started (``outcomes``): its end waits for the report, and names it."""
        self._session: pytest.Session | None = None
        """Set once the session finished: the last cleanup decides for it."""

    @classmethod
    @_gc_paused()
    def create(cls, config: pytest.Config, options: Any) -> _GatePlugin:
        from pathlib import Path

        from pytest_confgate.collect.provenance import GitFacts

        git = GitFacts(Path(config.rootpath))  # git's answers come while the rest is imported
        from pytest_confgate.collect.tests import TestTally
        from pytest_confgate.config.loader import load_config
        from pytest_confgate.gate.anchor import Requested, choose_config
        from pytest_confgate.gate.channel import Channel
        from pytest_confgate.gate.engine import GateRun
        from pytest_confgate.gate.roles import ProcessRole, distributed
        from pytest_confgate.report.json_report import resolve_report_path

        channel = Channel.take(os.environ)  # before any conftest is imported
        root = Path(config.rootpath)
        # addopts and PYTEST_ADDOPTS are in `options` too; only the real command line is
        # out of the change's reach (issue 14), so each value says where it came from.
        typed = [str(arg) for arg in config.invocation_params.args]
        requested = Requested(
            base=options.confgate_base,
            base_on_command_line=_typed(typed, "--confgate-base", options.confgate_base),
            config=options.confgate_config,
            config_on_command_line=_typed(typed, "--confgate-config", options.confgate_config),
        )
        # The previous report stays until this run's replaces it (atomically): a run that
        # dies early leaves the last verdict, bound to its own run and commit (provenance).
        # The Action's gate step removes it first, so there only this run's report counts.
        report_path = resolve_report_path(root, options.confgate_report)
        worker = distributed(options) and os.environ.get("PYTEST_XDIST_WORKER")
        # Each finding leaves for confgate gate as it is recorded (issue 34), unfiltered.
        audit = _start_audit(root, None if worker else report_path,
                             channel.finding if channel is not None else None)
        choice = choose_config(requested, os.environ)
        loaded = load_config(root, choice.path)
        run = GateRun(
            loaded,
            root,
            os.environ,
            requested=requested,
            config_choice=choice,
            task=options.confgate_task,
            git=git,
        )
        run.assert_rewriting = _AssertRewriting(config)
        cov_plugin = config.pluginmanager.get_plugin("_cov")  # pytest-cov, if it started first
        role = ProcessRole.at_startup(run, options, os.environ, cov_plugin)
        # pytest-cov's floor (addopts included: known arguments now), the project's even where
        # the gate measures instead; a `--no-cov` turns it off with the rest of pytest-cov.
        cov_fail_under = (None if getattr(options, "no_cov", False)
                          else getattr(options, "cov_fail_under", None))
        run.coverage_fail_under = float(cov_fail_under) if cov_fail_under is not None else None
        plugin = cls(config, run, TestTally(), report_path, role)
        plugin.channel = channel
        plugin.findings_out = channel
        run.supervised = channel is not None  # confgate gate measures the rest (issue 34)
        plugin.audit = audit
        from pytest_confgate.collect.plugin_audit import PluginWatch
        from pytest_confgate.collect.tests_audit import TestWatch

        plugin.plugins = PluginWatch(audit)
        plugin.watch = TestWatch(audit, plugin.plugins)
        return plugin

    @_gc_paused()
    def begin(self) -> None:
        if self.channel is not None:
            self.channel.send("start")
        # pytest runs its cleanups last in, first out, after every pytest_unconfigure: added
        # before any conftest or other plugin adds its own, this one runs last of all.
        self.config.add_cleanup(self._at_last)
        self.role.begin()

    def pytest_configure(self, config: pytest.Config) -> None:
        """Settle the role now that xdist has said who is a worker."""
        self.role.settle(
            is_worker=hasattr(config, "workerinput"),
            distributing=config.getoption("dist", "no") != "no",
        )
        where = getattr(config, "workerinput", {}).get(_FINDINGS_KEY)
        if where is not None and self.audit is not None and self.channel is None:
            self._stream_findings(where, self.audit)

    def _stream_findings(self, where: object, audit: Recorder) -> None:
        """An xdist worker under ``confgate gate``: its findings go to the supervisor as they
        are recorded, through its controller's pipe (those of its start-up first)."""
        from pytest_confgate.gate.channel import Channel

        stream = Channel.reopen(where)
        if stream is None:
            return  # the controller forwards them when this worker ends
        self.findings_out = stream
        audit.on_finding = stream.finding  # first: a finding another thread records now is
        for found in list(audit.findings):  # sent twice at worst, never missed
            stream.finding(found)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.channel is not None:
            node.workerinput[_FINDINGS_KEY] = self.channel.for_workers()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        name = str(getattr(node.gateway, "id", node))
        output = getattr(node, "workeroutput", {})
        known = len(self.run.audit)
        self.role.worker_finished(name, output, failed=error is not None)
        if self.channel is not None and not output.get(_FINDINGS_KEY):
            for found in self.run.audit[known:]:  # the worker could not stream them itself
                self.channel.finding(found)

    @_gc_paused()
    def pytest_sessionstart(self) -> None:
        from pytest_confgate.collect.runtime_snapshot import saved_stderr, snapshot_modules

        self._started = time.perf_counter()
        self._outputs = self._output_identity()
        if self.audit is not None:
            capture = self.config.pluginmanager.get_plugin("capturemanager")
            self.audit.stderr_fd = saved_stderr(capture)
        # After pytest's own configure (legacypath patches its classes then, and undoes it).
        self.modules = snapshot_modules(sys.modules)
        if self.watch is not None:
            self.watch.hook_threads()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.audit is not None:
            self.audit.current_test = nodeid

    def _output_identity(self) -> tuple[object, ...]:
        from pytest_confgate.collect.runtime_snapshot import output_identity

        capture = self.config.pluginmanager.get_plugin("capturemanager")
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        return output_identity(capture, getattr(getattr(reporter, "_tw", None), "_file", None))

    def _check_outputs(self, where: tuple[str, int]) -> None:
        """After each test: pytest's real stdout and stderr are where they were."""
        now = self._output_identity()
        before = self._outputs
        if self.audit is not None and before is not None and not all(
            a is b or a == b for a, b in zip(now, before, strict=True)
        ):
            self.audit.record("runtime_output_redirect", "the real stdout or stderr (pytest's "
                              "saved streams or file descriptors) was changed", (where,))
        self._outputs = now

    def _end_audit(self, *, last: bool, pytest_objects: bool = True) -> None:
        """What the hook saw, plus what it cannot see (patches, plugins, the real output): at
        the session's end, and for a deciding process again at its last cleanup, where it
        stops listening (``last``). That second look leaves pytest's and pluggy's objects out
        (``pytest_objects``): pytest's own cleanups undo what its configure patched there."""
        from pytest_confgate.collect.runtime_audit import RuntimeFinding, stop
        from pytest_confgate.collect.runtime_snapshot import replaced

        audit = self.audit
        if audit is None:
            return
        audit.current_test = None
        self._check_outputs(("(session)", 0))
        if self.plugins is not None:
            self.plugins.sweep(self.config.pluginmanager)
        leave_out = None if pytest_objects else _pytest_own
        for name in replaced(self.modules, sys.modules, leave_out):
            audit.record("runtime_gate_patched", f"{name}: changed during the session", ())
        if not last:
            return
        audit.session_over = True
        if self.watch is not None:
            self.watch.unhook_threads()
        if not stop(audit):
            audit.record("runtime_gate_patched", "the run-time audit was switched off", ())
        out = self.findings_out
        if out is not None and audit.on_finding != out.finding:
            out.finding(RuntimeFinding("runtime_gate_patched", "the run-time audit's stream to "
                                       "confgate gate was switched off", ()))
        self.run.audit += audit.findings

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Around pytest-cov's own wrapper: coverage data it cannot read (a corrupt
        ``.coverage`` that ``--cov-append`` adds to) is coverage evidence that errored, named
        in the report, not pytest's INTERNALERROR traceback."""
        try:
            return (yield)
        except Exception as exc:
            from pytest_confgate.collect.coverage.reporting import unreadable_data

            self._cov_failed = unreadable_data(exc, "pytest-cov")
            if self._cov_failed is None or not self.role.borrow_cov:
                raise
            return True

    def pytest_warning_recorded(self, warning_message: Any, nodeid: str) -> None:
        if self.watch is not None:
            category = getattr(warning_message, "category", None)
            self.watch.warned(str(getattr(category, "__name__", "")), nodeid)

    def _skipped(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        if self.watch is not None and report.skipped and isinstance(report.longrepr, tuple):
            self.watch.skipped(report.nodeid, str(report.longrepr[-1]), str(self.config.rootpath))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._skipped(report)
        if report.failed:
            self.tally.add_collection_error(report.nodeid)
            if self.channel is not None:
                self.channel.send("collect_error", nodeid=report.nodeid)

    def pytest_plugin_registered(self, plugin: object, manager: pytest.PytestPluginManager
                                 ) -> None:
        if self.plugins is not None:
            self.plugins.registered(plugin, manager)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.watch is not None:
            self.watch.collected(session.items)
        if self.channel is not None:
            self.channel.send("collected", n=len(session.items))

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Carry requirement links on the report, so they reach the xdist controller too."""
        ids = [str(i) for mark in item.iter_markers("requirement") for i in mark.args]
        if ids:
            item.user_properties.append((_LINKS_KEY, ids))

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        self.run.between_tests()
        self._check_outputs((location[0], (location[1] or 0) + 1))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        category = str(status[0]) if status else ""
        if report.failed:
            from pytest_confgate.collect.plugin_audit import FAILING_CATEGORIES, counted_category

            if category not in FAILING_CATEGORIES and self.plugins is not None:
                self.plugins.relabelled(report.nodeid, report.when, category,
                                        self.config.pluginmanager)
            category = counted_category(True, str(report.when), category)
        if self.watch is not None:
            self.watch.reported(report)
            self._skipped(report)
        self.tally.add_category(category)
        self.tally.add_phase(report.nodeid, report)
        ids: object = next((v for k, v in report.user_properties if k == _LINKS_KEY), None)
        linked = isinstance(ids, list) and (report.when == "call" or report.outcome != "passed")
        if isinstance(ids, list) and linked:
            self.tally.add_requirement_link([str(i) for i in ids], report.nodeid, report.passed)
        if self.channel is not None:
            self.channel.send("report", cat=category, nodeid=report.nodeid, when=report.when,
                              passed=report.passed, o=report.outcome,
                              xf=hasattr(report, "wasxfail"),
                              links=[str(i) for i in ids] if isinstance(ids, list) and linked
                              else [])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A worker hands its share back now (xdist reads it next); a deciding process keeps
        measuring: code run later (``pytest_terminal_summary``, ``pytest_unconfigure``, a
        ``config.add_cleanup`` callback) counts as under ``coverage run``. It decides at last."""
        self._end_audit(last=not self.role.decides)
        if not self.role.decides:
            output = getattr(session.config, "workeroutput", None)
            self.role.hand_back(output)
            if output is not None:
                output[_FINDINGS_KEY] = self.findings_out is not None
            return
        self._session = session

    @_gc_paused()
    def _at_last(self) -> None:
        """The last thing pytest does (the first cleanup added runs last): stop measuring,
        decide, hand over, and say the verdict after pytest's own summary line; the exit status
        set here is the one pytest returns."""
        from pytest_confgate.collect import cache_trust

        try:
            if self._session is not None:
                self._finish(self._session)
        finally:
            if self.outcome_stream is not None:  # after the report: its digest goes with it
                self.outcome_stream.finish(self._handed_over())
            self.run.stop_tracing()
            self.run.close()
            if self.role.decides:
                self.run.sweep_caches()
            cache_trust.end()

    def _finish(self, session: pytest.Session) -> None:
        self._end_audit(last=True, pytest_objects=False)
        exitstatus = int(session.exitstatus)
        self.run.stop_tracing()
        cov_plugin = session.config.pluginmanager.get_plugin("_cov")
        self.role.gather(getattr(cov_plugin, "cov_controller", None), self._cov_failed)
        plugins = session.config.pluginmanager.get_plugins()
        self.run.plugins.register_modules(
            sorted(plugins, key=lambda p: str(getattr(p, "__name__", "")))
        )
        self.tests_passed = exitstatus == pytest.ExitCode.OK
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        waiting = self.run.waiting_for()
        if waiting and reporter is not None and getattr(reporter, "isatty", False):
            with self._uncaptured():
                reporter.write_line(waiting)  # on a terminal only: a CI log needs no status
        self._decide()
        if self.channel is not None:  # last: the files it names are written and bound to it
            self.channel.send("end", exitstatus=exitstatus, **self._handed_over())
        self._say_digest()
        supervised = self.run.supervised and self.error is None  # confgate gate decides
        if not supervised and not self._passed() and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if reporter is not None:  # `-p no:terminal`: the exit status and the report say it
            with self._uncaptured():
                self._show(reporter)

    def _uncaptured(self) -> contextlib.AbstractContextManager[None]:
        """pytest's real output, not its capture (its own cleanup stops capturing after ours)."""
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if capture is None:
            return contextlib.nullcontext()
        disabled: contextlib.AbstractContextManager[None] = (
            capture.global_and_fixture_disabled()
        )
        return disabled

    def _decide(self) -> None:
        from pytest_confgate.exceptions import ConfgateError, ReportError
        from pytest_confgate.report.json_report import working_tree, write_json_report

        outcomes = self.tally.outcomes(time.perf_counter() - self._started)
        tree = working_tree(self.run.root)  # folders below it are never followed as symlinks
        try:
            data_path = self.config.getoption("confgate_coverage_data")
            if data_path and self.run.supervised:  # the raw data confgate gate analyses
                self.run.hand_over_coverage(self.config.rootpath / data_path)
            self.report = self.run.finish(outcomes, self.tally.links, self.tally.by_test)
            self._report_digest = write_json_report(self.report, self.report_path, within=tree)
            if data_path and not self.run.supervised:
                self.run.write_coverage_data(self.config.rootpath / data_path)
        except ReportError as exc:  # the report cannot be written: nothing to fall back to
            self.error = str(exc)
        except ConfgateError as exc:
            self.error = str(exc)
            self._write_failed_report(outcomes, tree)
        except Exception as exc:  # a bug of ours must still fail closed, not pass or crash
            self.error = _internal_error(exc)
            self._write_failed_report(outcomes, tree)

    def _handed_over(self) -> dict[str, str]:
        """The sha256 of each file ``confgate gate`` reads after this process ended (the
        report, the coverage data), of the bytes as this process wrote them, sent with the
        session's end: code that runs later (an ``atexit`` handler, a process the tests left
        behind, a thread racing the write) cannot change them unseen."""
        written = {"report": self._report_digest, "coverage": self.run.coverage_digest}
        return {name: digest for name, digest in written.items() if digest is not None}

    def _say_digest(self) -> None:
        """For the Action's gate step (issue 29): the digest of the report just written, on
        the real output, so the step can tell a report rewritten after this point."""
        from pytest_confgate.github.action_run import DIGEST_LINE, ENV_DIGEST, report_digest

        if os.environ.get(ENV_DIGEST) != "1":
            return
        try:
            line = DIGEST_LINE + report_digest(self.report_path).encode() + b"\n"
            with self._uncaptured():
                os.write(1, b"\n" + line)  # on a line of its own, after any progress
        except OSError:
            return  # no report, or no output: the step finds no digest and fails closed

    def _write_failed_report(self, outcomes: TestOutcomes, tree: Path) -> None:
        """The gate could not finish: still leave a report, a ``fail`` that says why."""
        from pytest_confgate.exceptions import ConfgateError
        from pytest_confgate.report.json_report import write_json_report

        try:
            failed = self.run.failed_report(outcomes, self.error or "")
            self._report_digest = write_json_report(failed, self.report_path, within=tree)
        except Exception as exc:  # nothing more to fall back to: the error line says it all
            why = str(exc) if isinstance(exc, ConfgateError) else _internal_error(exc)
            self.error = f"{self.error}; no report was written either ({why})"

    def _passed(self) -> bool:
        from pytest_confgate.models import Decision

        return (
            self.error is None
            and self.report is not None
            and (self.report.decision is Decision.PASS)
        )

    def _show(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The confgate block, after pytest's summary line; when the tests passed but the gate
        did not, its last line says so."""
        from pytest_confgate.report.terminal import summary_lines, verdict_line

        terminalreporter.write_sep("-", "confgate")
        if self.run.supervised and self.error is None:  # the verdict is confgate gate's
            terminalreporter.write_line("confgate: measured; confgate gate decides once every "
                                        "process of the run has ended")
            return
        verbosity = int(self.config.getoption("verbose", 0) or 0)
        path = _display_path(self.report_path)
        lines = summary_lines(self.report, path, verbosity=verbosity) if self.report else []
        passed = self._passed()
        for line in lines:
            if line.startswith("confgate: "):
                if self.error is not None:  # no verdict stands when the gate itself failed
                    break
                terminalreporter.write_line(line, green=passed, red=not passed, bold=True)
            else:
                terminalreporter.write_line(line)
        if self.error is not None:
            terminalreporter.write_line(f"confgate: ERROR: {self.error}", red=True, bold=True)
        elif self.report is not None and self.config.getoption("confgate_compare"):
            for line in _comparison(self.report, str(self.config.getoption("confgate_compare"))):
                terminalreporter.write_line(line)
        if not self.tests_passed or passed:
            return
        last = (
            f"confgate: ERROR: the tests passed but the gate could not decide: {self.error}"
            if self.error is not None or self.report is None
            else verdict_line(self.report)
        )
        if last is not None:
            terminalreporter.write_line(last, red=True, bold=True)


def _pytest_own(module: str) -> bool:
    """A module of pytest or pluggy (whose classes pytest's own cleanups may restore)."""
    return module.partition(".")[0] in ("_pytest", "pytest", "pluggy")


def _start_audit(root: Path, report_path: Path | None,
                 on_finding: Callable[[RuntimeFinding], None] | None = None) -> Recorder:
    """The run-time audit (issue 34), before any conftest is imported: from here on, what the
    project's code does to the gate's state, pytest or its own process is recorded."""
    from pytest_confgate.collect.runtime_audit import Recorder, start
    from pytest_confgate.gate.engine import STATE_DIR

    recorder = Recorder(root, root / STATE_DIR, report_path, on_finding=on_finding)
    start(recorder)
    return recorder


def _internal_error(exc: Exception) -> str:
    if isinstance(exc, MemoryError):
        return (
            "the gate ran out of memory (MemoryError) and fails closed; give the job more "
            "memory, or cap what the tools print (max_output_bytes)"
        )
    return (
        f"internal error in pytest-confgate ({type(exc).__name__}: {exc}); "
        "the gate fails closed. Please report it with this message."
    )


class _AssertRewriting:
    """pytest's assertion rewriting for the modules the gate compiles with line probes.

    pytest rewrites the asserts of test modules, conftest files and every module of a package
    that is itself a pytest plugin; the gate then compiles such a module once, rewritten and
    probed, instead of leaving it unmeasured.
    """

    def __init__(self, config: pytest.Config) -> None:
        from pytest_confgate.collect.coverage.assert_rewrite import variant

        self._config = config
        try:
            hook = bool(config.getini("enable_assertion_pass_hook"))
        except (ValueError, KeyError):  # a pytest without the setting
            hook = False
        self.variant = variant(pytest.__version__, hook)

    def claims(self, loader: object) -> bool:
        try:
            from _pytest.assertion.rewrite import AssertionRewritingHook
        except ImportError:  # a pytest that moved it: the module is reported unmeasured
            return False
        return isinstance(loader, AssertionRewritingHook)

    def rewrite_tree(self, tree: ast.Module, source: bytes, path: str) -> None:
        from _pytest.assertion.rewrite import rewrite_asserts

        rewrite_asserts(tree, source, path, self._config)

    def record(self, loader: object, module: str, path: str) -> None:
        from pathlib import Path

        names = getattr(loader, "_rewritten_names", None)
        if isinstance(names, dict):
            names[module] = Path(path)  # as the hook records it: no "already imported" warning


def _typed(args: list[str], option: str, value: str | None) -> bool:
    """Whether ``value`` is what ``option`` got on the real command line (its last use wins,
    as in argparse; ``--`` ends the options). Addopts come first, so a typed value wins."""
    typed: str | None = None
    for index, arg in enumerate(args):
        if arg == "--":
            break
        if arg == option and index + 1 < len(args):
            typed = args[index + 1]
        elif arg.startswith(f"{option}="):
            typed = arg.partition("=")[2]
    return value is not None and typed == value


def _comparison(report: GateReport, base_path: str) -> list[str]:
    """``--confgate-compare``: each metric against the base's report; a bad file is one line."""
    from pathlib import Path

    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.compare import comparison_lines
    from pytest_confgate.report.writers import load_report

    try:
        return comparison_lines(report, load_report(Path(base_path)), base_path)
    except ReportError as exc:
        return [f"confgate: --confgate-compare: {exc}"]


def _display_path(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
