"""Self-labelled refinement (training/refine.py): resumable labelled chunks and a fit that learns them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.engine.search import BearoffEvaluator, lookahead_probs
from bgbot.errors import CheckpointError, ConfigError
from bgbot.eval.encoding import encode, num_inputs
from bgbot.eval.evaluate import NetEvaluator
from bgbot.eval.inference import ModelSpec
from bgbot.eval.models import load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint
from bgbot.rules.position import Position
from training.refine import GenerateConfig, ensemble, fit, generate, load_chunks, widen_net

CFG = GenerateConfig(seed=5, chunk_size=96, parallel=16, explore=0.1, keep=0.5)


@pytest.fixture
def init(tmp_path: Path) -> Path:
    torch.manual_seed(11)
    return save_checkpoint(tmp_path / "init.pt", ValueNet(ModelSpec(3, (8,))), games_trained=7)


def test_chunks_hold_positions_labelled_one_roll_ahead(tmp_path: Path, init: Path) -> None:
    out = tmp_path / "run"
    assert generate(init, out, 2, CFG, progress=False) == 2
    boards, labels, chunk = load_chunks(out)
    assert boards.shape == (192, 26) and labels.shape == (192, 5)
    assert set(chunk.tolist()) == {0, 1}
    # every label is the depth-1 lookahead of the labelling network (exact bear-offs from the database)
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    np.testing.assert_allclose(labels, lookahead_probs(ev, boards, 1), atol=1e-5)
    assert (labels >= 0).all() and (labels <= 1).all()
    assert (labels[:, 1] <= labels[:, 0] + 1e-6).all() and (labels[:, 3] <= 1 - labels[:, 0] + 1e-6).all()
    # no finished game, no exact bear-off position (play answers those from the database)
    assert not ev.db.is_bearoff(boards).any()
    assert (np.clip(boards, 0, None).sum(axis=1) > 0).all() and (np.clip(-boards, 0, None).sum(axis=1) > 0).all()


def test_a_damped_label_goes_its_step_of_the_way_from_the_network_to_the_lookahead(tmp_path: Path, init: Path) -> None:
    import dataclasses

    out = tmp_path / "half"
    assert generate(init, out, 1, dataclasses.replace(CFG, step=0.25), progress=False) == 1
    boards, labels, _ = load_chunks(out)
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    want = 0.25 * lookahead_probs(ev, boards, 1) + 0.75 * np.asarray(ev(boards), dtype=np.float64)
    np.testing.assert_allclose(labels, want, atol=1e-5)
    full_boards, full, _ = load_chunks(_one_chunk(tmp_path / "full", init))
    np.testing.assert_array_equal(full_boards, boards)
    assert np.abs(full - labels).max() > 1e-3  # the same positions (same seed), other labels


def test_a_label_between_two_depths_starts_its_step_from_the_base_depth(tmp_path: Path, init: Path) -> None:
    import dataclasses

    cfg = dataclasses.replace(CFG, chunk_size=24, depth=2, base=1, step=0.5)
    boards, labels, _ = load_chunks(_one_chunk(tmp_path / "odd-even", init, cfg))
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    want = 0.5 * lookahead_probs(ev, boards, 2) + 0.5 * lookahead_probs(ev, boards, 1)
    np.testing.assert_allclose(labels, want, atol=1e-5)
    assert np.abs(labels - lookahead_probs(ev, boards, 2)).max() > 1e-4  # not the 3-ply value alone


@pytest.mark.parametrize(
    ("depth", "base", "step"), [(1, 1, 0.5), (2, 2, 0.5), (1, -1, 0.5), (2, 1.5, 0.5), (2, 1, 1.0)]
)
def test_a_base_depth_must_be_below_the_depth_and_need_a_step(
    tmp_path: Path, init: Path, depth: int, base: object, step: float
) -> None:
    import dataclasses

    with pytest.raises(ConfigError, match="base"):
        generate(init, tmp_path / "bad", 1, dataclasses.replace(CFG, depth=depth, base=base, step=step), progress=False)
    assert not (tmp_path / "bad" / "generate.json").exists()


def _one_chunk(out: Path, init: Path, cfg: GenerateConfig = CFG) -> Path:
    generate(init, out, 1, cfg, progress=False)
    return out


@pytest.mark.parametrize("step", [0.0, -0.5, 1.5, float("nan")])
def test_a_bad_step_is_a_clear_error(tmp_path: Path, init: Path, step: float) -> None:
    import dataclasses

    with pytest.raises(ConfigError, match="step"):
        generate(init, tmp_path / "bad", 1, dataclasses.replace(CFG, step=step), progress=False)
    assert not (tmp_path / "bad" / "generate.json").exists()


def test_a_killed_run_resumes_with_the_same_data(tmp_path: Path, init: Path) -> None:
    full, cut = tmp_path / "full", tmp_path / "cut"
    generate(init, full, 3, CFG, progress=False)
    generate(init, cut, 3, CFG, progress=False)
    (cut / "data" / "chunk-00001.npz").unlink()  # as if killed before chunk 1 was written
    (cut / "data" / "chunk-00002.npz.tmp.npz").write_bytes(b"half a file")
    assert generate(init, cut, 3, CFG, progress=False) == 1
    assert not list((cut / "data").glob("*.tmp*"))
    a, b = load_chunks(full), load_chunks(cut)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_other_settings_into_the_same_folder_are_refused(tmp_path: Path, init: Path) -> None:
    generate(init, tmp_path / "run", 1, CFG, progress=False)
    with pytest.raises(ConfigError, match="choose another --out"):
        generate(init, tmp_path / "run", 1, GenerateConfig(seed=6, chunk_size=96, parallel=16), progress=False)


def test_fit_lowers_the_held_out_loss_and_saves_a_loadable_checkpoint(tmp_path: Path, init: Path) -> None:
    # labels from another (random) network: the init network is far from them and must move towards them
    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    generate(teacher, tmp_path / "run", 6, CFG, progress=False)
    summary = fit(init, tmp_path / "run", tmp_path / "fit", epochs=3, lr=3e-3, batch=32, progress=False)
    hist = summary["history"]
    assert hist[-1]["holdout_bce"] < hist[0]["holdout_bce"]  # type: ignore[index]
    assert summary["positions_holdout"] == 96  # one chunk of six held out
    refined = load_checkpoint(tmp_path / "fit" / "refined.pt")
    assert refined.data["games_trained"] == 7
    assert refined.data["config"]["refined"]["init"] == str(init)
    assert json.loads((tmp_path / "fit" / "fit.json").read_text())["best_holdout_bce"] == summary["best_holdout_bce"]


def test_a_cosine_fit_takes_its_rate_from_lr_down_to_zero(tmp_path: Path, init: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the rate of every optimiser step, read from the optimiser as the fit runs
    rates: dict[str, list[float]] = {}
    current: list[float] = []
    real_step = torch.optim.Adam.step

    def step(self: torch.optim.Adam, *a: object, **k: object) -> object:
        current.append(float(self.param_groups[0]["lr"]))
        return real_step(self, *a, **k)

    monkeypatch.setattr(torch.optim.Adam, "step", step)
    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    generate(teacher, tmp_path / "run", 6, CFG, progress=False)
    for schedule in ("constant", "cosine"):
        current.clear()
        fit(init, tmp_path / "run", tmp_path / schedule, epochs=3, lr=1e-2, batch=16, progress=False,
            schedule=schedule)
        rates[schedule] = list(current)
    assert len(rates["cosine"]) == len(rates["constant"]) > 20
    assert set(rates["constant"]) == {1e-2}
    cos = np.array(rates["cosine"])
    assert cos[0] == pytest.approx(1e-2) and cos[-1] < 1e-4 and np.all(np.diff(cos) <= 0)
    assert cos[len(cos) // 2] == pytest.approx(5e-3, rel=0.1)  # half way down the cosine, half the rate
    refined = load_checkpoint(tmp_path / "cosine" / "refined.pt").data["config"]["refined"]
    assert refined["schedule"] == "cosine"
    with pytest.raises(ConfigError, match="'linear'"):
        fit(init, tmp_path / "run", tmp_path / "bad", schedule="linear", progress=False)


def test_a_fit_that_never_beats_its_start_writes_nothing(tmp_path: Path, init: Path) -> None:
    from training.refine import NoImprovement

    generate(init, tmp_path / "run", 4, CFG, progress=False)
    stale = tmp_path / "fit" / "refined.pt"
    stale.parent.mkdir()
    stale.write_bytes(b"an earlier fit's file")
    # a rate this high throws the weights far from the start: every epoch's held-out loss is worse than epoch 0's
    with pytest.raises(NoImprovement, match=r"no epoch improved .*init.pt'.s main network"):
        fit(init, tmp_path / "run", tmp_path / "fit", epochs=1, lr=0.9, batch=16, progress=False)
    assert not stale.exists()  # the earlier file does not pass for this fit's
    summary = json.loads((tmp_path / "fit" / "fit.json").read_text())
    assert summary["history"][1]["holdout_bce"] > summary["history"][0]["holdout_bce"]


def test_keep_last_writes_the_last_epoch_even_when_the_held_out_loss_rose(tmp_path: Path, init: Path) -> None:
    """keep="last" writes the last epoch's network where "best" would write none; "best" names the epoch it kept."""

    generate(init, tmp_path / "run", 4, CFG, progress=False)
    # the rate of the test above: every epoch's held-out loss is worse than the start's
    summary = fit(init, tmp_path / "run", tmp_path / "last", epochs=1, lr=0.9, batch=16, progress=False, keep="last")
    hist = summary["history"]
    assert hist[1]["holdout_bce"] > hist[0]["holdout_bce"] and summary["kept_epoch"] == 1
    assert summary["kept_holdout_bce"] == hist[1]["holdout_bce"]
    assert summary["best_holdout_bce"] == hist[0]["holdout_bce"]  # the least loss seen, not the network written
    written = load_checkpoint(tmp_path / "last" / "refined.pt")
    assert written.data["config"]["refined"]["keep"] == "last"
    start = load_checkpoint(init)
    assert any(not torch.equal(a, b) for a, b in zip(start.net.state_dict().values(),
                                                       written.net.state_dict().values(), strict=True))
    # a gentle rate improves on the start: "best" writes the epoch of least held-out loss and says which
    best = fit(init, tmp_path / "run", tmp_path / "best", epochs=3, lr=1e-3, batch=16, progress=False)
    losses = [h["holdout_bce"] for h in best["history"]]
    assert best["kept_epoch"] == int(np.argmin(losses)) > 0
    assert "keep" not in load_checkpoint(tmp_path / "best" / "refined.pt").data["config"]["refined"]
    with pytest.raises(ConfigError, match="keep 'first': choose best or last"):
        fit(init, tmp_path / "run", tmp_path / "bad", keep="first", progress=False)


