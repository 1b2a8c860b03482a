"""A small task with four candidate solutions on branches of a temporary git repository.

``main`` is the baseline (a ``shop`` package with ``total``); the task is "add
``discount(price, percent)``". ``a``: correct and clean; ``b``: correct but convoluted (one
long function with twenty-odd branches); ``c``: wrong, so its own test fails; ``d``: correct
but runs a shell command (bandit B602, HIGH). Each candidate adds its own test file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}

BASE_PRICING = '''"""Prices."""


def total(items: list[float]) -> float:
    """The sum of the item prices."""
    return round(sum(items), 2)
'''
BASE_TEST = '''from shop.pricing import total


def test_total_adds_prices():
    assert total([1.0, 2.5]) == 3.5
'''
CLEAN = '''

def discount(price: float, percent: float) -> float:
    """``price`` reduced by ``percent`` per cent."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    return round(price * (100 - percent) / 100, 2)
'''
WRONG = '''

def discount(price: float, percent: float) -> float:
    """``price`` reduced by ``percent`` per cent."""
    return round(price * percent / 100, 2)
'''
SHELL = CLEAN + '''

def notify(message: str) -> int:
    """Tell the operator."""
    return subprocess.call("logger " + message, shell=True)
'''


def convoluted() -> str:
    """A correct ``discount`` written as one long chain of branches."""
    lines = ["", "", "def discount(price, percent):", "    result = None",
             "    if percent < 0:", '        raise ValueError("negative")',
             "    elif percent > 100:", '        raise ValueError("too big")']
    for step in range(1, 21):
        lines += [f"    elif percent <= {step * 5}:",
                  "        reduced = price * (100 - percent)",
                  "        reduced = reduced / 100",
                  "        result = round(reduced, 2)"]
    lines += ["    if result is None:", "        result = price", "    return result", ""]
    return "\n".join(lines)


def candidate_test(name: str, price: float) -> str:
    """Each candidate's own test file, with its own example numbers."""
    expected = round(price * 0.8, 2)
    return f'''import pytest

from shop.pricing import discount


def test_{name}_discount_reduces_price():
    assert discount({price}, 20) == {expected}


def test_{name}_discount_rejects_bad_percent():
    with pytest.raises(ValueError):
        discount({price}, 120)
'''


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and no user configuration."""
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
        capture_output=True, text=True,
    )
    return done.stdout


def write_files(repo: Path, files: dict[str, str]) -> None:
    """Write ``files`` (path -> text) under ``repo``, folders included."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


def commit_main(repo: Path, files: dict[str, str]) -> None:
    """``git init`` with ``main`` holding ``files``: the baseline."""
    write_files(repo, files)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "baseline")


def commit_branch(repo: Path, branch: str, files: dict[str, str], message: str = "") -> None:
    """A branch off ``main`` that writes ``files`` (path -> text), committed."""
    git(repo, "checkout", "-q", "-b", branch, "main")
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message or f"candidate {branch}")


def build_task(repo: Path) -> dict[str, str]:
    """Create the repository; returns branch -> what the candidate is."""
    commit_main(repo, {
        "shop/__init__.py": '"""A tiny shop."""\n', "shop/pricing.py": BASE_PRICING,
        "tests/test_total.py": BASE_TEST,
        # The project's own lint rules, so the task does not depend on ruff's defaults.
        "ruff.toml": '[lint]\nselect = ["E", "F"]\n',
    })
    variants = {
        "a": (BASE_PRICING + CLEAN, 50.0),
        "b": (BASE_PRICING + convoluted(), 40.0),
        "c": (BASE_PRICING + WRONG, 30.0),
        "d": ('"""Prices."""\n\nimport subprocess\n' + BASE_PRICING.split('"""Prices."""', 1)[1]
              + SHELL, 20.0),
    }
    for branch, (pricing, price) in variants.items():
        test = candidate_test(branch, price)
        commit_branch(repo, branch, {"shop/pricing.py": pricing,
                                     f"tests/test_discount_{branch}.py": test})
    git(repo, "checkout", "-q", "main")
    return {"a": "clean", "b": "convoluted", "c": "failing", "d": "shell=True"}


def export_verdicts(repo: Path, scratch: Path, branches: Iterable[str], held_out: str
                    ) -> dict[str, str]:
    """Branch -> ``correct`` or why not: ``held_out`` (a script that takes export folders and
    prints a JSON verdict per folder) run on an export of each branch, as no candidate saw it."""
    roots = {}
    for branch in branches:
        root = scratch / branch
        root.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", "--format=tar", branch], cwd=repo,
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(root, filter="data")
        roots[str(root)] = branch
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COV"))}
    done = subprocess.run([sys.executable, "-c", held_out, *roots], capture_output=True,
                          text=True, check=True, env=env, timeout=120)
    return {roots[root]: verdict for root, verdict in json.loads(done.stdout).items()}
