"""Expert input features (bgbot.eval.features) against hand counts and plain reference implementations."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from bgbot.eval.features import FEATURE_NAMES, FEATURE_RANGES, NUM_FEATURES, features, fill_features
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position, flip

F = NUM_FEATURES
COL = {name: i for i, name in enumerate(FEATURE_NAMES)}
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, 7)]  # the 36 ordered rolls


def random_positions(n: int, seed: int, games: int = 200) -> np.ndarray:
    """``n`` positions from random games played in lock step from the start (side on roll's view)."""
    rng = np.random.default_rng(seed)
    start = Position.start().array()
    boards = np.tile(start, (games, 1))
    seen = []
    total = 0
    while total < 2 * n:
        seen.append(boards.copy())
        total += games
        succ, parent = successors_batch(boards, rng.integers(1, 7, size=(games, 2)))
        counts = np.bincount(parent, minlength=games)
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))
        boards = succ[first + (rng.random(games) * counts).astype(np.int64)]
        boards[~(boards < 0).any(axis=1)] = start  # the side that moved has borne off all: a new game
    pool = np.concatenate(seen)
    return pool[rng.choice(pool.shape[0], size=n, replace=False)]


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    return random_positions(3000, seed=7)


def feat(mine: dict[int, int], theirs: dict[int, int] | None = None, side: int = 0) -> dict[str, float]:
    """Features (by name) of one position built with Position.from_points: side 0 = on roll, 1 = opponent."""
    row = features(Position.from_points(mine, theirs).array()[None, :])[0]
    return dict(zip(FEATURE_NAMES, row[side * F:(side + 1) * F].tolist(), strict=True))


# ---- shape, ranges, symmetry ------------------------------------------------


def test_shape_dtype_names_and_ranges_agree() -> None:
    assert len(FEATURE_NAMES) == NUM_FEATURES == len(FEATURE_RANGES)
    assert 20 <= NUM_FEATURES <= 30
    out = features(Position.start().array()[None, :].repeat(4, axis=0))
    assert out.shape == (4, 2 * F) and out.dtype == np.float32
    with pytest.raises(ValueError, match="shape"):
        features(np.zeros((3, 25), dtype=np.int8))


def test_fill_features_writes_its_columns_only(boards: np.ndarray) -> None:
    b = boards[:50]
    out = np.full((50, 2 * F + 7), np.nan, dtype=np.float32)
    fill_features(b, out, 4)
    assert np.isnan(out[:, :4]).all() and np.isnan(out[:, 4 + 2 * F:]).all()
    np.testing.assert_array_equal(out[:, 4:4 + 2 * F], features(b))


def test_values_finite_and_within_documented_ranges(boards: np.ndarray) -> None:
    extremes = [
        Position.from_points({25: 15}, {25: 15}),  # everything on the bars
        Position.from_points({1: 15}, {1: 15}),
        Position.from_points({1: 1}, {1: 1}),
        Position.from_points({25: 2, 18: 1, 16: 1, 3: 1, 1: 1}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 25: 3}),
    ]
    allb = np.concatenate([boards, np.array([p.board for p in extremes], dtype=np.int8)])
    out = features(allb)
    assert np.isfinite(out).all()
    lo = np.array([r[0] for r in FEATURE_RANGES] * 2)
    hi = np.array([r[1] for r in FEATURE_RANGES] * 2)
    assert (out >= lo - 1e-6).all() and (out <= hi + 1e-6).all()
    # the features vary: none is constant over real positions
    assert (out[:-len(extremes)].std(axis=0) > 0).all()


def test_opponent_block_is_the_flipped_board(boards: np.ndarray) -> None:
    a = features(boards)
    b = features(flip(boards))
    np.testing.assert_array_equal(a[:, F:], b[:, :F])
    np.testing.assert_array_equal(a[:, :F], b[:, F:])


