"""lint_score: real ruff on small projects, and fake ruffs for every way ruff can fail (SPEC 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.processes import process_gone
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect.lint import (
    CHECK_ARGS,
    SYNTAX_ERROR_RULE,
    collect_lint_score,
    default_ruff_command,
    parse_ruff_json,
)
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, Finding, MetricStatus
from pytest_confgate.processes import ToolTimeout, run_tool

RUFF = default_ruff_command()
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is a runtime dependency")

PYPROJECT = '[tool.ruff]\nline-length = 100\n[tool.ruff.lint]\nselect = ["E", "F"]\n'
CLEAN = "def add(a, b):\n    return a + b\n"
UNUSED_IMPORT = "import os\n\nVALUE = 1\n"  # F401 at 1:8
SYNTAX_ERROR = "x = = 1\n"  # exactly one syntax error

FakeTool = Callable[[str], list[str]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """src/pkg with one clean file, one F401 and one syntax error, under a ruff config."""
    root = tmp_path / "project"
    package = root / "src" / "pkg"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (package / "clean.py").write_text(CLEAN)
    (package / "unused.py").write_text(UNUSED_IMPORT)
    (package / "broken.py").write_text(SYNTAX_ERROR)
    return root


@pytest.fixture
def fake_tool(tmp_path: Path) -> FakeTool:
    """Write an executable shell script standing in for ruff; returns the command prefix."""

    def write(body: str) -> list[str]:
        script = tmp_path / "bin" / "ruff"
        script.parent.mkdir(exist_ok=True)
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(0o755)
        return [str(script)]

    return write


def ruff_directly(root: Path, *args: str) -> str:
    assert RUFF is not None
    return subprocess.run(
        [*RUFF, *args], cwd=root, capture_output=True, text=True, check=False
    ).stdout


@needs_ruff
def test_lint_scores_the_share_of_files_with_no_violation(project: Path) -> None:
    metric = collect_lint_score(project, [Path("src")])

    assert metric.status is MetricStatus.OK
    assert metric.type == "lint_score"
    assert metric.value == pytest.approx(1 / 3)  # clean.py passes; unused.py, broken.py fail
    assert metric.details["files_checked"] == 3
    assert metric.details["files_with_violations"] == 2
    assert metric.details["violations"] == 2
    assert metric.reason is None


@needs_ruff
def test_lint_counts_equal_what_ruff_prints_when_run_directly(project: Path) -> None:
    metric = collect_lint_score(project, [Path("src")])

    violations = json.loads(ruff_directly(project, "check", "--output-format", "json", "src"))
    listed = ruff_directly(project, "check", "--show-files", "src").split()
    assert metric.details["violations"] == len(violations)
    assert metric.details["files_with_violations"] == len({v["filename"] for v in violations})
    assert metric.details["files_checked"] == len(listed)


@needs_ruff
def test_lint_reports_each_violation_as_a_finding_relative_to_the_root(project: Path) -> None:
    metric = collect_lint_score(project, [Path("src")])

    items = {item["rule"]: item for item in metric.details["items"]}
    assert set(items) == {"F401", SYNTAX_ERROR_RULE}
    expected = Finding(
        tool="ruff",
        rule="F401",
        file="src/pkg/unused.py",
        line=1,
        column=8,
        message="`os` imported but unused",
        url=items["F401"]["url"],
    )
    assert items["F401"] == expected.model_dump()
    assert items["F401"]["url"].startswith("https://")
    assert items[SYNTAX_ERROR_RULE]["file"] == "src/pkg/broken.py"


@needs_ruff
def test_lint_records_the_tool_its_version_and_the_command_it_ran(project: Path) -> None:
    metric = collect_lint_score(project, [Path("src")], weight=2.5)

    assert RUFF is not None
    assert metric.weight == 2.5
    assert metric.details["tool"] == "ruff"
    assert metric.details["command"] == [*RUFF, *CHECK_ARGS, "src"]
    assert CHECK_ARGS == ("check", "--output-format", "json", "--no-fix", "--force-exclude")
    assert f"ruff {metric.details['version']}" == ruff_directly(project, "--version").strip()
    assert metric.details["duration_s"] >= 0.0


@needs_ruff
def test_lint_uses_the_projects_own_ruff_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["F401"]\n')

    metric = collect_lint_score(project, [Path("src")])

    assert metric.value == pytest.approx(2 / 3)
    assert [item["rule"] for item in metric.details["items"]] == [SYNTAX_ERROR_RULE]


@needs_ruff
def test_lint_scores_one_when_no_file_has_a_violation(project: Path) -> None:
    metric = collect_lint_score(project, [Path("src/pkg/clean.py")])

    assert metric.status is MetricStatus.OK
    assert metric.value == 1.0
    assert metric.details["files_checked"] == 1
    assert metric.details["items"] == []


@needs_ruff
def test_lint_keeps_violations_outside_the_root_with_their_absolute_path(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "stray.py").write_text(UNUSED_IMPORT)

    metric = collect_lint_score(project, [elsewhere])

    assert metric.value == 0.0
    assert metric.details["items"][0]["file"] == (elsewhere / "stray.py").resolve().as_posix()


@needs_ruff
def test_lint_is_an_error_when_ruff_exits_2_on_a_broken_config(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ruff]\nline-lenght = 100\n")

    metric = collect_lint_score(project, [Path("src")])

    assert metric.status is MetricStatus.ERROR
    assert metric.value is None
    assert metric.reason is not None
    assert "ruff exited with code 2" in metric.reason
    assert "line-lenght" in metric.reason  # the tail of ruff's own stderr


@needs_ruff
@pytest.mark.parametrize(
    "paths",
    [pytest.param([Path("empty")], id="an-empty-folder"), pytest.param([], id="no-paths")],
)
def test_lint_is_an_error_when_ruff_checked_no_files(project: Path, paths: list[Path]) -> None:
    (project / "empty").mkdir()

    metric = collect_lint_score(project, paths)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"ruff checked no files under {project.resolve()}: check `source:`"


def test_lint_is_unavailable_when_ruff_is_missing(project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ruff"

    metric = collect_lint_score(project, [Path("src")], command=[str(missing)])

    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.value is None
    assert metric.reason is not None
    assert str(missing) in metric.reason
    assert "install ruff" in metric.reason


def test_lint_is_an_error_when_a_fake_ruff_exits_2(project: Path, fake_tool: FakeTool) -> None:
    command = fake_tool('echo "ruff failed" >&2\necho "  Cause: bad config" >&2\nexit 2\n')

    metric = collect_lint_score(project, [Path("src")], command=command)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert metric.reason.endswith("ruff failed\n  Cause: bad config")
    assert metric.details["command"][0] == command[0]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("echo '[]' ; exit 3\n", "unexpected code 3", id="exit-3"),
        pytest.param("kill -9 $$\n", "killed by signal 9", id="killed"),
    ],
)
def test_lint_is_an_error_when_ruff_exits_with_any_other_code(
    project: Path, fake_tool: FakeTool, body: str, expected: str
) -> None:
    metric = collect_lint_score(project, [Path("src")], command=fake_tool(body))

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert expected in metric.reason


@pytest.mark.parametrize(
    "stdout",
    [
        pytest.param("", id="nothing"),
        pytest.param("All checks passed!", id="plain-text"),
        pytest.param('{"violations": []}', id="an-object-not-a-list"),
        pytest.param("[1, 2]", id="a-list-of-numbers"),
        pytest.param('[{"filename": "a.py"}]', id="objects-missing-keys"),
        pytest.param('[{"filename": "a.py", "code": "F401", "message": "m"', id="truncated"),
    ],
)
def test_lint_is_an_error_when_ruff_prints_garbage(
    project: Path, fake_tool: FakeTool, stdout: str
) -> None:
    command = fake_tool(f"cat <<'EOF'\n{stdout}\nEOF\nexit 1\n")

    metric = collect_lint_score(project, [Path("src")], command=command)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert metric.reason.startswith("ruff did not print its JSON report")


def test_a_listing_that_exits_1_says_so_not_unexpected_code_1_expected_0_or_1(
    project: Path, fake_tool: FakeTool, tmp_path: Path
) -> None:
    """With the cache the file listing runs first; its exit 1 was "unexpected code 1
    (expected 0 or 1)", a contradiction that said nothing of what went wrong."""
    truncated = '[{"filename": "a.py", "code": "F401", "message": "m"'
    command = fake_tool(f"cat <<'EOF'\n{truncated}\nEOF\nexit 1\n")

    metric = collect_lint_score(
        project, [Path("src")], command=command, cache_dir=tmp_path / "cache"
    )

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert "expected 0 or 1" not in metric.reason
    assert metric.reason.startswith(
        "ruff exited with code 1 while listing the files it checks (`ruff check --show-files`"
    )
    assert '"code": "F401"' in metric.reason


