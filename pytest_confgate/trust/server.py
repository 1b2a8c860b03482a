"""PostgreSQL connections for the trust and ranking stores: the only module that imports psycopg.

psycopg 3 is an extra (``pip install 'pytest-confgate[postgres]'``), imported only when a
``postgresql://`` URL is given, so the SQLite default costs nothing. The password never comes
from the URL (config validation refuses one there): it is read from the environment variable
named by ``password_env``, else libpq finds it itself (``PGPASSWORD``, ``~/.pgpass``) or the
server needs none. Every message is masked: the URL shows no password and the password's value
is replaced wherever a driver message might repeat it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_confgate.config.trust import masked
from pytest_confgate.exceptions import StoreError

if TYPE_CHECKING:
    import psycopg

RETRYABLE = frozenset({"40001", "40P01", "55P03", "57014", "57P01"})
"""Serialization failure, deadlock, lock timeout, statement timeout, admin shutdown."""
_APPLICATION = "confgate"


@dataclass(frozen=True)
class Server:
    """A PostgreSQL database by URL, with where its password comes from."""

    url: str
    password_env: str | None = None
    connect_timeout_s: int = 10

    @property
    def shown(self) -> str:
        """The URL for messages (it holds no password; masked anyway)."""
        return masked(self.url)

    def password(self) -> str | None:
        """The password from ``password_env``; unset or empty is an error naming the variable."""
        if self.password_env is None:
            return None
        value = os.environ.get(self.password_env)
        if not value:
            raise StoreError(
                f"{self.shown}: the environment variable {self.password_env} (password_env) "
                "is not set; set it to the database password"
            )
        return value

    def scrub(self, text: str) -> str:
        """``text`` with the URL's password and the password's value masked."""
        secret = os.environ.get(self.password_env or "") if self.password_env else None
        shown = masked(text)
        return shown.replace(secret, "***") if secret else shown

    def connect(self) -> psycopg.Connection[Any]:
        """An autocommit connection; any failure is a ``StoreError`` naming the server."""
        module = driver(self.shown)
        password = self.password()
        extra: dict[str, Any] = {} if password is None else {"password": password}
        try:
            conn: psycopg.Connection[Any] = module.connect(
                self.url, autocommit=True, connect_timeout=self.connect_timeout_s,
                application_name=_APPLICATION, **extra,
            )
            return conn
        except module.Error as exc:
            # Not worth another attempt: a server that refused once (or never answered within
            # the timeout) will not answer in 50 ms; the caller spools at once.
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreError(self.scrub(f"{self.shown}: cannot connect ({detail})")) from None

    def error(self, exc: Exception, doing: str) -> StoreError:
        """A driver error as ours: masked, one line, retryable ones as ``StoreBusy``."""
        from pytest_confgate.trust.store import StoreBusy

        detail = " ".join(str(exc).split()) or type(exc).__name__
        message = self.scrub(f"{self.shown}: {doing} ({detail})")
        if retryable(exc):
            return StoreBusy(message)
        return StoreError(message)


def retryable(exc: Exception) -> bool:
    """Whether another attempt may succeed: a lock or snapshot conflict, or a lost connection."""
    module = driver("")
    if isinstance(exc, module.OperationalError) and getattr(exc, "sqlstate", None) is None:
        return True  # the connection failed or dropped
    return getattr(exc, "sqlstate", None) in RETRYABLE or (
        getattr(exc, "sqlstate", None) or ""
    ).startswith("08")


def driver(shown: str) -> Any:
    """The ``psycopg`` module, or a ``StoreError`` saying how to install it."""
    try:
        import psycopg
    except ImportError as exc:
        where = f"{shown}: " if shown else ""
        raise StoreError(
            f"{where}a postgresql:// store needs psycopg 3 ({exc}); install it with "
            "pip install 'pytest-confgate[postgres]'"
        ) from None
    return psycopg
