"""The Open Sage (``bgsage``) adapter: board conversion, legal moves, cube decisions, pits and specs.

bgsage is part of the ``ref`` extra that CI installs: when it is missing these
tests fail with the install hint (they are not skipped).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import read_jsonl

from bgbot.errors import ConfigError, EngineError
from bgbot.play.bots import make_bot, parse_bot_spec
from bgbot.play.bots.bgsage import (
    INSTALL_HINT,
    BgsageBot,
    cube_kwargs,
    from_bgsage,
    require_bgsage,
    result_from_bgsage,
    to_bgsage,
)
from bgbot.play.pit import PitConfig, run_pit
from bgbot.play.table import Rules
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors
from bgbot.rules.position import Position

REPO = Path(__file__).resolve().parents[1]
MONEY = MatchState()


@pytest.fixture(scope="module")
def sage() -> Any:
    """The bgsage module; a missing package fails here with bgbot's install hint."""
    return require_bgsage()


@pytest.fixture(scope="module")
def bots(sage: Any) -> dict[int, BgsageBot]:
    return {1: BgsageBot(1), 2: BgsageBot(2)}


@pytest.fixture(scope="module")
def checker_rows() -> list[dict]:
    rows = read_jsonl("benchmark/checker.jsonl")
    assert len(rows) == 400
    return rows


# ---------------------------------------------------------------------------
# boards
# ---------------------------------------------------------------------------


def test_board_conversion_puts_the_opponents_bar_positive_and_round_trips() -> None:
    # given checkers of both sides on the bar
    pos = Position.from_points({25: 2, 6: 5, 8: 3, 13: 3, 24: 2}, {25: 1, 6: 5, 8: 3, 13: 4, 24: 2})
    # when converted to bgsage's layout
    board = to_bgsage(pos)
    # then only slot 0 changes sign (bgsage counts the opponent's bar positive)
    assert board[0] == 1 and board[25] == 2 and board[1:25] == list(pos.board[1:25])
    assert from_bgsage(board) == pos
    assert result_from_bgsage(board) == pos.swap()


def test_bgsage_legal_moves_are_gnubgs_on_every_oracle_line(sage: Any) -> None:
    # every line of gnubg's move-generation oracle plus the benchmark positions
    rows = read_jsonl("movegen/oracle.jsonl") + read_jsonl("benchmark/checker.jsonl")
    for r in rows:
        pos = Position.from_id(r["position"])
        got = {result_from_bgsage(b) for b in sage.possible_moves(to_bgsage(pos), *r["dice"])}
        if "results" in r:
            expected = {Position.from_id(i) for i in r["results"]}
        else:
            expected = set(successors(pos, r["dice"]))
            assert len(expected) == r["n_legal"]
        if not expected:
            # bgsage answers a roll that cannot be played with the board unchanged: bgbot's pass
            assert got == {pos.swap()}, r
        else:
            assert got == expected, r


# ---------------------------------------------------------------------------
# checker play
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ply", [1, 2])
def test_the_adapter_always_plays_a_legal_move_and_plays_well(
    bots: dict[int, BgsageBot], checker_rows: list[dict], ply: int
) -> None:
    bot = bots[ply]
    losses, gnubg0 = [], []
    for r in checker_rows:
        pos = Position.from_id(r["position"])
        result = bot.move(pos, tuple(r["dice"]), MONEY)
        assert result in set(successors(pos, r["dice"])), (r["position"], r["dice"], result.gnubg_id())
        eqs = {m["result"]: m["equity"] for m in r["moves"]}
        worst = min(eqs.values())  # a choice outside the 40 listed moves counts at the worst listed equity
        if r["n_legal"] <= len(r["moves"]):
            assert result.gnubg_id() in eqs
        losses.append(r["moves"][0]["equity"] - eqs.get(result.gnubg_id(), worst))
        gnubg0.append(r["moves"][0]["equity"] - eqs.get(r["gnubg0_choice"], worst))
    # a board mirrored or read from the wrong side would lose tenths of a point per move;
    # a sound conversion keeps bgsage within a few times gnubg's own 0-ply error against gnubg 2-ply
    assert statistics.fmean(losses) < 3 * statistics.fmean(gnubg0)


def test_ranked_lists_every_legal_result_once_best_first(bots: dict[int, BgsageBot]) -> None:
    pos = Position.start()
    ranked = bots[1].ranked(pos, (3, 1))
    assert sorted(p.gnubg_id() for p in ranked) == sorted(p.gnubg_id() for p in successors(pos, (3, 1)))
    assert ranked[0] == bots[1].move(pos, (3, 1), MONEY)


