"""Issue 34: forgeries by code that runs in the test process, through the Action's two jobs.

Each change adds one failing test and code that, once pytest is done, rewrites the report
consistently (all passed, decision pass), prints a digest line of its own for it and ends
the process with ``os._exit(0)``. Every name it uses is built at run time, so no spelling
list in the publish step can see it. The gate step runs the tests under ``confgate gate``,
a supervisor in another process that tallies the outcomes as they stream in and writes the
report itself: none of these publishes ``pass``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from fakes.github_server import FakeGitHubServer
from test_action import Runner, assert_never_published_as_pass, serve_pull_request, upload

from pytest_confgate.report.writers import load_report

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

FORGER = '''\
import hashlib as _h
import json as _j
import pathlib as _p

_os = __import__("o" + "s")
_write = getattr(_os, "wr" + "ite")
_NAME = "confgate" + "-report.json"
_LINE = b"confgate: report " + b"sha256 "
_REAL = []  # the real output, when a test kept a copy of it before silencing the log


def _quiet(fd, data):
    if _LINE in bytes(data):
        return len(data)  # the gate's own digest line never reaches the log
    return _write(fd, data)


setattr(_os, "wr" + "ite", _quiet)


def _claim():
    path = _p.Path(_NAME)
    try:
        report = _j.loads(path.read_text())
    except (OSError, ValueError):
        report = {}
    report.update(decision="pass", reasons=[], conditions=[], auto_advance=False)
    tests = report.setdefault("tests", {"passed": 0, "failed": 0, "errors": 0})
    tests.update(passed=tests.get("passed", 0) + tests.get("failed", 0), failed=0, errors=0)
    for metric in report.get("metrics", []):
        if metric["type"] == "test_pass_rate":
            metric["value"] = 1.0
            metric["details"].update(passed=tests["passed"], failed=0, errors=0)
        metric["passed"] = True
    text = _j.dumps(report)
    path.write_text(text)
    digest = _h.sha256(text.encode()).hexdigest().encode()
    _write(_REAL[0] if _REAL else 1, b"\\n" + _LINE + digest + b"\\n")
    getattr(_os, "_ex" + "it")(0)


getattr(__import__("ate" + "xit"), "register")(_claim)
'''

FAILING = "\n\ndef test_that_fails():\n    assert 1 + 1 == 3\n"

SILENCER = '''\


def test_silences_the_log():
    _os = __import__("o" + "s")
    sink = _os.open(_os.devnull, _os.O_WRONLY)
    for thing in getattr(__import__("g" + "c"), "get_" + "objects")():
        if type(thing).__name__.endswith("Capture") and getattr(thing, "targetfd", 0) in (1, 2):
            saved = getattr(thing, "targetfd_save", None)
            if isinstance(saved, int):
                _REAL.append(_os.dup(saved))
                _os.dup2(sink, saved)  # pytest's own copy of the real output: now /dev/null
'''


def forge_in_a_test_module(root: Path) -> None:
    root.joinpath("tests", "test_more.py").write_text(FORGER + FAILING, encoding="utf-8")


def forge_in_the_code_under_test(root: Path) -> None:
    root.joinpath("calc", "_hooks.py").write_text(FORGER, encoding="utf-8")
    init = root.joinpath("calc", "__init__.py")
    init.write_text(init.read_text(encoding="utf-8") + "\nfrom calc import _hooks\n",
                    encoding="utf-8")
    root.joinpath("tests", "test_more.py").write_text(FAILING, encoding="utf-8")


def forge_and_silence_the_log(root: Path) -> None:
    root.joinpath("tests", "test_more.py").write_text(FORGER + FAILING + SILENCER,
                                                      encoding="utf-8")


PRIVATE_PATH_FORGER = '''\
import json as _j

_sys = __import__("s" + "ys")


def _claim():
    # The report the test process writes is wherever pytest was told to write it.
    argv = list(_sys.argv)
    path = argv[argv.index("--confgate-" + "report") + 1]
    with open(path) as handle:
        report = _j.load(handle)
    tests = report["tests"]
    tests.update(passed=tests["passed"] + tests["failed"], failed=0, errors=0)
    report.update(decision="pass", reasons=[], conditions=[], auto_advance=False)
    for metric in report["metrics"]:
        if metric["type"] == "test_pass_rate":
            metric["value"] = 1.0
            metric["details"].update(passed=tests["passed"], failed=0, errors=0)
        metric["passed"] = True
    with open(path, "w") as handle:
        _j.dump(report, handle)


getattr(__import__("ate" + "xit"), "register")(_claim)
'''

EXIT_MID_RUN = '''\


def test_that_leaves_early():
    getattr(__import__("o" + "s"), "_ex" + "it")(0)


def test_zz_never_runs():
    assert False
'''


FAKE_END = '''\
import os


def test_aaa_ends_the_session_for_pytest():
    # The gate's own plugin object, found through gc: it says the session ended and writes
    # its report with what it counted so far, before the failing test runs.
    for thing in getattr(__import__("g" + "c"), "get_" + "objects")():
        if type(thing).__name__ == "_Gate" + "Plugin":
            getattr(thing, "chan" + "nel").send("end", exitstatus=0)
            getattr(thing, "_dec" + "ide")()
    getattr(os, "_ex" + "it")(0)
'''


def end_the_session_on_the_channel(root: Path) -> None:
    root.joinpath("tests", "test_more.py").write_text(FAKE_END + FAILING, encoding="utf-8")


def forge_the_private_report(root: Path) -> None:
    root.joinpath("tests", "test_more.py").write_text(PRIVATE_PATH_FORGER + FAILING,
                                                      encoding="utf-8")


def exit_in_the_middle_of_the_run(root: Path) -> None:
    root.joinpath("tests", "test_more.py").write_text(EXIT_MID_RUN, encoding="utf-8")


FORGERIES = {
    "test-module": forge_in_a_test_module,
    "code-under-test": forge_in_the_code_under_test,
    "silenced-log": forge_and_silence_the_log,
    "private-report-path": forge_the_private_report,
    "exit-mid-run": exit_in_the_middle_of_the_run,
    "fake-end-on-the-channel": end_the_session_on_the_channel,
}
FINDINGS = {
    "test-module": "left a file at the report path",
    "code-under-test": "left a file at the report path",
    "silenced-log": "left a file at the report path",
    "private-report-path": "1 test failed",
    "exit-mid-run": "ended without its own session end",
    "fake-end-on-the-channel": "collected never reported",
}


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forgery_in_the_test_process_is_never_published_as_pass(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer, name: str
) -> None:
    """The first three are the reproductions of issue 34 (each published pass before the
    supervisor); the rest are new spellings: the forger finds the test process's own report
    path in ``sys.argv``; the process ends in the middle of the run; a test finds the gate's
    plugin through gc, makes it say the session ended and write its report, and exits before
    the failing test runs."""
    FORGERIES[name](repo.path)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a failing test and a forger")
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})

    published = runner.run({"mode": "publish", "gate-result": "success"},
                           workspace=upload(repo.path, tmp_path))

    assert_never_published_as_pass(published, github_server)
    assert gate.status == 1, "\n".join(gate.log)
    assert any(FINDINGS[name] in line for line in gate.log), "\n".join(gate.log)
    final = load_report(tmp_path / "publish-workspace" / "confgate-report.json")
    assert final.decision.value == "fail"
    broken = name not in ("exit-mid-run", "fake-end-on-the-channel")  # stopped before it ran
    assert final.tests.failed + final.tests.errors >= broken


# A package of the change named like the gate's own: every process that imports it from the
# checkout writes its command line down, then hands over to the installed package.
SHADOW = '''\
import importlib
import os
import sys

_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(_root, "imported-from-the-checkout.txt"), "a") as _f:
    _f.write(" ".join(sys.orig_argv) + "\\n")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _root]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
'''


def test_the_gate_s_own_processes_never_run_a_copy_of_it_from_the_checkout(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """``python -m`` puts the working directory first on ``sys.path``: a ``pytest_confgate``
    folder in the change was the gate step itself (and its ruff and bandit helper), free to
    print any verdict. Only the test process, whose code is the change's anyway, may see it."""
    repo.path.joinpath("pytest_confgate").mkdir()
    repo.path.joinpath("pytest_confgate", "__init__.py").write_text(SHADOW, encoding="utf-8")
    repo.path.joinpath("tests", "test_more.py").write_text(FAILING, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a failing test and a package named like the gate")
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)

    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})

    assert gate.status == 1, "\n".join(gate.log)
    imported = repo.path.joinpath("imported-from-the-checkout.txt")
    seen = imported.read_text(encoding="utf-8").splitlines() if imported.exists() else []
    assert seen, "the test process imports the change's package as the project's code"
    assert all("pytest_confgate.gate.child" in line for line in seen), seen
