"""What bgbot prints agrees with itself: the HTML analysis report's mistake lists match its marks, rollout
probabilities are probabilities, and the install hints name the package as a user of the wheel installs it."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bgbot.cli.analyse import html_report
from bgbot.engine.analyse import MatchAnalysis, Thresholds
from bgbot.engine.api import Engine
from bgbot.formats.records import read_match

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "analyse"


class _Report(HTMLParser):
    """The parts of the HTML report a reader checks: the statistics text, each player's mark line and rows."""

    def __init__(self) -> None:
        super().__init__()
        self.pre = ""
        self.marked: dict[int, tuple[int, str]] = {}
        self.rows: dict[int, list[list[str]]] = {}
        self._in: str | None = None
        self._player = -1
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "pre":
            self._in = "pre"
        elif tag == "p" and a.get("class") == "marked":
            self._in, self._player = "marked", int(a["data-player"] or -1)
            self.marked[self._player] = (int(a["data-marked"] or -1), "")
        elif tag == "table" and a.get("class") == "mistakes":
            self._player = int(a["data-player"] or -1)
            self.rows[self._player] = []
        elif tag == "tr" and self._player in self.rows:
            self._cell = []
        elif tag == "td" and self._cell is not None:
            self._in = "td"
            self._cell.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self._cell:
            self.rows[self._player].append(self._cell)
        if tag == "tr":
            self._cell = None
        if tag in ("pre", "p", "td"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "pre":
            self.pre += data
        elif self._in == "marked":
            n, text = self.marked[self._player]
            self.marked[self._player] = (n, text + data)
        elif self._in == "td" and self._cell is not None:
            self._cell[-1] += data


@pytest.fixture(scope="module")
def m09() -> MatchAnalysis:
    return Engine.load().analyse(read_match(DATA / "m09.mat"), 1, luck=False)


def _parse(page: str) -> _Report:
    r = _Report()
    r.feed(page)
    return r


@pytest.mark.parametrize("mistakes", [1, 5, 100])
def test_html_mistake_lists_agree_with_the_marks(m09: MatchAnalysis, mistakes: int) -> None:
    r = _parse(html_report(m09, mistakes))
    # the statistics part says nothing about the lists (it used to say "none marked" above five listed rows)
    assert "none marked" not in r.pre and "Biggest mistakes" not in r.pre
    assert sorted(r.marked) == [0, 1]
    listed = 0
    for i, p in enumerate(m09.players):
        marked = sum(p.checker_marks.values()) + sum(p.cube_marks.values())
        assert r.marked[i][0] == marked
        # the statistics' "marked" rows count the same decisions the list is drawn from
        assert marked == sum(1 for d in m09.decisions if d.player == i and d.skill)
        rows = r.rows.get(i, [])
        assert len(rows) == min(marked, mistakes)
        assert ("none marked" in r.marked[i][1]) == (marked == 0)
        losses = [float(row[5]) for row in rows]
        assert losses == sorted(losses, reverse=True)
        t = m09.thresholds
        for row, d in zip(rows, m09.mistakes(i, mistakes), strict=True):
            assert row[5] == f"{d.error:.3f}" and d.error >= t.doubtful
            # gnubg's names for the thresholds: doubtful, bad, very bad
            want = "very bad" if d.error >= t.blunder else "bad" if d.error >= t.error else "doubtful"
            assert row[6].split(" (")[0] == want
        listed += len(rows)
    assert listed > 0  # m09 has marked decisions on both sides: the report is not trivially empty


def test_html_says_none_marked_only_for_a_player_without_marks(m09: MatchAnalysis) -> None:
    lenient = Engine.load().analyse(m09.match, 1, luck=False, thresholds=Thresholds(0.15, 0.2, 0.3))
    r = _parse(html_report(lenient, 5))
    for i, p in enumerate(lenient.players):
        marked = sum(p.checker_marks.values()) + sum(p.cube_marks.values())
        assert ("none marked" in r.marked[i][1]) == (marked == 0)
        assert len(r.rows.get(i, [])) == min(marked, 5)
    assert any(sum(p.checker_marks.values()) == 0 for p in lenient.players)


def test_text_lists_follow_the_same_rule(m09: MatchAnalysis) -> None:
    assert "Biggest mistakes" not in m09.text(mistakes=0)
    text = m09.text(mistakes=3)
    for p in m09.players:
        block = text.split(f"Biggest mistakes of {p.name}\n", 1)[1].split("Biggest mistakes of", 1)[0]
        marked = sum(p.checker_marks.values()) + sum(p.cube_marks.values())
        assert len(re.findall(r"^  game ", block, re.M)) == min(3, marked)
        assert ("none marked" in block) == (marked == 0)


# ---------------------------------------------------------------------------
# rollout figures: luck-adjusted means made probabilities before anyone sees them
# ---------------------------------------------------------------------------


def _consistent(p: tuple[float, ...]) -> bool:
    w, wg, wbg, lg, lbg = p[:5]
    return 0 <= wbg <= wg <= w <= 1 and 0 <= lbg <= lg <= 1 - w


@pytest.mark.parametrize("match", [0, 5])
def test_rollout_report_clamps_luck_adjusted_means(monkeypatch: pytest.MonkeyPatch, match: int) -> None:
    """A luck-adjusted mean a little outside what a probability allows is clamped in every output."""
    import json

    import numpy as np

    import bgbot.engine.rollout as ro
    from bgbot.engine.executor import RunStats
    from bgbot.rules.matchstate import CubeState
    from bgbot.rules.position import Position

    # w, wg (< 0), wbg (< 0), lg (> 1 - w), lbg (> lg), cubeless and cubeful equity (the latter past +1)
    means = np.array([0.62, -0.0007, -0.0012, 0.40, 0.41, 0.25, 1.3])

    def fake_run(evaluator: object, starts: list[object], state: object, settings: ro.RolloutSettings,
                 **kwargs: object) -> tuple[list[tuple[object, ...]], int, bool, RunStats]:
        return [(means.copy(), np.full(7, 0.01), np.full(7, 0.02)) for _ in starts], settings.trials, False, RunStats()

    monkeypatch.setattr(ro, "run_rollout", fake_run)
    engine = Engine.load()
    state = CubeState(match=match, score=(1, 2) if match else (0, 0))
    res = ro.rollout(engine.evaluator, Position.start(), state, ro.RolloutSettings(trials=36),
                     met=engine.met if match else None)
    assert res.entries
    for e in res.entries:
        assert _consistent(e.probs), e.probs
        assert e.probs[:2] == (0.62, 0.0) and e.probs[3] == pytest.approx(0.38)  # clamped, not rescaled
        assert e.mean[5:] == (0.25, 1.3)  # the equities are the rollout's measurement
        assert e.mwc is None if not match else 0.0 <= e.mwc <= 1.0
    probability_lines = [ln for ln in res.table().splitlines() if " - " in ln and "CL" in ln and "[" not in ln]
    assert len(probability_lines) == len(res.entries)
    for ln in probability_lines:  # "w wg wbg - l lg lbg  CL ...  CF ..." as printed
        printed = [float(x) for x in ln.split("CL")[0].replace(" - ", " ").split()]
        assert all(0.0 <= x <= 1.0 for x in printed), ln
    for line in json.loads(json.dumps(res.to_dict()))["lines"]:
        assert _consistent(tuple(line[k] for k in ro.COLUMNS[:5])), line


def test_consistent_figures_keeps_good_means() -> None:
    import numpy as np

    from bgbot.engine.rollout import consistent_figures

    good = np.array([0.55, 0.15, 0.01, 0.12, 0.005, 0.04, 0.05])
    assert consistent_figures(good) == tuple(good.tolist())


# ---------------------------------------------------------------------------
# install hints: what a user of the wheel types (bgbot's extras by the package's name, not an editable checkout)
# ---------------------------------------------------------------------------


def test_serve_without_its_extra_names_the_wheel_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from bgbot.cli.main import main

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "bgbot[serve]"' in err
    assert len(err.strip().splitlines()) == 1


def test_ray_executor_without_ray_names_the_wheel_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from bgbot.engine.executor import _import_ray
    from bgbot.errors import ExecutorError

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ExecutorError, match=re.escape('pip install "bgbot[ray]"')):
        _import_ray()


def test_no_hint_sends_a_wheel_user_to_an_editable_install_of_an_extra_they_can_get() -> None:
    """``pip install -e ".[serve]"`` only works in a clone; the serve and ray extras come with the wheel."""
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sorted((ROOT / "bgbot").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"""-e\s*['"]?\.\[[^\]]*\b(serve|ray)\b""", line)
    ]
    assert not offenders, offenders
