"""Sign-offs counted again once the gate has decided: the Action's publish step (SPEC 6).

The Action's gate step runs the change's own tests, so it gets no token and cannot read
reviews; the publish step has one. There the report is treated as the change's word, not as
fact (issue 14): the risk tier is first worked out again from the pull request's files and the
base's configuration (``gate.rederive``) and can only rise; the approvers and the number of
sign-offs then come from the base's policy. The pull request's reviews replace whatever the
gate step counted and the verdict is re-decided by ``policy.recount_signoffs``, which keeps
every other condition as the gate decided it: reviews can never turn a ``fail`` into anything
else.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.collect.signoffs import collect_signoffs
from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.gate.policy import recount_signoffs
from pytest_confgate.gate.rederive import derive_floor
from pytest_confgate.gate.tiers import raised, tier_rank
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import pull_request, pull_request_number
from pytest_confgate.models import Condition, GateReport, Verdict


def recount_from_reviews(
    report: GateReport, environ: Mapping[str, str]
) -> tuple[GateReport, list[str]]:
    """Check the tier, count the pull request's reviews and re-decide; returns the report and
    notes to log.

    Only on a pull-request event with a token. A failed API call approves no one, and a tier
    that cannot be checked fails the gate.
    """
    number, _ = pull_request_number(environ)
    if number is None:
        return report, []
    client = GitHubClient.from_env(environ)
    if client is None:
        if report.signoffs.required:
            return report, ["sign-offs not recounted from reviews: no token"]
        return report, ["risk tier not checked against the pull request's files: no token"]
    report, notes, may_advance = _with_floor(report, client, environ)
    required = report.signoffs.required
    if not required:
        return report, notes
    found = collect_signoffs(environ, report.signoffs.approvers).model_copy(
        update={"required": required, "approvers": report.signoffs.approvers}
    )
    allowed = None  # the base's policy unknown: auto_advance only if it was already granted
    if may_advance is not None:
        allowed = may_advance and report.confidence is not None and (
            report.confidence.advisory is not None
        )
    after = recount_signoffs(
        _verdict(report), report.risk_tier, found, auto_advance_allowed=allowed
    )
    updated = report.model_copy(
        update={
            "decision": after.decision,
            "reasons": after.reasons,
            "conditions": after.conditions,
            "auto_advance": after.auto_advance,
            "signoffs": found,
        }
    )
    return updated, [
        *notes,
        f"sign-offs from the reviews of #{number}: {len(found.approved_by)}/{required}; "
        f"decision {report.decision.value} -> {after.decision.value}",
    ]


def _with_floor(
    report: GateReport, client: GitHubClient, environ: Mapping[str, str]
) -> tuple[GateReport, list[str], bool | None]:
    """The report at no less than the tier its files demand; approvers and sign-offs needed
    from the base's policy, and whether that tier may auto-advance (None: not known). When
    that cannot be worked out, a failing condition says why."""
    repo = environ.get("GITHUB_REPOSITORY", "").strip()
    try:
        pull = pull_request(environ)
        if pull is None or repo.count("/") != 1:
            raise ConfgateError("no pull request or GITHUB_REPOSITORY to read the files of")
        floor = derive_floor(client, environ, pull, repo)
    except GitHubError as exc:
        if exc.status != 404:
            return *_unchecked(report, exc), None
        # GitHub knows no such pull request (or hides it from this token): nothing to judge
        # by, and the reviews of the same pull request will not count either.
        return report, [f"risk tier not checked against the pull request's files: {exc}"], None
    except ConfgateError as exc:
        return *_unchecked(report, exc), None
    if floor is None:
        return report, ["risk tier not checked: the event names no base commit"], None
    tier, reason = report.risk_tier, report.risk_reason
    if tier_rank(floor.tier) > tier_rank(tier):
        why = (
            f"in the publish step, from the pull request's {floor.files} files and the base's "
            f"configuration ({floor.config}): {floor.reason}"
        )
        tier, reason = raised(tier, reason, floor.tier, why)
    _, needed, may_advance = floor.policy.tier(tier)
    approvers = floor.policy.signoff.approvers if floor.configured else report.signoffs.approvers
    signoffs = report.signoffs.model_copy(
        update={"required": max(needed, report.signoffs.required), "approvers": approvers}
    )
    update = {"risk_tier": tier, "risk_reason": reason, "signoffs": signoffs,
              "auto_advance": report.auto_advance and may_advance}
    note = f"risk tier checked against the pull request's files: {floor.tier} ({floor.config})"
    if tier != report.risk_tier:
        note += f"; the report said {report.risk_tier}, it is judged at {tier}"
    return report.model_copy(update=update), [note], may_advance


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
    after = recount_signoffs(verdict, report.risk_tier, report.signoffs)
    update = {"decision": after.decision, "reasons": after.reasons,
              "conditions": after.conditions, "auto_advance": False}
    return report.model_copy(update=update), [failing.message]


def _verdict(report: GateReport) -> Verdict:
    return Verdict(
        decision=report.decision,
        reasons=report.reasons,
        conditions=report.conditions,
        auto_advance=report.auto_advance,
    )
