"""Per-class calibration of a network's five outputs, fitted on reference labels and applied at inference.

A network's outputs ``[win, wg, wbg, lg, lbg]`` (side on roll, before its roll; gammons include
backgammons, gnubg's order) are split into five conditional chances, each in [0, 1]:

* ``win``;
* ``wg / win`` (a win is a gammon), ``wbg / wg`` (a gammon win is a backgammon);
* ``lg / (1 - win)`` (a loss is a gammon), ``lbg / lg`` (a gammon loss is a backgammon).

Each conditional chance ``q`` of a position of class ``c`` (race, crashed, contact: gnubg's classes,
:class:`~bgbot.rules.position.PositionClass`) is mapped as ``logit(q') = a * logit(q) + b`` (Platt
scaling); ``a = 1, b = 0`` leaves it as it is.  The calibrated chances are multiplied back into five
cumulative probabilities, which are consistent by construction (``0 <= wbg <= wg <= win`` and
``lbg <= lg <= 1 - win``).  Bear-off positions (exact database) and finished games are never touched.

:func:`fit_calibration` fits ``(a, b)`` per class and output by weighted logistic regression on soft
targets (the reference's conditional chance), each position weighted by the reference's mass of the
condition (``win`` for ``wg / win``, ``wg`` for ``wbg / wg``, ...), so that the calibrated cumulative
probabilities match the reference on average.  A :class:`Calibration` is kept as a small JSON file
with its provenance (:meth:`Calibration.save`, :func:`load_calibration`); :class:`CalibratedEvaluator`
wraps any :class:`~bgbot.eval.evaluate.Evaluator` with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bgbot.errors import BgbotError, quote_input
from bgbot.fileio import write_text_atomic
from bgbot.rules.position import PositionClass, classify_boards

__all__ = [
    "CALIBRATED_CLASSES",
    "CONDITIONALS",
    "CalibratedEvaluator",
    "Calibration",
    "CalibrationError",
    "apply_calibration",
    "conditionals",
    "cumulative",
    "fit_calibration",
    "load_calibration",
]

FORMAT = "bgbot-calibration-1"
#: the classes a calibration may map (bear-offs are exact and finished games are results)
CALIBRATED_CLASSES: dict[str, int] = {
    "race": int(PositionClass.RACE),
    "crashed": int(PositionClass.CRASHED),
    "contact": int(PositionClass.CONTACT),
}
#: the five conditional chances, in this order (see the module's docstring)
CONDITIONALS: tuple[str, ...] = ("win", "wg|win", "wbg|wg", "lg|loss", "lbg|lg")
_EPS = 1e-6


class CalibrationError(BgbotError):
    """A calibration file or fit input that cannot be used; the message quotes it."""


def conditionals(probs: NDArray[np.floating]) -> NDArray[np.float64]:
    """The five conditional chances ``(N, 5)`` (:data:`CONDITIONALS`) of cumulative ``(N, 5)`` probabilities.

    Both from the side on roll; a chance whose condition has no mass (no win, say) is 0.
    """
    p = np.asarray(probs, dtype=np.float64)
    w, wg, wbg, lg, lbg = p.T
    loss = 1.0 - w

    def ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(den > _EPS, num / np.maximum(den, _EPS), 0.0)

    return np.clip(np.stack([w, ratio(wg, w), ratio(wbg, wg), ratio(lg, loss), ratio(lbg, lg)], axis=1), 0.0, 1.0)


def cumulative(cond: NDArray[np.floating]) -> NDArray[np.float64]:
    """The cumulative probabilities ``[win, wg, wbg, lg, lbg]`` of conditional chances (:func:`conditionals`)."""
    c = np.asarray(cond, dtype=np.float64)
    w = c[:, 0]
    wg = w * c[:, 1]
    lg = (1.0 - w) * c[:, 3]
    return np.stack([w, wg, wg * c[:, 2], lg, lg * c[:, 4]], axis=1)


def _logit(q: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(q, _EPS, 1.0 - _EPS)
    return np.log(q) - np.log1p(-q)


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True)
class Calibration:
    """Platt maps ``(a, b)`` per class name (:data:`CALIBRATED_CLASSES`) and conditional (:data:`CONDITIONALS`).

    ``maps[cls][output] = (a, b)``; a class or output not listed is left as it is.  ``provenance`` says
    what the maps were fitted on (reference, positions, command, network); it is kept with them.
    """

    maps: Mapping[str, Mapping[str, tuple[float, float]]]
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for cls, outs in self.maps.items():
            if cls not in CALIBRATED_CLASSES:
                raise CalibrationError(f"unknown position class {quote_input(cls)}; known: "
                                       f"{', '.join(CALIBRATED_CLASSES)}")
            for out, ab in outs.items():
                if out not in CONDITIONALS:
                    raise CalibrationError(f"unknown output {quote_input(out)}; known: {', '.join(CONDITIONALS)}")
                if (len(ab) != 2 or not all(isinstance(v, int | float) and np.isfinite(v) for v in ab)
                        or not ab[0] > 0):
                    raise CalibrationError(f"the map of {cls} {out} must be two finite numbers (a > 0, b), "
                                           f"got {quote_input(ab)}")

    def to_json(self) -> dict[str, Any]:
        """The calibration as a JSON-ready dict (``format``, ``maps``, ``provenance``)."""
        return {"format": FORMAT,
                "maps": {c: {o: [float(a), float(b)] for o, (a, b) in outs.items()} for c, outs in self.maps.items()},
                "provenance": dict(self.provenance)}

    def save(self, path: str | Path) -> Path:
        """Write the calibration to ``path`` as JSON, atomically."""
        p = Path(path)
        write_text_atomic(p, json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n")
        return p


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file (:meth:`Calibration.save`); a missing or malformed file names itself."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise CalibrationError(f"calibration file {str(p)!r} does not exist") from None
    except (OSError, ValueError) as e:
        raise CalibrationError(f"cannot read calibration file {str(p)!r}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("maps"), dict):
        raise CalibrationError(f"{str(p)!r} is not a {FORMAT} file")
    try:
        maps = {str(c): {str(o): (float(ab[0]), float(ab[1])) for o, ab in outs.items()}
                for c, outs in data["maps"].items()}
    except (AttributeError, TypeError, ValueError, IndexError, KeyError):
        raise CalibrationError(f"{str(p)!r} has a malformed 'maps' entry") from None
    return Calibration(maps, data.get("provenance", {}))


def apply_calibration(
    cal: Calibration, probs: NDArray[np.floating], classes: NDArray[np.integer]
) -> NDArray[np.float32]:
    """``probs`` ``(N, 5)`` (side on roll) with each row's class maps applied; other rows unchanged.

    ``classes`` are :class:`~bgbot.rules.position.PositionClass` codes, one per row.
    """
    out = np.array(probs, dtype=np.float32, copy=True)
    cls = np.asarray(classes)
    for name, outs in cal.maps.items():
        rows = np.flatnonzero(cls == CALIBRATED_CLASSES[name])
        if rows.size == 0 or not outs:
            continue
        cond = conditionals(out[rows])
        for k, o in enumerate(CONDITIONALS):
            if o in outs:
                a, b = outs[o]
                has = cond[:, k] > 0.0  # a chance that is exactly 0 (no gammon possible) stays 0
                cond[has, k] = _sigmoid(a * _logit(cond[has, k]) + b)
        out[rows] = cumulative(cond).astype(np.float32)
    return out


class CalibratedEvaluator:
    """An :class:`~bgbot.eval.evaluate.Evaluator` whose answers are ``base``'s with a :class:`Calibration` applied.

    Boards ``(N, 26)`` from their side on roll, before the roll; probabilities from the same side.
    Bear-off positions and finished games keep ``base``'s answer (the calibration has no map for them).
    """

    def __init__(self, base: Any, calibration: Calibration) -> None:
        self.base = base
        self.calibration = calibration

    def __call__(self, boards: NDArray[np.int8]) -> NDArray[np.float32]:
        probs = np.asarray(self.base(boards), dtype=np.float32)
        if probs.shape[0] == 0:
            return probs
        return apply_calibration(self.calibration, probs, classify_boards(boards))


def _fit_platt(pred: NDArray[np.float64], target: NDArray[np.float64], weight: NDArray[np.float64],
               ridge: float, iters: int = 50) -> tuple[float, float]:
    """(a, b) minimising the weighted cross-entropy of ``sigmoid(a * logit(pred) + b)`` against ``target``.

    Newton's method with a small ridge pulling toward the identity (a = 1, b = 0).
    """
    z = _logit(pred)
    theta = np.array([1.0, 0.0])
    x = np.stack([z, np.ones_like(z)], axis=1)
    for _ in range(iters):
        q = _sigmoid(x @ theta)
        grad = x.T @ (weight * (q - target)) + ridge * (theta - [1.0, 0.0])
        hess = (x * (weight * q * (1.0 - q))[:, None]).T @ x + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if np.abs(step).max() < 1e-9:
            break
    a, b = float(theta[0]), float(theta[1])
    if not (np.isfinite(a) and np.isfinite(b)) or a <= 0.0:
        return 1.0, 0.0
    return a, b


def fit_calibration(
    pred: NDArray[np.floating],
    ref: NDArray[np.floating],
    classes: NDArray[np.integer],
    *,
    outputs: Sequence[str] = CONDITIONALS,
    min_mass: float = 20.0,
    ridge: float = 1.0,
    provenance: Mapping[str, Any] | None = None,
) -> Calibration:
    """Fit Platt maps per class so that ``pred`` ``(N, 5)`` matches ``ref`` ``(N, 5)`` (both side on roll).

    ``classes`` holds each row's :class:`~bgbot.rules.position.PositionClass` code.  A class and output
    whose condition's total reference mass is below ``min_mass`` (fewer than about that many positions'
    worth of wins, gammons, ...) keeps the identity map: too little to fit.  ``ridge`` pulls every map
    toward the identity.
    """
    p = np.asarray(pred, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    cls = np.asarray(classes)
    if p.ndim != 2 or p.shape[1] != 5 or r.shape != p.shape or cls.shape != (p.shape[0],):
        raise CalibrationError(f"predictions {p.shape}, references {r.shape} and classes {cls.shape} "
                               "must be (N, 5), (N, 5) and (N,)")
    bad = [o for o in outputs if o not in CONDITIONALS]
    if bad:
        raise CalibrationError(f"unknown output {quote_input(bad[0])}; known: {', '.join(CONDITIONALS)}")
    pc, rc = conditionals(p), conditionals(r)
    # the mass of each conditional's condition, from the reference: 1, win, wg, loss, lg
    mass = np.stack([np.ones(len(r)), r[:, 0], r[:, 1], 1.0 - r[:, 0], r[:, 3]], axis=1)
    maps: dict[str, dict[str, tuple[float, float]]] = {}
    for name, code in CALIBRATED_CLASSES.items():
        rows = cls == code
        outs: dict[str, tuple[float, float]] = {}
        for k, o in enumerate(CONDITIONALS):
            if o not in outputs:
                continue
            sel = rows & (pc[:, k] > 0.0) & (mass[:, k] > 0.0)
            if mass[sel, k].sum() < min_mass:
                continue
            outs[o] = _fit_platt(pc[sel, k], rc[sel, k], mass[sel, k], ridge)
        if outs:
            maps[name] = outs
    return Calibration(maps, dict(provenance or {}))
