"""Loading the configuration (SPEC 3, 12): discovery, safe parsing, one line per problem.

Every problem is asserted as the exact ``FILE:LINE: key.path: message`` a user would read, with
line numbers chosen so that "line 1" (the loader's fallback) would be wrong.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_confgate.config import ConfgateConfig, GateConfig, PolicyConfig
from pytest_confgate.config.loader import MAX_CONFIG_BYTES, LoadedConfig, load_config
from pytest_confgate.exceptions import ConfigError

DEFAULT_METRICS = ["test_pass_rate", "test_coverage", "lint_score", "security_score"]
KNOWN_TYPES = (
    "known types: checklist_completion, lint_score, llm_judge, requirement_coverage, "
    "security_score, test_coverage, test_integrity, test_pass_rate"
)
PROBLEM_LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>[0-9]+): (?P<rest>[^\n]*)$")


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(rootdir: Path, explicit: str | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(rootdir, explicit)
    return info.value.problems


def the_one_problem(rootdir: Path, explicit: str | None = None) -> str:
    problems = problems_of(rootdir, explicit)
    assert len(problems) == 1, problems
    return problems[0]


def assert_problem(problem: str, file: Path, line: int, key: str, phrase: str) -> None:
    """``problem`` is ``FILE:LINE: key: ...phrase...`` on a single line."""
    assert "\n" not in problem
    assert problem.startswith(f"{file}:{line}: {key}: "), problem
    assert phrase in problem.removeprefix(f"{file}:{line}: {key}: "), problem


# --- discovery --------------------------------------------------------------------------

YAML_T0 = "gate:\n  risk_tier: T0\n"
YAML_T2 = "gate:\n  risk_tier: T2\n"
TOML_T3 = '[project]\nname = "demo"\n\n[tool.confgate.gate]\nrisk_tier = "T3"\n'
EXPLICIT_T1 = "gate:\n  risk_tier: T1\n  metrics:\n    - type: lint_score\n"


@pytest.mark.parametrize(
    ("files", "explicit", "chosen", "tier"),
    [
        ({"confgate.yml": YAML_T0}, None, "confgate.yml", "T0"),
        ({"confgate.yaml": YAML_T2}, None, "confgate.yaml", "T2"),
        ({"pyproject.toml": TOML_T3}, None, "pyproject.toml", "T3"),
        ({"confgate.yml": YAML_T0, "confgate.yaml": YAML_T2}, None, "confgate.yml", "T0"),
        ({"confgate.yaml": YAML_T2, "pyproject.toml": TOML_T3}, None, "confgate.yaml", "T2"),
        ({"confgate.yml": YAML_T0, "pyproject.toml": TOML_T3}, None, "confgate.yml", "T0"),
        (
            {"confgate.yml": YAML_T0, "confgate.yaml": YAML_T2, "custom.yml": EXPLICIT_T1},
            "custom.yml",
            "custom.yml",
            "T1",
        ),
        ({"pyproject.toml": TOML_T3, "custom.yml": EXPLICIT_T1}, "custom.yml", "custom.yml", "T1"),
    ],
    ids=[
        "confgate.yml alone",
        "confgate.yaml alone",
        "pyproject.toml alone",
        "confgate.yml beats confgate.yaml",
        "confgate.yaml beats pyproject.toml",
        "confgate.yml beats pyproject.toml",
        "an explicit path beats both yaml names",
        "an explicit path beats pyproject.toml",
    ],
)
def test_discovery_reads_the_first_file_in_precedence_order(
    tmp_path: Path, files: dict[str, str], explicit: str | None, chosen: str, tier: str
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    loaded = load_config(tmp_path, None if explicit is None else str(tmp_path / explicit))

    assert loaded.path is not None
    assert loaded.path.name == chosen
    assert loaded.config.gate.risk_tier == tier


@pytest.mark.parametrize(
    ("files", "explicit", "passed_over"),
    [
        ({"confgate.yml": YAML_T0}, None, ()),
        (
            {"confgate.yml": YAML_T0, "confgate.yaml": YAML_T2, "pyproject.toml": TOML_T3},
            None,
            ("confgate.yaml", "pyproject.toml [tool.confgate]"),
        ),
        ({"confgate.yaml": YAML_T2, "pyproject.toml": TOML_T3}, None,
         ("pyproject.toml [tool.confgate]",)),
        ({"confgate.yml": YAML_T0, "pyproject.toml": '[project]\nname = "x"\n'}, None, ()),
        ({"confgate.yml": YAML_T0, "custom.yml": EXPLICIT_T1}, "custom.yml", ()),
    ],
    ids=["one file", "all three", "yaml and toml", "pyproject without the table", "explicit"],
)
def test_the_files_discovery_passed_over_are_named(
    tmp_path: Path, files: dict[str, str], explicit: str | None, passed_over: tuple[str, ...]
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)

    loaded = load_config(tmp_path, None if explicit is None else str(tmp_path / explicit))

    assert loaded.passed_over == passed_over


def test_an_explicit_relative_path_is_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "custom.yml", YAML_T2)
    monkeypatch.chdir(tmp_path)

    loaded = load_config(tmp_path / "elsewhere", "custom.yml")

    assert loaded.path == Path("custom.yml")
    assert loaded.config.gate.risk_tier == "T2"


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"pyproject.toml": '[project]\nname = "demo"\n'},
        {"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["pytest-confgate"]\n'},
        {"pyproject.toml": "[tool.ruff]\nline-length = 100\n# confgate: not configured yet\n"},
        {"confgate.yml.bak": YAML_T2, "setup.cfg": "[tool:confgate]\nrisk_tier = T3\n"},
    ],
    ids=[
        "an empty directory",
        "pyproject.toml without a tool section",
        "pyproject.toml that only depends on the plugin",
        "pyproject.toml that mentions confgate in a comment",
        "files with other names",
    ],
)
def test_no_configuration_at_all_gives_the_t1_defaults(
    tmp_path: Path, files: dict[str, str]
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)

    loaded = load_config(tmp_path)

    assert loaded == LoadedConfig(ConfgateConfig(), None)
    assert loaded.config.gate.risk_tier == "T1"
    assert [m.type for m in loaded.config.gate.metrics] == DEFAULT_METRICS
    assert all(not m.advisory and m.weight == 1.0 for m in loaded.config.gate.metrics)
    assert loaded.config.gate.hard_limit("max_failed_tests") == 0
    assert loaded.config.gate.hard_limit("max_high_severity") == 0


@pytest.mark.parametrize(
    "explicit",
    ["missing.yml", "subdir/confgate.yml", "."],
    ids=["a missing file", "a file in a missing directory", "a directory"],
)
def test_an_explicit_path_that_is_not_a_file_is_one_clear_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, explicit: str
) -> None:
    write(tmp_path, "confgate.yml", YAML_T0)  # never a silent fallback to the default file
    monkeypatch.chdir(tmp_path)

    assert the_one_problem(tmp_path, explicit) == (
        f"{explicit}: no such configuration file; check the path"
    )


# --- valid files ------------------------------------------------------------------------

FULL_YAML = """\
version: 1
project: my-service
source: [src/my_service]
gate:
  risk_tier: T2
  metrics:
    - {type: test_pass_rate, max_failed_tests: 2, min_tests: 5}
    - {type: test_coverage, min: 0.8, weight: 2, branch: true}
    - {type: lint_score, advisory: true, command: [ruff, check], timeout_s: 30}
    - {type: security_score, min_severity: MEDIUM, max_high_severity: 1, weight: 0}
  policy:
    max_failed_tests: 1
    tiers:
      T2: {signoffs: 3}
    signoff:
      approvers: [alice, bob]
