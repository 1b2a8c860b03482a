"""The gate does not change the outcome of the tests it measures (issue 26, Build item 1).

The two reproductions of the issue, each a small src-layout project whose tests pass under
bare pytest: every test must pass under ``pytest --confgate`` too, with zero configuration and
with line probes forced on (``branch: false``), and the probes must really have measured it.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import metric, read_report, write_config

SLOW = 300
ENGINE = "sys.monitoring" if sys.version_info >= (3, 12) else "line probes"
"""What measures lines on this Python: probes compiled in on 3.11, sys.monitoring from 3.12."""
BRANCH_OFF = "gate:\n  metrics: [{type: test_pass_rate}, {type: test_coverage, branch: false}]\n"


def _project(pytester: pytest.Pytester, package: str, files: dict[str, str]) -> None:
    root = pytester.path / "src" / package
    root.mkdir(parents=True)
    for name, text in files.items():
        target = pytester.path / name if name.startswith("tests/") else root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    pytester.path.joinpath("pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n', encoding="utf-8"
    )


def _same_outcomes(pytester: pytest.Pytester, tests: int) -> None:
    bare = pytester.runpytest_subprocess("-p", "no:confgate", timeout=SLOW)
    bare.assert_outcomes(passed=tests)
    for config in ("", BRANCH_OFF):
        (pytester.path / "confgate.yml").unlink(missing_ok=True)
        if config:
            write_config(pytester, config)
        gated = pytester.runpytest_subprocess("--confgate", timeout=SLOW)
        gated.assert_outcomes(passed=tests)
        details = metric(read_report(pytester), "test_coverage")["details"]
        assert details["engine"] == ENGINE, config or "zero config"
        assert details["covered_lines"] == details["num_statements"]


def test_a_warning_at_import_names_the_importing_test(pytester: pytest.Pytester) -> None:
    """python-dateutil 4.0.0's tests/test_imports.py: warnings.warn(..., stacklevel=2)."""
    _project(pytester, "wpkg", {
        "__init__.py": "",
        "old.py": """\
            import warnings
            warnings.warn("wpkg.old is deprecated", DeprecationWarning, stacklevel=2)
        """,
        "tests/test_old.py": """\
            import pytest

            def test_the_warning_names_this_file():
                with pytest.warns(DeprecationWarning) as rec:
                    import wpkg.old
                assert rec[0].filename == __file__
        """,
    })
    _same_outcomes(pytester, tests=1)


def test_a_code_object_kept_by_the_program_keeps_its_identity(
    pytester: pytest.Pytester,
) -> None:
    """jinja2 3.1.6's ``@internalcode``: ``f.__code__`` kept in a set at import."""
    _project(pytester, "regpkg", {
        "__init__.py": """\
            import sys
            INTERNAL = set()
            def internal(f):
                INTERNAL.add(f.__code__)
                return f
            @internal
            def hidden_frame():
                return sys._getframe().f_code in INTERNAL
        """,
        "tests/test_hidden.py": """\
            import time
            import pytest
            from regpkg import hidden_frame

            @pytest.mark.parametrize("n", range(4))
            def test_the_frame_is_recognised(n):
                time.sleep(0.3)  # past the first sweep of fired probes (0.5 s)
                assert hidden_frame()
        """,
    })
    _same_outcomes(pytester, tests=4)


def test_a_module_s_namespace_has_nothing_of_the_gate(pytester: pytest.Pytester) -> None:
    """toolz 1.2.0's ``toolz.curried`` wraps every callable it finds in ``operator``-like
    modules, and its tests compare the names: a probe global was one callable too many."""
    _project(pytester, "nspkg", {
        "__init__.py": """\
            def double(x):
                return 2 * x

            def triple(x):
                return 3 * x
        """,
        "tests/test_names.py": """\
            import nspkg

            def test_the_callables_are_the_module_s_own():
                names = sorted(n for n, v in vars(nspkg).items() if callable(v))
                assert names == ["double", "triple"]
                assert nspkg.double(2) == 4 and nspkg.triple(1) == 3
        """,
    })
    _same_outcomes(pytester, tests=1)


def test_a_test_without_sys_getframe_runs_as_under_bare_pytest(
    pytester: pytest.Pytester,
) -> None:
    """attrs 25.4.0's ``test_missing_sys_getframe``: the test deletes ``sys._getframe``, then
    generates a class with ``exec``; the gate's hooks (the audit of ``exec``, the first call of
    a measured function) must not need the attribute the test took away."""
    _project(pytester, "genpkg", {
        "__init__.py": """\
            def make(name):
                namespace = {}
                exec(compile(f"def {name}(x):\\n    return x\\n", "<generated>", "exec"), namespace)
                from genpkg.late import wrap
                return wrap(namespace[name])
        """,
        "late.py": """\
            def wrap(function):
                return function
        """,
        "tests/test_gen.py": """\
            import sys

            import genpkg

            def test_generates_without_getframe(monkeypatch):
                monkeypatch.delattr(sys, "_getframe")
                assert genpkg.make("echo")(3) == 3
        """,
    })
    _same_outcomes(pytester, tests=1)
