"""Issue 15 end to end: a pull request that games its tests or its scanners is not a T1 pass.

Each test builds the base on ``main`` in a real git repository, makes the change on a feature
branch (committed or not) and runs ``pytest --confgate --confgate-base main`` through pytester.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import git, metric, past_the_trust_margin, read_report, write_config

HIGH = (
    "import subprocess  # nosec B404\n\n\n"
    "def run(cmd):\n    return subprocess.call(cmd, shell=True)\n"
)
SHELL_TEST = "\n\ndef test_run():\n    from calc.shell import run\n    assert run('true') == 0\n"


def _commit_on_main(repo: pytest.Pytester, message: str) -> None:
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", message)
    git(repo.path, "branch", "-f", "main")


def _tests(repo: pytest.Pytester) -> str:
    return (repo.path / "tests" / "test_calc.py").read_text(encoding="utf-8")


def _write_tests(repo: pytest.Pytester, text: str) -> None:
    (repo.path / "tests" / "test_calc.py").write_text(text, encoding="utf-8")


def _gate(repo: pytest.Pytester, *, own_process: bool = False) -> tuple[int, dict[str, Any]]:
    args = ("--confgate", "--confgate-base", "main")
    result = repo.runpytest_subprocess(*args) if own_process else repo.runpytest(*args)
    return int(result.ret), read_report(repo)


def _assert_flagged(report: dict[str, Any], file: str) -> dict[str, Any]:
    integrity = metric(report, "test_integrity")
    assert integrity["value"] == 0.0
    assert file in {item["file"] for item in integrity["details"]["items"]}
    assert not (report["decision"] == "pass" and report["risk_tier"] == "T1")
    return integrity


def test_deleting_a_test_needs_a_human(repo: pytest.Pytester) -> None:
    _write_tests(repo, _tests(repo).split("\n\ndef test_scale")[0] + "\n")
    code, report = _gate(repo)
    integrity = _assert_flagged(report, "tests/test_calc.py")
    [item] = integrity["details"]["items"]
    assert (item["rule"], item["line"], item["base"]) == ("test_removed", 8, "def test_scale():")
    assert report["risk_tier"] == "T2"
    assert report["decision"] == "needs_signoff"
    assert code == 1
    assert "test tests/test_calc.py::test_scale was removed" in report["risk_reason"]
    assert "tests/test_calc.py:8" in report["risk_reason"]


def test_a_skip_mark_on_a_committed_change_needs_a_human(repo: pytest.Pytester) -> None:
    text = "import pytest\n" + _tests(repo).replace(
        "def test_add", "@pytest.mark.skip(reason='flaky')\ndef test_add"
    )
    _write_tests(repo, text)
    git(repo.path, "commit", "-q", "-am", "skip a flaky test")
    code, report = _gate(repo)
    integrity = _assert_flagged(report, "tests/test_calc.py")
    assert [i["rule"] for i in integrity["details"]["items"]] == ["skip_added"]
    assert report["tests"]["skipped"] == 1
    assert (code, report["risk_tier"], report["decision"]) == (1, "T2", "needs_signoff")


def test_an_added_nosec_hides_neither_the_high_finding_nor_itself(repo: pytest.Pytester) -> None:
    (repo.path / "calc" / "shell.py").write_text(HIGH, encoding="utf-8")
    _write_tests(repo, _tests(repo) + SHELL_TEST)
    _commit_on_main(repo, "a shell runner with a HIGH finding")
    (repo.path / "calc" / "shell.py").write_text(
        HIGH.replace("shell=True)\n", "shell=True)  # nosec\n"), encoding="utf-8"
    )
    for run in ("cold", "warm"):  # the content cache must not bring the hidden finding back
        # Each run in its own process, as each gate run is: in one process, entries an earlier
        # session's helper wrote are read only if this process vouches for them (cache_trust).
        code, report = _gate(repo, own_process=True)
        integrity = _assert_flagged(report, "calc/shell.py")
        [item] = integrity["details"]["items"]
        assert (item["rule"], item["line"]) == ("suppression_added", 5), run
        security = metric(report, "security_score")
        high = [i for i in security["details"]["items"] if i["severity"] == "HIGH"]
        assert [(i["rule"], i["file"], i["line"]) for i in high] == [("B602", "calc/shell.py", 5)]
        assert security["details"]["by_severity"]["HIGH"] == 1
        assert security["details"]["suppressed_by_change"] == 1
        assert report["decision"] == "fail"
        assert code == 1
        high_reason = "security_score: 1 HIGH-severity finding"
        assert any(r.startswith(high_reason) for r in report["reasons"])
        past_the_trust_margin(repo.path / ".confgate" / "cache")
    assert security["details"]["cache"]["hits"] >= 1  # the warm run still used the cache


def test_the_base_nosec_keeps_working(repo: pytest.Pytester) -> None:
    (repo.path / "calc" / "shell.py").write_text(
        HIGH.replace("shell=True)\n", "shell=True)  # nosec\n"), encoding="utf-8"
    )
    _write_tests(repo, _tests(repo) + SHELL_TEST)
    _commit_on_main(repo, "a reviewed shell runner")
    (repo.path / "calc" / "shell.py").write_text(
        HIGH.replace("shell=True)\n", "shell=True)  # nosec\n") + "\n\nLIMIT = 3\n",
        encoding="utf-8",
    )
    code, report = _gate(repo)
    assert metric(report, "test_integrity")["value"] == 1.0
    assert metric(report, "security_score")["details"]["by_severity"]["HIGH"] == 0
    assert (code, report["decision"]) == (0, "pass")


def test_an_added_noqa_still_counts_its_violation(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                       "    - {type: lint_score, max_lint_violations: 0}\n")
    _commit_on_main(repo, "strict lint on main")
    init = repo.path / "calc" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "import os  # noqa: F401\n")
    code, report = _gate(repo)
    lint = metric(report, "lint_score")
    assert [(i["rule"], i["file"]) for i in lint["details"]["items"]] == [
        ("F401", "calc/__init__.py")
    ]
    assert "hidden by a `# noqa` this change added" in lint["details"]["items"][0]["message"]
    assert report["decision"] == "fail"
    assert _assert_flagged(report, "calc/__init__.py")["details"]["by_rule"] == {
        "suppression_added": 1
    }
    assert code == 1


def test_an_unrelated_clean_change_passes_with_integrity_one(repo: pytest.Pytester) -> None:
    init = repo.path / "calc" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\n\ndef double(x):\n    return 2 * x\n")
    _write_tests(repo, _tests(repo).replace("from calc import add, scale",
                                            "from calc import add, double, scale")
                 + "\n\ndef test_double():\n    assert double(2) == 4\n")
    code, report = _gate(repo)
    integrity = metric(report, "test_integrity")
    assert (integrity["value"], integrity["status"]) == (1.0, "ok")
    assert integrity["details"]["files_compared"] == 2
    assert (code, report["decision"], report["risk_tier"]) == (0, "pass", "T1")
    assert repo.runpytest("--confgate").ret == 0  # without a base there is nothing to compare
    assert "test_integrity" not in {m["type"] for m in read_report(repo)["metrics"]}


def test_max_test_tampering_zero_makes_deleting_a_test_a_failure(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                       "    - {type: test_integrity, max_test_tampering: 0}\n")
    _commit_on_main(repo, "no tampering, ever")
    _write_tests(repo, _tests(repo).split("\n\ndef test_scale")[0] + "\n")
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    report = read_report(repo)
    assert (result.ret, report["decision"], report["risk_tier"]) == (1, "fail", "T1")
    assert report["reasons"][0] == (
        "test_integrity: 1 sign of tampering with tests or checks (max_test_tampering: 0): "
        "test_removed at tests/test_calc.py:8"
    )
    result.stdout.fnmatch_lines(
        ["test_integrity*1 sign of tampering*max 0 tampering*FAIL*1 sign in 1 changed file*"]
    )


def test_a_team_can_switch_it_off_or_make_it_advisory(repo: pytest.Pytester) -> None:
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                       "    - {type: test_integrity, advisory: true}\n")
    _commit_on_main(repo, "advisory integrity")
    _write_tests(repo, _tests(repo).split("\n\ndef test_scale")[0] + "\n")
    code, report = _gate(repo)
    assert metric(report, "test_integrity")["value"] == 0.0
    assert (code, report["decision"], report["risk_tier"]) == (0, "pass", "T1")

    git(repo.path, "stash", "-q")
    write_config(repo, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                       "    - {type: test_integrity, enabled: false}\n")
    _commit_on_main(repo, "integrity off")
    git(repo.path, "stash", "pop", "-q")
    code, report = _gate(repo)
    assert "test_integrity" not in {m["type"] for m in report["metrics"]}
    assert (code, report["decision"]) == (0, "pass")
