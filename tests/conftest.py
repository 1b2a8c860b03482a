"""Fixtures shared by every test folder: fake LLM servers on 127.0.0.1 (``tests/fakes``).

``tests/`` is on ``sys.path`` while this file is imported (pytest's default ``prepend``
import mode for a conftest outside any package), so the fakes import as ``fakes.*``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fakes.llm_servers import FakeAnthropicServer, FakeOpenAIServer


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
