"""Play without torch: the numpy forward pass equals torch's, and the shipped model loads without torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import loaded_after

from bgbot.errors import CheckpointError
from bgbot.eval.encoding import encode
from bgbot.eval.inference import ModelSpec, read_npz, save_npz
from bgbot.eval.models import DEFAULT_MODEL, load_model
from bgbot.eval.nets import ValueNet, load_checkpoint, save_checkpoint, to_numpy
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position


def _positions(n: int, seed: int = 3) -> np.ndarray:
    """``n`` positions from random games (each from its side on roll)."""
    rng = np.random.default_rng(seed)
    boards = np.tile(Position.start().array(), (256, 1))
    out = []
    while sum(len(b) for b in out) < n:
        dice = rng.integers(1, 7, size=(len(boards), 2))
        succ, parent = successors_batch(boards, dice)
        pick = np.array([rng.choice(np.flatnonzero(parent == g)) for g in range(len(boards))])
        boards = succ[pick]
        over = (np.clip(boards, 0, None).sum(axis=1) == 0) | (np.clip(-boards, 0, None).sum(axis=1) == 0)
        boards[over] = Position.start().array()
        out.append(boards.copy())
    return np.concatenate(out)[:n]


@pytest.mark.parametrize("version", [2, 3])
def test_numpy_forward_pass_equals_torch_on_10k_positions(version: int) -> None:
    torch.manual_seed(version)
    net = ValueNet(ModelSpec(version, (128,)))
    x = encode(_positions(10_000), version)
    with torch.inference_mode():
        ref = net.forward_probs(torch.from_numpy(x)).numpy()
    got = to_numpy(net).probs(x)
    assert got.dtype == np.float32 and got.shape == (10_000, 5)
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-6)  # float32 rounding, nothing more


def test_the_shipped_model_is_the_checkpoint_it_was_exported_from(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    shipped = load_model()
    assert shipped.path == DEFAULT_MODEL and DEFAULT_MODEL.suffix == ".npz"
    ckpt = load_checkpoint(Path(__file__).resolve().parents[1] / "checkpoints" / "bgbot-default.pt")
    x = encode(_positions(2000, seed=9), shipped.net.spec.encoding_version)
    np.testing.assert_allclose(shipped.net.probs(x), ckpt.net.probs(x), rtol=0, atol=2e-6)
    assert shipped.games_trained == ckpt.data["games_trained"]


def test_playing_the_shipped_model_never_imports_torch() -> None:
    imports = (
        "bgbot.engine.api, bgbot.play.bots, bgbot.cli.main; "
        "bgbot.engine.api.Engine.load().best_move('4HPwATDgc/ABMA', '31')"
    )
    assert loaded_after(imports, ("torch", "training")) == []


def test_bad_model_files_are_clear_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = save_npz(tmp_path / "m.npz", to_numpy(ValueNet(ModelSpec(2, (4,)))), games_trained=3)
    net, meta = read_npz(good)
    assert meta["games_trained"] == 3 and net.spec.hidden == (4,)
    raw = bytearray(good.read_bytes())
    raw[len(raw) // 3] ^= 0x10
    (tmp_path / "flipped.npz").write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=r"flipped\.npz"):
        load_model(tmp_path / "flipped.npz")
    (tmp_path / "junk.npz").write_text("junk")
    with pytest.raises(CheckpointError, match=r"junk\.npz"):
        load_model(tmp_path / "junk.npz")
    torch_file = save_checkpoint(tmp_path / "t.pt", ValueNet(ModelSpec(2, (4,))))
    assert load_model(torch_file).net.spec.hidden == (4,)  # a training checkpoint plays too (through torch)
