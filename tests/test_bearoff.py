"""The one-sided bear-off database: exact against brute force, and against gnubg's own database.

Brute force here is plain recursion in exact fractions over :func:`bgbot.movegen.legal_moves`
(the Python move lister, not the compiled batch generator the database is built with).  The
policies are the database's documented ones: minimise the expected turns (to finish, or to take
the first checker off), ties broken by the smallest index, i.e. by the key
``(checkers, -c1, -c2, ..., -c6)``, written here from the ranking's definition, not from its code.
"""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import zipfile
from fractions import Fraction
from functools import cache
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from bgbot.errors import BgbotError, CheckpointError, InvalidPositionError
from bgbot.eval import bearoff
from bgbot.eval.bearoff import (
    BEAROFF_VERSION,
    ENV_VAR,
    MAX_TURNS,
    BearoffDB,
    build_bearoff,
    default_path,
    get_bearoff_db,
    num_positions,
    rank_counts,
    unrank_all,
)
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

Counts = tuple[int, int, int, int, int, int]
ROLLS = [((d1, d2), Fraction(1 if d1 == d2 else 2, 36)) for d1 in range(1, 7) for d2 in range(1, d1 + 1)]
BEAROFFDUMP = Path("/usr/games/bearoffdump")
GNUBG_OS_DB = Path("/usr/share/gnubg/gnubg_os0.bd")


# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The full database, built once per session by loading a path where no file exists yet."""
    path = tmp_path_factory.mktemp("bearoff") / "bearoff.npz"
    BearoffDB.load(path, progress=False)
    return path


@pytest.fixture(scope="session")
def db(db_path: Path) -> BearoffDB:
    return BearoffDB.load(db_path, build_if_missing=False)


# ---------------------------------------------------------------------------
# brute force (exact fractions)
# ---------------------------------------------------------------------------


def board_of(mine: Counts, theirs: Counts = (0,) * 6) -> np.ndarray:
    """A board from the side on roll's view: ``mine`` on its points 1..6, ``theirs`` on the opponent's."""
    pos = Position.from_points(
        {p + 1: n for p, n in enumerate(mine) if n}, {p + 1: n for p, n in enumerate(theirs) if n}
    )
    return pos.array()


