"""Branch probes must give exactly coverage.py's branch figures (issue 26, item 3).

Every case runs one small module twice in this process: under ``coverage.Coverage(branch=True)``
(the oracle) and under line + branch probes, and coverage.py's own JSON report analyses both,
so any difference (lines, branches, the missing arcs, per function) is the probes'.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import coverage
import pytest

from pytest_confgate.collect.coverage.branch_probes import BranchProbes, arc_key, arcs_of, key_arc
from pytest_confgate.collect.coverage.line_probes import LineProbes
from pytest_confgate.collect.coverage.probe_engine import BRANCH_PROBES, BRANCH_PROBES_PYTHONS
from pytest_confgate.collect.coverage.session import CoverageSession

IN_RANGE = BRANCH_PROBES_PYTHONS[0] <= sys.version_info[:2] < BRANCH_PROBES_PYTHONS[1]
pytestmark = pytest.mark.skipif(not IN_RANGE, reason="branch probes serve Python 3.10-3.11")
_counter = iter(range(10**6))


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))


def _report(cov: coverage.Coverage, path: Path) -> dict[str, Any]:
    out = path.with_suffix(".json")
    cov.json_report(morfs=[str(path)], outfile=str(out))
    entry: dict[str, Any] = next(iter(json.loads(out.read_text())["files"].values()))
    out.unlink()
    return entry


def _run_module(name: str) -> Any:
    module = importlib.import_module(name)
    try:
        return module.run()
    finally:
        sys.modules.pop(name, None)


def both(folder: Path, source: str) -> tuple[dict[str, Any], dict[str, Any], LineProbes]:
    """(coverage.py's report, the probes' report, the probes) for one run of ``source``."""
    name = f"bmod{next(_counter)}"
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    traced_cov = coverage.Coverage(branch=True, data_file=None, include=[str(path)])
    traced_cov.start()
    try:
        _run_module(name)
    finally:
        traced_cov.stop()
    probed_cov = coverage.Coverage(branch=True, data_file=None, include=[str(path)])
    branches = BranchProbes(probed_cov._exclude_regex("exclude"))
    real = os.path.realpath(path)
    probes = LineProbes(lambda f, _m: os.path.realpath(f) == real, branches=branches)
    probes.install()
    try:
        _run_module(name)
    finally:
        probes.uninstall()
    probed_cov.get_data().add_arcs(arcs_of(probes.hits))
    return _report(traced_cov, path), _report(probed_cov, path), probes


def assert_same(folder: Path, source: str) -> dict[str, Any]:
    traced, probed, probes = both(folder, source)
    assert probes.unprobed == {}
    assert probed == traced
    return traced


CASES = {
    "if_elif_else": """
        def f(x):
            if x > 1:
                y = 1
            elif x < 0:
                y = 2
            else:
                y = 3
            if x == 5:
                y += 1
            return y
        def run():
            f(2); f(-1)
    """,
    "loops_else_break_continue": """
        def g(xs):
            total = 0
            for x in xs:
                if x == 3:
                    break
                if x == 1:
                    continue
                total += x
            else:
                total = -1
            while total > 10:
                total -= 1
            else:
                total += 0
            n = 0
            while n < 3:
                n += 1
                if n == 7:
                    break
            for _ in ():
                pass
            return total
        def run():
            g([1, 2, 3]); g([5]); g([20])
    """,
    "while_true": """
        def h(n):
            while True:
                n += 1
                if n == 99:
                    n = 0
                if n > 3:
                    return n
        def k(n):
            while 1:
                if n:
                    break
                n += 1
            return n
        def run():
            h(0); k(0)
    """,
    "try_except_else_finally": """
        def t(x):
            try:
                v = int(x)
                if v:
                    v += 1
            except ValueError:
                v = 0
                if x:
                    v = 1
            else:
                if v > 5:
                    v = 5
            finally:
                if x == "9":
                    v = 9
                v += 0
            return v
        def last_in_try(x):
            try:
                if x.real:
                    return 1
            except AttributeError:
                pass
        def last_in_finally(x):
            try:
                if x.real:
                    y = 1
            finally:
                z = 2
        def run():
            t("x"); t("1"); t("9"); last_in_try(None); last_in_try(0)
            try:
                last_in_finally(None)
            except AttributeError:
                pass
            last_in_finally(0)
    """,
    "finally_at_the_frame_exit": """
        def by_return(x, y):
            try:
                if x:
                    return 1
            finally:
                if y:
                    y = 0
        def by_raise(x, y):
            try:
                if x:
                    raise KeyError(x)
            finally:
                if y:
                    y = 0
        def normal(x, y):
            try:
                x += 1
            finally:
                if y:
                    y = 0
        def gen(y):
            try:
                yield 1
            finally:
                if y:
                    y = 0
        def run():
            by_return(1, 0); by_return(0, 1)
            try:
                by_raise(1, 0)
            except KeyError:
                pass
            normal(0, 1)
            g = gen(0); next(g); g.close()
    """,
    "with_blocks": """
        import contextlib
        def w(items):
            with contextlib.suppress(KeyError):
                for item in items:
                    if item:
                        pass
        def w2(x):
            with contextlib.nullcontext():
                if x:
                    x = 1
            return x
        def run():
            w([0, 1]); w(None) if False else None
            try:
                w(None)
            except TypeError:
                pass
            w2(0)
    """,
    "match": """
        def m(cmd):
            match cmd:
                case "a":
                    return 1
                case "b" | "c":
                    return 2
                case [x, y] if x > y:
                    return 3
                case {"k": v}:
                    return v
            return 0
        def tail(v):
            match v:
                case 1:
                    v = 2
                case 2:
                    pass
        def wild(v):
            match v:
                case 1:
                    return 1
                case _:
                    return 2
        def run():
            m("a"); m([2, 1]); m([1, 2]); m({"k": 5}); m(7); tail(1); tail(3); wild(1)
    """,
    "nested_functions_lambdas_comprehensions": """
        def nested(x):
            def inner(y):
                if y:
                    return 1
                return 2
            f = lambda q: q if q else 0
            return inner(x), [v for v in range(3) if v], {k: k for k in "ab" if k}, f(x)
        def run():
            nested(0)
    """,
    "generators": """
        def gen(n):
            for i in range(n):
                if i % 2:
                    yield i
        def gen2(n):
            while n:
                n -= 1
                yield n
        def run():
            list(gen(5)); g = gen2(3); next(g)
    """,
    "async": """
        import asyncio
        class It:
            def __init__(self, n): self.n = n
            def __aiter__(self): return self
            async def __anext__(self):
                if self.n <= 0:
                    raise StopAsyncIteration
                self.n -= 1
                return self.n
        class Cm:
            async def __aenter__(self): return self
            async def __aexit__(self, *a): return True
        async def coro(n):
            total = 0
            if n == 99:
                total = 99
            async for v in It(n):
                if v:
                    total += v
            else:
                total += 1
            async with Cm():
                if total > 2:
                    total = 0
                raise ValueError
            return total
        def run():
            asyncio.run(coro(3)); asyncio.run(coro(0))
    """,
    "decorators_and_one_liners": """
        import functools, typing
        def deco(f):
            return f
        @deco
        def one(x): return x
        @typing.overload
        def over(x: int) -> int: ...
        def over(x): return x
        class A:
            @property
            def p(self): return 1
            @functools.lru_cache
            def q(self): return 2
        class B: pass
        def run():
            one(1); A().p
    """,
    "early_return_assert_boolean": """
        def early(x, y):
            if x is None:
                return None
            assert x or y, "both empty"
            if (x and
                    not y):
                return 1
            if x or (y and x):
                return 2
            return 3
        def run():
            early(None, 0); early(1, 0); early(1, 1)
    """,
    "exits_taken_by_raising": """
        def last_if_raises(x):
            if x.attr:
                return 1
        def last_for_raises(x):
            for item in x:
                pass
        def last_while_raises(x):
            while x.attr:
                pass
        class Module:
            if True:
                pass
        def run():
            for f in (last_if_raises, last_for_raises, last_while_raises):
                try:
                    f(None)
                except (AttributeError, TypeError):
                    pass
    """,
    "module_level_and_exclusions": """
        import sys
        if sys.version_info > (3,):
            X = 1
        else:  # pragma: no cover
            X = 2
        def ex(x):
            if x:  # pragma: no cover
                return 1
            if x is None:
                raise ValueError("no")  # pragma: no cover
            return 2
        def run():
            if X == 5:
                return
            ex(0)
        for _i in range(2):
            if _i:
                pass
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_probes_give_coverage_pys_branch_figures(folder: Path, name: str) -> None:
    report = assert_same(folder, CASES[name])
    summary = report["summary"]
    assert summary["num_branches"] > 0
    # Each program leaves something unrun: equal figures are a real comparison.
    assert summary["covered_lines"] < summary["num_statements"] or summary["missing_branches"]