def test_start_position_by_hand() -> None:
    f = feat({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})
    assert f["pips"] == pytest.approx(1.0)
    assert f["break_contact"] == pytest.approx(1.0)  # every checker is behind the opponent's 24-point
    assert f["behind"] == pytest.approx(1.0)
    assert f["back_checker"] == pytest.approx(24 / 25)
    assert f["back_anchor"] == pytest.approx(1.0)
    assert f["forward_anchor"] == pytest.approx(1 / 6)
    assert f["timing"] == pytest.approx((5 * 7 + 3 * 2 + 3 * 5) / 100)  # the 24 anchor kept; 3 spares on the 6
    assert f["home_points"] == pytest.approx(1 / 6)
    assert f["points"] == pytest.approx(4 / 7)
    assert f["stacking"] == pytest.approx(4 / 12)
    assert f["p_hit"] == f["pip_loss"] == f["blots"] == 0.0
    # the back checker must pass the opponent's 6-point (my 19): rolls with a 6 (11), 5-1, 4-2 (4),
    # 3-3, 2-2, 4-4 (3 doubles) and 5-3, 5-4 (4) reach the 18 or beyond without stopping on 19 or 17
    assert f["escapes"] == pytest.approx(22 / 36)


# ---- shots ------------------------------------------------------------------

# Rolls (of 36) that hit a blot n pips in front of one hitter, nothing in between: the standard table.
DIRECT_SHOTS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3,
                15: 1, 16: 1, 18: 1, 20: 1, 24: 1}


@pytest.mark.parametrize("dist", range(1, 25))
def test_one_hitter_one_blot_gives_the_standard_shot_count(dist: int) -> None:
    expected = DIRECT_SHOTS.get(dist, 0)
    # my blot on my 24-point, the opponent's hitter dist pips behind it (on my slot 24 - dist, or its bar)
    hitter = 25 - (24 - dist)  # in the opponent's own numbering (25 = its bar)
    f = feat({24: 1}, {hitter: 1})
    assert f["p_hit"] == pytest.approx(expected / 36)
    assert f["pip_loss"] == pytest.approx(expected * (25 - 24) / 36 / 24)
    assert f["p_double_hit"] == 0.0
    # the same seen from the other side: the opponent's blot, my hitter
    g = feat({hitter: 1}, {24: 1}, side=1)
    assert g["p_hit"] == pytest.approx(expected / 36)


def test_made_points_block_combination_shots() -> None:
    # hitter on my slot 10 (opponent's 15-point), my blot on my 16: 6 away; my points on 12, 13, 14
    # block 4-2 (via 14 and via 12), 3-3 (via 13), 2-2 (via 12); 5-1 still hits (via 15 or 11):
    # the 11 rolls with a 6, and 5-1 twice
    f = feat({16: 1, 12: 2, 13: 2, 14: 2}, {15: 1})
    assert f["p_hit"] == pytest.approx(13 / 36)
    # only the 13 made: 3-3 is blocked, 4-2 (via 14 or 12) and 2-2 (12, 14) still hit: 17 - 1
    f = feat({16: 1, 13: 2}, {15: 1})
    assert f["p_hit"] == pytest.approx(16 / 36)


def test_double_hits_need_two_checkers_or_a_continuation() -> None:
    # two blots 1 and 2 pips in front of a lone hitter: only 1-1 hits both (hit and continue)
    f = feat({20: 1, 21: 1}, {6: 1})  # opponent's 6-point = my slot 19
    assert f["p_double_hit"] == pytest.approx(1 / 36)
    # two hitters there: 2-1 hits both with one die each, too
    f = feat({20: 1, 21: 1}, {6: 2})
    assert f["p_double_hit"] == pytest.approx(3 / 36)
    # a roll with a 1 hits the 20 (11 rolls, 5 pips lost), one with a 2 but no 1 only the 21 (9 rolls, 4 pips)
    hits_20 = sum(1 for a, b in ROLLS if 1 in (a, b))
    hits_21 = sum(1 for a, b in ROLLS if 2 in (a, b) and 1 not in (a, b))
    assert (hits_20, hits_21) == (11, 9)
    assert f["p_hit"] == pytest.approx(20 / 36)
    assert f["pip_loss"] == pytest.approx((11 * 5 + 9 * 4) / 36 / 24)


