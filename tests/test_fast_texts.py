"""The cheap paths of naming plays and building answers give what the plain statements give.

Given positions reached by random play and every roll, when the compiled walk
(:mod:`bgbot.rules.movesteps`) lists the plays, then it lists the plain-Python
walk's plays, steps and order; given any steps, the notation is the one the
chain-by-chain statement of the rule writes; given boards, the batched Position
IDs are the one-by-one ones; given floats, the array rounding is ``round``'s to
the bit; given a valid state, its internal copies equal the validated ones; and a
move answer equals the answer rounded as a whole by :func:`rounded`.
"""

from __future__ import annotations

import math
import random
from itertools import product

import numpy as np
import pytest

from bgbot.engine.answers import FLOAT_DIGITS, SCHEMA_VERSION, move_answer, rounded, rounded_array
from bgbot.engine.api import Engine
from bgbot.errors import InvalidIdError
from bgbot.rules import moves
from bgbot.rules.dice import ROLLS
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.movegen import successors_batch  # noqa: F401  (imports the compiled kernels first)
from bgbot.rules.moves import format_move, legal_moves, play_texts
from bgbot.rules.position import Position, gnubg_position_id, gnubg_position_ids

ALL_DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]


def _positions(n: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    out: list[Position] = []
    pos = Position.start()
    while len(out) < n:
        play = rng.choice(moves._legal_moves_walk(pos, *rng.choice(ROLLS)))
        pos = Position.start() if play.result.is_game_over() else play.result
        out.append(pos)
    return out


# checkers on the bar, bear-offs with larger dice, blocked rolls, hits on the way
SPECIAL = [
    Position.from_points({25: 2, 6: 5, 8: 3, 13: 5}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}),
    Position.from_points({25: 1, 13: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 1}),
    Position.from_points({1: 3, 2: 2, 5: 1}, {6: 2, 5: 3, 3: 1}),
    Position.from_points({6: 1, 4: 2, 2: 3}, {1: 2, 24: 1}),
    Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {24: 1, 23: 1, 22: 1, 13: 5, 8: 3, 6: 4}),
    Position.from_points({10: 1, 7: 1, 4: 13}, {1: 15}),
]


def test_the_compiled_walk_lists_the_plain_walks_plays_steps_and_order() -> None:
    kernel = moves._kernel()
    assert kernel is not None, "the compiled kernels are in use in this process"
    for pos in [*SPECIAL, *_positions(120, 46)]:
        for d1, d2 in ALL_DICE:
            plain = moves._legal_moves_walk(pos, d1, d2)
            fast = moves._legal_moves_compiled(kernel, pos, d1, d2)
            assert [(m.steps, m.result) for m in fast] == [(m.steps, m.result) for m in plain], (pos, d1, d2)
            assert play_texts(pos, (d1, d2)) == {m.result: m.text for m in plain}


def _format_by_chains(steps: list[tuple[int, int, bool]]) -> str:
    """The notation rule stated chain by chain, as format_move wrote it before its two-step shortcut."""
    chains: list[list[int]] = []
    hits: list[set[int]] = []
    for src, dst, hit in steps:
        for k in range(len(chains) - 1, -1, -1):
            if chains[k][-1] == src:
                chains[k].append(dst)
                break
        else:
            k = len(chains)
            chains.append([src, dst])
            hits.append(set())
        if hit:
            hits[k].add(dst)
    counts: dict[tuple[int, ...], int] = {}
    marked: dict[tuple[int, ...], set[int]] = {}
    for chain, hit_set in zip(chains, hits, strict=True):
        path = (chain[0], *(p for p in chain[1:-1] if p in hit_set), chain[-1])
        counts[path] = counts.get(path, 0) + 1
        marked.setdefault(path, set()).update(hit_set)
    name = {0: "off", 25: "bar"}
    parts = []
    for path in sorted(counts, key=lambda p: (-p[0], -p[-1])):
        text = "/".join(name.get(p, str(p)) + ("*" if i and p in marked[path] else "") for i, p in enumerate(path))
        parts.append(text + (f"({counts[path]})" if counts[path] > 1 else ""))
    return " ".join(parts)


def test_format_move_writes_what_the_chain_rule_writes() -> None:
    rng = random.Random(5)
    cases = [list(m.steps) for p in [*SPECIAL, *_positions(60, 7)] for d in ALL_DICE for m in legal_moves(p, d)]
    # arbitrary steps towards the 1-point too: the shortcut must not rely on the steps being a legal play
    for _ in range(5000):
        cases.append([(s, rng.randint(0, s - 1), rng.random() < 0.3)
                      for s in (rng.randint(1, 25) for _ in range(rng.randint(1, 4)))])  # fmt: skip
    assert format_move([(13, 7, True), (7, 5, False)]) == "13/7*/5"
    assert format_move([(8, 5, True), (8, 5, False)]) == "8/5*(2)"
    assert format_move([(6, 1, False), (13, 7, False)]) == "13/7 6/1"
    for steps in cases:
        assert format_move(steps) == _format_by_chains(steps), steps
        assert format_move(iter(steps)) == _format_by_chains(steps), steps