def test_a_roll_that_cannot_be_played_passes(bots: dict[int, BgsageBot]) -> None:
    # given the side on roll on the bar against a closed board
    pos = Position.from_points({25: 1, 6: 5, 8: 3, 13: 6}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    assert successors(pos, (6, 6)) == []
    for bot in bots.values():
        assert bot.move(pos, (6, 6), MONEY) == pos.swap()


def test_cubeful_checker_play_is_legal_at_a_match_score(sage: Any, checker_rows: list[dict]) -> None:
    bot = BgsageBot(1, cubeful=True)
    state = MatchState(match_length=5, score=(3, 1), cube_value=2, cube_owner=1, on_roll=0)
    for r in checker_rows[:40]:
        pos = Position.from_id(r["position"])
        assert bot.move(pos, tuple(r["dice"]), state) in set(successors(pos, r["dice"]))


# ---------------------------------------------------------------------------
# cube
# ---------------------------------------------------------------------------


def test_cube_arguments_are_from_the_side_on_roll() -> None:
    # given player 1 on roll at 2-5 in a 7-point match, owning a 2-cube
    state = MatchState(match_length=7, score=(2, 5), on_roll=1, cube_value=2, cube_owner=1)
    # then it is 2-away against 5-away and owns the cube ("player" in bgsage's words)
    kw = cube_kwargs(state)
    assert (kw["away1"], kw["away2"], kw["cube_owner"], kw["cube_value"]) == (2, 5, "player", 2)
    assert not kw["jacoby"] and not kw["beaver"]
    money = cube_kwargs(MatchState(cube_value=4, cube_owner=0, on_roll=1, jacoby=True))
    assert (money["away1"], money["away2"], money["cube_owner"], money["jacoby"]) == (0, 0, "opponent", True)


def test_one_ply_cube_equals_bgsages_public_cube_action(sage: Any, bots: dict[int, BgsageBot]) -> None:
    rows = read_jsonl("benchmark/cube.jsonl")[::25]
    analyzer = sage.BgBotAnalyzer(eval_level="1ply")
    states = [
        MatchState(),
        MatchState(cube_value=2, cube_owner=0),
        MatchState(match_length=7, score=(4, 2), cube_value=2, cube_owner=1, on_roll=1),
    ]
    for r, state in zip(rows, states * len(rows), strict=False):
        pos = Position.from_id(r["position"])
        mine = bots[1].decision(pos, state)
        ref = analyzer.cube_action(to_bgsage(pos), **cube_kwargs(state))
        assert (mine.should_double, mine.should_take) == (ref.should_double, ref.should_take)
        for name in ("equity_nd", "equity_dt", "equity_dp"):
            assert getattr(mine, name) == pytest.approx(getattr(ref, name), abs=1e-6)


@pytest.mark.parametrize("ply", [1, 2])
def test_cube_decisions_mostly_agree_with_gnubg_2ply(bots: dict[int, BgsageBot], ply: int) -> None:
    rows = read_jsonl("benchmark/cube.jsonl")
    doubles = takes = 0
    for r in rows:
        pos = Position.from_id(r["position"])
        state = MatchState(cube_value=r["cube"]["value"], cube_owner=-1 if r["cube"]["owner"] == "center" else 0)
        bot = bots[ply]
        d = bot.decision(pos, state)
        assert bot.double(pos, state) == d.should_double
        offered = MatchState(cube_value=state.cube_value, cube_owner=state.cube_owner, doubled=True)
        assert bot.take(pos, offered) == d.should_take
        doubles += d.should_double == (r["decision"] in ("double_take", "double_pass"))
        takes += d.should_take == (r["decision"] in ("no_double", "double_take", "too_good_take"))
    # another network and Janowski's cube model: close to gnubg, not identical
    assert doubles >= 0.85 * len(rows) and takes >= 0.9 * len(rows)


# ---------------------------------------------------------------------------
# pits and specs
# ---------------------------------------------------------------------------


def test_a_short_pit_against_pubeval_runs_to_the_end(sage: Any) -> None:
    r = run_pit("bgsage:ply=1", "pubeval", PitConfig(games=20, rules=Rules(cube=False)))
    assert r.games == 20 and r.forfeits == {"A": 0, "B": 0} and not r.stopped and r.unfinished == 0
    assert r.ppg > 0  # a strong network beats pubeval over 10 duplicate pairs


def test_a_cubeful_match_pit_asks_bgsage_to_double_and_take(sage: Any) -> None:
    r = run_pit("bgsage:ply=1", "random:double=0.5", PitConfig(games=4, match_length=3, seed=2))
    assert r.forfeits == {"A": 0, "B": 0} and not r.stopped
    assert r.cube["B"]["doubles"] > 0 and r.cube["A"]["takes"] + r.cube["A"]["drops"] == r.cube["B"]["doubles"]


def test_specs_build_bgsage_bots_at_each_ply(sage: Any) -> None:
    s = parse_bot_spec("bgsage:ply=2,cube_ply=1,cubeful=on")
    assert (s.kind, s.get("ply"), s.get("cube_ply"), s.get("cubeful")) == ("bgsage", 2, 1, True)
    bot = make_bot("bgsage:ply=2")
    assert isinstance(bot, BgsageBot) and (bot.ply, bot.cube_ply, bot.name) == (2, 2, "bgsage:ply=2")


@pytest.mark.parametrize(
    "spec, phrase",
    [("bgsage:depth=2", "unknown option 'depth'"), ("bgsage:ply=two", "not an int"), ("bgsage:ply", "KEY=VALUE")],
)
def test_bad_specs_raise_quoting_the_spec(spec: str, phrase: str) -> None:
    with pytest.raises(ConfigError, match=phrase) as info:
        parse_bot_spec(spec)
    assert repr(spec) in str(info.value)


@pytest.mark.parametrize("spec", ["bgsage:ply=0", "bgsage:ply=4", "bgsage:cube_ply=9"])
def test_plies_out_of_range_raise_before_any_game(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"bgsage (cube_)?ply must be 1\.\.3"):
        make_bot(spec)
    with pytest.raises(ConfigError, match=r"must be 1\.\.3"):
        run_pit(spec, "pubeval", PitConfig(games=2, rules=Rules(cube=False)))


def test_a_missing_bgsage_raises_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bgsage", None)  # import bgsage now raises ImportError
    with pytest.raises(EngineError, match="pip install bgsage"):
        make_bot("bgsage:ply=1")
    with pytest.raises(EngineError, match="pip install bgsage"):
        run_pit("bgsage", "pubeval", PitConfig(games=2, rules=Rules(cube=False)))
    assert "pip install bgsage" in INSTALL_HINT


def test_bgbot_never_imports_bgsage_by_itself() -> None:
    code = (
        "import sys, bgbot.play.bots, bgbot.play.pit, bgbot.cli.main; "
        "print('bgsage' in sys.modules, 'gnubg_nn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
