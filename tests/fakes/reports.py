"""Hand-built gate reports for writer, merge and report tests: only what a test varies."""

from __future__ import annotations

from typing import Any

from pytest_confgate.models import Decision, GateReport, Provenance, Signoffs, TestOutcomes

HEAD_SHA = "c" * 40
"""The commit every hand-built report says it judged (its ``provenance.head_sha``)."""


def gate_report(**fields: Any) -> GateReport:
    """A valid ``GateReport`` (T1, pass, one passed test, made at ``HEAD_SHA`` by a local run)
    with ``fields`` replacing defaults."""
    values: dict[str, Any] = {
        "tool_version": "0.1.0",
        "project": "demo",
        "generated_at": "2026-11-22T00:00:00+00:00",
        "risk_tier": "T1",
        "risk_reason": "the default tier",
        "decision": Decision.PASS,
        "reasons": [],
        "auto_advance": False,
        "metrics": [],
        "conditions": [],
        "tests": TestOutcomes(passed=1),
        "signoffs": Signoffs(),
        "provenance": Provenance(head_sha=HEAD_SHA, dirty=False, run_id="local-0123456789abcdef",
                                 started_at="2026-11-22T00:00:00+00:00"),
    }
    values.update(fields)
    return GateReport(**values)
