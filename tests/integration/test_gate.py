"""`pytest --confgate` end to end on a real project: real pytest, coverage.py, ruff, bandit."""

from __future__ import annotations

import json

import pytest
from conftest import fake_tool, git, metric, read_report, write_config

REPORT_KEYS = {
    "schema_version", "tool_version", "project", "risk_tier", "decision", "reasons",
    "metrics", "tests", "confidence", "signoffs",
}


def test_a_clean_project_passes_with_a_report_of_every_metric(project: pytest.Pytester) -> None:
    result = project.runpytest("--confgate")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*- confgate -*",
            "metric*value*limit*verdict",
            "test_pass_rate*0 failed*max 0 failed*PASS*(2 passed, 0 failed, 0 errors)",
            "test_coverage*100.00%*(coverage: 7/7 lines)",
            "lint_score*100.00%*(0 violations in 1 file)",
            "security_score*0 HIGH*max 0 HIGH*PASS*(0 findings in 1 file)",
            "risk tier T1 (the default tier*",
            "confgate: PASS",
            "report: confgate-report.json",
        ]
    )
    report = read_report(project)
    assert set(report) >= REPORT_KEYS
    assert report["decision"] == "pass"
    assert report["risk_tier"] == "T1"
    assert report["confidence"] is None
    assert report["tests"] == {
        "passed": 2, "failed": 0, "errors": 0, "skipped": 0, "xfailed": 0, "xpassed": 0,
        "duration_s": report["tests"]["duration_s"],
    }
    assert [m["type"] for m in report["metrics"]] == [
        "test_pass_rate", "test_coverage", "lint_score", "security_score"
    ]
    for entry in report["metrics"]:
        assert {"type", "value", "status", "weight", "threshold", "details"} <= set(entry)
        assert entry["status"] == "ok"


def test_coverage_counts_import_time_lines_like_coverage_run(project: pytest.Pytester) -> None:
    project.runpytest("--confgate")
    details = metric(read_report(project), "test_coverage")["details"]
    # calc/__init__.py has 7 statements; 3 run only at import (docstring, SCALE, two defs).
    assert details["num_statements"] == 7
    assert details["covered_lines"] == 7
    assert details["tool"] == "coverage.py"


def test_a_failing_test_fails_the_gate_with_the_reason_first(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_broken.py").write_text(
        "def test_broken():\n    assert 1 == 2\n", encoding="utf-8"
    )
    result = project.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(project)
    assert report["decision"] == "fail"
    assert report["reasons"][0] == "test_pass_rate: 1 test failed (max_failed_tests: 0)"
    assert metric(report, "test_pass_rate")["value"] == pytest.approx(2 / 3)
    result.stdout.fnmatch_lines(["confgate: FAIL", "  1. test_pass_rate: 1 test failed, max 0",
                                 "     fix: make them pass: pytest's output names each one"])


