"""A real uvicorn serving bgbot on loopback, in a thread of the test process (ports 18500-18599)."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from bgbot.engine.api import Engine
from bgbot.serve.app import create_app
from bgbot.serve.guard import with_header_timeout
from bgbot.serve.service import ServeConfig

PORTS = range(18500, 18600)


def free_port(start: int = 0) -> int:
    """A port of this project's test range that nobody listens on now."""
    for port in [p for p in PORTS if p >= PORTS.start + start] + list(PORTS):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 18500-18599")


@contextmanager
def live_server(
    engine: Engine, config: ServeConfig | None = None, offset: int = 0, http: str = "auto"
) -> Iterator[str]:
    """Serve ``engine`` with uvicorn on 127.0.0.1; yields the base URL and stops the server afterwards.

    ``http``: uvicorn's HTTP implementation, 'h11', 'httptools' or 'auto' (as ``bgbot serve`` picks it).
    """
    port = free_port(offset)
    serve_config = config or ServeConfig()
    cfg = uvicorn.Config(
        create_app(serve_config, engine=engine),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        http=with_header_timeout(serve_config.header_timeout, http),  # as bgbot serve runs it
    )
    server = uvicorn.Server(cfg)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def stop(proc: subprocess.Popen[bytes], wait: float = 30) -> None:
    """End a ``bgbot serve`` child: SIGTERM, then SIGKILL after ``wait`` seconds."""
    proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def next_board_action(state: dict) -> tuple[str, dict | None]:
    """The person's next action in a web board game's ``state``: (route after the game's id, JSON body).

    Rolls instead of doubling, takes bgbot's doubles, plays the first legal hop until the move is whole,
    then commits it.
    """
    if state["phase"] == "move":
        turn = state["turn"]
        if turn["complete"]:
            return "commit", None
        return "hop", {"from": turn["targets"][0]["from"], "to": turn["targets"][0]["to"]}
    return {"roll": "roll", "take": "take", "game_over": "next"}[state["phase"]], None


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def require_chromium() -> None:
    """Fail (not skip) a browser test module when Debian's Chromium or its driver is missing: .ci/run installs both."""
    import shutil

    import pytest

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.fail(f"the browser test needs {CHROMIUM} and {CHROMEDRIVER}: apt-get install chromium chromium-driver",
                    pytrace=False)


@contextmanager
def headless_chromium(*extra_args: str) -> Iterator[object]:
    """A Selenium driver of Debian's headless Chromium (1400x1000, 60 s page loads), quit at the end.

    ``extra_args``: more Chromium switches (e.g. host-resolver rules that keep a page offline).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as ChromeService

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", "--disable-extensions", *extra_args):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=ChromeService(executable_path=CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(60)
    try:
        yield d
    finally:
        d.quit()
