"""``confgate gate``: the tests in a child process, the verdict outside it (issue 34)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PUTS_THE_BASE_BACK, git, write_config, write_file

from pytest_confgate.models import GateReport
from pytest_confgate.report.writers import load_report

MORE_TESTS = """\
import pytest

from calc import add


def test_more():
    assert add(2, 2) == 4


@pytest.mark.xfail(reason="known")
def test_known_bug():
    assert add(1, 1) == 3


@pytest.mark.skip(reason="later")
def test_later():
    pass


@pytest.mark.parametrize("n", [1, 2, 3])
def test_many(n):
    assert add(n, 0) == n
"""


def confgate_gate(root: Path, *args: str, python: str = sys.executable
                  ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "pytest_confgate.cli", "gate", *args],
        cwd=root, capture_output=True, text=True, check=False, timeout=240,
    )


def private_interpreter(where: Path) -> str:
    """An interpreter whose site-packages is this test's own, the suite's packages reached
    through a ``.pth`` file: a test that writes into its site-packages must not do so where
    the gates of the other tests, side by side, watch theirs."""
    import site

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    own = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    shared = site.getsitepackages()[0]
    Path(own, "_suite_packages.pth").write_text(f"import site; site.addsitedir({shared!r})\n")
    return str(python)


def base_then_change(repo: pytest.Pytester, base: dict[str, str], change: dict[str, str]) -> None:
    """``base`` committed on ``main`` (so its configuration judges), then ``change`` committed
    on the feature branch."""
    git(repo.path, "checkout", "-q", "main")
    for path, text in base.items():
        write_file(repo, path, text)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "base")
    git(repo.path, "checkout", "-q", "feature")
    git(repo.path, "merge", "-q", "--ff-only", "main")
    for path, text in change.items():
        write_file(repo, path, text)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "change")


COUNTS = ("covered_lines", "num_statements", "covered_branches", "num_branches", "missing",
          "excluded_lines", "findings", "items", "violations")


def figures(report: GateReport) -> dict[str, object]:
    """What a verdict rests on, without the clock and the run's identity."""
    return {
        "decision": report.decision, "tier": report.risk_tier, "reasons": report.reasons,
        "tests": report.tests.model_dump(exclude={"duration_s"}),
        "metrics": [(m.type, m.value, m.passed, m.status) for m in report.metrics],
        "counts": [(m.type, {k: m.details.get(k) for k in COUNTS}) for m in report.metrics],
        "conditions": [(c.metric, c.name, c.passed, c.message) for c in report.conditions
                       if c.metric != "supervisor"],
        "waivers": report.waivers,
    }


UNTESTED = """\
import subprocess


def run(cmd, check=False):
    if check:
        return subprocess.check_call(cmd)
    return subprocess.call(cmd)


def pick(n):
    return "big" if n > 10 else "small"
"""


@pytest.mark.parametrize(
    ("broken", "extra"),
    [(False, ()), (True, ()), (False, ("--cov=calc", "--cov-branch")), (True, ("-n", "2"))],
    ids=["passing", "failing", "pytest-cov", "xdist"],
)
def test_the_supervisor_and_pytest_confgate_agree_on_an_honest_change(
    repo: pytest.Pytester, broken: bool, extra: tuple[str, ...]
) -> None:
    git(repo.path, "checkout", "-q", "main")  # the base's configuration judges: branches too
    repo.path.joinpath("confgate.yml").write_text(
        "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
        "    - {type: test_coverage, min: 0.5, branch: true}\n"
        "    - {type: lint_score, min: 0.0}\n    - {type: security_score, min: 0.0}\n",
        encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "configuration")
    git(repo.path, "checkout", "-q", "feature")
    git(repo.path, "merge", "-q", "--ff-only", "main")
    tests = MORE_TESTS + ("\n\ndef test_broken():\n    assert add(1, 1) == 3\n" if broken else "")
    repo.path.joinpath("tests", "test_more.py").write_text(tests, encoding="utf-8")
    # partly covered, with branches, a ruff finding and a bandit finding: figures to agree on
    repo.path.joinpath("calc", "tools.py").write_text(UNTESTED + "import os\n", encoding="utf-8")
    repo.path.joinpath("tests", "test_tools.py").write_text(
        "from calc.tools import pick\n\n\ndef test_pick():\n    assert pick(1) == 'small'\n",
        encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "more tests")

    local = repo.runpytest_subprocess("--confgate", "--confgate-base", "main",
                                      "-p", "no:cacheprovider", *extra)
    alone = load_report(repo.path / "confgate-report.json")
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider", *extra)
    supervised = load_report(repo.path / "confgate-report.json")

    assert figures(supervised) == figures(alone)
    assert done.returncode == local.ret == 1, done.stdout + done.stderr  # a skip added: T2
    assert supervised.decision.value == ("fail" if broken else "needs_signoff")
    assert supervised.tests.passed == 7
    coverage = next(m for m in supervised.metrics if m.type == "test_coverage")
    assert coverage.details["num_branches"] > coverage.details["covered_branches"] > 0
    assert coverage.details["num_statements"] > coverage.details["covered_lines"] > 0
    assert all(m.details.get("items") for m in supervised.metrics
               if m.type in ("lint_score", "security_score"))
    assert supervised.tests.xfailed == 1
    assert supervised.tests.skipped == 1
    assert supervised.tests.failed == int(broken)
    [stamp] = [c for c in supervised.conditions if c.metric == "supervisor"]
    assert stamp.name == "attested"
    assert stamp.passed
    assert not stamp.blocking
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("confgate: report sha256 ")
    assert not list(repo.path.joinpath(".confgate").glob("supervised/*"))


