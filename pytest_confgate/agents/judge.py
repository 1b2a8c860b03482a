"""``llm_judge``: an independent evaluator agent scores the change.

What the judge would read (the diff as it will be shown, the task from the pull request or
the commits, the gate's other measurements) is screened first (``screen``). When the screen
finds text that tries to instruct an evaluator, the judge is not asked at all: the metric
fails closed (value 0.0, status ``error``, the reason names the hits) and ``gate/tiers``
raises the tier to at least T2, so a human looks. Suspicion can only make the gate stricter.

Otherwise the judge gets the fenced prompt with a fresh canary (``judge_prompt``) ``repeats``
times and the median score becomes the metric. Any failed call (agent error or timeout, an
unusable answer, a missing or wrong canary) makes the metric 0.0 with status ``error`` and
the reason: conservative, never raised. The gate takes pass/fail from the score and the
metric's ``min``; a ``pass`` field in the answer is ignored.

Then, unless ``ablation: false``, the judge's own ablation (``ablation``): one more call
about the diff with the comments and string literals the change added blanked out and the
names it added (identifiers, file names) renamed, and one more without the task the change's
author wrote (the pull request's body or the commit messages; not made when the
configuration gives the task). A score that falls by more than ``ablation_tolerance``
without them means the change's own words moved the judge: ``injection_suspected`` (the tier
rises to T2), and the lowest score is the metric's. ``details.ablation`` and
``details.ablation_task`` say what each cost (0 calls when there was nothing to leave out).

``details`` always says ``injection_suspected`` (true or false), how long the diff was
(``diff_chars``) and whether the judge saw only part of it (``diff_truncated``; the policy
then treats the metric as advisory unless ``allow_truncated_diff``), every attempt made and,
on failure, its ``failure_kind``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_confgate.agents.ablation import ablate_diff
from pytest_confgate.agents.judge_prompt import (
    JudgeAnswer,
    build_judge_prompt,
    new_canary,
    new_fence,
    parse_judge_answer,
)
from pytest_confgate.agents.screen import Screening, screen_diff, screen_text
from pytest_confgate.exceptions import AgentError
from pytest_confgate.models import EvalMetric, MetricStatus

if TYPE_CHECKING:
    from pytest_confgate.agents import Agent, AgentReply
    from pytest_confgate.config import LlmJudgeMetricConfig

RAW_ANSWER_CHARS = 2_000
"""How much of an unusable answer the report keeps, to show what the judge said."""

_MAX_REASONING_CHARS = 4_000
_MAX_SUGGESTIONS = 20
_MAX_SUGGESTION_CHARS = 1_000
MEASUREMENTS = "gate measurements"
"""How hits in the gate's own measurements (the other metrics' text) are located."""


def judge_change(
    agent: Agent,
    config: LlmJudgeMetricConfig,
    *,
    task: str,
    diff: str,
    metrics_summary: str,
    task_source: str = "task",
) -> EvalMetric:
    """Screen what the judge would read, then ask it ``config.repeats`` times and report the
    median score (issue 21).

    ``task`` is the pull request's description (or the commit messages; ``task_source`` names
    it in hits); ``config.task``, when set, replaces it and, being the gate's own
    configuration, is not screened. ``diff`` is the whole diff: the judge is shown its first
    ``config.max_diff_chars`` characters. Each call gets a fresh fence and canary. Never raises
    for the judge's failure: see the module docstring.
    """
    started = time.perf_counter()
    details = _initial_details(config, diff)
    screening = screen_judge_input(
        config, task=task, task_source=task_source, diff=diff, metrics_summary=metrics_summary
    )
    details.update(screening.details())
    if screening.suspected:
        return _failed(config, details, started, injection_reason(screening), "injection_suspected")
    problem = _independence_problem(agent, config)
    if problem is not None:
        return _failed(config, details, started, problem, "configuration")
    task = config.task if config.task is not None else task
    answers: list[JudgeAnswer] = []
    for call in range(1, config.repeats + 1):
        details["calls"] = call
        system, user, canary = _judge_prompt(config, task, diff, metrics_summary)
        where = f"call {call} of {config.repeats}"
        answer = _ask_judge(agent, system, user, canary, where, details)
        if isinstance(answer, str):
            return _failed(config, details, started, answer, details["failure_kind"])
        answers.append(answer)
    metric = _scored(config, details, started, answers)
    if not config.ablation:
        return metric
    judged = metric.value if metric.value is not None else 0.0
    for key, texts in (("ablation", _diff_ablation(task, diff, metrics_summary)),
                       ("ablation_task", _task_ablation(config, task, diff, metrics_summary))):
        if isinstance(texts, str):
            details[key] = {"calls": 0, "why": texts}
            continue
        problem = _ablated_call(agent, config, texts, judged, details, key)
        if problem is not None:
            return _failed(config, details, started, problem, details["failure_kind"])
    value = min(judged, details["ablation"].get("score", judged),
                details["ablation_task"].get("score", judged))
    details["duration_s"] = round(time.perf_counter() - started, 6)
    return metric.model_copy(update={"value": value, "details": details})


def _diff_ablation(task: str, diff: str, metrics_summary: str) -> tuple[str, str, str] | str:
    """What to ask once more, without the change's prose and new names; or why not."""
    ablated = ablate_diff(diff)
    if ablated == diff:
        return "the change adds no comments, strings or names of two words or more"
    return task, ablated, metrics_summary