# Python 3.11 compiles a ``finally`` block once per way into it; the copy run for an exception
# ends in a re-raise that the tracer sees on a line of its own, which depends on the block's
# last statement (issue 26: click's testing.py, _termui_impl.py and tests/test_termui.py).
# Each program runs every function once normally and once with an exception in flight.
_RUN_BOTH_WAYS = """
        def run():
            for name, args in CALLS:
                for boom in (0, 1):
                    try:
                        globals()[name](*args, boom)
                    except KeyError:
                        pass
"""
FINALLY_CASES = {
    "finally_ending_in_loops": """
        def by_for(xs, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                for x in xs:
                    if x:
                        x = 0
        def by_for_else(xs, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                for x in xs:
                    if x == boom + 1:
                        break
                else:
                    x = -1
        def by_while(n, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                while n:
                    n -= 1
                    if n == 5 and boom:
                        break
        def by_while_else(n, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                while n:
                    n -= 1
                    if boom:
                        break
                else:
                    n = -1
        def by_while_true(n, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                while True:
                    try:
                        n = 1 // n
                    except ZeroDivisionError:
                        n = 1
                    else:
                        break
        def never(x):
            try:
                pass
            finally:
                while x:
                    x = 0
        CALLS = [("by_for", ([0, 1],)), ("by_for_else", ([0, 2],)), ("by_while", (6,)),
                 ("by_while_else", (2,)), ("by_while_true", (0,))]
    """ + _RUN_BOTH_WAYS,
    "finally_ending_in_ifs": """
        def if_else(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                if x:
                    x = 1
                elif x is None:
                    x = 2
                else:
                    x = 3
        def if_body_ends_in_try(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                x += 1
                if x > 5:
                    import os
                    try:
                        os.rmdir(x)
                    except TypeError:
                        pass
        def if_body_ends_in_a_loop(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                if x:
                    while x > 3:
                        x -= 1
        def if_body_ends_in_return(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                if x:
                    x = 2
                    return x
        def if_two_statements(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                if x:
                    x = 2
                    x += 1
        CALLS = [("if_else", (0,)), ("if_body_ends_in_try", (1,)), ("if_body_ends_in_try", (9,)),
                 ("if_body_ends_in_a_loop", (0,)), ("if_body_ends_in_return", (0,)),
                 ("if_two_statements", (0,))]
    """ + _RUN_BOTH_WAYS,
    "finally_ending_in_with_and_try": """
        import contextlib
        def by_with(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                with contextlib.nullcontext():
                    if x:
                        x = 1
        def by_try_except(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                try:
                    x = 1 // x
                except ZeroDivisionError:
                    if boom:
                        x = 2
        def by_try_except_else(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                try:
                    x = 1 // x
                except ZeroDivisionError:
                    x = 2
                else:
                    if x:
                        x = 3
        def by_try_finally(x, boom):
            try:
                if boom:
                    raise KeyError(boom)
            finally:
                try:
                    x += 1
                finally:
                    x = 0
        CALLS = [("by_with", (0,)), ("by_try_except", (0,)), ("by_try_except", (1,)),
                 ("by_try_except_else", (0,)), ("by_try_finally", (1,))]
    """ + _RUN_BOTH_WAYS,
    "finally_before_more_code": """
        def implicit_raise(xs, boom):
            try:
                x = 1 // (1 - boom)
                x += 1
            finally:
                for f in xs:
                    if not f:
                        f = 1
            return x
        def while_then_more(n, boom):
            try:
                x = 1 // (1 - boom)
            finally:
                while n:
                    n -= 1
            return n
        def if_then_more(n, boom):
            out = 0
            try:
                out = 1 // (1 - boom)
            finally:
                if n:
                    out += n
                    n = 0
            return out
        def run():
            for f in (implicit_raise, while_then_more, if_then_more):
                for args in ((0, 0), (0, 1), ([0, 1], 1)):
                    try:
                        f(*args)
                    except (ZeroDivisionError, TypeError):
                        pass
    """,
    "finally_inside_a_try_with_handlers": """
        import contextlib
        @contextlib.contextmanager
        def raw_terminal(f, error):
            try:
                old = f + 1
                try:
                    yield old
                finally:
                    old = 0
                    if f is not None:
                        f = 0
            except error:
                pass
        def caught(x, boom):
            try:
                try:
                    if boom:
                        raise KeyError(boom)
                finally:
                    while x:
                        x -= 1
                x = 2
            except KeyError:
                x = 3
            return x
        def run():
            with raw_terminal(0, KeyError):
                pass
            for error in (KeyError, TypeError):
                try:
                    with raw_terminal(0, error):
                        raise KeyError
                except KeyError:
                    pass
            caught(0, 0); caught(0, 1)
    """,
    "finally_in_generators_and_with_returns": """
        import contextlib
        @contextlib.contextmanager
        def isolated(temp_dir):
            try:
                yield 1
            finally:
                if temp_dir is None:
                    import shutil
                    try:
                        shutil.rmtree(temp_dir)
                    except TypeError:
                        pass
        def returns_through(x, boom):
            try:
                if x:
                    return 1
                if boom:
                    raise KeyError(boom)
            finally:
                for i in range(x):
                    if i:
                        x = 0
        def run():
            with isolated(5):
                pass
            try:
                with isolated(None):
                    raise KeyError
            except KeyError:
                pass
            returns_through(2, 0)
            try:
                returns_through(0, 1)
            except KeyError:
                pass
    """,
}


