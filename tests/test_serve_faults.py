"""Faults of ``bgbot serve`` found by a hostile probe, each held by a test.

wildbg's query parameters (a ``crawford`` that is neither true nor false, an integer too long to read), the
spellings of a roll, a damaged ``--checkpoint`` (one line, exit 2), and a client that sends its request headers
slowly (closed after the header timeout).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from serve_helpers import free_port, live_server, next_board_action, stop

from bgbot.engine.api import Engine
from bgbot.rules.dice import parse_dice
from bgbot.serve.app import create_app
from bgbot.serve.service import ServeConfig

START = "4HPwATDgc/ABMA"
START_PIPS = "p24=2&p13=5&p8=3&p6=5&p1=-2&p12=-5&p17=-3&p19=-5"
LONG = "9" * 40


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


@pytest.fixture(scope="module")
def client(engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(ServeConfig(timeout=300), engine=engine)) as c:
        yield c


# ---- wildbg's query parameters ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["maybe", "", "2", "truee", "nope"])
def test_wildbg_crawford_that_is_not_a_boolean_is_a_400_quoting_it(client: TestClient, value: str) -> None:
    r = client.get(f"/eval?{START_PIPS}&x_away=1&o_away=3&crawford={value}")
    assert r.status_code == 400, r.json()
    assert list(r.json()) == ["message"] and repr(value) in r.json()["message"] and "crawford" in r.json()["message"]


@pytest.mark.parametrize(("value", "crawford"), [("true", True), ("TRUE", True), ("1", True), ("false", False)])
def test_wildbg_crawford_booleans(client: TestClient, value: str, crawford: bool) -> None:
    r = client.get(f"/eval?{START_PIPS}&x_away=3&o_away=1&crawford={value}")
    assert r.status_code == 200
    # x trails 3-away to 1-away: never a double in the Crawford game, at once after it
    assert r.json()["cube"]["double"] is (not crawford)


def test_wildbg_crawford_in_a_money_game_is_refused(client: TestClient) -> None:
    r = client.get(f"/eval?{START_PIPS}&crawford=true")
    assert r.status_code == 400 and "x_away" in r.json()["message"]


@pytest.mark.parametrize(
    "query",
    [
        f"/eval?p24={LONG}&p13=5",
        f"/eval?{START_PIPS}&p25=-{LONG}",
        f"/move?die1=3&die2=1&{START_PIPS}&p7={LONG}",
        f"/eval?{START_PIPS}&x_away={LONG}&o_away=3",
        f"/move?die1={LONG}&die2=1&{START_PIPS}",
    ],
)
def test_wildbg_an_over_long_integer_is_out_of_range(client: TestClient, query: str) -> None:
    r = client.get(query)
    assert r.status_code == 400
    message = r.json()["message"]
    assert "out of range" in message or "less than or equal" in message, message
    assert "whole number" not in message and "valid integer" not in message


def test_wildbg_dice_are_die1_and_die2_only(client: TestClient) -> None:
    r = client.get(f"/move?die1=3/1&die2=1&{START_PIPS}")
    assert r.status_code == 400 and "die1" in r.json()["message"]
    r = client.get(f"/move?dice=31&{START_PIPS}")
    assert r.status_code == 400 and "die1" in r.json()["message"]


# ---- the spellings of a roll in /v1 -----------------------------------------------------------

SPELLINGS = ["31", "3-1", "3/1", "3 1", "3,1", [3, 1]]


@pytest.mark.parametrize("dice", SPELLINGS)
def test_every_documented_spelling_of_a_roll_is_accepted(client: TestClient, dice: object) -> None:
    want = client.post("/v1/move", json={"position": START, "dice": "31"}).json()
    assert client.post("/v1/move", json={"position": START, "dice": dice}).json() == want


def test_the_dice_field_documents_every_spelling_the_parser_accepts(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["MoveBody"]["properties"]["dice"]
    described = schema["description"]
    for dice in SPELLINGS[:-1]:
        assert parse_dice(dice) == (3, 1)
        assert repr(dice) in described, (dice, described)


@pytest.mark.parametrize("dice", ["3//1", "3:1", "3.1", "3--1", "3 - 1", "3 /1"])
def test_other_spellings_of_a_roll_are_refused(client: TestClient, dice: str) -> None:
    r = client.post("/v1/move", json={"position": START, "dice": dice})
    assert r.status_code == 400 and repr(dice) in r.json()["error"]["message"]


# ---- bgbot serve --checkpoint DAMAGED -----------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"PK\x03\x04 truncated zip"])
def test_serve_with_a_damaged_checkpoint_is_one_line_and_exit_2(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "damaged.npz"
    bad.write_bytes(content)
    r = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "serve", "--port", "18599", "--checkpoint", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and str(bad) in r.stderr
    assert r.stdout == ""


def test_serve_with_a_missing_checkpoint_is_one_line_and_exit_2(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "serve", "--checkpoint", str(tmp_path / "nothing.npz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nothing.npz" in r.stderr


# ---- a client that sends its headers slowly ------------------------------------------------------


def _closed_after(base: str, sent: bytes, limit: float) -> float:
    """Seconds until the server closes a connection that sent ``sent`` and then nothing."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=limit) as s:
        t0 = time.monotonic()
        if sent:
            s.sendall(sent)
        try:
            while s.recv(4096):
                pass  # a 408 or any answer, then the close
        except (ConnectionResetError, TimeoutError):
            if time.monotonic() - t0 >= limit:
                return float("inf")
        return time.monotonic() - t0


