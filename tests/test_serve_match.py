"""Matches of 1, 2, 3, 5 and 7 points over HTTP: ``/v1/move``, ``/v1/cube``, ``/v1/eval``, ``/v1/rollout`` and
wildbg's ``/move`` and ``/eval``, at the first game, the Crawford game and after it, from both sides.

The cube rules checked are gnubg's: no cube in a 1-point match (each side is 1-away from the start, so there is no
Crawford game either), none in the Crawford game, none for the post-Crawford leader (any win already wins the
match), and the post-Crawford trailer doubles.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from bgbot.engine.api import Engine
from bgbot.serve.app import create_app
from bgbot.serve.service import ServeConfig

START = "4HPwATDgc/ABMA"
START_PIPS = "p24=2&p13=5&p8=3&p6=5&p1=-2&p12=-5&p17=-3&p19=-5"
LENGTHS = (1, 2, 3, 5, 7)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(ServeConfig(timeout=300), engine=Engine.load())) as c:
        yield c


def situations() -> list[tuple[int, tuple[int, int], bool, str]]:
    """(length, score of the side on roll first, crawford, what it is) for every length."""
    out = []
    for n in LENGTHS:
        out.append((n, (0, 0), False, "first game"))
        if n == 1:
            continue
        out += [
            (n, (n - 1, 0), True, "Crawford, leader on roll"),
            (n, (0, n - 1), True, "Crawford, trailer on roll"),
            (n, (n - 1, max(0, n - 3)), False, "post-Crawford, leader on roll"),
            (n, (max(0, n - 3), n - 1), False, "post-Crawford, trailer on roll"),
        ]
    return out


SITUATIONS = situations()
IDS = [
    f"{n}pt-{a}-{b}-{what.split(',')[0].replace(' ', '')}{'-' + what.split(', ')[1][:7] if ',' in what else ''}"
    for n, (a, b), _, what in SITUATIONS
]


def body(n: int, score: tuple[int, int], crawford: bool, **extra: object) -> dict:
    return {"position": START, "match": n, "score": f"{score[0]}-{score[1]}", "crawford": crawford, **extra}


@pytest.mark.parametrize(("n", "score", "crawford", "what"), SITUATIONS, ids=IDS)
def test_v1_move_ranks_by_match_winning_chance(
    client: TestClient, n: int, score: tuple[int, int], crawford: bool, what: str
) -> None:
    r = client.post("/v1/move", json=body(n, score, crawford, dice="31"))
    assert r.status_code == 200, r.json()
    moves = r.json()["moves"]
    assert len(moves) == 16 and moves[0]["move"] == "8/5 6/5"
    mwc = [m["mwc"] for m in moves]
    assert all(0.0 <= w <= 1.0 for w in mwc) and mwc == sorted(mwc, reverse=True)


@pytest.mark.parametrize(("n", "score", "crawford", "what"), SITUATIONS, ids=IDS)
def test_v1_cube_follows_the_match_cube_rules(
    client: TestClient, n: int, score: tuple[int, int], crawford: bool, what: str
) -> None:
    r = client.post("/v1/cube", json=body(n, score, crawford))
    assert r.status_code == 200, r.json()
    a = r.json()
    assert a["match"] == n and a["score"] == list(score) and a["crawford"] is crawford
    if n == 1 or crawford or what.startswith("post-Crawford, leader"):
        assert a["can_double"] is False and a["action"] == "no_double", a
        assert a["decision_text"].startswith("No double")
        if crawford:
            assert "Crawford" in a["decision_text"]
    elif what.startswith("post-Crawford, trailer"):
        assert a["can_double"] is True and a["action"].startswith("double"), a  # double at once after Crawford
    else:
        assert a["can_double"] is True
    assert 0.0 <= a["mwc_optimal"] <= 1.0


def test_no_crawford_game_in_a_1_point_match(client: TestClient) -> None:
    r = client.post("/v1/cube", json=body(1, (0, 0), True))
    assert r.status_code == 400 and "1-point" in r.json()["error"]["message"]


@pytest.mark.parametrize("n", LENGTHS)
def test_v1_eval_of_a_match_position(client: TestClient, n: int) -> None:
    # /v1/eval is cubeless: the position's own match state (an XGID) is accepted and does not change it
    xgid = f"XGID=-b----E-C---eE---c-e----B-:0:0:1:00:{n - 1}:0:{1 if n > 1 else 0}:{n}:10"
    money = client.post("/v1/eval", json={"position": START}).json()["probs"]
    r = client.post("/v1/eval", json={"position": xgid})
    assert r.status_code == 200, r.json()
    assert r.json()["probs"] == money


@pytest.mark.parametrize("n", LENGTHS)
def test_an_xgid_carries_the_match_state_to_v1_cube(client: TestClient, n: int) -> None:
    # the side on roll leads n-1 to 0 in the Crawford game (XGID field 7 = 1): no double; a 1-point match has none
    xgid = f"XGID=-b----E-C---eE---c-e----B-:0:0:1:00:{n - 1}:0:{1 if n > 1 else 0}:{n}:10"
    a = client.post("/v1/cube", json={"position": xgid}).json()
    assert a["match"] == n and a["score"] == [n - 1, 0] and a["crawford"] is (n > 1)
    assert a["can_double"] is False


@pytest.mark.parametrize("n", LENGTHS)
def test_wildbg_routes_in_every_match_length(client: TestClient, n: int) -> None:
    first = client.get(f"/eval?{START_PIPS}&x_away={n}&o_away={n}")
    assert first.status_code == 200
    if n == 1:
        assert first.json()["cube"]["double"] is False
    moves = client.get(f"/move?die1=3&die2=1&{START_PIPS}&x_away={n}&o_away={n}")
    assert moves.status_code == 200 and moves.json()["moves"][0]["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}]
    if n == 1:
        return
    for x, o in ((1, n), (n, 1)):  # the Crawford game, either side on roll: no double
        c = client.get(f"/eval?{START_PIPS}&x_away={x}&o_away={o}&crawford=true")
        assert c.status_code == 200 and c.json()["cube"]["double"] is False
    trailer = client.get(f"/eval?{START_PIPS}&x_away={n}&o_away=1")  # post-Crawford: the trailer doubles
    leader = client.get(f"/eval?{START_PIPS}&x_away=1&o_away={n}")
    assert trailer.json()["cube"]["double"] is True and leader.json()["cube"]["double"] is False


@pytest.mark.parametrize(("n", "score", "crawford"), [(1, (0, 0), False), (3, (2, 0), True), (5, (4, 2), False)])
def test_v1_rollout_of_a_match_play(client: TestClient, n: int, score: tuple[int, int], crawford: bool) -> None:
    r = client.post("/v1/rollout", json=body(n, score, crawford, dice="31", trials=36, truncate=2, top=2))
    assert r.status_code == 200, r.json()
    lines = r.json()["lines"]
    assert len(lines) == 2 and all(0.0 <= line["mwc"] <= 1.0 for line in lines)
    assert r.json()["cube"]["match"] == n and r.json()["cube"]["crawford"] is crawford


@pytest.mark.parametrize(("n", "score"), [(1, (0, 0)), (3, (2, 1))])
def test_v1_rollout_with_a_dead_cube_has_no_double_line(client: TestClient, n: int, score: tuple[int, int]) -> None:
    r = client.post("/v1/rollout", json=body(n, score, False, trials=36, truncate=2))
    assert r.status_code == 200
    assert [line["label"] for line in r.json()["lines"]] == ["position"] and r.json()["cube_action"] is None
