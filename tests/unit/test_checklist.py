"""checklist_completion: Markdown task lists from the PR body or a file (SPEC 4, issue 3 item 4)."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_confgate.collect import checklist
from pytest_confgate.collect.checklist import (
    MAX_CHECKLIST_BYTES,
    ChecklistItem,
    checklist_metric,
    collect_checklist,
    normalize_item_text,
    parse_checklist,
)
from pytest_confgate.config import ChecklistMetricConfig
from pytest_confgate.models import MetricStatus

DETAIL_KEYS = {
    "tool",
    "duration_s",
    "source",
    "checked",
    "total",
    "required_missing",
    "conflicting",
    "required_conflicting",
    "items",
}


def _config(source: str = "pr_body", required: list[str] | None = None) -> ChecklistMetricConfig:
    return ChecklistMetricConfig(
        type="checklist_completion", source=source, required=required or []
    )


def _event(tmp_path: Path, payload: Any) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_PATH": str(path)}


def _pr(body: str | None) -> dict[str, Any]:
    return {"action": "opened", "number": 7, "pull_request": {"number": 7, "body": body}}


# --- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "checked", "text"),
    [
        ("- [x] Tests added", True, "Tests added"),
        ("- [X] Tests added", True, "Tests added"),
        ("- [ ] Docs updated", False, "Docs updated"),
        ("* [ ] Docs updated", False, "Docs updated"),
        ("+ [x] Changelog", True, "Changelog"),
        ("    - [x] nested item", True, "nested item"),
        ("\t* [ ] tab-indented item", False, "tab-indented item"),
        ("1. [x] numbered", True, "numbered"),
        ("12) [ ] paren numbered", False, "paren numbered"),
        ("-   [x]   extra spaces  ", True, "extra spaces"),
    ],
    ids=[
        "dash-x",
        "dash-capital-x",
        "dash-empty",
        "star",
        "plus",
        "nested",
        "tab-indent",
        "numbered-dot",
        "numbered-paren",
        "extra-spaces",
    ],
)
def test_task_list_forms_are_recognized(line: str, checked: bool, text: str) -> None:
    assert parse_checklist(line) == [ChecklistItem(text=text, checked=checked, line=1)]


@pytest.mark.parametrize(
    "text",
    [
        "-[x] no space after the bullet",
        "- [x]no space after the box",
        "- [y] not a box",
        "- [xx] not a box",
        "- [ ]",
        "[x] no bullet",
        "x. [x] letter ordinal",
        "1234567890. [x] ten-digit ordinal",
        "Some prose mentioning - [x] inline",
        "```\n- [x] inside a backtick fence\n```",
        "~~~\n- [x] inside a tilde fence\n~~~",
        "  ```python\n- [x] inside an indented fence\n  ```",
        "````\n```\n- [x] a shorter fence does not close\n````",
        "```\n- [x] an unclosed fence runs to the end",
        "<!-- - [x] commented out -->",
        "<!--\n- [x] in a multi-line comment\n-->",
        "<!--\n- [ ] a\n--> - [x] the closing line belongs to the comment",
    ],
    ids=[
        "no-space-after-bullet",
        "no-space-after-box",
        "bad-box-letter",
        "double-x",
        "empty-box-without-text",
        "no-bullet",
        "letter-ordinal",
        "ten-digit-ordinal",
        "inline-prose",
        "backtick-fence",
        "tilde-fence",
        "indented-fence",
        "shorter-closing-fence",
        "unclosed-fence",
        "inline-comment",
        "multi-line-comment",
        "comment-closing-line",
    ],
)
def test_text_that_is_not_a_task_item_is_ignored(text: str) -> None:
    assert parse_checklist(text) == []


def test_items_after_a_closed_fence_or_comment_count_again() -> None:
    text = "```\n- [x] code\n```\n<!--\n- [x] c\n-->\n- [ ] real\n~~~\n```\n~~~\n* [x] also"
    assert parse_checklist(text) == [
        ChecklistItem(text="real", checked=False, line=7),
        ChecklistItem(text="also", checked=True, line=11),
    ]


def test_an_inline_comment_is_removed_but_its_item_is_kept() -> None:
    assert parse_checklist("- [x] ship it <!-- reviewer note -->") == [
        ChecklistItem(text="ship it", checked=True, line=1)
    ]


def test_line_numbers_are_the_same_with_crlf_and_cr_line_endings() -> None:
    lf = "intro\n\n- [x] a\n- [ ] b\n"
    expected = parse_checklist(lf)
    assert [i.line for i in expected] == [3, 4]
    assert parse_checklist(lf.replace("\n", "\r\n")) == expected
    assert parse_checklist(lf.replace("\n", "\r")) == expected


@pytest.mark.parametrize(
    "text",
    [
        "::set-output name=ok::true",
        "$(rm -rf /) && `id` | tee ; echo ${HOME}",
        "<script>x</script>",
    ],
    ids=["workflow-command", "shell-metacharacters", "html"],
)
def test_item_text_is_kept_literally_as_data(text: str) -> None:
    items = parse_checklist(f"- [x] {text}")
    assert items == [ChecklistItem(text=text, checked=True, line=1)]
    assert checklist_metric(items, [], source="x.md").details["items"][0]["text"] == text


# --- linear time ----------------------------------------------------------------------------


def test_the_parser_has_no_regular_expression_that_could_backtrack() -> None:
    # Linear time is by construction: one pass over the lines with str.find and fixed-width
    # slices. A regex added later would need its own proof, so this test makes it visible.
    assert "re" not in vars(checklist)
    assert not any(isinstance(value, re.Pattern) for value in vars(checklist).values())


_FRAGMENTS = st.sampled_from(
    ["- ", "- [", "[ ]", "[x]", "1", "1.", " ", "\t", "\n", "\r", "<!--", "-->", "```", "~~~",
     "#", "*", "+", "x", "\u200b", "é"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=400), st.integers(min_value=1, max_value=50))
def test_adversarial_fragment_soup_parses_into_well_formed_items(
    parts: list[str], repeat: int
) -> None:
    text = "".join(parts) * repeat
    items = parse_checklist(text)
    line_count = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for item in items:
        assert 1 <= item.line <= line_count
        assert item.text == item.text.strip(" \t")
        assert item.text


@pytest.mark.parametrize(
    "unit",
    ["- ", "1", "<!--", "- [ ] a <!--", "```\n", "- [", "\t" * 7 + "-", "- [x] ok\n"],
    ids=["bullets", "digits", "comment-openers", "open-comment-items", "fences", "half-box",
         "tabs", "items"],
)  # fmt: skip
def test_a_megabyte_of_adversarial_input_is_parsed(unit: str) -> None:
    text = unit * (MAX_CHECKLIST_BYTES // len(unit))
    items = parse_checklist(text)
    assert all(isinstance(item, ChecklistItem) for item in items)
    if unit == "- [x] ok\n":
        assert len(items) == MAX_CHECKLIST_BYTES // len(unit)


@given(st.text())
def test_the_parser_never_crashes_on_any_text(text: str) -> None:
    items = parse_checklist(text)
    metric = checklist_metric(items, ["a"], source="pr_body")
    assert 0 <= metric.details["checked"] <= metric.details["total"] == len(items)
    assert metric.value is None or 0.0 <= metric.value <= 1.0


@given(st.lists(st.tuples(st.booleans(), st.text(min_size=1, max_size=20)), max_size=30))
def test_checked_never_exceeds_total(rows: list[tuple[bool, str]]) -> None:
    text = "\n".join(f"- [{'x' if ticked else ' '}] {label}" for ticked, label in rows)
    details = checklist_metric(parse_checklist(text), [], source="x.md").details
    assert 0 <= details["checked"] <= details["total"]


@given(st.text())
def test_normalization_is_idempotent(text: str) -> None:
    once = normalize_item_text(text)
    assert normalize_item_text(once) == once


# --- the metric ------------------------------------------------------------------------------


def test_value_is_checked_over_total_with_the_contract_details() -> None:
    metric = checklist_metric(
        parse_checklist("- [x] a\n- [ ] b\n- [x] c\n- [ ] d"), [], source="pr_body"
    )
    assert metric.value == 0.5
    assert metric.status is MetricStatus.OK
    assert set(metric.details) == DETAIL_KEYS
    assert metric.details["checked"] == 2
    assert metric.details["total"] == 4
    assert metric.details["items"][1] == {"text": "b", "checked": False, "line": 2}


def test_an_item_both_checked_and_unchecked_counts_as_unchecked_and_is_named() -> None:
    text = "- [x] Tests pass\n- [x] Docs\n- [ ] tests  PASS"
    metric = checklist_metric(parse_checklist(text), ["tests pass"], source="pr_body")
    assert metric.details["checked"] == 1
    assert metric.details["total"] == 3
    assert metric.details["conflicting"] == ["Tests pass"]
    assert metric.details["required_missing"] == ["tests pass"]
    assert metric.details["required_conflicting"] == ["Tests pass"]


def test_a_long_run_of_combining_marks_is_made_stream_safe_before_nfkc() -> None:
    """Issue 30: NFKC reorders a run of combining marks in quadratic time (64,000 marks took
    seconds); UAX #15's stream-safe form caps each run at 30 with U+034F."""
    marks = "\u0316\u0301" * 40  # classes 220 and 230: NFKC must reorder them
    folded = normalize_item_text("a" + marks)
    runs = folded[1:].split("\u034f")  # "a" may have composed with one mark: "á"
    assert len(runs) == 3
    assert max(len(run) for run in runs) <= 30
    assert all(sorted(run, key=unicodedata.combining) == list(run) for run in runs)
    assert normalize_item_text(folded) == folded
    assert normalize_item_text("Caf\u0065\u0301") == "caf\u00e9"  # short runs as before