def test_fit_without_data_is_a_clear_error(tmp_path: Path, init: Path) -> None:
    with pytest.raises(ConfigError, match="run generate first"):
        fit(init, tmp_path / "nothing", tmp_path / "fit", progress=False)


def test_candidate_mode_keeps_the_best_plays_of_real_choices(tmp_path: Path, init: Path) -> None:
    from bgbot.rules.movegen import successors_batch
    from bgbot.rules.position import Position
    from training.refine import _top_plays

    start = Position.start().array()[None, :]
    boards = np.repeat(start, 3, axis=0)
    succ, parent = successors_batch(boards, np.array([[3, 1], [6, 6], [2, 1]]))
    value = np.random.default_rng(1).random(len(succ))
    rows = _top_plays(value, parent, np.array([True, False, True]), 3)
    assert sorted(set(parent[rows].tolist())) == [0, 2] and len(rows) == 6
    for g in (0, 2):
        mine = value[parent == g]
        assert sorted(value[rows][parent[rows] == g].tolist()) == sorted(mine)[-3:]
    cfg = GenerateConfig(seed=5, chunk_size=64, parallel=16, keep=0.5, candidates=4)
    generate(init, tmp_path / "run", 1, cfg, progress=False)
    got, labels, _ = load_chunks(tmp_path / "run")
    assert got.shape == (64, 26) and np.isfinite(labels).all()
    assert not (got == start).all(axis=1).any()  # after-move positions, never the starting position


def test_a_refinement_ships_as_a_numpy_model(tmp_path: Path, init: Path) -> None:
    from bgbot.eval.nets import to_numpy
    from training.ship import ship

    generate(init, tmp_path / "run", 2, CFG, progress=False)
    fit(init, tmp_path / "run", tmp_path / "fit", epochs=1, lr=3e-3, batch=32, progress=False)
    shipped = ship(tmp_path / "fit", "m", tmp_path / "ckpt", tmp_path / "models", refined=True)
    model = load_model(shipped)
    want = to_numpy(load_checkpoint(tmp_path / "fit" / "refined.pt").net)
    for (w, b), (w2, b2) in zip(model.net.layers, want.layers, strict=True):
        np.testing.assert_array_equal(w, w2)
        np.testing.assert_array_equal(b, b2)
    assert model.data["config"]["refined"]["init"] == str(init)
    assert sorted(p.name for p in (tmp_path / "ckpt" / "m-refine").iterdir()) == ["fit.json"]


