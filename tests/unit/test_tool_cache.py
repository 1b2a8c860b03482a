"""The per-file result cache: nothing read back is trusted, writes never corrupt (SPEC 4, 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_confgate.collect.lint import collect_lint_score, default_ruff_command
from pytest_confgate.collect.security import collect_security_score, default_bandit_command
from pytest_confgate.collect.tool_cache import (
    CacheMiss,
    ToolCache,
    cached_tool_version,
    chunked,
    sha256_file,
)
from pytest_confgate.models import EvalMetric, Finding, MetricStatus

needs_ruff = pytest.mark.skipif(default_ruff_command() is None, reason="ruff is a dependency")
needs_bandit = pytest.mark.skipif(default_bandit_command() is None, reason="bandit is one too")

pytestmark = pytest.mark.usefixtures("outside_a_gate_session")

PYPROJECT = '[tool.ruff]\nline-length = 100\n[tool.ruff.lint]\nselect = ["E", "F"]\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "src" / "clean.py").write_text("VALUE = 1\n")
    (root / "src" / "unused.py").write_text("import os\n")
    (root / "src" / "shell.py").write_text(
        "import subprocess\n\nsubprocess.call('x', shell=True)\n"
    )
    return root


def figures(metric: EvalMetric) -> dict[str, Any]:
    """Everything a report shows except timing and the cache's own counters."""
    details = {k: v for k, v in metric.details.items() if k not in ("duration_s", "cache")}
    return {"value": metric.value, "status": metric.status, "details": details}


def finding(name: str, rule: str = "F401", tool: str = "ruff") -> Finding:
    return Finding(tool=tool, rule=rule, file=name, line=1, message="m")


def document(cache_dir: Path, tool: str = "ruff") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cache_dir / f"{tool}.json").read_text())
    return data


@needs_ruff
@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"\x00\xff not json", id="not-json"),
        pytest.param(b'{"schema": 1, "tool": "ruff", "entries": {', id="truncated"),
        pytest.param(b"[1, 2, 3]", id="a-list"),
        pytest.param(b'{"schema": 99, "tool": "ruff", "entries": {}}', id="another-schema"),
        pytest.param(b'{"schema": 1, "tool": "ruff", "entries": []}', id="entries-not-a-dict"),
    ],
)
def test_a_corrupt_cache_document_is_ignored_and_rebuilt(
    project: Path, tmp_path: Path, garbage: bytes
) -> None:
    cache_dir = tmp_path / "cache"
    uncached = collect_lint_score(project, [Path("src")])
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    (cache_dir / "ruff.json").write_bytes(garbage)

    rebuilt = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    warm = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert rebuilt.details["cache"] == {"hits": 0, "misses": 3}
    assert warm.details["cache"] == {"hits": 3, "misses": 0}
    assert figures(rebuilt) == figures(warm) == figures(uncached)
    assert set(document(cache_dir)["entries"]) == {"src/clean.py", "src/unused.py", "src/shell.py"}


@needs_ruff
@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("not a dict", id="a-string"),
        pytest.param({"findings": []}, id="no-key"),
        pytest.param({"key": "0" * 64, "findings": []}, id="a-stale-key"),
        pytest.param({"findings": [{"bogus": 1}]}, id="findings-of-the-wrong-shape"),
        pytest.param({"findings": "none"}, id="findings-not-a-list"),
        pytest.param({"findings": [finding("src/clean.py").model_dump()]}, id="another-files"),
        pytest.param(
            {"findings": [finding("src/unused.py", tool="bandit").model_dump()]}, id="tool"
        ),
    ],
)
def test_an_entry_of_the_wrong_shape_is_a_miss_and_is_rebuilt(
    project: Path, tmp_path: Path, entry: object
) -> None:
    cache_dir = tmp_path / "cache"
    uncached = collect_lint_score(project, [Path("src")])
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    data = document(cache_dir)
    if isinstance(entry, dict) and "key" not in entry and entry != {"findings": []}:
        entry = {"key": data["entries"]["src/unused.py"]["key"], **entry}
    data["entries"]["src/unused.py"] = entry
    (cache_dir / "ruff.json").write_text(json.dumps(data))

    metric = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert metric.details["cache"] == {"hits": 2, "misses": 1}
    assert figures(metric) == figures(uncached)
    assert document(cache_dir)["entries"]["src/unused.py"]["findings"][0]["rule"] == "F401"


