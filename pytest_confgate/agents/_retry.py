"""Our own bounded retry loop for LLM calls; the SDKs' retries are turned off.

Why not the SDKs' loops: they know no total deadline, honour any ``Retry-After`` a server
sends and retry errors that will never succeed. A gate waits for its judge, so every call
has a per-attempt timeout, a retry count and one deadline for all attempts together.
Only 408, 429, 5xx, timeouts and lost connections are retried. Each attempt's failure is
named for what it was (a reset connection is not a timeout), and the error says how many
attempts were made and carries that count (``AgentError.attempts``) for the report.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pytest_confgate.exceptions import AgentError

RETRY_AFTER_CAP_S = 20.0
"""A server's ``Retry-After`` is honoured up to this; beyond it we would rather fail."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
MIN_ATTEMPT_S = 0.05
"""An attempt with less time than this left before the deadline is not worth starting."""
_DETAIL_CHARS = 300

T = TypeVar("T")


@dataclass(frozen=True)
class RetryBudget:
    """How long one ``ask`` may take: ``max_retries`` after the first attempt, each attempt
    at most ``timeout_s``, all of them together at most ``deadline_s``."""

    max_retries: int
    timeout_s: float
    deadline_s: float

    @classmethod
    def of(cls, max_retries: int, timeout_ms: int, deadline_ms: int | None) -> RetryBudget:
        """The budget from an agent's config; the deadline defaults to three timeouts."""
        deadline = deadline_ms if deadline_ms is not None else 3 * timeout_ms
        return cls(max_retries, timeout_ms / 1000, deadline / 1000)


@dataclass(frozen=True)
class Failure:
    """What one failed attempt means: a sentence for the user and whether to try again."""

    what: str
    retryable: bool
    kind: str = "error"
    """A short name for reports: ``timeout``, ``connection_reset``, ``http_503``..."""
    retry_after_s: float | None = None
    hint: str = ""
    chain: bool = True
    """False when the SDK's own exception may quote the server's reply (it could echo a key)."""


@dataclass(frozen=True)
class SdkErrors:
    """The three exception classes the OpenAI and Anthropic SDKs share by shape."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]


def call_with_retries(
    attempt: Callable[[float], T],
    classify: Callable[[Exception, float], Failure],
    *,
    agent: str,
    budget: RetryBudget,
    secret: str,
) -> tuple[T, int]:
    """``attempt(timeout_s)`` until it succeeds or the budget is spent; (result, attempts).

    Raises ``AgentError`` naming the agent, the last failure and what to do, with ``secret``
    (the API key) scrubbed from the message.
    """
    started = time.monotonic()
    kinds: list[str] = []
    last: Failure | None = None
    while True:
        left_s = budget.deadline_s - (time.monotonic() - started)
        if left_s < MIN_ATTEMPT_S:  # never an attempt with no time (a negative socket timeout)
            raise AgentError(
                _scrub(_spent(agent, budget, kinds, last), secret),
                attempts=len(kinds), kind=last.kind if last else "deadline",
            )
        timeout_s = min(budget.timeout_s, left_s)
        try:
            return attempt(timeout_s), len(kinds) + 1
        except Exception as exc:  # every failure, SDK or not, becomes an AgentError below
            failure = last = classify(exc, timeout_s)
            kinds.append(failure.kind)
            elapsed_s = time.monotonic() - started
            stop = _why_stop(failure, len(kinds), budget, elapsed_s)
            if stop is not None:
                message = _scrub(f"agent {agent!r}: {failure.what}; {stop}{_each(kinds)}", secret)
                error = AgentError(message, attempts=len(kinds), kind=failure.kind)
                raise error from (exc if failure.chain else None)
            # The jitter never eats the time the next attempt needs.
            room_s = budget.deadline_s - elapsed_s - MIN_ATTEMPT_S
            time.sleep(max(0.0, min(_delay(failure, len(kinds)), room_s)))


def _spent(agent: str, budget: RetryBudget, kinds: list[str], last: Failure | None) -> str:
    """The deadline ran out before another attempt could start: what was tried, and what to
    change (not the socket's "Timeout value out of range" a zero timeout would give)."""
    if last is None:
        return (f"agent {agent!r}: the {budget.deadline_s:g} s deadline (deadline_ms) leaves "
                "no time for a first attempt; raise deadline_ms for this agent")
    return (
        f"agent {agent!r}: {last.what}; the {budget.deadline_s:g} s deadline was spent after "
        f"{len(kinds)} attempt(s), before another could start; try again later, or raise "
        f"deadline_ms for this agent{_each(kinds)}"
    )


def _each(kinds: list[str]) -> str:
    """What each attempt met, when they did not all fail the same way."""
    if len(set(kinds)) < 2:
        return ""
    return f" (attempts: {', '.join(kind.replace('_', ' ') for kind in kinds)})"


def _why_stop(failure: Failure, tries: int, budget: RetryBudget, elapsed_s: float) -> str | None:
    if not failure.retryable:
        return failure.hint or "this error is not retried"
    advice = "try again later, or raise max_retries or deadline_ms for this agent"
    if tries > budget.max_retries:
        return f"gave up after {tries} attempt(s) (max_retries={budget.max_retries}); {advice}"
    delay = _delay(failure, tries, jitter=False)
    if elapsed_s + delay + MIN_ATTEMPT_S >= budget.deadline_s:
        wait = f"waiting {delay:g} s more" if delay else "another attempt"
        return (
            f"gave up after {tries} attempt(s): {wait} would pass the"
            f" {budget.deadline_s:g} s deadline; {advice}"
        )
    return None


def _delay(failure: Failure, tries: int, *, jitter: bool = True) -> float:
    if failure.retry_after_s is not None:
        return min(failure.retry_after_s, RETRY_AFTER_CAP_S)
    delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** (tries - 1))
    if jitter:  # spread retries of parallel callers; not cryptography
        delay *= 1 + 0.25 * random.random()  # noqa: S311
    return delay


