"""Ranking outputs: JSON (the contract of issue 6) and the "Solution Comparison
Results" Markdown. Both render only from a finished ``RankOutcome``; HTML is in ``report_html``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_confgate.rank.blocking import regression_failures
from pytest_confgate.rank.crosstest import standing
from pytest_confgate.rank.models import CATEGORIES, RAN, Evidence, RankedSolution, new_issues
from pytest_confgate.rank.service import RankOutcome


def ranking_json(outcome: RankOutcome) -> dict[str, Any]:
    """The JSON document: the contract keys first, then the details behind them."""
    ranking = outcome.ranking
    return {
        "ranking_id": outcome.ranking_id,
        "created_at": outcome.created_at,
        "solutions": [_solution(s, outcome) for s in ranking.solutions],
        "winner": ranking.winner.solution_id if ranking.winner else None,
        "tie": list(ranking.tie),
        "confidence": ranking.confidence,
        "auto_accept": {"accept": outcome.auto_accept.accept, "reason": outcome.auto_accept.reason},
        "weights": dict(outcome.weights),
        "baseline": _evidence(outcome.baseline, None) if outcome.baseline else None,
        "comparisons": [dataclasses.asdict(c) for c in ranking.comparisons],
        "cross_tests": cross_test_matrix(outcome),
    }


def cross_test_matrix(outcome: RankOutcome) -> dict[str, dict[str, dict[str, Any]]]:
    """``matrix[source][target]``: the source's new tests run on the target, each failure
    with why it failed, and how much the source's failures weigh (its standing) and why."""
    matrix: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in outcome.cross_tests:
        weight, reason = writer_standing(outcome, cell.source)
        matrix.setdefault(cell.source, {})[cell.target] = {
            "passed": cell.passed, "failed": cell.failed, "errors": cell.errors,
            "ran": cell.ran, "files": list(cell.files), "problem": cell.problem,
            "failing": list(cell.failing),
            "why": {test: cell.why.get(test, cell.outcomes[test]) for test in cell.failing},
            "weight": weight, "standing": reason,
        }
    return matrix


def writer_standing(outcome: RankOutcome, source: str) -> tuple[float, str]:
    """How much ``source``'s failing tests weighed, and why (from the ranking's evidence)."""
    found = outcome.evidence.get(source)
    if found is None:
        return 1.0, "its tests count in full"
    return standing(found, outcome.baseline)


def _solution(solution: RankedSolution, outcome: RankOutcome) -> dict[str, Any]:
    evaluation = solution.evaluation
    return {
        "solution_id": solution.solution_id,
        "rank": solution.rank,
        "score": solution.score,
        "blocked": evaluation.blocked,
        "categories": {name: evaluation.categories[name] for name in CATEGORIES},
        "strengths": list(solution.strengths),
        "weaknesses": list(solution.weaknesses),
        "block_reasons": list(evaluation.block_reasons),
        "score_multiplier": evaluation.multiplier,
        "independent_evidence": list(evaluation.independent),
        "confidence": evaluation.confidence,
        "components": {k: dict(v) for k, v in evaluation.components.items()},
        "evidence": _evidence(outcome.evidence.get(solution.solution_id), outcome.baseline),
    }


def _evidence(evidence: Evidence | None, baseline: Evidence | None) -> dict[str, Any] | None:
    if evidence is None:
        return None
    new_security = new_issues(evidence.security, baseline.security if baseline else None)
    return {
        "builds": evidence.builds,
        "build_problem": evidence.build_problem,
        "tests": dataclasses.asdict(evidence.tests) if evidence.tests else None,
        "tests_problem": evidence.tests_problem,
        "coverage": evidence.coverage,
        "lint_findings": None if evidence.lint is None else len(evidence.lint),
        "new_lint_findings": [
            dataclasses.asdict(i)
            for i in new_issues(evidence.lint, baseline.lint if baseline else None)
        ],
        "lint_problem": evidence.lint_problem,
        "security_findings": None if evidence.security is None else len(evidence.security),
        "new_security_findings": [dataclasses.asdict(i) for i in new_security],
        "security_problem": evidence.security_problem,
        "type_errors": None if evidence.type_errors is None else len(evidence.type_errors),
        "type_problem": evidence.type_problem,
        "code": dataclasses.asdict(evidence.code) if evidence.code else None,
        "changes": dataclasses.asdict(evidence.changes) if evidence.changes else None,
        "duration_s": round(evidence.duration_s, 3),
        **_judges(evidence, baseline),
    }


def _judges(evidence: Evidence, baseline: Evidence | None) -> dict[str, Any]:
    """What the candidate did to the tests and tools that judge it, and what it runs."""
    regression = evidence.regression
    failures = regression_failures(evidence, baseline) if baseline is not None else None
    return {
        "regression": None if regression is None else {
            "ran": sum(1 for o in regression.outcomes.values() if o in RAN),
            "failures": None if failures is None else [
                {"test": test, "outcome": outcome} for test, outcome in failures
            ],
            "problem": regression.problem,
        },
        "tamper": None if evidence.tamper is None else [
            dataclasses.asdict(finding) for finding in evidence.tamper
        ],
        "tamper_problem": evidence.tamper_problem,
        "dangerous_operations": [dataclasses.asdict(op) for op in evidence.dangerous],
    }


