"""``confgate rank`` through ``cli.main``: inputs, outputs, feedback and exit statuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_confgate.cli import main

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

MODULE = 'def double(x: int) -> int:\n    """Twice x."""\n    return {body}\n'
TEST = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
JUDGE = '''import json, sys
text = sys.stdin.read()
first = text.index("## First solution")
second = text.index("## Second solution")
print(json.dumps({"winner": "first" if "x + x" in text[first:second] else "second"}))
'''


def project(root: Path, name: str, body: str) -> Path:
    folder = root / name
    (folder / "calc").mkdir(parents=True)
    (folder / "calc" / "__init__.py").write_text(MODULE.format(body=body))
    (folder / "tests").mkdir()
    (folder / "tests" / "test_calc.py").write_text(TEST)
    (folder / "ruff.toml").write_text('[lint]\nselect = ["E", "F"]\n')
    return folder


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project(tmp_path, "alpha", "x * 2")
    project(tmp_path, "beta", "x + x")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_candidate_that_does_not_exist_is_named_and_exits_2(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", "alpha", "missing-dir"]) == 2
    err = capsys.readouterr().err
    assert "candidate 'missing-dir'" in err
    assert "no such directory" in err


def test_two_candidates_with_the_same_name_are_refused(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project(workspace / "other", "alpha", "2 * x")
    assert main(["rank", "alpha", "other/alpha"]) == 2
    assert "both have the id 'alpha'" in capsys.readouterr().err


def test_markdown_on_stdout_is_the_seeds_comparison_and_progress_goes_to_stderr(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", "alpha", "beta", "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("## Solution Comparison Results\n")
    assert "| Category | " in out
    assert "| **Overall** |" in out
    assert "Not accepted: Auto-acceptance disabled" in out
    assert "confgate rank: [2/2]" in err
    assert "confgate rank feedback " in out


def test_html_and_json_outputs_and_feedback_round_trip(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", "alpha", "beta", "--format", "html", "-o", "out.html"]) == 0
    page = (workspace / "out.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page
    assert "<script" not in page
    assert main(["rank", "alpha", "--format", "json", "-o", "out.json"]) == 0
    result = json.loads((workspace / "out.json").read_text())
    assert set(result) >= {"ranking_id", "solutions", "winner", "confidence", "auto_accept"}
    (only,) = result["solutions"]
    assert set(only) >= {"solution_id", "rank", "score", "blocked", "categories", "strengths",
                         "weaknesses"}
    # issue 36: ranked alone, nothing but its own tests vouch for it: half the confidence,
    # and no winner
    assert (only["solution_id"], only["rank"], result["confidence"]) == ("alpha", 1, 0.5)
    assert result["winner"] is None
    capsys.readouterr()
    assert main(["rank", "feedback", result["ranking_id"], "--rejected-all"]) == 0
    assert "rejected all" in capsys.readouterr().out
    assert (workspace / ".confgate" / "rank.db").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rank", "feedback", "no-such-ranking", "--rejected-all"], "no ranking 'no-such-ranking'"),
        (["rank", "feedback", "r1", "--rejected-all", "--accepted-winner"], "exactly one of"),
        (["rank", "feedback", "--rejected-all"], "give exactly one RANKING_ID"),
        (["rank", "alpha", "--chose", "alpha"], "belong to `confgate rank feedback"),
        (["rank", "alpha", "--jobs", "0"], "--jobs 0"),
    ],
    ids=["unknown-ranking", "two-choices", "no-id", "choice-without-feedback", "zero-jobs"],
)
def test_bad_input_exits_2_with_a_message(
    workspace: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_an_undefined_evaluator_agent_is_a_usage_error(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "confgate.yml").write_text(
        "agents:\n  judge1: {provider: command, command: [python]}\n"
        "rank:\n  evaluator_agent: judge\n")
    assert main(["rank", "alpha", "beta"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("confgate.yml:4: rank.evaluator_agent: agent 'judge' is not defined "
                          "under agents (did you mean 'judge1'?)"), err


def test_the_evaluator_agent_compares_candidates_in_both_orders(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "judge.py").write_text(JUDGE)
    (workspace / "confgate.yml").write_text(
        f"agents:\n  judge:\n    provider: command\n    command: [{sys.executable!r}, judge.py]\n"
        "rank:\n  evaluator_agent: judge\n"
    )
    assert main(["rank", "alpha", "beta", "--format", "json", "-o", "out.json",
                 "--task", "double a number"]) == 0
    result = json.loads((workspace / "out.json").read_text())
    (llm,) = [c for c in result["comparisons"] if c["category"] == "llm"]
    assert llm["winner"] == "beta"
    by_id = {s["solution_id"]: s for s in result["solutions"]}
    assert by_id["beta"]["components"]["correctness"]["llm_preference"] == 1.0
    assert by_id["alpha"]["components"]["correctness"]["llm_preference"] == 0.0
    assert result["solutions"][0]["solution_id"] == "beta"
