"""One side of a Python file as the tamper analysis sees it, read with ``ast`` (issue 15).

For a test module: the tests pytest collects from it (``path::Class::name``), each with its
live checks, parametrised cases and the skips that apply to it (its own decorators, its
class's, ``pytestmark``, module-level ``pytest.skip``/``importorskip``, calls in its body).
For any file: skip calls outside tests (fixtures, helpers, conftest) and its top-level
functions, which tests elsewhere may call as assertion helpers. For ``conftest.py``: the
hooks that can deselect, skip or rewrite tests, ``collect_ignore`` and ``pytest_plugins``.

Collection follows pytest's rules closely enough for a diff: ``python_files``,
``python_classes``, ``python_functions``, ``testpaths`` and ``norecursedirs`` (see
``Collection``); a class with ``__init__`` or ``__test__ = False`` is not collected; a later
definition of the same name hides the earlier one. Pure.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from pytest_confgate.collect.tamper.checks import CheckCounter, FunctionNode
from pytest_confgate.collect.tamper.shapes import (
    Case,
    Checker,
    Collection,
    ModuleShape,
    Spot,
    TestShape,
)
from pytest_confgate.collect.tamper.syntax import (
    SKIP_CALLS,
    Names,
    fingerprint,
    module_statements,
    short,
    walk_shallow,
)

HOOKS = frozenset(
    {
        "pytest_collection",
        "pytest_collection_modifyitems",
        "pytest_ignore_collect",
        "pytest_collect_file",
        "pytest_pycollect_makemodule",
        "pytest_pycollect_makeitem",
        "pytest_make_collect_report",
        "pytest_generate_tests",
        "pytest_deselected",
        "pytest_runtest_protocol",
        "pytest_runtest_setup",
        "pytest_runtest_call",
        "pytest_runtest_makereport",
        "pytest_runtest_logreport",
        "pytest_report_teststatus",
        "pytest_pyfunc_call",
        "pytest_sessionfinish",
    }
)
"""conftest hooks that can deselect, skip, or change the outcome of tests."""
_UNITTEST_BASES = frozenset({"TestCase", "IsolatedAsyncioTestCase"})
_LISTS = ("collect_ignore", "collect_ignore_glob", "pytest_plugins")
_SKIP_WORDS = ("skip", "xfail", "Skip", "marker")
_TEST_FOLDERS = frozenset({"tests", "test", "testing"})


def top_functions(tree: ast.Module) -> dict[str, FunctionNode]:
    """Module-level functions by name (the last definition wins, as at run time)."""
    return {
        node.name: node
        for node in module_statements(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def read_module(
    path: str,
    tree: ast.Module,
    lines: list[str],
    collection: Collection,
    helpers: Mapping[str, FunctionNode],
) -> ModuleShape:
    """The shape of one parsed file; ``helpers`` are top-level functions of every file read."""
    reader = _Reader(path, tree, lines, collection, {**helpers, **top_functions(tree)})
    return reader.shape()


class _Reader:
    def __init__(
        self,
        path: str,
        tree: ast.Module,
        lines: list[str],
        collection: Collection,
        helpers: Mapping[str, FunctionNode],
    ) -> None:
        self.path, self.tree, self.lines = path, tree, lines
        self.collection, self.helpers = collection, helpers
        self.names = Names.of_module(tree)
        self.is_conftest = path.rsplit("/", 1)[-1] == "conftest.py"
        self.tests: dict[str, TestShape] = {}
        self.hidden: dict[str, str] = {}
        self.strays: dict[str, str] = {}
        self.checkers: dict[str, Checker] = {}
        parts = path.split("/")
        self.test_code = self.is_conftest or collection.collects_file(path) or any(
            part in _TEST_FOLDERS for part in parts[:-1]
        )
        """Test modules, conftest and anything under a tests folder: where helpers check."""
        self.other_skips: list[Spot] = []
        self._unittest_classes: set[str] = set()
        self._memo: dict[tuple[int, int], tuple[list[str], list[FunctionNode]]] = {}
        self._skips: dict[int, list[Spot]] = {}
        text = "\n".join(lines)
        self._may_skip = any(word in text for word in _SKIP_WORDS)
        """False when no skip can be in this module's text: its code need not be walked."""

    def shape(self) -> ModuleShape:
        statements = module_statements(self.tree)
        module_skips = self._module_skips(statements)
        collected = self.collection.collects_file(self.path) and not self.is_conftest
        if collected and _test_flag(self.tree.body) is False:
            collected, why = False, "the module sets __test__ = False"
        else:
            why = "its file is not a test module pytest collects"
        for node in statements:
            self._top_level(node, collected, why, module_skips)
        return ModuleShape(
            path=self.path,
            tests=self.tests,
            hidden=self.hidden,
            strays=self.strays,
            checkers=self.checkers,
            other_skips=tuple(self.other_skips),
            hooks=self._hooks(statements) if self.is_conftest else {},
            lists=self._lists(statements) if self.is_conftest else (),
        )

    def _top_level(
        self, node: ast.stmt, collected: bool, why: str, module_skips: list[Spot]
    ) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.tests.pop(node.name, None)  # a later definition hides an earlier one
            self._function(node, node.name, collected, why, module_skips, {})
        elif isinstance(node, ast.ClassDef):
            self._class(node, node.name, collected, why, module_skips)
        elif isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
            for target in targets:
                if isinstance(target, ast.Name) and self.tests.pop(target.id, None) is not None:
                    self.hidden[target.id] = f"the name is reassigned at line {node.lineno}"

    def _function(
        self,
        node: FunctionNode,
        qualname: str,
        collected: bool,
        why: str,
        inherited: list[Spot],
        methods: Mapping[str, FunctionNode],
        parametrize: tuple[tuple[str, tuple[Case, ...] | None], ...] = (),
    ) -> None:
        if not self.collection.is_test_function(node.name):
            if self.is_conftest or self._is_fixture(node):
                spots = self._skip_calls(node)
                self.other_skips += [_scoped(spot, node.name) for spot in spots]
            if "test" in node.name.lower():  # a test renamed out of collection, perhaps
                why = f"it is now {qualname}, a name pytest does not collect"
                self.strays[_body(node)] = why
            if self.test_code:
                made = CheckCounter(self.names, self.helpers, methods, self._memo).of(node)
                line = node.lineno
                self.checkers[qualname] = Checker(qualname, line, self._line(line), len(made))
            return
        if not collected:
            self.hidden[node.name] = why
            self.strays[_body(node)] = f"it is now {qualname}, and {why}"
            return
        body_skips = list(self._skip_calls(node))  # a copy: the walk is cached
        if isinstance(node, ast.AsyncFunctionDef):
            kind = "async def (without an async plugin pytest skips or fails it)"
            body_skips.append(Spot("async def", kind, node.lineno, self._line(node.lineno)))
        own = [spot for d in node.decorator_list if (spot := self._mark_spot(d)) is not None]
        params = parametrize + tuple(self._parametrize(node.decorator_list, own))
        counter = CheckCounter(self.names, self.helpers, methods, self._memo)
        checks = tuple(counter.of(node))
        body_skips += self._reached_skips(counter.reached, node.lineno)
        self.tests[qualname] = TestShape(
            test_id=f"{self.path}::{qualname}",
            path=self.path,
            name=node.name,
            line=node.lineno,
            text=self._line(node.lineno),
            checks=checks,
            body=_body(node),
            parametrize=params,
            skips=tuple([*inherited, *own, *body_skips]),
        )

    def _class(
        self, node: ast.ClassDef, qualname: str, collected: bool, why: str, inherited: list[Spot]
    ) -> None:
        methods = {
            item.name: item
            for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        unittest = self._is_unittest(node)
        if unittest:
            self._unittest_classes.add(node.name)
        if collected and not unittest and not self.collection.is_test_class(node.name):
            collected, why = False, f"class {node.name} is not collected (python_classes)"
        elif collected and not unittest and "__init__" in methods:
            collected, why = False, f"class {node.name} has __init__, so pytest skips it"
        elif collected and _test_flag(node.body) is False:
            collected, why = False, f"class {node.name} sets __test__ = False"
        marks = [s for d in node.decorator_list if (s := self._mark_spot(d)) is not None]
        marks += self._pytestmark(node.body)
        params = tuple(self._parametrize(node.decorator_list, marks))
        skips = [*inherited, *marks]
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                self.tests.pop(f"{qualname}::{item.name}", None)
                name = f"{qualname}::{item.name}"
                self._function(item, name, collected, why, skips, methods, params)
            elif isinstance(item, ast.ClassDef):
                self._class(item, f"{qualname}::{item.name}", collected, why, skips)

    def _is_unittest(self, node: ast.ClassDef) -> bool:
        """A ``unittest.TestCase`` subclass (directly, or through a class of this module):
        pytest collects it whatever its name."""
        return any(
            (self.names.dotted(base) or "").rsplit(".", 1)[-1] in _UNITTEST_BASES
            or (isinstance(base, ast.Name) and base.id in self._unittest_classes)
            for base in node.bases
        )

    def _is_fixture(self, node: FunctionNode) -> bool:
        return any(self.names.callee(d) == "pytest.fixture" for d in node.decorator_list)

    def _module_skips(self, statements: list[ast.stmt]) -> list[Spot]:
        """Marks in ``pytestmark`` and module-level skip calls: they apply to every test."""
        spots = self._pytestmark(statements)
        for node in statements:
            if isinstance(node, ast.Expr | ast.Assign | ast.Raise):
                spots += self._skip_calls(node)
        if self.is_conftest or not self.collection.collects_file(self.path):
            self.other_skips += [_scoped(spot, "<module>") for spot in spots]
        return spots

    def _pytestmark(self, statements: list[ast.stmt]) -> list[Spot]:
        spots: list[Spot] = []
        for node in statements:
            if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is None or not any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets
            ):
                continue
            value = self.names.resolve(node.value)
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            spots += [spot for mark in marks if (spot := self._mark_spot(mark)) is not None]
        return spots

    def _mark_spot(self, expr: ast.expr) -> Spot | None:
        kind = self.names.skip_mark(expr)
        if kind is None:
            return None
        resolved = self.names.resolve(expr)
        line = expr.lineno
        return Spot(f"{kind} {fingerprint(resolved)}", kind, line, self._line(line),
                    ast.unparse(resolved))

    def _skip_calls(self, node: ast.AST, *, elsewhere: bool = False) -> list[Spot]:
        """Skip calls in ``node`` (a function's body, or one module-level statement);
        ``elsewhere``: a helper that may live in another file, whose words are not known."""
        if id(node) in self._skips:
            return self._skips[id(node)]
        if not (self._may_skip or elsewhere):
            return []
        spots: list[Spot] = []
        for child in walk_shallow(node):
            kind = self._skip_kind(child)
            if kind is not None and isinstance(child, ast.expr | ast.stmt):
                key = f"{kind} {fingerprint(child)}"
                spots.append(Spot(key, kind, child.lineno, self._line(child.lineno)))
        self._skips[id(node)] = spots
        return spots

    def _reached_skips(self, helpers: list[FunctionNode], line: int) -> list[Spot]:
        """Skip calls in helpers the test calls, located at the test (the helper may live in
        another file): an existing test that now calls a skipping helper can be skipped."""
        spots = []
        for helper in helpers:
            for spot in self._skip_calls(helper, elsewhere=True):
                kind = f"{spot.kind} in {helper.name}()"
                spots.append(Spot(f"{helper.name}: {spot.key}", kind, line, self._line(line)))
        return spots

    def _skip_kind(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Raise) and node.exc is not None:
            return SKIP_CALLS.get(self.names.callee(node.exc) or "")
        if not isinstance(node, ast.Call):
            return None
        callee = self.names.callee(node.func) or ""
        if callee in SKIP_CALLS and not callee.endswith(("SkipTest", "Exception")):
            return SKIP_CALLS[callee]
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if attr == "skipTest":
            return "self.skipTest() call"
        if attr in ("add_marker", "applymarker") and node.args:
            mark = self.names.skip_mark(node.args[0])
            return f"{mark} added by {attr}()" if mark else None
        return None

    def _parametrize(
        self, decorators: list[ast.expr], skips: list[Spot]
    ) -> list[tuple[str, tuple[Case, ...] | None]]:
        found: list[tuple[str, tuple[Case, ...] | None]] = []
        for decorator in decorators:
            call = self.names.resolve(decorator)
            if not isinstance(call, ast.Call) or (
                self.names.callee(call.func) != "pytest.mark.parametrize"
            ):
                continue
            args = {k.arg: k.value for k in call.keywords if k.arg}
            argnames = call.args[0] if call.args else args.get("argnames")
            values = call.args[1] if len(call.args) > 1 else args.get("argvalues")
            label = _argnames(argnames)
            cases = self._cases(values, label, skips)
            if cases == ():
                kind = f"empty parametrize list for {label} (pytest skips the test)"
                line = decorator.lineno
                skips.append(Spot(f"empty {label}", kind, line, self._line(line)))
            found.append((label, cases))
        return found

    def _cases(
        self, values: ast.expr | None, label: str, skips: list[Spot]
    ) -> tuple[Case, ...] | None:
        values = self.names.resolve(values) if values is not None else None
        if not isinstance(values, ast.List | ast.Tuple | ast.Set):
            return None  # computed cases: counted only from the outcomes, when known
        cases = []
        for element in values.elts:
            key, marks = element, []
            call = element if isinstance(element, ast.Call) else None
            if call is not None and self.names.callee(call.func) == "pytest.param":
                key = ast.Tuple(elts=call.args, ctx=ast.Load())
                marks = [k.value for k in call.keywords if k.arg == "marks"]
            for mark in marks:
                for item in mark.elts if isinstance(mark, ast.List | ast.Tuple) else [mark]:
                    spot = self._mark_spot(item)
                    if spot is not None:
                        kind = f"{spot.kind} on case {label}={short(key, 40)}"
                        skips.append(Spot(f"{kind} {spot.key}", kind, spot.line, spot.text))
            line = getattr(element, "lineno", 0)
            names = label.split(",")
            parts = key.elts if isinstance(key, ast.Tuple | ast.List) and len(names) > 1 else [key]
            each = tuple(fingerprint(part) for part in parts) if len(parts) == len(names) else ()
            cases.append(Case(fingerprint(key), line, short(element, 80), each))
        return tuple(cases)

    def _hooks(self, statements: list[ast.stmt]) -> dict[str, Spot]:
        return {
            node.name: Spot(fingerprint(node), node.name, node.lineno, self._line(node.lineno))
            for node in statements
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in HOOKS
        }

    def _lists(self, statements: list[ast.stmt]) -> tuple[Spot, ...]:
        spots: list[Spot] = []
        for node in statements:
            target, value = _list_update(node)
            if target not in _LISTS or value is None:
                continue
            value = self.names.resolve(value)
            items = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            for item in items:
                key = f"{target} {fingerprint(item)}"
                spots.append(Spot(key, target, item.lineno, self._line(item.lineno)))
        return tuple(spots)

    def _line(self, number: int) -> str:
        return self.lines[number - 1].strip() if 0 < number <= len(self.lines) else ""


def _body(node: FunctionNode) -> str:
    return fingerprint(ast.Module(body=node.body, type_ignores=[]))


def _scoped(spot: Spot, scope: str) -> Spot:
    return Spot(f"{scope}: {spot.key}", spot.kind, spot.line, spot.text)


def _test_flag(body: list[ast.stmt]) -> bool | None:
    """The value of a literal ``__test__ = ...`` in ``body``, if there is one."""
    flag = None
    for node in body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__test__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
        ):
            flag = bool(node.value.value)
    return flag


def _argnames(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ",".join(part.strip() for part in node.value.split(","))
    if isinstance(node, ast.List | ast.Tuple):
        return ",".join(
            str(e.value) for e in node.elts if isinstance(e, ast.Constant)
        )
    return short(node) if node is not None else "?"


def _list_update(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """``(name, value)`` for ``name = [...]``, ``name += [...]``, ``name.append(x)``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return (target.id if isinstance(target, ast.Name) else None), node.value
    if isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr in ("append", "extend", "insert")
            and node.value.args
        ):
            return func.value.id, node.value.args[-1]
    return None, None
