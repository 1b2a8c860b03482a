"""Which test files are a candidate's own: new files only, never edits of the baseline's."""

from __future__ import annotations

from pytest_confgate.rank.trees import change_stats, new_test_files

BASELINE = {
    "shop/pricing.py": "def total(items):\n    return sum(items)\n",
    "tests/test_total.py": "def test_total():\n    assert True\n",
}


def test_edits_to_baseline_test_files_are_not_new_tests() -> None:
    # Cross-testing ran a breaking candidate's rewritten baseline test on everyone else, and
    # marked the correct candidates down for failing it.
    head = {**BASELINE,
            "tests/test_total.py": "def test_total():\n    assert False\n",
            "tests/test_discount.py": "def test_discount():\n    pass\n"}
    assert new_test_files(head, BASELINE) == ["tests/test_discount.py"]
    stats = change_stats(head, BASELINE)
    assert stats.new_test_files == ("tests/test_discount.py",)
    assert stats.edited_test_files == ("tests/test_total.py",)


def test_a_deleted_baseline_test_file_is_an_edit() -> None:
    head = {"shop/pricing.py": BASELINE["shop/pricing.py"]}
    assert change_stats(head, BASELINE).edited_test_files == ("tests/test_total.py",)