def classify_sdk_error(
    exc: Exception, timeout_s: float, *, errors: SdkErrors, key_env: str, endpoint: str
) -> Failure:
    """Turn an OpenAI or Anthropic SDK exception into a ``Failure`` the loop can act on."""
    if isinstance(exc, errors.timeout):
        what = f"no answer from {endpoint} within {timeout_s:g} s"
        return Failure(what, retryable=True, kind="timeout")
    if isinstance(exc, errors.connection):
        cause = exc.__cause__ or exc
        kind = connection_kind(exc)
        how = {"connection_reset": "was reset", "connection_refused": "was refused"}
        what = f"connection to {endpoint} {how.get(kind, 'failed')} ({cause})"
        return Failure(what, retryable=True, kind=kind)
    if isinstance(exc, errors.status):
        return _status_failure(exc, key_env=key_env, endpoint=endpoint)
    return Failure(
        f"unexpected error from {endpoint}: {type(exc).__name__}: {exc}",
        retryable=False,
        kind="unexpected",
        hint="check base_url and model for this agent",
    )


def connection_kind(exc: BaseException) -> str:
    """``connection_reset``, ``connection_refused``, ``connection_closed`` or
    ``connection_error``, from the exception and the chain of errors under it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    texts = []
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionResetError):
            return "connection_reset"
        if isinstance(current, ConnectionRefusedError):
            return "connection_refused"
        texts.append(str(current).lower())
        current = current.__cause__ or current.__context__
    text = " ".join(texts)
    if "reset by peer" in text or "connection reset" in text:
        return "connection_reset"
    if "refused" in text:
        return "connection_refused"
    if "disconnected" in text or "closed" in text:
        return "connection_closed"
    return "connection_error"


def _status_failure(exc: Exception, *, key_env: str, endpoint: str) -> Failure:
    status = int(getattr(exc, "status_code", 0))
    if status in (401, 403):
        return Failure(
            f"{endpoint} refused the API key from {key_env} (HTTP {status})",
            retryable=False,
            kind="auth",
            hint=f"check that {key_env} holds a valid key for this server",
            chain=False,
        )
    detail = _server_message(getattr(exc, "body", None))
    what = f"HTTP {status} from {endpoint}" + (f": {detail}" if detail else "")
    if status in (408, 429) or status >= 500:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        return Failure(
            what,
            retryable=True,
            kind=f"http_{status}",
            retry_after_s=retry_after_s(headers),
            chain=False,
        )
    return Failure(
        what,
        retryable=False,
        kind=f"http_{status}",
        hint="the request was rejected: check model, max_tokens and temperature for this agent",
        chain=False,
    )


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms``, ``Retry-After`` as seconds or
    an HTTP date), or None when it did not say or said nonsense."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(body: object) -> str:
    message: object = body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message", "") if isinstance(error, dict) else error
    text = " ".join(str(message or "").split())
    return text[:_DETAIL_CHARS]


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text
