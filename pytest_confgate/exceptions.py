"""The one exception tree of pytest-confgate.

Every error a user can cause is a ``ConfgateError``; front doors turn it into an exit status
and a message (never a traceback)::

    ConfgateError
    ├── ConfigError      invalid configuration: one ``FILE:LINE: key.path: message`` per problem
    ├── EvidenceError    a tool or data source could not produce trustworthy evidence
    ├── ReportError      a report cannot be written or read
    ├── AgentError       an agent (LLM or command) failed
    └── StoreError       the trust store cannot be used
"""

from __future__ import annotations


class ConfgateError(Exception):
    """Base of every error pytest-confgate raises on purpose."""


class ConfigError(ConfgateError):
    """Configuration that cannot be used; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class EvidenceError(ConfgateError):
    """Evidence that cannot be trusted: the metric becomes ``error``, the gate fails closed."""


class ReportError(ConfgateError):
    """A report that cannot be written where asked, or read back."""


class AgentError(ConfgateError):
    """An agent call that failed (timeout, non-zero exit, unusable answer)."""


class StoreError(ConfgateError):
    """The trust store is corrupt, newer than this version, or unreachable."""
