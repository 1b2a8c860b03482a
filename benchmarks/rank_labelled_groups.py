"""Labelled groups (issues 15 and 28), as a table: who is first, the winner, auto-acceptance.

    python benchmarks/rank_labelled_groups.py [--groups durations|tactics] [--alone]
                                              [--source DIR]

``--groups tactics`` ranks issue 28's groups (``tests/integration/rank_tactics.py``: the
``numerals`` project, one group per gaming tactic) instead of issue 15's.

Builds the task and candidate branches of ``tests/integration/rank_groups.py`` in a temporary
git repository, decides each candidate's correctness with the held-out tests (which the
ranker never sees), then ranks every group through the real command line
(``confgate rank ... --baseline main --format json --jobs 2``, auto-acceptance on) and prints
one row per group and the totals issue 15's "Done when" asks for: how often a correct
candidate is first, and whether a must-never-accept candidate is ever first, the winner or
auto-accepted. ``--alone`` also ranks each must-never-accept candidate on its own.
``--source DIR`` runs the ``pytest_confgate`` of another checkout (``DIR`` first on
``PYTHONPATH``), to compare with the ranker before a change. The times are wall times of one
run each, on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integration"))

import rank_groups  # the labelled groups of the test suite, found through the line above
import rank_tactics

CANDIDATES = rank_groups.CANDIDATES
GROUPS = rank_groups.GROUPS

CONFIG = "rank:\n  auto_accept:\n    enabled: true\n"
STRICT = {"clean-vs-convoluted": "    min_confidence: 0.99\n"}
"""The same settings as the test suite's groups."""


def main() -> int:
    global CANDIDATES, GROUPS
    args = _arguments()
    labelled = rank_tactics if args.groups == "tactics" else rank_groups
    CANDIDATES, GROUPS = labelled.CANDIDATES, labelled.GROUPS
    with tempfile.TemporaryDirectory(prefix="confgate-rank-groups-") as scratch:
        work = Path(scratch)
        repo = work / "task"
        labelled.build_groups(repo)
        verdicts = labelled.held_out_verdicts(repo, work / "held-out")
        env = _environment(args.source)
        rows, started = [], time.monotonic()
        for group, members in GROUPS.items():
            rows.append(_rank_group(repo, work, group, members, verdicts, env))
        total = time.monotonic() - started
        _print_groups(rows, total)
        if args.alone:
            _print_alone(repo, work, verdicts, env)
        return 1 if any(row["bad_first"] or row["bad_accepted"] for row in rows) else 0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", choices=("durations", "tactics"), default="durations",
                        help="issue 15's groups (durations) or issue 28's (tactics)")
    parser.add_argument("--alone", action="store_true",
                        help="also rank each must-never-accept candidate on its own")
    parser.add_argument("--source", type=Path,
                        help="a checkout whose pytest_confgate to run instead of this one")
    return parser.parse_args()


def _environment(source: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COV"))}
    if source is not None:
        env["PYTHONPATH"] = str(source.resolve())
    return env


def _never(member: str, verdicts: dict[str, str]) -> bool:
    return CANDIDATES[member].must_never_accept or verdicts[member] != "correct"


def _run(repo: Path, work: Path, name: str, members: tuple[str, ...], extra: str,
         env: dict[str, str]) -> tuple[dict[str, Any], float]:
    config, out = work / f"{name}.yml", work / f"{name}.json"
    config.write_text(CONFIG + extra)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from pytest_confgate.cli import console_main; console_main()",
         "rank", *members, "--baseline", "main", "--jobs", "2", "--format", "json",
         "-o", str(out), "--config", str(config)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"confgate rank {' '.join(members)} exited {done.returncode}:\n"
                         f"{done.stderr}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result, time.monotonic() - started


def _rank_group(repo: Path, work: Path, group: str, members: tuple[str, ...],
                verdicts: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    result, seconds = _run(repo, work, group, members, STRICT.get(group, ""), env)
    solutions = result["solutions"]
    first = [s for s in solutions if s["rank"] == 1 and not s.get("blocked", False)]
    correct = [m for m in members if not _never(m, verdicts)]
    accept = result["auto_accept"]
    return {
        "group": group,
        "members": ", ".join(f"**{m}**" if m in correct else m for m in members),
        "first": ", ".join(f"{s['solution_id']} {s['score']:.2f}" for s in first) or "(none)",
        "winner": result["winner"] or "none",
        "accept": "yes" if accept["accept"] else f"no: {accept['reason']}",
        "seconds": seconds,
        "has_correct": bool(correct),
        "correct_first": bool(first) and all(s["solution_id"] in correct for s in first),
        "bad_first": any(_never(s["solution_id"], verdicts) for s in first) and bool(correct),
        "bad_accepted": accept["accept"] and _never(result["winner"], verdicts),
        "bad_winner": result["winner"] is not None and _never(result["winner"], verdicts),
    }


def _print_groups(rows: list[dict[str, Any]], total: float) -> None:
    print("| group | candidates (bold: correct) | first | winner | auto-accept | time |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['group']} | {row['members']} | {row['first']} | {row['winner']} | "
              f"{row['accept']} | {row['seconds']:.1f} s |")
    with_correct = [row for row in rows if row["has_correct"]]
    print()
    print(f"groups: {len(rows)}; a correct candidate first in "
          f"{sum(row['correct_first'] for row in with_correct)} of the {len(with_correct)} "
          "that have one")
    print(f"must-never-accept at rank 1 beside a correct candidate: "
          f"{sum(row['bad_first'] for row in rows)}; the winner: "
          f"{sum(row['bad_winner'] for row in rows)}; auto-accepted: "
          f"{sum(row['bad_accepted'] for row in rows)}")
    print(f"ranking time: {total:.1f} s for {len(rows)} groups")


def _print_alone(repo: Path, work: Path, verdicts: dict[str, str],
                 env: dict[str, str]) -> None:
    print()
    print("| alone | winner | auto-accept |")
    print("|---|---|---|")
    for member in [m for m in CANDIDATES if _never(m, verdicts)]:
        result, _ = _run(repo, work, f"alone-{member}", (member,), "", env)
        accept = result["auto_accept"]
        print(f"| {member} | {result['winner'] or 'none'} | "
              f"{'yes' if accept['accept'] else 'no: ' + accept['reason']} |")


if __name__ == "__main__":
    raise SystemExit(main())