@pytest.fixture(scope="module", params=["h11", "httptools"])
def slow_base(engine: Engine, request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "httptools":
        pytest.importorskip("httptools")  # bgbot serve runs h11 where httptools is not installed
    with live_server(engine, ServeConfig(header_timeout=1.5), offset=80, http=request.param) as url:
        yield url


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /v1/health HTTP/1.1\r\nHost: x\r\n", b"POST /v1/eval HTTP/1.1\r\nHost: x\r\nContent-Ty"],
    ids=["nothing", "no-blank-line", "half-a-header"],
)
def test_a_client_slow_with_its_headers_is_closed(slow_base: str, sent: bytes) -> None:
    took = _closed_after(slow_base, sent, limit=20)
    assert 1.0 <= took < 6, took


def test_the_header_timeout_also_holds_on_a_kept_alive_connection(slow_base: str) -> None:
    host, port = slow_base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        t0 = time.monotonic()
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHo")  # the second request stalls mid-header
        try:
            while s.recv(4096):
                pass
        except ConnectionResetError:
            pass
        assert time.monotonic() - t0 < 6


def test_a_slow_but_complete_request_is_answered(slow_base: str) -> None:
    host, port = slow_base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        for part in (b"GET /v1/health HTT", b"P/1.1\r\nHost: x\r\n", b"\r\n"):
            s.sendall(part)
            time.sleep(0.3)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")


def test_bgbot_serve_states_its_header_timeout(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "serve", "--header-timeout", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert r.returncode == 2 and "'0'" in r.stderr


def test_bgbot_serve_with_two_workers_closes_slow_clients_and_shares_its_jobs_and_games(tmp_path: Path) -> None:
    port = free_port(90)
    base = f"http://127.0.0.1:{port}"
    argv = ["serve", "--port", str(port), "--workers", "2", "--header-timeout", "1.5", "--log-level", "warning"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", *argv, "--jobs-dir", str(tmp_path / "jobs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 120
        pids = set()
        while len(pids) < 2:  # both workers up (each new connection may go to either)
            with contextlib.suppress(httpx.HTTPError):
                pids.add(httpx.get(f"{base}/v1/health", timeout=5).json()["pid"])
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"bgbot serve --workers 2 did not come up with two workers: {out[-2000:]}")
            time.sleep(0.1)
        assert httpx.get(f"{base}/v1/health", timeout=5).json()["limits"]["header_timeout"] == 1.5
        assert 1.0 <= _closed_after(base, b"GET /v1/health HTTP/1.1\r\nHo", limit=20) < 6
        job = httpx.post(f"{base}/v1/jobs/rollout", json={"position": START, "trials": 72, "truncate": 1}, timeout=30)
        assert job.status_code == 202
        url = base + job.json()["url"]
        status = ""
        while status not in ("done", "failed") and time.monotonic() < deadline + 120:
            r = httpx.get(url, timeout=10)  # a new connection each time: either worker answers
            assert r.status_code == 200, r.text
            status = r.json()["status"]
            time.sleep(0.2)
        assert status == "done" and r.json()["result"]["trials"] == 72
        assert httpx.delete(url, timeout=10).json()["status"] == "deleted"
        assert httpx.get(url, timeout=10).status_code == 404
        # a web board match: a new connection for each action, so either worker answers it
        st = httpx.post(f"{base}/v1/board", json={"match": 3, "seed": 4}, timeout=30).json()
        for _ in range(40):
            if st["phase"] == "match_over":
                break
            path, body = next_board_action(st)
            r = httpx.post(f"{base}/v1/board/{st['id']}/{path}", json=body, timeout=30)
            assert r.status_code == 200, r.text
            st = r.json()
        record = httpx.get(f"{base}/v1/board/{st['id']}/record", timeout=10)
        assert record.status_code == 200 and "1) " in record.text  # the moves played so far, in .mat
        assert httpx.get(f"{base}/v1/board/{st['id']}", timeout=10).json()["position_id"] == st["position_id"]
    finally:
        stop(proc)
