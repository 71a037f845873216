"""The web board in Debian's headless Chromium, driven by Selenium against a real uvicorn on loopback.

Load the board, paste a position, pick dice, see the ranked moves, click the best one, and play a whole
3-point match against bgbot (1-ply) on the page, checking every state the page shows against bgbot's own
reading of the IDs it prints.  Screenshots go to ``$BGBOT_ARTIFACTS`` (default ``/tmp/bgbot-test-artifacts``):
``board.png`` (the analysed position), and of the match ``start.png``, ``cube.png`` (a turned cube),
``crawford.png`` (the Crawford game with a hint in MWC: the picture in ``docs/board.png``) and
``match-over.png``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait
from serve_helpers import headless_chromium, live_server, require_chromium

from bgbot.engine.api import Engine
from bgbot.formats.ids import parse_xgid
from bgbot.formats.parse import parse_position_and_state
from bgbot.rules.position import Position
from bgbot.serve.service import ServeConfig

ARTIFACTS = Path(os.environ.get("BGBOT_ARTIFACTS", "/tmp/bgbot-test-artifacts"))
XGID_42 = "XGID=-b----E-C---eE---c-e----B-:0:0:1:42:0:0:0:0:10"

require_chromium()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with live_server(Engine.load(), ServeConfig(ply=1, max_ply=3, threads=2), offset=25) as url:
        yield url


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    with headless_chromium() as d:
        yield d  # type: ignore[misc]


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


# ---- a whole match against bgbot ---------------------------------------------------------------------------

READ_STATE = """
const b = document.getElementById('board');
const stacks = {};
for (const g of b.querySelectorAll('g[data-point]')) stacks[g.dataset.point] = Number(g.dataset.count);
const buttons = [...document.querySelectorAll('#controls button')].filter((x) => !x.hidden).map((x) => x.id);
const face = document.getElementById('cube-face');
return {data: {...b.dataset}, stacks, buttons, turn: document.getElementById('controls').dataset.turn || '',
        error: document.getElementById('error').textContent, status: document.getElementById('status').textContent,
        cubeText: face ? face.textContent : null, crawfordFlag: !!document.getElementById('crawford-flag')};
