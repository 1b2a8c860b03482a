"""run_tool: a deadline, an output cap and a whole process group killed (issue 18.2)."""

from __future__ import annotations

import gc
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from fakes.processes import process_gone

from pytest_confgate.config.metrics import LintMetricConfig
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.processes import (
    DEFAULT_MAX_OUTPUT_BYTES,
    STDERR_KEEP_BYTES,
    ToolOutputTooLarge,
    describe_bytes,
    run_tool,
)

MIB = 1024 * 1024


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "tool.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def test_stdout_past_the_cap_kills_the_tool_and_names_the_cap(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """\
        import sys
        for _ in range(50):
            sys.stdout.buffer.write(b"x" * (1 << 20))
        """,
    )

    with pytest.raises(ToolOutputTooLarge) as caught:
        run_tool(argv, cwd=tmp_path, timeout_s=120, max_output_bytes=MIB)

    assert str(caught.value).startswith(
        f"{sys.executable} printed more than the output cap of 1 MiB (max_output_bytes) on stdout"
    )


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
def test_past_the_cap_the_whole_process_group_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    argv = script(
        tmp_path,
        f"""\
        import subprocess, sys
        child = subprocess.Popen(["sleep", "60"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        while True:
            sys.stdout.buffer.write(b"y" * 65536)
        """,
    )

    with pytest.raises(ToolOutputTooLarge):
        run_tool(argv, cwd=tmp_path, timeout_s=120, max_output_bytes=MIB)

    assert process_gone(int(pidfile.read_text()))


@pytest.mark.parametrize("cap", [MIB, 16], ids=["finished", "past the cap"])
def test_no_pipe_is_left_for_the_garbage_collector(tmp_path: Path, cap: int) -> None:
    """An unclosed pipe warns (ResourceWarning) when it is collected, maybe during a user's
    test: where the project turns warnings into errors, pytest reports it against that test."""
    argv = script(tmp_path, "import sys\nsys.stdout.write('z' * 64)\nsys.stderr.write('e')\n")
    gc.collect()  # what earlier tests left (an SQLite connection warns on 3.13+) is not ours
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        try:
            run_tool(argv, cwd=tmp_path, timeout_s=120, max_output_bytes=cap)
        except ToolOutputTooLarge:
            assert cap == 16
        gc.collect()
    assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)
            and "unclosed file" in str(w.message)] == []


def test_output_up_to_the_cap_is_read_whole(tmp_path: Path) -> None:
    argv = script(tmp_path, "import sys\nsys.stdout.write('z' * 1048576)\n")

    result = run_tool(argv, cwd=tmp_path, timeout_s=120, max_output_bytes=MIB)

    assert result.returncode == 0
    assert result.stdout == "z" * MIB


def test_a_flood_on_stderr_keeps_only_its_tail(tmp_path: Path) -> None:
    argv = script(
        tmp_path,
        """\
        import sys
        for _ in range(20):
            sys.stderr.write("noise " * 100_000)
        sys.stderr.write("\\nthe real error\\n")
        print("[]")
        sys.exit(2)
        """,
    )

    result = run_tool(argv, cwd=tmp_path, timeout_s=120, max_output_bytes=MIB)

    assert result.returncode == 2
    assert result.stdout == "[]\n"
    assert len(result.stderr) <= STDERR_KEEP_BYTES
    assert result.stderr_tail().endswith("the real error")


def test_a_program_that_cannot_be_started_is_an_evidence_error_not_a_crash(
    tmp_path: Path,
) -> None:
    too_long = ["true", *(["a" * 100_000] * 40)]  # past ARG_MAX: E2BIG from exec

    with pytest.raises(EvidenceError, match="could not be started: Argument list too long"):
        run_tool(too_long, cwd=tmp_path, timeout_s=60)


@pytest.mark.parametrize(
    ("count", "shown"),
    [(64 * MIB, "64 MiB"), (1024, "1 KiB"), (3 << 30, "3 GiB"), (1500, "1500 bytes")],
    ids=["MiB", "KiB", "GiB", "odd"],
)
def test_caps_are_described_as_people_read_them(count: int, shown: str) -> None:
    assert describe_bytes(count) == shown


def test_the_configured_default_cap_is_the_runners_default() -> None:
    assert LintMetricConfig(type="lint_score").max_output_bytes == DEFAULT_MAX_OUTPUT_BYTES
