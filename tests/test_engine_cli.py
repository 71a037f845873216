"""The Engine API and the ``bgbot move | cube | eval`` commands, on a tiny freshly initialised network."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import read_jsonl

import bgbot
from bgbot.cli.main import main
from bgbot.engine.api import Engine
from bgbot.engine.cube import CONTACT_X, match_cube_decision, money_cube_decision
from bgbot.engine.met import load_met
from bgbot.engine.search import lookahead_probs, parse_filters
from bgbot.errors import (
    CheckpointError,
    ConfigError,
    InvalidCubeError,
    InvalidDiceError,
    InvalidIdError,
    InvalidScoreError,
)
from bgbot.eval.bearoff import BearoffDB
from bgbot.eval.evaluate import NetEvaluator, equity
from bgbot.eval.models import DEFAULT_MODEL
from bgbot.eval.nets import ModelSpec, ValueNet, save_checkpoint
from bgbot.formats.ids import format_xgid
from bgbot.rules.matchstate import CubeState, MatchState
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

ROOT = Path(__file__).resolve().parents[1]
START = "4HPwATDgc/ABMA"


def tiny_net(seed: int = 3) -> ValueNet:
    torch.manual_seed(seed)
    return ValueNet(ModelSpec(hidden=(16,)))


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ckpt") / "tiny.pt"
    save_checkpoint(path, tiny_net(), games_trained=4321)
    return path


@pytest.fixture(scope="module")
def engine(ckpt: Path) -> Engine:
    # no bear-off database here: building the full one takes a while; its use is tested on a small one
    return Engine.load(ckpt, bearoff=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------


def test_load_reads_the_network_and_its_games(engine: Engine, ckpt: Path) -> None:
    assert engine.checkpoint == ckpt
    assert engine.games_trained == 4321
    assert "4,321 games" in engine.describe()
    board = Position.start().array()[None, :]
    ref = NetEvaluator(tiny_net())(board)[0]
    np.testing.assert_allclose(engine.evaluate(Position.start()), ref, atol=1e-7)


def test_default_model_is_package_data() -> None:
    import fnmatch
    import tomllib

    package = Path(bgbot.__file__).resolve().parent
    assert DEFAULT_MODEL.is_file() and DEFAULT_MODEL.is_relative_to(package)
    rel = DEFAULT_MODEL.relative_to(package).as_posix()
    patterns = tomllib.loads((package.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(fnmatch.fnmatch(rel, pat) for pat in patterns["bgbot"]), (rel, patterns)


def test_missing_checkpoint_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "none.pt"
    monkeypatch.setenv("BGBOT_CHECKPOINT", str(missing))
    with pytest.raises(CheckpointError, match="bgbot train") as info:
        Engine.load()
    assert str(missing) in str(info.value)
    with pytest.raises(CheckpointError, match=r"none\.pt"):
        Engine.load(missing)


def test_env_var_chooses_the_default(ckpt: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOT_CHECKPOINT", str(ckpt))
    assert Engine.load().checkpoint == ckpt


def test_corrupt_checkpoint_is_a_checkpoint_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError):
        Engine.load(bad)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------


def test_best_move_accepts_ids_and_lists_every_reference_move(engine: Engine) -> None:
    for row in read_jsonl("benchmark/checker.jsonl")[:20]:
        if row["n_legal"] > 40:
            continue
        a = engine.best_move(row["position"], row["dice"], ply=1)
        assert {c.result.gnubg_id() for c in a.candidates} == {m["result"] for m in row["moves"]}
        assert a.best.diff == 0.0


def test_evaluate_at_two_ply_is_the_lookahead(engine: Engine) -> None:
    pos = Position.from_id(read_jsonl("benchmark/checker.jsonl")[3]["position"])
    two = engine.evaluate(pos, ply=2)
    np.testing.assert_allclose(two, lookahead_probs(engine.evaluator, pos.array()[None, :], 1)[0])
    assert engine.equity(pos, 2) == pytest.approx(float(equity(two)))


def test_engine_answers_bearoffs_from_the_database() -> None:
    db = BearoffDB.build(max_checkers=3)
    eng = Engine.from_net(tiny_net(), bearoff=db)
    pos = Position.from_points({6: 1, 2: 2}, {3: 1, 1: 1})
    np.testing.assert_allclose(eng.evaluate(pos), db.evaluate(pos.array()[None, :])[0], atol=1e-7)
    no_db = Engine.from_net(tiny_net(), bearoff=False)
    assert not np.allclose(no_db.evaluate(pos), eng.evaluate(pos), atol=1e-3)


def test_money_cube_action_is_the_cube_model_on_the_engine_probs(engine: Engine) -> None:
    pos = Position.from_id(read_jsonl("benchmark/cube.jsonl")[0]["position"])
    assert pos.has_contact() and engine.cube_efficiency(pos) == CONTACT_X
    assert engine.cube_action(pos, ply=1) == money_cube_decision(engine.evaluate(pos, 1), x=CONTACT_X)
    d2 = engine.cube_action(pos, CubeState(cube=2, owner="me"), ply=1)
    assert d2 == money_cube_decision(engine.evaluate(pos), cube_value=2, owner="me", x=CONTACT_X)
    # above 1-ply the decision comes from the cubeful lookahead (tests/test_cubeful_search.py checks
    # its figures): near Janowski once on the averaged probabilities where no roll loses the market
    for row in read_jsonl("benchmark/cube.jsonl")[:20]:
        p = Position.from_id(row["position"])
        two = engine.cube_action(p, ply=2)
        once = money_cube_decision(engine.evaluate(p, 2), x=engine.cube_efficiency(p))
        assert two.equity_double_pass == once.equity_double_pass == 1.0
        # less the one-roll lookahead's correction (bgbot.engine.cube_lookahead.ONE_ROLL_SHIFT)
        assert two.equity_no_double - engine.cube_shift.no_double == pytest.approx(once.equity_no_double, abs=0.01)


def test_cube_action_on_reference_positions_follows_gnubg_given_its_probs(engine: Engine) -> None:
    # with gnubg's own 2-ply probabilities, the engine's cube path reproduces the model's decisions
    rows = read_jsonl("benchmark/cube.jsonl")
    agree = 0
    for row in rows:
        owner = {"center": "center", "on_roll": "me"}[row["cube"]["owner"]]
        d = engine.cube_action(row["position"], CubeState(cube=row["cube"]["value"], owner=owner), probs=row["probs"])
        agree += d.action == row["decision"]
        assert d.equity_double_pass == 1.0
    assert agree / len(rows) >= 0.9


def test_match_cube_action(engine: Engine) -> None:
    pos = Position.from_id(read_jsonl("benchmark/cube.jsonl")[5]["position"])
    probs = engine.evaluate(pos)
    d = engine.cube_action(pos, CubeState(match=7, score=(2, 4)))
    ref = match_cube_decision(
        probs, met=load_met(), match_length=7, away_me=5, away_opp=3, x=engine.cube_efficiency(pos)
    )
    assert d == ref
    assert engine.cube_action(pos, CubeState(match=7, score="2-4")) == ref
    crawford = engine.cube_action(pos, CubeState(match=7, score=(6, 3), crawford=True))
    assert not crawford.can_double


@pytest.mark.parametrize(
    ("kwargs", "error", "quoted"),
    [
        ({"cube": 1, "owner": "me"}, InvalidCubeError, "'me'"),
        ({"cube": 3}, InvalidCubeError, "3"),
        ({"owner": "bob"}, InvalidCubeError, "'bob'"),
        ({"match": 7, "score": (7, 2)}, InvalidScoreError, "7-2"),
        ({"match": 7, "score": "2:x"}, InvalidScoreError, "'2:x'"),
        ({"score": (1, 0)}, InvalidScoreError, "(1, 0)"),
        ({"match": 7, "score": (2, 4), "crawford": True}, InvalidScoreError, "2-4"),
        ({"match": 7, "cube": 2}, InvalidCubeError, "2"),
        ({"match": 5, "score": (4, 1), "crawford": True, "cube": 2, "owner": "opp"}, InvalidCubeError, "2"),
        ({"match": 99}, InvalidScoreError, "99"),
        ({"match": -1}, InvalidScoreError, "-1"),
    ],
)
def test_impossible_cube_situations(engine: Engine, kwargs: dict, error: type, quoted: str) -> None:
    with pytest.raises(error, match=re.escape(quoted)):
        engine.cube_action(Position.start(), CubeState(**kwargs))
    with pytest.raises(error):
        CubeState(**kwargs)


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

TABLE_ROW = re.compile(r"^\s*(\d+)\s+(\S.*?)\s+([123])\s+([+-]\d\.\d{3})\s+(\S*)\s+(\d\.\d{3}\s+){5}\d\.\d{3}$")


def test_cli_move_prints_a_ranked_table_of_16_moves(capsys: pytest.CaptureFixture[str], ckpt: Path) -> None:
    code, out, err = run_cli(capsys, "move", START, "31", "--checkpoint", str(ckpt))
    assert code == 0 and err == ""
    rows = [m for line in out.splitlines() if (m := TABLE_ROW.match(line))]
    assert [int(m.group(1)) for m in rows] == list(range(1, 17))
    texts = {m.group(2) for m in rows}
    assert texts == {m.text for m in legal_moves(Position.start(), (3, 1))}
    equities = [float(m.group(4)) for m in rows]
    assert equities == sorted(equities, reverse=True)
    assert START in out and "XGID=" in out


def test_cli_move_json(capsys: pytest.CaptureFixture[str], ckpt: Path) -> None:
    code, out, _ = run_cli(capsys, "move", START, "3-1", "--ply", "2", "--json", "--checkpoint", str(ckpt))
    assert code == 0
    data = json.loads(out)
    assert data["position"] == START and data["dice"] == [3, 1] and data["ply"] == 2
    assert len(data["moves"]) == 16
    assert [m["rank"] for m in data["moves"]] == list(range(1, 17))
    assert data["moves"][0]["diff"] == 0.0
    assert all(m["diff"] <= 1e-12 for m in data["moves"] if m["ply"] == 2)
    assert set(data["moves"][0]["probs"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
    # the same figures as the API
    api = Engine.load(ckpt).best_move(START, (3, 1), ply=2)
    assert [m["move"] for m in data["moves"]] == [c.move for c in api.candidates]


def test_cli_move_filter_sets_which_plays_go_deeper(capsys: pytest.CaptureFixture[str], ckpt: Path) -> None:
    deep = {}
    for f in ("1:0", "tiny", "huge"):
        code, out, _ = run_cli(capsys, "move", START, "52", "--ply", "2", "--filter", f, "--json", "--checkpoint",
                               str(ckpt))
        assert code == 0
        deep[f] = [m["move"] for m in json.loads(out)["moves"] if m["ply"] == 2]
    api = Engine.load(ckpt, filters=parse_filters("tiny")).best_move(START, (5, 2), ply=2)
    assert deep["tiny"] == [c.move for c in api.candidates if c.ply == 2]
    assert len(deep["1:0"]) == 1 and len(deep["1:0"]) <= len(deep["tiny"]) <= len(deep["huge"]) <= 20
    code, _, err = run_cli(capsys, "move", START, "52", "--ply", "2", "--filter", "8:lots", "--checkpoint", str(ckpt))
    assert code == 2 and "'8:lots'" in err and len(err.strip().splitlines()) == 1


def test_cli_move_takes_the_dice_from_an_xgid(capsys: pytest.CaptureFixture[str], ckpt: Path) -> None:
    xgid = format_xgid(Position.start(), MatchState(dice=(6, 4)))
    code, out, _ = run_cli(capsys, "move", xgid, "--json", "--checkpoint", str(ckpt))
    assert code == 0
    data = json.loads(out)
    assert data["dice"] == [6, 4]
    assert len(data["moves"]) == len(legal_moves(Position.start(), (6, 4)))


def test_cli_eval(capsys: pytest.CaptureFixture[str], ckpt: Path, engine: Engine) -> None:
    code, out, _ = run_cli(capsys, "eval", START, "--json", "--checkpoint", str(ckpt))
    assert code == 0
    data = json.loads(out)
    np.testing.assert_allclose(list(data["probs"].values()), engine.evaluate(START), atol=5e-7 + 1e-12)
    code, out, _ = run_cli(capsys, "eval", START, "--ply", "2", "--checkpoint", str(ckpt))
    assert code == 0 and "2-ply" in out and "cubeless equity" in out


def test_cli_cube_reads_cube_and_score_from_the_position(
    capsys: pytest.CaptureFixture[str], ckpt: Path, engine: Engine
) -> None:
    pos = Position.from_id(read_jsonl("benchmark/cube.jsonl")[1]["position"])
    # player 1 on roll, 2-4 for it in a 7-point match, cube 2 owned by player 0 (the opponent)
    state = MatchState(match_length=7, score=(4, 2), cube_value=2, cube_owner=0, on_roll=1)
    code, out, _ = run_cli(capsys, "cube", format_xgid(pos, state), "--json", "--checkpoint", str(ckpt))
    assert code == 0
    data = json.loads(out)
    assert (data["match"], data["score"], data["cube"]) == (7, [2, 4], {"value": 2, "owner": "opp"})
    ref = engine.cube_action(pos, CubeState(cube=2, owner="opp", match=7, score=(2, 4)))
    assert data["action"] == ref.action == "no_double" and not data["can_double"]
    assert data["equity_no_double"] == pytest.approx(ref.equity_no_double)
    # options override the position's state
    code, out, _ = run_cli(
        capsys, "cube", format_xgid(pos, state), "--json", "--owner", "me", "--checkpoint", str(ckpt)
    )
    mine = CubeState(cube=2, owner="me", match=7, score=(2, 4))
    assert json.loads(out)["action"] == engine.cube_action(pos, mine).action


def test_cli_cube_text(capsys: pytest.CaptureFixture[str], ckpt: Path) -> None:
    code, out, _ = run_cli(
        capsys, "cube", START, "--match", "7", "--score", "2-4", "--ply", "2", "--checkpoint", str(ckpt)
    )
    assert code == 0
    assert "7-point match, score 2-4" in out
    assert "No double" in out and "Double, take" in out and "proper cube action:" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["move", "nonsense", "31"],
        ["move", START, "37"],
        ["move", START],
        ["move", START, "31", "--ply", "4"],
        ["eval", "XGID=garbage"],
        ["cube", START, "--score", "9-2", "--match", "7"],
        ["cube", START, "--score", "two-four", "--match", "7"],
        ["cube", START, "--owner", "me", "--cube", "1"],
        ["cube", START, "--cube", "5"],
        ["cube", START, "--crawford"],
        ["cube", START, "--owner", "nobody"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], ckpt: Path, argv: list[str]) -> None:
    code, out, err = run_cli(capsys, *argv, "--checkpoint", str(ckpt))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("bgbot: error: ")


def test_cli_missing_checkpoint_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "move", START, "31", "--checkpoint", str(tmp_path / "x.pt"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "x.pt" in err


def test_errors_are_the_documented_types() -> None:
    from bgbot.formats.parse import parse_position_and_state

    with pytest.raises(InvalidIdError):
        parse_position_and_state("nonsense")
    with pytest.raises(InvalidDiceError):
        Engine.from_net(tiny_net()).best_move(START, "0")
    with pytest.raises(ConfigError):
        Engine.from_net(tiny_net()).best_move(START, "31", ply=9)


def test_console_script_runs(ckpt: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "move", START, "31", "--checkpoint", str(ckpt)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "8/5 6/5" in proc.stdout
