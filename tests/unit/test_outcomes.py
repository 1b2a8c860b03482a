"""The one outcome classification both run plugins use (rank's and the tamper replay's):
the same pytest run, seen by both, names every test the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_confgate.collect.tamper import replay_plugin
from pytest_confgate.rank import outcomes_plugin

EVERY_KIND = """\
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("setup")


@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown")


def test_passes():
    pass


def test_fails():
    assert 1 == 2


def test_setup_errors(broken):
    pass


def test_teardown_errors(bad_teardown):
    pass


@pytest.mark.skip(reason="no")
def test_skipped():
    pass


@pytest.mark.xfail
def test_xfails():
    assert False


@pytest.mark.xfail
def test_xpasses():
    pass


@pytest.mark.xfail(strict=True)
def test_xpasses_strictly():
    pass
"""


def test_both_plugins_name_every_outcome_alike(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert replay_plugin.phase_outcome is outcomes_plugin.phase_outcome
    pytester.makepyfile(test_kinds=EVERY_KIND)
    ranked, replayed = tmp_path / "rank.json", tmp_path / "replay.json"
    monkeypatch.setenv(outcomes_plugin.ENV, str(ranked))

    pytester.runpytest_subprocess(
        "-p", "pytest_confgate.rank.outcomes_plugin",
        "-p", "pytest_confgate.collect.tamper.replay_plugin",
        f"{replay_plugin.OPTION}={replayed}", "-p", "no:cacheprovider",
    )

    by_rank = json.loads(ranked.read_text(encoding="utf-8"))
    by_replay = {k: v["outcome"] for k, v in json.loads(replayed.read_text("utf-8")).items()}
    assert by_rank == by_replay
    assert {name.split("::")[1]: outcome for name, outcome in by_rank.items()} == {
        "test_passes": "passed", "test_fails": "failed", "test_setup_errors": "error",
        "test_teardown_errors": "error", "test_skipped": "skipped", "test_xfails": "xfailed",
        "test_xpasses": "xpassed", "test_xpasses_strictly": "failed",
    }
