"""Cube- and score-aware checker search: match values, the lookahead's choices and the filters.

The references walk rolls and replies one at a time with
:func:`bgbot.rules.moves.legal_moves` and single-row evaluator calls, so they
share nothing with the batched search but the rules and the evaluator.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bgbot.engine.api import Engine
from bgbot.engine.cube import (
    OWNER_COLUMNS,
    InvalidCubeError,
    match_cube_decision,
    match_dead_mwcs,
    match_decision_from_mwcs,
    money_cube_decision,
    money_decision_from_equities,
)
from bgbot.engine.cube_lookahead import (
    NO_SHIFT,
    ONE_ROLL_SHIFT,
    lookahead_money_cubeful,
    match_cube_lookahead,
)
from bgbot.engine.met import DEFAULT_MET, load_met
from bgbot.engine.search import (
    MoveFilter,
    Valuation,
    analyze,
    lookahead_probs,
    rank_successors,
)
from bgbot.eval.evaluate import NetEvaluator, equity, flip_probs
from bgbot.eval.nets import ModelSpec, ValueNet
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.matchstate import CubeState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

MET = load_met(DEFAULT_MET)


@pytest.fixture(scope="module")
def ev() -> NetEvaluator:
    torch.manual_seed(5)
    return NetEvaluator(ValueNet(ModelSpec(hidden=(16,))))


def _random_probs(rng: np.random.Generator, n: int) -> np.ndarray:
    win = rng.uniform(0.05, 0.95, n)
    wg = win * rng.uniform(0, 0.5, n)
    wbg = wg * rng.uniform(0, 0.3, n)
    lg = (1 - win) * rng.uniform(0, 0.5, n)
    lbg = lg * rng.uniform(0, 0.3, n)
    return np.stack([win, wg, wbg, lg, lbg], axis=1)


@pytest.mark.parametrize(("a", "b", "cube", "crawford"), [(1, 1, 1, False), (2, 1, 1, True), (4, 2, 2, False),
                                                          (7, 7, 1, False), (3, 1, 1, False)])
def test_dead_mwc_weighs_every_result_by_the_met(a: int, b: int, cube: int, crawford: bool) -> None:
    p = _random_probs(np.random.default_rng(a * 10 + b), 50)
    got = match_dead_mwcs(p, met=MET, match_length=7, away_me=a, away_opp=b, cube_value=cube, crawford=crawford)
    post = not crawford and (a == 1 or b == 1)

    def after(points: int) -> float:
        return MET.mwc_after(a, b, points, crawford=crawford, post_crawford=post)

    for row, value in zip(p, got, strict=True):
        win, wg, wbg, lg, lbg = row
        want = ((win - wg) * after(cube) + (wg - wbg) * after(2 * cube) + wbg * after(3 * cube)
                + (1 - win - lg) * after(-cube) + (lg - lbg) * after(-2 * cube) + lbg * after(-3 * cube))
        assert value == pytest.approx(want, abs=1e-12)


def test_at_double_match_point_only_the_win_counts() -> None:
    p = _random_probs(np.random.default_rng(1), 20)
    got = match_dead_mwcs(p, met=MET, match_length=5, away_me=1, away_opp=1)
    np.testing.assert_allclose(got, p[:, 0], atol=1e-12)


def test_impossible_scores_are_clear_errors() -> None:
    p = _random_probs(np.random.default_rng(1), 2)
    with pytest.raises(InvalidCubeError, match="away_me=8"):
        match_dead_mwcs(p, met=MET, match_length=7, away_me=8, away_opp=2)
    with pytest.raises(InvalidCubeError, match="Crawford game needs exactly one side 1-away"):
        match_dead_mwcs(p, met=MET, match_length=7, away_me=2, away_opp=2, crawford=True)


def _win_only(probs: np.ndarray, results: np.ndarray) -> np.ndarray:
    return probs[:, 0]


def _brute(ev: NetEvaluator, pos: Position, depth: int, mover_value, other_value) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Side on roll's probabilities ``depth`` rolls ahead, each side choosing by its own value."""
    if pos.is_game_over():
        r = pos.result()
        return np.array([0.0, 0.0, 0.0, float(r <= -2), float(r <= -3)])
    if depth == 0:
        return np.asarray(ev(pos.array()[None, :])[0], dtype=np.float64)
    total = np.zeros(5)
    for dice, w in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        replies = legal_moves(pos, dice)
        boards = np.stack([m.result.array() for m in replies])
        mover_probs = flip_probs(np.asarray(ev(boards), dtype=np.float64))
        k = int(np.argmax(mover_value(mover_probs, boards)))
        below = _brute(ev, replies[k].result, depth - 1, other_value, mover_value)
        total += w * flip_probs(below[None, :])[0]
    return total


