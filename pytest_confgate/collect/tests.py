"""Tally test outcomes into ``test_pass_rate``, counted as pytest's own summary line counts.

The plugin feeds the category pytest gives each report, so this module needs no pytest
import and the same tally serves ``confgate merge``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_confgate.models import EvalMetric, MetricStatus, TestOutcomes
from pytest_confgate.outcomes import phase_outcome

_CATEGORIES = {
    "passed": "passed",
    "failed": "failed",
    "error": "errors",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
}


@dataclass
class TestTally:
    """Mutable counter filled while the tests run; frozen into ``TestOutcomes`` at the end."""

    __test__ = False

    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("passed", "failed", "errors", "skipped", "xfailed", "xpassed"), 0
        )
    )

    def add_category(self, category: str) -> None:
        """Count one report by the category pytest's own summary puts it in.

        The plugin asks pytest (``pytest_report_teststatus``) for the category, as the
        terminal reporter does, so subtests, xfails and plugins' own statuses are counted
        exactly as the ``N passed, M failed`` line counts them. ``""`` (a passing setup or
        teardown) and categories that are not tests (``subtests passed``) count nothing.
        """
        key = _CATEGORIES.get(category)
        if key is not None:
            self.counts[key] += 1

    links: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    """Requirement id -> (test node id, passed) for ``@pytest.mark.requirement`` tests."""

    def add_requirement_link(self, ids: list[str], nodeid: str, passed: bool) -> None:
        """Record that a test linked to ``ids`` passed or not (its last verdict wins)."""
        for requirement in ids:
            tests = self.links.setdefault(requirement, [])
            tests[:] = [entry for entry in tests if entry[0] != nodeid]
            tests.append((nodeid, passed))

    by_test: dict[str, str] = field(default_factory=dict)
    """Test id (or module, for a collection error) -> its outcome so far
    (``outcomes.phase_outcome``): the differential run compares test by test."""

    def add_phase(self, nodeid: str, report: Any) -> None:
        """Record what one phase report (``when``, ``passed``/``failed``/``skipped``, maybe
        ``wasxfail``) makes of its test's outcome."""
        outcome = phase_outcome(report, self.by_test.get(nodeid))
        if outcome is not None:
            self.by_test[nodeid] = outcome

    def add_collection_error(self, nodeid: str | None = None) -> None:
        """A module that failed to import or collect counts as an error, as pytest says."""
        self.counts["errors"] += 1
        if nodeid is not None:
            self.by_test[nodeid] = "error"

    def outcomes(self, duration_s: float) -> TestOutcomes:
        """Freeze the counts."""
        return TestOutcomes(duration_s=round(max(duration_s, 0.0), 6), **self.counts)


def pass_rate_metric(outcomes: TestOutcomes, *, weight: float = 1.0) -> EvalMetric:
    """passed / (passed + failed + errors), skips excluded; no test ran -> 0.0."""
    passed = outcomes.passed + outcomes.xpassed
    ran = outcomes.ran
    details = {
        "tool": "pytest",
        "version": _pytest_version(),
        "duration_s": outcomes.duration_s,
        "passed": passed,
        "failed": outcomes.failed,
        "errors": outcomes.errors,
        "skipped": outcomes.skipped,
        "xfailed": outcomes.xfailed,
        "ran": ran,
    }
    reason = None if ran else "no test ran"
    return EvalMetric(
        type="test_pass_rate",
        value=passed / ran if ran else 0.0,
        weight=weight,
        status=MetricStatus.OK,
        reason=reason,
        details=details,
    )


def _pytest_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest")
    except PackageNotFoundError:  # pragma: no cover - the metric comes from a pytest run
        return None