def test_no_items_is_unavailable_evidence_not_a_pass() -> None:
    metric = checklist_metric([], ["tests"], source="CHECKLIST.md")
    assert metric.value is None
    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.reason == "no checklist items found in CHECKLIST.md"
    assert metric.details["required_missing"] == ["tests"]


@pytest.mark.parametrize(
    ("item", "pattern"),
    [
        ("Tests added", "tests ADDED"),
        ("\uff34\uff45\uff53\uff54\uff53\u3000\uff41\uff44\uff44\uff45\uff44", "tests added"),
        ("Te\u200bsts\u2060 add\ufeffed", "tests added"),
        ("Tests\t\t  added", "tests added"),
        ("Größe checked", "GRÖSSE CHECKED"),
    ],
    ids=["case", "fullwidth-nfkc", "zero-width", "whitespace", "casefold"],
)
def test_required_patterns_match_checked_items_after_normalization(item: str, pattern: str) -> None:
    metric = checklist_metric(parse_checklist(f"- [x] {item}"), [pattern], source="x.md")
    assert metric.details["required_missing"] == []


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("- [ ] Tests added", "tests added"),
        ("- [x] Tests added", "tests.*"),
        ("- [x] Tests added", "^tests"),
        ("- [x] Tests added", "\u200b"),
        ("- [x] Docs", "tests"),
        ("- [x] tests added (will do later)", "tests added"),
        ("- [x] not tests added", "tests added"),
        ("- [x] Security review done by the team", "review done"),
        ("- [x] Größe checked", "GRÖSSE"),
    ],
    ids=["unchecked", "regex-star-is-literal", "regex-anchor-is-literal", "empty-after-normalizing",
         "absent", "a-caveat-after-the-item", "a-word-before-the-item", "a-substring",
         "a-casefolded-substring"],
)  # fmt: skip
def test_required_patterns_not_met_by_a_checked_item_are_missing(text: str, pattern: str) -> None:
    metric = checklist_metric(parse_checklist(text), [pattern], source="x.md")
    assert metric.details["required_missing"] == [pattern]


