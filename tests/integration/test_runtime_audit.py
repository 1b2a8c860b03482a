"""The run-time audit (issue 34): what the change's code does to pytest, the gate and its own
process is a ``test_integrity`` finding with file and line, whatever names it builds at run time,
and no test's outcome changes.

Every reach below is spelled so that no text match could find it: names are built at run time.
"""

from __future__ import annotations

import json

import pytest
from conftest import git, metric, read_report, write_config

CONFIG = """\
gate:
  metrics:
    - {type: test_pass_rate}
"""
HOOKS = '''\
import importlib


def peek():
    gc = importlib.import_module("g" + "c")
    return len(getattr(gc, "get_" + "referrers")(peek)) >= 0
'''
CONFTEST = '''\
import os

with open(os.path.join("." + "conf" + "gate", "planted"), "w") as handle:
    handle.write("x")
'''
SNEAKY = '''\
import importlib
import os
import sys

from calc._hooks import peek


def test_scans_every_object():
    gc = importlib.import_module("g" + "c")
    assert getattr(gc, "get_" + "objects")()


def test_swaps_code():
    def slow():
        return 1

    def fast():
        return 2

    setattr(slow, "__co" + "de__", fast.__code__)
    assert slow() == 2


def test_reaches_pytest_frames():
    frame = getattr(sys, "_get" + "frame")(1)
    assert frame.f_code.co_name


def test_signals_itself():
    getattr(os, "ki" + "ll")(os.getpid(), 0)


def test_code_under_test_scans_too():
    assert peek()


class _Forward:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_redirects_the_terminal(request):
    writer = request.config.pluginmanager.get_plugin("terminal" + "reporter")._tw
    writer._file = _Forward(writer._file)
'''
OLD_HELPER = '''\
import gc


def test_old_leak_check():
    assert gc.get_objects()
'''


@pytest.fixture
def change(repo: pytest.Pytester) -> pytest.Pytester:
    """The base holds a test that already scanned objects; the change adds the sneaky ones."""
    write_config(repo, CONFIG)
    (repo.path / "tests" / "test_old.py").write_text(OLD_HELPER, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "base")
    git(repo.path, "branch", "-f", "main")
    (repo.path / "calc" / "_hooks.py").write_text(HOOKS, encoding="utf-8")
    (repo.path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (repo.path / "tests" / "test_sneaky.py").write_text(SNEAKY, encoding="utf-8")
    (repo.path / ".confgate").mkdir(exist_ok=True)
    return repo


def test_what_the_change_does_at_run_time_is_found_and_no_outcome_changes(
    change: pytest.Pytester,
) -> None:
    result = change.runpytest("--confgate", "--confgate-base", "main", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9)
    report = read_report(change)
    details = metric(report, "test_integrity")["details"]
    found = {(item["rule"], item["file"], item["line"]) for item in details["items"]}
    assert found >= {
        ("runtime_state_write", "conftest.py", 3),
        ("runtime_gc_scan", "tests/test_sneaky.py", 10),
        ("runtime_code_swap", "tests/test_sneaky.py", 20),
        ("runtime_frame_reach", "tests/test_sneaky.py", 25),
        ("runtime_self_kill", "tests/test_sneaky.py", 30),
        ("runtime_gc_scan", "calc/_hooks.py", 6),
        ("runtime_output_redirect", "tests/test_sneaky.py", 45),
    }
    assert not any(item["file"] == "tests/test_old.py" for item in details["items"])
    assert details["runtime_audit"]["outside_the_change"] == 1  # the base's own leak check
    assert report["risk_tier"] == "T2"
    assert report["decision"] != "pass"


def test_an_honest_change_has_no_run_time_finding(repo: pytest.Pytester) -> None:
    write_config(repo, CONFIG)
    (repo.path / "tests" / "test_more.py").write_text(
        "import logging\nfrom calc import add\n\n\ndef test_more():\n"
        "    logging.getLogger(__name__).warning('x')\n    assert add(2, 2) == 4\n",
        encoding="utf-8",
    )
    result = repo.runpytest("--confgate", "--confgate-base", "main", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    details = metric(read_report(repo), "test_integrity")["details"]
    assert details["runtime_audit"] == {"findings": 0, "outside_the_change": 0, "excluded": 0}


FORGER = '''\
import json
import os


def test_forges_and_leaves():
    with open("confgate-report.json", "w") as handle:
        json.dump({"decision": "pass"}, handle)
    getattr(os, "_ex" + "it")(0)
'''


def test_a_process_that_exits_before_its_session_ends_leaves_no_report(
    repo: pytest.Pytester,
) -> None:
    write_config(repo, CONFIG)
    (repo.path / "tests" / "test_forger.py").write_text(FORGER, encoding="utf-8")
    result = repo.runpytest_subprocess("--confgate", "--confgate-base", "main",
                                       "-p", "no:cacheprovider")
    assert result.ret == 0  # os._exit(0) keeps its exit status: the gate changes no outcome
    assert not (repo.path / "confgate-report.json").exists()
    result.stderr.fnmatch_lines(["*confgate: ERROR: os._exit(0) at tests/test_forger.py:8 *"])


PATCHER = '''\
import importlib


def test_patches_pytest():
    reports = importlib.import_module("_pytest." + "reports")
    real = reports.TestReport._to_json

    def forwarded(self):
        return real(self)

    setattr(reports.TestReport, "_to_" + "json", forwarded)
'''


def test_a_method_of_pytest_replaced_by_a_test_is_found_at_the_session_end(
    repo: pytest.Pytester,
) -> None:
    write_config(repo, CONFIG)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "base")
    git(repo.path, "branch", "-f", "main")
    (repo.path / "tests" / "test_patcher.py").write_text(PATCHER, encoding="utf-8")
    result = repo.runpytest_subprocess("--confgate", "--confgate-base", "main",
                                       "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    items = metric(read_report(repo), "test_integrity")["details"]["items"]
    assert [(i["rule"], i["message"]) for i in items] == [
        ("runtime_gate_patched", "_pytest.reports.TestReport (its methods): changed during the "
         "session")
    ]


def test_findings_reach_the_report_as_plain_items(change: pytest.Pytester) -> None:
    change.runpytest("--confgate", "--confgate-base", "main", "-p", "no:cacheprovider")
    raw = json.loads((change.path / "confgate-report.json").read_text(encoding="utf-8"))
    items = metric(raw, "test_integrity")["details"]["items"]
    assert all(set(item) == {"rule", "file", "line", "message", "test", "base", "head"}
               for item in items)