@pytest.mark.parametrize("depth", [1, 2])
def test_lookahead_chooses_each_sides_play_by_its_own_value(ev: NetEvaluator, depth: int) -> None:
    pos = Position.start()
    board = pos.array()[None, :]
    got = lookahead_probs(ev, board, depth, (_win_only, _win_only))[0]
    np.testing.assert_allclose(got, _brute(ev, pos, depth, _win_only, _win_only), atol=1e-6)
    # the default (cubeless equity) is the same as choosing by cubeless equity explicitly
    by_equity = lookahead_probs(ev, board, depth, (lambda p, r: equity(p), lambda p, r: equity(p)))
    np.testing.assert_allclose(by_equity, lookahead_probs(ev, board, depth), atol=1e-12)


def test_filters_keep_the_best_by_the_valuations_rank(ev: NetEvaluator) -> None:
    pos = Position.start()
    succ, parent = successors_batch(pos.array()[None, :], np.array([[6, 2]]))
    one_ply = flip_probs(np.asarray(ev(succ), dtype=np.float64))

    def worst_first(probs: np.ndarray, results: np.ndarray) -> np.ndarray:
        return -equity(probs)

    val = Valuation(rank=worst_first, mine=_win_only, theirs=_win_only)
    _, plies = rank_successors(ev, succ, parent, 2, (MoveFilter(3, 10.0),), valuation=val)
    deep = set(np.flatnonzero(plies == 2).tolist())
    assert deep == set(np.argsort(equity(one_ply))[:3].tolist())  # the three cubeless-worst went deeper
    _, plies = rank_successors(ev, succ, parent, 2, (MoveFilter(3, 10.0),))
    assert set(np.flatnonzero(plies == 2).tolist()) == set(np.argsort(-equity(one_ply))[:3].tolist())


def test_analysis_with_a_valuation_keeps_cubeless_probabilities(ev: NetEvaluator) -> None:
    pos = Position.start()
    a = analyze(ev, pos, "31", 2, valuation=Valuation(rank=lambda p, r: equity(p), mine=_win_only, theirs=_win_only))
    for c in a.candidates:
        if c.ply == 2:
            want = flip_probs(lookahead_probs(ev, c.result.array()[None, :], 1, (_win_only, _win_only)))[0]
            np.testing.assert_allclose(c.probs, want, atol=1e-6)


def test_match_play_at_dmp_ignores_gammons_in_the_search(ev: NetEvaluator) -> None:
    engine = Engine(ev, bearoff=False)
    state = CubeState(match=5, score=(4, 4))  # double match point
    a = engine.best_move(Position.start(), "31", 2, state)
    for c in a.candidates:
        if c.ply == 2:  # each side's replies chosen by its chance to win the game alone
            want = flip_probs(lookahead_probs(ev, c.result.array()[None, :], 1, (_win_only, _win_only)))[0]
            np.testing.assert_allclose(c.probs, want, atol=1e-6)
            assert c.mwc == pytest.approx(c.probs[0], abs=1e-9)  # at DMP the MWC is the chance to win


# ---------------------------------------------------------------------------
# the cubeful money lookahead (cube decisions at every node, gnubg's way)
# ---------------------------------------------------------------------------

_SEEN_BY_OPPONENT = {"center": "center", "me": "opp", "opp": "me"}