def test_lint_is_an_error_when_ruff_runs_past_its_timeout(
    project: Path, fake_tool: FakeTool
) -> None:
    command = fake_tool("sleep 30\n")

    metric = collect_lint_score(project, [Path("src")], command=command, timeout_s=0.3)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"{command[0]} did not finish within 0.3 s and was killed"


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_lint_is_an_error_naming_the_cap_when_ruff_prints_too_much(
    project: Path, fake_tool: FakeTool, tmp_path: Path, cached: bool
) -> None:
    command = fake_tool("head -c 3000000 /dev/zero\n")

    metric = collect_lint_score(
        project,
        [Path("src")],
        command=command,
        max_output_bytes=1024 * 1024,
        cache_dir=tmp_path / "cache" if cached else None,
    )

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert "printed more than the output cap of 1 MiB (max_output_bytes)" in metric.reason


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_a_timeout_kills_the_tools_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "spawner"
    script.write_text(f'#!/bin/sh\nsleep 30 &\necho $! > "{pidfile}"\nwait\n')
    script.chmod(0o755)

    with pytest.raises(ToolTimeout):
        run_tool([str(script)], cwd=tmp_path, timeout_s=1.0)

    assert process_gone(int(pidfile.read_text()))


def test_a_real_python_fake_can_stand_in_for_ruff(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "pyruff"
    violation = {
        "filename": str(project / "src/pkg/clean.py"),
        "code": "E999",
        "message": "fake",
        "location": {"row": 2, "column": 1},
        "url": None,
    }
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"if '--show-files' in sys.argv: print({str(project / 'src/pkg/clean.py')!r})\n"
        f"elif '--version' in sys.argv: print('ruff 9.9.9')\n"
        f"else: print({json.dumps([violation])!r}); sys.exit(1)\n"
    )
    script.chmod(0o755)

    metric = collect_lint_score(project, [Path("src")], command=[str(script)])

    assert metric.value == 0.0
    assert metric.details["version"] == "9.9.9"
    assert metric.details["items"][0]["rule"] == "E999"
    assert metric.details["items"][0]["file"] == "src/pkg/clean.py"