def test_tests_passing_but_gate_failing_exits_1_and_says_so_last(
    project: pytest.Pytester,
) -> None:
    project.path.joinpath("calc", "extra.py").write_text(
        "def unused(x):\n    y = x * 2\n    return y\n", encoding="utf-8"
    )
    write_config(project, "gate:\n  metrics: [{type: test_coverage, min: 0.9}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    cov = metric(read_report(project), "test_coverage")
    assert cov["value"] == pytest.approx(7 / 10)  # extra.py is never imported: 0 of 3
    assert cov["threshold"] == 0.9
    last = [line for line in result.outlines if line.strip()][-1]
    assert last == (
        "confgate: FAIL: the tests passed but the gate did not: "
        "test_coverage: 70.00%, min 90.00%"
    )


@pytest.mark.parametrize(
    ("tier", "signoffs", "ret", "decision"),
    [
        ("T0", "", 0, "pass"),
        ("T1", "", 1, "fail"),
        ("T2", "alice", 1, "fail"),
        ("T3", "alice,bob", 1, "fail"),
    ],
    ids=["t0-advisory", "t1-blocks", "t2-evidence-first", "t3-evidence-first"],
)
def test_each_tier_with_evidence_below_its_floor(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    tier: str, signoffs: str, ret: int, decision: str,
) -> None:
    monkeypatch.setenv("CONFGATE_SIGNOFFS", signoffs)
    write_config(
        project, f"gate:\n  risk_tier: {tier}\n  metrics: [{{type: test_coverage, min: 1.0}}]\n"
    )
    extra = project.path / "calc" / "extra.py"
    extra.write_text("def f():\n    return 1\n", encoding="utf-8")
    result = project.runpytest("--confgate")
    assert result.ret == ret
    assert read_report(project)["decision"] == decision


@pytest.mark.parametrize(
    ("tier", "signoffs", "ret", "decision", "approved"),
    [
        ("T2", "", 1, "needs_signoff", []),
        ("T2", "alice", 0, "pass", ["alice"]),
        ("T2", "mallory", 1, "needs_signoff", []),
        ("T3", "alice", 1, "needs_signoff", ["alice"]),
        ("T3", "alice,bob", 0, "pass", ["alice", "bob"]),
    ],
    ids=["t2-none", "t2-approver", "t2-not-an-approver", "t3-one", "t3-two"],
)
def test_risky_tiers_need_signoffs_from_approvers(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    tier: str, signoffs: str, ret: int, decision: str, approved: list[str],
) -> None:
    monkeypatch.setenv("CONFGATE_SIGNOFFS", signoffs)
    write_config(
        project,
        f"gate:\n  risk_tier: {tier}\n  policy:\n    signoff: {{approvers: [alice, bob]}}\n",
    )
    result = project.runpytest("--confgate")
    assert result.ret == ret
    report = read_report(project)
    assert report["decision"] == decision
    assert report["signoffs"]["approved_by"] == approved
    assert report["signoffs"]["required"] == {"T2": 1, "T3": 2}[tier]
    if decision == "needs_signoff":
        needed = {"T2": 1, "T3": 2}[tier]
        result.stdout.fnmatch_lines(
            [f"confgate: NEEDS SIGN-OFF: *sign-offs: {needed} needed for tier {tier}, got *"]
        )


def test_a_high_severity_bandit_finding_blocks_by_default(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "shell.py").write_text(
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n",
        encoding="utf-8",
    )
    result = project.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(project)
    security = metric(report, "security_score")
    assert security["details"]["by_severity"]["HIGH"] == 1
    assert security["details"]["files_scanned"] == 2
    assert any(r.startswith("security_score: 1 HIGH-severity finding") for r in report["reasons"])
    assert "B602 at calc/shell.py:5" in " ".join(report["reasons"])


def test_lint_violations_are_counted_with_the_projects_own_ruff_config(
    project: pytest.Pytester,
) -> None:
    messy = project.path / "calc" / "messy.py"
    messy.write_text("import os\nimport sys\n", encoding="utf-8")
    project.path.joinpath("ruff.toml").write_text('[lint]\nselect = ["F401"]\n', encoding="utf-8")
    write_config(project, "gate:\n  metrics: [{type: lint_score, max_lint_violations: 1}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    lint = metric(read_report(project), "lint_score")
    assert lint["details"]["violations"] == 2
    assert lint["details"]["files_checked"] == 2
    assert lint["value"] == 0.5
    assert {item["rule"] for item in lint["details"]["items"]} == {"F401"}


def test_a_hard_limit_that_fails_shows_fail_and_its_limit_on_the_metric_row(
    project: pytest.Pytester,
) -> None:
    """`lint_score 80.00% - ok (1 violation)` while `max_lint_violations: 0` failed."""
    project.path.joinpath("calc", "messy.py").write_text("import os\n", encoding="utf-8")
    project.path.joinpath("ruff.toml").write_text('[lint]\nselect = ["F401"]\n', encoding="utf-8")
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, "
                 "{type: lint_score, max_lint_violations: 0}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(project)
    assert metric(report, "lint_score")["passed"] is False
    assert metric(report, "lint_score")["limit"] == "max 0 violations"
    assert metric(report, "test_pass_rate")["passed"] is True
    row = next(line for line in result.outlines if line.startswith("lint_score "))
    assert "max 0 violations FAIL" in " ".join(row.split()), row
    assert " ok" not in row
    result.stdout.fnmatch_lines(["test_pass_rate*0 failed*max 0 failed*PASS*"])


def test_quiet_shows_the_verdict_and_only_the_failing_rows(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "messy.py").write_text("import os\n", encoding="utf-8")
    project.path.joinpath("ruff.toml").write_text('[lint]\nselect = ["F401"]\n', encoding="utf-8")
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, "
                 "{type: lint_score, max_lint_violations: 0}]\n")
    result = project.runpytest("--confgate", "-q")
    assert result.ret == 1
    assert any(line.startswith("lint_score ") and "FAIL" in line for line in result.outlines)
    assert not any(line.startswith("test_pass_rate ") for line in result.outlines)
    result.stdout.fnmatch_lines(["confgate: FAIL", "  1. lint_score: 1 violation, max 0",
                                 "     fix: fix at least 1, first F401 at calc/messy.py:1 *"])


@pytest.mark.parametrize(
    ("kind", "body", "reason"),
    [
        ("lint_score", "print('not json at all')\nraise SystemExit(1)\n", "*ruff*"),
        ("lint_score", "import sys\nsys.stderr.write('config error')\nraise SystemExit(2)\n",
         "*ruff*"),
        ("security_score", "print('{{{')\n", "*bandit*"),
        ("security_score", "raise SystemExit(3)\n", "*bandit*"),
    ],
    ids=["ruff-garbage", "ruff-exit-2", "bandit-garbage", "bandit-exit-3"],
)
def test_a_tool_that_misbehaves_fails_the_gate_closed(
    project: pytest.Pytester, kind: str, body: str, reason: str
) -> None:
    command = fake_tool(project, "fake", body)
    write_config(project, f"gate:\n  metrics: [{{type: {kind}, command: {json.dumps(command)}}}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    report = read_report(project)
    assert metric(report, kind)["status"] == "error"
    assert report["decision"] == "fail"
    assert report["reasons"][0].startswith(f"{kind}: evidence error: ")
    result.stdout.fnmatch_lines([f"{kind}*-*error*{reason}"])


def test_a_missing_tool_fails_the_gate_closed(project: pytest.Pytester) -> None:
    missing = str(project.path / "no-such-ruff")
    write_config(project, f"gate:\n  metrics: [{{type: lint_score, command: [{missing}]}}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    lint = metric(read_report(project), "lint_score")
    assert lint["status"] in ("unavailable", "error")
    assert lint["value"] is None


def test_ruff_exiting_2_on_a_broken_project_config_is_an_error(project: pytest.Pytester) -> None:
    project.path.joinpath("ruff.toml").write_text("[lint]\nselect = 12\n", encoding="utf-8")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    lint = metric(read_report(project), "lint_score")
    assert lint["status"] == "error"
    assert "ruff" in lint["reason"]


def test_a_file_bandit_cannot_parse_is_an_error_not_a_clean_scan(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "broken.py").write_text("def oops(:\n", encoding="utf-8")
    project.runpytest("--confgate")
    security = metric(read_report(project), "security_score")
    assert security["status"] == "error"
    assert "calc/broken.py" in security["reason"]


def test_coverage_with_no_data_is_an_error(project: pytest.Pytester) -> None:
    project.mkpydir("unused")
    project.path.joinpath("unused", "mod.py").write_text("X = 1\n", encoding="utf-8")
    write_config(project, "source: [unused]\ngate:\n  metrics: [{type: test_coverage}]\n")
    result = project.runpytest("--confgate")
    assert result.ret == 1
    cov = metric(read_report(project), "test_coverage")
    assert cov["status"] == "error"
    assert cov["reason"] == "coverage.py collected no data: the tests never ran code in unused"


def test_branch_coverage_counts_partial_branches(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_calc.py").write_text(
        "from calc import scale\n\n\ndef test_scale():\n    assert scale(2) == 20\n",
        encoding="utf-8",
    )
    write_config(project, "gate:\n  metrics: [{type: test_coverage, branch: true}]\n")
    project.runpytest("--confgate")
    details = metric(read_report(project), "test_coverage")["details"]
    assert details["num_branches"] == 2
    assert details["covered_branches"] == 1
    covered = details["covered_lines"] + details["covered_branches"]
    total = details["num_statements"] + details["num_branches"]
    assert metric(read_report(project), "test_coverage")["value"] == pytest.approx(covered / total)


def test_skips_xfails_and_collection_errors_are_counted(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_more.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_skipped():\n    pass\n\n"
        "@pytest.mark.xfail\ndef test_xfail():\n    assert False\n",
        encoding="utf-8",
    )
    project.path.joinpath("tests", "test_import_error.py").write_text(
        "import does_not_exist\n", encoding="utf-8"
    )
    result = project.runpytest("--confgate", "--continue-on-collection-errors")
    assert result.ret == 1
    tests = read_report(project)["tests"]
    assert (tests["passed"], tests["errors"], tests["skipped"], tests["xfailed"]) == (2, 1, 1, 1)


def test_pyproject_tool_confgate_is_read(project: pytest.Pytester) -> None:
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.confgate]\nproject = "from-pyproject"\n\n[tool.confgate.gate]\nrisk_tier = "T0"\n',
        encoding="utf-8",
    )
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert (report["project"], report["risk_tier"]) == ("from-pyproject", "T0")


def test_report_path_option_writes_where_asked(project: pytest.Pytester) -> None:
    result = project.runpytest("--confgate", "--confgate-report=out/gate.json")
    assert result.ret == 0
    assert read_report(project, "out/gate.json")["decision"] == "pass"
    assert not (project.path / "confgate-report.json").exists()


def test_an_invalid_config_stops_pytest_before_any_test_runs(project: pytest.Pytester) -> None:
    write_config(project, "gate:\n  risk_tier: T7\n  metrics:\n    - {type: lint_scor}\n")
    result = project.runpytest("--confgate")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "ERROR: *confgate.yml:2: gate.risk_tier: *'T0', 'T1', 'T2' or 'T3'*(got 'T7')",
            "ERROR: *confgate.yml:4: gate.metrics[[]0]: unknown metric type 'lint_scor'*"
            "did you mean 'lint_score'*",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "passed" not in result.stdout.str()
    assert not (project.path / "confgate-report.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--confgate-config=missing.yml"], "*missing.yml: no such configuration file*"),
        (["--confgate-report=../outside.json"], "*outside the working tree*"),
    ],
    ids=["missing-config", "report-outside-tree"],
)
def test_bad_options_are_usage_errors(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    result = project.runpytest("--confgate", *args)
    assert result.ret == 4
    result.stderr.fnmatch_lines([message])


def test_a_path_option_given_as_two_arguments_is_refused_before_the_rootdir_moves(
    project: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``--confgate-report PATH`` with PATH outside the project made pytest take PATH for a
    test path when it picked its rootdir: the rootdir moved up to a common ancestor, the
    project's pyproject.toml was no longer read and collection broke."""
    outside = tmp_path_factory.mktemp("elsewhere") / "report.json"
    outside.write_text("{}", encoding="utf-8")

    result = project.runpytest_subprocess("--confgate", "--confgate-report", str(outside))

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --confgate-report {outside}: write "
                                 f"--confgate-report={outside} (one argument)*"])
    assert outside.read_text(encoding="utf-8") == "{}"
    result = project.runpytest_subprocess("--confgate", "--confgate-report=out.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"rootdir: {project.path}"])


def test_sources_the_configuration_set_are_not_said_to_be_the_gates_choice(
    project: pytest.Pytester,
) -> None:
    """``source:`` in confgate.yml printed "(chosen by confgate)", as if the gate had guessed."""
    write_config(project, "source: [calc]\n")
    result = project.runpytest("--confgate", "-p", "no:cacheprovider")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["measured sources: calc (chosen by source: in the configuration)"])
    project.path.joinpath("confgate.yml").unlink()
    result = project.runpytest("--confgate", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["measured sources: calc (chosen by confgate)"])


