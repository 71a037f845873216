"""Bots, the cubeful referee, duplicate-dice pits, faults, the external-player protocol and the pit CLI.

Everything here runs without gnubg (tests/test_gnubg.py has the gnubg ones):
pubeval, random bots, a tiny freshly initialised network and small engine
scripts speaking the external-player protocol over pipes.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_checkpoint, read_jsonl

from bgbot.cli.main import main
from bgbot.engine import executor
from bgbot.engine.search import parse_filters
from bgbot.errors import BgbotError, ConfigError, EngineError, IllegalMoveError, InvalidMoveError, JournalError
from bgbot.play import pit
from bgbot.play.bots import BaseBot, BgbotBot, PubevalBot, RandomBot, make_bot, parse_bot_spec
from bgbot.play.bots.fibsline import PipeEngineBot, engine_board, move_from_text
from bgbot.play.external import answer, read_board, serve_external
from bgbot.play.match import play_match
from bgbot.play.pit import PitConfig, PitReport, run_pit
from bgbot.play.table import Rules, play_game
from bgbot.rules.dice import opening_roll
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.movegen import successors
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position, parse_gnubg_position_id

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny.pt", seed=5)


# ---------------------------------------------------------------------------
# specs
# ---------------------------------------------------------------------------


def test_specs_parse_with_typed_options() -> None:
    s = parse_bot_spec("bgbot:checkpoint=/x/y.pt,ply=2,bearoff=off")
    assert (s.kind, s.get("checkpoint"), s.get("ply"), s.get("bearoff")) == ("bgbot", "/x/y.pt", 2, False)
    assert parse_bot_spec("gnubg:ply=0").get("ply") == 0
    assert parse_bot_spec("pubeval").kind == "pubeval"
    assert parse_bot_spec("random:seed=3,double=0.25").get("double") == 0.25
    assert parse_bot_spec("cmd:python3 engine.py --fast").get("argv") == ("python3", "engine.py", "--fast")
    assert parse_bot_spec("bgbot:ply=2,filter=5:0.08").get("filter") == "5:0.08"
    tcp = parse_bot_spec("tcp:localhost:4321")
    assert (tcp.get("host"), tcp.get("port")) == ("localhost", 4321)


@pytest.mark.parametrize(
    ("spec", "phrase"),
    [
        ("chess:ply=1", "unknown bot"),
        ("bgbot:depth=2", "unknown option 'depth'"),
        ("gnubg:ply=two", "not an int"),
        ("bgbot:ply", "not KEY=VALUE"),
        ("bgbot:ply=1,ply=2", "given twice"),
        ("bgbot:ply=2,filter=wide", "bad move filter 'wide'"),
        ("random:double=x", "not a float"),
        ("tcp:localhost", "HOST:PORT"),
        ("cmd:", "command line"),
        ("", "empty"),
    ],
)
def test_bad_specs_are_config_errors_quoting_the_spec(spec: str, phrase: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_bot_spec(spec)
    assert repr(spec) in str(err.value) and phrase in str(err.value)
    assert isinstance(err.value, BgbotError)


def test_bad_spec_on_the_command_line_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pit", "bgbot:plies=2", "pubeval", "--games", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'bgbot:plies=2'" in err[0] and "unknown option" in err[0]


# ---------------------------------------------------------------------------
# bots against the reference data
# ---------------------------------------------------------------------------


def test_pubeval_bot_plays_the_reference_choices_directly_and_over_the_protocol() -> None:
    bot = PubevalBot()
    for r in read_jsonl("pubeval/oracle.jsonl")[:60]:
        pos = parse_gnubg_position_id(r["position"])
        dice = (r["dice"][0], r["dice"][1])
        state = MatchState(dice=dice)
        assert bot.move(pos, dice, state).gnubg_id() == r["pubeval_best"]
        # the same decision through a FIBS board line and a move text, as an external engine gives it
        reply = answer(bot, engine_board(pos, state, dice=dice))
        assert move_from_text(pos, dice, reply).gnubg_id() == r["pubeval_best"], (r, reply)


def test_move_texts_are_read_in_every_notation_and_bad_ones_named() -> None:
    pos = Position.start()
    want = {m.result for m in legal_moves(pos, (3, 1)) if m.text == "8/5 6/5"}
    for text in ("8/5 6/5", "6/5 8/5", "8/5  6/5 ", "8/5 6/5(1)"):
        assert {move_from_text(pos, (3, 1), text)} == want
    assert move_from_text(Position.start(), (6, 6), "24/18(2) 13/7(2)") in successors(pos, (6, 6))
    with pytest.raises(InvalidMoveError) as err:
        move_from_text(pos, (3, 1), "hello")
    assert "'hello'" in str(err.value) and "4HPwATDgc/ABMA" in str(err.value)
    with pytest.raises(IllegalMoveError):
        move_from_text(pos, (3, 1), "24/18")


def test_a_fibs_board_round_trips_through_the_external_player_reader() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        pos = Position.start()
        for _ in range(int(rng.integers(1, 30))):
            options = successors(pos, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
            pos = options[int(rng.integers(len(options)))] if options else pos.swap()
            if pos.is_game_over():
                break
        if pos.is_game_over():
            continue
        for state in (MatchState(on_roll=1, cube_value=2, cube_owner=1), MatchState(match_length=7, score=(3, 5))):
            for kw in ({"dice": (5, 2)}, {}, {"doubled": True}):
                line = engine_board(pos, state, **kw)  # type: ignore[arg-type]
                back, st = read_board(line)
                assert back == pos and st.on_roll == state.on_roll
                assert (st.match_length, st.cube_value, st.cube_owner) == (
                    state.match_length,
                    state.cube_value,
                    state.cube_owner,
                )
                assert st.dice == kw.get("dice") and st.doubled == ("doubled" in kw)


def test_external_answers_moves_cube_and_take_and_never_raises() -> None:
    bot = PubevalBot()
    start = Position.start()
    move = answer(bot, engine_board(start, MatchState(dice=(3, 1)), dice=(3, 1)))
    assert move == "8/5 6/5"
    assert answer(bot, engine_board(start, MatchState())) == "roll"  # pubeval never doubles
    assert answer(bot, engine_board(start, MatchState(), doubled=True)) == "take"
    assert answer(bot, "\x00version").startswith("bgbot")
    assert answer(bot, "exit") is None
    assert answer(bot, "board:garbage").startswith("Error:")
    assert answer(bot, "hello").startswith("Error:")
    # a closed board: the bar checker cannot enter, so the move is the empty line
    closed = Position.from_points({25: 1, 6: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 6: 3})
    assert answer(bot, engine_board(closed, MatchState(dice=(6, 6)), dice=(6, 6))) == ""


def test_bgbot_bot_cube_actions_follow_its_engine(tiny_ckpt: Path) -> None:
    bot = make_bot(f"bgbot:checkpoint={tiny_ckpt},bearoff=0")
    assert isinstance(bot, BgbotBot)
    pos = Position.start()
    for state in (MatchState(), MatchState(match_length=5, score=(1, 3)), MatchState(cube_value=2, cube_owner=0)):
        d = bot.engine.cube_action(
            pos,
            CubeState(
                cube=state.cube_value, owner=state.cube_owner_relative(), match=state.match_length, score=state.score
            ),
        )
        assert d == bot.engine.cube_action(pos, state)  # a MatchState is read from its side on roll
        assert bot.double(pos, state) == d.doubles
        taker = MatchState(
            match_length=state.match_length,
            score=state.score,
            cube_value=state.cube_value,
            cube_owner=state.cube_owner,
            doubled=True,
        )
        assert bot.take(pos, taker) == d.takes


# ---------------------------------------------------------------------------
# the referee: dice, cube, rules, faults
# ---------------------------------------------------------------------------


def _dice_by_turn(res: object) -> list[tuple[int, int]]:
    return [a.dice for a in res.actions if a.kind == "move"]  # type: ignore[attr-defined]


def test_duplicate_dice_give_each_seat_the_same_rolls() -> None:
    a, b = PubevalBot(), RandomBot(1)
    for seed in range(6):
        g1 = play_game((a, b), np.random.default_rng(seed), Rules(cube=False))
        g2 = play_game((b, a), np.random.default_rng(seed), Rules(cube=False))
        assert (g1.first_player, g1.opening_dice) == (g2.first_player, g2.opening_dice)
        d1, d2 = _dice_by_turn(g1), _dice_by_turn(g2)
        n = min(len(d1), len(d2))
        assert d1[:n] == d2[:n] and n > 10


def test_dice_do_not_depend_on_cube_decisions() -> None:
    calm = (RandomBot(1), RandomBot(2))
    wild = (RandomBot(1, double=0.5, take=1.0), RandomBot(2, double=0.5, take=1.0))
    g1 = play_game(calm, np.random.default_rng(9), Rules())
    g2 = play_game(wild, np.random.default_rng(9), Rules())
    d1, d2 = _dice_by_turn(g1), _dice_by_turn(g2)
    n = min(len(d1), len(d2))
    assert g2.doubles != (0, 0) and n > 10 and d1[:n] == d2[:n]


def test_cube_actions_are_counted_and_scored() -> None:
    bots = (RandomBot(3, double=0.3, take=0.6), RandomBot(4, double=0.3, take=0.6))
    drops = takes = 0
    for seed in range(30):
        g = play_game(bots, np.random.default_rng(seed), Rules())
        assert sum(g.doubles) == sum(g.takes) + sum(g.drops)
        assert g.cube == 2 ** sum(g.takes)
        if g.how == "dropped":
            drops += 1
            assert g.points == g.cube and g.kind == 0
            assert g.actions[-1].kind == "drop" and g.actions[-2].kind == "double"
            assert g.winner == g.actions[-2].player
        else:
            assert g.how == "played" and g.points == g.cube * g.kind
        takes += sum(g.takes)
        # a double is offered only by a player who may: centred cube or its own
        owner = -1
        for act in g.actions:
            if act.kind == "double":
                assert owner in (-1, act.player)
            if act.kind == "take":
                owner = act.player
    assert drops and takes


def test_jacoby_counts_gammons_single_until_a_double_is_taken() -> None:
    never = (RandomBot(1), RandomBot(2))  # random bots win many gammons and never double
    kinds = set()
    for seed in range(20):
        g = play_game(never, np.random.default_rng(seed), Rules(jacoby=True))
        kinds.add(g.kind)
        assert g.points == 1
    assert kinds & {2, 3}
    bots = (RandomBot(1, double=1.0), RandomBot(2, double=1.0))
    g = next(g for s in range(40) if (g := play_game(bots, np.random.default_rng(s), Rules(jacoby=True))).kind > 1)
    assert g.points == g.kind * g.cube and g.cube > 1


def test_automatic_doubles_follow_the_opening_ties() -> None:
    seed = next(s for s in range(500) if opening_roll(np.random.default_rng(s))[2] >= 2)
    ties = opening_roll(np.random.default_rng(seed))[2]
    bots = (RandomBot(1), RandomBot(2))
    for limit, cube in ((0, 1), (1, 2), (6, 2**ties)):
        g = play_game(bots, np.random.default_rng(seed), Rules(auto_doubles=limit))
        assert g.opening_ties == ties and g.cube == cube and g.cube_owner == -1
    assert play_game(bots, np.random.default_rng(seed), Rules(cube=False, auto_doubles=3)).cube == 1


def test_a_match_has_one_crawford_game_without_cube_and_ends_at_the_length() -> None:
    bots = (RandomBot(1, double=1.0, take=1.0), PubevalBot())
    for seed in range(4):
        m = play_match(bots, 5, lambda g, s=seed: np.random.default_rng([s, g]), Rules())
        score = [0, 0]
        crawford_seen = 0
        for g in m.games:
            one_away = 4 in score
            assert g.crawford == (one_away and crawford_seen == 0)
            crawford_seen += g.crawford
            if g.crawford:
                assert g.doubles == (0, 0)
            score[g.winner] += g.points  # type: ignore[index]
        assert tuple(score) == m.score and max(score) >= 5 and m.winner == int(score[1] >= 5)
    with pytest.raises(ConfigError):
        play_match(bots, 0, lambda g: np.random.default_rng(g))


class _Cheat(BaseBot):
    """Answers its own position (not a legal result) after ``after`` moves, or raises EngineError."""

    def __init__(self, after: int, how: str) -> None:
        self.after, self.how, self.n = after, how, 0
        self.name = f"cheat-{how}"
        self.inner = PubevalBot()

    def move(self, pos: Position, dice: tuple[int, int], state: MatchState) -> Position:
        self.n += 1
        if self.n > self.after:
            if self.how == "raise":
                raise EngineError("engine exploded")
            return pos
        return self.inner.move(pos, dice, state)


@pytest.mark.parametrize(("how", "phrase"), [("illegal", "not one of the"), ("raise", "engine exploded")])
def test_a_fault_forfeits_the_game_with_position_dice_and_message(how: str, phrase: str) -> None:
    cheat = _Cheat(5, how)
    g = play_game((cheat, PubevalBot()), np.random.default_rng(2), Rules())
    assert g.how == "forfeit" and g.winner == 1 and g.points == 3 * g.cube
    f = g.fault
    assert f is not None and f.player == 0 and f.asked == "move" and phrase in f.message
    last = g.actions[-1]
    assert last.player == 1  # the faulty move is not recorded
    assert f.position == parse_gnubg_position_id(f.position).gnubg_id() and f.dice is not None
    assert f.position in f.describe() and f"{f.dice[0]}{f.dice[1]}" in f.describe()


# ---------------------------------------------------------------------------
# the pit runner
# ---------------------------------------------------------------------------


def test_a_bot_against_itself_with_duplicate_dice_is_exactly_even() -> None:
    r = run_pit("pubeval", "pubeval", PitConfig(games=12, seed=4, rules=Rules(cube=False)))
    assert (r.games, r.pairs, r.ppg, r.ppg_se) == (12, 6, 0.0, 0.0)
    assert r.win_rate == 0.5 and r.gammon_rate == r.lose_gammon_rate


def test_pit_report_is_consistent_deterministic_and_the_same_with_two_workers(tmp_path: Path) -> None:
    cfg = PitConfig(games=16, seed=7, rules=Rules(cube=True))
    r1 = run_pit("pubeval", "random:double=0.2,take=0.5", cfg)
    assert r1.games == 16 and r1.pairs == 8 and r1.forfeits == {"A": 0, "B": 0} and not r1.stopped
    assert r1.ppg > 1.0 and r1.win_rate > 0.8  # pubeval crushes random play
    assert r1.cube["B"]["doubles"] == r1.cube["A"]["takes"] + r1.cube["A"]["drops"] > 0
    assert r1.cube["A"]["doubles"] == 0  # pubeval never doubles
    assert 0 <= r1.backgammon_rate <= r1.gammon_rate <= r1.win_rate
    assert r1.ms_per_decision["A"] > 0 and r1.decisions["A"] > 16
    r2 = run_pit(
        "pubeval", "random:double=0.2,take=0.5", PitConfig(games=16, seed=7, workers=2, rules=Rules(cube=True))
    )
    assert (r2.ppg, r2.ppg_se, r2.win_rate, r2.cube) == (r1.ppg, r1.ppg_se, r1.win_rate, r1.cube)
    r3 = run_pit("pubeval", "random:double=0.2,take=0.5", PitConfig(games=16, seed=8, rules=Rules(cube=True)))
    assert (r3.ppg, r3.mean_turns, r3.decisions) != (r1.ppg, r1.mean_turns, r1.decisions)
    text = r1.format()
    assert "A points per game" in text and "duplicate pairs" in text and "cube B: doubled" in text


def test_a_bgbot_filter_reaches_its_engine_in_process_and_in_pit_workers(
    tiny_ckpt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = make_bot(f"bgbot:checkpoint={tiny_ckpt},ply=2,filter=tiny")
    assert bot.engine.filters == parse_filters("tiny")  # type: ignore[attr-defined]
    spec = parse_bot_spec(f"bgbot:checkpoint={tiny_ckpt},ply=2,filter=3:0.05,bearoff=0")
    bot_info, blob = pit._ship(spec)
    assert blob is not None
    monkeypatch.setitem(executor._SHIPPED, blob.hash, blob)  # as a pit worker holds the networks shipped to it
    built = pit._build_bot(bot_info, spec, jacoby=False, seed=1, cube=False)
    assert built.engine.filters == parse_filters("3:0.05")  # type: ignore[attr-defined]
    r = run_pit(spec.text, "pubeval", PitConfig(games=2, seed=3, rules=Rules(cube=False)))
    assert r.games == 2


def test_match_mode_reports_match_wins(tiny_ckpt: Path) -> None:
    r = run_pit(
        f"bgbot:checkpoint={tiny_ckpt},bearoff=0", "random:double=0.3", PitConfig(games=4, match_length=3, seed=1)
    )
    m = r.matches
    assert m is not None and m["played"] == 4 and 0 <= m["won_by_a"] <= 4
    assert m["points_a"] + m["points_b"] >= 3 * 4 and r.games >= 4
    with pytest.raises(ConfigError):
        PitConfig(match_length=5, rules=Rules(jacoby=True))


def test_cli_pit_writes_json_and_mat_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, games = tmp_path / "res.json", tmp_path / "games"
    rc = main(
        [
            "pit",
            "pubeval",
            "random",
            "--games",
            "4",
            "--seed",
            "2",
            "--no-cube",
            "--quiet",
            "--out",
            str(out),
            "--save-games",
            str(games),
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["games"] == 4 and data["a"] == "pubeval" and data["mode"] == "money, cubeless"
    assert "A points per game" in capsys.readouterr().out
    files = sorted(p.name for p in games.iterdir())
    assert files == ["pair00000-1.mat", "pair00000-2.mat", "pair00001-1.mat", "pair00001-2.mat"]
    text = (games / "pair00000-1.mat").read_text()
    assert " 0 point match" in text and " Game 1" in text and "pubeval : 0" in text and "Wins" in text


# ---------------------------------------------------------------------------
# engines over pipes: the protocol, faults, restarts
# ---------------------------------------------------------------------------

_ENGINE = textwrap.dedent(
    """
    import os, sys
    from bgbot.play.bots import PubevalBot
    from bgbot.play.external import answer

    mode, after = sys.argv[1], int(sys.argv[2])
    bot = PubevalBot()
    n = 0
    for line in sys.stdin:
        n += 1
        if n > after:
            if mode == "garbage":
                print("hello world", flush=True)
                continue
            if mode == "illegal":
                print("24/1", flush=True)
                continue
            if mode == "offboard":  # points that do not exist
                print("99/98", flush=True)
                continue
            if mode == "die":
                sys.exit(3)
            if mode == "vanish":  # die, and make the engine impossible to restart
                os.remove(sys.argv[3])
                sys.exit(3)
        print(answer(bot, line), flush=True)
    """
)


def _engine(tmp_path: Path, mode: str, after: int) -> str:
    script = tmp_path / "engine.py"
    script.write_text(_ENGINE)
    launcher = tmp_path / f"engine-{mode}.sh"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} {script} {mode} {after} {launcher}\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return f"cmd:{launcher}"


def test_an_engine_over_pipes_plays_whole_games_without_faults(tmp_path: Path) -> None:
    r = run_pit(_engine(tmp_path, "none", 0), "pubeval", PitConfig(games=2, seed=3, rules=Rules(cube=True)))
    assert r.games == 2 and r.forfeits == {"A": 0, "B": 0} and r.ppg == 0.0  # pubeval either way


@pytest.mark.parametrize(
    ("mode", "phrase"),
    [("garbage", "'hello world'"), ("illegal", "'24/1'"), ("offboard", "'99/98'"), ("die", "closed the connection")],
)
def test_faulty_engines_forfeit_and_the_duel_goes_on(tmp_path: Path, mode: str, phrase: str) -> None:
    r = run_pit(_engine(tmp_path, mode, 25), "pubeval", PitConfig(games=2, seed=1, rules=Rules(cube=False)))
    assert r.games == 2 and not r.stopped  # every game was played
    assert r.forfeits["A"] >= 1 and r.forfeits["B"] == 0
    assert all(phrase in f and "forfeits (asked to move in" in f and ", dice " in f for f in r.faults)


def test_an_engine_that_cannot_restart_stops_the_duel_keeping_results(tmp_path: Path) -> None:
    r = run_pit(_engine(tmp_path, "vanish", 40), "pubeval", PitConfig(games=8, seed=1, rules=Rules(cube=False)))
    assert r.stopped is not None and "could not be restarted" in r.stopped
    assert 1 <= r.games < 8 and r.forfeits["A"] == 1
    assert "STOPPED" in r.format()


def test_an_engine_that_does_not_answer_times_out(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text("import sys, time\nfor line in sys.stdin:\n    time.sleep(30)\n")
    bot = PipeEngineBot([sys.executable, str(script)], timeout=0.5)
    try:
        with pytest.raises(EngineError, match=r"did not answer within 0\.5 s"):
            bot.move(Position.start(), (3, 1), MatchState(dice=(3, 1)))
    finally:
        bot.close()
    with pytest.raises(EngineError, match="cannot start engine"):
        PipeEngineBot([str(tmp_path / "missing-engine")])


def test_serve_external_answers_over_tcp_and_stdio(tmp_path: Path) -> None:
    import socket
    import subprocess

    port, th = _serve_pubeval_once()
    with socket.create_connection(("localhost", port), timeout=10) as s, s.makefile("rw") as f:
        f.write(engine_board(Position.start(), MatchState(dice=(3, 1)), dice=(3, 1)) + "\n\x00")
        f.flush()
        assert f.readline().strip() == "8/5 6/5"
        f.write("exit\n")
        f.flush()
    th.join(10)
    assert not th.is_alive()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "serve-external", "--stdio", "--bot", "pubeval"],
        input=engine_board(Position.start(), MatchState(dice=(6, 5)), dice=(6, 5)) + "\nversion\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == "24/13"


def test_a_missing_gnubg_is_a_clear_error_with_the_install_hint() -> None:
    with pytest.raises(EngineError) as err:
        make_bot("gnubg:ply=0,path=/nonexistent/gnubg")
    assert "apt-get install -y gnubg" in str(err.value) and "/nonexistent/gnubg" in str(err.value)
    with pytest.raises(EngineError, match="apt-get install -y gnubg"):
        run_pit("gnubg:path=/nonexistent/gnubg", "pubeval", PitConfig(games=2))


def test_a_tcp_engine_is_pitted_over_its_socket() -> None:
    port, th = _serve_pubeval_once()
    r = run_pit(f"tcp:localhost:{port}", "pubeval", PitConfig(games=2, seed=6, rules=Rules(cube=True)))
    assert r.games == 2 and r.forfeits == {"A": 0, "B": 0} and r.ppg == 0.0  # pubeval on both sides
    th.join(10)
    assert not th.is_alive()  # the pit closed its connection at the end


def _serve_pubeval_once() -> tuple[int, threading.Thread]:
    """Start ``serve_external`` for pubeval on a free port in a thread (one connection): the port and thread."""
    ports: list[int] = []
    ready = threading.Event()
    th = threading.Thread(
        target=serve_external,
        args=(PubevalBot(), 0),
        kwargs={"once": True, "ready": lambda p: (ports.append(p), ready.set())},
        daemon=True,
    )
    th.start()
    assert ready.wait(10)
    return ports[0], th


def _serve_in_thread(**kwargs: object) -> int:
    ports: list[int] = []
    ready = threading.Event()
    threading.Thread(
        target=serve_external,
        args=(PubevalBot(), 0),
        kwargs={"ready": lambda p: (ports.append(p), ready.set()), **kwargs},
        daemon=True,
    ).start()
    assert ready.wait(10)
    return ports[0]


def test_serve_external_answers_others_while_one_client_idles_and_drops_floods() -> None:
    import socket
    import time

    port = _serve_in_thread(max_clients=3)
    board = engine_board(Position.start(), MatchState(dice=(3, 1)), dice=(3, 1)) + "\n"
    with socket.create_connection(("localhost", port), timeout=10) as idle:
        idle.sendall(b"board:")  # half a line, then silence
        t0 = time.perf_counter()
        with socket.create_connection(("localhost", port), timeout=10) as s, s.makefile("rw") as f:
            f.write(board)
            f.flush()
            assert f.readline().strip() == "8/5 6/5"
        assert time.perf_counter() - t0 < 5  # not held up by the idle client
        with socket.create_connection(("localhost", port), timeout=10) as flood, flood.makefile("rb") as f:
            flood.sendall(b"x" * 100_000)
            assert f.readline().startswith(b"Error: a line longer")
            assert f.readline() == b""  # and the connection is closed
        # with 3 allowed, the idle one and two more are served; the fourth is told the server is busy
        with (
            socket.create_connection(("localhost", port), timeout=10) as a,
            socket.create_connection(("localhost", port), timeout=10) as b,
            socket.create_connection(("localhost", port), timeout=10) as c,
        ):
            replies = []
            for conn in (a, b, c):
                conn.sendall(board.encode())
                conn.settimeout(10)
                replies.append(conn.makefile("rb").readline())
            assert sum(r.startswith(b"Error: busy") for r in replies) == 1
            assert sum(r.strip() == b"8/5 6/5" for r in replies) == 2


def test_serve_external_closes_a_silent_connection() -> None:
    import socket

    port = _serve_in_thread(idle_timeout=0.5)
    with socket.create_connection(("localhost", port), timeout=10) as s:
        s.settimeout(10)
        assert s.recv(100) == b""  # closed by the server after half a second of silence


def test_serve_external_wants_a_named_host() -> None:
    with pytest.raises(EngineError, match=r"0\.0\.0\.0"):
        serve_external(PubevalBot(), 0, host="")


def test_sigterm_still_writes_the_pit_report(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bgbot.cli",
            "pit",
            "pubeval",
            "random",
            "--games",
            "1000000",
            "--no-cube",
            "--quiet",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stderr is not None
        proc.stderr.readline()  # the "pit: A = ..." line: the workers are starting
        deadline = time.monotonic() + 180  # a loaded machine takes a while to start the workers
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            with contextlib.suppress(OSError, ValueError):  # not written yet, or being replaced
                if json.loads(out.read_text())["games"] > 0:
                    break
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads(out.read_text())
    assert report["games"] > 0 and report["stopped"].startswith("interrupted")


# ---------------------------------------------------------------------------
# the pit on the executor: tasks, workers, Ray, the journal
# ---------------------------------------------------------------------------


def _records(folder: Path) -> dict[str, str]:
    """The game records of a pit, without the date line (records of two runs on other days still compare)."""
    return {
        p.name: "\n".join(line for line in p.read_text().splitlines() if "EventDate" not in line)
        for p in sorted(folder.iterdir())
    }


def _figures(r: PitReport) -> tuple[object, ...]:
    return (
        r.games,
        r.pairs,
        r.ppg,
        r.ppg_se,
        r.win_rate,
        r.gammon_rate,
        r.cube,
        r.mean_turns,
        r.decisions,
        r.forfeits,
        r.matches,
    )


def test_the_same_games_on_one_or_two_workers_whatever_the_cut(tmp_path: Path) -> None:
    rules = Rules(cube=True)
    runs = {}
    for workers, per in ((1, 2), (2, 1), (2, 3)):
        save = tmp_path / f"w{workers}-p{per}"
        cfg = PitConfig(games=12, seed=3, rules=rules, workers=workers, pairs_per_task=per, save_games=str(save))
        r = run_pit("pubeval", "random:double=0.3,take=0.5", cfg)
        assert r.workers == workers and r.executor == "local" and not r.stopped
        runs[(workers, per)] = (_figures(r), _records(save))
    first = runs[(1, 2)]
    assert len(first[1]) == 12 and first[0][0] == 12
    assert all(run == first for run in runs.values())


def _counting_engine(tmp_path: Path) -> tuple[str, Path]:
    """A pubeval engine over pipes that writes its pid to a log when it starts: the spec and the log."""
    log = tmp_path / "starts.log"
    script = tmp_path / "counting.py"
    script.write_text(
        textwrap.dedent(
            f"""
        import os, sys
        from bgbot.play.bots import PubevalBot
        from bgbot.play.external import answer
        with open({str(log)!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        bot = PubevalBot()
        for line in sys.stdin:
            print(answer(bot, line), flush=True)
        """
        )
    )
    launcher = tmp_path / "counting.sh"
    launcher.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} {script}\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return f"cmd:{launcher}", log


def test_a_worker_keeps_its_engine_from_task_to_task(tmp_path: Path) -> None:
    # as gnubg: one engine process per worker for the whole duel, not one per task
    spec, log = _counting_engine(tmp_path)
    r = run_pit(spec, "pubeval", PitConfig(games=8, seed=2, rules=Rules(cube=False), pairs_per_task=1))
    assert r.games == 8 and r.forfeits == {"A": 0, "B": 0}  # 4 tasks
    assert len(log.read_text().split()) == 1
    log.unlink()
    r2 = run_pit(spec, "pubeval", PitConfig(games=8, seed=2, rules=Rules(cube=False), pairs_per_task=1, workers=2))
    assert _figures(r2) == _figures(r)
    assert 1 <= len(set(log.read_text().split())) <= 2  # one per worker (a worker may get every task)


def test_a_bgbot_checkpoint_travels_by_hash_to_the_workers(tiny_ckpt: Path, tmp_path: Path) -> None:
    # a torch checkpoint: loaded (and made numpy) here, shipped to the workers, which need no file
    spec = f"bgbot:checkpoint={tiny_ckpt},bearoff=0"
    cfg = PitConfig(games=4, seed=5, rules=Rules(cube=True), pairs_per_task=1, save_games=str(tmp_path / "one"))
    one = run_pit(spec, "pubeval", cfg)
    two = run_pit(
        spec,
        "pubeval",
        PitConfig(
            games=4, seed=5, rules=Rules(cube=True), pairs_per_task=1, workers=2, save_games=str(tmp_path / "two")
        ),
    )
    assert _figures(one) == _figures(two) and one.decisions["A"] > 0
    assert _records(tmp_path / "one") == _records(tmp_path / "two")


def test_a_local_ray_cluster_plays_the_same_games(tiny_ckpt: Path, tmp_path: Path) -> None:
    import ray

    spec = f"bgbot:checkpoint={tiny_ckpt},bearoff=0"
    rules = Rules(cube=True)
    local = run_pit(spec, "random:double=0.2", PitConfig(games=6, seed=9, rules=rules, save_games=str(tmp_path / "l")))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_pit(
            spec,
            "random:double=0.2",
            PitConfig(
                games=6,
                seed=9,
                rules=rules,
                executor="ray",
                workers=2,
                pairs_per_task=1,
                save_games=str(tmp_path / "r"),
            ),
        )
    finally:
        ray.shutdown()
    assert on_ray.executor == "ray" and not on_ray.stopped
    assert _figures(on_ray) == _figures(local)
    assert _records(tmp_path / "r") == _records(tmp_path / "l")


def test_an_interrupted_pit_resumes_from_its_finished_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bgbot.play.pit as pit

    cfg = PitConfig(games=12, seed=6, rules=Rules(cube=True), resume=str(tmp_path / "j"))
    fresh = run_pit("pubeval", "random:double=0.3", PitConfig(games=12, seed=6, rules=Rules(cube=True)))
    real = pit.pit_task
    played: list[list[int]] = []

    def interrupted_at_pair_4(evaluator: object, payload: dict[str, object], seed: int) -> dict[str, object]:
        played.append(list(payload["pairs"]))  # type: ignore[call-overload]
        if payload["pairs"] == [4, 6]:
            raise KeyboardInterrupt
        return real(evaluator, payload, seed)

    monkeypatch.setattr(pit, "pit_task", interrupted_at_pair_4)  # the executor finds tasks by name
    r1 = run_pit("pubeval", "random:double=0.3", cfg)
    assert r1.stopped is not None and r1.stopped.startswith("interrupted") and r1.games == 8
    assert len(list((tmp_path / "j").glob("task-*.json"))) == 2
    played.clear()
    monkeypatch.setattr(pit, "pit_task", lambda *a: (played.append(list(a[1]["pairs"])), real(*a))[1])
    r2 = run_pit("pubeval", "random:double=0.3", cfg)
    assert played == [[4, 6]]  # the finished tasks were not played again
    assert r2.resumed_games == 8 and not r2.stopped and "taken from the results folder" in r2.format()
    assert _figures(r2) == _figures(fresh)
    with pytest.raises(JournalError, match="another run"):  # another seed: refused, not mixed in
        run_pit("pubeval", "random:double=0.3", PitConfig(games=12, seed=7, resume=str(tmp_path / "j")))


def test_a_killed_pit_resumes_on_the_command_line(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    folder, out = tmp_path / "j", tmp_path / "r.json"
    cmd = [
        sys.executable,
        "-m",
        "bgbot.cli",
        "pit",
        "pubeval",
        "random",
        "--games",
        "200",
        "--seed",
        "4",
        "--no-cube",
        "--quiet",
        "--workers",
        "1",
        "--pairs-per-task",
        "1",
        "--resume",
        str(folder),
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        deadline = time.monotonic() + 120
        while len(list(folder.glob("task-*.json"))) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # killed outright: no report, no clean-up
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept = len(list(folder.glob("task-*.json")))
    assert kept >= 3
    assert subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=600).returncode == 0
    report = json.loads(out.read_text())
    assert report["games"] == 200 and report["resumed_games"] == 2 * kept and report["stopped"] is None
    fresh = run_pit("pubeval", "random", PitConfig(games=200, seed=4, rules=Rules(cube=False)))
    assert (report["ppg"], report["ppg_se"], report["decisions"]) == (fresh.ppg, fresh.ppg_se, fresh.decisions)


def test_a_task_stopped_part_way_is_not_kept_for_a_resume(tmp_path: Path) -> None:
    cfg = PitConfig(games=8, seed=1, rules=Rules(cube=False), pairs_per_task=1, resume=str(tmp_path / "j"))
    r = run_pit(_engine(tmp_path, "vanish", 40), "pubeval", cfg)
    assert r.stopped is not None and "could not be restarted" in r.stopped
    kept = [json.loads(p.read_text())["result"] for p in (tmp_path / "j").glob("task-*.json")]
    assert all(k["fatal"] is None for k in kept) and 2 * len(kept) < r.games  # the stopped task's legs count


@pytest.mark.parametrize(
    ("args", "phrase"),
    [(["--executor", "spark"], "'spark'"), (["--executor", "127.0.0.1:1"], "cannot reach the Ray cluster")],
)
def test_a_bad_executor_exits_2_with_one_line(args: list[str], phrase: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pit", "pubeval", "random", "--games", "2", "--quiet", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert phrase in err[-1] and not any("Traceback" in line for line in err)


def test_progress_ppg_is_the_mean_of_finished_games_as_legs_arrive_and_are_replaced() -> None:
    """The progress bar's running ppg (kept incrementally, O(1) a leg) equals the report's mean."""

    def game(pair: int, leg: int, points: int, how: str = "played") -> pit.GameSummary:
        return pit.GameSummary(pair=pair, leg=leg, game=0, points_a=points, kind=abs(points), how=how, cube=1,
                               turns=20, a_doubles=0, a_takes=0, a_drops=0, b_doubles=0, b_takes=0, b_drops=0,
                               a_decisions=10, a_seconds=0.0, b_decisions=10, b_seconds=0.0)

    tally = pit._Tally(match=False)
    assert tally.ppg() == 0.0
    tally.add(pit.LegSummary(pair=0, leg=0, games=(game(0, 0, 2),)))
    tally.add(pit.LegSummary(pair=0, leg=1, games=(game(0, 1, -1), game(0, 1, 3, how="unfinished"))))
    tally.add(pit.LegSummary(pair=1, leg=0, games=(game(1, 0, 3),)))
    assert tally.ppg() == pytest.approx((2 - 1 + 3) / 3)
    tally.add(pit.LegSummary(pair=1, leg=0, games=(game(1, 0, -2),)))  # a leg played again replaces the first
    assert tally.ppg() == pytest.approx((2 - 1 - 2) / 3)
    report = PitReport(a="A", b="B", mode="money", seed=0, workers=1)
    tally.fill(report)
    assert report.ppg == pytest.approx(tally.ppg()) and report.games == 3 and report.unfinished == 1
