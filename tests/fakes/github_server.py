"""A small real HTTP server that speaks the parts of the GitHub REST API the gate uses.

Our stdlib client talks to it exactly as to api.github.com (headers, Link pagination, error
bodies), so sign-off and PR-comment tests run the real client code without the internet::

    server.add_pull("o/r", 7, author="carol", head_sha="b" * 40)
    server.add_review("o/r", 7, "alice", "APPROVED", commit_id="b" * 40)
    server.add_commit("o/r", 7, author="dave", message="fix\n\nCo-authored-by: E <e@x.org>")
    server.add_file("o/r", 7, "src/auth/x.py")            # the pull request's file list
    server.add_content("o/r", "b" * 40, "confgate.yml", "gate: {}")  # a file at a commit
    server.add_team_member("o", "reviewers", "dave")
    server.fail_next(500, message="boom")                 # the next request gets HTTP 500
    server.fail_next(reset=True)                          # connection closed, no reply
    server.requests[0].headers["authorization"]           # what the client sent
    server.comments["o/r", 7]                             # comments posted or patched
    run = server.add_run("o/r", branch="main", head_sha="b" * 40)   # a successful push run
    server.add_artifact("o/r", run, "confgate-report", {"confgate-report.json": "{...}"})

Requests must carry ``Authorization: Bearer <server.token>``, else HTTP 401 "Bad credentials".
Lists are paginated like GitHub's (``per_page`` default 30, max 100; ``Link`` with
``rel="next"`` and ``rel="last"`` when there are more pages).
"""

from __future__ import annotations

import base64
import collections
import io
import itertools
import json
import re
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from fakes.llm_servers import RecordedRequest
from fakes.local_server import LocalServer

__all__ = ["FakeGitHubServer", "RecordedRequest"]


@dataclass(frozen=True)
class _Failure:
    status: int
    message: str
    reset: bool
    raw: bytes | None
    delay_s: float
    path: str | None


_Route = Callable[
    ["FakeGitHubServer", RecordedRequest, "re.Match[str]"], tuple[int, Any, dict[str, str]]
]


