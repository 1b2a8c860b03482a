"""The GitHub Action's gate step (``python -m pytest_confgate.action_run``).

The Action's inputs arrive only as environment variables (never ``${{ }}`` inside a ``run:``
script), and the pytest command line is built here as an argv list, so no input is
ever parsed by a shell. The change's own code runs in this step, so (issue 14):

- any report already at the target path (committed by the change, or left by an earlier run)
  is removed before pytest starts: a run that dies writes nothing, never an old ``pass``;
- the tests' environment has no token: ``GITHUB_TOKEN``, ``ACTIONS_RUNTIME_TOKEN``,
  ``ACTIONS_ID_TOKEN_REQUEST_*`` and the runner's file-command paths (``GITHUB_ENV``,
  ``GITHUB_PATH``, ...) are removed; the runner puts some there and ``env:`` cannot unset them;
- the tests run under ``confgate gate`` (issue 34): pytest is its child, the test outcomes
  are counted outside the test process, and the supervisor writes the report and prints its
  digest (``DIGEST_LINE``) once every process of the run ended; a line of the tests' own
  output that reads like it comes with ``| `` in front. This step reads the supervisor's output
  as it streams. A report whose bytes are not what it printed, or a run that printed the line
  more than once or not at all, was rewritten after the supervisor decided: the report is
  replaced by a ``fail`` that says so, provenance kept (issue 29);
- the supervisor's exit status is passed on; SARIF and HTML are rendered beside the JSON report. In
  ``mode: gate`` (``CONFGATE_MODE``) one exception: a report that only waits for a human's
  sign-off (no test failed, its verdict follows from its evidence) passes the step, since the
  publish job counts the reviews and never publishes ``pass`` after a gate job that failed.

The verdict is still ``confgate github publish``'s, best run in a job of its own.
"""

from __future__ import annotations

import hashlib
import secrets
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

REPORT = "confgate-report.json"
SARIF = "confgate.sarif"
HTML = "confgate-report.html"
ENV_PYTEST_ARGS = "CONFGATE_PYTEST_ARGS"
ENV_CONFIG = "CONFGATE_CONFIG"
ENV_BASE_REF = "CONFGATE_BASE_REF"
ENV_MODE = "CONFGATE_MODE"
ENV_DIGEST = "CONFGATE_REPORT_DIGEST"
DIGEST_LINE = b"confgate: report sha256 "
"""How the gate says the digest of the report it wrote: ``DIGEST_LINE`` + 64 hex digits."""
SCRUBBED = frozenset(
    {
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "CONFGATE_GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_RUNTIME_URL",
        "ACTIONS_RESULTS_URL",
        "ACTIONS_CACHE_URL",
        # File commands: a test that appends to these would steer the job's later steps.
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
    }
)
"""Variables the tests never see: tokens, and the runner's files that steer later steps."""
SCRUBBED_PREFIXES = ("ACTIONS_ID_TOKEN_REQUEST_", "ACTIONS_RUNTIME_", "ACTIONS_CACHE_")


def gate_argv(environ: Mapping[str, str], python: str = sys.executable) -> list[str]:
    """``python -m pytest_confgate.cli gate --report confgate-report.json [...] -- [args]``.

    The tests run under ``confgate gate`` (issue 34): pytest is its child, and the report and
    its digest line are written by the supervisor once every process of the run ended.
    ``CONFGATE_PYTEST_ARGS`` is split like a POSIX shell would, but nothing is expanded: a
    ``$(...)`` in it is just an argument pytest will reject.
    """
    args = shlex.split(environ.get(ENV_PYTEST_ARGS, ""))
    argv = [python, "-I", "-m", "pytest_confgate.cli", "gate", "--report", REPORT]
    config = environ.get(ENV_CONFIG, "").strip()
    if config:
        argv += ["--config", config]
    base = environ.get(ENV_BASE_REF, "").strip()
    if base:
        argv += ["--base", base]
    return [*argv, "--", *args]


