"""Random play: invariants at every step of thousands of games, and the one turn loop played cubeless."""

from __future__ import annotations

import numpy as np
import pytest

from bgbot.errors import ConfigError, IllegalMoveError, InvalidPositionError
from bgbot.play.bots import Bot, RandomBot
from bgbot.play.table import GameResult, Rules, check_move, play_game
from bgbot.rules.dice import Dice, opening_roll
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position, game_points

N_GAMES = 2000
TURN_LIMIT = 3000  # random games last a few hundred turns at most; this only guards against a hang


def _mover_pips(boards: np.ndarray) -> np.ndarray:
    """Pips of the side on roll for each row (slot i is i pips away, the bar 25)."""
    return (np.clip(boards, 0, None).astype(np.int64) * np.arange(26)).sum(axis=1)


def _opp_pips(boards: np.ndarray) -> np.ndarray:
    """Pips of the opponent for each row (slot i is 25 - i pips away from its off tray)."""
    return (np.clip(-boards, 0, None).astype(np.int64) * (25 - np.arange(26))).sum(axis=1)


def _loss_kind_from_winner_view(winner_view: np.ndarray) -> int:
    """1/2/3 for the loser, read from the winner's side (winner positive, loser negative)."""
    loser_on_board = -winner_view[winner_view < 0].sum()
    if loser_on_board < 15:
        return 1
    # the loser's bar is slot 0 of the winner's view, the winner's home board slots 1..6
    return 3 if (winner_view[0:7] < 0).any() else 2


def test_random_play_in_lock_step_keeps_every_invariant() -> None:
    rng = np.random.default_rng(20261129)
    start = Position.start().array()
    boards = np.tile(start, (N_GAMES, 1))  # (G, 26), each from its side on roll's view
    on_roll = np.empty(N_GAMES, dtype=np.int64)  # player 0/1 on roll in each game
    dice = np.empty((N_GAMES, 2), dtype=np.int64)
    for g in range(N_GAMES):
        first, opening, _ = opening_roll(rng)
        on_roll[g] = first
        dice[g] = opening
    borne_off = np.zeros((N_GAMES, 2), dtype=np.int64)  # per player, tracked independently
    live = np.arange(N_GAMES)
    kinds: list[int] = []
    turns = np.zeros(N_GAMES, dtype=np.int64)

    for _turn in range(TURN_LIMIT):
        if live.size == 0:
            break
        before = boards[live]  # (L, 26)
        d = dice[live]  # (L, 2)
        succ, parent = successors_batch(before, d)  # include_pass: every game gets >= 1 row
        counts = np.bincount(parent, minlength=live.size)
        assert counts.min() >= 1
        first_row = np.concatenate(([0], np.cumsum(counts)[:-1]))
        after = succ[first_row + (rng.random(live.size) * counts).astype(np.int64)]  # (L, 26) opp. view

        # bar signs and per-slot sanity (a point is held by one side by construction of the layout)
        assert (after[:, 25] >= 0).all() and (after[:, 0] <= 0).all()
        assert (np.abs(after.astype(np.int64)) <= 15).all()

        mover_before = np.clip(before, 0, None).sum(axis=1, dtype=np.int64)
        opp_before = -np.clip(before, None, 0).sum(axis=1, dtype=np.int64)
        mover_after = -np.clip(after, None, 0).sum(axis=1, dtype=np.int64)  # the mover is negative now
        opp_after = np.clip(after, 0, None).sum(axis=1, dtype=np.int64)
        # a hit sends a checker to the bar, it never leaves the game
        np.testing.assert_array_equal(opp_after, opp_before)
        off_now = mover_before - mover_after
        doubles = d[:, 0] == d[:, 1]
        assert (off_now >= 0).all() and (off_now <= np.where(doubles, 4, 2)).all()
        # after bearing off, every remaining checker of the mover is in its home board
        # (its points 1..6 are slots 19..24 of the opponent's view)
        outside = np.clip(-after[:, 0:19], 0, None).sum(axis=1)
        assert (outside[off_now > 0] == 0).all()

        rows = np.arange(live.size)
        borne_off[live, on_roll[live]] += off_now
        borne_off_opp = borne_off[live, 1 - on_roll[live]]
        np.testing.assert_array_equal(mover_after + borne_off[live, on_roll[live]], 15)
        np.testing.assert_array_equal(opp_after + borne_off_opp, 15)

        # a move spends at most the pips rolled, the opponent only loses ground by being hit
        rolled = np.where(doubles, 4 * d[:, 0], d[:, 0] + d[:, 1])
        spent = _mover_pips(before) - _opp_pips(after)
        assert (spent >= 0).all() and (spent <= rolled).all()
        passed = (after == -before[:, ::-1]).all(axis=1)
        assert (spent[~passed] > 0).all()
        assert (_opp_pips(before) <= _mover_pips(after)).all()
        assert (counts[passed] == 1).all()

        turns[live] += 1
        over = mover_after == 0
        for i in rows[over]:
            final = Position.from_array(after[i])
            kind = -final.result()
            assert kind == _loss_kind_from_winner_view(-after[i][::-1])
            kinds.append(kind)
        boards[live] = after
        on_roll[live] = 1 - on_roll[live]
        dice[live] = rng.integers(1, 7, size=(live.size, 2))
        live = live[~over]

    assert live.size == 0, f"{live.size} games still running after {TURN_LIMIT} turns"
    assert len(kinds) == N_GAMES
    assert set(kinds) <= {1, 2, 3}
    # random play produces all three kinds of result in a few thousand games
    assert {1, 2, 3} <= set(kinds)
    assert turns.max() < TURN_LIMIT


