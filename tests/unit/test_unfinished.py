"""Options whose behaviour has not landed are refused, never silently ignored."""

from __future__ import annotations

import pytest

from pytest_confgate._unfinished import refuse_unfinished
from pytest_confgate.config import ConfgateConfig
from pytest_confgate.exceptions import ConfigError


def test_a_config_using_only_finished_options_is_accepted() -> None:
    refuse_unfinished(ConfgateConfig(), "confgate.yml")


def test_unfinished_options_are_each_named() -> None:
    config = ConfgateConfig.model_validate(
        {
            "base_ref": "origin/main",
            "gate": {
                "risk_rules": [{"paths": ["src/**"], "tier": "T3"}],
                "metrics": [{"type": "test_coverage", "scope": "changed"}],
            },
        }
    )
    with pytest.raises(ConfigError) as caught:
        refuse_unfinished(config, "confgate.yml")
    assert [p.split(" is not")[0] for p in caught.value.problems] == [
        "confgate.yml: base_ref",
        "confgate.yml: gate.risk_rules",
        "confgate.yml: gate.metrics[0].scope: 'changed'",
    ]
