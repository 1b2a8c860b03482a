"""``confgate validate`` and ``confgate schema`` through ``main(argv)`` (SPEC 3, 10, 12).

``main`` returns the exit status and never exits, so each test calls it directly and reads
what a user would see on stdout and stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_confgate.cli import ExitCode, main
from pytest_confgate.report.json_report import report_schema

DEFAULT_SUMMARY = "T1 gate over test_pass_rate, test_coverage, lint_score, security_score"
VALID_YAML = """\
# the service's gate
version: 1
gate:
  risk_tier: T2
  metrics:
    - type: test_pass_rate
    - {type: lint_score, weight: 2}
"""
VALID_TOML = """\
[project]
name = "demo"

[tool.confgate.gate]
risk_tier = "T3"

[[tool.confgate.gate.metrics]]
type = "security_score"
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project directory that is also the working directory."""
    monkeypatch.chdir(tmp_path)
    return Path.cwd()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_exit_codes_are_named() -> None:
    assert [(c.name, c.value) for c in ExitCode] == [
        ("OK", 0),
        ("GATE_FAILED", 1),
        ("USAGE_ERROR", 2),
        ("ESCALATED", 3),
    ]


# --- valid ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "argv", "summary"),
    [
        (
            {"confgate.yml": VALID_YAML},
            [],
            "confgate.yml: valid (T2 gate over test_pass_rate, lint_score)",
        ),
        (
            {"confgate.yaml": VALID_YAML},
            [],
            "confgate.yaml: valid (T2 gate over test_pass_rate, lint_score)",
        ),
        ({"pyproject.toml": VALID_TOML}, [], "pyproject.toml: valid (T3 gate over security_score)"),
        (
            {"confgate.yml": "gate: {risk_tier: T0}\n", "confgate.yaml": VALID_YAML},
            [],
            f"confgate.yml: valid (T0 gate over {DEFAULT_SUMMARY.removeprefix('T1 gate over ')})",
        ),
        (
            {"confgate.yml": "gate: {risk_tier: T0}\n", "ci/gate.yml": VALID_YAML},
            ["ci/gate.yml"],
            "ci/gate.yml: valid (T2 gate over test_pass_rate, lint_score)",
        ),
        (
            {"confgate.yml": "", "pyproject.toml": VALID_TOML},
            [],
            f"confgate.yml: valid ({DEFAULT_SUMMARY})",
        ),
    ],
    ids=[
        "discovered confgate.yml",
        "discovered confgate.yaml",
        "discovered pyproject.toml",
        "confgate.yml wins over confgate.yaml",
        "an explicit path wins over discovery",
        "an empty confgate.yml still wins and gives the defaults",
    ],
)
def test_validate_exits_zero_with_a_one_line_summary_for_a_valid_file(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    argv: list[str],
    summary: str,
) -> None:
    for name, text in files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text, encoding="utf-8")

    code, out, err = run(capsys, "validate", *argv)

    assert (code, out, err) == (ExitCode.OK, summary + "\n", "")


def test_validate_without_any_configuration_says_the_defaults_apply(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")

    code, out, err = run(capsys, "validate")

    assert code == ExitCode.OK
    assert out == f"no configuration file in {workdir}; the defaults apply: {DEFAULT_SUMMARY}\n"
    assert err == ""


# --- invalid ----------------------------------------------------------------------------

UNKNOWN_PROJEKT = (
    "projekt: unknown key 'projekt' (did you mean 'project'?); "
    "allowed keys: agents, base_ref, gate, project, rank, source, tasks, trust, version"
)


@pytest.mark.parametrize(
    ("name", "text", "argv", "problems"),
    [
        (
            "confgate.yml",
            "version: 1\n\nprojekt: x\n",
            [],
            ["confgate.yml:3: " + UNKNOWN_PROJEKT],
        ),
        (
            "gate.yml",
            "version: 1\n\nprojekt: x\n",
            ["gate.yml"],
            ["gate.yml:3: " + UNKNOWN_PROJEKT],
        ),
        (
            "gate.yml",
            "version: 1\ngate:\n  metrics:\n    - type: lint_scor\n",
            ["gate.yml"],
            [
                "gate.yml:4: gate.metrics[0]: unknown metric type 'lint_scor' (did you mean "
                "'lint_score'?); known types: checklist_completion, lint_score, llm_judge, "
                "requirement_coverage, security_score, test_coverage, test_integrity, "
                "test_pass_rate"
            ],
        ),
        (
            "gate.yml",
            "projekt: x\ngate:\n  risk_tier: T9\n  metrics:\n    - {type: lint_score, weight: 0}\n",
            ["gate.yml"],
            [
                "gate.yml:3: gate.risk_tier: Input should be 'T0', 'T1', 'T2' or 'T3' (got 'T9')",
                "gate.yml:4: gate.metrics: metric weights are all zero; give at least one a "
                "weight > 0",
                "gate.yml:1: " + UNKNOWN_PROJEKT,
            ],
        ),
        (
            "gate.yml",
            "version: 1\nproject: !!python/object/apply:os.system ['touch pwned']\n",
            ["gate.yml"],
            [
                "gate.yml:2: project: the tag 'tag:yaml.org,2002:python/object/apply:os.system' "
                "is not allowed; configuration is plain data"
            ],
        ),
        (
            "gate.yml",
            "version: 1\ngate:\n  risk_tier: T1\n bad: 2\n",
            ["gate.yml"],
            ["gate.yml:4: invalid YAML: expected <block end>, but found '<block mapping start>'"],
        ),
        (
            "gate.yml",
            "- type: lint_score\n",
            ["gate.yml"],
            ["gate.yml:1: the configuration must be a mapping of keys, not list"],
        ),
        (
            "pyproject.toml",
            '[project]\nname = "demo"\n\n[[tool.confgate.gate.metrics]]\ntype = "lint_score"\n'
            "weigth = 2\n",
            [],
            [
                "pyproject.toml:6: gate.metrics[0].weigth: unknown key 'weigth' (did you "
                "mean 'weight'?); allowed keys: advisory, command, max_lint_violations, min, "
                "scope, timeout_s, type, weight"
            ],
        ),
    ],
    ids=[
        "unknown key in a discovered file",
        "unknown key in an explicit file",
        "unknown metric type",
        "three problems at once",
        "an object-building yaml tag",
        "a yaml syntax error",
        "a top-level list",
        "unknown key in a pyproject array of tables",
    ],
)
def test_validate_exits_two_with_one_stderr_line_per_problem(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
    argv: list[str],
    problems: list[str],
) -> None:
    (workdir / name).write_text(text, encoding="utf-8")

    code, out, err = run(capsys, "validate", *argv)

    assert code == ExitCode.USAGE_ERROR
    assert out == ""
    assert err.splitlines() == [p.format(cwd=workdir) for p in problems]
    assert not (workdir / "pwned").exists()


def test_validate_refuses_a_non_utf8_file_with_its_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "gate.yml").write_bytes(b"version: 1\nproject: caf\xe9\n")

    code, out, err = run(capsys, "validate", "gate.yml")

    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert err == (
        "gate.yml:2: the configuration file is not valid UTF-8 (byte 0xe9); save it as UTF-8\n"
    )


def test_validate_refuses_a_file_over_one_mebibyte(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "gate.yml").write_text("#" * (1024 * 1024) + "\n", encoding="utf-8")

    code, out, err = run(capsys, "validate", "gate.yml")

    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert err == (
        "gate.yml:1: the configuration file is over the 1048576 byte limit; "
        "is this the right file?\n"
    )


@pytest.mark.parametrize(
    "path",
    ["missing.yml", "nowhere/confgate.yml", "."],
    ids=["a missing file", "a missing directory", "a directory"],
)
def test_validate_exits_two_when_the_named_file_does_not_exist(
    workdir: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    (workdir / "confgate.yml").write_text("version: 1\n", encoding="utf-8")

    code, out, err = run(capsys, "validate", path)

    assert (code, out) == (ExitCode.USAGE_ERROR, "")
    assert err == f"{path}: no such configuration file; check the path\n"


# --- arguments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["--help"], ["usage: confgate", "validate", "schema"]),
        (["-h"], ["usage: confgate", "validate", "schema"]),
        (["validate", "--help"], ["usage: confgate validate [-h] [path]", "pyproject.toml"]),
        (["schema", "--help"], ["usage: confgate schema [-h]"]),
    ],
    ids=["--help", "-h", "validate --help", "schema --help"],
)
def test_help_exits_zero_and_prints_usage(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], shown: list[str]
) -> None:
    code, out, err = run(capsys, *argv)

    assert code == ExitCode.OK
    assert err == ""
    for text in shown:
        assert text in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'"),
        (["validate", "a.yml", "b.yml"], "unrecognized arguments: b.yml"),
        (["validate", "--strict"], "unrecognized arguments: --strict"),
        (["--version-of-nothing"], "unrecognized arguments: --version-of-nothing"),
    ],
    ids=["an unknown command", "two paths", "an unknown option", "an unknown global option"],
)
def test_a_usage_error_exits_two_with_argparse_message(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)

    assert code == ExitCode.USAGE_ERROR
    assert out == ""
    assert err.startswith("usage: confgate")
    assert f"error: {message}" in err
    assert "Traceback" not in err


def test_no_command_prints_the_help_and_exits_two(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys)

    assert code == ExitCode.USAGE_ERROR
    assert out.startswith("usage: confgate")
    assert "validate" in out
    assert err == ""


# --- schema -----------------------------------------------------------------------------


def test_schema_prints_the_report_json_schema(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "schema")

    assert (code, err) == (ExitCode.OK, "")
    schema = json.loads(out)
    assert schema == report_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_validate_refuses_a_task_agent_that_judges_the_gate_it_runs_under(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 17's contract: the task's agent is the author under `confgate run`."""
    (workdir / "confgate.yml").write_text(
        "agents:\n  architect: {provider: command, command: [architect]}\n"
        "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
        "    - {type: llm_judge, evaluator_agent: architect}\n"
        "tasks:\n  design: {agent: architect, prompt: Design it.}\n", encoding="utf-8")

    code, out, err = run(capsys, "validate")

    assert code == ExitCode.USAGE_ERROR
    assert out == ""
    assert "confgate.yml:6: gate.metrics[1].evaluator_agent: " in err
    assert "must differ" in err
