"""``collect.cache_trust``: entries the project's code changed are never read, nothing but a
cache's own classes is unpickled, and the end-of-run sweep keeps only what the gate wrote."""

from __future__ import annotations

import marshal
import pickle
import time
from collections.abc import Iterator
from pathlib import Path

import coverage
import pytest

from pytest_confgate.collect import cache_trust
from pytest_confgate.collect.coverage.analysis import parsed
from pytest_confgate.collect.coverage.probe_code import ProbeCache

SOURCE = "def f(x):\n    if x:\n        return 1\n    return 2\n"


@pytest.fixture
def session() -> Iterator[int]:
    """A gate session whose project code started now (entries from here on are suspect)."""
    before = cache_trust.threshold()
    threshold = cache_trust.begin(time.time_ns() - 1)
    yield threshold
    cache_trust.end()
    if before is not None:
        cache_trust.begin(before)


class _Payload:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, ("import builtins; builtins.CONFGATE_PWNED = True",))


def test_a_reduce_payload_in_the_analysis_cache_is_a_miss_and_runs_nothing(
    tmp_path: Path,
) -> None:
    exclude = coverage.Coverage()._exclude_regex("exclude")
    first = parsed(SOURCE, "f.py", exclude, tmp_path)
    (entry,) = tmp_path.rglob("*.pickle")
    entry.write_bytes(pickle.dumps(_Payload()))  # no session: only the allow-list stands
    again = parsed(SOURCE, "f.py", exclude, tmp_path)
    import builtins

    assert not hasattr(builtins, "CONFGATE_PWNED")
    assert again.statements == first.statements == {1, 2, 3, 4}


def test_unpickle_refuses_every_class_a_cache_does_not_hold() -> None:
    assert cache_trust.unpickle(pickle.dumps({"a": [1, {2}], "b": (3,)})) == {
        "a": [1, {2}], "b": (3,)
    }
    assert cache_trust.unpickle(pickle.dumps(Path("x"))) is None
    assert cache_trust.unpickle(b"garbage") is None


@pytest.mark.usefixtures("session")
def test_an_entry_changed_during_the_session_is_read_only_if_the_gate_wrote_it(
    tmp_path: Path,
) -> None:
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    assert cache_trust.write_bytes(ours, b"{}")
    theirs.write_bytes(b"{}")
    assert cache_trust.read_bytes(ours) == b"{}"
    assert cache_trust.read_bytes(theirs) is None
    ours.write_bytes(b"[]")  # rewritten by someone else after the gate wrote it
    assert cache_trust.read_bytes(ours) is None


def test_outside_a_session_entries_are_read_as_before(tmp_path: Path) -> None:
    entry = tmp_path / "entry.json"
    entry.write_bytes(b"{}")
    if cache_trust.threshold() is None:  # our own suite may itself run under the gate
        assert cache_trust.read_bytes(entry) == b"{}"


def test_the_sweep_deletes_what_changed_during_the_session_unless_the_gate_wrote_it(
    tmp_path: Path, session: int
) -> None:
    cache = tmp_path / "cache"
    kept, planted, altered = cache / "a" / "kept.bin", cache / "b" / "planted.bin", cache / "c.bin"
    cache_trust.write_bytes(kept, b"1")
    cache_trust.write_bytes(altered, b"2")
    planted.parent.mkdir(parents=True)
    planted.write_bytes(b"3")
    altered.write_bytes(b"4")
    removed = cache_trust.sweep(cache)
    assert sorted(removed) == sorted([str(planted), str(altered)])
    assert kept.read_bytes() == b"1"
    assert session <= time.time_ns()


@pytest.mark.usefixtures("session")
def test_the_sweep_keeps_what_a_helper_process_wrote_once_the_gate_vouches_for_it(
    tmp_path: Path,
) -> None:
    entry = tmp_path / "bandit.json"
    entry.write_bytes(b"{}")
    import hashlib

    cache_trust.trust([[str(entry), hashlib.sha256(b"{}").hexdigest()], "junk", [1, 2]])
    assert cache_trust.sweep(tmp_path) == []
    assert cache_trust.read_bytes(entry) == b"{}"


@pytest.mark.usefixtures("session")
def test_instrumented_code_planted_during_the_session_is_not_run(tmp_path: Path) -> None:
    cache = ProbeCache(tmp_path)
    honest = compile("VALUE = 1\n", "m.py", "exec")
    assert cache.code(b"VALUE = 1\n", "m.py", lambda: honest) is honest
    (entry,) = tmp_path.rglob("*.bin")
    entry.write_bytes(marshal.dumps(compile("VALUE = 2\n", "m.py", "exec")))
    built = compile("VALUE = 1\n", "m.py", "exec")
    assert cache.code(b"VALUE = 1\n", "m.py", lambda: built) is built


def test_project_code_is_dated_no_later_than_the_process_start() -> None:
    assert cache_trust.project_code_since_ns() < time.time_ns()
    assert cache_trust.project_code_since_ns(parent_too=True) <= (
        cache_trust.project_code_since_ns() + 1_000_000_000
    )
