"""The one way to load a network for play: :func:`load_model` (the engine, bots, the CLI and benchmarks).

It reads the ``.npz`` models of :mod:`bgbot.eval.inference` without torch, or a
torch checkpoint (``.pt``, from a training run), converted to numpy on load
(which imports torch).  The default is the model shipped inside the package,
``bgbot/data/models/bgbot-default.npz``, so any install finds it, or the file
``$BGBOT_CHECKPOINT`` names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bgbot.errors import CheckpointError
from bgbot.eval.inference import NumpyNet, read_npz

CHECKPOINT_ENV = "BGBOT_CHECKPOINT"  # overrides the shipped model wherever no path is given
DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "data" / "models" / "bgbot-default.npz"


def default_checkpoint() -> Path:
    """The network loaded when no path is given: ``$BGBOT_CHECKPOINT``, else the model shipped in the package."""
    env = os.environ.get(CHECKPOINT_ENV)
    return Path(env).expanduser() if env else DEFAULT_MODEL


@dataclass(frozen=True)
class LoadedModel:
    """A network for play and what its file says about it (``data``: games trained, last yardstick, ...)."""

    net: NumpyNet
    path: Path
    data: dict[str, Any]

    @property
    def games_trained(self) -> int | None:
        """Self-play games the network was trained on, when the file says."""
        games = self.data.get("games_trained")
        return int(games) if isinstance(games, int | float) else None


def load_model(path: str | os.PathLike[str] | None = None) -> LoadedModel:
    """Load a network for play (default: :func:`default_checkpoint`): an ``.npz`` model, or a torch checkpoint.

    A missing or unreadable file, another format or encoding version, or
    weights that do not fit the model raise :class:`~bgbot.errors.CheckpointError`
    saying how to get a good one.  Only a ``.pt`` checkpoint imports torch.
    """
    target = Path(path).expanduser() if path is not None else default_checkpoint()
    if not target.is_file():
        where = (
            "given"
            if path is not None
            else (f"from ${CHECKPOINT_ENV}" if os.environ.get(CHECKPOINT_ENV) else "shipped model")
        )
        raise CheckpointError(
            f"no checkpoint at {str(target)!r} ({where}): the file does not exist; train one with `bgbot train` "
            f"(it writes runs/default/checkpoint.pt) and pass it with --checkpoint or ${CHECKPOINT_ENV}"
        )
    if target.suffix == ".npz":
        net, meta = read_npz(target)
        return LoadedModel(net, target, meta)
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise CheckpointError(
            f"{str(target)!r} is a torch training checkpoint and torch is not installed: play its numpy export "
            f"(python -m training.ship RUN_DIR writes one) or pip install torch==2.13.0"
        )
    from bgbot.eval.nets import load_checkpoint, to_numpy  # torch: a training checkpoint

    ckpt = load_checkpoint(target)
    return LoadedModel(to_numpy(ckpt.net, ckpt.class_nets), target, ckpt.data)