def test_a_yaml_tag_that_builds_objects_is_refused(project: pytest.Pytester) -> None:
    write_config(project, "gate: !!python/object/apply:os.system ['touch pwned']\n")
    result = project.runpytest("--confgate")
    assert result.ret == 4
    assert not (project.path / "pwned").exists()
    result.stderr.fnmatch_lines(["*confgate.yml:1: gate: the tag*is not allowed*"])


def test_without_the_flag_the_plugin_does_nothing_and_imports_nothing_heavy(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(
        """
        import sys

        def pytest_sessionfinish(session):
            heavy = [m for m in ("pydantic", "yaml", "coverage", "pytest_confgate.gate.engine")
                     if m in sys.modules]
            with open("imported.txt", "w") as handle:
                handle.write(",".join(heavy))
        """
    )
    write_config(project, "gate: {risk_tier: T3}\n")
    result = project.runpytest_subprocess()
    assert result.ret == 0
    assert (project.path / "imported.txt").read_text() == ""
    assert not (project.path / "confgate-report.json").exists()
    assert "confgate" not in result.stdout.str().split("plugins:")[-1].split("\n", 1)[-1]


def test_an_unwritable_report_fails_closed_without_a_traceback(project: pytest.Pytester) -> None:
    project.path.joinpath("out").write_text("a file where a folder should be", encoding="utf-8")
    result = project.runpytest("--confgate", "--confgate-report=out/report.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["confgate: ERROR: *out/report.json: the report cannot be written*"]
    )
    assert "confgate: PASS" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str()


def test_a_waiver_excuses_a_high_finding_until_it_expires(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "shell.py").write_text(
        "import subprocess\n\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n",
        encoding="utf-8",
    )
    waiver = "{rule: B602, paths: ['calc/shell.py'], reason: 'sandboxed, ticket 7', expires: %s}"
    write_config(project, f"gate:\n  policy:\n    waivers: [{waiver % '2999-01-01'}]\n")
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert report["waivers"][0]["excused"] == 1
    assert report["waivers"][0]["status"] == "active"

    write_config(project, f"gate:\n  policy:\n    waivers: [{waiver % '2020-01-01'}]\n")
    assert project.runpytest("--confgate").ret == 1
    reasons = read_report(project)["reasons"]
    assert reasons[0].startswith("security_score: 1 HIGH-severity finding")
    assert (
        "advisory: waiver for B602 (calc/shell.py) expired on 2020-01-01: "
        "it excuses nothing any more"
    ) in reasons


def test_per_path_coverage_floors_name_each_failing_path(project: pytest.Pytester) -> None:
    project.path.joinpath("calc", "extra.py").write_text(
        "def unused(x):\n    return x\n", encoding="utf-8"
    )
    write_config(
        project,
        "gate:\n  metrics:\n    - type: test_coverage\n      paths: {'calc/__init__.py': 0.9, "
        "'calc/extra.py': 0.9, 'nowhere/**': 0.5}\n",
    )
    assert project.runpytest("--confgate").ret == 1
    report = read_report(project)
    assert report["reasons"] == [
        "test_coverage[calc/extra.py]: 0.00% is below the minimum 90.00%",
        "test_coverage[nowhere/**]: no measured file matches; fix the path or remove the floor",
    ]
    passed = [c["message"] for c in report["conditions"] if c["passed"] and c["name"] == "min"]
    assert passed == ["test_coverage[calc/__init__.py]: 100.00% meets the minimum 90.00%"]


def test_subtests_are_counted_as_pytests_summary_counts_them(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_sub.py").write_text(
        "import unittest\n\n\n"
        "class TestMany(unittest.TestCase):\n"
        "    def test_each(self):\n"
        "        for i in range(5):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertLess(i, 10)\n\n"
        "    def test_one_bad(self):\n"
        "        for i in range(3):\n"
        "            with self.subTest(i=i):\n"
        "                self.assertNotEqual(i, 1)\n",
        encoding="utf-8",
    )
    result = project.runpytest("--confgate")
    outcomes = result.parseoutcomes()
    tests = read_report(project)["tests"]
    assert (tests["passed"], tests["failed"]) == (outcomes["passed"], outcomes["failed"])
    # pytest says "1 failed, 4 passed": four test functions, one failing subtest. The six
    # passing subtests are not tests of their own; counting them would give 10 passed.
    assert (tests["passed"], tests["failed"]) == (4, 1)


def test_coverage_path_remapping_in_the_projects_config_still_gives_figures(
    project: pytest.Pytester,
) -> None:
    project.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.paths]\nsource = ["calc", "*/site-packages/calc"]\n',
        encoding="utf-8",
    )
    assert project.runpytest("--confgate").ret == 0
    cov = metric(read_report(project), "test_coverage")
    assert cov["status"] == "ok"
    assert (cov["details"]["covered_lines"], cov["details"]["num_statements"]) == (7, 7)


