"""Dangerous operations in a candidate's code, read with ``ast`` ("No Dangerous Operations").

bandit rates ``os.system("rm -rf /")`` LOW (a literal command) and has no rule for a literal
``DROP TABLE``; a suppression comment hides its finding from bandit but not from the syntax
tree. This module finds, in source code (never in comments or docstrings):

- ``shell``: ``os.system``/``os.popen``, ``subprocess.getoutput``, the ``subprocess`` calls
  with ``shell=`` anything but ``False``, ``asyncio.create_subprocess_shell``, and a shell
  started in argv form (``["sh", "-c", cmd]``, ``["cmd", "/c", ...]``; the rule
  ``collect.tamper.patterns.shell_argv`` also reports, which this layer cannot import);
- ``dynamic-code``: ``eval``/``exec``/``compile`` on anything but a string literal;
- ``unsafe-deserialisation``: ``pickle``/``marshal``/``dill``/``shelve`` loads of anything but a
  literal, ``yaml.load``/``load_all`` without a safe loader, ``yaml.unsafe_load``;
- ``recursive-delete``: ``shutil.rmtree`` of a computed path (or of ``/``, ``~``), an argv
  ``["rm", "-rf", path]`` with a computed part, and ``rm -rf`` in any string;
- ``destructive-sql``: ``DROP TABLE/DATABASE/SCHEMA/VIEW/INDEX``, ``TRUNCATE``, ``ALTER TABLE
  ... DROP`` and ``DELETE FROM`` without ``WHERE`` in string literals (f-strings included).

Pure: every function takes text. ``new_operations`` keeps only what the baseline's version of
each file does not already do (matched by rule and code, not line, like ``models.new_issues``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping

from pytest_confgate import syntax_tree
from pytest_confgate.rank.models import Issue, new_issues

_SHELL_ALWAYS = frozenset({
    "os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell", "commands.getoutput",
})
_SHELL_OPTION = frozenset({
    "subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
    "subprocess.check_output",
})
_DYNAMIC = frozenset({"eval", "exec", "compile", "builtins.eval", "builtins.exec",
                      "builtins.compile"})
_LOADERS = frozenset({
    "pickle.load", "pickle.loads", "pickle.Unpickler", "cPickle.load", "cPickle.loads",
    "dill.load", "dill.loads", "marshal.load", "marshal.loads", "shelve.open",
    "jsonpickle.decode", "yaml.unsafe_load", "yaml.unsafe_load_all",
})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "csh", "tcsh"})
_YAML = frozenset({"yaml.load", "yaml.load_all"})
_SAFE_YAML_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
_ROOTS = frozenset({"/", "~", "/*", "*", ".", ".."})
_RM_FLAGS = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$")
_RM_TEXT = re.compile(r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\b")
_SQL = re.compile(
    r"\b(DROP\s+(TABLE|DATABASE|SCHEMA|VIEW|INDEX)\b"
    r"|TRUNCATE\s+(TABLE\s+)?[\w\"`\[]"
    r"|ALTER\s+TABLE\s+\S+\s+DROP\b)",
    re.IGNORECASE,
)
_DELETE = re.compile(r"\bDELETE\s+FROM\s+[\w.\"`\[\]?]+\s*(;|$)", re.IGNORECASE)
_SHOWN = 80


def operations(source: str, path: str) -> list[Issue]:
    """Every dangerous operation in one file's source (a file that does not parse has none)."""
    try:
        tree = syntax_tree.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    names = _import_names(tree)
    skipped = _docstrings(tree)  # and the literal parts of f-strings, read as a whole
    found: list[Issue] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found += _call(node, _qualified(node.func, names), path)
        elif isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
            found += _text(_fstring_text(node), node, path)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in skipped):
            found += _text(node.value, node, path)
    return sorted(found, key=lambda issue: (issue.line, issue.rule, issue.message))


def new_operations(tree: Mapping[str, str], baseline: Mapping[str, str] | None,
                   measured: Mapping[str, str]) -> tuple[Issue, ...]:
    """Operations in the ``measured`` files of ``tree`` that the baseline's files lack."""
    found: list[Issue] = []
    for path in sorted(measured):
        head = operations(tree[path], path)
        before = baseline.get(path) if baseline is not None else None
        base = operations(before, path) if before is not None else []
        found += new_issues(tuple(head), tuple(base))
    return tuple(found)


