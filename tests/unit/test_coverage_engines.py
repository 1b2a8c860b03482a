"""Which engine records the lines, and which files coverage.py itself would measure."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import coverage
import pytest

from pytest_confgate.collect.coverage.files import FileSelection
from pytest_confgate.collect.coverage.probe_engine import MIXED
from pytest_confgate.collect.coverage.session import CoverageSession
from pytest_confgate.collect.coverage.tracer import choose_core
from pytest_confgate.models import MetricStatus

BODY = "def f(x):\n    if x:\n        return 1\n    return 2\n"


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """``engpkg`` with two modules and its own tests folder, importable from ``tmp_path``."""
    root = tmp_path / "engpkg"
    (root / "tests").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "early.py").write_text(BODY, encoding="utf-8")
    (root / "late.py").write_text(BODY, encoding="utf-8")
    (root / "never.py").write_text("X = 1\n", encoding="utf-8")
    (root / "tests" / "test_it.py").write_text("def test_x():\n    pass\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield root
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "engpkg" or n.startswith("engpkg.")]:
            del sys.modules[name]


def _session(package: Path) -> CoverageSession:
    return CoverageSession(package.parent, [package], own_sources=True, omit_tests=True)


def test_a_module_imported_before_the_gate_is_traced_the_rest_probed(package: Path) -> None:
    import engpkg.early  # before the gate starts: probes cannot instrument it any more

    session = _session(package)
    session.start()
    try:
        import engpkg.late

        engpkg.early.f(1)
        engpkg.late.f(1)
    finally:
        session.stop()
    details = session.metric().details
    if sys.version_info >= (3, 12):  # sys.monitoring sees code imported before it started
        assert details["engine"] == "sys.monitoring"
        assert "engine_by_file" not in details or not details["engine_by_file"]
    else:
        assert details["engine"] == MIXED
        assert details["engine_by_file"]["engpkg/early.py"] == "coverage.py"
        assert details["engine_by_file"]["engpkg/late.py"] == "line probes"
    # early.py's def line ran before measuring began, as under any tracer started late.
    assert details["missing"] == {"engpkg/early.py": [1, 4], "engpkg/late.py": [4],
                                  "engpkg/never.py": [1]}
    assert details["files_measured"] == 4  # the package's own tests are left out


def test_a_file_another_import_hook_loads_is_traced_and_named(package: Path) -> None:
    class OtherLoader(importlib.machinery.SourceFileLoader):
        """Some other tool's loader (pytest rewrites test modules the same way)."""

    class OtherFinder(importlib.abc.MetaPathFinder):
        def find_spec(
            self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
        ) -> importlib.machinery.ModuleSpec | None:
            if fullname != "engpkg.late":
                return None
            origin = str(package / "late.py")
            return importlib.util.spec_from_file_location(
                fullname, origin, loader=OtherLoader(fullname, origin)
            )

    session = _session(package)
    session.start()
    other = OtherFinder()
    sys.meta_path.insert(1, other)
    try:
        import engpkg.late

        engpkg.late.f(0)
    finally:
        sys.meta_path.remove(other)
        session.stop()
    metric = session.metric()
    # Measured either way (issue 35): sys.monitoring needs no loader of its own; on 3.11
    # coverage.py's tracer takes the file over and the report names it and its loader.
    assert metric.status is MetricStatus.OK, metric.reason
    assert metric.details["missing"]["engpkg/late.py"] == [3]
    if sys.version_info < (3, 12):
        assert metric.details["engine_by_file"]["engpkg/late.py"] == "coverage.py"
        assert any("engpkg/late.py (OtherLoader)" in w for w in metric.details["warnings"])


def test_the_selection_is_coverage_pys_own(package: Path, tmp_path: Path) -> None:
    cov = coverage.Coverage(data_file=None, config_file=False)
    cov.set_option("run:source", [str(package)])
    cov.set_option("run:omit", ["*/never.py"])
    selection = FileSelection.build(cov)
    assert isinstance(selection, FileSelection)
    assert selection.wants(str(package / "late.py"), "engpkg.late")
    assert not selection.wants(str(package / "never.py"), "engpkg.never")  # omitted
    assert not selection.wants(str(Path(pytest.__file__)), "pytest")  # outside the source
    found = {Path(p).name for p in selection.unexecuted_candidates()}
    # never.py is omitted; tests/ has no __init__.py, so coverage.py does not look inside.
    assert found == {"__init__.py", "early.py", "late.py"}


