"""What the tamper analysis reads from one side of a file: frozen data, no logic but pytest's
collection rules (which files, classes and functions are tests). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch

DEFAULT_NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv")


@dataclass(frozen=True)
class Collection:
    """pytest's collection settings (``python_files`` ... ``norecursedirs``), with defaults."""

    files: tuple[str, ...] = ("test_*.py", "*_test.py")
    classes: tuple[str, ...] = ("Test",)
    functions: tuple[str, ...] = ("test",)
    testpaths: tuple[str, ...] = ()
    norecurse: tuple[str, ...] = DEFAULT_NORECURSE

    def collects_file(self, path: str) -> bool:
        """Whether ``pytest`` (run with no paths) collects the module at root-relative ``path``."""
        parts = path.split("/")
        if any(fnmatch(part, pattern) for part in parts[:-1] for pattern in self.norecurse):
            return False
        if self.testpaths and not any(_under(path, where) for where in self.testpaths):
            return False
        return any(fnmatch(path if "/" in p else parts[-1], p) for p in self.files)

    def is_test_class(self, name: str) -> bool:
        return any(name.startswith(p) or fnmatch(name, p) for p in self.classes)

    def is_test_function(self, name: str) -> bool:
        return any(name.startswith(p) or fnmatch(name, p) for p in self.functions)


def _under(path: str, where: str) -> bool:
    where = where.strip("/")
    return where in ("", ".") or path.startswith(where + "/") or fnmatch(path, where + "/*")


@dataclass(frozen=True)
class Spot:
    """Something found at one line: what it is (``key``), where, and the code there."""

    key: str
    kind: str
    line: int
    text: str
    code: str = ""
    """A mark's whole expression as source (a mark may span lines; ``text`` is one)."""


@dataclass(frozen=True)
class Case:
    """One parametrised case: its fingerprint, where it is and how it reads."""

    key: str
    line: int
    text: str
    values: tuple[str, ...] = ()
    """The fingerprint of each argument, in the order of the parametrize names (when known)."""


@dataclass(frozen=True)
class TestShape:
    """One collected test on one side of the change."""

    __test__ = False

    test_id: str
    path: str
    name: str
    line: int
    text: str
    checks: tuple[str, ...]
    body: str
    parametrize: tuple[tuple[str, tuple[Case, ...] | None], ...]
    skips: tuple[Spot, ...]

    @property
    def runs(self) -> int:
        """How many times pytest runs it: the product of its known case counts (computed
        lists count 1; an empty list 0, since pytest skips the test)."""
        count = 1
        for _, cases in self.parametrize:
            count *= len(cases) if cases is not None else 1
        return count

    def expanded_checks(self) -> set[str]:
        """Its checks with each parametrised case's values in place of the names: what a test
        rewritten as this parametrised one checked (``assert add(1, 2) == 3``)."""
        found: set[str] = set()
        for label, cases in self.parametrize:
            names = label.split(",")
            for case in cases or ():
                if len(case.values) != len(names):
                    continue
                for check in self.checks:
                    for name, value in zip(names, case.values, strict=True):
                        check = check.replace(f"Name('{name.strip()}', Load())", value)
                    found.add(check)
        return found

    @property
    def weight(self) -> int:
        """Checks times runs: a test turned into a parametrised one keeps its weight."""
        return len(self.checks) * self.runs


@dataclass(frozen=True)
class Checker:
    """A function in test code that is not a test (an assertion helper, a fixture)."""

    qualname: str
    line: int
    text: str
    checks: int


@dataclass(frozen=True)
class ModuleShape:
    """Everything the analysis needs from one side of one Python file."""

    path: str
    tests: Mapping[str, TestShape] = field(default_factory=dict)
    hidden: Mapping[str, str] = field(default_factory=dict)
    """Function name -> why pytest does not collect it, for tests that look like tests."""
    strays: Mapping[str, str] = field(default_factory=dict)
    """Body fingerprint -> name of a function pytest does not collect (a renamed test)."""
    checkers: Mapping[str, Checker] = field(default_factory=dict)
    """Functions of test code that are not tests, by qualname, with their live checks."""
    other_skips: tuple[Spot, ...] = ()
    hooks: Mapping[str, Spot] = field(default_factory=dict)
    lists: tuple[Spot, ...] = ()
    """Entries of ``collect_ignore``, ``collect_ignore_glob`` and ``pytest_plugins``."""


@dataclass(frozen=True)
class FileVersions:
    """One file on both sides; ``None`` text: absent on that side (added or deleted)."""

    path: str
    """Root-relative POSIX path on the head (on the base for a deleted file)."""
    base: str | None
    head: str | None
    base_path: str | None = None
    """The base path when the change renamed the file."""
    skipped: bool = False
    """Present but not analysed (too large, a symlink, unreadable): only named in the report."""

    @property
    def old_path(self) -> str:
        return self.base_path or self.path


@dataclass(frozen=True)
class Rerun:
    """A test to run again in a separate pytest process after the main run (``replay``).

    ``base``: the base's version of a test the change edited or removed, run against the
    head's code beside the head's module; ``unmarked``: a new or changed test of the head
    run without its ``skip``/``xfail`` marks.
    """

    kind: str
    module: str
    """The head path of the module the copy goes beside."""
    source: str
    """The path whose text on the kind's side is copied (the base path for ``base``)."""
    qualname: str
    """``Class::name`` or ``name`` within the module."""
    test: str
    """The test id findings name: the head's, or the base's when the test was removed."""
    line: int
    head_test: str | None = None
    """For ``base``: the head's edited version, run beside it; None when it was removed."""
