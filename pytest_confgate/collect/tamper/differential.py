"""The differential run (issue 34): the base's tests, with the base's machinery, on the head's
code, in a pytest process that looks like any other.

A change can move an expectation out of sight of a text comparison (into a golden file, a
helper module, a conftest, pytest's settings) or make the code under test answer differently
when it sees it is being checked again. So after the main run, this builds a copy of the
project in a temporary folder: the head's files (tracked and untracked, not ignored), except
the machinery, which is the base's (``is_machinery``: everything under ``tests/``, ``test/``
or ``testing/``, every ``conftest.py`` and test module, the rootdir's pytest settings files;
and the changed files a base test names by file name, or imports as a module that held only
literal data on the base: ``_named_by_tests``). Then it runs
``python -m pytest MODULE...`` there, for the base's test modules the change can affect
(``selected_modules``), with the gate's environment unchanged and nothing of ours on the
command line; outcomes come back over an inherited socket (``outcomes``).

A base test that fails or errors there while the same test id did not fail in the main run
(the head's machinery), or the other way round, is a ``behaviour_change`` finding naming the
test id and both outcomes: the comparison is test by test, so it also speaks when the main
run fails. Tests pytest's cache says failed in the run before (``known_failing``) are run
too. A change that edits the machinery and changes no outcome says so (``no outcome
changed``); the tier stays the policy's choice. What remains visible to the code it runs is
in ``docs/tamper.md``.
"""

from __future__ import annotations

import ast
import configparser
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate import syntax_tree
from pytest_confgate.collect.tamper.compare import TamperFinding
from pytest_confgate.collect.tamper.replay import BEHAVIOUR_CHANGE, checks_of, failure_line
from pytest_confgate.collect.tamper.shapes import FileVersions
from pytest_confgate.collect.tamper.syntax import literal_data
from pytest_confgate.config.textfile import tomllib
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import ChangeSet, TestOutcomes
from pytest_confgate.outcomes import DESELECTED, OutcomeReceiver
from pytest_confgate.processes import ToolMissing, ToolOutputTooLarge, ToolTimeout, run_tool, tail

TEST_FOLDERS = frozenset({"tests", "test", "testing"})
SETTINGS_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
NO_OUTCOME_CHANGED = "no outcome changed"
_FAILED = frozenset({"failed", "error"})
_GIT_TIMEOUT_S = 120.0
_MAX_LASTFAILED_BYTES = 8 * 1024 * 1024
Contents = bytes | Path
"""A file of the copy: read from git (bytes), or in the working tree."""


@dataclass(frozen=True)
class DifferentialResult:
    findings: tuple[TamperFinding, ...] = ()
    modules: int = 0
    tests: int = 0
    duration_s: float = 0.0
    error: str | None = None

    def details(self) -> dict[str, Any]:
        """What ``details.differential`` says in the report."""
        changed = len(self.findings)
        note = f"{changed} outcome(s) changed" if changed else NO_OUTCOME_CHANGED
        if not self.modules:
            note = "no base test the change can affect"
        return {"modules": self.modules, "tests": self.tests, "outcomes_changed": changed,
                "duration_s": self.duration_s, "note": note}