def test_batched_position_ids_are_the_one_by_one_ids() -> None:
    positions = [*SPECIAL, *_positions(400, 11), Position.start()]
    boards = np.array([p.board for p in positions], dtype=np.int8)
    assert gnubg_position_ids(boards) == [gnubg_position_id(p) for p in positions]
    assert gnubg_position_ids(boards[:0]) == []
    with pytest.raises(Exception, match=r"\(N, 26\)"):
        gnubg_position_ids(boards[:, :25])


def test_array_rounding_is_pythons_round_to_the_bit() -> None:
    rng = np.random.default_rng(3)
    halves = (np.arange(-300_000, 300_000, 7) + 0.5) / 10**FLOAT_DIGITS  # ties and near-ties of the scaled value
    values = np.concatenate([
        rng.uniform(-3.0, 3.0, 200_000), np.round(rng.uniform(-1.0, 1.0, 20_000), FLOAT_DIGITS + 1), halves,
        [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300, -1e-9, 5e-7, -5e-7, 2.5e-6],
    ])  # fmt: skip
    got = rounded_array(values)
    want = rounded(values.tolist())
    assert [repr(x) for x in got] == [repr(x) for x in want]
    assert rounded_array([[1.0, math.nan], [0.1234565, 2.0]]) == [[1.0, None], [0.123456, 2.0]]


def test_a_move_answer_is_the_whole_answer_rounded() -> None:
    engine = Engine.load()
    states = [None, CubeState(2, "opp", 7, (3, 5)), CubeState(1, "center", 0, (0, 0), jacoby=True)]
    rng = random.Random(2)
    for i, pos in enumerate(_positions(30, 3)):
        if pos.is_game_over():
            continue
        analysis = engine.best_move(pos, rng.choice(ROLLS), 1, states[i % 3])
        want = {"schema": SCHEMA_VERSION, **rounded({"engine": engine.describe(), **analysis.to_dict()})}
        assert move_answer(engine, analysis) == want
        unrounded = analysis.to_dict()
        assert [m["move"] for m in unrounded["moves"]] == [c.move for c in analysis.candidates]
        assert [m["result"] for m in unrounded["moves"]] == [c.result.gnubg_id() for c in analysis.candidates]
        assert [m["mwc"] for m in unrounded["moves"]] == [c.mwc for c in analysis.candidates]


@pytest.mark.parametrize(
    "state",
    [
        MatchState(),
        MatchState(match_length=7, score=(3, 5), cube_value=2, cube_owner=1, on_roll=0),
        MatchState(match_length=7, score=(6, 2), crawford=True, on_roll=1),
        MatchState(jacoby=True, cube_value=4, cube_owner=0),
        MatchState(match_length=5, score=(5, 2), game_state=2),  # a match that is over
    ],
)
def test_internal_state_copies_equal_the_validated_ones(state: MatchState) -> None:
    def validated(**kw: object) -> MatchState | type[InvalidIdError]:
        try:
            return MatchState(
                match_length=state.match_length, score=state.score, cube_value=state.cube_value,
                cube_owner=state.cube_owner, crawford=state.crawford,
                **{"on_roll": state.on_roll, "jacoby": state.jacoby, "doubled": False, "dice": None, **kw},
            )  # fmt: skip
        except InvalidIdError:
            return InvalidIdError

    for on_roll, doubled, dice, jacoby in product((None, 0, 1), (False, True), (None, (3, 1), (6, 6)), (None, True)):
        kw = {"doubled": doubled, "dice": dice, "jacoby": state.jacoby if jacoby is None else jacoby,
              "on_roll": state.on_roll if on_roll is None else on_roll}  # fmt: skip
        want = validated(**kw)
        if want is InvalidIdError:
            with pytest.raises(InvalidIdError):
                state.at_decision(on_roll, doubled=doubled, dice=dice, jacoby=jacoby)
        else:
            got = state.at_decision(on_roll, doubled=doubled, dice=dice, jacoby=jacoby)
            assert got == want and vars(got) == vars(want)
    if state.game_state == 2:  # no cube situation: the match is over
        return
    cs = CubeState.of(state)
    quick = cs.match_state()
    assert quick == MatchState(match_length=cs.match, score=cs.score, cube_value=cs.cube,
                               cube_owner={"center": -1, "me": 0, "opp": 1}[cs.owner], crawford=cs.crawford,
                               jacoby=cs.jacoby)  # fmt: skip
