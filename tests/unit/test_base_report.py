"""The change against the base (issue 29): the publish step finds the base branch's latest
report through the API, with no setup, and shows project and patch deltas per metric and
per file; when there is none, it says so."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes.github_server import FakeGitHubServer
from fakes.reports import HEAD_SHA, honest_report

from pytest_confgate.cli import main
from pytest_confgate.cli.github import publish
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.base_report import find_base_report
from pytest_confgate.models import EvalMetric, GateReport
from pytest_confgate.report.markdown import render_comment

BASE = "b" * 40


def with_coverage(report: GateReport, value: float, missing: dict[str, list[int]]) -> GateReport:
    metrics = [
        EvalMetric(type="test_coverage", value=value, status=m.status, passed=m.passed,
                   limit=m.limit, details={"scope": "all", "missing": missing})
        if m.type == "test_coverage" else m
        for m in report.metrics
    ]
    return report.model_copy(update={"metrics": metrics})


def pr_env(tmp_path: Path, server: FakeGitHubServer) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "head": {"sha": HEAD_SHA}, "user": {"login": "carol"},
        "base": {"sha": BASE, "ref": "main"}}}), encoding="utf-8")
    return {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r",
            "GITHUB_TOKEN": server.token, "GITHUB_API_URL": server.api_url}


def keep_base_report(server: FakeGitHubServer, report: GateReport, sha: str = BASE) -> int:
    run = server.add_run("o/r", branch="main", head_sha=sha)
    files: dict[str, Any] = {"confgate-report.json": report.model_dump_json(),
                             "confgate.sarif": "{}"}
    server.add_artifact("o/r", run, "confgate-report", files)
    return run


def test_the_comment_shows_project_coverage_against_the_base_per_metric_and_per_file(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    base = with_coverage(honest_report(), 0.9, {"calc/core.py": [3], "calc/io.py": [1, 2]})
    older = keep_base_report(github_server, base, sha="a" * 40)
    run = keep_base_report(github_server, base)
    github_server.add_run("o/r", branch="main", head_sha="d" * 40, conclusion="failure")
    head = with_coverage(honest_report(), 0.8,
                         {"calc/core.py": [3, 4, 5], "calc/io.py": [1, 2]})
    env = pr_env(tmp_path, github_server)
    path = tmp_path / "confgate-report.json"
    path.write_text(head.model_dump_json(), encoding="utf-8")
    err = io.StringIO()

    assert publish(str(path), environ=env, out=io.StringIO(), err=err) == 0

    [comment] = github_server.comments["o/r", 7]
    body = comment["body"]
    assert "### Change against the base" in body
    assert f"Compared with the main branch's report of run {run} (commit bbbbbbbbbbbb)." in body
    assert "- test_coverage: 80.00% (base 90.00%, -10.00 pts)" in body
    assert "| calc/core.py | 3 | 1 | +2 |" in body
    assert "calc/io.py" not in body.split("### Change against the base")[1].split("###")[0]
    # Codecov's order: the change against the base before the evidence table
    assert body.index("### Change against the base") < body.index("### Evidence")
    assert older != run
    blob = [r for r in github_server.requests if r.path.startswith("/_blob/")]
    assert len(blob) == 1
    assert "authorization" not in blob[0].headers, "the signed URL never gets the token"
    page = (tmp_path / "confgate-report.html").read_text(encoding="utf-8")
    assert "Compared with the base" in page


def test_without_a_base_report_the_comment_says_so(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    github_server.add_run("o/r", branch="main", head_sha=BASE)  # a run that kept nothing
    env = pr_env(tmp_path, github_server)
    path = tmp_path / "confgate-report.json"
    path.write_text(honest_report().model_dump_json(), encoding="utf-8")
    publish(str(path), environ=env, out=io.StringIO(), err=io.StringIO())
    body = github_server.comments["o/r", 7][0]["body"]
    assert ("no base report: no successful push run on main kept a confgate-report artifact "
            "(the example workflow's push run makes one)") in body


def test_a_newer_run_of_another_commit_is_taken_when_the_base_commit_kept_none(
    github_server: FakeGitHubServer
) -> None:
    keep_base_report(github_server, honest_report(), sha="e" * 40)
    client = GitHubClient(github_server.token, github_server.api_url)
    found = find_base_report(client, "o/r", "main", BASE)
    assert found.report is not None
    assert found.where.endswith(f"(commit eeeeeeeeeeee); not of the base commit {BASE[:12]}, "
                                "which kept none")


def test_a_broken_artifact_is_said_never_raised(github_server: FakeGitHubServer) -> None:
    run = github_server.add_run("o/r", branch="main", head_sha=BASE)
    github_server.add_artifact("o/r", run, "confgate-report", {"other.txt": "x"})
    client = GitHubClient(github_server.token, github_server.api_url)
    found = find_base_report(client, "o/r", "main", BASE)
    assert found.report is None
    assert found.where.startswith("no base report: artifact ")
    assert "holds no confgate-report.json" in found.where


def test_a_file_the_base_covered_fully_counts_from_zero_and_no_base_data_says_so() -> None:
    from pytest_confgate.report.compare import file_deltas

    head = with_coverage(honest_report(), 0.5, {"calc/core.py": [3, 4]})
    covered = with_coverage(honest_report(), 1.0, {})
    [delta] = file_deltas(head, covered)
    assert (delta.file, delta.missing, delta.base, delta.change()) == ("calc/core.py", 2, 0, "+2")
    unmeasured = covered.model_copy(update={"metrics": []})
    assert [d.change() for d in file_deltas(head, unmeasured)] == ["new"]


def test_confgate_report_md_prints_the_comment_publish_posts(
    tmp_path: Path, github_server: FakeGitHubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reviewer or an agent previews the comment locally: the same sections in the same
    order, the same comparison (it used to be appended at the end, with no per-file table).
    Only what needs GitHub differs: links into the pull request and where the base came from."""
    base = with_coverage(honest_report(), 0.9, {"calc/core.py": [3]})
    run = keep_base_report(github_server, base)
    head = with_coverage(honest_report(), 0.8, {"calc/core.py": [3, 4, 5]})
    path, base_path = tmp_path / "confgate-report.json", tmp_path / "base.json"
    path.write_text(head.model_dump_json(), encoding="utf-8")
    base_path.write_text(base.model_dump_json(), encoding="utf-8")
    publish(str(path), environ=pr_env(tmp_path, github_server), out=io.StringIO(),
            err=io.StringIO())
    posted = github_server.comments["o/r", 7][0]["body"]

    assert main(["report", "--format", "md", str(path), "--compare", str(base_path)]) == 0
    printed = capsys.readouterr().out

    def github_parts_aside(text: str) -> str:
        unlinked = re.sub(r"\[([^\]]*)\]\(https://[^)]*\)", r"\1", text)
        return re.sub(r"\nCompared with .*\.\n", "\nCompared with BASE.\n", unlinked)

    assert f"Compared with the main branch's report of run {run} (commit bbbb" in posted
    assert f"Compared with {base_path} (commit " in printed
    assert "| calc/core.py | 3 | 1 | +2 |" in printed
    assert github_parts_aside(printed) == github_parts_aside(posted)
    assert main(["report", "--format", "md", str(path)]) == 0
    alone = capsys.readouterr().out
    assert alone == render_comment(head)
    assert "Change against the base" not in alone
