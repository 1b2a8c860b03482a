"""The stdlib GitHub REST client against a real HTTP server on 127.0.0.1 (tests/fakes)."""

from __future__ import annotations

import pytest
from fakes.github_server import FakeGitHubServer

from pytest_confgate.exceptions import ConfgateError, GitHubError
from pytest_confgate.github.api import GitHubClient

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

SHA = "d" * 40


@pytest.fixture
def client(github_server: FakeGitHubServer) -> GitHubClient:
    return GitHubClient(github_server.token, github_server.api_url, timeout_s=2.0)


def test_get_sends_githubs_headers_with_a_bearer_token(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    github_server.add_pull("o/r", 7, author="carol", head_sha=SHA)

    pull = client.get("/repos/o/r/pulls/7")

    assert pull == {"number": 7, "user": {"login": "carol"}, "head": {"sha": SHA}}
    headers = github_server.requests[0].headers
    assert headers["authorization"] == f"Bearer {github_server.token}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"].startswith("pytest-confgate")


def test_post_creates_and_patch_updates_a_comment(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    created = client.post("/repos/o/r/issues/7/comments", {"body": "first"})
    updated = client.patch(f"/repos/o/r/issues/comments/{created['id']}", {"body": "second"})

    assert updated["id"] == created["id"]
    assert [c["body"] for c in github_server.comments["o/r", 7]] == ["second"]
    assert [(r.method, r.body) for r in github_server.requests] == [
        ("POST", {"body": "first"}),
        ("PATCH", {"body": "second"}),
    ]


def test_paginate_follows_link_next_with_100_per_page(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    for index in range(250):
        github_server.add_review("o/r", 7, f"user{index}", "COMMENTED", commit_id=SHA)

    reviews = client.paginate("/repos/o/r/pulls/7/reviews")

    assert [r["user"]["login"] for r in reviews] == [f"user{i}" for i in range(250)]
    assert [r.query.get("page", "1") for r in github_server.requests] == ["1", "2", "3"]
    assert {r.query["per_page"] for r in github_server.requests} == {"100"}


def test_paginate_refuses_to_truncate_past_max_pages(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    for index in range(201):
        github_server.add_review("o/r", 7, f"user{index}", "COMMENTED", commit_id=SHA)

    with pytest.raises(GitHubError, match=r"more than 2 pages"):
        client.paginate("/repos/o/r/pulls/7/reviews", max_pages=2)


def test_an_http_error_names_method_path_status_and_githubs_message(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    with pytest.raises(GitHubError) as info:
        client.get("/repos/o/r/pulls/404")

    assert str(info.value) == "GitHub GET /repos/o/r/pulls/404: HTTP 404: Not Found"
    assert info.value.status == 404
    assert isinstance(info.value, ConfgateError)


def test_a_500_is_not_retried(github_server: FakeGitHubServer, client: GitHubClient) -> None:
    github_server.fail_next(500, message="Server Error")

    with pytest.raises(GitHubError, match=r"HTTP 500: Server Error"):
        client.get("/repos/o/r/pulls/7")
    assert len(github_server.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [{"status": 502}, {"status": 503}, {"reset": True}],
    ids=["bad-gateway", "unavailable", "connection-reset"],
)
def test_one_transient_failure_is_retried_once(
    github_server: FakeGitHubServer, client: GitHubClient, failure: dict[str, object]
) -> None:
    github_server.add_pull("o/r", 7, author="carol", head_sha=SHA)
    github_server.fail_next(**failure)  # type: ignore[arg-type]

    assert client.get("/repos/o/r/pulls/7")["number"] == 7
    assert len(github_server.requests) == 2


def test_two_transient_failures_give_up_with_the_status(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    github_server.fail_next(503, message="Unicorn")
    github_server.fail_next(503, message="Unicorn")

    with pytest.raises(GitHubError, match=r"GitHub GET /repos/o/r/pulls/7: HTTP 503: Unicorn"):
        client.get("/repos/o/r/pulls/7")
    assert len(github_server.requests) == 2


def test_a_timeout_is_an_error_naming_the_limit(github_server: FakeGitHubServer) -> None:
    client = GitHubClient(github_server.token, github_server.api_url, timeout_s=0.2)
    github_server.fail_next(200, delay_s=2.0)

    with pytest.raises(GitHubError, match=r"GET /repos/o/r/pulls/7: no answer within 0.2s"):
        client.get("/repos/o/r/pulls/7")


def test_an_answer_that_is_not_json_is_an_error(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    github_server.fail_next(200, raw=b"<html>proxy login</html>")

    with pytest.raises(GitHubError, match=r"GET /repos/o/r/pulls/7: answer is not JSON"):
        client.get("/repos/o/r/pulls/7")


def test_the_token_never_appears_in_an_error_or_repr(github_server: FakeGitHubServer) -> None:
    token = "ghp_secret_value_123"  # noqa: S105 - a fake token the test looks for
    client = GitHubClient(token, github_server.api_url)
    github_server.fail_next(401, message=f"Bad credentials for {token}")

    with pytest.raises(GitHubError) as info:
        client.get("/repos/o/r/pulls/7")

    assert token not in str(info.value)
    assert token not in repr(info.value)
    assert token not in repr(client)
    assert "HTTP 401: Bad credentials for ***" in str(info.value)


def test_a_pagination_link_to_another_host_is_refused(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    with pytest.raises(GitHubError, match=r"leaves"):
        client._relative("https://evil.example/repos/o/r/pulls/7/reviews?page=2")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"GITHUB_TOKEN": " "}, None),
        ({"GITHUB_TOKEN": "t1"}, "https://api.github.com"),
        (
            {"CONFGATE_GITHUB_TOKEN": "t2", "GITHUB_API_URL": "https://ghe.example/api/v3/"},
            "https://ghe.example/api/v3",
        ),
    ],
    ids=["no-token", "blank-token", "github-token", "confgate-token-on-ghes"],
)
def test_from_env_needs_a_token_and_reads_the_api_url(
    environ: dict[str, str], expected: str | None
) -> None:
    client = GitHubClient.from_env(environ)

    assert (client.api_url if client else None) == expected


def test_a_non_http_api_url_is_refused() -> None:
    with pytest.raises(GitHubError, match=r"must be http\(s\)"):
        GitHubClient("t", "file:///etc/passwd")


def test_a_post_is_not_retried_because_it_may_have_been_applied(
    github_server: FakeGitHubServer, client: GitHubClient
) -> None:
    github_server.fail_next(502)

    with pytest.raises(GitHubError, match=r"POST /repos/o/r/issues/7/comments: HTTP 502"):
        client.post("/repos/o/r/issues/7/comments", {"body": "once"})
    assert len(github_server.requests) == 1
