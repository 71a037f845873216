"""Rollouts: exact where the answer is known, the luck adjustment unbiased and variance-reducing, the same
seed the same figures on any executor and worker count, and a killed run resumes from its finished tasks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import read_jsonl

from bgbot.cli.main import main
from bgbot.engine.api import Engine
from bgbot.engine.rollout import COLUMNS, RolloutSettings
from bgbot.errors import ConfigError, InvalidPositionError, JournalError
from bgbot.rules.matchstate import CubeState
from bgbot.rules.position import Position

ROOT = Path(__file__).resolve().parents[1]
QUICK = RolloutSettings(trials=36, truncate=3, luck=False, trials_per_task=12)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


def contact_positions(n: int) -> list[dict]:
    return [r for r in read_jsonl("benchmark/checker.jsonl") if r["class"] == "contact"][:n]


# ---- exact answers ---------------------------------------------------------------


def test_bearoff_rollout_agrees_with_the_database_within_its_standard_error(engine: Engine) -> None:
    # given a bear-off position (both sides home), played out to the end instead of stopping at the database
    pos = Position.from_points({6: 2, 5: 2, 3: 1, 1: 2}, {6: 1, 5: 2, 4: 2, 2: 1})
    exact = engine.evaluator(pos.array()[None])[0]
    st = RolloutSettings(trials=1296, cubeful=False, luck=False, stop_at_bearoff=False, trials_per_task=324)
    # when rolled out without variance reduction
    e = engine.rollout(pos, None, settings=st).entries[0]
    # then the rollout's P(win) and equity lie within 3 standard errors of the database's
    assert e.trials == 1296 and e.se[0] > 0.005
    assert abs(e.mean[0] - exact[0]) < 3 * e.se[0]
    assert abs(e.mean[5] - (2 * exact[0] - 1)) < 3 * e.se[5]


@pytest.mark.parametrize("mine,theirs", [({6: 1}, {6: 1}), ({5: 1, 2: 1}, {6: 1, 3: 1})])
def test_luck_adjusted_rollout_on_an_exact_evaluator_is_exact(engine: Engine, mine: dict, theirs: dict) -> None:
    # given races where the play cannot matter, valued exactly by the database at every roll
    pos = Position.from_points(mine, theirs)
    exact = float(engine.evaluator(pos.array()[None])[0][0])
    st = RolloutSettings(trials=1296, cubeful=False, luck=True, stop_at_bearoff=False, trials_per_task=648)
    e = engine.rollout(pos, None, settings=st).entries[0]
    # then subtracting each roll's luck leaves the exact value in every trial: no variance at all
    assert e.mean[0] == pytest.approx(exact, abs=1e-6)
    assert e.se[0] < 1e-6 < e.se_raw[0]


def test_a_won_position_rolls_out_to_its_result_with_zero_variance(engine: Engine) -> None:
    # given: the side on roll has one checker left on its 1-point, the opponent all 15 far from home
    pos = Position.from_points({1: 1}, {13: 15})
    for luck in (False, True):
        r = engine.rollout(pos, None, settings=RolloutSettings(trials=72, luck=luck, trials_per_task=36))
        nd, dt = r.entries  # the cube is centred: "no double" and "double, take" both rolled out
        # then every trial is a gammon win: exact figures, zero standard error, too good to double
        # (the luck terms are zero up to rounding: the 21 roll weights sum to 1 within 1e-16)
        tol = 0.0 if not luck else 1e-12
        assert nd.mean == pytest.approx((1.0, 1.0, 0.0, 0.0, 0.0, 2.0, 2.0), abs=tol)
        assert dt.mean[6] == pytest.approx(4.0, abs=tol)  # cube 2 in units of the cube before the double
        assert all(s <= tol for s in (*nd.se, *dt.se)) and max(nd.se_raw) == 0.0
        assert r.cube_action == "Too good to double, pass"
    cubeless = engine.rollout(pos, None, settings=RolloutSettings(trials=36, cubeful=False, trials_per_task=36))
    assert [e.label for e in cubeless.entries] == ["position"] and cubeless.entries[0].se[5] < 1e-12


# ---- variance reduction -------------------------------------------------------------


def test_luck_adjustment_lowers_the_standard_error_without_moving_the_mean(engine: Engine) -> None:
    st = RolloutSettings(trials=72, truncate=4, cubeful=False, luck=True, trials_per_task=72)
    for row in contact_positions(3):
        e = engine.rollout(row["position"], None, settings=st).entries[0]
        # the same trials with and without the adjustment: the adjusted standard error is clearly smaller
        assert e.se[5] < 0.7 * e.se_raw[5], row["position"]
        # and the adjusted mean agrees with a plain rollout of the same trials (the adjustment has mean zero)
        plain = engine.rollout(
            row["position"],
            None,
            settings=RolloutSettings(trials=72, truncate=4, cubeful=False, luck=False, trials_per_task=72),
        ).entries[0]
        assert plain.se[5] == pytest.approx(e.se_raw[5])
        assert abs(e.mean[5] - plain.mean[5]) < 4 * plain.se[5]


def test_stratified_first_rolls_cover_every_roll_once_in_36_trials(engine: Engine) -> None:
    from bgbot.engine.rollout import _ORDERED36

    rolls = {tuple(r) for r in _ORDERED36[np.arange(36) % 36].tolist()}
    assert len(rolls) == 36
    # stratification is part of the seed: with or without it the figures differ, each repeatable
    a = engine.rollout(
        "4HPwATDgc/ABMA", None, settings=RolloutSettings(trials=36, truncate=1, cubeful=False, luck=False, stratify=36)
    )
    b = engine.rollout(
        "4HPwATDgc/ABMA", None, settings=RolloutSettings(trials=36, truncate=1, cubeful=False, luck=False, stratify=0)
    )
    assert a.entries[0].mean != b.entries[0].mean


# ---- candidates, cube, match, early stop ----------------------------------------------------


def test_candidate_plays_are_ranked_with_standard_errors(engine: Engine) -> None:
    r = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=3)
    eqs = [e.cubeful_equity for e in r.entries]
    assert len(r.entries) == 3 and eqs == sorted(eqs, reverse=True)
    assert {e.label for e in r.entries} >= {"8/5 6/5"}
    assert all(e.se[6] > 0 and e.trials == 36 for e in r.entries)
    d = r.to_dict()
    assert d["ranked_by"] == "cubeful_equity" and len(d["lines"]) == 3 and set(COLUMNS) <= set(d["lines"][0])
    table = r.table()
    assert "8/5 6/5" in table and "Eq.:" in table and "[" in table


def test_match_rollout_gives_match_winning_chances(engine: Engine) -> None:
    cs = CubeState(match=5, score=(2, 3))
    r = engine.rollout("4HPwATDgc/ABMA", "31", cs, settings=QUICK, top=2)
    for e in r.entries:
        assert e.mwc is not None and 0.0 < e.mwc < 1.0
        assert -3.0 < e.cubeful_equity < 3.0


def test_se_stop_ends_the_rollout_early_and_deterministically(engine: Engine) -> None:
    st = RolloutSettings(
        trials=1296, truncate=2, luck=False, cubeful=False, se_stop=5.0, min_trials=24, trials_per_task=12
    )
    a = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=2)
    assert a.stopped_early and a.trials == 24
    b = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=2)
    assert [e.mean for e in a.entries] == [e.mean for e in b.entries]


def test_bad_settings_and_positions_are_errors(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="trials"):
        RolloutSettings(trials=0)
    with pytest.raises(ConfigError, match="stratify"):
        RolloutSettings(stratify=7)
    with pytest.raises(ConfigError, match="se_stop"):
        RolloutSettings(se_stop=-1.0)
    with pytest.raises(ConfigError, match="ply"):
        RolloutSettings(ply=4)
    with pytest.raises(InvalidPositionError, match="over"):
        engine.rollout(Position.from_points({}, {6: 1}), None, settings=QUICK)


# ---- the same seed, the same figures ----------------------------------------------------------


def _figures(r: object) -> list[tuple[str, tuple[float, ...], tuple[float, ...]]]:
    return [(e.label, e.mean, e.se) for e in r.entries]  # type: ignore[attr-defined]


def test_same_seed_same_result_with_one_and_two_workers(engine: Engine) -> None:
    one = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, workers=1)
    two = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, workers=2)
    assert _figures(one) == _figures(two)
    other = engine.rollout(
        "4HPwATDgc/ABMA",
        "31",
        settings=RolloutSettings(trials=36, truncate=3, luck=False, trials_per_task=12, seed=1),
        top=2,
    )
    assert _figures(other) != _figures(one)


def test_same_seed_same_result_on_a_local_ray_cluster(engine: Engine) -> None:
    import ray

    local = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, workers=1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, executor="ray", workers=2)
    finally:
        ray.shutdown()
    assert on_ray.executor == "ray" and on_ray.tasks_run == 3
    assert _figures(on_ray) == _figures(local)


# ---- a killed run resumes ---------------------------------------------------------------------


def test_a_journal_keeps_finished_tasks_and_refuses_another_run(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    first = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, resume=folder)
    assert first.tasks_run == 3 and first.tasks_resumed == 0
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", *(f"task-{i:06d}.json" for i in range(3))]
    (folder / "task-000001.json").unlink()  # as if the run had been killed before that task finished
    again = engine.rollout("4HPwATDgc/ABMA", "31", settings=QUICK, top=2, resume=folder)
    assert again.tasks_run == 1 and again.tasks_resumed == 2
    assert _figures(again) == _figures(first)
    with pytest.raises(JournalError, match="another run"):
        engine.rollout("4HPwATDgc/ABMA", "42", settings=QUICK, top=2, resume=folder)


def test_a_killed_rollout_resumes_from_its_finished_tasks(engine: Engine, tmp_path: Path) -> None:
    # given a CLI rollout of 12 tasks writing its results folder, killed (SIGKILL) once some tasks are done
    folder = tmp_path / "killed"
    args = [
        "rollout",
        "4HPwATDgc/ABMA",
        "31",
        "--trials",
        "144",
        "--truncate",
        "5",
        "--top",
        "2",
        "--workers",
        "1",
        "--trials-per-task",
        "12",
        "--no-luck",
        "--seed",
        "3",
        "--resume",
        str(folder),
        "--json",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli.main", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None and len(list(folder.glob("task-*.json"))) < 2:
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its worker process: a session of their own
        proc.wait(timeout=60)
    done_before = len(list(folder.glob("task-*.json")))
    assert done_before >= 2
    # when the same command runs again with the same folder
    st = RolloutSettings(trials=144, truncate=5, luck=False, trials_per_task=12, seed=3)
    resumed = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=2, resume=folder)
    # then it takes the finished tasks from the folder, runs only the others, and gives the figures of a fresh run
    assert resumed.tasks_resumed >= done_before and resumed.tasks_resumed + resumed.tasks_run == 12
    fresh = engine.rollout("4HPwATDgc/ABMA", "31", settings=st, top=2)
    assert _figures(resumed) == _figures(fresh)


# ---- the command line -------------------------------------------------------------------------


def test_cli_rollout_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "rollout",
        "4HPwATDgc/ABMA",
        "31",
        "--trials",
        "24",
        "--truncate",
        "2",
        "--top",
        "2",
        "--workers",
        "1",
        "--trials-per-task",
        "12",
        "--cubeless",
    ]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ranked_by"] == "cubeless_equity" and len(out["lines"]) == 2 and out["trials"] == 24
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Rollout of the top 2 plays of 31" in text and "Position ID: 4HPwATDgc/ABMA" in text


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--executor", "nowhere"], "executor"),
        (["--executor", "ray://"], "ray://"),
        (["--ply", "5"], "ply"),
        (["--workers", "0"], "workers"),
        (["--executor", "127.0.0.1:1"], "cannot reach the Ray cluster"),
    ],
)
def test_cli_rollout_bad_options_are_one_line_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--trials", "12", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bgbot: error:") and message in err[0]


def test_a_sure_win_without_gammons_rolls_out_to_double_pass(engine: Engine) -> None:
    # given: the side on roll bears its last two checkers off with any roll; the opponent has borne off
    pos = Position.from_points({1: 2}, {6: 3, 5: 3})
    r = engine.rollout(pos, None, settings=RolloutSettings(trials=36, luck=False, trials_per_task=36))
    nd, dt = r.entries
    # then no double wins the cube (1), double/take twice that, so the cube action is double, pass (+1)
    assert nd.cubeful_equity == 1.0 and dt.cubeful_equity == 2.0 and nd.se[6] == 0.0
    assert r.cube_action == "Double, pass"
    # and with the cube owned by the opponent there is nothing to decide: one line
    owned = engine.rollout(pos, None, CubeState(cube=2, owner="opp"), RolloutSettings(trials=36, luck=False))
    assert [e.label for e in owned.entries] == ["position"] and owned.cube_action is None
    assert owned.entries[0].cubeful_equity == 1.0  # one cube of 2 won, in units of that cube


@pytest.mark.parametrize("ply", [1, 2])
def test_cube_decisions_inside_trials_are_the_engines(ply: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the decisions a cubeful trial makes come from the same model as Engine.cube_action: the cube
    # model at 1-ply, the cubeful lookahead above it, small two-sided bear-offs exact in money play
    import torch

    import bgbot.engine.bearoff_cube as bc
    from bgbot.engine.cube import money_decision_from_equities
    from bgbot.engine.cube_lookahead import lookahead_money_cubeful
    from bgbot.engine.rollout import Start, _Score, _Trials
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.nets import ModelSpec, ValueNet

    torch.manual_seed(4)
    engine = Engine(NetEvaluator(ValueNet(ModelSpec(hidden=(8,)))))
    monkeypatch.setattr(bc, "_table", bc.solve(3))  # a small table is enough for these boards
    positions = [Position.start(), Position.from_points({6: 1, 5: 1, 2: 1}, {4: 2, 1: 1}),
                 Position.from_points({13: 3, 6: 5, 8: 3}, {6: 4, 5: 4, 4: 3})]
    starts = [Start(p.board, root_on_roll=True, cube=2, owner=1, norm=2) for p in positions]
    trials = _Trials(engine.evaluator, starts, _Score(None), RolloutSettings(trials=1, ply=ply, stratify=0),
                     [0], seed=1)
    _, decisions = trials._decisions(np.arange(len(positions)))
    for pos, d in zip(positions, decisions, strict=True):
        if ply == 1 or bc.get_two_sided().lookup(pos.array()[None, :])[0][0]:
            want = engine.cube_action(pos, CubeState(cube=2, owner="me"), ply=ply)
        else:  # inside a trial the lookahead's plays are chosen by cubeless equity
            probs, nd, dt = lookahead_money_cubeful(engine.evaluator, pos.array()[None, :], ply - 1)
            want = money_decision_from_equities(probs[0].clip(0, 1), nd[0, 1], dt[0], cube_value=2, owner="me",
                                                x=engine.cube_efficiency(pos))
        assert d.action == want.action
        assert d.equity_no_double == pytest.approx(want.equity_no_double, abs=1e-6)
        assert d.equity_double_take == pytest.approx(want.equity_double_take, abs=1e-6)


def test_match_cube_decisions_inside_trials_use_one_lookahead_each() -> None:
    # above 1-ply a match trial's decision is the match lookahead (plays chosen cubeless) and its
    # probabilities are that lookahead's own averages, which are the cubeless lookahead's
    import torch

    from bgbot.engine.cube import match_decision_from_mwcs
    from bgbot.engine.cube_lookahead import match_cube_lookahead
    from bgbot.engine.met import DEFAULT_MET, load_met
    from bgbot.engine.rollout import Start, _Score, _Trials
    from bgbot.engine.search import lookahead_probs
    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.nets import ModelSpec, ValueNet

    torch.manual_seed(5)
    ev = NetEvaluator(ValueNet(ModelSpec(hidden=(8,))))
    met = load_met(DEFAULT_MET)
    positions = [Position.start(), Position.from_points({8: 1, 5: 1, 2: 1}, {9: 1, 4: 1, 3: 1})]
    starts = [Start(p.board, root_on_roll=True) for p in positions]
    score = _Score(met, (5, 3), False, False, 7)
    trials = _Trials(ev, starts, score, RolloutSettings(trials=1, ply=2, stratify=0), [0], seed=1)
    probs, decisions = trials._decisions(np.arange(len(positions)))
    boards = np.stack([p.array() for p in positions])
    np.testing.assert_allclose(probs, lookahead_probs(ev, boards, 1).clip(0, 1), atol=1e-12)
    for pos, q, d in zip(positions, probs, decisions, strict=True):
        _, nd, dt = match_cube_lookahead(ev, pos.array(), 1, met=met, match_length=7, away_me=5, away_opp=3)
        want = match_decision_from_mwcs(q, nd, dt, met=met, match_length=7, away_me=5, away_opp=3,
                                        x=Engine(ev, bearoff=False).cube_efficiency(pos))
        assert (d.action, d.mwc_no_double, d.mwc_double_take) == (want.action, want.mwc_no_double,
                                                                   want.mwc_double_take)


def test_a_dead_cube_is_never_turned_inside_match_trials() -> None:
    # post-Crawford at 2-1 to 3 the root (1-away) gains nothing by doubling: its cube is dead, as gnubg's
    # GetDPEq has it; the trailer (2-away) may double.  Only the trailer's decision is looked at.
    from bgbot.engine.met import DEFAULT_MET, load_met
    from bgbot.engine.rollout import Start, _Score, _Trials

    class Asked(Exception):
        pass

    engine = Engine.load()
    pos = Position.start()
    starts = [Start(pos.board, root_on_roll=True), Start(pos.board, root_on_roll=False)]
    score = _Score(load_met(DEFAULT_MET), (1, 2), False, False, 3)
    trials = _Trials(engine.evaluator, starts, score, RolloutSettings(trials=1, ply=1, stratify=0), [0], seed=1)
    asked: list[int] = []

    def ev(boards: np.ndarray) -> np.ndarray:
        asked.append(len(boards))
        raise Asked

    trials.turns = 1
    trials.ev = ev  # type: ignore[assignment]
    with pytest.raises(Asked):
        trials._cube_turn(np.arange(2))
    assert asked == [1], "the post-Crawford leader was asked whether to double"


def test_a_match_rollout_with_a_dead_cube_has_no_double_line() -> None:
    engine = Engine.load()
    quick = RolloutSettings(trials=36, truncate=2, stratify=36)
    for state in (CubeState(match=1, score=(0, 0)), CubeState(match=3, score=(2, 1))):
        result = engine.rollout(Position.start(), None, state, settings=quick, workers=1)
        assert [e.label for e in result.entries] == ["position"] and result.cube_action is None
