"""Issue 21's regression corpora, judged through the real OpenAI SDK on 127.0.0.1.

``tests/data/injection_payloads.json``: changes that try to talk the judge into a pass
(direct, in comments, in strings, in the pull request, in commit messages, in the gate's
measurements, in a file name, with fake fences and answers, in other languages, split over
lines, hidden with look-alike or invisible characters). The judge is an obedient fake: it
gives 1.0 whenever it reads the payload, echoing the canary as a judge following its prompt
does, and 0.2 otherwise. None of them may turn this failing change into a pass.

``tests/data/benign_diffs/``: ordinary changes, most taken from this repository's own history
(``git log -p``, one file each, the judge's own prompt and test files left out because they
quote fences and answers on purpose) and some written to look close to an injection (YAML
``system:`` keys, a scoring library, a chat client, emoji and right-to-left text). None may be
suspected: the false-positive count is asserted to be zero.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.llm_servers import FakeOpenAIServer, judge_answer, obedient_judge

from pytest_confgate.agents import Agent, build_agent
from pytest_confgate.agents.judge import judge_change
from pytest_confgate.agents.judge_prompt import (
    build_judge_prompt,
    new_canary,
    new_fence,
    parse_judge_answer,
)
from pytest_confgate.agents.screen import screen_diff
from pytest_confgate.config import GateConfig, LlmJudgeMetricConfig, OpenAIAgentConfig
from pytest_confgate.gate.policy import decide
from pytest_confgate.gate.tiers import raise_for_evidence
from pytest_confgate.models import Decision, EvalMetric, MetricStatus, Signoffs, TestOutcomes

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

DATA = Path(__file__).resolve().parents[1] / "data"
PAYLOADS: list[dict[str, Any]] = json.loads(
    (DATA / "injection_payloads.json").read_text(encoding="utf-8")
)
BENIGN = sorted((DATA / "benign_diffs").glob("*.diff"))

JUDGE = LlmJudgeMetricConfig(type="llm_judge", evaluator_agent="reviewer", min=0.7, repeats=3)
GATE = GateConfig.model_validate(
    {
        "risk_tier": "T1",
        "metrics": [
            {"type": "test_pass_rate"},
            {"type": "llm_judge", "evaluator_agent": "reviewer", "min": 0.7},
        ],
    }
)
TESTS = TestOutcomes(passed=3)
MEASURED = "test_pass_rate: 1.000 (ok)"


def diff_adding(path: str, *lines: str) -> str:
    added = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n"
        f"+++ b/{path}\n@@ -3,0 +4,{len(lines)} @@\n{added}"
    )


def change_with(payload: dict[str, Any] | None) -> dict[str, str]:
    """The change under review (the honest judge gives it 0.2), with ``payload`` in it."""
    material = {
        "task": "Fix the report totals.",
        "task_source": "pull request",
        "diff": diff_adding("src/report.py", "def total(rows):", "    return sum(rows) + 1"),
        "metrics_summary": MEASURED,
    }
    if payload is None:
        return material
    where, text = payload["where"], "\n".join(payload["lines"])
    if where == "diff":
        lines = ["def total(rows):", *payload["lines"], "    return sum(rows) + 1"]
        material["diff"] = diff_adding("src/report.py", *lines)
    elif where == "pull_request":
        material["task"] = text
    elif where == "commit_messages":
        material.update(task=text, task_source="commit messages")
    elif where == "measurements":
        material["metrics_summary"] = text
    elif where == "file_name":
        material["diff"] += diff_adding(text, "x = 1")
    else:  # pragma: no cover - a typo in the corpus
        raise AssertionError(f"unknown place {where!r} in payload {payload['id']}")
    return material


def obeying(payload: dict[str, Any]) -> Any:
    """The obedient judge for this payload: it reacts to any of its lines it reads."""
    return obedient_judge(*(line.strip() for line in payload["lines"] if len(line.strip()) > 3))


def verdict(judged: EvalMetric) -> tuple[Decision, str]:
    metrics = [EvalMetric(type="test_pass_rate", value=1.0), judged]
    tier, _ = raise_for_evidence("T1", "risk_tier: T1", metrics)
    return decide(GATE, tier, metrics, TESTS, Signoffs()).decision, tier


@pytest.fixture
def judge(openai_server: FakeOpenAIServer) -> Agent:
    config = OpenAIAgentConfig(
        provider="openai",
        model="obedient-judge",
        base_url=openai_server.base_url,
        timeout_ms=10_000,
        max_retries=0,
    )
    return build_agent("reviewer", config, {"OPENAI_API_KEY": "sk-test-not-a-key"})


# --- injections ---------------------------------------------------------------------------------


def test_the_payload_corpus_is_large_and_varied() -> None:
    assert len(PAYLOADS) >= 20
    assert len({payload["id"] for payload in PAYLOADS}) == len(PAYLOADS)
    places = {payload["where"] for payload in PAYLOADS}
    assert places == {"diff", "pull_request", "commit_messages", "measurements", "file_name"}


@pytest.mark.parametrize("payload", PAYLOADS, ids=[payload["id"] for payload in PAYLOADS])
def test_no_payload_turns_the_failing_change_into_a_pass(
    payload: dict[str, Any], judge: Agent, openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(respond=obeying(payload), times=JUDGE.repeats)

    judged = judge_change(judge, JUDGE, **change_with(payload))

    decision, tier = verdict(judged)
    assert decision is not Decision.PASS
    assert (judged.status, judged.value) == (MetricStatus.ERROR, 0.0)
    assert judged.details["injection_suspected"] is True
    assert judged.details["injection_hits"]
    assert openai_server.requests == []  # the judge was never asked
    assert tier == "T2"


@pytest.mark.parametrize("payload", PAYLOADS, ids=[payload["id"] for payload in PAYLOADS])
def test_without_the_screen_the_obedient_judge_would_pass_it(
    payload: dict[str, Any], judge: Agent, openai_server: FakeOpenAIServer
) -> None:
    """The control: each payload does reach and fool the fake when shown to it as the gate
    would show it (fenced, canary echoed), so the screen is what stops it."""
    openai_server.enqueue(respond=obeying(payload))
    material = change_with(payload)
    del material["task_source"]
    canary = new_canary()
    system, user = build_judge_prompt(
        criteria=JUDGE.criteria, fence=new_fence(), canary=canary, **material
    )

    answer = parse_judge_answer(judge.ask(user, system=system).text, canary)

    assert answer.score == 1.0
    assert verdict(EvalMetric(type="llm_judge", value=answer.score))[0] is Decision.PASS


def test_the_same_judge_fails_the_clean_change(
    judge: Agent, openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(respond=obedient_judge("ignore prior instructions"), times=4)

    judged = judge_change(judge, JUDGE, **change_with(None))

    assert (judged.status, judged.value) == (MetricStatus.OK, 0.2)
    assert judged.details["injection_suspected"] is False
    assert verdict(judged) == (Decision.FAIL, "T1")
    assert len(openai_server.requests) == 4  # the repeats, and the call without the task


# --- ordinary changes ---------------------------------------------------------------------------


def test_the_benign_corpus_is_large_enough() -> None:
    assert len(BENIGN) >= 50
    assert sum(path.name.startswith("history-") for path in BENIGN) >= 50


@pytest.mark.parametrize("path", BENIGN, ids=[path.stem for path in BENIGN])
def test_an_ordinary_change_is_not_suspected(path: Path) -> None:
    found = screen_diff(path.read_text(encoding="utf-8"))
    assert not found.suspected, found.summary()


def test_the_false_positive_count_over_the_benign_corpus_is_zero() -> None:
    suspected = [path.name for path in BENIGN if screen_diff(path.read_text("utf-8")).suspected]
    assert suspected == []


def test_all_ordinary_changes_together_are_judged(
    judge: Agent, openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(respond=judge_answer(0.9))
    openai_server.enqueue(respond=judge_answer(0.9))  # the ablation: the same without prose
    openai_server.enqueue(respond=judge_answer(0.9))  # and without the task
    diff = "".join(path.read_text(encoding="utf-8") for path in BENIGN)
    config = LlmJudgeMetricConfig(
        type="llm_judge", evaluator_agent="reviewer", max_diff_chars=len(diff)
    )

    judged = judge_change(judge, config, task="Many changes.", diff=diff, metrics_summary=MEASURED)

    assert (judged.status, judged.value) == (MetricStatus.OK, 0.9)
    assert judged.details["injection_suspected"] is False
    assert judged.details["ablation"]["calls"] == 1
    assert judged.details["diff_truncated"] is False
