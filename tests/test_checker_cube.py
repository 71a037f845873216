"""Checker play that knows the cube and the score: cubeful money equity and match winning chances."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import read_jsonl

from bgbot.cli.main import main
from bgbot.engine.api import Engine
from bgbot.engine.cube import money_cube_decision
from bgbot.engine.search import CUBEFUL_MATCH, CUBEFUL_MONEY, CUBELESS
from bgbot.eval.evaluate import flip_probs
from bgbot.formats.ids import format_xgid
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.position import Position


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()  # the shipped model: gammon chances that mean something


def _contact_rows(n: int) -> list[dict]:
    return [r for r in read_jsonl("benchmark/checker.jsonl") if r["class"] == "contact"][:n]


def test_cubeless_keeps_the_cubeless_ranking(engine: Engine) -> None:
    for r in _contact_rows(5):
        a = engine.best_move(r["position"], r["dice"], cubeless=True)
        assert a.kind == CUBELESS
        eq = [c.equity for c in a.candidates]
        assert eq == sorted(eq, reverse=True) and all(c.equity == c.cubeless_equity for c in a.candidates)


def test_money_plays_are_ranked_by_the_opponents_cubeful_equity_after_the_move(engine: Engine) -> None:
    for r in _contact_rows(5):
        pos = Position.from_id(r["position"])
        for state, their_owner in ((CubeState(), "center"), (CubeState(cube=2, owner="me"), "opp")):
            a = engine.best_move(pos, r["dice"], 1, state)
            assert a.kind == CUBEFUL_MONEY
            for c in a.candidates:
                opp = flip_probs(np.asarray(c.probs)[None, :])[0]
                x = engine.cube_efficiency(c.result)
                d = money_cube_decision(opp, cube_value=state.cube, owner=their_owner, x=x)
                assert c.equity == pytest.approx(-d.equity_optimal)
            eq = [c.equity for c in a.candidates]
            assert eq == sorted(eq, reverse=True)


@pytest.mark.parametrize(
    ("state", "their_owner"),
    [(CubeState(), "center"), (CubeState(cube=2, owner="me"), "opp"), (CubeState(cube=4, owner="opp"), "me"),
     (CubeState(jacoby=True), "center")],
)
def test_deeper_plays_are_valued_by_the_opponents_cube_decision_at_that_ply(
    engine: Engine, state: CubeState, their_owner: str
) -> None:
    # gnubg's way: a play searched at ply k is worth minus the opponent's best cube action after it,
    # from the opponent's own cubeful lookahead at ply k (cube decisions at every node), not Janowski
    # applied once to the lookahead's averaged probabilities
    theirs = CubeState(cube=state.cube, owner=their_owner, jacoby=state.jacoby)  # type: ignore[arg-type]
    rows = _contact_rows(4) + [r for r in read_jsonl("benchmark/checker.jsonl") if r["class"] == "race"][:2]
    janowski_differs = False
    for r in rows:
        pos = Position.from_id(r["position"])
        a = engine.best_move(pos, r["dice"], 2, state)
        deep = [c for c in a.candidates if c.ply == 2]
        assert deep and a.kind == CUBEFUL_MONEY
        for c in a.candidates:
            d = engine.cube_action(c.result, theirs, ply=c.ply)
            # the same figure up to the network pass's float32 rounding, which depends on a row's neighbours
            assert c.equity == pytest.approx(-d.equity_optimal, abs=1e-6)
            if c.ply == 2:
                opp = flip_probs(np.asarray(c.probs)[None, :])[0]
                once = money_cube_decision(opp, cube_value=theirs.cube, owner=their_owner,
                                           x=engine.cube_efficiency(c.result), jacoby=theirs.jacoby)
                janowski_differs |= abs(once.equity_optimal - d.equity_optimal) > 1e-4
        ranked = [(c.ply, c.equity) for c in a.candidates]
        assert ranked == sorted(ranked, reverse=True)
    assert janowski_differs  # the positions tell the two methods apart


def test_three_ply_plays_are_valued_by_the_three_ply_cube_decision(engine: Engine) -> None:
    r = _contact_rows(1)[0]
    a = engine.best_move(Position.from_id(r["position"]), r["dice"], 3)
    assert [c.ply for c in a.candidates].count(3) >= 1
    for c in a.candidates:
        assert c.equity == pytest.approx(-engine.cube_action(c.result, ply=c.ply).equity_optimal, abs=1e-6)


def test_at_double_match_point_only_winning_counts(engine: Engine) -> None:
    dmp = CubeState(match=7, score=(6, 6))
    for r in _contact_rows(12):
        a = engine.best_move(r["position"], r["dice"], 1, dmp)
        assert a.kind == CUBEFUL_MATCH
        for c in a.candidates:
            assert c.mwc == pytest.approx(c.probs[0], abs=1e-6)  # gammons are worth nothing
        assert a.best.probs[0] == pytest.approx(max(c.probs[0] for c in a.candidates))


def test_two_away_one_away_crawford_values_only_our_gammons(engine: Engine) -> None:
    # 2-away against 1-away in the Crawford game: a single win leads to double match point (50%), a gammon
    # wins the match, and any loss loses it whatever its size
    crawford = CubeState(match=7, score=(5, 6), crawford=True)
    for r in _contact_rows(6):
        a = engine.best_move(r["position"], r["dice"], 1, crawford)
        for c in a.candidates:
            w, wg = c.probs[0], c.probs[1]
            assert c.mwc == pytest.approx((w - wg) * 0.5 + wg, abs=1e-6)


def test_the_score_changes_plays(engine: Engine) -> None:
    # over many positions, DMP and 2-away/1-away Crawford choose other plays than money does, sometimes
    changed = 0
    for r in _contact_rows(60):
        money = engine.best_move(r["position"], r["dice"]).best.result
        dmp = engine.best_move(r["position"], r["dice"], 1, CubeState(match=7, score=(6, 6))).best.result
        changed += money != dmp
    assert changed >= 3


def test_a_match_state_is_read_from_its_side_on_roll(engine: Engine) -> None:
    r = _contact_rows(1)[0]
    pos = Position.from_id(r["position"])
    as_player_1 = engine.best_move(pos, r["dice"], 1, MatchState(match_length=7, score=(5, 3), on_roll=1))
    relative = engine.best_move(pos, r["dice"], 1, CubeState(match=7, score=(3, 5)))
    assert [c.result for c in as_player_1.candidates] == [c.result for c in relative.candidates]


def test_cli_move_ranks_by_the_positions_score_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    r = _contact_rows(1)[0]
    pos = Position.from_id(r["position"])
    xgid = format_xgid(pos, MatchState(match_length=7, score=(6, 6), dice=tuple(r["dice"])))
    assert main(["move", xgid, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["equity_kind"] == CUBEFUL_MATCH and all(m["mwc"] is not None for m in data["moves"])
    assert main(["move", xgid, "--cubeless", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["equity_kind"] == CUBELESS
    assert main(["move", r["position"], "".join(map(str, r["dice"]))]) == 0
    assert "cubeful money equity" in capsys.readouterr().out
    assert main(["move", xgid, "--cube", "2", "--owner", "me", "--crawford"]) == 2  # no cube in the Crawford game
    assert "Crawford" in capsys.readouterr().err