def ranking_markdown(outcome: RankOutcome) -> str:
    """The "Solution Comparison Results" presentation."""
    ranking = outcome.ranking
    lines = ["## Solution Comparison Results", ""]
    winner = ranking.winner
    if winner is not None:
        lines.append(f"### Winner: {_md(winner.solution_id)} (Score: {winner.score:.2f}, "
                     f"Confidence: {ranking.confidence:.0%})")
    elif ranking.tie:
        lines.append(f"### No clear winner: tie between {_md(', '.join(ranking.tie))} (Score: "
                     f"{ranking.solutions[0].score:.2f}, Confidence: {ranking.confidence:.0%})")
    else:
        lines.append(f"### No clear winner (Confidence: {ranking.confidence:.0%})")
    lines += ["", *_table(outcome), ""]
    if winner is not None:
        lines += _why(outcome, winner)
    blocked = [s for s in ranking.solutions if s.evaluation.blocked]
    if blocked:
        lines += ["### Blocked (stage 1)", ""]
        lines += [f"- {_md(s.solution_id)}: {_md('; '.join(s.evaluation.block_reasons))}"
                  for s in blocked]
        lines.append("")
    lines += _others(outcome)
    lines += _cross_tests(outcome)
    accept = outcome.auto_accept
    lines += ["### Auto-acceptance", "",
              f"{'Accepted' if accept.accept else 'Not accepted'}: {_md(accept.reason)}", ""]
    rid = outcome.ranking_id
    accept_winner = ([f"- [Accept Winner] `confgate rank feedback {rid} --accepted-winner`"]
                     if winner is not None else [])  # nothing to accept without a winner
    lines += [
        "### Actions", "",
        *accept_winner,
        f"- [Choose {'Another' if winner is not None else 'One'}] "
        f"`confgate rank feedback {rid} --chose SOLUTION_ID`",
        f"- [Reject All] `confgate rank feedback {rid} --rejected-all`",
        "",
        f"Ranking `{rid}`; weights "
        + ", ".join(f"{name} {outcome.weights[name]:.2f}" for name in CATEGORIES) + ".",
        "",
    ]
    return "\n".join(lines)


def _table(outcome: RankOutcome) -> list[str]:
    solutions = outcome.ranking.solutions
    winner = outcome.ranking.winner
    heads = [
        _md(s.solution_id) + (" (Winner)" if winner and s.solution_id == winner.solution_id else "")
        + (" (blocked)" if s.evaluation.blocked else "")
        for s in solutions
    ]
    lines = ["| Category | " + " | ".join(heads) + " |", "|" + "---|" * (len(heads) + 1)]
    rows = [(name.capitalize(), [s.evaluation.categories[name] for s in solutions])
            for name in CATEGORIES]
    rows.append(("**Overall**", [s.score for s in solutions]))
    for title, values in rows:
        lines.append(f"| {title} | " + " | ".join(_cell(v, values) for v in values) + " |")
    return lines


def _cell(value: float, row: list[float]) -> str:
    best = max(row)
    unique = len(row) > 1 and sum(1 for v in row if v == best) == 1
    return f"**{value:.2f}**" if unique and value == best else f"{value:.2f}"


def _why(outcome: RankOutcome, winner: RankedSolution) -> list[str]:
    lines = [f"### Why {_md(winner.solution_id)}?", "", "**Strengths:**"]
    lines += [f"- {_md(text)}" for text in winner.strengths] or ["- (none recorded)"]
    trade_offs = [_md(text) for text in winner.weaknesses]
    for other in outcome.ranking.solutions[1:]:
        for name in CATEGORIES:
            mine, theirs = winner.evaluation.categories[name], other.evaluation.categories[name]
            if theirs > mine:
                trade_offs.append(
                    f"{_md(other.solution_id)} has better {name} ({theirs:.2f} vs {mine:.2f})"
                )
    lines += ["", "**Trade-offs:**"]
    lines += [f"- {text}" for text in trade_offs] or ["- none"]
    return [*lines, ""]


def _others(outcome: RankOutcome) -> list[str]:
    """Every weakness of the candidates that are not the winner, beyond their block reasons:
    a suppression or a dangerous operation is named wherever the candidate ranks."""
    winner = outcome.ranking.winner
    found = []
    for solution in outcome.ranking.solutions:
        if winner is not None and solution.solution_id == winner.solution_id:
            continue
        listed = {f"Blocked: {reason}" for reason in solution.evaluation.block_reasons}
        texts = [text for text in solution.weaknesses if text not in listed]
        if texts:
            found.append(f"- {_md(solution.solution_id)}: {_md('; '.join(texts))}")
    return ["### Weaknesses of the others", "", *found, ""] if found else []


def _cross_tests(outcome: RankOutcome) -> list[str]:
    matrix = cross_test_matrix(outcome)
    if not matrix:
        return []
    targets = sorted({t for row in matrix.values() for t in row})
    lines = ["### Cross-testing (new tests of each row, run on each column)", "",
             "| tests from \\ run on | " + " | ".join(_md(t) for t in targets)
             + " | failures weigh |",
             "|" + "---|" * (len(targets) + 2)]
    for source in sorted(matrix):
        cells = []
        for target in targets:
            cell = matrix[source].get(target)
            if cell is None:
                cells.append("-")
            elif cell["problem"]:
                cells.append("error")
            else:
                cells.append(f"{cell['passed']}/{cell['ran']}")
        weight, reason = writer_standing(outcome, source)
        lines.append(f"| {_md(source)} | " + " | ".join(cells)
                     + f" | {weight:g} ({_md(reason)}) |")
    failures = [f"- {_md(source)}: {_md(test)} on {_md(target)}: {_md(why)}"
                for source in sorted(matrix) for target, cell in sorted(matrix[source].items())
                for test, why in cell["why"].items()]
    return [*lines, "", *(["Failures:", "", *failures, ""] if failures else [])]


def _md(text: str) -> str:
    """Untrusted text (ids, tool messages) in a Markdown table cell or list item."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")
