"""The value network and its checkpoint files.

``ValueNet`` maps encoded positions to five sigmoid outputs in gnubg's order
``[win, win gammon, win backgammon, lose gammon, lose backgammon]``, all from
the view of the side on roll of the encoded position.

A checkpoint is one ``torch.save`` file holding a plain dict (loaded with
``weights_only=True``): ``format``, ``model`` (encoding version, hidden sizes,
activation), ``state_dict``, ``config`` (the effective training config),
``games_trained`` and, for resuming training, ``trainer`` (optimizer, RNG and
the live self-play games).  It is written to a temporary file in the same
folder and renamed over the target, so a crash never leaves half a file.

This is the training side: play goes through :func:`bgbot.eval.inference.load_model`
and numpy (:func:`to_numpy`), so torch is imported only to train or to read a
``.pt`` file.  :func:`load_checkpoint` loads a network to train on;
:func:`set_torch_threads` is the one place bgbot sets torch's thread count.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from bgbot.errors import QUOTE_LIMIT, CheckpointError, quote_input
from bgbot.eval.encoding import ENCODING_VERSIONS, num_inputs
from bgbot.eval.inference import ModelSpec, NumpyNet, check_class_net
from bgbot.fileio import atomic_open

CHECKPOINT_FORMAT = "bgbot-checkpoint-1"
_ACTIVATIONS = {"sigmoid": nn.Sigmoid, "relu": nn.ReLU, "tanh": nn.Tanh}


class ValueNet(nn.Module):
    """MLP: ``(B, num_inputs)`` -> ``(B, 5)`` logits; ``forward_probs`` applies the sigmoid."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        layers: list[nn.Module] = []
        width = num_inputs(spec.encoding_version)
        for h in spec.hidden:
            layers += [nn.Linear(width, h), _ACTIVATIONS[spec.activation]()]
            width = h
        layers.append(nn.Linear(width, 5))
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, NUM_INPUTS) -> (B, 5) logits
        return self.body(x)

    def forward_probs(self, x: torch.Tensor) -> torch.Tensor:  # (B, NUM_INPUTS) -> (B, 5)
        return torch.sigmoid(self.body(x))

    def probs(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """Numpy in, numpy out, no gradients: the same call as :meth:`bgbot.eval.inference.NumpyNet.probs`."""
        with torch.inference_mode():
            return self.forward_probs(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).numpy()


def to_numpy(net: ValueNet, class_nets: dict[str, ValueNet] | None = None) -> NumpyNet:
    """The torch network's weights (and its class networks') as a :class:`~bgbot.eval.inference.NumpyNet`."""
    linears = [m for m in net.body if isinstance(m, nn.Linear)]
    layers = tuple(
        (m.weight.detach().numpy().astype(np.float32).copy(), m.bias.detach().numpy().astype(np.float32).copy())
        for m in linears
    )
    return NumpyNet(net.spec, layers, {name: to_numpy(sub) for name, sub in (class_nets or {}).items()})


def save_checkpoint(
    path: str | Path, net: ValueNet, *, class_nets: dict[str, ValueNet] | None = None, **extra: Any
) -> Path:
    """Write ``net``, its class networks and ``extra`` fields (config, games_trained, trainer, ...) atomically.

    ``class_nets`` (:data:`~bgbot.eval.inference.CLASS_NETS` names) are stored under ``class_nets``,
    each as a ``model`` description and a ``state_dict``, as the main network is.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for name in class_nets or {}:
        check_class_net(name)
    payload = {
        "format": CHECKPOINT_FORMAT,
        **_net_entry(net),
        **extra,
    }
    if class_nets:
        payload["class_nets"] = {name: _net_entry(sub) for name, sub in class_nets.items()}
    with atomic_open(path) as f:
        torch.save(payload, f)
    return path


def _net_entry(net: ValueNet) -> dict[str, Any]:
    return {"model": {**asdict(net.spec), "hidden": list(net.spec.hidden)}, "state_dict": net.state_dict()}


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint dict, checking its format and encoding version (``CheckpointError`` otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    _check_archive(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file
        raise CheckpointError(
            f"checkpoint {str(path)!r} is not a readable bgbot checkpoint (truncated or corrupt?): {exc}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a bgbot checkpoint of format {CHECKPOINT_FORMAT!r}")
    model = data.get("model")
    if not isinstance(model, dict) or "encoding_version" not in model:
        raise CheckpointError(f"checkpoint {str(path)!r} has no model description")
    version = model["encoding_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version not in ENCODING_VERSIONS:
        raise CheckpointError(
            f"checkpoint {str(path)!r} uses encoding version {quote_input(version)}, but this bgbot knows only "
            f"{sorted(ENCODING_VERSIONS)}"
        )
    return data


def _check_archive(path: Path) -> None:
    """A checkpoint is a zip archive: check every entry's CRC (``torch.load`` does not) before trusting it."""
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise CheckpointError(
            f"checkpoint {str(path)!r} is not a readable archive (truncated or corrupt?): {exc}"
        ) from None
    if bad is not None:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt: entry {bad!r} fails its checksum")


def net_from_checkpoint(data: dict[str, Any], path: str | Path = "<memory>") -> ValueNet:
    """Build the network stored in a checkpoint dict read by :func:`read_checkpoint`."""
    m = data.get("model")
    try:
        hidden = m["hidden"]  # type: ignore[index]
        spec = ModelSpec(
            encoding_version=m["encoding_version"],  # type: ignore[index]
            hidden=tuple(hidden) if isinstance(hidden, list | tuple) else hidden,
            activation=m.get("activation", "sigmoid"),  # type: ignore[union-attr]
        )
    except (KeyError, TypeError, AttributeError, CheckpointError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} has no usable model description: {exc}") from None
    net = ValueNet(spec)
    state = data.get("state_dict")
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"checkpoint {str(path)!r} has no state dict of tensors (its weights)")
    try:
        net.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(
            f"checkpoint {str(path)!r} weights do not fit its model {quote_input(m)}: {_one_line(exc)}"
        ) from None
    bad = [k for k, v in net.state_dict().items() if not bool(torch.isfinite(v).all())]
    if bad:
        raise CheckpointError(f"checkpoint {str(path)!r} has weights that are not finite numbers (NaN or inf) in {bad}")
    net.eval()
    return net


