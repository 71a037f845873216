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
from typing import TYPE_CHECKING, Any

import numpy as np

from bgbot.errors import CheckpointError
from bgbot.eval.inference import NumpyNet, read_npz
from bgbot.rules.position import Position

if TYPE_CHECKING:
    from numpy.typing import NDArray

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
        check_outputs(net, target)
        return LoadedModel(net, target, meta)
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise CheckpointError(
            f"{str(target)!r} is a torch training checkpoint and torch is not installed: play its numpy export "
            f"(python -m training.ship RUN_DIR writes one) or pip install torch==2.13.0"
        )
    from bgbot.eval.nets import load_checkpoint, to_numpy  # torch: a training checkpoint

    ckpt = load_checkpoint(target)
    net = to_numpy(ckpt.net, ckpt.class_nets)
    check_outputs(net, target)
    return LoadedModel(net, target, ckpt.data)


#: The positions a loaded model is tried on (side on roll's view), per network: the main network at the
#: start, the race network in an even race (the side on roll ahead by the roll: about 60% for it), the
#: crashed network in a crashed middling position (about 40% for the side on roll), with the range of the
#: side on roll's win probability a network that has learnt anything - or nothing yet, untrained - gives.
#: Weights scaled far out (x1e30) saturate every output to 0 or 1 (or NaN): far outside.
PROBES: dict[str, tuple[str, Position, float, float]] = {
    "": ("the starting position", Position.start(), 0.15, 0.85),
    "race": ("an even race", Position.from_points({3: 2, 4: 2, 5: 3, 6: 3, 8: 2, 9: 2, 11: 1},
                                                  {3: 2, 4: 2, 5: 3, 6: 3, 8: 2, 9: 2, 11: 1}), 0.15, 0.85),
    "crashed": ("a crashed position", Position.from_points({1: 4, 2: 4, 24: 2}, {6: 5, 7: 3, 8: 3, 13: 4}),
                0.02, 0.98),
}
#: How far a gammon (or backgammon) rate may exceed what contains it (wg <= w, lg <= 1 - w) before it is
#: absurd: untrained networks answer about 0.5 for everything, so only a gross excess counts.
GROSS_EXCESS = 0.5


def check_outputs(net: NumpyNet, path: str | os.PathLike[str]) -> None:
    """Refuse (``CheckpointError`` quoting ``path``) a network whose values on known positions are absurd.

    Finite weights can still make nonsense (a file scaled by 1e30 loads, then plays at random with NaN or
    saturated 0/1 outputs).  Each network of the model (the main one and its class networks, see
    :data:`PROBES`) evaluates one known position, one small numpy batch, no compiled code: its five
    probabilities (side on roll's view) must be finite numbers in [0, 1], the win probability within the
    probe's range, and no gammon or backgammon rate may exceed its win (or loss) by more than
    :data:`GROSS_EXCESS`.
    """
    from bgbot.eval.encoding import encode

    for name, sub in [("", net), *net.by_class.items()]:
        what, pos, lo, hi = PROBES.get(name, PROBES[""])
        board = np.asarray(pos.board, dtype=np.int8)[None, :]
        with np.errstate(all="ignore"):
            p = sub.probs_numpy(np.asarray(encode(board, sub.spec.encoding_version), dtype=np.float32))[0]
        network = f"its {name} network" if name else "its network"
        head = f"model {str(path)!r} gives absurd values (damaged or scaled weights?): at {what} {network}"
        if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
            raise CheckpointError(f"{head} answers {_fmt(p)}, not five probabilities")
        w, wg, wbg, lg, lbg = (float(v) for v in p)
        if not lo <= w <= hi:
            raise CheckpointError(
                f"{head} gives the side on roll a win probability of {w:.3g} (sound networks: {lo}-{hi})"
            )
        excess = max(wg - w, wbg - wg, lg - (1.0 - w), lbg - lg)
        if excess > GROSS_EXCESS:
            raise CheckpointError(f"{head} answers {_fmt(p)}: gammons far above the wins or losses that contain them")


def _fmt(p: NDArray[np.float32]) -> str:
    return "(" + ", ".join(f"{float(v):.3g}" for v in p) + ")"
