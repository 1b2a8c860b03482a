"""The whole file: ``ConfgateConfig`` and the rules that span its sections."""

from __future__ import annotations

import difflib
from typing import Annotated, Literal

from pydantic import Field

from pytest_confgate.config.agents import AgentConfig, same_evaluator
from pytest_confgate.config.base import AgentName, ConfigModel, Text
from pytest_confgate.config.gate import GateConfig
from pytest_confgate.config.metrics import (
    NO_REQUIREMENTS,
    ConfidenceConfig,
    LlmJudgeMetricConfig,
    MetricConfig,
    RequirementMetricConfig,
)
from pytest_confgate.config.rank import RankConfig
from pytest_confgate.config.tasks import (
    KeyPath,
    TaskConfig,
    loop_metric_problems,
    task_problems,
)
from pytest_confgate.config.trust import TrustConfig


class ConfgateConfig(ConfigModel):
    """The whole file: ``confgate.yml``, ``confgate.yaml`` or ``[tool.confgate]``."""

    version: Literal[1] = 1
    project: Annotated[str, Field(min_length=1)] | None = None
    source: list[Annotated[str, Field(min_length=1)]] | None = None
    base_ref: Text | None = None
    """What ``scope: changed`` and ``risk_rules`` compare against (else ``GITHUB_BASE_REF``)."""
    agents: dict[AgentName, AgentConfig] = Field(default_factory=dict)
    gate: GateConfig = Field(default_factory=GateConfig)
    tasks: dict[AgentName, TaskConfig] = Field(default_factory=dict)
    rank: RankConfig = Field(default_factory=RankConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)


JUDGE_NEEDS_EVALUATOR = "llm_judge metric requires evaluator_agent to be set."
JUDGE_NOT_AUTHOR = "llm_judge evaluator_agent must differ from task agent."
EVALUATOR_NOT_AUTHOR = "confidence evaluator_agent must differ from task agent."
CHALLENGER_NOT_AUTHOR = "challenger_agent must differ from task agent."


def cross_check(config: ConfgateConfig) -> list[tuple[KeyPath, str]]:
    """Rules that span keys: agents that exist, judges that are not the author.

    Returned as (key path, message) so the loader can name the line; the ``llm_judge``
    messages are the exact words. Under ``confgate run`` every task's agents are
    authors (issue 17): the gate's judges and evaluator judge each task's work too.
    """
    problems: list[tuple[KeyPath, str]] = []
    known = sorted(config.agents)

    def agent(path: KeyPath, name: str | None) -> None:
        if name is not None and name not in config.agents:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            defined = ", ".join(known) if known else "none"
            problems.append(
                (path, f"agent {name!r} is not defined under agents{hint}; defined: {defined}")
            )

    def metrics(path: KeyPath, items: list[MetricConfig], author: str | None) -> None:
        for index, metric in enumerate(items):
            if not isinstance(metric, LlmJudgeMetricConfig):
                continue
            at = (*path, index)
            if metric.evaluator_agent is None:
                problems.append((at, JUDGE_NEEDS_EVALUATOR))
            elif (alike := _alike(config, metric.evaluator_agent, author)) is not None:
                problems.append(((*at, "evaluator_agent"), JUDGE_NOT_AUTHOR + alike))
            else:
                agent((*at, "evaluator_agent"), metric.evaluator_agent)

    def confidence(path: KeyPath, block: ConfidenceConfig, author: str | None) -> None:
        if block.method == "formula":
            agent((*path, "evaluator_agent"), block.evaluator_agent)
        elif block.evaluator_agent is None:
            problems.append(
                ((*path, "evaluator_agent"), f"method {block.method!r} needs evaluator_agent: "
                 "the agent that gives the LLM's confidence (never the author)")
            )
        elif (alike := _alike(config, block.evaluator_agent, author)) is not None:
            problems.append(((*path, "evaluator_agent"), JUDGE_NOT_AUTHOR + alike))
        else:
            agent((*path, "evaluator_agent"), block.evaluator_agent)

    agent(("gate", "agent"), config.gate.agent)
    agent(("rank", "evaluator_agent"), config.rank.evaluator_agent)
    for index, item in enumerate(config.gate.metrics):
        if isinstance(item, RequirementMetricConfig) and item.requirements is None:
            problems.append((("gate", "metrics", index), NO_REQUIREMENTS))
    metrics(("gate", "metrics"), config.gate.metrics, config.gate.agent)
    confidence(("gate", "confidence"), config.gate.confidence, config.gate.agent)
    for name, task in config.tasks.items():
        at: KeyPath = ("tasks", name)
        agent((*at, "agent"), task.agent)
        loop = task.overlays.confidence_loop
        metrics((*at, "overlays", "confidence_loop", "metrics"), loop.metrics, task.agent)
        confidence((*at, "overlays", "confidence_loop"), loop, task.agent)
        pair = task.overlays.paired_workflow
        agent((*at, "overlays", "paired_workflow", "driver_agent"), pair.driver_agent)
        agent((*at, "overlays", "paired_workflow", "challenger_agent"), pair.challenger_agent)
        problems.extend(_independence(config, name, task))
        problems.extend(loop_metric_problems(config.gate.metrics, name, task))
    problems.extend(task_problems(config.tasks))
    return _unique(problems)


