"""Sign-offs counted again once the gate has decided: the Action's publish step (SPEC 6).

The Action's gate step runs the change's own tests, so it gets no token and cannot read
reviews; the publish step has one. There the pull request's reviews replace whatever the gate
step counted and the verdict is re-decided by ``policy.recount_signoffs``, which keeps every
other condition as the gate decided it: reviews can never turn a ``fail`` into anything else.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_confgate.collect.signoffs import collect_signoffs
from pytest_confgate.gate.policy import recount_signoffs
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.github.event import pull_request_number
from pytest_confgate.models import GateReport, Verdict


def recount_from_reviews(
    report: GateReport, environ: Mapping[str, str]
) -> tuple[GateReport, list[str]]:
    """Count the pull request's reviews and re-decide; returns the report and notes to log.

    Only a report whose tier asks for sign-offs, on a pull-request event with a token, is
    recounted. A failed API call approves no one.
    """
    required = report.signoffs.required
    number, _ = pull_request_number(environ)
    if not required or number is None:
        return report, []
    if GitHubClient.from_env(environ) is None:
        return report, ["sign-offs not recounted from reviews: no token"]
    found = collect_signoffs(environ, report.signoffs.approvers).model_copy(
        update={"required": required, "approvers": report.signoffs.approvers}
    )
    before = Verdict(
        decision=report.decision,
        reasons=report.reasons,
        conditions=report.conditions,
        auto_advance=report.auto_advance,
    )
    after = recount_signoffs(before, report.risk_tier, found)
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
        f"sign-offs from the reviews of #{number}: {len(found.approved_by)}/{required}; "
        f"decision {report.decision.value} -> {after.decision.value}"
    ]
