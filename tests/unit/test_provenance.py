"""What a report is bound to: head commit, uncommitted changes, run id (issue 14)."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from pytest_confgate.collect.provenance import collect_provenance, run_identity

NOW = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


def test_a_clean_checkout_names_its_head(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("a = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    head = git(tmp_path, "rev-parse", "HEAD").strip()

    found = collect_provenance(tmp_path, {"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "3"}, NOW)

    assert (found.head_sha, found.dirty, found.run_id) == (head, False, "42-3")
    assert found.started_at == "2026-05-01T12:00:00+00:00"
    (tmp_path / "new.py").write_text("b = 1\n")
    assert collect_provenance(tmp_path, {}, NOW).dirty is True


def test_outside_a_repository_there_is_no_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    found = collect_provenance(tmp_path, {}, NOW)
    assert (found.head_sha, found.dirty) == (None, False)


def test_a_local_run_gets_a_fresh_random_id() -> None:
    first, second = run_identity({}), run_identity({})
    assert first.startswith("local-")
    assert first != second
    assert run_identity({"GITHUB_RUN_ID": "7"}) == "7-1"


def test_git_asked_ahead_answers_as_when_asked_in_place(tmp_path: Path) -> None:
    """The plugin starts git first thing (issue 35); the provenance is the same."""
    from pytest_confgate.collect.provenance import GitFacts

    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("a = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "b.py").write_text("b = 1\n")
    ahead = collect_provenance(tmp_path, {"GITHUB_RUN_ID": "1"}, NOW, GitFacts(tmp_path))
    in_place = collect_provenance(tmp_path, {"GITHUB_RUN_ID": "1"}, NOW)
    assert ahead == in_place
    assert (ahead.head_sha, ahead.dirty) == (git(tmp_path, "rev-parse", "HEAD").strip(), True)


def test_a_failure_in_git_s_thread_is_raised_where_the_answer_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in asking git is not a clean tree with no head: it reaches the caller."""
    from pytest_confgate.collect import provenance

    def broken(root: Path, *args: str) -> str | None:
        raise RuntimeError("boom")

    monkeypatch.setattr(provenance, "_git_line", broken)
    with pytest.raises(RuntimeError, match="boom"):
        collect_provenance(tmp_path, {}, NOW)
