"""GNU Backgammon over its external-player socket, both ways, and game records gnubg imports.

These tests need ``/usr/games/gnubg`` (``.ci/run`` installs it).  Without it
they FAIL with the install hint: a skipped test would hide a broken set-up.
Every gnubg process started here is stopped before the test ends.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import make_tiny_checkpoint, read_jsonl

from bgbot.errors import EngineError
from bgbot.play.bots.gnubg import GnubgBot, find_gnubg
from bgbot.play.pit import PitConfig, PitReport, run_pit
from bgbot.play.table import Rules
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import parse_gnubg_position_id

pytestmark = pytest.mark.gnubg
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gnubg() -> str:
    try:
        return find_gnubg()
    except EngineError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny.pt", seed=11)


def _gnubg_children() -> list[int]:
    """Our own child processes running gnubg (from /proc)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == me and "gnubg" in comm:
            found.append(int(entry.name))
    return found


def _run_gnubg(gnubg: str, commands: list[str], timeout: float = 60) -> str:
    proc = subprocess.run([gnubg, "-t", "-q", "-r"], input="\n".join(commands) + "\n", text=True,
                          capture_output=True, timeout=timeout)
    return proc.stdout + proc.stderr


# ---------------------------------------------------------------------------
# the gnubg adapter against gnubg's own reference data
# ---------------------------------------------------------------------------


def test_gnubg_over_the_socket_plays_its_reference_choices(gnubg: str) -> None:
    bot = GnubgBot(0, cubeful=False, path=gnubg)  # the reference choices are cubeless 0-ply
    try:
        pid = bot.pid
        for r in read_jsonl("benchmark/checker.jsonl"):
            pos = parse_gnubg_position_id(r["position"])
            dice = (r["dice"][0], r["dice"][1])
            assert bot.move(pos, dice, MatchState(dice=dice)).gnubg_id() == r["gnubg0_choice"], r["position"]
    finally:
        bot.close()
    assert pid is not None and pid not in _gnubg_children()


def test_gnubg_double_and_take_answers_match_the_reference_cube_decisions(gnubg: str) -> None:
    """Double boards and take boards (was-doubled flag, "turn" on the doubler) read as gnubg means them."""
    bot = GnubgBot(0, cube_ply=2, path=gnubg)  # the reference decisions are 2-ply
    try:
        for r in read_jsonl("benchmark/cube.jsonl")[:80]:
            pos = parse_gnubg_position_id(r["position"])
            owner = -1 if r["cube"]["owner"] == "center" else 1
            state = MatchState(cube_value=r["cube"]["value"], cube_owner=owner, on_roll=1)
            assert bot.double(pos, state) == (r["decision"] in ("double_take", "double_pass")), r
            doubled = MatchState(cube_value=r["cube"]["value"], cube_owner=owner, on_roll=1, doubled=True)
            takes = r["decision"] in ("no_double", "double_take", "too_good_take")
            assert bot.take(pos, doubled) == takes, r
    finally:
        bot.close()


def test_gnubg_restarts_after_it_is_killed(gnubg: str) -> None:
    bot = GnubgBot(0, path=gnubg)
    try:
        first = bot.pid
        assert first is not None
        os.kill(first, 9)
        time.sleep(0.2)
        with pytest.raises(EngineError, match="gnubg"):
            bot.double(parse_gnubg_position_id("4HPwATDgc/ABMA"), MatchState())
        bot.reset()
        assert bot.pid not in (None, first)
        assert bot.double(parse_gnubg_position_id("4HPwATDgc/ABMA"), MatchState()) is False
    finally:
        bot.close()
    assert not _gnubg_children()


