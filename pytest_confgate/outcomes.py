"""One test's outcome from pytest's phase reports, for the plugins loaded into runs we start.

``rank/outcomes_plugin`` (a candidate's tests), ``collect/tamper/replay_plugin`` (the base's
version of edited tests) and ``outcome_channel`` (the differential run's base tests) all name
outcomes this way, so a ranking, a replay and a differential run never disagree on what a run
did. Outcomes are ``passed``, ``failed``, ``error`` (setup or teardown failed),
``skipped``, ``xfailed`` and ``xpassed``. A leaf: takes pytest's report as a plain object and
imports nothing, so a plugin that uses it stays light.
"""

from __future__ import annotations

from typing import Any


def phase_outcome(report: Any, recorded: str | None) -> str | None:
    """The outcome to record for ``report``'s test after this phase, or None to keep
    ``recorded``: worst phase first, so a failing setup or teardown is an error that the call
    phase never overwrites, and a passing setup or teardown says nothing."""
    expected_failure = hasattr(report, "wasxfail")
    if report.when == "call":
        if recorded == "error":
            return None
        if report.passed:
            return "xpassed" if expected_failure else "passed"
        if report.skipped:
            return "xfailed" if expected_failure else "skipped"
        return "failed"
    if report.failed:
        return "error"
    if report.skipped and report.when == "setup":
        return "xfailed" if expected_failure else "skipped"
    return None
