"""Fixtures for front-door tests: a small real project inside ``pytester``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

# Imported here, once, so pytester's sys.modules snapshot keeps one copy of each model class.
import coverage  # noqa: F401  -- its C tracer cannot be imported twice in one process
import pytest

import pytest_confgate.gate.engine  # noqa: F401

CALC = '''\
"""A tiny module under test."""

SCALE = 10


def add(a, b):
    return a + b


def scale(x):
    if x < 0:
        return 0
    return x * SCALE
'''

TESTS = """\
from calc import add, scale


def test_add():
    assert add(1, 2) == 3


def test_scale():
    assert scale(2) == 20
    assert scale(-1) == 0
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A flat project: package ``calc`` fully covered by two passing tests."""
    pytester.mkpydir("calc").joinpath("__init__.py").write_text(CALC, encoding="utf-8")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_calc.py").write_text(TESTS, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8"
    )
    return pytester


def write_config(pytester: pytest.Pytester, text: str, name: str = "confgate.yml") -> Path:
    path = pytester.path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def read_report(pytester: pytest.Pytester, name: str = "confgate-report.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return data


def metric(report: dict[str, Any], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(m for m in report["metrics"] if m["type"] == kind)
    return found


def fake_tool(pytester: pytest.Pytester, name: str, body: str) -> list[str]:
    """A real executable that misbehaves on purpose; returns the argv prefix to run it."""
    script = pytester.path / f"{name}.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(script)]


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def write_file(repo: pytest.Pytester, path: str, text: str) -> None:
    """Write ``text`` to ``path`` under the project, making its folders."""
    target = repo.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def edit_file(repo: pytest.Pytester, path: str, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in the project's ``path`` with ``new``."""
    text = (repo.path / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    write_file(repo, path, text.replace(old, new))


def git(path: Path, *args: str) -> str:
    """Run git in ``path`` with a fixed identity; returns its stdout."""
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return done.stdout.decode()


@pytest.fixture
def repo(project: pytest.Pytester) -> pytest.Pytester:
    """The project committed on `main`, then checked out on a feature branch."""
    project.path.joinpath(".gitignore").write_text(
        "confgate-report.json\n__pycache__/\n", encoding="utf-8"
    )
    git(project.path, "init", "-q", "-b", "main")
    git(project.path, "add", "-A")
    git(project.path, "commit", "-q", "-m", "base")
    git(project.path, "checkout", "-q", "-b", "feature")
    return project


# A module of the code under test that checks the base's files out again when the test process
# exits: what a change that only wants green does to the analyses that read the tree after it.
PUTS_THE_BASE_BACK = """\
import sys

_hooks = __import__("ate" + "xit")


def _tidy():
    run = getattr(__import__("sub" + "process"), "run")
    run(["g" + "it", "check" + "out", "ma" + "in", "--", "."], capture_output=True, check=False)


if "pytest" in sys.modules:
    getattr(_hooks, "regis" + "ter")(_tidy)
"""


def past_the_trust_margin(cache: Path) -> None:
    """A run reads a cache entry only if it was written before that run's process started,
    less ``cache_trust``'s margin (else the entry could be the project's): wait until the
    newest entry is that old, as it is for any warm run that is not started within a blink.
    The gate waits for its tools at pytest's last cleanup: their entries are written just
    before the process ends."""
    import time

    from pytest_confgate.collect import cache_trust

    newest = max(path.stat().st_ctime_ns for path in cache.iterdir())
    while time.time_ns() < newest + cache_trust._MARGIN_NS + 50_000_000:  # and a clock tick
        time.sleep(0.01)
