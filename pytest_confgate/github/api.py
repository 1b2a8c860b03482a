"""A small GitHub REST client on the standard library (reviews for sign-off, the PR comment).

Stdlib only, so installing the gate pulls in no HTTP stack. Every failure (HTTP >= 400,
timeout, dropped connection, a body that is not JSON) becomes one ``GitHubError`` naming the
method, path, status and GitHub's ``message``; the token is never part of any message.
One bounded retry covers the transient 502/503 and connection resets GitHub is known for
(GET and PATCH only: a POST that may have been applied is not sent twice).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pytest_confgate.exceptions import GitHubError

DEFAULT_API_URL = "https://api.github.com"
ENV_TOKENS = ("GITHUB_TOKEN", "CONFGATE_GITHUB_TOKEN")
ENV_API_URL = "GITHUB_API_URL"
PER_PAGE = 100
_RETRY_STATUSES = frozenset({502, 503})
_RETRY_PAUSE_S = 0.5
_MAX_BODY = 20 * 1024 * 1024  # a review list is kilobytes; refuse to buffer a runaway reply
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
_USER_AGENT = "pytest-confgate"


class GitHubClient:
    """Bearer-token calls to the GitHub REST API (``api_url`` is GHES's ``/api/v3`` too)."""

    def __init__(
        self, token: str, api_url: str = DEFAULT_API_URL, *, timeout_s: float = 10.0
    ) -> None:
        scheme = urlsplit(api_url).scheme
        if scheme not in ("http", "https"):
            raise GitHubError(f"GitHub API URL must be http(s), got {api_url!r}")
        self._token = token
        self.api_url = api_url.rstrip("/")
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.api_url!r})"  # never the token

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GitHubClient | None:
        """A client from ``GITHUB_TOKEN`` (or ``CONFGATE_GITHUB_TOKEN``); None without one."""
        token = next((environ[n].strip() for n in ENV_TOKENS if environ.get(n, "").strip()), "")
        if not token:
            return None
        return cls(token, environ.get(ENV_API_URL, "").strip() or DEFAULT_API_URL)

    def get(self, path: str) -> Any:
        """GET one resource and return its JSON."""
        return self._request("GET", path)[0]

    def paginate(self, path: str, *, max_pages: int = 20) -> list[Any]:
        """GET a list, following ``Link: rel="next"`` for at most ``max_pages`` pages.

        More pages than that is an error, not a silent truncation: a missing page could hide
        the review that cancels an approval.
        """
        sep = "&" if "?" in path else "?"
        url: str | None = f"{path}{sep}per_page={PER_PAGE}"
        items: list[Any] = []
        for _ in range(max_pages):
            if url is None:
                return items
            data, headers = self._request("GET", self._relative(url))
            if not isinstance(data, list):
                raise GitHubError(f"GitHub GET {_shown(path)}: expected a JSON list")
            items.extend(data)
            url = _next_link(headers.get("Link", ""))
        if url is not None:
            raise GitHubError(f"GitHub GET {_shown(path)}: more than {max_pages} pages")
        return items

    def download(self, path: str, max_bytes: int) -> bytes:
        """GET a file (an artifact's zip) of at most ``max_bytes``.

        GitHub answers with a redirect to a signed URL on another host; that URL is fetched
        without the token (it carries its own signature), never with it.
        """
        url = f"{self.api_url}/{path.lstrip('/')}"
        where = f"GitHub GET {_shown(path)}"
        opener = urllib.request.build_opener(_NoRedirect)
        request = urllib.request.Request(url, headers=self._headers())  # noqa: S310 - scheme checked in __init__
        try:
            try:
                with opener.open(request, timeout=self.timeout_s) as response:
                    return _capped_read(response, max_bytes, where)
            except urllib.error.HTTPError as exc:
                location = exc.headers.get("Location") if exc.code in (301, 302, 307) else None
                if not location:
                    raise GitHubError(f"{where}: HTTP {exc.code}{_github_message(exc)}",
                                      exc.code) from exc
            if urlsplit(location).scheme not in ("http", "https"):
                raise GitHubError(f"{where}: redirected to a URL that is not http(s)")
            plain = urllib.request.Request(location, headers={"User-Agent": _USER_AGENT})  # noqa: S310 - scheme checked above
            with urllib.request.urlopen(plain, timeout=self.timeout_s) as response:  # noqa: S310 - scheme checked above
                return _capped_read(response, max_bytes, where)
        except urllib.error.HTTPError as exc:
            raise GitHubError(f"{where}: the download answered HTTP {exc.code}", exc.code) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise GitHubError(self._mask(f"{where}: download failed ({exc})")) from None

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST a JSON body; returns the created resource."""
        return self._request("POST", path, body)[0]

    def patch(self, path: str, body: Mapping[str, Any]) -> Any:
        """PATCH a JSON body; returns the updated resource."""
        return self._request("PATCH", path, body)[0]

    def _request(
        self, method: str, path: str, body: Mapping[str, Any] | None = None
    ) -> tuple[Any, Mapping[str, str]]:
        url = f"{self.api_url}/{path.lstrip('/')}"
        shown = _shown(path)
        data = None if body is None else json.dumps(dict(body)).encode()
        try:
            try:
                return self._once(method, url, data, shown)
            except _Transient as exc:
                if method == "POST":  # may have been applied: a retry could post twice
                    raise GitHubError(str(exc), exc.status) from exc.__cause__
                time.sleep(_RETRY_PAUSE_S)
            try:
                return self._once(method, url, data, shown)
            except _Transient as exc:
                raise GitHubError(str(exc), exc.status) from exc.__cause__
        except GitHubError as exc:
            masked = self._mask(str(exc))
            if masked == str(exc):
                raise
            raise GitHubError(masked, exc.status) from None  # the cause could hold the token too

    def _relative(self, url: str) -> str:
        """A ``Link`` URL as a path under ``api_url``: the token never goes to another host."""
        if not url.startswith(("http://", "https://")):
            return url
        if not url.startswith(self.api_url + "/"):
            raise GitHubError(f"GitHub pagination link leaves {self.api_url}: {_shown(url)}")
        return url[len(self.api_url) :]

    def _mask(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def _once(
        self, method: str, url: str, data: bytes | None, shown: str
    ) -> tuple[Any, Mapping[str, str]]:
        request = urllib.request.Request(url, data=data, method=method, headers=self._headers())  # noqa: S310 - scheme checked in __init__
        where = f"GitHub {method} {shown}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310 - scheme checked in __init__
                raw = response.read(_MAX_BODY + 1)
                headers = dict(response.headers.items())
        except urllib.error.HTTPError as exc:
            message = f"{where}: HTTP {exc.code}{_github_message(exc)}"
            if exc.code in _RETRY_STATUSES:
                raise _Transient(message, exc.code) from exc
            raise GitHubError(message, exc.code) from exc
        except (ConnectionResetError, ConnectionAbortedError) as exc:
            raise _Transient(f"{where}: connection reset") from exc
        except TimeoutError as exc:
            raise GitHubError(f"{where}: no answer within {self.timeout_s:g}s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (ConnectionResetError, ConnectionAbortedError)):
                raise _Transient(f"{where}: connection reset") from exc
            if isinstance(exc.reason, TimeoutError):
                raise GitHubError(f"{where}: no answer within {self.timeout_s:g}s") from exc
            raise GitHubError(f"{where}: {exc.reason}") from exc
        except OSError as exc:  # http.client.RemoteDisconnected and friends
            raise _Transient(f"{where}: connection failed ({type(exc).__name__})") from exc
        if len(raw) > _MAX_BODY:
            raise GitHubError(f"{where}: answer larger than {_MAX_BODY} bytes")
        if not raw.strip():
            return None, headers
        try:
            return json.loads(raw), headers
        except ValueError as exc:
            raise GitHubError(f"{where}: answer is not JSON") from exc

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": _USER_AGENT,
            "Content-Type": "application/json",
        }


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answered by the caller, which drops the token for the new host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _capped_read(response: Any, max_bytes: int, where: str) -> bytes:
    data: bytes = response.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise GitHubError(f"{where}: larger than {max_bytes} bytes")
    return data


class _Transient(Exception):
    """A failure worth one retry (502/503, connection reset)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


def _shown(path: str) -> str:
    """The path as shown in messages: no scheme/host, no query (it could carry anything)."""
    return urlsplit(path).path or path


def _next_link(link: str) -> str | None:
    for part in link.split(","):
        match = _NEXT_LINK.search(part)
        if match:
            return match.group(1)
    return None


def _github_message(exc: urllib.error.HTTPError) -> str:
    """GitHub's ``message`` from an error body, cut short; empty when there is none."""
    try:
        payload = json.loads(exc.read(64 * 1024) or b"null")
    except (ValueError, OSError):
        return ""
    message = payload.get("message") if isinstance(payload, dict) else None
    return f": {str(message)[:300]}" if message else ""