def test_a_tool_version_change_invalidates_every_entry(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    digest = sha256_file(tmp_path / "a.py")
    old = ToolCache(tmp_path / "cache", tmp_path, "ruff", "0.4.0", "config")
    old.store("a.py", digest, [finding("a.py")])
    old.save()

    same = ToolCache(tmp_path / "cache", tmp_path, "ruff", "0.4.0", "config")
    newer = ToolCache(tmp_path / "cache", tmp_path, "ruff", "0.5.0", "config")
    other_config = ToolCache(tmp_path / "cache", tmp_path, "ruff", "0.4.0", "changed")

    assert same.lookup("a.py", digest) == [finding("a.py")]
    assert newer.lookup("a.py", digest) is None
    assert other_config.lookup("a.py", digest) is None
    assert (newer.stats(), other_config.stats()) == ({"hits": 0, "misses": 1},) * 2


def test_a_content_change_or_an_unreadable_file_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    cache = ToolCache(tmp_path / "cache", tmp_path, "ruff", "1", "c")
    cache.store("a.py", sha256_file(tmp_path / "a.py"), [])
    cache.store("gone.py", sha256_file(tmp_path / "gone.py"), [])  # None: never cached
    cache.save()
    (tmp_path / "a.py").write_text("x = 2\n")

    again = ToolCache(tmp_path / "cache", tmp_path, "ruff", "1", "c")

    assert sha256_file(tmp_path / "gone.py") is None
    assert again.lookup("a.py", sha256_file(tmp_path / "a.py")) is None
    assert again.lookup("gone.py", None) is None
    assert set(document(tmp_path / "cache")["entries"]) == {"a.py"}


@needs_ruff
def test_a_ruff_config_change_invalidates_the_cache(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    (project / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["F401"]\n')

    metric = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert metric.details["cache"] == {"hits": 0, "misses": 3}
    assert metric.value == 1.0
    assert figures(metric) == figures(collect_lint_score(project, [Path("src")]))


@needs_ruff
def test_a_ruff_config_in_a_subfolder_or_an_extended_file_invalidates_the_cache(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    shared = tmp_path / "shared.toml"
    shared.write_text('[lint]\nselect = ["E", "F"]\n')
    (project / "src" / "ruff.toml").write_text('extend = "../../shared.toml"\n')
    first = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    shared.write_text('[lint]\nselect = ["E"]\n')

    metric = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert first.value == 3 / 4  # ruff lists its own ruff.toml among the checked files
    assert metric.details["cache"] == {"hits": 0, "misses": 4}
    assert metric.value == 1.0
    assert figures(metric) == figures(collect_lint_score(project, [Path("src")]))


@needs_bandit
def test_a_bandit_config_change_invalidates_the_cache(project: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    collect_security_score(project, [Path("src")], cache_dir=cache_dir)
    (project / "pyproject.toml").write_text(PYPROJECT + '[tool.bandit]\nskips = ["B602"]\n')

    metric = collect_security_score(project, [Path("src")], cache_dir=cache_dir)

    assert metric.details["cache"] == {"hits": 0, "misses": 3}
    assert figures(metric) == figures(collect_security_score(project, [Path("src")]))
    assert "B602" not in {item["rule"] for item in metric.details["items"]}


@needs_ruff
def test_entries_of_deleted_files_are_pruned_when_the_cache_is_rewritten(
    project: Path, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "cache"
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    (project / "src" / "unused.py").unlink()
    (project / "src" / "new.py").write_text("import sys\n")

    metric = collect_lint_score(project, [Path("src")], cache_dir=cache_dir)

    assert set(document(cache_dir)["entries"]) == {"src/clean.py", "src/new.py", "src/shell.py"}
    assert metric.details["files_checked"] == 3
    assert figures(metric) == figures(collect_lint_score(project, [Path("src")]))


_WRITER = """
import sys
from pathlib import Path
from pytest_confgate.collect.tool_cache import ToolCache, sha256_file
from pytest_confgate.models import Finding

root, cache_dir, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for round_ in range(25):
    cache = ToolCache(cache_dir, root, "ruff", "1", "c")
    for i in range(40):
        name = f"f{i}.py"
        finding = Finding(tool="ruff", rule=f"{me}{round_}", file=name, line=i, message="m" * 50)
        cache.store(name, sha256_file(root / name), [finding])
    cache.save()
"""


def test_concurrent_writers_in_two_processes_never_corrupt_the_cache(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"f{i}.py").write_text(f"x = {i}\n")
    cache_dir = tmp_path / "cache"
    argv = [sys.executable, "-c", _WRITER, str(tmp_path), str(cache_dir)]

    writers = [subprocess.Popen([*argv, me]) for me in ("A", "B")]

    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    cache = ToolCache(cache_dir, tmp_path, "ruff", "1", "c")
    for i in range(40):
        (hit,) = cache.lookup(f"f{i}.py", sha256_file(tmp_path / f"f{i}.py")) or []
        assert hit.rule in ("A24", "B24")  # the last round of one of the writers, whole
    assert not list(cache_dir.glob("*.tmp"))


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where the cache folder should be\n")
    cache = ToolCache(tmp_path / "blocker" / "cache", tmp_path, "ruff", "1", "c")

    cache.store("a.py", "digest", [])
    cache.save()

    assert cache.lookup("a.py", "digest") is None


@needs_bandit
def test_security_metric_is_unchanged_when_the_cache_cannot_be_written(
    project: Path, tmp_path: Path
) -> None:
    (tmp_path / "blocker").write_text("")

    metric = collect_security_score(project, [Path("src")], cache_dir=tmp_path / "blocker" / "c")

    assert metric.status is MetricStatus.OK
    assert figures(metric) == figures(collect_security_score(project, [Path("src")]))


def test_explicit_file_lists_are_split_into_argv_sized_batches() -> None:
    names = [f"pkg/module_{i:05}.py" for i in range(20_000)]

    batches = list(chunked(names))

    assert [name for batch in batches for name in batch] == names
    assert len(batches) > 1
    assert all(sum(len(name) + 1 for name in batch) <= 100_001 for batch in batches)


def test_a_tool_version_is_asked_once_until_the_executable_changes(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho tool 1.0\n")
    asked: list[list[str]] = []

    def ask(argv: Sequence[str]) -> str | None:
        asked.append(list(argv))
        return tool.read_text().split()[-1]

    cache = tmp_path / "cache"
    argv = [str(tool), "--version"]
    assert cached_tool_version(argv, cache, ask) == "1.0"
    assert cached_tool_version(argv, cache, ask) == "1.0"
    assert len(asked) == 1  # the second answer came from the cache
    tool.write_text("#!/bin/sh\necho tool 2.0.1\n")  # a reinstall: new size and mtime
    assert cached_tool_version(argv, cache, ask) == "2.0.1"
    assert len(asked) == 2


def test_a_launcher_or_an_unknown_version_is_never_remembered(tmp_path: Path) -> None:
    calls: list[str] = []

    def ask(argv: Sequence[str]) -> str | None:
        calls.append(argv[0])
        return None if argv[0] == sys.executable else "0.9"

    cache = tmp_path / "cache"
    for _ in range(2):
        assert cached_tool_version(["uvx", "ruff", "--version"], cache, ask) == "0.9"
        assert cached_tool_version([sys.executable, "--version"], cache, ask) is None
    assert calls == ["uvx", sys.executable] * 2


def test_an_unreadable_version_cache_is_asked_again_and_rewritten(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "versions.json").write_text("[not a mapping")
    argv = [sys.executable, "--version"]
    assert cached_tool_version(argv, cache, lambda _: "3.11") == "3.11"
    assert cached_tool_version(argv, cache, lambda _: "never asked") == "3.11"


@needs_ruff
@needs_bandit
def test_answering_from_the_cache_alone_equals_a_warm_run_and_refuses_any_miss(
    project: Path, tmp_path: Path
) -> None:
    """A warm gate run answers lint and security in the pytest process (issue 26: the helper
    process cost more than the cached work); it must say the same, and never guess."""
    cache_dir = tmp_path / "cache"
    with pytest.raises(CacheMiss):
        collect_lint_score(project, [Path("src")], cache_dir=cache_dir, cached_only=True)
    with pytest.raises(CacheMiss):
        collect_security_score(project, [Path("src")], cache_dir=cache_dir, cached_only=True)
    assert not (cache_dir / "ruff.json").exists()  # the refusal checked nothing
    assert not (cache_dir / "bandit.json").exists()
    collect_lint_score(project, [Path("src")], cache_dir=cache_dir)
    collect_security_score(project, [Path("src")], cache_dir=cache_dir)

    lint = collect_lint_score(project, [Path("src")], cache_dir=cache_dir, cached_only=True)
    security = collect_security_score(
        project, [Path("src")], cache_dir=cache_dir, cached_only=True
    )

    assert figures(lint) == figures(collect_lint_score(project, [Path("src")], cache_dir=cache_dir))
    assert figures(security) == figures(collect_security_score(project, [Path("src")]))
    assert (lint.details["cache"], security.details["cache"]) == (
        {"hits": 3, "misses": 0},
        {"hits": 3, "misses": 0},
    )
    (project / "src" / "clean.py").write_text("import sys\n")
    with pytest.raises(CacheMiss):
        collect_lint_score(project, [Path("src")], cache_dir=cache_dir, cached_only=True)
    with pytest.raises(CacheMiss):
        collect_security_score(project, [Path("src")], cache_dir=cache_dir, cached_only=True)


@needs_bandit
def test_answering_from_the_cache_alone_refuses_a_bandit_command_it_would_have_to_ask(
    project: Path, tmp_path: Path
) -> None:
    """A custom bandit command's version takes a process: the helper asks it, not pytest."""
    cache_dir = tmp_path / "cache"
    command = list(default_bandit_command() or [])
    collect_security_score(project, [Path("src")], command=command, cache_dir=cache_dir)
    with pytest.raises(CacheMiss):
        collect_security_score(
            project, [Path("src")], command=command, cache_dir=cache_dir, cached_only=True
        )
