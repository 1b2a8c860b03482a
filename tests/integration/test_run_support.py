"""Shared by the ``confgate run`` tests: a tiny real project in a git repo and scripted agents.

No tests here. A scripted agent is a real program (``command`` provider): it counts its
calls in a state folder, keeps each prompt it got, writes the files its script says for that
call (relative to its working directory, the project) and prints the scripted answer. The
gate is the real ``pytest --confgate`` run by ``confgate run`` on the project.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.cli import main

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

AGENT_PROGRAM = r"""
import json, os, pathlib, re, subprocess, sys, time
state = pathlib.Path(sys.argv[1])
script = json.loads(pathlib.Path(sys.argv[2]).read_text())
prompt = sys.stdin.read()
counter = state / "count"
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
(state / f"prompt-{n}.txt").write_text(prompt)
step = script[min(n, len(script)) - 1]
for path, text in step.get("write", {}).items():
    pathlib.Path(path).write_text(text)
if step.get("hang"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (state / "pids.tmp").write_text(f"{os.getpid()} {child.pid}")
    (state / "pids.tmp").replace(state / "pids")  # whole or absent: the test polls for it
    time.sleep(60)
canary = re.search(r"^canary: ([0-9a-f]+)$", prompt, re.M)  # echoed where "$CANARY" stands
sys.stdout.write(step.get("answer", "done").replace("$CANARY", canary.group(1) if canary else ""))
sys.exit(step.get("exit", 0))
"""

CODE_FULL = "def add(a, b):\n    return a + b\n"
CODE_PARTIAL = CODE_FULL + (
    "\n\ndef unused(x):\n    if x:\n        return 1\n    return 2\n"
)
"""6 statements, 3 covered by ``TESTS_OK``: coverage 0.5, confidence (1.0 + 0.5) / 2 = 0.75."""
TESTS_OK = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
TESTS_FAILING = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 4\n"

GATE = """\
source: [calc.py]
gate:
  risk_tier: {tier}
  metrics:
    - type: test_pass_rate
    - type: test_coverage
      min: 0.8
"""


@dataclass(frozen=True)
class ScriptedAgent:
    """A command agent's name and state folder, for what it was asked and how often."""

    name: str
    state: Path

    @property
    def calls(self) -> int:
        counter = self.state / "count"
        return int(counter.read_text()) if counter.exists() else 0

    def prompt(self, call: int) -> str:
        return (self.state / f"prompt-{call}.txt").read_text()


def write_step(
    write: dict[str, str] | None = None, answer: str = "done", **extra: Any
) -> dict[str, Any]:
    """One call of a scripted agent: the files it writes and what it prints."""
    return {"write": write or {}, "answer": answer, **extra}


def verdict(approved: bool, critique: str = "looks fine") -> dict[str, Any]:
    """A challenger's call: it answers the JSON object of seed 001."""
    return write_step(answer=json.dumps({"critique": critique, "challenger_approved": approved}))


class RunProject:
    """A tiny project (``calc.py`` + one test) committed in a git repo, with its agents."""

    def __init__(self, base: Path, tier: str = "T1") -> None:
        self.base = base
        self.root = base / "project"
        self.root.mkdir()
        self.tier = tier
        self.agents: dict[str, ScriptedAgent] = {}
        (self.root / "pytest.ini").write_text("[pytest]\n")
        (self.root / "calc.py").write_text(CODE_PARTIAL)
        (self.root / "test_calc.py").write_text(TESTS_OK)
        (self.root / ".gitignore").write_text(".confgate/\n__pycache__/\n*.json\n")
        git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
        subprocess.run([*git, "init", "-q"], cwd=self.root, check=True)
        subprocess.run([*git, "add", "-A"], cwd=self.root, check=True)
        subprocess.run([*git, "commit", "-qm", "start"], cwd=self.root, check=True)

    def agent(self, name: str, *steps: dict[str, Any]) -> ScriptedAgent:
        """Define agent ``name`` that plays ``steps``, one per call (the last one repeats)."""
        folder = self.base / "agents" / name
        folder.mkdir(parents=True)
        program = self.base / "agents" / "agent.py"
        program.write_text(AGENT_PROGRAM)
        (folder / "script.json").write_text(json.dumps(list(steps) or [write_step()]))
        self.agents[name] = ScriptedAgent(name, folder)
        return self.agents[name]

    def configure(self, tasks: str, extra: str = "") -> Path:
        """Write ``confgate.yml``: the defined agents, the gate, ``tasks`` (YAML, dedented)."""
        lines = ["agents:"]
        for name, agent in self.agents.items():
            argv = [sys.executable, str(self.base / "agents" / "agent.py"), str(agent.state),
                    str(agent.state / "script.json")]
            lines.append(f"  {name}: {{provider: command, command: {json.dumps(argv)}}}")
        text = "\n".join(lines) + "\n" + GATE.format(tier=self.tier) + extra
        text += "tasks:\n" + textwrap.indent(textwrap.dedent(tasks), "  ")
        path = self.root / "confgate.yml"
        path.write_text(text)
        return path

    def run(self, *args: str) -> tuple[int, dict[str, Any]]:
        """``confgate run ARGS --report run-report.json`` in the project (cwd must be root)."""
        report = self.root / "run-report.json"
        report.unlink(missing_ok=True)
        code = main(["run", *args, "--report", str(report)])
        data = json.loads(report.read_text()) if report.exists() else {}
        return code, data

    def run_dir(self, report: dict[str, Any]) -> Path:
        return self.root / report["run_dir"]