def is_machinery(path: str) -> bool:
    """Whether ``path`` (rootdir-relative) belongs to how the tests judge, not to the code."""
    parts = path.split("/")
    name = parts[-1]
    return (any(part in TEST_FOLDERS for part in parts[:-1]) or name == "conftest.py"
            or (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")))
            or (len(parts) == 1 and name in SETTINGS_FILES))


def _is_test_module(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def differential_run(
    root: Path,
    changes: ChangeSet,
    versions: Mapping[str, FileVersions],
    head: TestOutcomes,
    *,
    timeout_s: float,
    environ: Mapping[str, str],
    by_test: Mapping[str, str] | None = None,
    failing_before: Iterable[str] = (),
) -> DifferentialResult:
    """Run the affected base tests on the head's code; ``changes`` rootdir-relative.

    ``by_test``: each test id's outcome in the main run, compared test by test;
    ``failing_before``: test ids known to have failed before this run (pytest's
    ``lastfailed`` cache): their modules are run too."""
    started = time.perf_counter()
    scratch: Path | None = None
    try:
        # Read into memory: most changes affect no base test, and writing the whole tree out
        # first was most of a pull-request gate's time after its last test (0.2 s on click).
        base_files = _read_tree(root, changes.merge_base)
        modules = selected_modules(base_files, changes, versions, failing_before)
        if not modules:
            return DifferentialResult(duration_s=_since(started))
        named = _named_by_tests(base_files, changes)
        head_files = (_read_tree(root, changes.head_tree)
                      if changes.head_tree is not None else None)
        scratch = Path(tempfile.mkdtemp())
        copy = scratch / root.name
        _build_copy(root, copy, base_files, named, head_files, _renamed(changes))
        results = _run(copy, modules, timeout_s, environ)
    except EvidenceError as exc:
        return DifferentialResult(duration_s=_since(started), error=str(exc))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    findings = _findings(results, head, by_test or {}, versions)
    return DifferentialResult(tuple(findings), len(modules), len(results), _since(started))


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 6)


def _git(root: Path, *args: str) -> str:
    try:
        result = run_tool(["git", *args], cwd=root, timeout_s=_GIT_TIMEOUT_S,
                          errors="surrogateescape")
    except ToolMissing as exc:
        raise EvidenceError(f"git is needed for the differential run: {exc}") from exc
    if result.returncode != 0:
        raise EvidenceError(f"git {args[0]} failed in {root}: {tail(result.stderr)}")
    return result.stdout


def _read_tree(root: Path, commit: str) -> dict[str, bytes]:
    """The files of ``commit`` (a commit or a tree) under ROOT: rootdir-relative path ->
    contents. Each object is checked against its name (``collect.git_objects``): the run may
    have rewritten ``.git`` since the commit was named."""
    from pytest_confgate.collect.git_objects import VerifiedObjects, prefix_of

    store = VerifiedObjects(root)
    prefix = prefix_of(root)
    files = {path[len(prefix):]: entry for path, entry in store.files(commit).items()
             if path.startswith(prefix) and entry.regular}  # links and submodules: not needed
    blobs = store.read(entry.name for entry in files.values())
    return {name: blobs[entry.name][1] for name, entry in files.items()
            if ".." not in name.split("/") and not name.startswith("/")}


def selected_modules(base_files: Mapping[str, Contents], changes: ChangeSet,
                     versions: Mapping[str, FileVersions],
                     failing_before: Iterable[str] = ()) -> list[str]:
    """The base's test modules the change can affect: edited or removed, importing a changed
    module, naming a changed file, under a changed conftest, holding a test known to have
    failed before (``failing_before``: test ids), or all when pytest's settings changed."""
    changed = changes.paths()
    tests = sorted(p for p in base_files if _is_test_module(p) and is_machinery(p))
    if any(name in changed and _settings_changed(versions.get(name)) for name in SETTINGS_FILES):
        return tests
    failing = {node.split("::", 1)[0] for node in failing_before}
    modules = _module_names(p for p in changed if p.endswith(".py"))
    files = {p.rsplit("/", 1)[-1] for p in changed if not p.endswith(".py")}
    folders = [p.rpartition("/")[0] for p in changed if p.rsplit("/", 1)[-1] == "conftest.py"]
    chosen = []
    for path in tests:
        text = _text(base_files[path])
        if (path in changed or path in failing
                or any(path.startswith(f + "/") or not f for f in folders)
                or _imports_any(text, modules) or any(name in text for name in files)):
            chosen.append(path)
    return chosen


def _named_by_tests(base_files: Mapping[str, Contents], changes: ChangeSet) -> set[str]:
    """Changed files outside the machinery folders that the base's tests read, taken at the
    base too: files a base test or conftest names by file name, and modules of the code under
    test that held only literal data on the base (``syntax.literal_data``) and that a base
    test or conftest imports: expectations kept beside the code (an ``_expected.py`` table).
    Decided by what the module is and who imports it, never by its name."""
    changed = [p for p in changes.paths() if not is_machinery(p)]
    files = {p for p in changed if not p.endswith(".py")}
    data = {p for p in changed if p.endswith(".py") and p in base_files
            and literal_data(_text(base_files[p]))}
    if not files and not data:
        return set()
    texts = [_text(f) for p, f in base_files.items() if is_machinery(p) and p.endswith(".py")]
    named = {p for p in files if any(p.rsplit("/", 1)[-1] in text for text in texts)}
    last = {name.rpartition(".")[2] for name in _module_names(data)}
    # parsed only where a data module or the package holding one is named
    holders = {p.rpartition("/")[0] + "/__init__.py" for p in data if "/" in p}
    words = last | {name.rpartition(".")[2] for name in _module_names(holders)}
    imported = set().union(*(_imported(text) for text in texts
                             if any(word in text for word in words)))
    imported |= _reexported(base_files, imported, last)
    return named | {p for p in data if _module_names([p]) & imported}


def _reexported(base_files: Mapping[str, Contents], imported: set[str], last: set[str]) -> set[str]:
    """What the packages the tests import hand on (``from calc import CASES`` with
    ``calc/__init__.py`` holding ``from ._cases import CASES``): the modules they import
    from, by their full dotted names."""
    found: set[str] = set()
    for path, file in base_files.items():
        if is_machinery(path) or not path.endswith("/__init__.py"):
            continue
        package = _module_names([path]) & imported
        text = _text(file) if package else ""
        if not any(word in text for word in last):
            continue
        for name in package:
            found |= _imported(text, package=name)
    return found


def _text(file: Contents) -> str:
    if isinstance(file, bytes):
        return file.decode("utf-8", errors="replace")
    try:
        return file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _settings_changed(version: FileVersions | None) -> bool:
    if version is None:
        return False
    name = version.path.rsplit("/", 1)[-1]
    return _pytest_settings(name, version.base) != _pytest_settings(name, version.head)


def _pytest_settings(name: str, text: str | None) -> object:
    """The pytest section of a settings file (what the rest of it says is not machinery)."""
    if text is None:
        return None
    try:
        if name == "pyproject.toml":
            return tomllib.loads(text).get("tool", {}).get("pytest")
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
    except (tomllib.TOMLDecodeError, configparser.Error, ValueError):
        return text  # unreadable: compared as text
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    return dict(parser[section]) if parser.has_section(section) else None


def _module_names(paths: Iterable[str]) -> set[str]:
    """Every dotted name a changed file could be imported by (``src/calc/core.py``:
    ``src.calc.core``, ``calc.core``, ``core``; a package's ``__init__`` by its folder)."""
    names: set[str] = set()
    for path in paths:
        parts = path.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.update(".".join(parts[i:]) for i in range(len(parts)) if parts[i:])
    return names


def _imports_any(text: str, modules: set[str]) -> bool:
    if not any(name.rpartition(".")[2] in text for name in modules):
        return False  # no changed module's name anywhere in it: nothing to parse
    try:
        names = _imported(text, strict=True)
    except (SyntaxError, ValueError, RecursionError):
        return True  # cannot tell: run it
    # ``from pkg import sub`` names ``pkg.sub``; importing ``pkg`` alone does not count as
    # importing each of its submodules (that would be the whole suite)
    return any(name == m or name.startswith(m + ".") for name in names for m in modules)


def _imported(text: str, strict: bool = False, package: str | None = None) -> set[str]:
    """Every dotted name ``text`` imports (``from pkg import sub``: ``pkg`` and ``pkg.sub``);
    unparsable text imports nothing, or raises when ``strict``. ``package``: the package
    ``text`` is the ``__init__`` of, which its relative imports start from."""
    try:
        tree = syntax_tree.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        if strict:
            raise
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            module = node.module or ""
            if node.level and package is not None:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*parts, *([module] if module else [])])
            elif node.level:
                continue
            names.update([module, *(f"{module}.{a.name}" for a in node.names)])
    return names