def test_compare_prints_each_metrics_change_against_a_saved_base_report(
    project: pytest.Pytester,
) -> None:
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage}]\n")
    project.runpytest("--confgate", "--confgate-report=base.json")
    project.path.joinpath("calc", "extra.py").write_text(
        "def unused(x):\n    return x\n", encoding="utf-8"
    )
    result = project.runpytest("--confgate", "--confgate-compare=base.json")
    result.stdout.fnmatch_lines([
        "compared with base.json*",
        "  test_pass_rate: 100.00% (base 100.00%, unchanged)",
        "  test_coverage: 77.78% (base 100.00%, -22.22 pts)",
    ])
    result = project.runpytest("--confgate", "--confgate-compare=nowhere.json")
    result.stdout.fnmatch_lines(["confgate: --confgate-compare: nowhere.json: no such file*"])


def test_the_project_is_named_as_pyproject_names_it(project: pytest.Pytester) -> None:
    """The report named the folder (`test_the_project_is_named...0`), not the project."""
    pyproject = project.path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "storage-svc"\nversion = "1"\n\n'
                         + pyproject.read_text(encoding="utf-8"), encoding="utf-8")
    project.runpytest("--confgate")
    assert read_report(project)["project"] == "storage-svc"


@pytest.mark.parametrize(
    ("tier", "threshold", "signoffs", "advance"),
    [
        ("T1", 0.5, "", True),
        ("T1", 0.99, "", True),
        ("T2", 0.5, "alice", True),
        ("T3", 0.5, "alice,bob", False),
    ],
    ids=["t1-confident", "t1-at-0.99", "t2-signed", "t3-never"],
)
def test_a_confident_pass_auto_advances_where_the_tier_allows(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    tier: str, threshold: float, signoffs: str, advance: bool,
) -> None:
    """SPEC 6 / issue 17: ``auto_advance`` was always false, the advisory never reached decide."""
    monkeypatch.setenv("CONFGATE_SIGNOFFS", signoffs)
    write_config(project, f"gate:\n  risk_tier: {tier}\n  confidence: "
                          f"{{enabled: true, threshold: {threshold}}}\n")
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert report["decision"] == "pass"
    assert report["confidence"]["advisory"] == "confidence threshold met"
    assert report["auto_advance"] is advance


