"""README.md and docs/*.md stay true (issue 30): every relative link reaches a file (and its
heading, for ``#anchor``), and every command the README shows is one our tools accept: the
``confgate`` subcommands and flags per its own parser, pytest's options per ``pytest --help``,
pip's extras per ``pyproject.toml``. The test command CI runs is shown exactly."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from pytest_confgate.cli import _parser
from pytest_confgate.config.textfile import tomllib

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
TEST_COMMAND = "python -m pytest -n 2 --dist worksteal --confgate"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_SPAN = re.compile(r"`([^`\n]+)`")
_HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.MULTILINE)


def _outside_code(text: str) -> str:
    return _BLOCK.sub("", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_outside_code(page.read_text(encoding="utf-8")))}


def _relative_links() -> list[tuple[str, Path, str]]:
    found = []
    for page in PAGES:
        for target in _LINK.findall(_outside_code(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            found.append((f"{page.relative_to(ROOT)} -> {target}", page, target))
    return found


@pytest.mark.parametrize(
    ("where", "page", "target"), _relative_links(), ids=[w for w, _, _ in _relative_links()]
)
def test_every_relative_link_resolves(where: str, page: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{where}: {linked} does not exist"
    assert linked.is_relative_to(ROOT), f"{where}: points outside the repository"
    if anchor:
        assert linked.suffix == ".md", f"{where}: an anchor into a file that is not Markdown"
        assert anchor in _anchors(linked), f"{where}: no heading makes #{anchor}"


def _shown_commands() -> list[tuple[str, bool]]:
    """The README's shell lines (```bash blocks: whole commands) and inline ``confgate ...``
    or ``pytest ...`` spans (prose may name a command without its arguments)."""
    text = README.read_text(encoding="utf-8")
    commands = []
    for language, body in _BLOCK.findall(text):
        if language in ("bash", "sh", "console"):
            for line in body.splitlines():
                commands += [(part.strip(), True) for part in line.split("&&") if part.strip()]
    for span in _SPAN.findall(_outside_code(text)):
        if re.match(r"(confgate|pytest|python -m pytest)( |$)", span):
            commands.append((span, False))
    return commands


@cache
def _pytest_help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "xdist"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return done.stdout


def _check_confgate(argv: list[str], whole: bool) -> None:
    if whole:
        try:
            _parser().parse_args(argv)
        except SystemExit as exc:  # argparse: --version and --help exit 0, a bad command 2
            refused = exc.code
        else:
            refused = 0
        assert refused == 0, f"confgate {shlex.join(argv)}: the CLI parser refuses it"
        return
    parser = _parser()  # a named command: each word a subcommand, each flag one it takes
    for word in argv:
        if word.startswith("-"):
            assert word.split("=", 1)[0] in parser._option_string_actions, (
                f"confgate {shlex.join(argv)}: no option {word}"
            )
        elif parser._subparsers is not None:
            commands = parser._subparsers._group_actions[0].choices
            assert word in commands, f"confgate {shlex.join(argv)}: no command {word}"
            parser = commands[word]


def _check_pytest(argv: list[str]) -> None:
    for word in argv:
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            assert re.search(rf"(^|[\s,]){re.escape(option)}([\s,=]|$)", _pytest_help(), re.M), (
                f"pytest has no option {option}"
            )


def _check_pip(argv: list[str]) -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["project"]["optional-dependencies"])
    for word in argv[argv.index("install") + 1 :]:
        if word.startswith("-"):
            continue
        named = re.fullmatch(r"(?:pytest-confgate|\.|\./pytest-confgate)(?:\[([\w,]+)\])?"
                             r"(?: @ git\+https://\S+\.git(?:@\S+)?)?", word)
        if named is None:
            continue  # another package, or a path to the user's own project
        for extra in filter(None, (named.group(1) or "").split(",")):
            assert extra in extras, f"{word}: pyproject.toml has no extra {extra!r}"
        if word.startswith("pytest-confgate") and "@" not in word:
            pytest.fail(f"{word}: pytest-confgate is not on PyPI; install from a clone or git URL")


@pytest.mark.parametrize(("command", "whole"), _shown_commands(),
                         ids=[c for c, _ in _shown_commands()])
def test_every_command_the_readme_shows_is_valid(command: str, whole: bool) -> None:
    argv = shlex.split(command, comments=True)
    for redirect in (">", ">>", "|", "2>&1"):  # the shell's, not the command's
        argv = argv[: argv.index(redirect)] if redirect in argv else argv
    if argv[0] == "confgate":
        _check_confgate(argv[1:], whole)
    elif argv[:3] == ["python", "-m", "pytest"] or argv[0] == "pytest":
        _check_pytest(argv[3:] if argv[0] == "python" else argv[1:])
    elif argv[:3] == ["python", "-m", "pip"]:
        _check_pip(argv)
    elif argv[:3] == ["python", "-m", "venv"]:
        assert argv[3:] == [".venv"], f"{command}: the README makes .venv"
    elif argv[0] == ".":
        assert argv[1:] == [".venv/bin/activate"], f"{command}: activates another folder"
    else:
        assert argv[0] in {"git", "cd", "echo"}, f"{command}: a command this test cannot check"


def test_the_readme_shows_the_test_command_ci_runs() -> None:
    bash = [body for language, body in _BLOCK.findall(README.read_text(encoding="utf-8"))
            if language == "bash"]
    assert any(TEST_COMMAND in body.splitlines() for body in bash)
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_the_readme_is_a_newcomers_page() -> None:
    """The reference lives in docs/; the README stays short and says how to install."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "git+https://" in text
    assert "not on PyPI" in text
    assert "after pytest's own summary" not in text  # it comes before pytest's final line