def test_bar_checkers_must_enter_first() -> None:
    # two opponent checkers on the bar, a third right behind my blot on my 10 (the opponent's 16-point = my 9)
    f = feat({10: 1, 3: 1, 24: 2}, {25: 2, 16: 1})
    # a non-double only enters: a roll with a 3 hits my 3 (11 rolls); the 10 is not reachable then.
    # A double enters two and has two steps left: 1-1 hits the 10 (9 -> 10) and the dearer 3 (1 -> 2 -> 3),
    # 5-5 hits the 10 (entered on 5, -> 10); 2-2, 4-4, 6-6 reach neither.  No roll hits both (1-1 would
    # need 1 + 2 steps).  Losses: 22 pips on the 3, 15 on the 10.
    assert f["p_hit"] == pytest.approx(13 / 36)
    assert f["pip_loss"] == pytest.approx((12 * 22 + 15) / 36 / 24)
    assert f["p_double_hit"] == 0.0
    # one on the bar, my points 1, 2, 3 made, my blot on 4: only a 4 enters on it; 5s and 6s enter beyond
    # it and 1s, 2s, 3s do not enter at all, so no roll reaches it otherwise
    f = feat({4: 1, 1: 2, 2: 2, 3: 2}, {25: 1})
    assert f["p_hit"] == pytest.approx(11 / 36)


def test_race_has_no_shots_and_no_break_contact() -> None:
    f = feat({1: 1, 3: 1, 5: 3, 8: 1}, {2: 1, 4: 3, 9: 1})  # opponent's 9 = my 16: all past each other
    assert f["p_hit"] == f["p_double_hit"] == f["pip_loss"] == 0.0
    assert f["break_contact"] == f["behind"] == 0.0
    assert f["escapes"] == 1.0


