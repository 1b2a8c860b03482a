"""Seed 003's confidence block and template, end to end: `pytest --confgate` with the real
OpenAI SDK talking to a local fake server (issue 17)."""

from __future__ import annotations

import textwrap

import pytest
from conftest import git, read_report, write_config
from fakes.llm_servers import FakeOpenAIServer
from fakes.seed003 import SEED_BLOCK, SEED_TEMPLATE

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter


def _configure(project: pytest.Pytester, server: FakeOpenAIServer, prompt: str) -> None:
    """The seed's block as written (plus our ``prompt``), committed on ``main`` with a change
    on top, so the evaluator has a diff to read."""
    write_config(
        project,
        textwrap.dedent(f"""\
        agents:
          mini: {{provider: openai, model: gpt-4o-mini, base_url: "{server.base_url}",
                  timeout_ms: 5000, max_retries: 0}}
        gate:
          metrics: [{{type: test_pass_rate}}]
        """)
        + SEED_BLOCK.replace("  method: hybrid\n", f"  method: hybrid\n  prompt: {prompt}\n"),
    )
    git(project.path, "add", "-A")
    git(project.path, "commit", "-q", "-m", "gate config")
    git(project.path, "branch", "-f", "main", "HEAD")
    calc = project.path / "calc" / "__init__.py"
    calc.write_text(calc.read_text() + "\n\ndef double(x):\n    return 2 * x\n")
    git(project.path, "commit", "-q", "-am", "Add double()")


def test_the_seeds_block_and_template_score_a_bare_number(
    repo: pytest.Pytester, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17's Why: the block did not load, and "0.85" answering "Return ONLY a number"
    was a failure that fell back to the formula."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    repo.path.joinpath("seed-prompt.txt").write_text(SEED_TEMPLATE, encoding="utf-8")
    _configure(repo, openai_server, "seed-prompt.txt")
    openai_server.enqueue(text="0.85")
    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 0
    confidence = read_report(repo)["confidence"]
    breakdown = confidence["breakdown"]
    assert "fallback" not in breakdown
    assert breakdown["llm_score"] == 0.85
    assert confidence["score"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.85)
    assert breakdown["llm"]["answer_format"] == "number"
    assert breakdown["seed_spelling"].startswith(
        "this configuration is written in the `confidence_calculation` spelling"
    )
    sent = openai_server.requests[0].body
    assert sent["model"] == "gpt-4o-mini"
    assert "canary:" not in str(sent["messages"])


def test_under_the_json_template_a_bare_number_is_refused(
    repo: pytest.Pytester, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the answer must echo the call's canary, an injected or copied "0.99" is no answer."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    repo.path.joinpath("json-prompt.txt").write_text(
        "Task: {task}\nEvidence: {metrics}\nChange: {diff}\n"
        'Return only a JSON object: {"score": <0..1>}\n',
        encoding="utf-8",
    )
    _configure(repo, openai_server, "json-prompt.txt")
    openai_server.enqueue(text="0.99")
    assert repo.runpytest("--confgate", "--confgate-base", "main").ret == 0
    breakdown = read_report(repo)["confidence"]["breakdown"]
    assert "llm_score" not in breakdown
    assert "formula score stands in" in breakdown["fallback"]
    assert len(openai_server.requests) == 1  # asked once; its answer is not used
    assert "canary:" in str(openai_server.requests[0].body["messages"])