@pytest.mark.parametrize("name", sorted(FINALLY_CASES))
def test_finally_blocks_ending_in_a_block_give_coverage_pys_figures(
    folder: Path, name: str
) -> None:
    report = assert_same(folder, FINALLY_CASES[name])
    summary = report["summary"]
    assert summary["num_branches"] > 0
    assert summary["covered_lines"] < summary["num_statements"] or summary["missing_branches"]


def _program(seed: int, finally_ends: bool = False) -> str:
    """A random nest of branches over ``a``, ``b`` and a loop variable, run on a few inputs.

    ``finally_ends``: statements may raise (``b == 1``), try blocks have a ``finally`` that
    ends in a block and often no handler, and ``with`` blocks appear: the ways out of a
    ``finally`` block (issue 26, click's testing.py).
    """
    rnd = random.Random(seed)  # noqa: S311 -- a reproducible test program, not a secret
    lines = ["import contextlib", "def f(a, b):", "    out = i = 0"]
    finals: list[str] = []

    def cond() -> str:
        return rnd.choice(["a > 1", "b", "a == b", "out % 2", "not a", "a and b", "i > 1"])

    def block(depth: int, indent: int, in_loop: bool) -> None:
        pad = " " * indent
        for _ in range(rnd.randint(1, 3)):
            kinds = ["stmt", "if", "for", "while", "try", "jump", *(["with"] * finally_ends)]
            kind = rnd.choice(kinds if depth < 3 else ["stmt", "jump"])
            if kind == "stmt" and finally_ends and not finals and rnd.random() < 0.3:
                lines.append(f"{pad}out += 0 // (b - 1)")
            elif kind == "stmt" or (kind == "jump" and not in_loop and rnd.random() < 0.5):
                lines.append(f"{pad}out += {rnd.randint(1, 3)}")
            elif kind == "with":
                lines.append(f"{pad}with contextlib.nullcontext():")
                block(depth + 1, indent + 4, in_loop)
            elif kind == "jump":
                jump = rnd.choice(["break", "continue"]) if in_loop else "return out"
                lines.extend([f"{pad}if {cond()}:", f"{pad}    {jump}"])
            elif kind == "if":
                lines.append(f"{pad}if {cond()}:")
                block(depth + 1, indent + 4, in_loop)
                for _ in range(rnd.randint(0, 1)):
                    lines.append(f"{pad}elif {cond()}:")
                    block(depth + 1, indent + 4, in_loop)
                if rnd.random() < 0.5:
                    lines.append(f"{pad}else:")
                    block(depth + 1, indent + 4, in_loop)
            elif kind in ("for", "while"):
                head = "for i in range(a % 4):" if kind == "for" else "while out < 7 + a:"
                lines.extend([f"{pad}i = 0", f"{pad}{head}", f"{pad}    out += 1"])
                block(depth + 1, indent + 4, True)
                if rnd.random() < 0.4:
                    lines.append(f"{pad}else:")
                    block(depth + 1, indent + 4, in_loop)
            else:
                lines.append(f"{pad}try:")
                block(depth + 1, indent + 4, in_loop)
                final = rnd.random() < (0.8 if finally_ends else 0.2)
                if not (finally_ends and final and rnd.random() < 0.5):
                    handled = "out += 1 // (a + 1)" if finally_ends else "out = 1 // (a + 1)"
                    lines.extend([f"{pad}except ZeroDivisionError:", f"{pad}    {handled}"])
                if final:
                    lines.append(f"{pad}finally:")
                    finals.append(pad)  # a block raising here is a documented limit
                    block(depth + 1, indent + 4, in_loop)
                    finals.pop()
                    while finally_ends and lines[-1].startswith(f"{pad}    out"):
                        lines.pop()  # the finally block ends in a block (or is one line)
                    if lines[-1] == f"{pad}finally:":
                        lines.append(f"{pad}    out += 1")

    block(0, 4, False)
    if rnd.random() < 0.7:
        lines.append("    return out")
    inputs = [(rnd.randint(0, 3), rnd.randint(0, 2)) for _ in range(4 if finally_ends else 3)]
    calls = [f"    try:\n        f({a}, {b})\n    except ZeroDivisionError:\n        pass"
             if finally_ends else f"    f({a}, {b})" for a, b in inputs]
    return "\n".join([*lines, "def run():", *calls, ""])


