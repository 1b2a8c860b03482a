"""What a gate run starts and imports (issue 26 item 4: the fixed cost of a small run).

Observed, not mocked: a real ``sitecustomize`` on ``PYTHONPATH`` logs every Python process the
run starts, and a fresh interpreter reports its own ``sys.modules``. Speed itself is measured
by ``benchmarks/fixed_cost.py``, never here.
"""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import metric, past_the_trust_margin, read_report, write_config

TOOLS = """\
source: [calc]
gate:
  risk_tier: T0
  metrics:
    - {type: test_pass_rate}
    - {type: lint_score}
    - {type: security_score, min_severity: LOW}
"""


@pytest.fixture
def processes(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every Python process started from now on: one line of ``sys.argv`` each."""
    hooks = project.path / "hooks"
    hooks.mkdir()
    log = project.path / "processes.log"
    hooks.joinpath("sitecustomize.py").write_text(
        textwrap.dedent(
            f"""
            import atexit
            import sys


            def _log():
                with open({str(log)!r}, "a", encoding="utf-8") as handle:
                    handle.write(" ".join(sys.argv) + "\\n")


            atexit.register(_log)
            """
        ),
        encoding="utf-8",
    )
    path = [str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    # The gate's own helpers start with `python -I`, which reads no PYTHONPATH: the
    # interpreter they are started with logs their command line before it runs them.
    wrapper = hooks / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\n'
                       f'exec {shlex.quote(sys.executable)} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    log.write_text("", encoding="utf-8")
    return log


def _started(log: Path) -> list[str]:
    found = log.read_text(encoding="utf-8").splitlines()
    log.write_text("", encoding="utf-8")
    return found


def _helper(started: list[str]) -> list[str]:
    return [line for line in started if line.endswith("-m pytest_confgate.gate.background")]


def _figures(found: dict[str, Any]) -> dict[str, Any]:
    """A metric as the report shows it, without its timing and the interpreter's path (the
    ``processes`` spy's own, in this process's answers from the cache)."""
    details = {k: v for k, v in found["details"].items() if k != "duration_s"}
    if isinstance(details.get("command"), list):
        details["command"] = details["command"][1:]
    return {**found, "details": details}


def test_a_warm_run_starts_no_helper_process_and_reports_the_same_lint_and_security(
    project: pytest.Pytester, processes: Path
) -> None:
    project.path.joinpath("calc", "shell.py").write_text(
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n",
        encoding="utf-8",
    )
    write_config(project, TOOLS)
    assert project.runpytest("--confgate").ret == 0  # T0: findings are advisory
    cold = read_report(project)
    assert len(_helper(_started(processes))) == 1
    past_the_trust_margin(project.path / ".confgate" / "cache")

    assert project.runpytest("--confgate").ret == 0
    warm = read_report(project)

    started = _started(processes)
    assert not _helper(started), started
    assert not [line for line in started if "bandit" in line], started
    for kind in ("lint_score", "security_score"):
        assert _figures(metric(warm, kind)) == {
            **_figures(metric(cold, kind)),
            "details": {**_figures(metric(cold, kind))["details"],
                        "cache": metric(warm, kind)["details"]["cache"]},
        }
        assert metric(warm, kind)["details"]["cache"] == {"hits": 2, "misses": 0}
    assert metric(warm, "security_score")["value"] == 0.5
    assert warm["decision"] == cold["decision"] == "pass"
    assert warm["reasons"] == cold["reasons"]


def test_a_file_edited_since_the_last_run_starts_the_helper_and_is_measured_again(
    project: pytest.Pytester, processes: Path
) -> None:
    write_config(project, TOOLS)
    assert project.runpytest("--confgate").ret == 0
    _started(processes)
    project.path.joinpath("calc", "__init__.py").write_text(
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n"
        "\n\ndef add(a, b):\n    return a + b\n\n\n"
        "def scale(x):\n    return 0 if x < 0 else x * 10\n",
        encoding="utf-8",
    )

    assert project.runpytest("--confgate").ret == 0

    assert len(_helper(_started(processes))) == 1
    report = read_report(project)
    assert metric(report, "security_score")["details"]["cache"] == {"hits": 0, "misses": 1}
    assert metric(report, "security_score")["value"] == 0.0


IMPORTED = """
import sys

