"""Matches of every length, 1 point included: no forfeit, the Crawford game where gnubg has one, no dead cube
turned, forfeits worth no more than the match needs, records that read back, analyse and import in gnubg.

A 1-point match has no Crawford game (both sides are 1-away at 0-0: gnubg plays it as post-Crawford) and its cube is
dead from the start (gnubg's ``GetDPEq``: the current cube already gives either side the match).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bgbot.engine.api import Engine
from bgbot.errors import EngineError
from bgbot.formats.records import format_mat, match_from_games, read_match, write_match
from bgbot.play.bots.base import BaseBot
from bgbot.play.bots.local import BgbotBot, PubevalBot, RandomBot
from bgbot.play.match import play_match
from bgbot.play.pit import PitConfig, run_pit
from bgbot.play.table import forfeit_points, play_game
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState, crawford_game, cube_available
from bgbot.rules.position import Position

LENGTHS = (1, 2, 3, 5, 7)


class _Watch(BaseBot):
    """Wraps a bot and keeps every cube question it was asked (the state of each)."""

    def __init__(self, inner: BaseBot) -> None:
        self.inner = inner
        self.name = inner.name
        self.asked: list[MatchState] = []

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        return self.inner.move(pos, dice, state)

    def double(self, pos: Position, state: MatchState) -> bool:
        self.asked.append(state)
        return self.inner.double(pos, state)

    def take(self, pos: Position, state: MatchState) -> bool:
        return self.inner.take(pos, state)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(bearoff=False)


def test_the_crawford_game_rule() -> None:
    assert not crawford_game(1, (0, 0), False)  # a 1-point match has none
    assert crawford_game(2, (1, 0), False) and not crawford_game(2, (1, 0), True)
    assert not crawford_game(7, (5, 4), False) and crawford_game(7, (6, 4), False)
    with pytest.raises(ValueError, match="1-point match has no Crawford game"):
        MatchState(match_length=1, crawford=True)


def test_the_dead_cube_rule_follows_gnubg() -> None:
    # 1-point match: dead for both from the start
    assert not cube_available(1, (0, 0), 1, -1, 0, False) and not cube_available(1, (0, 0), 1, -1, 1, False)
    # post-Crawford: the leader (1-away) never doubles, the trailer does
    assert not cube_available(5, (4, 2), 1, -1, 0, False) and cube_available(5, (4, 2), 1, -1, 1, False)
    # a cube that already gives its owner the match is dead for him: 3-away owning a 4-cube
    assert not cube_available(7, (4, 0), 4, 0, 0, False) and cube_available(7, (4, 0), 2, 0, 0, False)
    assert not cube_available(7, (6, 3), 1, -1, 1, True)  # the Crawford game
    assert not cube_available(7, (0, 0), 2, 1, 0, False)  # the opponent's cube
    assert cube_available(0, (0, 0), 32, 0, 0, False) and not cube_available(0, (0, 0), 64, 0, 0, False)


def test_forfeit_points_never_exceed_what_the_match_needs() -> None:
    assert forfeit_points(1, 3, 1, 0) == 1  # a 1-point match: a single game's worth, no "3 points"
    assert forfeit_points(1, 3, 7, 0) == 3  # far from the end: the whole backgammon
    assert forfeit_points(2, 3, 3, 1) == 2  # 2-away at a 2-cube: one cube is enough
    assert forfeit_points(1, 3, 5, 2) == 3 and forfeit_points(1, 3, 5, 3) == 2
    assert forfeit_points(4, 3) == 12 and forfeit_points(4, 2) == 8  # money: the most the game could cost


@pytest.mark.parametrize("length", LENGTHS)
def test_matches_of_every_length_end_without_forfeit_and_read_back(
    length: int, engine: Engine, tmp_path: Path
) -> None:
    a = _Watch(BgbotBot(engine, ply=1))
    b = _Watch(RandomBot(length, double=0.5, take=0.6))
    m = play_match((a, b), length, lambda g: np.random.default_rng([length, g]))
    assert m.winner is not None and max(m.score) >= length > min(m.score)
    assert all(g.fault is None and g.how in ("played", "dropped") for g in m.games), [g.fault for g in m.games]
    crawford = [g.crawford for g in m.games]
    if length == 1:
        assert crawford == [False] * len(m.games)
    # the Crawford game comes right after the first game that brings a side to length - 1
    score = [0, 0]
    seen = False
    for g in m.games:
        assert g.crawford == crawford_game(length, (score[0], score[1]), seen)
        seen = seen or g.crawford
        score[g.winner] += g.points  # type: ignore[index]
    # nobody is asked to turn a dead cube (1-point match, Crawford game, post-Crawford leader, cube that wins)
    for st in a.asked + b.asked:
        assert st.may_double, st
    if length == 1:
        assert not a.asked and not b.asked
    # the record reads back with the same score and winner, as .mat and as .sgf
    rec = match_from_games(m.games, ("bgbot", "random"), length)
    for suffix in ("mat", "sgf"):
        back = read_match(write_match(tmp_path / f"m{length}.{suffix}", rec))
        assert back == rec and back.score == m.score and back.winner == m.winner
        assert [g.crawford for g in back.games] == crawford


def test_a_1_point_match_forfeit_is_written_as_one_point(engine: Engine) -> None:
    class Broken(BaseBot):
        name = "broken"

        def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
            raise EngineError("the engine died")

    m = play_match((Broken(), PubevalBot()), 1, lambda g: np.random.default_rng([5, g]))
    (g,) = m.games
    assert g.how == "forfeit" and g.winner == 1 and g.points == 1 and m.score == (0, 1)
    text = format_mat(m.games, ("broken", "pubeval"), 1)
    assert "Wins 1 point\n" in text and "Wins 3" not in text


def test_a_1_point_match_in_the_pit_has_no_forfeit() -> None:
    report = run_pit("bgbot:ply=1", "pubeval", PitConfig(games=4, match_length=1, seed=0))
    assert report.forfeits == {"A": 0, "B": 0}
    assert report.matches is not None and report.matches["played"] == 4


def test_a_1_point_match_analyses(engine: Engine, tmp_path: Path) -> None:
    m = play_match((BgbotBot(engine, ply=1), PubevalBot()), 1, lambda g: np.random.default_rng([9, g]))
    rec = read_match(write_match(tmp_path / "one.mat", match_from_games(m.games, ("bgbot", "pubeval"), 1)))
    a = engine.analyse(rec, 1, luck=False)
    assert a.players[0].total_error < 1e-9  # bgbot played its own 1-ply choices, scored at the 1-point match


def test_a_gnubg_1_point_record_reads_with_no_crawford_game() -> None:
    """gnubg's export of a 1-point match (``post-Crawford play`` from the start): its game is not the Crawford one."""
    text = (
        " 1 point match\n\n Game 1\n gnubg : 0                      root : 0\n"
        "  1)                             21: 13/11 24/23\n"
        "  2) 52: 13/8 24/22              63: 8/5 11/5\n"
    )
    from bgbot.formats.records import parse_match

    rec = parse_match(text, "mat", "one.mat")
    assert rec.length == 1 and not rec.games[0].crawford and rec.games[0].how == "unfinished"


