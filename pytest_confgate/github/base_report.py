"""The base branch's own confgate report, found through the API (issue 29): Codecov's headline.

The example workflow also runs on ``push`` to the base branch, so each of its commits leaves a
``confgate-report`` artifact. The publish job of a pull request lists the base branch's
successful ``push`` runs (newest first), takes the first that kept that artifact (the run of the
pull request's base commit when there is one), and reads its ``confgate-report.json`` from the
zip. Nothing is set up by hand; when no such run exists the comment says so.

The report is data from an earlier run on the base branch, judged by the same code review as
any commit there; it is shown beside the verdict (deltas), never used to decide it.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from urllib.parse import quote

from pytest_confgate.exceptions import GitHubError
from pytest_confgate.github.api import GitHubClient
from pytest_confgate.models import GateReport

ARTIFACT = "confgate-report"
REPORT = "confgate-report.json"
MAX_ZIP_BYTES = 64 * 1024 * 1024
MAX_RUNS = 20
"""The newest runs looked at; an older report would say little about the base today."""


@dataclass(frozen=True)
class BaseReport:
    """The base's report (None when there is none) and, in words, where it came from or why
    there is none."""

    report: GateReport | None
    where: str


def find_base_report(client: GitHubClient, repo: str, branch: str, sha: str) -> BaseReport:
    """The newest successful ``push`` run on ``branch`` with a report; the run of ``sha``
    first. API failures are said in ``where``, never raised: the comparison is advisory."""
    if not branch:
        return BaseReport(None, "no base report: the event names no base branch")
    try:
        runs = client.get(
            f"/repos/{_repo(repo)}/actions/runs?branch={quote(branch, safe='')}"
            f"&event=push&status=success&per_page={MAX_RUNS}"
        )
        listed = runs.get("workflow_runs") if isinstance(runs, dict) else None
        ordered = sorted(
            (r for r in listed or [] if isinstance(r, dict) and isinstance(r.get("id"), int)),
            key=lambda r: r.get("head_sha") != sha,  # stable: newest first otherwise
        )
        for run in ordered:
            found = _report_of(client, repo, run["id"])
            if found is not None:
                commit = str(run.get("head_sha") or "")[:12]
                note = "" if run.get("head_sha") == sha else (
                    f"; not of the base commit {sha[:12]}, which kept none")
                return BaseReport(found, f"the {branch} branch's report of run "
                                         f"{run['id']} (commit {commit}){note}")
    except GitHubError as exc:
        return BaseReport(None, f"no base report: {exc}")
    return BaseReport(None, f"no base report: no successful push run on {branch} kept a "
                            f"{ARTIFACT} artifact (the example workflow's push run makes one)")


def _report_of(client: GitHubClient, repo: str, run_id: int) -> GateReport | None:
    answer = client.get(f"/repos/{_repo(repo)}/actions/runs/{run_id}/artifacts?name={ARTIFACT}")
    artifacts = answer.get("artifacts") if isinstance(answer, dict) else None
    for artifact in artifacts or []:
        if not (isinstance(artifact, dict) and artifact.get("name") == ARTIFACT
                and not artifact.get("expired") and isinstance(artifact.get("id"), int)):
            continue
        data = client.download(
            f"/repos/{_repo(repo)}/actions/artifacts/{artifact['id']}/zip", MAX_ZIP_BYTES)
        return _from_zip(data, artifact["id"])
    return None


def _from_zip(data: bytes, ident: int) -> GateReport:
    where = f"artifact {ident}"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo(REPORT)
            if info.file_size > MAX_ZIP_BYTES:
                raise GitHubError(f"{where}: {REPORT} is larger than any report could be")
            text = archive.read(info).decode("utf-8")
        return GateReport.model_validate_json(text)
    except KeyError as exc:
        raise GitHubError(f"{where} holds no {REPORT}") from exc
    except (zipfile.BadZipFile, UnicodeDecodeError, ValueError) as exc:
        raise GitHubError(f"{where}: not a zip with a gate report ({type(exc).__name__})") from exc


def _repo(repo: str) -> str:
    return "/".join(quote(part.strip(), safe="") for part in repo.split("/"))