def test_random_programs_give_coverage_pys_figures_or_are_refused(folder: Path) -> None:
    placed = 0
    for seed in range(60):
        traced, probed, probes = both(folder, _program(seed))
        if probes.unprobed:  # refused: the file goes to the tracer, never a guess
            (reason,) = probes.unprobed.values()
            assert "finally" in reason, (seed, reason)
            continue
        placed += 1
        assert probed == traced, seed
    assert placed >= 40


def test_random_finally_blocks_give_coverage_pys_figures_or_are_refused(folder: Path) -> None:
    placed = 0
    for seed in range(80):
        traced, probed, probes = both(folder, _program(seed, finally_ends=True))
        if probes.unprobed:
            (reason,) = probes.unprobed.values()
            assert "finally" in reason or "exits" in reason, (seed, reason)
            continue
        placed += 1
        assert probed == traced, seed
    assert placed >= 40


def test_a_file_the_probes_cannot_place_is_refused_not_guessed(folder: Path) -> None:
    # A body on the branch line itself: its arc cannot be told from the line's other exit.
    source = "def f(x):\n    if x: return 1\n    return 2\ndef run():\n    f(1)\n"
    path = folder / "oneliner.py"
    path.write_text(source, encoding="utf-8")
    probes = LineProbes(lambda f, _m: True, branches=BranchProbes(None))
    reason = probes.prepare(str(path))
    assert reason is not None
    assert "line 2" in reason