def _brute_cubeful(ev: NetEvaluator, pos: Position, depth: int, owner: str, jacoby: bool) -> tuple[float, float]:
    """(no double, double/take) of the side on roll of ``pos`` with ``owner``, ``depth`` rolls deep, one row at a time.

    A leaf is money_cube_decision's Janowski figures; above it each roll's play (chosen by cubeless
    equity) is valued at minus the opponent's best cube action, owner seen from the opponent.
    """
    x = Engine(ev, bearoff=False).cube_efficiency(pos)
    if pos.is_game_over():
        r = pos.result()
        probs = [0.0, 0.0, 0.0, float(r <= -2), float(r <= -3)]
        depth = 0
    elif depth == 0:
        probs = np.asarray(ev(pos.array()[None, :])[0], dtype=np.float64).tolist()
    if depth == 0:
        nd = money_cube_decision(probs, cube_value=2, owner=owner, x=x, jacoby=jacoby).equity_no_double  # type: ignore[arg-type]
        dt = money_cube_decision(probs, owner="center", x=x).equity_double_take
        return nd, float(dt)  # type: ignore[arg-type]

    def opponent_best(child: Position, child_owner: str) -> float:
        nd, dt = _brute_cubeful(ev, child, depth - 1, child_owner, jacoby)
        return nd if child_owner == "opp" else max(nd, min(dt, 1.0))

    nd_total = dt_total = 0.0
    for dice, w in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        replies = legal_moves(pos, dice)
        values = [-equity(np.asarray(ev(m.result.array()[None, :])[0], dtype=np.float64)) for m in replies]
        child = replies[int(np.argmax(values))].result
        nd_total += w * -opponent_best(child, _SEEN_BY_OPPONENT[owner])
        dt_total += w * 2.0 * -opponent_best(child, "me")  # the taker owns the doubled cube
    return nd_total, dt_total


@pytest.mark.parametrize(("pos", "depth", "jacoby"), [
    (Position.start(), 1, False),
    (Position.start(), 1, True),
    # a bear-off race where many rolls end the game: finished games inside the tree
    (Position.from_points({3: 1, 2: 1, 1: 1}, {6: 2, 1: 1}), 2, False),
    (Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1}), 2, True),
])
def test_cubeful_lookahead_equals_brute_force(ev: NetEvaluator, pos: Position, depth: int, jacoby: bool) -> None:
    # Janowski's leaves throughout (the exact bear-off table: tests/test_bearoff_cube.py)
    probs, nd, dt = lookahead_money_cubeful(ev, pos.array()[None, :], depth, jacoby=jacoby, exact_bearoff=False)
    np.testing.assert_allclose(probs[0], lookahead_probs(ev, pos.array()[None, :], depth)[0], atol=1e-9)
    for col, owner in enumerate(OWNER_COLUMNS):
        want_nd, want_dt = _brute_cubeful(ev, pos, depth, owner, jacoby)
        assert nd[0, col] == pytest.approx(want_nd, abs=1e-6), owner
        assert dt[0] == pytest.approx(want_dt, abs=1e-6)


def test_cubeful_lookahead_at_depth_zero_is_janowski(ev: NetEvaluator) -> None:
    boards = np.stack([Position.start().array(), Position.from_points({6: 3}, {6: 3}).array()])
    probs, nd, dt = lookahead_money_cubeful(ev, boards, 0, x=0.5, exact_bearoff=False)
    for k in range(2):
        for col, owner in enumerate(OWNER_COLUMNS):
            d = money_cube_decision(probs[k].tolist(), cube_value=2, owner=owner, x=0.5)  # type: ignore[arg-type]
            assert nd[k, col] == pytest.approx(d.equity_no_double, abs=1e-12)
        assert dt[k] == pytest.approx(money_cube_decision(probs[k].tolist(), x=0.5).equity_double_take, abs=1e-12)


def test_money_cube_action_above_one_ply_decides_from_the_cubeful_lookahead(ev: NetEvaluator) -> None:
    engine = Engine(ev, bearoff=False, cube_shift=NO_SHIFT)  # gnubg's lookahead, uncorrected
    shifted = Engine(ev, bearoff=False)  # the default: the one-roll lookahead's correction at 2-ply
    pos = Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1})
    for owner in ("center", "me"):
        d = engine.cube_action(pos, CubeState(cube=2, owner=owner), ply=2)
        want_nd, want_dt = _brute_cubeful(ev, pos, 1, owner, False)
        assert d.equity_no_double == pytest.approx(want_nd, abs=1e-6)
        assert d.equity_double_take == pytest.approx(want_dt, abs=1e-6)
        assert d.equity_optimal == pytest.approx(max(want_nd, min(want_dt, 1.0)), abs=1e-6)
        c = shifted.cube_action(pos, CubeState(cube=2, owner=owner), ply=2)
        assert c.equity_no_double == pytest.approx(want_nd + ONE_ROLL_SHIFT.no_double, abs=1e-6)
        assert c.equity_double_take == pytest.approx(want_dt + ONE_ROLL_SHIFT.double_take, abs=1e-6)
    # the opponent's cube: no double, and the no-double equity is the lookahead's "opp" column
    d = engine.cube_action(pos, CubeState(cube=2, owner="opp"), ply=2)
    assert (d.action, d.can_double) == ("no_double", False)
    assert d.equity_no_double == pytest.approx(_brute_cubeful(ev, pos, 1, "opp", False)[0], abs=1e-6)
    # at 1-ply (and in a match) the decision is still Janowski on the position's own probabilities
    one = engine.cube_action(pos, ply=1)
    assert one.equity_no_double == pytest.approx(
        money_cube_decision(engine.evaluate(pos, 1).tolist(), x=engine.cube_efficiency(pos)).equity_no_double)


