"""A task's confidence loop measured by its gate step (issue 17): listed, so collected.

``confgate run`` runs the gate with ``--confgate-task NAME``; the metrics that task's loop
scores and ``gate.metrics`` lacks are collected in the same run, reported beside the gate's
own (``details.measured_for``) and left out of everything that decides: the tier, the
plugins' conditions, the gate's confidence and the policy. Collecting more never relaxes
the gate, so the option is honoured wherever it comes from.
"""

from __future__ import annotations

from pytest_confgate.config import ConfgateConfig, MetricConfig
from pytest_confgate.config.tasks import loop_only_metrics
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.models import EvalMetric


def check_task(config: ConfgateConfig, task: str | None, where: str) -> None:
    """A task named on the command line must exist in the configuration that was found."""
    if task is not None and task not in config.tasks:
        known = ", ".join(sorted(config.tasks)) or "none"
        raise ConfigError(
            f"--confgate-task {task}: {where} defines no such task under tasks "
            f"(defined: {known}); name one of them or drop the option"
        )


def loop_metrics_for(
    config: ConfgateConfig, task: str | None, measured: list[MetricConfig]
) -> list[MetricConfig]:
    """What the gate collects for ``task``'s loop on top of ``measured`` (none: no task, or
    the judging configuration does not define it; the loop then says it was not collected)."""
    if task is None:
        return []
    return loop_only_metrics(config.tasks.get(task), measured)


def loop_only_marked(
    metrics: list[EvalMetric], first: int, count: int, task: str | None
) -> tuple[list[EvalMetric], list[EvalMetric]]:
    """(every metric for the report, the loop-only ones marked; the metrics that decide).

    The loop-only metrics are ``metrics[first:first + count]``: the engine measures the
    gate's own entries first, then the loop's, then plugins' (a position, not a type: a
    loop's project coverage may sit beside the gate's patch coverage).
    """
    if not count:
        return metrics, metrics
    mark = f"tasks.{task}.overlays.confidence_loop"
    reported = [
        m.model_copy(update={"details": {**m.details, "measured_for": mark}})
        if first <= index < first + count
        else m
        for index, m in enumerate(metrics)
    ]
    return reported, metrics[:first] + metrics[first + count :]
