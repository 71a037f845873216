"""The fast paths of one-position move generation keep the generator's answers and its order.

* :func:`bgbot.rules.movegen.successors` (the compiled kernel called through its entry point, results made
  positions by :func:`bgbot.rules.position.positions_of_boards`) lists the same positions in the same order
  as the batched generator, for every oracle position and all 21 rolls;
* both list a position's results in ascending duplicate key, the order the module documents, recomputed
  here in plain Python from the key weights (so the order does not depend on how the moves are found);
* positions made without checks equal the validated ones: same board, hash, pickle, type.
"""

from __future__ import annotations

import json
import pickle
from functools import cache
from pathlib import Path

import numpy as np

from bgbot.rules import movegen
from bgbot.rules.movegen import successors, successors_batch
from bgbot.rules.position import Position, parse_gnubg_position_id, positions_of_boards, positions_of_rows

ORACLE = Path(__file__).resolve().parent / "data" / "movegen" / "oracle.jsonl"
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


@cache
def oracle_positions() -> list[Position]:
    seen: dict[str, Position] = {}
    for line in ORACLE.read_text().splitlines():
        pid = json.loads(line)["position"]
        seen.setdefault(pid, parse_gnubg_position_id(pid))
    return list(seen.values())


def key(result: tuple[int, ...]) -> int:
    """The duplicate key of a result (given from the opponent's view) as a signed 64-bit integer."""
    mover = [-x for x in reversed(result)]  # the mover's view, as the key is taken before the swap
    total = sum(int(movegen._KEY_WEIGHTS[i, v + 15]) for i, v in enumerate(mover))
    total %= 2**64
    return total - 2**64 if total >= 2**63 else total


def test_one_position_results_equal_the_batched_rows_in_the_same_order() -> None:
    positions = oracle_positions()
    boards = np.array([p.board for p in positions], dtype=np.int8)
    for roll in ROLLS:
        succ, parent = successors_batch(boards, roll, include_pass=False)
        starts = np.searchsorted(parent, np.arange(len(positions) + 1))
        for i, pos in enumerate(positions):
            one = successors(pos, roll)
            assert all(type(p) is Position for p in one)
            assert [p.board for p in one] == [tuple(r) for r in succ[starts[i] : starts[i + 1]].tolist()], (
                pos.gnubg_id(),
                roll,
            )


def test_results_come_in_ascending_duplicate_key() -> None:
    longest = 0
    for pos in oracle_positions()[::3]:
        for roll in ROLLS:
            keys = [key(p.board) for p in successors(pos, roll)]
            assert keys == sorted(keys) and len(set(keys)) == len(keys), (pos.gnubg_id(), roll)
            longest = max(longest, len(keys))
    # both ways of ordering the results are exercised: insertion sort up to _INSERTION_MAX, argsort beyond
    assert longest > movegen._INSERTION_MAX


def test_positions_made_without_checks_equal_validated_ones() -> None:
    rng = np.random.default_rng(12)
    boards: list[tuple[int, ...]] = []
    for pos in oracle_positions()[:300]:
        roll = ROLLS[int(rng.integers(len(ROLLS)))]
        rows, _ = successors_batch(pos.array()[None, :], roll)
        boards += [tuple(r) for r in rows.tolist()]
    made = positions_of_boards(iter(boards))
    from_rows = positions_of_rows(np.array(boards, dtype=np.int8))
    assert len(made) == len(from_rows) == len(boards) > 1000
    for board, fast, row in zip(boards, made, from_rows, strict=True):
        checked = Position(board)
        assert type(fast) is Position and fast.board is board
        assert fast == checked == row and hash(fast) == hash(checked) == hash(row)
        assert pickle.dumps(fast) == pickle.dumps(checked)
        assert pickle.loads(pickle.dumps(fast)) == checked
    assert positions_of_boards([]) == []