class FakeGitHubServer(LocalServer):
    """Pull requests, their reviews, commits and files, file contents at a commit, team
    memberships and issue comments, all in memory."""

    def __init__(self, token: str = "ghs_fake_token_0123456789") -> None:  # noqa: S107 - a fake server's fake token
        self.token = token
        self.requests: list[RecordedRequest] = []
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.reviews: dict[tuple[str, int], list[dict[str, Any]]] = collections.defaultdict(list)
        self.teams: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
        self.commits: dict[tuple[str, int], list[dict[str, Any]]] = collections.defaultdict(list)
        self.commit_files: dict[tuple[str, str], list[str]] = {}
        self.files: dict[tuple[str, int], list[dict[str, Any]]] = collections.defaultdict(list)
        self.contents: dict[tuple[str, str, str], str] = {}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = collections.defaultdict(list)
        self.runs: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        self.artifacts: dict[int, list[dict[str, Any]]] = collections.defaultdict(list)
        self.blobs: dict[int, bytes] = {}
        self._ids = itertools.count(1000)
        self._failures: collections.deque[_Failure] = collections.deque()
        self._lock = threading.Lock()
        super().__init__(_make_handler(self))

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:PORT``: what ``GITHUB_API_URL`` should be."""
        return self.root_url

    # -- state ------------------------------------------------------------------------

    def add_pull(self, repo: str, number: int, *, author: str, head_sha: str) -> None:
        """A pull request ``number`` in ``repo`` ("owner/name")."""
        self.pulls[repo, number] = {
            "number": number,
            "user": {"login": author},
            "head": {"sha": head_sha},
        }

    def add_review(
        self, repo: str, number: int, login: str, state: str, *, commit_id: str
    ) -> dict[str, Any]:
        """Append a review (reviews are listed oldest first, as GitHub does)."""
        review = {
            "id": next(self._ids),
            "user": {"login": login},
            "state": state,
            "commit_id": commit_id,
            "submitted_at": "2026-01-01T00:00:00Z",
        }
        self.reviews[repo, number].append(review)
        return review

    def add_commit(
        self,
        repo: str,
        number: int,
        *,
        author: str | None,
        message: str = "change",
        name: str = "Some One",
        email: str = "someone@example.invalid",
        files: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Append a commit to the pull request; ``author`` None: an email GitHub cannot map.
        ``files``: what ``GET /commits/SHA`` lists as the paths it touched."""
        sha = f"{next(self._ids):040x}"
        commit = {
            "sha": sha,
            "commit": {"message": message, "author": {"name": name, "email": email}},
            "author": None if author is None else {"login": author, "type": "User"},
            "committer": {"login": "web-flow", "type": "User"},
            "parents": [],
        }
        self.commits[repo, number].append(commit)
        self.commit_files[repo, sha] = list(files)
        return commit

    def add_file(
        self, repo: str, number: int, filename: str, status: str = "modified",
        previous: str | None = None,
    ) -> None:
        """A file the pull request changes, as ``GET /pulls/N/files`` lists it."""
        entry: dict[str, Any] = {"filename": filename, "status": status}
        if previous is not None:
            entry["previous_filename"] = previous
        self.files[repo, number].append(entry)

    def add_content(self, repo: str, ref: str, path: str, text: str) -> None:
        """``path`` holds ``text`` at commit ``ref`` (``GET /contents/PATH?ref=``)."""
        self.contents[repo, ref, path] = text

    def add_run(
        self, repo: str, *, branch: str, head_sha: str, event: str = "push",
        conclusion: str = "success",
    ) -> int:
        """A finished workflow run; returns its id (runs are listed newest first)."""
        run_id = next(self._ids)
        self.runs[repo].append({"id": run_id, "head_branch": branch, "head_sha": head_sha,
                                "event": event, "status": "completed",
                                "conclusion": conclusion})
        return run_id

    def add_artifact(
        self, repo: str, run_id: int, name: str, files: dict[str, str | bytes],
        *, expired: bool = False,
    ) -> int:
        """An artifact of run ``run_id`` holding ``files``; its zip is served through the
        redirect GitHub uses (to a URL that must be fetched without the token)."""
        ident = next(self._ids)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for member, data in files.items():
                archive.writestr(member, data)
        self.blobs[ident] = buffer.getvalue()
        self.artifacts[run_id].append({"id": ident, "name": name, "expired": expired,
                                       "size_in_bytes": len(self.blobs[ident])})
        return ident

    def add_team_member(self, org: str, team: str, login: str) -> None:
        """Make ``login`` an active member of ``org/team``."""
        self.teams[org, team].add(login.casefold())

    def fail_next(
        self,
        status: int = 500,
        *,
        message: str = "",
        reset: bool = False,
        raw: bytes | None = None,
        delay_s: float = 0.0,
        path: str | None = None,
    ) -> None:
        """Answer the next request (to ``path`` if given) with ``status`` and an error body.

        ``reset`` drops the connection without a reply; ``raw`` is sent as the body instead
        (``status=200, raw=b"<html>"`` is a proxy's page); ``delay_s`` waits first.
        """
        message = message or f"fake HTTP {status}"
        failure = _Failure(status, message, reset, raw, delay_s, path)
        with self._lock:
            self._failures.append(failure)

    # -- routes -----------------------------------------------------------------------

    def _pull(self, request: RecordedRequest, m: re.Match[str]) -> tuple[int, Any, dict[str, str]]:
        pull = self.pulls.get((m["repo"], int(m["n"])))
        return (200, pull, {}) if pull else _not_found()

    def _reviews(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        return self._page(request, list(self.reviews.get((m["repo"], int(m["n"])), [])))

    def _commits(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        return self._page(request, list(self.commits.get((m["repo"], int(m["n"])), [])))

    def _commit(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        """One commit with its files, paged like GitHub's (``per_page``, ``page``)."""
        files = self.commit_files.get((m["repo"], m["sha"]))
        if files is None:
            return _not_found()
        per_page = min(int(request.query.get("per_page", "300")), 300)
        page = int(request.query.get("page", "1"))
        shown = files[(page - 1) * per_page : page * per_page]
        return 200, {"sha": m["sha"], "files": [{"filename": f, "status": "modified"}
                                                 for f in shown]}, {}

    def _files(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        return self._page(request, list(self.files.get((m["repo"], int(m["n"])), [])))

    def _content(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        ref, path = request.query.get("ref", ""), (m["path"] or "").strip("/")
        text = self.contents.get((m["repo"], ref, path))
        if text is None:
            return self._listing(m["repo"], ref, path)
        encoded = base64.b64encode(text.encode()).decode()
        return 200, {"type": "file", "encoding": "base64", "content": encoded,
                     "path": m["path"]}, {}

    def _listing(self, repo: str, ref: str, folder: str) -> tuple[int, Any, dict[str, str]]:
        """A folder at ``ref``, as the contents API lists it: its files and folders."""
        prefix = f"{folder}/" if folder else ""
        entries: dict[str, str] = {}
        for (where, at, path) in self.contents:
            if where == repo and at == ref and path.startswith(prefix):
                name, _, rest = path[len(prefix):].partition("/")
                entries[name] = "dir" if rest else "file"
        if not entries:
            return _not_found()
        return 200, [{"name": n, "path": prefix + n, "type": t}
                     for n, t in sorted(entries.items())], {}

    def _membership(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        if m["login"].casefold() in self.teams.get((m["org"], m["team"]), set()):
            return 200, {"state": "active", "role": "member"}, {}
        return _not_found()

    def _comments(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        key = (m["repo"], int(m["n"]))
        if request.method == "GET":
            return self._page(request, list(self.comments.get(key, [])))
        if not isinstance(request.body, dict) or not isinstance(request.body.get("body"), str):
            return 422, {"message": "Invalid request: body is required"}, {}
        comment = {
            "id": next(self._ids),
            "body": request.body["body"],
            "user": {"login": "github-actions[bot]", "type": "Bot"},  # GITHUB_TOKEN's user
        }
        self.comments[key].append(comment)
        return 201, comment, {}

    def _comment(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        for comment in itertools.chain.from_iterable(self.comments.values()):
            if comment["id"] == int(m["id"]):
                if not isinstance(request.body, dict) or "body" not in request.body:
                    return 422, {"message": "Invalid request: body is required"}, {}
                comment["body"] = request.body["body"]
                return 200, comment, {}
        return _not_found()

    def _runs(self, request: RecordedRequest, m: re.Match[str]) -> tuple[int, Any, dict[str, str]]:
        q = request.query
        runs = [r for r in reversed(self.runs.get(m["repo"], []))
                if q.get("branch") in (None, r["head_branch"])
                and q.get("event") in (None, r["event"])
                and q.get("status") in (None, r["conclusion"], r["status"])]
        runs = runs[: min(int(q.get("per_page", "30")), 100)]
        return 200, {"total_count": len(runs), "workflow_runs": runs}, {}

    def _run_artifacts(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        found = [a for a in self.artifacts.get(int(m["id"]), [])
                 if request.query.get("name") in (None, a["name"])]
        return 200, {"total_count": len(found), "artifacts": found}, {}

    def _artifact_zip(
        self, request: RecordedRequest, m: re.Match[str]
    ) -> tuple[int, Any, dict[str, str]]:
        if int(m["id"]) not in self.blobs:
            return _not_found()
        return 302, b"", {"Location": f"{self.api_url}/_blob/{m['id']}?sig=signed"}

    def _page(self, request: RecordedRequest, items: list[Any]) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(request.query.get("per_page", "30")), 100)
        page = int(request.query.get("page", "1"))
        last = max(1, -(-len(items) // per_page))
        headers: dict[str, str] = {}
        if page < last:
            base = f"{self.api_url}{request.path}?per_page={per_page}&page="
            headers["Link"] = f'<{base}{page + 1}>; rel="next", <{base}{last}>; rel="last"'
        return 200, items[(page - 1) * per_page : page * per_page], headers

    # -- used by the handler ----------------------------------------------------------

    def _dispatch(self, request: RecordedRequest) -> tuple[int, Any, dict[str, str]] | None:
        """The answer (a ``bytes`` payload is sent as is), or None to drop the connection."""
        with self._lock:
            self.requests.append(request)
            failure = next((f for f in self._failures if f.path in (None, request.path)), None)
            if failure is not None:
                self._failures.remove(failure)
        if failure is not None:
            if failure.delay_s:
                self._stopping.wait(failure.delay_s)
            if failure.reset:
                return None
            body = failure.raw if failure.raw is not None else _error(failure.message)
            return failure.status, body, {}
        blob = re.fullmatch(r"/_blob/(\d+)", request.path)
        if blob is not None:  # a signed storage URL: it must never receive the token
            if "authorization" in request.headers:
                return 400, _error("a signed URL got an Authorization header"), {}
            data = self.blobs.get(int(blob[1]))
            return (200, data, {}) if data is not None else _not_found()
        with self._lock:
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return 401, _error("Bad credentials"), {}
            for method, pattern, route in _ROUTES:
                match = pattern.fullmatch(request.path)
                if match and method == request.method:
                    return route(self, request, match)
            return _not_found()


def _error(message: str) -> dict[str, str]:
    return {"message": message, "documentation_url": "https://docs.github.com/rest"}


def _not_found() -> tuple[int, Any, dict[str, str]]:
    return 404, _error("Not Found"), {}


_REPO = r"/repos/(?P<repo>[^/]+/[^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str], _Route]] = [
    ("GET", re.compile(_REPO + r"/pulls/(?P<n>\d+)"), FakeGitHubServer._pull),
    ("GET", re.compile(_REPO + r"/pulls/(?P<n>\d+)/reviews"), FakeGitHubServer._reviews),
    ("GET", re.compile(_REPO + r"/pulls/(?P<n>\d+)/commits"), FakeGitHubServer._commits),
    ("GET", re.compile(_REPO + r"/pulls/(?P<n>\d+)/files"), FakeGitHubServer._files),
    ("GET", re.compile(_REPO + r"/commits/(?P<sha>[0-9a-f]+)"), FakeGitHubServer._commit),
    ("GET", re.compile(_REPO + r"/contents(?:/(?P<path>.*))?"), FakeGitHubServer._content),
    (
        "GET",
        re.compile(r"/orgs/(?P<org>[^/]+)/teams/(?P<team>[^/]+)/memberships/(?P<login>[^/]+)"),
        FakeGitHubServer._membership,
    ),
    ("GET", re.compile(_REPO + r"/issues/(?P<n>\d+)/comments"), FakeGitHubServer._comments),
    ("POST", re.compile(_REPO + r"/issues/(?P<n>\d+)/comments"), FakeGitHubServer._comments),
    ("PATCH", re.compile(_REPO + r"/issues/comments/(?P<id>\d+)"), FakeGitHubServer._comment),
    ("GET", re.compile(_REPO + r"/actions/runs"), FakeGitHubServer._runs),
    ("GET", re.compile(_REPO + r"/actions/runs/(?P<id>\d+)/artifacts"),
     FakeGitHubServer._run_artifacts),
    ("GET", re.compile(_REPO + r"/actions/artifacts/(?P<id>\d+)/zip"),
     FakeGitHubServer._artifact_zip),
]


def _make_handler(fake: FakeGitHubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def do_PATCH(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            url = urlsplit(self.path)
            request = RecordedRequest(
                method=self.command,
                path=url.path,
                query=dict(parse_qsl(url.query)),
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            answer = fake._dispatch(request)
            if answer is None:
                self.close_connection = True
                self.connection.close()  # no reply: the client sees the connection drop
                return
            status, payload, headers = answer
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
