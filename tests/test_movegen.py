"""The move generator against GNU Backgammon's own move lists (tests/data/movegen/oracle.jsonl).

Every oracle line is ``{"position": ID, "dice": [a, b], "results": [sorted result IDs]}``:
the position is seen from the side on roll, each result from the opponent's view
(opponent on roll), and ``results`` is empty when the roll cannot be played.
All three entry points (``successors``, ``successors_batch``, ``legal_moves``)
must reproduce every line exactly.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from bgbot.errors import InvalidDiceError
from bgbot.rules.dice import parse_dice
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.moves import Move, legal_moves
from bgbot.rules.position import Position, gnubg_position_id, parse_gnubg_position_id

DATA = Path(__file__).resolve().parent / "data"  # reference data kept in the repository (data/README.md)
ORACLE = DATA / "movegen" / "oracle.jsonl"
START_ID = "4HPwATDgc/ABMA"


@cache
def oracle() -> list[tuple[Position, tuple[int, int], list[str]]]:
    rows = []
    with ORACLE.open() as f:
        for line in f:
            r = json.loads(line)
            rows.append((parse_gnubg_position_id(r["position"]), (r["dice"][0], r["dice"][1]), r["results"]))
    return rows


def ids(positions: list[Position]) -> list[str]:
    return sorted(gnubg_position_id(p) for p in positions)


def test_the_id_codec_reads_the_start_and_round_trips_every_oracle_id() -> None:
    # the comparisons below go through gnubg Position IDs; make sure they are faithful here
    assert parse_gnubg_position_id(START_ID) == Position.start()
    assert gnubg_position_id(Position.start()) == START_ID
    # asymmetric, so the side order counts (ID computed by gnubg's own PositionID)
    assert parse_gnubg_position_id("4P8PAADB/w8AAA") == Position.from_points({1: 1, 6: 14}, {6: 15})
    with ORACLE.open() as f:
        for line in f:
            r = json.loads(line)
            for pid in [r["position"], *r["results"]]:
                assert gnubg_position_id(parse_gnubg_position_id(pid)) == pid


def test_oracle_covers_what_the_readme_promises() -> None:
    rows = oracle()
    assert len(rows) == 2869
    assert sum(1 for _, _, res in rows if not res) == 272
    rolls = {d for _, d, _ in rows}
    assert len({tuple(sorted(d)) for d in rolls}) == 21
    assert all((b, a) in rolls for a, b in rolls)


# ---------------------------------------------------------------------------
# successors / successors_batch / legal_moves against the oracle
# ---------------------------------------------------------------------------


def test_successors_reproduce_every_oracle_line() -> None:
    mismatches = []
    for pos, dice, results in oracle():
        got = ids(successors(pos, dice))
        if got != results:
            mismatches.append((gnubg_position_id(pos), dice, len(got), len(results)))
    assert mismatches == []


def test_successors_do_not_depend_on_dice_order() -> None:
    for pos, (a, b), results in oracle():
        if a != b:
            assert ids(successors(pos, (b, a))) == results


def test_successors_batch_reproduces_the_whole_file_in_one_call() -> None:
    rows = oracle()
    boards = np.stack([p.array() for p, _, _ in rows])  # (N, 26)
    dice = np.array([d for _, d, _ in rows], dtype=np.int64)  # (N, 2)
    succ, parent = successors_batch(boards, dice, include_pass=False)
    assert succ.dtype == np.int8 and succ.shape == (len(parent), 26)
    assert np.all(np.diff(parent) >= 0), "rows of one parent must be contiguous and in order"
    assert len(succ) == sum(len(res) for _, _, res in rows)
    by_parent: dict[int, list[Position]] = defaultdict(list)
    for row, p in zip(succ, parent, strict=True):
        by_parent[int(p)].append(Position.from_array(row))
    for i, (_, _, results) in enumerate(rows):
        assert ids(by_parent.get(i, [])) == results, i


def test_successors_batch_with_one_roll_for_every_row() -> None:
    rows = [(p, res) for p, d, res in oracle() if tuple(sorted(d)) == (5, 6)]
    assert len(rows) > 50
    boards = np.stack([p.array() for p, _ in rows])
    succ, parent = successors_batch(boards, (6, 5), include_pass=False)
    for i, (_, results) in enumerate(rows):
        assert ids([Position.from_array(r) for r in succ[parent == i]]) == results


def test_include_pass_adds_exactly_the_swapped_position_for_rolls_without_a_move() -> None:
    rows = oracle()
    boards = np.stack([p.array() for p, _, _ in rows])
    dice = np.array([d for _, d, _ in rows], dtype=np.int64)
    plain, plain_parent = successors_batch(boards, dice, include_pass=False)
    full, full_parent = successors_batch(boards, dice)  # include_pass defaults to True
    blocked = [i for i, (_, _, res) in enumerate(rows) if not res]
    assert len(blocked) == 272
    for i in blocked:
        assert not np.any(plain_parent == i)
        only = full[full_parent == i]
        assert only.shape == (1, 26)
        assert Position.from_array(only[0]) == rows[i][0].swap()
    # every other row is untouched
    keep = ~np.isin(full_parent, blocked)
    np.testing.assert_array_equal(full[keep], plain)
    np.testing.assert_array_equal(full_parent[keep], plain_parent)


def test_successors_is_empty_and_legal_moves_is_one_empty_move_when_blocked() -> None:
    n = 0
    for pos, dice, results in oracle():
        if results:
            continue
        n += 1
        assert successors(pos, dice) == []
        assert legal_moves(pos, dice) == [Move((), pos.swap())]
    assert n == 272


def test_empty_batch() -> None:
    succ, parent = successors_batch(np.zeros((0, 26), dtype=np.int8), (3, 1))
    assert succ.shape == (0, 26) and parent.shape == (0,)


# ---------------------------------------------------------------------------
# legal_moves: results and steps
# ---------------------------------------------------------------------------


def _all_home(b: list[int]) -> bool:
    return all(b[i] <= 0 for i in range(7, 26))


def _replay(b: list[int], steps: tuple[tuple[int, int, bool], ...], pool: list[int]) -> list[int] | None:
    """Play ``steps`` one die each, checking every rule of a single step; the board or None.

    A bear-off with a die larger than the point can use more than one die of
    the roll, so the die a step used is searched, not guessed.
    """
    if not steps:
        return b
    (src, dst, hit), rest = steps[0], steps[1:]
    if not (1 <= src <= 25 and 0 <= dst < src) or b[src] <= 0:
        return None
    if b[25] > 0 and src != 25:
        return None  # bar checkers first
    if dst == 0:
        if not _all_home(b):
            return None
        higher_empty = all(b[i] <= 0 for i in range(src + 1, 7))
        dice = sorted({d for d in pool if d == src or (d > src and higher_empty)})
    else:
        if b[dst] < -1 or hit != (b[dst] == -1):
            return None
        dice = [src - dst] if src - dst in pool else []
    for d in dice:
        nb_ = list(b)
        nb_[src] -= 1
        if dst > 0:
            if nb_[dst] == -1:
                nb_[dst] = 0
                nb_[0] -= 1
            nb_[dst] += 1
        left = list(pool)
        left.remove(d)
        out = _replay(nb_, rest, left)
        if out is not None:
            return out
    return None


def test_legal_moves_reproduce_every_oracle_line_with_steps_that_reach_the_result() -> None:
    for pos, (d1, d2), results in oracle():
        moves = legal_moves(pos, (d1, d2))
        if not results:
            continue
        assert ids([m.result for m in moves]) == results
        lengths = {len(m.steps) for m in moves}
        assert len(lengths) == 1, "every legal play uses the same number of dice"
        assert 1 <= lengths.pop() <= (4 if d1 == d2 else 2)
        pool = [d1] * 4 if d1 == d2 else [d1, d2]
        for m in moves:
            end = _replay(list(pos.board), m.steps, pool)
            assert end is not None, (gnubg_position_id(pos), (d1, d2), m.steps)
            assert Position(end) == m.result.swap(), (gnubg_position_id(pos), (d1, d2), m.steps)


def _playable(b: list[int], d: int) -> bool:
    """Whether some single step with die ``d`` is legal on board ``b`` (mover's view)."""
    for src in range(1, 26):
        dst = max(src - d, 0)
        if _replay(b, ((src, dst, dst > 0 and b[dst] == -1),), [d]) is not None:
            return True
    return False


def test_one_die_plays_use_the_higher_die_whenever_it_can_be_played() -> None:
    seen = 0
    for pos, (d1, d2), results in oracle():
        if d1 == d2 or not results:
            continue
        moves = legal_moves(pos, (d1, d2))
        if len(moves[0].steps) != 1:
            continue
        seen += 1
        high = max(d1, d2)
        board = list(pos.board)
        if _playable(board, high):
            for m in moves:
                assert _replay(board, m.steps, [high]) is not None, (gnubg_position_id(pos), (d1, d2), m.steps)
    assert seen > 0


# ---------------------------------------------------------------------------
# input checking
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["31", "3-1", "3 1", (3, 1), [3, 1], np.array([3, 1])])
def test_parse_dice_accepts_common_spellings(text: object) -> None:
    assert parse_dice(text) == (3, 1)


@pytest.mark.parametrize("bad", ["37", "3", "abc", (0, 3), (3, 7), (1, 2, 3), (2.5, 3), None])
def test_bad_dice_are_rejected_with_the_input_quoted(bad: object) -> None:
    with pytest.raises(InvalidDiceError) as err:
        successors(Position.start(), bad)
    assert repr(bad) in str(err.value)


def test_successors_batch_rejects_dice_out_of_range_and_bad_shapes() -> None:
    boards = np.stack([Position.start().array()] * 2)
    with pytest.raises(InvalidDiceError):
        successors_batch(boards, (0, 3))
    with pytest.raises(InvalidDiceError):
        successors_batch(boards, np.array([[3, 1], [7, 1]]))
    with pytest.raises(InvalidDiceError):
        successors_batch(boards, np.array([[3, 1]] * 3))
    with pytest.raises(ValueError):
        successors_batch(boards[:, :25], (3, 1))
