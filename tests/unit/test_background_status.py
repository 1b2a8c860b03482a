"""The status line while lint and security still run after the tests (issue 16)."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_confgate.config.metrics import LintMetricConfig
from pytest_confgate.gate.background import BackgroundTools

SLOW_RUFF = "import time; time.sleep(60)"


def test_a_running_helper_says_how_long_and_a_finished_one_says_nothing(tmp_path: Path) -> None:
    """16 s of silence after `[100%]` while bandit ran: now a line can say what runs."""
    (tmp_path / "mod.py").write_text("x = 1\n", encoding="utf-8")
    config = LintMetricConfig(type="lint_score", command=[sys.executable, "-c", SLOW_RUFF],
                              timeout_s=120)
    tools = BackgroundTools([config], tmp_path, [tmp_path], None)
    assert tools.running_for() is None  # not started
    tools.start()
    try:
        seconds = tools.running_for()
        assert seconds is not None
        assert seconds >= 0
    finally:
        tools.close()
    tools.result("lint_score")
    assert tools.running_for() is None
