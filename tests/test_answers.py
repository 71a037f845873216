"""JSON answers (CLI ``--json`` and the HTTP API) carry their schema version and rounded floats."""

from __future__ import annotations

import json
import math

import pytest

from bgbot.cli.main import main
from bgbot.engine.answers import FLOAT_DIGITS, SCHEMA_VERSION, finished, rounded
from bgbot.engine.api import Engine
from bgbot.rules.position import Position


def _floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return []


def test_rounded_rounds_every_float_and_drops_what_json_cannot_carry() -> None:
    got = rounded({"a": 0.123456789, "b": [1.0000004, (2, math.nan)], "c": {"d": -math.inf, "e": True, "f": 3}})
    assert got == {"a": 0.123457, "b": [1.0, [2, None]], "c": {"d": None, "e": True, "f": 3}}
    answer = finished({"x": 1 / 3})
    assert list(answer) == ["schema", "x"] and answer["schema"] == SCHEMA_VERSION and answer["x"] == 0.333333


def test_cli_json_answers_start_with_the_schema_and_round_their_floats(capsys) -> None:  # type: ignore[no-untyped-def]
    for argv in (["move", "4HPwATDgc/ABMA", "31", "--json"], ["cube", "4HPwATDgc/ABMA", "--json"],
                 ["eval", "4HPwATDgc/ABMA", "--json"]):
        assert main(argv) == 0
        answer = json.loads(capsys.readouterr().out)
        assert next(iter(answer)) == "schema" and answer["schema"] == SCHEMA_VERSION, argv
        floats = _floats(answer)
        assert len(floats) >= 5, argv
        assert all(round(f, FLOAT_DIGITS) == f for f in floats), argv
    # the rounding keeps the engine's value to half a unit of the last decimal
    assert main(["eval", "4HPwATDgc/ABMA", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["probs"]["win"]
    exact = float(Engine.load().evaluate(Position.from_id("4HPwATDgc/ABMA"), 1)[0])
    assert abs(shown - exact) <= 0.5 * 10**-FLOAT_DIGITS + 1e-12
    assert shown != exact  # a float32 network output has more decimals than six


@pytest.mark.parametrize("xgid", [
    "XGID=-b----E-C---eE---c-e----B-:1:1:1:31:2:4:0:7:10",  # 7-point match, 2-4, cube 2 on roll's side
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:42:0:0:0:1:10",  # a 1-point match
    "XGID=-b----E-C---eE---c-e----B-:2:-1:1:53:0:0:3:0:10",  # money, cube 4 the opponent's, Jacoby
])
def test_a_move_answers_xgid_carries_its_cube_and_score(xgid: str) -> None:
    from bgbot.engine.answers import move_answer
    from bgbot.engine.api import Engine
    from bgbot.formats.ids import parse_xgid
    from bgbot.rules.matchstate import CubeState

    pos, state = parse_xgid(xgid)
    engine = Engine.load()
    answer = move_answer(engine, engine.best_move(pos, state.dice, 1, state))
    pos2, state2 = parse_xgid(answer["xgid"])
    assert pos2 == pos and state2.dice == state.dice
    assert CubeState.of(state2) == CubeState.of(state)
