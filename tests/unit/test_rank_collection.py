"""What pytest collects as a project's settings say, and the options a candidate dropped."""

from __future__ import annotations

import pytest

from pytest_confgate.rank.collection import (
    addopts,
    dropped_options,
    settings_file,
    widening_options,
)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pytest.ini": "[pytest]\naddopts = --doctest-modules -q\n"}, ["--doctest-modules", "-q"]),
        ({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["-p", "x"]\n'}, ["-p", "x"]),
        ({"setup.cfg": "[tool:pytest]\naddopts = --doctest-glob=*.rst\n"},
         ["--doctest-glob=*.rst"]),
        ({"tox.ini": "[tox]\n", "setup.cfg": "[tool:pytest]\naddopts = -ra\n"}, ["-ra"]),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, []),
        ({"pyproject.toml": "[tool.pytest.ini_options\n"}, []),
    ],
    ids=["pytest-ini", "pyproject-list", "setup-cfg", "first-file-with-a-section", "none",
         "broken"],
)
def test_addopts_come_from_the_file_pytest_reads(files: dict[str, str],
                                                 expected: list[str]) -> None:
    assert addopts(files) == expected


def test_settings_file_follows_pytests_order() -> None:
    assert settings_file({"pytest.ini": "", "pyproject.toml": "[tool.pytest.ini_options]"}) == (
        "pytest.ini")
    assert settings_file({"setup.cfg": "[metadata]\n"}) is None


def test_widening_options_are_doctests_and_plugins() -> None:
    words = ["--doctest-modules", "-p", "myplugin", "-pother", "-p", "no:cacheprovider",
             "--doctest-glob", "*.txt", "-q"]
    assert widening_options(words) == {"--doctest-modules", "-p myplugin", "-p other",
                                       "--doctest-glob *.txt"}


def test_each_dropped_option_is_a_collection_narrowed_finding() -> None:
    base = {"pytest.ini": "[pytest]\naddopts = --doctest-modules -p myplugin\n"}
    assert dropped_options(base, base) == []
    head = {"pytest.ini": "[pytest]\naddopts = -p myplugin\n"}
    (finding,) = dropped_options(base, head)
    assert (finding.rule, finding.path) == ("collection_narrowed", "pytest.ini")
    assert finding.message.startswith("`--doctest-modules` was dropped from addopts")
    assert [f.message.split("`")[1] for f in dropped_options(base, {})] == [
        "--doctest-modules", "-p myplugin"]
