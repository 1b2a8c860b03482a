"""The GitHub Action's gate step (``python -m pytest_confgate.action_run``).

The Action's inputs arrive only as environment variables (never ``${{ }}`` inside a ``run:``
script, SPEC 10), and the pytest command line is built here as an argv list, so no input is
ever parsed by a shell. The step itself never fails: the verdict is the next step's
(``confgate github publish``) exit status, decided from the report this run writes.
"""

from __future__ import annotations

import secrets
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence

REPORT = "confgate-report.json"
ENV_PYTEST_ARGS = "CONFGATE_PYTEST_ARGS"
ENV_CONFIG = "CONFGATE_CONFIG"
ENV_BASE_REF = "CONFGATE_BASE_REF"


def pytest_argv(environ: Mapping[str, str], python: str = sys.executable) -> list[str]:
    """``python -m pytest [args] --confgate --confgate-report confgate-report.json [...]``.

    ``CONFGATE_PYTEST_ARGS`` is split like a POSIX shell would, but nothing is expanded: a
    ``$(...)`` in it is just an argument pytest will reject.
    """
    argv = [python, "-m", "pytest", *shlex.split(environ.get(ENV_PYTEST_ARGS, ""))]
    argv += ["--confgate", "--confgate-report", REPORT]
    config = environ.get(ENV_CONFIG, "").strip()
    if config:
        argv += ["--confgate-config", config]
    base = environ.get(ENV_BASE_REF, "").strip()
    if base:
        argv += ["--confgate-base", base]
    return argv


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the gate; always 0 so the publish step, which reads the report, decides."""
    import os

    env = dict(os.environ if environ is None else environ)
    try:
        command = pytest_argv(env)
    except ValueError as exc:  # an unbalanced quote in pytest-args
        print(f"confgate: pytest-args cannot be split ({exc}); running without them")
        command = pytest_argv({**env, ENV_PYTEST_ARGS: ""})
    status = run_without_commands(command)
    print(f"confgate: pytest exited with status {status}")
    return 0


def run_without_commands(command: Sequence[str]) -> int:
    """Run ``command`` with its output in the log but unable to issue workflow commands.

    Two layers: ``::stop-commands::`` with a random token pauses command processing on the
    runner, and any line that would still read as a command (``::`` after blanks) is prefixed.
    """
    token = secrets.token_hex(16)
    sys.stdout.flush()  # our text lines first, then raw bytes
    out = sys.stdout.buffer
    out.write(f"::stop-commands::{token}\n".encode())
    out.flush()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None  # noqa: S101 - PIPE was asked for
        for line in proc.stdout:
            out.write(neutral_line(line))
            out.flush()
        status = proc.wait()
    out.write(f"::{token}::\n".encode())
    out.flush()
    return status


def neutral_line(line: bytes) -> bytes:
    """The line, prefixed with ``| `` when it (after blanks) or any CR-part starts with ``::``."""
    if any(part.lstrip().startswith(b"::") for part in line.split(b"\r")):
        return b"| " + line.replace(b"\r", b"\\r")
    return line


if __name__ == "__main__":  # pragma: no cover - the Action's entry point
    sys.exit(main())
