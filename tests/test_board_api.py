"""The web board's game routes (``/v1/board``) and the refereeing behind them (:mod:`bgbot.serve.board`).

Given a game on the server, when the person acts through the API, then only legal actions are taken, bad
requests are a 400/422 naming the field, and the record reads back with bgbot's own reader.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient

from bgbot.engine.api import Engine
from bgbot.formats.parse import parse_position_and_state
from bgbot.formats.records import parse_match
from bgbot.play.bots.local import BgbotBot
from bgbot.rules.position import Position
from bgbot.serve.app import create_app
from bgbot.serve.board import BoardGame, GameStore, TurnInput, resign_limit
from bgbot.serve.service import ServeConfig


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(ServeConfig(ply=1, max_ply=3), engine=engine)) as c:
        yield c


@pytest.fixture(scope="module")
def bot(engine: Engine) -> BgbotBot:
    return BgbotBot(engine, ply=1)


def new(client: TestClient, **body: object) -> dict:
    r = client.post("/v1/board", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def to_move_phase(client: TestClient, st: dict) -> dict:
    """Act until the person has dice to play (taking bgbot's doubles, rolling instead of doubling)."""
    for _ in range(50):
        if st["phase"] == "move":
            return st
        action = {"roll": "roll", "take": "take", "game_over": "next"}[st["phase"]]
        st = client.post(f"/v1/board/{st['id']}/{action}").json()
    raise AssertionError("no move phase reached")


def play_out(client: TestClient, st: dict, *, until: str = "match_over") -> dict:
    """Play the person's side with the first legal hop each time, until ``until``."""
    gid = st["id"]
    for _ in range(5000):
        if st["phase"] == until or st["phase"] == "match_over":
            return st
        if st["phase"] == "move":
            t = st["turn"]
            if t["complete"]:
                r = client.post(f"/v1/board/{gid}/commit")
            else:
                first = t["targets"][0]
                r = client.post(f"/v1/board/{gid}/hop", json={"from": first["from"], "to": first["to"]})
        else:
            action = {"roll": "roll", "take": "take", "game_over": "next"}[st["phase"]]
            r = client.post(f"/v1/board/{gid}/{action}")
        assert r.status_code == 200, r.text
        st = r.json()
    raise AssertionError("the match does not end")


# ---- the state answered agrees with the IDs it prints


def test_a_new_match_answers_a_consistent_state(client: TestClient) -> None:
    st = new(client, match=5, seed=3)
    pos, state = parse_position_and_state(st["position_id"])
    assert state is not None and state.match_length == 5 and state.score == (0, 0)
    mine = pos if state.on_roll == 0 else pos.swap()
    if st["phase"] != "move" or st["turn"]["hops"] == 0:
        assert st["board"] == list(mine.board) and st["pips"] == list(mine.pips())
    assert st["cube"] == {"value": 1, "owner": "center"} and not st["crawford"]
    again = client.get(f"/v1/board/{st['id']}").json()
    assert again["position_id"] == st["position_id"] and again["events"] == st["events"]


# ---- illegal moves and actions are refused, naming the field


def test_an_illegal_move_is_rejected_and_the_game_is_unchanged(client: TestClient) -> None:
    st = to_move_phase(client, new(client, match=3, seed=11))
    gid = st["id"]
    r = client.post(f"/v1/board/{gid}/move", json={"move": "24/12 3/1"})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["field"] == "move" and "24/12 3/1" in err["message"]
    # a hop no legal play contains: from a point with none of our checkers
    empty = next(p for p in range(1, 25) if st["board"][p] == 0)
    r = client.post(f"/v1/board/{gid}/hop", json={"from": empty, "to": max(empty - 1, 0)})
    assert r.status_code == 400 and r.json()["error"]["field"] == "hop"
    assert f"point {empty}" in r.json()["error"]["message"]
    assert client.get(f"/v1/board/{gid}").json()["position_id"] == st["position_id"]
    # not the person's decision: taking a double nobody offered
    r = client.post(f"/v1/board/{gid}/take")
    assert r.status_code == 400 and "'take' is not a legal action" in r.json()["error"]["message"]


def test_malformed_requests_are_422_naming_the_field(client: TestClient) -> None:
    st = new(client, match=0, seed=1)
    r = client.post(f"/v1/board/{st['id']}/hop", json={"from": 30, "to": 1})
    assert r.status_code == 422 and r.json()["error"]["field"] == "from"
    r = client.post("/v1/board", json={"match": "three"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "match" and "three" in r.json()["error"]["message"]
    r = client.post("/v1/board", json={"match": 3, "colour": "white"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "colour"
    r = client.post("/v1/board", json={"match": 99})
    assert r.status_code == 400 and r.json()["error"]["field"] == "match" and "99" in r.json()["error"]["message"]
    r = client.post("/v1/board", json={"match": 3, "jacoby": True})
    assert r.status_code == 400 and r.json()["error"]["field"] == "jacoby"
    r = client.post("/v1/board", json={"ply": 4})
    assert r.status_code == 400 and r.json()["error"]["field"] == "ply"
    r = client.post(f"/v1/board/{st['id']}/resign", json={"level": 4})
    assert r.status_code == 422 and r.json()["error"]["field"] == "level"
    r = client.get("/v1/board/not-a-game-id-at-all")
    assert r.status_code == 404 and "not-a-game-id-at-all" in r.json()["error"]["message"]
    r = client.get("/v1/board/bad!id")
    assert r.status_code == 422


def test_moving_checker_by_checker_with_undo() -> None:
    ti = TurnInput(Position.start(), (6, 5))
    p0 = ti.start
    hops = ti.hops_from(p0, 24)
    assert set(hops) == {18, 13}  # the 6, or both dice (24/18/13); the 5 is blocked on 19 (their 6-point)
    whole = ti.hop(p0, 24, 13)
    done = ti.complete(whole)
    assert done is not None and done.text == "24/13"
    half = ti.hop(p0, 24, 18)
    assert ti.complete(half) is None and half.rest == (5,)
    assert {t["to"] for t in ti.targets(half) if t["from"] == 18} == {13}
    with pytest.raises(Exception, match="not part of a legal play"):
        ti.hop(half, 13, 2)  # 11 pips: the 5 left cannot make it
    # bearing off: the larger die is left for later when a smaller one bears the checker off
    race = Position.from_points({1: 1, 2: 1}, {24: 2})
    ti = TurnInput(race, (6, 2))
    off = ti.hop(ti.start, 2, 0)
    assert off.rest == (6,)


def test_resign_levels_follow_what_can_still_be_lost() -> None:
    assert resign_limit(Position.start()) == 3
    borne_off = Position.from_points({1: 3, 2: 2}, {24: 2, 6: 5})  # theirs in their own numbering
    assert resign_limit(borne_off) == 1
    race = Position.from_points({1: 5, 2: 5, 3: 5}, {1: 5, 2: 5, 3: 5})  # no contact, nothing behind
    assert resign_limit(Position.from_points({1: 5, 2: 5, 20: 5}, {1: 5, 2: 5, 3: 5})) == 3  # caught behind
    assert resign_limit(race) == 2


# ---- the cube: offered only when legal, refused when dead


def test_no_double_in_a_one_point_match(client: TestClient) -> None:
    st = new(client, match=1, seed=5)
    for _ in range(40):
        assert "double" not in st["actions"] and st["phase"] != "take"
        assert st["phase"] != "roll"  # the cube is dead: the server rolls for the person at once
        r = client.post(f"/v1/board/{st['id']}/double")
        assert r.status_code == 400 and r.json()["error"]["field"] == "action"
        if st["phase"] == "match_over":
            break
        t = st["turn"]
        r = client.post(
            f"/v1/board/{st['id']}/" + ("commit" if t["complete"] else "hop"),
            json=None if t["complete"] else {"from": t["targets"][0]["from"], "to": t["targets"][0]["to"]},
        )
        st = r.json()


def test_cube_availability_follows_gnubg(bot: BgbotBot) -> None:
    g = BoardGame("game-unit-1", bot, 3, False, 1, 3)
    g.score, g.crawford, g.cube, g.owner = [0, 0], False, 1, -1
    assert g.cube_dead_reason(0) == "" and g.cube_dead_reason(1) == ""
    g.score = [1, 0]
    g.cube, g.owner = 2, 0
    assert "dead" in g.cube_dead_reason(0)  # 1 + 2 reaches 3: the person's cube is dead
    assert "owns the cube" in g.cube_dead_reason(1)
    g.score, g.cube, g.owner, g.crawford = [2, 0], 1, -1, True
    assert "Crawford" in g.cube_dead_reason(0) and "Crawford" in g.cube_dead_reason(1)
    g.crawford, g.score = False, [2, 1]  # post-Crawford: the leader's cube is dead, the trailer's is not
    assert "dead" in g.cube_dead_reason(0) and g.cube_dead_reason(1) == ""
    money = BoardGame("game-unit-2", bot, 0, False, 1, 3)
    money.cube, money.owner = 64, 1
    assert "64" in money.cube_dead_reason(1)


def test_the_crawford_game_comes_once_and_has_no_cube(client: TestClient) -> None:
    st = new(client, match=3, seed=2)
    gid = st["id"]
    seen_crawford = 0
    for _ in range(20):  # resign single games until someone is 1-away, then play the rest out
        st = to_move_phase(client, st)
        if st["crawford"] or max(st["score"]) >= 2:
            break
        st = client.post(f"/v1/board/{gid}/resign", json={"level": 1}).json()
        assert st["phase"] in ("game_over", "move")
        if st["phase"] == "game_over":
            st = client.post(f"/v1/board/{gid}/next").json()
    assert st["crawford"] and sorted(st["score"]) == [0, 2]
    games = {st["game"]}
    while st["phase"] != "match_over":
        if st["crawford"]:
            seen_crawford += 1
            assert "double" not in st["actions"] and st["cube"] == {"value": 1, "owner": "center"}
        st = play_out(client, st, until="game_over")
        if st["phase"] == "game_over":
            st = client.post(f"/v1/board/{gid}/next").json()
            games.add(st["game"])
            assert not st["crawford"]  # after the Crawford game: post-Crawford
    assert seen_crawford >= 1
    rec = parse_match(client.get(f"/v1/board/{gid}/record?format=mat").text, "mat")
    assert [g.crawford for g in rec.games].count(True) == 1


# ---- resignations


def test_resign_values_and_bgbot_s_answer(bot: BgbotBot) -> None:
    g = BoardGame("game-unit-3", bot, 0, False, 7, 3)
    g = to_decision(g)
    g.cube, g.owner = 2, 1
    assert [g.resign_points(k) for k in (1, 2, 3)] == [2, 4, 6]
    sure_gammon = np.array([0.0, 0.0, 0.0, 1.0, 0.0])  # the person loses a gammon for sure
    assert g.resign(1, sure_gammon) is False and g.phase in ("roll", "move")
    assert "declines" in g.events[-1]
    assert g.resign(2, sure_gammon) is True
    assert g.result == {"winner": "bgbot", "points": 4, "how": "resigned", "kind": 2} and g.score == [0, 4]
    jac = to_decision(BoardGame("game-unit-4", bot, 0, True, 7, 3))
    assert jac.resign_points(2) == 1  # Jacoby: a gammon counts single while the cube is centred
    match = to_decision(BoardGame("game-unit-5", bot, 3, False, 7, 3))
    even = np.array([0.5, 0.1, 0.0, 0.1, 0.0])
    assert match.resign(1, even) is True and match.score == [0, 1]  # a single point is more than an even game


def to_decision(g: BoardGame) -> BoardGame:
    """Roll (without doubling) until the person is to move or roll."""
    for _ in range(20):
        if g.phase in ("roll", "move"):
            return g
        if g.phase == "take":
            g.take()
    raise AssertionError("no decision of the person's reached")


# ---- hints


def test_hints_give_equities_in_money_and_mwc_in_a_match(client: TestClient) -> None:
    st = to_move_phase(client, new(client, match=5, seed=4))
    for ply in (1, 2, 3):
        h = client.post(f"/v1/board/{st['id']}/hint", json={"ply": ply}).json()
        assert h["kind"] == "move" and h["ply"] == ply and h["moves"][0]["mwc"] is not None
    assert h["equity_kind"].startswith("cubeful match")
    money = to_move_phase(client, new(client, match=0, seed=4))
    h = client.post(f"/v1/board/{money['id']}/hint", json={"ply": 1}).json()
    assert h["kind"] == "move" and h["moves"][0]["mwc"] is None
    st = new(client, match=0, seed=9)
    while st["phase"] != "roll":
        st = play_out(client, st, until="roll") if st["phase"] != "game_over" else client.post(
            f"/v1/board/{st['id']}/next").json()
    h = client.post(f"/v1/board/{st['id']}/hint", json={"ply": 1}).json()
    assert h["kind"] == "cube" and "decision_text" in h and h["can_double"] is True
    r = client.post(f"/v1/board/{st['id']}/hint", json={"ply": 9})
    assert r.status_code == 400 and r.json()["error"]["field"] == "ply"


# ---- records


@pytest.mark.parametrize("fmt", ["mat", "sgf"])
def test_the_record_reads_back_with_bgbot_s_reader(client: TestClient, fmt: str) -> None:
    st = play_out(client, new(client, match=3, seed=21))
    gid = st["id"]
    r = client.get(f"/v1/board/{gid}/record", params={"format": fmt})
    assert r.status_code == 200 and f".{fmt}" in r.headers["content-disposition"]
    rec = parse_match(r.text, fmt, f"board.{fmt}")
    assert rec.length == 3 and rec.score == tuple(st["score"])
    assert rec.winner == (0 if st["match_winner"] == "you" else 1)
    assert rec.names == ("you", "bgbot")
    # a game in progress reads back unfinished, a pending double left out
    mid = to_move_phase(client, new(client, match=0, seed=8))
    text = client.get(f"/v1/board/{mid['id']}/record", params={"format": fmt}).text
    part = parse_match(text, fmt)
    assert part.games[-1].how == "unfinished" and part.games[-1].winner is None
    assert client.get(f"/v1/board/{gid}/record", params={"format": "txt"}).status_code == 422


# ---- the store


def test_the_store_keeps_a_bounded_number_of_games(bot: BgbotBot) -> None:
    store = GameStore(limit=2, ttl=3600)
    ids = [store.add(lambda gid, k=k: BoardGame(gid, bot, 0, False, k, 3)).id for k in range(3)]
    assert len(store) == 2
    with pytest.raises(HTTPException) as exc:
        store.get(ids[0])  # the oldest made room
    assert exc.value.status_code == 404 and ids[0] in str(exc.value.detail)
    store.get(ids[1])
    short = GameStore(limit=5, ttl=0.01)
    gid = short.add(lambda g: BoardGame(g, bot, 0, False, 1, 3)).id
    time.sleep(0.05)
    with pytest.raises(HTTPException):
        short.get(gid)
