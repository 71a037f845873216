"""Networks for play, without torch: the compiled forward pass and the ``.npz`` model files it reads.

Training needs torch (:mod:`bgbot.eval.nets`); answering a position does not.
The shipped model is a plain ``.npz`` archive (read with ``allow_pickle=False``,
so a model file can never run code): the weights of each layer and a JSON
description (encoding version, hidden sizes, activation, games trained, the
last yardstick result).  :func:`bgbot.eval.models.load_model` reads it (or a
torch checkpoint, converted on load).

The forward pass is compiled with numba (:func:`forward_rows`): it walks one
row at a time through weights stored input-major (``(in, out)``, float32,
contiguous) and skips the inputs that are zero (most of a position's
encoding), so a batch of twenty candidates costs microseconds, not the
per-call overhead of a BLAS matrix product, and it never starts BLAS threads
(numpy's multithreaded matrix product on a busy 2-core machine made a 2-ply
decision 6x slower than with one thread: BENCHMARKS.md).  The weights are
prepared once, when the :class:`NumpyNet` is built; :meth:`NumpyNet.probs_numpy`
is the plain numpy statement of the same pass, the tests' reference.

The outputs are gnubg's five probabilities ``[win, win gammon, win backgammon,
lose gammon, lose backgammon]`` from the view of the side on roll of each
encoded position, as :class:`bgbot.eval.nets.ValueNet` computes them; the two
agree within float32 rounding (``tests/test_inference.py``).
"""

from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bgbot import jit
from bgbot.errors import BgbotError, CheckpointError, quote_input
from bgbot.eval.encoding import DEFAULT_VERSION, num_inputs
from bgbot.fileio import atomic_open
from bgbot.jit import f32_from_bits, njit
from bgbot.rules.position import PositionClass

MODEL_FORMAT = "bgbot-model-1"
ACTIVATIONS = ("sigmoid", "relu", "tanh")
MAX_HIDDEN_UNITS = 4096  # units of one hidden layer (the shipped models have 80-128)
MAX_HIDDEN_LAYERS = 8


@dataclass(frozen=True)
class ModelSpec:
    """What is needed to rebuild a network: encoding version, hidden layer sizes, activation."""

    encoding_version: int = DEFAULT_VERSION
    hidden: tuple[int, ...] = (80,)
    activation: str = "sigmoid"

    def __post_init__(self) -> None:
        if isinstance(self.encoding_version, bool) or not isinstance(self.encoding_version, int):
            raise CheckpointError(f"encoding version must be a whole number, got {quote_input(self.encoding_version)}")
        num_inputs(self.encoding_version)
        if not isinstance(self.activation, str) or self.activation not in ACTIVATIONS:
            raise CheckpointError(
                f"unknown activation {quote_input(self.activation)}; choose one of {sorted(ACTIVATIONS)}"
            )
        check_hidden(self.hidden, CheckpointError)


def check_hidden(
    hidden: object, error: type[BgbotError] = CheckpointError, what: str = "hidden layer sizes"
) -> tuple[int, ...]:
    """``hidden`` if it is 1..:data:`MAX_HIDDEN_LAYERS` layer sizes, each 1..:data:`MAX_HIDDEN_UNITS` (else ``error``).

    The bound keeps a bad config or model file from asking for terabytes.
    """
    ok = (
        isinstance(hidden, tuple)
        and 1 <= len(hidden) <= MAX_HIDDEN_LAYERS
        and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_HIDDEN_UNITS for h in hidden)
    )
    if not ok:
        raise error(
            f"{what} must be 1 to {MAX_HIDDEN_LAYERS} whole numbers 1..{MAX_HIDDEN_UNITS}, "
            f"got {quote_input(hidden)}"
        )
    return hidden  # type: ignore[return-value]


def _sigmoid(z: NDArray[np.float32]) -> NDArray[np.float32]:
    # 1 / (1 + exp(-z)) without overflow warnings for large |z|
    return (0.5 * (np.tanh(0.5 * z) + 1.0)).astype(np.float32, copy=False)


