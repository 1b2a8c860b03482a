"""Hand-built gate reports for writer, merge and report tests: only what a test varies."""

from __future__ import annotations

from typing import Any

from pytest_confgate.models import Decision, GateReport, Signoffs, TestOutcomes


def gate_report(**fields: Any) -> GateReport:
    """A valid ``GateReport`` (T1, pass, one passed test) with ``fields`` replacing defaults."""
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
    }
    values.update(fields)
    return GateReport(**values)