REFUSED_FINALLY = {
    # After the block, line 9 runs only when it ran for the try's normal end; the return's
    # copy of the block leaves line 7 for the frame's exit: one probe cannot tell them apart.
    "return_through": ("def f(x):\n    try:\n        if x:\n            return 1\n"
                       "    finally:\n        if x:\n            x = 1\n    return x\n",
                       "line 6: its exit leaves a finally block"),
    "break_through": ("def f(xs):\n    for x in xs:\n        try:\n            if x:\n"
                      "                break\n        finally:\n            if x:\n"
                      "                x = 1\n        x = 2\n",
                      "line 7: its exit leaves a finally block"),
    # An exception in flight may be the one the with (or the outer finally, or the except)
    # is handling: whether the block runs for it cannot be told.
    "inside_a_with": ("def f(x, cm):\n    with cm:\n        try:\n            pass\n"
                      "        finally:\n            if x:\n                x = 1\n",
                      "line 6: its exit leaves a finally block"),
    "nested_finally": ("def f(x):\n    try:\n        pass\n    finally:\n        try:\n"
                       "            pass\n        finally:\n            if x:\n"
                       "                x = 1\n",
                       "line 8: its exit leaves a finally block"),
    "inside_an_except": ("def f(x):\n    try:\n        pass\n    except KeyError:\n"
                         "        try:\n            pass\n        finally:\n"
                         "            while True:\n                break\n",
                         "line 8: a finally block ending in a block, inside a block that"),
    "inside_an_except_of_a_try_with_handlers": (
        "def f(x):\n    try:\n        pass\n    except KeyError:\n        try:\n"
        "            try:\n                pass\n            finally:\n"
        "                if x:\n                    x = 1\n        except KeyError:\n"
        "            pass\n",
        "line 9: its exit leaves a finally block"),
    "ending_in_a_match": ("def f(x):\n    try:\n        pass\n    finally:\n"
                          "        match x:\n            case 1:\n                x = 2\n",
                          "line 5: a finally block ending in a match block"),
    "ending_in_async_for": ("async def f(x):\n    try:\n        pass\n    finally:\n"
                            "        async for i in x:\n            pass\n",
                            "line 5: a finally block ending in a asyncfor block"),
}


