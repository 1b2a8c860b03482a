"""The house rules of ARCHITECTURE.md, read from the code's own imports.

ruff's banned-api keeps pytest in ``plugin.py``; these keep the other arrows pointing down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_python  # nothing here depends on the interpreter

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_confgate"
PURE = [
    "gate/scope.py",
    "gate/waivers.py",
    "gate/policy.py",
    "gate/score.py",
    "gate/tiers.py",
    "gate/machinery.py",
    "gate/recheck.py",
    "gate/supervised.py",
    "trust/formula.py",
    "rank/blocking.py",
    "rank/scoring.py",
    "rank/ranking.py",
    "rank/dangerous.py",
    "agents/screen.py",
]
IO_MODULES = {"subprocess", "os", "sqlite3", "socket", "time", "shutil", "tempfile"}
TAMPER_ANALYSIS = [
    "collect/tamper/syntax.py",
    "collect/tamper/checks.py",
    "collect/tamper/shapes.py",
    "collect/tamper/suites.py",
    "collect/tamper/compare.py",
    "collect/tamper/comments.py",
    "collect/tamper/settings.py",
    "collect/tamper/core.py",
    "collect/tamper/patterns.py",
    "collect/tamper/harness.py",
    "collect/tamper/special.py",
]
"""The pure core of ``collect/tamper``: base and head come in as text, from git or two trees."""


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(PACKAGE).as_posix() for p in paths]


@pytest.mark.parametrize("path", _modules("report"), ids=_ids(_modules("report")))
def test_report_writers_never_import_the_gate(path: Path) -> None:
    assert not {m for m in _imports(path) if m.startswith("pytest_confgate.gate")}


@pytest.mark.parametrize("module", PURE)
def test_pure_cores_import_no_io(module: str) -> None:
    imported = _imports(PACKAGE / module)
    assert not imported & IO_MODULES
    stages = ("pytest_confgate.collect", "pytest_confgate.gate.engine")
    assert not {m for m in imported if m.startswith(stages)}


@pytest.mark.parametrize("module", TAMPER_ANALYSIS)
def test_the_tamper_analysis_reads_text_never_the_disk(module: str) -> None:
    assert not _imports(PACKAGE / module) & (IO_MODULES | {"pathlib"})


@pytest.mark.parametrize(
    "folder", ["collect", "gate", "report", "config", "agents", "rank", "trust", "github"]
)
def test_no_stage_imports_the_front_doors_or_the_overlays(folder: str) -> None:
    upward = ("pytest_confgate.cli", "pytest_confgate.plugin", "pytest_confgate.overlays")
    for path in _modules(folder):
        assert not {m for m in _imports(path) if m.startswith(upward)}, path


def test_the_package_root_stays_small_and_shows_the_stages() -> None:
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= 13, sorted(modules)
    assert {"gate", "config", "github"} <= {p.name for p in PACKAGE.iterdir() if p.is_dir()}


DRIVERS = {
    "sqlite3": {"trust/sqlite_store.py", "rank/feedback_store.py"},
    "psycopg": {"trust/server.py"},
}


def _runtime_imports(path: Path) -> set[str]:
    """Imports that run: those under ``if TYPE_CHECKING:`` are for the type checker only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING")
        for statement in block.body
        for node in ast.walk(statement)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_each_database_driver_is_imported_by_its_own_modules_only(driver: str) -> None:
    importers = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(name == driver or name.startswith(f"{driver}.") for name in _runtime_imports(path))
    }
    assert importers == DRIVERS[driver]


COVERAGE_FRONT = {"session", "reporting", "analysis", "line_probes", "assert_rewrite",
                  "early_start", "early_restart"}
"""What the rest of the code may import from the coverage engine's package (``collect/coverage``):
the session, its report's error wording, the analysis cache's folder, pytest's assertion
rewriting handed to the probes (and what keys its code in the cache), and measuring from the
process start."""


def test_the_coverage_engine_lives_in_its_own_package() -> None:
    engine_words = {"coverage", "probe", "probes", "monitor"}
    flat = [p.stem for p in (PACKAGE / "collect").glob("*.py")]
    assert not [name for name in flat if engine_words & set(name.split("_"))]
    for path in (PACKAGE / "collect").glob("*.py"):
        assert not {m for m in _imports(path) if m.split(".")[0] == "coverage"}, path
    room = PACKAGE / "collect" / "coverage"
    outside = [p for p in PACKAGE.rglob("*.py") if room not in p.parents]
    for path in outside:
        used = {
            m.split(".")[3]
            for m in _imports(path)
            if m.startswith("pytest_confgate.collect.coverage.")
        }
        assert used <= COVERAGE_FRONT, path


def test_the_coverage_engine_is_chosen_in_one_place() -> None:
    """Only ``choice`` builds an engine (``MonitorEngine.for_run``, ``ProbeEngine.for_files``)."""
    builders = {
        path.name
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id in {"MonitorEngine", "ProbeEngine"} and node.attr.startswith("for_")
    }
    assert builders == {"choice.py"}