@pytest.mark.parametrize("code", [None, "invalid-syntax"], ids=["ruff-before-0.8", "ruff-0.8+"])
def test_lint_names_syntax_errors_the_same_whatever_the_ruff_version(
    tmp_path: Path, code: str | None
) -> None:
    stdout = json.dumps(
        [{"filename": "a.py", "code": code, "message": "m", "location": {"row": 1, "column": 1}}]
    )

    (finding,) = parse_ruff_json(stdout, tmp_path)

    assert finding.rule == SYNTAX_ERROR_RULE


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(st.text() | _json.map(json.dumps))
def test_parsing_ruff_output_never_crashes_on_any_text(stdout: str) -> None:
    try:
        findings = parse_ruff_json(stdout, Path("/project"))
    except EvidenceError:
        return
    assert all(isinstance(finding, Finding) for finding in findings)


def _figures(metric: EvalMetric) -> dict[str, Any]:
    details = {k: v for k, v in metric.details.items() if k not in ("duration_s", "cache")}
    return {"value": metric.value, "status": metric.status, "details": details}


@needs_ruff
def test_cached_lint_figures_equal_an_uncached_run_cold_warm_and_after_an_edit(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    cold = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    warm = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    assert _figures(cold) == _figures(warm) == _figures(collect_lint_score(project, [Path("src")]))
    assert (cold.details["cache"], warm.details["cache"]) == (
        {"hits": 0, "misses": 3},
        {"hits": 3, "misses": 0},
    )
    (project / "src" / "pkg" / "clean.py").write_text("import sys\n" + CLEAN)

    edited = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert edited.details["cache"] == {"hits": 2, "misses": 1}
    assert edited.value == 0.0
    assert _figures(edited) == _figures(collect_lint_score(project, [Path("src")]))
    assert set(cold.details) == {*collect_lint_score(project, [Path("src")]).details, "cache"}


@needs_ruff
def test_lint_is_an_error_on_a_broken_config_even_when_every_file_is_cached(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    (project / "pyproject.toml").write_text("[tool.ruff]\nline-lenght = 100\n")

    metric = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert "ruff exited with code 2" in metric.reason


def test_cached_lint_is_an_error_when_the_file_listing_fails(
    project: Path, fake_tool: FakeTool, tmp_path: Path
) -> None:
    command = fake_tool(
        'case "$*" in *--version*) echo "ruff 9.9.9";; *--show-files*) echo "boom" >&2; exit 2;;'
        " *) echo '[]';; esac\n"
    )

    metric = collect_lint_score(project, [Path("src")], command=command, cache_dir=tmp_path / "c")

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert metric.reason.endswith("boom")


@needs_ruff
def test_cached_lint_is_an_error_when_ruff_checked_no_files(project: Path, tmp_path: Path) -> None:
    (project / "empty").mkdir()

    metric = collect_lint_score(project, [Path("empty")], cache_dir=tmp_path / "cache")

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"ruff checked no files under {project.resolve()}: check `source:`"


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_a_file_name_that_is_not_utf8_is_an_error_naming_it(
    project: Path, tmp_path: Path, cached: bool
) -> None:
    bad = os.fsencode(project / "src" / "pkg") + b"/bad\xffname.py"
    with open(bad, "wb") as handle:
        handle.write(b"import os\n")

    metric = collect_lint_score(
        project, [Path("src")], cache_dir=tmp_path / "cache" if cached else None
    )

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == (
        "ruff cannot check a file whose name is not UTF-8: src/pkg/bad\\xffname.py; rename it "
        "(git, coverage.py and GitHub cannot show it either)"
    )