def test_one_or_two_workers_make_the_same_chunks(tmp_path: Path, init: Path) -> None:
    assert generate(init, tmp_path / "one", 3, CFG, progress=False, workers=1) == 3
    assert generate(init, tmp_path / "two", 3, CFG, progress=False, workers=2) == 3
    for x, y in zip(load_chunks(tmp_path / "one"), load_chunks(tmp_path / "two"), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.slow
def test_a_local_ray_cluster_makes_the_same_chunks(tmp_path: Path, init: Path) -> None:
    import ray

    generate(init, tmp_path / "local", 2, CFG, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert generate(init, tmp_path / "ray", 2, CFG, progress=False, executor="ray", workers=2) == 2
    finally:
        ray.shutdown()
    for x, y in zip(load_chunks(tmp_path / "local"), load_chunks(tmp_path / "ray"), strict=True):
        np.testing.assert_array_equal(x, y)

def test_mining_keeps_only_rolls_whose_choice_changes_at_2_ply(init: Path) -> None:
    from bgbot.eval.evaluate import equity
    from bgbot.rules.movegen import successors_batch
    from bgbot.rules.position import Position
    from training.refine import _disputed, _top_plays

    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    boards = np.repeat(Position.start().array()[None, :], 15, axis=0)
    dice = np.array([(a, b) for a in range(1, 7) for b in range(1, 7) if a < b])
    succ, parent = successors_batch(boards, dice)
    value = -equity(ev(succ))
    top = _top_plays(value, parent, np.ones(15, dtype=bool), 4)
    kept = _disputed(ev, succ, parent, top)
    deep = -equity(lookahead_probs(ev, succ, 1))
    seen = 0
    for g in range(15):
        rows = top[parent[top] == g]
        disputed = int(np.argmax(deep[rows])) != 0  # rows are best-first by 1-ply
        assert set(kept[parent[kept] == g].tolist()) == (set(rows.tolist()) if disputed else set())
        seen += disputed
    assert 0 < seen < 15  # a random net disagrees with itself on some rolls, not on all
    cfg = GenerateConfig(seed=5, chunk_size=48, parallel=16, keep=0.5, candidates=3, mine=True)
    assert generate(init, Path(str(init) + "-mined"), 1, cfg, progress=False) == 1


def test_fit_weighs_each_data_folder(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    generate(teacher, tmp_path / "a", 3, CFG, progress=False)
    generate(init, tmp_path / "b", 3, GenerateConfig(seed=9, chunk_size=96, parallel=16), progress=False)
    data = [tmp_path / "a", tmp_path / "b"]
    with pytest.raises(ConfigError, match="one positive number per data folder"):
        fit(init, data, tmp_path / "bad", weights=[1.0], progress=False)
    with pytest.raises(ConfigError, match=r"\[1.0, 0.0\]"):
        fit(init, data, tmp_path / "bad", weights=[1.0, 0.0], progress=False)
    # the teacher's labels weigh 50 times the init network's own: the fit moves towards the teacher
    fit(init, data, tmp_path / "fit", epochs=3, lr=3e-3, batch=32, weights=[50.0, 1.0], progress=False)
    net = load_checkpoint(tmp_path / "fit" / "refined.pt").net
    assert load_checkpoint(tmp_path / "fit" / "refined.pt").data["config"]["refined"]["weights"] == [50.0, 1.0]
    boards, labels, _ = load_chunks(tmp_path / "a")
    from bgbot.eval.encoding import encode

    def loss(n: ValueNet) -> float:
        with torch.inference_mode():
            x = torch.from_numpy(encode(boards, 3))
            return float(torch.nn.functional.binary_cross_entropy_with_logits(n(x), torch.from_numpy(labels)))

    assert loss(net) < loss(load_checkpoint(init).net)


@pytest.mark.parametrize("name", ["2ply", "3ply-mined"])
def test_the_shipped_presets_load(name: str) -> None:
    from training.refine import load_preset

    gen, fc = load_preset(Path(__file__).resolve().parents[1] / "configs" / "refine" / f"{name}.toml")
    assert gen.candidates == 4 and fc.epochs >= 1
    assert (gen.depth, gen.mine) == ((2, True) if "3ply" in name else (1, False))


@pytest.mark.parametrize(("name", "depth"), [("2ply-rank", 1), ("3ply-rank", 2)])
def test_the_rank_presets_store_groups_of_six_plays_and_fit_their_differences(name: str, depth: int) -> None:
    from training.refine import load_preset

    gen, fc = load_preset(Path(__file__).resolve().parents[1] / "configs" / "refine" / f"{name}.toml")
    assert (gen.candidates, gen.depth, gen.step, gen.mine, gen.classes) == (6, depth, 1.0, False, "contact")
    assert fc.rank > 0


def test_the_rollout_preset_labels_contact_positions_by_rollout() -> None:
    from training.refine import load_preset, rollout_settings

    gen, _ = load_preset(Path(__file__).resolve().parents[1] / "configs" / "refine" / "rollout-contact.toml")
    assert (gen.label, gen.classes, gen.trials, gen.truncate, gen.luck) == ("rollout", "contact", 36, 7, False)
    assert rollout_settings(gen, 3).seed != rollout_settings(gen, 4).seed  # each chunk its own dice


@pytest.mark.parametrize(("name", "cls"), [("race-rollout-rank", "race"), ("crashed-rollout-rank", "crashed")])
def test_the_class_rollout_presets_roll_six_plays_out_to_the_end_on_common_dice(name: str, cls: str) -> None:
    from training.refine import load_preset, rollout_settings

    gen, fc = load_preset(Path(__file__).resolve().parents[1] / "configs" / "refine" / f"{name}.toml")
    assert (gen.label, gen.classes, gen.candidates, gen.trials, gen.truncate, gen.common_dice) == (
        "rollout", cls, 6, 36, 0, True)
    if cls == "crashed":  # the race preset leaves its fit to the pipeline's [fit.race]
        assert (fc.net, fc.rank, fc.epochs, fc.lr, fc.schedule) == ("crashed", 3.0, 8, 1e-3, "cosine")
    assert rollout_settings(gen, 0).seed != rollout_settings(gen, 1).seed



def test_bad_presets_are_clear_errors(tmp_path: Path) -> None:
    from training.refine import load_preset

    bad = tmp_path / "bad.toml"
    for text, message in [("[generate]\nkeep = 'many'\n", "keep"), ("[generate]\nbogus = 1\n", "unknown key 'bogus'"),
                          ("[train]\nx = 1\n", "unknown tables"), ("[fit\n", "not valid TOML")]:
        bad.write_text(text)
        with pytest.raises(ConfigError, match=message):
            load_preset(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_preset(tmp_path / "missing.toml")


def test_command_line_options_override_the_preset(tmp_path: Path, init: Path) -> None:
    from training.refine import main

    preset = tmp_path / "p.toml"
    preset.write_text("[generate]\nseed = 4\nchunk_size = 500\nparallel = 8\nkeep = 0.5\ncandidates = 2\n")
    main(["generate", "--config", str(preset), "--model", str(init), "--out", str(tmp_path / "run"), "--chunks", "1",
          "--chunk-size", "40", "--mine"])
    meta = json.loads((tmp_path / "run" / "generate.json").read_text())["config"]
    assert (meta["seed"], meta["chunk_size"], meta["parallel"], meta["candidates"], meta["mine"]) == (4, 40, 8, 2, True)
    assert load_chunks(tmp_path / "run")[0].shape == (40, 26)


# ---- rollout labels ---------------------------------------------------------------------


def test_rollout_labels_are_the_rollouts_of_the_sampled_positions(tmp_path: Path, init: Path) -> None:
    import dataclasses

    from bgbot.engine.api import Engine
    from bgbot.engine.rollout import RolloutSettings, row_seed
    from bgbot.rules.position import Position
    from training.refine import rollout_settings

    cfg = dataclasses.replace(CFG, chunk_size=12, label="rollout", trials=36, truncate=3)
    out = tmp_path / "ro"
    assert generate(init, out, 1, cfg, progress=False) == 1
    boards, labels, _ = load_chunks(out)
    assert boards.shape == (12, 26) and labels.shape == (12, 5)
    # each label is the cubeless rollout of its position that Engine.rollout reports, on dice of its own
    # (row k's are those of a rollout seeded row_seed(seed, k)): the labels' noise is independent
    st = rollout_settings(cfg, 0)
    assert (st.trials, st.truncate, st.cubeful, st.luck, st.stratify) == (36, 3, False, False, 36)
    engine = Engine.load(init)
    for k, (b, lab) in enumerate(list(zip(boards, labels, strict=True))[:3]):
        own = RolloutSettings(**{**st.__dict__, "seed": row_seed(st.seed, k)})
        e = engine.rollout(Position.from_array(b), None, settings=own).entries[0]
        np.testing.assert_allclose(lab, np.clip(e.mean[:5], 0, 1), atol=2e-6)
    # and not the lookahead value (this untrained network is near 0.5 everywhere: the kinds differ a little)
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    assert np.abs(labels - lookahead_probs(ev, boards, 1)).max() > 1e-3
    assert (labels[:, 1] <= labels[:, 0] + 1e-6).all() and (labels[:, 2] <= labels[:, 1] + 1e-6).all()


def test_rollout_probs_dice_shared_or_per_row() -> None:
    from bgbot.engine.api import Engine
    from bgbot.engine.rollout import RolloutSettings, rollout_probs
    from bgbot.rules.position import Position

    engine = Engine.load()
    race = Position.from_points({9: 3, 8: 3, 6: 3, 5: 2, 4: 2, 3: 2}, {10: 3, 8: 3, 6: 3, 4: 3, 3: 2, 2: 1}).array()
    twins = np.stack([race, race, race])
    st = RolloutSettings(trials=36, truncate=40, cubeful=False, luck=False, seed=3)
    shared = rollout_probs(engine.evaluator, twins, st)
    own = rollout_probs(engine.evaluator, twins, st, dice_per_row=True)
    # the same dice for every row: three copies of one position get one figure (common random numbers) ...
    np.testing.assert_array_equal(shared[0], shared[1])
    np.testing.assert_array_equal(shared[0], shared[2])
    # ... dice of their own: three independent estimates of it, and the same ones again for the same seed
    assert len({round(float(w), 6) for w in own[:, 0]}) == 3
    np.testing.assert_array_equal(own, rollout_probs(engine.evaluator, twins, st, dice_per_row=True))
    # the first roll stays stratified either way: 36 trials, a race, so the estimates stay close
    assert np.abs(own[:, 0] - shared[0, 0]).max() < 0.25


def test_rollout_probs_dice_groups_share_dice_within_a_group_only() -> None:
    from bgbot.engine.api import Engine
    from bgbot.engine.rollout import RolloutSettings, rollout_probs
    from bgbot.rules.position import Position

    engine = Engine.load()
    race = Position.from_points({9: 3, 8: 3, 6: 3, 5: 2, 4: 2, 3: 2}, {10: 3, 8: 3, 6: 3, 4: 3, 3: 2, 2: 1}).array()
    other = Position.from_points({9: 2, 8: 4, 6: 3, 5: 2, 4: 2, 3: 2}, {10: 3, 8: 3, 6: 3, 4: 3, 3: 2, 2: 1}).array()
    rows = np.stack([race, race, race, race])
    st = RolloutSettings(trials=36, truncate=40, cubeful=False, luck=False, seed=3)
    got = rollout_probs(engine.evaluator, rows, st, dice_groups=np.array([0, 0, 1, 1]))
    # one group, one set of dice: the copies agree; two groups, independent dice: the groups differ
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[2], got[3])
    assert abs(float(got[0, 0] - got[2, 0])) > 1e-6
    # group g rolls the dice row g gets with dice_per_row, whatever else is in the batch
    own = rollout_probs(engine.evaluator, rows, st, dice_per_row=True)
    np.testing.assert_array_equal(got[0], own[0])
    np.testing.assert_array_equal(got[2], own[1])
    # plays compared on common dice: a different position in the same group rolls the same dice
    mixed = rollout_probs(engine.evaluator, np.stack([race, other]), st, dice_groups=np.array([1, 1]))
    np.testing.assert_array_equal(mixed[0], got[2])
    with pytest.raises(ConfigError, match="3 dice groups for 4 rows"):
        rollout_probs(engine.evaluator, rows, st, dice_groups=np.array([0, 0, 1]))
    with pytest.raises(ConfigError, match="not both"):
        rollout_probs(engine.evaluator, rows, st, dice_per_row=True, dice_groups=np.zeros(4, dtype=np.int64))


def test_rollout_probs_of_a_sure_thing_is_exact() -> None:
    from bgbot.engine.api import Engine
    from bgbot.engine.rollout import RolloutSettings, rollout_probs
    from bgbot.rules.position import Position

    engine = Engine.load()
    won = Position.from_points({1: 1}, {13: 15}).array()  # one checker left on the 1-point: a gammon win
    st = RolloutSettings(trials=36, truncate=5, cubeful=False, luck=False)
    np.testing.assert_array_equal(rollout_probs(engine.evaluator, won[None], st), [[1, 1, 0, 0, 0]])
    assert rollout_probs(engine.evaluator, np.zeros((0, 26), dtype=np.int8), st).shape == (0, 5)
    with pytest.raises(ConfigError, match="cubeless"):
        rollout_probs(engine.evaluator, won[None], RolloutSettings(trials=36))


@pytest.mark.parametrize(
    "change,match",
    [({"label": "rolout"}, "label 'rolout': choose lookahead or rollout"),
     ({"label": "rollout", "trials": 40}, "trials 40 must be a multiple of 36"),
     ({"label": "rollout", "truncate": -1}, "truncate must be a whole number")],
)
def test_bad_rollout_label_settings_are_clear_errors(tmp_path: Path, init: Path, change: dict, match: str) -> None:
    import dataclasses

    with pytest.raises(ConfigError, match=match):
        generate(init, tmp_path / "bad", 1, dataclasses.replace(CFG, **change), progress=False)
    assert not (tmp_path / "bad" / "generate.json").exists()


# ---- a fresh, wider main network; class networks from another model ------------------------------------


def test_a_fresh_network_is_fitted_from_seeded_random_weights(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(13)
    race = ValueNet(ModelSpec(3, (6,)))
    with_race = save_checkpoint(tmp_path / "with-race.pt", load_checkpoint(init).net, class_nets={"race": race})
    generate(init, tmp_path / "run", 3, CFG, progress=False)
    runs = []
    for k in ("a", "b"):
        fit(with_race, tmp_path / "run", tmp_path / k, epochs=1, lr=3e-3, batch=32, progress=False, fresh=12,
            fresh_seed=9)
        runs.append(load_checkpoint(tmp_path / k / "refined.pt"))
    a, b = runs
    # the main network is new and wider (init's has 8 units), the class network is init's, untouched
    assert a.net.spec.hidden == (12,) and a.net.spec.encoding_version == 3
    assert torch.equal(a.class_nets["race"].body[0].weight, race.body[0].weight)
    # the same fresh seed gives the same network; another seed another
    for pa, pb in zip(a.net.parameters(), b.net.parameters(), strict=True):
        assert torch.equal(pa, pb)
    fit(with_race, tmp_path / "run", tmp_path / "c", epochs=1, lr=3e-3, batch=32, progress=False, fresh=12,
        fresh_seed=10)
    c = load_checkpoint(tmp_path / "c" / "refined.pt")
    assert not torch.equal(c.net.body[0].weight, a.net.body[0].weight)
    assert a.data["config"]["refined"]["fresh"] == 12
    with pytest.raises(ConfigError, match="main network only"):
        fit(with_race, tmp_path / "run", tmp_path / "d", epochs=1, progress=False, fresh=12, net_name="race")


def test_a_widened_network_computes_the_same_function_and_then_learns(tmp_path: Path, init: Path) -> None:
    base = load_checkpoint(init).net
    wide = widen_net(base, 20, seed=3)
    assert wide.spec.hidden == (20,) and wide.spec.encoding_version == base.spec.encoding_version
    x = np.random.default_rng(4).random((64, base.body[0].in_features), dtype=np.float32)
    np.testing.assert_allclose(wide.probs(x), base.probs(x), rtol=0, atol=1e-6)
    # the new units are random features (not copies, not zero) and feed nothing yet
    assert float(wide.body[0].weight[8:].detach().abs().sum()) > 0
    assert float(wide.body[-1].weight[:, 8:].detach().abs().sum()) == 0
    assert not torch.equal(widen_net(base, 20, seed=4).body[0].weight, wide.body[0].weight)
    for bad in (8, 4):
        with pytest.raises(ConfigError, match=f"widen {bad}"):
            widen_net(base, bad)
    with pytest.raises(ConfigError, match="one-hidden-layer"):
        widen_net(ValueNet(ModelSpec(3, (6, 4))), 12)
    # fitting from the widened network: the written model is wide, trained, and records how it was made
    generate(init, tmp_path / "run", 3, CFG, progress=False)
    summary = fit(init, tmp_path / "run", tmp_path / "w", epochs=2, lr=3e-3, batch=32, progress=False, widen=20,
                  fresh_seed=3)
    history = summary["history"]
    assert isinstance(history, list) and history[-1]["holdout_bce"] < history[0]["holdout_bce"]
    out = load_checkpoint(tmp_path / "w" / "refined.pt")
    assert out.net.spec.hidden == (20,) and out.data["config"]["refined"]["widen"] == 20
    assert float(out.net.body[-1].weight[:, 8:].detach().abs().sum()) > 0
    # epoch 0 of the wide fit is init's own loss: the widening itself changed nothing
    base_fit = fit(init, tmp_path / "run", tmp_path / "n", epochs=1, lr=3e-3, batch=32, progress=False)
    assert abs(history[0]["holdout_bce"] - base_fit["history"][0]["holdout_bce"]) < 1e-6
    with pytest.raises(ConfigError, match="main network only"):
        fit(init, tmp_path / "run", tmp_path / "x", epochs=1, progress=False, widen=20, net_name="race")


def test_a_fit_can_move_init_to_a_longer_encoding(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(15)
    race = ValueNet(ModelSpec(3, (6,)))
    with_race = save_checkpoint(tmp_path / "with-race.pt", load_checkpoint(init).net, class_nets={"race": race})
    generate(init, tmp_path / "run", 3, CFG, progress=False)
    # epoch 0 is init's own loss: the move to version 4 computes the same function
    base = fit(with_race, tmp_path / "run", tmp_path / "v3", epochs=1, lr=3e-3, batch=32, progress=False)
    moved = fit(with_race, tmp_path / "run", tmp_path / "v4", epochs=2, lr=3e-3, batch=32, progress=False,
                encoding=4)
    assert abs(moved["history"][0]["holdout_bce"] - base["history"][0]["holdout_bce"]) < 1e-6
    out = load_checkpoint(tmp_path / "v4" / "refined.pt")
    assert out.net.spec.encoding_version == 4 and out.class_nets["race"].spec.encoding_version == 4
    assert out.data["config"]["refined"]["encoding"] == 4
    first = out.net.body[0].weight.detach()
    assert float(first[:, num_inputs(3):].abs().sum()) > 0  # the fit uses the new inputs
    # a fresh or a widened network takes the new encoding too
    for kw in ({"fresh": 10}, {"widen": 12}):
        fit(with_race, tmp_path / "run", tmp_path / "k", epochs=1, lr=3e-3, batch=32, progress=False, encoding=4,
            **kw)
        assert load_checkpoint(tmp_path / "k" / "refined.pt").net.spec.encoding_version == 4
    with pytest.raises(ConfigError, match="encoding 2"):
        fit(with_race, tmp_path / "run", tmp_path / "x", epochs=1, progress=False, encoding=2)


def test_class_networks_can_come_from_another_model(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(14)
    crashed = ValueNet(ModelSpec(3, (5,)))
    donor = save_checkpoint(tmp_path / "donor.pt", ValueNet(ModelSpec(3, (8,))), class_nets={"crashed": crashed})
    generate(init, tmp_path / "run", 2, CFG, progress=False)
    # init (like a TD run's checkpoint) has no class networks; the written model carries the donor's
    fit(init, tmp_path / "run", tmp_path / "fit", epochs=1, lr=3e-3, batch=32, progress=False,
        class_nets_from=donor)
    out = load_checkpoint(tmp_path / "fit" / "refined.pt")
    assert list(out.class_nets) == ["crashed"]
    assert torch.equal(out.class_nets["crashed"].body[0].weight, crashed.body[0].weight)
    assert out.net.spec.hidden == (8,)


@pytest.mark.parametrize("name", ["fresh256", "3ply-main256"])
def test_the_generation_5_presets_load(name: str) -> None:
    from bgbot.config import load_config
    from training.config import TrainConfig
    from training.refine import load_preset

    root = Path(__file__).resolve().parents[1]
    _, fc = load_preset(root / "configs" / "refine" / f"{name}.toml")
    assert (fc.fresh, fc.epochs) == ((256, 15) if name == "fresh256" else (0, 8))
    td = load_config(TrainConfig, root / "configs" / "td256.toml")
    assert td.hidden == (256,) and td.init_from == "runs/fit-fresh256/refined.pt"


def test_average_is_the_weighted_mean_of_every_network(tmp_path: Path) -> None:
    """refine average: main and class networks are the weighted means of their counterparts."""
    from training.refine import average, main

    spec = ModelSpec(3, (8,))
    paths = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        paths.append(save_checkpoint(tmp_path / f"m{seed}.pt", ValueNet(spec), class_nets={"race": ValueNet(spec)},
                                     games_trained=seed * 100))
    summary = average(paths, [3.0, 1.0], tmp_path / "avg")
    assert summary["average"] == {"models": [str(p) for p in paths], "weights": [0.75, 0.25], "class_nets_from": ""}
    a, b, got = (load_checkpoint(p) for p in (*paths, tmp_path / "avg" / "refined.pt"))
    for name, want in got.net.state_dict().items():
        torch.testing.assert_close(want, 0.75 * a.net.state_dict()[name] + 0.25 * b.net.state_dict()[name])
    for name, want in got.class_nets["race"].state_dict().items():
        mix = 0.75 * a.class_nets["race"].state_dict()[name] + 0.25 * b.class_nets["race"].state_dict()[name]
        torch.testing.assert_close(want, mix)
    assert got.data["games_trained"] == 200
    assert json.loads((tmp_path / "avg" / "average.json").read_text())["class_nets"] == ["race"]
    # the command line, equal weights by default; the model plays
    main(["average", "--models", str(paths[0]), str(paths[1]), "--out", str(tmp_path / "eq")])
    eq = load_checkpoint(tmp_path / "eq" / "refined.pt")
    for name, want in eq.net.state_dict().items():
        torch.testing.assert_close(want, (a.net.state_dict()[name] + b.net.state_dict()[name]) / 2)
    start = np.array([Position.start().board], dtype=np.int8)
    probs = NetEvaluator(load_model(tmp_path / "eq" / "refined.pt").net)(start)
    assert probs.shape == (1, 5) and 0 < probs[0, 0] < 1
    # an average ships as a refinement does, its record beside it
    from training.ship import ship

    shipped = ship(tmp_path / "eq", "m", tmp_path / "ckpt", tmp_path / "models", refined=True)
    np.testing.assert_allclose(NetEvaluator(load_model(shipped).net)(start), probs, atol=1e-6)
    assert json.loads((tmp_path / "ckpt" / "m-refine" / "average.json").read_text())["average"]["weights"] == [0.5, 0.5]


def test_average_refuses_what_it_cannot_mean(tmp_path: Path) -> None:
    from bgbot.errors import CheckpointError
    from training.refine import average

    torch.manual_seed(1)
    small = save_checkpoint(tmp_path / "small.pt", ValueNet(ModelSpec(3, (8,))))
    wide = save_checkpoint(tmp_path / "wide.pt", ValueNet(ModelSpec(3, (16,))))
    classy = save_checkpoint(tmp_path / "classy.pt", ValueNet(ModelSpec(3, (8,))),
                             class_nets={"crashed": ValueNet(ModelSpec(3, (8,)))})
    with pytest.raises(CheckpointError, match="only networks of one shape"):
        average([small, wide], None, tmp_path / "x")
    with pytest.raises(CheckpointError, match="different class networks"):
        average([small, classy], None, tmp_path / "x")
    # ... unless the class networks come from elsewhere: then only the main networks are averaged
    average([small, classy], None, tmp_path / "y", class_nets_from=classy)
    got, want = load_checkpoint(tmp_path / "y" / "refined.pt"), load_checkpoint(classy)
    assert list(got.class_nets) == ["crashed"]
    for name, value in got.class_nets["crashed"].state_dict().items():
        torch.testing.assert_close(value, want.class_nets["crashed"].state_dict()[name])
    # one model and class networks from another: that model's main network with them
    average([small], None, tmp_path / "z", class_nets_from=classy)
    one = load_checkpoint(tmp_path / "z" / "refined.pt")
    assert list(one.class_nets) == ["crashed"]
    for name, value in one.net.state_dict().items():
        torch.testing.assert_close(value, load_checkpoint(small).net.state_dict()[name])
    with pytest.raises(ConfigError, match="two or more models"):
        average([small], None, tmp_path / "x")
    with pytest.raises(ConfigError, match="positive"):
        average([small, small], [1.0, 0.0], tmp_path / "x")
    with pytest.raises(ConfigError, match="one weight per model"):
        average([small, small], [1.0], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_positions_from_game_records_are_labelled_once_each(tmp_path: Path, init: Path) -> None:
    import dataclasses

    from bgbot.formats.records import read_match
    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules

    games = tmp_path / "games"
    run_pit("pubeval", "random", PitConfig(games=4, seed=2, rules=Rules(cube=False), save_games=str(games)))
    played = {a.position.board for f in sorted(games.iterdir()) for g in read_match(f).games for a in g.moves}
    cfg = dataclasses.replace(CFG, records=str(games), chunk_size=32, classes="contact")
    out = tmp_path / "run"
    assert generate(init, out, 2, cfg, progress=False) == 2
    boards, labels, _ = load_chunks(out)
    rows = [tuple(int(x) for x in b) for b in boards]
    assert len(rows) == 64 and len(set(rows)) == 64, "each position once"
    assert set(rows) <= played, "only positions the games reached, before a checker play"
    assert all(Position(r).classify().name == "CONTACT" for r in rows)
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    np.testing.assert_allclose(labels, lookahead_probs(ev, boards, 1), atol=1e-5)
    assert json.loads((out / "generate.json").read_text())["records_sha256"]
    # more chunks than the games fill, other games into the same folder, no records: clear errors
    with pytest.raises(ConfigError, match=r"fill \d+ chunks of 32, not 1000"):
        generate(init, tmp_path / "many", 1000, cfg, progress=False)
    assert not (tmp_path / "many").exists(), "refused before anything is written"
    run_pit("pubeval", "random", PitConfig(games=2, seed=3, rules=Rules(cube=False), save_games=str(games)))
    with pytest.raises(ConfigError, match="choose another --out"):
        generate(init, out, 2, cfg, progress=False)
    with pytest.raises(ConfigError, match="'nowhere'"):
        generate(init, tmp_path / "none", 1, dataclasses.replace(cfg, records="nowhere"), progress=False)


def test_record_candidates_are_one_rolls_best_plays_rolled_out_on_common_dice(tmp_path: Path, init: Path) -> None:
    import dataclasses

    from bgbot.engine.rollout import rollout_probs
    from bgbot.eval.bearoff import get_bearoff_db
    from bgbot.eval.evaluate import equity
    from bgbot.play.pit import PitConfig, run_pit
    from bgbot.play.table import Rules
    from bgbot.rules.movegen import successors_batch
    from training.refine import (
        _pack,
        _unpack,
        label_chunk_task,
        load_groups,
        record_positions,
        rollout_settings,
    )

    games = tmp_path / "games"
    run_pit("pubeval", "random", PitConfig(games=4, seed=2, rules=Rules(cube=False), save_games=str(games)))
    cfg = dataclasses.replace(CFG, records=str(games), chunk_size=16, classes="contact", candidates=3,
                              label="rollout", trials=36, truncate=2, common_dice=True)
    out = tmp_path / "run"
    assert generate(init, out, 1, cfg, progress=False) == 1
    boards, labels, _ = load_chunks(out)
    groups = load_groups(out)
    pool = record_positions(cfg, get_bearoff_db())[:16]
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    assert len(boards) > 16, "several plays of most rolls"
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        assert 2 <= len(rows) <= 3
        # the rows of a group are the best plays (by 1-ply) of one roll in one of the recorded positions
        found = False
        for b in pool:
            for d1 in range(1, 7):
                for d2 in range(d1, 7):
                    succ, _ = successors_batch(b[None], np.array([[d1, d2]]))
                    keys = {s.tobytes() for s in succ}
                    if all(boards[r].tobytes() in keys for r in rows):
                        best = np.sort(-equity(ev(succ)))[::-1][: len(rows)]
                        np.testing.assert_allclose(np.sort(-equity(ev(boards[rows])))[::-1], best, atol=1e-6)
                        found = True
        assert found, f"group {g} is not one roll's plays"
    # the labels are rollouts with the plays of a roll on common dice (the task's own dice groups)
    raw = label_chunk_task(ev, {"config": cfg.__dict__, "chunk": 0, "boards": _pack(pool)}, cfg.seed)
    again = rollout_probs(ev, boards, rollout_settings(cfg, 0), dice_groups=_unpack(raw["groups"]))
    np.testing.assert_allclose(labels, again, atol=1e-6)
    own = rollout_probs(ev, boards, rollout_settings(cfg, 0), dice_per_row=True)
    assert np.abs(labels - own).max() > 1e-4
    # without common_dice every play keeps dice of its own, as the candidates of self-play always had
    apart = dataclasses.replace(cfg, common_dice=False)
    raw = label_chunk_task(ev, {"config": apart.__dict__, "chunk": 0, "boards": _pack(pool)}, cfg.seed)
    np.testing.assert_allclose(_unpack(raw["labels"]), own, atol=1e-6)
    with pytest.raises(ConfigError, match="common_dice: for rollout labels of candidates"):
        generate(init, tmp_path / "bad", 1, dataclasses.replace(cfg, candidates=0), progress=False)


def test_candidate_rows_are_stored_as_groups_of_one_rolls_plays(tmp_path: Path, init: Path) -> None:
    import dataclasses

    from bgbot.eval.evaluate import equity
    from training.refine import load_groups

    cfg = dataclasses.replace(CFG, candidates=3, keep=0.3)
    generate(init, tmp_path / "grouped", 2, cfg, progress=False)
    boards, _, chunk = load_chunks(tmp_path / "grouped")
    groups = load_groups(tmp_path / "grouped")
    assert groups.shape == (len(boards),)
    sizes = np.bincount(groups)
    assert sizes.max() == 3 and (sizes[sizes > 0] <= 3).all() and (sizes >= 2).sum() > 10
    # a group never spans two chunks (numbers are unique across the folder)
    for g in np.flatnonzero(sizes >= 2):
        assert len(set(chunk[groups == g].tolist())) == 1
    # the rows of a group are different plays of one roll, best first by the sampling network's 1-ply value:
    # from the opponent's view each, so the mover's equity (minus theirs) falls down the group
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    mover = -equity(np.asarray(ev(boards), dtype=np.float64))
    for g in np.flatnonzero(sizes >= 2)[:30]:
        rows = np.flatnonzero(groups == g)
        assert len({boards[r].tobytes() for r in rows}) == len(rows)
        assert (np.diff(mover[rows]) <= 1e-6).all()
        # plays of one roll from one position: the same checkers in all, the mover's pip count lower by the same dice
        assert len({int(np.clip(-boards[r], 0, None).sum()) for r in rows}) == 1
    # without candidates every row is a group of its own; chunks written before groups read the same way
    generate(init, tmp_path / "plain", 1, CFG, progress=False)
    plain = load_groups(tmp_path / "plain")
    assert sorted(plain.tolist()) == list(range(len(plain)))


def test_the_sibling_loss_reads_only_equity_differences_within_a_group() -> None:
    from training.refine import sibling_loss

    torch.manual_seed(3)
    y = torch.rand(6, 5) * 0.3
    y[:, 0] = 0.2 + 0.6 * torch.rand(6)
    logits = torch.randn(6, 5)
    group = torch.tensor([0, 0, 0, 1, 1, 2])
    loss = sibling_loss(logits, y, group).item()
    eq = lambda p: 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]  # noqa: E731
    d = (eq(torch.sigmoid(logits)) - eq(y)).numpy()
    want = sum(((d[idx] - d[idx].mean()) ** 2).sum() for idx in ([0, 1, 2], [3, 4], [5]))
    assert loss == pytest.approx(want, rel=1e-5) and loss > 0
    # a network off by the same equity on every play of a roll chooses as the labels do: no loss
    shifted = y.clone()
    shifted[:3, 0] += 0.05
    shifted[3:5, 0] -= 0.1
    assert sibling_loss(torch.logit(shifted), y, group).item() == pytest.approx(0.0, abs=1e-8)
    # a row alone in its group costs nothing whatever its value
    assert sibling_loss(logits[5:], y[5:], torch.tensor([0])).item() == pytest.approx(0.0, abs=1e-12)


def test_a_rank_fit_orders_siblings_better_than_a_plain_fit(tmp_path: Path, init: Path) -> None:
    import dataclasses

    from training.refine import load_groups, sibling_loss

    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    cfg = dataclasses.replace(CFG, candidates=4, keep=0.5, chunk_size=192)
    generate(teacher, tmp_path / "g", 6, cfg, progress=False)
    plain = fit(init, tmp_path / "g", tmp_path / "plain", epochs=3, lr=3e-3, batch=32, progress=False)
    ranked = fit(init, tmp_path / "g", tmp_path / "ranked", epochs=3, lr=3e-3, batch=32, progress=False, rank=20.0)
    assert "holdout_sibling" in ranked["history"][0] and "holdout_sibling" not in plain["history"][0]  # type: ignore[index]
    assert "best_holdout_loss" in ranked and "best_holdout_bce" in plain
    assert load_checkpoint(tmp_path / "ranked" / "refined.pt").data["config"]["refined"]["rank"] == 20.0
    assert "rank" not in load_checkpoint(tmp_path / "plain" / "refined.pt").data["config"]["refined"]
    boards, labels, _ = load_chunks(tmp_path / "g")
    _, group = np.unique(load_groups(tmp_path / "g"), return_inverse=True)
    from bgbot.eval.encoding import encode

    def sib(path: Path) -> float:
        net = load_checkpoint(path).net
        with torch.inference_mode():
            logits = net(torch.from_numpy(encode(boards, 3)))
        return sibling_loss(logits, torch.from_numpy(labels), torch.from_numpy(group)).item()

    assert sib(tmp_path / "ranked" / "refined.pt") < sib(tmp_path / "plain" / "refined.pt")
    with pytest.raises(ConfigError, match="rank"):
        fit(init, tmp_path / "g", tmp_path / "bad", rank=-1.0, progress=False)


def test_sibling_agreement_scores_1ply_picks_against_the_labels_best_play(tmp_path: Path, init: Path) -> None:
    import dataclasses
    import subprocess
    import sys

    from bgbot.eval.evaluate import equity
    from training.refine import load_groups

    cfg = dataclasses.replace(CFG, candidates=3, keep=0.3)
    generate(init, tmp_path / "g", 1, cfg, progress=False)
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "sibling_agreement.py"
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "g"), str(init), str(init)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the same figures by hand: per roll, the play init's 1-ply likes best against the labels' best
    boards, labels, _ = load_chunks(tmp_path / "g")
    groups = load_groups(tmp_path / "g")
    ev = BearoffEvaluator(NetEvaluator(load_model(init).net))
    mine, theirs = -equity(np.asarray(ev(boards), dtype=np.float64)), -equity(labels.astype(np.float64))
    rolls = [np.flatnonzero(groups == g) for g in np.unique(groups) if (groups == g).sum() >= 2]
    lost = [theirs[r].max() - theirs[r[np.argmax(mine[r])]] for r in rolls]
    agree = np.mean([np.argmax(mine[r]) == np.argmax(theirs[r]) for r in rolls])
    first, one, two = proc.stdout.strip().splitlines()
    assert first.startswith(f"{tmp_path / 'g'}: {len(rolls)} rolls")
    assert f"agrees {agree * 100:.1f}%" in one and f"gives up {np.mean(lost) * 1000:.3f} +-" in one
    assert "minus the first +0.000 +- 0.000" in two
    # picking by the network's own 2-ply search reproduces labels that are that search's values
    assert cfg.depth == 1 and cfg.step == 1.0 and cfg.label == "lookahead"
    proc = subprocess.run([sys.executable, str(script), "--ply", "2", str(tmp_path / "g"), str(init)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    head, line = proc.stdout.strip().splitlines()
    assert head.endswith("picks at 2-ply") and "gives up 0.000 +-" in line, proc.stdout
    generate(init, tmp_path / "plain", 1, CFG, progress=False)  # one play a row: nothing to choose
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "plain"), str(init)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "generate it with candidates" in proc.stderr


def test_an_ensemble_is_one_wide_network_averaging_its_members_logits(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(16)
    race = ValueNet(ModelSpec(3, (6,)))
    a = save_checkpoint(tmp_path / "a.pt", load_checkpoint(init).net, class_nets={"race": race})
    b = save_checkpoint(tmp_path / "b.pt", ValueNet(ModelSpec(4, (5,))))  # another encoding and width
    summary = ensemble([a, b], tmp_path / "e")
    out = load_checkpoint(tmp_path / "e" / "refined.pt")
    members = [load_checkpoint(a).net, load_checkpoint(b).net]
    assert out.net.spec == ModelSpec(4, (members[0].spec.hidden[0] + 5,))
    assert out.class_nets["race"].spec.encoding_version == 4 and summary["class_nets"] == ["race"]
    boards = Position.start().array()[None, :].repeat(3, axis=0)
    with torch.no_grad():
        want = (members[0].body(torch.from_numpy(encode(boards, 3)))
                + members[1].body(torch.from_numpy(encode(boards, 4)))) / 2
        got = out.net.body(torch.from_numpy(encode(boards, 4)))
    torch.testing.assert_close(got, want, rtol=0, atol=1e-5)
    assert json.loads((tmp_path / "e" / "ensemble.json").read_text())["ensemble"]["models"] == [str(a), str(b)]
    with pytest.raises(ConfigError, match="two or more"):
        ensemble([a], tmp_path / "x")
    deep = save_checkpoint(tmp_path / "d.pt", ValueNet(ModelSpec(3, (4, 4))))
    with pytest.raises(CheckpointError, match="one-hidden-layer"):
        ensemble([a, deep], tmp_path / "x")


def test_an_ensemble_splits_into_members_that_join_back_exactly(tmp_path: Path) -> None:
    """split cuts an ensemble into its members: each a member up to a shift of its logits, joined the same."""
    from training.refine import split

    torch.manual_seed(17)
    nets = [ValueNet(ModelSpec(3, (4,))) for _ in range(3)]
    crashed = ValueNet(ModelSpec(3, (6,)))
    paths = [save_checkpoint(tmp_path / f"m{i}.pt", n, class_nets={"crashed": crashed}) for i, n in enumerate(nets)]
    ensemble(paths, tmp_path / "e")
    parts = split(tmp_path / "e" / "refined.pt", 3, tmp_path / "s")
    assert [p.name for p in parts] == ["member-1.pt", "member-2.pt", "member-3.pt"]
    x = torch.from_numpy(encode(Position.start().array()[None, :].repeat(2, axis=0), 3))
    with torch.no_grad():
        for net, p in zip(nets, parts, strict=True):
            got = load_checkpoint(p)
            assert got.net.spec == ModelSpec(3, (4,)) and list(got.class_nets) == ["crashed"]
            shift = got.net.body(x) - net.body(x)  # the member's own bias was averaged away: a constant shift
            torch.testing.assert_close(shift, shift[:1].expand_as(shift), rtol=0, atol=1e-5)
            torch.testing.assert_close(got.net.body[0].weight, net.body[0].weight, rtol=0, atol=0)
    ensemble(parts, tmp_path / "again")
    a, b = load_checkpoint(tmp_path / "e" / "refined.pt").net, load_checkpoint(tmp_path / "again" / "refined.pt").net
    for k, v in a.state_dict().items():
        torch.testing.assert_close(b.state_dict()[k], v, rtol=0, atol=1e-6)
    with pytest.raises(CheckpointError, match="does not split into 5"):
        split(tmp_path / "e" / "refined.pt", 5, tmp_path / "x")
    with pytest.raises(ConfigError, match="split into 1 parts"):
        split(tmp_path / "e" / "refined.pt", 1, tmp_path / "x")
