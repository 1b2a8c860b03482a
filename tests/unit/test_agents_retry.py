"""How long a server may make us wait: ``Retry-After`` parsing, capped by the retry loop."""

from __future__ import annotations

import email.utils
import time

import pytest

from pytest_confgate.agents._retry import RETRY_AFTER_CAP_S, Failure, _delay, retry_after_s


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({}, None, id="absent"),
        pytest.param({"retry-after": "2"}, 2.0, id="seconds"),
        pytest.param({"retry-after": "0.5"}, 0.5, id="fractional-seconds"),
        pytest.param({"retry-after": "-3"}, 0.0, id="negative-is-now"),
        pytest.param({"retry-after-ms": "250", "retry-after": "9"}, 0.25, id="ms-wins"),
        pytest.param({"retry-after-ms": "soon", "retry-after": "9"}, 9.0, id="bad-ms-falls-back"),
        pytest.param({"retry-after": "whenever"}, None, id="garbage"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, id="date-in-past"),
    ],
)
def test_retry_after_is_read_from_the_headers_servers_send(
    headers: dict[str, str], expected: float | None
) -> None:
    assert retry_after_s(headers) == expected


def test_retry_after_as_a_future_http_date_is_seconds_from_now() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)

    waited = retry_after_s({"retry-after": when})

    assert waited is not None
    assert 28 <= waited <= 30


def test_a_long_retry_after_is_capped() -> None:
    failure = Failure("HTTP 429", retryable=True, retry_after_s=3600)

    assert _delay(failure, 1) == RETRY_AFTER_CAP_S


@pytest.mark.parametrize(("tries", "base"), [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (9, 8.0)])
def test_backoff_doubles_with_a_little_jitter_up_to_a_cap(tries: int, base: float) -> None:
    failure = Failure("HTTP 503", retryable=True)

    assert _delay(failure, tries, jitter=False) == base
    assert base <= _delay(failure, tries) <= base * 1.25
