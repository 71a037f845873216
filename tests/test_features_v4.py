"""Encoding version 4's extra features (bgbot.eval.features.EXTRA_FEATURE_NAMES) against hand counts."""

from __future__ import annotations

import numpy as np
import pytest

from bgbot.eval.encoding import encode, num_inputs
from bgbot.eval.features import (
    EXTRA_FEATURE_NAMES,
    EXTRA_FEATURE_RANGES,
    FEATURE_NAMES,
    NUM_EXTRA_FEATURES,
    extra_features,
    features,
)
from bgbot.rules.position import Position
from tests.test_features import random_positions

E = NUM_EXTRA_FEATURES
START = {24: 2, 13: 5, 8: 3, 6: 5}


def feat(mine: dict[int, int], theirs: dict[int, int] | None = None, side: int = 0) -> dict[str, float]:
    """Extra features (by name) of one position: side 0 = on roll, 1 = the opponent."""
    row = extra_features(Position.from_points(mine, theirs).array()[None, :])[0]
    return dict(zip(EXTRA_FEATURE_NAMES, row[side * E:(side + 1) * E].tolist(), strict=True))


def test_version_4_is_version_3_plus_the_extra_block() -> None:
    boards = random_positions(500, seed=11)
    x4 = encode(boards, 4)
    assert x4.shape == (500, num_inputs(4)) and num_inputs(4) == num_inputs(3) + 2 * E
    np.testing.assert_array_equal(x4[:, : num_inputs(3)], encode(boards, 3))
    np.testing.assert_array_equal(x4[:, num_inputs(3):], extra_features(boards))
    assert len(EXTRA_FEATURE_RANGES) == E and not set(EXTRA_FEATURE_NAMES) & set(FEATURE_NAMES)
    for k, (lo, hi) in enumerate(EXTRA_FEATURE_RANGES * 2):
        assert lo <= x4[:, num_inputs(3) + k].min() and x4[:, num_inputs(3) + k].max() <= hi, k


def test_opponent_block_is_the_flipped_board() -> None:
    boards = random_positions(300, seed=12)
    flipped = -boards[:, ::-1]
    x, y = extra_features(boards), extra_features(flipped)
    np.testing.assert_array_equal(x[:, E:], y[:, :E])
    np.testing.assert_array_equal(x[:, :E], y[:, E:])


def test_start_position_by_hand() -> None:
    f = feat(START, START)
    # 24s: every number but 5 (the opponent's 6-point); 13s: all but 1 (its midpoint); 8s: all six;
    # 6s: 1-4 (5 lands on its 24 anchor, 6 would bear off before all are home)
    assert f["mobility"] == pytest.approx((2 * 5 + 5 * 5 + 3 * 6 + 5 * 4) / 90)
    assert f["gap"] == pytest.approx(10 / 23)  # points 23..14 between my 24 and my 13
    assert f["enter_two"] == 0.0 and f["backgame"] == 0.0
    # every checker is behind the opponent's 24-point checkers (my 1); the back checkers escape with 22 rolls,
    # the others face at most one made point among the six in front of them, so they do better, but not all 36
    assert 22 / 36 < f["back_escapes"] < 1.0
    assert feat(START, START, side=1) == f


def test_mobility_counts_blocked_numbers_and_bearing_off() -> None:
    # one checker on my 8, the opponent holds my 5 and my 2: numbers 3 and 6 are blocked
    assert feat({8: 1}, {20: 2, 23: 2})["mobility"] == pytest.approx(4 / 90)
    # all home: a checker on the 2 moves with 1 and bears off with 2..6
    assert feat({2: 1})["mobility"] == pytest.approx(6 / 90)
    # not all home: the checker on the 2 may not bear off
    assert feat({2: 1, 13: 1})["mobility"] == pytest.approx((1 + 6) / 90)
    # on the bar only entering counts: two on the bar, the opponent's home points 1-4 made (my 24..21)
    assert feat({25: 2, 6: 5}, {1: 2, 2: 2, 3: 2, 4: 2})["mobility"] == pytest.approx(2 * 2 / 90)


def test_gap_measures_the_largest_hole() -> None:
    assert feat({6: 3, 5: 3, 4: 3})["gap"] == 0.0
    assert feat({24: 1, 1: 1})["gap"] == pytest.approx(22 / 23)
    assert feat({25: 1, 20: 1, 6: 2})["gap"] == pytest.approx(13 / 23)  # 19..7; the bar to 20 is only 4
    assert feat({6: 1})["gap"] == 0.0  # one occupied point: no hole


def test_enter_two_only_with_two_on_the_bar() -> None:
    closed3 = {1: 2, 2: 2, 3: 2}
    assert feat({25: 1, 6: 2}, closed3)["enter_two"] == 0.0
    assert feat({25: 2, 6: 2}, closed3)["enter_two"] == pytest.approx(1 - (3 / 6) ** 2)
    assert feat({25: 3}, {})["enter_two"] == 0.0  # an open board: every roll enters two


def test_back_escapes_average_over_the_checkers_behind() -> None:
    prime5 = {q: 2 for q in range(2, 7)}  # the opponent's 2..6: my 23..19
    # one checker behind a 5-prime escapes with the 11 sixes; a second one, past the prime but still behind the
    # opponent's blot on my 5, escapes with every roll
    assert feat({24: 1}, prime5)["back_escapes"] == pytest.approx(11 / 36)
    assert feat({24: 1, 18: 1}, {**prime5, 20: 1})["back_escapes"] == pytest.approx((11 + 36) / 2 / 36)
    assert feat({10: 2}, {5: 2})["back_escapes"] == 1.0  # a race: nobody behind


def test_backgame_needs_two_anchors() -> None:
    assert feat({24: 2, 6: 5})["backgame"] == 0.0
    assert feat({24: 2, 22: 3, 25: 1, 6: 5})["backgame"] == pytest.approx(6 / 15)
    assert feat({24: 2, 22: 1, 6: 5})["backgame"] == 0.0  # a blot is no anchor


def test_the_version_3_features_are_untouched() -> None:
    boards = random_positions(200, seed=13)
    np.testing.assert_array_equal(encode(boards, 4)[:, 205:255], features(boards))
