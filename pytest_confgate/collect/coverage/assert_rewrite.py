"""pytest's assertion rewriting where no pytest configuration exists: the ``ahead`` helper.

The gate compiles a test module once, asserts rewritten and probes in (``line_probes``). The
pytest plugin's ``AssertRewriting`` does it at import with the run's configuration; a cold run's
helper process (``ahead``) compiles test modules before they are imported, on the other core,
and has no configuration. The configuration changes the rewritten code only through
``enable_assertion_pass_hook``: with it off, ``rewrite_asserts`` without a configuration gives
the same code, so the helper compiles test modules only for a run whose ``variant`` says so.
pytest is imported only when a module is rewritten, never by the gate's own imports.
"""

from __future__ import annotations

import ast

REWRITTEN = "pytest-rewritten"


def variant(pytest_version: str, pass_hook: bool) -> str:
    """What tells rewritten code apart in the probe cache: pytest's version and the one
    setting the rewriting reads (a newer pytest, or the hook turned on, compiles anew)."""
    return f"{REWRITTEN}:{pytest_version}:{'hook' if pass_hook else 'nohook'}"


class PlainRewriting:
    """``rewrite_asserts`` without a configuration: right for runs whose pass hook is off."""

    def __init__(self) -> None:
        from _pytest import __version__

        self.variant = variant(__version__, False)

    def rewrite_tree(self, tree: ast.Module, source: bytes, path: str) -> None:
        from _pytest.assertion.rewrite import rewrite_asserts

        rewrite_asserts(tree, source, path, None)