def test_a_pattern_is_plain_text_so_brackets_match_literally() -> None:
    metric = checklist_metric(parse_checklist("- [x] run [x] twice"), ["RUN [x] twice"], source="a")
    assert metric.details["required_missing"] == []


# --- reading the source ------------------------------------------------------------------------


def test_pr_body_is_read_from_the_github_event_file(tmp_path: Path) -> None:
    environ = _event(tmp_path, _pr("## Checklist\r\n- [x] Tests\r\n- [ ] Docs\r\n"))
    metric = collect_checklist(_config(required=["docs"]), tmp_path, environ)
    assert metric.value == 0.5
    assert metric.details["source"] == "pr_body"
    assert metric.details["tool"] == "checklist"
    assert metric.details["duration_s"] >= 0.0
    assert metric.details["required_missing"] == ["docs"]
    assert set(metric.details) == DETAIL_KEYS


@pytest.mark.parametrize("body", [None, ""], ids=["null-body", "empty-body"])
def test_a_pr_without_a_body_has_no_items(tmp_path: Path, body: str | None) -> None:
    metric = collect_checklist(_config(), tmp_path, _event(tmp_path, _pr(body)))
    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.reason == "no checklist items found in the pull-request body"


def test_without_an_event_file_the_reason_says_where_it_looked(tmp_path: Path) -> None:
    metric = collect_checklist(_config(), tmp_path, {})
    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.reason is not None
    assert "GITHUB_EVENT_PATH is not set" in metric.reason
    assert "`source: PATH`" in metric.reason
    assert set(metric.details) == DETAIL_KEYS