@pytest.mark.parametrize("name", sorted(REFUSED_FINALLY))
def test_a_finally_block_whose_end_cannot_be_told_is_refused(folder: Path, name: str) -> None:
    source, expected = REFUSED_FINALLY[name]
    path = folder / f"fin_{name}.py"
    path.write_text(source, encoding="utf-8")
    probes = LineProbes(lambda f, _m: True, branches=BranchProbes(None))
    reason = probes.prepare(str(path))
    assert reason is not None
    assert expected in reason


def test_an_exit_out_of_a_finally_into_the_code_after_it_is_measured(folder: Path) -> None:
    # Refused before: line 5's exit is line 7 when the try ends normally, the frame's exit
    # when the block runs for an exception; nothing else passes through the block.
    source = """
        def f(x, boom):
            try:
                x = 1 // (1 - boom)
            finally:
                if x:
                    x = 1
            return x
        def run():
            f(0, 0)
            try:
                f(0, 1)
            except ZeroDivisionError:
                pass
    """
    assert_same(folder, source)


def test_arc_keys_round_trip_and_never_look_like_lines() -> None:
    for arc in [(1, 2), (5, -1), (70000, -69999), (3, 3000)]:
        key = arc_key(*arc)
        assert key < 0
        assert key_arc(key) == arc


