"""match_optimal_values: the optimal match cube action of many positions at once gives match_cube_decision's
figures exactly (the batched ranking of a roll's plays in a match must choose as the one-by-one one did)."""

from __future__ import annotations

import itertools

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