_ACT = {"sigmoid": _sigmoid, "relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}
ACT_CODES = {name: i for i, name in enumerate(ACTIVATIONS)}  # the compiled pass's activation numbers

Weights = tuple[NDArray[np.float32], ...]  # per layer, float32, C-contiguous (numba: a UniTuple)
# Reassociation and contraction only: the sums may be reordered and fused (vectorised); infinities and NaNs
# keep their meaning.  error_model="numpy": no zero-division test in the loops (it stops vectorisation).
_FASTMATH = {"reassoc", "contract", "nsz"}


_f32_from_bits = f32_from_bits()  # the float32 with an int32 bit pattern (an LLVM bitcast when compiled)


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy", inline="always")
def _sigmoid32(z: float) -> float:
    """``1 / (1 + exp(-z))`` in float32, with Cephes' ``expf`` (polynomial, error below 2 ulp) inlined.

    Written without calls or table lookups so that a loop of them is
    vectorised; within 1.2e-7 of the same formula with the C library's exp.
    """
    x = min(max(-z, np.float32(-87.0)), np.float32(87.0))
    n = np.int32(x * np.float32(1.4426950408889634) + np.float32(128.5)) - np.int32(128)  # round(x / ln 2)
    nf = np.float32(n)
    r = x - nf * np.float32(0.693359375) - nf * np.float32(-2.12194440e-4)  # x - n ln 2 in two parts
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    e = (p * r * r + r + np.float32(1.0)) * _f32_from_bits((n + np.int32(127)) << np.int32(23))
    return np.float32(1.0) / (np.float32(1.0) + e)


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _activate(h: NDArray[np.float32], act: int) -> None:
    """Activation ``act`` (:data:`ACT_CODES`: sigmoid 0, relu 1, tanh 2) of every value of ``h``, in place."""
    n = h.shape[0]
    if act == 0:
        for j in range(n):
            h[j] = _sigmoid32(h[j])
    elif act == 1:
        for j in range(n):
            h[j] = max(h[j], np.float32(0.0))
    else:
        for j in range(n):
            h[j] = math.tanh(h[j])


Compiled = tuple[Weights, Weights, NDArray[np.float32], NDArray[np.float32], int]
"""A network as the compiled pass takes it (:attr:`NumpyNet.compiled`): ``(wts, bs, w_out, b_out, act)``.

``wts[k]`` is hidden layer k's weight matrix input-major ``(in, out)``, ``bs[k]`` its bias; ``w_out`` the
output layer's ``(5, in)``, ``b_out`` its bias (always sigmoid); ``act`` the hidden layers' activation
(:data:`ACT_CODES`).  float32 and C-contiguous throughout (numba: a tuple of two UniTuples, two arrays, an int).
"""


@njit(cache=True, inline="always")
def hidden_width(wts: Weights) -> int:
    """The width of the widest hidden layer of ``wts`` (the scratch rows the pass needs are this wide)."""
    width = 1
    for k in range(len(wts)):
        width = max(width, wts[k].shape[1])
    return width


@njit(cache=True, fastmath=_FASTMATH)
def forward_row(
    x: NDArray[np.float32], net: Compiled, h_a: NDArray[np.float32], h_b: NDArray[np.float32], out: NDArray[np.float32]
) -> None:
    """One encoded position ``x`` through the network ``net`` into ``out``: 5 probabilities, side on roll's view.

    ``h_a``/``h_b`` are scratch rows at least :func:`hidden_width` wide.  Each
    hidden layer adds, for every nonzero input, that input times its weight
    row: the zeros that make up most of an encoded position cost nothing.
    """
    w = net[0][0]
    b = net[1][0]
    dst = h_a[: w.shape[1]]
    for j in range(dst.shape[0]):
        dst[j] = b[j]
    for i in range(w.shape[0]):
        v = x[i]
        if v != 0.0:
            wi = w[i]
            for j in range(dst.shape[0]):
                dst[j] += v * wi[j]
    forward_tail(net, h_a, h_b, out)


@njit(cache=True, fastmath=_FASTMATH)
def forward_tail(net: Compiled, h_a: NDArray[np.float32], h_b: NDArray[np.float32], out: NDArray[np.float32]) -> None:
    """The rest of :func:`forward_row` once ``h_a`` holds the first hidden layer's sums (before activation)."""
    wts, bs, w_out, b_out, act = net
    src = h_a[: wts[0].shape[1]]
    _activate(src, act)
    for k in range(1, len(wts)):
        w = wts[k]
        b = bs[k]
        n_out = w.shape[1]
        dst = h_a[:n_out] if k % 2 == 0 else h_b[:n_out]
        for j in range(n_out):
            dst[j] = b[j]
        for i in range(w.shape[0]):
            v = src[i]
            if v != 0.0:
                wi = w[i]
                for j in range(n_out):
                    dst[j] += v * wi[j]
        _activate(dst, act)
        src = dst
    for m in range(w_out.shape[0]):
        wm = w_out[m]
        acc = np.float32(0.0)
        for j in range(wm.shape[0]):
            acc += src[j] * wm[j]
        out[m] = _sigmoid32(acc + b_out[m])


@njit(cache=True)
def forward_rows(x: NDArray[np.float32], net: Compiled, out: NDArray[np.float32]) -> None:
    """:func:`forward_row` for every row of ``x`` ``(N, in)`` into ``out`` ``(N, 5)``."""
    width = hidden_width(net[0])
    h_a = np.empty(width, dtype=np.float32)
    h_b = np.empty(width, dtype=np.float32)
    for r in range(x.shape[0]):
        forward_row(x[r], net, h_a, h_b, out[r])


#: The class networks a model may have (gnubg's class nets), by name, and the
#: :class:`~bgbot.rules.position.PositionClass` codes each answers: ``race`` races (and, without the
#: bear-off database, bear-offs), ``crashed`` crashed positions.  The model's main network answers
#: everything else (contact) and every class whose network the model does not have.
CLASS_NETS: dict[str, tuple[int, ...]] = {
    "race": (int(PositionClass.RACE), int(PositionClass.BEAROFF)),
    "crashed": (int(PositionClass.CRASHED),),
}


def check_class_net(name: object, where: str = "") -> str:
    """``name`` if it names a class network (:data:`CLASS_NETS`), else a ``CheckpointError`` quoting it."""
    if not isinstance(name, str) or name not in CLASS_NETS:
        raise CheckpointError(f"{where}unknown class network {quote_input(name)}; known: {', '.join(CLASS_NETS)}")
    return name


@dataclass(frozen=True)
class NumpyNet:
    """The value network's forward pass: ``(N, num_inputs)`` float32 -> ``(N, 5)`` probabilities.

    ``layers`` are ``(weight (out, in), bias (out,))`` pairs, torch's layout.
    ``by_class`` holds the model's class networks (:data:`CLASS_NETS` names to
    networks without class networks of their own); :meth:`probs` is always
    this (main) network's pass: the choice of network per position is
    :class:`bgbot.eval.evaluate.NetEvaluator`'s, which sees the boards.
    """

    spec: ModelSpec
    layers: tuple[tuple[NDArray[np.float32], NDArray[np.float32]], ...] = field(repr=False)
    by_class: dict[str, NumpyNet] = field(default_factory=dict, repr=False)
    #: the compiled pass's copy of the weights (:data:`Compiled`: hidden layers input-major and their biases,
    #: the output layer ``(5, in)`` and its bias, the activation's code)
    compiled: Compiled = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, sub in self.by_class.items():
            check_class_net(name)
            if not isinstance(sub, NumpyNet) or sub.by_class:
                raise CheckpointError(f"class network {name!r} must be one network without class networks")
        width = num_inputs(self.spec.encoding_version)
        sizes = (*self.spec.hidden, 5)
        if len(self.layers) != len(sizes):
            raise CheckpointError(f"a {self.spec} network has {len(sizes)} layers, got {len(self.layers)}")
        for (w, b), out in zip(self.layers, sizes, strict=True):
            if w.shape != (out, width) or b.shape != (out,):
                raise CheckpointError(f"layer shapes {w.shape}/{b.shape} do not fit {self.spec}")
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise CheckpointError("the network has weights that are not finite numbers (NaN or inf)")
            width = out
        f32 = [(np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in self.layers]
        wts = tuple(np.ascontiguousarray(w.T) for w, _ in f32[:-1])
        bs = tuple(np.ascontiguousarray(b) for _, b in f32[:-1])
        w_out, b_out = (np.ascontiguousarray(a) for a in f32[-1])
        object.__setattr__(self, "compiled", (wts, bs, w_out, b_out, ACT_CODES[self.spec.activation]))

    def probs(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """``(N, num_inputs)`` encoded positions -> ``(N, 5)`` probabilities, each from its side on roll."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        width = num_inputs(self.spec.encoding_version)
        if x.ndim != 2 or x.shape[1] != width:
            raise ValueError(f"inputs must have shape (N, {width}), got {x.shape}")
        if not jit.COMPILED:  # plain Python kernels (bgbot.jit): numpy's matrix products are the fast way
            return self.probs_numpy(x)
        out = np.empty((x.shape[0], 5), dtype=np.float32)
        forward_rows(x, self.compiled, out)
        return out

    def probs_numpy(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """:meth:`probs` by numpy matrix products (the reference the compiled pass is tested against)."""
        act = _ACT[self.spec.activation]
        h = np.asarray(x, dtype=np.float32)
        for w, b in self.layers[:-1]:
            h = act(h @ w.T + b)
        w, b = self.layers[-1]
        return _sigmoid(h @ w.T + b)


def save_npz(path: str | Path, net: NumpyNet, **meta: Any) -> Path:
    """Write ``net`` and a JSON-able ``meta`` dict as an ``.npz`` model file, atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    description = {"format": MODEL_FORMAT, **_spec_dict(net.spec), **meta}
    if net.by_class:
        description["class_nets"] = {name: _spec_dict(sub.spec) for name, sub in net.by_class.items()}
    arrays: dict[str, NDArray[Any]] = {"meta": np.frombuffer(json.dumps(description).encode(), dtype=np.uint8)}
    for prefix, one in [("", net), *((f"{name}.", sub) for name, sub in net.by_class.items())]:
        for i, (w, b) in enumerate(one.layers):
            arrays[f"{prefix}w{i}"], arrays[f"{prefix}b{i}"] = w, b
    with atomic_open(path) as f:
        np.savez(f, **arrays)
    return path


def read_npz(path: str | Path) -> tuple[NumpyNet, dict[str, Any]]:
    """Read an ``.npz`` model file: the network and its description (``CheckpointError`` for a bad file)."""
    path = Path(path)
    q = repr(str(path))
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
        if bad is not None:
            raise CheckpointError(f"model file {q} is corrupt: entry {bad!r} fails its checksum")
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
                raise CheckpointError(f"{q} is not a bgbot model of format {MODEL_FORMAT!r}")
            classes = meta.get("class_nets", {})
            if not isinstance(classes, dict):
                raise CheckpointError(f"model file {q}: 'class_nets' must be a table, got {quote_input(classes)}")
            layers = {name: _layers(z, prefix, q) for name, prefix in [("", ""), *((c, f"{c}.") for c in classes)]}
    except CheckpointError:
        raise
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise CheckpointError(f"model file {q} is not a readable bgbot model (truncated or corrupt?): {exc}") from None
    try:
        subs = {name: NumpyNet(_spec_of(d, q), layers[name]) for name, d in classes.items()}
        return NumpyNet(_spec_of(meta, q), layers[""], subs), meta
    except CheckpointError as exc:
        raise CheckpointError(f"model file {q}: {exc}") from None


def _spec_dict(spec: ModelSpec) -> dict[str, Any]:
    return {"encoding_version": spec.encoding_version, "hidden": list(spec.hidden), "activation": spec.activation}


def _spec_of(d: object, q: str) -> ModelSpec:
    """The :class:`ModelSpec` a model file's description (or one class network's) gives."""
    try:
        hidden = d["hidden"]  # type: ignore[index]
        return ModelSpec(d["encoding_version"], tuple(hidden) if isinstance(hidden, list) else hidden,  # type: ignore[index]
                         d["activation"])  # type: ignore[index]
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"model file {q} has no usable model description: {exc}") from None


def _layers(z: Any, prefix: str, q: str) -> tuple[tuple[NDArray[np.float32], NDArray[np.float32]], ...]:
    """The ``PREFIXw0, PREFIXb0, ...`` arrays of an open model file, as float32 layer pairs."""
    n = sum(1 for k in z.files if k.startswith(prefix + "w") and k[len(prefix) + 1 :].isdigit())
    raw = [(z[f"{prefix}w{i}"], z[f"{prefix}b{i}"]) for i in range(n)]
    odd = sorted({str(a.dtype) for pair in raw for a in pair if a.dtype.kind != "f"})
    if odd:
        raise CheckpointError(f"model file {q} has weights of type {', '.join(odd)}, not floating-point numbers")
    return tuple((w.astype(np.float32), b.astype(np.float32)) for w, b in raw)
