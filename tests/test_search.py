"""Checker-play search and lookahead: 1-ply argmax, 2-/3-ply against brute force, filters, exact races.

The brute-force references below walk the rolls and replies one at a time with
:func:`bgbot.movegen.legal_moves` and single-row evaluator calls, so they share
nothing with the batched search but the rules and the evaluator.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from conftest import read_jsonl

from bgbot.engine.search import (
    DEFAULT_FILTERS,
    FILTER_PRESETS,
    BearoffEvaluator,
    MoveFilter,
    analyze,
    lookahead_probs,
    parse_filters,
    rank_successors,
    search_chooser,
)
from bgbot.errors import ConfigError, InvalidDiceError, InvalidPositionError
from bgbot.eval.bearoff import BearoffDB
from bgbot.eval.evaluate import NetEvaluator, equity, flip_probs
from bgbot.eval.nets import ModelSpec, ValueNet
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.movegen import successors_batch
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

KEEP_ALL = (MoveFilter(1000, 100.0),)


@pytest.fixture(scope="module")
def ev() -> NetEvaluator:
    torch.manual_seed(7)
    return NetEvaluator(ValueNet(ModelSpec(hidden=(16,))))


def one(ev: NetEvaluator, pos: Position) -> np.ndarray:
    """The evaluator on a single position (side on roll's view), as float64."""
    return np.asarray(ev(pos.array()[None, :])[0], dtype=np.float64)


def brute_lookahead(ev: NetEvaluator, pos: Position, depth: int) -> np.ndarray:
    """Reference lookahead: side on roll's probabilities, the best move per roll chosen by 1-ply."""
    if pos.is_game_over() or depth == 0:
        if pos.is_game_over():
            r = pos.result()  # seen from the side on roll: it lost
            return np.array([0.0, 0.0, 0.0, float(r <= -2), float(r <= -3)])
        return one(ev, pos)
    total = np.zeros(5)
    for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        replies = legal_moves(pos, (d1, d2))
        values = [one(ev, m.result) for m in replies]  # each from the opponent's view
        k = int(np.argmax([-equity(v) for v in values]))
        chosen = values[k] if depth == 1 else brute_lookahead(ev, replies[k].result, depth - 1)
        total += w * flip_probs(chosen)
    return total


def small_contact() -> Position:
    # three checkers a side, still in contact: few replies, so 3-ply brute force stays quick
    return Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1})


def bar_position() -> Position:
    # the opponent has a checker on the bar against four closed points: many of its rolls pass
    return Position.from_points({13: 5, 8: 2, 6: 3, 5: 2, 4: 2, 3: 1}, {25: 1, 24: 2, 13: 5, 8: 3, 6: 4})


# ---------------------------------------------------------------------------
# 1-ply
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("line", range(0, 400, 37))
def test_one_ply_picks_the_argmax_of_the_evaluator(ev: NetEvaluator, line: int) -> None:
    row = read_jsonl("benchmark/checker.jsonl")[line]
    pos = Position.from_id(row["position"])
    a = analyze(ev, pos, row["dice"], ply=1)
    # given every legal move evaluated on its own
    by_result = {m.result: -equity(one(ev, m.result)) for m in legal_moves(pos, row["dice"])}
    # then the analysis holds the same moves, ranked by that equity, and its best is the argmax
    assert {c.result for c in a.candidates} == set(by_result)
    assert len(a) == row["n_legal"]
    assert a.best.equity == pytest.approx(max(by_result.values()), abs=1e-6)
    eqs = [c.equity for c in a.candidates]
    assert eqs == sorted(eqs, reverse=True)
    for c in a.candidates:
        assert c.ply == 1
        assert c.equity == pytest.approx(by_result[c.result], abs=1e-6)
        assert c.diff == pytest.approx(c.equity - a.best.equity)
        assert c.equity == pytest.approx(float(equity(np.array(c.probs))), abs=1e-9)


def test_results_match_the_reference_move_lists(ev: NetEvaluator) -> None:
    # every legal result gnubg lists (positions with at most 40 moves are complete)
    for row in read_jsonl("benchmark/checker.jsonl")[:60]:
        if row["n_legal"] > 40:
            continue
        a = analyze(ev, Position.from_id(row["position"]), row["dice"], ply=1)
        assert {c.result.gnubg_id() for c in a.candidates} == {m["result"] for m in row["moves"]}