def sparse_positions(n: int, seed: int) -> np.ndarray:
    """Random legal boards with many blots, made points and opponent bar checkers (shot-counting corner cases)."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        b = np.zeros(26, dtype=np.int8)
        for sign in (1, -1):
            left = 15
            for _ in range(int(rng.integers(2, 9))):
                k = min(left, int(rng.choice([1, 1, 1, 2, 2, 3])))
                slot = int(rng.integers(1, 25))
                if k and b[slot] * sign >= 0:
                    b[slot] += sign * k
                    left -= k
            bar = min(left, int(rng.choice([0, 0, 1, 2, 3, 4])))
            b[25 if sign == 1 else 0] += sign * bar
        rows.append(b)
    return np.array(rows)


def test_shots_agree_with_an_exhaustive_search(boards: np.ndarray) -> None:
    # game positions with blots and contact (some with the opponent on the bar), and random sparse boards
    rng = np.random.default_rng(3)
    cand = [b for b in boards if (b[1:25] == 1).any() and Position.from_array(b).has_contact()]
    picked = [cand[i] for i in rng.choice(len(cand), size=100, replace=False)]
    picked += [b for b in cand if b[0] < 0][:30]
    picked += list(sparse_positions(150, seed=4))
    both = np.array(picked)
    out = features(both)
    assert (out[:, COL["p_double_hit"]] > 0).sum() > 50  # the cases are exercised
    assert (both[:, 0] <= -2).sum() > 20
    for b, row in zip(both, out, strict=True):
        for side, view in ((0, b), (1, flip(b))):
            hits, doubles, loss = _reference_shots(view)
            got = row[side * F + COL["p_hit"]], row[side * F + COL["p_double_hit"]], row[side * F + COL["pip_loss"]]
            assert got == pytest.approx((hits / 36, doubles / 36, loss / 24), abs=1e-6), (side, b.tolist())


@cache
def _outcomes(board: tuple[int, ...], steps: tuple[int, ...]) -> frozenset[frozenset[int]]:
    """Every set of my blots the opponent can hit playing ``steps`` in order (or stopping early).

    For a double the order of steps of different checkers does not matter, so only
    sequences by non-decreasing starting point are searched.
    """
    result: set[frozenset[int]] = set()

    def walk(bd: list[int], k: int, lo: int, hit: frozenset[int]) -> None:
        result.add(hit)
        if k == len(steps):
            return
        d = steps[k]
        if bd[0] < 0:
            froms = [0]
        elif len(set(steps)) == 1:
            froms = [s for s in range(max(lo, 1), 25) if bd[s] < 0]  # doubles: canonical order
        else:
            froms = [s for s in range(1, 25) if bd[s] < 0]
        for s in froms:
            t = s + d
            if t > 24 or bd[t] >= 2:
                continue
            nb = bd.copy()
            nb[s] += 1
            h = hit
            if nb[t] == 1:
                nb[t] = 0
                h = hit | {t}
            nb[t] -= 1
            walk(nb, k + 1, s, h)

    walk(list(board), 0, 0, frozenset())
    return frozenset(result)


def _reference_shots(board: np.ndarray) -> tuple[int, int, float]:
    """Rolls (of 36) hitting, rolls double-hitting and the mean largest pip loss, by exhaustive search.

    The documented model: the opponent plays single steps of its dice (both
    orders of a non-double, up to four steps of a double), stopping only where
    I hold at most one checker (hitting it there), bar checkers first, no
    bearing off, and it may stop at any time (the must-use-both-dice rules are
    ignored).  Each roll loses the dearest blot it can hit.
    """
    bd = tuple(int(x) for x in board)
    hits = doubles = 0
    loss = 0
    for a, b in ROLLS:
        outs = _outcomes(bd, (a,) * 4) if a == b else _outcomes(bd, (a, b)) | _outcomes(bd, (b, a))
        single = [h for h in outs if h]
        if single:
            hits += 1
            loss += max(25 - min(h) for h in single)
        if any(len(h) >= 2 for h in outs):
            doubles += 1
    return hits, doubles, loss / 36


# ---- escapes, blockades, entering -------------------------------------------


def test_escapes_behind_primes() -> None:
    # the opponent's points 2..7 (my 23..18): a full prime right in front of my 24
    f = feat({24: 1}, {q: 2 for q in range(2, 8)})
    assert f["escapes"] == 0.0 and f["contain"] == 0.0
    assert f["prime_front"] == 1.0 and f["primed_points"] == pytest.approx(6 / 7)
    # a prime one point further on (my 22..17): still no way past
    assert feat({24: 1}, {q: 2 for q in range(3, 9)})["escapes"] == 0.0
    # a 5-prime (my 23..19): only a 6 jumps it, to the 18: the 11 rolls with a 6
    f = feat({24: 1}, {q: 2 for q in range(2, 7)})
    assert f["escapes"] == pytest.approx(11 / 36)
    assert f["prime_front"] == pytest.approx(5 / 6)
    # nothing made among the six in front (the opponent's midpoint is 12 away): every roll escapes
    assert feat({24: 1}, {13: 2})["escapes"] == 1.0


def test_escape_counts_against_a_walk_over_the_dice() -> None:
    rng = np.random.default_rng(11)
    for _ in range(40):
        points = rng.choice(np.arange(1, 13), size=rng.integers(1, 6), replace=False)
        theirs = {int(q): 2 for q in points}  # opponent's points 1..12 = my 24..13
        made = {25 - q for q in theirs}
        me = int(rng.integers(14, 25))
        while me in made:
            me += 1
        if me > 24:
            continue
        front = [x for x in made if me - 6 <= x < me]
        expected = 36
        if front:
            lowest = min(front)
            expected = 0
            for a, b in ROLLS:
                orders = [[a] * 4] if a == b else [[a, b], [b, a]]
                ok = False
                for steps in orders:
                    x = me
                    for d in steps:
                        x -= d
                        if x in made and me - x <= 12:
                            break
                        if x < lowest:
                            ok = True
                            break
                expected += ok
        assert feat({me: 1}, theirs)["escapes"] == pytest.approx(expected / 36), (me, theirs)


def test_entering_from_the_bar() -> None:
    closed = {q: 2 for q in range(1, 7)}
    f = feat({25: 1}, closed)
    assert f["dance"] == 1.0 and f["opp_closed"] == 1.0 and f["bar"] == pytest.approx(1 / 4)
    f = feat({25: 2}, {1: 2, 2: 2, 3: 2})
    assert f["dance"] == pytest.approx(0.25) and f["opp_closed"] == pytest.approx(0.5)
    f = feat({13: 2}, {1: 2, 2: 2, 3: 2})
    assert f["dance"] == 0.0 and f["opp_closed"] == pytest.approx(0.5)


def test_anchors_and_back_checkers() -> None:
    f = feat({24: 1, 22: 2, 20: 3, 9: 1}, {24: 2})
    assert f["back_checker"] == pytest.approx(24 / 25)
    assert f["back_anchor"] == pytest.approx(22 / 24)
    assert f["forward_anchor"] == pytest.approx(5 / 6)  # the 20 is the opponent's 5-point
    assert f["anchors"] == pytest.approx(2 / 6)
    # the opponent's rearmost checker is on my 1: pips to get past it
    assert f["break_contact"] == pytest.approx((24 + 2 * 22 + 3 * 20 + 9) / 167)
    assert f["behind"] == pytest.approx(7 / 15)
    f = feat({25: 1, 6: 2}, {1: 2})
    assert f["back_checker"] == 1.0 and f["forward_anchor"] == 0.0


# ---- the simple counts against a plain reference ----------------------------


def _reference_simple(board: np.ndarray) -> dict[str, float]:
    b = [int(x) for x in board]
    mine = {p: b[p] for p in range(1, 26) if b[p] > 0}
    n_on = sum(mine.values())
    pips = sum(p * n for p, n in mine.items())
    q = min([s for s in range(25) if b[s] < 0], default=25)
    made_opp = [x for x in range(1, 25) if b[x] <= -2]
    rear = max(mine, default=0)

    def longest(points: list[int]) -> int:
        best = run = 0
        for x in range(1, 26):
            run = run + 1 if x in points else 0
            best = max(best, run)
        return best

    my_made = [p for p in range(1, 25) if b[p] >= 2]
    timing = sum((n - (2 if 19 <= p <= 24 and n >= 2 else 0)) * (p - 6) for p, n in mine.items() if p >= 7)
    timing += sum((n - 2 if n >= 2 else n) * (p - 1) for p, n in mine.items() if 2 <= p <= 6)
    positions = [p for p, n in mine.items() for _ in range(n)]
    closed = sum(1 for x in made_opp if x >= 19)
    fwd = [p for p in my_made if p >= 19]
    return {
        "pips": pips / 167,
        "off": (15 - n_on) / 15,
        "bar": min(b[25], 4) / 4,
        "break_contact": sum(n * (p - q + 1) for p, n in mine.items() if p > q) / 167,
        "behind": sum(n for p, n in mine.items() if p > q) / 15,
        "back_checker": rear / 25,
        "back_anchor": max(my_made, default=0) / 24,
        "forward_anchor": (25 - min(fwd)) / 6 if fwd else 0.0,
        "anchors": len(fwd) / 6,
        "primed_points": sum(1 for x in made_opp if x < rear) / 7,
        "prime_front": min(longest([x for x in made_opp if x < rear]), 6) / 6,
        "dance": (closed / 6) ** 2 if b[25] else 0.0,
        "opp_closed": closed / 6,
        "timing": timing / 100,
        "spread": float(np.std(positions)) / 12 if positions else 0.0,
        "home_points": sum(1 for p in my_made if p <= 6) / 6,
        "blots": sum(1 for p in range(1, 25) if b[p] == 1) / 15,
        "points": len(my_made) / 7,
        "my_prime": min(longest(my_made), 6) / 6,
        "stacking": sum(max(0, n - 3) for p, n in mine.items() if p <= 24) / 12,
    }


def test_simple_features_against_a_plain_reference(boards: np.ndarray) -> None:
    sample = boards[:400]
    out = features(sample)
    for b, row in zip(sample, out, strict=True):
        for side, view in ((0, b), (1, flip(b))):
            ref = _reference_simple(view)
            for name, value in ref.items():
                assert row[side * F + COL[name]] == pytest.approx(value, abs=1e-5), (name, b.tolist())
