"""Cross-test runs forked from a warm pytest (issue 36, speed): what a run sees is what a fresh
process would see, a run that could see a different module starts cold, and stopping a run or
the ranking leaves nothing running."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fakes.processes import Counted, process_gone

from pytest_confgate.config.rank import RankTimeouts
from pytest_confgate.rank import service, trees
from pytest_confgate.rank.evaluate import Finished, Processes, Settings, run_pytest
from pytest_confgate.rank.models import Evidence
from pytest_confgate.rank.warm import WarmPytest

pytestmark = [
    pytest.mark.one_python,  # nothing here depends on the interpreter
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only"),
]

SETTINGS = Settings(test_command=(sys.executable, "-m", "pytest"), python=sys.executable,
                    type_check=False, timeouts=RankTimeouts(tests_s=120))
# What a run sees, written where only it writes (its TMPDIR): a forked run must see what a
# fresh ``python -m pytest`` in the tree with rank's environment sees.
SEES = """\
import json, os, pathlib, random, sys, tempfile

import pkg


def test_sees():
    seen = {"path": sys.path, "cwd": os.getcwd(), "tmp": tempfile.gettempdir(),
            "argv0": sys.argv[0], "pkg": pkg.__file__, "env": dict(os.environ),
            "main": sys.modules["__main__"].__spec__.name, "random": random.random()}
    pathlib.Path(os.environ["TMPDIR"], "seen.json").write_text(json.dumps(seen))
"""


@pytest.fixture
def processes() -> Iterator[Counted]:
    found = Counted()
    yield found
    found.kill_all()


def _warm(tmp_path: Path, processes: Processes, blocked: Sequence[str] = ()) -> WarmPytest:
    return WarmPytest(SETTINGS, processes, tmp_path / "warm", blocked)


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_forked_run_sees_what_a_fresh_process_sees(
    tmp_path: Path, processes: Counted
) -> None:
    warm = _warm(tmp_path, processes)
    tree = _tree(tmp_path / "t", {"src/pkg/__init__.py": "", "tests/test_sees.py": SEES})
    seen = {}
    for name in ("warm", "cold", "warm again"):
        state = tmp_path / name
        run = run_pytest(["-p", "no:cacheprovider", "tests/test_sees.py"], tree, state,
                         SETTINGS, processes, warm=None if name == "cold" else warm.run)
        assert run.outcomes == {"tests/test_sees.py::test_sees": "passed"}, run.why
        text = (state / "tmp" / "seen.json").read_text().replace(str(state), "STATE")
        seen[name] = json.loads(text)
    warm.close()
    assert len(processes.started) == 1  # the cold one: the others were forked
    assert seen["warm"]["random"] != seen["warm again"]["random"]  # each run its own seed
    for found in seen.values():
        found.pop("random")
    assert seen["warm"] == seen["cold"] == seen["warm again"]
    assert seen["cold"]["pkg"] == str(tree / "src" / "pkg" / "__init__.py")
    assert seen["cold"]["tmp"] == "STATE/tmp"


def test_a_run_whose_tree_provides_a_module_the_server_loaded_starts_cold(
    tmp_path: Path, processes: Counted
) -> None:
    # pluggy is one of pytest's own modules: a fresh process imports the tree's (which breaks
    # pytest here); a forked run would have kept the server's
    warm = _warm(tmp_path, processes)
    tree = _tree(tmp_path / "t", {"pluggy.py": "", "tests/test_x.py": "def test_x():\n"
                                                                      "    pass\n"})
    try:
        assert warm.run([*SETTINGS.test_command, "-q"], cwd=tree, env={},
                        timeout_s=60) is None  # nor does another environment fit
        run = run_pytest(["-p", "no:cacheprovider", "tests/test_x.py"], tree,
                         tmp_path / "state", SETTINGS, processes, warm=warm.run)
    finally:
        warm.close()
    assert len(processes.started) == 1
    assert run.outcomes is None
    assert str(tree / "pluggy.py") in (run.problem or "")


def test_the_server_loads_nothing_a_ranked_tree_provides(tmp_path: Path) -> None:
    # iniconfig is a requirement of pytest: ranking iniconfig, pytest is not preloaded; attrs
    # is only one of its extras' (ranking attrs, pytest is)
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(service.__file__).parent)!r})\n"
        "import warm_server\n"
        "loaded = warm_server.preload([sys.argv[1]])\n"
        "print(sys.argv[1] in loaded, 'pytest' in sys.modules)\n")
    import subprocess

    found = [subprocess.run([sys.executable, str(probe), name], capture_output=True, text=True,
                            check=True).stdout.strip() for name in ("iniconfig", "attrs")]
    assert found == ["False False", "False True"]


SLEEPER = """\
import os, pathlib, subprocess, sys, time


def test_leaves_a_process():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)
    pathlib.Path(os.environ["RANK_PID_FILE"]).write_text(str(child.pid))
    time.sleep(float(os.environ["RANK_SLEEP"]))
