"""Locked artifacts (seed 001): the hash approval records, and changes found later."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_confgate.overlays.lock import changed_locks, record_lock


def test_a_lock_records_the_content_hash_and_an_unchanged_file_reports_nothing(
    tmp_path: Path,
) -> None:
    artifact = tmp_path / "docs" / "design.md"
    artifact.parent.mkdir()
    artifact.write_text("# v1\n")
    state = tmp_path / ".confgate"
    digest = record_lock(state, "design", artifact, tmp_path, "run-1")
    assert digest == hashlib.sha256(b"# v1\n").hexdigest()
    assert changed_locks(state, tmp_path) == []


def test_a_changed_or_deleted_artifact_is_reported_with_both_hashes(tmp_path: Path) -> None:
    state = tmp_path / ".confgate"
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(name)
        record_lock(state, name, tmp_path / name, tmp_path, "run-7")
    (tmp_path / "a.md").write_text("edited")
    (tmp_path / "b.md").unlink()
    changed, deleted = changed_locks(state, tmp_path)
    assert (changed.artifact, changed.current_sha256) == (
        "a.md", hashlib.sha256(b"edited").hexdigest()
    )
    assert deleted.current_sha256 is None
    assert "was deleted" in deleted.message()
    assert "changed since run run-7 locked it" in changed.message()


def test_a_missing_artifact_cannot_be_locked(tmp_path: Path) -> None:
    assert record_lock(tmp_path / ".confgate", "t", tmp_path / "nope.md", tmp_path, "r") is None


def test_an_unreadable_locks_file_counts_as_no_locks(tmp_path: Path) -> None:
    state = tmp_path / ".confgate"
    state.mkdir()
    (state / "locks.json").write_text("{not json")
    assert changed_locks(state, tmp_path) == []
