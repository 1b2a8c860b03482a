"""``confgate rank``'s HTML page: a chart that scales with the page and labels people can read."""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_confgate.rank.models import CATEGORIES, AutoAccept, Evaluation, Note
from pytest_confgate.rank.ranking import rank_solutions
from pytest_confgate.rank.report_html import breakable, category_chart, ranking_html
from pytest_confgate.rank.service import RankOutcome


def _evaluation(sid: str, score: float, *, blocked: bool = False) -> Evaluation:
    return Evaluation(
        solution_id=sid, blocked=blocked, block_reasons=("test_removed: t (t.py:3)",) * blocked,
        categories=dict.fromkeys(CATEGORIES, score), components={}, score=score,
        confidence=1.0, independent=() if blocked else ("cross",),
    )


def _outcome(*evaluations: Evaluation) -> RankOutcome:
    return RankOutcome("r1", "2026-01-01T00:00:00", rank_solutions(evaluations),
                       AutoAccept(False, "disabled"), dict.fromkeys(CATEGORIES, 0.2), {}, None, ())


def test_the_chart_scales_with_the_page_and_every_label_has_room() -> None:
    """The chart was a fixed 300-odd pixels, with 10 px category labels written over each
    other when two candidates were ranked ("correctness" ran into "quality")."""
    svg = category_chart(_outcome(_evaluation("a", 0.9), _evaluation("b", 0.4)))

    assert re.search(r'<svg [^>]*viewBox="0 0 \d+ \d+"[^>]*width="100%"', svg)
    sizes = {int(size) for size in re.findall(r'font-size="(\d+)"', svg)}
    assert min(sizes) >= 12
    centres = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*text-anchor="middle">', svg)]
    assert len(centres) == len(CATEGORIES)
    gaps = [b - a for a, b in itertools.pairwise(centres)]
    widest = max(len(c) for c in CATEGORIES) * 13 * 0.6  # a label's width in a 13 px sans font
    assert min(gaps) > widest


def test_the_legend_says_which_candidate_is_blocked_in_words() -> None:
    svg = category_chart(_outcome(_evaluation("clean", 0.9), _evaluation("deletes", 0.0,
                                                                         blocked=True)))
    assert "clean (score 0.90)</text>" in svg
    assert "deletes (score 0.00, blocked)</text>" in svg


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="no `chromium` on PATH: the headless browser rendering check needs Debian's chromium",
)
def test_a_real_browser_draws_the_ranking_page(tmp_path: Path) -> None:
    """The page to look at: tmp_path/rank.png."""
    outcome = _outcome(_evaluation("clean", 0.92), _evaluation("convoluted", 0.61),
                       _evaluation("deletes-test", 0.0, blocked=True))
    page = tmp_path / "rank.html"
    page.write_text(ranking_html(outcome), encoding="utf-8")
    shot = tmp_path / "rank.png"
    subprocess.run([shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1000,900",
                    page.as_uri()], check=True, timeout=180, capture_output=True)
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert len(shot.read_bytes()) > 5_000


def test_every_bar_carries_its_value_and_a_blocked_candidate_its_place() -> None:
    # issue 28: a blocked candidate (all zeros) had no visible bar, and no bar had a value
    svg = category_chart(_outcome(_evaluation("clean", 0.92), _evaluation("deletes", 0.0,
                                                                          blocked=True)))
    labels = re.findall(r'transform="rotate\(-90 [^"]+"[^>]*>([^<]+)</text>', svg)
    assert labels == ["0.92", "blocked"] * len(CATEGORIES)


def test_the_page_fits_1280_pixels() -> None:
    outcome = _outcome(_evaluation("a-very-long-candidate-name-" * 4, 0.9),
                       _evaluation("b", 0.4))
    page = ranking_html(outcome)
    assert "max-width:1200px" in page  # plus 2 x 2em margin: inside 1280 px
    assert "table-layout:fixed" in page
    # issue 36: "overflow-wrap:anywhere" cut headers and branch names mid-word ("blocke d")
    assert "anywhere" not in page
    assert "a-<wbr>very-<wbr>long-<wbr>" in page  # ids break after a separator only
    assert breakable("tests/test_x.py::test_a&b") == (
        "tests/<wbr>test_<wbr>x.<wbr>py::<wbr>test_<wbr>a&amp;b")


_MEASURE = r"""<script>
// Every word of every cell must sit on one line, and the page must not scroll sideways.
const broken = [];
for (const cell of document.querySelectorAll("td, th")) {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const re = /[^\s\/_.:-]+[\/_.:-]*/g;
    let m;
    while ((m = re.exec(node.data)) !== null) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
}
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({width: document.documentElement.scrollWidth, broken});
document.body.appendChild(out);
</script>"""


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="no `chromium` on PATH: the headless browser rendering check needs Debian's chromium",
)
def test_in_a_1280_pixel_window_no_word_is_broken_and_nothing_scrolls(tmp_path: Path) -> None:
    """Issue 36: "blocke d" in a header and branch names cut mid-word. The page to look at:
    tmp_path/rank-1280.png; the measuring copy adds a script the real page never has."""
    long_finding = ("1 baseline test that passed on the baseline does not pass here, run "
                    "unmodified: tests/test_slug.py::test_punctuation_collapses (failed)")
    outcome = _outcome(
        _evaluation("feature/collapse_dash_runs_and_strip_the_ends", 0.92),
        _evaluation("helper-steers-cross-tests", 0.61),
        dataclasses.replace(_evaluation("agent-7/fix_slugify_v2", 0.0, blocked=True),
                            block_reasons=(long_finding,),
                            weaknesses=(Note("correctness", f"Blocked: {long_finding}"),)))
    page = ranking_html(outcome)
    (tmp_path / "rank.html").write_text(page, encoding="utf-8")
    measured = tmp_path / "measure.html"
    measured.write_text(page.replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    chromium = [shutil.which("chromium") or "chromium", "--headless", "--no-sandbox",
                "--disable-gpu", "--hide-scrollbars", "--window-size=1280,1500"]
    done = subprocess.run([*chromium, "--dump-dom", measured.as_uri()], check=True,
                          timeout=180, capture_output=True, text=True)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    result = json.loads(html.unescape(found.group(1)))
    assert result["broken"] == []
    assert result["width"] <= 1280
    subprocess.run([*chromium, f"--screenshot={tmp_path / 'rank-1280.png'}",
                    (tmp_path / "rank.html").as_uri()], check=True, timeout=180,
                   capture_output=True)
