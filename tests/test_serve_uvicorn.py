"""bgbot serve on a real uvicorn over loopback: every route once, concurrent clients, and the CLI's own server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from serve_helpers import free_port, live_server, stop

from bgbot.cli.serve import default_workers
from bgbot.engine.api import Engine
from bgbot.eval.evaluate import default_threads
from bgbot.serve.service import ServeConfig

START = "4HPwATDgc/ABMA"
START_PIPS = "p24=2&p13=5&p8=3&p6=5&p1=-2&p12=-5&p17=-3&p19=-5"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def base(engine: Engine) -> Iterator[str]:
    with live_server(engine, ServeConfig(threads=2, queue=64), offset=0) as url:
        yield url


def test_every_route_over_http(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as c:
        assert c.get("/v1/health").json()["status"] == "ok"
        move = c.post("/v1/move", json={"position": START, "dice": "31"}).json()
        assert move["moves"][0]["move"] == "8/5 6/5" and len(move["moves"]) == 16
        assert c.post("/v1/cube", json={"position": START}).json()["decision_text"].startswith("No double")
        assert 0.4 < c.post("/v1/eval", json={"position": START}).json()["probs"]["win"] < 0.6
        assert c.post("/v1/show", json={"position": START}).json()["pips"] == [167, 167]
        assert len(c.post("/v1/moves", json={"position": START, "dice": "31"}).json()["moves"]) == 16
        assert c.post("/v1/play/bot", json={"position": START, "dice": "31"}).json()["move"] == "8/5 6/5"
        w = c.get(f"/move?die1=3&die2=1&{START_PIPS}").json()
        assert w["moves"][0]["play"] == [{"from": 8, "to": 5}, {"from": 6, "to": 5}]
        assert set(c.get(f"/eval?{START_PIPS}").json()) == {"cube", "probabilities"}
        bad = c.post("/v1/move", json={"position": START, "dice": "77"})
        assert bad.status_code == 400 and "'77'" in bad.json()["error"]["message"]
        assert c.get("/").status_code == 200 and c.get("/docs").status_code == 200
        assert c.get("/v1/health").json()["status"] == "ok"  # the server goes on after errors


def test_32_concurrent_clients_get_their_own_answers(base: str) -> None:
    rolls = [f"{a}{b}" for a in range(1, 7) for b in range(1, a + 1)]
    jobs = [rolls[i % len(rolls)] for i in range(64)]
    with httpx.Client(base_url=base, timeout=120) as c:
        alone = {r: c.post("/v1/move", json={"position": START, "dice": r}).json() for r in rolls}

    def ask(roll: str) -> dict:
        with httpx.Client(base_url=base, timeout=120) as c:
            return c.post("/v1/move", json={"position": START, "dice": roll}).json()

    with ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(ask, jobs))
    assert answers == [alone[r] for r in jobs]


def test_the_event_loop_answers_while_evaluations_run(base: str) -> None:
    # 2-ply moves keep both evaluation threads busy; the health route (no evaluation) still answers
    with ThreadPoolExecutor(4) as pool:
        slow = [
            pool.submit(httpx.post, f"{base}/v1/move", json={"position": START, "dice": d, "ply": 2}, timeout=120)
            for d in ("31", "42", "65", "21")
        ]
        time.sleep(0.05)
        t0 = time.monotonic()
        assert httpx.get(f"{base}/v1/health", timeout=60).status_code == 200
        health_s = time.monotonic() - t0
        assert all(f.result().status_code == 200 for f in slow)
    assert health_s < 30  # generous: only a blocked event loop would make it wait for all four


def test_bgbot_serve_command(tmp_path: object) -> None:
    port = free_port(50)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "serve", "--port", str(port), "--ply", "1", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                h = httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=5)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"bgbot serve did not come up: {out[-2000:]}")
                time.sleep(0.2)
        assert h.json()["ply"] == 1 and h.json()["max_ply"] == 2
        assert h.json()["workers"] == default_workers()  # one worker process per core by default
        # several workers: each engine on one thread; one worker: the engine's default threads
        assert h.json()["threads"] == (1 if default_workers() > 1 else default_threads())
        r = httpx.post(f"http://127.0.0.1:{port}/v1/eval", json={"position": START, "ply": 3}, timeout=30)
        assert r.status_code == 400 and r.json()["error"]["field"] == "ply"
    finally:
        stop(proc, 20)


@pytest.mark.parametrize(
    ("options", "quoted"), [(["--ply", "3", "--max-ply", "2"], "3"), (["--workers", "0"], "workers")]
)
def test_bgbot_serve_bad_options_are_one_line(options: list[str], quoted: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "serve", *options],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and quoted in r.stderr