WATCHED = (
    "pytest_confgate.collect.tamper", "pytest_confgate.github.api",
    "pytest_confgate.collect.lint", "pytest_confgate.collect.security",
    "pytest_confgate.collect.checklist", "pytest_confgate.collect.requirements",
    "pytest_confgate.gate.background", "pytest_confgate.collect.coverage.session",
)


def pytest_sessionfinish(session):
    with open("imported.txt", "w") as handle:
        handle.write(",".join(m for m in WATCHED if m in sys.modules))
"""


@pytest.mark.parametrize(
    ("metrics", "imported"),
    [
        pytest.param(
            "[{type: test_pass_rate}, {type: test_coverage, min: 0.5}]",
            "pytest_confgate.collect.coverage.session",
            id="tests-and-coverage",
        ),
        # Cold: the helper process runs ruff and bandit, so this process imports neither.
        pytest.param(
            "[{type: test_pass_rate}, {type: lint_score}, {type: security_score}]",
            "pytest_confgate.gate.background",
            id="tools-cold",
        ),
    ],
)
def test_a_run_imports_only_what_its_metrics_use(
    project: pytest.Pytester, metrics: str, imported: str
) -> None:
    """Issue 26: the tamper analysis, the GitHub client, the tools' collectors and coverage
    were imported by every run, used or not; each is imported where it is used."""
    project.makeconftest(IMPORTED)
    write_config(project, f"source: [calc]\ngate:\n  risk_tier: T0\n  metrics: {metrics}\n")

    result = project.runpytest_subprocess("--confgate", "-p", "no:cacheprovider")

    assert result.ret == 0
    assert (project.path / "imported.txt").read_text(encoding="utf-8") == imported


def test_a_warm_run_names_the_bandit_command_as_the_helper_did_however_python_was_started(
    project: pytest.Pytester,
) -> None:
    """Python started as ``../../venv/bin/python`` keeps the ``..`` in ``sys.executable``, and
    the helper process it starts does not: the cached answer must spell bandit's command as
    the helper's cold run did, or the same project's report changes between runs."""
    write_config(project, TOOLS)
    python = os.path.relpath(sys.executable, project.path)
    assert python.startswith("..")

    def security() -> dict[str, Any]:
        result = project.run(python, "-m", "pytest", "--confgate", "-p", "no:cacheprovider")
        assert result.ret == 0
        return metric(read_report(project), "security_score")

    cold = security()
    past_the_trust_margin(project.path / ".confgate" / "cache")
    warm = security()

    assert (cold["details"]["cache"], warm["details"]["cache"]) == (
        {"hits": 0, "misses": 1},
        {"hits": 1, "misses": 0},
    )
    assert warm["details"]["command"] == cold["details"]["command"]



@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_as_the_project_left_it_while_its_tests_run(
    project: pytest.Pytester, enabled: bool
) -> None:
    """Issue 35: collection is paused while the gate's own start-up and finish run, and only
    then; a project that switched it off finds it off."""
    import gc

    project.makepyfile(
        test_gc=f"import gc\n\n\ndef test_gc():\n    assert gc.isenabled() is {enabled}\n"
    )
    write_config(
        project, "source: [calc]\ngate:\n  risk_tier: T0\n  metrics: [{type: test_pass_rate}]\n"
    )
    before = gc.isenabled()
    if not enabled:
        gc.disable()
    try:
        result = project.runpytest_inprocess("--confgate", "-p", "no:cacheprovider")
        assert gc.isenabled() is enabled
    finally:
        if before:
            gc.enable()
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=3)
