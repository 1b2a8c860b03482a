"""The replay (issue 27): what the change did to the expectations, shown by running them.

An agent that cannot make ``add(2, 3) == 5`` pass edits the test to say ``== 6`` (or
``in (5, 6)``): no test is removed, skipped or weakened, and the gate saw nothing. So after the
main run, in a separate pytest process, only for the tests the change touched
(``TamperReport.reruns``):

- ``behaviour_change``: the base's version of a test the change edited or removed, run
  against the head's code, fails while the head's version passes. Not blocking by itself
  (behaviour changes are often intended), but a human must look: the finding names the test
  and shows the base's and the head's assertions and the base version's failure;
- ``mark_hides_failure``: a new or changed test with a new ``skip``/``xfail`` mark fails
  when run without it (a new feature's own failing test marked ``xfail``).

Each version runs beside the head's module (a copy named ``confgate_replay_<token>_...`` in
the same folder, removed afterwards), so the head's conftests, fixtures and imports apply,
and the cost grows with the edit, not with the suite. The process gets ``CONFGATE_REPLAY=1``
(a gate inside it does not replay again) and its outcomes come back through
``replay_plugin``; it writes no bytecode, so nothing of the copies stays behind.
"""

from __future__ import annotations

import ast
import json
import secrets
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_confgate import syntax_tree
from pytest_confgate.collect.tamper.compare import TamperFinding
from pytest_confgate.collect.tamper.shapes import FileVersions, Rerun
from pytest_confgate.collect.tamper.syntax import Names, short, terminal_name
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.outcomes import DESELECTED, OutcomeReceiver
from pytest_confgate.processes import ToolMissing, ToolOutputTooLarge, ToolTimeout, run_tool, tail

BEHAVIOUR_CHANGE = "behaviour_change"
MARK_HIDES_FAILURE = "mark_hides_failure"
REPLAY_RULES = (BEHAVIOUR_CHANGE, MARK_HIDES_FAILURE)
REPLAY_ENV = "CONFGATE_REPLAY"
"""Set in the replay's process: a gate that runs there does not replay again."""
PLUGIN = "pytest_confgate.collect.tamper.replay_plugin"
_FAILED = frozenset({"failed", "error"})
_WORST = ("error", "failed", "xpassed", "passed", "xfailed", "skipped")
_SHOWN = 300


@dataclass(frozen=True)
class ReplayResult:
    findings: tuple[TamperFinding, ...] = ()
    tests: int = 0
    """How many test versions ran (the base's and the head's of each edited test)."""
    duration_s: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class _Copy:
    path: Path
    relative: str


def replay(
    root: Path,
    reruns: Sequence[Rerun],
    versions: Mapping[str, FileVersions],
    *,
    timeout_s: float,
    environ: Mapping[str, str],
) -> ReplayResult:
    """Run ``reruns`` in one pytest process in ``root``; ``versions`` by base and head path."""
    if not reruns:
        return ReplayResult()
    started = time.perf_counter()
    token = secrets.token_hex(4)
    copies: dict[tuple[str, str, str], _Copy] = {}
    try:
        for index, rerun in enumerate(reruns):
            key = (rerun.kind, rerun.module, rerun.source)
            if key not in copies:
                text = _text_for(rerun, [r for r in reruns if (r.kind, r.module, r.source) == key],
                                 versions)
                copies[key] = _write_copy(root, rerun.module, text, f"{token}_{index}")
        ids = [f"{copies[(r.kind, r.module, r.source)].relative}::{r.qualname}" for r in reruns]
        heads = [r.head_test for r in reruns if r.head_test]
        results, ran = _run(root, [*ids, *heads], timeout_s, environ)
    except EvidenceError as exc:
        return ReplayResult(duration_s=_since(started), error=str(exc))
    finally:
        for copy in copies.values():
            copy.path.unlink(missing_ok=True)
    findings = []
    for rerun, node in zip(reruns, ids, strict=True):
        found = _judge(rerun, _outcome(results, node), results, versions)
        if found is not None:
            findings.append(found)
    return ReplayResult(tuple(findings), ran, _since(started))


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 6)


def _text_for(rerun: Rerun, group: Sequence[Rerun], versions: Mapping[str, FileVersions]) -> str:
    version = versions.get(rerun.source)
    if rerun.kind == "base":
        text = version.base if version is not None else None
        if text is None and version is None:
            text = next((v.base for v in versions.values() if v.old_path == rerun.source), None)
    else:
        text = version.head if version is not None else None
    if text is None:
        raise EvidenceError(f"{rerun.source}: its {rerun.kind} version could not be read")
    return text if rerun.kind == "base" else unmarked(text, [r.qualname for r in group])


def unmarked(source: str, qualnames: Sequence[str]) -> str:
    """``source`` with the ``skip``/``xfail`` decorators of those tests blanked out (line
    numbers stay, so a failure points at the head's own lines)."""
    tree = syntax_tree.parse(source)
    names = Names.of_module(tree)
    lines = source.split("\n")
    for qualname in qualnames:
        function = _function(tree, qualname)
        if function is None:
            continue
        for decorator in function.decorator_list:
            kind = names.skip_mark(decorator)
            if kind is not None and "skipif" not in kind and "skipIf" not in kind:
                first, last = decorator.lineno, decorator.end_lineno or decorator.lineno
                for number in range(first - 1, last):
                    lines[number] = ""
    return "\n".join(lines)


