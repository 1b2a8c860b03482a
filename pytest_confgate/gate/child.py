"""The test process of ``confgate gate``: ``python -m pytest``, once the supervisor says go.

``python -m pytest_confgate.gate.child ARGS`` imports the gate's own modules (pydantic and the
models take most of a start-up; not when the project is one of the packages that brings in,
``WARMED``), then blocks on the pipe ``ENV_GO`` names until the supervisor
has settled the configuration, the tier and the provenance, and only then runs pytest exactly
as ``python -m pytest ARGS`` would. Both start-ups overlap, and no plugin, conftest or test of
the change runs before the supervisor is ready. If the supervisor closes the pipe without a
word (its own start failed), nothing runs.

Leaf: the standard library until the go; then coverage.py's early measurement
(``collect.coverage.early_start``) and pytest, through ``runpy`` as ``-m`` does.
"""

from __future__ import annotations

import os
import runpy
import sys

ENV_FD = "CONFGATE_SUPERVISOR_FD"
"""The channel's write end in the test process (``gate.channel``)."""
ENV_GO = "CONFGATE_SUPERVISOR_GO"
"""The read end of the pipe the supervisor writes one byte to when the tests may start."""
NOT_STARTED = 3
"""Exit status when the supervisor never said go (pytest's "internal error" is 3 too)."""


def wait_for_go(environ: dict[str, str] | os._Environ[str]) -> bool:
    """Block until the supervisor says go; False when it closed the pipe without a word."""
    text = environ.pop(ENV_GO, "")
    if not text.isdigit():
        return True  # not started by confgate gate: nothing to wait for
    fd = int(text)
    try:
        return os.read(fd, 1) == b"g"
    except OSError:
        return False
    finally:
        os.close(fd)


WARMED = frozenset({"annotated_types", "pluggy", "pydantic", "pydantic_core",
                    "typing_extensions", "typing_inspection", "yaml"})
"""The installed packages that importing the gate's engine imports: a project that is one of
them (pluggy's own suite) is measured from their import, as ``coverage run`` measures it."""


def _is_warmed(root: str) -> bool:
    """Whether the project at ``root`` (or its ``src/``) provides one of ``WARMED``."""
    for folder in (root, os.path.join(root, "src")):
        for name in WARMED:
            if (os.path.isfile(os.path.join(folder, name, "__init__.py"))
                    or os.path.isfile(os.path.join(folder, f"{name}.py"))):
                return True
    return False


def main() -> int:
    if not _is_warmed(os.getcwd()):
        import pytest_confgate.gate.engine  # noqa: F401 - warmed while the supervisor settles

    if not wait_for_go(os.environ):
        sys.stderr.write("confgate gate: the supervisor did not start the tests\n")
        return NOT_STARTED
    from pytest_confgate.collect.coverage import early_start

    # Measured from here, before pytest imports its plugins, as `python -m pytest_confgate`
    # and `coverage run -m pytest` do (issue 35): the gate's own measurement takes it over.
    early_start.begin()
    sys.argv[0] = "pytest"
    try:
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    finally:
        early_start.discard()
    return 0  # pragma: no cover - pytest's __main__ exits with its own status


if __name__ == "__main__":
    sys.exit(main())
