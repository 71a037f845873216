"""bgbot serve through FastAPI's test client: every route, the CLI's JSON, wildbg's fields, and bad input.

One app (one engine) serves the whole module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bgbot.cli.main import main as cli_main
from bgbot.engine.api import Engine
from bgbot.rules.matchstate import CubeState
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position
from bgbot.serve.app import create_app
from bgbot.serve.service import ServeConfig
from bgbot.serve.wildbg import wildbg_play

START = "4HPwATDgc/ABMA"
XGID_31 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
START_PIPS = "p24=2&p13=5&p8=3&p6=5&p1=-2&p12=-5&p17=-3&p19=-5"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(ServeConfig(ply=1, max_ply=2, timeout=300), engine=engine)) as c:
        yield c


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    assert cli_main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


# ---- the /v1 routes answer what the CLI prints ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "argv"),
    [
        ({"position": START, "dice": "31"}, ["move", START, "31", "--json"]),
        ({"position": XGID_31, "ply": 2}, ["move", XGID_31, "--json", "--ply", "2"]),
        (
            {"position": START, "dice": [6, 5], "match": 7, "score": "2-4", "cube": 2, "owner": "me"},
            ["move", START, "65", "--json", "--match", "7", "--score", "2-4", "--cube", "2", "--owner", "me"],
        ),
        ({"position": START, "dice": "4-4", "cubeless": True}, ["move", START, "44", "--json", "--cubeless"]),
    ],
)
def test_v1_move_is_the_cli_json(
    client: TestClient, capsys: pytest.CaptureFixture[str], body: dict, argv: list[str]
) -> None:
    r = client.post("/v1/move", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, *argv)


@pytest.mark.parametrize(
    ("body", "argv"),
    [
        ({"position": START}, ["cube", START, "--json"]),
        (
            {"position": "XGID=aa--BBBB----dE---d-e----B-:0:0:1:00:0:0:0:0:10", "ply": 2},
            ["cube", "XGID=aa--BBBB----dE---d-e----B-:0:0:1:00:0:0:0:0:10", "--json", "--ply", "2"],
        ),
        (
            {"position": START, "match": 7, "score": [5, 6], "crawford": True},
            ["cube", START, "--json", "--match", "7", "--score", "5-6", "--crawford"],
        ),
    ],
)
def test_v1_cube_is_the_cli_json(
    client: TestClient, capsys: pytest.CaptureFixture[str], body: dict, argv: list[str]
) -> None:
    r = client.post("/v1/cube", json=body)
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, *argv)


def test_v1_eval_is_the_cli_json(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    r = client.post("/v1/eval", json={"position": START, "ply": 2})
    assert r.status_code == 200
    assert r.json() == cli_json(capsys, "eval", START, "--json", "--ply", "2")
    p = r.json()["probs"]
    assert 0.45 < p["win"] < 0.6 and p["win_backgammon"] <= p["win_gammon"] <= p["win"]


def test_v1_analyse_is_the_cli_json(client: TestClient, capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    path = data_dir / "analyse" / "m03.mat"
    r = client.post("/v1/analyse", json={"record": path.read_text(), "ply": 1, "mistakes": 3})
    assert r.status_code == 200, r.text
    got, want = r.json(), cli_json(capsys, "analyse", str(path), "--ply", "1", "--json", "--mistakes", "3", "--quiet")
    for d in (got, want):  # the time taken and the file's name are the only fields that differ
        d.pop("seconds")
        d["match"].pop("source")
    assert got == want
    bad = client.post("/v1/analyse", json={"record": "1 point match\n\n Game 1\n nonsense 1: 99/1"})
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "record"


@pytest.mark.parametrize(
    ("body", "argv"),
    [
        ({"position": START, "trials": 36, "truncate": 4}, ["--trials", "36", "--truncate", "4"]),
        (
            {"position": START, "dice": "31", "trials": 36, "truncate": 2, "top": 2, "seed": 5},
            ["31", "--trials", "36", "--truncate", "2", "--top", "2", "--seed", "5"],
        ),
    ],
)
def test_v1_rollout_is_the_cli_json(
    client: TestClient, capsys: pytest.CaptureFixture[str], body: dict, argv: list[str]
) -> None:
    r = client.post("/v1/rollout", json=body)
    assert r.status_code == 200, r.text
    got, want = r.json(), cli_json(capsys, "rollout", START, *argv, "--workers", "1", "--json")
    for d in (got, want):  # timings differ from run to run
        for k in ("seconds", "games_per_second", "cpu_seconds"):
            d.pop(k)
    assert got == want


def test_default_ply_is_the_servers(client: TestClient) -> None:
    assert client.post("/v1/eval", json={"position": START}).json()["ply"] == 1
    assert client.post("/v1/move", json={"position": START, "dice": "31"}).json()["ply"] == 1


def test_show_moves_and_bot(client: TestClient) -> None:
    by_hand = client.post("/v1/show", json={"board": list(Position.from_id(START).board)}).json()
    assert by_hand["position"] == START and "state" not in by_hand
    s = client.post("/v1/show", json={"position": XGID_31}).json()
    assert s["position"] == START and s["board"] == list(Position.from_id(START).board)
    assert s["pips"] == [167, 167] and s["off"] == [0, 0] and s["state"]["dice"] == [3, 1]
    m = client.post("/v1/moves", json={"position": START, "dice": "31"}).json()
    legal = legal_moves(Position.from_id(START), (3, 1))
    assert [row["result"] for row in m["moves"]] == [x.result.gnubg_id() for x in legal]
    assert all(row["board"] == list(Position.from_id(row["result"]).swap().board) for row in m["moves"])
    b = client.post("/v1/play/bot", json={"position": START, "dice": [3, 1]}).json()
    best = client.post("/v1/move", json={"position": START, "dice": "31"}).json()["moves"][0]
    assert (b["move"], b["result"]) == (best["move"], best["result"])
    assert b["board"] == list(Position.from_id(best["result"]).board) and not b["game_over"]
    seeded = [client.post("/v1/play/bot", json={"position": START, "seed": 7}).json()["dice"] for _ in range(2)]
    assert seeded[0] == seeded[1]


def test_cube_play_in_a_game(client: TestClient, engine: Engine) -> None:
    crushing = Position.from_points({6: 5, 5: 5, 4: 5}, {7: 5, 6: 5, 5: 5})  # a race we lead by 18 pips, on roll
    d = engine.cube_action(crushing, ply=1)
    assert d.doubles and not d.takes  # the test's premise: double, pass
    assert client.post("/v1/play/take", json={"position": START}).json()["take"] is True
    assert client.post("/v1/play/take", json={"position": crushing.gnubg_id()}).json()["take"] is False
    offer = client.post("/v1/play/bot", json={"position": crushing.gnubg_id(), "may_double": True}).json()
    assert offer["double"] is True and "move" not in offer
    # owning nothing to turn (the cube is the human's), bgbot rolls and moves
    moved = client.post(
        "/v1/play/bot",
        json={"position": crushing.gnubg_id(), "may_double": True, "cube": 2, "owner": "opp", "dice": "31"},
    ).json()
    assert moved["double"] is False and moved["move"]
    ranked = engine.best_move(crushing, (3, 1), 1, CubeState(cube=2, owner="opp")).best
    assert moved["result"] == ranked.result.gnubg_id()


def test_a_finishing_move_reports_the_game_over(client: TestClient) -> None:
    last = Position.from_points(
        {1: 1}, {1: 14, 19: 1}
    ).gnubg_id()  # our last checker goes off; one of theirs is in our home
    m = client.post("/v1/moves", json={"position": last, "dice": "61"}).json()["moves"]
    assert len(m) == 1 and m[0]["game_over"] and m[0]["points"] == 3  # a checker in our home: backgammon
    b = client.post("/v1/play/bot", json={"position": last, "dice": "21"}).json()
    assert b["game_over"] and b["points"] == 3
    over = client.post("/v1/moves", json={"position": m[0]["result"], "dice": "31"})
    assert over.status_code == 400 and "game is over" in over.json()["error"]["message"]


def test_health_docs_and_board(client: TestClient) -> None:
    h = client.get("/v1/health").json()
    assert h["status"] == "ok" and h["max_ply"] == 2 and h["schema"] == 1
    assert client.get("/openapi.json").json()["paths"]["/v1/move"]["post"]
    assert client.get("/docs").status_code == 200
    page = client.get("/")
    assert page.status_code == 200 and 'id="board"' in page.text
    for name in ("board.js", "board.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_concurrent_requests_each_get_their_own_answer(client: TestClient) -> None:
    from concurrent.futures import ThreadPoolExecutor

    rolls = [f"{a}{b}" for a in range(1, 7) for b in range(1, a + 1)]
    alone = {r: client.post("/v1/move", json={"position": START, "dice": r}).json() for r in rolls}
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda r: client.post("/v1/move", json={"position": START, "dice": r}).json(), rolls))
    assert together == [alone[r] for r in rolls]


# ---- wildbg compatibility, field by field against wildbg's documented examples --------------------------


def test_wildbg_move_forced_example(client: TestClient) -> None:
    # wildbg's web test get_move_body_forced_move: /move?die1=3&die2=1&p5=1&p24=-1
    r = client.get("/move?die1=3&die2=1&p5=1&p24=-1")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert list(body) == ["moves"] and len(body["moves"]) == 1
    move = body["moves"][0]
    assert list(move) == ["play", "probabilities"]
    assert move["play"] == [{"from": 5, "to": 4}, {"from": 4, "to": 1}]
    assert list(move["probabilities"]) == ["win", "winG", "winBg", "loseG", "loseBg"]
    # after 5/1 the opponent bears off its one checker with any roll: a sure single loss
    assert move["probabilities"] == {"win": 0.0, "winG": 0.0, "winBg": 0.0, "loseG": 0.0, "loseBg": 0.0}


def test_wildbg_move_double_roll_example(client: TestClient) -> None:
    # wildbg's get_move_double_roll: the three plays of 1-1 with two checkers on the 5-point
    plays = [m["play"] for m in client.get("/move?die1=1&die2=1&p5=2&p24=-1").json()["moves"]]
    step = lambda a, b: {"from": a, "to": b}  # noqa: E731
    expected = [
        [step(5, 4), step(4, 3), step(3, 2), step(2, 1)],
        [step(5, 4), step(5, 4), step(4, 3), step(3, 2)],
        [step(5, 4), step(5, 4), step(4, 3), step(4, 3)],
    ]
    assert sorted(plays, key=json.dumps) == sorted(expected, key=json.dumps)


def test_wildbg_move_start_31_and_order(client: TestClient, engine: Engine) -> None:
    # the OpenAPI example: the starting position with 3 and 1, best move first
    moves = client.get(f"/move?die1=3&die2=1&{START_PIPS}").json()["moves"]
    assert moves[0]["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}]
    assert len(moves) == 16
    a = engine.best_move(Position.from_id(START), (3, 1), 1)
    assert [m["probabilities"]["win"] for m in moves] == [c.probs[0] for c in a.candidates]


@pytest.mark.parametrize(
    ("old", "new", "dice", "expected"),
    [  # wildbg's own decomposition tests (bg_move/mixed.rs, double.rs), in bgbot's position builder
        (({20: 4}, {16: 2, 13: 2}), ({20: 4}, {16: 2, 13: 2}), (6, 4), []),
        (({25: 2}, {21: 2}), ({25: 1, 19: 1}, {21: 2}), (6, 4), [(25, 19)]),
        (({20: 4, 10: 1}, {24: 1, 14: 1}), ({20: 3, 10: 2}, {24: 1, 25: 1}), (6, 4), [(20, 14), (14, 10)]),
        (({20: 4, 10: 1}, {24: 1, 14: 1}), ({20: 3, 10: 2}, {24: 1, 14: 1}), (6, 4), [(20, 16), (16, 10)]),
        (({8: 1, 1: 10}, {2: 2}), ({1: 10}, {2: 2}), (6, 4), [(8, 4), (4, 0)]),
        (({4: 1, 3: 1, 1: 1}, {2: 2}), ({1: 1}, {2: 2}), (6, 4), [(4, 0), (3, 0)]),
        (({4: 1, 2: 1}, {24: 2}), ({2: 1}, {24: 2}), (4, 2), [(4, 2), (2, 0)]),
        (({20: 2}, {12: 2}), ({18: 1, 15: 1}, {12: 2}), (5, 2), [(20, 15), (20, 18)]),
        (({20: 2}, {12: 2}), ({16: 2}, {12: 2}), (4, 4), [(20, 16), (20, 16)]),
        (({5: 1, 4: 1, 3: 2}, {12: 2}), ({1: 1}, {12: 2}), (4, 4), [(5, 1), (4, 0), (3, 0), (3, 0)]),
    ],
)
def test_wildbg_play_decomposition(old: tuple, new: tuple, dice: tuple[int, int], expected: list) -> None:
    # wildbg's pos! macro gives o's points in x's numbering; Position.from_points wants o's own numbering
    def build(x: dict[int, int], o: dict[int, int]) -> Position:
        return Position.from_points(x, {(25 if p == 25 else 25 - p): n for p, n in o.items()})

    play = wildbg_play(build(*old), build(*new), dice)
    assert play == [{"from": a, "to": b} for a, b in expected]


def test_wildbg_eval_fields(client: TestClient, engine: Engine) -> None:
    body = client.get(f"/eval?{START_PIPS}").json()
    assert list(body) == ["cube", "probabilities"]
    assert list(body["cube"]) == ["double", "accept"] and body["cube"] == {"double": False, "accept": True}
    assert list(body["probabilities"]) == ["win", "winG", "winBg", "loseG", "loseBg"]
    assert body["probabilities"]["win"] == pytest.approx(float(engine.evaluate(Position.start())[0]))
    # wildbg's get_eval_success position: x on its 1-point wins with any roll
    sure = client.get("/eval?p1=1&p20=-1&p24=-1").json()
    assert sure["probabilities"]["win"] == 1.0 and sure["cube"]["accept"] is False


def test_wildbg_match_scores(client: TestClient) -> None:
    money = client.get(f"/move?die1=6&die2=5&{START_PIPS}").json()["moves"][0]["play"]
    dmp = client.get(f"/move?die1=6&die2=5&{START_PIPS}&x_away=1&o_away=1").json()["moves"]
    assert money == [{"from": 24, "to": 18}, {"from": 18, "to": 13}] and len(dmp) > 1
    assert client.get(f"/eval?{START_PIPS}&x_away=3&o_away=5").status_code == 200


@pytest.mark.parametrize(
    ("query", "quoted"),
    [  # wildbg's documented error cases: 400 with {"message": ...}
        ("/eval?p0=1&p4=4&p5=-5", "'1'"),
        ("/move?die1=2&die2=0&p4=4&p5=-5", "'0'"),
        ("/move?die1=2&die2=1&p4=4&p5=-5&p25=-2", "'-2'"),
        ("/move", "die1"),
        ("/move?die1=3&die2=1&p5=16", "'16'"),
        ("/move?die1=3&die2=1&p5=x", "'x'"),
        ("/move?die1=3&die2=1&p5=15&p6=1", "16"),
        (f"/eval?{START_PIPS}&x_away=0&o_away=3", "o_away=3"),
        (f"/eval?{START_PIPS}&x_away=99&o_away=3", "99"),
    ],
)
def test_wildbg_errors(client: TestClient, query: str, quoted: str) -> None:
    r = client.get(query)
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    assert list(r.json()) == ["message"] and quoted in r.json()["message"]


# ---- bad input: 4xx with a message naming and quoting what was wrong ------------------------------------

GOOD = {"position": START, "dice": "31"}
BAD_VALUES = {  # field -> values that are each wrong for it (parsed by bgbot: 400)
    "position": [
        "",
        "xyz",
        "4HPwATDgc/ABM",
        "4HPwATDgc/ABMA:zzz",
        "XGID=nonsense",
        "board:x:y",
        "////////////////",
        "4HPwATDgc/AB!A",
        "XGID=-b----E-C---eE---c-e----B-:x:0:1:31:0:0:0:0:10",
        "ÿÿÿÿÿÿÿÿÿÿÿÿÿÿ",
        "board:You:Opp:1:0:0:0",
        "4HPwATDgc/ABMA 31",
        "AAAAAAAAAAAAAA",
    ],
    "dice": ["71", "3", "333", "a1", "0-3", "", "3-7", "--", "66x", [0, 3], [3, 7], [-1, 2]],
    "ply": [0, 4, 3, 9, -1, 100],
    "cube": [3, 0, -2, 6, 100000],
    "score": ["9-9", "a-b", "3", [8, 1], [-1, 0], "7-7"],
    "match": [-1, 100000],
}
BAD_TYPES = {  # field -> values of the wrong JSON type (pydantic: 422)
    "position": [5, None, ["4HPwATDgc/ABMA"], {"id": START}, True, 1.5, "x" * 500],
    "dice": [31, {"a": 1}, True, [3], [3, 1, 2], [3.5, 1], ["3", "1"], 3.1],
    "ply": ["1", 1.5, True, [1], {"n": 1}],
    "cube": ["2", 2.0, [2], False],
    "owner": ["mine", 1, "", "ME", ["me"]],
    "match": ["7", 7.5, [7], True],
    "score": [5, {"me": 1}, [1, 2, 3], [1.5, 2]],
    "crawford": ["yes", 1, "true", None],
    "jacoby": ["no", 0, [True]],
    "cubeless": ["true", 1, {}],
}
UNKNOWN = ["dicee", "Position", "plies", "cube_owner", "checkpoint", "x"]

CASES: list[tuple[str, dict, int, str]] = []
for name, values in BAD_VALUES.items():
    for v in values:
        CASES.append(("/v1/move", {**GOOD, name: v}, 400, name))
for name, values in BAD_TYPES.items():
    for v in values:
        CASES.append(("/v1/move", {**GOOD, name: v}, 422, name))
for name in UNKNOWN:
    CASES.append(("/v1/move", {**GOOD, name: 1}, 422, name))
CASES += [
    ("/v1/move", {"dice": "31"}, 422, "position"),
    ("/v1/move", {"position": START}, 400, "dice"),
    ("/v1/move", {"position": START, "dice": "31", "owner": "me"}, 400, "owner"),
    ("/v1/move", {"position": START, "dice": "31", "match": 0, "score": "1-2"}, 400, "cube/owner/match/score"),
    ("/v1/move", {"position": START, "dice": "31", "score": "1-2"}, 400, "score"),
    (
        "/v1/move",
        {"position": START, "dice": "31", "match": 7, "crawford": True, "cube": 2},
        400,
        "cube/owner/match/score",
    ),
    ("/v1/move", {"position": START, "dice": "31", "match": 65}, 400, "match"),
    ("/v1/cube", {"position": START, "ply": 3}, 400, "ply"),
    ("/v1/cube", {"position": "nope"}, 400, "position"),
    ("/v1/cube", {"position": START, "owner": "nobody"}, 422, "owner"),
    ("/v1/cube", {"position": START, "dice": "31"}, 422, "dice"),
    ("/v1/eval", {"position": START, "ply": "two"}, 422, "ply"),
    ("/v1/eval", {}, 422, "position"),
    ("/v1/eval", {"position": "zz"}, 400, "position"),
    ("/v1/show", {"position": 3}, 422, "position"),
    ("/v1/show", {"position": "4HPwATDgc"}, 400, "position"),
    ("/v1/show", {"board": [0] * 26}, 400, "board"),
    ("/v1/show", {"board": [1] * 26}, 400, "board"),
    (
        "/v1/show",
        {"board": [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, -1]},
        400,
        "board",
    ),
    ("/v1/show", {"board": [0] * 25}, 422, "board"),
    ("/v1/show", {"board": ["1"] * 26}, 422, "board"),
    ("/v1/show", {}, 400, "position"),
    ("/v1/show", {"position": START, "board": list(Position.from_id(START).board)}, 400, "position"),
    ("/v1/moves", {"position": START}, 422, "dice"),
    ("/v1/moves", {"position": START, "dice": "77"}, 400, "dice"),
    ("/v1/play/bot", {"position": START, "seed": -1}, 422, "seed"),
    ("/v1/rollout", {"position": START, "trials": 5000}, 400, "trials"),
    ("/v1/rollout", {"position": START, "trials": 0}, 422, "trials"),
    ("/v1/rollout", {"position": START, "truncate": -1}, 422, "truncate"),
    ("/v1/rollout", {"position": START, "top": 50}, 422, "top"),
    ("/v1/rollout", {"position": START, "ply": 3}, 400, "ply"),
    ("/v1/rollout", {"position": "??"}, 400, "position"),
    ("/v1/play/bot", {"position": START, "dice": "9"}, 400, "dice"),
    ("/v1/play/bot", {"position": START, "ply": 3}, 400, "ply"),
    ("/v1/play/bot", {"position": START, "cube": 3}, 400, "cube"),
    ("/v1/play/bot", {"position": START, "owner": "me"}, 400, "cube/owner"),
    ("/v1/play/bot", {"position": START, "may_double": "yes"}, 422, "may_double"),
    ("/v1/play/take", {"position": START, "cube": 2, "owner": "opp"}, 400, "owner"),
    ("/v1/play/take", {"position": START, "owner": "anyone"}, 422, "owner"),
    ("/v1/play/take", {"position": "none"}, 400, "position"),
]


def _quoted(value: object) -> str:
    if isinstance(value, list):
        return repr(value[0]) if value else "[]"  # an item, quoted as a list, a tuple or alone
    return repr(value)[:40] if isinstance(value, str) and value else str(value)[:20]


@pytest.mark.parametrize(("path", "body", "status", "name"), CASES)
def test_malformed_requests_are_4xx_naming_the_field(
    client: TestClient, path: str, body: dict, status: int, name: str
) -> None:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["field"] == name, err
    assert err["message"]
    value = body.get(name.split("/")[0]) if "/" not in name else None
    if value not in (None, "") and not (isinstance(value, str) and len(value) > 60):
        # the message quotes what was sent (strings as repr, numbers as written)
        assert _quoted(value).strip("'")[:10] in err["message"], (value, err["message"])


def test_at_least_a_hundred_malformed_cases() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize(
    ("raw", "ctype", "status"),
    [
        (b"{not json", "application/json", 422),
        (b"", "application/json", 422),
        (b"[1, 2]", "application/json", 422),
        (b'"4HPwATDgc/ABMA"', "application/json", 422),
        (b"position=4HPwATDgc/ABMA", "application/x-www-form-urlencoded", 422),
        (b"\xff\xfe", "application/json", 422),
        (b"null", "application/json", 422),
        (b"{" * 40, "application/json", 422),
    ],
)
def test_malformed_bodies(client: TestClient, raw: bytes, ctype: str, status: int) -> None:
    r = client.post("/v1/move", content=raw, headers={"content-type": ctype})
    assert r.status_code == status and r.json()["error"]["message"]


def test_oversized_body_and_unknown_routes(client: TestClient) -> None:
    big = client.post("/v1/move", content=b"{" + b" " * 20_000 + b"}", headers={"content-type": "application/json"})
    assert big.status_code == 413 and "16384" in big.json()["error"]["message"]
    assert (
        client.get("/v2/move").status_code == 404 and "'/v2/move'" in client.get("/v2/move").json()["error"]["message"]
    )
    assert client.get("/v1/move").status_code == 405


def test_busy_and_slow_requests_are_503(engine: Engine) -> None:
    import threading
    import time

    gate = threading.Event()
    app = create_app(ServeConfig(timeout=0.2, queue=1, threads=1, max_ply=2), engine=engine)
    with TestClient(app) as c:
        slow = engine.evaluate

        def stalled(*a: object, **k: object):  # type: ignore[no-untyped-def]
            gate.wait(5)
            return slow(*a, **k)

        engine.evaluate = stalled  # type: ignore[method-assign]
        deep = {"position": START, "ply": 2}  # 2-ply work goes to the pool (1-ply runs on the event loop)
        try:
            r = c.post("/v1/eval", json=deep)
            assert r.status_code == 503 and "0.2 s" in r.json()["error"]["message"]
            # the stalled evaluation still holds the one slot: the next request is refused at once
            t0 = time.monotonic()
            busy = c.post("/v1/eval", json=deep)
            assert busy.status_code == 503 and "busy" in busy.json()["error"]["message"]
            assert time.monotonic() - t0 < 0.2 + 5
        finally:
            gate.set()
            engine.evaluate = slow  # type: ignore[method-assign]
        deadline = time.monotonic() + 10
        while (code := c.post("/v1/eval", json=deep).status_code) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # the released evaluation gives its slot back when it ends
        assert code == 200
