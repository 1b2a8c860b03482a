"""The GitHub Action's ranking (``command: rank``), in two steps like the gate (issue 17).

``python -m pytest_confgate.github.action_rank rank`` runs ``confgate rank`` on the refs of
the ``candidates`` input (one per line; any whitespace separates them, git refs cannot hold
it) against ``baseline``, with ``config``, all read from ``env:``. The candidates' code runs
in this step, so it runs as the gate step does (``action_run``): older ranking files
removed first, no token and no runner file-command paths in its environment, its output
unable to issue workflow commands. It writes ``confgate-ranking.json`` and ``.md``.

``... publish`` reads those files (in the same job with ``mode: both``, or from an artifact
in a job where no candidate ran) and writes the job summary, the sticky comment (its own
marker, beside the gate's) and the outputs ``winner``, ``ranking_confidence``,
``auto_accepted``, ``ranking_id`` and ``ranking``. No ranking file fails the step closed:
``auto_accepted=false`` and an empty ``winner``. A summary or output file the runner gave that
cannot be written is one error line and exit 2, never a traceback (as for the gate's publish).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_confgate.github.action_run import run_without_commands, tests_environment
from pytest_confgate.github.publish import (
    COMMENT_LIMIT,
    log_line,
    post_sticky_comment,
    write_runner_files,
)

RANKING = "confgate-ranking.json"
RANKING_MD = "confgate-ranking.md"
RANK_MARKER = "<!-- confgate-ranking -->"
ENV_CANDIDATES = "CONFGATE_CANDIDATES"
ENV_BASELINE = "CONFGATE_BASELINE"
ENV_CONFIG = "CONFGATE_CONFIG"
ENV_COMMENT = "CONFGATE_COMMENT"
MAX_BYTES = 16 * 1024 * 1024
SUMMARY_LIMIT = 1000 * 1024  # GitHub's step summary holds 1 MiB


def candidates(environ: Mapping[str, str]) -> list[str]:
    """The refs of the ``candidates`` input, in order, each once."""
    return list(dict.fromkeys(environ.get(ENV_CANDIDATES, "").split()))


def rank_argv(environ: Mapping[str, str], python: str = sys.executable) -> list[str]:
    """``python -m pytest_confgate.cli rank ... -- REF...``: values never read as options."""
    refs = candidates(environ)
    if not refs:
        raise ValueError("the candidates input names no git ref: give one ref per line")
    argv = [python, "-I", "-m", "pytest_confgate.cli", "rank", "--format", "json", "-o", RANKING,
            f"--markdown={RANKING_MD}"]
    for option, name in (("--baseline", ENV_BASELINE), ("--config", ENV_CONFIG)):
        value = environ.get(name, "").strip()
        if value:
            argv.append(f"{option}={value}")
    return [*argv, "--", *refs]


def rank(environ: Mapping[str, str], folder: Path) -> int:
    """Rank in ``folder``; returns ``confgate rank``'s exit status (2 for a bad input)."""
    try:
        argv = rank_argv(environ)
    except ValueError as exc:
        print(f"confgate: {exc}")
        return 2
    for name in (RANKING, RANKING_MD):
        path = folder / name
        if path.is_symlink() or path.is_file():
            path.unlink()
            print(f"confgate: removed {name} from before this run; only this run's counts")
    status = run_without_commands(argv, tests_environment(environ))
    print(f"confgate: confgate rank exited with status {status}")
    return status


def publish(
    environ: Mapping[str, str], folder: Path, out: TextIO, err: TextIO | None = None
) -> int:
    """Summary, sticky comment and outputs from the ranking files; 1 when there are none,
    2 when the runner's summary or output file cannot be written (one line on ``err``)."""
    ranking, markdown, problem = _read(folder)
    if ranking is None:
        text = f"{RANK_MARKER}\n## confgate rank: no ranking\n\n{problem}\n"
        outputs = {"winner": "", "ranking_confidence": "", "auto_accepted": "false",
                   "ranking_id": "", "ranking": RANKING}
    else:
        text = f"{RANK_MARKER}\n{inert(markdown)}"
        outputs = ranking_outputs(ranking)
    written = write_runner_files(environ, _capped(text, SUMMARY_LIMIT), outputs, err or out)
    if environ.get(ENV_COMMENT, "true") == "true":
        for note in post_sticky_comment(_capped(text, COMMENT_LIMIT), environ, RANK_MARKER):
            print(log_line(note), file=out)
    accepted = outputs["auto_accepted"] == "true"
    print(log_line(f"winner {outputs['winner'] or 'none'}, auto-accepted: {accepted}"), file=out)
    if not written:
        return 2
    return 1 if ranking is None else 0


def ranking_outputs(ranking: Mapping[str, Any]) -> dict[str, str]:
    """The step outputs from ``confgate rank``'s JSON; accepted only with a winner."""
    winner = ranking.get("winner")
    winner = winner if isinstance(winner, str) else ""
    answer = ranking.get("auto_accept")
    accepted = isinstance(answer, dict) and answer.get("accept") is True and bool(winner)
    confidence = ranking.get("confidence")
    shown = ""
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        shown = repr(float(confidence))
    ranking_id = ranking.get("ranking_id")
    return {
        "winner": winner,
        "ranking_confidence": shown,
        "auto_accepted": "true" if accepted else "false",
        "ranking_id": ranking_id if isinstance(ranking_id, str) else "",
        "ranking": RANKING,
    }


def inert(markdown: str) -> str:
    """The ranking's Markdown without HTML or @mentions: the file comes from the job where
    the candidates' code ran, so it is shown, never trusted to be what ``confgate rank``
    wrote (its own text has neither: ``rank.report`` escapes ``<`` in every cell)."""
    return markdown.replace("<", "&lt;").replace("@", "@\u2060")


def _read(folder: Path) -> tuple[dict[str, Any] | None, str, str]:
    """(ranking, its Markdown, "") or (None, "", why not)."""
    try:
        if (folder / RANKING).stat().st_size > MAX_BYTES:
            return None, "", f"{RANKING} is larger than any ranking could be; not published."
        data = json.loads((folder / RANKING).read_text(encoding="utf-8"))
        markdown = (folder / RANKING_MD).read_text(encoding="utf-8")[:MAX_BYTES]
    except FileNotFoundError as exc:
        return None, "", (
            f"{Path(str(exc.filename)).name} was not written: the ranking step failed or did "
            "not run (see its log); nothing from an earlier run is published."
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, "", f"the ranking files cannot be read ({type(exc).__name__})."
    if not isinstance(data, dict):
        return None, "", f"{RANKING} is not a ranking."
    return data, markdown, ""


def _capped(text: str, limit: int) -> str:
    if len(text.encode()) <= limit:
        return text
    cut = text.encode()[: limit - 200].decode("utf-8", "ignore")
    return cut + f"\n\n... cut at {limit} bytes: the whole ranking is in {RANKING_MD}.\n"


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """``rank`` or ``publish`` in the current folder; returns the step's exit status."""
    import os

    env = dict(os.environ if environ is None else environ)
    what = list(sys.argv[1:] if argv is None else argv)
    if what == ["rank"]:
        return rank(env, Path.cwd())
    if what == ["publish"]:
        return publish(env, Path.cwd(), sys.stdout, sys.stderr)
    print("usage: python -m pytest_confgate.github.action_rank rank|publish", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover - the Action's entry point
    sys.exit(main())