"""


def _sleeper_run(tmp_path: Path, warm: WarmPytest, timeout_s: float) -> Finished | None:
    """The sleeper's run (``RANK_SLEEP`` and ``RANK_PID_FILE`` set before the server started:
    a run's environment is the server's but for what each run sets)."""
    tree = _tree(tmp_path / "t", {"tests/test_sleeper.py": SLEEPER})
    return warm.run([*SETTINGS.test_command, "-q", "-p", "no:cacheprovider",
                     "tests/test_sleeper.py"], cwd=tree, env=_env(tmp_path, tree),
                    timeout_s=timeout_s)


def _sleeping(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, seconds: float) -> Path:
    monkeypatch.setenv("RANK_PID_FILE", str(tmp_path / "pid"))
    monkeypatch.setenv("RANK_SLEEP", str(seconds))
    return tmp_path / "pid"


def _env(tmp_path: Path, tree: Path) -> dict[str, str]:
    from pytest_confgate.rank.evaluate import candidate_env

    return candidate_env(SETTINGS, tree, tmp_path / "state")


def test_what_a_forked_run_left_running_is_killed_when_it_ends(
    tmp_path: Path, processes: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = _sleeping(monkeypatch, tmp_path, 0.0)
    warm = _warm(tmp_path, processes)
    try:
        done = _sleeper_run(tmp_path, warm, 60)
    finally:
        warm.close()
    assert done is not None
    assert done.returncode == 0, done.stdout
    assert process_gone(int(pid_file.read_text()))


def test_a_forked_run_past_its_timeout_is_killed_with_what_it_started(
    tmp_path: Path, processes: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = _sleeping(monkeypatch, tmp_path, 60.0)
    warm = _warm(tmp_path, processes)
    try:
        with pytest.raises(TimeoutError, match="did not finish"):
            _sleeper_run(tmp_path, warm, 1.5)
    finally:
        warm.close()
    assert process_gone(int(pid_file.read_text()))


def test_an_interrupted_ranking_ends_the_server_and_its_runs(
    tmp_path: Path, processes: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = _sleeping(monkeypatch, tmp_path, 60.0)
    warm = _warm(tmp_path, processes)
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(
        _catch(lambda: _sleeper_run(tmp_path, warm, 120))))
    thread.start()
    deadline = time.monotonic() + 60
    while not pid_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.02)
    processes.kill_all()
    thread.join(30)
    assert not thread.is_alive()
    assert process_gone(int(pid_file.read_text()))
    assert isinstance(found[0], Finished)  # killed: its outcomes never ended (a problem)
    assert found[0].returncode != 0
    with pytest.raises(TimeoutError, match="interrupted"):
        warm.run([*SETTINGS.test_command], cwd=tmp_path, env=_env(tmp_path, tmp_path),
                 timeout_s=10)
    warm.close()


def _catch(work: object) -> object:
    try:
        return work()  # type: ignore[operator]
    except Exception as exc:  # what the run raised is what the test looks at
        return exc


def test_cross_testing_forks_its_runs_and_counts_the_same(tmp_path: Path) -> None:
    base = {"calc.py": "def double(x):\n    return x * 2\n",
            "tests/test_calc.py": "from calc import double\n\n\ndef test_one():\n"
                                  "    assert double(1) == 2\n"}
    trees_ = {
        service._BASELINE: _tree(tmp_path / "base", base),
        "w": _tree(tmp_path / "w", {**base, "tests/test_w.py": (
            "from calc import double\n\n\ndef test_three():\n    assert double(3) == 6\n")}),
        "t": _tree(tmp_path / "t", {**base, "calc.py": "def double(x):\n    return x + 1\n",
                                    "tests/test_t.py": (
            "from calc import double\n\n\ndef test_one():\n    assert double(1) == 2\n")}),
    }
    found = {}
    for name in ("cold", "warm"):
        processes = Counted()
        scratch = tmp_path / f"scratch-{name}"
        scratch.mkdir()
        warm = _warm(scratch, processes, ["calc", "tests"]) if name == "warm" else None
        with ThreadPoolExecutor(max_workers=2) as pool:
            jobs = service.Jobs(
                pool, {key: (tree, scratch / f"state-{tree.name}")
                       for key, tree in trees_.items()},
                {key: trees.read_tree(tree) for key, tree in trees_.items()}, SETTINGS,
                processes, lambda _: None, scratch, warm.run if warm is not None else None)
            unblocked = {key: Evidence(solution_id=key, builds=True) for key in ("w", "t")}
            cells = service._cross_test_all(jobs, unblocked, {"w": "w", "t": "t"}, True)
        if warm is not None:
            warm.close()
        found[name] = (len(processes.started),
                       sorted((c.source, c.target, tuple(sorted(c.outcomes.items())))
                              for c in cells))
    assert found["cold"][0] == 2
    assert found["warm"][0] == 0  # each run forked from the warm pytest
    assert found["warm"][1] == found["cold"][1]
    assert ("w", "t", (("tests/test_w.py::test_three", "failed"),)) in found["warm"][1]
