"""coverage.py's own settings give coverage.py's figures under the gate (issue 35, item 1).

Each case is a small real project with one coverage.py setting; the gate runs with no
configuration of its own, in a real ``pytest --confgate`` subprocess, and its totals are checked
against ``coverage run -m pytest`` + ``coverage json`` on the same project, run in another
subprocess: the oracle is coverage.py itself, never a number written here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import metric, past_the_trust_margin, read_report, write_config
from coverage_oracle import COVERAGE, SLOW, coverage_py_totals, totals

PYTEST_INI = '[tool.pytest.ini_options]\npythonpath = ["."]\n'


def _gate(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--confgate", "-p", "no:cacheprovider", *args,
                                           timeout=SLOW)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    return result, metric(read_report(pytester), "test_coverage")


def _oracle(pytester: pytest.Pytester) -> dict[str, int]:
    """coverage.py's totals with the project's own data file setting, so its settings all apply."""
    return coverage_py_totals(pytester.path, "-q", "-p", "no:cacheprovider")


def _same_as_coverage_py(pytester: pytest.Pytester) -> dict[str, Any]:
    """The gate's coverage row, after checking its totals equal coverage.py's."""
    result, row = _gate(pytester)
    assert row["status"] == "ok", (row, result.stdout.str()[-3000:])
    assert totals(row["details"]) == _oracle(pytester), row["details"]
    return row


def _pyproject(pytester: pytest.Pytester, coverage: str) -> None:
    pytester.path.joinpath("pyproject.toml").write_text(
        PYTEST_INI + "\n" + coverage, encoding="utf-8"
    )


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
def test_relative_files_gives_coverage_pys_figures(
    project: pytest.Pytester, branch: bool
) -> None:
    """executing sets ``relative_files``: the gate recorded absolute names, coverage.py
    reported relative ones, and the row read 0 lines covered (and still passed)."""
    _pyproject(
        project,
        f'[tool.coverage.run]\nrelative_files = true\nsource = ["calc"]\n'
        f"branch = {str(branch).lower()}\n",
    )
    row = _same_as_coverage_py(project)
    assert row["details"]["covered_lines"] == 7


def test_coverage_that_ran_nothing_it_reports_never_passes(project: pytest.Pytester) -> None:
    """Measured files at 0 covered lines while the tests ran is no evidence: the gate must
    not pass on a row that read 0 of N."""
    project.path.joinpath("calc", "never.py").write_text("X = 1\n", encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\ninclude = ["calc/never.py"]\n')
    result, row = _gate(project)
    assert row["status"] != "ok", row
    assert read_report(project)["decision"] != "pass"
    assert result.ret != 0


SAME_LINE_BODIES = '''\
def f(): return 1


class A: pass


class B:
    def g(self): return 2
    def h(self): return 3


square = lambda x: x * x
total = sum(x for x in range(3))
if total:
    class C: pass
for i in range(2):
    def k(): return i
    if i:
        break
while total < 5:
    total += 1
    class D: pass


def dec(f):
    return f


@dec
def decorated(): return 1


@dec
@dec
def twice(): return 2


class E(Exception): pass
try:
    class F: pass
except E:
    pass
if f():
    def h(): return 2
else:
    def h(): return 4
class G: x = 1; y = 2
def last(): pass; pass
'''


def test_a_def_or_class_with_its_body_on_the_same_line_keeps_its_arc(
    project: pytest.Pytester,
) -> None:
    """boltons: ``def f(): return 1`` has two exits on one line (the function's end and the
    next statement); sys.monitoring recorded neither of the module's, 2/4 against 4/4."""
    project.path.joinpath("calc", "shapes.py").write_text(SAME_LINE_BODIES, encoding="utf-8")
    project.path.joinpath("tests", "test_shapes.py").write_text(
        "from calc.shapes import B, decorated, f\n\n\ndef test_shapes():\n"
        "    assert f() == 1\n    assert B().g() == 2\n    assert decorated() == 1\n",
        encoding="utf-8",
    )
    _pyproject(project, '[tool.coverage.run]\nbranch = true\nsource = ["calc"]\n')
    row = _same_as_coverage_py(project)
    assert row["details"]["num_branches"] > row["details"]["covered_branches"] > 0


