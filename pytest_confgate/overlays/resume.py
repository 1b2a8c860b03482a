"""Where an escalated run goes on after a human's decision (``confgate run --resume``).

Reads the reopened run record (never the clock or the agents): which subtask escalated, its
last iteration and gate decision, and the feedback a retry starts from. ``runner`` acts on it:

- ``reject``: the run stops, exit status 1;
- ``approve``: the human's approval stands in for the advisory or the challenger's approval
  the loop did not reach; the task advances only when the gate's last decision was ``pass``
 , then any later subtasks run;
- ``retry``: one more iteration of the escalated subtask, with the human's note and the last
  gate reasons in the prompt; out of iterations again, it escalates again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_confgate.exceptions import ConfgateError


@dataclass(frozen=True)
class ResumePoint:
    """The escalated subtask (index into the task's subtasks), its last iteration and gate."""

    subtask_index: int
    subtask: str | None
    iteration: int
    decision: str | None
    feedback: list[str] = field(default_factory=list)


def resume_point(data: dict[str, Any], subtasks: Sequence[str], note: str | None) -> ResumePoint:
    """Where the run in ``data`` stopped; raises ``ConfgateError`` when the task's subtasks
    no longer name the one that escalated (the configuration changed since)."""
    iterations = data.get("iterations") or []
    if not iterations or not isinstance(iterations[-1], dict):
        raise ConfgateError(f"run {data.get('run_id')} recorded no iteration to resume from")
    last = iterations[-1]
    subtask = last.get("subtask")
    if subtask is None:
        index = 0
    elif subtask in subtasks:
        index = list(subtasks).index(subtask)
    else:
        raise ConfgateError(
            f"run {data.get('run_id')} escalated in subtask {subtask!r}, which the task no "
            f"longer lists ({', '.join(subtasks) or 'no subtasks'}); start a new run"
        )
    reasons = [str(r) for r in last.get("gate_reasons") or []]
    said = f" Their note: {note}" if note else ""
    feedback = [f"A human reviewed the escalated work and asked for one more attempt.{said}"]
    if reasons:
        feedback.append("The gate's reasons last time:\n" + "\n".join(f"- {r}" for r in reasons))
    return ResumePoint(
        index, subtask, int(last.get("iteration") or 0), last.get("decision"), feedback
    )
