"""Pull-request gates on real git repositories: changed lines, risk rules, config edits."""

from __future__ import annotations

import pytest
from conftest import git, metric, read_report, write_config


def _append(pytester: pytest.Pytester, relative: str, text: str) -> None:
    path = pytester.path / relative
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


UNTESTED = "\n\ndef divide(a, b):\n    if b == 0:\n        return None\n    return a / b\n"


def test_patch_coverage_judges_only_the_changed_lines(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  metrics: [{type: test_coverage, scope: changed, min: 0.8}]\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "config on main")
    git(repo.path, "branch", "-f", "main")
    _append(repo, "calc/__init__.py", UNTESTED)
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    assert result.ret == 1
    cov = metric(read_report(repo), "test_coverage")
    # def runs at import; the 3 body statements never run: 1 of 4 changed statements.
    assert (cov["details"]["covered_lines"], cov["details"]["num_statements"]) == (1, 4)
    assert cov["value"] == pytest.approx(0.25)
    assert cov["details"]["scope"] == "changed"
    assert cov["details"]["uncovered_changed_lines"] == {"calc/__init__.py": [17, 18, 19]}
    assert cov["details"]["files_measured"] == 1  # only the changed file was traced


def test_old_lint_debt_does_not_block_a_clean_change(repo: pytest.Pytester) -> None:
    repo.path.joinpath("calc", "legacy.py").write_text("import os\n", encoding="utf-8")
    write_config(repo, "gate:\n  metrics: [{type: lint_score, scope: changed, "
                 "max_lint_violations: 0}]\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "debt on main")
    git(repo.path, "branch", "-f", "main")
    _append(repo, "calc/__init__.py", "\n\ndef double(x):\n    return 2 * x\n")
    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 0
    lint = metric(read_report(repo), "lint_score")
    assert lint["details"]["violations"] == 0
    assert lint["details"]["files_checked"] == 1

    _append(repo, "calc/__init__.py", "import sys\n")
    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 1
    lint = metric(read_report(repo), "lint_score")
    assert [(i["rule"], i["file"]) for i in lint["details"]["items"]] == [
        ("F401", "calc/__init__.py")
    ]


def test_a_risk_rule_raises_the_tier_and_says_which_rule(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(repo, "gate:\n  risk_rules:\n    - {paths: ['docs/**'], tier: T0}\n"
                 "    - {paths: ['calc/**'], tier: T3}\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "rules on main")
    git(repo.path, "branch", "-f", "main")
    _append(repo, "calc/__init__.py", "\n\nLIMIT = 3\n")
    git(repo.path, "commit", "-q", "-am", "the change")  # on a pull request, only commits count
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    result = repo.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(repo)
    assert report["risk_tier"] == "T3"
    assert report["risk_reason"] == "calc/__init__.py matched gate.risk_rules[1] (calc/**) -> T3"
    assert report["decision"] == "needs_signoff"
    assert report["change"]["base_ref"] == "main"
    lines = len(read_text(repo, "calc/__init__.py").splitlines())
    [(first, last)] = report["change"]["lines"]["calc/__init__.py"]  # one run of lines
    assert (lines - 2 <= first < last == lines), report["change"]["lines"]
    assert report["signoffs"]["required"] == 2


def test_a_change_that_edits_the_gate_is_judged_by_the_base_config_at_t2(
    repo: pytest.Pytester,
) -> None:
    write_config(repo, "gate:\n  metrics: [{type: test_coverage, min: 1.0}]\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "strict gate on main")
    git(repo.path, "branch", "-f", "main")
    _append(repo, "calc/__init__.py", UNTESTED)
    write_config(repo, "gate:\n  risk_tier: T0\n  metrics: [{type: test_coverage, min: 0.1}]\n")
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    assert result.ret == 1
    report = read_report(repo)
    assert report["risk_tier"] == "T2"
    assert "the base branch's configuration (confgate.yml at" in report["risk_reason"]
    assert report["change"]["config_changed"] is True
    cov = metric(report, "test_coverage")
    assert cov["threshold"] == 1.0  # the base's floor, not the relaxed one
    assert report["decision"] == "fail"


def test_scope_changed_without_a_base_fails_closed_and_says_how_to_fix_it(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    write_config(repo, "gate:\n  metrics: [{type: test_coverage, scope: changed}]\n")
    assert repo.runpytest("--confgate").ret == 1
    cov = metric(read_report(repo), "test_coverage")
    assert cov["status"] == "error"
    assert "set `base_ref:`" in cov["reason"]
    assert "--confgate-base" in cov["reason"]


def test_an_unknown_base_ref_is_a_clear_error(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  metrics: [{type: lint_score, scope: changed}]\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "scoped lint")
    git(repo.path, "branch", "-f", "main")
    assert repo.runpytest("--confgate", "--confgate-base", "origin/nope").ret == 1
    report = read_report(repo)
    assert "origin/nope" in report["reasons"][0]
    # The base named on the command line cannot be read, so neither can its configuration:
    # the change's own file never judges it; the defaults do, and the report says why.
    assert report["change"]["config"].startswith("defaults; the base origin/nope cannot be read")
    with_a_base_that_exists = repo.runpytest("--confgate", "--confgate-base", "main")
    assert with_a_base_that_exists.ret == 0
    lint = metric(read_report(repo), "lint_score")
    assert lint["details"]["scope"] == "changed"


def test_a_change_git_cannot_diff_fails_closed_even_without_changed_scope(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pull request in a shallow clone: the base is named but cannot be diffed, so nothing
    # proves the change left the gate's configuration alone.
    monkeypatch.setenv("GITHUB_BASE_REF", "no-such-branch")
    result = repo.runpytest("--confgate")
    assert result.ret == 1
    reasons = read_report(repo)["reasons"]
    assert reasons[0].startswith(
        "change: cannot verify that the change leaves the gate's configuration alone: "
    )
    assert "no-such-branch" in reasons[0]


def read_text(repo: pytest.Pytester, name: str) -> str:
    return (repo.path / name).read_text(encoding="utf-8")


def _config_on_main(repo: pytest.Pytester, config: str) -> None:
    """The gate's configuration committed on ``main``: the change does not bring its own."""
    write_config(repo, config)
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "config on main")
    git(repo.path, "branch", "-f", "main")


def test_a_patch_report_keeps_only_changed_line_figures(repo: pytest.Pytester) -> None:
    """No whole-file `missing_lines`/`percent_covered` beside the changed-line figures."""
    _config_on_main(repo, "gate:\n  metrics: [{type: test_coverage, scope: changed}]\n")
    _append(repo, "calc/__init__.py", UNTESTED)
    repo.runpytest("--confgate", "--confgate-base", "main")
    details = metric(read_report(repo), "test_coverage")["details"]
    assert details["missing"] == {"calc/__init__.py": [17, 18, 19]}
    assert (details["covered_lines"], details["missing_lines"]) == (1, 3)
    assert details["percent_covered"] == pytest.approx(25.0)
    assert "excluded_lines" not in details


def test_project_and_patch_coverage_are_measured_together(repo: pytest.Pytester) -> None:
    """Issue 16: two `test_coverage` entries, each with its own scope and threshold."""
    _config_on_main(
        repo,
        "gate:\n  metrics:\n    - {type: test_coverage, scope: all, min: 0.5}\n"
        "    - {type: test_coverage, scope: changed, min: 0.9}\n",
    )
    _append(repo, "calc/__init__.py", UNTESTED)
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    assert result.ret == 1
    report = read_report(repo)
    coverages = [m for m in report["metrics"] if m["type"] == "test_coverage"]
    assert [m["details"]["scope"] for m in coverages] == ["all", "changed"]
    project_cov, patch_cov = coverages
    assert project_cov["value"] == pytest.approx(8 / 11)  # 7 old lines and 1 of 4 new ones
    assert patch_cov["value"] == pytest.approx(0.25)
    assert (project_cov["threshold"], patch_cov["threshold"]) == (0.5, 0.9)
    floors = [
        c for c in report["conditions"] if c["metric"] == "test_coverage" and c["name"] == "min"
    ]
    assert [(c["passed"], c["threshold"]) for c in floors] == [(True, 0.5), (False, 0.9)]
    assert report["reasons"] == [
        "test_coverage (changed lines): 25.00% is below the minimum 90.00%"
    ]
    result.stdout.fnmatch_lines([
        "test_coverage *72.73%*min 50.00%*PASS*(coverage: 8/11 lines)",
        "test_coverage (changed lines)*25.00%*min 90.00%*FAIL*(changed-line coverage: 1/4 lines)",
    ])


def test_missing_changed_lines_show_as_ranges_in_the_terminal_and_the_markdown(
    repo: pytest.Pytester,
) -> None:
    """diff-cover prints `Missing lines 17-19`; the gate printed only `25.00% (1/4 lines)`."""
    from pytest_confgate.models import GateReport
    from pytest_confgate.report.markdown import render_markdown

    _config_on_main(repo, "gate:\n  metrics: [{type: test_coverage, scope: changed, min: 0.8}]\n")
    _append(repo, "calc/__init__.py", UNTESTED)
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    result.stdout.fnmatch_lines([
        "test_coverage (changed lines)*25.00%*min 80.00%*FAIL*(changed-line coverage: 1/4 lines)",
        "missing changed lines:",
        "  calc/__init__.py  17-19",
    ])
    report = GateReport.model_validate(read_report(repo))
    markdown = render_markdown(report)
    assert "| calc/\\_\\_init\\_\\_.py | 17-19 |" in markdown  # underscores escaped for Markdown
    assert "### Missing changed lines" in markdown


def test_a_risk_path_added_and_removed_again_in_the_pull_request_still_raises_the_tier(
    repo: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final diff does not show ``auth/token.py``, but one commit of the pull request
    added it: a reviewer of that commit (or anything it ran in CI) saw it, so the rule holds."""
    write_config(repo, "gate:\n  risk_rules:\n    - {paths: ['auth/**'], tier: T3}\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "rules on main")
    git(repo.path, "branch", "-f", "main")
    (repo.path / "auth").mkdir()
    (repo.path / "auth" / "token.py").write_text("SECRET = 'x'\n", encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "add a token")
    git(repo.path, "rm", "-q", "auth/token.py")
    _append(repo, "calc/__init__.py", "\n\nLIMIT = 3\n")
    git(repo.path, "commit", "-q", "-am", "remove it again")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    repo.runpytest("--confgate")
    report = read_report(repo)
    assert report["risk_tier"] == "T3"
    assert "auth/token.py matched gate.risk_rules[0] (auth/**) -> T3" in report["risk_reason"]
    assert "a commit of the change" in report["risk_reason"]