def _function(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    scope: list[ast.stmt] = tree.body
    found: ast.AST | None = None
    for part in qualname.split("::"):
        found = next((n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                      | ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        scope = found.body
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _write_copy(root: Path, module: str, text: str, tag: str) -> _Copy:
    folder = (root / module).parent
    if folder.is_symlink() or not folder.is_dir():
        raise EvidenceError(f"{module}: its folder is not there to replay the test beside")
    name = f"confgate_replay_{tag}_{Path(module).name}"
    path = folder / name
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise EvidenceError(f"cannot write {path} for the replay: {exc.strerror}") from exc
    relative = path.relative_to(root).as_posix()
    return _Copy(path, relative)


def _run(root: Path, ids: Sequence[str], timeout_s: float, environ: Mapping[str, str]
         ) -> tuple[dict[str, dict[str, str]], int]:
    """The outcomes the replay's process streamed before its session ended
    (``outcomes.OutcomeReceiver``): a file it wrote could be rewritten by the change's code
    at exit."""
    with tempfile.TemporaryDirectory(prefix="confgate-replay-") as scratch:
        chosen = Path(scratch) / "select.json"
        chosen.write_text(json.dumps(sorted(set(ids))), encoding="utf-8")
        modules = sorted({node.split("::", 1)[0] for node in ids})
        argv = [sys.executable, "-m", "pytest", "-p", PLUGIN,
                f"--confgate-replay-select={chosen}", "-p", "no:cacheprovider",
                f"--rootdir={root}", "-q", "--no-header", "--continue-on-collection-errors",
                *modules]
        receiver = OutcomeReceiver()
        try:
            result = run_tool(argv, cwd=root, timeout_s=timeout_s,
                              env={**environ, REPLAY_ENV: "1", "PYTHONDONTWRITEBYTECODE": "1"},
                              pass_fds=(receiver.child_fd,))
        except (ToolMissing, ToolTimeout, ToolOutputTooLarge) as exc:
            receiver.close(0.0)
            raise EvidenceError(f"the replay's pytest process: {exc}") from exc
        received = receiver.close()
        if result.returncode not in (0, 1, 5) or not received.ended:  # 5: all deselected
            raise EvidenceError(
                f"the replay's pytest process exited {result.returncode} without results: "
                f"{tail(result.stderr or result.stdout)}"
            )
    raw = {node: r for node, r in received.results.items() if r["outcome"] != DESELECTED}
    return raw, len(raw)


def _outcome(results: Mapping[str, Mapping[str, str]], node: str) -> tuple[str | None, str]:
    """The worst outcome of ``node`` (over its parametrised cases) and its failure text."""
    mine = [v for k, v in results.items() if k == node or k.startswith(node + "[")]
    module = results.get(node.split("::", 1)[0])
    if module is not None and module.get("outcome") == "error":
        mine.append(module)  # the module did not import: none of its tests ran
    if not mine:
        return None, ""
    worst = min(mine, key=lambda v: _WORST.index(v.get("outcome", "error"))
                if v.get("outcome") in _WORST else 0)
    return worst.get("outcome"), worst.get("failure", "")


def _judge(rerun: Rerun, outcome: tuple[str | None, str],
           results: Mapping[str, Mapping[str, str]], versions: Mapping[str, FileVersions]
           ) -> TamperFinding | None:
    state, failure = outcome
    name = rerun.qualname.rsplit("::", 1)[-1]
    if state not in _FAILED:
        return None
    why = failure_line(failure)
    if rerun.kind == "unmarked":
        marked = versions.get(rerun.source)
        shown = checks_of(marked.head if marked else None, rerun.qualname)
        message = (f"{name} fails without its skip or xfail mark: the mark hides a failing "
                   f"test ({why})")
        return TamperFinding(MARK_HIDES_FAILURE, rerun.module, rerun.line, message, None, shown,
                             rerun.test)
    if rerun.head_test is not None and _outcome(results, rerun.head_test)[0] != "passed":
        return None  # the edited version does not pass either: a failing test, not a new answer
    base = _base_text(rerun, versions)
    head_version = versions.get(rerun.module)
    head = checks_of(head_version.head if head_version else None, rerun.qualname)
    done = "edited" if rerun.head_test else "removed"
    message = (f"{name}: the base's version fails on the head's code and the change {done} "
               f"it, so the change changed what the test expects ({why})")
    return TamperFinding(BEHAVIOUR_CHANGE, rerun.module, rerun.line, message,
                         checks_of(base, rerun.qualname), head, rerun.test)


def _base_text(rerun: Rerun, versions: Mapping[str, FileVersions]) -> str | None:
    version = versions.get(rerun.source)
    if version is not None and version.base is not None:
        return version.base
    return next((v.base for v in versions.values() if v.old_path == rerun.source), None)


def checks_of(source: str | None, qualname: str) -> str | None:
    """The test's ``assert`` statements and ``assert*`` calls, as source on one line."""
    if source is None:
        return None
    try:
        function = _function(syntax_tree.parse(source), qualname)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if function is None:
        return None
    found: list[Any] = [
        node for node in ast.walk(function)
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.Call) and (terminal_name(node.func) or "").startswith("assert"))
    ]
    found.sort(key=lambda n: (n.lineno, n.col_offset))
    text = "; ".join(short(node, 120) for node in found) or "(no assert)"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def failure_line(failure: str) -> str:
    """pytest's ``E`` lines of a failure, on one line (the last line without them)."""
    picked = [line[1:].strip() for line in failure.splitlines() if line.startswith("E ")]
    if not picked:
        picked = [line.strip() for line in failure.splitlines() if line.strip()][-1:]
    text = " | ".join(p for p in picked[:4] if p) or "no failure text"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