def tests_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the variables in ``SCRUBBED`` / ``SCRUBBED_PREFIXES``."""
    return {
        name: value
        for name, value in environ.items()
        if name not in SCRUBBED and not name.startswith(SCRUBBED_PREFIXES)
    }


def remove_old_reports(folder: Path) -> list[str]:
    """Delete the reports this step writes, if present; returns what was removed.

    A symlink is removed, never followed. A folder in the way is left alone: the report cannot
    be written there, so the publish step finds none and fails closed.
    """
    removed = []
    for name in (REPORT, SARIF, HTML):
        path = folder / name
        if path.is_symlink() or path.is_file():
            path.unlink()
            removed.append(name)
    return removed


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the gate in the current folder; returns ``confgate gate``'s exit status."""
    import os

    env = dict(os.environ if environ is None else environ)
    try:
        command = gate_argv(env)
    except ValueError as exc:  # an unbalanced quote in pytest-args
        print(f"confgate: pytest-args cannot be split ({exc}); running without them")
        command = gate_argv({**env, ENV_PYTEST_ARGS: ""})
    for name in remove_old_reports(Path.cwd()):
        print(f"confgate: removed {name} from before this run; only this run's report counts")
    digests: list[bytes] = []
    status = run_without_commands(command, {**tests_environment(env), ENV_DIGEST: "1"}, digests)
    print(f"confgate: the gate exited with status {status}")
    if _altered(Path.cwd() / REPORT, digests) and status == 0:
        status = 1
    _render_beside(Path.cwd())
    if status == 1 and env.get(ENV_MODE) == "gate" and _waits_for_signoff(Path.cwd() / REPORT):
        print("confgate: the gate waits for a human sign-off: the publish job counts the "
              "reviews and decides")
        return 0
    return status


def report_digest(path: Path) -> str:
    """The SHA-256 of the report's bytes, as the gate prints it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _altered(path: Path, digests: list[bytes]) -> bool:
    """Whether the report is not the one the gate wrote; if so it becomes a ``fail``."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.models import Condition, Decision
    from pytest_confgate.report.json_report import write_json_report
    from pytest_confgate.report.writers import load_report

    if not path.is_file() or path.is_symlink():
        return False
    said = [line[len(DIGEST_LINE):].strip().decode("ascii", "replace") for line in digests]
    if len(said) == 1 and said[0] == report_digest(path):
        return False
    why = ("the gate never printed its digest" if not said else
           f"the gate's output printed {len(said)} digests" if len(said) > 1 else
           "its bytes are not those the gate printed the digest of")
    message = (f"report: {REPORT} was changed after the gate wrote it ({why}): code of the "
               "change that ran in this step rewrote it (an atexit hook, a conftest, a plugin)")
    print(f"confgate: {message}")
    try:
        report = load_report(path)
    except ReportError:
        return True  # unreadable: the publish step refuses it anyway
    failed = report.model_copy(update={
        "decision": Decision.FAIL, "auto_advance": False, "reasons": [message],
        "conditions": [Condition(metric="report", name="altered", passed=False,
                                 message=message), *report.conditions],
    })
    write_json_report(failed, path)
    return True


def _waits_for_signoff(path: Path) -> bool:
    """The report says needs_signoff, no test failed, and only sign-offs are missing.

    The report comes from the process that ran the change's code, so this is never taken as
    a pass: the publish job decides again from the evidence and the base's policy."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.models import Decision
    from pytest_confgate.report.writers import load_report

    try:
        report = load_report(path)
    except ReportError:
        return False
    broken = report.tests.failed + report.tests.errors
    blocking = [c for c in report.conditions if c.blocking and not c.passed]
    only_signoffs = bool(blocking) and all(c.metric == "signoff" for c in blocking)
    return report.decision is Decision.NEEDS_SIGNOFF and not broken and only_signoffs


def _render_beside(folder: Path) -> None:
    """SARIF and HTML next to the JSON report, for the artifact; never fails the step."""
    from pytest_confgate.exceptions import ReportError
    from pytest_confgate.report.sarif import dropped_note
    from pytest_confgate.report.writers import load_report, render, write_text_atomic

    if not (folder / REPORT).is_file():
        print(f"confgate: no {REPORT} was written: the publish step will fail closed")
        return
    try:
        report = load_report(folder / REPORT)
        for name, fmt in ((SARIF, "sarif"), (HTML, "html")):
            text = render(report, fmt)
            write_text_atomic(text, folder / name)
            if fmt == "sarif" and (note := dropped_note(text)) is not None:
                print(f"confgate: {note}")
    except (ReportError, OSError) as exc:
        print(f"confgate: SARIF and HTML not written: {exc}")


def run_without_commands(
    command: Sequence[str], env: Mapping[str, str] | None = None,
    digests: list[bytes] | None = None,
) -> int:
    """Run ``command`` with its output in the log but unable to issue workflow commands.

    Two layers: ``::stop-commands::`` with a random token pauses command processing on the
    runner, and any line that would still read as a command (``::`` after blanks) is prefixed.
    Lines that start with ``DIGEST_LINE`` are also collected into ``digests``.
    """
    token = secrets.token_hex(16)
    sys.stdout.flush()  # our text lines first, then raw bytes
    out = sys.stdout.buffer
    out.write(f"::stop-commands::{token}\n".encode())
    out.flush()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    ) as proc:
        assert proc.stdout is not None  # noqa: S101 - PIPE was asked for
        for line in proc.stdout:
            if digests is not None and line.startswith(DIGEST_LINE):
                digests.append(line)
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
