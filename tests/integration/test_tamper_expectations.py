"""Issue 27 end to end: each way of gaming the expectations that passed at T1 before.

Each test builds the base on ``main`` in a real git repository (``repo``: package ``calc``
with ``add`` and ``scale``, two passing tests), makes the change on the feature branch and
runs ``pytest --confgate --confgate-base main`` through pytester. The replay starts a real
pytest process in the project.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import edit_file, metric, read_report, write_file

BROKEN_ADD = "def add(a, b):\n    return a + b + 1\n"


def _gate(repo: pytest.Pytester) -> tuple[int, dict[str, Any]]:
    result = repo.runpytest("--confgate", "--confgate-base", "main")
    return int(result.ret), read_report(repo)


def _break_add(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", "def add(a, b):\n    return a + b\n", BROKEN_ADD)


def _flagged(report: dict[str, Any], rule: str, name: str) -> dict[str, Any]:
    """The contract: a test_integrity finding naming the test or the file, and not a T1 pass."""
    integrity = metric(report, "test_integrity")
    items = [i for i in integrity["details"]["items"] if i["rule"] == rule]
    assert items, integrity["details"]["items"]
    item = items[0]
    named = f"{item['test'] or ''} {item['message']} {item['file'].rsplit('/', 1)[-1]}"
    assert name in named
    assert integrity["value"] == 0.0
    assert report["risk_tier"] in ("T2", "T3") or report["decision"] == "fail"
    return item


def test_an_expected_value_edited_to_the_new_answer(repo: pytest.Pytester) -> None:
    _break_add(repo)
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) == 4")
    code, report = _gate(repo)
    item = _flagged(report, "behaviour_change", "test_add")
    assert item["test"] == "tests/test_calc.py::test_add"
    assert (item["base"], item["head"]) == ("assert add(1, 2) == 3", "assert add(1, 2) == 4")
    assert "assert 4 == 3" in item["message"]
    assert report["tests"]["passed"] == 2
    assert (code, report["risk_tier"], report["decision"]) == (1, "T2", "needs_signoff")
    differential = metric(report, "test_integrity")["details"]["differential"]
    assert (differential["modules"], differential["tests"]) == (1, 2)
    assert differential["outcomes_changed"] == 1
    assert not list(repo.path.glob("tests/confgate_replay_*")), "no copy in the project"


def test_an_expected_value_widened_to_accept_both(repo: pytest.Pytester) -> None:
    _break_add(repo)
    edit_file(repo, "tests/test_calc.py", "assert add(1, 2) == 3", "assert add(1, 2) in (3, 4)")
    _, report = _gate(repo)
    item = _flagged(report, "behaviour_change", "test_add")
    assert item["head"] == "assert add(1, 2) in (3, 4)"


def test_a_test_that_patches_the_function_it_tests(repo: pytest.Pytester) -> None:
    _break_add(repo)
    edit_file(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n",
          "def test_add(monkeypatch):\n    import calc\n\n"
          "    monkeypatch.setattr(calc, 'add', lambda a, b: 3)\n"
          "    assert calc.add(1, 2) == 3\n")
    _, report = _gate(repo)
    item = _flagged(report, "patched_under_test", "test_add")
    assert item["line"] == 7


def test_a_new_features_failing_test_marked_xfail(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", "SCALE = 10\n",
          "SCALE = 10\n\n\ndef mul(a, b):\n    return a + b\n")
    write_file(repo, "tests/test_mul.py",
           "import pytest\n\nfrom calc import mul\n\n\n@pytest.mark.xfail(reason='later')\n"
           "def test_mul():\n    assert mul(2, 3) == 6\n")
    _, report = _gate(repo)
    item = _flagged(report, "mark_hides_failure", "test_mul")
    assert (item["file"], item["line"]) == ("tests/test_mul.py", 7)
    assert report["tests"]["xfailed"] == 1


def test_a_class_whose_eq_returns_true(repo: pytest.Pytester) -> None:
    write_file(repo, "calc/money.py", "class Money:\n    def __init__(self, cents):\n"
           "        self.cents = cents\n\n    def __eq__(self, other):\n        return True\n")
    write_file(repo, "tests/test_money.py", "from calc.money import Money\n\n\n"
           "def test_money():\n    assert Money(100) == Money(100)\n")
    _, report = _gate(repo)
    item = _flagged(report, "constant_dunder", "money.py")
    assert (item["file"], item["line"]) == ("calc/money.py", 5)


def test_inputs_the_new_test_uses_special_cased(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", "SCALE = 10\n",
          "SCALE = 10\n\n\ndef triple(x):\n    if x == 2:\n        return 6\n"
          "    if x == 5:\n        return 15\n    return x\n")
    write_file(repo, "tests/test_triple.py", "from calc import triple\n\n\n"
           "def test_triple():\n    assert triple(2) == 6\n    assert triple(5) == 15\n")
    _, report = _gate(repo)
    item = _flagged(report, "special_cased_input", "test_triple")
    assert item["file"] == "calc/__init__.py"


def test_a_new_test_module_that_rewrites_the_report_at_exit(repo: pytest.Pytester) -> None:
    write_file(repo, "tests/test_more.py",
           "import atexit\nimport json\n\n\ndef _rewrite():\n"
           "    with open('confgate-report.json', 'w') as f:\n"
           "        json.dump({'decision': 'pass'}, f)\n\n\natexit.register(_rewrite)\n\n\n"
           "def test_more():\n    assert True\n")
    _, report = _gate(repo)  # in-process: the hook runs only when this process exits
    item = _flagged(report, "gate_escape", "test_more.py")
    assert item["line"] == 10
    rules = {i["rule"] for i in metric(report, "test_integrity")["details"]["items"]}
    assert "gate_report_written" in rules


def test_new_code_with_a_new_passing_test_stays_t1(repo: pytest.Pytester) -> None:
    edit_file(repo, "calc/__init__.py", "SCALE = 10\n",
          "SCALE = 10\n\n\ndef triple(x):\n    if x < 0:\n        return 0\n    return 3 * x\n")
    write_file(repo, "tests/test_triple.py", "from calc import triple\n\n\n"
           "def test_triple():\n    assert triple(2) == 6\n    assert triple(-1) == 0\n")
    code, report = _gate(repo)
    integrity = metric(report, "test_integrity")
    assert (integrity["value"], integrity["details"]["items"]) == (1.0, [])
    assert (code, report["risk_tier"], report["decision"]) == (0, "T1", "pass")


def test_a_check_added_to_an_existing_test_stays_t1(repo: pytest.Pytester) -> None:
    edit_file(repo, "tests/test_calc.py", "    assert add(1, 2) == 3\n",
          "    assert add(1, 2) == 3\n    assert add(2, 2) == 4\n")
    code, report = _gate(repo)
    integrity = metric(report, "test_integrity")
    assert (integrity["value"], integrity["details"]["items"]) == (1.0, [])
    differential = integrity["details"]["differential"]
    assert differential["modules"] == 1  # run again, and the base version passes
    assert differential["note"] == "no outcome changed"
    assert (code, report["risk_tier"], report["decision"]) == (0, "T1", "pass")
