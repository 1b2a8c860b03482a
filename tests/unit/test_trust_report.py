"""``confgate trust report`` rendering: JSON rows, the text table and the HTML page (SPEC 9)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_confgate.trust.formula import TrustRow, TrustTable
from pytest_confgate.trust.report import render_html, render_table, report_rows

TABLE = TrustTable(
    "formula",
    {
        ("fd-arch", "svc"): TrustRow("fd-arch", "svc", 0.8123456789, 25, 40, 9),
        ("fd-game", "svc"): TrustRow("fd-game", "svc", 0.12, 3, 1, 12),
        ("fd-arch", "web"): TrustRow("fd-arch", "web", 0.29999, 2, 1, 2),
    },
    {
        "fd-arch": TrustRow("fd-arch", None, 0.7, 27, 41, 11),
        "fd-game": TrustRow("fd-game", None, 0.3, 3, 1, 12),
    },
)


def test_json_rows_have_the_documented_keys_and_unrounded_numbers() -> None:
    rows = report_rows(TABLE, 0.3)
    assert rows[0] == {
        "agent": "fd-arch", "project": "svc", "trust": 0.8123456789, "reviews": 25,
        "accepted": 40, "discarded": 9, "scope": "project", "low_trust": False,
        "mode": "formula", "retracted": 0,
    }
    assert [(r["scope"], r["project"]) for r in rows] == [
        ("project", "svc"), ("project", "svc"), ("project", "web"),
        ("global", None), ("global", None),
    ]


@pytest.mark.parametrize(
    ("agent", "project", "low"),
    [("fd-game", "svc", True), ("fd-arch", "web", True), ("fd-game", None, False),
     ("fd-arch", "svc", False)],
    ids=["well-below", "just-below", "exactly-at-the-mark-is-not-below", "above"],
)
def test_rows_strictly_below_the_mark_are_flagged(
    agent: str, project: str | None, low: bool
) -> None:
    rows = report_rows(TABLE, 0.3)
    row = next(r for r in rows if (r["agent"], r["project"]) == (agent, project))
    assert row["low_trust"] is low


def test_a_project_filter_keeps_that_projects_rows_and_every_global_row() -> None:
    rows = report_rows(TABLE, 0.3, project="web")
    assert [(r["agent"], r["project"]) for r in rows] == [
        ("fd-arch", "web"), ("fd-arch", None), ("fd-game", None),
    ]


def test_the_table_has_the_columns_and_marks_low_trust_rows() -> None:
    lines = render_table(report_rows(TABLE, 0.3), 0.3, "formula").splitlines()
    assert lines[0].split() == ["agent", "project", "trust", "reviews", "accepted", "discarded"]
    assert lines[1].split() == ["fd-arch", "svc", "0.812", "25", "40", "9"]
    assert lines[2].endswith("LOW TRUST")
    assert "(global)" in lines[4]
    assert lines[-1].startswith("mode formula; 2 row(s) below 0.3")


def test_a_flagged_value_never_prints_equal_to_the_mark() -> None:
    text = render_table(report_rows(TABLE, 0.3), 0.3, "formula")
    web = next(line for line in text.splitlines() if " web " in line)
    assert "0.29999" in web
    assert "0.300 " not in web


def test_an_empty_report_says_how_to_add_evidence() -> None:
    assert "confgate trust record" in render_table([], 0.3, "formula")


def test_the_html_page_is_self_contained_with_a_chart_and_escaped_names() -> None:
    table = TrustTable(
        "bayesian",
        {("<script>x</script>", "svc"): TrustRow("<script>x</script>", "svc", 0.1, 1, 0, 1)},
        {},
    )
    page = render_html(report_rows(table, 0.3), 0.3, "bayesian")
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page
    assert len(re.findall(r"<rect ", page)) == 1
    assert 'width="40.0"' in page  # 0.1 of the 400-pixel bar
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert not re.search(r"(src|href)=|https?://(?!www\.w3)", page)
    assert "Mode bayesian" in page


def test_the_chart_labels_its_mark_and_says_low_trust_in_words(tmp_path: Path) -> None:
    """The 0.3 line had no label and "low trust" was colour only."""
    table = TrustTable("formula", {
        ("reviewer", "svc"): TrustRow("reviewer", "svc", 0.9, 10, 9, 1),
        ("sloppy", "svc"): TrustRow("sloppy", "svc", 0.25, 8, 2, 6),
    }, {})
    page = render_html(report_rows(table, 0.3), 0.3, "formula")
    assert "low trust below 0.3</text>" in page
    assert "0.250 low trust</text>" in page
    assert "0.900</text>" in page
    assert "0.250 (low trust)</td>" in page
    chromium = shutil.which("chromium")
    if chromium is not None:  # the page to look at: tmp_path/trust.png
        html = tmp_path / "trust.html"
        html.write_text(page, encoding="utf-8")
        shot = tmp_path / "trust.png"
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--screenshot={shot}", "--window-size=1000,500", html.as_uri()],
                       check=True, timeout=180, capture_output=True)
        assert shot.read_bytes().startswith(b"\x89PNG")