def _authors(task: TaskConfig) -> list[str]:
    """Who writes a task's work under ``confgate run``: its agent, the pair's driver, and the
    challenger too when the roles switch (it then drives)."""
    pair = task.overlays.paired_workflow
    names = [task.agent]
    if pair.enabled:
        names.append(pair.driver_agent or task.agent)
        if pair.role_switch != "session":
            names.append(pair.challenger_agent)
    return [n for n in dict.fromkeys(names) if n is not None]


def _independence(
    config: ConfgateConfig, name: str, task: TaskConfig
) -> list[tuple[KeyPath, str]]:
    """Every judge, evaluator and challenger a task's run asks, against its authors."""
    authors = _authors(task)
    loop, pair = task.overlays.confidence_loop, task.overlays.paired_workflow
    at: KeyPath = ("tasks", name, "overlays")
    asked: list[tuple[KeyPath, str | None, str]] = [
        (("gate", "metrics", i, "evaluator_agent"), m.evaluator_agent, JUDGE_NOT_AUTHOR)
        for i, m in enumerate(config.gate.metrics)
        if isinstance(m, LlmJudgeMetricConfig)
    ]
    asked += [
        ((*at, "confidence_loop", "metrics", i, "evaluator_agent"), m.evaluator_agent,
         JUDGE_NOT_AUTHOR)
        for i, m in enumerate(loop.metrics if loop.enabled else [])
        if isinstance(m, LlmJudgeMetricConfig)
    ]
    for where, block in ((("gate", "confidence"), config.gate.confidence),
                         ((*at, "confidence_loop"), loop)):
        if block.enabled and block.method != "formula":
            asked.append(((*where, "evaluator_agent"), block.evaluator_agent,
                          EVALUATOR_NOT_AUTHOR))
    if pair.enabled:
        asked.append(((*at, "paired_workflow", "challenger_agent"), pair.challenger_agent,
                      CHALLENGER_NOT_AUTHOR))
    problems = []
    for path, who, message in asked:
        if who is None:
            continue
        driver = pair.driver_agent or task.agent
        if path[-1] == "challenger_agent":
            if who != task.agent or who == driver:
                continue  # only the task's agent; one that drives has its own (task_problems)
        elif who not in authors:
            author = next((a for a in authors if _alike(config, who, a) is not None), None)
            if author is not None:
                problems.append((path, f"{message}{_alike(config, who, author)}: {author!r} "
                                       f"writes the work of task {name!r} under confgate run; "
                                       "choose another model"))
            continue
        problems.append((path, f"{message} ({who!r} writes the work of task {name!r} under "
                               "confgate run; choose another agent)"))
    return problems


def _alike(config: ConfgateConfig, who: str, author: str | None) -> str | None:
    """Why ``who`` cannot judge ``author``'s work ('' for the same name), or None."""
    if author is None:
        return None
    if who == author:
        return ""
    first, second = config.agents.get(who), config.agents.get(author)
    if first is None or second is None:
        return None
    same = same_evaluator(first, second)
    return None if same is None else f" ({who!r} and {author!r} are {same})"


def _unique(problems: list[tuple[KeyPath, str]]) -> list[tuple[KeyPath, str]]:
    """One message per key: the task-level check can repeat what the older one said."""
    seen: dict[KeyPath, str] = {}
    for path, message in problems:
        seen.setdefault(path, message)
    return list(seen.items())
