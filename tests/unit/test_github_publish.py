"""``confgate github publish``: outputs, annotations, summary and the sticky PR comment."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fakes.github_runner import OUTPUT_HEADER, parse_github_output
from fakes.github_server import FakeGitHubServer
from fakes.reports import HEAD_SHA, gate_report, honest_report

from pytest_confgate.cli import main
from pytest_confgate.cli.github import publish
from pytest_confgate.exceptions import GitHubError
from pytest_confgate.github import action_run
from pytest_confgate.github import publish as github_publish
from pytest_confgate.github.publish import (
    annotation_commands,
    escape_data,
    escape_property,
    step_outputs,
    write_outputs,
)
from pytest_confgate.models import Condition, ConfidenceResult, Decision, EvalMetric, GateReport
from pytest_confgate.report.markdown import MARKER

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

EVIL = "bad\n::set-output name=decision::pass\r\n::error::owned %0A, x: y"
BASE_SHA = "b" * 40


def finding(file: str, line: int, *, severity: str = "MEDIUM", message: str = "m",
            rule: str = "B101") -> dict[str, Any]:
    return {"tool": "bandit", "rule": rule, "file": file, "line": line, "column": 3,
            "message": message, "severity": severity}


def with_findings(items: list[dict[str, Any]], **fields: Any) -> GateReport:
    metric = EvalMetric(type="security_score", value=0.5, details={"items": items})
    return gate_report(metrics=[metric], **fields)


def save(report: GateReport, tmp_path: Path) -> Path:
    path = tmp_path / "confgate-report.json"
    path.write_text(report.model_dump_json(), encoding="utf-8")
    return path


def run_publish(path: Path, environ: dict[str, str], **kwargs: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = publish(str(path), environ=environ, out=out, err=err, **kwargs)
    return status, out.getvalue(), err.getvalue()


def runner_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "out").write_text("", encoding="utf-8")
    (tmp_path / "summary.md").write_text("", encoding="utf-8")
    return {"GITHUB_OUTPUT": str(tmp_path / "out"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}


def assert_no_foreign_commands(log: str, ours: list[str]) -> None:
    for line in log.splitlines():
        assert not line.lstrip().startswith("::") or line in ours, line


def test_escaping_follows_github_toolkit() -> None:
    assert escape_data("50%\r\nx:y,z") == "50%25%0D%0Ax:y,z"
    assert escape_property("50%\r\nx:y,z") == "50%25%0D%0Ax%3Ay%2Cz"


def test_annotations_error_for_high_warning_otherwise_and_escaped() -> None:
    report = with_findings([finding("a.py", 4, severity="HIGH", message=EVIL, rule="B6:02,x"),
                            finding("b.py", 0), finding("c.py", 2, severity="LOW")])
    result = annotation_commands(report)
    # SARIF's levels, and bandit's 0-based col_offset 3 shown 1-based as SARIF's startColumn 4
    assert result.commands == [
        "::error file=a.py,line=4,col=4,title=bandit B6%3A02%2Cx::bad%0A::set-output "
        "name=decision::pass%0D%0A::error::owned %250A, x: y",
        "::warning file=b.py,col=4,title=bandit B101::m",
        "::notice file=c.py,line=2,col=4,title=bandit B101::m",
    ]
    assert result.omitted == 0


def test_annotations_only_on_changed_files_when_the_report_has_a_change() -> None:
    report = with_findings([finding("old.py", 1), finding("new.py", 2)],
                           change={"base_ref": "main", "files": ["new.py"]})
    assert [c.split(",")[0] for c in annotation_commands(report).commands] == [
        "::warning file=new.py"
    ]


def test_annotations_capped_per_level_and_the_rest_counted() -> None:
    items = [finding("a.py", n) for n in range(1, 14)] + [finding("a.py", 99, severity="HIGH")]
    result = annotation_commands(with_findings(items), cap=10)
    assert sum(c.startswith("::warning") for c in result.commands) == 10
    assert sum(c.startswith("::error") for c in result.commands) == 1
    assert result.omitted == 3


def test_outputs_round_trip_with_random_delimiters(tmp_path: Path) -> None:
    path = tmp_path / "out"
    tricky = "line1\nghadelimiter_0\nEOF\n" + EVIL
    write_outputs(path, {"decision": "fail", "report": tricky, "confidence": ""})
    text = path.read_bytes().decode()
    assert parse_github_output(text) == {"decision": "fail", "report": tricky, "confidence": ""}
    assert len(set(OUTPUT_HEADER.findall(text))) == 3


def test_a_delimiter_found_in_the_value_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picks = iter(["ghadelimiter_" + "a" * 32, "ghadelimiter_" + "b" * 32])
    monkeypatch.setattr(github_publish, "_delimiter", lambda: next(picks))
    value = "x\nghadelimiter_" + "a" * 32 + "\nname=evil"
    write_outputs(tmp_path / "out", {"report": value})
    text = (tmp_path / "out").read_bytes().decode()
    assert text.startswith("report<<ghadelimiter_" + "b" * 32 + "\n")
    assert parse_github_output(text) == {"report": value}


def test_step_outputs() -> None:
    confidence = ConfidenceResult(method="formula", mode="composite", score=0.875,
                                  scores={}, threshold=0.8)
    report = gate_report(decision=Decision.NEEDS_SIGNOFF, auto_advance=True,
                         confidence=confidence)
    assert step_outputs(report, "r.json") == {
        "decision": "needs_signoff", "confidence": "0.875", "auto_advance": "true",
        "escalated": "false", "report": "r.json",
    }
    assert step_outputs(gate_report(), "r.json")["confidence"] == ""


@pytest.mark.parametrize(
    ("decision", "status"),
    [(Decision.PASS, 0), (Decision.FAIL, 1), (Decision.NEEDS_SIGNOFF, 1)],
)
def test_publish_writes_summary_and_outputs_and_exits_by_decision(
    tmp_path: Path, decision: Decision, status: int
) -> None:
    env = runner_env(tmp_path)
    items = [finding("a.py", n, message=EVIL) for n in range(1, 13)]
    path = save(with_findings(items, decision=decision, reasons=[EVIL]), tmp_path)
    code, out, err = run_publish(path, env, comment=False)
    assert code == status
    outputs = parse_github_output((tmp_path / "out").read_bytes().decode())
    assert outputs == step_outputs(with_findings([], decision=decision), str(path))
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(MARKER)
    assert summary.rstrip().endswith("2 more findings: see the SARIF / report.")
    ours = annotation_commands(with_findings(items)).commands
    assert len(ours) == 10
    assert_no_foreign_commands(out + err, ours)
    assert out.splitlines()[-1] == f"confgate: decision {decision.value}"


def test_publish_a_bad_report_exits_2_and_fails_closed(tmp_path: Path) -> None:
    env = runner_env(tmp_path)
    path = tmp_path / "bad.json"
    path.write_text('{"decision": "pass"}', encoding="utf-8")
    code, out, err = run_publish(path, env)
    assert code == 2
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "fail"
    assert err.startswith("confgate: github publish: ")
    assert out.splitlines()[-1] == "confgate: decision fail"


def fails_closed(tmp_path: Path, env: dict[str, str], report_path: Path, sha: str,
                 why: str) -> str:
    """Publish; assert it failed closed naming ``sha`` and ``why``; returns the summary."""
    code, out, err = run_publish(report_path, env, comment=False)
    assert code != 0
    outputs = parse_github_output((tmp_path / "out").read_text())
    assert outputs["decision"] == "fail"
    assert "decision=pass" not in (tmp_path / "out").read_text()
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(MARKER)
    assert f"the gate produced no report for {sha}" in summary
    assert why in summary, summary
    assert out.splitlines()[-1] == "confgate: decision fail"
    assert f"confgate: the gate produced no report for {sha}: " in err
    assert "PASS" not in summary
    return summary


def test_a_missing_report_fails_closed_and_says_so(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    code, _, _ = run_publish(tmp_path / "confgate-report.json", env)
    assert code == 2
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "fail"
    [comment] = github_server.comments["o/r", 7]
    assert comment["body"].startswith(MARKER)
    assert f"the gate produced no report for {HEAD_SHA}" in comment["body"]


def test_a_report_from_another_run_is_not_published(tmp_path: Path) -> None:
    env = {**runner_env(tmp_path), "GITHUB_RUN_ID": "500", "GITHUB_RUN_ATTEMPT": "1",
           "GITHUB_SHA": HEAD_SHA}
    path = save(gate_report(), tmp_path)  # run_id local-...: written outside this run
    fails_closed(tmp_path, env, path, HEAD_SHA, "not by this workflow run (500-1)")


def test_a_report_of_an_earlier_attempt_of_this_run_is_published(tmp_path: Path) -> None:
    env = {**runner_env(tmp_path), "GITHUB_RUN_ID": "500", "GITHUB_RUN_ATTEMPT": "2"}
    report = gate_report()
    assert report.provenance is not None
    ours = report.provenance.model_copy(update={"run_id": "500-1"})
    assert run_publish(save(gate_report(provenance=ours), tmp_path), env, comment=False)[0] == 0
    later = report.provenance.model_copy(update={"run_id": "500-3"})
    fails_closed(tmp_path, runner_env(tmp_path) | env, save(gate_report(provenance=later),
                 tmp_path), "this run", "not by this workflow run (500-2)")


def test_a_report_of_another_commit_is_not_published(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    report = gate_report()
    assert report.provenance is not None
    other = report.provenance.model_copy(update={"head_sha": "d" * 40})
    path = save(gate_report(provenance=other), tmp_path)
    fails_closed(tmp_path, env, path, HEAD_SHA,
                 f"the report judged {'d' * 40}, not the pull request's head {HEAD_SHA}")


def test_a_report_of_the_test_merge_commit_says_how_to_check_out_the_head(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    merge = "e" * 40
    env = {**pr_env(tmp_path, github_server), "GITHUB_SHA": merge}
    report = gate_report()
    assert report.provenance is not None
    path = save(gate_report(provenance=report.provenance.model_copy(
        update={"head_sha": merge})), tmp_path)
    summary = fails_closed(tmp_path, env, path, HEAD_SHA, "test-merge commit")
    assert "ref: ${{ github.event.pull_request.head.sha }}" in summary


@pytest.mark.parametrize("head", [None, "<img src=x onerror=alert(1)>"], ids=["none", "html"])
def test_an_unbound_or_hostile_provenance_is_refused_and_never_echoed(
    tmp_path: Path, head: str | None
) -> None:
    env = {**runner_env(tmp_path), "GITHUB_SHA": HEAD_SHA}
    report = gate_report()
    assert report.provenance is not None
    hostile = report.provenance.model_copy(update={"head_sha": head})
    summary = fails_closed(tmp_path, env, save(gate_report(provenance=hostile), tmp_path),
                           HEAD_SHA, "not GITHUB_SHA")
    assert "<img" not in summary
    no_provenance = save(gate_report(provenance=None), tmp_path)
    env.update(runner_env(tmp_path))  # fresh output and summary files
    fails_closed(tmp_path, env, no_provenance, HEAD_SHA, "carries no provenance")


def test_a_report_too_large_to_be_real_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_confgate.cli import github as cli_github

    monkeypatch.setattr(cli_github, "MAX_REPORT_BYTES", 100)
    path = save(gate_report(), tmp_path)
    code, _, err = run_publish(path, runner_env(tmp_path), comment=False)
    assert code == 2
    assert "larger than 100 bytes" in err


def test_publish_outside_actions_says_why_and_continues(tmp_path: Path) -> None:
    code, _, err = run_publish(save(gate_report(), tmp_path), {})
    assert code == 0
    assert "GITHUB_STEP_SUMMARY is not set" in err
    assert "GITHUB_OUTPUT is not set" in err
    assert "no PR comment: GITHUB_EVENT_PATH is not set" in err


def pr_env(tmp_path: Path, server: FakeGitHubServer, number: int = 7) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": number, "title": EVIL, "head": {"sha": HEAD_SHA}, "user": {"login": "carol"},
        "base": {"sha": BASE_SHA},
    }}), encoding="utf-8")
    return {**runner_env(tmp_path), "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": server.token,
            "GITHUB_API_URL": server.api_url}


def test_sticky_comment_created_once_then_updated_in_place(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    github_server.comments["o/r", 7].append({"id": 1, "body": "LGTM", "user": {"login": "a"}})
    first = save(gate_report(decision=Decision.FAIL), tmp_path)
    assert run_publish(first, env)[2].endswith("confgate: PR comment created on #7\n")
    second = save(honest_report(), tmp_path)
    code, _, err = run_publish(second, env)
    assert code == 0
    assert "PR comment updated on #7" in err
    comments = github_server.comments["o/r", 7]
    assert [c["body"][:len(MARKER)] == MARKER for c in comments] == [False, True]
    assert "PASS" in comments[1]["body"]
    assert github_server.token not in err


def test_no_comment_without_token_or_pull_request(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    path = save(honest_report(), tmp_path)
    assert "no PR comment: no token" in run_publish(path, {**env, "GITHUB_TOKEN": ""})[2]
    Path(env["GITHUB_EVENT_PATH"]).write_text('{"push": {}}', encoding="utf-8")
    assert "not a pull_request event" in run_publish(path, env)[2]
    assert run_publish(path, env, comment=False)[2] == ""
    assert github_server.comments["o/r", 7] == []


def test_a_github_failure_does_not_change_the_exit_status(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    github_server.fail_next(403, message="Resource not accessible by integration",
                            path="/repos/o/r/issues/7/comments")
    code, _, err = run_publish(save(gate_report(decision=Decision.FAIL), tmp_path), env)
    assert code == 1
    assert "no PR comment: GitHub GET" in err
    assert "HTTP 403" in err


def test_cli_github_publish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in runner_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in ("GITHUB_EVENT_PATH", "GITHUB_TOKEN", "CONFGATE_GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    items = [finding("a.py", n) for n in range(1, 5)]
    path = save(with_findings(items, decision=Decision.FAIL), tmp_path)
    assert main(["github", "publish", str(path), "--no-comment", "--annotations-cap", "2"]) == 1
    out = capsys.readouterr().out
    assert out.count("::warning ") == 2
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "2 more findings: see the SARIF / report." in summary


def test_action_run_builds_argv_without_a_shell() -> None:
    env = {"CONFGATE_PYTEST_ARGS": "-q -k 'a or b' $(touch pwned)",
           "CONFGATE_CONFIG": "gate.yml", "CONFGATE_BASE_REF": " origin/main "}
    assert action_run.gate_argv(env, python="py") == [
        "py", "-I", "-m", "pytest_confgate.cli", "gate", "--report", "confgate-report.json",
        "--config", "gate.yml", "--base", "origin/main",
        "--", "-q", "-k", "a or b", "$(touch", "pwned)",
    ]
    assert action_run.gate_argv({}, python="py")[4:] == [
        "gate", "--report", "confgate-report.json", "--"
    ]


def test_action_run_drops_unsplittable_args_and_passes_the_status_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[list[str]] = []
    monkeypatch.setattr(action_run, "run_without_commands",
                        lambda argv, env, digests: seen.append(argv) or 4)
    assert action_run.main(environ={"CONFGATE_PYTEST_ARGS": "-k 'unbalanced"}) == 4
    assert seen[0][4:] == ["gate", "--report", "confgate-report.json", "--"]


def test_the_tests_environment_has_no_token_and_no_file_commands() -> None:
    runner = {"GITHUB_TOKEN": "t", "ACTIONS_RUNTIME_TOKEN": "t", "ACTIONS_RUNTIME_URL": "u",
              "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t", "ACTIONS_ID_TOKEN_REQUEST_URL": "u",
              "ACTIONS_CACHE_URL": "u", "GITHUB_ENV": "f", "GITHUB_PATH": "f",
              "GITHUB_OUTPUT": "f", "GITHUB_STATE": "f", "GITHUB_STEP_SUMMARY": "f",
              "GH_TOKEN": "t", "CONFGATE_GITHUB_TOKEN": "t"}
    kept = {"PATH": "/bin", "GITHUB_EVENT_PATH": "e", "GITHUB_BASE_REF": "main",
            "GITHUB_SHA": "s", "GITHUB_RUN_ID": "1", "OPENAI_API_KEY": "k"}
    assert action_run.tests_environment({**runner, **kept}) == kept


def test_old_reports_are_removed_and_a_symlink_is_never_followed(tmp_path: Path) -> None:
    (tmp_path / "confgate-report.json").write_text("{}")
    (tmp_path / "elsewhere.json").write_text("keep me")
    (tmp_path / "confgate.sarif").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "confgate-report.html").mkdir()
    assert action_run.remove_old_reports(tmp_path) == ["confgate-report.json", "confgate.sarif"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["confgate-report.html",
                                                          "elsewhere.json"]
    assert (tmp_path / "elsewhere.json").read_text() == "keep me"


@pytest.mark.parametrize(
    ("line", "shown"),
    [(b"ok ::x\n", b"ok ::x\n"), (b"::error::x\n", b"| ::error::x\n"),
     (b"  ::add-mask::s\n", b"|   ::add-mask::s\n"),
     (b"a\r::warning::w\n", b"| a\\r::warning::w\n")],
)
def test_action_run_neutralizes_command_lines(line: bytes, shown: bytes) -> None:
    assert action_run.neutral_line(line) == shown


def test_annotations_only_on_changed_lines_when_the_report_has_line_ranges() -> None:
    report = with_findings(
        [finding("new.py", 2), finding("new.py", 9), finding("new.py", 0), finding("old.py", 1)],
        change={"base_ref": "main", "files": ["new.py", "old.py"],
                "lines": {"new.py": [[2, 3], [5, 5]]}},
    )
    shown = [c.split("::")[1] for c in annotation_commands(report).commands]
    assert shown == ["warning file=new.py,col=4,title=bandit B101",
                     "warning file=new.py,line=2,col=4,title=bandit B101"]


def test_the_annotation_cap_drops_the_least_severe_findings() -> None:
    """16 ruff findings used all 10 slots and both `eval` findings were dropped."""
    ruff = [{"tool": "ruff", "rule": "E501", "file": f"a{i:02}.py", "line": 1, "column": 1,
             "message": "line too long"} for i in range(16)]
    evals = [finding("z.py", line, severity="MEDIUM", rule="B307") for line in (4, 9)]
    lint = EvalMetric(type="lint_score", value=0.5, details={"items": ruff})
    security = EvalMetric(type="security_score", value=0.5, details={"items": evals})
    result = annotation_commands(gate_report(metrics=[lint, security]), cap=10)
    assert result.commands[:2] == ["::warning file=z.py,line=4,col=4,title=bandit B307::m",
                                   "::warning file=z.py,line=9,col=4,title=bandit B307::m"]
    assert len(result.commands) == 10
    assert result.omitted == 8


def _signoff_report(decision: Decision, *, failing_tests: bool = False) -> GateReport:
    from pytest_confgate.models import Signoffs, TestOutcomes

    tests = TestOutcomes(passed=1, failed=1 if failing_tests else 0)
    report = honest_report(tier="T3", tests=tests,
                           signoffs=Signoffs(required=2, approvers=["alice", "bob", "carol"]))
    assert report.decision is decision
    return report


def reviewed_pr(tmp_path: Path, server: FakeGitHubServer, *reviews: tuple[str, str]
                ) -> dict[str, str]:
    head = "c" * 40
    server.add_pull("o/r", 7, author="carol", head_sha=head)
    for login, commit in reviews:
        server.add_review("o/r", 7, login, "APPROVED", commit_id=commit)
    env = pr_env(tmp_path, server)
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps({"pull_request": {
        "number": 7, "head": {"sha": head}, "user": {"login": "carol"},
        "base": {"sha": BASE_SHA}}}), encoding="utf-8")
    return env


def test_publish_recounts_signoffs_from_reviews_and_rewrites_the_report(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = reviewed_pr(tmp_path, github_server, ("alice", "c" * 40), ("bob", "c" * 40))
    path = save(_signoff_report(Decision.NEEDS_SIGNOFF), tmp_path)
    code, _, err = run_publish(path, env, comment=False)
    assert code == 0, err
    assert "sign-offs from the reviews of #7: 2/2; decision needs_signoff -> pass" in err
    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    assert saved.decision is Decision.PASS
    assert saved.signoffs.approved_by == ["alice", "bob"]
    assert saved.reasons == []
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "pass"


def test_recounted_stale_and_self_approvals_do_not_count(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = reviewed_pr(tmp_path, github_server, ("alice", "c" * 40), ("bob", "0" * 40),
                      ("carol", "c" * 40))
    path = save(_signoff_report(Decision.NEEDS_SIGNOFF), tmp_path)
    code, _, err = run_publish(path, env, comment=False)
    assert code == 1
    assert "1/2; decision needs_signoff -> needs_signoff" in err
    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    assert saved.decision is Decision.NEEDS_SIGNOFF
    assert saved.signoffs.approved_by == ["alice"]
    assert {i["login"] for i in saved.signoffs.ignored} == {"bob", "carol"}
    assert saved.reasons == ["T3 needs 2 human sign-offs; got 1 (alice)"]


def test_reviews_never_turn_a_failing_gate_into_a_pass(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = reviewed_pr(tmp_path, github_server, ("alice", "c" * 40), ("bob", "c" * 40))
    path = save(_signoff_report(Decision.FAIL, failing_tests=True), tmp_path)
    code, _, err = run_publish(path, env, comment=False)
    assert code == 1
    assert "decision fail -> fail" in err
    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    assert saved.decision is Decision.FAIL
    assert saved.reasons == ["test_pass_rate: 1 test failed (max_failed_tests: 0)"]


def test_no_recount_without_a_token_and_the_report_is_left_alone(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = {**reviewed_pr(tmp_path, github_server, ("alice", "c" * 40)), "GITHUB_TOKEN": ""}
    path = save(_signoff_report(Decision.NEEDS_SIGNOFF), tmp_path)
    before = path.read_bytes()
    code, _, err = run_publish(path, env, comment=False)
    assert code == 1
    assert "sign-offs not recounted from reviews: no token" in err
    assert path.read_bytes() == before


def test_a_users_comment_with_our_marker_is_not_the_one_we_update(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    env = pr_env(tmp_path, github_server)
    github_server.comments["o/r", 7].append(
        {"id": 1, "body": MARKER + " spoofed", "user": {"login": "mallory", "type": "User"}})
    run_publish(save(gate_report(decision=Decision.FAIL), tmp_path), env)
    run_publish(save(honest_report(), tmp_path), env)
    comments = github_server.comments["o/r", 7]
    assert [c["user"]["login"] for c in comments] == ["mallory", "github-actions[bot]"]
    assert comments[0]["body"] == MARKER + " spoofed"
    assert "PASS" in comments[1]["body"]


def test_the_summary_links_the_runs_artifacts_only_when_the_url_is_githubs() -> None:
    """The Action kept SARIF and HTML, and the summary linked to nothing."""
    from pytest_confgate.github.publish import artifacts_url
    from pytest_confgate.report.markdown import render_markdown

    environ = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
               "GITHUB_RUN_ID": "4242"}
    url = artifacts_url(environ)
    assert url == "https://github.com/o/r/actions/runs/4242#artifacts"
    text = render_markdown(gate_report(), artifacts=url)
    assert f"[this run's artifacts]({url})" in text
    assert artifacts_url({**environ, "GITHUB_REPOSITORY": "o/r)[x](https://evil"}) is None
    assert artifacts_url({**environ, "GITHUB_SERVER_URL": "javascript:alert(1)"}) is None
    assert "artifacts" not in render_markdown(gate_report(), artifacts="https://x/a b)")


def _summary_is_a_folder(tmp_path: Path, env: dict[str, str]) -> str:
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path)
    return "GITHUB_STEP_SUMMARY"


def _summary_in_a_missing_folder(tmp_path: Path, env: dict[str, str]) -> str:
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "gone" / "summary.md")
    return "GITHUB_STEP_SUMMARY"


def _output_on_a_full_disk(tmp_path: Path, env: dict[str, str]) -> str:
    env["GITHUB_OUTPUT"] = "/dev/full"
    return "GITHUB_OUTPUT"


BROKEN_RUNNER_FILES = {
    "summary-is-a-folder": (_summary_is_a_folder, "Is a directory"),
    "summary-in-a-missing-folder": (_summary_in_a_missing_folder, "No such file or directory"),
    "output-on-a-full-disk": (_output_on_a_full_disk, "No space left on device"),
}


@pytest.mark.parametrize(
    ("spoil", "why"), BROKEN_RUNNER_FILES.values(), ids=BROKEN_RUNNER_FILES.keys()
)
@pytest.mark.parametrize("decision", [Decision.PASS, Decision.FAIL])
def test_a_runner_file_that_cannot_be_written_is_one_error_line_and_exit_2(
    tmp_path: Path, spoil: Any, why: str, decision: Decision
) -> None:
    if why.startswith("No space") and not Path("/dev/full").exists():
        pytest.skip("this system has no /dev/full")
    env = runner_env(tmp_path)
    variable = spoil(tmp_path, env)
    path = save(gate_report(decision=decision), tmp_path)

    code, out, err = run_publish(path, env, comment=False)

    assert code == 2
    [line] = [line for line in err.splitlines() if "ERROR" in line]
    assert line == (
        f"confgate: ERROR: {variable}={env[variable]} cannot be written ({why}); point it at "
        "a writable file (the runner sets it: a step that overrides it breaks it)"
    )
    assert "Traceback" not in err
    assert out.splitlines()[-1] == f"confgate: decision {decision.value}"
    if variable == "GITHUB_STEP_SUMMARY":  # the other file is still written
        assert parse_github_output((tmp_path / "out").read_text())["decision"] == decision.value
    else:
        assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith(MARKER)


def test_a_report_that_cannot_be_published_with_a_broken_runner_file_still_exits_2(
    tmp_path: Path,
) -> None:
    env = {**runner_env(tmp_path), "GITHUB_OUTPUT": "/dev/full"}
    if not Path("/dev/full").exists():
        pytest.skip("this system has no /dev/full")

    code, out, err = run_publish(tmp_path / "missing.json", env, comment=False)

    assert code == 2
    assert "GITHUB_OUTPUT=/dev/full cannot be written" in err
    assert out.splitlines()[-1] == "confgate: decision fail"


# -- issue 29: the gate job's result is an input; every publish path fails with a message ------

@pytest.mark.parametrize("result", ["failure", "cancelled", "skipped", "anything else"])
def test_a_gate_job_that_did_not_succeed_never_publishes_pass(
    tmp_path: Path, github_server: FakeGitHubServer, result: str
) -> None:
    env = pr_env(tmp_path, github_server)
    report = honest_report()
    assert report.decision is Decision.PASS

    code, _, err = run_publish(save(report, tmp_path), env, gate_result=result)

    assert code == 1
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "fail"
    [comment] = github_server.comments["o/r", 7]
    assert comment["body"].splitlines()[1].startswith("## ❌ confgate: FAIL")
    shown = result if result != "anything else" else "not a job result"
    assert f"gate job: its result is {shown}" in comment["body"]
    assert "decision pass -> fail" in err


def test_the_gate_result_comes_from_the_environment_and_success_changes_nothing(
    tmp_path: Path, github_server: FakeGitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = pr_env(tmp_path, github_server)
    path = save(honest_report(), tmp_path)
    assert run_publish(path, {**env, "CONFGATE_GATE_RESULT": "success"})[0] == 0
    for name, value in {**env, "CONFGATE_GATE_RESULT": "success"}.items():
        monkeypatch.setenv(name, value)
    assert main(["github", "publish", str(path), "--gate-result", "failure"]) == 1
    path = save(honest_report(), tmp_path)  # publish rewrote it to the verdict it published
    assert main(["github", "publish", str(path)]) == 0


def test_a_report_rewritten_after_the_gate_is_refused_and_never_passes(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    from pytest_confgate.models import TestOutcomes

    env = pr_env(tmp_path, github_server)
    report = honest_report(tests=TestOutcomes(passed=2, failed=1))
    metrics = [m.model_copy(update={"passed": None}) for m in report.metrics]
    forged = report.model_copy(update={"decision": Decision.PASS, "reasons": [],
                                       "conditions": [], "metrics": metrics})
    path = save(forged, tmp_path)

    code, out, _ = run_publish(path, env)

    assert code == 1
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "fail"
    body = github_server.comments["o/r", 7][0]["body"]
    assert body.splitlines()[1] == "## confgate: FAIL"
    assert "was altered after the gate decided" in body
    assert "test_pass_rate: 1 test failed (max_failed_tests: 0)" in body
    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    assert saved.decision is Decision.FAIL
    assert saved.reasons[0].startswith("report: altered after the gate decided")
    assert out.splitlines()[-1] == "confgate: decision fail"


@pytest.mark.parametrize("variable", ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"])
@pytest.mark.parametrize("ranked", [True, False], ids=["ranking", "no-ranking"])
def test_the_rank_actions_publish_step_says_one_line_when_a_runner_file_is_unwritable(
    tmp_path: Path, variable: str, ranked: bool
) -> None:
    import os
    import subprocess
    import sys

    if ranked:
        (tmp_path / "confgate-ranking.json").write_text(
            json.dumps({"winner": "a", "confidence": 0.9}), encoding="utf-8")
        (tmp_path / "confgate-ranking.md").write_text("## ranking\n", encoding="utf-8")
    env = {**os.environ, **runner_env(tmp_path), "CONFGATE_COMMENT": "false",
           variable: str(tmp_path)}  # a folder: cannot be appended to
    done = subprocess.run(
        [sys.executable, "-m", "pytest_confgate.github.action_rank", "publish"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    [line] = [line for line in done.stderr.splitlines() if line]
    assert line.startswith(f"confgate: ERROR: {variable}={tmp_path} cannot be written")


def test_publish_renders_html_and_sarif_again_from_the_verdict_it_published(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    """The HTML the comment links to said "got 0" after publish had counted the reviews."""
    from pytest_confgate.report.writers import render

    env = reviewed_pr(tmp_path, github_server, ("alice", "c" * 40), ("bob", "c" * 40))
    waiting = _signoff_report(Decision.NEEDS_SIGNOFF)
    path = save(waiting, tmp_path)
    (tmp_path / "confgate-report.html").write_text(render(waiting, "html"), encoding="utf-8")
    assert "got 0" in (tmp_path / "confgate-report.html").read_text(encoding="utf-8")

    assert run_publish(path, env, comment=False)[0] == 0

    page = (tmp_path / "confgate-report.html").read_text(encoding="utf-8")
    assert "confgate: PASS" in page
    assert "Counted: alice, bob (2 of 2)." in page
    assert "got 0" not in page
    published = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    assert (tmp_path / "confgate.sarif").read_text(encoding="utf-8") == render(published, "sarif")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "confgate: PASS" in summary
    assert "2/2 approved (alice, bob)" in summary


@pytest.mark.parametrize(
    ("said", "why"),
    [(None, None), ([], "the gate never printed its digest"),
     (["x" * 64], "its bytes are not those the gate printed the digest of"),
     (["same", "same"], "the gate's output printed 2 digests")],
    ids=["matches", "never-printed", "another-digest", "printed-twice"],
)
def test_the_gate_step_turns_a_report_changed_after_the_gate_into_a_fail(
    tmp_path: Path, said: list[str] | None, why: str | None
) -> None:
    path = save(honest_report(), tmp_path)
    digest = action_run.report_digest(path)
    lines = [action_run.DIGEST_LINE + (digest if s in (None, "same") else s).encode() + b"\n"
             for s in (said if said is not None else [None])]

    assert action_run._altered(path, lines) is (why is not None)

    saved = GateReport.model_validate_json(path.read_text(encoding="utf-8"))
    if why is None:
        assert saved == honest_report()
        return
    assert saved.decision is Decision.FAIL
    assert saved.reasons[0].startswith(f"report: confgate-report.json was changed after the "
                                       f"gate wrote it ({why})")
    assert saved.provenance == honest_report().provenance  # still this run's, as a fail


@pytest.mark.parametrize("name", ["decision\nevil", "decision=pass", "x<<EOF", "", "9x", " a"])
def test_an_output_name_github_would_misread_is_refused_before_anything_is_written(
    tmp_path: Path, name: str
) -> None:
    """Names were written as given: a newline, `=` or `<<` in one set outputs of its own."""
    path = tmp_path / "out"
    with pytest.raises(GitHubError, match="is not a name GitHub reads"):
        write_outputs(path, {"decision": "fail", name: "pass"})
    assert not path.exists()


# -- issue 34: the Action's publish step trusts only what confgate gate attested -------------

def test_supervised_publish_never_passes_a_report_confgate_gate_did_not_write(
    tmp_path: Path, github_server: FakeGitHubServer
) -> None:
    from pytest_confgate.gate.supervised import ATTESTED, SUPERVISOR

    env = pr_env(tmp_path, github_server)
    report = honest_report()
    assert run_publish(save(report, tmp_path), env, gate_result="success")[0] == 0
    (tmp_path / "out").write_text("", encoding="utf-8")

    code, _, err = run_publish(save(report, tmp_path), env, gate_result="success",
                               supervised=True)
    assert code == 1
    assert "was not written by `confgate gate`" in err
    assert parse_github_output((tmp_path / "out").read_text())["decision"] == "fail"

    stamp = Condition(metric=SUPERVISOR, name=ATTESTED, passed=True, blocking=False,
                      message="confgate gate: counted outside the test process")
    attested = report.model_copy(update={"conditions": [*report.conditions, stamp]})
    assert run_publish(save(attested, tmp_path), env, gate_result="success",
                       supervised=True)[0] == 0
