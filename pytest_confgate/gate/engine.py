"""One evaluation of the gate: collect -> score -> decide -> report (one way).

The front doors (pytest plugin, CLI) create a ``GateRun``, call ``start`` when the tests
start, feed test outcomes, and call ``finish`` for the ``GateReport``. Lint and security run
in a helper process while the tests run, so their cost hides behind the tests.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_confgate import syntax_tree
from pytest_confgate.collect.provenance import GitFacts, collect_provenance
from pytest_confgate.collect.sources import resolve_sources, without_tests
from pytest_confgate.config import (
    CoverageMetricConfig,
    IntegrityMetricConfig,
    LlmJudgeMetricConfig,
    MetricConfig,
)
from pytest_confgate.config.loader import LoadedConfig
from pytest_confgate.config.metrics import effective_metrics
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.gate.agent_evidence import AgentEvidence
from pytest_confgate.gate.anchor import ConfigChoice, Requested
from pytest_confgate.gate.change import (
    applied_tier,
    is_source_file,
    load_changes,
    machinery_notes,
    trusted_config,
)
from pytest_confgate.gate.collectors import (
    Evidence,
    Links,
    background_configs,
    change_analysis,
    collect_metric,
    load_requirement_files,
)
from pytest_confgate.gate.loop_evidence import check_task, loop_metrics_for, loop_only_marked
from pytest_confgate.gate.plugin_host import PluginHost
from pytest_confgate.gate.policy import decide
from pytest_confgate.gate.tiers import raise_for_evidence
from pytest_confgate.gate.waivers import apply_waivers, waiver_report
from pytest_confgate.models import (
    Condition,
    Decision,
    EvalMetric,
    GateReport,
    MetricStatus,
    Signoffs,
    TestOutcomes,
)
from pytest_confgate.paths import printable
from pytest_confgate.report.display import line_ranges
from pytest_confgate.report.json_report import printable_report

if typing.TYPE_CHECKING:
    # Imported where they are used: a run imports only what its metrics need (issue 26).
    from pytest_confgate.collect.coverage.line_probes import AssertRewriting
    from pytest_confgate.collect.coverage.session import CoverageSession
    from pytest_confgate.collect.pytest_settings import PytestCov
    from pytest_confgate.collect.runtime_audit import RuntimeFinding
    from pytest_confgate.gate.background import BackgroundTools
    from pytest_confgate.models import ConfidenceResult

_TOOL_NAMES = {"lint_score": "ruff", "security_score": "bandit"}
_UNJUDGED = {"passed": None, "limit": None}
STATE_DIR = ".confgate"
"""The gate's state in the project: caches and runs, never the change's to write."""
SUPERVISED_KINDS = frozenset({"test_coverage", "lint_score", "security_score", "llm_judge",
                              "test_integrity", "requirement_coverage", "checklist_completion"})
"""Metrics ``confgate gate`` measures in its own process (issue 34): a supervised test process
leaves them out (``GateRun.supervised``) and its word on them is never read. That includes
``test_integrity``'s static findings and the requirement links: a test that reached the gate's
run through pytest's plugin manager could change what the test process reported."""
READ_BEFORE_THE_RUN = frozenset({"checklist_completion"})
"""Metrics whose input the run's code could rewrite (a checklist file in the checkout, the
event file): ``confgate gate`` reads them before the go (``GateRun.read_before_the_run``)."""
_ELSEWHERE = "measured by confgate gate outside the test process"


