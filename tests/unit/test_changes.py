"""Changed files and lines from real git repositories made in tmp_path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_confgate.collect.changes import (
    _added_lines,
    _unquote,
    collect_changes,
    github_base_ref,
    read_at_ref,
)
from pytest_confgate.collect.symlinks import link_aliases
from pytest_confgate.exceptions import EvidenceError
from pytest_confgate.models import FileChange


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """An identity for commits and no user or system git config: never the global one."""
    config = tmp_path_factory.getbasetemp() / "gitconfig"
    config.touch()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Confgate Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GITHUB_BASE_REF"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def numbered(count: int, prefix: str = "x") -> str:
    return "".join(f"{prefix}{i} = {i}\n" for i in range(1, count + 1))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main, then a feature branch with every kind of change, then main moves on."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", "*.log\n")
    write(root, "keep.py", numbered(10))
    write(root, "old_name.py", numbered(20))
    write(root, "gone.py", numbered(3, "g"))
    write(root, "image.bin", b"\x89PNG\0\0\1")
    write(root, 'q"t.py', "a = 1\n")
    write(root, "ü.py", "a = 1\n")
    write(root, "nonl.py", "a = 1\nb = 2")
    write(root, "confgate.yml", "gate: {risk_tier: T2}\n")
    commit(root, "base")
    git(root, "checkout", "-q", "-b", "feature")
    git(root, "mv", "old_name.py", "new_name.py")
    text = numbered(20).replace("x5 = 5", "x5 = 50") + "++ b/evil.py\n"
    write(root, "new_name.py", text)
    git(root, "rm", "-q", "gone.py")
    write(root, "image.bin", b"\x89PNG\0\0\2")
    write(root, "dir with space/ä ö.py", numbered(3))
    write(root, 'q"t.py', "a = 1\nb = 2\n")
    write(root, "ü.py", "a = 2\n")
    write(root, "nonl.py", "a = 1\nb = 2\nc = 3")
    write(root, "confgate.yml", "gate: {risk_tier: T0}\n")
    os.symlink("keep.py", root / "alias.py")
    commit(root, "feature")
    git(root, "checkout", "-q", "main")
    write(root, "main_only.py", "m = 1\n")
    commit(root, "main moves on")
    git(root, "checkout", "-q", "feature")
    write(root, "keep.py", numbered(10).replace("x3 = 3", "x3 = 30"))  # unstaged
    write(root, "staged.py", "s = 1\ns = 2\n")
    git(root, "add", "staged.py")
    write(root, "untracked.py", "u = 1\nu = 2\n")
    write(root, "debug.log", "ignored\n")
    return root


def test_committed_staged_unstaged_and_untracked_changes_since_the_merge_base(
    repo: Path,
) -> None:
    changes = collect_changes(repo, "main")
    assert changes.base_ref == "main"
    assert changes.merge_base == git(repo, "merge-base", "main", "HEAD").strip()
    assert {c.path: c for c in changes.files} == {
        c.path: c
        for c in [
            FileChange("alias.py", None, "added", False, frozenset({1}), "keep.py"),
            FileChange("confgate.yml", None, "modified", False, frozenset({1})),
            FileChange("dir with space/ä ö.py", None, "added", False, frozenset({1, 2, 3})),
            FileChange("gone.py", None, "deleted", False, frozenset()),
            FileChange("image.bin", None, "modified", True, frozenset()),
            FileChange("keep.py", None, "modified", False, frozenset({3})),
            FileChange("new_name.py", "old_name.py", "renamed", False, frozenset({5, 21})),
            FileChange("nonl.py", None, "modified", False, frozenset({2, 3})),
            FileChange('q"t.py', None, "modified", False, frozenset({2})),
            FileChange("staged.py", None, "added", False, frozenset({1, 2})),
            FileChange("untracked.py", None, "added", False, frozenset({1, 2})),
            FileChange("ü.py", None, "modified", False, frozenset({1})),
        ]
    }
    assert [c.path for c in changes.files] == sorted(c.path for c in changes.files)


def test_paths_name_both_sides_of_a_rename_and_symlink_targets(repo: Path) -> None:
    changes = collect_changes(repo, "main")
    paths = changes.paths()
    assert {"new_name.py", "old_name.py", "gone.py", "alias.py", "keep.py"} <= paths
    assert "main_only.py" not in paths
    assert "debug.log" not in paths
    assert changes.lines("new_name.py") == frozenset({5, 21})
    assert changes.lines("gone.py") == frozenset()
    assert changes.lines("old_name.py") == frozenset()


def linked(tmp_path: Path) -> Path:
    """main: ``lib/impl.py`` reached through a file link, a folder link and a chain of both."""
    root = tmp_path / "linked"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "lib/impl.py", "x = 1\n")
    write(root, "lib/other.py", "y = 1\n")
    for link, target in [("auth/policy.py", "../lib/impl.py"), ("auth/lib", "../lib"),
                         ("api/chain.py", "../auth/policy.py"), ("out.py", "/etc/passwd"),
                         ("up.py", "../outside.py")]:
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / link)
    commit(root, "links")
    git(root, "checkout", "-q", "-b", "feature")
    return root


def test_a_changed_target_counts_under_every_link_that_reaches_it(tmp_path: Path) -> None:
    root = linked(tmp_path)
    write(root, "lib/impl.py", "x = 1\nx = 2\n")
    commit(root, "edit the target only")

    changes = collect_changes(root, "main")

    by_path = {c.path: c for c in changes.files}
    assert set(by_path) == {"lib/impl.py", "auth/policy.py", "auth/lib/impl.py", "api/chain.py"}
    assert by_path["auth/policy.py"] == FileChange(
        "auth/policy.py", None, "modified", False, frozenset({2}), "lib/impl.py"
    )
    assert by_path["api/chain.py"].symlink_target == "auth/policy.py"
    assert changes.lines("auth/lib/impl.py") == frozenset({2})


def test_a_link_of_the_base_tree_counts_after_the_change_drops_it(tmp_path: Path) -> None:
    root = linked(tmp_path)
    os.unlink(root / "auth" / "lib")
    write(root, "lib/other.py", "y = 2\n")
    commit(root, "drop the folder link, edit below it")

    paths = collect_changes(root, "main").paths()

    assert {"auth/lib", "lib/other.py", "auth/lib/other.py"} <= paths


def test_a_link_added_by_the_change_to_a_changed_file_is_seen_through(tmp_path: Path) -> None:
    root = linked(tmp_path)
    os.symlink("../lib/other.py", root / "auth" / "new.py")
    write(root, "lib/other.py", "y = 2\n")

    paths = collect_changes(root, "main").paths()

    assert {"auth/new.py", "lib/other.py", "auth/lib/other.py"} <= paths
    assert "auth/policy.py" not in paths


def _ancestor_link(tmp_path: Path, *, on_base: bool) -> Path:
    """``src/pkg/sub -> ../pkg``: a folder link to its own parent, on main or in the change."""
    root = tmp_path / "cyclic"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "src/pkg/mod.py", "x = 1\n")
    if on_base:
        os.symlink("../pkg", root / "src/pkg/sub")
    commit(root, "base")
    git(root, "checkout", "-q", "-b", "feature")
    if not on_base:
        os.symlink("../pkg", root / "src/pkg/sub")
    write(root, "src/pkg/mod.py", "x = 1\ny = 2\n")
    commit(root, "change")
    return root


@pytest.mark.parametrize("on_base", [True, False], ids=["link-on-base", "link-in-change"])
def test_a_link_to_an_ancestor_folder_names_each_file_once_below_it(
    tmp_path: Path, on_base: bool
) -> None:
    """Used to walk ``sub/sub/sub/...`` forever, memory growing, before any test ran."""
    root = _ancestor_link(tmp_path, on_base=on_base)

    changes = collect_changes(root, "main")

    assert changes.lines("src/pkg/sub/mod.py") == frozenset({2})
    assert not any("sub/sub" in path for path in changes.paths())


def test_folder_links_into_each_other_end_and_too_many_paths_is_a_named_error() -> None:
    changed = [FileChange("a/f.py", None, "modified", False, frozenset({1}))]
    mutual = {("a/to_b", "b"), ("b/to_a", "a")}

    paths = {c.path for c in link_aliases(changed, mutual)}

    assert paths == {"b/to_a/f.py", "a/to_b/to_a/f.py"}
    many = {(f"d{i}/up", "") for i in range(3)}  # the top folder: names nothing
    assert link_aliases(changed, many) == []
    crossing = {(f"a/l{i}", "a") for i in range(8)}
    with pytest.raises(EvidenceError, match=r"more than 10000 paths .*via 'a/l\d'"):
        link_aliases(changed, crossing)


def test_a_root_below_the_top_level_gets_paths_relative_to_itself(repo: Path) -> None:
    changes = collect_changes(repo / "dir with space", "main")
    assert changes.root_prefix == "dir with space"
    assert "dir with space/ä ö.py" in changes.paths()
    rooted = changes.rooted()
    assert [c.path for c in rooted.files] == ["ä ö.py"]
    assert rooted.lines("ä ö.py") == frozenset({1, 2, 3})


def test_a_file_renamed_out_of_the_root_is_a_deletion_there(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    write(root, "svc/confgate.yml", "a: 1\n")
    write(root, "top.py", "t = 1\n")
    git(root, "init", "-q", "-b", "main")
    commit(root, "base")
    git(root, "checkout", "-q", "-b", "feature")
    git(root, "mv", "svc/confgate.yml", "elsewhere.yml")
    git(root, "mv", "top.py", "svc/top.py")
    changes = collect_changes(root / "svc", "main")
    assert changes.files == (
        FileChange("elsewhere.yml", "svc/confgate.yml", "renamed", False, frozenset()),
        FileChange("svc/top.py", "top.py", "renamed", False, frozenset()),
    )
    assert changes.rooted().files == (
        FileChange("confgate.yml", None, "deleted"),
        FileChange("top.py", None, "added"),
    )


def test_an_unknown_base_ref_says_what_to_fetch(repo: Path) -> None:
    with pytest.raises(EvidenceError, match=r"fetch it \(`git fetch origin nope`\)"):
        collect_changes(repo, "origin/nope")
    with pytest.raises(EvidenceError, match=r"\(`git fetch origin team/nope`\)"):
        collect_changes(repo, "team/nope")
    with pytest.raises(EvidenceError, match="base ref '-p' is not known"):
        collect_changes(repo, "-p")


def test_outside_a_repository_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(EvidenceError, match="is not inside a git repository"):
        collect_changes(plain, "main")


def test_a_missing_git_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EvidenceError, match="git is not installed or not on PATH"):
        collect_changes(tmp_path, "main")


def test_a_shallow_clone_without_the_merge_base_asks_for_full_history(
    repo: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "shallow"
    url = repo.as_uri()
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        "-b",
        "feature",
        url,
        "shallow",
    )
    with pytest.raises(EvidenceError, match=r"shallow clone: use `fetch-depth: 0`"):
        collect_changes(clone, "origin/main")


def test_a_single_branch_shallow_clone_says_to_fetch_the_base(repo: Path, tmp_path: Path) -> None:
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", "feature", repo.as_uri(), "single")
    with pytest.raises(EvidenceError, match=r"git fetch origin main.*fetch-depth: 0"):
        collect_changes(tmp_path / "single", "origin/main")


def test_histories_without_a_merge_base_are_an_error(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "island")
    git(repo, "commit", "-q", "-m", "island")
    with pytest.raises(EvidenceError, match="share no history"):
        collect_changes(repo, "main")


def test_read_at_ref_gives_the_trusted_text_from_the_base(repo: Path) -> None:
    assert read_at_ref(repo, "main", "confgate.yml") == "gate: {risk_tier: T2}\n"
    assert read_at_ref(repo, "main", str(repo / "confgate.yml")) == "gate: {risk_tier: T2}\n"
    assert read_at_ref(repo, "main", "new_name.py") is None
    assert read_at_ref(repo, "main", "dir with space") is None
    assert read_at_ref(repo / "dir with space", "main", "../confgate.yml") is not None
    with pytest.raises(EvidenceError, match="is not known to git"):
        read_at_ref(repo, "origin/nope", "confgate.yml")
    with pytest.raises(EvidenceError, match="outside the git repository"):
        read_at_ref(repo, "main", "../elsewhere.yml")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [({"GITHUB_BASE_REF": " rel "}, "origin/rel"), ({"GITHUB_BASE_REF": ""}, None), ({}, None)],
    ids=["actions", "push-event", "nothing"],
)
def test_github_base_ref_without_a_repository(
    environ: dict[str, str], expected: str | None
) -> None:
    assert github_base_ref(environ) == expected


def test_github_base_ref_prefers_the_remote_branch_then_the_local_one(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    environ = {"GITHUB_BASE_REF": "main"}
    assert github_base_ref(environ, root=repo) == "main"  # no remote here
    git(tmp_path, "clone", "-q", repo.as_uri(), "full")
    assert github_base_ref(environ, root=tmp_path / "full") == "origin/main"
    gone = {"GITHUB_BASE_REF": "gone"}
    assert github_base_ref(gone, root=repo) == "origin/gone"
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    (tmp_path / "plain").mkdir()
    assert github_base_ref(environ, root=tmp_path / "plain") == "origin/main"


@pytest.mark.parametrize(
    ("quoted", "plain"),
    [
        ('"b/\\303\\244.py"', "b/ä.py"),
        ('"b/q\\"t.py"', 'b/q"t.py'),
        ('"b/a\\tb\\\\c"', "b/a\tb\\c"),
        ("b/plain.py", "b/plain.py"),
    ],
)
def test_git_quoting_is_undone(quoted: str, plain: str) -> None:
    assert _unquote(quoted) == plain


def test_added_lines_come_from_hunk_headers_not_from_lookalike_content() -> None:
    patch = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -1,0 +2,2 @@\n+++ b/evil.py\n+@@ -1 +9,9 @@\n"
        "@@ -5 +7 @@ ctx\n-old\n\\ No newline at end of file\n+new\n"
        "diff --git a/d.py b/d.py\n--- a/d.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    )
    assert _added_lines(patch) == {"x.py": frozenset({2, 3, 7})}


@given(st.text(alphabet='+-@ ,0123456789\n\\"ab/', max_size=200))
def test_the_patch_parser_never_crashes(patch: str) -> None:
    assert isinstance(_added_lines(patch), dict)


def _one_commit_on_a_branch(tmp_path: Path) -> Path:
    root = tmp_path / "ci"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", "*.log\n")
    write(root, "src/x/__init__.py", numbered(3))
    commit(root, "base")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, "src/x/__init__.py", numbered(4))
    commit(root, "one file")
    return root


def test_in_ci_the_change_is_what_was_committed(tmp_path: Path) -> None:
    """`pip install -e .` wrote src/x.egg-info/ and a one-file PR reported 6 changed files."""
    root = _one_commit_on_a_branch(tmp_path)
    write(root, "src/x.egg-info/PKG-INFO", "Name: x\n")
    write(root, "src/x.egg-info/SOURCES.txt", "src/x/__init__.py\n")
    write(root, "build.log", "ignored\n")
    write(root, "src/x/__init__.py", numbered(9))  # a build step that rewrote a tracked file
    committed = collect_changes(root, "main", committed_only=True)
    assert [(c.path, c.added_lines) for c in committed.files] == [
        ("src/x/__init__.py", frozenset({4}))
    ]
    local = collect_changes(root, "main")
    assert {c.path for c in local.files} == {
        "src/x/__init__.py", "src/x.egg-info/PKG-INFO", "src/x.egg-info/SOURCES.txt"
    }
    assert local.get("src/x/__init__.py").added_lines == frozenset(range(4, 10))  # type: ignore[union-attr]


def test_locally_the_gates_own_reports_never_count(tmp_path: Path) -> None:
    root = _one_commit_on_a_branch(tmp_path)
    for name in ("confgate-report.json", "out/confgate-report.html", "confgate.sarif",
                 "confgate-report.md", "notes.md"):
        write(root, name, "{}\n")
    assert {c.path for c in collect_changes(root, "main").files} == {
        "src/x/__init__.py", "notes.md"
    }


@pytest.mark.parametrize(("environ", "egg_info_counts"), [({"CI": "true"}, False), ({}, True)])
def test_the_gate_asks_for_the_committed_change_in_ci(
    tmp_path: Path, environ: dict[str, str], egg_info_counts: bool
) -> None:
    from pytest_confgate.config import ConfgateConfig
    from pytest_confgate.gate.anchor import Requested
    from pytest_confgate.gate.change import load_changes

    root = _one_commit_on_a_branch(tmp_path)
    write(root, "src/x.egg-info/PKG-INFO", "Name: x\n")
    requested = Requested(base="main", base_on_command_line=True)
    view = load_changes(root, ConfgateConfig(), requested, environ)
    assert view.changes is not None
    assert ("src/x.egg-info/PKG-INFO" in view.top_paths) is egg_info_counts


def test_a_file_name_that_is_not_utf8_names_the_file_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    tracked, untracked = os.fsdecode(b"bad\xffname.py"), os.fsdecode(b"new\xfe.py")
    write(root, tracked, "a = 1\n")
    commit(root, "base")
    git(root, "checkout", "-q", "-b", "feature")
    write(root, tracked, "a = 1\nb = 2\n")
    commit(root, "change")
    write(root, untracked, "c = 3\n")

    changes = collect_changes(root, "main")

    assert sorted(changes.paths()) == sorted([tracked, untracked])
    assert all((root / path).is_file() for path in changes.paths())  # the real names
    assert changes.lines(tracked) == frozenset({2})
    assert read_at_ref(root, "main", tracked) == "a = 1\n"