_NO_TASK = "(left out: the judge is asked once without the change's own description)"


def _task_ablation(
    config: LlmJudgeMetricConfig, task: str, diff: str, metrics_summary: str
) -> tuple[str, str, str] | str:
    """What to ask once more, without the task the change's author wrote (the pull request's
    body): words there that move the judge are as much the change's as a comment in the diff.
    Or why not."""
    if config.task is not None:
        return "the configuration gives the task"
    if not task.strip():
        return "no task"
    return _NO_TASK, diff, metrics_summary


_ABLATED = {
    "ablation": ("the ablation call", "the change's comments, strings and new names (ablation)"),
    "ablation_task": ("the call without the task",
                      "the change's description (ablation without it)"),
}


def _ablated_call(
    agent: Agent,
    config: LlmJudgeMetricConfig,
    texts: tuple[str, str, str],
    judged: float,
    details: dict[str, Any],
    key: str,
) -> str | None:
    """Ask about ``texts`` (task, diff, measurements); record under ``key`` and count a fall
    beyond the tolerance as a hit; None, or why the metric is an error."""
    call, where = _ABLATED[key]
    system, user, canary = _judge_prompt(config, *texts)
    try:
        reply = agent.ask(user, system=system)
    except AgentError as exc:
        details["attempts"] += exc.attempts
        details["failure_kind"] = exc.kind
        return f"the judge failed ({call}): {exc}"
    _add_usage(details, reply)
    answer = parse_judge_answer(reply.text, canary)
    if answer.score is None:
        details["raw_answers"].append({"call": key, "text": _clip(reply.text, RAW_ANSWER_CHARS)})
        details["failure_kind"] = answer.error_kind
        return f"unusable judge answer ({call}): {answer.error}"
    rise = judged - answer.score
    suspected = rise > config.ablation_tolerance
    details[key] = {
        "calls": 1, "score": answer.score, "judged": judged, "rise": round(rise, 6),
        "tolerance": config.ablation_tolerance, "injection_suspected": suspected,
    }
    if suspected:
        hit = {"where": where, "kind": "ablation",
               "text": f"score {judged:g} with them, {answer.score:g} without"}
        details["injection_suspected"] = True
        details["injection_hits"] = [*details.get("injection_hits", []), hit]
        details["injection_hit_count"] = int(details.get("injection_hit_count") or 0) + 1
    return None


def screen_judge_input(
    config: LlmJudgeMetricConfig, *, task: str, task_source: str, diff: str, metrics_summary: str
) -> Screening:
    """Screen what the judge reads and the change's author wrote: the diff as shown, the task
    (unless the configuration gives it) and the other metrics' text."""
    found = screen_diff(diff[: config.max_diff_chars])
    if config.task is None:
        found += screen_text(task_source, task)
    return found + screen_text(MEASUREMENTS, metrics_summary)


def injection_reason(screening: Screening) -> str:
    """Why the judge was not asked, naming the first hits."""
    return (
        "prompt injection suspected: text the judge would read tries to instruct it, at "
        f"{screening.summary()}; the judge was not asked, and a human must review the change"
    )


def _judge_prompt(
    config: LlmJudgeMetricConfig, task: str, diff: str, metrics_summary: str
) -> tuple[str, str, str]:
    """(system, user, canary) for one call, with a fence and a canary no text contains."""
    texts = [*config.criteria, task, diff, metrics_summary]
    canary = _fresh(new_canary, texts)
    system, user = build_judge_prompt(
        criteria=config.criteria,
        task=task,
        diff=diff,
        metrics_summary=metrics_summary,
        fence=_fresh(new_fence, texts),
        canary=canary,
        max_diff_chars=config.max_diff_chars,
    )
    return system, user, canary


def _fresh(draw: Callable[[], str], texts: list[str]) -> str:
    token = draw()
    while any(token in text for text in texts):  # astronomically unlikely: draw again
        token = draw()
    return token