def boards_of(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """``(N, 26)`` boards from ``(N, 6)`` counts of the side on roll and of the opponent."""
    pairs = zip(mine.tolist(), theirs.tolist(), strict=True)
    return np.array([board_of(tuple(a), tuple(b)) for a, b in pairs])


def order_key(c: Counts) -> tuple[int, ...]:
    """gnubg's ranking order: fewer checkers first, then more checkers on the lower points first."""
    return (sum(c), *(-x for x in c))


@cache
def successors(c: Counts, dice: tuple[int, int]) -> tuple[Counts, ...]:
    """The mover's counts on points 1..6 after each legal play (no opponent checkers on the board)."""
    moves = legal_moves(Position.from_array(board_of(c)), dice)
    return tuple(sorted({tuple(m.result.theirs()[1:7]) for m in moves}))  # type: ignore[misc]


@cache
def exp_all_off(c: Counts) -> Fraction:
    if sum(c) == 0:
        return Fraction(0)
    return 1 + sum(w * min(exp_all_off(s) for s in successors(c, d)) for d, w in ROLLS)


@cache
def first_off_value(parent: Counts, s: Counts) -> Fraction:
    """Expected further turns to the first checker off after playing ``parent`` -> ``s``."""
    return Fraction(0) if sum(s) < sum(parent) else exp_first_off(s)


@cache
def exp_first_off(c: Counts) -> Fraction:
    if sum(c) == 0:
        return Fraction(0)
    return 1 + sum(w * min(first_off_value(c, s) for s in successors(c, d)) for d, w in ROLLS)


def play_all_off(c: Counts, dice: tuple[int, int]) -> Counts:
    return min(successors(c, dice), key=lambda s: (exp_all_off(s), order_key(s)))


def play_first_off(c: Counts, dice: tuple[int, int]) -> Counts:
    return min(successors(c, dice), key=lambda s: (first_off_value(c, s), order_key(s)))


@cache
def dist_all_off(c: Counts) -> tuple[Fraction, ...]:
    out = [Fraction(0)] * MAX_TURNS
    if sum(c) == 0:
        out[0] = Fraction(1)
        return tuple(out)
    for d, w in ROLLS:
        rest = dist_all_off(play_all_off(c, d))
        for n in range(MAX_TURNS - 1):
            out[n + 1] += w * rest[n]
    return tuple(out)


@cache
def dist_first_off(c: Counts) -> tuple[Fraction, ...]:
    out = [Fraction(0)] * MAX_TURNS
    if sum(c) == 0:
        out[0] = Fraction(1)
        return tuple(out)
    for d, w in ROLLS:
        s = play_first_off(c, d)
        if sum(s) < sum(c):
            out[1] += w
        else:
            rest = dist_first_off(s)
            for n in range(MAX_TURNS - 1):
                out[n + 1] += w * rest[n]
    return tuple(out)


@cache
def p_win_direct(a: Counts, b: Counts) -> Fraction:
    """P(``a`` wins) with ``a`` on roll, both sides playing the all-off policy, enumerated turn by turn."""
    total = Fraction(0)
    for d, w in ROLLS:
        s = play_all_off(a, d)
        total += w * (1 if sum(s) == 0 else 1 - p_win_direct(b, s))
    return total


@cache
def p_lose_gammon_direct(a: Counts, b: Counts) -> Fraction:
    """``a`` (15 checkers, on roll, first-off policy) is gammoned by ``b`` (all-off policy)."""
    total = Fraction(0)
    for d, w in ROLLS:
        s = play_first_off(a, d)
        if sum(s) == sum(a):
            total += w * p_gammons_direct(s, b)
    return total


@cache
def p_gammons_direct(a: Counts, b: Counts) -> Fraction:
    """``b`` on roll gammons ``a`` (15 checkers on the board): ``b`` finishes before ``a`` bears one off."""
    total = Fraction(0)
    for d, w in ROLLS:
        s = play_all_off(b, d)
        total += w * (1 if sum(s) == 0 else p_lose_gammon_direct(a, s))
    return total


def all_counts(max_checkers: int) -> list[Counts]:
    return [c for c in product(range(max_checkers + 1), repeat=6) if sum(c) <= max_checkers]  # type: ignore[misc]


# ---------------------------------------------------------------------------
# index
# ---------------------------------------------------------------------------


def test_ranking_is_a_bijection_in_gnubg_order() -> None:
    counts = unrank_all()
    assert counts.shape == (math.comb(21, 6), 6) == (54264, 6)
    assert np.array_equal(rank_counts(counts), np.arange(len(counts)))
    keys = [order_key(tuple(int(x) for x in row)) for row in counts]  # type: ignore[arg-type]
    assert keys == sorted(keys)
    assert int(rank_counts([0] * 6)) == 0
    assert int(rank_counts([0, 0, 0, 0, 0, 15])) == 54263


def test_smaller_databases_are_prefixes(db: BearoffDB) -> None:
    small = BearoffDB.build(5)
    n = num_positions(5)
    assert small.rolls.shape == (n, MAX_TURNS)
    assert np.array_equal(small.rolls, db.rolls[:n])
    assert np.array_equal(small.first_off, db.first_off[:n])
    assert np.array_equal(unrank_all(5), unrank_all()[:n])


def test_index_matches_gnubg_bearoff_ids() -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    counts = unrank_all()
    for i in range(1, len(counts)):
        assert tuple(counts[i]) == tuple(gnubg_nn.bearoff_id_2_pos(i)), i


# ---------------------------------------------------------------------------
# one-sided exactness
# ---------------------------------------------------------------------------


def test_expected_rolls_equal_brute_force_up_to_five_checkers(db: BearoffDB) -> None:
    positions = all_counts(5)
    exact = np.array([float(exp_all_off(c)) for c in positions])
    exact_first = np.array([float(exp_first_off(c)) for c in positions])
    np.testing.assert_allclose(db.expected_rolls(positions), exact, rtol=0, atol=2e-6)
    np.testing.assert_allclose(db.expected_rolls_first_off(positions), exact_first, rtol=0, atol=2e-6)


def test_distributions_equal_brute_force_up_to_four_checkers(db: BearoffDB) -> None:
    positions = all_counts(4)
    exact = np.array([[float(p) for p in dist_all_off(c)] for c in positions])
    exact_first = np.array([[float(p) for p in dist_first_off(c)] for c in positions])
    np.testing.assert_allclose(db.rolls_distribution(positions), exact, rtol=0, atol=1e-6)
    np.testing.assert_allclose(db.first_off_distribution(positions), exact_first, rtol=0, atol=1e-6)


def test_known_one_sided_facts(db: BearoffDB) -> None:
    one_on_ace = db.rolls_distribution([1, 0, 0, 0, 0, 0])
    assert one_on_ace[1] == 1.0 and one_on_ace.sum() == 1.0
    # one checker on the 6-point is off at once unless the roll totals under 6: 11, 21, 31, 41, 32
    assert db.rolls_distribution([0, 0, 0, 0, 0, 1])[:3] == pytest.approx([0, 27 / 36, 9 / 36], abs=1e-7)
    # two checkers on the 6-point come off in one roll only with 33, 44, 55 or 66
    assert db.rolls_distribution([0, 0, 0, 0, 0, 2])[1] == pytest.approx(4 / 36, abs=1e-7)
    assert db.rolls_distribution([0] * 6)[0] == 1.0
    assert db.expected_rolls([2, 0, 0, 0, 0, 0]) == pytest.approx(1.0)


def test_fifteen_on_the_ace_point_against_a_closed_form(db: BearoffDB) -> None:
    # k checkers on the 1-point: a double takes 4 off, any other roll 2.
    @cache
    def dist(k: int) -> tuple[Fraction, ...]:
        out = [Fraction(0)] * MAX_TURNS
        if k <= 0:
            out[0] = Fraction(1)
            return tuple(out)
        for take, w in ((4, Fraction(1, 6)), (2, Fraction(5, 6))):
            for n, p in enumerate(dist(k - take)[:-1]):
                out[n + 1] += w * p
        return tuple(out)

    np.testing.assert_allclose(db.rolls_distribution([15, 0, 0, 0, 0, 0]), [float(p) for p in dist(15)], atol=1e-7)
    assert db.first_off_distribution([15, 0, 0, 0, 0, 0])[1] == 1.0


@pytest.mark.parametrize("position", [(10, 0, 0, 0, 0, 5), (12, 0, 0, 0, 2, 1), (11, 0, 1, 0, 0, 3)])
def test_first_off_of_fifteen_checkers_equals_brute_force(db: BearoffDB, position: Counts) -> None:
    exact = [float(p) for p in dist_first_off(position)]
    np.testing.assert_allclose(db.first_off_distribution(position), exact, atol=1e-6)
    assert db.expected_rolls_first_off(position) == pytest.approx(float(exp_first_off(position)), abs=1e-6)


def test_tails_fit_and_first_off_never_slower_than_all_off(db: BearoffDB) -> None:
    for table in (db.rolls, db.first_off):
        assert np.allclose(table.sum(axis=1), 1.0, atol=1e-5)
        assert (table[:, -1] < 1e-12).all()
    # the gammon cap in evaluate() only removes rounding: P(first off >= n) <= P(all off >= n)
    assert (bearoff._survival(db.first_off) - bearoff._survival(db.rolls)).max() < 1e-6


# ---------------------------------------------------------------------------
# against gnubg's one-sided database
# ---------------------------------------------------------------------------


def test_rolls_distributions_match_gnubg(db: BearoffDB) -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    worst = np.zeros(len(db.rolls))
    for i in range(1, len(db.rolls)):
        ref = np.asarray(gnubg_nn.bearoff_probabilities(i))  # P(1 roll), P(2 rolls), ...
        ours = db.rolls[i, 1 : 1 + len(ref)]
        assert db.rolls[i, 1 + len(ref) :].sum() < 1e-4, i
        assert abs(ours @ np.arange(1, len(ref) + 1) - ref @ np.arange(1, len(ref) + 1)) < 5e-4, i
        worst[i] = np.abs(ours - ref).max()
    # gnubg stores 16-bit probabilities and chooses between nearly equal moves from them, so a few
    # positions follow the other of two moves whose expected rolls differ by ~1e-5
    assert np.median(worst) < 2e-5
    assert (worst > 1e-4).mean() < 0.01
    assert worst.max() < 5e-3


@pytest.mark.gnubg
@pytest.mark.skipif(not (BEAROFFDUMP.exists() and GNUBG_OS_DB.exists()), reason="gnubg's bearoffdump absent")
def test_first_off_distributions_match_gnubg_bearoffdump(db: BearoffDB) -> None:
    rng = random.Random(7)
    ids = [54263, num_positions(14), *rng.sample(range(num_positions(14), num_positions(15)), 40)]
    for i in ids:
        text = subprocess.run(
            [str(BEAROFFDUMP), str(GNUBG_OS_DB), "-n", str(i)], capture_output=True, text=True, check=True
        ).stdout
        table = text.split("Rolls")[1].split("Average")[0].strip().splitlines()[1:]
        # the dumped position is the "Opponent": columns rolls, player, opponent, player (gammon), opponent
        ref_all = np.zeros(MAX_TURNS)
        ref_first = np.zeros(MAX_TURNS)
        for line in table:
            cols = line.split()
            ref_all[int(cols[0])] = float(cols[2]) / 100
            if len(cols) == 5:
                ref_first[int(cols[0])] = float(cols[4]) / 100
        np.testing.assert_allclose(db.first_off[i], ref_first, atol=1e-4, err_msg=str(i))
        np.testing.assert_allclose(db.rolls[i], ref_all, atol=2e-3, err_msg=str(i))


def test_win_chances_match_gnubg_evaluation(db: BearoffDB) -> None:
    gnubg_nn = pytest.importorskip("gnubg_nn")
    counts = unrank_all()
    rng = np.random.default_rng(11)
    boards, refs = [], []
    for _ in range(200):
        # at least one side with 7+ checkers, so gnubg uses its one-sided database (not the two-sided one)
        a, b = rng.integers(num_positions(6), len(counts)), rng.integers(1, len(counts))
        mine, theirs = (counts[a], counts[b]) if rng.random() < 0.5 else (counts[b], counts[a])
        gboard = [[int(x) for x in theirs] + [0] * 19, [int(x) for x in mine] + [0] * 19]
        boards.append(board_of(tuple(mine), tuple(theirs)))  # type: ignore[arg-type]
        refs.append(gnubg_nn.probabilities(gboard, 0)[0])
    np.testing.assert_allclose(db.evaluate(np.array(boards))[:, 0], refs, atol=2e-4)


# ---------------------------------------------------------------------------
# two-sided combination
# ---------------------------------------------------------------------------


def test_win_formula_equals_direct_two_sided_enumeration(db: BearoffDB) -> None:
    small = [c for c in all_counts(3) if sum(c) > 0]
    pairs = [(a, b) for a in small for b in small]
    picks = [*random.Random(3).sample(pairs, 150), ((0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1))]
    boards = np.array([board_of(a, b) for a, b in picks])
    exact = [float(p_win_direct(a, b)) for a, b in picks]
    probs = db.evaluate(boards)
    np.testing.assert_allclose(probs[:, 0], exact, atol=2e-6)
    assert (probs[:, [1, 2, 3, 4]] == 0).all()


@pytest.mark.parametrize("loser", [(10, 0, 0, 0, 0, 5), (12, 0, 0, 0, 2, 1)])
@pytest.mark.parametrize("winner", [(1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 2), (0, 0, 1, 1, 0, 1), (2, 1, 0, 2, 0, 0)])
def test_gammon_formula_equals_direct_enumeration(db: BearoffDB, loser: Counts, winner: Counts) -> None:
    on_roll_loser = db.evaluate(board_of(loser, winner))[0]
    assert on_roll_loser[3] == pytest.approx(float(p_lose_gammon_direct(loser, winner)), abs=2e-6)
    assert on_roll_loser[1] == 0  # the winner has borne checkers off already
    on_roll_winner = db.evaluate(board_of(winner, loser))[0]
    assert on_roll_winner[1] == pytest.approx(float(p_gammons_direct(loser, winner)), abs=2e-6)
    assert on_roll_winner[3] == 0


def test_known_two_sided_facts(db: BearoffDB) -> None:
    ace = (1, 0, 0, 0, 0, 0)
    fifteen = (15, 0, 0, 0, 0, 0)
    # one checker left: the side on roll wins at once, and a gammon if the other has all 15 on the board
    assert db.evaluate(board_of(ace, fifteen))[0].tolist() == [1, 1, 0, 0, 0]
    # whoever has 15 on the ace point takes two off at once: no gammon, but no chance to win either
    assert db.evaluate(board_of(fifteen, ace))[0].tolist() == [0, 0, 0, 0, 0]
    # being on roll is worth exactly the ties: P(a first wins) + P(b first wins) = 1 + P(same turns)
    counts = unrank_all()
    rng = np.random.default_rng(5)
    ia, ib = rng.integers(1, len(counts), 300), rng.integers(1, len(counts), 300)
    ab = db.evaluate(boards_of(counts[ia], counts[ib]))
    ba = db.evaluate(boards_of(counts[ib], counts[ia]))
    ties = (db.rolls[ia].astype(np.float64) * db.rolls[ib]).sum(axis=1)
    np.testing.assert_allclose(ab[:, 0] + ba[:, 0], 1 + ties, atol=1e-5)


def test_evaluate_outputs_are_consistent(db: BearoffDB) -> None:
    counts = unrank_all()
    rng = np.random.default_rng(9)
    fifteen = np.arange(num_positions(14), len(counts))
    ia = np.concatenate([rng.integers(0, len(counts), 500), rng.choice(fifteen, 500)])
    ib = np.concatenate([rng.choice(fifteen, 500), rng.integers(1, num_positions(5), 500)])
    probs = db.evaluate(boards_of(counts[ia], counts[ib]))
    assert probs.shape == (1000, 5) and probs.dtype == np.float32
    win, wg, wbg, lg, lbg = probs.T
    assert ((win >= 0) & (win <= 1)).all()
    assert ((wg >= 0) & (wg <= win)).all() and ((lg >= 0) & (lg <= 1 - win + 1e-7)).all()
    assert (wbg == 0).all() and (lbg == 0).all()
    mine_n, theirs_n = counts[ia].sum(axis=1), counts[ib].sum(axis=1)
    assert (wg[theirs_n < 15] == 0).all() and (lg[mine_n < 15] == 0).all()
    assert (wg[theirs_n == 15] > 0).any() and (lg[mine_n == 15] > 0).any()


def test_compiled_lookup_equals_the_numpy_one(db: BearoffDB) -> None:
    """evaluate_home's compiled kernel and its numpy statement agree on random two-sided positions."""
    counts = unrank_all()
    rng = np.random.default_rng(12)
    fifteen = np.arange(num_positions(14), len(counts))
    ia = np.concatenate([rng.integers(0, len(counts), 2000), rng.choice(fifteen, 500), [0, len(counts) - 1]])
    ib = np.concatenate([rng.choice(fifteen, 500), rng.integers(0, len(counts), 2000), [len(counts) - 1, 0]])
    boards = boards_of(counts[ia], counts[ib]).astype(np.int8)
    got = db.evaluate_home(boards)
    want = db._evaluate_home_numpy(boards)
    assert got.dtype == np.float32 and got.shape == want.shape == (2502, 5)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-7)
    assert (got[:, 1] > 0).any() and (got[:, 3] > 0).any()  # both gammon branches are exercised


