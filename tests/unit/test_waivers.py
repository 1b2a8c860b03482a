"""Waivers excuse named findings until their date, then stop and say so."""

from __future__ import annotations

import datetime as dt

import pytest

from pytest_confgate.config import Waiver
from pytest_confgate.gate.waivers import apply_waivers, waiver_report
from pytest_confgate.models import EvalMetric

TODAY = dt.date(2026, 11, 22)


def _security() -> EvalMetric:
    items = [
        {"rule": "B602", "file": "src/legacy/run.py", "line": 3, "severity": "HIGH"},
        {"rule": "B602", "file": "src/new/run.py", "line": 9, "severity": "HIGH"},
        {"rule": "B101", "file": "src/legacy/run.py", "line": 5, "severity": "LOW"},
    ]
    details = {
        "items": items,
        "findings": 3,
        "files_scanned": 4,
        "files_with_findings": 2,
        "by_severity": {"HIGH": 2, "MEDIUM": 0, "LOW": 1},
    }
    return EvalMetric(type="security_score", value=0.5, details=details)


def _waiver(expires: dt.date, paths: list[str] | None = None) -> Waiver:
    return Waiver(
        rule="B602", paths=paths or ["src/legacy/**"], reason="ticket 12", expires=expires
    )


def test_an_active_waiver_excuses_only_its_rule_in_its_paths() -> None:
    metric, excused = apply_waivers(_security(), [_waiver(TODAY)], TODAY)
    assert excused == {0: 1}
    assert metric.details["findings"] == 2
    assert metric.details["by_severity"] == {"HIGH": 1, "MEDIUM": 0, "LOW": 1}
    assert [i["file"] for i in metric.details["items"]] == ["src/new/run.py", "src/legacy/run.py"]
    assert metric.value == pytest.approx((4 - 2) / 4)  # both files still have a finding
    assert metric.details["waived"] == 1


def test_a_waiver_stops_excusing_the_day_after_it_expires() -> None:
    waiver = _waiver(TODAY - dt.timedelta(days=1))
    metric, excused = apply_waivers(_security(), [waiver], TODAY)
    assert excused == {}
    assert metric.details["findings"] == 3
    assert waiver_report([waiver], excused, TODAY)[0]["status"] == "expired"


def test_excusing_every_finding_in_a_file_makes_it_clean() -> None:
    waivers = [_waiver(TODAY, ["src/**"])]
    metric, _ = apply_waivers(_security(), waivers, TODAY)
    assert metric.details["files_with_findings"] == 1  # only the B101 file remains
    assert metric.value == pytest.approx(3 / 4)


def test_metrics_without_findings_are_untouched() -> None:
    coverage = EvalMetric(type="test_coverage", value=0.5)
    assert apply_waivers(coverage, [_waiver(TODAY)], TODAY) == (coverage, {})


def test_the_report_lists_every_waiver_with_its_reason_and_count() -> None:
    waiver = _waiver(TODAY)
    assert waiver_report([waiver], {0: 2}, TODAY) == [
        {
            "rule": "B602",
            "paths": ["src/legacy/**"],
            "reason": "ticket 12",
            "expires": "2026-11-22",
            "status": "active",
            "excused": 2,
        }
    ]