SOURCE_DIRS_FORMS = {
    "pyproject": ("pyproject.toml", PYTEST_INI + '\n[tool.coverage.run]\nsource_dirs = ["lib"]\n'),
    "coveragerc": (".coveragerc", "[run]\nsource_dirs = lib\n"),
    "setup.cfg": ("setup.cfg", "[coverage:run]\nbranch = true\nsource_dirs = lib\n"),
}


@pytest.mark.parametrize("form", sorted(SOURCE_DIRS_FORMS))
def test_coverage_pys_source_dirs_chooses_what_is_measured(
    project: pytest.Pytester, form: str
) -> None:
    """``source_dirs`` (coverage.py 7.8+) names folders to measure; the gate took its own
    choice (the ``calc`` package) as if the project had set none, and measured both."""
    lib = project.path / "lib"
    lib.mkdir()
    lib.joinpath("tools.py").write_text(
        "def used(x):\n    if x:\n        return 1\n    return 2\n\n\ndef unused():\n"
        "    return 3\n", encoding="utf-8")
    project.path.joinpath("tests", "test_tools.py").write_text(
        "import sys\nsys.path.insert(0, 'lib')\nfrom tools import used\n\n\n"
        "def test_used():\n    assert used(1) == 1\n", encoding="utf-8")
    name, text = SOURCE_DIRS_FORMS[form]
    project.path.joinpath(name).write_text(text, encoding="utf-8")
    row = _same_as_coverage_py(project)
    assert row["details"]["num_statements"] == 6  # lib/tools.py alone
    assert row["details"]["selected_by"] == "coverage.py configuration"


MULTI_LINE = """\
def pick(a, b):
    if (a and
            b):
        return [
            a,
            b,
        ]
    return None
"""