# ---------------------------------------------------------------------------
# is_bearoff and input errors
# ---------------------------------------------------------------------------


def test_is_bearoff(db: BearoffDB) -> None:
    home = Position.from_points({6: 5, 5: 5, 1: 5}, {6: 3, 2: 2})
    cases = {
        home: True,
        Position.start(): False,
        Position.from_points({7: 1, 1: 2}, {1: 3}): False,  # my checker still outside
        Position.from_points({1: 2}, {7: 1, 6: 2}): False,  # theirs still outside
        Position.from_points({25: 1, 1: 2}, {1: 3}): False,  # on my bar
        Position.from_points({1: 2}, {25: 1, 3: 1}): False,  # on their bar
        Position.from_points({20: 1, 1: 2}, {24: 1, 3: 1}): False,  # contact
        Position.from_points({}, {6: 2}): True,  # game over: I have borne everything off
    }
    boards = np.array([p.array() for p in cases])
    assert db.is_bearoff(boards).tolist() == list(cases.values())
    assert bool(db.is_bearoff(home.array())) is True
    assert db.evaluate(home.array()).shape == (1, 5)


def test_bad_input_raises_specific_errors(db: BearoffDB) -> None:
    with pytest.raises(InvalidPositionError, match="not a bear-off position"):
        db.evaluate(Position.start().array()[None, :])
    with pytest.raises(InvalidPositionError, match=r"\[1, 2, 3\]"):
        db.index([1, 2, 3])
    with pytest.raises(InvalidPositionError, match="at most 15"):
        db.index([16, 0, 0, 0, 0, 0])
    with pytest.raises(InvalidPositionError):
        db.evaluate(np.zeros((3, 25), dtype=np.int8))
    small = BearoffDB.build(3)
    with pytest.raises(InvalidPositionError, match="at most 3 checkers"):
        small.rolls_distribution([4, 0, 0, 0, 0, 0])
    assert not small.is_bearoff(board_of((4, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0)))


