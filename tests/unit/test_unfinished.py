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
            "gate": {
                "metrics": [{"type": "test_coverage", "paths": {"src/**": 0.9}}],
                "policy": {
                    "waivers": [{"rule": "B101", "reason": "legacy", "expires": "2030-01-01"}]
                },
            },
        }
    )
    with pytest.raises(ConfigError) as caught:
        refuse_unfinished(config, "confgate.yml")
    assert [p.split(" is not")[0] for p in caught.value.problems] == [
        "confgate.yml: gate.policy.waivers",
        "confgate.yml: gate.metrics[0].paths",
    ]