"""


class MatchOnPage:
    """Drives the page through a 3-point match and checks each state it shows against bgbot's own computation."""

    LENGTH = 3

    def __init__(self, driver: webdriver.Chrome, base: str) -> None:
        self.d = driver
        self.base = base
        self.turn = ""
        self.scores: list[tuple[int, int]] = []
        self.seen = {"crawford": False, "cube_turned": False, "double_offered": False, "undo": False,
                     "hint_move": False, "hint_cube": False, "drag": 0, "click": 0}
        self.states = 0

    def read(self) -> dict:
        return self.d.execute_script(READ_STATE)

    def wait_change(self) -> dict:
        def changed(_: webdriver.Chrome) -> dict | bool:
            s = self.read()
            if s["error"]:
                raise AssertionError(f"the page shows an error: {s['error']}")
            return s if s["turn"] != self.turn else False

        s = wait(self.d, 60).until(changed)
        self.turn = s["turn"]
        return s

    def click(self, button_id: str) -> dict:
        self.d.find_element(By.ID, button_id).click()
        return self.check(self.wait_change())

    def server_state(self, game_id: str) -> dict:
        return httpx.get(f"{self.base}/v1/board/{game_id}", timeout=30).json()

    def check(self, s: dict) -> dict:
        """Every attribute the page shows agrees with bgbot's reading of the IDs it prints."""
        self.states += 1
        data = s["data"]
        assert data["mode"] == "play"
        pos, st = parse_position_and_state(data["positionId"])
        assert st is not None
        xpos, xst = parse_xgid(data["xgid"])
        assert xpos == pos and xst.on_roll == st.on_roll and xst.cube_value == st.cube_value
        assert xst.cube_owner == st.cube_owner and xst.score == st.score and xst.match_length == self.LENGTH
        assert sorted(xst.dice or ()) == sorted(st.dice or ()) and xst.crawford == st.crawford  # ID: high die first
        mine = pos if st.on_roll == 0 else pos.swap()  # the person (player 0) at the bottom
        phase = data["phase"]
        partial = phase == "move" and self.server_state(data["gameId"])["turn"]["hops"] > 0
        if not partial:
            drawn = {int(k): v for k, v in s["stacks"].items()}
            want = {i: n for i, n in enumerate(mine.board) if n}
            assert drawn == want, f"drawn {drawn} but the Position ID says {want}"
            assert data["pips"] == f"{mine.pips()[0]} {mine.pips()[1]}"
        score = tuple(int(x) for x in data["score"].split())
        assert score[2] == self.LENGTH
        you, bot = score[0], score[1]
        if phase not in ("game_over", "match_over"):
            assert (you, bot) == st.score
        assert not self.scores or (you >= self.scores[-1][0] and bot >= self.scores[-1][1])  # never goes back
        self.scores.append((you, bot))
        value, owner = data["cube"].split()
        assert int(value) == st.cube_value
        assert owner == {-1: "center", 0: "you", 1: "bgbot"}[st.cube_owner]
        assert sorted(map(int, data["dice"].split())) == sorted(st.dice or ())
        crawford = data["crawford"] == "1"
        assert crawford == st.crawford
        if crawford:  # the IDs carry the score the game is played at (a finished game's too)
            assert list(st.score).count(self.LENGTH - 1) == 1 and int(value) == 1 and owner == "center"
            assert s["cubeText"] == "C" and s["crawfordFlag"]
            self.seen["crawford"] = True
        actions = data["actions"].split()
        if phase == "roll":
            legal = not crawford and owner in ("center", "you") and you + int(value) < self.LENGTH
            assert ("double" in actions) == legal, f"double offered {actions} at {you}-{bot}, cube {data['cube']}"
            assert ("btn-double" in s["buttons"]) == legal
            self.seen["double_offered"] |= legal
        if phase in ("roll", "move"):
            assert "btn-resign-1" in s["buttons"]
        if int(value) > 1:
            self.seen["cube_turned"] = True
        return s

    def hop(self, s: dict, human_moves: int) -> dict:
        """Move one checker by the page's mouse input: a drag or a click on the checker."""
        gid = s["data"]["gameId"]
        t = self.server_state(gid)["turn"]
        target = t["targets"][0]
        src, dst = target["from"], target["to"]
        checker = self.d.find_element(By.CSS_SELECTOR, f"#board g[data-point='{src}'] circle")
        mine = [x for x in t["targets"] if x["from"] == src]
        click_pick = sorted(mine, key=lambda x: (x["steps"], x["to"]))[0]
        if (human_moves % 2 == 0 and click_pick["to"] == dst) or dst == 25:
            checker.click()
            self.seen["click"] += 1
        else:
            goal = (
                self.d.find_element(By.CSS_SELECTOR, "#board rect[data-slot='off']")
                if dst == 0
                else self.d.find_element(By.CSS_SELECTOR, f"#board polygon[data-point='{dst}']")
            )
            ActionChains(self.d).click_and_hold(checker).move_to_element(goal).release().perform()
            self.seen["drag"] += 1
        return self.check(self.wait_change())