def _renamed(changes: ChangeSet) -> dict[str, str]:
    """The modules the change renamed (old name -> new name): Python files of the code, not
    a package's ``__init__`` (an alias of a package would load its submodules' new files under
    their old names), machinery left out."""
    return {change.old_path: change.path for change in changes.files
            if change.status == "renamed" and change.old_path is not None
            and change.old_path.endswith(".py") and change.path.endswith(".py")
            and "__init__.py" not in (change.old_path.rsplit("/", 1)[-1],
                                      change.path.rsplit("/", 1)[-1])
            and not is_machinery(change.old_path) and not is_machinery(change.path)}


_ALIAS = """\
import importlib
import sys

_OLD, _NEW = {old!r}, {new!r}
_DEPTH = len(_OLD) - len(__name__.split("."))
if _DEPTH < 0 or _OLD[:_DEPTH] != _NEW[:_DEPTH] or not _NEW[_DEPTH:]:
    raise ImportError(f"{{__name__}} was renamed to " + "/".join(_NEW))
sys.modules[__name__] = importlib.import_module(".".join(_NEW[_DEPTH:]))
"""
"""A renamed module's old name, importing its new one: the head's code runs once, under its
own name (``__name__``, relative imports, class identity as in the main run)."""


def _alias(old: str, new: str) -> bytes:
    parts = [tuple(path.removesuffix(".py").split("/")) for path in (old, new)]
    return _ALIAS.format(old=parts[0], new=parts[1]).encode()


