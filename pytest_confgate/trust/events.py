"""Evidence events: what one accepted or discarded finding records.

Pure: parsing of times and findings files, and the event id that makes a second recording of
the same outcome a no-op (agent, project, run, finding and outcome; not the time, so recording
again later is still the same event). A ``Retraction`` takes a mis-recorded event back
(issue 17): the event stops counting and both stay in the history.

``confgate trust export`` / ``import`` move both as JSON lines, one object per line with a
``kind`` of ``event`` or ``retraction`` (``record_from_json`` reads one back).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.trust.formula import SEVERITIES, Outcome

EVENTS = ("finding_accepted", "finding_discarded")
EVENT_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_REASON = 2000


@dataclass(frozen=True)
class TrustEvent:
    """One review outcome; ``at`` is POSIX seconds (UTC)."""

    event: str
    agent: str
    project: str
    finding: str
    severity: str
    run: str
    at: float

    @property
    def event_id(self) -> str:
        """Stable id: the same outcome recorded twice (or replayed from the spool) is one event."""
        key = "\x1f".join((self.event, self.agent, self.project, self.run, self.finding))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]

    @property
    def accepted(self) -> bool:
        return self.event == "finding_accepted"

    def outcome(self) -> Outcome:
        """The event as the pure formula reads it."""
        return Outcome(self.agent, self.project, self.run, self.severity, self.accepted, self.at)

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.event, "agent": self.agent, "project": self.project,
            "finding": self.finding, "severity": self.severity, "run": self.run, "at": self.at,
        }

    def to_line(self) -> dict[str, Any]:
        """The export form: ``kind`` and ``event_id`` first, so a reader can grep for either."""
        return {"kind": "event", "event_id": self.event_id, **self.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrustEvent:
        """An event read back from the spool; anything malformed is an ``EvidenceError``."""
        try:
            event = cls(
                str(data["event"]), str(data["agent"]), str(data["project"]),
                str(data["finding"]), str(data["severity"]), str(data["run"]),
                float(data["at"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise EvidenceError(f"not a trust event ({exc})") from exc
        return validated(event)


@dataclass(frozen=True)
class Retraction:
    """A recorded event taken back: it no longer counts; the event and why stay in history."""

    event_id: str
    reason: str
    by: str
    at: float

    def to_line(self) -> dict[str, Any]:
        return {
            "kind": "retraction", "event_id": self.event_id, "reason": self.reason,
            "by": self.by, "at": self.at,
        }


@dataclass(frozen=True)
class RetractedEvent:
    """A retraction with the event it took back, for the report."""

    event: TrustEvent
    retraction: Retraction


def retraction(event_id: str, reason: str, by: str, at: float) -> Retraction:
    """A usable retraction, else an ``EvidenceError`` naming what is wrong."""
    if not EVENT_ID.match(event_id):
        raise EvidenceError(f"event id {event_id!r} is not 32 hex digits")
    if not reason.strip():
        raise EvidenceError("the reason is empty; say why the event is retracted")
    if len(reason) > MAX_REASON:
        raise EvidenceError(f"the reason is over {MAX_REASON} characters; shorten it")
    if at != at or at in (float("inf"), float("-inf")):
        raise EvidenceError("at is not a finite time")
    return Retraction(event_id, reason.strip(), by.strip() or "unknown", at)


def record_from_json(data: Any) -> TrustEvent | Retraction:
    """One exported line, parsed: an event (its ``event_id``, if given, must match its fields,
    so an edited line is caught) or a retraction. Anything else is an ``EvidenceError``."""
    if not isinstance(data, Mapping):
        raise EvidenceError("not a JSON object")
    kind = data.get("kind", "event")
    if kind == "retraction":
        try:
            return retraction(
                str(data["event_id"]), str(data["reason"]), str(data.get("by", "")),
                float(data["at"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise EvidenceError(f"not a retraction ({exc})") from exc
    if kind != "event":
        raise EvidenceError(f"kind {kind!r} is not event or retraction")
    event = TrustEvent.from_json(data)
    given = data.get("event_id")
    if given is not None and given != event.event_id:
        raise EvidenceError(
            f"event_id {given!r} does not match the event's fields (its id is "
            f"{event.event_id}); was the line edited?"
        )
    return event


def validated(event: TrustEvent) -> TrustEvent:
    """The event if every field is usable, else an ``EvidenceError`` naming the field."""
    if event.event not in EVENTS:
        raise EvidenceError(f"event {event.event!r} is not one of {', '.join(EVENTS)}")
    if event.severity not in SEVERITIES:
        raise EvidenceError(f"severity {event.severity!r} is not one of {', '.join(SEVERITIES)}")
    for name in ("agent", "project", "finding", "run"):
        if not getattr(event, name).strip():
            raise EvidenceError(f"{name} is empty; give a non-empty {name}")
    if event.at != event.at or event.at in (float("inf"), float("-inf")):
        raise EvidenceError("at is not a finite time")
    return event


def parse_time(text: str, flag: str) -> float:
    """ISO-8601 (``2025-01-31``, ``2025-01-31T12:00:00Z``, with offset) -> POSIX seconds.

    A time without an offset is UTC, so the same text means the same instant on every runner.
    """
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise EvidenceError(
            f"{flag} {text!r}: not an ISO-8601 time; write e.g. 2025-01-31T12:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def split_ids(text: str | None) -> list[str]:
    """``"a,b, c"`` -> ``["a", "b", "c"]`` (empty items dropped)."""
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def resolve_events(
    data: Any,
    source: str,
    outcomes: Mapping[str, str],
    *,
    project: str,
    run: str,
    at: float,
) -> list[TrustEvent]:
    """One event per finding id in ``outcomes`` (id -> event), attributed by the findings file.

    Every id must be in the file with an agent and a severity; otherwise nothing is recorded.
    """
    findings = _findings_by_id(data, source)
    events = []
    for finding_id, event in outcomes.items():
        item = findings.get(finding_id)
        if item is None:
            known = ", ".join(sorted(findings)[:10]) or "none"
            raise EvidenceError(f"{source}: no finding with id {finding_id!r} (ids: {known})")
        agent = item.get("agent")
        severity = str(item.get("severity", "")).strip().upper()
        if not isinstance(agent, str) or not agent.strip():
            raise EvidenceError(f"{source}: finding {finding_id!r} has no agent; attribute it")
        if severity not in SEVERITIES:
            raise EvidenceError(
                f"{source}: finding {finding_id!r} severity {item.get('severity')!r} is not "
                f"one of {', '.join(SEVERITIES)}"
            )
        events.append(validated(TrustEvent(event, agent, project, finding_id, severity, run, at)))
    return events


def findings_run(data: Any) -> str | None:
    """The review run named by the findings file itself, if any."""
    if isinstance(data, Mapping):
        for key in ("review_run_id", "run"):
            value = data.get(key)
            if isinstance(value, (str, int)) and str(value).strip():
                return str(value).strip()
    return None


def _findings_by_id(data: Any, source: str) -> dict[str, Mapping[str, Any]]:
    items = data.get("findings") if isinstance(data, Mapping) else data
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise EvidenceError(
            f'{source}: expected {{"findings": [{{"id", "agent", "severity", ...}}]}}'
        )
    findings: dict[str, Mapping[str, Any]] = {}
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), (str, int)):
            raise EvidenceError(f"{source}: findings[{index}] has no id")
        findings[str(item["id"])] = item
    return findings