def _ask_judge(
    agent: Agent, system: str, user: str, canary: str, where: str, details: dict[str, Any]
) -> JudgeAnswer | str:
    """One call: the valid answer, or why the metric is an error (``failure_kind`` set)."""
    try:
        reply = agent.ask(user, system=system)
    except AgentError as exc:
        details["attempts"] += exc.attempts
        details["failure_kind"] = exc.kind
        return f"the judge failed ({where}): {exc}"
    _add_usage(details, reply)
    answer = parse_judge_answer(reply.text, canary)
    if answer.score is None:
        raw = {"call": details["calls"], "text": _clip(reply.text, RAW_ANSWER_CHARS)}
        details["raw_answers"].append(raw)
        details["failure_kind"] = answer.error_kind
        return f"unusable judge answer ({where}): {answer.error}"
    details["scores"].append(answer.score)
    details["confidences"].append(answer.confidence)
    return answer


def _independence_problem(agent: Agent, config: LlmJudgeMetricConfig) -> str | None:
    """Load-time checks repeated where the judge is called: a judge must be the evaluator."""
    if config.evaluator_agent is None:
        return "llm_judge metric requires evaluator_agent to be set."
    if agent.name != config.evaluator_agent:
        return (
            f"the judge was called with agent {agent.name!r}, but the metric's "
            f"evaluator_agent is {config.evaluator_agent!r}"
        )
    return None


def _initial_details(config: LlmJudgeMetricConfig, diff: str) -> dict[str, Any]:
    return {
        "tool": "llm_judge",
        "version": None,
        "duration_s": 0.0,
        "evaluator_agent": config.evaluator_agent,
        "model": None,
        "repeats": config.repeats,
        "calls": 0,
        "attempts": 0,
        "scores": [],
        "confidences": [],
        "median": None,
        "spread": None,
        "evaluation_confidence": None,
        "reasoning": "",
        "suggestions": [],
        "input_tokens": None,
        "output_tokens": None,
        "latency_s": 0.0,
        "raw_answers": [],
        "failure_kind": None,
        "diff_chars": len(diff),
        "diff_shown_chars": min(len(diff), config.max_diff_chars),
        "diff_truncated": len(diff) > config.max_diff_chars,
        "allow_truncated_diff": config.allow_truncated_diff,
        "advisory": config.advisory,
    }


def _add_usage(details: dict[str, Any], reply: AgentReply) -> None:
    if details["model"] is None and reply.model:
        details["model"] = details["version"] = reply.model
    details["attempts"] += reply.attempts
    details["latency_s"] = round(details["latency_s"] + reply.latency_s, 6)
    for key, used in (("input_tokens", reply.input_tokens), ("output_tokens", reply.output_tokens)):
        if used is not None:
            details[key] = (details[key] or 0) + used


def _scored(
    config: LlmJudgeMetricConfig,
    details: dict[str, Any],
    started: float,
    answers: list[JudgeAnswer],
) -> EvalMetric:
    scores = [answer.score for answer in answers if answer.score is not None]
    spread = max(scores) - min(scores)
    # The answer at the median (the lower middle one for an even count) speaks for the rest.
    middle = sorted(answers, key=lambda answer: answer.score or 0.0)[(len(answers) - 1) // 2]
    suggestions = middle.suggestions[:_MAX_SUGGESTIONS]
    details.update(
        median=statistics.median(scores),
        spread=spread,
        evaluation_confidence=evaluation_confidence(details["confidences"], spread),
        reasoning=_clip(middle.reasoning, _MAX_REASONING_CHARS),
        suggestions=[_clip(text, _MAX_SUGGESTION_CHARS) for text in suggestions],
        duration_s=round(time.perf_counter() - started, 6),
    )
    return EvalMetric(
        type="llm_judge",
        value=details["median"],
        weight=config.weight,
        status=MetricStatus.OK,
        details=details,
    )


def evaluation_confidence(confidences: Sequence[float | None], spread: float) -> float | None:
    """How far the judging can be trusted: the judges' mean confidence x (1 - spread).

    Judges that disagree with each other (a wide spread of scores over ``repeats``) make the
    median less trustworthy however sure each one claims to be: a spread of 0 keeps the mean,
    a spread of 1 (one says 0, another 1) gives 0. Judges that gave no confidence are left out
    of the mean; None when none gave one.
    """
    given = [value for value in confidences if value is not None]
    if not given:
        return None
    return statistics.fmean(given) * (1.0 - spread)


def _failed(
    config: LlmJudgeMetricConfig,
    details: dict[str, Any],
    started: float,
    reason: str,
    kind: str | None,
) -> EvalMetric:
    details["duration_s"] = round(time.perf_counter() - started, 6)
    details["failure_kind"] = kind or "error"
    return EvalMetric(
        type="llm_judge",
        value=0.0,
        weight=config.weight,
        status=MetricStatus.ERROR,
        reason=f"{reason}; the judge's score counts as 0.0",
        details=details,
    )


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"
