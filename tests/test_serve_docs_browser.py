"""``/docs`` and ``/redoc`` of ``bgbot serve`` render in headless Chromium with no network beyond loopback.

Chromium runs with every host name but 127.0.0.1 mapped to nowhere, so a page that fetched Swagger UI from a CDN
would stay blank; the test also reads the page's resource timings and asserts that every URL it loaded is the
server's own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from serve_helpers import headless_chromium, live_server, require_chromium

from bgbot.engine.api import Engine
from bgbot.serve.service import ServeConfig

require_chromium()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with live_server(Engine.load(), ServeConfig(), offset=70) as url:
        yield url


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    # offline: no name resolves except loopback's (a CDN script would fail to load)
    with headless_chromium("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--no-proxy-server") as d:
        yield d  # type: ignore[misc]


def _loaded_urls(driver: webdriver.Chrome) -> list[str]:
    """Every URL the page fetched: its own address and its resource timings (scripts, styles, XHR, images)."""
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name);")
    return [driver.current_url, *urls]


def test_swagger_ui_renders_every_operation_offline(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/docs")
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock"))
    paths = {e.text for e in driver.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert {"/v1/move", "/v1/cube", "/v1/eval", "/v1/rollout", "/move", "/eval"} <= paths
    assert "/v1/jobs/rollout" in paths
    assert driver.find_element(By.CSS_SELECTOR, ".info .title").text.startswith("bgbot")
    urls = _loaded_urls(driver)
    assert any(u.endswith("/swagger-ui-bundle.js") for u in urls) and any(u.endswith("/openapi.json") for u in urls)
    assert [u for u in urls if not u.startswith(base + "/")] == []


def test_an_operation_opens_and_shows_its_schema(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/docs")
    paths = WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock-summary-path"))
    next(p for p in paths if p.text == "/v1/move").click()
    block = WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock.is-open"))
    assert "/v1/move" in block[0].text
    WebDriverWait(driver, 30).until(lambda d: "position" in block[0].text and "dice" in block[0].text)
    assert [u for u in _loaded_urls(driver) if not u.startswith(base + "/")] == []


def test_redoc_renders_offline(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/redoc")
    WebDriverWait(driver, 60).until(lambda d: "/v1/move" in d.find_element(By.TAG_NAME, "body").text)
    # ReDoc's own "API docs by Redocly" badge is an <img> from its CDN that fails harmlessly offline;
    # everything the page needs to work (scripts, styles, the schema) is the server's
    needed = driver.execute_script(
        "return performance.getEntriesByType('resource').filter(e => e.initiatorType !== 'img').map(e => e.name);"
    )
    assert any(u.endswith("/redoc.standalone.js") for u in needed)
    assert [u for u in needed if not u.startswith(base + "/")] == []
