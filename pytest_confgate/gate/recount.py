"""The publish step decides again (issues 14 and 29): the Action's publish step asks.

The Action's gate step runs the change's own tests, so it gets no token and cannot read
reviews; the publish step has one. There the report is treated as the change's word, not as
fact. The verdict published is worked out again from inputs the change cannot forge:

1. the report must follow from its own evidence (``gate.recheck``), else it was altered
   after the gate decided and is refused (``Republished.tampered``);
2. the risk tier, the approvers and the number of sign-offs come from the pull request's files
   and the base's configuration (``gate.rederive``): the tier can only rise, and the gate's
   machinery or tamper patterns in the change's code need a human's sign-off;
3. the base's policy decides again over the report's dynamic evidence (tests, coverage, the
   other metrics) at that tier, and the pull request's reviews replace whatever the gate step
   counted: reviews can never turn a ``fail`` into anything else;
4. the gate job's result is an input: a gate job that did not succeed never publishes
   ``pass``;
5. with ``supervised`` (the Action's publish step), a report ``confgate gate`` did not write
   (no ``supervisor`` attestation, ``gate.supervised``) never publishes ``pass`` (issue 34).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_confgate.collect.signoffs import collect_signoffs
from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.gate.policy import recount_signoffs
from pytest_confgate.gate.recheck import redecide, tampering
from pytest_confgate.gate.rederive import Floor, derive_floor
from pytest_confgate.gate.supervised import ATTESTED, SUPERVISOR, attested
from pytest_confgate.gate.tiers import raised, tier_rank
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import pull_request, pull_request_number
from pytest_confgate.models import (
    Condition,
    Decision,
    EvalMetric,
    GateReport,
    MetricStatus,
    Signoffs,
    Verdict,
)

GATE_RESULTS = ("success", "failure", "cancelled", "skipped")
"""What ``needs.<job>.result`` can be (GitHub's job results)."""


@dataclass(frozen=True)
class Republished:
    """The report to publish, notes for the log, and why it was refused (empty: it was not).

    ``tamper``: static findings of gate-tampering code in the change (for the reviewer)."""

    report: GateReport
    notes: list[str]
    tampered: list[str] = field(default_factory=list)
    tamper: tuple[dict[str, Any], ...] = ()


def republish(
    report: GateReport, environ: Mapping[str, str], gate_result: str | None = None,
    *, supervised: bool = False,
) -> Republished:
    """Check the report, work the tier out again, count the reviews and re-decide.

    The tier and the reviews only on a pull-request event with a token. A failed API call
    approves no one, and a tier that cannot be checked fails the gate.
    """
    problems = tampering(report)
    if problems:
        return Republished(report, [], problems)
    notes: list[str] = []
    tamper: tuple[dict[str, Any], ...] = ()
    number, _ = pull_request_number(environ)
    client = GitHubClient.from_env(environ) if number is not None else None
    if number is not None and client is None:
        notes.append("sign-offs not recounted from reviews: no token" if report.signoffs.required
                     else "risk tier not checked against the pull request's files: no token")
    elif number is not None and client is not None:
        done = _recount(report, client, environ, number)
        if done.tampered:
            return done
        report, notes, tamper = done.report, done.notes, done.tamper
    report = _with_gate_result(report, gate_result, notes if number is not None else [])
    if supervised and not attested(report):
        report = _failing(report, Condition(
            metric=SUPERVISOR, name=ATTESTED, passed=False,
            message="supervisor: this report was not written by `confgate gate` (it carries no "
            "attestation), so its test outcomes are the test process's own word; run the gate "
            "step with `confgate gate`"), notes)
    return Republished(report, notes, [], tamper)


def _recount(
    report: GateReport, client: GitHubClient, environ: Mapping[str, str], number: int
) -> Republished:
    floor, problem = _floor(client, environ)
    if problem is not None:
        if isinstance(problem, str):  # GitHub knows no such pull request: nothing to judge by
            return Republished(report, [problem])
        return Republished(*_unchecked(report, problem))
    if floor is None:
        return Republished(report, ["risk tier not checked: the event names no base commit"])
    problems = tampering(report, floor.gate)
    if problems:
        return Republished(report, [], problems)
    report, notes, may_advance = _at_floor(report, floor)
    required = report.signoffs.required
    found = report.signoffs
    if required:
        found = collect_signoffs(environ, report.signoffs.approvers).model_copy(
            update={"required": required, "approvers": report.signoffs.approvers}
        )
    allowed = may_advance and report.confidence is not None and (
        report.confidence.advisory is not None
    )
    verdict = redecide(report, floor.gate, report.risk_tier)
    after = recount_signoffs(verdict, report.risk_tier, found, auto_advance_allowed=allowed)
    if required:
        notes.append(f"sign-offs from the reviews of #{number}: {len(found.approved_by)}/"
                     f"{required}; decision {report.decision.value} -> {after.decision.value}")
    elif after.decision is not report.decision:
        notes.append(f"decided again from the report's evidence and the base's policy: "
                     f"{report.decision.value} -> {after.decision.value}")
    decided = _decided(report, after, found)
    if floor.tamper:
        decided = decided.model_copy(
            update={"metrics": [*decided.metrics, tamper_metric(floor.tamper)]})
    return Republished(decided, notes, [], floor.tamper)


def tamper_metric(found: tuple[dict[str, Any], ...]) -> EvalMetric:
    """The publish step's own tamper findings, for every writer's tamper section: evidence
    it derived from the pull request's files, never from the report (no verdict of its own:
    they raised the tier instead)."""
    items = [dict(item) for item in found]
    return EvalMetric(type="tamper_patterns", value=0.0,
                      status=MetricStatus.OK, details={
                          "tool": "confgate", "findings": len(items), "items": items,
                          "source": "the pull request's files, read in the publish step"})


def _floor(
    client: GitHubClient, environ: Mapping[str, str]
) -> tuple[Floor | None, str | Exception | None]:
    repo = environ.get("GITHUB_REPOSITORY", "").strip()
    try:
        pull = pull_request(environ)
        if pull is None or repo.count("/") != 1:
            raise ConfgateError("no pull request or GITHUB_REPOSITORY to read the files of")
        return derive_floor(client, environ, pull, repo), None
    except GitHubError as exc:
        if exc.status != 404:
            return None, exc
        # GitHub knows no such pull request (or hides it from this token): nothing to judge
        # by, and the reviews of the same pull request will not count either.
        return None, f"risk tier not checked against the pull request's files: {exc}"
    except ConfgateError as exc:
        return None, exc


def _at_floor(report: GateReport, floor: Floor) -> tuple[GateReport, list[str], bool]:
    """The report at no less than the tier its files demand; approvers and sign-offs needed
    from the base's policy (one at least when a human must look), and whether that tier may
    auto-advance."""
    tier, reason = report.risk_tier, report.risk_reason
    if tier_rank(floor.tier) > tier_rank(tier):
        why = (
            f"in the publish step, from the pull request's {floor.files} files and the base's "
            f"configuration ({floor.config}): {floor.reason}"
        )
        tier, reason = raised(tier, reason, floor.tier, why)
    _, needed, may_advance = floor.policy.tier(tier)
    if floor.guarded is not None:
        needed = max(needed, 1)
    approvers = floor.policy.signoff.approvers if floor.configured else report.signoffs.approvers
    signoffs = report.signoffs.model_copy(
        update={"required": max(needed, report.signoffs.required), "approvers": approvers}
    )
    update = {"risk_tier": tier, "risk_reason": reason, "signoffs": signoffs,
              "auto_advance": report.auto_advance and may_advance}
    note = f"risk tier checked against the pull request's files: {floor.tier} ({floor.config})"
    if tier != report.risk_tier:
        note += f"; the report said {report.risk_tier}, it is judged at {tier}"
    notes = [note]
    if floor.guarded is not None:
        notes.append(f"a human must sign off: {floor.guarded}")
    return report.model_copy(update=update), notes, may_advance


def _with_gate_result(report: GateReport, result: str | None, notes: list[str]) -> GateReport:
    """A gate job that did not succeed never publishes ``pass`` (nor waits for a sign-off)."""
    result = (result or "").strip()
    if not result:
        notes.append("the gate job's result was not given (--gate-result, the Action's "
                     "gate-result input): a failed gate job cannot be told from a passing one")
        return report
    if result == "success" or report.decision is Decision.FAIL:
        return report
    shown = result if result in GATE_RESULTS else "not a job result"
    failing = Condition(
        metric="gate", name="job", passed=False,
        message=f"gate job: its result is {shown}, and a gate job that did not succeed never "
        "publishes pass; see its log",
    )
    return _failing(report, failing, notes)


def _failing(report: GateReport, failing: Condition, notes: list[str]) -> GateReport:
    """The report decided again with ``failing`` first: it can only block more."""
    verdict = _verdict(report)
    verdict = verdict.model_copy(update={"conditions": [failing, *verdict.conditions]})
    after = recount_signoffs(verdict, report.risk_tier, report.signoffs,
                             auto_advance_allowed=False)
    notes.append(f"{failing.message}: decision {report.decision.value} -> {after.decision.value}")
    return _decided(report, after, report.signoffs)


def _unchecked(report: GateReport, exc: Exception) -> tuple[GateReport, list[str]]:
    """The report with a failing condition: its tier could not be checked (fail closed)."""
    failing = Condition(
        metric="change",
        name="evidence",
        passed=False,
        message=f"change: the risk tier could not be checked against the pull request's "
        f"files and the base's configuration: {exc}",
    )
    verdict = _verdict(report)
    verdict = verdict.model_copy(update={"conditions": [failing, *verdict.conditions]})
    after = recount_signoffs(verdict, report.risk_tier, report.signoffs,
                             auto_advance_allowed=False)
    return _decided(report, after, report.signoffs), [failing.message]


def _decided(report: GateReport, after: Verdict, signoffs: Signoffs) -> GateReport:
    update = {"metrics": after.metrics} if after.metrics else {}
    return report.model_copy(update={
        **update, "decision": after.decision, "reasons": after.reasons,
        "conditions": after.conditions, "auto_advance": after.auto_advance,
        "signoffs": signoffs,
    })


def _verdict(report: GateReport) -> Verdict:
    return Verdict(
        decision=report.decision,
        reasons=report.reasons,
        conditions=report.conditions,
        auto_advance=report.auto_advance,
    )
