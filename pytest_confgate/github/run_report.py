"""A ``confgate run`` report published by ``confgate github publish`` (issue 17).

A run report (``confgate run --report``) is a story about agents; the verdict in it is the
last gate report of the task that ran last, which the run wrote under ``.confgate/runs/``. So
publishing a run report publishes that gate report, bound to this run and commit like any
other (``gate.binding``), plus what only the run knows: whether it escalated to a human, how
it ended, and the human's decisions. The run report is read as untrusted data: only known
keys, shown escaped, and the gate report's path must lie inside the run's own folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import ReportError
from pytest_confgate.report.markdown import MARKER, escape_markdown

RUNS = Path(".confgate") / "runs"


@dataclass(frozen=True)
class RunSummary:
    """The tasks of one run report, in order, and the gate report that decides it."""

    tasks: list[dict[str, Any]]
    gate_report: Path

    @property
    def escalated(self) -> bool:
        return any(task.get("escalated") is True for task in self.tasks)

    @property
    def advanced(self) -> bool:
        return all(task.get("advanced") is True for task in self.tasks)

    @property
    def confidence(self) -> str:
        """The last iteration's confidence score, as the ``confidence`` output shows it."""
        iterations = self.tasks[-1].get("iterations") or [{}]
        score = iterations[-1].get("confidence_score") if isinstance(iterations[-1], dict) else None
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            return repr(float(score))
        return ""


def is_run_report(data: object) -> bool:
    """A ``confgate run --report`` object: one task's record or ``{"tasks": [...]}``."""
    if isinstance(data, dict) and isinstance(data.get("tasks"), list) and "decision" not in data:
        return True
    return isinstance(data, dict) and "run_id" in data and "iterations" in data


def run_summary(data: dict[str, Any], path: Path, project: Path) -> RunSummary:
    """The tasks and the deciding gate report; ``ReportError`` naming ``path`` otherwise."""
    tasks = data.get("tasks", [data])
    if not tasks or not all(isinstance(task, dict) for task in tasks):
        raise ReportError(f"{path}: a run report with no task records; nothing to publish")
    last = tasks[-1]
    iterations = last.get("iterations")
    run_id = last.get("run_id")
    if not isinstance(iterations, list) or not iterations or not isinstance(run_id, str):
        raise ReportError(
            f"{path}: task {last.get('task')!r} ran no iteration, so no gate judged it"
        )
    shown = iterations[-1].get("gate_report") if isinstance(iterations[-1], dict) else None
    gate = (project / str(shown)).resolve()
    folder = (project / RUNS / run_id).resolve()
    if not isinstance(shown, str) or not gate.is_relative_to(folder):
        raise ReportError(
            f"{path}: the last iteration's gate report is not inside {RUNS / run_id}; "
            "publish the report `confgate run --report` wrote, from the project folder"
        )
    return RunSummary(tasks, gate)


def load_run_report(path: Path, project: Path, max_bytes: int) -> RunSummary | None:
    """The run report at ``path``, or None when the file is not one (a gate report)."""
    try:
        if path.stat().st_size > max_bytes:
            return None  # the gate report loader refuses it with the size
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # the gate report loader says what is wrong with it
    return run_summary(data, path, project) if is_run_report(data) else None


def run_markdown(run: RunSummary) -> str:
    """A section for the summary and the comment: how each task's run ended."""
    state = "escalated to a human" if run.escalated else ("advanced" if run.advanced else "blocked")
    lines = [
        f"### confgate run: {state}",
        "",
        "| task | run | iterations | exit reason | gate | escalated |",
        "|---|---|---|---|---|---|",
    ]
    for task in run.tasks:
        cells = [
            task.get("task"),
            task.get("run_id"),
            len(task.get("iterations") or []),
            task.get("exit_reason"),
            task.get("decision"),
            "yes" if task.get("escalated") is True else "no",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    for task in run.tasks:
        lines += _escalation(task)
    return "\n".join(lines) + "\n\n"


def with_run(run: RunSummary | None, markdown: str) -> str:
    """The gate report's Markdown with the run's section after the sticky marker."""
    if run is None:
        return markdown
    rest = markdown.removeprefix(MARKER + "\n")
    return f"{MARKER}\n{run_markdown(run)}{rest}"


def _escalation(task: dict[str, Any]) -> list[str]:
    lines = []
    escalation = task.get("escalation")
    if task.get("escalated") is True and isinstance(escalation, dict):
        lines.append(
            f"\n**{_cell(task.get('task'))} waits for a human:** {_cell(escalation.get('reason'))}."
            f" Answer with `confgate run TASK --resume RUN_ID --decision approve|reject|retry`."
        )
    for answer in task.get("human_decisions") or []:
        if isinstance(answer, dict):
            note = f": {_cell(answer.get('note'))}" if answer.get("note") else ""
            lines.append(
                f"\n- {_cell(answer.get('by') or 'a human')} answered "
                f"{_cell(answer.get('decision'))} at {_cell(answer.get('decided_at'))}{note}"
            )
    return lines


def _cell(value: object) -> str:
    return escape_markdown(value)