# ---------------------------------------------------------------------------
# opening roll
# ---------------------------------------------------------------------------


def test_opening_roll_is_never_a_double_and_the_higher_die_starts() -> None:
    rng = np.random.default_rng(7)
    firsts, ties = [], []
    for _ in range(20_000):
        first, (d1, d2), t = opening_roll(rng)
        assert first in (0, 1)
        assert 1 <= d2 < d1 <= 6
        firsts.append(first)
        ties.append(t)
    # a tie has probability 1/6, so the number of ties before the first unequal roll averages 0.2
    assert abs(np.mean(ties) - 0.2) < 0.03
    assert abs(np.mean(firsts) - 0.5) < 0.02
    assert max(ties) >= 2


def test_opening_roll_draws_one_die_each_and_counts_the_ties() -> None:
    rng = np.random.default_rng(3)
    first, dice, ties = opening_roll(rng)
    replay = np.random.default_rng(3)
    pairs = [tuple(int(x) for x in replay.integers(1, 7, size=2)) for _ in range(ties + 1)]
    assert all(a == b for a, b in pairs[:-1]) and pairs[-1][0] != pairs[-1][1]
    a, b = pairs[-1]
    assert first == (0 if a > b else 1)
    assert dice == (max(a, b), min(a, b))


# ---------------------------------------------------------------------------
# play_game
# ---------------------------------------------------------------------------


def _cubeless(p0: Bot, p1: Bot, seed: int, *, start: Position | None = None, **rules: object) -> GameResult:
    return play_game((p0, p1), np.random.default_rng(seed), Rules(cube=False, **rules), start=start)  # type: ignore[arg-type]


def _game(seed: int, p0_seed: int = 1, p1_seed: int = 2, **kw: object) -> GameResult:
    return _cubeless(RandomBot(p0_seed), RandomBot(p1_seed), seed, **kw)  # type: ignore[arg-type]


def test_random_bot_is_a_bot_and_plays_legal_moves() -> None:
    player = RandomBot(0)
    assert isinstance(player, Bot)
    pos = Position.start()
    legal = successors(pos, (6, 5))
    assert {player.move(pos, (6, 5), MatchState()) for _ in range(200)} == set(legal)


def test_same_seed_same_game_and_other_seeds_other_games() -> None:
    a, b = _game(11), _game(11)
    assert a.actions == b.actions and a.points == b.points and a.winner == b.winner
    assert len(a.moves) == a.turns
    others = {_game(s).moves for s in range(12, 17)}
    assert a.moves not in others and len(others) == 5


def test_dice_come_only_from_the_game_generator() -> None:
    # other players (other choices) see the same opening roll and the same dice sequence
    a, b = _game(5, 1, 2), _game(5, 3, 4)
    opening = (a.first_player, a.opening_dice, a.opening_ties)
    assert opening == (b.first_player, b.opening_dice, b.opening_ties)
    n = min(a.turns, b.turns)
    assert [t.dice for t in a.moves[:n]] == [t.dice for t in b.moves[:n]]
    assert [t.result for t in a.moves[:n]] != [t.result for t in b.moves[:n]]


@pytest.mark.parametrize("seed", range(40))
def test_game_record_is_a_consistent_chain(seed: int) -> None:
    g = _game(seed)
    assert g.how == "played" and g.winner in (0, 1)
    first = g.moves[0]
    d1, d2 = g.opening_dice
    assert d1 > d2 and first.dice == g.opening_dice and first.player == g.first_player
    assert first.position == Position.start()
    # the opening move plays both dice: the mover's pips drop by exactly d1 + d2
    assert first.result.pips()[1] == 167 - (d1 + d2)
    for prev, turn in zip(g.moves, g.moves[1:], strict=False):
        assert turn.position == prev.result
        assert turn.player == 1 - prev.player
        legal = successors(turn.position, turn.dice)
        assert turn.result in legal if legal else turn.result == turn.position.swap()
    last = g.moves[-1]
    assert last.player == g.winner and last.result == g.final
    assert g.final.off()[1] == 15
    assert g.kind == -g.final.result()
    assert g.points == g.kind


