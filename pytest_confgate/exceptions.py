"""The one exception tree of pytest-confgate.

Every error a user can cause is a ``ConfgateError``; front doors turn it into an exit status
and a message (never a traceback)::

    ConfgateError
    ├── ConfigError      invalid configuration: one ``FILE:LINE: key.path: message`` per problem
    ├── EvidenceError    a tool or data source could not produce trustworthy evidence
    ├── ReportError      a report cannot be written or read
    ├── AgentError       an agent (LLM or command) failed
    ├── ConditionError   an exit condition that does not compile or cannot be decided
    ├── GitHubError      a GitHub REST call failed (status and GitHub's message, never the token)
    ├── StoreError       the trust store cannot be used
    └── CandidateError   a ``confgate rank`` candidate or baseline that does not exist
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
    """An agent call that failed (timeout, non-zero exit, unusable answer).

    ``attempts`` counts the calls made before giving up (0 when none could be made, such as
    a missing key or program); ``kind`` names the last failure for reports: ``timeout``,
    ``connection_reset``, ``http_503``, ``exit_status``, ``not_found``...
    """

    def __init__(self, message: str, *, attempts: int = 0, kind: str = "error") -> None:
        self.attempts = attempts
        self.kind = kind
        super().__init__(message)


class ConditionError(ConfgateError):
    """An overlay exit condition that does not compile, or has no boolean answer."""


class GitHubError(ConfgateError):
    """A GitHub REST call that failed; sign-off from reviews then fails closed.

    ``status`` is the HTTP status when GitHub answered (404 is how it says "not a member").
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class StoreError(ConfgateError):
    """The trust store is corrupt, newer than this version, or unreachable."""


class CandidateError(ConfgateError):
    """A ``confgate rank`` candidate (or ``--baseline``) that is neither a directory nor a ref."""
