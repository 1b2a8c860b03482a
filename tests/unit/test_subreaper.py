"""``subreaper.end_descendants``: what a subreaper kills, and what it leaves to its owner."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from pytest_confgate import subreaper

pytestmark = pytest.mark.skipif(not subreaper.supported(), reason="Linux /proc only")

# Run in a process of its own: a subreaper collects every orphan below it, and the test
# process must not become one.
SCENE = textwrap.dedent("""\
    import json, os, subprocess, sys, time
    from pytest_confgate import subreaper

    subreaper.become_subreaper()
    py = sys.executable
    # Ours: a helper in its own group of our session, with a tool below it in a session of its
    # own (ruff, started by run_tool), as confgate gate starts them.
    helper = subprocess.Popen(
        [py, "-c", "import subprocess, sys, time\\n"
                   "tool = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'],"
                   " start_new_session=True)\\n"
                   "print(tool.pid, flush=True)\\n"
                   "sys.stdin.read()\\n"
                   "tool.kill()\\n"
                   "sys.exit(3)\\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, process_group=0)
    tool = int(helper.stdout.readline())
    # The run's: a process in a session of its own that leaves an orphan behind, in a session
    # of its own too and in the run's session, and exits; both orphans come to us.
    run = subprocess.Popen(
        [py, "-c", "import os, subprocess, sys\\n"
                   "code = 'import time; time.sleep(30)'\\n"
                   "a = subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\\n"
                   "b = subprocess.Popen([sys.executable, '-c', code])\\n"
                   "print(a.pid, b.pid, flush=True)\\n"],
        stdout=subprocess.PIPE, start_new_session=True)
    orphans = [int(pid) for pid in run.stdout.readline().split()]
    run.wait()
    while any(subreaper._processes()[pid].parent != os.getpid() for pid in orphans):
        time.sleep(0.01)

    subreaper.end_descendants(sparing_our_session=SPARING)

    def alive(pid):
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] \\
            if os.path.exists(f"/proc/{pid}") else "gone"
        return state not in ("Z", "gone")

    found = {"helper": alive(helper.pid), "tool": alive(tool),
             "orphans": [alive(pid) for pid in orphans]}
    if found["helper"]:
        helper.stdin.close()
        found["status"] = helper.wait(10)
    print(json.dumps(found))
""")


def _scene(sparing: bool) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", SCENE.replace("SPARING", str(sparing))],
                          capture_output=True, text=True, timeout=60, check=True)
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_sparing_our_session_ends_the_runs_orphans_and_leaves_our_own_helpers_whole() -> None:
    """``confgate gate`` ends the test process's leftovers once it exits, while ruff and
    bandit may still run in its own helper: they live, and the helper's exit status is its
    own (a reap of every child would have taken it and made it 0)."""
    assert _scene(sparing=True) == {"helper": True, "tool": True, "orphans": [False, False],
                                    "status": 3}


def test_without_sparing_everything_below_is_ended() -> None:
    """The intermediary, and the supervisor once its decision is made: nothing is left."""
    assert _scene(sparing=False) == {"helper": False, "tool": False, "orphans": [False, False]}