def test_move_texts_and_steps_come_from_the_move_lister(ev: NetEvaluator) -> None:
    pos = Position.start()
    a = analyze(ev, pos, "31", ply=1)
    expected = {m.result: m for m in legal_moves(pos, (3, 1))}
    assert len(a) == 16
    for c in a.candidates:
        assert c.move == expected[c.result].text
        assert c.steps == expected[c.result].steps
    assert "8/5 6/5" in {c.move for c in a.candidates}


def test_a_roll_that_cannot_be_played_gives_one_candidate(ev: NetEvaluator) -> None:
    # given the side on the bar against our closed 6, 5 and 4 points, 6-6 cannot enter
    pos = bar_position().swap()
    assert not legal_moves(pos, (6, 6))[0].steps
    for ply in (1, 2):
        a = analyze(ev, pos, (6, 6), ply=ply)
        assert len(a) == 1
        assert a.best.move == "cannot move"
        assert a.best.result == pos.swap()


# ---------------------------------------------------------------------------
# 2-ply and 3-ply against brute force
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("pos", "dice"), [(Position.start(), (3, 1)), (bar_position(), (5, 2))])
def test_two_ply_equals_brute_force_over_the_21_rolls(ev: NetEvaluator, pos: Position, dice: tuple) -> None:
    a = analyze(ev, pos, dice, ply=2, filters=KEEP_ALL)
    assert all(c.ply == 2 for c in a.candidates)
    for c in a.candidates:
        # the opponent (on roll in c.result) looks one roll ahead; we see its figures flipped
        ref = flip_probs(brute_lookahead(ev, c.result, 1))
        np.testing.assert_allclose(c.probs, ref, atol=2e-6)


def test_bar_position_really_has_passes() -> None:
    # the 2-ply case above must exercise the pass: some opponent rolls cannot enter
    opp = bar_position().swap()
    assert any(not legal_moves(opp, r)[0].steps for r in ROLLS)


def test_three_ply_equals_brute_force(ev: NetEvaluator) -> None:
    pos = small_contact()
    a = analyze(ev, pos, (4, 1), ply=3, filters=KEEP_ALL)
    assert all(c.ply == 3 for c in a.candidates)
    for c in a.candidates[:3]:
        ref = flip_probs(brute_lookahead(ev, c.result, 2))
        np.testing.assert_allclose(c.probs, ref, atol=2e-6)


def test_lookahead_is_the_cube_probability_at_two_ply(ev: NetEvaluator) -> None:
    for pos in (Position.start(), bar_position(), small_contact()):
        got = lookahead_probs(ev, pos.array()[None, :], 1)[0]
        np.testing.assert_allclose(got, brute_lookahead(ev, pos, 1), atol=2e-6)
    boards = np.stack([Position.start().array(), small_contact().array()])
    np.testing.assert_allclose(lookahead_probs(ev, boards, 0), ev(boards), atol=1e-7)


def test_finished_games_are_exact_at_every_depth(ev: NetEvaluator) -> None:
    # given a bear-off where 6-5 takes the last two checkers off, the opponent still on our side
    pos = Position.from_points({6: 1, 5: 1}, {1: 15})
    for ply in (1, 2, 3):
        a = analyze(ev, pos, (6, 5), ply=ply)
        # then the play that bears off wins a gammon (no opponent checker off, none in our home)
        assert a.best.result.is_game_over()
        assert a.best.probs == pytest.approx((1.0, 1.0, 0.0, 0.0, 0.0))
        assert a.best.equity == pytest.approx(2.0)


# ---------------------------------------------------------------------------
# filters, ranking, determinism
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [1, 3, 8])
def test_filter_keeps_the_best_k_for_the_deeper_ply(ev: NetEvaluator, keep: int) -> None:
    pos = Position.start()
    one_ply = analyze(ev, pos, (6, 4), ply=1)
    a = analyze(ev, pos, (6, 4), ply=2, filters=(MoveFilter(keep, 100.0),))
    deep = [c for c in a.candidates if c.ply == 2]
    assert len(deep) == keep
    assert {c.result for c in deep} == {c.result for c in one_ply.candidates[:keep]}
    # the rest keep their 1-ply figures and rank below every 2-ply candidate
    shallow = {c.result: c for c in a.candidates if c.ply == 1}
    assert all(c.ply == 1 for c in a.candidates[keep:])
    for c in one_ply.candidates[keep:]:
        assert shallow[c.result].equity == pytest.approx(c.equity)
    deep_eq = [c.equity for c in deep]
    assert deep_eq == sorted(deep_eq, reverse=True)


