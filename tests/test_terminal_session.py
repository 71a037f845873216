"""Terminal play, scripted: undo before the roll, resignations bgbot judges, a dead cube never offered, hints in
match winning chances, and a match saved mid-game that goes on with the same dice when resumed."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from bgbot.engine.api import Engine
from bgbot.formats.ids import parse_xgid
from bgbot.formats.records import read_match
from bgbot.play.bots.local import BgbotBot
from bgbot.play.table import Resume, play_game
from bgbot.play.terminal import HumanBot, play_terminal
from bgbot.rules.matchstate import MatchState
from bgbot.rules.moves import legal_moves, parse_move
from bgbot.rules.position import Position


@pytest.fixture(scope="module")
def bot() -> BgbotBot:
    return BgbotBot(Engine.load(bearoff=False), ply=1)


class _Script:
    """A person who reads the screen: plays the first legal move, rolls, takes; ``extra`` answers first."""

    def __init__(self, out: io.StringIO, extra: dict[int, str] | None = None) -> None:
        self.out = out
        self.prompts: list[str] = []
        self.extra = extra or {}

    def __call__(self, prompt: str) -> str:
        self.out.write(prompt + "\n")
        self.prompts.append(prompt)
        k = len(self.prompts)
        if k in self.extra:
            return self.extra[k]
        if prompt.startswith("Your move"):
            m = re.match(r"Your move \((\d)(\d)\)", prompt)
            assert m, prompt
            pos, _ = parse_xgid(re.findall(r"XGID=\S+", self.out.getvalue())[-1])
            return legal_moves(pos, (int(m.group(1)), int(m.group(2))))[0].text
        if "Take or pass" in prompt:
            return "take"
        if prompt.startswith("Another game"):
            return "n"
        return ""  # roll; end the turn


def test_undo_takes_the_move_back_before_any_dice(bot: BgbotBot) -> None:
    answers = iter(["24/18 13/11", "undo", "13/7 13/11", ""])
    said: list[str] = []
    human = HumanBot(bot, lambda prompt: next(answers), said.append)
    start = Position.start()
    result = human.move(start, (6, 2), MatchState(dice=(6, 2)))
    assert result == parse_move(start, (6, 2), "13/7 13/11").result
    assert "Move taken back." in said


def test_no_double_is_offered_when_the_cube_is_dead(bot: BgbotBot) -> None:
    # post-Crawford, the leader (you, 1-away) may not usefully double: gnubg never offers it
    out = io.StringIO()
    script = _Script(out)
    human = HumanBot(bot, script, lambda t: out.write(t + "\n"))
    res = play_game((human, bot), np.random.default_rng(3), match_length=3, score=(2, 0))
    assert res.winner is not None
    assert not any(p.startswith("Roll or double") for p in script.prompts)
    # the trailer (bgbot here) keeps its cube: the same game with the scores swapped asks you at 0-2
    out2 = io.StringIO()
    script2 = _Script(out2)
    human2 = HumanBot(bot, script2, lambda t: out2.write(t + "\n"))
    play_game((human2, bot), np.random.default_rng(3), match_length=3, score=(0, 2))
    assert any(p.startswith("Roll or double") for p in script2.prompts)


def test_a_1_point_match_at_the_terminal_has_no_cube_and_no_forfeit(bot: BgbotBot) -> None:
    out = io.StringIO()
    script = _Script(out)
    you, them = play_terminal(bot, match_length=1, seed=8, stdout=out, ask=script)
    text = out.getvalue()
    assert max(you, them) >= 1 and "forfeit" not in text and "Crawford" not in text
    assert not any(p.startswith("Roll or double") for p in script.prompts)


def test_the_hint_shows_match_winning_chances_in_a_match(bot: BgbotBot) -> None:
    said: list[str] = []
    answers = iter(["hint", "13/7 13/11", ""])
    human = HumanBot(bot, lambda prompt: next(answers), said.append)
    human.move(Position.start(), (6, 2), MatchState(match_length=5, score=(1, 3), dice=(6, 2)))
    table = next(s for s in said if "equity" in s and "mwc" in s)
    best = table.splitlines()[1]  # the best play: equity (EMG), then its MWC in percent, then the probabilities
    assert re.search(r"\s[+-]\d\.\d{3}\s+\d{1,3}\.\d\s+0\.\d{3}\s", best), table
    # the cube hint too
    said.clear()
    answers = iter(["hint", "roll"])
    human = HumanBot(bot, lambda prompt: next(answers), said.append)
    human.double(Position.start(), MatchState(match_length=5, score=(1, 3)))
    assert any("MWC of the doubler: no double" in s for s in said), said


def _lost_race() -> tuple[Position, Resume]:
    # you (on roll) have 15 checkers in your outfield; bgbot has 13 off and two on its 1-point: a sure gammon,
    # so a single game is declined (the network's tiny backgammon chance makes it decline a gammon too)
    pos = Position.from_points({18: 3, 17: 3, 16: 3, 15: 3, 14: 3}, {1: 2})
    return pos, Resume(pos, 0, 10)


def test_resignations_are_judged_as_gnubg_judges_them(bot: BgbotBot) -> None:
    _, resume = _lost_race()
    said: list[str] = []
    answers = iter(["resign", "resign backgammon"])
    human = HumanBot(bot, lambda prompt: next(answers), said.append)
    res = play_game((human, bot), np.random.default_rng(1), match_length=7, score=(2, 2), resume=resume)
    assert any("bgbot declines" in s for s in said), said  # a single is not enough: it wins a gammon
    assert res.how == "resigned" and res.winner == 1 and res.points == 3
    # at the start a single game is accepted (playing on is worth less than a point to bgbot)
    answers2 = iter(["resign"] * 3)
    human2 = HumanBot(bot, lambda prompt: next(answers2), lambda t: None)
    res2 = play_game((human2, bot), np.random.default_rng(1))
    assert res2.how == "resigned" and res2.winner == 1 and res2.points == 1


def test_a_resigned_game_is_saved_as_a_resignation(bot: BgbotBot, tmp_path: Path) -> None:
    out = io.StringIO()
    script = _Script(out, {1: "resign backgammon"})
    path = tmp_path / "resigned.sgf"
    you, them = play_terminal(bot, match_length=3, seed=2, stdout=out, ask=script, save=path)
    assert "bgbot accepts and wins 3 points" in out.getvalue() and (you, them) == (0, 3)
    rec = read_match(path)
    assert rec.games[0].how == "resigned" and rec.games[0].points == 3 and rec.winner == 1


def test_a_match_saved_mid_game_goes_on_with_the_same_dice(bot: BgbotBot, tmp_path: Path) -> None:
    # the whole match, never interrupted
    full = tmp_path / "full.mat"
    out0 = io.StringIO()
    play_terminal(bot, match_length=3, seed=12, stdout=out0, ask=_Script(out0), save=full)
    # the same match saved at the 9th question (in a move or before a roll), left, then resumed
    out = io.StringIO()
    script = _Script(out)
    part = tmp_path / "part.mat"
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        if len(prompts) == 9 and (prompt.startswith("Your move") or prompt.startswith("Roll or double")):
            return f"save {part}"
        if len(prompts) == 10 and part.exists():
            return "quit"
        return script(prompt)

    play_terminal(bot, match_length=3, seed=12, stdout=out, ask=ask, save=tmp_path / "ignored.mat")
    assert f"Saved to {part}" in out.getvalue(), out.getvalue()[-2000:]
    saved = read_match(part)
    assert saved.games[-1].how == "unfinished" and saved.games[-1].actions
    out2 = io.StringIO()
    play_terminal(bot, stdout=out2, ask=_Script(out2), save=part, resume=saved)  # no seed given: the file's
    assert "Resuming" in out2.getvalue()
    assert read_match(part) == read_match(full)
