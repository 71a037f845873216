"""bgbot ubgi: the UBGI engine protocol, line by line in process, as a child process, and through the pit."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from bgbot.engine.api import Engine
from bgbot.play.bots import parse_bot_spec
from bgbot.play.bots.ubgi import UbgiEngineBot, context_lines
from bgbot.play.pit import PitConfig, run_pit
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.position import Position
from bgbot.serve.ubgi import UbgiSession, ubgi_move_text

START = "4HPwATDgc/ABMA"
UBGI_CMD = [sys.executable, "-m", "bgbot.cli", "ubgi"]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


class Talk:
    """A session fed line by line; ``ask`` returns the lines one command produced."""

    def __init__(self, engine: Engine) -> None:
        self.out = io.StringIO()
        self.session = UbgiSession(lambda: engine, self.out)

    def ask(self, *lines: str) -> list[str]:
        start = len(self.out.getvalue())
        for line in lines:
            self.session.handle(line)
        return self.out.getvalue()[start:].splitlines()


@pytest.fixture()
def talk(engine: Engine) -> Talk:
    t = Talk(engine)
    assert t.ask("ubgi")[-1] == "ubgiok"
    return t


def test_handshake(engine: Engine) -> None:
    t = Talk(engine)
    lines = t.ask("ubgi", "isready")
    assert lines[0] == "id name bgbot" and lines[1].startswith("id author")
    assert "ubgiok" in lines and lines[-1] == "readyok"
    assert any(x.startswith("option name Ply type spin") for x in lines)
    assert t.session.handle("quit") is False


def test_chequer_play_is_the_engines_best(talk: Talk, engine: Engine) -> None:
    lines = talk.ask("position gnubgid 4HPwATDgc/ABMA", "dice 3 1", "go role chequer")
    best = engine.best_move(Position.from_id(START), (3, 1), 1).best
    assert lines[-2] == f"bestmoveid {best.result.gnubg_id()}"
    assert lines[-1] == "bestmove 8/5 6/5"
    assert lines[0].startswith("eval eq ") and f"pwin {best.probs[0]:.6f}" in lines[0]
    assert talk.ask("go")[-1] == "bestmove 8/5 6/5"  # go alone is go role chequer
    assert talk.ask("go chequer")[-1] == "bestmove 8/5 6/5"  # the v0.2 spelling


def test_move_text_is_written_out(talk: Talk, engine: Engine) -> None:
    # bar entry, a hit on the way and bearing off are single steps without '*', doubles four steps
    assert ubgi_move_text([(25, 20, False), (20, 14, True)]) == "bar/20 20/14"
    assert ubgi_move_text([(6, 0, False), (5, 0, False)]) == "6/off 5/off"
    assert ubgi_move_text([]) == "pass"
    lines = talk.ask("position gnubgid 4HPwATDgc/ABMA", "dice 6 6", "go role chequer")
    assert len(lines[-1].split()) == 5 and "(" not in lines[-1]
    blocked = Position.from_points({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    assert talk.ask(f"position gnubgid {blocked.gnubg_id()}", "dice 6 5", "go")[-1] == "bestmove pass"


def test_cube_and_take(talk: Talk, engine: Engine) -> None:
    assert talk.ask("position gnubgid 4HPwATDgc/ABMA", "go role cube")[-1] == "bestcube nodouble"
    # a closed board against a checker on the bar with gammon chances: double, and the taker drops
    crushing = Position.from_points({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 3, 8: 2}, {25: 2, 1: 13})
    d = engine.cube_action(crushing, ply=1)
    cube = talk.ask(f"position gnubgid {crushing.gnubg_id()}", "go role cube")
    assert cube[-1] == f"bestcube {'double' if d.doubles else 'nodouble'}"
    assert talk.ask("go role take")[-1] == f"bestcube {'take' if d.takes else 'drop'}"
    assert talk.ask("go role take")[-1] == "bestcube drop"
    turn = talk.ask("go role turn")[-1]
    assert turn == ("bestturn cube=double" if d.doubles else turn)


def test_match_context_is_seen_from_the_side_on_roll(talk: Talk, engine: Engine) -> None:
    pos = Position.from_id(START)
    lines = talk.ask(
        "newsession type match length 7",
        "setscore 2 5",
        "setcube value 2 owner p0",
        "setturn p1",
        "setcrawford off",
        "position gnubgid 4HPwATDgc/ABMA",
        "go role cube",
    )
    d = engine.cube_action(pos, CubeState(cube=2, owner="opp", match=7, score=(5, 2)), ply=1)
    assert lines[0].startswith(f"eval eq {d.equity_optimal:.6f} mwc {d.mwc_optimal:.6f}")
    assert lines[-1] == "bestcube nodouble"  # p1 does not own the cube: it cannot double
    # the same with the v0.1 spelling of the issue: newsession match, and an XGID that carries it all
    lines = talk.ask("position xgid XGID=-b----E-C---eE---c-e----B-:1:1:1:31:2:4:0:7:10", "go role chequer")
    assert lines[-1].startswith("bestmove ")


def test_options(talk: Talk) -> None:
    assert talk.ask("setoption name Ply value 2", "get engine.ply") == ["value engine.ply 2"]
    assert talk.ask("set engine.eval_mode cubeless", "get engine.eval_mode") == ["value engine.eval_mode cubeless"]
    assert talk.ask("setoption name Threads value 3", "get engine.threads") == ["value engine.threads 3"]
    assert talk.ask("setoption name Threads value 0")[0].startswith("error bad_argument")
    assert any(x.startswith("key engine.ply int 1..3 2") for x in talk.ask("keys"))
    assert talk.ask("setoption name Ply value 7")[0].startswith("error bad_argument")
    assert talk.ask("setoption name Variant value nackgammon")[0].startswith("error unsupported_feature")


@pytest.mark.parametrize(
    ("lines", "code", "quoted"),
    [
        (["frobnicate"], "unknown_command", "'frobnicate'"),
        (["go"], "missing_context", "position"),
        (["position gnubgid 4HPwATDgc/ABMA", "go"], "missing_context", "dice"),
        (["position gnubgid zzz"], "bad_argument", "'zzz'"),
        (["position fen x"], "bad_argument", "fen"),
        (["dice 7 1"], "bad_argument", "'7 1'"),
        (["dice"], "bad_argument", "''"),
        (["setcube value 3 owner p0"], "bad_argument", "'3'"),
        (["setcube owner p7"], "bad_argument", "'p7'"),
        (["setscore 1"], "bad_argument", "'1'"),
        (["setscore a b"], "bad_argument", "'a'"),
        (["setturn p2"], "bad_argument", "'p2'"),
        (["newsession type chouette"], "bad_argument", "chouette"),
        (["newsession type match"], "bad_argument", "length"),
        (["newsession type match length 7 crawford maybe"], "bad_argument", "'maybe'"),
        (["go role dance"], "unsupported_feature", "'dance'"),
        (["go depth 9"], "bad_argument", "'9'"),
        (["setoption name Ply"], "bad_argument", "Ply"),
        (
            ["setcube value 1 owner p0", "position gnubgid 4HPwATDgc/ABMA", "dice 3 1", "go"],
            "bad_argument",
            "owned cube",
        ),
    ],
)
def test_errors_are_lines_and_the_engine_goes_on(talk: Talk, lines: list[str], code: str, quoted: str) -> None:
    out = talk.ask(*lines)
    errors = [x for x in out if x.startswith("error")]
    assert errors and errors[-1].startswith(f"error {code} ") and quoted in errors[-1], out
    assert talk.ask("isready") == ["readyok"]


def test_bare_positions_of_the_first_draft(talk: Talk) -> None:
    assert talk.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10") == ["8/5 6/5"]
    assert talk.ask("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10") == ["roll"]


def test_context_lines_of_the_pit_adapter() -> None:
    state = MatchState(match_length=5, score=(3, 1), cube_value=2, cube_owner=1, on_roll=1, crawford=False)
    lines = context_lines(Position.from_id(START), state)
    assert lines == [
        "newsession type match length 5 crawford on",
        "setscore 3 1",
        "setcube value 2 owner p1",
        "setturn p1",
        "setcrawford off",
        f"position gnubgid {START}",
    ]


def test_a_scripted_session_with_the_child_process() -> None:
    script = "ubgi\nisready\nposition gnubgid 4HPwATDgc/ABMA\ndice 6 5\ngo role chequer\ngo role cube\nquit\n"
    r = subprocess.run(UBGI_CMD, input=script, capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and "ubgiok" in lines and "readyok" in lines
    assert "bestmove 24/18 18/13" in lines and lines[-1] == "bestcube nodouble"


def test_the_ubgi_bot_answers_like_the_engine(engine: Engine) -> None:
    bot = UbgiEngineBot(UBGI_CMD)
    try:
        assert bot.engine_name == "bgbot"
        state = MatchState(on_roll=0)
        pos = Position.from_id(START)
        assert bot.move(pos, (3, 1), state) == engine.best_move(pos, (3, 1), 1, state).best.result
        assert bot.double(pos, state) is False
        assert bot.take(pos, state.at_decision(doubled=True)) is True
    finally:
        bot.close()
    assert parse_bot_spec("ubgi:bgbot ubgi").get("argv") == ("bgbot", "ubgi")


def test_a_full_game_against_pubeval_through_the_pit() -> None:
    spec = "ubgi:" + " ".join(UBGI_CMD)
    report = run_pit(spec, "pubeval", PitConfig(games=2, seed=3))
    assert report.games == 2 and report.unfinished == 0 and report.stopped is None
    assert report.forfeits == {"A": 0, "B": 0} and not report.faults
    assert report.decisions["A"] > 10 and report.mean_turns > 10