RECORDS_TOKENIZING = """\
import os

import coverage.sysmon

_real = coverage.sysmon.compute_multiline_map


def _recorded(filename):
    with open(os.environ["TOKENIZED_LOG"], "a", encoding="utf-8") as log:
        log.write(os.path.basename(filename) + "\\n")
    return _real(filename)


coverage.sysmon.compute_multiline_map = _recorded
"""


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring: Python 3.12+")
def test_a_warm_run_reads_multi_line_statements_from_the_kept_analysis(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sys.monitoring`` resolves branch events with each file's multi-line statements, and
    coverage.py's ``compute_multiline_map`` tokenized every measured file for them on every
    run (0.25 s of click's). A warm run takes them from the analysis the report keeps; the
    figures stay coverage.py's."""
    project.path.joinpath("calc", "multi.py").write_text(MULTI_LINE, encoding="utf-8")
    project.path.joinpath("tests", "test_multi.py").write_text(
        "from calc.multi import pick\n\n\ndef test_pick():\n    assert pick(1, 2) == [1, 2]\n",
        encoding="utf-8",
    )
    project.path.joinpath("records_tokenizing.py").write_text(RECORDS_TOKENIZING,
                                                              encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\nbranch = true\nsource = ["calc"]\n')
    log = project.path / "tokenized.log"
    monkeypatch.setenv("TOKENIZED_LOG", str(log))
    expected = _oracle(project)
    for run in ("cold", "warm"):
        log.write_text("", encoding="utf-8")
        result, row = _gate(project, "-p", "records_tokenizing")
        assert row["status"] == "ok", (run, row, result.stdout.str()[-3000:])
        assert totals(row["details"]) == expected, (run, row["details"])
        assert row["details"]["num_branches"] > row["details"]["covered_branches"] > 0
        kept = sorted(project.path.joinpath(".confgate").glob("**/analysis"))
        assert kept, "no analysis kept"
        past_the_trust_margin(kept[0])  # else the warm run, a blink later, refuses them
    assert "multi.py" not in log.read_text(encoding="utf-8").split()


ONLY_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
"""Leaves ``scale`` unrun: 4 of calc's 7 statements, 57.14%."""

FAIL_UNDER_FORMS = {
    "pyproject": ("pyproject.toml", PYTEST_INI + '\n[tool.coverage.run]\nsource = ["calc"]\n'
                  "\n[tool.coverage.report]\nfail_under = 90\n"),
    "coveragerc": (".coveragerc", "[run]\nsource = calc\n\n[report]\nfail_under = 90\n"),
    "setup.cfg": ("setup.cfg", "[coverage:run]\nsource = calc\n\n[coverage:report]\n"
                  "fail_under = 90\n"),
    "tox.ini": ("tox.ini", "[coverage:run]\nsource = calc\n\n[coverage:report]\n"
                "fail_under = 90\n"),
}


@pytest.mark.parametrize("form", sorted(FAIL_UNDER_FORMS))
def test_coverage_pys_fail_under_is_the_floor_when_the_gate_sets_none(
    project: pytest.Pytester, form: str
) -> None:
    """A project at 57% with ``fail_under = 90``: coverage.py fails it, the gate passed it."""
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    name, text = FAIL_UNDER_FORMS[form]
    project.path.joinpath(name).write_text(text, encoding="utf-8")
    result, row = _gate(project)
    assert totals(row["details"]) == _oracle(project)
    report = read_report(project)
    assert report["decision"] == "fail"
    assert result.ret != 0
    assert (row["passed"], row["limit"]) == (False, "min 90.00%")
    result.stdout.fnmatch_lines(["test_coverage*57.14%*min 90.00%*FAIL*"])
    assert any("coverage.py fail_under" in reason for reason in report["reasons"])


def test_a_fail_under_the_project_meets_passes_and_shows_as_the_limit(
    project: pytest.Pytester,
) -> None:
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\nsource = ["calc"]\n\n'
                        "[tool.coverage.report]\nfail_under = 50\n")
    result, row = _gate(project)
    assert read_report(project)["decision"] == "pass"
    assert (row["passed"], row["limit"]) == (True, "min 50.00%")
    assert result.ret == 0


@pytest.mark.parametrize(("floor", "precision"), [("57.143", 0), ("57", 0), ("57.15", 2)])
def test_fail_under_is_met_or_not_as_coverage_py_rounds_the_figure(
    project: pytest.Pytester, floor: str, precision: int
) -> None:
    """coverage.py compares its figure rounded to the floor's decimals (or ``precision``, if
    more): 4/7 = 57.142857% meets ``fail_under = 57.143`` there. The gate compared the raw
    figure and failed a project coverage.py passes. coverage.py's own verdict is the oracle."""
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\nsource = ["calc"]\n\n[tool.coverage.report]\n'
                        f"fail_under = {floor}\nprecision = {precision}\n")
    measured = subprocess.run([*COVERAGE, "run", "-m", "pytest", "-q", "-p", "no:confgate",
                               "-p", "no:cacheprovider"], cwd=project.path, capture_output=True,
                              timeout=SLOW, check=False)
    assert measured.returncode == 0, measured.stdout.decode()[-2000:]
    reported = subprocess.run([*COVERAGE, "report"], cwd=project.path, capture_output=True,
                              timeout=SLOW, check=False)
    assert reported.returncode in (0, 2), reported.stderr.decode()
    project.path.joinpath(".coverage").unlink()
    result, row = _gate(project)
    assert totals(row["details"])["covered_lines"] == 4
    decision = read_report(project)["decision"]
    assert (decision == "pass") == (reported.returncode == 0), (decision, reported.stdout)
    assert row["passed"] == (reported.returncode == 0)
    assert (result.ret == 0) == (reported.returncode == 0)


def test_the_gates_own_minimum_wins_over_coverage_pys(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\nsource = ["calc"]\n\n'
                        "[tool.coverage.report]\nfail_under = 90\n")
    write_config(project, "gate:\n  metrics: [{type: test_pass_rate}, "
                          "{type: test_coverage, min: 0.55}]\n")
    _result, row = _gate(project)
    assert read_report(project)["decision"] == "pass"
    assert row["limit"] == "min 55.00%"


@pytest.mark.parametrize("where", ["addopts", "command line"])
def test_pytest_covs_fail_under_is_the_floor_too(project: pytest.Pytester, where: str) -> None:
    """``--cov --cov-fail-under=96`` in addopts: pytest-cov failed the run, the gate said PASS."""
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    args = ["--cov=calc", "--cov-fail-under=96"]
    ini = f'addopts = "{" ".join(args)}"\n' if where == "addopts" else ""
    project.path.joinpath("pyproject.toml").write_text(PYTEST_INI + ini, encoding="utf-8")
    result, row = _gate(project, *(args if where == "command line" else []))
    assert read_report(project)["decision"] == "fail"
    assert result.ret != 0
    assert (row["passed"], row["limit"]) == (False, "min 96.00%")
    assert row["details"]["fail_under_from"] == "pytest-cov --cov-fail-under"


def test_precision_shapes_the_figure_as_coverage_py_shows_it(project: pytest.Pytester) -> None:
    project.path.joinpath("tests", "test_calc.py").write_text(ONLY_ADD, encoding="utf-8")
    _pyproject(project, '[tool.coverage.run]\nsource = ["calc"]\n\n'
                        "[tool.coverage.report]\nprecision = 1\n")
    result, row = _gate(project)
    assert row["details"]["precision"] == 1
    result.stdout.fnmatch_lines(["test_coverage*57.1%*(coverage: 4/7 lines)*"])


EXTRA = '''\
def pick(flag, maybe=None):
    if flag:
        return "yes"
    if maybe:  # pragma: maybe
        return "maybe"
    while flag:  # pragma: no branch
        break
    return "no"


def debug():
    raise NotImplementedError


def unused():
    return 1
'''

EXTRA_TESTS = '''\
from calc.extra import pick


def test_pick():
    assert pick(True) == "yes"
    assert pick(False, 1) == "maybe"
'''

CONFIGURER = '''\
class Configurer:
    def configure(self, config):
        lines = config.get_option("report:exclude_lines")
        config.set_option("report:exclude_lines", [*lines, "def unused"])


def coverage_init(reg, options):
    reg.add_configurer(Configurer())
'''

SETTINGS = {
    "source": '[tool.coverage.run]\nsource = ["calc"]\n',
    "source_pkgs": '[tool.coverage.run]\nsource_pkgs = ["calc"]\n',
    "include": '[tool.coverage.run]\ninclude = ["calc/*"]\n',
    "omit": '[tool.coverage.run]\nsource = ["calc"]\nomit = ["*/extra.py"]\n',
    "paths": '[tool.coverage.run]\nsource = ["calc"]\n\n'
             '[tool.coverage.paths]\nsource = ["calc", "*/calc"]\n',
    "dynamic_context": '[tool.coverage.run]\nsource = ["calc"]\n'
                       'dynamic_context = "test_function"\n',
    # the static context a report's `contexts` counts: before, the probes recorded every
    # line under none, so coverage.py's report counted nothing ("no line ... as run", FAIL)
    "context": '[tool.coverage.run]\nsource = ["calc"]\ncontext = "unit"\n\n'
               '[tool.coverage.report]\ncontexts = ["unit"]\n',
    "report_contexts": '[tool.coverage.run]\nsource = ["calc"]\n'
                       'dynamic_context = "test_function"\n\n'
                       '[tool.coverage.report]\ncontexts = ["test_pick"]\n',
    "exclude_also": '[tool.coverage.run]\nsource = ["calc"]\n\n'
                    '[tool.coverage.report]\nexclude_also = ["def debug", "raise Not"]\n',
    "partial_branches": '[tool.coverage.run]\nsource = ["calc"]\n\n'
                        '[tool.coverage.report]\npartial_branches = ["pragma: maybe"]\n',
    "plugins": '[tool.coverage.run]\nsource = ["calc"]\nplugins = ["cov_configurer"]\n',
    "relative_files": '[tool.coverage.run]\nsource = ["calc"]\nrelative_files = true\n',
}


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_each_coverage_py_setting_gives_coverage_pys_figures(
    project: pytest.Pytester, setting: str, branch: bool
) -> None:
    project.path.joinpath("calc", "extra.py").write_text(EXTRA, encoding="utf-8")
    project.path.joinpath("tests", "test_extra.py").write_text(EXTRA_TESTS, encoding="utf-8")
    project.path.joinpath("cov_configurer.py").write_text(CONFIGURER, encoding="utf-8")
    coverage = SETTINGS[setting].replace(
        "[tool.coverage.run]\n", f"[tool.coverage.run]\nbranch = {str(branch).lower()}\n"
    )
    _pyproject(project, coverage)
    with pytest.MonkeyPatch.context() as patch:
        # coverage.py imports its plugin early (prepended: what PYTHONPATH held stays)
        patch.setenv("PYTHONPATH", str(project.path), prepend=os.pathsep)
        row = _same_as_coverage_py(project)
    if setting == "plugins":  # the configurer's exclusion counted; coverage.py traced the run
        assert row["details"]["excluded_lines"] == 2
        assert row["details"]["engine"] == "coverage.py"


# What covdefaults does when coverage.py initialises: branches on whatever the project says,
# the whole project measured when it names no source, and a floor of 100.
DEFAULTS_LIKE_COVDEFAULTS = '''\
class Defaults:
    def configure(self, config):
        config.set_option("run:branch", True)
        if not config.get_option("run:source"):
            config.set_option("run:source", ["."])
        if not config.get_option("report:fail_under"):
            config.set_option("report:fail_under", 100)


def coverage_init(reg, options):
    reg.add_configurer(Defaults())
'''


@pytest.mark.parametrize("how", ["pytest --confgate", "confgate gate"])
@pytest.mark.parametrize("source", ["named", "none"])
def test_settings_a_configuring_plugin_makes_are_the_settings_measured(
    project: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, how: str, source: str
) -> None:
    """covdefaults turns branches on and sets ``source`` when coverage.py initialises; the
    gate read ``branch`` and chose the selection before that: lines only (100%, a PASS under
    covdefaults' own floor of 100 that ``coverage report`` fails), and the tests left out."""
    plugins = tmp_path_factory.mktemp("installed")  # outside the checkout, as a package is
    plugins.joinpath("defaults_plugin.py").write_text(DEFAULTS_LIKE_COVDEFAULTS, encoding="utf-8")
    named = 'source = ["calc"]\n' if source == "named" else ""
    _pyproject(project, f'[tool.coverage.run]\nbranch = false\n{named}'
                        'plugins = ["defaults_plugin"]\n')
    project.path.joinpath("tests", "test_calc.py").write_text(
        "from calc import add, scale\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        "    assert scale(2) == 20\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(plugins), prepend=os.pathsep)
        expected = _oracle(project)
        if how == "confgate gate":
            done = subprocess.run([sys.executable, "-m", "pytest_confgate.cli", "gate", "--",
                                   "-p", "no:cacheprovider"], cwd=project.path, timeout=SLOW,
                                  capture_output=True, text=True, check=False)
            output = done.stdout + done.stderr
            row = metric(read_report(project), "test_coverage")
        else:
            result, row = _gate(project)
            output = result.stdout.str()
    assert totals(row["details"]) == expected, (row["details"], output[-3000:])
    assert expected["num_branches"] > 0
    assert row["details"]["branch"] is True
    assert row["threshold"] == 1.0, row
    assert not row["passed"]
    assert read_report(project)["decision"] != "pass"


AEXIT = '''\
class Resource:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


async def consume(boom, out=None):
    async with Resource():
{ending}
    return out
'''
AEXIT_ENDINGS = {
    "if raise": "if boom:\n    raise ValueError",
    "if if raise": "if boom:\n    if out is None:\n        raise ValueError",
    "elif raise": "if out:\n    pass\nelif boom:\n    raise ValueError",
    "if else (control)": "if boom:\n    raise ValueError\nelse:\n    out = 1",
}


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
@pytest.mark.parametrize("ending", sorted(AEXIT_ENDINGS))
def test_an_async_with_ending_in_an_if_that_raises_gives_coverage_pys_figures(
    project: pytest.Pytester, ending: str, branch: bool
) -> None:
    """Python 3.11 locates the call of ``__aexit__`` on the ``raise``: coverage.py's tracer
    marks it run when the body is left by the ``if``'s false side; the probes reported it
    missing (10/11 lines against 11/11, on every engine of 3.11)."""
    body = "\n".join("        " + line for line in AEXIT_ENDINGS[ending].splitlines())
    project.path.joinpath("calc", "aio.py").write_text(AEXIT.format(ending=body),
                                                       encoding="utf-8")
    project.path.joinpath("tests", "test_aio.py").write_text(
        "import asyncio\n\nfrom calc.aio import consume\n\n\n"
        "def test_consume():\n    asyncio.run(consume(False))\n", encoding="utf-8")
    _pyproject(project, f'[tool.coverage.run]\nsource = ["calc"]\nbranch = {str(branch).lower()}\n')
    _same_as_coverage_py(project)


THREADED = '''\
import threading
from concurrent.futures import ThreadPoolExecutor


def in_a_thread(flag):
    out = []

    def body():
        if flag:
            out.append("yes")
        out.append("done")

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    return out


def in_a_pool(values):
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(_double, values))


def _double(value):
    if value > 1:
        return value * 2
    return value
'''

THREADED_TESTS = '''\
from calc.threaded import in_a_pool, in_a_thread


def test_thread():
    assert in_a_thread(True) == ["yes", "done"]


def test_pool():
    assert in_a_pool([1, 2]) == [1, 4]
'''

CONCURRENCY = {
    "multiprocessing": 'concurrency = ["multiprocessing"]\n',
    "thread and multiprocessing": 'concurrency = ["thread", "multiprocessing"]\n',
    "thread": 'concurrency = ["thread"]\n',
    "multiprocessing, core sysmon": 'concurrency = ["multiprocessing"]\ncore = "sysmon"\n',
}


@pytest.mark.parametrize("branch", [False, True], ids=["lines", "branches"])
@pytest.mark.parametrize("setting", sorted(CONCURRENCY))
def test_code_run_in_threads_counts_as_coverage_py_counts_it(
    project: pytest.Pytester, setting: str, branch: bool
) -> None:
    """coverage.py's tracer follows threads only when ``concurrency`` names ``thread`` (or
    names nothing), its ``sysmon`` core always: ``concurrency = ["multiprocessing"]`` alone, as
    Django and ansible set it, leaves a thread's lines out. The gate's engines recorded every
    thread: 100% and a pass where coverage.py gives 75% and fails its ``fail_under``."""
    project.path.joinpath("calc", "threaded.py").write_text(THREADED, encoding="utf-8")
    project.path.joinpath("tests", "test_threaded.py").write_text(THREADED_TESTS,
                                                                  encoding="utf-8")
    _pyproject(project, f'[tool.coverage.run]\nsource = ["calc"]\nparallel = true\n'
                        f"branch = {str(branch).lower()}\n{CONCURRENCY[setting]}\n"
                        "[tool.coverage.report]\nfail_under = 95\n")
    result, row = _gate(project)
    expected = _oracle(project)
    assert totals(row["details"]) == expected, row["details"]
    from_report = read_report(project)
    whole = expected["covered_lines"] + expected["covered_branches"]
    if whole * 100 < 95 * (expected["num_statements"] + expected["num_branches"]):
        assert from_report["decision"] != "pass", result.stdout.str()[-2000:]