def test_decision_from_equities_rejects_what_is_not_a_number() -> None:
    with pytest.raises(InvalidCubeError, match="no-double equity must be a finite number, got nan"):
        money_decision_from_equities([0.6, 0.1, 0.0, 0.05, 0.0], float("nan"), 0.5)
    d = money_decision_from_equities([0.6, 0.1, 0.0, 0.05, 0.0], 0.4, 0.9)
    assert (d.action, d.equity_optimal) == ("double_take", 0.9)


def _match_flags(state: tuple[int, str], away: tuple[int, int], crawford: bool) -> tuple[float | None, bool]:
    d = match_cube_decision([0.5, 0.1, 0.0, 0.1, 0.0], met=MET, match_length=7, away_me=away[0], away_opp=away[1],
                            cube_value=state[0], owner=state[1], crawford=crawford)  # type: ignore[arg-type]
    return d.mwc_double_pass, d.can_double


def _brute_match(ev: NetEvaluator, pos: Position, depth: int, state: tuple[int, str], away: tuple[int, int],
                 crawford: bool) -> tuple[float, float]:
    """(no-double MWC, optimal MWC) of the side on roll with cube ``state``, ``depth`` rolls deep, row by row."""
    x = Engine(ev, bearoff=False).cube_efficiency(pos)
    if pos.is_game_over() or depth == 0:
        if pos.is_game_over():
            r = pos.result()
            probs = [0.0, 0.0, 0.0, float(r <= -2), float(r <= -3)]
        else:
            probs = np.asarray(ev(pos.array()[None, :])[0], dtype=np.float64).tolist()
        d = match_cube_decision(probs, met=MET, match_length=7, away_me=away[0], away_opp=away[1],
                                cube_value=state[0], owner=state[1], crawford=crawford, x=x)  # type: ignore[arg-type]
        return d.mwc_no_double, d.mwc_optimal  # type: ignore[return-value]
    dp, gains = _match_flags(state, away, crawford)
    c, o = state
    nd = dt = 0.0
    for dice, w in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        replies = legal_moves(pos, dice)
        values = [-equity(np.asarray(ev(m.result.array()[None, :])[0], dtype=np.float64)) for m in replies]
        child = replies[int(np.argmax(values))].result
        nd += w * (1.0 - _brute_match(ev, child, depth - 1, (c, _SEEN_BY_OPPONENT[o]), away[::-1], crawford)[1])
        if dp is not None and gains:
            dt += w * (1.0 - _brute_match(ev, child, depth - 1, (2 * c, "me"), away[::-1], crawford)[1])
    return nd, (max(nd, min(dt, dp)) if dp is not None and gains else nd)  # type: ignore[type-var]


@pytest.mark.parametrize(("pos", "depth", "state", "away", "crawford"), [
    (Position.start(), 1, (1, "center"), (5, 3), False),
    (Position.start(), 1, (2, "me"), (2, 4), False),
    (Position.start(), 1, (1, "center"), (1, 3), True),  # Crawford: no cube anywhere
    (Position.start(), 1, (1, "center"), (3, 1), False),  # post-Crawford: the trailer doubles
    (Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1}), 2, (1, "center"), (4, 4), False),
    (Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1}), 2, (2, "opp"), (3, 5), False),
])
def test_match_cube_lookahead_equals_brute_force(ev: NetEvaluator, pos: Position, depth: int,
                                                  state: tuple[int, str], away: tuple[int, int],
                                                  crawford: bool) -> None:
    probs, nd, dt = match_cube_lookahead(ev, pos.array(), depth, met=MET, match_length=7, away_me=away[0],
                                         away_opp=away[1], cube_value=state[0], owner=state[1],  # type: ignore[arg-type]
                                         crawford=crawford)
    np.testing.assert_allclose(probs, lookahead_probs(ev, pos.array()[None, :], depth)[0], atol=1e-9)
    assert nd == pytest.approx(_brute_match(ev, pos, depth, state, away, crawford)[0], abs=1e-6)
    legal = _match_flags(state, away, crawford)[0] is not None
    if legal:
        assert dt == pytest.approx(_brute_match(ev, pos, depth, (2 * state[0], "opp"), away, crawford)[0], abs=1e-6)
    else:
        assert dt is None


