"""The web board in Debian's headless Chromium, driven by Selenium against a real uvicorn on loopback.

Load the board, paste a position, pick dice, see the ranked moves, click the best one, and play a whole
game against bgbot to its end.  Screenshots go to ``$BGBOT_ARTIFACTS`` (default
``/tmp/bgbot-test-artifacts``): ``board.png``, the analysed position (committed as ``docs/board.png``), and
``game-over.png``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as ChromeService
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait
from serve_helpers import live_server

from bgbot.engine.api import Engine
from bgbot.rules.position import Position
from bgbot.serve.service import ServeConfig

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("BGBOT_ARTIFACTS", "/tmp/bgbot-test-artifacts"))
XGID_42 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:42:0:0:0:0:10"

if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):  # .ci/run installs both from Debian
    pytest.fail(
        f"the browser test needs {CHROMIUM} and {CHROMEDRIVER}: apt-get install chromium chromium-driver", pytrace=False
    )


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with live_server(Engine.load(), ServeConfig(ply=1, max_ply=2, threads=2), offset=25) as url:
        yield url


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--disable-extensions",
    ):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=ChromeService(executable_path=CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(60)
    try:
        yield d
    finally:
        d.quit()


def wait(d: webdriver.Chrome, seconds: float = 30) -> WebDriverWait:
    return WebDriverWait(d, seconds, poll_frequency=0.05)


def test_analyse_a_pasted_position_and_click_the_best_move(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/")
    wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board g[data-point]"))
    # the starting position: 15 checkers a side drawn, 2 of ours on the 24-point
    stacks = {
        int(g.get_attribute("data-point")): int(g.get_attribute("data-count"))
        for g in driver.find_elements(By.CSS_SELECTOR, "#board g[data-point]")
    }
    assert stacks[24] == 2 and stacks[6] == 5 and stacks[1] == -2 and sum(v for v in stacks.values() if v > 0) == 15

    box = driver.find_element(By.ID, "position")
    box.clear()
    box.send_keys(XGID_42)
    driver.find_element(By.ID, "load").click()
    wait(driver).until(lambda d: "4HPwATDgc/ABMA" in d.find_element(By.ID, "ids").text)
    assert Select(driver.find_element(By.ID, "die1")).first_selected_option.text == "4"  # the XGID's dice
    Select(driver.find_element(By.ID, "die1")).select_by_visible_text("6")
    Select(driver.find_element(By.ID, "die2")).select_by_visible_text("4")
    driver.find_element(By.ID, "analyse").click()
    rows = wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves tr.move-row"))
    wait(driver).until(lambda d: "No double" in d.find_element(By.ID, "cube").text)

    want = httpx.post(f"{base}/v1/move", json={"position": XGID_42, "dice": "64"}, timeout=60).json()["moves"]
    assert len(rows) == len(want)
    assert [r.get_attribute("data-move") for r in rows] == [m["move"] for m in want]
    assert rows[0].find_elements(By.TAG_NAME, "td")[1].text == want[0]["move"]

    rows[0].click()
    info = wait(driver).until(ec.visibility_of_element_located((By.ID, "result-info")))
    wait(driver).until(lambda d: want[0]["result"] in info.text)
    assert "selected" in rows[0].get_attribute("class")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "board.png"))
    assert (ARTIFACTS / "board.png").stat().st_size > 10_000


def test_set_a_position_up_by_dragging_checkers(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/")
    wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board g[data-point]"))
    driver.find_element(By.ID, "edit").click()

    def drag(point: int, target: str) -> None:
        checker = driver.find_element(By.CSS_SELECTOR, f"#board g[data-point='{point}'] circle")
        goal = driver.find_element(By.CSS_SELECTOR, target)
        ActionChains(driver).click_and_hold(checker).move_to_element(goal).release().perform()

    drag(6, "#board polygon[data-point='5']")  # 6/5: a blot on our 5-point
    want = Position.from_points({24: 2, 13: 5, 8: 3, 6: 4, 5: 1}, {24: 2, 13: 5, 8: 3, 6: 5}).gnubg_id()
    wait(driver).until(lambda d: d.find_element(By.ID, "position").get_attribute("value") == want)
    assert want in driver.find_element(By.ID, "ids").text
    drag(8, "#board polygon[data-point='12']")  # the opponent's midpoint: refused, nothing changes
    wait(driver).until(lambda d: "other side" in d.find_element(By.ID, "error").text)
    assert driver.find_element(By.ID, "position").get_attribute("value") == want
    driver.find_element(By.ID, "edit").click()


def test_play_a_whole_game_against_bgbot(driver: webdriver.Chrome, base: str) -> None:
    driver.get(base + "/")
    wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#board g[data-point]"))
    driver.find_element(By.ID, "newgame").click()
    status = driver.find_element(By.ID, "status")
    legal = driver.find_element(By.ID, "legal")
    turns, seen, doubled, took = 0, None, False, 0

    def next_choice(d: webdriver.Chrome) -> bool:
        return status.get_attribute("data-over") == "1" or (
            legal.get_attribute("data-turn") not in (None, seen)
            and bool(d.find_elements(By.CSS_SELECTOR, "#legal button"))
        )

    while True:
        wait(driver, 60).until(next_choice)
        if status.get_attribute("data-over") == "1":
            break
        assert driver.find_element(By.ID, "error").text == ""
        seen = legal.get_attribute("data-turn")
        kinds = {b.get_attribute("class"): b for b in driver.find_elements(By.CSS_SELECTOR, "#legal button")}
        if "game-double" in kinds and not doubled:
            kinds["game-double"].click()  # double once: at the start bgbot takes (or passes: the game ends)
            doubled = True
        elif "game-take" in kinds:
            kinds["game-take"].click()  # take every double of bgbot's, so that the game goes on
            took += 1
        elif "game-roll" in kinds:
            kinds["game-roll"].click()
        else:
            # our play: the generator's first legal move (a weak player: the game ends all the same)
            driver.find_elements(By.CSS_SELECTOR, "#legal button.legal-move")[0].click()
            turns += 1
        assert turns < 400, "the game does not end"
    assert status.text.startswith("Game over")
    assert status.get_attribute("data-winner") in ("you", "bgbot")
    cube = int(driver.find_element(By.ID, "game-cube").get_attribute("data-value"))
    assert doubled and "bgbot passes" not in status.text  # an early double of an even game is a take
    assert cube == 2 * 2**took  # our double, then one redouble per take of ours
    assert int(status.get_attribute("data-points")) in (cube, 2 * cube, 3 * cube)
    assert turns > 3
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "game-over.png"))
