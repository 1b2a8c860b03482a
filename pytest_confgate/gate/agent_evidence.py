"""The gate's calls to agents: the ``llm_judge`` metric and the ``llm`` confidence score.

Agents are checked before any test runs (a missing key or SDK is a configuration error, found
in milliseconds), and asked only after every other metric is in, so the judge sees the gate's
own measurements. What the judge reads is the change itself: the pull request's title and
body (else the commit messages) as the task, and the whole diff since the merge base (the
judge says how much of it was shown). The judge screens all of it for text that tries to
instruct it; so does the confidence evaluator (``gate.confidence``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_confgate.collect.changes import change_diff, change_story
from pytest_confgate.config import (
    ConfgateConfig,
    LlmJudgeMetricConfig,
    LlmSettings,
)
from pytest_confgate.exceptions import AgentError, ConfigError, EvidenceError, GitHubError
from pytest_confgate.github.event import load_event
from pytest_confgate.models import ConfidenceResult, EvalMetric, MetricStatus

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent
    from pytest_confgate.gate.change import ChangeView
    from pytest_confgate.gate.confidence import LlmScore, LlmScorer

NO_TASK = "(no description: the pull request has none and the change has no commits yet)"


class AgentEvidence:
    """Builds the agents the gate needs and asks them; one per gate run."""

    def __init__(
        self,
        config: ConfgateConfig,
        root: Path,
        environ: Mapping[str, str],
        change: ChangeView,
        config_file: Path | None = None,
    ) -> None:
        self.config = config
        self.root = root
        self.environ = environ
        self.change = change
        self.config_file = config_file
        self._agents: dict[str, Agent] = {}
        self._task_text: tuple[str, str] | None = None
        self._diff_text: str | None = None
        self._cannot_answer: dict[str, str] = {}
        """Agents only advisory judges ask that preflight found unable to answer."""

    def needed(self, *, advisory: bool = True) -> list[str]:
        """The agents this gate will ask, in config order (``advisory=False``: those whose
        answer can block: a judge that is not advisory, the confidence evaluator)."""
        names = [
            m.evaluator_agent
            for m in self.config.gate.metrics
            if isinstance(m, LlmJudgeMetricConfig) and m.evaluator_agent is not None
            and (advisory or not m.advisory)
        ]
        confidence = self.config.gate.confidence
        if confidence.enabled and confidence.method != "formula" and confidence.evaluator_agent:
            names.append(confidence.evaluator_agent)
        return list(dict.fromkeys(names))

    def read_change(self) -> None:
        """Read the diff and the task the agents are shown now, before any code of the change
        runs (``confgate gate``): read after the run, they would be whatever the run left in
        the working tree and the branch."""
        if not self.needed():
            return
        with contextlib.suppress(EvidenceError):  # read again when asked, and said there
            self._diff()
        self._task()

    def preflight(self) -> None:
        """Raise ``ConfigError`` naming each agent that could not answer (key, SDK, program).

        An agent only advisory judges ask stops nothing: their metric is ``unavailable``.
        """
        from pytest_confgate.agents import preflight

        where = self.config_file or "configuration"
        problems = []
        blocking = self.needed(advisory=False)
        for name in self.needed():
            problem = preflight(name, self.config.agents[name], self.environ)
            if problem is None:
                continue
            if name in blocking:
                problems.append(f"{where}: agents.{name}: {problem}")
            else:
                self._cannot_answer[name] = f"{where}: agents.{name}: {problem}"
        if problems:
            raise ConfigError(problems)

    def judge(self, config: LlmJudgeMetricConfig, metrics: list[EvalMetric]) -> EvalMetric:
        """The ``llm_judge`` metric over the change; failures become a 0.0 ``error`` metric."""
        from pytest_confgate.agents.judge import injection_reason, judge_change, screen_judge_input
        from pytest_confgate.gate.confidence import summary

        name = config.evaluator_agent or ""
        if name in self._cannot_answer:
            return EvalMetric(
                type="llm_judge",
                status=MetricStatus.UNAVAILABLE,
                reason=f"the advisory judge cannot answer: {self._cannot_answer[name]}",
                details={"tool": "llm_judge", "evaluator_agent": name, "duration_s": 0.0},
            )
        try:
            diff = self._diff()
        except EvidenceError as exc:  # nothing was read, so nothing can be suspected
            return _not_asked(name, str(exc), {"injection_suspected": False})
        task, source = self._task()
        measurements = summary(metrics)
        try:
            agent = self._agent(name)
        except AgentError as exc:
            found = screen_judge_input(
                config, task=task, task_source=source, diff=diff, metrics_summary=measurements
            )
            why = injection_reason(found) if found.suspected else str(exc)
            return _not_asked(name, why, {**found.details(), "failure_kind": exc.kind})
        return judge_change(
            agent, config, task=task, task_source=source, diff=diff, metrics_summary=measurements
        )

    def confidence(self, metrics: list[EvalMetric]) -> ConfidenceResult | None:
        """The advisory score when ``gate.confidence.enabled``; None (not computed) otherwise."""
        settings = self.config.gate.confidence
        if not settings.enabled:
            return None
        from pytest_confgate.gate.confidence import evaluate_confidence, llm_scorer, load_prompt

        scorer = None
        if settings.method != "formula" and settings.evaluator_agent is not None:
            try:
                agent = self._agent(settings.evaluator_agent, overrides=settings.llm_settings)
                template = load_prompt(settings.prompt, self.root)
                diff = self._diff()
            except (AgentError, EvidenceError, ConfigError) as exc:
                scorer = _failing(str(exc))  # the formula stands in, and the breakdown says why
            else:
                task, source = self._task()
                scorer = llm_scorer(
                    agent, template, task=task, task_source=source, diff=diff, metrics=metrics
                )
        return evaluate_confidence(settings, metrics, scorer)

    def _agent(self, name: str, overrides: LlmSettings | None = None) -> Agent:
        from pytest_confgate.agents import build_agent

        key = name if overrides is None else f"{name}\0confidence"
        if key not in self._agents:
            config = self.config.agents[name]
            if overrides is not None:
                config = overrides.applied_to(config)
            self._agents[key] = build_agent(name, config, self.environ)
        return self._agents[key]

    def _task(self) -> tuple[str, str]:
        """What the change is for, and where that text comes from (for the screen's hits)."""
        if self._task_text is None:
            text, source = _pull_request_text(self.environ), "pull request"
            if not text:
                source = "commit messages"
                try:
                    text = change_story(self.root, self._merge_base())
                except EvidenceError:
                    text = ""
            self._task_text = (text.strip(), source) if text.strip() else (NO_TASK, "task")
        return self._task_text

    def _diff(self) -> str:
        """The whole diff: the judge cuts it and says so, and must know the real length."""
        if self._diff_text is None:
            self._diff_text = change_diff(self.root, self._merge_base())
        return self._diff_text

    def _merge_base(self) -> str | None:
        return self.change.changes.merge_base if self.change.changes is not None else None


def _pull_request_text(environ: Mapping[str, str]) -> str:
    """The pull request's title and body from the GitHub event file, or '' when there is none."""
    try:
        event = load_event(environ) or {}
    except GitHubError:
        return ""
    pull = event.get("pull_request")
    if not isinstance(pull, dict):
        return ""
    parts = [pull.get("title"), pull.get("body")]
    return "\n\n".join(part for part in parts if isinstance(part, str) and part.strip())


def _not_asked(agent: str, why: str, details: dict[str, object]) -> EvalMetric:
    return EvalMetric(
        type="llm_judge",
        value=0.0,
        status=MetricStatus.ERROR,
        reason=f"the judge could not be asked: {why}; the score counts as 0.0",
        details={"tool": "llm_judge", "evaluator_agent": agent, "duration_s": 0.0, **details},
    )


def _failing(error: str) -> LlmScorer:
    def ask() -> LlmScore:
        raise AgentError(error)

    return ask
