"""match_optimal_values: the optimal match cube action of many positions at once gives match_cube_decision's
figures exactly (the batched ranking of a roll's plays in a match must choose as the one-by-one one did)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from bgbot.engine.cube import match_cube_decision, match_optimal_values
from bgbot.engine.met import load_met
from bgbot.errors import InvalidCubeError

MET = load_met()


def _probs(rng: np.random.Generator, n: int) -> np.ndarray:
    win = rng.uniform(0, 1, n)
    win[:4] = [0.0, 1.0, 0.5, 0.999]  # the edges: certain loss and win (finished games), ties
    wg = win * rng.uniform(0, 0.6, n)
    wbg = wg * rng.uniform(0, 0.3, n)
    lg = (1 - win) * rng.uniform(0, 0.6, n)
    lbg = lg * rng.uniform(0, 0.3, n)
    return np.stack([win, wg, wbg, lg, lbg], axis=1)


STATES = [
    (length, a, b, cube, owner, crawford)
    for length in (1, 3, 5, 7, 11)
    for a, b in itertools.product(range(1, length + 1), repeat=2)
    for cube, owner in ((1, "center"), (2, "me"), (2, "opp"), (4, "me"), (4, "opp"), (8, "me"))
    for crawford in (False, True)
    if not (crawford and ((a == 1) == (b == 1) or cube != 1 or owner != "center"))
]


@pytest.mark.parametrize("length", [1, 3, 5, 7, 11])
def test_the_same_figures_as_one_decision_at_a_time(length: int) -> None:
    rng = np.random.default_rng(length)
    probs = _probs(rng, 12)
    xs = rng.uniform(0.5, 0.8, 12)
    xs[0] = 0.0
    xs[1] = 1.0
    checked = 0
    for ln, a, b, cube, owner, crawford in STATES:
        if ln != length:
            continue
        kw = {"met": MET, "match_length": ln, "away_me": a, "away_opp": b, "cube_value": cube, "owner": owner,
              "crawford": crawford}
        eq, mwc = match_optimal_values(probs, xs, **kw)
        for row, x, e, m in zip(probs, xs, eq.tolist(), mwc.tolist(), strict=True):
            d = match_cube_decision(row.tolist(), x=float(x), with_take_point=False, **kw)
            assert (e, m) == (d.equity_optimal, d.mwc_optimal), (kw, row.tolist(), x)
            checked += 1
    assert checked > 0


def test_bad_rows_are_refused_quoting_them() -> None:
    kw = {"met": MET, "match_length": 7, "away_me": 3, "away_opp": 5}
    with pytest.raises(InvalidCubeError, match="inconsistent probabilities"):
        match_optimal_values(np.array([[0.5, 0.6, 0.0, 0.1, 0.0]]), np.array([0.68]), **kw)
    with pytest.raises(InvalidCubeError, match=r"lie in \[0, 1\]"):
        match_optimal_values(np.array([[1.5, 0.0, 0.0, 0.0, 0.0]]), np.array([0.68]), **kw)
    with pytest.raises(InvalidCubeError, match="cube efficiencies"):
        match_optimal_values(np.array([[0.5, 0.1, 0.0, 0.1, 0.0]]), np.array([0.68, 0.6]), **kw)
    with pytest.raises(InvalidCubeError, match="away_me"):
        match_optimal_values(np.array([[0.5, 0.1, 0.0, 0.1, 0.0]]), np.array([0.68]), **{**kw, "away_me": 9})


def test_compiled_cube_efficiencies_are_the_numpy_ones() -> None:
    import json

    from bgbot.engine.cube import BEAROFF_X, CONTACT_X, _cube_efficiencies_numpy, cube_efficiencies
    from bgbot.rules.dice import ROLLS
    from bgbot.rules.movegen import successors_batch
    from bgbot.rules.position import Position

    path = Path(__file__).resolve().parent / "data" / "benchmark" / "checker.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:120]]
    boards = np.array([Position.from_id(r["position"]).board for r in rows], dtype=np.int8)
    succ, _ = successors_batch(np.repeat(boards, 21, axis=0), np.tile(np.array(ROLLS), (len(boards), 1)))
    extra = [
        Position.from_points({6: 3, 5: 2}, {6: 2, 1: 1}).board,  # both home: a bear-off
        Position.from_points({24: 1, 6: 2}, {3: 2}).board,  # a back checker behind the opponent: contact
        [0] * 25 + [0],  # nobody left (a finished game's empty board)
    ]
    both = np.concatenate([succ, np.array(extra, dtype=np.int8)])
    got = cube_efficiencies(both)
    assert np.array_equal(got, _cube_efficiencies_numpy(both))
    assert {CONTACT_X, BEAROFF_X} <= set(got.tolist()) and len(set(got.tolist())) > 5  # races too