def _call(node: ast.Call, name: str, path: str) -> list[Issue]:
    first = node.args[0] if node.args else None
    if name in _SHELL_ALWAYS or (name in _SHELL_OPTION and _shell_option(node)):
        return [_issue("shell", f"{name} runs a shell command", node, path)]
    argvs = [*node.args, *(k.value for k in node.keywords if k.arg in ("args", "argv"))]
    if any(_shell_argv(argv) for argv in argvs):
        return [_issue("shell", "a shell runs a command in argv form", node, path)]
    if name in _DYNAMIC and not _is_literal(first):
        return [_issue("dynamic-code", f"{name}() runs code that is not a literal", node, path)]
    if name in _LOADERS and not _is_literal(first):
        return [_issue("unsafe-deserialisation", f"{name} can run code hidden in its input",
                       node, path)]
    if name in _YAML and not _safe_yaml(node):
        return [_issue("unsafe-deserialisation", f"{name} without a safe Loader", node, path)]
    if name == "shutil.rmtree" and (not _is_literal(first) or _literal_root(first)):
        return [_issue("recursive-delete", "shutil.rmtree of a computed path", node, path)]
    if _rm_argv(first):
        return [_issue("recursive-delete", "rm -r of a computed path", node, path)]
    return []


def _text(text: str, node: ast.AST, path: str) -> list[Issue]:
    if _RM_TEXT.search(text):
        return [_issue("recursive-delete", "a string runs `rm -r`", node, path)]
    flat = " ".join(text.split())
    if _SQL.search(flat) or _DELETE.search(flat):
        return [_issue("destructive-sql", "destructive SQL", node, path)]
    return []


def _issue(rule: str, what: str, node: ast.AST, path: str) -> Issue:
    code = " ".join(ast.unparse(node).split())
    shown = code if len(code) <= _SHOWN else code[: _SHOWN - 3] + "..."
    return Issue(rule, path, f"{what}: {shown}", getattr(node, "lineno", 0), "HIGH")


def _shell_option(node: ast.Call) -> bool:
    for keyword in node.keywords:
        if keyword.arg == "shell":
            value = keyword.value
            return not (isinstance(value, ast.Constant) and not value.value)
    return False


def _safe_yaml(node: ast.Call) -> bool:
    loader = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "Loader":
            loader = keyword.value
    if isinstance(loader, ast.Attribute):
        return loader.attr in _SAFE_YAML_LOADERS
    return isinstance(loader, ast.Name) and loader.id in _SAFE_YAML_LOADERS


def _is_literal(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def _literal_root(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and str(node.value).strip() in _ROOTS


def _rm_argv(node: ast.expr | None) -> bool:
    """``["rm", "-rf", path]`` (a list or tuple) with any part that is not a literal."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return False
    head = node.elts[0]
    if not (isinstance(head, ast.Constant) and head.value in ("rm", "/bin/rm")):
        return False
    flags = [e.value for e in node.elts[1:] if isinstance(e, ast.Constant)
             and isinstance(e.value, str) and e.value.startswith("-")]
    computed = any(not isinstance(e, ast.Constant) for e in node.elts[1:])
    literal_root = any(_literal_root(e) for e in node.elts[1:])
    return any(_RM_FLAGS.match(flag) for flag in flags) and (computed or literal_root)


def _shell_argv(node: ast.expr) -> bool:
    """``["sh", "-c", cmd]``, ``("bash", "-lc", cmd)``, ``["cmd", "/c", ...]``,
    ``["powershell", "-Command", ...]``: ``shell=True`` in all but name."""
    if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) < 2:
        return False
    program, flag = node.elts[0], node.elts[1]
    if not (isinstance(program, ast.Constant) and isinstance(program.value, str)
            and isinstance(flag, ast.Constant) and isinstance(flag.value, str)):
        return False
    name = program.value.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    option = flag.value
    if name in _SHELLS:
        return option.startswith("-") and not option.startswith("--") and "c" in option
    if name == "cmd":
        return option.lower() in ("/c", "/k")
    return name in ("powershell", "pwsh") and option.lower() in (
        "-c", "-command", "-encodedcommand", "-e")


def _fstring_text(node: ast.JoinedStr) -> str:
    return "".join(
        part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "x"
        for part in node.values
    )


def _qualified(func: ast.expr, names: Mapping[str, str]) -> str:
    """``os.system`` for ``os.system``, ``o.system`` (``import os as o``) and ``system``
    (``from os import system``)."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return ""
    parts.append(names.get(func.id, func.id))
    return ".".join(reversed(parts))


def _import_names(tree: ast.Module) -> dict[str, str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of docstring constants: prose about ``rm -rf`` is not a command."""
    found: set[int] = set()
    for node in _scopes(tree):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def _scopes(tree: ast.Module) -> Iterator[ast.Module | ast.ClassDef | ast.FunctionDef
                                          | ast.AsyncFunctionDef]:
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
