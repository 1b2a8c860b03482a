"""pytest's options as the test process will parse them, read before it starts."""

from __future__ import annotations

import pytest

from pytest_confgate.collect.pytest_settings import (
    PytestCov,
    cov_fail_under,
    no_cov,
    pytest_cov,
    run_words,
)

PYPROJECT = '[tool.pytest.ini_options]\naddopts = "--cov=calc --cov-fail-under=80"\n'


@pytest.mark.parametrize(
    ("files", "environ", "args", "floor"),
    [
        ({}, {}, [], None),
        ({"pyproject.toml": PYPROJECT}, {}, [], 80.0),
        ({"pyproject.toml": PYPROJECT}, {"PYTEST_ADDOPTS": "--cov-fail-under 85"}, [], 85.0),
        ({"pyproject.toml": PYPROJECT}, {"PYTEST_ADDOPTS": "--cov-fail-under=85"},
         ["--cov-fail-under", "90.5"], 90.5),
        ({"pytest.ini": "[pytest]\naddopts = --cov-fail-under=70\n",
          "pyproject.toml": PYPROJECT}, {}, [], 70.0),
        ({"setup.cfg": "[tool:pytest]\naddopts = --cov-fail-under=60\n"}, {}, [], 60.0),
        ({}, {}, ["--cov-fail-under=abc"], None),
        ({}, {}, ["--", "--cov-fail-under=99"], None),
        ({}, {"PYTEST_ADDOPTS": "'unclosed"}, ["--cov-fail-under=75"], 75.0),
    ],
    ids=["none", "addopts", "environment after addopts", "command line last",
         "pytest.ini before pyproject", "setup.cfg", "not a number", "after --",
         "unreadable environment"],
)
def test_the_last_cov_fail_under_pytest_would_parse_is_the_floor(
    files: dict[str, str], environ: dict[str, str], args: list[str], floor: float | None
) -> None:
    assert cov_fail_under(run_words(files, environ, args)) == floor


@pytest.mark.parametrize(
    ("words", "told"),
    [
        ([], None),
        (["--cov-branch"], None),
        (["--cov"], PytestCov(sources=None, branch=False, config=None)),
        (["--cov=calc", "--cov-branch"], PytestCov(("calc",), True, None)),
        (["--cov", "calc", "tests"], PytestCov(("calc",), False, None)),
        (["--cov", "-x", "tests"], PytestCov(None, False, None)),
        (["--cov=calc", "--cov"], PytestCov(None, False, None)),
        (["--cov=a", "--cov=b"], PytestCov(("a", "b"), False, None)),
        (["--cov=a", "--cov-reset", "--cov=b"], PytestCov(("b",), False, None)),
        (["--cov=calc", "--no-cov"], None),
        (["--cov", "--cov-config", "other.ini"], PytestCov(None, False, "other.ini")),
        (["--cov", "--cov-config=.coveragerc"], PytestCov(None, False, None)),
        (["--cov", "--", "--cov-branch"], PytestCov(None, False, None)),
    ],
    ids=["nothing", "branch alone", "bare", "named and branch", "value as the next word",
         "an option is not a value", "a bare one wins", "two named", "reset", "no-cov",
         "config as the next word", "the default config", "after --"],
)
def test_pytest_covs_measurement_is_read_as_pytest_cov_parses_it(
    words: list[str], told: PytestCov | None
) -> None:
    assert pytest_cov(words) == told


@pytest.mark.parametrize(("words", "off"), [
    ([], False), (["--no-cov"], True), (["--cov=calc", "--no-cov"], True),
    (["--no-cov-on-fail"], False), (["--", "--no-cov"], False),
])
def test_no_cov_is_seen_where_pytest_would_parse_it(words: list[str], off: bool) -> None:
    assert no_cov(words) is off
