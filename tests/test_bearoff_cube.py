"""The exact two-sided bear-off cube table (bgbot.engine.bearoff_cube) and where the engine uses it.

The reference solves small bear-offs by plain recursion over Position objects and
legal_moves, memoised, sharing nothing with the table's level-by-level numpy solve
but the rules.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import torch

import bgbot.engine.bearoff_cube as bc
from bgbot.engine.api import Engine
from bgbot.engine.cube_lookahead import lookahead_money_cubeful
from bgbot.eval.evaluate import NetEvaluator
from bgbot.eval.nets import ModelSpec, ValueNet
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.matchstate import CubeState
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

SEEN_BY_OPPONENT = {"center": "center", "me": "opp", "opp": "me"}


@functools.cache
def reference(pos: Position, owner: str) -> tuple[float, float]:
    """(no-double equity, optimal equity) of the side on roll of a bear-off, by recursion (cubeless: owner '')."""
    total = 0.0
    for dice, w in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        best = -np.inf
        for m in legal_moves(pos, dice):
            child = m.result
            if child.is_game_over():
                value = 1.0  # the last checker off: one cube (no gammon with checkers already off)
            elif owner == "":
                value = -reference(child, "")[0]
            else:
                value = -reference(child, SEEN_BY_OPPONENT[owner])[1]
            best = max(best, value)
        total += w * best
    if owner in ("", "opp"):
        return total, total
    double_take = 2.0 * reference(pos, "opp")[0]
    return total, max(total, min(double_take, 1.0))


def small_bearoffs(max_checkers: int) -> list[Position]:
    """Every position with 1..max_checkers checkers a side on the 1-, 2-, 3- and 6-points (a sample)."""
    sides = [dict(zip((1, 2, 3, 6), c, strict=True)) for c in itertools.product(range(3), repeat=4)]
    sides = [{k: v for k, v in s.items() if v} for s in sides if 1 <= sum(s.values()) <= max_checkers]
    rng = np.random.default_rng(3)
    picks = rng.choice(len(sides) ** 2, size=40, replace=False)
    return [Position.from_points(sides[k // len(sides)], sides[k % len(sides)]) for k in picks]


@pytest.fixture(scope="module")
def small_table() -> bc.TwoSidedCube:
    return bc.solve(3)


def test_table_equals_the_recursion(small_table: bc.TwoSidedCube) -> None:
    positions = small_bearoffs(3)
    ok, vals = small_table.lookup(np.stack([p.array() for p in positions]))
    assert ok.all()
    for pos, row in zip(positions, vals, strict=True):
        want = [reference(pos, "")[0], *(reference(pos, o)[0] for o in ("center", "me", "opp"))]
        np.testing.assert_allclose(row, want, atol=2e-6, err_msg=pos.gnubg_id())


def test_last_roll_figures() -> None:
    # one checker on my 6-point against one on their 1-point: I bear off with 27 of 36 rolls
    # (a 6, a sum of 6 or more, or 2-2), and they win on their roll if I miss
    table = bc.solve(1)
    ok, vals = table.lookup(Position.from_points({6: 1}, {1: 1}).array()[None, :])
    assert ok[0]
    np.testing.assert_allclose(vals[0], [0.5, 0.5, 0.5, 0.5], atol=1e-6)  # no double: 27/36 - 9/36
    engine = Engine(NetEvaluator(ValueNet(ModelSpec(hidden=(8,)))))
    d = engine.cube_action(Position.from_points({6: 1}, {1: 1}))
    # double/take = 2 * 0.5 = 1.0 = double/pass: the taker is indifferent, the doubler must double
    assert (d.action, d.equity_no_double, d.equity_double_take) == ("double_pass", pytest.approx(0.5),
                                                                    pytest.approx(1.0))


def test_lookup_covers_only_small_two_sided_bearoffs(small_table: bc.TwoSidedCube) -> None:
    boards = np.stack([
        Position.from_points({6: 2, 1: 1}, {2: 3}).array(),  # covered
        Position.from_points({6: 2, 1: 2}, {2: 3}).array(),  # four checkers: beyond this table's three
        Position.from_points({7: 1, 1: 1}, {2: 3}).array(),  # a checker outside home
        Position.from_points({25: 1, 1: 1}, {2: 3}).array(),  # on the bar
        Position.from_points({6: 2}, {20: 1, 2: 1}).array(),  # the opponent's checker outside its home
    ])
    ok, vals = small_table.lookup(boards)
    assert ok.tolist() == [True, False, False, False, False]
    assert np.isnan(vals[1:]).all()


def test_cache_is_written_read_and_replaced_when_damaged(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(bc, "MAX_CHECKERS", 2)
    monkeypatch.setattr(bc, "_table", None)
    first = bc.get_two_sided()
    path = tmp_path / "bgbot" / bc.CACHE_NAME
    assert bc.cache_path() == path and path.is_file()
    np.testing.assert_array_equal(np.load(path), first.values)
    calls = []
    monkeypatch.setattr(bc, "solve", lambda: calls.append(1) or first)  # type: ignore[func-returns-value]
    monkeypatch.setattr(bc, "_table", None)
    np.testing.assert_array_equal(bc.get_two_sided().values, first.values)
    assert calls == []  # read from the cache
    path.write_bytes(b"not an array")
    monkeypatch.setattr(bc, "_table", None)
    np.testing.assert_array_equal(bc.get_two_sided().values, first.values)
    assert calls == [1]  # solved again, and the file mended
    np.testing.assert_array_equal(np.load(path), first.values)


def test_engine_uses_the_exact_table_for_decisions_leaves_and_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    table = bc.solve(3)
    monkeypatch.setattr(bc, "_table", table)
    torch.manual_seed(2)
    ev = NetEvaluator(ValueNet(ModelSpec(hidden=(8,))))
    engine = Engine(ev)
    pos = Position.from_points({6: 1, 5: 1, 2: 1}, {4: 2, 1: 1})
    _, vals = table.lookup(pos.array()[None, :])
    for owner, col in (("center", 1), ("me", 2)):
        for ply in (1, 2, 3):
            d = engine.cube_action(pos, CubeState(cube=2, owner=owner), ply=ply)
            assert d.equity_no_double == pytest.approx(vals[0, col], abs=1e-6)
            assert d.equity_double_take == pytest.approx(2 * vals[0, 3], abs=1e-6)
    # the lookahead's leaves: one roll ahead of a position the table covers, every leaf exact
    _, nd, _ = lookahead_money_cubeful(engine.evaluator, pos.array()[None, :], 1)
    _, nd_j, _ = lookahead_money_cubeful(engine.evaluator, pos.array()[None, :], 1, exact_bearoff=False)
    assert abs(nd[0, 0] - vals[0, 1]) < abs(nd_j[0, 0] - vals[0, 1])  # nearer the truth than Janowski
    # a cube-aware play: each candidate valued by the exact optimum of the opponent after it
    a = engine.best_move(pos, "21", 1, CubeState())
    for c in a.candidates:
        if c.result.is_game_over():
            continue
        _, after = table.lookup(c.result.array()[None, :])
        nd_c, dt_c = after[0, 1], 2 * after[0, 3]
        assert c.equity == pytest.approx(-max(nd_c, min(dt_c, 1.0)), abs=1e-6)
    # without the bear-off database the engine keeps Janowski's model
    plain = Engine(ev, bearoff=False).cube_action(pos, ply=1)
    assert plain.equity_no_double != pytest.approx(vals[0, 1], abs=1e-4)


def test_the_cli_and_the_answers_decide_through_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    # the benchmark's bear-off (12 pips each): gnubg 2-ply says double/pass with double/take 1.061
    from bgbot.cli.main import main

    assert main(["cube", "aQAAgBEAAAAAAA"]) == 0
    out = capsys.readouterr().out
    assert "Double, take  +1.061" in out and "proper cube action: Double, pass" in out
    assert "note: exact: two-sided bear-off table" in out and "take point" not in out
    # above 1-ply the JSON answer is the engine's lookahead decision, not the cube model on averaged figures
    from bgbot.engine.answers import analyse_cube

    torch.manual_seed(6)
    engine = Engine(NetEvaluator(ValueNet(ModelSpec(hidden=(8,)))), bearoff=False)
    pos = Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1})
    for cs in (CubeState(), CubeState(match=7, score=(2, 4))):
        answer = analyse_cube(engine, pos, cs, 2)
        d = engine.cube_action(pos, cs, ply=2)
        assert answer["equity_no_double"] == pytest.approx(d.equity_no_double, abs=1e-6)  # rounded in JSON
        assert answer["equity_double_take"] == pytest.approx(d.equity_double_take, abs=1e-6)
