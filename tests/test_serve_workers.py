"""bgbot serve with several worker processes, and its fast path for 1-ply work.

Given the web board's games kept in a folder the workers share (:class:`bgbot.serve.board.FolderGameStore`),
when a game is played, then every answer is the one the in-memory store gives for the same seed and
actions; given a 1-ply request, when it is answered, then it ran on the event loop's thread, and a
deeper one on the evaluation pool.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient
from serve_helpers import next_board_action
from test_board_api import play_out

from bgbot.cli.serve import default_workers
from bgbot.engine.api import Engine
from bgbot.formats.records import parse_match
from bgbot.play.bots.local import BgbotBot
from bgbot.serve.app import create_app
from bgbot.serve.board import BoardGame, FolderGameStore
from bgbot.serve.service import ServeConfig

START = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def clients(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, TestClient]]:
    folder = tmp_path_factory.mktemp("board")
    memory = create_app(ServeConfig(ply=1, max_ply=2), engine=engine)
    shared = create_app(ServeConfig(ply=1, max_ply=2, board_dir=str(folder)), engine=engine)
    with TestClient(memory) as m, TestClient(shared) as s:
        yield m, s


def _without_id(state: dict) -> dict:
    return {k: v for k, v in state.items() if k != "id"}


def test_a_match_in_the_shared_folder_is_the_match_in_memory(clients: tuple[TestClient, TestClient]) -> None:
    memory, shared = clients
    a = memory.post("/v1/board", json={"match": 3, "seed": 5}).json()
    b = shared.post("/v1/board", json={"match": 3, "seed": 5}).json()
    assert _without_id(a) == _without_id(b)
    # the same actions, one at a time, answer the same states (dice from the kept generator included)
    for _ in range(400):
        if a["phase"] == "match_over":
            break
        path, body = next_board_action(a)
        a = memory.post(f"/v1/board/{a['id']}/{path}", json=body).json()
        b = shared.post(f"/v1/board/{b['id']}/{path}", json=body).json()
        assert _without_id(a) == _without_id(b)
    assert a["phase"] == "match_over"
    rec_a = memory.get(f"/v1/board/{a['id']}/record").text
    rec_b = shared.get(f"/v1/board/{b['id']}/record").text
    assert parse_match(rec_a, "mat").games == parse_match(rec_b, "mat").games


def test_a_hint_and_a_bad_action_in_the_shared_folder(clients: tuple[TestClient, TestClient]) -> None:
    _, shared = clients
    st = shared.post("/v1/board", json={"match": 0, "seed": 2}).json()
    st = play_out(shared, st, until="move")
    hint = shared.post(f"/v1/board/{st['id']}/hint", json={}).json()
    assert hint["kind"] == "move" and hint["moves"]
    r = shared.post(f"/v1/board/{st['id']}/take")
    assert r.status_code == 400 and "'take' is not a legal action" in r.json()["error"]["message"]
    assert shared.get(f"/v1/board/{st['id']}").json()["position_id"] == st["position_id"]  # unchanged
    r = shared.get("/v1/board/AAAAAAAAAAAAAAAA")
    assert r.status_code == 404 and "AAAAAAAAAAAAAAAA" in r.json()["error"]["message"]


def test_the_folder_store_keeps_a_bounded_number_of_games(engine: Engine, tmp_path: Path) -> None:
    bot = BgbotBot(engine, ply=1)
    store = FolderGameStore(tmp_path / "games", lambda ply: bot, limit=2, ttl=3600)
    ids = []
    for k in range(3):
        ids.append(store.add(lambda gid, k=k: BoardGame(gid, bot, 0, False, k, 3)).id)
        time.sleep(0.02)  # distinct file times: the oldest is the first made
    assert len(store) == 2
    with pytest.raises(HTTPException) as exc, store.use(ids[0]):
        pass  # the oldest made room
    assert exc.value.status_code == 404 and ids[0] in str(exc.value.detail)
    with store.use(ids[1]) as game:
        assert game.id == ids[1] and game.bot is bot
    short = FolderGameStore(tmp_path / "short", lambda ply: bot, limit=5, ttl=0.01)
    gid = short.add(lambda g: BoardGame(g, bot, 0, False, 1, 3)).id
    time.sleep(0.05)
    with pytest.raises(HTTPException), short.use(gid):
        pass


def test_one_game_is_changed_by_one_request_at_a_time(engine: Engine, tmp_path: Path) -> None:
    bot = BgbotBot(engine, ply=1)
    store = FolderGameStore(tmp_path, lambda ply: bot)
    gid = store.add(lambda g: BoardGame(g, bot, 0, False, 1, 3)).id
    inside = threading.Event()
    order: list[str] = []

    def slow() -> None:
        with store.use(gid) as game:
            inside.set()
            time.sleep(0.3)
            game.events.append("slow")
            order.append("slow")

    t = threading.Thread(target=slow)
    t.start()
    inside.wait(10)
    with store.use(gid) as game:  # waits for the slow request's save
        order.append("second")
        assert game.events[-1] == "slow"
    t.join()
    assert order == ["slow", "second"]


def test_1_ply_work_runs_on_the_event_loop_and_deeper_work_on_the_pool(engine: Engine) -> None:
    threads: list[str] = []
    real = engine.best_move

    def spy(*a: object, **k: object):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return real(*a, **k)

    with TestClient(create_app(ServeConfig(max_ply=2), engine=engine)) as c:
        engine.best_move = spy  # type: ignore[method-assign]
        try:
            one = c.post("/v1/move", json={"position": START, "dice": "31", "ply": 1})
            two = c.post("/v1/move", json={"position": START, "dice": "31", "ply": 2})
        finally:
            engine.best_move = real  # type: ignore[method-assign]
    assert one.status_code == 200 and two.status_code == 200
    assert one.json()["moves"][0]["move"] == two.json()["moves"][0]["move"] == "8/5 6/5"
    assert not threads[0].startswith("bgbot-eval") and threads[1].startswith("bgbot-eval"), threads


def test_the_default_workers_are_the_cores_this_process_may_use() -> None:
    import os

    assert default_workers() == len(os.sched_getaffinity(0))


def test_a_config_travels_to_the_workers_whole() -> None:
    config = ServeConfig(ply=2, max_ply=3, workers=3, board_dir="/tmp/x", job_keep=5.5)
    assert ServeConfig.from_json(config.to_json()) == config
