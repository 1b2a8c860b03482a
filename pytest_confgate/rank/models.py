"""Frozen data passed between the ranking stages: evidence in, ranking out.

Evidence is what the IO stages measured for one candidate; an ``Evaluation`` is what the
pure scoring made of it; a ``Ranking`` is the pure ranking's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_confgate.config.metrics import DEFAULT_HARD_LIMITS

CATEGORIES = ("correctness", "quality", "efficiency", "completeness", "safety")
"""The five categories, in the order (also the order of its reasons)."""
PASSING = frozenset({"passed", "xpassed"})
"""Test outcomes that count as a pass (an ``xfail`` test that passed still passed)."""
RAN = frozenset({"passed", "xpassed", "failed", "error"})
"""Test outcomes that gave a verdict."""


@dataclass(frozen=True)
class Issue:
    """A lint, type or security finding, matched across trees by rule + path + message."""

    rule: str
    path: str
    message: str
    line: int = 0
    severity: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """The identity used for "new against the baseline": line numbers move, this does not."""
        return (self.rule, self.path, " ".join(self.message.split()).lower())


@dataclass(frozen=True)
class TestCounts:
    """One candidate's test run, counted as pytest's summary counts it."""

    __test__ = False  # not a test class

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration_s: float = 0.0

    @property
    def ran(self) -> int:
        """Tests that produced a verdict."""
        return self.passed + self.failed + self.errors

    @property
    def total(self) -> int:
        """Tests collected, skips included: the count a regression must not lower."""
        return self.ran + self.skipped


@dataclass(frozen=True)
class CodeMetrics:
    """Stage 2 static metrics over the measured source files (changed ones with a baseline)."""

    files: int = 0
    functions: int = 0
    avg_complexity: float = 0.0
    max_complexity: int = 0
    max_complexity_at: str = ""
    max_function_length: int = 0
    max_function_length_at: str = ""
    duplication: float = 0.0
    """Share of the measured (non-blank, normalised) lines that repeat elsewhere."""
    files_over_limit: int = 0
    max_loop_depth: int = 0


@dataclass(frozen=True)
class ChangeStats:
    """The candidate against the baseline: lines and files changed, tests and docs touched."""

    lines_added: int = 0
    lines_removed: int = 0
    files_changed: int = 0
    source_files_changed: int = 0
    new_test_files: tuple[str, ...] = ()
    """Test files the baseline does not have: the only ones whose tests count as new."""
    edited_test_files: tuple[str, ...] = ()
    """Baseline test files the candidate changed or deleted (they run from the baseline)."""
    new_test_ids: tuple[str, ...] = ()
    """Tests (by id) the candidate added to the baseline's own test files: new tests too."""

    @property
    def lines_changed(self) -> int:
        """Added plus removed lines, as ``git diff --stat`` counts them."""
        return self.lines_added + self.lines_removed


@dataclass(frozen=True)
class Regression:
    """The baseline's own test files, unmodified, run on a candidate: outcomes by test id."""

    outcomes: Mapping[str, str] = field(default_factory=dict)
    """Node id -> ``passed``, ``failed``, ``error``, ``skipped``, ... (``outcomes_plugin``)."""
    problem: str | None = None
    """Why the run gave no outcomes (it crashed, timed out); the candidate is then blocked."""

    def failures(self, expected: Mapping[str, str]) -> list[tuple[str, str]]:
        """(test id, outcome here) for each test that passed on the baseline and not here;
        a test this run does not report is ``missing``."""
        return [
            (test_id, self.outcomes.get(test_id, "missing"))
            for test_id, outcome in sorted(expected.items())
            if outcome in PASSING and self.outcomes.get(test_id) not in PASSING
        ]


@dataclass(frozen=True)
class Evidence:
    """Everything stages 1 and 2 measured for one tree; ``None`` means "could not measure"."""

    solution_id: str
    builds: bool
    build_problem: str | None = None
    tests: TestCounts | None = None
    tests_problem: str | None = None
    coverage: float | None = None
    statements: int | None = None
    """The statements coverage measured (to count lines an added ``pragma: no cover`` hides)."""
    lint: tuple[Issue, ...] | None = None
    lint_problem: str | None = None
    security: tuple[Issue, ...] | None = None
    security_problem: str | None = None
    type_errors: tuple[Issue, ...] | None = None
    type_problem: str | None = None
    code: CodeMetrics | None = None
    changes: ChangeStats | None = None
    duration_s: float = 0.0
    outcomes: Mapping[str, str] | None = None
    """The tree's own test run, by node id (None: the run wrote none)."""
    regression: Regression | None = None
    """With a baseline: its test files run on this tree (None for the baseline itself)."""
    tamper: tuple[Issue, ...] | None = None
    """With a baseline: what the tree does to the tests and tools that judge it
    (``collect.tamper``); ``rule`` is the finding's rule. None: not analysed."""
    tamper_problem: str | None = None
    dangerous: tuple[Issue, ...] = ()
    """Dangerous operations in changed source code that the baseline does not have."""
    hidden_uncovered: int = 0
    """Statements under a ``pragma: no cover`` it added, counted in ``coverage`` as missed."""
    unmarked: Mapping[str, str] | None = None
    """Its new tests marked xfail or skip, run without the mark: id -> outcome (issue 28)."""

    def new_tests(self) -> tuple[int, int]:
        """(passed, ran) of the tests the baseline does not have: those in new test files and
        new test ids in the baseline's own test files (issue 28; a rewritten baseline test
        keeps its id and is not new). Without outcomes by id, each new test file counts as
        one test that ran.
        """
        files = set(self.changes.new_test_files) if self.changes is not None else set()
        added = set(self.changes.new_test_ids) if self.changes is not None else set()
        if self.outcomes is None:
            return len(files), len(files)
        mine = [o for test, o in self.outcomes.items()
                if test.split("::", 1)[0] in files or test in added]
        return sum(1 for o in mine if o in PASSING), sum(1 for o in mine if o in RAN)