# ---------------------------------------------------------------------------
# the file
# ---------------------------------------------------------------------------


def test_file_round_trip_and_contents(db_path: Path, db: BearoffDB) -> None:
    with np.load(db_path) as data:
        assert int(data["version"]) == BEAROFF_VERSION
        assert data["rolls"].dtype == np.float32
    assert db.max_checkers == 15 and db.rolls.shape == (54264, MAX_TURNS)


def test_build_bearoff_writes_a_loadable_file(tmp_path: Path) -> None:
    out = build_bearoff(tmp_path / "sub" / "small.npz", progress=False, max_checkers=4)
    assert out == tmp_path / "sub" / "small.npz"
    small = BearoffDB.load(out, build_if_missing=False)
    assert small.max_checkers == 4 and small.rolls.shape == (num_positions(4), MAX_TURNS)
    assert list((tmp_path / "sub").iterdir()) == [out]  # no temporary left behind


def test_corrupt_and_foreign_files_raise_checkpoint_error(tmp_path: Path, db_path: Path) -> None:
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(db_path.read_bytes()[:100_000])
    other_version = tmp_path / "v0.npz"
    small = BearoffDB.build(2)
    np.savez_compressed(
        other_version,
        version=np.int64(0),
        max_checkers=np.int64(2),
        rolls=small.rolls,
        first_off=small.first_off,
    )
    bad_shape = tmp_path / "shape.npz"
    np.savez_compressed(
        bad_shape,
        version=np.int64(BEAROFF_VERSION),
        max_checkers=np.int64(3),
        rolls=small.rolls,
        first_off=small.first_off,
    )
    flipped = tmp_path / "flipped.npz"
    data = bytearray(db_path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)
    flipped.write_bytes(bytes(data))
    plain_npy = tmp_path / "plain.npz"
    with plain_npy.open("wb") as fh:
        np.save(fh, small.rolls)
    missing_key = tmp_path / "key.npz"
    np.savez_compressed(missing_key, version=np.int64(BEAROFF_VERSION))
    for path in (garbage, truncated, flipped, plain_npy, other_version, bad_shape, missing_key):
        with pytest.raises(CheckpointError, match=repr(str(path))):
            BearoffDB.load(path, build_if_missing=False)
    with pytest.raises(CheckpointError, match="version 0"):
        BearoffDB.load(other_version)
    with pytest.raises(CheckpointError, match="no bear-off database"):
        BearoffDB.load(tmp_path / "absent.npz", build_if_missing=False)
    assert issubclass(CheckpointError, BgbotError)
    assert zipfile.is_zipfile(db_path)


def test_default_path_and_singleton(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_path: Path) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(bearoff, "_PACKAGED", tmp_path / "data" / "absent.npz")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_path() == tmp_path / "cache" / "bgbot" / f"bearoff-v{BEAROFF_VERSION}.npz"
    copy = tmp_path / "copy.npz"
    shutil.copy(db_path, copy)
    monkeypatch.setattr(bearoff, "_PACKAGED", copy)  # a copy shipped in the package wins over the cache
    assert default_path() == copy
    monkeypatch.setenv(ENV_VAR, str(copy))
    assert default_path() == copy
    first = get_bearoff_db()
    assert get_bearoff_db() is first
    assert get_bearoff_db(copy) is first
    assert first.rolls.shape == (54264, MAX_TURNS)