# ---------------------------------------------------------------------------
# a duel over the socket, with the cube, and its game records in gnubg
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def duel(gnubg: str, tiny_ckpt: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[PitReport, Path]:
    games = tmp_path_factory.mktemp("mat")
    report = run_pit(
        f"bgbot:checkpoint={tiny_ckpt},bearoff=0", f"gnubg:ply=0,path={gnubg}",
        PitConfig(games=4, seed=5, save_games=str(games), rules=Rules(cube=True)),
    )
    return report, games


def test_duel_bgbot_against_gnubg_with_the_cube_runs_to_the_end(duel: tuple[PitReport, Path]) -> None:
    report, _ = duel
    assert report.stopped is None and report.games == 4 and report.unfinished == 0
    assert report.forfeits == {"A": 0, "B": 0} and report.faults == []
    c = report.cube
    assert c["A"]["doubles"] + c["B"]["doubles"] > 0  # the cube was used
    assert c["A"]["doubles"] == c["B"]["takes"] + c["B"]["drops"]
    assert c["B"]["doubles"] == c["A"]["takes"] + c["A"]["drops"]
    assert report.decisions["B"] > 0 and report.ms_per_decision["B"] > 0
    assert not _gnubg_children()


def _moves(text: str) -> list[str]:
    """The game lines of a .mat file, spacing normalised (comments and blank lines dropped)."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip() and not line.startswith(";")]


def test_saved_games_import_into_gnubg_unchanged_and_analyse(gnubg: str, duel: tuple[PitReport, Path],
                                                             tmp_path: Path) -> None:
    _, games = duel
    files = sorted(games.glob("*.mat"))
    assert len(files) == 4
    for f in files:
        back = tmp_path / f.name
        out = _run_gnubg(gnubg, [
            "set jacoby off",  # gnubg scores imported money games by its own Jacoby setting; the pit had none
            "set analysis chequerplay evaluation plies 0",
            "set analysis cubedecision evaluation plies 0",
            f"import mat {f}",
            "analyse match",
            "show statistics match",
            f"export match mat {back}",
        ])
        assert _moves(back.read_text()) == _moves(f.read_text()), f.name
        wins = re.findall(r"Wins (\d+) point", f.read_text())
        assert len(wins) == 1
        results = re.search(r"Actual result\s+([-+]\d+\.\d+)\s+([-+]\d+\.\d+)", out)
        assert results, out[-2000:]
        assert sorted(abs(float(x)) for x in results.groups()) == [float(wins[0])] * 2


# ---------------------------------------------------------------------------
# reverse mode: gnubg drives bgbot
# ---------------------------------------------------------------------------


def test_gnubg_drives_bgbot_through_serve_external(gnubg: str, tiny_ckpt: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "serve-external", "--port", "0", "--once",
         "--bot", f"bgbot:checkpoint={tiny_ckpt},bearoff=0"],
        stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
        port = int(re.search(r"listening on \S+:(\d+)", first).group(1))  # type: ignore[union-attr]
        record = tmp_path / "reverse.mat"
        out = _run_gnubg(gnubg, [
            f"set player 1 external localhost:{port}",
            "set player 1 name bgbot",
            "set player 0 gnubg",
            "set player 0 chequerplay evaluation plies 0",
            "set player 0 cubedecision evaluation plies 0",
            "set seed 17",
            "new match 3",
            f"export match mat {record}",
        ], timeout=90)
        assert "has won the match" in out, out[-3000:]
        assert not re.search(r"illegal|Error|External connection closed", out), out[-3000:]
        server.wait(timeout=30)
        log = server.stderr.read()
        answers = int(re.search(r"closed after (\d+) answers", log).group(1))  # type: ignore[union-attr]
        assert answers > 10
        text = record.read_text()
        assert " 3 point match" in text and "Wins" in text
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_saved_matches_with_the_cube_import_into_gnubg_unchanged(gnubg: str, tmp_path: Path) -> None:
    games = tmp_path / "matches"
    report = run_pit("random:double=0.4,take=0.7", "pubeval",
                     PitConfig(games=4, match_length=5, seed=3, save_games=str(games)))
    assert report.matches is not None and report.matches["played"] == 4
    for f in sorted(games.glob("*.mat")):
        back = tmp_path / f"re-{f.name}"
        out = _run_gnubg(gnubg, [f"import mat {f}", "show score", f"export match mat {back}"])
        assert _moves(back.read_text()) == _moves(f.read_text()), f.name
        final = re.findall(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+) \(match to 5", out)
        assert final, out[-2000:]
        n_games, _, s0, _, s1 = final[-1]
        assert int(n_games) == f.read_text().count(" Game ") and max(int(s0), int(s1)) >= 5


# ---------------------------------------------------------------------------
# the score on gnubg's socket, both ways (asymmetric scores)
# ---------------------------------------------------------------------------

ASYMMETRIC = "cO+GBgC0fSIAIw"  # a contact position, from the side on roll


def _line_gnubg_sends(gnubg: str, external: int, score: tuple[int, int], dice: str = "4 3") -> str:
    """The first ``board:`` line gnubg sends its external player ``external`` (0/1), on roll in ASYMMETRIC."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(60)
    port = srv.getsockname()[1]
    got: list[str] = []

    def listen() -> None:
        conn, _ = srv.accept()
        with conn, conn.makefile("r") as f:
            got.append(f.readline())

    th = threading.Thread(target=listen, daemon=True)
    th.start()
    try:
        _run_gnubg(gnubg, [
            "set player 0 human", "set player 1 human", "new match 7", f"set score {score[0]} {score[1]}",
            f"set turn {external}", f"set board {ASYMMETRIC}", f"set dice {dice}",
            f"set player {external} external localhost:{port}", "play",
        ])
        th.join(30)
    finally:
        srv.close()
    assert got and got[0].startswith("board:"), got
    return got[0].strip()


@pytest.mark.parametrize("external", [0, 1])
def test_the_score_gnubg_sends_is_read_for_the_right_side(gnubg: str, external: int) -> None:
    from bgbot.formats.parse import parse_position_and_state

    line = _line_gnubg_sends(gnubg, external, (2, 5))  # gnubg's player 0 has 2, player 1 has 5
    pos, state = parse_position_and_state(line)
    assert state is not None and pos.gnubg_id() == ASYMMETRIC and state.dice in ((4, 3), (3, 4))
    mine, theirs = (2, 5) if external == 0 else (5, 2)
    assert (state.score[state.on_roll], state.score[1 - state.on_roll]) == (mine, theirs), line


def _does_bgbot_double(gnubg: str, bgbot_score: int, gnubg_score: int) -> bool:
    """gnubg drives bgbot's serve-external (the shipped model) as player 1, on roll before its roll, post-Crawford."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "serve-external", "--port", "0", "--once", "--bot", "bgbot"],
        stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert server.stderr is not None
        port = int(re.search(r"listening on \S+:(\d+)", server.stderr.readline()).group(1))  # type: ignore[union-attr]
        out = _run_gnubg(gnubg, [
            "set player 0 human", "set player 1 human", "new match 7",
            f"set score {gnubg_score} {bgbot_score}", "set crawford off", "set turn 1", f"set board {ASYMMETRIC}",
            "set player 1 name bgbot", f"set player 1 external localhost:{port}", "play",
        ], timeout=90)
        assert "post-Crawford" in out, out[-2000:]
        return "bgbot doubles" in out
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


def test_gnubg_drives_bgbot_at_a_lopsided_score_and_only_the_trailer_doubles(gnubg: str) -> None:
    # 7-point match, post-Crawford: the trailer doubles at once, the 1-away leader's cube is dead
    assert _does_bgbot_double(gnubg, bgbot_score=5, gnubg_score=6)
    assert not _does_bgbot_double(gnubg, bgbot_score=6, gnubg_score=5)


def test_bgbot_asks_gnubg_the_cube_at_1_2_and_2_1_and_the_trailer_doubles(gnubg: str) -> None:
    bot = GnubgBot(0, path=gnubg)
    try:
        start = parse_gnubg_position_id("4HPwATDgc/ABMA")
        for on_roll in (0, 1):  # bgbot writes the board addressed to player 0 (colour O) and to player 1 (X)
            trailer = (1, 2) if on_roll == 0 else (2, 1)
            leader = (trailer[1], trailer[0])
            assert bot.double(start, MatchState(match_length=3, score=trailer, on_roll=on_roll)), on_roll
            assert not bot.double(start, MatchState(match_length=3, score=leader, on_roll=on_roll)), on_roll
    finally:
        bot.close()
