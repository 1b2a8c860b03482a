"""Caches nothing can plant (issue 34): what the change's code writes under ``.confgate/cache``
while it runs is never read, in that run or a later one, and nothing it wrote is unpickled.

Each test plants from inside a project's test, every name built at run time, as a hostile
change would; the gate's figures must be those of an honest run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import metric, read_report, write_config

UNTESTED = "def untested(x):\n    if x:\n        return 1\n    return 2\n"
COVERAGE_ONLY = """\
gate:
  metrics:
    - {type: test_pass_rate}
    - {type: test_coverage}
"""
PLANT_PARSER = '''\
import importlib, os, pathlib, pickle


def test_plant():
    mod = importlib.import_module
    parser = mod("coverage." + "parser")
    analysis = mod("pytest_confgate.collect." + "coverage_" + "analysis")
    target = os.path.realpath(os.path.join("calc", "ex" + "tra.py"))
    exclude = mod("coverage").Coverage()._exclude_regex("exclude")
    empty = parser.PythonParser(text="\\n", filename=target, exclude=exclude)
    empty.parse_source()
    empty.arcs()
    folder = pathlib.Path("." + "confgate", "cache", "probes", analysis.ANALYSES)
    text = mod("coverage.python").get_python_source(target)
    entry = analysis._entry(folder, text, exclude)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(pickle.dumps(empty))
'''
PLANT_PAYLOAD = '''\
import importlib, os, pathlib, pickle


class Payload:
    def __reduce__(self):
        return (exec, ("open('PWNED', 'w').write('ran')",))


def test_plant():
    mod = importlib.import_module
    analysis = mod("pytest_confgate.collect." + "coverage_" + "analysis")
    target = os.path.realpath(os.path.join("calc", "ex" + "tra.py"))
    exclude = mod("coverage").Coverage()._exclude_regex("exclude")
    folder = pathlib.Path("." + "confgate", "cache", "probes", analysis.ANALYSES)
    text = mod("coverage.python").get_python_source(target)
    entry = analysis._entry(folder, text, exclude)
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(pickle.dumps(Payload()))
'''
EMPTY_BANDIT = '''\
import json, os


def test_plant():
    path = os.path.join("." + "confgate", "cache", "ban" + "dit.json")
    with open(path) as handle:
        document = json.load(handle)
    for entry in document["entries"].values():
        entry["findings"] = []
    with open(path, "w") as handle:
        json.dump(document, handle)
'''
DANGER = "import hashlib\n\n\ndef digest(data):\n    return hashlib.md5(data).hexdigest()\n"


def _coverage(project: pytest.Pytester) -> dict[str, object]:
    project.runpytest("--confgate", "-p", "no:cacheprovider")
    details: dict[str, object] = metric(read_report(project), "test_coverage")["details"]
    return details


def _analyses(project: pytest.Pytester) -> list[Path]:
    return sorted((project.path / ".confgate" / "cache" / "probes" / "analysis").rglob("*.pickle"))


def test_a_parser_a_test_plants_in_the_analysis_cache_counts_in_no_run(
    project: pytest.Pytester,
) -> None:
    write_config(project, COVERAGE_ONLY)
    (project.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    plant = project.path / "tests" / "test_plant.py"
    plant.write_text(PLANT_PARSER, encoding="utf-8")

    planted = _coverage(project)
    assert planted["missing_lines"] == 4  # extra.py's statements, not zero of them
    plant.unlink()
    later = _coverage(project)
    assert later["missing_lines"] == 4
    assert planted["covered_lines"] == later["covered_lines"]


def test_a_pickle_payload_a_test_plants_never_runs_in_this_run_or_the_next(
    project: pytest.Pytester,
) -> None:
    write_config(project, COVERAGE_ONLY)
    (project.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    plant = project.path / "tests" / "test_plant.py"
    plant.write_text(PLANT_PAYLOAD, encoding="utf-8")

    first = _coverage(project)
    plant.unlink()
    second = _coverage(project)
    assert not (project.path / "PWNED").exists()
    assert first["missing_lines"] == second["missing_lines"] == 4
    assert all(b"PWNED" not in entry.read_bytes() for entry in _analyses(project))


def test_an_emptied_bandit_entry_does_not_hide_a_high_finding_on_the_next_run(
    project: pytest.Pytester,
) -> None:
    write_config(project, "gate:\n  metrics:\n    - {type: security_score}\n")
    (project.path / "calc" / "danger.py").write_text(DANGER, encoding="utf-8")

    def high() -> int:
        project.runpytest("--confgate", "-p", "no:cacheprovider")
        return int(metric(read_report(project), "security_score")["details"]["by_severity"]["HIGH"])

    assert high() == 1  # cold: bandit itself, and its results cached
    cached = json.loads((project.path / ".confgate/cache/bandit.json").read_text())
    assert any(e["findings"] for e in cached["entries"].values())
    plant = project.path / "tests" / "test_plant.py"
    plant.write_text(EMPTY_BANDIT, encoding="utf-8")
    assert high() == 1
    plant.unlink()
    assert high() == 1


def _supervised(project: pytest.Pytester) -> dict[str, object]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--", "-p",
                           "no:cacheprovider"], cwd=project.path, capture_output=True,
                          text=True, check=False, timeout=240)
    assert "confgate gate: the test process exited" in done.stdout, done.stdout + done.stderr
    return read_report(project)


def test_under_confgate_gate_caches_the_tests_plant_reach_no_run(
    project: pytest.Pytester,
) -> None:
    """The supervisor runs bandit and analyses coverage itself: a parser planted in the
    analysis cache and an emptied bandit entry, both written by a test, count in no run."""
    write_config(project, "gate:\n  metrics:\n    - {type: test_pass_rate}\n"
                 "    - {type: test_coverage}\n    - {type: security_score}\n")
    (project.path / "calc" / "extra.py").write_text(UNTESTED, encoding="utf-8")
    (project.path / "calc" / "danger.py").write_text(DANGER, encoding="utf-8")

    def figures(report: dict[str, object]) -> tuple[object, object]:
        coverage = metric(report, "test_coverage")["details"]
        security = metric(report, "security_score")["details"]
        return coverage["missing_lines"], security["by_severity"]["HIGH"]

    assert figures(_supervised(project)) == (4 + 3, 1)  # cold: extra.py and danger.py
    plants = project.path / "tests" / "test_plant.py"
    plants.write_text(PLANT_PARSER + EMPTY_BANDIT.replace("test_plant", "test_empty"),
                      encoding="utf-8")
    assert figures(_supervised(project)) == (7, 1)
    plants.unlink()
    assert figures(_supervised(project)) == (7, 1)
