"""Python 3.12+: the gate measures with ``sys.monitoring`` and gives coverage.py's figures.

Real ``pytest --confgate`` subprocesses on small projects: branch coverage equals ``coverage
run --branch`` + ``coverage json`` on the same source, file by file and arc by arc, with an
engine other than coverage.py; and issue 26's two reproductions (a function's code object
kept by identity, a warning's ``stacklevel`` at import) keep the outcome they have under bare
pytest, zero config and with ``branch: false``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import metric, read_report, write_config

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 12),
    reason="sys.monitoring exists from Python 3.12; the 3.10/3.11 engines are tested in "
    "test_coverage_setups.py and tests/unit/test_line_probes.py",
)

SLOW = 300

FLOW = '''\
def grade(score, strict=False):
    if score >= 90:
        return "A"
    elif score >= 50 and not strict:
        return "pass"
    for bonus in (1, 2, 3):
        if score + bonus >= 50:
            break
    else:
        return "fail"
    while True:
        score += 1
        if score > 60:
            break
    try:
        ratio = 100 / score
    except ZeroDivisionError:
        ratio = 0
    finally:
        ratio = round(ratio)
    match ratio:
        case 1:
            return "one"
        case _:
            return [r for r in range(ratio) if r % 2]


def unused(x):
    return x if x else None
'''

FLOW_TESTS = """\
from flow import grade


def test_grades():
    assert grade(95) == "A"
    assert grade(60) == "pass"
    assert grade(10) == "fail"
    assert grade(48, strict=True) == [1]
"""


def _branch_project(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("flow").joinpath("__init__.py").write_text(FLOW, encoding="utf-8")
    pytester.path.joinpath("tests").mkdir()
    pytester.path.joinpath("tests", "test_flow.py").write_text(FLOW_TESTS, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["."]\n\n'
        '[tool.coverage.run]\nbranch = true\nsource = ["flow"]\n',
        encoding="utf-8",
    )


def _coverage_json(pytester: pytest.Pytester) -> dict[str, Any]:
    """``coverage run --branch -m pytest`` + ``coverage json``: coverage.py's own figures."""
    data, out = pytester.path / ".coverage-ref", pytester.path / "ref.json"
    base = [sys.executable, "-m", "coverage"]
    subprocess.run(
        [*base, "run", "--branch", f"--data-file={data}", "-m", "pytest", "-q",
         "-p", "no:confgate"],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    subprocess.run(
        [*base, "json", f"--data-file={data}", "-o", str(out)],
        cwd=pytester.path, check=True, capture_output=True, timeout=SLOW,
    )
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    data.unlink()
    out.unlink()
    return report


KEYS = ("covered_lines", "num_statements", "covered_branches", "num_branches",
        "missing_branches", "num_partial_branches")


def test_branch_figures_equal_coverage_run_branch(pytester: pytest.Pytester) -> None:
    _branch_project(pytester)
    result = pytester.runpytest_subprocess("--confgate", timeout=SLOW)
    assert result.ret == 0, result.stdout.str()[-3000:]
    details = metric(read_report(pytester), "test_coverage")["details"]
    assert details["engine"] == "sys.monitoring"
    reference = _coverage_json(pytester)
    totals = reference["totals"]
    assert {k: details[k] for k in KEYS if k in details} == {
        k: totals[k] for k in KEYS if k in details
    }
    assert details["num_branches"] == totals["num_branches"] > 0
    assert 0 < details["covered_branches"] < details["num_branches"]  # partly covered
    flow = Path("flow", "__init__.py").as_posix()
    assert details["missing"] == {flow: reference["files"][flow]["missing_lines"]}
    assert reference["files"][flow]["missing_branches"]  # arcs missed: unit-tested arc by arc


REGPKG = """\
import sys

INTERNAL = set()


def internal(f):
    INTERNAL.add(f.__code__)
    return f


@internal
def hidden_frame():
    return sys._getframe().f_code in INTERNAL
"""

REG_TESTS = "".join(
    f"\n\ndef test_hidden_{i}():\n    time.sleep(0.6)\n    assert regpkg.hidden_frame()\n"
    for i in range(3)
)

WPKG_OLD = (
    "import warnings\n"
    'warnings.warn("wpkg.old is deprecated", DeprecationWarning, stacklevel=2)\n'
)

W_TESTS = """\
import pytest


def test_import_warns_at_the_importer():
    with pytest.warns(DeprecationWarning) as rec:
        import wpkg.old  # noqa: F401
    assert rec[0].filename == __file__
"""


def _reproductions(pytester: pytest.Pytester) -> None:
    src = pytester.path / "src"
    (src / "regpkg").mkdir(parents=True)
    (src / "regpkg" / "__init__.py").write_text(REGPKG, encoding="utf-8")
    (src / "wpkg").mkdir()
    (src / "wpkg" / "__init__.py").write_text("", encoding="utf-8")
    (src / "wpkg" / "old.py").write_text(WPKG_OLD, encoding="utf-8")
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "test_reg.py").write_text("import time\n\nimport regpkg\n" + REG_TESTS,
                                       encoding="utf-8")
    (tests / "test_warn.py").write_text(W_TESTS, encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8"
    )


@pytest.mark.parametrize(
    "branch", [None, "false", "true"], ids=["zero-config", "lines", "branches"]
)
def test_issue_26_reproductions_keep_their_outcomes(
    pytester: pytest.Pytester, branch: str | None
) -> None:
    _reproductions(pytester)
    bare = pytester.runpytest_subprocess("-p", "no:confgate", timeout=SLOW)
    bare.assert_outcomes(passed=4)
    if branch is not None:
        write_config(pytester, f"gate:\n  metrics: [{{type: test_coverage, branch: {branch}}}]\n")
    result = pytester.runpytest_subprocess("--confgate", timeout=SLOW)
    result.assert_outcomes(passed=4)
    details = metric(read_report(pytester), "test_coverage")["details"]
    assert details["engine"] == "sys.monitoring"