def test_a_missing_event_file_is_unavailable_and_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    metric = collect_checklist(_config(), tmp_path, {"GITHUB_EVENT_PATH": str(missing)})
    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.reason is not None
    assert str(missing) in metric.reason
    assert "`source: PATH`" in metric.reason


def test_an_event_that_is_not_a_pull_request_is_unavailable(tmp_path: Path) -> None:
    environ = _event(tmp_path, {"ref": "refs/heads/main", "commits": []})
    metric = collect_checklist(_config(required=["x"]), tmp_path, environ)
    assert metric.status is MetricStatus.UNAVAILABLE
    assert metric.reason is not None
    assert "not a pull_request event" in metric.reason
    assert metric.details["required_missing"] == ["x"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON"),
        (json.dumps({"pull_request": {"body": 42}}), "no text in pull_request.body"),
        (json.dumps({"pull_request": "body"}), "no text in pull_request.body"),
        (json.dumps(_pr("- [x] a\n" * (MAX_CHECKLIST_BYTES // 8 + 1))), "byte limit"),
    ],
    ids=["invalid-json", "body-not-text", "pull-request-not-an-object", "body-too-large"],
)
def test_an_unusable_event_is_an_error_with_the_reason(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "event.json"
    path.write_text(content, encoding="utf-8")
    metric = collect_checklist(_config(), tmp_path, {"GITHUB_EVENT_PATH": str(path)})
    assert metric.status is MetricStatus.ERROR
    assert metric.value is None
    assert metric.reason is not None
    assert expected in metric.reason


def test_a_lone_surrogate_in_the_body_cannot_break_the_report(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text('{"pull_request": {"body": "- [x] a\\ud800b"}}', encoding="utf-8")
    metric = collect_checklist(_config(), tmp_path, {"GITHUB_EVENT_PATH": str(path)})
    assert metric.value == 1.0
    metric.model_dump_json()


def test_a_markdown_file_relative_to_the_root_is_read(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "release.md").write_text(
        "\ufeff- [x] Tag pushed\n- [x] Notes written\n", encoding="utf-8"
    )
    metric = collect_checklist(_config("docs/release.md", ["tag pushed"]), tmp_path, {})
    assert metric.value == 1.0
    assert metric.details["source"] == "docs/release.md"
    assert metric.details["required_missing"] == []


@pytest.mark.parametrize(
    ("setup", "source", "expected"),
    [
        (None, "CHECKLIST.md", "CHECKLIST.md does not exist"),
        (b"- [x] a\n" * (MAX_CHECKLIST_BYTES // 8 + 1), "big.md", "byte limit"),
        (b"- [x] ok\n- [ ] caf\xe9\n", "latin1.md", "latin1.md:2 is not valid UTF-8"),
        (None, "../outside.md", "outside the project root"),
    ],
    ids=["missing", "too-large", "not-utf8", "outside-root"],
)
def test_an_unusable_checklist_file_is_an_error_naming_it(
    tmp_path: Path, setup: bytes | None, source: str, expected: str
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "outside.md").write_text("- [x] a\n", encoding="utf-8")
    if setup is not None:
        (root / source).write_bytes(setup)
    metric = collect_checklist(_config(source, ["a"]), root, {})
    assert metric.status is MetricStatus.ERROR
    assert metric.reason is not None
    assert expected in metric.reason
    assert metric.details["required_missing"] == ["a"]
    assert set(metric.details) == DETAIL_KEYS
