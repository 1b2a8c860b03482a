"""The run directory ``.confgate/runs/<run-id>/`` and the ``--report`` JSON (SPEC 8).

Everything a person needs to see what a run did, written as it happens so an interrupted
run still tells its story::

    run.json                  the report below, with status running|finished|interrupted
    <subtask>/iteration-N/    prompt and answer of each agent (truncated), the gate's report
                              and its output
    artifact.txt              the driver's last answer, when the task names no artifact file
    pair_session.json         seed 001's {"pair_session": {...}} (paired tasks)
    escalation.json           the escalation record with the full history (HIL)
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any

from pytest_confgate.report.json_report import write_json_atomic, write_text_atomic

RUNS_DIR = Path(".confgate") / "runs"
TEXT_LIMIT = 64 * 1024
"""Prompts and answers are kept up to this many characters; the rest is cut and marked."""

EXIT_REASONS = ("confidence", "approved", "condition", "max_iterations", "gate_passed")


def new_run_id(task: str) -> str:
    """Sortable by time, readable, unique: ``20250101T120000Z-design-l1-1a2b3c``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{stamp}-{_slug(task)}-{secrets.token_hex(3)}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:60] or "task"


class RunRecord:
    """One task run's directory and its report, rewritten atomically after every step."""

    def __init__(self, root: Path, task: str, *, paired: bool) -> None:
        self.root = root
        self.task = task
        self.run_id = new_run_id(task)
        self.dir = root / RUNS_DIR / self.run_id
        self.dir.mkdir(parents=True, exist_ok=False)
        self.data: dict[str, Any] = {
            "task": task,
            "run_id": self.run_id,
            "run_dir": self.shown(self.dir),
            "status": "running",
            "iterations": [],
            "exit_reason": None,
            "escalated": False,
            "locked_artifact": None,
            "decision": None,
            "advanced": False,
            "lock_changes": [],
        }
        if paired:
            self.data["pair_session"] = None
        self.flush()

    def shown(self, path: Path) -> str:
        """``path`` relative to the project root, as reports show paths."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    def step_dir(self, subtask: str | None, iteration: int) -> Path:
        base = self.dir / _slug(subtask) if subtask else self.dir
        return base / f"iteration-{iteration}"

    def save_text(self, path: Path, text: str) -> None:
        """Write ``text`` truncated to ``TEXT_LIMIT`` characters, saying how much was cut."""
        if len(text) > TEXT_LIMIT:
            cut = len(text) - TEXT_LIMIT
            text = f"{text[:TEXT_LIMIT]}\n[... {cut} more characters not kept ...]\n"
        write_text_atomic(text, path)

    def add_iteration(self, entry: dict[str, Any]) -> None:
        self.data["iterations"].append(entry)
        self.flush()

    def set_pair_session(self, session: dict[str, Any]) -> None:
        self.data["pair_session"] = session
        write_json_atomic({"pair_session": session}, self.dir / "pair_session.json")
        self.flush()

    def escalate(self, reason: str, last_reasons: list[str]) -> Path:
        """Write the escalation record (full history, pair history) and mark the run."""
        path = self.dir / "escalation.json"
        record = {
            "task": self.task,
            "run_id": self.run_id,
            "reason": reason,
            "last_gate_reasons": last_reasons,
            "history": self.data["iterations"],
            "pair_session": self.data.get("pair_session"),
        }
        write_json_atomic(record, path)
        self.data["escalated"] = True
        self.data["escalation"] = {"reason": reason, "record": self.shown(path), **record}
        return path

    def finish(self, **fields: Any) -> None:
        self.data.update(fields, status="finished")
        self.flush()

    def interrupted(self, signal_name: str, during: str) -> None:
        self.data.update(
            status="interrupted",
            interrupted={"signal": signal_name, "during": during},
            advanced=False,
        )
        self.flush()

    def flush(self) -> None:
        write_json_atomic(self.data, self.dir / "run.json")

    def report(self) -> dict[str, Any]:
        """The ``--report`` object: ``task``, ``iterations``, ``exit_reason``, ``escalated``,
        ``locked_artifact`` and, for a paired task, ``pair_session`` (plus run details)."""
        return dict(self.data)
