"""requirement_coverage: requirements files and linked tests (SPEC 4, issue 3 item 5)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect.requirements import (
    MAX_REQUIREMENTS_BYTES,
    Requirement,
    collect_requirement_coverage,
    load_requirements,
    requirement_metric,
)
from pytest_confgate.config import RequirementMetricConfig
from pytest_confgate.exceptions import ConfigError
from pytest_confgate.models import MetricStatus

DETAIL_KEYS = {
    "tool",
    "source",
    "covered",
    "total",
    "uncovered",
    "uncovered_titles",
    "unknown_ids",
    "tests_by_requirement",
}
REQS = [Requirement("REQ-1", "Log in"), Requirement("REQ-2", "Log out"), Requirement("REQ-3", "")]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_requirements(path)
    return str(caught.value)


# --- YAML ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "- id: REQ-1\n  title: Log in\n- {id: REQ-2, title: Log out}\n",
        "requirements:\n  - id: REQ-1\n    title: Log in\n  - id: REQ-2\n    title: Log out\n",
        "- id: ' REQ-1 '\n  title: Log in\n  owner: auth team\n- id: REQ-2\n  title: Log out\n",
    ],
    ids=["list", "mapping", "extra-keys-ignored"],
)
def test_yaml_requirements_are_read_in_file_order(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, "reqs.yml", text)
    assert load_requirements(path) == [
        Requirement("REQ-1", "Log in"),
        Requirement("REQ-2", "Log out"),
    ]


def test_a_numeric_yaml_id_is_read_as_text_and_a_missing_title_is_empty(tmp_path: Path) -> None:
    path = _write(tmp_path, "reqs.yaml", "- id: 12\n- id: A-1\n  title:\n")
    assert load_requirements(path) == [Requirement("12", ""), Requirement("A-1", "")]


@pytest.mark.parametrize(
    "text", ["", "requirements: []\n", "[]\n"], ids=["empty", "empty-mapping", "empty-list"]
)
def test_an_empty_yaml_file_has_no_requirements(tmp_path: Path, text: str) -> None:
    assert load_requirements(_write(tmp_path, "reqs.yml", text)) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- id: REQ-1\n- id: REQ-2\n- id: REQ-1\n", ":3: requirement REQ-1 is listed twice"),
        (
            "requirements:\n  - id: REQ-1\n  - id: REQ-1\n",
            ":3: requirement REQ-1 is listed twice",
        ),
        ("- id: REQ-1\n- title: No id\n", ":2: requirement entry 2: has no `id`"),
        ("- id: REQ-1\n- id: '  '\n", ":2: requirement entry 2: has no `id`"),
        ("- id: yes\n", ":1: requirement entry 1: `id: True` is not text; quote it"),
        ("- id: 1.10\n", ":1: requirement entry 1: `id: 1.1` is not text; quote it"),
        ("- id: REQ-1\n  title: [a, b]\n", "(REQ-1): `title` must be text"),
        ("- REQ-1\n", ":1: requirement entry 1: expected a mapping"),
        ("requirements: REQ-1\n", ":1: expected a list of {id, title} entries"),
        ("- id: REQ-1\n  title: [unclosed\n", ":3: invalid YAML"),
    ],
    ids=[
        "duplicate-in-list",
        "duplicate-in-mapping",
        "missing-id",
        "blank-id",
        "boolean-id",
        "float-id",
        "title-not-text",
        "entry-not-a-mapping",
        "not-a-list",
        "invalid-yaml",
    ],
)
def test_a_bad_yaml_file_is_a_config_error_naming_file_line_and_id(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = _write(tmp_path, "reqs.yml", text)
    message = _config_error(path)
    assert message.startswith(str(path))
    assert expected in message


def test_yaml_is_only_data_never_python_objects(tmp_path: Path) -> None:
    path = _write(tmp_path, "reqs.yml", "- id: !!python/object/apply:os.system ['echo hi']\n")
    assert "invalid YAML" in _config_error(path)


# --- Markdown -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "req_id", "title"),
    [
        ("## REQ-1: Users can log in", "REQ-1", "Users can log in"),
        ("### [REQ-2] Passwords are hashed", "REQ-2", "Passwords are hashed"),
        ("# REQ-3 — Sessions expire", "REQ-3", "Sessions expire"),
        ("# REQ-4 \u2013 en dash", "REQ-4", "en dash"),
        ("#### SEC2-10 - hyphen", "SEC2-10", "hyphen"),
        ("## REQ-5:No space", "REQ-5", "No space"),
        ("## REQ-6", "REQ-6", ""),
        ("## REQ-7: Closed heading ##", "REQ-7", "Closed heading"),
        ("   ###### REQ-8 Title #hashtag", "REQ-8", "Title #hashtag"),
    ],
    ids=[
        "colon",
        "brackets",
        "em-dash",
        "en-dash",
        "hyphen-and-digits-in-prefix",
        "colon-no-space",
        "no-title",
        "closing-hashes",
        "indented-h6-keeps-inner-hash",
    ],
)
def test_markdown_headings_with_ids_are_requirements(
    tmp_path: Path, heading: str, req_id: str, title: str
) -> None:
    path = _write(tmp_path, "REQUIREMENTS.md", f"# Requirements\n\nIntro.\n\n{heading}\n\nBody.\n")
    assert load_requirements(path) == [Requirement(req_id, title)]


@pytest.mark.parametrize(
    "text",
    [
        "## req-1 lowercase",
        "## REQ-1-2 two numbers",
        "## REQ-x not a number",
        "## 1-2 digit prefix",
        "REQ-1: not a heading",
        "####### REQ-1 seven hashes",
        "##REQ-1 no space",
        "    ## REQ-1 indented code",
        "## Requirement REQ-1 not first",
        "```\n## REQ-1 in a fence\n```",
        "<!--\n## REQ-1 in a comment\n-->",
    ],
    ids=[
        "lowercase",
        "two-numbers",
        "no-number",
        "digit-prefix",
        "not-a-heading",
        "seven-hashes",
        "no-space",
        "indented-code",
        "id-not-first",
        "in-fence",
        "in-comment",
    ],
)
def test_headings_without_a_leading_id_are_not_requirements(tmp_path: Path, text: str) -> None:
    assert load_requirements(_write(tmp_path, "reqs.md", text)) == []


@pytest.mark.parametrize(
    "line",
    ["## " + "A1" * 400_000, "## REQ-" + "1" * 800_000 + "x", "# [REQ-1" * 100_000, "#" * 800_000],
    ids=["long-prefix", "long-number", "unclosed-brackets", "hashes"],
)
def test_megabyte_heading_like_lines_are_matched_by_an_anchored_linear_pattern(
    tmp_path: Path, line: str
) -> None:
    # The heading pattern is anchored and each quantifier is followed by a character it cannot
    # match, so these finish in one pass; a backtracking pattern would hang here instead.
    assert load_requirements(_write(tmp_path, "reqs.md", line)) == []


def test_a_duplicate_markdown_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "reqs.md", "## REQ-1: a\n\n## [REQ-1] b\n")
    message = _config_error(path)
    assert message == f"{path}:3: requirement REQ-1 is listed twice (first on line 1); " + (
        "give each requirement its own ID"
    )


@given(text=st.text())
def test_markdown_loading_never_crashes_on_any_text(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    target = tmp_path_factory.getbasetemp() / "hypothesis-reqs.md"
    target.write_text(text, encoding="utf-8")
    refused = ""
    try:
        found = load_requirements(target)
    except ConfigError as exc:
        refused, found = str(exc), []
    assert not refused or "is listed twice" in refused  # the only reason to refuse Markdown
    assert len({req.id for req in found}) == len(found)


# --- unusable files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("missing.yml", None, "cannot be read"),
        ("big.md", b"#" * (MAX_REQUIREMENTS_BYTES + 1), "byte limit"),
        (
            "latin1.yml",
            b"- id: REQ-1\n  title: caf\xe9\n",
            ":2: the requirements file is not valid UTF-8",
        ),
        ("reqs.txt", b"REQ-1\n", "must be a YAML"),
    ],
    ids=["missing", "too-large", "not-utf8", "unknown-suffix"],
)
def test_an_unusable_requirements_file_is_a_config_error_naming_it(
    tmp_path: Path, name: str, content: bytes | None, expected: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    message = _config_error(path)
    assert str(path) in message
    assert expected in message


# --- the metric ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("links", "value", "uncovered"),
    [
        ({}, 0.0, ["REQ-1", "REQ-2", "REQ-3"]),
        ({"REQ-2": [("t.py::a", True)]}, 1 / 3, ["REQ-1", "REQ-3"]),
        ({"REQ-1": [("t.py::a", False), ("t.py::b", True)]}, 1 / 3, ["REQ-2", "REQ-3"]),
        (
            {"REQ-1": [("t.py::a", False)], "REQ-3": [("t.py::c", False)]},
            0.0,
            ["REQ-1", "REQ-2", "REQ-3"],
        ),
        ({r.id: [("t.py::x", True)] for r in REQS}, 1.0, []),
    ],
    ids=["no-links", "one-passing", "one-of-two-passing", "only-failing", "all-covered"],
)
def test_value_is_covered_requirements_over_all(
    links: dict[str, Sequence[tuple[str, bool]]], value: float, uncovered: list[str]
) -> None:
    metric = requirement_metric(REQS, links, source="reqs.yml")
    assert metric.value == pytest.approx(value)
    assert metric.details["uncovered"] == uncovered
    assert metric.details["covered"] == 3 - len(uncovered)
    assert metric.details["total"] == 3


def test_details_hold_the_contract_keys_titles_and_linked_tests() -> None:
    links = {
        "REQ-3": [("t.py::c", True)],
        "REQ-1": [("t.py::a[1]", False), ("t.py::a[1]", False), ("t.py::a[2]", False)],
    }
    details = requirement_metric(REQS, links, source="reqs.yml").details
    assert set(details) == DETAIL_KEYS
    assert details["tool"] == "requirements"
    assert details["source"] == "reqs.yml"
    assert details["uncovered_titles"] == {"REQ-1": "Log in", "REQ-2": "Log out"}
    assert details["tests_by_requirement"] == {
        "REQ-1": ["t.py::a[1]", "t.py::a[2]"],
        "REQ-2": [],
        "REQ-3": ["t.py::c"],
    }


def test_ids_that_no_requirement_has_are_reported_sorted_with_their_tests() -> None:
    links = {
        "REQ-9": [("t.py::z", True)],
        "REQ-1": [("t.py::a", True)],
        "req-1": [("t.py::lower", True), ("t.py::lower2", False)],
    }
    metric = requirement_metric(REQS, links, source="reqs.yml")
    assert metric.details["unknown_ids"] == [
        {"id": "REQ-9", "tests": ["t.py::z"]},
        {"id": "req-1", "tests": ["t.py::lower", "t.py::lower2"]},
    ]
    assert metric.details["covered"] == 1


def test_no_requirements_is_an_error_not_a_pass() -> None:
    metric = requirement_metric([], {"REQ-1": [("t.py::a", True)]}, source="reqs.md")
    assert metric.status is MetricStatus.ERROR
    assert metric.value is None
    assert metric.reason is not None
    assert metric.reason.startswith("no requirements found in reqs.md")
    assert metric.details["unknown_ids"] == [{"id": "REQ-1", "tests": ["t.py::a"]}]


def test_the_collector_reads_the_configured_file_relative_to_the_root(tmp_path: Path) -> None:
    _write(tmp_path, "REQUIREMENTS.md", "## REQ-1: Log in\n## REQ-2: Log out\n")
    config = RequirementMetricConfig(type="requirement_coverage", requirements="REQUIREMENTS.md")
    metric = collect_requirement_coverage(config, tmp_path, {"REQ-2": [("t.py::b", True)]})
    assert metric.value == 0.5
    assert metric.details["uncovered"] == ["REQ-1"]
    assert metric.details["uncovered_titles"] == {"REQ-1": "Log in"}
    assert metric.details["source"] == "REQUIREMENTS.md"


@given(
    st.dictionaries(
        st.sampled_from(["REQ-1", "REQ-2", "REQ-3", "OTHER-1"]),
        st.lists(st.tuples(st.text(max_size=5), st.booleans()), max_size=4),
    )
)
def test_covered_never_exceeds_total_and_the_value_stays_in_range(
    links: dict[str, list[tuple[str, bool]]],
) -> None:
    metric = requirement_metric(REQS, links, source="r.yml")
    assert 0 <= metric.details["covered"] <= metric.details["total"] == 3
    assert metric.value is not None
    assert 0.0 <= metric.value <= 1.0
    assert len(metric.details["uncovered"]) == 3 - metric.details["covered"]
