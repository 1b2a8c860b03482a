"""The ``trust:`` section: the store and the trust formula's knobs.

``trust.db`` (and ``rank.db``, ``--db``) is a path (the SQLite file, the default) or a
``postgresql://USER@HOST:PORT/DB`` URL (issue 20). Any other URL scheme is an error rather than
a folder named ``smb:``; a URL never holds the password (it would reach logs and the
repository): ``password_env`` names the environment variable that does.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, field_validator, model_validator

from pytest_confgate.config.base import ConfigModel, EnvName, Fraction, Text

Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
SERVER_SCHEMES = ("postgresql", "postgres")
"""libpq's two URI designators."""
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s@/]*@")
_QUERY_PASSWORD = re.compile(r"(\bpassword=)[^\s&]*", re.IGNORECASE)


def masked(text: str) -> str:
    """``text`` with the password of any URL in it (``user:secret@``, ``password=``) as ``***``."""
    return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", text))


def server_url(value: str) -> str | None:
    """``value`` when it is a PostgreSQL URL, ``None`` when it is a path (an SQLite file).

    Raises ``ValueError`` (with the URL masked) for any other scheme and for a URL that holds
    a password.
    """
    match = _SCHEME.match(value.strip())
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in SERVER_SCHEMES:
        raise ValueError(
            f"{masked(value)}: {scheme}:// is not a store this version can use; give a path "
            "(an SQLite file) or a postgresql://USER@HOST:PORT/DATABASE URL"
        )
    parts = urlsplit(value.strip())
    if parts.password is not None or any(
        name.lower() == "password" for name, _ in parse_qsl(parts.query)
    ):
        raise ValueError(
            f"{masked(value)}: the URL holds a password; remove it and put the password in an "
            "environment variable named by password_env (e.g. trust.password_env)"
        )
    return value.strip()


def mask_db_password(data: Any) -> Any:
    """A section's ``db`` with any password masked before validation, so no error message
    can repeat it (used as a ``mode="before"`` model validator)."""
    if isinstance(data, dict) and isinstance(data.get("db"), str):
        return {**data, "db": masked(data["db"])}
    return data


class SeverityWeights(ConfigModel):
    """How much one finding of each severity counts (P0 4x, P1 2x, P2 1x, P3 0.5x)."""

    P0: Positive = 4.0
    P1: Positive = 2.0
    P2: Positive = 1.0
    P3: Positive = 0.5


class TrustConfig(ConfigModel):
    """Where review outcomes are stored and how they become a per-agent multiplier."""

    db: Text = ".confgate/trust.db"
    """A path (SQLite, relative to the working directory) or a ``postgresql://`` URL."""
    password_env: EnvName | None = None
    """PostgreSQL only: the environment variable holding the password (never the URL)."""
    connect_timeout_s: Annotated[int, Field(ge=1, le=300)] = 10
    """PostgreSQL only: how long to wait for the server before the write is spooled."""
    mode: Literal["formula", "bayesian"] = "formula"
    half_life_days: Annotated[float, Field(gt=0.0, le=3650.0, allow_inf_nan=False)] = 30.0
    full_weight_reviews: Annotated[int, Field(ge=1, le=100_000)] = 20
    """Distinct review runs after which the project score alone counts."""
    floor: Fraction = 0.05
    low_trust: Fraction = 0.3
    """Agents below this are flagged in ``confgate trust report``."""
    severity_weights: SeverityWeights = Field(default_factory=SeverityWeights)
    prior_strength: Annotated[float, Field(ge=0.0, le=1_000_000.0, allow_inf_nan=False)] = 5.0
    """``mode: bayesian`` only: weighted findings of global evidence a project score starts at."""
    new_agent: Literal["neutral", "global", "prior"] = "neutral"
    """Where an agent without evidence starts: 1.0 , the team's pooled precision, or
    ``new_agent_prior``; with ``global``/``prior`` its own evidence takes over gradually."""
    new_agent_prior: Fraction = 0.5
    """``new_agent: prior`` only: the trust of an agent nobody has reviewed yet."""
    busy_timeout_ms: Annotated[int, Field(ge=1, le=60_000)] = 2000
    """How long one write waits for another writer's lock before retrying."""
    write_attempts: Annotated[int, Field(ge=1, le=10)] = 3
    """Attempts per write; after the last one the event goes to the spool, never lost."""

    _masked = model_validator(mode="before")(mask_db_password)

    @field_validator("db")
    @classmethod
    def _a_path_or_a_server(cls, value: str) -> str:
        server_url(value)
        return value