class GateRun:
    """The gate for one test session; not reusable."""

    def __init__(
        self,
        loaded: LoadedConfig,
        root: Path,
        environ: Mapping[str, str],
        *,
        plugins: PluginHost | None = None,
        requested: Requested | None = None,
        config_choice: ConfigChoice | None = None,
        task: str | None = None,
        git: GitFacts | None = None,
    ) -> None:
        """``git``: the provenance's git answers, asked for earlier in the start-up."""
        self.root = root.resolve()
        self.task = task
        self.environ = dict(environ)
        # Before any test runs: a test that commits or writes files cannot move it.
        now = dt.datetime.now(dt.UTC)
        self.provenance = collect_provenance(self.root, self.environ, now, git)
        requested = requested or Requested()
        choice = config_choice or ConfigChoice(None, "found in the rootdir")
        check_task(loaded.config, task, str(loaded.path or "the configuration"))
        self.change = load_changes(self.root, loaded.config, requested, self.environ)
        loaded, self.trust = trusted_config(self.root, loaded, self.change, choice)
        self.loaded = loaded
        self.config = loaded.config
        # test_integrity joins only when git could diff the change: a base it cannot diff
        # already blocks the gate, once (``_unverified_change``).
        base_known = self.change.changes is not None
        metrics = effective_metrics(loaded.config.gate.metrics, base_known=base_known)
        self.gate = loaded.config.gate.model_copy(update={"metrics": metrics})
        self.deciding = self.gate
        """What decides: the gate's own metrics; ``self.gate`` also collects the loop's."""
        self.loop_only = loop_metrics_for(loaded.config, task, metrics)
        if self.loop_only:
            self.gate = self.gate.model_copy(update={"metrics": [*metrics, *self.loop_only]})
        self._analysis = change_analysis(self.gate, self.root, self.change)
        self.failing_before: list[str] = []
        """Test ids pytest's cache says failed before this run: the differential run runs
        their modules too (read now, before any test rewrites the cache)."""
        if self._analysis is not None:
            from pytest_confgate.collect.tamper.differential import known_failing

            self.failing_before = known_failing(self.root)
        self.machinery = machinery_notes(self.root, self.change, self.gate.protected_paths)
        self.tier, self.tier_reason = applied_tier(
            self.config, self.change, self.trust, self.machinery
        )
        self.sources = resolve_sources(self.root, self.config.source)
        # Auto-detected packages may hold their own tests; ruff and bandit leave them out
        # (coverage.py omits them), but a configured `source:` is taken as written.
        detected = self.config.source is None
        self.checked_sources = without_tests(self.sources) if detected else self.sources
        self._requirements = load_requirement_files(self.gate.metrics, self.root)
        self._read_early: dict[int, EvalMetric] = {}
        self.agents = AgentEvidence(self.config, self.root, self.environ, self.change, loaded.path)
        self.agents.preflight()  # a missing key or SDK stops the run before any test
        if plugins is None:
            plugins = PluginHost()
            plugins.load_entry_points()
        self.plugins = plugins
        self._coverage: CoverageSession | None = None
        self.expected_sources: dict[str, str | None] | None = None
        """``confgate gate``: each measured file's sha256 before any test ran (by realpath)."""
        self._tools: BackgroundTools | None = None
        self.assert_rewriting: AssertRewriting | None = None
        """pytest's assertion rewriting, for the modules line probes compile (from the plugin)."""
        self.coverage_fail_under: float | None = None
        """pytest-cov's ``--cov-fail-under`` (from the plugin): the coverage floor when the
        configuration sets none, as coverage.py's ``fail_under`` is."""
        self.pytest_cov: PytestCov | None = None
        """``confgate gate``: what pytest-cov measures in the test process (its ``--cov``,
        ``--cov-branch`` and ``--cov-config``), read from pytest's words before it starts."""
        self.audit: list[RuntimeFinding] = []
        """What the run-time audit saw in this process and the xdist workers (the plugin's);
        in ``confgate gate``, what the test process streamed as it was recorded."""
        self.coverage_unsaved: str | None = None
        """Supervised: why this process had no coverage data to hand over (its error)."""
        self.coverage_digest: str | None = None
        """Supervised: the sha256 of the coverage data handed over, as written."""
        self.supervised = False
        """``confgate gate`` started this test process (the plugin says so): coverage figures,
        ruff, bandit, the judge, the confidence and the differential run are the supervisor's
        (``SUPERVISED_KINDS``), so this process leaves them out and only hands over its
        coverage data."""

    def start(self) -> None:
        """A whole run in this process: tools in the background, then coverage tracing."""
        self.start_tools()
        self.start_coverage()

    def start_tools(self, kinds: Collection[str] | None = None) -> None:
        """Launch lint and security in a helper process; they finish while the tests run.

        ``kinds``: only these metric types (the supervisor runs ruff and bandit itself)."""
        configs = background_configs(self.gate.metrics, self.checked_sources)
        if self.supervised:
            configs = [c for c in configs if c.type not in SUPERVISED_KINDS]
        if kinds is not None:
            configs = [c for c in configs if c.type in kinds]
        if configs and self._tools is None:
            from pytest_confgate.gate.background import BackgroundTools

            self._tools = BackgroundTools(
                configs, self.root, self.checked_sources, self._cache_dir(), self._analysis
            )
            self._tools.start()

    def tools_done(self) -> bool:
        """Whether ruff and bandit have finished reading (or never had to start)."""
        return self._tools is None or self._tools.running_for() is None

    def analyse_change_beside(self) -> None:
        """Start the tamper analysis of the change in a thread of its own: it reads git and
        the snapshot the change was read with, never the files the run may rewrite, so it
        need not wait for the tests (what needs it after the run takes it, or waits for it).

        Not where two threads' parses can break each other (``syntax_tree``): coverage.py
        parses in the main thread after the run, without our lock; the analysis then runs
        when it is first needed."""
        analysis = self._analysis
        if analysis is None or analysis.changes is None or analysis.changes.head_tree is None:
            return
        if syntax_tree.PARSES_SHARE_STATE:
            return
        import threading

        def analyse() -> None:
            with contextlib.suppress(EvidenceError):  # kept in the analysis; said where used
                analysis.report()

        threading.Thread(target=analyse, name="confgate-change-analysis", daemon=True).start()

    def between_tests(self) -> None:
        """A test has finished: a moment for the coverage engine's housekeeping."""
        if self._coverage is not None:
            self._coverage.between_tests()

    def close(self) -> None:
        """The session is over, finished or not: stop the helper if it still runs."""
        if self._tools is not None:
            self._tools.close()

    def start_coverage(self) -> None:
        """Trace the sources in this process (a serial run, or one xdist worker's share)."""
        session = self._new_coverage()
        if session is not None:
            self._coverage = session
            session.start()

    def discard_coverage(self) -> None:
        """Undo ``start_coverage``: this process is not the one whose tracing counts."""
        if self._coverage is not None:
            self._coverage.discard()
            self._coverage = None

    def coverage_payload(self) -> bytes | None:
        """This worker's coverage data for the controller (``None``: nothing was traced)."""
        return self._coverage.payload() if self._coverage is not None else None

    def combine_coverage(
        self,
        parts: dict[str, bytes],
        missing: list[str],
        engines: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """As the xdist controller: measure from every worker's data, or fail closed."""
        session = self._new_coverage()
        if session is not None:
            session.expected_sources = self.expected_sources
            session.combine(parts, missing, engines)
            self._coverage = session

    def measure_coverage(self) -> None:
        """Analyse the combined data now; the coverage metrics read the figures later. Under
        ``confgate gate`` the measured files are read only as ``expected_sources`` has them,
        so this may run while the test process winds down."""
        if self._coverage is not None:
            self._coverage.metric()

    def coverage_engine(self) -> dict[str, Any] | None:
        """Which engine this worker measured with, for the controller's report."""
        return self._coverage.engine_note() if self._coverage is not None else None

    def adopt_coverage(self, cov: object, origin: str, failed: str | None = None) -> None:
        """Report from another plugin's coverage (pytest-cov) instead of tracing twice;
        ``failed``: why its data could not be read (the metric is then an evidence error)."""
        session = self._new_coverage()
        if session is not None:
            session.adopt(cov, origin, failed)
            self._coverage = session

    def _new_coverage(self) -> CoverageSession | None:
        """One measurement for every ``test_coverage`` entry (a project and a patch figure).

        Only the changed files are measured when every entry judges changed lines only;
        branches when an entry asks, none when all refuse, else coverage.py's setting.
        """
        configs = [m for m in self.gate.metrics if isinstance(m, CoverageMetricConfig)]
        if not configs:
            return None
        only = None
        if all(c.scope == "changed" for c in configs) and self.change.changes is not None:
            only = [
                self.root / path
                for path in sorted(self.change.changes.paths())
                if is_source_file(self.root / path, self.checked_sources)
            ]
        from pytest_confgate.collect.coverage.session import CoverageSession

        said = [c.branch for c in configs if "branch" in c.model_fields_set]
        branch = any(said) if said else None
        return CoverageSession(
            self.root,
            self.sources,
            branch=branch,
            only=only,
            own_sources=self.config.source is not None,
            omit_tests=self.config.source is None,
            cache_dir=self._probe_cache(),
            rewriting=self.assert_rewriting,
            fail_under=self.coverage_fail_under,
            pytest_cov=self.pytest_cov,
        )

    def _probe_cache(self) -> Path | None:
        cache = self._cache_dir()
        return cache / "probes" if cache is not None else None

    def hand_over_coverage(self, path: Path) -> None:
        """Supervised: write what this run measured (coverage.py's serialized data, lines and
        arcs only) for ``confgate gate`` to analyse; when nothing was measured, remember why
        (``coverage_unsaved``) for the stand-in metric."""
        payload = self.coverage_payload()
        if payload is None:
            if self._coverage is not None:
                self.coverage_unsaved = self._coverage.metric().reason
            return
        try:
            path.write_bytes(payload)
        except OSError as exc:
            self.coverage_unsaved = f"the test process could not write its coverage data: {exc}"
            return
        import hashlib

        self.coverage_digest = hashlib.sha256(payload).hexdigest()

    def write_coverage_data(self, path: Path) -> None:
        """Save what this run measured as a coverage.py data file (``confgate merge``)."""
        if self._coverage is None:
            raise EvidenceError(
                f"--confgate-coverage-data {path}: this run measured no coverage; add a "
                "test_coverage metric to the configuration"
            )
        self._coverage.save(path)

    def waiting_for(self) -> str | None:
        """``confgate: waiting for ruff, bandit (12 s)`` while they still run after the tests,
        so the silence after ``[100%]`` is explained; None when nothing is left to wait for."""
        seconds = self._tools.running_for() if self._tools is not None else None
        if self._tools is None or seconds is None:
            return None
        names = ", ".join(_TOOL_NAMES.get(kind, kind) for kind in self._tools.helper_kinds)
        return f"confgate: waiting for {names} ({seconds:.0f} s)"

    def stop_tracing(self) -> None:
        """Stop coverage as soon as the tests end, so reporting is not traced."""
        if self._coverage is not None:
            self._coverage.stop()

    def _evidence(
        self, tests: TestOutcomes, links: Links | None, by_test: Mapping[str, str] | None
    ) -> Evidence:
        return Evidence(
            root=self.root,
            environ=self.environ,
            sources=self.checked_sources,
            change=self.change,
            tests=tests,
            links=links or {},
            coverage=self._coverage,
            background=self._tools,
            requirements=self._requirements,
            analysis=self._analysis,
            audit=list(self.audit),
            by_test=by_test or {},
            failing_before=list(self.failing_before),
        )

    def _elsewhere(self, config: MetricConfig) -> EvalMetric:
        """A supervised test process's stand-in for a metric the supervisor measures."""
        details: dict[str, Any] = {"measured_by": "confgate gate"}
        if config.type == "test_coverage":
            details.update(engine_note=self.coverage_engine(),
                           cov_fail_under=self.coverage_fail_under,
                           unsaved=self.coverage_unsaved)
        return EvalMetric(type=config.type, status=MetricStatus.UNAVAILABLE, reason=_ELSEWHERE,
                          details=details, weight=config.weight, threshold=config.min)

    def _judged(self, measured: dict[int, EvalMetric]) -> dict[int, EvalMetric]:
        """The judge reads the other measurements, so it is asked last (and only once)."""
        for index, config in enumerate(self.gate.metrics):
            if isinstance(config, LlmJudgeMetricConfig):
                judged = self.agents.judge(config, list(measured.values()))
                measured[index] = judged.model_copy(
                    update={"weight": config.weight, "threshold": config.min}
                )
        return measured

    def changed_paths(self) -> frozenset[str] | None:
        """The files the change touched, as settled at start-up (None: no base known). Under
        ``confgate gate`` this is the supervisor's own diff, made before any test ran: the
        run-time findings are placed against it, never against what the test process says."""
        changes = self.change.changes
        return changes.paths() if changes is not None else None

    def audit_metric(self) -> EvalMetric | None:
        """``test_integrity`` with the run-time findings alone, for a report the test process
        left no evidence for (no session end, no readable report); None when the gate has no
        ``test_integrity`` or no finding counts."""
        from pytest_confgate.collect.integrity import with_audit

        config = next((c for c in self.gate.metrics if isinstance(c, IntegrityMetricConfig)),
                      None)
        if config is None:
            return None
        blank = EvalMetric(type="test_integrity", value=1.0, status=MetricStatus.OK,
                           details={"findings": 0, "by_rule": {}, "items": []})
        metric = with_audit(blank, config, self.audit, self.changed_paths())
        if not metric.details.get("items"):
            return None
        return metric.model_copy(update={**_UNJUDGED, "weight": config.weight})

    def supervisor_metrics(
        self,
        child: Sequence[EvalMetric],
        tests: TestOutcomes,
        links: Links,
        by_test: Mapping[str, str],
    ) -> tuple[list[EvalMetric], list[dict[str, Any]], ConfidenceResult | None]:
        """``confgate gate``'s own measurements over the test process's metrics (``child``,
        in the configuration's order, then plugins'): coverage from the data the test process
        handed over (``combine_coverage`` first), ruff and bandit from this process's helper,
        the judge and the confidence asked here, the differential run and the replay run
        here against the outcomes counted here, the run-time findings streamed (``audit``)
        placed against the change's files settled here. Returns the metrics with waivers applied,
        the waivers' report and the confidence. Raises ``EvidenceError`` when ``child`` does
        not list the configured metrics."""
        self.stop_tracing()
        evidence = self._evidence(tests, links, by_test)
        if [m.type for m in child[: len(self.gate.metrics)]] != [
            c.type for c in self.gate.metrics
        ]:
            raise EvidenceError("the test process's report does not list the configured metrics")
        measured: dict[int, EvalMetric] = {}
        # test_integrity last: its differential run and replay run the change's code again,
        # and nothing read from the working tree (coverage.py's analysis) may come after it
        order = sorted(enumerate(self.gate.metrics),
                       key=lambda pair: isinstance(pair[1], IntegrityMetricConfig))
        for index, config in order:
            if isinstance(config, LlmJudgeMetricConfig):
                continue
            if index in self._read_early:
                measured[index] = self._read_early[index]
            elif config.type in SUPERVISED_KINDS:
                measured[index] = collect_metric(config, evidence)
            else:
                measured[index] = child[index]
        measured = self._judged(measured)
        ours = [measured[index] for index in range(len(self.gate.metrics))]
        metrics, waivers, _ = self._waive([*ours, *child[len(ours):]])
        self.close()
        _, counted = loop_only_marked(metrics, len(self.deciding.metrics),
                                      len(self.loop_only), self.task)
        return metrics, waivers, self.agents.confidence(self._listed(counted))

    def finish(
        self,
        tests: TestOutcomes,
        links: Links | None = None,
        by_test: Mapping[str, str] | None = None,
    ) -> GateReport:
        """Gather every metric, apply the policy and build the report.

        ``links`` maps requirement ids to the (test id, passed) pairs of linked tests;
        ``by_test`` each test id to its outcome (``outcomes.phase_outcome``).
        """
        self.stop_tracing()
        evidence = self._evidence(tests, links, by_test)
        measured = {
            index: self._elsewhere(config)
            if self.supervised and config.type in SUPERVISED_KINDS
            else collect_metric(config, evidence)
            for index, config in enumerate(self.gate.metrics)
            if not isinstance(config, LlmJudgeMetricConfig)
        }
        if self.supervised:
            measured.update({index: self._elsewhere(config)
                             for index, config in enumerate(self.gate.metrics)
                             if isinstance(config, LlmJudgeMetricConfig)})
        else:
            measured = self._judged(measured)
        metrics = [measured[index] for index in range(len(self.gate.metrics))]
        metrics, waivers, expired = self._waive(metrics)
        self.close()
        metrics += self._plugin_metrics(metrics, tests)
        first = len(self.deciding.metrics)  # the loop's entries come after the gate's own
        metrics, counted = loop_only_marked(metrics, first, len(self.loop_only), self.task)
        tier, tier_reason = raise_for_evidence(self.tier, self.tier_reason, counted)
        from pytest_confgate.collect.signoffs import collect_signoffs

        found = collect_signoffs(self.environ, self.gate.policy.signoff.approvers)
        extra = self.plugins.extra_conditions(
            metrics=list(counted), tests=tests, tier=tier, config=self.config
        )
        extra += self.plugins.problems + expired + self._unverified_change()
        # Advisory: it never changes the decision, only whether a pass may auto-advance. It
        # is the mean of what the user listed: the test_integrity the gate adds on its own
        # (a base known, the metric not listed) decides, but never moves that number.
        confidence = None if self.supervised else self.agents.confidence(self._listed(counted))
        met = confidence is not None and confidence.advisory is not None
        verdict = decide(
            self.deciding, tier, counted, tests, found, confidence_met=met, extra=extra
        )
        _, needed, _ = self.gate.policy.tier(tier)
        # The policy judged the counted metrics; the loop's own entries are shown unjudged.
        verdicts = {id(m): shown for m, shown in zip(counted, verdict.metrics, strict=True)}
        report = GateReport(
            **self.described(),
            risk_tier=tier,
            risk_reason=tier_reason,
            waivers=waivers,
            decision=verdict.decision,
            reasons=verdict.reasons,
            auto_advance=verdict.auto_advance,
            metrics=[verdicts.get(id(m)) or m.model_copy(update=_UNJUDGED) for m in metrics],
            conditions=verdict.conditions,
            tests=tests,
            confidence=confidence,
            signoffs=found.model_copy(
                update={"required": needed, "approvers": self.gate.policy.signoff.approvers}
            ),
            provenance=self.provenance,
        )
        report = printable_report(report)  # names that are not UTF-8, spelled for people
        self.plugins.gate_finished(report)
        return report

    def failed_report(self, tests: TestOutcomes, error: str) -> GateReport:
        """A ``fail`` that says why, when the gate itself could not finish (a bug, a
        ``MemoryError``): built from what start-up settled, so it needs almost no memory, and
        bound to this run, so ``confgate github publish`` shows the reason, not "no report"."""
        message = printable(f"the gate could not finish: {error}")
        return GateReport(
            tool_version=_tool_version(),
            project=printable(self._project()),
            generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            config_file=self._config_name(),
            config_passed_over=list(self.loaded.passed_over),
            risk_tier=self.tier,
            risk_reason=printable(self.tier_reason),
            decision=Decision.FAIL,
            reasons=[message],
            auto_advance=False,
            metrics=[],
            conditions=[Condition(metric="gate", name="finished", passed=False, message=message)],
            tests=tests,
            signoffs=Signoffs(),
            provenance=self.provenance,
        )

    def _listed(self, metrics: list[EvalMetric]) -> list[EvalMetric]:
        if self.config.gate.metric("test_integrity") is not None:
            return metrics
        return [m for m in metrics if m.type != "test_integrity"]

    def _unverified_change(self) -> list[Condition]:
        """A change is being judged but git cannot say what it touched: fail closed.

        Without the diff there is no telling whether the change edits the gate's own
        configuration, and a change must never be able to relax its gate.
        """
        view = self.change
        if view.base_ref is None or view.changes is not None:
            return []
        return [
            Condition(
                metric="change",
                name="evidence",
                passed=False,
                message=f"change: cannot verify that the change leaves the gate's configuration "
                f"alone: {view.error}",
            )
        ]

    def _waive(
        self, metrics: list[EvalMetric]
    ) -> tuple[list[EvalMetric], list[dict[str, Any]], list[Condition]]:
        """Apply active waivers; expired ones excuse nothing and say so in the reasons."""
        waivers = self.gate.policy.waivers
        if not waivers:
            return metrics, [], []
        today = dt.datetime.now(dt.UTC).date()
        excused: dict[int, int] = {}
        waived = []
        for metric in metrics:
            metric, counts = apply_waivers(metric, waivers, today)
            for index, count in counts.items():
                excused[index] = excused.get(index, 0) + count
            waived.append(metric)
        report = waiver_report(waivers, excused, today)
        expired = [
            Condition(
                metric="waiver",
                name="waiver_expired",
                passed=False,
                blocking=False,
                message=f"waiver for {w['rule']} ({', '.join(w['paths'])}) expired on "
                f"{w['expires']}: it excuses nothing any more",
            )
            for w in report
            if w["status"] == "expired"
        ]
        return waived, report, expired

    def _plugin_metrics(self, ours: list[EvalMetric], tests: TestOutcomes) -> list[EvalMetric]:
        """Extra evidence from plugins; a plugin cannot replace a built-in metric."""
        taken = {m.type for m in ours}
        extra = []
        for metric in self.plugins.collect_metrics(root=self.root, config=self.config, tests=tests):
            if metric.type in taken:
                self.plugins.problems.append(
                    Condition(
                        metric="plugin",
                        name="plugin",
                        passed=False,
                        message=f"a plugin returned a second {metric.type!r} metric; "
                        "plugins add evidence, they cannot replace it",
                    )
                )
                continue
            taken.add(metric.type)
            extra.append(metric)
        return extra

    def sweep_caches(self) -> list[str]:
        """At the end of the run: delete cache entries the change's code wrote or changed
        while it ran, so no later run reads them (``collect.cache_trust``)."""
        cache = self._cache_dir()
        if cache is None or not cache.is_dir():
            return []
        from pytest_confgate.collect.cache_trust import sweep

        if self.supervised:  # ruff's, bandit's and the analyses are the supervisor's to sweep
            return sweep(cache / "probes")
        return sweep(cache)

    def sweep_evidence_caches(self) -> list[str]:
        """As ``confgate gate``: delete the entries it reads (ruff's, bandit's, coverage.py's
        analyses) that changed while the tests ran and that it did not write."""
        cache = self._cache_dir()
        if cache is None or not cache.is_dir():
            return []
        from pytest_confgate.collect.cache_trust import sweep
        from pytest_confgate.collect.coverage.analysis import ANALYSES
        from pytest_confgate.gate.collectors import CACHED

        removed = sweep(cache / "probes" / ANALYSES)
        for tool in sorted(set(CACHED.values())):
            removed += sweep(cache / f"{tool}.json")
        return removed

    def _cache_dir(self) -> Path | None:
        """``.confgate/cache`` in the project, kept out of git; ``None`` if it cannot exist.

        Nor when the change under review writes into ``.confgate/``: entries it committed
        would be read as the gate's own (instrumented code, coverage.py's analyses, the
        tools' findings). The run then measures everything afresh, and the machinery rule
        names the files.
        """
        changes = self.change.changes
        if changes is not None and any(
            STATE_DIR in PurePosixPath(path).parts for path in changes.paths()
        ):
            return None
        state = self.root / STATE_DIR
        try:
            state.mkdir(exist_ok=True)
            ignore = state / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Written by pytest-confgate: caches and runs.\n*\n")
        except OSError:
            return None  # a read-only checkout only costs speed
        return state / "cache"

    def _project(self) -> str:
        return (
            self.config.project
            or _pyproject_name(self.root)
            or self.environ.get("GITHUB_REPOSITORY")
            or self.root.name
        )

    def _config_name(self) -> str | None:
        path = self.loaded.path
        if path is None:
            return None
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def read_before_the_run(self) -> None:
        """``confgate gate``, before any code of the change runs: measure what the run could
        rewrite the input of (``READ_BEFORE_THE_RUN``); ``supervisor_metrics`` takes these."""
        evidence = self._evidence(TestOutcomes(), None, None)
        self._read_early = {index: collect_metric(config, evidence)
                            for index, config in enumerate(self.gate.metrics)
                            if config.type in READ_BEFORE_THE_RUN}

    def described(self) -> dict[str, Any]:
        """What a report says about the run itself: the tool, the project, the configuration
        that judged and the change (``confgate gate`` writes its own, never the test
        process's)."""
        return {
            "tool_version": _tool_version(),
            "project": self._project(),
            "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "config_file": self._config_name(),
            "config_passed_over": list(self.loaded.passed_over),
            "change": self._change_summary(),
        }

    def _change_summary(self) -> dict[str, object] | None:
        view = self.change
        if view.base_ref is None and view.changes is None:
            return None
        summary: dict[str, object] = {"base_ref": view.base_ref, "error": view.error}
        if view.changes is not None:
            summary["merge_base"] = view.changes.merge_base
            summary["files"] = [c.path for c in view.changes.files][:500]
            summary["lines"] = {
                c.path: line_ranges(c.added_lines)
                for c in view.changes.files[:500]
                if c.status != "deleted" and c.added_lines
            }
        summary.update(view.describe())
        summary.update(config=self.trust.config, config_source=self.trust.source)
        summary["ignored"] = [*view.base.ignored, *self.trust.ignored]
        summary["machinery"] = self.machinery
        summary["config_changed"] = self.trust.edits_config is not None
        return summary


def _pyproject_name(root: Path) -> str | None:
    """``[project].name`` of ROOT's pyproject.toml: the name people know the project by."""
    from pytest_confgate.config.textfile import tomllib

    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    if not isinstance(name, str) or not name.strip():
        return None
    return name.strip()[:200]


def _tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-confgate")
    except PackageNotFoundError:
        return "0+unknown"