"""


def test_a_full_yaml_file_is_read_into_the_model(tmp_path: Path) -> None:
    write(tmp_path, "confgate.yml", FULL_YAML)

    config = load_config(tmp_path).config

    assert config.project == "my-service"
    assert config.source == ["src/my_service"]
    gate = config.gate
    assert gate.risk_tier == "T2"
    assert [m.type for m in gate.metrics] == DEFAULT_METRICS
    assert [m.weight for m in gate.metrics] == [1.0, 2.0, 1.0, 0.0]
    assert [m.advisory for m in gate.metrics] == [False, False, True, False]
    assert gate.metrics[1].min == 0.8
    assert gate.policy.tier("T2") == (True, 3, True)
    assert gate.policy.signoff.approvers == ["alice", "bob"]
    assert gate.hard_limit("max_failed_tests") == 1
    assert gate.hard_limit("max_high_severity") == 1


TOML_ARRAYS = """\
[project]
name = "demo"

[tool.confgate]
project = "demo"

[tool.confgate.gate]
risk_tier = "T0"

[[tool.confgate.gate.metrics]]
type = "test_pass_rate"
max_failed_tests = 3

[[tool.confgate.gate.metrics]]
type = "lint_score"
weight = 0.5
command = ["ruff", "check", "."]
"""


def test_toml_arrays_of_tables_become_the_metric_list_in_order(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", TOML_ARRAYS)

    loaded = load_config(tmp_path)

    assert loaded.path == tmp_path / "pyproject.toml"
    gate = loaded.config.gate
    assert loaded.config.project == "demo"
    assert gate.risk_tier == "T0"
    assert [(m.type, m.weight) for m in gate.metrics] == [
        ("test_pass_rate", 1.0),
        ("lint_score", 0.5),
    ]
    assert gate.hard_limit("max_failed_tests") == 3


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "# a comment and nothing else\n", "---\n", "~\n", "\ufeff"],
    ids=["empty", "blank lines", "only a comment", "an empty document", "null", "only a BOM"],
)
def test_an_empty_yaml_file_is_valid_and_gives_the_defaults(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "confgate.yml", text)

    assert load_config(tmp_path) == LoadedConfig(ConfgateConfig(), path)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "confgate.yml").write_bytes("\ufeffproject: café\n".encode())

    assert load_config(tmp_path).config.project == "café"


def test_a_file_of_exactly_the_size_limit_is_read(tmp_path: Path) -> None:
    header = "version: 1\n"
    padding = "#" * (MAX_CONFIG_BYTES - len(header) - 1) + "\n"
    path = write(tmp_path, "confgate.yml", header + padding)
    assert path.stat().st_size == MAX_CONFIG_BYTES

    assert load_config(tmp_path).config == ConfgateConfig()


# --- schema errors: one exact line each -------------------------------------------------

HEADER = "# the service's gate\nversion: 1\n"  # keeps every key below line 2


@pytest.mark.parametrize(
    ("body", "line", "key", "phrase"),
    [
        (
            "projekt: x\n",
            3,
            "projekt",
            "unknown key 'projekt' (did you mean 'project'?); "
            "allowed keys: agents, base_ref, gate, project, rank, source, tasks, trust, version",
        ),
        (
            "gate:\n  risk_tier: T1\n  metricz: []\n",
            5,
            "gate.metricz",
            "unknown key 'metricz' (did you mean 'metrics'?); "
            "allowed keys: agent, confidence, metrics, policy, protected_paths, risk_rules, "
            "risk_tier",
        ),
        (
            "gate:\n  metrics:\n    - type: lint_score\n      weigth: 2\n",
            6,
            "gate.metrics[0].weigth",
            "unknown key 'weigth' (did you mean 'weight'?); allowed keys: advisory, command, "
            "max_lint_violations, max_output_bytes, min, scope, timeout_s, type, weight",
        ),
        (
            "gate:\n  policy:\n    tiers:\n      T2: {signofs: 1}\n",
            6,
            "gate.policy.tiers.T2.signofs",
            "unknown key 'signofs' (did you mean 'signoffs'?); "
            "allowed keys: auto_advance, blocking, signoffs",
        ),
        (
            "colour: blue\n",
            3,
            "colour",
            "unknown key 'colour'; allowed keys: agents, base_ref, gate, project, rank, source, "
            "tasks, trust, version",
        ),
        (
            "gate:\n  metrics:\n    - type: test_pass_rate\n    - type: lint_scor\n",
            6,
            "gate.metrics[1]",
            f"unknown metric type 'lint_scor' (did you mean 'lint_score'?); {KNOWN_TYPES}",
        ),
        (
            "gate:\n  metrics:\n    - type: llm_jugde\n",
            5,
            "gate.metrics[0]",
            f"unknown metric type 'llm_jugde' (did you mean 'llm_judge'?); {KNOWN_TYPES}",
        ),
        (
            "gate:\n  metrics:\n    - weight: 2\n",
            5,
            "gate.metrics[0]",
            f"each metric needs a 'type'; {KNOWN_TYPES}",
        ),
        (
            "gate:\n  metrics:\n    - type: lint_score\n      weight: -1\n",
            6,
            "gate.metrics[0].weight",
            "greater than or equal to 0 (got -1)",
        ),
        (
            "gate:\n  risk_tier: T1\n  metrics:\n"
            "    - {type: lint_score, weight: 0}\n    - {type: test_coverage, weight: 0.0}\n",
            5,
            "gate.metrics",
            "metric weights are all zero; give at least one a weight > 0",
        ),
        (
            "gate:\n  metrics:\n    - type: test_coverage\n      min: 1.5\n",
            6,
            "gate.metrics[0].min",
            "less than or equal to 1 (got 1.5)",
        ),
        (
            "gate:\n  metrics:\n    - type: test_coverage\n      min: -0.1\n",
            6,
            "gate.metrics[0].min",
            "greater than or equal to 0 (got -0.1)",
        ),
        (
            "gate:\n  metrics:\n    - type: test_coverage\n      min: .nan\n",
            6,
            "gate.metrics[0].min",
            "finite number",
        ),
        (
            "gate:\n  risk_tier: T1\n  metrics:\n"
            "    - type: lint_score\n    - type: test_coverage\n    - type: lint_score\n",
            5,
            "gate.metrics",
            "metric type 'lint_score' is listed twice (entries 0 and 2); keep one entry",
        ),
        (
            "gate:\n  metrics:\n    - {type: test_coverage, scope: changed}\n"
            "    - {type: test_coverage, scope: changed, min: 0.9}\n",
            4,
            "gate.metrics",
            "metric type 'test_coverage' is listed twice with the same scope (entries 0 and 1)",
        ),
        (
            "gate:\n  risk_tier: T9\n",
            4,
            "gate.risk_tier",
            "'T0', 'T1', 'T2' or 'T3' (got 'T9')",
        ),
        (
            "gate:\n  policy:\n    tiers:\n      T7: {blocking: false}\n",
            6,
            "gate.policy.tiers.T7",
            "'T0', 'T1', 'T2' or 'T3' (got 'T7')",
        ),
        (
            "gate:\n  policy:\n    max_failed_tests: -1\n",
            5,
            "gate.policy.max_failed_tests",
            "greater than or equal to 0 (got -1)",
        ),
        (
            "source: src\n",
            3,
            "source",
            "valid list (got 'src')",
        ),
    ],
    ids=[
        "unknown top-level key",
        "unknown gate key",
        "unknown metric key",
        "unknown tier override key",
        "unknown key with nothing close",
        "unknown metric type",
        "a metric type that is not built in",
        "metric without a type",
        "negative weight",
        "all weights zero",
        "threshold above one",
        "threshold below zero",
        "threshold not a number",
        "duplicate metric type",
        "two coverage entries with one scope",
        "bad risk tier",
        "bad tier name under policy",
        "negative hard condition",
        "source not a list",
    ],
)
def test_a_schema_error_is_one_line_naming_file_line_and_key(
    tmp_path: Path, body: str, line: int, key: str, phrase: str
) -> None:
    path = write(tmp_path, "confgate.yml", HEADER + body)

    assert_problem(the_one_problem(tmp_path), path, line, key, phrase)


def test_a_wrong_version_names_the_version_key(tmp_path: Path) -> None:
    path = write(tmp_path, "confgate.yml", "# future file\n\nversion: 2\n")

    assert_problem(the_one_problem(tmp_path), path, 3, "version", "(got 2)")


def test_every_problem_in_a_file_is_reported_on_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "confgate.yml",
        HEADER + "projekt: x\ngate:\n  risk_tier: T9\n  metrics:\n    - type: nope\n",
    )

    problems = problems_of(tmp_path)

    assert len(problems) == 3
    assert sorted(int(p.split(":")[1]) for p in problems) == [3, 5, 7]
    assert {p.split(": ")[1] for p in problems} == {"projekt", "gate.risk_tier", "gate.metrics[0]"}
    assert all(p.startswith(f"{path}:") and "\n" not in p for p in problems)


def test_a_key_with_a_newline_in_it_still_gives_a_single_line(tmp_path: Path) -> None:
    path = write(tmp_path, "confgate.yml", HEADER + '"pro\\nject": x\n')

    problem = the_one_problem(tmp_path)

    assert_problem(problem, path, 3, "'pro\\nject'", "unknown key 'pro\\nject'")


# --- YAML that is not plain data --------------------------------------------------------

NOT_PLAIN = "is not allowed; configuration is plain data"


@pytest.mark.parametrize(
    ("body", "line", "key", "phrase"),
    [
        (
            "project: !!python/object/apply:os.system ['touch pwned']\n",
            3,
            "project",
            f"the tag 'tag:yaml.org,2002:python/object/apply:os.system' {NOT_PLAIN}",
        ),
        (
            "gate:\n  risk_tier: !!python/object/apply:os.system\n    args: ['touch pwned']\n",
            4,
            "gate.risk_tier",
            f"the tag 'tag:yaml.org,2002:python/object/apply:os.system' {NOT_PLAIN}",
        ),
        (
            "gate: !!python/object/new:pathlib.Path ['pwned']\n",
            3,
            "gate",
            f"the tag 'tag:yaml.org,2002:python/object/new:pathlib.Path' {NOT_PLAIN}",
        ),
        (
            "project: !!python/name:os.system ''\n",
            3,
            "project",
            f"the tag 'tag:yaml.org,2002:python/name:os.system' {NOT_PLAIN}",
        ),
        (
            "gate: !!python/object:types.SimpleNamespace {risk_tier: T1}\n",
            3,
            "gate",
            f"the tag 'tag:yaml.org,2002:python/object:types.SimpleNamespace' {NOT_PLAIN}",
        ),
        ("project: !env PROJECT\n", 3, "project", f"the tag '!env' {NOT_PLAIN}"),
        (
            "gate:\n  <<: {risk_tier: T2}\n",
            4,
            "gate",
            f"the tag 'tag:yaml.org,2002:merge' {NOT_PLAIN}",
        ),
        (
            "source: !!set {src: null}\n",
            3,
            "source",
            f"the tag 'tag:yaml.org,2002:set' {NOT_PLAIN}",
        ),
        (
            "gate:\n  risk_tier: T1\n  risk_tier: T0\n",
            5,
            "gate.risk_tier",
            "duplicate key; keep one of them",
        ),
        ("project: a\nsource: [a]\nproject: b\n", 5, "project", "duplicate key; keep one of them"),
        ("1: x\n", 3, "<top>", "keys must be text"),
        ("gate:\n  ? [a, b]\n  : x\n", 4, "gate", "keys must be text"),
        ("project: 2020-13-45\n", 3, "project", "cannot read '2020-13-45' as timestamp"),
        ("project: !!int twelve\n", 3, "project", "cannot read 'twelve' as int"),
        ("gate:\n  risk_tier: !!bool maybe\n", 4, "gate.risk_tier", "cannot read 'maybe' as bool"),
        ("source: [0b_]\n", 3, "source[0]", "cannot read '0b_' as int; quote it if it is text"),
    ],
    ids=[
        "python object apply in a flow list",
        "python object apply as a mapping",
        "python object new",
        "python name",
        "python object",
        "a local tag",
        "a merge key",
        "a set",
        "duplicate nested key",
        "duplicate top-level key",
        "a number as a key",
        "a list as a key",
        "an impossible date",
        "an int tag on words",
        "a bool tag on words",
        "an empty binary literal",
    ],
)
def test_yaml_that_is_not_plain_data_is_refused_with_its_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    line: int,
    key: str,
    phrase: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # where `touch pwned` would land if anything ran
    path = write(tmp_path, "confgate.yml", HEADER + body)

    # Discovered under the current directory, so it is named relative to it.
    assert_problem(the_one_problem(tmp_path), path.relative_to(tmp_path), line, key, phrase)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("defaults: &d {weight: 1}\ngate: {}\n", 3),
        ("gate:\n  risk_tier: T1\nproject: *name\n", 5),
        ("gate:\n  metrics:\n    - &m {type: lint_score}\n    - *m\n", 5),
    ],
    ids=["an anchor", "an undefined alias", "an anchor and its alias"],
)
def test_yaml_anchors_and_aliases_are_refused_at_their_line(
    tmp_path: Path, body: str, line: int
) -> None:
    path = write(tmp_path, "confgate.yml", HEADER + body)

    problem = the_one_problem(tmp_path)

    assert problem.startswith(f"{path}:{line}: invalid YAML: "), problem


def test_a_billion_laughs_file_is_refused_before_it_expands(tmp_path: Path) -> None:
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    path = write(tmp_path, "confgate.yml", "\n".join(levels) + "\n")

    assert the_one_problem(tmp_path) == (
        f"{path}:1: invalid YAML: anchors and aliases are not allowed; write the value out"
    )


# --- YAML syntax, shape, encoding and size ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "line", "phrase"),
    [
        ("gate:\n  risk_tier: T1\n bad: 2\n", 5, "expected <block end>"),
        ("project: a: b\n", 3, "mapping values are not allowed here"),
        ("gate:\n\trisk_tier: T1\n", 4, "found character '\\t' that cannot start any token"),
        ("project: x\n---\nproject: y\n", 4, "but found another document"),
        ("gate:\n  metrics: [a, b\nproject: x\n", 5, "expected ',' or ']'"),
        ("project: a\x07b\n", 3, "the character U+0007 is not allowed"),
    ],
    ids=[
        "bad indentation",
        "a colon inside a plain value",
        "a tab for indentation",
        "two documents",
        "an unclosed flow list",
        "a control character",
    ],
)
def test_a_yaml_syntax_error_names_the_line_it_is_on(
    tmp_path: Path, body: str, line: int, phrase: str
) -> None:
    path = write(tmp_path, "confgate.yml", HEADER + body)

    problem = the_one_problem(tmp_path)

    assert problem.startswith(f"{path}:{line}: invalid YAML: "), problem
    assert phrase in problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("- type: lint_score\n- type: test_coverage\n", "list"),
        ("just a sentence\n", "str"),
        ("42\n", "int"),
    ],
    ids=["a list", "a string", "a number"],
)
def test_a_file_whose_top_level_is_not_a_mapping_is_refused(
    tmp_path: Path, text: str, kind: str
) -> None:
    path = write(tmp_path, "confgate.yml", text)

    assert the_one_problem(tmp_path) == (
        f"{path}:1: the configuration must be a mapping of keys, not {kind}"
    )


def test_a_non_utf8_file_is_refused_at_the_line_of_the_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "confgate.yml"
    path.write_bytes(b"version: 1\ngate:\n  risk_tier: T1\nproject: caf\xe9\n")

    assert the_one_problem(tmp_path) == (
        f"{path}:4: the configuration file is not valid UTF-8 (byte 0xe9); save it as UTF-8"
    )


def test_a_utf16_file_is_refused_as_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "confgate.yml"
    path.write_bytes("version: 1\n".encode("utf-16"))

    assert the_one_problem(tmp_path) == (
        f"{path}:1: the configuration file is not valid UTF-8 (byte 0xff); save it as UTF-8"
    )


@pytest.mark.parametrize("name", ["confgate.yml", "pyproject.toml"], ids=["yaml", "pyproject"])
def test_a_file_over_one_mebibyte_is_refused_without_being_parsed(
    tmp_path: Path, name: str
) -> None:
    # Not valid YAML or TOML either: the size check must come first.
    path = write(tmp_path, name, "[tool.confgate]\n" + "{" * MAX_CONFIG_BYTES)
    assert path.stat().st_size == MAX_CONFIG_BYTES + len("[tool.confgate]\n")
    assert the_one_problem(tmp_path) == (
        f"{path}:1: the configuration file is over the {MAX_CONFIG_BYTES} byte limit; "
        "is this the right file?"
    )


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("confgate.yml", "gate: " + "[" * 20_000 + "]" * 20_000 + "\n", "YAML"),
        ("confgate.yml", "gate: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n", "YAML"),
        ("pyproject.toml", "[tool.confgate]\nsource = " + "[" * 20_000 + "]" * 20_000, "TOML"),
    ],
    ids=["yaml lists", "yaml mappings", "toml arrays"],
)
def test_absurdly_deep_nesting_is_a_config_error_not_a_recursion_error(
    tmp_path: Path, name: str, text: str, kind: str
) -> None:
    path = write(tmp_path, name, text)

    assert the_one_problem(tmp_path) == (
        f"{path}:1: invalid {kind}: the values are nested too deeply; flatten the configuration"
    )


# --- pyproject.toml ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "key", "phrase"),
    [
        (
            '[project]\nname = "demo"\n\n[tool.confgate]\nversion = 1\nprojekt = "x"\n',
            6,
            "projekt",
            "unknown key 'projekt' (did you mean 'project'?)",
        ),
        (
            '[project]\nname = "demo"\n\n[tool.confgate.gate]\nrisk_tier = "T9"\n',
            5,
            "gate.risk_tier",
            "(got 'T9')",
        ),
        (
            '[tool.ruff]\nline-length = 100\n\n[tool.confgate]\ngate = {risk_tier = "T5"}\n',
            5,
            "gate.risk_tier",
            "(got 'T5')",
        ),
        (
            "[tool.ruff]\nline-length = 100\n\n[tool.confgate]\nversion = 1\n"
            'gate.risk_tier = "T4"\n',
            6,
            "gate.risk_tier",
            "(got 'T4')",
        ),
        (
            TOML_ARRAYS + "weigth = 2\n",
            18,
            "gate.metrics[1].weigth",
            "unknown key 'weigth' (did you mean 'weight'?)",
        ),
        (
            TOML_ARRAYS + '\n[[tool.confgate.gate.metrics]]\ntype = "coverage"\n',
            19,
            "gate.metrics[2]",
            f"unknown metric type 'coverage' (did you mean 'test_coverage'?); {KNOWN_TYPES}",
        ),
        (
            TOML_ARRAYS + '\n[[tool.confgate.gate.metrics]]\ntype = "lint_score"\n',
            10,
            "gate.metrics",
            "metric type 'lint_score' is listed twice (entries 1 and 2)",
        ),
        (
            '[project]\nname = "demo"\n\n[tool.confgate]\n\n[[tool.confgate.gate.metrics]]\n'
            'type = "lint_score"\nweight = 0\n',
            6,
            "gate.metrics",
            "metric weights are all zero",
        ),
        (
            '[project]\nname = "demo"\n\n[[tool.confgate.gate.metrics]]\n'
            'type = "test_coverage"\nmin = 2.0\n',
            6,
            "gate.metrics[0].min",
            "less than or equal to 1 (got 2.0)",
        ),
    ],
    ids=[
        "unknown top-level key",
        "bad tier in a sub-table",
        "bad tier in an inline table",
        "bad tier as a dotted key",
        "unknown key in the second array table",
        "unknown metric type in a third array table",
        "duplicate metric type across array tables",
        "all weights zero in an array table",
        "threshold out of range in an array table",
    ],
)
def test_pyproject_problems_name_the_line_in_pyproject(
    tmp_path: Path, text: str, line: int, key: str, phrase: str
) -> None:
    path = write(tmp_path, "pyproject.toml", text)

    assert_problem(the_one_problem(tmp_path), path, line, key, phrase)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('[project]\nname = "demo"\n\n[tool.confgate]\nproject = \n', 5),
        ("[tool.confgate]\nversion = 1\nversion = 1\n", 3),
        ('[tool.confgate]\nproject = "unterminated\n', 2),
    ],
    ids=["a missing value", "a duplicate key", "an unterminated string"],
)
def test_a_toml_syntax_error_in_a_confgate_pyproject_names_its_line(
    tmp_path: Path, text: str, line: int
) -> None:
    path = write(tmp_path, "pyproject.toml", text)

    problem = the_one_problem(tmp_path)

    assert problem.startswith(f"{path}:{line}: invalid TOML: "), problem
    assert "\n" not in problem


def test_a_tool_confgate_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", '[project]\nname = "demo"\n\n[tool]\nconfgate = 3\n')

    assert the_one_problem(tmp_path) == (
        f"{path}:1: the configuration must be a mapping of keys, not int"
    )


def test_an_explicit_toml_file_is_read_from_its_tool_confgate_table(tmp_path: Path) -> None:
    write(tmp_path, "confgate.yml", YAML_T0)
    path = write(tmp_path, "gate.toml", '[tool.confgate.gate]\nrisk_tier = "T3"\n')

    loaded = load_config(tmp_path, str(path))

    assert loaded.path == path
    assert loaded.config.gate.risk_tier == "T3"


# --- the loader never crashes -----------------------------------------------------------

WHITESPACE = ["\n", "  ", "    ", "\t", "- ", ": ", "? ", " "]
YAML_WORDS = [
    "gate:",
    "metrics:",
    "type:",
    "lint_score",
    "weight:",
    "-1",
    "0",
    "1.5",
    "risk_tier:",
    "T9",
    "policy:",
    "tiers:",
    "T2:",
    "version:",
    "project:",
    "source:",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a",
    "*a",
    "<<:",
    "!!int",
    "!!python/object/apply:os.system",
    "!!binary",
    "!x",
    "2020-13-45",
    "0b_",
    ".nan",
    '"',
    "'",
    "#",
    "---",
    "...",
    "|",
    ">",
    "%YAML",
    "\x00",
    "\ufeff",
    "é",
]
TOML_WORDS = [
    "[tool.confgate]",
    "[tool.confgate.gate]",
    "[[tool.confgate.gate.metrics]]",
    "type",
    "=",
    '"lint_score"',
    "weight",
    "-1",
    "0",
    "risk_tier",
    '"T9"',
    "[",
    "]",
    "{",
    "}",
    '"',
    "'''",
    "gate.",
    "x",
    "1979-05-27",
    "inf",
    "nan",
    "#",
]
CHARACTERS = st.characters(blacklist_categories=("Cs",))
ANY_TEXT = st.text(alphabet=CHARACTERS, max_size=300)
YAML_SOUP = st.lists(
    st.sampled_from(WHITESPACE + YAML_WORDS) | st.text(CHARACTERS, max_size=7), max_size=40
).map("".join)
TOML_SOUP = st.lists(
    st.sampled_from(WHITESPACE + TOML_WORDS) | st.text(CHARACTERS, max_size=7), max_size=40
).map("".join)
# each example rewrites the one file; drawing examples is slow on a loaded machine
NO_FIXTURE_RESET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def assert_loads_or_reports_lines(rootdir: Path, file: Path, explicit: str | None) -> None:
    try:
        loaded = load_config(rootdir, explicit)
    except ConfigError as exc:
        problems = exc.problems
    else:
        assert isinstance(loaded.config, ConfgateConfig)
        return
    assert problems
    for problem in problems:
        match = PROBLEM_LINE.match(problem)
        assert match, problem
        assert match["file"] == str(file)
        assert int(match["line"]) >= 1


@settings(max_examples=300, deadline=None, suppress_health_check=NO_FIXTURE_RESET)
@given(text=ANY_TEXT | YAML_SOUP)
def test_the_loader_raises_only_config_errors_on_any_yaml_text(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "confgate.yml", text)

    assert_loads_or_reports_lines(tmp_path, path, None)


@settings(max_examples=200, deadline=None, suppress_health_check=NO_FIXTURE_RESET)
@given(text=ANY_TEXT | TOML_SOUP)
def test_the_loader_raises_only_config_errors_on_any_toml_text(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "gate.toml", text)

    assert_loads_or_reports_lines(tmp_path, path, str(path))


# --- GateConfig.hard_limit and PolicyConfig.tier ----------------------------------------


def gate_of(data: dict[str, object]) -> GateConfig:
    return GateConfig.model_validate(data)


@pytest.mark.parametrize(
    ("metrics", "policy", "name", "expected"),
    [
        (None, {}, "max_failed_tests", 0),
        (None, {}, "max_high_severity", 0),
        (None, {}, "max_lint_violations", None),
        ([{"type": "test_pass_rate", "max_failed_tests": 3}], {}, "max_failed_tests", 3),
        (None, {"max_failed_tests": 4}, "max_failed_tests", 4),
        (
            [{"type": "test_pass_rate", "max_failed_tests": 3}],
            {"max_failed_tests": 5},
            "max_failed_tests",
            3,
        ),
        (
            [{"type": "test_pass_rate", "max_failed_tests": 5}],
            {"max_failed_tests": 2},
            "max_failed_tests",
            2,
        ),
        (
            [{"type": "security_score", "max_high_severity": 2}],
            {"max_high_severity": 0},
            "max_high_severity",
            0,
        ),
        ([{"type": "lint_score", "max_lint_violations": 7}], {}, "max_lint_violations", 7),
        (
            [{"type": "lint_score", "max_lint_violations": 7}],
            {"max_lint_violations": 9},
            "max_lint_violations",
            7,
        ),
        ([{"type": "lint_score"}], {"max_failed_tests": 6}, "max_failed_tests", 6),
        (
            [{"type": "test_pass_rate"}, {"type": "security_score", "max_high_severity": 1}],
            {},
            "max_failed_tests",
            0,
        ),
    ],
    ids=[
        "no failed tests by default",
        "no high-severity finding by default",
        "no lint limit by default",
        "metric level alone",
        "policy level alone",
        "metric level stricter",
        "policy level stricter",
        "policy zero beats metric two",
        "lint limit at metric level",
        "lint limit stricter at metric level",
        "policy limit when the metric is not listed",
        "an unrelated metric limit does not leak",
    ],
)
def test_hard_limit_is_the_stricter_of_metric_and_policy_level(
    metrics: list[dict[str, object]] | None,
    policy: dict[str, object],
    name: str,
    expected: int | None,
) -> None:
    data: dict[str, object] = {"policy": policy}
    if metrics is not None:
        data["metrics"] = metrics

    assert gate_of(data).hard_limit(name) == expected


@pytest.mark.parametrize(
    ("tier", "expected"),
    [
        ("T0", (False, 0, True)),
        ("T1", (True, 0, True)),
        ("T2", (True, 1, True)),
        ("T3", (True, 2, False)),
    ],
    ids=["T0 is advisory", "T1 blocks", "T2 needs one sign-off", "T3 needs two, never advances"],
)
def test_tier_defaults_follow_the_spec_table(tier: str, expected: tuple[bool, int, bool]) -> None:
    assert PolicyConfig().tier(tier) == expected


@pytest.mark.parametrize(
    ("tiers", "tier", "expected"),
    [
        ({"T0": {"blocking": True}}, "T0", (True, 0, True)),
        ({"T2": {"signoffs": 0}}, "T2", (True, 0, True)),
        ({"T3": {"auto_advance": True, "signoffs": 1}}, "T3", (True, 1, True)),
        (
            {"T1": {"blocking": False, "signoffs": 2, "auto_advance": False}},
            "T1",
            (False, 2, False),
        ),
        ({"T3": {"signoffs": 5}}, "T2", (True, 1, True)),
        ({"T2": {}}, "T2", (True, 1, True)),
    ],
    ids=[
        "T0 made blocking",
        "T2 without sign-off",
        "T3 partly relaxed",
        "every field overridden",
        "an override of another tier changes nothing",
        "an empty override keeps the defaults",
    ],
)
def test_tier_overrides_replace_only_the_fields_they_set(
    tiers: dict[str, object], tier: str, expected: tuple[bool, int, bool]
) -> None:
    assert PolicyConfig.model_validate({"tiers": tiers}).tier(tier) == expected


def test_an_explicit_pyproject_without_a_confgate_table_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, str(tmp_path / "pyproject.toml"))
    assert caught.value.problems == [
        f"{tmp_path / 'pyproject.toml'}:1: there is no [tool.confgate] table; add one, or "
        "point --confgate-config at a confgate.yml"
    ]


def test_discovered_files_are_named_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "confgate.yml").write_text("gate: {risk_tier: T9}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.problems[0].startswith("confgate.yml:1: gate.risk_tier: ")


# -- issue 17.10: strict types, no YAML 1.1 booleans ------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "phrase"),
    [
        ("gate:\n  confidence:\n    threshold: \"0.85\"\n", "gate.confidence.threshold",
         "valid number"),
        ("gate:\n  confidence:\n    enabled: \"yes\"\n", "gate.confidence.enabled",
         "valid boolean"),
        ("gate:\n  confidence:\n    enabled: \"true\"\n", "gate.confidence.enabled",
         "valid boolean"),
        ("gate:\n  metrics:\n    - {type: test_pass_rate, weight: \"2\"}\n",
         "gate.metrics[0].weight", "valid number"),
        ("gate:\n  metrics:\n    - {type: test_pass_rate, min_tests: \"3\"}\n",
         "gate.metrics[0].min_tests", "valid integer"),
        ("gate:\n  metrics:\n    - {type: test_pass_rate, min_tests: 2.0}\n",
         "gate.metrics[0].min_tests", "valid integer"),
        ("gate:\n  metrics:\n    - {type: test_pass_rate, min_tests: true}\n",
         "gate.metrics[0].min_tests", "valid integer"),
        ("gate:\n  confidence:\n    threshold: true\n", "gate.confidence.threshold",
         "valid number"),
    ],
    ids=["threshold-string", "enabled-string-yes", "enabled-string-true", "weight-string",
         "count-string", "count-float", "count-bool", "threshold-bool"],
)
def test_numbers_and_booleans_are_never_coerced(
    tmp_path: Path, text: str, key: str, phrase: str
) -> None:
    path = write(tmp_path, "confgate.yml", text)
    assert_problem(the_one_problem(tmp_path), path, 3, key, phrase)


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "Yes", "OFF", "NO"])
def test_yaml_1_1_booleans_are_refused_with_what_to_write(tmp_path: Path, word: str) -> None:
    path = write(tmp_path, "confgate.yml", f"gate:\n  confidence:\n    enabled: {word}\n")
    problem = the_one_problem(tmp_path)
    assert_problem(problem, path, 3, "gate.confidence.enabled", "write true or false")
    assert repr(word) in problem


def test_a_yaml_1_1_boolean_where_text_belongs_says_to_quote_it(tmp_path: Path) -> None:
    write(tmp_path, "confgate.yml", "tasks:\n  t:\n    agent: dev\n    prompt: yes\n")
    assert "quote it if it is text" in the_one_problem(tmp_path)


def test_true_false_integers_floats_and_quoted_dates_still_load(tmp_path: Path) -> None:
    write(tmp_path, "confgate.yml", (
        "gate:\n  confidence: {enabled: True, threshold: 1}\n"
        "  metrics:\n    - {type: test_pass_rate, weight: 2, advisory: false}\n"
        "  policy:\n    waivers:\n"
        "      - {rule: S101, reason: test asserts, expires: '2999-01-01'}\n"
    ))
    config = load_config(tmp_path).config
    assert config.gate.confidence.enabled is True
    assert config.gate.confidence.threshold == 1.0
    assert config.gate.metrics[0].weight == 2.0
    assert str(config.gate.policy.waivers[0].expires) == "2999-01-01"


def test_toml_strings_are_not_coerced_either(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml",
                 '[tool.confgate.gate.confidence]\nenabled = true\nthreshold = "0.85"\n')
    assert_problem(the_one_problem(tmp_path), path, 3, "gate.confidence.threshold",
                   "valid number")


_REPO = Path(__file__).resolve().parents[2]
_SNIPPET = re.compile(r"```(yaml|yml|toml)\n(.*?)```", re.DOTALL)


def _shipped_snippets() -> list[tuple[str, str, str]]:
    """Every configuration block in README, docs and examples: (where, language, text)."""
    import yaml

    from pytest_confgate.config import ConfgateConfig

    found = []
    for doc in [_REPO / "README.md", *sorted((_REPO / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for match in _SNIPPET.finditer(text):
            body = match.group(2)
            keys = yaml.safe_load(body) if match.group(1) != "toml" else {"toml": 1}
            if match.group(1) == "toml" or set(keys or {}) & set(ConfgateConfig.model_fields):
                line = text[: match.start()].count("\n") + 1
                found.append((f"{doc.name}:{line}", match.group(1), body))
    for path in [_REPO / "confgate.yml", *sorted((_REPO / "examples").rglob("confgate.yml"))]:
        found.append((str(path.relative_to(_REPO)), "yaml", path.read_text(encoding="utf-8")))
    return found


@pytest.mark.parametrize(("where", "language", "text"), _shipped_snippets(),
                         ids=[w for w, _, _ in _shipped_snippets()])
def test_every_shipped_configuration_still_loads(where: str, language: str, text: str) -> None:
    """Strict types must not break what we tell people to write (issue 17.10). A snippet
    may name an agent it does not define (it shows one section); nothing else may fail."""
    from pytest_confgate.config.loader import parse_config_text

    name = "pyproject.toml" if language == "toml" else "confgate.yml"
    try:
        parse_config_text(Path(name), text)
    except ConfigError as exc:
        real = [p for p in exc.problems if "is not defined under agents" not in p]
        assert not real, f"{where}: {real}"


def test_project_and_patch_coverage_entries_are_both_valid(tmp_path: Path) -> None:
    """Issue 16: `test_coverage` twice is fine when one judges all lines, one changed lines."""
    path = tmp_path / "confgate.yml"
    path.write_text(
        "gate:\n  metrics:\n    - {type: test_coverage, scope: all, min: 0.8}\n"
        "    - {type: test_coverage, scope: changed, min: 0.9}\n",
        encoding="utf-8",
    )
    metrics = load_config(tmp_path, str(path)).config.gate.metrics
    assert [(m.type, getattr(m, "scope", None), m.min) for m in metrics] == [
        ("test_coverage", "all", 0.8),
        ("test_coverage", "changed", 0.9),
    ]


def test_an_option_name_under_coverage_paths_is_explained_not_read_as_a_path(
    tmp_path: Path,
) -> None:
    """``paths: {min: 0.9}`` was read as a floor for a file named ``min``, which never
    matched anything, so the intended floor silently did not apply."""
    config = write(tmp_path, "confgate.yml", "gate:\n  metrics:\n    - type: test_coverage\n"
                   "      paths: {min: 0.9}\n")

    problem = the_one_problem(tmp_path)

    assert_problem(problem, config, 4, "gate.metrics[0].paths",
                   "'min' is an option of test_coverage, not a path")
    assert "write `min: 0.9` beside `paths:`" in problem
    write(tmp_path, "confgate.yml", "gate:\n  metrics:\n    - type: test_coverage\n"
          "      min: 0.9\n      paths: {min/**: 0.5, src/core/**: 0.8}\n")
    [coverage] = load_config(tmp_path).config.gate.metrics
    assert coverage.min == 0.9