def test_coverage_plugins_need_the_tracer() -> None:
    cov = coverage.Coverage(data_file=None, config_file=False)
    cov.set_option("run:plugins", ["some_plugin"])
    assert "plugins" in str(FileSelection.build(cov))


@pytest.mark.parametrize(
    ("version", "branch", "core"),
    [
        ((3, 11, 7), False, None),
        ((3, 11, 7), True, None),  # 3.11: asking for sysmon would warn and fall back
        ((3, 12, 0), False, "sysmon"),
        ((3, 13, 1), True, None),  # sys.monitoring measures branches from 3.14 only
        ((3, 14, 0), True, "sysmon"),
    ],
)
def test_sysmon_is_chosen_only_where_coverage_py_can_use_it(
    version: tuple[int, ...], branch: bool, core: str | None
) -> None:
    cov = coverage.Coverage(data_file=None, config_file=False, branch=branch)
    choose_core(cov, version)
    assert cov.get_option("run:core") == core


def test_a_core_the_project_chose_is_kept() -> None:
    cov = coverage.Coverage(data_file=None, config_file=False)
    cov.set_option("run:core", "ctrace")
    choose_core(cov, (3, 12, 0))
    assert cov.get_option("run:core") == "ctrace"


def test_sysmon_is_not_chosen_for_a_concurrency_it_refuses() -> None:
    """coverage.py would warn and fall back: an error under ``filterwarnings = error``."""
    cov = coverage.Coverage(data_file=None, config_file=False, concurrency=["gevent"])
    choose_core(cov, (3, 12, 0))
    assert cov.get_option("run:core") is None


def test_a_project_and_a_patch_entry_share_one_coverage_report(package: Path) -> None:
    """coverage.py's report parses every measured file: the bulk of the gate's tail after the
    last test. Two ``test_coverage`` entries (issue 16) must not pay for it twice."""
    session = _session(package)
    session.start()
    try:
        import engpkg.late

        engpkg.late.f(1)
    finally:
        session.stop()
    cov = session._cov
    reports: list[object] = []
    real_report = cov.json_report

    def counted(*args: object, **kwargs: object) -> float:
        reports.append(args)
        result: float = real_report(*args, **kwargs)
        return result

    cov.json_report = counted
    first, second = session.metric(), session.metric()
    assert len(reports) == 1
    assert first.details["covered_lines"] == second.details["covered_lines"] == 3


def test_the_modules_imported_already_are_those_coverage_py_itself_would_measure(
    package: Path, tmp_path: Path
) -> None:
    """``imported`` resolves each folder once and leaves out what lies outside the source
    folders without asking coverage.py (issue 26: hundreds of modules, each resolved twice);
    the answer must stay coverage.py's own, symbolic links included."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "real.py").write_text("X = 1\n", encoding="utf-8")
    (package / "linked_out.py").symlink_to(outside / "real.py")  # resolves outside: unmeasured
    (outside / "linked_in.py").symlink_to(package / "late.py")  # resolves inside: measured
    (tmp_path / "alias").symlink_to(package, target_is_directory=True)
    sys.path.insert(0, str(outside))
    try:
        for name in ("engpkg.early", "engpkg.linked_out", "linked_in"):
            importlib.import_module(name)  # imported before the gate, as by a conftest
        alias = importlib.util.spec_from_file_location("aliased", tmp_path / "alias" / "never.py")
        assert alias is not None
        assert alias.loader is not None
        aliased = importlib.util.module_from_spec(alias)
        sys.modules["aliased"] = aliased
        alias.loader.exec_module(aliased)
        cov = coverage.Coverage(data_file=None, config_file=False)
        cov.set_option("run:source", [str(package)])
        plain = FileSelection.build(cov)
        selection = FileSelection.build(cov)
        assert isinstance(plain, FileSelection)
        assert isinstance(selection, FileSelection)

        found = selection.imported()

        from coverage.files import canonical_filename

        expected = {
            canonical_filename(module.__file__): name
            for name, module in list(sys.modules.items())
            if isinstance(getattr(module, "__file__", None), str)
            and module.__file__.endswith((".py", ".pyw"))
            and plain.wants(module.__file__, name)
        }
        assert found == expected
        assert {Path(p).name for p in found} == {"__init__.py", "early.py", "late.py", "never.py"}
        assert found[str((package / "late.py").resolve())] == "linked_in"
    finally:
        sys.path.remove(str(outside))
        for name in ("linked_in", "aliased"):
            sys.modules.pop(name, None)