def _help_options(help_text: str) -> list[str]:
    """``--confgate...`` options as ``pytest --help`` spells them (``--opt=METAVAR``)."""
    group = help_text.split("quality gate (pytest-confgate):", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  (--confgate[\w=.-]*[^\s,]*)", group, re.M)


def _documented_options() -> dict[str, str]:
    """The pytest options table of docs/configuration.md: option -> its meaning."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("## pytest options", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(--confgate[^`]*)` \| (.*) \|$", table, re.M))


def test_the_pytest_option_table_and_pytest_help_agree() -> None:
    """Same options, same spelling (the ``=`` form pytest shows, the only one path options
    accept), and the base's defaults in the order the gate tries them."""
    documented = _documented_options()
    assert _help_options(_pytest_help()) == list(documented)
    group = " ".join(_pytest_help().split("quality gate (pytest-confgate):", 1)[1].split())
    base_help = group.split("--confgate-base=REF", 1)[1].split("--confgate-task", 1)[0]
    for text in (base_help, documented["--confgate-base=REF"].replace("`", "")):
        words = ("pull_request.base.sha", "else GITHUB_BASE_REF", "else base_ref in the config")
        order = [text.find(word) for word in words]
        assert -1 not in order, text
        assert order == sorted(order), text


def _cli_options() -> list[tuple[str, tuple[str, ...]]]:
    import argparse

    found: list[tuple[str, tuple[str, ...]]] = []

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{words} {name}")
            elif action.option_strings and action.dest not in ("help", "version"):
                found.append((words, tuple(action.option_strings)))

    walk(_parser(), "confgate")
    return found


@pytest.mark.parametrize(("command", "flags"), _cli_options(),
                         ids=[f"{c} {f[-1]}" for c, f in _cli_options()])
def test_every_confgate_option_is_documented(command: str, flags: tuple[str, ...]) -> None:
    """--annotations-cap, --comment/--no-comment and rank --task were in no page."""
    pages = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    assert any(re.search(rf"{re.escape(flag)}(?![\w-])", pages) for flag in flags), (
        f"{command} {'/'.join(flags)} is in no page of README.md or docs/"
    )


def test_rank_feedback_help_is_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    """It printed the whole ``rank`` help; ``schema`` printed no description at all."""
    from pytest_confgate.cli import main

    assert main(["rank", "feedback", "--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: confgate rank feedback RANKING_ID")
    assert "--baseline" not in text
    assert "--accepted-winner" in text
    assert main(["schema", "--help"]) == 0
    assert "JSON Schema" in capsys.readouterr().out.split("options:")[0]


OUTSIDE = re.compile(
    r"\bSPEC(?:\.md|\s+\d)|\bSTYLE\.md|\bseeds? (?:\d{3}|F\d|stage|policy|agent-trust)"
    r"|\bseeds?'s?\b|\(seeds?(?: \d|: )|\bthe seeds?\b|\bseeds'",
    re.IGNORECASE,
)
"""Names of documents that are not in the repository: a reader cannot follow them."""
SHIPPED = [
    *sorted((ROOT / "pytest_confgate").rglob("*.py")),
    ROOT / "pytest_confgate" / "report" / "schema.json",
    *PAGES, ROOT / "ARCHITECTURE.md", ROOT / "SECURITY.md", ROOT / "action.yml",
    ROOT / "pyproject.toml", *sorted((ROOT / "examples").rglob("*.yml")),
    *sorted((ROOT / "benchmarks").glob("*.py")),
]


def _all_help() -> str:
    import argparse

    texts = [_pytest_help()]

    def walk(parser: argparse.ArgumentParser) -> None:
        texts.append(parser.format_help())
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)

    walk(_parser())
    return "\n".join(texts)


def test_no_document_outside_the_repository_is_cited() -> None:
    """Code, docs and help cited "SPEC N", seeds and STYLE.md, which nobody else can read."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
             for path in SHIPPED
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if OUTSIDE.search(line)]
    found += [f"--help: {line.strip()}" for line in _all_help().splitlines()
              if OUTSIDE.search(line)]
    assert found == []
