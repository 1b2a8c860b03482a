"""Evidence events: times, event ids and findings files (SPEC 9, seed agent-trust F1)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.trust.events import (
    TrustEvent,
    findings_run,
    parse_time,
    resolve_events,
    split_ids,
    validated,
)

NOON = datetime(2025, 1, 31, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    "text",
    ["2025-01-31T12:00:00Z", "2025-01-31T12:00:00+00:00", "2025-01-31T13:00:00+01:00",
     "2025-01-31T12:00:00", "2025-01-31 12:00"],
    ids=["zulu", "utc-offset", "other-offset", "naive-is-utc", "space-separated"],
)
def test_iso_times_become_the_same_instant(text: str) -> None:
    assert parse_time(text, "--at") == NOON


def test_a_bad_time_names_the_flag_and_the_value() -> None:
    with pytest.raises(EvidenceError, match=r"--now 'yesterday': not an ISO-8601 time"):
        parse_time("yesterday", "--now")


def _event(**changes: Any) -> TrustEvent:
    fields: dict[str, Any] = {
        "event": "finding_accepted", "agent": "fd-arch", "project": "svc", "finding": "F1",
        "severity": "P1", "run": "r1", "at": NOON,
    }
    fields.update(changes)
    return TrustEvent(**fields)


def test_the_event_id_ignores_the_time_so_recording_later_is_the_same_event() -> None:
    assert _event().event_id == _event(at=NOON + 3600).event_id


@pytest.mark.parametrize(
    "change",
    [{"event": "finding_discarded"}, {"agent": "x"}, {"project": "x"}, {"finding": "F2"},
     {"run": "r2"}],
    ids=["outcome", "agent", "project", "finding", "run"],
)
def test_the_event_id_changes_with_what_the_event_says(change: dict[str, str]) -> None:
    assert _event().event_id != _event(**change).event_id


@pytest.mark.parametrize(
    ("change", "message"),
    [({"event": "finding_fixed"}, "event 'finding_fixed'"), ({"severity": "P4"}, "severity"),
     ({"agent": " "}, "agent is empty"), ({"at": float("nan")}, "finite")],
    ids=["unknown-event", "unknown-severity", "blank-agent", "nan-time"],
)
def test_an_unusable_event_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(EvidenceError, match=message):
        validated(_event(**change))


def test_an_event_survives_the_spools_json() -> None:
    assert TrustEvent.from_json(_event().to_json()) == _event()


def test_split_ids_drops_blanks() -> None:
    assert split_ids(" a, b,,c ") == ["a", "b", "c"]
    assert split_ids(None) == []


FINDINGS = {
    "review_run_id": "run-7",
    "findings": [
        {"id": "F1", "agent": "fd-arch", "severity": "P0", "title": "x"},
        {"id": "F2", "agent": "fd-qa", "severity": "p3"},
        {"id": 3, "agent": "fd-qa", "severity": "P2"},
    ],
}


def test_resolve_takes_agent_and_severity_from_the_findings_file() -> None:
    outcomes = {"F1": "finding_accepted", "F2": "finding_discarded", "3": "finding_accepted"}
    events = resolve_events(FINDINGS, "f.json", outcomes, project="svc", run="run-7", at=NOON)
    assert [(e.finding, e.agent, e.severity, e.event) for e in events] == [
        ("F1", "fd-arch", "P0", "finding_accepted"),
        ("F2", "fd-qa", "P3", "finding_discarded"),
        ("3", "fd-qa", "P2", "finding_accepted"),
    ]


@pytest.mark.parametrize(
    ("data", "outcomes", "message"),
    [
        (FINDINGS, {"F9": "finding_accepted"}, "no finding with id 'F9'"),
        ({"findings": [{"id": "F1", "severity": "P1"}]}, {"F1": "finding_accepted"}, "no agent"),
        ({"findings": [{"id": "F1", "agent": "a", "severity": "high"}]},
         {"F1": "finding_accepted"}, "severity 'high'"),
        ({"findings": "nope"}, {"F1": "finding_accepted"}, "expected"),
        ({"findings": [{"title": "no id"}]}, {"F1": "finding_accepted"},
         r"findings\[0\] has no id"),
    ],
    ids=["unknown-id", "no-agent", "bad-severity", "findings-not-a-list", "finding-without-id"],
)
def test_a_findings_file_that_cannot_attribute_is_an_error_naming_the_file(
    data: Any, outcomes: dict[str, str], message: str
) -> None:
    with pytest.raises(EvidenceError, match=message) as caught:
        resolve_events(data, "f.json", outcomes, project="svc", run="r", at=NOON)
    assert str(caught.value).startswith("f.json: ")


def test_the_run_comes_from_the_findings_file_when_it_names_one() -> None:
    assert findings_run(FINDINGS) == "run-7"
    assert findings_run({"run": 12}) == "12"
    assert findings_run({"findings": []}) is None
