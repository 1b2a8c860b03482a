"""The change under review cannot steer its own verdict (issue 14, SPEC 6).

Each test is an attack a pull request could make on the gate, run end to end: a real git
repository, a real ``pytest --confgate`` run (pytester), the GitHub event file as a runner
writes it. The base branch ``main`` has a T3 rule over ``calc/**``; every change touches
``calc/`` and tries to come out below T3.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import git, read_report, write_config

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

BASE_RULES = "gate:\n  risk_rules:\n    - {paths: ['calc/**'], tier: T3}\n"
PYPROJECT = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


def commit(repo: pytest.Pytester, message: str) -> str:
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo.path, "rev-parse", "HEAD").strip()


def on_main(repo: pytest.Pytester, message: str = "base") -> str:
    """Commit what is in the tree as the tip of ``main`` (still on ``feature``)."""
    sha = commit(repo, message)
    git(repo.path, "branch", "-f", "main")
    return sha


def touch_calc(repo: pytest.Pytester) -> None:
    path = repo.path / "calc" / "__init__.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nLIMIT = 3\n", encoding="utf-8")


def open_pull_request(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, base: str
) -> Path:
    """The runner's view of a pull_request event: the event file and GITHUB_BASE_REF."""
    head = git(repo.path, "rev-parse", "HEAD").strip()
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "pull_request": {
        "number": 7, "title": "t", "body": "", "user": {"login": "carol"},
        "head": {"sha": head, "ref": "feature"}, "base": {"sha": base, "ref": "main"},
    }}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    return event


@pytest.fixture
def guarded(repo: pytest.Pytester) -> tuple[pytest.Pytester, str]:
    """``main`` carries the T3 rule; returns the repository and main's commit."""
    write_config(repo, BASE_RULES)
    return repo, on_main(repo, "T3 rule on main")


def assert_judged_at_t3_against(report: dict[str, object], base: str) -> None:
    assert report["risk_tier"] == "T3", report["risk_reason"]
    assert report["decision"] in ("needs_signoff", "fail")
    change = report["change"]
    assert isinstance(change, dict)
    assert change["base"] == base


def pull_request_touching_calc(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, base: str,
    *args: str,
) -> dict[str, Any]:
    """Commit a change to ``calc/``, run the gate on it as a pull request; it must be T3."""
    touch_calc(repo)
    commit(repo, "the change")
    open_pull_request(repo, monkeypatch, tmp_path, base)
    assert repo.runpytest("--confgate", *args).ret == 1
    report = read_report(repo)
    assert_judged_at_t3_against(report, base)
    return report