def _build_copy(root: Path, copy: Path, base_files: Mapping[str, Contents], named: set[str],
                head_files: Mapping[str, Contents] | None = None,
                renamed: Mapping[str, str] | None = None) -> None:
    """The head's files without its machinery, then the base's machinery. ``head_files``:
    the head as the snapshot taken before the run holds it (``ChangeSet.head_tree``), so a run
    that rewrote or restored files since does not choose the code this run tests; without
    one, the working tree. ``renamed`` (old -> new): a module at its old name that hands over
    the head's module by its new name, so a base test importing a renamed module runs the
    head's code instead of failing to import it (a rename is no changed expectation, and
    cannot hide one)."""
    if head_files is None:
        listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        head_files = {path: root / path for path in filter(None, listed.split("\0"))}
    for path, source in sorted(head_files.items()):
        if is_machinery(path) or path in named:
            continue
        if isinstance(source, bytes) or (source.is_file() and not source.is_symlink()):
            _copy(source, copy / path)
    for old, new in sorted((renamed or {}).items()):
        if old not in head_files and old not in named and new in head_files:
            _copy(_alias(old, new), copy / old)
    for path, contents in base_files.items():
        if is_machinery(path) or path in named:
            _copy(contents, copy / path)


def _copy(source: Contents, target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, bytes):
            target.write_bytes(source)
        else:
            shutil.copyfile(source, target)
    except OSError as exc:
        raise EvidenceError(f"cannot write {target} for the differential run: {exc}") from exc


def _run(copy: Path, modules: list[str], timeout_s: float, environ: Mapping[str, str]
         ) -> dict[str, dict[str, str]]:
    receiver = OutcomeReceiver()
    argv = [sys.executable, "-m", "pytest", *modules]
    try:
        result = run_tool(argv, cwd=copy, timeout_s=timeout_s, env=dict(environ),
                          pass_fds=(receiver.child_fd,))
    except (ToolMissing, ToolTimeout, ToolOutputTooLarge) as exc:
        receiver.close(0.0)
        raise EvidenceError(f"the differential run's pytest process: {exc}") from exc
    received = receiver.close()
    if not received.ended:
        raise EvidenceError(
            f"the differential run's pytest process exited {result.returncode} without "
            "reporting its session end (is the confgate plugin disabled with `-p "
            f"no:confgate` in the base's settings?): {tail(result.stderr or result.stdout)}")
    return {node: result for node, result in received.results.items()
            if result["outcome"] != DESELECTED}


def _findings(results: Mapping[str, Mapping[str, str]], head: TestOutcomes,
              by_test: Mapping[str, str], versions: Mapping[str, FileVersions]
              ) -> list[TamperFinding]:
    """Base tests whose outcome with the base's machinery differs, test by test, from the
    main run's (the head's machinery) on the same code: one fails on one side only."""
    found = []
    for node, result in sorted(results.items()):
        outcome = result.get("outcome", "error")
        main = by_test.get(node)
        if not by_test:  # no per-test outcomes: only a clean main run tells a failure apart
            if head.failed or head.errors:
                return []
            main = "passed"
        if (outcome in _FAILED) == (main in _FAILED):
            continue
        found.append(_finding(node, main, outcome, result.get("failure", ""), versions))
    return found


def _finding(node: str, main: str | None, outcome: str, failure: str,
             versions: Mapping[str, FileVersions]) -> TamperFinding:
    module, _, qualname = node.partition("::")
    said = f"{main}" if main is not None else "not run (absent or deselected)"
    why = f" ({failure_line(failure)})" if outcome in _FAILED else ""
    message = (f"{node}: {said} with the change's tests and settings and {outcome} with the "
               f"base's, on the same code, so the change changed what the tests expect{why}")
    version = versions.get(module)
    base = checks_of(version.base, qualname) if version and qualname else None
    now = checks_of(version.head, qualname) if version and qualname else None
    return TamperFinding(BEHAVIOUR_CHANGE, module, _line(version, qualname), message, base, now,
                         node.split("[", 1)[0])


def known_failing(root: Path) -> list[str]:
    """Test ids pytest's cache (``.pytest_cache/v/cache/lastfailed``) says failed in the run
    before this one: a hint of the base's failing tests, read before any test runs (it only
    adds modules to the differential run)."""
    path = root / ".pytest_cache" / "v" / "cache" / "lastfailed"
    try:
        if path.stat().st_size > _MAX_LASTFAILED_BYTES:
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return sorted(str(k) for k in data) if isinstance(data, dict) else []


def _line(version: FileVersions | None, qualname: str) -> int:
    if version is None or version.base is None or not qualname:
        return 1
    last = qualname.split("[", 1)[0].rsplit("::", 1)[-1]
    for number, line in enumerate(version.base.split("\n"), start=1):
        if line.lstrip().startswith((f"def {last}(", f"async def {last}(")):
            return number
    return 1
