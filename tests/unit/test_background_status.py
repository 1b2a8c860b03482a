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


def test_the_helper_process_imports_the_tools_it_runs_and_not_the_gate_around_them(
    tmp_path: Path,
) -> None:
    """Issue 26: the helper's own start-up is most of a cold run's background cost; it needs
    the collectors of the tools it runs, not coverage.py, YAML, the tamper analysis or git."""
    import json
    import subprocess

    (tmp_path / "mod.py").write_text("x = 1\n", encoding="utf-8")
    request = {
        "configs": [{"type": "lint_score"}],
        "root": str(tmp_path),
        "sources": [str(tmp_path / "mod.py")],
        "cache_dir": None,
        "analysis": None,
    }
    script = (
        "import json, sys\n"
        "from pytest_confgate.gate.background import run_request\n"
        "out = run_request(json.loads(sys.argv[1]))\n"
        "print(json.dumps([out['lint_score']['status'], sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(request)],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )
    status, modules = json.loads(done.stdout)
    assert status == "ok"
    assert "pytest_confgate.collect.lint" in modules
    unneeded = ("yaml", "coverage", "pytest_confgate.collect.tamper",
                "pytest_confgate.config.loader", "pytest_confgate.gate.change",
                "pytest_confgate.collect.coverage.session", "pytest_confgate.github.api")
    assert not [name for name in unneeded if name in modules]