def test_probes_change_no_line_number_traceback_or_docstring(folder: Path) -> None:
    source = '''\
        """Module doc."""
        from __future__ import annotations
        import sys, traceback
        def boom(x):
            """Function doc."""
            for item in x:
                if item:
                    pass
        def run():
            try:
                boom(None)
            except TypeError:
                return (traceback.format_exc(), boom.__code__.co_firstlineno, boom.__doc__,
                        __doc__, sys._getframe().f_lineno)
        '''
    path = folder / "visible.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    plain = _run_module("visible")
    probes = LineProbes(lambda f, _m: f.endswith("visible.py"), branches=BranchProbes(None))
    probes.install()
    try:
        probed = _run_module("visible")
    finally:
        probes.uninstall()
    assert probed == plain
    assert "line 6, in boom" in probed[0]
    # The loop's exit arc was taken by the TypeError, as coverage.py's tracer counts it.
    assert (6, -4) in arcs_of(probes.hits)[os.path.realpath(path)]


def test_a_session_measures_branches_with_probes(folder: Path) -> None:
    package = folder / "brpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    body = "def f(x):\n    if x:\n        return 1\n    for i in x or ():\n        pass\n"
    (package / "mod.py").write_text(body, encoding="utf-8")
    # One construct the probes cannot place: this file is traced, the other probed.
    (package / "odd.py").write_text("def g(x):\n    if x: return 1\n    return 2\n")
    session = CoverageSession(folder, [package], branch=True)
    session.start()
    try:
        from brpkg import mod, odd

        mod.f(1)
        odd.g(0)
    finally:
        session.stop()
        for name in ("brpkg", "brpkg.mod", "brpkg.odd"):
            sys.modules.pop(name, None)
    details = session.metric().details
    assert details["engine"] == f"{BRANCH_PROBES} and coverage.py"
    assert details["engine_by_file"] == {"brpkg/__init__.py": BRANCH_PROBES,
                                         "brpkg/mod.py": BRANCH_PROBES,
                                         "brpkg/odd.py": "coverage.py"}
    assert (details["num_branches"], details["covered_branches"]) == (6, 2)
    assert (details["covered_lines"], details["num_statements"]) == (6, 8)


def test_a_source_package_named_not_imported_yet_is_checked_before_the_run(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """coverage.py's ``source = brpkg2`` (a package name): its files are found and checked
    before anything imports them, so the one probes cannot place is traced, not refused."""
    package = folder / "src" / "brpkg2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "odd.py").write_text("def g(x):\n    if x: return 1\n    return 2\n")
    (folder / ".coveragerc").write_text("[run]\nbranch = true\nsource = brpkg2\n")
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder / "src"))
    session = CoverageSession(folder, [], own_sources=False)
    session.start()
    try:
        from brpkg2 import odd

        odd.g(0)
    finally:
        session.stop()
        for name in ("brpkg2", "brpkg2.odd"):
            sys.modules.pop(name, None)
    metric = session.metric()
    assert metric.status == "ok", metric.reason
    assert metric.details["engine_by_file"]["src/brpkg2/odd.py"] == "coverage.py"
    assert (metric.details["covered_branches"], metric.details["num_branches"]) == (1, 2)