# ---------------------------------------------------------------------------
# gnubg imports the records with the right score and winner
# ---------------------------------------------------------------------------


def _gnubg() -> str:
    from bgbot.play.bots.gnubg import find_gnubg

    try:
        return find_gnubg()
    except EngineError as exc:
        pytest.fail(str(exc))


@pytest.mark.gnubg
@pytest.mark.parametrize("length", LENGTHS)
def test_gnubg_imports_matches_of_every_length_with_the_right_score(length: int, engine: Engine,
                                                                    tmp_path: Path) -> None:
    m = play_match((BgbotBot(engine, ply=1), RandomBot(length, double=0.5, take=0.6)), length,
                   lambda g: np.random.default_rng([100 + length, g]))
    mat = tmp_path / f"m{length}.mat"
    write_match(mat, match_from_games(m.games, ("bgbot", "random"), length))
    proc = subprocess.run([_gnubg(), "-t", "-q", "-r"], input=f"import mat {mat}\nshow score\n", text=True,
                          capture_output=True, timeout=120)
    out = proc.stdout + proc.stderr
    found = re.findall(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+) \(match to (\d+) points?", out)
    assert found, out[-2000:]
    n_games, name0, s0, name1, s1, to = found[-1]
    assert (name0, name1) == ("bgbot", "random") and int(to) == length and int(n_games) == len(m.games)
    # gnubg adds up the points as they were scored; the match winner is the side that reached the length
    assert (int(s0), int(s1)) == m.score
    assert (int(s0) >= length) == (m.winner == 0) and (int(s1) >= length) == (m.winner == 1)


@pytest.mark.gnubg
def test_gnubg_imports_a_forfeited_1_point_match_with_one_point_to_the_winner(tmp_path: Path) -> None:
    class Broken(BaseBot):
        name = "broken"

        def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
            raise EngineError("the engine died")

    g = play_game((Broken(), PubevalBot()), np.random.default_rng(5), match_length=1)
    assert g.how == "forfeit" and g.points == 1
    mat = tmp_path / "forfeit.mat"
    write_match(mat, match_from_games([g], ("broken", "pubeval"), 1))
    proc = subprocess.run([_gnubg(), "-t", "-q", "-r"], input=f"import mat {mat}\nshow score\n", text=True,
                          capture_output=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert re.search(r"The score \(after 1 game\) is: broken 0, pubeval 1 \(match to 1 point", out), out[-2000:]


# ---------------------------------------------------------------------------
# a record is read no further than MAX_RECORD_BYTES
# ---------------------------------------------------------------------------


def test_an_endless_record_is_refused_without_reading_it_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bgbot.cli.main import main
    from bgbot.errors import RecordError
    from bgbot.formats.records import MAX_RECORD_BYTES

    assert MAX_RECORD_BYTES == 8 * 1024 * 1024
    endless = tmp_path / "endless.mat"
    endless.symlink_to("/dev/zero")  # never ends: stat() says 0 bytes, a read goes on for ever
    with pytest.raises(RecordError, match=r"endless\.mat.*more than 8,388,608 bytes"):
        read_match(endless)
    big = tmp_path / "big.mat"
    line = "  1) 21: 13/11 24/23              63: 8/5 11/5\n"
    big.write_text(" 7 point match\n\n Game 1\n a : 0   b : 0\n" + line * (MAX_RECORD_BYTES // len(line) + 1))
    assert main(["analyse", str(big)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "big.mat" in err and "too big for a game record" in err