def test_a_pass_below_the_confidence_threshold_does_not_auto_advance(
    project: pytest.Pytester,
) -> None:
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage}]\n"
                          "  confidence: {enabled: true, mode: raw, threshold: 1.0}\n")
    project.path.joinpath("calc", "extra.py").write_text("def f():\n    return 1\n")
    assert project.runpytest("--confgate").ret == 0
    report = read_report(project)
    assert (report["decision"], report["confidence"]["advisory"]) == ("pass", None)
    assert report["auto_advance"] is False


@pytest.mark.parametrize("mode", ["composite", "raw"])
def test_the_test_integrity_the_gate_adds_does_not_move_the_confidence_score(
    repo: pytest.Pytester, mode: str
) -> None:
    """Issue 30: with a base known, the unlisted test_integrity (1.0) was averaged in."""
    write_config(
        repo,
        "gate:\n  metrics:\n"
        "    - {type: test_pass_rate, weight: 0.5}\n"
        "    - {type: test_coverage, weight: 0.5, min: 0.1}\n"
        f"  confidence: {{enabled: true, mode: {mode}, threshold: 0.99}}\n",
    )
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "the configuration, on main")
    git(repo.path, "branch", "-f", "main")
    repo.path.joinpath("calc", "extra.py").write_text(
        "def f(x):\n    if x:\n        return 1\n    return 2\n", encoding="utf-8"
    )
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "an untested module")

    result = repo.runpytest("--confgate", "--confgate-base", "main")

    assert result.ret == 0, result.stdout.str()
    report = read_report(repo)
    assert metric(report, "test_integrity")["value"] == 1.0  # it was measured and decides
    passed, covered = (metric(report, k)["value"] for k in ("test_pass_rate", "test_coverage"))
    assert covered < 1.0
    confidence = report["confidence"]
    assert set(confidence["scores"]) == {"test_pass_rate", "test_coverage"}
    if mode == "composite":
        assert confidence["score"] == pytest.approx((0.5 * passed + 0.5 * covered) / 1.0)
    else:
        assert confidence["score"] == pytest.approx(min(passed, covered))