def test_filter_margin(ev: NetEvaluator) -> None:
    pos = Position.start()
    one_ply = analyze(ev, pos, (5, 2), ply=1)
    margin = (one_ply.best.equity - one_ply.candidates[4].equity) + 1e-9  # exactly the best five
    a = analyze(ev, pos, (5, 2), ply=2, filters=(MoveFilter(8, margin),))
    within = {c.result for c in one_ply.candidates if c.equity >= one_ply.best.equity - margin}
    assert {c.result for c in a.candidates if c.ply == 2} == within
    assert len(within) >= 5


def test_three_ply_uses_the_second_filter(ev: NetEvaluator) -> None:
    filters = (MoveFilter(5, 100.0), MoveFilter(2, 100.0))
    a = analyze(ev, Position.start(), (4, 2), ply=3, filters=filters)
    plies = [c.ply for c in a.candidates]
    assert plies.count(3) == 2 and plies.count(2) == 3
    assert plies == sorted(plies, reverse=True)
    two = analyze(ev, Position.start(), (4, 2), ply=2, filters=filters[:1])
    assert {c.result for c in a.candidates if c.ply == 3} == {c.result for c in two.candidates[:2]}


def test_search_is_deterministic(ev: NetEvaluator) -> None:
    pos = bar_position()
    first = analyze(ev, pos, (6, 3), ply=2)
    again = analyze(ev, pos, (6, 3), ply=2)
    assert [(c.result, c.probs, c.ply) for c in first.candidates] == [
        (c.result, c.probs, c.ply) for c in again.candidates
    ]


def test_each_level_is_one_move_generation_and_one_evaluator_call(
    ev: NetEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bgbot.engine.search as search

    calls = {"gen": 0, "eval": [], "gen_rows": []}

    def counting_eval(boards: np.ndarray) -> np.ndarray:
        calls["eval"].append(len(boards))
        return ev(boards)

    def counting_gen(boards: np.ndarray, dice: object, **kw: object) -> tuple:
        calls["gen"] += 1
        calls["gen_rows"].append(len(boards))
        return successors_batch(boards, dice, **kw)

    monkeypatch.setattr(search, "successors_batch", counting_gen)
    a = analyze(counting_eval, Position.start(), (3, 1), ply=2, filters=(MoveFilter(5, 100.0),))
    # the 16 candidates at 1-ply, then all replies of the 5 kept candidates x 21 rolls together
    assert calls["gen"] == 2 and calls["gen_rows"] == [1, 5 * 21]
    assert len(calls["eval"]) == 2 and calls["eval"][0] == 16
    assert calls["eval"][1] > 5 * 21 * 5
    assert sum(c.ply == 2 for c in a.candidates) == 5


def test_big_batches_are_chunked_with_the_same_result(ev: NetEvaluator, monkeypatch: pytest.MonkeyPatch) -> None:
    import bgbot.engine.search as search

    boards = np.stack([Position.from_id(r["position"]).array() for r in read_jsonl("benchmark/checker.jsonl")[:7]])
    whole = lookahead_probs(ev, boards, 2)
    monkeypatch.setattr(search, "MAX_EXPAND", 50)  # two boards (42 pairs) per chunk
    np.testing.assert_allclose(lookahead_probs(ev, boards, 2), whole, atol=1e-9)


def test_default_filters_look_like_gnubg() -> None:
    assert DEFAULT_FILTERS[0] == MoveFilter(8, 0.16)
    assert DEFAULT_FILTERS[1].keep < 8


def test_rank_successors_batches_many_positions(ev: NetEvaluator) -> None:
    rows = read_jsonl("benchmark/checker.jsonl")[:6]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows])
    dice = np.array([r["dice"] for r in rows])
    succ, parent = successors_batch(boards, dice)
    probs, plies = rank_successors(ev, succ, parent, 2)
    for k, r in enumerate(rows):
        single = analyze(ev, Position.from_id(r["position"]), r["dice"], ply=2)
        mine = {Position(succ[i].tolist()): (probs[i], plies[i]) for i in np.flatnonzero(parent == k)}
        for c in single.candidates:
            p, ply = mine[c.result]
            assert ply == c.ply
            np.testing.assert_allclose(p, c.probs, atol=1e-6)


def test_search_chooser_plays_the_analysis_best(ev: NetEvaluator) -> None:
    rows = read_jsonl("benchmark/checker.jsonl")[100:108]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows])
    dice = np.array([r["dice"] for r in rows])
    succ, parent = successors_batch(boards, dice)
    pick = search_chooser(ev, 2)(boards, succ, parent)
    for k, r in enumerate(rows):
        best = analyze(ev, Position.from_id(r["position"]), r["dice"], ply=2).best
        assert Position(succ[pick[k]].tolist()) == best.result


