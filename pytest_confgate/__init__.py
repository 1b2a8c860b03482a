"""pytest-confgate: one quality gate for changes written by people and by AI agents.

The public API is ``__all__``. Names are imported lazily (PEP 562) so that pytest loading
the plugin without ``--confgate`` imports nothing heavy.

PYTEST_DONT_REWRITE: ``confgate gate``'s test process and ``python -m pytest_confgate`` import
this package before pytest starts; pytest would otherwise warn that it cannot rewrite a
plugin it found already imported, an error where a project turns warnings into errors.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_confgate.gate.score import compute_confidence, compute_raw
    from pytest_confgate.hookspecs import hookimpl
    from pytest_confgate.models import Condition, EvalMetric
    from pytest_confgate.trust import triage, trust_score

__all__ = [
    "Condition",
    "EvalMetric",
    "compute_confidence",
    "compute_raw",
    "hookimpl",
    "triage",
    "trust_score",
]

_LAZY = {
    "Condition": "pytest_confgate.models",
    "EvalMetric": "pytest_confgate.models",
    "hookimpl": "pytest_confgate.hookspecs",
    "compute_confidence": "pytest_confgate.gate.score",
    "compute_raw": "pytest_confgate.gate.score",
    "triage": "pytest_confgate.trust",
    "trust_score": "pytest_confgate.trust",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pytest_confgate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
