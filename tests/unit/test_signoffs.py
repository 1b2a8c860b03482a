"""Sign-offs from CONFGATE_SIGNOFFS: logins only, approvers only, never the author."""

from __future__ import annotations

from pytest_confgate.collect.signoffs import signoffs_from_env


def test_comma_separated_logins_are_counted_once_each() -> None:
    found = signoffs_from_env({"CONFGATE_SIGNOFFS": " alice, bob ,Alice,,"}, [])
    assert found.approved_by == ["alice", "bob"]
    assert found.source == "CONFGATE_SIGNOFFS"


def test_only_listed_approvers_count_and_the_others_are_named() -> None:
    found = signoffs_from_env({"CONFGATE_SIGNOFFS": "alice,mallory"}, ["Alice", "bob"])
    assert found.approved_by == ["alice"]
    assert found.ignored == [{"login": "mallory", "reason": "not in policy.signoff.approvers"}]


def test_the_author_cannot_sign_off_their_own_change() -> None:
    env = {"CONFGATE_SIGNOFFS": "dev-bot,alice", "CONFGATE_AUTHOR": "Dev-Bot"}
    found = signoffs_from_env(env, [])
    assert found.approved_by == ["alice"]
    assert found.ignored[0]["reason"] == "the author cannot sign off their change"


def test_text_that_is_not_a_login_never_counts() -> None:
    found = signoffs_from_env({"CONFGATE_SIGNOFFS": "$(rm -rf /),::set-output x"}, [])
    assert found.approved_by == []
    assert [i["reason"] for i in found.ignored] == ["not a valid login", "not a valid login"]


def test_no_variable_means_no_signoffs() -> None:
    found = signoffs_from_env({}, ["alice"])
    assert found.approved_by == []
    assert found.source is None


def test_a_bot_counts_only_when_listed_by_its_exact_login() -> None:
    found = signoffs_from_env({"CONFGATE_SIGNOFFS": "ci[bot],alice"}, [])
    assert found.approved_by == ["alice"]
    assert found.ignored[0]["login"] == "ci[bot]"
    assert found.ignored[0]["reason"].startswith("a bot account")
    assert signoffs_from_env({"CONFGATE_SIGNOFFS": "ci[bot]"}, ["ci[bot]"]).approved_by == [
        "ci[bot]"
    ]