# ---------------------------------------------------------------------------
# exact races
# ---------------------------------------------------------------------------


def test_bearoff_evaluator_uses_the_database_in_range(ev: NetEvaluator) -> None:
    db = BearoffDB.build(max_checkers=4)
    wrapped = BearoffEvaluator(ev, db)
    home = Position.from_points({6: 2, 3: 1}, {1: 2, 5: 2})  # both home, within 4 checkers
    big = Position.from_points({6: 5, 5: 5, 4: 5}, {1: 3})  # home but 15 checkers: out of range
    contact = small_contact()
    over = Position.from_points({2: 1}, {})  # the opponent has borne off everything
    boards = np.stack([home.array(), big.array(), contact.array(), over.array()])
    got = wrapped(boards)
    np.testing.assert_allclose(got[0], db.evaluate(home.array()[None, :])[0], atol=1e-7)
    np.testing.assert_allclose(got[1:3], ev(boards[1:3]), atol=1e-7)
    np.testing.assert_allclose(got[3], [0, 0, 0, 0, 0])
    # and the search sees exact values: 2-ply in a tiny bear-off equals the database lookahead
    a = analyze(wrapped, home, (2, 1), ply=2, filters=KEEP_ALL)
    for c in a.candidates:
        np.testing.assert_allclose(c.probs, flip_probs(brute_lookahead(wrapped, c.result, 1)), atol=2e-6)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "first"),
    [("tiny", MoveFilter(5, 0.08)), ("Normal", MoveFilter(8, 0.16)), (" huge ", MoveFilter(20, 0.44)),
     ("5:0.08", MoveFilter(5, 0.08)), ("12:0.3", MoveFilter(12, 0.3))],
)
def test_filter_names_and_keep_margin_texts(text: str, first: MoveFilter) -> None:
    filters = parse_filters(text)
    assert filters == (first, DEFAULT_FILTERS[1])  # the filter before 3-ply stays the default's
    assert parse_filters("normal") == DEFAULT_FILTERS


@pytest.mark.parametrize(
    "text", ["wide", "", "5", "0:0.1", "5:-0.1", "5:nan", "5:inf", "x:0.1", "5:0.1:2", "٥:0.1", "5:٠.١", "5:0_1"]
)
def test_bad_filter_texts_are_config_errors_quoting_them(text: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(repr(text))):
        parse_filters(text)


def test_presets_widen_in_order_and_bound_the_deeper_candidates(ev: NetEvaluator) -> None:
    order = ["tiny", "narrow", "normal", "large", "huge"]
    assert [FILTER_PRESETS[n].keep for n in order] == sorted(FILTER_PRESETS[n].keep for n in order)
    assert [FILTER_PRESETS[n].margin for n in order] == sorted(FILTER_PRESETS[n].margin for n in order)
    pos, dice = Position.start(), (5, 2)
    one_ply = analyze(ev, pos, dice, ply=1)
    counts = []
    for name in order:
        f = FILTER_PRESETS[name]
        a = analyze(ev, pos, dice, ply=2, filters=parse_filters(name))
        deep = {c.result for c in a.candidates if c.ply == 2}
        floor = one_ply.best.equity - f.margin
        expect = {c.result for c in one_ply.candidates[: f.keep] if c.equity >= floor}
        assert deep == expect
        counts.append(len(deep))
    assert counts == sorted(counts)


@pytest.mark.parametrize("ply", [0, 4, "x", 1.5, True])
def test_bad_ply_is_a_config_error(ev: NetEvaluator, ply: object) -> None:
    with pytest.raises(ConfigError, match=re.escape(repr(ply))):
        analyze(ev, Position.start(), (3, 1), ply=ply)  # type: ignore[arg-type]


@pytest.mark.parametrize(("keep", "margin"), [(0, 0.1), (2, -0.1), (2, float("nan")), (1.5, 0.1)])
def test_bad_filters(keep: object, margin: object) -> None:
    with pytest.raises(ConfigError):
        MoveFilter(keep, margin)  # type: ignore[arg-type]


def test_bad_dice_and_finished_games(ev: NetEvaluator) -> None:
    with pytest.raises(InvalidDiceError, match="'71'"):
        analyze(ev, Position.start(), "71")
    with pytest.raises(InvalidPositionError, match="over"):
        analyze(ev, Position.from_points({}, {1: 3}), (3, 1))