@dataclass(frozen=True)
class CrossTest:
    """Other candidates' new tests run against this candidate (CodeT-style agreement)."""

    passed: int = 0
    ran: int = 0
    disagreement: float = 0.0
    """Failed tests, each weighted by its writer's standing (``crosstest.standing``)."""
    failing: tuple[str, ...] = ()
    """The other candidates' test ids that failed or errored here (``writer: test id``)."""
    why: Mapping[str, str] = field(default_factory=dict)
    """``writer: test id`` -> the first line of its failure here."""
    standing: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    """Writer -> (how much its failing tests weigh, why)."""
    independent: int = 0
    """Tests that gave a verdict here written by candidates whose tests count (standing
    above 0): evidence about this candidate that it did not write itself (issue 36)."""


@dataclass(frozen=True)
class LlmPreference:
    """Stage 3 for one candidate: share of pairwise verdicts won (ties half) and consistency."""

    preference: float
    consistency: float
    """Share of its pairwise verdicts that did not flip with the order (1.0: none flipped)."""


@dataclass(frozen=True)
class Note:
    """One strength or weakness, tied to the category it explains."""

    category: str
    text: str


@dataclass(frozen=True)
class Evaluation:
    """Stage 4 for one candidate: category scores, the overall score, evaluation confidence."""

    solution_id: str
    blocked: bool
    block_reasons: tuple[str, ...]
    categories: Mapping[str, float]
    components: Mapping[str, Mapping[str, float]]
    score: float
    confidence: float
    strengths: tuple[Note, ...] = ()
    weaknesses: tuple[Note, ...] = ()
    multiplier: float = 1.0
    """What the safety gate left of the weighted sum (0.5: a dangerous operation or secret)."""
    independent: tuple[str, ...] = ()
    """The kinds of test evidence about it that it did not write (issue 36): ``task`` (the
    baseline's failing tests pass on it, run as the baseline has them) and ``cross`` (other
    candidates' tests, from writers in good standing, ran on it)."""


@dataclass(frozen=True)
class Comparison:
    """The ``ComparisonDetail``: one pair, one category."""

    solution_a: str
    solution_b: str
    category: str
    winner: str
    """A solution id or ``"tie"``."""
    score_diff: float
    reasoning: str


@dataclass(frozen=True)
class RankedSolution:
    """One row of the ranking; rank 1 is the best."""

    evaluation: Evaluation
    rank: int
    strengths: tuple[str, ...]
    weaknesses: tuple[str, ...]

    @property
    def solution_id(self) -> str:
        """The directory name or the git ref as given."""
        return self.evaluation.solution_id

    @property
    def score(self) -> float:
        """The overall score (0 for a blocked candidate)."""
        return self.evaluation.score


@dataclass(frozen=True)
class Ranking:
    """The ``SolutionRanking``: sorted solutions, winner (or none), confidence."""

    solutions: tuple[RankedSolution, ...]
    winner: RankedSolution | None
    confidence: float
    comparisons: tuple[Comparison, ...] = field(default=())
    tie: tuple[str, ...] = ()
    """The candidates that share rank 1 when two or more do (then there is no winner)."""


@dataclass(frozen=True)
class ScoringContext:
    """What every candidate is measured against: weights, baseline, configured checks."""

    weights: Mapping[str, float]
    baseline: Evidence | None = None
    type_check: bool = False
    llm_expected: bool = False
    reference_duration_s: float | None = None
    """The baseline's test time, else the fastest unblocked candidate's."""
    hard_limits: Mapping[str, int | None] = field(
        default_factory=lambda: dict(DEFAULT_HARD_LIMITS))
    """The gate's hard conditions as the project's configuration sets them
    (``GateConfig.hard_limits``): the same limits block in the gate and here (issue 36)."""


@dataclass(frozen=True)
class AutoAccept:
    """``should_auto_accept``'s answer, with the reason."""

    accept: bool
    reason: str


def new_issues(
    found: tuple[Issue, ...] | None, before: tuple[Issue, ...] | None
) -> tuple[Issue, ...]:
    """Issues in ``found`` whose rule + path + message the baseline does not have (by count)."""
    if found is None:
        return ()
    if before is None:
        return found
    remaining: dict[tuple[str, str, str], int] = {}
    for issue in before:
        remaining[issue.key] = remaining.get(issue.key, 0) + 1
    fresh: list[Issue] = []
    for issue in found:
        if remaining.get(issue.key, 0) > 0:
            remaining[issue.key] -= 1
        else:
            fresh.append(issue)
    return tuple(fresh)
