"""The batched money equities checker play ranks by are the scalar cube decisions, row by row."""

from __future__ import annotations

import numpy as np
import pytest

from bgbot.engine.api import Engine
from bgbot.engine.cube import (
    BEAROFF_X,
    cube_efficiencies,
    cube_efficiency,
    money_cube_decision,
    money_optimal_equities,
)
from bgbot.rules.classes import CRASHED_CHECKERS
from bgbot.rules.matchstate import CubeState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import (
    CHECKERS,
    Position,
    PositionClass,
    all_home,
    classify,
    classify_boards,
    has_contact,
    pip_counts,
)


def random_probs(rng: np.random.Generator, n: int) -> np.ndarray:
    """Consistent probabilities, with some rows at 0/1 wins and without gammons."""
    w = rng.random(n)
    w[:5] = [0.0, 1.0, 1e-9, 1 - 1e-9, 0.5]
    wg = w * rng.random(n) * rng.choice([0.0, 1.0], n, p=[0.2, 0.8])
    wbg = wg * rng.random(n) * 0.3
    lg = (1 - w) * rng.random(n) * rng.choice([0.0, 1.0], n, p=[0.2, 0.8])
    lbg = lg * rng.random(n) * 0.3
    return np.stack([w, wg, wbg, lg, lbg], axis=1)


@pytest.mark.parametrize(("owner", "cube"), [("center", 1), ("me", 2), ("opp", 2), ("me", 64), ("opp", 8)])
@pytest.mark.parametrize("jacoby", [False, True])
def test_batched_equities_match_the_scalar_decisions(owner: str, jacoby: bool, cube: int) -> None:
    rng = np.random.default_rng(cube * 7 + jacoby)
    probs = random_probs(rng, 400)
    xs = rng.uniform(0.0, 1.0, 400)
    got = money_optimal_equities(probs, xs, cube_value=cube, owner=owner, jacoby=jacoby)  # type: ignore[arg-type]
    want = [money_cube_decision(p, cube_value=cube, owner=owner, x=x, jacoby=jacoby).equity_optimal  # type: ignore[arg-type]
            for p, x in zip(probs, xs, strict=True)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def reference_class(b: np.ndarray) -> PositionClass:
    """classify from its definition, one position at a time."""
    mine, theirs = np.clip(b, 0, None), np.clip(-b, 0, None)[::-1]
    if mine.sum() == 0 or theirs.sum() == 0:
        return PositionClass.OVER
    if not has_contact(b):
        return PositionClass.BEAROFF if all_home(b) else PositionClass.RACE
    for side in (mine, theirs):
        total = side.sum()
        buried = max(side[1] - 2, 0) + max(side[2] - 2, 0)
        if total <= CRASHED_CHECKERS or total - buried <= CRASHED_CHECKERS:
            return PositionClass.CRASHED
    return PositionClass.CONTACT


def walk(n_games: int, turns: int, seed: int) -> np.ndarray:
    """Positions of random games (every class shows up in long ones)."""
    rng = np.random.default_rng(seed)
    boards = np.tile(Position.start().array(), (n_games, 1))
    seen = []
    for _ in range(turns):
        succ, parent = successors_batch(boards, rng.integers(1, 7, size=(n_games, 2)))
        pick = np.array([rng.choice(np.flatnonzero(parent == g)) for g in range(n_games)])
        boards = succ[pick]
        seen.append(boards)
    return np.concatenate(seen)


def test_classify_boards_is_classify_on_every_row() -> None:
    boards = walk(40, 120, seed=3)
    got = classify_boards(boards)
    assert set(got.tolist()) == {int(c) for c in PositionClass}  # every class was met
    assert got.tolist() == [int(reference_class(b)) for b in boards]
    assert [int(classify(Position.from_array(b, validate=False))) for b in boards[::37]] == got[::37].tolist()
    pips = pip_counts(boards[::53])
    assert pips.tolist() == [list(Position.from_array(b, validate=False).pips()) for b in boards[::53]]
    assert (np.clip(boards, 0, None).sum(axis=1) <= CHECKERS).all()


def test_cube_efficiencies_are_the_scalar_ones() -> None:
    boards = walk(20, 120, seed=4)
    got = cube_efficiencies(boards)
    for b, x in zip(boards, got, strict=True):
        pos = Position.from_array(b, validate=False)
        cls = classify(pos)
        if cls in (PositionClass.CONTACT, PositionClass.CRASHED):
            assert x == cube_efficiency(contact=True)
        elif cls == PositionClass.BEAROFF:
            assert x == BEAROFF_X
        else:
            assert x == pytest.approx(cube_efficiency(contact=False, pips_on_roll=pos.pips()[0]))


def test_cubeful_ranking_equals_the_opponents_cube_decision_per_play() -> None:
    engine = Engine.load()
    pos = Position.from_id("4HPwATDgc/ABMA")
    for state in (CubeState(), CubeState(cube=2, owner="me"), CubeState(cube=2, owner="opp"), CubeState(jacoby=True)):
        a = engine.best_move(pos, (6, 4), 1, state)
        theirs = {"center": "center", "me": "opp", "opp": "me"}[state.owner]
        for c in a.candidates:
            opp = [1 - c.probs[0], c.probs[3], c.probs[4], c.probs[1], c.probs[2]]
            d = engine.cube_action(c.result, CubeState(cube=state.cube, owner=theirs, jacoby=state.jacoby),  # type: ignore[arg-type]
                                   probs=opp)
            assert c.equity == pytest.approx(-d.equity_optimal, abs=1e-9)


def test_a_match_decision_without_its_take_point_has_the_same_equities() -> None:
    from bgbot.engine.cube import match_cube_decision
    from bgbot.engine.met import load_met

    met = load_met()
    probs = random_probs(np.random.default_rng(9), 60)
    scores = [(7, 5, 3, 1, "center", False), (7, 2, 4, 2, "me", False), (5, 1, 3, 1, "center", True),
              (9, 4, 4, 4, "opp", False), (3, 2, 1, 1, "center", False)]
    for (length, a, b, cube, owner, crawford), p in zip(scores * 12, probs, strict=True):
        full = match_cube_decision(p, met=met, match_length=length, away_me=a, away_opp=b, cube_value=cube,
                                   owner=owner, crawford=crawford)  # type: ignore[arg-type]
        fast = match_cube_decision(p, met=met, match_length=length, away_me=a, away_opp=b, cube_value=cube,
                                   owner=owner, crawford=crawford, with_take_point=False)  # type: ignore[arg-type]
        assert fast.take_point is None
        assert (fast.action, fast.equity_optimal, fast.mwc_optimal) == (full.action, full.equity_optimal,
                                                                       full.mwc_optimal)