def test_results_cover_singles_gammons_and_backgammons_and_the_two_point_backgammon_option() -> None:
    kinds = set()
    for seed in range(60):
        std = _cubeless(RandomBot(seed), RandomBot(seed + 1000), seed)
        two = _cubeless(RandomBot(seed), RandomBot(seed + 1000), seed, backgammon_counts=2)
        assert two.kind == std.kind and two.winner == std.winner
        assert std.points == std.kind
        assert two.points == min(std.kind, 2)
        kinds.add(std.kind)
    assert kinds == {1, 2, 3}


def test_max_turns_stops_an_unfinished_game() -> None:
    g = _game(1, max_turns=3)
    assert g.how == "unfinished" and g.winner is None and g.points == 0 and g.turns == 3
    assert g.final == g.moves[-1].result and len(g.moves) == 3


def test_play_game_from_a_given_start_position() -> None:
    # a race where each side needs one roll: whoever starts bears off and wins a single game
    start = Position.from_points({1: 2}, {1: 2})
    for seed in range(10):
        g = _cubeless(RandomBot(0), RandomBot(1), seed, start=start)
        # the loser has borne off 13 checkers already: a single game
        assert (g.winner, g.turns, g.kind, g.points) == (g.first_player, 1, 1, 1)


# ---------------------------------------------------------------------------
# the referee
# ---------------------------------------------------------------------------


class _Returns(RandomBot):
    """A bot that answers with a fixed function of what it is shown, and remembers it."""

    def __init__(self, answer: object) -> None:
        super().__init__(0, name="cheat")
        self.answer = answer
        self.seen: list[tuple[Position, Dice]] = []

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        self.seen.append((pos, dice))
        return self.answer(pos) if callable(self.answer) else self.answer  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (lambda pos: pos, "illegal move"),  # did not move at all
        (lambda pos: successors(pos, (6, 6))[0] if pos == Position.start() else pos, "illegal move"),
        (None, "not a Position"),
        ("24/18 13/11", "not a Position"),
    ],
)
def test_an_illegal_answer_forfeits_naming_position_and_dice(answer: object, phrase: str) -> None:
    cheat = _Returns(answer)
    g = play_game((cheat, cheat), np.random.default_rng(0), Rules(cube=False))
    pos, dice = cheat.seen[-1]
    assert g.how == "forfeit" and g.fault is not None
    message = g.fault.message
    assert phrase in message
    assert repr(dice) in message
    assert repr(pos.gnubg_id()) in message
    # every answer above is wrong on the opening move, made by the winner of the opening roll
    first, _, _ = opening_roll(np.random.default_rng(0))
    assert pos == Position.start() and len(cheat.seen) == 1
    assert f"player {first}" in message
    assert g.fault.player == first and g.winner == 1 - first and g.points == 3  # cube 1 x backgammon


def test_a_result_from_the_wrong_side_gets_a_hint() -> None:
    pos = Position.start()
    legal = successors_batch(pos.array()[None, :], (3, 1))[0]
    wrong_view = successors(pos, (3, 1))[0].swap()
    with pytest.raises(IllegalMoveError, match="opponent's view"):
        check_move(pos, (3, 1), wrong_view, legal, "player 0")
    assert check_move(pos, (3, 1), wrong_view.swap(), legal, "player 0") == wrong_view.swap()


def test_the_loop_passes_without_asking_when_nothing_can_be_played() -> None:
    # two checkers on the bar against a closed board: the side on the bar cannot enter on any 6
    pos = Position.from_points({25: 2, 6: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    asked = _Returns(None)
    seed = next(s for s in range(200) if 6 in opening_roll(np.random.default_rng(s))[1])
    first, _, _ = opening_roll(np.random.default_rng(seed))
    bots = (asked, RandomBot(1)) if first == 0 else (RandomBot(1), asked)
    g = play_game(bots, np.random.default_rng(seed), Rules(cube=False, max_turns=1), start=pos)
    assert g.moves[0].result == pos.swap() and asked.seen == []


# ---------------------------------------------------------------------------
# scoring and options
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "cube", "kw", "points"),
    [
        (1, 1, {}, 1),
        (2, 1, {}, 2),
        (3, 1, {}, 3),
        (3, 1, {"backgammon_counts": 2}, 2),
        (2, 4, {}, 8),
        (3, 2, {"backgammon_counts": 2}, 4),
        (3, 1, {"jacoby": True}, 1),
        (2, 2, {"jacoby": True, "cube_turned": True}, 4),
        (1, 64, {}, 64),
    ],
)
def test_game_points(kind: int, cube: int, kw: dict[str, object], points: int) -> None:
    assert game_points(kind, cube, **kw) == points  # type: ignore[arg-type]


def test_bad_options_are_config_errors_quoting_the_value() -> None:
    with pytest.raises(ConfigError, match="4"):
        _game(0, backgammon_counts=4)
    with pytest.raises(ConfigError, match="0"):
        _game(0, max_turns=0)
    with pytest.raises(InvalidPositionError, match="5"):
        game_points(5)
    with pytest.raises(InvalidPositionError):
        _game(0, start=Position.from_points({}, {1: 2}))
