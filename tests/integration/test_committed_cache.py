"""A change cannot hand the gate its own caches: ``.confgate/`` is the gate's state, not input.

The gate keeps instrumented code, coverage.py's analyses and the tools' results under
``.confgate/cache``, keyed by content. A change that commits entries there (git tracks a file
whatever ``.gitignore`` says once it is added with ``--force``) could make the figures lie:
here an analysis that says the untested module has no statements at all.
"""

from __future__ import annotations

import os
import pickle

import coverage
import pytest
from conftest import git, metric, read_report
from coverage.parser import PythonParser
from coverage.python import get_python_source

from pytest_confgate.collect.coverage.analysis import ANALYSES, _entry

UNTESTED = "def untested(x):\n    if x:\n        return 1\n    return 2\n"


def _gate(repo: pytest.Pytester) -> dict[str, object]:
    repo.runpytest("--confgate", "--confgate-base", "main")
    return read_report(repo)


def _poison(repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """An analysis of ``calc/extra.py`` with no statements, where the gate would look."""
    monkeypatch.chdir(repo.path)
    exclude = coverage.Coverage()._exclude_regex("exclude")
    target = os.path.realpath(repo.path / "calc" / "extra.py")
    empty = PythonParser(text="\n", filename=target, exclude=exclude)
    empty.parse_source()
    empty.arcs()
    folder = repo.path / ".confgate" / "cache" / "probes" / ANALYSES
    entry = _entry(folder, get_python_source(target), exclude)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(pickle.dumps(empty))


def test_a_cache_committed_by_the_change_is_not_read_and_needs_a_human(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "an untested module")
    git(repo.path, "branch", "-f", "main")
    honest = metric(_gate(repo), "test_coverage")["details"]
    assert honest["missing_lines"] > 0  # a real comparison

    _poison(repo, monkeypatch)
    git(repo.path, "add", "--force", ".confgate/cache")
    git(repo.path, "commit", "-q", "-m", "warm the cache")
    report = _gate(repo)
    details = metric(report, "test_coverage")["details"]
    keys = ("covered_lines", "num_statements", "missing_lines")
    assert {k: details[k] for k in keys} == {k: honest[k] for k in keys}
    assert report["risk_tier"] == "T2"
    assert ".confgate/cache/probes/" in str(report["risk_reason"])
