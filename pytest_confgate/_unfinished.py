"""Options that are in the schema but whose behaviour has not landed yet.

Accepting them silently would be a lie (``scope: changed`` quietly judging everything), so
they are refused at load time with a clear error until their feature arrives. Each feature's
commit removes its entry here.
"""

from __future__ import annotations

from pytest_confgate.config import ConfgateConfig
from pytest_confgate.exceptions import ConfigError

_WHY = "is not supported by this version of pytest-confgate yet; remove it"


def refuse_unfinished(config: ConfgateConfig, source: str) -> None:
    """Raise one ``ConfigError`` naming every option that cannot be honoured yet."""
    problems = []
    gate = config.gate
    if gate.policy.waivers:
        problems.append(f"{source}: gate.policy.waivers {_WHY}")
    for index, metric in enumerate(gate.metrics):
        where = f"{source}: gate.metrics[{index}]"
        if getattr(metric, "paths", None):
            problems.append(f"{where}.paths {_WHY}")
    if problems:
        raise ConfigError(problems)