def test_a_change_cannot_redirect_its_base_or_lower_its_tier_in_its_config(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo, base = guarded
    write_config(repo, "base_ref: HEAD\ngate:\n  risk_tier: T0\n")

    report = pull_request_touching_calc(repo, monkeypatch, tmp_path, base)

    assert report["change"]["base_source"] == "pull_request.base.sha of the GitHub event"
    ignored = " ".join(report["change"]["ignored"])
    assert "base_ref: HEAD" in ignored


@pytest.mark.parametrize("where", ["addopts", "PYTEST_ADDOPTS"])
def test_a_base_from_addopts_is_ignored_on_a_pull_request(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    where: str,
) -> None:
    repo, base = guarded
    if where == "addopts":
        (repo.path / "pyproject.toml").write_text(
            PYPROJECT + 'addopts = "--confgate-base=HEAD"\n', encoding="utf-8")
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", "--confgate-base=HEAD")

    report = pull_request_touching_calc(repo, monkeypatch, tmp_path, base)

    ignored = " ".join(report["change"]["ignored"])
    assert "--confgate-base=HEAD from addopts or PYTEST_ADDOPTS" in ignored


def test_a_config_file_named_in_addopts_is_ignored_on_a_pull_request(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo, base = guarded
    write_config(repo, "gate:\n  risk_tier: T0\n", name="lax.yml")
    (repo.path / "pyproject.toml").write_text(
        PYPROJECT + 'addopts = "--confgate-config=lax.yml"\n', encoding="utf-8")

    change = pull_request_touching_calc(repo, monkeypatch, tmp_path, base)["change"]

    assert change["config"] == f"confgate.yml at {base[:12]}"
    assert "--confgate-config=lax.yml from addopts or PYTEST_ADDOPTS" in " ".join(
        change["ignored"])


def test_confgate_config_in_the_environment_is_ignored_on_a_pull_request(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo, base = guarded
    write_config(repo, "gate:\n  risk_tier: T0\n", name="lax.yml")
    monkeypatch.setenv("CONFGATE_CONFIG", "lax.yml")

    report = pull_request_touching_calc(repo, monkeypatch, tmp_path, base)

    assert "CONFGATE_CONFIG=lax.yml" in " ".join(report["change"]["ignored"])


def test_a_config_named_on_the_command_line_is_read_from_the_base_commit(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_config(repo, BASE_RULES, name="ci.yml")
    base = on_main(repo)
    write_config(repo, "gate:\n  risk_tier: T0\n", name="ci.yml")  # relaxed by the change

    report = pull_request_touching_calc(
        repo, monkeypatch, tmp_path, base, "--confgate-config=ci.yml")

    assert report["change"]["config"] == f"ci.yml at {base[:12]}"
    assert report["change"]["config_source"].startswith("--confgate-config on the command line")


def test_the_base_commit_judges_even_when_the_change_leaves_the_config_alone(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """main tightened its rules after the branch was made: main's rules judge the change."""
    write_config(repo, "gate:\n  risk_tier: T1\n")
    on_main(repo)
    touch_calc(repo)
    commit(repo, "feature work")
    git(repo.path, "checkout", "-q", "main")
    write_config(repo, BASE_RULES)
    base = commit(repo, "tighten main")
    git(repo.path, "checkout", "-q", "feature")
    open_pull_request(repo, monkeypatch, tmp_path, base)

    assert repo.runpytest("--confgate").ret == 1
    assert_judged_at_t3_against(read_report(repo), base)


@pytest.mark.parametrize(
    ("given", "source", "ignored"),
    [("main", "--confgate-base on the command line", ""),
     ("HEAD", "pull_request.base.sha of the GitHub event", "--confgate-base HEAD on the command "
      "line not used: its merge base with HEAD")],
    ids=["on-the-base-branch", "off-it"],
)
def test_a_command_line_base_is_used_while_it_is_on_the_base_branch(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    given: str, source: str, ignored: str,
) -> None:
    """An edited workflow passing ``--confgate-base HEAD`` still meets the event's base."""
    repo, base = guarded

    report = pull_request_touching_calc(
        repo, monkeypatch, tmp_path, base, "--confgate-base", given)

    assert report["change"]["base_source"] == source
    assert " ".join(report["change"]["ignored"]).startswith(ignored)


def test_a_local_run_still_honours_addopts_and_base_ref(repo: pytest.Pytester) -> None:
    """Outside a pull request nothing is anchored: a developer's own settings apply."""
    write_config(repo, "base_ref: main\n" + BASE_RULES)
    base = on_main(repo)
    (repo.path / "pyproject.toml").write_text(
        PYPROJECT + 'addopts = "--confgate-base=main"\n', encoding="utf-8")
    touch_calc(repo)

    assert repo.runpytest("--confgate").ret == 1
    report = read_report(repo)
    assert_judged_at_t3_against(report, base)
    assert report["change"]["base_source"] == "--confgate-base from addopts or PYTEST_ADDOPTS"


# -- symlinks ------------------------------------------------------------------------------


def linked_repo(repo: pytest.Pytester, link: str, target: str) -> str:
    """``src/pkg/policy_impl.py`` on main, reachable as ``link``; returns main's commit."""
    impl = repo.path / "src" / "pkg"
    impl.mkdir(parents=True)
    (impl / "policy_impl.py").write_text("ALLOW = False\n", encoding="utf-8")
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, repo.path / link)
    write_config(repo, "gate:\n  risk_rules:\n    - {paths: ['src/auth/**'], tier: T3}\n")
    return on_main(repo)


@pytest.mark.parametrize(
    ("link", "target", "alias"),
    [
        ("src/auth/policy.py", "../pkg/policy_impl.py", "src/auth/policy.py"),
        ("src/auth/impl", "../pkg", "src/auth/impl/policy_impl.py"),
    ],
    ids=["file-link", "directory-link"],
)
def test_a_change_to_a_symlinks_target_counts_under_the_link(
    repo: pytest.Pytester, link: str, target: str, alias: str
) -> None:
    linked_repo(repo, link, target)
    (repo.path / "src" / "pkg" / "policy_impl.py").write_text("ALLOW = True\n", encoding="utf-8")
    commit(repo, "edit the target only")

    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 1
    report = read_report(repo)
    assert report["risk_tier"] == "T3"
    assert report["risk_reason"].startswith(f"{alias} matched gate.risk_rules[0]")
    assert alias in report["change"]["files"]


def test_a_target_linked_only_in_the_base_tree_still_counts(repo: pytest.Pytester) -> None:
    linked_repo(repo, "src/auth/policy.py", "../pkg/policy_impl.py")
    os.unlink(repo.path / "src" / "auth" / "policy.py")
    (repo.path / "src" / "pkg" / "policy_impl.py").write_text("ALLOW = True\n", encoding="utf-8")
    commit(repo, "drop the link, edit the target")

    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 1
    assert read_report(repo)["risk_tier"] == "T3"


# -- the gate's own machinery --------------------------------------------------------------


def machinery_repo(repo: pytest.Pytester, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / name).write_text(text, encoding="utf-8")
    return on_main(repo)


@pytest.mark.parametrize(
    ("name", "before", "after", "named"),
    [
        ("tests/conftest.py", "", "import os\nos.environ['X'] = '1'\n", "tests/conftest.py"),
        ("pyproject.toml", PYPROJECT + "[tool.coverage.run]\nbranch = true\n",
         PYPROJECT + "[tool.coverage.run]\nbranch = false\n",
         "pyproject.toml [tool.coverage.run]"),
        ("pyproject.toml", PYPROJECT, PYPROJECT + "[tool.ruff.lint]\nignore = ['F']\n",
         "pyproject.toml [tool.ruff.lint]"),
        ("pyproject.toml", PYPROJECT, PYPROJECT + "addopts = '-q'\n",
         "pyproject.toml [tool.pytest.ini_options]"),
        ("setup.cfg", "[coverage:run]\nbranch = true\n", "[coverage:run]\nbranch = false\n",
         "setup.cfg [coverage:run]"),
        ("tox.ini", "[pytest]\nmarkers = slow\n", "[pytest]\naddopts = -q\n",
         "tox.ini [pytest]"),
        (".coveragerc", "[run]\nbranch = true\n", "[run]\nbranch = false\n", ".coveragerc"),
        ("ruff.toml", "line-length = 100\n", "line-length = 120\n",
         "ruff.toml"),
        (".bandit", "[bandit]\n", "[bandit]\nskips = B101\n", ".bandit"),
        (".github/workflows/ci.yml", "on: push\n", "on: pull_request\n",
         ".github/workflows/ci.yml"),
    ],
    ids=["conftest", "coverage-run", "ruff-lint", "pytest-ini-options", "setup-cfg",
         "tox-ini", "coveragerc", "ruff-toml", "bandit", "workflow"],
)
def test_a_change_to_the_gates_machinery_is_at_least_t2(
    repo: pytest.Pytester, name: str, before: str, after: str, named: str
) -> None:
    machinery_repo(repo, {name: before} if before else {})
    (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / name).write_text(after, encoding="utf-8")
    commit(repo, "touch the machinery")

    result = repo.runpytest("--confgate", "--confgate-base", "main")

    report = read_report(repo)
    assert report["risk_tier"] == "T2", report["risk_reason"]
    assert named in report["risk_reason"]
    assert report["decision"] == "needs_signoff"
    assert result.ret == 1


def test_a_change_to_project_metadata_in_pyproject_does_not_raise_the_tier(
    repo: pytest.Pytester,
) -> None:
    machinery_repo(repo, {"pyproject.toml": PYPROJECT + "[tool.coverage.run]\nbranch = true\n"
                          "[project]\nname = 'calc'\ndependencies = []\n"})
    path = repo.path / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "dependencies = []", "dependencies = ['attrs']"), encoding="utf-8")
    commit(repo, "a new dependency")

    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 0
    report = read_report(repo)
    assert report["risk_tier"] == "T1", report["risk_reason"]


def test_the_base_config_protects_more_paths(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  protected_paths: ['scripts/**']\n")
    machinery_repo(repo, {"scripts/release.sh": "echo hi\n"})
    (repo.path / "scripts" / "release.sh").write_text("echo bye\n", encoding="utf-8")
    write_config(repo, "gate:\n  protected_paths: []\n")  # the change also drops the rule
    commit(repo, "edit a protected script")

    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 1
    report = read_report(repo)
    assert report["risk_tier"] == "T2"
    assert "scripts/release.sh matched gate.protected_paths (scripts/**)" in report["risk_reason"]


# -- sign-offs and the checklist -----------------------------------------------------------


def test_confgate_signoffs_never_signs_off_a_pull_request(
    guarded: tuple[pytest.Pytester, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No token in the gate step: the environment must not stand in for the reviews."""
    repo, base = guarded
    monkeypatch.setenv("CONFGATE_SIGNOFFS", "alice,bob")

    report = pull_request_touching_calc(repo, monkeypatch, tmp_path, base)

    assert report["decision"] == "needs_signoff"
    assert report["signoffs"]["approved_by"] == []
    assert {e["login"] for e in report["signoffs"]["ignored"]} == {"alice", "bob"}


def test_a_ticked_item_with_a_caveat_does_not_satisfy_a_required_item(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "body": "- [x] tests added (will do later)\n- [x] docs updated\n"}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    write_config(project, "gate:\n  metrics:\n    - {type: checklist_completion, "
                 "required: [tests added, docs updated]}\n")

    assert project.runpytest("--confgate").ret == 1
    assert read_report(project)["reasons"] == [
        "checklist_completion: required item(s) not checked: 'tests added'"
    ]


def test_the_previous_report_is_kept_until_the_new_one_is_written(
    project: pytest.Pytester,
) -> None:
    """It was deleted at start, so an interrupted or broken run left none. It stays, bound to
    its own run (provenance), until a run replaces it; the Action's gate step still removes
    it before pytest starts (``test_action``), so there a dying run never shows an old pass."""
    assert project.runpytest("--confgate").ret == 0
    first = read_report(project)
    write_config(project, "gate: [unclosed\n")

    assert project.runpytest("--confgate").ret == pytest.ExitCode.USAGE_ERROR
    assert read_report(project) == first

    write_config(project, "gate: {metrics: [{type: test_pass_rate}]}\n")
    project.path.joinpath("tests", "test_fail.py").write_text(
        "def test_fail():\n    assert False\n", encoding="utf-8"
    )
    assert project.runpytest("--confgate").ret == pytest.ExitCode.TESTS_FAILED
    second = read_report(project)
    assert second["decision"] == "fail"
    assert second["provenance"]["run_id"] != first["provenance"]["run_id"]
