"""One agent task end to end: iterations, overlays, subtasks, roles, escalation.

Each iteration asks the driver (the task's agent, or the pair's current driver), runs the
real gate on the working tree, scores confidence when the loop is on, asks the challenger
when the pair is on, and checks the exit conditions. The order of exits:

1. confidence loop: threshold met -> exit ``confidence`` (the critique is skipped);
2. paired workflow: challenger approved -> exit ``approved`` (the artifact is locked);
3. an exit condition holds -> exit ``condition``;
4. no overlay: one iteration -> ``gate_passed`` when the gate passed, else ``max_iterations``;
5. out of iterations -> ``max_iterations``; with ``hil: true`` the task escalates.

A task advances only when the gate's last decision is ``pass``: confidence, approval and
conditions end the loop, they never promote by themselves.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pytest_confgate.config.expressions import ExitCondition, compile_condition
from pytest_confgate.exceptions import AgentError
from pytest_confgate.exit_codes import ExitCode
from pytest_confgate.interrupts import Interrupted, sigterm_raises
from pytest_confgate.models import ConfidenceResult
from pytest_confgate.overlays import confidence_loop as evidence
from pytest_confgate.overlays.exit_conditions import PairInputs, first_met
from pytest_confgate.overlays.gate_step import GateOutcome, run_gate
from pytest_confgate.overlays.lock import changed_locks, record_lock
from pytest_confgate.overlays.paired import (
    ChallengerVerdict,
    PairSession,
    challenger_prompt,
    parse_challenger_answer,
    roles_swapped,
)
from pytest_confgate.overlays.resume import resume_point
from pytest_confgate.overlays.run_record import RunRecord
from pytest_confgate.overlays.tasks import resolve_prompt

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent
    from pytest_confgate.config import ConfgateConfig

STATE_DIR = Path(".confgate")


class RunInterrupted(Interrupted):
    """Ctrl-C or SIGTERM stopped a run; the record says what was running."""

    def __init__(self, signum: int, record: dict[str, Any] | None = None) -> None:
        self.record = record
        super().__init__(signum)


def interrupts_as_exceptions() -> AbstractContextManager[None]:
    """SIGTERM raises ``RunInterrupted`` like Ctrl-C does, so every ``finally`` runs."""
    return sigterm_raises(RunInterrupted)


@dataclass
class _Turn:
    """What one iteration produced, for the exit checks and the next prompt."""

    iteration: int
    driver: str
    output: str
    gate: GateOutcome
    confidence: ConfidenceResult | None
    entry: dict[str, Any]
    feedback: list[str] = field(default_factory=list)


class TaskRunner:
    """Runs one task; ``agents`` holds every agent it may call, already built."""

    def __init__(
        self,
        config: ConfgateConfig,
        config_path: Path | None,
        root: Path,
        name: str,
        agents: Mapping[str, Agent],
        out: IO[str],
        record: RunRecord | None = None,
    ) -> None:
        self.task = config.tasks[name]
        self.name, self.root, self.config_path, self.agents, self.out = (
            name,
            root,
            config_path,
            agents,
            out,
        )
        self.loop = self.task.overlays.confidence_loop
        self.policy = config.gate.policy
        self.agent_configs = config.agents
        self.pair = self.task.overlays.paired_workflow
        shown = str(config_path) if config_path else "confgate.yml"
        self.prompt = resolve_prompt(name, self.task, root, shown)
        self.conditions = self._conditions()
        self.record = record or RunRecord(root, name, paired=self.pair.enabled)
        self.session: PairSession | None = None
        if self.pair.enabled:
            driver, challenger = self._pair_agents()
            self.session = PairSession(driver, challenger, self.pair.role_switch, driver)
            self.session.restore(self.record.data.get("pair_session"))
        self.doing = "starting"

    def run(self) -> tuple[int, dict[str, Any]]:
        """Run every subtask's loop (or the task's one loop): (exit status, report)."""
        return self._interruptible(self._run)

    def resume(self, decision: str, note: str | None) -> tuple[int, dict[str, Any]]:
        """Answer the escalation of the reopened run and go on (``--resume``)."""
        return self._interruptible(lambda: self._resume(decision, note))

    def _interruptible(
        self, work: Callable[[], tuple[int, dict[str, Any]]]
    ) -> tuple[int, dict[str, Any]]:
        try:
            return work()
        except (KeyboardInterrupt, RunInterrupted) as exc:
            signum = exc.signum if isinstance(exc, RunInterrupted) else signal.SIGINT
            self.record.interrupted(signal.Signals(signum).name, self.doing)
            raise RunInterrupted(signum, self.record.report()) from None

    def _run(self) -> tuple[int, dict[str, Any]]:
        changes = changed_locks(self.root / STATE_DIR, self.root)
        self.record.data["lock_changes"] = [c.to_json() for c in changes]
        for change in changes:
            self._say(f"warning: {change.message()}")
        return self._subtasks_from(0)

    def _subtasks_from(
        self, start: int, reason: str = "max_iterations", turn: _Turn | None = None
    ) -> tuple[int, dict[str, Any]]:
        """Run the subtasks from index ``start`` on; ``turn`` is the one before them."""
        subtasks: list[str | None] = list(self.task.subtasks) or [None]
        for index, subtask in enumerate(subtasks[start:], start):
            reason, turn = self._loop(index, subtask)
            if reason == "max_iterations" and self.task.hil:
                break
            if turn.gate.decision != "pass":
                break
        assert turn is not None  # noqa: S101  # at least one subtask (None) always runs
        return self._finish(reason, turn)

    def _finish(self, reason: str, turn: _Turn) -> tuple[int, dict[str, Any]]:
        locked = self._lock(turn) if reason == "approved" else None
        decision = turn.gate.decision
        if reason == "max_iterations" and self.task.hil:
            last = turn.gate.report.reasons if turn.gate.report else [str(turn.gate.error)]
            path = self.record.escalate(self._escalation_reason(), last)
            self._say(f"escalated to a human: {self.record.shown(path)}")
            self._say(
                f"answer with: confgate run {self.name} --resume {self.record.run_id} "
                "--decision approve|reject|retry [--note TEXT]"
            )
            code = ExitCode.ESCALATED
        else:
            code = ExitCode.OK if decision == "pass" else ExitCode.GATE_FAILED
        advanced = code is ExitCode.OK
        self.record.finish(
            exit_reason=reason,
            locked_artifact=locked,
            decision=decision,
            advanced=advanced,
            exit_status=int(code),
        )
        verdict = "advanced" if advanced else ("escalated" if code == 3 else "blocked by the gate")
        self._say(f"{verdict} (exit reason: {reason}, gate: {decision}); run: {self.record.dir}")
        return int(code), self.record.report()

    def _resume(self, decision: str, note: str | None) -> tuple[int, dict[str, Any]]:
        if decision == "reject":
            last = self.record.answer(decision, note)["last_decision"]
            self._say(f"a human rejected run {self.record.run_id}")
            return self._close("human_rejected", last, ExitCode.GATE_FAILED)
        point = resume_point(self.record.data, self.task.subtasks, note)
        self.record.answer(decision, note)
        self._say(f"a human answered the escalation of run {self.record.run_id}: {decision}")
        if decision == "approve" and point.decision != "pass":
            self.record.data["escalated"] = True  # still open: retry or reject it
            self._say(
                f"approval cannot advance a task the gate holds (last decision "
                f"{point.decision}); answer --decision retry or reject"
            )
            return self._close("max_iterations", point.decision, ExitCode.GATE_FAILED)
        if decision == "approve":
            if point.subtask_index + 1 >= max(len(self.task.subtasks), 1):
                return self._close("human_approved", point.decision, ExitCode.OK)
            return self._subtasks_from(point.subtask_index + 1)
        nxt = point.iteration + 1
        reason, turn = self._loop(point.subtask_index, point.subtask, nxt, point.feedback, nxt)
        if turn.gate.decision != "pass" or (reason == "max_iterations" and self.task.hil):
            return self._finish(reason, turn)
        return self._subtasks_from(point.subtask_index + 1, reason, turn)

    def _close(
        self, reason: str, decision: str | None, code: ExitCode
    ) -> tuple[int, dict[str, Any]]:
        """End a resumed run without a new iteration (the human's word on the last one)."""
        advanced = code is ExitCode.OK
        self.record.finish(
            exit_reason=reason, decision=decision, advanced=advanced, exit_status=int(code)
        )
        verdict = "advanced" if advanced else "stopped"
        self._say(f"{verdict} (exit reason: {reason}, gate: {decision}); run: {self.record.dir}")
        return int(code), self.record.report()

    def _escalation_reason(self) -> str:
        what = "the challenger's approval" if self.pair.enabled else "the confidence threshold"
        return f"max_iterations ({self._max_iterations()}) reached without {what}"

    def _loop(
        self,
        subtask_index: int,
        subtask: str | None,
        first: int = 1,
        feedback: list[str] | None = None,
        last: int | None = None,
    ) -> tuple[str, _Turn]:
        """Iterations ``first`` to ``last`` (default ``max_iterations``) of one subtask."""
        feedback = feedback or []
        turn: _Turn | None = None
        for iteration in range(first, (last or self._max_iterations()) + 1):
            turn = self._iterate(subtask_index, subtask, iteration, feedback)
            reason = self._exit_reason(turn, subtask_index, subtask)
            self.record.add_iteration(turn.entry)
            if reason is not None:
                return reason, turn
            feedback = turn.feedback
        assert turn is not None  # noqa: S101  # max_iterations >= 1 (config)
        return "max_iterations", turn

    def _max_iterations(self) -> int:
        limits = [o.max_iterations for o in (self.loop, self.pair) if o.enabled]
        return min(limits) if limits else 1

    def _iterate(
        self, subtask_index: int, subtask: str | None, iteration: int, feedback: list[str]
    ) -> _Turn:
        driver = self._roles(subtask_index, iteration)[0]
        step = self.record.step_dir(subtask, iteration)
        role = "driver" if self.pair.enabled else "agent"
        answer, error = self._ask(driver, role, step, self._driver_prompt(subtask, feedback))
        output = self._artifact_output(answer)
        self.doing = f"the gate in iteration {iteration}"
        config = self.config_path.resolve() if self.config_path else None
        gate = run_gate(
            self.root, config, step / "gate-report.json", step / "gate.log", task=self.name
        )
        gate, confidence = self._confidence(gate, step / "gate-report.json")
        score = confidence.score if confidence else None
        entry: dict[str, Any] = {
            "iteration": iteration,
            "agent": driver,
            "role": role,
            "confidence_score": score,
            "decision": gate.decision,
            "subtask": subtask,
            "advisory": confidence.advisory if confidence else None,
            "gate_reasons": gate.report.reasons[:10] if gate.report else [str(gate.error)],
            "gate_report": self.record.shown(step / "gate-report.json"),
            "agent_error": error,
            "challenger": None,
            "exit_condition": None,
            "condition_errors": [],
        }
        shown = "n/a" if score is None else f"{score:.3f}"
        self._say(f"iteration {iteration}: {driver} -> gate {gate.decision}, confidence {shown}")
        turn = _Turn(iteration, driver, output, gate, confidence, entry)
        turn.feedback.append(evidence.evidence_feedback(iteration, gate, confidence))
        if error:
            turn.feedback.insert(0, f"Your previous answer failed: {error}")
        return turn

    def _exit_reason(self, turn: _Turn, subtask_index: int, subtask: str | None) -> str | None:
        if self.loop.enabled and turn.confidence and turn.confidence.advisory:
            self._note_pair(turn, subtask, None, skipped="confidence threshold met")
            return "confidence"
        pair_inputs = None
        if self.pair.enabled:
            approved = self._challenge(turn, subtask_index, subtask)
            pair_inputs = PairInputs(turn.iteration, approved)
            if approved:
                return "approved"
        score = turn.confidence.score if turn.confidence else None
        inputs = evidence.condition_inputs(turn.iteration, turn.gate, score, pair_inputs)
        met, errors = first_met(self.conditions, inputs)
        turn.entry["condition_errors"] = errors
        for problem in errors:
            self._say(f"warning: {problem}")
        if met is not None:
            turn.entry["exit_condition"] = met.source
            return "condition"
        if not (self.loop.enabled or self.pair.enabled):
            return "gate_passed" if turn.gate.decision == "pass" else "max_iterations"
        return None

    def _challenge(self, turn: _Turn, subtask_index: int, subtask: str | None) -> bool:
        challenger = self._roles(subtask_index, turn.iteration)[1]
        step = self.record.step_dir(subtask, turn.iteration)
        facts = evidence.evidence_feedback(turn.iteration, turn.gate, turn.confidence)
        prompt, system = challenger_prompt(self.prompt, turn.output, self.task.artifact, facts)
        answer, error = self._ask(challenger, "challenger", step, prompt, system)
        verdict = parse_challenger_answer(answer if answer is not None else "", turn.output)
        if error:
            verdict = ChallengerVerdict(False, "", f"the challenger failed: {error}")
        self._note_pair(turn, subtask, verdict)
        turn.entry["challenger"] = {
            "agent": challenger,
            "approved": verdict.approved,
            "critique": verdict.critique[:2000],
            "problem": verdict.problem,
        }
        self._say(f"challenger {challenger}: {'approved' if verdict.approved else 'not approved'}")
        turn.feedback.append(
            f"The challenger ({challenger}) critiqued your output:\n{verdict.critique[:8000]}"
        )
        return verdict.approved

    def _note_pair(
        self,
        turn: _Turn,
        subtask: str | None,
        verdict: ChallengerVerdict | None,
        skipped: str = "",
    ) -> None:
        if self.session is None:
            return
        challenger = self.session.challenger_agent
        if turn.driver == challenger:
            challenger = self.session.driver_agent
        self.session.add_turn(
            iteration=turn.iteration,
            subtask=subtask,
            driver=turn.driver,
            challenger=challenger,
            output=turn.output,
            verdict=verdict,
            skipped=skipped or None,
        )
        self.record.set_pair_session(self.session.to_json())
        if self.session.history:
            turn.feedback.append(self.session.context())

    def _ask(
        self, agent: str, role: str, step: Path, prompt: str, system: str | None = None
    ) -> tuple[str | None, str | None]:
        """(answer, None) or (None, error); prompt and answer are kept in the run directory."""
        where = step.name.replace("-", " ")
        if step.parent != self.record.dir:
            where += f" of subtask {step.parent.name}"
        self.doing = f"agent {agent} ({role}) in {where}"
        self.record.save_text(step / f"{role}-prompt.txt", prompt)
        try:
            reply = self.agents[agent].ask(prompt, system=system)
        except AgentError as exc:
            self.record.save_text(step / f"{role}-error.txt", str(exc))
            self._say(f"warning: {exc}")
            return None, str(exc)
        self.record.save_text(step / f"{role}-answer.txt", reply.text)
        return reply.text, None

    def _artifact_output(self, answer: str | None) -> str:
        """The artifact as it is now: the file the driver writes, else its answer."""
        if self.task.artifact is None:
            text = answer or ""
            self.record.save_text(self.record.dir / "artifact.txt", text)
            return text
        try:
            return (self.root / self.task.artifact).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return f"(the artifact {self.task.artifact} does not exist yet)"

    def _lock(self, turn: _Turn) -> str | None:
        target = (
            self.root / self.task.artifact
            if self.task.artifact
            else self.record.dir / "artifact.txt"
        )
        digest = record_lock(
            self.root / STATE_DIR, self.name, target, self.root, self.record.run_id
        )
        if digest:
            self._say(f"artifact {self.record.shown(target)} locked (sha256 {digest[:12]})")
        return digest

    def _confidence(
        self, gate: GateOutcome, report_path: Path
    ) -> tuple[GateOutcome, ConfidenceResult | None]:
        """The iteration's confidence; the loop's own goes into its gate report too."""
        if gate.report is None:
            return gate, None
        if not self.loop.enabled:
            return gate, gate.report.confidence
        evaluator = self._evaluator()
        scored = evidence.loop_confidence(
            self.loop, gate.report, root=self.root, task_prompt=self.prompt, evaluator=evaluator
        )
        _, _, may_advance = self.policy.tier(gate.report.risk_tier)
        return evidence.with_loop_confidence(
            gate, scored, task=self.name, may_advance=may_advance, path=report_path
        )

    def _evaluator(self) -> Agent | None:
        """The loop's evaluator with its ``llm_settings`` applied, as the gate applies its own."""
        name = self.loop.evaluator_agent or ""
        if name not in self.agents or name not in self.agent_configs:
            return None
        configured = self.agent_configs[name]
        adjusted = self.loop.llm_settings.applied_to(configured)
        if adjusted is configured:
            return self.agents[name]  # a program keeps its own settings
        from pytest_confgate.agents import build_agent

        return build_agent(name, adjusted)  # built once already: the key and SDK are there

    def _driver_prompt(self, subtask: str | None, feedback: list[str]) -> str:
        parts = [self.prompt.rstrip()]
        if subtask:
            parts.append(f"Subtask: {subtask}")
        if self.task.artifact:
            parts.append(f"Write your result to the file {self.task.artifact}.")
        parts.extend(feedback)
        return "\n\n".join(parts) + "\n"

    def _roles(self, subtask_index: int, iteration: int) -> tuple[str, str]:
        if self.session is None:
            return str(self.task.agent), ""
        driver, challenger = self._pair_agents()
        if roles_swapped(self.pair.role_switch, self.pair.checkpoints, subtask_index, iteration):
            return challenger, driver
        return driver, challenger

    def _pair_agents(self) -> tuple[str, str]:
        return str(self.pair.driver_agent or self.task.agent), str(self.pair.challenger_agent)

    def _conditions(self) -> list[ExitCondition]:
        texts = [*(self.loop.exit_conditions if self.loop.enabled else [])]
        texts += self.pair.exit_conditions if self.pair.enabled else []
        return [compile_condition(text) for text in texts]  # checked at load already

    def _say(self, line: str) -> None:
        print(f"[{self.name}] {line}", file=self.out, flush=True)