@pytest.mark.usefixtures("outside_a_gate_session")
def test_a_refused_file_is_remembered_by_its_source(folder: Path) -> None:
    path = folder / "refused.py"
    path.write_text("def g(x):\n    if x: return 1\n    return 2\n", encoding="utf-8")
    cache = folder / "cache"
    probes = LineProbes(lambda f, _m: True, branches=BranchProbes(None, cache))
    first = probes.prepare(str(path))
    assert first is not None
    (note,) = (cache / "branch-refused").iterdir()
    note.write_text("remembered", encoding="utf-8")  # what a warm run reads back
    again = LineProbes(lambda f, _m: True, branches=BranchProbes(None, cache))
    assert again.prepare(str(path)) == "instrumenting failed: Unmappable: remembered"
    path.write_text("def g(x):\n    if x:\n        return 1\n    return 2\n", encoding="utf-8")
    assert again.prepare(str(path)) is None  # another source: analysed afresh, and placed


def test_branch_probes_serve_python_3_10_and_3_11_only() -> None:
    from pytest_confgate.collect.coverage.probe_engine import branch_probes

    cov = coverage.Coverage(data_file=None, branch=True)
    assert isinstance(branch_probes(cov, (3, 11)), BranchProbes)
    assert isinstance(branch_probes(cov, (3, 10)), BranchProbes)
    assert "3.10 to 3.11" in str(branch_probes(cov, (3, 12)))


@pytest.mark.parametrize("branch", [True, False])
def test_a_module_in_a_zip_under_the_source_is_traced_not_refused(
    folder: Path, branch: bool
) -> None:
    import zipfile

    source = folder / "zsrc"
    source.mkdir()
    archive = source / "package.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("zpack/__init__.py", "def f(x):\n    if x:\n        return 1\n    return 2\n")
    sys.path.insert(0, str(archive))
    session = CoverageSession(folder, [source], branch=branch)
    session.start()
    try:
        import zpack

        zpack.f(1)
    finally:
        session.stop()
        sys.path.remove(str(archive))
        sys.modules.pop("zpack", None)
    metric = session.metric()
    assert metric.status == "ok", metric.reason
    assert metric.details["engine_by_file"] == {"zsrc/package.zip/zpack/__init__.py": "coverage.py"}
    assert (metric.details["covered_lines"], metric.details["num_statements"]) == (3, 4)


FINALLY_IF_REREAISED_ON_ITS_LINE = """
    class Parser:
        def __init__(self):
            self.stack = []

        def fail(self, value):
            raise ValueError(value)

        def parse(self, value):
            self.stack.append(value)
            pop = True
            try:
                if value == "known":
                    return value
                self.stack.pop()
                pop = False
                self.fail(value)
            finally:
                if pop:
                    self.stack.pop()

    def run():
        try:
            Parser().parse("other")
        except ValueError:
            pass
"""


FINALLY_IF_OWN_LINE_AND_CODE_AFTER = """
    def boom(flag):
        if flag:
            raise ValueError("x")

    def pause(info, fail):
        try:
            boom(fail)
        finally:
            if info:
                print("done")

    def later(info, fail):
        try:
            boom(fail)
        finally:
            if info:
                print("done")
        return 1

    def run():
        for f in (pause, later):
            for info, fail in ((0, 1), (1, 1), (0, 0)):
                try:
                    f(info, fail)
                except ValueError:
                    pass
"""


@pytest.mark.parametrize("source", [FINALLY_IF_REREAISED_ON_ITS_LINE,
                                    FINALLY_IF_OWN_LINE_AND_CODE_AFTER],
                         ids=["jinja2_parse_statement", "click_pause_and_code_after"])
def test_a_finally_if_whose_false_jump_reraises_on_its_own_line_is_measured(
    folder: Path, source: str
) -> None:
    """jinja2's ``Parser.parse_statement`` and click's ``termui.pause`` shape: Python 3.11
    compiles a second ``RERAISE``, on the ``if`` line, for the false jump of the exception
    copy, so the tracer records the exit from the ``if`` (32->-15 in the corpus'
    reproduction), not the arc into the body's last line. Such files were refused, and one
    refused file has coverage.py's tracer run the whole suite (click: 1.9x bare instead of
    1.2x)."""
    assert_same(folder, source)
