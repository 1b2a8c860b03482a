"""``tasks:``: agent tasks and their overlays, and the rules checked when they load."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pytest_confgate.config.base import AgentName, Condition_, ConfigModel, Text
from pytest_confgate.config.metrics import (
    ConfidenceConfig,
    IntegrityMetricConfig,
    MetricConfig,
    checked_metrics,
    default_metrics,
    metric_key,
)

KeyPath = tuple[str | int, ...]


class ConfidenceLoopConfig(ConfidenceConfig):
    """``tasks.<name>.overlays.confidence_loop``: iterate until confident."""

    max_iterations: Annotated[int, Field(ge=1, le=100)] = 3
    metrics: list[MetricConfig] = Field(default_factory=default_metrics)
    exit_conditions: list[Condition_] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _check_metrics(cls, metrics: list[MetricConfig]) -> list[MetricConfig]:
        return checked_metrics(metrics)


class PairedWorkflowConfig(ConfigModel):
    """``tasks.<name>.overlays.paired_workflow``: a driver and a challenger."""

    enabled: bool = False
    driver_agent: AgentName | None = None
    challenger_agent: AgentName | None = None
    role_switch: Literal["session", "subtask", "checkpoint"] = "session"
    checkpoints: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)
    max_iterations: Annotated[int, Field(ge=1, le=100)] = 5
    exit_conditions: list[Condition_] = Field(default_factory=list)

    @model_validator(mode="after")
    def _checkpoints_for_checkpoint(self) -> PairedWorkflowConfig:
        if self.role_switch == "checkpoint" and not self.checkpoints:
            raise ValueError(
                "role_switch: checkpoint needs checkpoints: the iterations before which the "
                "roles swap, e.g. checkpoints: [3]"
            )
        return self


class OverlaysConfig(ConfigModel):
    confidence_loop: ConfidenceLoopConfig = Field(default_factory=ConfidenceLoopConfig)
    paired_workflow: PairedWorkflowConfig = Field(default_factory=PairedWorkflowConfig)


class TaskConfig(ConfigModel):
    """One agent task for ``confgate run``."""

    agent: AgentName | None = None
    prompt: Text | None = None
    artifact: Text | None = None
    subtasks: list[Text] = Field(default_factory=list)
    hil: bool = False
    """Human in the loop: a loop that runs out of iterations escalates (exit status 3)."""
    overlays: OverlaysConfig = Field(default_factory=OverlaysConfig)
    review: bool | None = None
    """A formal review task; default: "review" in its name."""

    @field_validator("subtasks")
    @classmethod
    def _unique_subtasks(cls, subtasks: list[str]) -> list[str]:
        twice = sorted({s for s in subtasks if subtasks.count(s) > 1})
        if twice:
            raise ValueError(f"subtasks listed twice: {', '.join(twice)}; keep one of each")
        return subtasks


def task_problems(tasks: Mapping[str, TaskConfig]) -> list[tuple[KeyPath, str]]:
    """The load-time rules for ``tasks``: who runs, who challenges, exit conditions."""
    if not tasks:  # most configurations: the CEL compiler is not even imported (issue 35)
        return []
    from pytest_confgate.config.expressions import compile_condition
    from pytest_confgate.exceptions import ConditionError

    problems: list[tuple[KeyPath, str]] = []
    names = list(tasks)
    for position, (name, task) in enumerate(tasks.items()):
        at: KeyPath = ("tasks", name)
        loop, pair = task.overlays.confidence_loop, task.overlays.paired_workflow
        blocks = [("confidence_loop", loop.exit_conditions)]
        blocks.append(("paired_workflow", pair.exit_conditions))
        for block, conditions in blocks:
            for index, text in enumerate(conditions):
                try:
                    compile_condition(text)
                except ConditionError as exc:
                    problems.append(((*at, "overlays", block, "exit_conditions", index), str(exc)))
        if not pair.enabled:
            if task.agent is None:
                problems.append(((*at, "agent"), "a task needs an agent: a name under agents"))
            continue
        problems.extend(_pair_problems(tasks, names[position + 1 :], at, task))
    return problems


def _pair_problems(
    tasks: Mapping[str, TaskConfig], later: list[str], at: KeyPath, task: TaskConfig
) -> list[tuple[KeyPath, str]]:
    pair = task.overlays.paired_workflow
    where: KeyPath = (*at, "overlays", "paired_workflow")
    driver = pair.driver_agent or task.agent
    if driver is None:
        return [((*where, "driver_agent"), "the paired workflow needs driver_agent (or the "
                 "task's agent) to be set")]
    if pair.challenger_agent is None:
        return [((*where, "challenger_agent"), "the paired workflow needs challenger_agent: "
                 "the agent that critiques the driver's output")]
    if pair.challenger_agent == driver:
        return [((*where, "challenger_agent"), f"challenger_agent {driver!r} is also the "
                 "driver; a challenger must be a different agent")]
    for name in later:
        other = tasks[name]
        review = other.review if other.review is not None else "review" in name.lower()
        if review and other.agent == pair.challenger_agent:
            return [((*where, "challenger_agent"), f"challenger {other.agent!r} is the agent of "
                     f"the later review task {name!r}; the formal reviewer must be independent "
                     "of the pair: choose another challenger or reviewer")]
    return []


def loop_only_metrics(task: TaskConfig | None, measured: list[MetricConfig]) -> list[MetricConfig]:
    """The metrics a task's confidence loop scores that ``measured`` (the gate's) lacks.

    The loop's gate step collects these too (issue 17), so the loop scores what it lists
    rather than a silent 0.0; they are reported beside the gate's own and never decide.
    """
    if task is None:
        return []
    loop = task.overlays.confidence_loop
    if not loop.enabled or "metrics" not in loop.model_fields_set:
        return []  # without its own list, the loop scores what the gate measured
    have = {metric_key(m) for m in measured}
    return [m for m in loop.metrics if metric_key(m) not in have]


def loop_metric_problems(
    gate_metrics: list[MetricConfig], name: str, task: TaskConfig
) -> list[tuple[KeyPath, str]]:
    """Loop metrics the loop's gate step cannot collect as written: a load-time error each.

    One gate step measures each metric type once: a type ``gate.metrics`` lists is measured
    with the gate's settings, so a loop entry may only add its ``weight`` to it. The one
    exception is ``requirement_coverage`` without ``requirements:``: its block
    must load as written (issue 4), so the gate step reports it as an error naming the fix.
    """
    loop = task.overlays.confidence_loop
    if not loop.enabled or "metrics" not in loop.model_fields_set:
        return []
    at: KeyPath = ("tasks", name, "overlays", "confidence_loop", "metrics")
    listed = {metric_key(m): (i, m) for i, m in enumerate(gate_metrics)}
    problems: list[tuple[KeyPath, str]] = []
    for index, metric in enumerate(loop.metrics):
        if metric_key(metric) in listed:
            where, gate_entry = listed[metric_key(metric)]
            differ = sorted(
                key
                for key in metric.model_fields_set - {"type", "weight"}
                if getattr(metric, key) != getattr(gate_entry, key)
            )
            if differ:
                problems.append(((*at, index, differ[0]), (
                    f"the loop cannot collect {metric.type} with its own {', '.join(differ)}: "
                    f"the gate step measures {metric.type} once, as gate.metrics[{where}] "
                    "says; set them alike there and here, or keep only type and weight here"
                )))
        elif isinstance(metric, IntegrityMetricConfig) and not metric.enabled:
            problems.append(((*at, index, "enabled"), (
                "the loop cannot collect test_integrity with enabled: false; enable it or "
                "remove it from the loop's metrics"
            )))
    return problems