def _one_line(exc: Exception) -> str:
    """An exception's message on one line, bounded (torch's size-mismatch reports run to many lines)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 4 * QUOTE_LIMIT else text[: 4 * QUOTE_LIMIT] + "..."


def widen_inputs(net: ValueNet, encoding_version: int) -> ValueNet:
    """A copy of ``net`` for a longer encoding whose first inputs are ``net``'s: zero weights on the new ones.

    The copy computes exactly what ``net`` computes (the new inputs start
    unused), so a run can continue training an older network on richer inputs.
    """
    old, new = net.spec.encoding_version, encoding_version
    if num_inputs(new) < num_inputs(old):
        raise CheckpointError(f"encoding {new} has fewer inputs than the network's encoding {old}")
    wide = ValueNet(ModelSpec(new, net.spec.hidden, net.spec.activation))
    state = {k: v.clone() for k, v in net.state_dict().items()}
    first = next(k for k in state if k.endswith("weight"))
    w = torch.zeros((state[first].shape[0], num_inputs(new)), dtype=state[first].dtype)
    w[:, : state[first].shape[1]] = state[first]
    state[first] = w
    wide.load_state_dict(state)
    return wide


@dataclass(frozen=True)
class Checkpoint:
    """A torch network and its checkpoint dict (config, games trained, last yardstick, trainer state)."""

    net: ValueNet
    path: Path
    data: dict[str, Any]
    class_nets: dict[str, ValueNet] = field(default_factory=dict)  #: by CLASS_NETS name


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Load a torch checkpoint for training (``CheckpointError`` for a missing or bad file).

    To play, use :func:`bgbot.eval.inference.load_model`, which reads the same
    files (and ``.npz`` models) without keeping torch in the loop.
    """
    target = Path(path).expanduser()
    data = read_checkpoint(target)
    return Checkpoint(net_from_checkpoint(data, target), target, data, class_nets_from_checkpoint(data, target))


def class_nets_from_checkpoint(data: dict[str, Any], path: str | Path = "<memory>") -> dict[str, ValueNet]:
    """The class networks stored in a checkpoint dict (none in checkpoints older than class networks)."""
    entries = data.get("class_nets", {})
    if not isinstance(entries, dict):
        raise CheckpointError(f"checkpoint {str(path)!r}: 'class_nets' must be a table, got {quote_input(entries)}")
    nets = {}
    for name, entry in entries.items():
        check_class_net(name, f"checkpoint {str(path)!r}: ")
        if not isinstance(entry, dict):
            raise CheckpointError(f"checkpoint {str(path)!r}: class network {name!r} is not a table")
        nets[name] = net_from_checkpoint(entry, f"{path} [{name}]")
    return nets


def set_torch_threads(n: int) -> int:
    """Use ``n`` torch threads in this process from now on; returns the previous count.

    One position at a time (a checker play, a cube decision, a pit game) is many
    small network calls: a second intra-op thread only spins, badly when the
    other core is busy, so the CLI and the pit run those with ``n = 1``.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    return before


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch threads (:func:`set_torch_threads`), then restore the previous count."""
    before = set_torch_threads(n)
    try:
        yield
    finally:
        set_torch_threads(before)
