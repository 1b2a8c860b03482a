"""Where the base and the configuration come from: never from the change (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_confgate.gate.anchor import (
    COMMAND_LINE_BASE,
    EVENT_BASE,
    Requested,
    choose_base,
    choose_config,
)

BASE_SHA = "b" * 40


@pytest.fixture
def event(tmp_path: Path) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"number": 3, "base": {"sha": BASE_SHA}}}))
    return path


@pytest.mark.parametrize(
    ("requested", "configured", "pull", "expected", "source"),
    [
        (Requested("origin/dev", True), "HEAD", True, "origin/dev", COMMAND_LINE_BASE),
        (Requested("HEAD", False), "HEAD", True, BASE_SHA, EVENT_BASE),
        (Requested(), "HEAD", False, "HEAD", "base_ref in the configuration"),
        (Requested("main", False), "HEAD", False, "main",
         "--confgate-base from addopts or PYTEST_ADDOPTS"),
        (Requested("  ", True), None, False, None, None),
    ],
    ids=["command-line", "event-beats-addopts-and-config", "local-config", "local-addopts",
         "blank"],
)
def test_the_base_comes_from_the_first_source_the_change_cannot_edit(
    tmp_path: Path, event: Path, requested: Requested, configured: str | None, pull: bool,
    expected: str | None, source: str | None,
) -> None:
    environ = {"GITHUB_EVENT_PATH": str(event)} if pull else {}
    choice = choose_base(requested, configured, environ, tmp_path)
    assert (choice.ref, choice.source) == (expected, source)
    assert choice.anchored is (source in (COMMAND_LINE_BASE, EVENT_BASE))


def test_github_base_ref_is_used_when_the_event_has_no_base(tmp_path: Path) -> None:
    choice = choose_base(Requested("HEAD"), "HEAD", {"GITHUB_BASE_REF": "main"}, tmp_path)
    assert (choice.ref, choice.source, choice.anchored) == ("origin/main", "GITHUB_BASE_REF", True)
    assert choice.ignored == (
        "--confgate-base=HEAD from addopts or PYTEST_ADDOPTS not used: the change under review "
        "could have set it; the base is GITHUB_BASE_REF",
        "base_ref: HEAD in the configuration not used: the change under review could have set "
        "it; the base is GITHUB_BASE_REF",
    )


def test_an_event_base_that_is_not_a_commit_id_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"base": {"sha": "--output=/tmp/x"}}}))
    choice = choose_base(Requested(), None, {"GITHUB_EVENT_PATH": str(path)}, tmp_path)
    assert choice.ref is None


def test_a_config_from_the_command_line_is_always_used() -> None:
    requested = Requested(config="ci.yml", config_on_command_line=True)
    choice = choose_config(requested, {"GITHUB_BASE_REF": "main", "CONFGATE_CONFIG": "lax.yml"})
    assert (choice.path, choice.ignored) == ("ci.yml", ())


@pytest.mark.parametrize(
    "environ",
    [{"GITHUB_BASE_REF": "main"}, {"GITHUB_EVENT_NAME": "pull_request_review"}],
    ids=["pull_request", "review"],
)
def test_a_config_from_addopts_or_the_environment_is_ignored_on_a_pull_request(
    environ: dict[str, str],
) -> None:
    choice = choose_config(Requested(config="lax.yml"), {**environ, "CONFGATE_CONFIG": "x.yml"})
    assert choice.path is None
    assert [note.split(" ignored")[0] for note in choice.ignored] == [
        "--confgate-config=lax.yml from addopts or PYTEST_ADDOPTS", "CONFGATE_CONFIG=x.yml"
    ]
    assert "pass --confgate-config on the command line" in choice.ignored[0]


def test_a_local_run_honours_addopts_then_the_environment() -> None:
    assert choose_config(Requested(config="a.yml"), {"CONFGATE_CONFIG": "b.yml"}).path == "a.yml"
    assert choose_config(Requested(), {"CONFGATE_CONFIG": "b.yml"}).path == "b.yml"
    assert choose_config(Requested(), {}).path is None