def test_match_cube_action_above_one_ply_uses_the_lookahead(ev: NetEvaluator) -> None:
    engine = Engine(ev, bearoff=False, cube_shift=NO_SHIFT)
    pos = Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1})
    state = CubeState(match=7, score=(2, 4))  # 5-away, 3-away
    d = engine.cube_action(pos, state, ply=2)
    # the default engine moves both figures by the correction, in equity normalised to the cube
    c = Engine(ev, bearoff=False).cube_action(pos, state, ply=2)
    assert c.equity_no_double == pytest.approx(d.equity_no_double + ONE_ROLL_SHIFT.no_double, abs=1e-9)
    assert c.equity_double_take == pytest.approx(d.equity_double_take + ONE_ROLL_SHIFT.double_take,  # type: ignore[operator]
                                                 abs=1e-9)
    assert c.mwc_no_double > d.mwc_no_double and c.mwc_double_take < d.mwc_double_take  # type: ignore[operator]
    # the engine chooses each side's plays by its dead-cube MWC at the score
    mine = lambda p, r: match_dead_mwcs(p, met=MET, match_length=7, away_me=5, away_opp=3)  # noqa: E731
    other = lambda p, r: match_dead_mwcs(p, met=MET, match_length=7, away_me=3, away_opp=5)  # noqa: E731
    _, nd, dt = match_cube_lookahead(ev, pos.array(), 1, met=MET, match_length=7, away_me=5, away_opp=3,
                                     choose=(mine, other))
    assert d.mwc_no_double == pytest.approx(nd, abs=1e-12)
    assert d.mwc_double_take == pytest.approx(dt, abs=1e-12)
    assert d.mwc_optimal == pytest.approx(max(nd, min(dt, d.mwc_double_pass)), abs=1e-12)  # type: ignore[type-var]
    assert d.equity_double_pass == 1.0
    with pytest.raises(InvalidCubeError, match="match winning chance must be a number in"):
        match_decision_from_mwcs([0.5, 0.1, 0.0, 0.1, 0.0], 1.5, 0.4, met=MET, match_length=7, away_me=5, away_opp=3)


def test_the_one_roll_correction_moves_only_2_ply_decisions_and_brings_them_nearer_3_ply() -> None:
    from conftest import read_jsonl

    from bgbot.eval.models import load_model

    net = NetEvaluator(load_model(None).net)
    plain, shifted = Engine(net, cube_shift=NO_SHIFT), Engine(net)
    rows = read_jsonl("benchmark/cube.jsonl")  # all 200 (6 s): on a few dozen the counts can tie
    agree = {"plain": 0, "shifted": 0}
    over = {"plain": 0, "shifted": 0}  # 2-ply doubles where 3-ply does not
    for r in rows:
        state = CubeState(cube=r["cube"]["value"], owner={"center": "center", "on_roll": "me"}[r["cube"]["owner"]])
        deep = shifted.cube_action(r["position"], state, ply=3)
        assert deep == plain.cube_action(r["position"], state, ply=3)  # 3-ply is not corrected
        assert shifted.cube_action(r["position"], state, ply=1) == plain.cube_action(r["position"], state, ply=1)
        for name, engine in (("plain", plain), ("shifted", shifted)):
            two = engine.cube_action(r["position"], state, ply=2)
            agree[name] += two.action == deep.action
            over[name] += two.doubles and not deep.doubles
    # the shipped model's 2-ply doubles too often against its own 3-ply; the correction takes some of that back
    assert over["shifted"] < over["plain"]
    assert agree["shifted"] > agree["plain"]