def test_play_a_whole_3_point_match_against_bgbot(driver: webdriver.Chrome, base: str) -> None:
    # seeded dice (the page passes ?seed= on): bgbot and this test's player are deterministic, so the match is too
    driver.get(base + "/?seed=2024")
    wait(driver).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    Select(driver.find_element(By.ID, "match-length")).select_by_value("3")
    Select(driver.find_element(By.ID, "bot-ply")).select_by_value("1")
    Select(driver.find_element(By.ID, "hint-ply")).select_by_value("1")
    m = MatchOnPage(driver, base)
    s = m.click("newgame")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "start.png"))
    doubled = False
    human_moves = 0
    shots: set[str] = set()
    for _ in range(3000):
        data = s["data"]
        phase, actions = data["phase"], data["actions"].split()
        crawford_stage = m.seen["crawford"]  # the Crawford game and the games after it are played out
        you, bot, _ = (int(x) for x in data["score"].split())
        if phase == "match_over":
            break
        if phase == "game_over":
            s = m.click("btn-next")
        elif phase == "take":
            # pass while a pass cannot end the match (it brings the Crawford game nearer); else take
            s = m.click("btn-pass" if bot + int(data["cube"].split()[0]) < m.LENGTH else "btn-take")
        elif phase == "roll":
            if not m.seen["hint_cube"]:
                driver.find_element(By.ID, "btn-hint").click()
                wait(driver).until(lambda d: d.find_elements(By.ID, "hint-decision"))
                assert "%" in driver.find_element(By.ID, "hint").text  # match winning chances in a match
                m.seen["hint_cube"] = True
            if "double" in actions and not doubled and not crawford_stage:
                doubled = True
                s = m.click("btn-double")
                if "cube" not in shots and s["data"]["cube"].startswith("2 "):
                    driver.save_screenshot(str(ARTIFACTS / "cube.png"))
                    shots.add("cube")
            else:
                s = m.click("btn-roll")
        else:  # our move
            if not crawford_stage and "resign" in actions and bot + int(data["cube"].split()[0]) < m.LENGTH:
                # before the Crawford game: resign a single game while it cannot end the match
                before = data["game"]
                s = m.click("btn-resign-1")
                if s["data"]["game"] == before and s["data"]["phase"] == "move":
                    assert "declines" in driver.find_element(By.ID, "log").text
                else:
                    continue
            if crawford_stage and not m.seen["hint_move"]:
                driver.find_element(By.ID, "btn-hint").click()
                rows = wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hint-moves tr.move-row"))
                assert "%" in rows[0].find_elements(By.TAG_NAME, "td")[2].text  # equity with the MWC
                m.seen["hint_move"] = True
            if crawford_stage and "crawford" not in shots and s["data"]["crawford"] == "1":
                driver.save_screenshot(str(ARTIFACTS / "crawford.png"))
                shots.add("crawford")
            board_before = dict(s["stacks"])
            s = m.hop(s, human_moves)
            if not m.seen["undo"] and s["data"]["phase"] == "move" and "undo" in s["data"]["actions"].split():
                s = m.click("btn-undo")
                assert s["stacks"] == board_before  # the checker is back
                m.seen["undo"] = True
                s = m.hop(s, human_moves)
            while s["data"]["phase"] == "move":
                done = "commit" in s["data"]["actions"].split()
                s = m.click("btn-commit") if done else m.hop(s, human_moves)
            human_moves += 1
    else:
        raise AssertionError("the match does not end")
    driver.save_screenshot(str(ARTIFACTS / "match-over.png"))
    you, bot, _ = (int(x) for x in s["data"]["score"].split())
    assert max(you, bot) >= m.LENGTH and min(you, bot) < m.LENGTH
    assert driver.find_element(By.ID, "status").text.startswith("Match over")
    assert m.seen["crawford"], "no Crawford game was played"
    assert m.seen["double_offered"] and m.seen["undo"] and m.seen["hint_move"] and m.seen["hint_cube"]
    assert m.seen["drag"] > 0 and m.seen["click"] > 0
    assert m.states > 20

    # the record the page links to reads back with bgbot's reader: the same score and winner
    from bgbot.formats.records import parse_match

    for fmt in ("mat", "sgf"):
        link = driver.find_element(By.ID, f"rec-{fmt}").get_attribute("href")
        rec = parse_match(httpx.get(link, timeout=30).text, fmt, f"record.{fmt}")
        assert rec.length == 3 and rec.score == (you, bot) and rec.winner == (0 if you > bot else 1)
        assert any(g.crawford for g in rec.games)