@pytest.mark.parametrize(
    "front", [("-m", "pytest_confgate.cli", "gate", "--"), ("-m", "pytest_confgate", "--confgate")],
    ids=["confgate gate", "python -m pytest_confgate"],
)
def test_a_project_that_turns_warnings_into_errors_runs_as_with_pytest(
    repo: pytest.Pytester, front: tuple[str, ...]
) -> None:
    """Installed from a wheel, pytest marks the plugin's package for assertion rewriting; the
    test process imports it before pytest starts, and pytest warned "Module already imported
    so cannot be rewritten": with ``-W error`` (or ``filterwarnings = error``, as click and
    attrs set) no test ran. On this checkout, ``PYTHONPATH`` shows pytest the package as a
    wheel's file list does."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, *front, "-W", "error", "-p", "no:cacheprovider"],
                          cwd=repo.path, env=env, capture_output=True, text=True, check=False,
                          timeout=240)
    assert "already imported" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    report = load_report(repo.path / "confgate-report.json")
    assert report.decision.value == "pass"
    assert report.tests.passed > 0


def test_a_run_that_never_starts_the_gate_plugin_is_a_fail(repo: pytest.Pytester) -> None:
    """``-p no:confgate`` in the change's addopts: no channel, no outcomes, no pass."""
    repo.path.joinpath("pytest.ini").write_text(
        "[pytest]\npythonpath = .\naddopts = -p no:confgate\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "no gate")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "never opened the channel" in done.stdout
    report = load_report(repo.path / "confgate-report.json")
    assert report.decision.value == "fail"


def test_a_daemon_the_tests_leave_behind_is_ended_before_the_report(
    repo: pytest.Pytester,
) -> None:
    """A process a test started in a session of its own, waiting to rewrite the report once
    the gate wrote it: it is ended before the supervisor writes anything."""
    repo.path.joinpath("tests", "test_daemon.py").write_text(
        "import pathlib, subprocess, sys\n\n\n"
        "def test_starts_a_daemon():\n"
        "    code = ('import os, pathlib, time\\n'\n"
        "            'pathlib.Path(\"daemon.pid\").write_text(str(os.getpid()))\\n'\n"
        "            'while True:\\n    time.sleep(0.05)\\n')\n"
        "    subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n"
        "    while not pathlib.Path('daemon.pid').exists():\n"
        "        pass\n",
        encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a daemon")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert "3 passed" in done.stdout, done.stdout + done.stderr
    pid = int(repo.path.joinpath("daemon.pid").read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended (and reaped) before confgate gate returned


KILLS_ITS_WATCHER = """\
import os
import pathlib
import signal
import subprocess
import sys

DAEMON = '''\\
import os, pathlib, time
pathlib.Path("daemon.pid").write_text(str(os.getpid()))
while True:  # would rewrite the report once the supervisor wrote it
    time.sleep(0.05)
'''


def test_kills_the_intermediary_and_leaves_a_daemon():
    subprocess.Popen([sys.executable, "-c", DAEMON], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not pathlib.Path("daemon.pid").exists():
        pass
    os.kill(os.getppid(), signal.SIGKILL)  # the subreaper between pytest and confgate gate
"""


def test_killing_the_intermediary_frees_no_daemon_and_is_a_fail(repo: pytest.Pytester) -> None:
    """The watcher between the tests and the supervisor is killed, so it cannot end what the
    tests left: the supervisor is a subreaper itself and ends it before writing."""
    repo.path.joinpath("tests", "test_daemon.py").write_text(KILLS_ITS_WATCHER,
                                                             encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a daemon and a killed watcher")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    pid = int(repo.path.joinpath("daemon.pid").read_text(encoding="utf-8"))
    try:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "was ended by signal 9" in done.stdout
    assert load_report(repo.path / "confgate-report.json").decision.value == "fail"


def test_nothing_of_the_change_runs_when_the_supervisor_cannot_start(
    repo: pytest.Pytester,
) -> None:
    """The test process starts beside the supervisor but waits for its go: with a broken
    configuration no conftest is imported, no report is written, and the status is 2."""
    repo.path.joinpath("conftest.py").write_text(
        "import pathlib\npathlib.Path('conftest-ran').write_text('yes')\n", encoding="utf-8")
    repo.path.joinpath("confgate.yml").write_text("gate: [unclosed\n", encoding="utf-8")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "confgate.yml:" in done.stderr
    assert not repo.path.joinpath("conftest-ran").exists()
    assert not repo.path.joinpath("confgate-report.json").exists()


FORGES_COVERAGE = """\
import atexit
import json
import sys

from calc import add


def _forge():
    path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--confgate-" + "report="))
    with open(path, encoding="utf-8") as handle:
        report = json.load(handle)
    for metric in report["metrics"]:
        if metric["type"] in ("test_coverage", "lint_score", "security_score"):
            metric.update(value=1.0, status="ok", reason=None, passed=True)
            metric["details"].update(covered_lines=99, num_statements=99, missing={},
                                     items=[], findings=0)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle)


atexit.register(_forge)


def test_add():
    assert add(1, 1) == 2
"""


def test_a_report_forged_at_exit_is_named_and_none_of_its_figures_published(
    repo: pytest.Pytester,
) -> None:
    """The test process's report says 99/99 lines, no ruff or bandit finding: the figures the
    supervisor publishes are its own analysis of the raw data, and its own tools' findings."""
    repo.path.joinpath("calc", "untested.py").write_text(
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd)\n\n\n"
        "def other(x):\n    y = x + 1\n    return y * 2\n", encoding="utf-8")
    repo.path.joinpath("tests", "test_forge.py").write_text(FORGES_COVERAGE, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a forger")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    report = load_report(repo.path / "confgate-report.json")
    # The report's sha256 went with the session's end: the rewrite is named, never read.
    assert report.decision.value == "fail", done.stdout
    messages = [c.message for c in report.conditions if c.metric == "supervisor"]
    assert any("report file changed after its session ended" in m for m in messages), messages
    assert all(m.details.get("num_statements") != 99 for m in report.metrics)


SPOILS_ITS_DATA = """\
import atexit
import sys


def _spoil():
    flag = "--confgate-coverage" + "-data="
    path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith(flag))
    with open(path, "wb") as handle:
        handle.write(b"not coverage data")


atexit.register(_spoil)


def test_nothing():
    pass
"""


def test_coverage_data_spoiled_after_the_session_fails_the_run(
    repo: pytest.Pytester,
) -> None:
    repo.path.joinpath("tests", "test_spoil.py").write_text(SPOILS_ITS_DATA, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "spoils its data")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    report = load_report(repo.path / "confgate-report.json")
    messages = [c.message for c in report.conditions if c.metric == "supervisor"]
    assert any("coverage file changed after its session ended" in m for m in messages), messages
    assert report.decision.value == "fail"
    assert done.returncode == 1


SCANS_THEN_HIDES = {
    "emptied": (  # the report the test process writes is whole and bound, and says nothing
        "import gc\n\n\ndef test_scan():\n"
        "    for thing in getattr(gc, 'get_' + 'objects')():\n"
        "        if type(thing).__name__ == 'Rec' + 'order':\n"
        "            thing.findings.clear()\n"
        "            thing.on_finding = None\n"),
    "no-session-end": (  # no report at all: the test process never reaches its session end
        "import gc\nimport os\n\n\ndef test_scan():\n"
        "    getattr(gc, 'get_' + 'objects')()\n"
        "    getattr(os, '_ex' + 'it')(0)\n"),
}


@pytest.mark.parametrize(("variant", "extra"),
                         [("emptied", ()), ("no-session-end", ()), ("emptied", ("-n", "1"))],
                         ids=["emptied", "no-session-end", "emptied-in-an-xdist-worker"])
def test_a_runtime_finding_reaches_the_supervisor_whatever_the_test_process_does_later(
    repo: pytest.Pytester, variant: str, extra: tuple[str, ...]
) -> None:
    """The audit hook sends each finding as it records it: a test that scans ``gc`` and then
    empties the recorder and unhooks its stream (in an xdist worker too), or ends before any
    report exists, is still named in ``test_integrity``, at the line of the scan (the
    change's own file); the unhooked stream is named at the session's end."""
    git(repo.path, "checkout", "-q", "main")
    repo.path.joinpath("confgate.yml").write_text(
        "gate:\n  metrics:\n    - {type: test_pass_rate}\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "configuration")
    git(repo.path, "checkout", "-q", "feature")
    git(repo.path, "merge", "-q", "--ff-only", "main")
    repo.path.joinpath("tests", "test_scan.py").write_text(SCANS_THEN_HIDES[variant],
                                                           encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a scan")
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider", *extra)
    report = load_report(repo.path / "confgate-report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    integrity = next(m for m in report.metrics if m.type == "test_integrity")
    found = [(i["rule"], i["file"], i["line"]) for i in integrity.details["items"]]
    assert found.count(("runtime_gc_scan", "tests/test_scan.py",
                        5 if variant == "emptied" else 6)) == 1, found
    switched_off = [i for i in integrity.details["items"] if "switched off" in i["message"]]
    assert len(switched_off) == (variant == "emptied"), found  # seen at the session's end
    assert integrity.value == 0.0
    assert report.decision.value in ("fail", "needs_signoff")


def _break_and_loosen(repo: pytest.Pytester, trick: str, hook: str) -> None:
    """``add`` made wrong and its test loosened to pass anyway; ``trick`` (a module of
    ``calc``, imported by it) hides it after the run through its function ``hook``."""
    repo.path.joinpath("calc", "_tidy.py").write_text(trick, encoding="utf-8")
    init = repo.path / "calc" / "__init__.py"
    init.write_text(f"from calc._tidy import {hook} as _h\n\n\n" + init.read_text(
        encoding="utf-8").replace("return a + b", "return a + b + 1 if _h else a + b"),
        encoding="utf-8")
    test = repo.path / "tests" / "test_calc.py"
    test.write_text(test.read_text(encoding="utf-8").replace(
        "assert add(1, 2) == 3", "assert add(1, 2) in (3, 4)"), encoding="utf-8")


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "working-tree"])
def test_files_the_run_puts_back_to_the_base_are_judged_as_they_were_before_it(
    repo: pytest.Pytester, committed: bool,
) -> None:
    """A change breaks ``add``, loosens the test that would say so, and at exit checks the
    base's files out again: every analysis after the run read the base then (no change to
    the test, the base's code for the differential run), and it passed at T1. The analyses
    read the snapshot taken before the run instead."""
    _break_and_loosen(repo, PUTS_THE_BASE_BACK, "_tidy")
    test = repo.path / "tests" / "test_calc.py"
    if committed:
        git(repo.path, "add", "-A")
        git(repo.path, "commit", "-q", "-m", "loosened, then put back at exit")
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")
    assert "add(1, 2) == 3" in test.read_text(encoding="utf-8")  # it did put the base back
    report = load_report(repo.path / "confgate-report.json")
    integrity = next(m for m in report.metrics if m.type == "test_integrity")
    rules = [item["rule"] for item in integrity.details["items"]]
    assert "behaviour_change" in rules, done.stdout
    assert report.decision.value != "pass"


EMPTIES_UNTESTED_CODE = """\
import os

_hooks = __import__("ate" + "xit")


def _empty():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "calc", "ex" + "tra.py"), "w") as handle:
        handle.write("")


getattr(_hooks, "regis" + "ter")(_empty)


def test_nothing_more():
    pass
"""


def test_measured_code_the_run_empties_is_named_not_counted_as_covered(
    repo: pytest.Pytester,
) -> None:
    """An untested module is emptied at exit: coverage.py's analysis after the run found no
    statement in it, and the change read as fully covered."""
    (repo.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    (repo.path / "tests" / "test_empties.py").write_text(EMPTIES_UNTESTED_CODE, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "untested code, emptied at exit")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert (repo.path / "calc" / "extra.py").read_text(encoding="utf-8") == ""
    report = load_report(repo.path / "confgate-report.json")
    messages = [c.message for c in report.conditions if c.metric == "supervisor"]
    assert any("rewrote or removed measured code: calc/extra.py" in m for m in messages), (
        messages, done.stdout)
    assert report.decision.value == "fail"


# As row 30, but the module is put back before the test process ends: the analysis may run
# while it winds down, and must not read the emptied file.
EMPTIES_AND_PUTS_BACK = """\
import os
import time

_hooks = __import__("ate" + "xit")


def _empty_for_a_while():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(here, "calc", "ex" + "tra.py")
    with open(path) as handle:
        kept = handle.read()
    with open(path, "w") as handle:
        handle.write("")
    time.sleep(3)
    with open(path, "w") as handle:
        handle.write(kept)


getattr(_hooks, "regis" + "ter")(_empty_for_a_while)


def test_nothing_more():
    pass
"""


def test_measured_code_emptied_while_the_test_process_winds_down_is_never_read_as_covered(
    repo: pytest.Pytester,
) -> None:
    """coverage.py's analysis starts at the session end, beside the test process's shutdown:
    it reads each measured file only as it was before the go, whatever the shutdown does."""
    (repo.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    (repo.path / "tests" / "test_empties.py").write_text(EMPTIES_AND_PUTS_BACK, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "untested code, emptied for a while at exit")
    done = confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert (repo.path / "calc" / "extra.py").read_text(encoding="utf-8") == UNTESTED
    report = load_report(repo.path / "confgate-report.json")
    coverage = next(m for m in report.metrics if m.type == "test_coverage")
    if coverage.available:  # read before or after the window: the module counts, untested
        assert "calc/extra.py" in coverage.details["missing"], (coverage.details, done.stdout)
    else:  # read in the window: named, never covered
        assert "calc/extra.py no longer holds what it held" in (coverage.reason or ""), (
            coverage.reason, done.stdout)
        assert report.decision.value == "fail"


# A test's exit hook writes coverage.py settings that leave the untested module out; they are
# new, untracked and never in the diff.
LEAVES_IT_OUT = """\
import os

_hooks = __import__("ate" + "xit")


def _leave_out():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, ".co" + "veragerc"), "w") as handle:
        handle.write("[run]\\nomit = calc/ex" + "tra.py\\n")


getattr(_hooks, "regis" + "ter")(_leave_out)


def test_nothing_more():
    pass
"""


def test_coverage_settings_the_run_writes_are_not_the_ones_that_judge(
    repo: pytest.Pytester,
) -> None:
    """coverage.py's settings that judge are those before any test ran: a .coveragerc the
    tests write at exit, omitting the untested module, must not make the change read as
    fully covered (a new spelling of row 30; held since the settings are read before the go)."""
    (repo.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    (repo.path / "tests" / "test_leaves_out.py").write_text(LEAVES_IT_OUT, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "untested code, left out at exit")
    confgate_gate(repo.path, "--", "-p", "no:cacheprovider")
    assert (repo.path / ".coveragerc").exists()
    report = load_report(repo.path / "confgate-report.json")
    coverage = next(m for m in report.metrics if m.type == "test_coverage")
    assert "calc/extra.py" in coverage.details["missing"], coverage.details
    assert coverage.details["covered_lines"] < coverage.details["num_statements"]


REWRITES_THE_OBJECTS = """\
import os
import sys
import zlib

_hooks = __import__("ate" + "xit")


def _git(*args):
    run = getattr(__import__("sub" + "process"), "run")
    return run(["g" + "it", *args], capture_output=True, check=False).stdout


def _rewrite():
    for path in ("tests/test_calc.py", "calc/__init__.py"):
        name = _git("rev-parse", "HEAD:" + path).decode().strip()
        base = _git("show", "ma" + "in:" + path)
        where = os.path.join(".git", "objects", name[:2], name[2:])
        os.chmod(where, 0o644)
        with open(where, "wb") as handle:
            handle.write(zlib.compress(b"blob %d\\0" % len(base) + base))


if "pytest" in sys.modules:
    getattr(_hooks, "regis" + "ter")(_rewrite)
"""


def test_git_objects_the_run_rewrites_are_never_read_as_the_change(
    repo: pytest.Pytester,
) -> None:
    """The analyses after the run read the change from git objects named before it; a change
    that rewrites those objects at exit (git does not check an object against its name when it
    reads it) had the base's test and code read as its own. Now it fails closed."""
    _break_and_loosen(repo, REWRITES_THE_OBJECTS, "_rewrite")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "loosened, and its objects rewritten at exit")
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")
    shown = git(repo.path, "cat-file", "-p", "HEAD:tests/test_calc.py")
    assert "add(1, 2) == 3" in shown  # git itself now reads the base's text as the head's
    report = load_report(repo.path / "confgate-report.json")
    integrity = next(m for m in report.metrics if m.type == "test_integrity")
    assert integrity.status.value == "error", (integrity, done.stdout)
    assert "no longer holds what its name says" in (integrity.reason or "")
    assert report.decision.value == "fail"


EMPTIES_FROM_THE_DIFFERENTIAL_RUN = """\
import os

ROOT = {root!r}
if os.path.realpath(os.getcwd()) != os.path.realpath(ROOT):  # the differential run's copy
    with open(os.path.join(ROOT, "calc", "ex" + "tra.py"), "w") as handle:
        handle.write("")
"""


def test_coverage_is_analysed_before_the_change_s_code_runs_again(
    repo: pytest.Pytester,
) -> None:
    """The differential run runs the change's code again, after the test process ended; with
    ``test_integrity`` listed before ``test_coverage``, coverage.py's analysis came after it,
    and code that emptied an untested module from there made it read as covered."""
    git(repo.path, "checkout", "-q", "main")
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                 "    - {type: test_integrity}\n    - {type: test_coverage, min: 0.8}\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "configuration")
    git(repo.path, "checkout", "-q", "feature")
    git(repo.path, "merge", "-q", "--ff-only", "main")
    (repo.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    (repo.path / "calc" / "_tidy.py").write_text(
        EMPTIES_FROM_THE_DIFFERENTIAL_RUN.format(root=str(repo.path)), encoding="utf-8")
    init = repo.path / "calc" / "__init__.py"
    init.write_text("from calc import _tidy  # noqa: F401\n" + init.read_text(encoding="utf-8"),
                    encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "untested code, emptied from the differential run")
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")
    assert (repo.path / "calc" / "extra.py").read_text(encoding="utf-8") == ""  # it did
    report = load_report(repo.path / "confgate-report.json")
    coverage = next(m for m in report.metrics if m.type == "test_coverage")
    assert coverage.details["missing"], (coverage.details, done.stdout)
    assert not coverage.passed
    assert report.decision.value == "fail"


# A session fixture of the change's conftest that reaches the gate's run through pytest's
# plugin manager and moves the coverage floor the test process reports to confgate gate.
MOVES_THE_FLOOR = """\
import pytest


@pytest.fixture(autouse=True, scope="session")
def _settle(request):
    for _name, plugin in request.config.pluginmanager.list_name_plugin():
        run = getattr(plugin, "run", None)
        if run is not None and hasattr(run, "coverage_fail_under"):
            run.coverage_fail_under = {floor}
    yield
"""


@pytest.mark.parametrize(
    ("settings", "floor", "limit"),
    [('[tool.coverage.report]\nfail_under = 90\n', "0.0", "min 90.00%"),
     ('[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "--cov-fail-under=95"\n',
      "None", "min 95.00%")],
    ids=["coverage.py fail_under lowered", "pytest-cov floor removed"],
)
def test_the_coverage_floor_is_read_by_the_supervisor_not_taken_from_the_test_process(
    repo: pytest.Pytester, settings: str, floor: str, limit: str
) -> None:
    """The floor came back from the test process with its figures: a fixture that set it to
    0 (or None) made a project at 67% with ``fail_under = 90`` a PASS at T1."""
    pyproject = repo.path / "pyproject.toml"
    if "pytest.ini_options" in settings:
        pyproject.write_text(settings, encoding="utf-8")
    else:
        pyproject.write_text(pyproject.read_text(encoding="utf-8") + settings, encoding="utf-8")
    repo.path.joinpath("calc", "__init__.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef unused(a):\n    return -a\n", encoding="utf-8")
    repo.path.joinpath("tests", "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "the floor")
    git(repo.path, "checkout", "-q", "-b", "lowered")
    repo.path.joinpath("tests", "conftest.py").write_text(
        MOVES_THE_FLOOR.format(floor=floor), encoding="utf-8")

    done = confgate_gate(repo.path, "--base", "feature", "--", "-p", "no:cacheprovider")

    report = load_report(repo.path / "confgate-report.json")
    coverage = next(m for m in report.metrics if m.type == "test_coverage")
    assert (coverage.details["covered_lines"], coverage.details["num_statements"]) == (3, 4)
    assert not coverage.passed, done.stdout
    assert report.decision.value == "fail"
    assert done.returncode == 1
    assert any(limit in line for line in done.stdout.splitlines()), done.stdout


# A test module of the change that reaches the gate's run through pytest's plugin manager and
# empties the static findings the test process would report (its helper's result dropped, the
# analysis told to find nothing) and the change its report describes.
BLANKS_THE_FINDINGS = """\
import dataclasses


def test_settle(request):
    for _name, plugin in request.config.pluginmanager.list_name_plugin():
        run = getattr(plugin, "run", None)
        analysis = getattr(run, "_analysis", None)
        if analysis is None:
            continue
        found = analysis.report

        def clean():
            return dataclasses.replace(found(), findings=[])

        analysis.report = clean
        run._tools = None
        run._change_summary = lambda: None
"""


def test_the_static_integrity_findings_are_the_supervisors_own(repo: pytest.Pytester) -> None:
    """The test process computed ``test_integrity``'s static findings and the supervisor added
    its runs to them: a skip added to a base test vanished from the published report."""
    repo.path.joinpath("tests", "test_calc.py").write_text(
        "import pytest\nfrom calc import add, scale\n\n\n@pytest.mark.skip(reason='later')\n"
        "def test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_scale():\n    assert scale(2) == 20\n    assert scale(-1) == 0\n",
        encoding="utf-8")
    repo.path.joinpath("tests", "test_settle.py").write_text(BLANKS_THE_FINDINGS,
                                                             encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "skip")

    confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")

    report = load_report(repo.path / "confgate-report.json")
    integrity = next(m for m in report.metrics if m.type == "test_integrity")
    assert "skip_added" in integrity.details["by_rule"], integrity.details
    assert report.risk_tier != "T1"
    assert report.change is not None
    assert "tests/test_settle.py" in report.change["files"]


# A coverage.py plugin module of the change's, importable from anywhere once the project is
# installed editable (PYTHONPATH stands in for that here): it notes each process it runs in.
COVERAGE_PLUGIN = """\
import sys


def coverage_init(reg, options):
    with open("ran-in.txt", "a", encoding="utf-8") as notes:
        notes.write(repr(sys.argv[1:2]) + "\\n")
"""


def test_a_coverage_plugin_from_the_checkout_never_runs_in_the_supervisor(
    repo: pytest.Pytester,
) -> None:
    repo.path.joinpath("covplug.py").write_text(COVERAGE_PLUGIN, encoding="utf-8")
    pyproject = repo.path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8")
                         + '\n[tool.coverage.run]\nplugins = ["covplug"]\n', encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a coverage plugin")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(repo.path), *filter(None, [os.environ.get("PYTHONPATH")])])}

    done = subprocess.run(
        [sys.executable, "-m", "pytest_confgate.cli", "gate", "--base", "main", "--",
         "-p", "no:cacheprovider"],
        cwd=repo.path, env=env, capture_output=True, text=True, check=False, timeout=240)

    notes = repo.path.joinpath("ran-in.txt").read_text(encoding="utf-8").splitlines()
    assert "['gate']" not in notes, notes
    report = load_report(repo.path / "confgate-report.json")
    coverage = next(m for m in report.metrics if m.type == "test_coverage")
    assert not coverage.available
    assert "covplug" in str(coverage.reason)
    assert "outside the checkout" in str(coverage.reason)
    assert report.decision.value == "fail"
    assert done.returncode == 1


# A test of the change that ticks every box of the checklist file the gate reads, while the
# tests run; the supervisor's own reading at the end saw the ticked file.
TICKS_THE_BOXES = """\
import pathlib


def test_tidy():
    path = pathlib.Path("CHECK" + "LIST.md")
    path.write_text(path.read_text(encoding="utf-8").replace("[ ]", "[x]"), encoding="utf-8")
"""


def test_a_checklist_the_run_ticks_is_read_as_it_was_before_the_tests(
    repo: pytest.Pytester,
) -> None:
    base_then_change(repo, {
        "confgate.yml": "gate:\n  metrics:\n    - {type: test_pass_rate}\n    - {type: "
                        "checklist_completion, source: CHECKLIST.md, required: [docs updated]}\n",
        "CHECKLIST.md": "- [ ] docs updated\n- [x] tests added\n",
    }, {"tests/test_tidy.py": TICKS_THE_BOXES})

    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")

    report = load_report(repo.path / "confgate-report.json")
    checklist = next(m for m in report.metrics if m.type == "checklist_completion")
    assert checklist.details["required_missing"] == ["docs updated"], checklist.details
    assert report.decision.value == "fail"
    assert done.returncode == 1


# A test of the change that adds passing links for every requirement to the tally the test
# process reports from, through pytest's plugin manager.
LINKS_EVERYTHING = """\
def test_links(request):
    for _name, plugin in request.config.pluginmanager.list_name_plugin():
        tally = getattr(plugin, "tally", None)
        links = getattr(tally, "links", None)
        if isinstance(links, dict):
            for requirement in ("REQ-1", "REQ-2"):
                links.setdefault(requirement, []).append(("tests/test_links.py::x", True))
"""


def test_requirement_links_are_counted_by_the_supervisor(repo: pytest.Pytester) -> None:
    base_then_change(repo, {
        "confgate.yml": "gate:\n  metrics:\n    - {type: test_pass_rate}\n    - {type: "
                        "requirement_coverage, requirements: requirements.yml, min: 1.0}\n",
        "requirements.yml": "- {id: REQ-1, title: Adding}\n- {id: REQ-2, title: Scaling}\n",
    }, {"tests/test_links.py": LINKS_EVERYTHING})

    confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")

    report = load_report(repo.path / "confgate-report.json")
    requirements = next(m for m in report.metrics if m.type == "requirement_coverage")
    assert requirements.details["uncovered"] == ["REQ-1", "REQ-2"], requirements.details
    assert report.decision.value == "fail"


# ruff, made to wait until the test below has rewritten the module, then to say it is done:
# the rewrite lands while the tools read, whatever the machine's speed.
WAITING_RUFF = """\
import pathlib
import subprocess
import sys
import time

root = pathlib.Path.cwd()
checks = "--output-format" in sys.argv[1:]  # the check itself: not --version, --show-files
for _ in range(600 if checks else 0):
    if (root / "rewritten").exists():
        break
    time.sleep(0.1)
done = subprocess.run([sys.executable, "-m", "ruff", *sys.argv[1:]], capture_output=True,
                      check=False)
sys.stdout.buffer.write(done.stdout)
if checks:
    (root / "linted").write_text("")
sys.exit(done.returncode)
"""
# The change's test: the module without its violation while ruff reads, then put back; or a
# file planted in the interpreter's site-packages (where a `.pth` file would run in bandit's
# interpreter), then taken away.
REWRITES_WHILE_LINTED = """\
import pathlib
import site
import time

root = pathlib.Path(__file__).resolve().parents[1]


def test_tidy():
    if {planted}:
        module = pathlib.Path(site.getsitepackages()[0]) / "confgate-probe-{token}.txt"
        kept = None
    else:
        module = root / "calc" / "tools.py"
        kept = module.read_bytes()
    module.write_bytes(b"" if kept is None else kept.replace(b"import os\\n", b""))
    (root / "rewritten").write_text("")
    for _ in range(600):
        if (root / "linted").exists():
            break
        time.sleep(0.1)
    if kept is None:
        module.unlink()
    else:
        module.write_bytes(kept)
"""


@pytest.mark.parametrize("planted", [False, True], ids=["module", "site-packages"])
def test_a_file_written_while_ruff_reads_and_put_back_fails_the_run(
    repo: pytest.Pytester, planted: bool
) -> None:
    """ruff and bandit read the working tree beside the tests: a test that hid a violation
    for the second they read it, and put the module back, left digests equal to the base's.
    A file written into site-packages meanwhile (a `.pth` runs in bandit's interpreter) is
    named the same way."""
    ruff = repo.path / "waiting_ruff.py"
    token = os.urandom(4).hex()
    base_then_change(repo, {
        "waiting_ruff.py": WAITING_RUFF,
        "confgate.yml": "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                        f"    - {{type: lint_score, max_lint_violations: 0, command: "
                        f"[{sys.executable!r}, {str(ruff)!r}]}}\n",
    }, {
        "calc/tools.py": "import os\n\n\ndef name():\n    return 'tools'\n",
        "tests/test_tidy.py": REWRITES_WHILE_LINTED.format(planted=planted, token=token),
    })

    python = private_interpreter(repo.path.parent / "venv") if planted else sys.executable
    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider",
                         python=python)

    assert repo.path.joinpath("linted").exists()  # ruff read while the module was rewritten
    report = load_report(repo.path / "confgate-report.json")
    assert report.decision.value == "fail", done.stdout
    named = (f"{repo.path.parent}/venv/lib/python{sys.version_info[0]}.{sys.version_info[1]}"
             f"/site-packages/confgate-probe-{token}.txt" if planted else "calc/tools.py")
    assert any(named in c.message and "while ruff and bandit read it" in c.message
               for c in report.conditions if c.metric == "supervisor"), report.conditions


SLOW_RUFF = """\
import os, pathlib, subprocess, sys, time

root = pathlib.Path(__file__).parent
while not (root / "tests-ended").exists():  # still running once the test process has ended
    time.sleep(0.05)
time.sleep(1.0)
sys.exit(subprocess.run([sys.executable, "-m", "ruff", *sys.argv[1:]]).returncode)
"""

ENDS_AND_SAYS_SO = """\
import pathlib


def pytest_unconfigure(config):
    pathlib.Path(str(config.rootpath), "tests-ended").write_text("yes")
"""


def test_ruff_still_reading_when_the_tests_end_is_left_to_finish(repo: pytest.Pytester) -> None:
    """The supervisor ends what the test process left behind as soon as it exits, and it did
    so by killing every process below it: its own helper, still running ruff and bandit
    beside short tests, was killed too and the run failed ("the helper process failed: exit
    -9"), on a loaded machine only. What the supervisor started itself is left to finish."""
    ruff = repo.path / "slow_ruff.py"
    base_then_change(repo, {
        "slow_ruff.py": SLOW_RUFF,
        ".gitignore": "confgate-report.json\n__pycache__/\ntests-ended\n",
        "confgate.yml": "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                        "    - {type: lint_score, command: "
                        f"[{sys.executable!r}, {str(ruff)!r}]}}\n"
                        "    - {type: security_score}\n",
        "conftest.py": ENDS_AND_SAYS_SO,
    }, {"calc/names.py": "def name():\n    return 'names'\n"})

    done = confgate_gate(repo.path, "--base", "main", "--", "-p", "no:cacheprovider")

    assert repo.path.joinpath("tests-ended").exists()
    report = load_report(repo.path / "confgate-report.json")
    statuses = {m.type: (m.status.value, m.reason) for m in report.metrics}
    assert statuses["lint_score"][0] == "ok", (statuses, done.stdout)
    assert statuses["security_score"][0] == "ok", (statuses, done.stdout)
    assert report.decision.value == "pass", done.stdout
