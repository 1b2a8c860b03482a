"""Fixtures shared by every test folder: fake LLM and GitHub servers on 127.0.0.1 (``tests/fakes``)
and a real, throwaway PostgreSQL cluster (``tests/pgcluster.py``).

``tests/`` is on ``sys.path`` while this file is imported (pytest's default ``prepend``
import mode for a conftest outside any package), so the fakes import as ``fakes.*``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pgcluster
import pytest
from fakes.github_server import FakeGitHubServer
from fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer
from hypothesis import HealthCheck, settings

# CI shares two cores with other jobs: how fast examples are drawn says nothing about our code,
# and hypothesis's speed checks failed a test on a loaded machine. Tests that set their own
# suppress_health_check list it too.
settings.register_profile("shared-machine", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared-machine")

RUNNER_VARIABLES = (
    "GITHUB_ACTIONS", "GITHUB_BASE_REF", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY",
    "GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
    "GITHUB_EVENT_NAME", "GITHUB_SHA", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "PYTEST_ADDOPTS",
    "CONFGATE_GITHUB_TOKEN", "CONFGATE_SIGNOFFS", "CONFGATE_AUTHOR", "CONFGATE_CONFIG", "CI",
)


@pytest.fixture(autouse=True)
def _no_runner_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see no CI runner's variables unless they set them: the same results in CI."""
    for name in RUNNER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A real HTTP server speaking OpenAI chat completions; ``base_url`` ends in ``/v1``."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A real HTTP server speaking the Anthropic Messages API at ``base_url``."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def github_server() -> Iterator[FakeGitHubServer]:
    """A real HTTP server speaking the GitHub REST API the gate uses, at ``api_url``."""
    with FakeGitHubServer() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[pgcluster.Cluster]:
    """One PostgreSQL cluster per test process (each xdist worker starts its own)."""
    bindir = pgcluster.find_bindir()
    if bindir is None:
        pytest.skip(
            "no PostgreSQL binaries (initdb, pg_ctl): install the postgresql package "
            "(apt-get install postgresql) or set CONFGATE_PG_BINDIR"
        )
    cluster = pgcluster.start(bindir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: pgcluster.Cluster) -> str:
    """A new, empty database of its own for one test, as ``postgresql://confgate@...``."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    postgres_cluster.execute(f"CREATE DATABASE {name}")
    return postgres_cluster.url(name)


@pytest.fixture
def outside_a_gate_session() -> Iterator[None]:
    """For a test that reads cache entries written by another process, or by itself without
    ``cache_trust``, as a cache outside a gate session does. Our own suite may run under the
    gate (``--confgate``): its session's rule (entries changed since it started are suspect)
    would apply, or not, by which test ran before in the same worker."""
    from pytest_confgate.collect import cache_trust

    before = cache_trust.threshold()
    cache_trust.end()
    yield
    if before is not None:
        cache_trust.begin(before)
