"""security_score: real bandit on small projects, and fake bandits for every way it can fail."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect._bandit_files import BANDIT_DEFAULT_EXCLUDE, bandit_targets
from pytest_confgate.collect._tool import display_path
from pytest_confgate.collect.security import (
    FORMAT_ARGS,
    BanditReport,
    collect_security_score,
    default_bandit_command,
    parse_bandit_json,
)
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import EvalMetric, MetricStatus

BANDIT = default_bandit_command()
needs_bandit = pytest.mark.skipif(BANDIT is None, reason="bandit is a runtime dependency")

# B404 import subprocess (LOW/HIGH) at 1:0; B602 shell=True (HIGH/HIGH) at 5:11
SHELL = "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n"
ASSERTS = "def check(x):\n    assert x\n    return x\n"  # B101 (LOW/HIGH)
SETTINGS = 'password = "hunter2"\nscratch = open("/tmp/scratch")\n'  # B105 LOW/MED, B108 MED/MED
CLEAN = "def add(a, b):\n    return a + b\n"
UNPARSABLE = "def broken(:\n"

FakeTool = Callable[[str], list[str]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """src/app with three flagged files and one clean one (four scanned)."""
    root = tmp_path / "project"
    app = root / "src" / "app"
    app.mkdir(parents=True)
    for name, text in {
        "shell.py": SHELL,
        "asserts.py": ASSERTS,
        "settings.py": SETTINGS,
        "clean.py": CLEAN,
    }.items():
        (app / name).write_text(text)
    return root


@pytest.fixture
def fake_tool(tmp_path: Path) -> FakeTool:
    """Write an executable shell script standing in for bandit; returns the command prefix."""

    def write(body: str) -> list[str]:
        script = tmp_path / "bin" / "bandit"
        script.parent.mkdir(exist_ok=True)
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(0o755)
        return [str(script)]

    return write


def bandit_directly(root: Path, *args: str) -> dict[str, object]:
    assert BANDIT is not None
    stdout = subprocess.run(
        [*BANDIT, *args, "-f", "json", "-q"], cwd=root, capture_output=True, text=True, check=False
    ).stdout
    report: dict[str, object] = json.loads(stdout)
    return report


THRESHOLD_TABLE = [
    ("LOW", "LOW", 5, 3, (1, 1, 3)),  # B404 B602 | B101 | B105 B108
    ("MEDIUM", "LOW", 2, 2, (1, 1, 3)),  # B602 | B108
    ("HIGH", "LOW", 1, 1, (1, 1, 3)),  # B602
    ("LOW", "MEDIUM", 5, 3, (1, 1, 3)),  # nothing here is LOW confidence
    ("LOW", "HIGH", 3, 2, (1, 0, 2)),  # B404 B602 | B101
    ("HIGH", "HIGH", 1, 1, (1, 0, 2)),  # B602
    ("medium", "medium", 2, 2, (1, 1, 3)),  # case does not matter
]


@needs_bandit
@pytest.mark.parametrize(
    ("min_severity", "min_confidence", "findings", "files", "by_severity"),
    THRESHOLD_TABLE,
    ids=[f"severity-{row[0]}-confidence-{row[1]}" for row in THRESHOLD_TABLE],
)
def test_security_scores_files_clean_at_or_above_both_thresholds(
    project: Path,
    min_severity: str,
    min_confidence: str,
    findings: int,
    files: int,
    by_severity: tuple[int, int, int],
) -> None:
    metric = collect_security_score(
        project, [Path("src")], min_severity=min_severity, min_confidence=min_confidence
    )

    assert metric.status is MetricStatus.OK
    assert metric.type == "security_score"
    assert metric.value == (4 - files) / 4
    assert metric.details["files_scanned"] == 4
    assert metric.details["files_with_findings"] == files
    assert metric.details["findings"] == findings
    assert len(metric.details["items"]) == findings
    assert metric.details["by_severity"] == dict(
        zip(("HIGH", "MEDIUM", "LOW"), by_severity, strict=True)
    )
    assert metric.details["min_severity"] == min_severity.upper()
    assert metric.details["min_confidence"] == min_confidence.upper()


@needs_bandit
def test_security_counts_equal_what_bandit_prints_when_run_directly(project: Path) -> None:
    metric = collect_security_score(project, [Path("src")])

    report = bandit_directly(project, "-r", "src")
    results = report["results"]
    metrics = report["metrics"]
    assert isinstance(results, list)
    assert isinstance(metrics, dict)
    assert metric.details["findings"] == len(results)
    assert metric.details["files_with_findings"] == len({r["filename"] for r in results})
    assert metric.details["files_scanned"] == len(metrics) - 1  # less "_totals"


@needs_bandit
def test_security_reports_each_finding_relative_to_the_root(project: Path) -> None:
    metric = collect_security_score(project, [Path("src")], min_severity="HIGH")

    (item,) = metric.details["items"]
    assert item["tool"] == "bandit"
    assert item["rule"] == "B602"
    assert item["file"] == "src/app/shell.py"
    assert (item["line"], item["column"]) == (5, 11)
    assert (item["severity"], item["confidence"]) == ("HIGH", "HIGH")
    assert item["message"] == "subprocess call with shell=True identified, security issue."
    assert item["url"].startswith("https://bandit.readthedocs.io/")


@needs_bandit
def test_security_records_the_tool_its_version_and_the_command_it_ran(project: Path) -> None:
    metric = collect_security_score(project, [Path("src")], weight=3.0)

    assert BANDIT is not None
    assert metric.weight == 3.0
    assert metric.details["tool"] == "bandit"
    assert metric.details["command"] == [*BANDIT, "-r", "src", "-f", "json", "-q"]
    assert metric.details["version"] in bandit_version_line()
    assert metric.details["duration_s"] >= 0.0


def bandit_version_line() -> str:
    assert BANDIT is not None
    return subprocess.run(
        [*BANDIT, "--version"], capture_output=True, text=True, check=False
    ).stdout.splitlines()[0]


@needs_bandit
def test_security_reads_the_projects_tool_bandit_table(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.bandit]\nskips = ["B101", "B404"]\n')

    metric = collect_security_score(project, [Path("src")], min_confidence="HIGH")

    assert metric.details["command"][-7:] == ["-c", "pyproject.toml", "-r", "src", *FORMAT_ARGS]
    assert [item["rule"] for item in metric.details["items"]] == ["B602"]
    assert metric.value == 3 / 4


@needs_bandit
def test_security_ignores_a_pyproject_without_a_tool_bandit_table(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")

    metric = collect_security_score(project, [Path("src")])

    assert "-c" not in metric.details["command"]
    assert metric.details["findings"] == 5


@needs_bandit
def test_security_reads_the_projects_dot_bandit_file_even_when_scanning_a_subfolder(
    project: Path,
) -> None:
    (project / ".bandit").write_text("[bandit]\nskips = B101,B404,B105,B108\n")

    metric = collect_security_score(project, [Path("src")])

    assert metric.details["command"][-7:] == ["--ini", ".bandit", "-r", "src", *FORMAT_ARGS]
    assert [item["rule"] for item in metric.details["items"]] == ["B602"]


@needs_bandit
def test_security_is_an_error_when_the_pyproject_is_not_valid_toml(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.bandit\n")

    metric = collect_security_score(project, [Path("src")])

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert str(project.resolve() / "pyproject.toml") in metric.reason


@needs_bandit
def test_security_is_an_error_naming_the_files_bandit_could_not_parse(project: Path) -> None:
    (project / "src" / "app" / "broken.py").write_text(UNPARSABLE)

    metric = collect_security_score(project, [Path("src")])

    assert metric.status is MetricStatus.ERROR
    assert metric.value is None
    assert metric.reason == (
        "bandit could not scan 1 file(s): src/app/broken.py (syntax error while parsing AST "
        "from file). Fix them, or exclude them from `source:` or bandit's exclude_dirs"
    )


@needs_bandit
def test_bandit_itself_exits_0_on_a_file_it_could_not_parse(project: Path) -> None:
    """Why the collector reads ``errors``: the exit code alone says all is well."""
    (project / "broken.py").write_text(UNPARSABLE)
    assert BANDIT is not None

    run = subprocess.run(
        [*BANDIT, "-r", "broken.py", "-f", "json", "-q"],
        cwd=project,
        capture_output=True,
        check=False,
    )

    assert run.returncode == 0
    assert json.loads(run.stdout)["errors"][0]["filename"] == "./broken.py"


@needs_bandit
@pytest.mark.parametrize(
    "paths",
    [pytest.param([Path("empty")], id="an-empty-folder"), pytest.param([], id="no-paths")],
)
def test_security_is_an_error_when_bandit_scanned_no_files(
    project: Path, paths: list[Path]
) -> None:
    (project / "empty").mkdir()

    metric = collect_security_score(project, paths)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"bandit scanned no files under {project.resolve()}: check `source:`"


def test_security_is_unavailable_when_bandit_is_missing(project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-bandit"

    metric = collect_security_score(project, [Path("src")], command=[str(missing)])

    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.value is None
    assert metric.reason is not None
    assert str(missing) in metric.reason
    assert "install bandit" in metric.reason


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("echo 'usage: bandit' >&2; exit 2\n", "code 2", id="exit-2"),
        pytest.param("echo '{}'; exit 3\n", "code 3", id="exit-3"),
        pytest.param("kill -9 $$\n", "code -9", id="killed"),
    ],
)
def test_security_is_an_error_when_bandit_exits_with_neither_0_nor_1(
    project: Path, fake_tool: FakeTool, body: str, expected: str
) -> None:
    metric = collect_security_score(project, [Path("src")], command=fake_tool(body))

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert f"bandit exited with unexpected {expected}" in metric.reason


def test_security_quotes_bandits_stderr_when_it_fails(project: Path, fake_tool: FakeTool) -> None:
    command = fake_tool("echo 'bandit: error: unrecognized arguments: --bogus' >&2; exit 2\n")

    metric = collect_security_score(project, [Path("src")], command=command)

    assert metric.reason is not None
    assert metric.reason.endswith("bandit: error: unrecognized arguments: --bogus")


@pytest.mark.parametrize(
    "stdout",
    [
        pytest.param("", id="nothing"),
        pytest.param("Run started", id="plain-text"),
        pytest.param("[]", id="a-list-not-an-object"),
        pytest.param('{"results": []}', id="no-errors-or-metrics"),
        pytest.param('{"errors": [], "metrics": {}, "results": [{"test_id": 1}]}', id="bad-result"),
        pytest.param('{"errors": [], "metrics": {', id="truncated"),
    ],
)
def test_security_is_an_error_when_bandit_prints_garbage(
    project: Path, fake_tool: FakeTool, stdout: str
) -> None:
    command = fake_tool(f"cat <<'EOF'\n{stdout}\nEOF\nexit 0\n")

    metric = collect_security_score(project, [Path("src")], command=command)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert metric.reason.startswith("bandit")
    assert "JSON report" in metric.reason


def test_security_is_an_error_when_bandits_json_lists_errors(
    project: Path, fake_tool: FakeTool
) -> None:
    report = {
        "errors": [{"filename": f"./src/m{i}.py", "reason": "syntax error"} for i in range(7)],
        "metrics": {"_totals": {}},
        "results": [],
    }
    command = fake_tool(f"cat <<'EOF'\n{json.dumps(report)}\nEOF\nexit 0\n")

    metric = collect_security_score(project, [Path("src")], command=command)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert metric.reason.startswith("bandit could not scan 7 file(s): src/m0.py (syntax error);")
    assert "src/m4.py (syntax error); and 2 more." in metric.reason


def test_security_finds_the_report_after_log_lines_on_stdout(
    project: Path, fake_tool: FakeTool
) -> None:
    report = {
        "errors": [],
        "metrics": {"./src/a.py": {}, "./src/b.py": {}, "_totals": {}},
        "results": [
            {
                "filename": "./src/a.py",
                "test_id": "B602",
                "issue_severity": "HIGH",
                "issue_confidence": "HIGH",
                "issue_text": "shell",
                "line_number": 3,
                "col_offset": 4,
                "more_info": None,
            }
        ],
    }
    logs = "[main]\tINFO\tprofile include tests: None\nRun started: {soon}\n"
    command = fake_tool(f"cat <<'EOF'\n{logs}{json.dumps(report, indent=1)}\nEOF\nexit 1\n")

    metric = collect_security_score(project, [Path("src")], command=command)

    assert metric.status is MetricStatus.OK
    assert metric.value == 1 / 2
    assert metric.details["by_severity"] == {"HIGH": 1, "MEDIUM": 0, "LOW": 0}
    assert metric.details["items"][0]["file"] == "src/a.py"


def test_security_is_an_error_when_bandit_runs_past_its_timeout(
    project: Path, fake_tool: FakeTool
) -> None:
    command = fake_tool("sleep 30\n")

    metric = collect_security_score(project, [Path("src")], command=command, timeout_s=0.3)

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"{command[0]} did not finish within 0.3 s and was killed"


@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "cached"])
def test_security_is_an_error_naming_the_cap_when_bandit_prints_too_much(
    project: Path, fake_tool: FakeTool, tmp_path: Path, cached: bool
) -> None:
    command = fake_tool("head -c 3000000 /dev/zero\n")

    metric = collect_security_score(
        project,
        [Path("src")],
        command=command,
        max_output_bytes=1024 * 1024,
        cache_dir=tmp_path / "cache" if cached else None,
    )

    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert "printed more than the output cap of 1 MiB (max_output_bytes)" in metric.reason


def test_security_reads_the_version_of_a_bandit_given_as_a_command(
    project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "pybandit"
    empty = json.dumps({"errors": [], "metrics": {"./src/a.py": {}}, "results": []})
    script.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "if '--version' in sys.argv: print('bandit 1.2.3\\n  python version = 3')\n"
        f"else: print({empty!r})\n"
    )
    script.chmod(0o755)

    metric = collect_security_score(project, [Path("src")], command=[str(script)])

    assert metric.value == 1.0
    assert metric.details["version"] == "1.2.3"


def test_security_rejects_an_unknown_severity_level(project: Path) -> None:
    with pytest.raises(ValueError, match="min_severity must be one of LOW, MEDIUM, HIGH, got 'X'"):
        collect_security_score(project, [Path("src")], min_severity="X")


def test_security_rejects_an_unknown_confidence_level(project: Path) -> None:
    with pytest.raises(ValueError, match="min_confidence must be one of LOW, MEDIUM, HIGH"):
        collect_security_score(project, [Path("src")], min_confidence="SURE")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(st.text() | _json.map(json.dumps))
def test_parsing_bandit_output_never_crashes_on_any_text(stdout: str) -> None:
    try:
        report = parse_bandit_json(stdout)
    except EvidenceError:
        return
    assert isinstance(report, BanditReport)


def _figures(metric: EvalMetric) -> dict[str, Any]:
    details = {k: v for k, v in metric.details.items() if k not in ("duration_s", "cache")}
    return {"value": metric.value, "status": metric.status, "details": details}


@needs_bandit
@pytest.mark.parametrize(
    ("min_severity", "min_confidence"),
    [("LOW", "LOW"), ("HIGH", "LOW"), ("LOW", "HIGH")],
    ids=["low-low", "high-low", "low-high"],
)
def test_cached_security_figures_equal_an_uncached_run_cold_warm_and_after_an_edit(
    project: Path, tmp_path: Path, min_severity: str, min_confidence: str
) -> None:
    cache_dir = tmp_path / "cache"

    def score(cache: Path | None) -> EvalMetric:
        return collect_security_score(
            project,
            [Path("src")],
            min_severity=min_severity,
            min_confidence=min_confidence,
            cache_dir=cache,
        )

    collect_security_score(project, [Path("src")], cache_dir=cache_dir)  # cached at LOW/LOW
    warm, uncached = score(cache_dir), score(None)
    assert warm.details["cache"] == {"hits": 4, "misses": 0}  # thresholds need no rescan
    assert _figures(warm) == _figures(uncached)
    assert set(warm.details) == {*uncached.details, "cache"}
    (project / "src" / "app" / "clean.py").write_text(CLEAN + SHELL)

    edited = score(cache_dir)

    assert edited.details["cache"] == {"hits": 3, "misses": 1}
    assert _figures(edited) == _figures(score(None))
    assert uncached.value is not None
    assert edited.value == uncached.value - 1 / 4


@needs_bandit
def test_a_warm_run_with_nothing_changed_does_not_start_bandit(
    project: Path, tmp_path: Path
) -> None:
    assert BANDIT is not None
    log = tmp_path / "bandit.log"
    wrapper = tmp_path / "bandit-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec {" ".join(BANDIT)} "$@"\n')
    wrapper.chmod(0o755)
    cache_dir = tmp_path / "cache"
    collect_security_score(project, [Path("src")], command=[str(wrapper)], cache_dir=cache_dir)
    log.write_text("")

    warm = collect_security_score(
        project, [Path("src")], command=[str(wrapper)], cache_dir=cache_dir
    )

    assert warm.details["cache"] == {"hits": 4, "misses": 0}
    # A custom command is asked its version (part of the key); it scans nothing.
    assert log.read_text().splitlines() == ["--version"]


@needs_bandit
def test_cached_security_is_an_error_on_an_unparsable_file_warm_or_cold(
    project: Path, tmp_path: Path
) -> None:
    (project / "src" / "app" / "broken.py").write_text(UNPARSABLE)
    cache_dir = tmp_path / "cache"

    cold = collect_security_score(project, [Path("src")], cache_dir=cache_dir)
    warm = collect_security_score(project, [Path("src")], cache_dir=cache_dir)

    uncached = collect_security_score(project, [Path("src")])
    assert cold.status is warm.status is MetricStatus.ERROR
    assert cold.reason == warm.reason == uncached.reason
    assert warm.details["cache"] == {"hits": 4, "misses": 1}  # only the broken file rescanned


@needs_bandit
def test_cached_security_is_an_error_when_bandit_scanned_no_files(
    project: Path, tmp_path: Path
) -> None:
    (project / "empty").mkdir()

    metric = collect_security_score(project, [Path("empty")], cache_dir=tmp_path / "cache")

    assert metric.status is MetricStatus.ERROR
    assert metric.reason == f"bandit scanned no files under {project.resolve()}: check `source:`"


def _tricky_tree(root: Path) -> None:
    for name in (
        "src/pkg/mod.py",
        "src/pkg/gui.pyw",
        "src/pkg/notes.txt",
        "src/pkg/__pycache__/cached.py",
        "src/.git/hooks/hook.py",
        "src/.tox/env.py",
        "src/dist.egg/egg.py",
        "src/CVSish/kept_or_not.py",
        "src/vendored/third.py",
        "src/vendored/deep/more.py",
        "src/pkg/.hidden.py",
        "top.py",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("VALUE = 1\n")
    (root / "__pycache__").mkdir()


def _bandit_scanned(root: Path, *args: str) -> set[str]:
    report = bandit_directly(root, *args)
    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    return {display_path(name, root) for name in metrics if name != "_totals"}


@needs_bandit
@pytest.mark.parametrize(
    ("pyproject", "ini", "paths"),
    [
        pytest.param(None, None, ["src", "top.py"], id="defaults"),
        pytest.param(None, None, ["."], id="the-whole-root"),
        pytest.param('[tool.bandit]\nexclude_dirs = ["vendored"]\n', None, ["src"], id="toml"),
        pytest.param('[tool.bandit]\ninclude = ["*.pyw"]\n', None, ["src"], id="toml-include"),
        pytest.param(None, "[bandit]\nexclude = src/vendored,.git\n", ["src"], id="ini-exclude"),
    ],
)
def test_the_files_the_cache_lists_are_the_files_bandit_really_scans(
    tmp_path: Path, pyproject: str | None, ini: str | None, paths: list[str]
) -> None:
    root = tmp_path / "project"
    _tricky_tree(root)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    if ini is not None:
        (root / ".bandit").write_text(ini)
    args = [
        *(["-c", "pyproject.toml"] if pyproject else []),
        *(["--ini", ".bandit"] if ini else []),
    ]

    listed = bandit_targets(root, [Path(path) for path in paths], args)

    assert listed is not None
    assert {display_path(name, root) for name in listed} == _bandit_scanned(
        root, *args, "-r", *paths
    )


@needs_bandit
def test_a_dot_bandit_inside_the_scanned_folders_bypasses_the_cache(
    project: Path, tmp_path: Path
) -> None:
    (project / "src" / "app" / ".bandit").write_text("[bandit]\nskips = B101\n")

    metric = collect_security_score(project, [Path("src")], cache_dir=tmp_path / "cache")

    assert metric.details["cache"] == {"hits": 0, "misses": 4}
    assert _figures(metric) == _figures(collect_security_score(project, [Path("src")]))
    assert "B101" not in {item["rule"] for item in metric.details["items"]}


def test_the_default_excludes_are_bandits_own() -> None:
    constants = pytest.importorskip("bandit.core.constants")

    assert constants.EXCLUDE == BANDIT_DEFAULT_EXCLUDE
