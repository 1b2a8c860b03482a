"""The run directory ``.confgate/runs/<run-id>/`` and the ``--report`` JSON.

Everything a person needs to see what a run did, written as it happens so an interrupted
run still tells its story::

    run.json                  the report below, with status running|finished|interrupted
    <subtask>/iteration-N/    prompt and answer of each agent (truncated), the gate's report
                              and its output
    artifact.txt              the driver's last answer, when the task names no artifact file
    pair_session.json         {"pair_session": {...}} (paired tasks)
    escalation.json           the escalation record with the full history (HIL)

An escalated run waits for a human: ``confgate run TASK --resume RUN_ID --decision ...``
reopens its record (``RunRecord.reopen``), writes the decision into it (``human_decision``,
and every answer in ``human_decisions``) and the run goes on in the same directory.
"""

from __future__ import annotations

import getpass
import json
import re
import secrets
import time
from pathlib import Path
from typing import Any

from pytest_confgate.exceptions import ConfgateError
from pytest_confgate.report.json_report import write_json_atomic, write_text_atomic

RUNS_DIR = Path(".confgate") / "runs"
TEXT_LIMIT = 64 * 1024
"""Prompts and answers are kept up to this many characters; the rest is cut and marked."""

EXIT_REASONS = (
    "confidence",
    "approved",
    "condition",
    "max_iterations",
    "gate_passed",
    "human_approved",
    "human_rejected",
)
DECISIONS = ("approve", "reject", "retry")
"""What a human can answer an escalation with (``--decision``)."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,120}")


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

    @classmethod
    def reopen(cls, root: Path, run_id: str, task: str, decision: str) -> RunRecord:
        """The record of run ``run_id`` of ``task`` (an id, or its folder), when it waits for
        a human's ``decision``; ``reject`` may also close a run that finished without asking.

        Raises ``ConfgateError`` saying what to do when there is no such run, it belongs to
        another task, or nothing is waiting (never escalated, already answered, still running).
        """
        run_id = _run_id_of(root, run_id)
        where = (RUNS_DIR / run_id / "run.json").as_posix()
        if not _RUN_ID.fullmatch(run_id) or run_id in (".", ".."):
            raise ConfgateError(f"--resume {run_id!r}: not a run id (a folder under {RUNS_DIR})")
        try:
            data = json.loads((root / where).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfgateError(
                f"--resume {run_id}: no run record {where}; the run id is printed when a run "
                f"escalates and is the folder's name under {RUNS_DIR.as_posix()}/"
            ) from None
        except (OSError, ValueError) as exc:
            raise ConfgateError(f"--resume {run_id}: {where} cannot be read: {exc}") from None
        if not isinstance(data, dict) or data.get("run_id") != run_id:
            raise ConfgateError(f"--resume {run_id}: {where} is not the record of run {run_id}")
        _check_waiting(data, run_id, task, decision)
        record = cls.__new__(cls)
        record.root, record.task, record.run_id = root, task, run_id
        record.dir = root / RUNS_DIR / run_id
        record.data = data
        return record

    def answer(self, decision: str, note: str | None) -> dict[str, Any]:
        """Write the human's ``decision`` (and ``note``) into the record before going on."""
        iterations = self.data.get("iterations") or []
        last = iterations[-1] if iterations and isinstance(iterations[-1], dict) else {}
        entry = {
            "decision": decision,
            "note": note,
            "by": _who(),
            "decided_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "after_iteration": len(iterations),
            "last_decision": last.get("decision"),
        }
        self.data["human_decision"] = entry
        self.data.setdefault("human_decisions", []).append(entry)
        self.data.update(status="running", escalated=False, exit_reason=None, advanced=False)
        self.flush()
        return entry

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


def _run_id_of(root: Path, given: str) -> str:
    """``given`` as a run id: a path to the run's folder (or its run.json) names its folder."""
    path = Path(given)
    if path.name == "run.json":
        path = path.parent
    if len(path.parts) > 1 and (root / path).resolve().parent == (root / RUNS_DIR).resolve():
        return path.name
    return given


def _check_waiting(data: dict[str, Any], run_id: str, task: str, decision: str) -> None:
    """Refuse to resume a run nobody is waiting on, saying why."""
    if data.get("task") != task:
        raise ConfgateError(
            f"--resume {run_id}: that run is of task {data.get('task')!r}, not {task!r}; "
            f"resume it with `confgate run {data.get('task')} --resume {run_id}`"
        )
    last = data.get("human_decision") or {}
    if last.get("decision") == "reject":
        raise ConfgateError(
            f"--resume {run_id}: a human rejected that run at {last.get('decided_at')}; "
            f"start a new one with `confgate run {task}`"
        )
    if decision == "reject" and data.get("status") in ("finished", "interrupted"):
        return  # a human may always close a run; approve and retry need an open escalation
    if data.get("status") != "finished" or data.get("escalated") is not True:
        state = f"status {data.get('status')}, escalated {data.get('escalated')}"
        raise ConfgateError(
            f"--resume {run_id}: that run is not waiting for a human ({state}); only a run "
            "that escalated (exit status 3) can be approved or retried (any finished run can "
            "be rejected)"
        )


def _who() -> str | None:
    """Who answered: the CI actor, else the login name; None when neither can be told."""
    import os

    actor = os.environ.get("GITHUB_ACTOR", "").strip()
    if actor:
        return actor
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in a bare container
        return None
