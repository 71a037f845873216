"""Chouette: initial order, rotation, consultation, the team's and the box's doubles, settlement, the CLI.

Scripted dice (a stand-in for ``numpy.random.Generator`` that deals listed
values, then real random ones) and scripted bots make each rule visible in
a game of a few turns; short pubeval/random sessions check the invariants
(zero-sum, rotation chain) over whole games.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from bgbot.cli.main import main
from bgbot.errors import ConfigError, EngineError
from bgbot.play.bots import BaseBot, make_bot
from bgbot.play.chouette import (
    BOX,
    TEAM,
    ChouetteGameResult,
    initial_order,
    play_chouette,
    play_chouette_game,
    rotate,
)
from bgbot.play.table import Rules
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors
from bgbot.rules.position import Position


class ScriptedDice:
    """Deals the listed die faces first (in the order numpy would draw them), then random ones."""

    def __init__(self, faces: Sequence[int], seed: int = 0) -> None:
        self.faces = list(faces)
        self.rng = np.random.default_rng(seed)

    def integers(self, low: int, high: int, size: int | None = None) -> object:
        count = 1 if size is None else size
        out = [self.faces.pop(0) if self.faces else int(self.rng.integers(low, high)) for _ in range(count)]
        assert all(low <= f < high for f in out)
        return out[0] if size is None else np.array(out)


class Scripted(BaseBot):
    """Plays the ``pick``-th legal result (Python indexing), doubles and takes as told, and logs every question."""

    def __init__(self, name: str, *, pick: int = 0, double: bool = False, take: bool = True) -> None:
        self.name, self.pick, self.doubles, self.takes = name, pick, double, take
        self.calls: list[tuple[str, MatchState]] = []

    def move(self, pos: Position, dice: tuple[int, int], state: MatchState) -> Position:
        self.calls.append(("move", state))
        legal = successors(pos, dice)
        return legal[self.pick % len(legal)]

    def double(self, pos: Position, state: MatchState) -> bool:
        self.calls.append(("double", state))
        return self.doubles

    def take(self, pos: Position, state: MatchState) -> bool:
        self.calls.append(("take", state))
        return self.takes

    def asked(self, what: str) -> int:
        return sum(1 for kind, _ in self.calls if kind == what)


def member_points(res: ChouetteGameResult) -> list[int]:
    return [s.points for s in res.settlements]


# the side on roll bears off its last two checkers from its 1-point with any roll; the other side has
# none off: 15 checkers on its own 6-point (a gammon) or on its 20-point, in the winner's home (a backgammon)
GAMMON_START = Position.from_points({1: 2}, {6: 15})
BACKGAMMON_START = Position.from_points({1: 2}, {20: 15})


# ---------------------------------------------------------------------------
# initial order and rotation
# ---------------------------------------------------------------------------


def test_initial_order_highest_die_is_box_and_ties_reroll_among_the_tied_only() -> None:
    # seats roll 3 5 3 6: seat 3 is in the box, seat 1 captain; seats 0 and 2 tied and roll again (2, 4)
    order, rolls = initial_order(4, ScriptedDice([3, 5, 3, 6, 2, 4]))  # type: ignore[arg-type]
    assert order == (3, 1, 2, 0)
    assert rolls == (((0, 3), (1, 5), (2, 3), (3, 6)), ((0, 2), (2, 4)))


def test_initial_order_ties_at_the_top_and_repeated_ties() -> None:
    # all three tie, then seats 0 and 1 tie again below seat 2, then seat 1 beats seat 0
    order, rolls = initial_order(3, ScriptedDice([4, 4, 4, 2, 2, 5, 1, 6]))  # type: ignore[arg-type]
    assert order == (2, 1, 0)
    assert [len(r) for r in rolls] == [3, 3, 2]


def test_initial_order_from_a_seed_is_reproducible_and_follows_the_dice() -> None:
    for seed in range(20):
        order, rolls = initial_order(5, np.random.default_rng(seed))
        assert sorted(order) == list(range(5))
        assert initial_order(5, np.random.default_rng(seed)) == (order, rolls)
        first = dict(rolls[0])
        faces = [first[s] for s in order]
        assert faces == sorted(faces, reverse=True)  # later rounds only order players within a tied group


def test_rotation_rules() -> None:
    assert rotate((0, 1, 2, 3), box_won=True) == (0, 2, 3, 1)  # box stays, captain to the end
    assert rotate((0, 1, 2, 3), box_won=False) == (1, 2, 3, 0)  # captain into the box, box to the end
    assert rotate((4, 2, 0), box_won=True) == (4, 0, 2)
    with pytest.raises(ConfigError, match=r"\(3,\)"):
        rotate((3,), box_won=True)


def test_session_rotates_after_a_team_win_and_after_a_box_win() -> None:
    # every bot doubles at once and passes every double: whoever is on roll at turn 2 wins a point per member.
    # Order dice 6 4 2 -> (0, 1, 2).  Game 1: opening 5-2, the box moves first, so the team doubles on turn 2
    # and the box passes.  Game 2: opening 1-3, the team moves first, the box doubles and both members pass.
    bots = [Scripted(f"p{i}", double=True, take=False) for i in range(3)]
    dice = ScriptedDice([6, 4, 2, 5, 2, 1, 3])
    res = play_chouette(bots, 2, dice, Rules())  # type: ignore[arg-type]
    g1, g2 = res.games
    assert (g1.order, g1.result.how, g1.result.winner, g1.result.first_player) == ((0, 1, 2), "dropped", "team", BOX)
    assert g1.points == (-2, 1, 1)
    assert g1.next_order == (1, 2, 0)  # captain 1 into the box, old box 0 to the end
    assert (g2.order, g2.result.how, g2.result.winner, g2.result.first_player) == ((1, 2, 0), "passed", "box", TEAM)
    assert g2.points == (-1, 2, -1)
    assert g2.next_order == (1, 0, 2)  # box 1 stays, captain 2 to the end
    assert res.final_order == (1, 0, 2)
    assert res.points == (-3, 3, 0)
    assert res.box_games == (1, 1, 0)


# ---------------------------------------------------------------------------
# settlement
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "jacoby", "kind", "each"),
    [(GAMMON_START, False, 2, 2), (BACKGAMMON_START, False, 3, 3), (GAMMON_START, True, 2, 1)],
)
@pytest.mark.parametrize(("opening", "winner"), [((6, 1), "box"), ((1, 6), "team")])
def test_the_box_settles_the_final_stake_with_every_member(
    start: Position, jacoby: bool, kind: int, each: int, opening: tuple[int, int], winner: str
) -> None:
    box, team = Scripted("box"), [Scripted("a"), Scripted("b"), Scripted("c")]
    res = play_chouette_game(box, team, ScriptedDice(opening), Rules(jacoby=jacoby), start=start)  # type: ignore[arg-type]
    assert (res.how, res.winner, res.kind, res.turns) == ("played", winner, kind, 1)
    sign = 1 if winner == "team" else -1
    assert member_points(res) == [sign * each] * 3
    assert res.box_points == -3 * sign * each
    assert res.box_points + sum(member_points(res)) == 0
    assert res.box_beat_captain is (winner == "box")
    # the bear-off had one legal result: nobody was asked to move
    assert all(bot.asked("move") == 0 for bot in (box, *team))


def test_sessions_are_zero_sum_in_every_game() -> None:
    bots = [
        make_bot("random:double=0.3,take=0.5", seed=1),
        make_bot("random:double=0.6,take=0.6", seed=2),
        make_bot("random:double=0.8,take=0.4", seed=3),
        make_bot("random:double=0.5,take=0.7", seed=4),
    ]
    res = play_chouette(bots, 12, np.random.default_rng(7), Rules(jacoby=True))
    hows = set()
    for g in res.games:
        assert sum(g.points) == 0
        hows.update(s.how for s in g.result.settlements)
    assert [sum(g.points[s] for g in res.games) for s in range(4)] == list(res.points)
    assert sum(res.points) == 0
    assert sum(res.box_games) == 12
    assert {"passed", "played"} <= hows  # the session did exercise the box's doubles


# ---------------------------------------------------------------------------
# the cube
# ---------------------------------------------------------------------------


def test_passers_pay_the_stake_and_leave_while_takers_play_on_at_the_doubled_cube() -> None:
    box = Scripted("box", double=True)
    a, b, c = Scripted("a"), Scripted("b", take=False), Scripted("c")
    res = play_chouette_game(box, [a, b, c], np.random.default_rng(3), Rules())
    assert res.box_doubles == 1 and res.team_doubles == 0
    assert res.settlements[1].points == -1 and res.settlements[1].how == "passed"
    # b was asked nothing after its pass
    assert b.calls[-1][0] == "take"
    assert b.asked("take") == 1
    assert a.asked("take") == 1 and c.asked("take") == 1
    assert (res.how, res.cube, res.cube_owner) == ("played", 2, TEAM)
    final = 2 * res.kind * (1 if res.winner == "team" else -1)
    assert [res.settlements[0].points, res.settlements[2].points] == [final, final]
    assert res.box_points == 1 - 2 * final
    # the doubled cube was seen by the members still playing
    assert any(kind == "move" and st.cube_value == 2 and st.cube_owner == TEAM for kind, st in a.calls)


def test_when_every_member_passes_the_box_wins_the_stake_from_each() -> None:
    box = Scripted("box", double=True)
    team = [Scripted("a", take=False), Scripted("b", take=False), Scripted("c", take=False)]
    res = play_chouette_game(box, team, np.random.default_rng(11), Rules())
    assert (res.how, res.winner, res.cube) == ("passed", "box", 1)
    assert member_points(res) == [-1, -1, -1]
    assert res.box_points == 3


def test_the_team_doubles_only_when_unanimous() -> None:
    box = Scripted("box")
    keen, shy = Scripted("keen", double=True), Scripted("shy", double=False)
    res = play_chouette_game(box, [keen, shy], np.random.default_rng(5), Rules())
    assert res.team_doubles == 0 and res.cube == 1
    assert box.asked("take") == 0
    assert keen.asked("double") > 0 and shy.asked("double") == keen.asked("double")
    # the same position with both members keen: the box is asked, takes, and owns the cube
    box2 = Scripted("box")
    res2 = play_chouette_game(box2, [Scripted("k1", double=True), Scripted("k2", double=True)],
                              np.random.default_rng(5), Rules())
    assert res2.team_doubles == 1 and box2.asked("take") == 1
    assert (res2.cube, res2.cube_owner) == (2, BOX)


def test_the_box_passing_the_teams_double_pays_every_member() -> None:
    box = Scripted("box", take=False)
    team = [Scripted("a", double=True), Scripted("b", double=True), Scripted("c", double=True)]
    res = play_chouette_game(box, team, np.random.default_rng(2), Rules())
    assert (res.how, res.winner) == ("dropped", "team")
    assert member_points(res) == [1, 1, 1] and res.box_points == -3
    assert res.box_beat_captain is False


# ---------------------------------------------------------------------------
# consultation
# ---------------------------------------------------------------------------

OPENING_52 = (2, 5)  # the team (player 1) wins the opening roll and plays 5-2 from the start


@pytest.mark.parametrize(
    ("picks", "played_pick", "proposer", "votes", "overruled"),
    [
        ((0, -1, -1), -1, 1, 2, 1),  # two members agree against the captain: the majority wins
        ((0, 0, -1), 0, 0, 2, 0),
        ((0, -1), 0, 0, 1, 0),  # a tie goes to the captain
        ((0, 1, 2), 0, 0, 1, 0),
        ((0, 1, 2, 1, 2), 1, 1, 2, 1),  # a tie without the captain: the proposal made first in team order
    ],
)
def test_team_moves_by_majority_with_the_captain_breaking_ties(
    picks: tuple[int, ...], played_pick: int, proposer: int, votes: int, overruled: int
) -> None:
    team = [Scripted(f"m{i}", pick=p) for i, p in enumerate(picks)]
    res = play_chouette_game(Scripted("box"), team, ScriptedDice(OPENING_52), Rules(max_turns=1))
    legal = successors(Position.start(), (5, 2))
    assert len({legal[p] for p in picks}) == len(set(picks))  # the picks are really different moves
    (move,) = res.actions
    assert (move.member, move.dice, move.votes) == (proposer, (5, 2), votes)
    assert move.result == legal[played_pick]
    assert (res.consulted, res.overruled) == (1, overruled)
    assert all(m.asked("move") == 1 for m in team)
    assert res.how == "unfinished" and member_points(res) == [0] * len(picks)
    assert res.box_beat_captain is None


# ---------------------------------------------------------------------------
# faults
# ---------------------------------------------------------------------------


class Cheat(Scripted):
    """Answers the position it was given, which is never a legal result."""

    def move(self, pos: Position, dice: tuple[int, int], state: MatchState) -> Position:
        self.calls.append(("move", state))
        return pos


class Dead(Scripted):
    def move(self, pos: Position, dice: tuple[int, int], state: MatchState) -> Position:
        raise EngineError("engine 'dead' stopped answering")


def test_a_faulty_member_forfeits_alone_and_the_team_plays_on() -> None:
    team = [Cheat("cheat"), Scripted("a"), Scripted("b")]
    res = play_chouette_game(Scripted("box"), team, ScriptedDice(OPENING_52, seed=4), Rules())
    assert res.settlements[0].points == -3 and res.settlements[0].how == "forfeit"
    assert res.faults[0].player == 1 and "illegal" in res.faults[0].message
    assert res.how == "played" and res.settlements[1].how == res.settlements[2].how == "played"
    assert [kind for kind, _ in team[0].calls] == ["move"]  # the cheat answered once and was gone
    assert res.box_beat_captain is True
    assert res.box_points + sum(member_points(res)) == 0


def test_a_faulty_box_pays_every_member_the_most_the_game_could_cost() -> None:
    # the box wins the opening roll and must move: its engine is dead
    res = play_chouette_game(Dead("box"), [Scripted("a"), Scripted("b")], ScriptedDice((6, 5)), Rules())
    assert (res.how, res.winner) == ("forfeit", "team")
    assert member_points(res) == [3, 3] and res.box_points == -6
    assert res.faults[0].player == 0 and res.faults[0].engine_failed


# ---------------------------------------------------------------------------
# sessions and the CLI
# ---------------------------------------------------------------------------


def test_a_short_session_with_pubeval_and_random_bots() -> None:
    bots = [make_bot("pubeval"), make_bot("random", seed=1), make_bot("random:double=0.5", seed=2)]
    res = play_chouette(bots, 4, np.random.default_rng(1), Rules())
    assert len(res.games) == 4 and sum(res.box_games) == 4
    assert sorted(res.final_order) == [0, 1, 2]
    assert res.games[0].order == res.initial_order
    for before, after in zip(res.games, res.games[1:], strict=False):
        assert after.order == before.next_order
    for g in res.games:
        assert g.result.how != "unfinished"
        assert g.next_order == rotate(g.order, g.result.box_beat_captain)
    assert res.final_order == res.games[-1].next_order
    assert sum(res.points) == 0
    assert res.names == ("pubeval", "random", "random:double=0.5")


def test_sessions_need_three_players_and_some_games() -> None:
    two = [make_bot("random"), make_bot("pubeval")]
    with pytest.raises(ConfigError, match="at least 3 players, got 2"):
        play_chouette(two, 1, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="got 0"):
        play_chouette([*two, make_bot("random")], 0, np.random.default_rng(0))


def test_cli_prints_totals_box_games_and_the_final_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chouette", "pubeval", "random", "random", "--games", "3", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "chouette: 3 players, 3 games" in out
    assert "box games" in out and "random#2" in out and "random#3" in out
    assert "final order: box " in out

    assert main(["chouette", "pubeval", "random", "random", "--games", "3", "--seed", "2", "--jacoby", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jacoby"] is True and data["specs"] == ["pubeval", "random", "random"]
    assert sum(p["points"] for p in data["players"]) == 0
    assert sum(p["box_games"] for p in data["players"]) == 3 == len(data["games"])
    assert sorted(data["final_order"]) == [0, 1, 2]


@pytest.mark.parametrize(
    ("argv", "phrase"),
    [
        (["pubeval", "random", "chess"], "'chess'"),
        (["pubeval", "random"], "at least 3 players, got 2: 'pubeval random'"),
        (["pubeval", "random", "random", "--games", "0"], "got 0"),
    ],
)
def test_cli_user_mistakes_exit_2_with_one_line(
    argv: list[str], phrase: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chouette", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bgbot: error:") and phrase in err
