"""Self-play trainer: TD targets, updates, checkpoints, resume."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.errors import CheckpointError, ConfigError
from bgbot.eval.encoding import encode
from bgbot.eval.evaluate import NetEvaluator, flip_probs
from bgbot.eval.models import load_model
from bgbot.eval.nets import ModelSpec, ValueNet, read_checkpoint, save_checkpoint
from bgbot.play.duel import duel, greedy_chooser, random_chooser
from bgbot.rules.position import Position
from training.config import TrainConfig
from training.selfplay import Trainer, lambda_returns

SMALL = TrainConfig(seed=3, games=300, parallel_games=32, hidden=(16,), lr=0.003, lr_final=0.001,
                    min_batch=128, checkpoint_every=100, eval_every=0)


def test_lambda_returns_limits() -> None:
    # given a three-position game whose last mover won a gammon
    values = np.array([[0.1, 0.2, 0.0, 0.3, 0.0], [0.6, 0.3, 0.1, 0.1, 0.0], [0.9, 0.5, 0.0, 0.0, 0.0]],
                      dtype=np.float32)
    outcome = np.array([[1, 1, 0, 0, 0]], dtype=np.float32)
    starts, lengths = np.array([0]), np.array([3])
    # lambda = 1: Monte Carlo, the outcome seen alternately from each side
    mc = lambda_returns(values, starts, lengths, outcome, 1.0)
    np.testing.assert_allclose(mc[2], outcome[0])
    np.testing.assert_allclose(mc[1], flip_probs(outcome[0]))
    np.testing.assert_allclose(mc[0], outcome[0])
    # lambda = 0: TD(0), each target is the next position's value seen from this side
    td0 = lambda_returns(values, starts, lengths, outcome, 0.0)
    np.testing.assert_allclose(td0[0], flip_probs(values[1]))
    np.testing.assert_allclose(td0[1], flip_probs(values[2]))
    np.testing.assert_allclose(td0[2], outcome[0])


def test_td_update_moves_just_won_position_towards_target(tmp_path: Path) -> None:
    # given a position in which the side on roll bears off its last checker whatever it rolls,
    # the opponent has borne off nothing: a gammon win
    pos = Position.from_points({1: 1}, {10: 15})
    trainer = Trainer(replace(SMALL, min_batch=1), tmp_path)
    x = torch.from_numpy(encode(pos.array()[None, :], SMALL.encoding_version))
    target = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0])
    with torch.no_grad():
        before = float(((trainer.net.forward_probs(x)[0] - target) ** 2).sum())
    # when that one-position game is learned from a few times
    for _ in range(5):
        trainer.traj[0, 0] = pos.array()
        trainer.ply[0] = 1
        trainer._learn_from(np.array([0]), target[None, :].numpy())
        trainer._update()
    # then its value has moved towards the gammon win
    with torch.no_grad():
        after = float(((trainer.net.forward_probs(x)[0] - target) ** 2).sum())
    assert after < before * 0.9


def test_games_finish_and_are_counted(tmp_path: Path) -> None:
    trainer = Trainer(SMALL, tmp_path)
    trainer.train(100, progress=False)
    assert trainer.games_done >= 100
    assert trainer.positions_trained > 20 * 100 * 0.8  # about 55 positions a game, most learned already
    assert trainer.abandoned == 0


def test_resume_gives_identical_continuation(tmp_path: Path) -> None:
    straight = Trainer(SMALL, tmp_path / "a")
    straight.train(240, progress=False)

    first = Trainer(SMALL, tmp_path / "b")
    first.train(120, progress=False)
    ckpt = first.out_dir / "checkpoint.pt"
    resumed = Trainer.resume(ckpt, tmp_path / "b")
    resumed.train(240, progress=False)

    assert resumed.games_done == straight.games_done
    assert resumed.updates == straight.updates
    for (k, a), (_, b) in zip(straight.net.state_dict().items(), resumed.net.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    np.testing.assert_array_equal(straight.boards, resumed.boards)


def test_smoke_run_from_cli_writes_checkpoint_that_plays(tmp_path: Path) -> None:
    out = tmp_path / "smoke"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "train", "--config", str(root / "configs" / "smoke.toml"),
         "--out", str(out), "--quiet"], capture_output=True, text=True, cwd=root, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "effective config" in proc.stdout
    data = read_checkpoint(out / "checkpoint.pt")
    assert data["games_trained"] >= 400
    assert (out / "metrics.jsonl").read_text().count("ppg") >= 2
    assert (out / "learning_curve.png").stat().st_size > 1000
    ev = NetEvaluator.from_checkpoint(out / "checkpoint.pt")
    res = duel(greedy_chooser(ev), random_chooser(5), 20, seed=5)
    assert res.games == 40
    assert res.ppg > 0  # even a few hundred games of self-play beat random moves


def test_bad_checkpoints_are_rejected(tmp_path: Path) -> None:
    trainer = Trainer(SMALL, tmp_path)
    good = trainer.save(tmp_path / "good.pt")
    assert load_model(good).net.spec.hidden == (16,)

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="truncated"):
        load_model(truncated)

    data = read_checkpoint(good)
    data["model"]["encoding_version"] = 99
    torch.save(data, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="encoding version 99"):
        load_model(tmp_path / "other.pt")

    with pytest.raises(CheckpointError, match="does not exist"):
        load_model(tmp_path / "missing.pt")

    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError):
        load_model(tmp_path / "junk.pt")


def test_checkpoint_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trainer = Trainer(SMALL, tmp_path)
    path = trainer.save(tmp_path / "c.pt")
    original = path.read_bytes()

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", boom)
    with pytest.raises(OSError):
        save_checkpoint(path, trainer.net)
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def test_cli_train_bad_config_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("lamda = 0.5\n")
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "bgbot.cli", "train", "--config", str(bad), "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, cwd=root, timeout=120)
    assert proc.returncode == 2
    assert "'lamda'" in proc.stderr and proc.stderr.count("\n") == 1


def test_cli_yardstick_writes_a_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from bgbot.cli.main import main

    trainer = Trainer(SMALL, tmp_path)
    ckpt = trainer.save(tmp_path / "c.pt")
    out = tmp_path / "y.json"
    assert main(["yardstick", "--checkpoint", str(ckpt), "--games", "20", "--opponent", "random",
                 "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["games"] == 20 and rec["opponent"] == "random" and rec["ply"] == 1
    assert "ppg" in capsys.readouterr().out
    assert main(["yardstick", "--checkpoint", str(ckpt), "--games", "7"]) == 2
    assert "7" in capsys.readouterr().err


def test_a_flipped_bit_or_non_finite_weights_are_rejected(tmp_path: Path) -> None:
    import zipfile

    from bgbot.cli.main import main

    good = save_checkpoint(tmp_path / "good.pt", ValueNet(ModelSpec(hidden=(4,))))
    # flip one bit inside the stored bytes of the last weight entry (the output bias): the zip CRC catches it
    with zipfile.ZipFile(good) as zf:
        entry = [i for i in zf.infolist() if "/data/" in i.filename][-1]
    raw = bytearray(good.read_bytes())
    h = entry.header_offset  # the local header's own name and extra lengths (torch pads the extra field)
    start = h + 30 + int.from_bytes(raw[h + 26 : h + 28], "little") + int.from_bytes(raw[h + 28 : h + 30], "little")
    raw[start + 2] ^= 0x40
    (tmp_path / "flipped.pt").write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="checksum"):
        load_model(tmp_path / "flipped.pt")
    assert main(["eval", "4HPwATDgc/ABMA", "--checkpoint", str(tmp_path / "flipped.pt")]) == 2

    net = ValueNet(ModelSpec(hidden=(4,)))
    with torch.no_grad():
        next(iter(net.parameters()))[0, 0] = float("nan")
    save_checkpoint(tmp_path / "nan.pt", net)
    with pytest.raises(CheckpointError, match="not finite"):
        load_model(tmp_path / "nan.pt")


@pytest.mark.parametrize("override", ["lr=inf", "lr_final=inf", "lr=nan", "lam=nan"])
def test_non_finite_step_sizes_are_config_errors(override: str) -> None:
    from bgbot.config import load_config
    from training.config import TrainConfig

    with pytest.raises(ConfigError, match=override.split("=")[0]):
        load_config(TrainConfig, None, [override])


def _train_cli(root: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "train", "--config", str(root / "configs" / "smoke.toml"),
         "--out", str(out), "--quiet", *extra], capture_output=True, text=True, cwd=root, timeout=300,
    )


def test_a_fresh_run_never_overwrites_an_existing_one_and_resume_logs_no_duplicates(tmp_path: Path) -> None:
    import json

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "run"
    assert _train_cli(root, out, "--set", "games=200").returncode == 0
    before = (out / "metrics.jsonl").read_text()
    again = _train_cli(root, out, "--set", "games=200")
    assert again.returncode == 2 and "already holds a run" in again.stderr and "--resume" in again.stderr
    assert (out / "metrics.jsonl").read_text() == before  # untouched
    # a save killed half-way leaves a temporary file; a resumed run cleans it up
    (out / "checkpoint.pt.abc123.tmp").write_bytes(b"half a checkpoint")
    resumed = _train_cli(root, out, "--resume", str(out / "checkpoint.pt"), "--games", "400")
    assert resumed.returncode == 0, resumed.stderr
    assert not list(out.glob("*.tmp"))
    games = [json.loads(line)["games_trained"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert games == sorted(set(games)) and max(games) >= 400  # every evaluation once, in order
    assert _train_cli(root, out, "--set", "games=200", "--force").returncode == 0  # start over on purpose


def test_sigterm_saves_a_checkpoint_to_resume_from(tmp_path: Path) -> None:
    import signal
    import time

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bgbot.cli", "train", "--config", str(root / "configs" / "smoke.toml"),
         "--out", str(out), "--quiet", "--set", "games=1000000", "--set", "checkpoint_every=1000000",
         "--set", "eval_every=0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and "effective config" not in (proc.stdout.readline() if proc.stdout else ""):
            pass
        time.sleep(10)  # some games played (numba may still be loading under load), no checkpoint yet
        assert not (out / "checkpoint.pt").exists()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert read_checkpoint(out / "checkpoint.pt")["games_trained"] > 0
