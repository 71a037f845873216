"""The 2-ply sibling loss (training/lookahead_rank.py): it reads the network as 2-ply play does, and a fit lowers it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.engine.search import BearoffEvaluator, lookahead_probs
from bgbot.errors import ConfigError
from bgbot.eval.evaluate import NetEvaluator, equity
from bgbot.eval.inference import ModelSpec
from bgbot.eval.models import load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint
from training.lookahead_rank import (
    anchor_loss,
    build_replies,
    fit,
    load_lookahead_preset,
    lookahead_sibling_loss,
    main,
    two_ply_equity,
)
from training.refine import GenerateConfig, generate, load_chunks, load_groups

CFG = GenerateConfig(seed=5, chunk_size=96, parallel=16, explore=0.1, keep=0.5, candidates=4)


@pytest.fixture
def init(tmp_path: Path) -> Path:
    torch.manual_seed(11)
    return save_checkpoint(tmp_path / "init.pt", ValueNet(ModelSpec(3, (8,))), games_trained=7)


def test_the_two_ply_equity_is_what_2ply_play_reads_and_its_own_labels_cost_nothing(tmp_path: Path, init: Path) -> None:
    generate(init, tmp_path / "g", 1, CFG, progress=False)  # each play labelled by init's own 2-ply
    boards, labels, _ = load_chunks(tmp_path / "g")
    s = build_replies(init, boards, labels, load_groups(tmp_path / "g"), progress=False)
    assert s.leaves.shape == ((~s.row_done).sum() * 21, 26) and s.trainable.any()
    net = load_checkpoint(init).net
    with torch.inference_mode():
        v = two_ply_equity(net, s, 3).numpy()
        sib, bce = lookahead_sibling_loss(net, s, 3)
    want = equity(lookahead_probs(BearoffEvaluator(NetEvaluator(load_model(init).net)), boards, 1))
    np.testing.assert_allclose(v, want, atol=2e-6)
    assert sib.item() == pytest.approx(0.0, abs=1e-9) and bce.item() > 0
    # another network's values of the same leaves: the 2-ply values move, and the labels no longer fit
    torch.manual_seed(99)
    other = ValueNet(ModelSpec(3, (8,)))
    with torch.inference_mode():
        assert lookahead_sibling_loss(other, s, 3)[0].item() > 1e-6
        assert np.abs(two_ply_equity(other, s, 3).numpy() - v).max() > 1e-3


def test_a_fit_lowers_the_held_out_2ply_sibling_loss_and_reuses_its_replies(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    generate(teacher, tmp_path / "g", 4, dataclasses.replace(CFG, chunk_size=192), progress=False)
    out = tmp_path / "fit"
    got = fit(init, tmp_path / "g", out, holdout_chunks="3-3", epochs=3, lr=3e-3, groups_per_batch=8, weight=20.0,
              progress=False)
    hist = got["history"]
    assert hist[-1]["holdout_sibling2"] < 0.8 * hist[0]["holdout_sibling2"]  # type: ignore[index]
    assert got["positions_holdout"] == 192 and got["positions_train"] == 576
    refined = load_checkpoint(out / "refined.pt").data["config"]["refined"]
    assert refined["loss"] == "lookahead_sibling" and refined["weight"] == 20.0
    stamp = (out / "replies.npz").stat().st_mtime_ns
    fit(init, tmp_path / "g", tmp_path / "again", holdout_chunks="3-3", epochs=1, lr=3e-3, progress=False,
        cache=out / "replies.npz")
    assert (out / "replies.npz").stat().st_mtime_ns == stamp  # same start, same data: the cache is read
    with pytest.raises(ConfigError, match="'9-12'"):
        fit(init, tmp_path / "g", tmp_path / "bad", holdout_chunks="9-12", progress=False, cache=out / "replies.npz")
    with pytest.raises(ConfigError, match="'three'"):
        fit(init, tmp_path / "g", tmp_path / "bad", holdout_chunks="three", progress=False)
    proc = subprocess.run([sys.executable, "-m", "training.lookahead_rank", "--init", str(init), "--data",
                           str(tmp_path / "g"), "--out", str(tmp_path / "cli"), "--holdout-chunks", "5-2"],
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "'5-2'" in proc.stderr


def test_the_preset_sets_the_fit_and_the_command_line_overrides_it(tmp_path: Path, init: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    cfg = load_lookahead_preset(root / "configs" / "refine" / "3ply-lookahead.toml")
    assert cfg.holdout_chunks == "141-160" and cfg.weight > 0 and cfg.epochs >= 1 and cfg.lr > 0
    with pytest.raises(ConfigError, match="unknown tables"):
        load_lookahead_preset(root / "configs" / "refine" / "3ply-rank.toml")  # a generate/fit preset
    bad = tmp_path / "bad.toml"
    bad.write_text('[lookahead]\nholdout_chunks = "1-2"\nlearning_rate = 0.1\n')
    with pytest.raises(ConfigError, match="'learning_rate'"):
        load_lookahead_preset(bad)
    # the preset holds chunks 141-160 out; these 2 chunks have none, so only the override lets the fit run
    generate(init, tmp_path / "g", 2, CFG, progress=False)
    main(["--config", str(root / "configs" / "refine" / "3ply-lookahead.toml"), "--init", str(init), "--data",
          str(tmp_path / "g"), "--out", str(tmp_path / "f"), "--holdout-chunks", "1-1", "--epochs", "1",
          "--threads", "1"])
    refined = load_checkpoint(tmp_path / "f" / "refined.pt").data["config"]["refined"]
    assert refined["holdout_chunks"] == "1-1" and refined["epochs"] == 1 and refined["weight"] == cfg.weight
    with pytest.raises(SystemExit, match="'141-160'"):
        main(["--config", str(root / "configs" / "refine" / "3ply-lookahead.toml"), "--init", str(init), "--data",
              str(tmp_path / "g"), "--out", str(tmp_path / "f2"), "--threads", "1"])


def test_the_anchor_holds_the_network_near_its_start(tmp_path: Path, init: Path) -> None:
    torch.manual_seed(12)
    teacher = save_checkpoint(tmp_path / "teacher.pt", ValueNet(ModelSpec(3, (8,))))
    generate(teacher, tmp_path / "g", 3, dataclasses.replace(CFG, chunk_size=192), progress=False)
    moved = {}
    for a in (1e-4, 0.1):
        got = fit(init, tmp_path / "g", tmp_path / f"a{a}", holdout_chunks="2-2", epochs=2, lr=3e-3, groups_per_batch=8,
                  weight=20.0, anchor=a, progress=False, cache=tmp_path / "replies.npz")
        hist = got["history"]
        assert hist[0]["holdout_anchor"] == pytest.approx(0.0, abs=1e-9)  # type: ignore[index]  # the start itself
        moved[a] = hist[-1]["holdout_anchor"]  # type: ignore[index]
    assert 0 < moved[0.1] < 0.1 * moved[1e-4]
    s = build_replies(init, *load_chunks(tmp_path / "g")[:2], load_groups(tmp_path / "g"), progress=False)
    net = load_checkpoint(init).net
    with torch.inference_mode():
        ref = equity(NetEvaluator(load_model(init).net)(s.boards)).astype(np.float32)
        assert anchor_loss(net, s, 3, ref).item() == pytest.approx(0.0, abs=1e-6)  # the start has not moved
    with pytest.raises(ConfigError, match=r"--anchor -1\.0"):
        fit(init, tmp_path / "g", tmp_path / "bad", holdout_chunks="2-2", anchor=-1.0, progress=False)
