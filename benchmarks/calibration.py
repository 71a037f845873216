"""Calibration curves of the network's outputs against reference labels, by position class.

For every labelled position (side on roll, before its roll) the network's 1-ply probabilities
``[win, wg, wbg, lg, lbg]`` are compared with a reference: the positions are binned by the
prediction (equal-count bins per class and output), and the mean reference is plotted against the
mean prediction per bin, one column of panels per class (contact, crashed, race: gnubg's classes),
the win and gammon outputs on top and the backgammon outputs below, zoomed.  A perfectly
calibrated output lies on the diagonal.  The table printed gives the mean signed error
(prediction minus reference) per output and class, with its standard error (the spread of the
differences over the square root of the count; the labels' own noise is part of it).

References (``--reference``):

* ``cube`` (default): gnubg 2-ply probabilities of the money cube benchmark
  (``tests/data/benchmark/cube.jsonl`` and ``cube-1000.jsonl``; ``--data`` for others).
  These positions are cube decisions (the side on roll usually the favourite).
* ``bank``: the label bank (``training/labels/``, ``--bank``): bgbot's rollout labels.
* ``rollout``: fresh rollouts of positions drawn from ``--positions`` (JSON lines with a
  ``position`` field; default: the checker benchmark's), ``--per-class`` of each class, with
  ``--trials`` luck-adjusted trials of 1-ply play to the end of the game; ``--save`` keeps them
  as an ``.npz`` (boards, probs, se, settings) for ``--reference npz --labels FILE``.
* ``npz``: labels saved by ``--save``.

``--calibration FILE`` applies a calibration (:mod:`bgbot.eval.calibration`) to the predictions
first (the "after" picture); ``--fit OUT.json`` fits one on this set and writes it with its
provenance.

Usage::

    python benchmarks/calibration.py                          # gnubg 2-ply of the cube benchmark
    python benchmarks/calibration.py --reference bank
    nice -n 10 python benchmarks/calibration.py --reference rollout --per-class 150 --save runs/cal.npz
    python benchmarks/calibration.py --reference npz --labels runs/cal.npz --png docs/calibration.png
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import REFDATA, ROOT  # puts the checkout on sys.path
from numpy.typing import NDArray

from bgbot.errors import BgbotError, quote_input
from bgbot.rules.position import Position, PositionClass, classify_boards

OUTPUTS = ("win", "wg", "wbg", "lg", "lbg")
#: the classes plotted, in the figure's order (bear-offs are exact, nothing to calibrate)
CLASSES: dict[str, int] = {"contact": int(PositionClass.CONTACT), "crashed": int(PositionClass.CRASHED),
                           "race": int(PositionClass.RACE)}
DEFAULT_PNG = ROOT / "docs" / "calibration.png"


class CalibrationInputError(BgbotError):
    """A reference file or option the calibration benchmark cannot use; the message quotes it."""


@dataclass
class Labels:
    """Reference labels: boards ``(N, 26)`` and probabilities ``(N, 5)``, both from each side on roll."""

    boards: NDArray[np.int8]
    probs: NDArray[np.float64]
    what: str


def _read_jsonl(path: Path) -> list[dict]:
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise CalibrationInputError(f"cannot read {quote_input(str(path))}: {e.strerror}") from None
    rows = []
    for k, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise CalibrationInputError(f"{quote_input(str(path))} line {k} is not JSON: "
                                            f"{quote_input(line[:60])}") from None
    return rows


def _boards(ids: Sequence[str], where: str) -> NDArray[np.int8]:
    out = np.empty((len(ids), 26), dtype=np.int8)
    for k, pid in enumerate(ids):
        try:
            out[k] = Position.from_id(pid).array()
        except (BgbotError, ValueError, TypeError):
            raise CalibrationInputError(f"{where}: {quote_input(pid)} is not a gnubg Position ID") from None
    return out


def cube_labels(paths: Sequence[Path]) -> Labels:
    """gnubg 2-ply probabilities (``probs``) of the cube benchmark files' positions."""
    rows = [r for p in paths for r in _read_jsonl(p)]
    try:
        ids = [r["position"] for r in rows]
        probs = np.array([r["probs"] for r in rows], dtype=np.float64).reshape(len(rows), 5)
    except (KeyError, TypeError, ValueError):
        raise CalibrationInputError(f"{', '.join(quote_input(str(p)) for p in paths)}: every line needs "
                                    "'position' and five 'probs'") from None
    return Labels(_boards(ids, "cube file"), probs, f"gnubg 2-ply probabilities of {len(rows)} positions")


def bank_labels(bank: Path) -> Labels:
    """The label bank's rollout labels (:func:`bgbot.labels.bank.load_bank`)."""
    from bgbot.labels.bank import load_bank

    s = load_bank(bank)
    return Labels(np.asarray(s.board, dtype=np.int8), np.asarray(s.probs, dtype=np.float64),
                  f"label bank {bank}, {len(s.probs)} rollout labels")


def npz_labels(path: Path) -> Labels:
    """Labels saved by ``--save``."""
    try:
        with np.load(path, allow_pickle=False) as z:
            boards, probs = z["boards"].astype(np.int8), z["probs"].astype(np.float64)
            settings = str(z["settings"]) if "settings" in z else "?"
    except (OSError, KeyError, ValueError) as e:
        raise CalibrationInputError(f"{quote_input(str(path))} is not a labels file from --save: {e}") from None
    if boards.ndim != 2 or boards.shape[1] != 26 or probs.shape != (len(boards), 5):
        raise CalibrationInputError(f"{quote_input(str(path))}: boards {boards.shape} and probs {probs.shape} "
                                    "must be (N, 26) and (N, 5)")
    return Labels(boards, probs, f"{path.name}: {len(probs)} labels ({settings})")


def rollout_labels(evaluator: object, positions: Sequence[Path], per_class: int, trials: int, seed: int,
                   save: Path | None) -> Labels:
    """Fresh rollout labels: ``per_class`` positions of each class drawn from ``positions``, rolled out to the end.

    Luck-adjusted, first roll stratified (36), 1-ply play, cubeless; ``trials`` per position.
    """
    from bgbot.engine.rollout import RolloutSettings, rollout_probs

    ids = sorted({r["position"] for p in positions for r in _read_jsonl(p) if "position" in r})
    boards = _boards(ids, "positions file")
    cls = classify_boards(boards)
    rng = np.random.default_rng(seed)
    pick = np.concatenate([rng.permutation(np.flatnonzero(cls == c))[:per_class] for c in CLASSES.values()])
    boards = boards[np.sort(pick)]
    settings = RolloutSettings(trials=trials, ply=1, truncate=0, cubeful=False, luck=True, stratify=36, seed=seed)
    t0 = time.time()
    probs, se = rollout_probs(evaluator, boards, settings, dice_per_row=True, with_se=True)
    text = (f"bgbot rollouts, {trials} luck-adjusted trials to the end, 1-ply play, seed {seed}, "
            f"{time.time() - t0:.0f} s")
    if save is not None:
        from bgbot.fileio import atomic_open

        save.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(save, "wb") as f:
            np.savez(f, boards=boards, probs=np.asarray(probs, np.float32), se=np.asarray(se, np.float32),
                     settings=np.str_(text + f"; positions {', '.join(p.name for p in positions)}"))
    return Labels(boards, np.asarray(probs, dtype=np.float64), f"{len(boards)} {text}")


@dataclass
class Curve:
    """One output of one class: mean prediction and mean reference per bin, with the reference's SE."""

    pred: NDArray[np.float64]
    ref: NDArray[np.float64]
    se: NDArray[np.float64]


def calibration_curves(pred: NDArray[np.float64], ref: NDArray[np.float64], bins: int) -> Curve:
    """Equal-count bins of ``pred`` (one output): mean prediction, mean reference and SE of the difference."""
    order = np.argsort(pred, kind="stable")
    groups = [g for g in np.array_split(order, min(bins, len(order))) if len(g)]
    mp = np.array([pred[g].mean() for g in groups])
    mr = np.array([ref[g].mean() for g in groups])
    se = np.array([(ref[g] - pred[g]).std(ddof=1) / np.sqrt(len(g)) if len(g) > 1 else np.nan for g in groups])
    return Curve(mp, mr, se)


def error_table(pred: NDArray[np.float64], ref: NDArray[np.float64], cls: NDArray[np.integer]) -> list[str]:
    """Lines of the mean signed error (prediction - reference) +- SE per class and output, in probability points."""
    lines = [f"{'class':<9}{'n':>6}" + "".join(f"{o:>17}" for o in OUTPUTS)]
    for name, code in CLASSES.items():
        m = cls == code
        if not m.any():
            continue
        d = pred[m] - ref[m]
        cells = []
        for k in range(5):
            se = d[:, k].std(ddof=1) / np.sqrt(m.sum()) if m.sum() > 1 else float("nan")
            cells.append(f"{100 * d[:, k].mean():+7.2f} +- {100 * se:4.2f}")
        lines.append(f"{name:<9}{int(m.sum()):>6}" + "".join(f"{c:>17}" for c in cells))
    return lines


def plot(pred: NDArray[np.float64], ref: NDArray[np.float64], cls: NDArray[np.integer], bins: int, title: str,
         png: Path) -> Path:
    """The calibration figure: one column per class, win/gammons on top, backgammons below; written to ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"win": "black", "wg": "tab:blue", "wbg": "tab:cyan", "lg": "tab:red", "lbg": "tab:orange"}
    fig, axes = plt.subplots(2, len(CLASSES), figsize=(4.2 * len(CLASSES), 8.0), squeeze=False)
    for j, (name, code) in enumerate(CLASSES.items()):
        m = cls == code
        for i, outs in enumerate((("win", "wg", "lg"), ("wbg", "lbg"))):
            ax = axes[i][j]
            top = 0.01  # the backgammon panels zoom to their largest mean
            if m.sum() >= 2:
                for o in outs:
                    k = OUTPUTS.index(o)
                    c = calibration_curves(pred[m, k], ref[m, k], bins)
                    ax.errorbar(c.pred, c.ref, yerr=c.se, marker="o", ms=3, lw=1, capsize=2, color=colors[o], label=o)
                    top = max(top, 1.1 * float(np.nanmax(np.r_[c.pred, c.ref + np.nan_to_num(c.se)])))
            lim = 1.0 if i == 0 else min(1.0, top)
            ax.plot([0, lim], [0, lim], color="grey", lw=0.8, ls="--")
            ax.set_xlim(0, lim)
            ax.set_ylim(0, lim)
            ax.set_xlabel("network 1-ply (mean per bin)")
            ax.set_ylabel("reference (mean per bin)")
            ax.set_title(f"{name} ({int(m.sum())} positions)" if i == 0 else f"{name}: backgammons")
            ax.legend(loc="upper left", fontsize=8)
            ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = png.with_name(png.name + ".part")
    fig.savefig(tmp, format="png", dpi=90)
    plt.close(fig)
    os.replace(tmp, png)  # atomic: a reader never sees half a picture
    return png


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", choices=("cube", "bank", "rollout", "npz"), default="cube")
    ap.add_argument("--data", type=Path, action="append",
                    help="cube benchmark file(s) for --reference cube (default: cube.jsonl and cube-1000.jsonl)")
    ap.add_argument("--bank", type=Path, default=ROOT / "training" / "labels", help="label bank for --reference bank")
    ap.add_argument("--labels", type=Path, help="labels file (from --save) for --reference npz")
    ap.add_argument("--positions", type=Path, action="append",
                    help="positions for --reference rollout (default: the checker benchmark files)")
    ap.add_argument("--per-class", type=int, default=100, help="rollout positions per class (default 100)")
    ap.add_argument("--trials", type=int, default=36, help="rollout trials per position (default 36)")
    ap.add_argument("--seed", type=int, default=1, help="rollout and sampling seed (default 1)")
    ap.add_argument("--save", type=Path, help="keep fresh rollout labels in this .npz")
    ap.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT or the shipped model)")
    ap.add_argument("--calibration", type=Path, help="apply this calibration file to the predictions")
    ap.add_argument("--fit", type=Path, help="fit a calibration on these labels and write it here (JSON)")
    ap.add_argument("--bins", type=int, default=8, help="bins per class and output (default 8)")
    ap.add_argument("--png", type=Path, default=DEFAULT_PNG, help=f"figure (default {DEFAULT_PNG.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except BgbotError as e:
        print(f"calibration: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from bgbot.engine.api import Engine
    from bgbot.eval.calibration import CalibratedEvaluator, fit_calibration, load_calibration

    if args.bins < 1 or args.per_class < 1 or args.trials < 1:
        raise CalibrationInputError(f"--bins, --per-class and --trials must be at least 1, got {args.bins}, "
                                    f"{args.per_class}, {args.trials}")
    engine = Engine.load(args.checkpoint)
    if args.reference == "cube":
        labels = cube_labels(args.data or [REFDATA / "cube.jsonl", REFDATA / "cube-1000.jsonl"])
    elif args.reference == "bank":
        labels = bank_labels(args.bank)
    elif args.reference == "npz":
        if args.labels is None:
            raise CalibrationInputError("--reference npz needs --labels FILE")
        labels = npz_labels(args.labels)
    else:
        positions = args.positions or [REFDATA / "checker-3000.jsonl", REFDATA / "checker.jsonl"]
        labels = rollout_labels(engine.evaluator, positions, args.per_class, args.trials, args.seed, args.save)
    cls = classify_boards(labels.boards)
    keep = np.isin(cls, list(CLASSES.values()))
    if not keep.any():
        raise CalibrationInputError(f"no contact, crashed or race position among the labels ({labels.what})")
    boards, ref, cls = labels.boards[keep], labels.probs[keep], cls[keep]
    evaluator = engine.evaluator
    note = ""
    if args.calibration is not None:
        evaluator = CalibratedEvaluator(evaluator, load_calibration(args.calibration))
        note = f", calibrated by {args.calibration.name}"
    pred = np.asarray(evaluator(boards), dtype=np.float64)
    print(f"reference: {labels.what}; network: {engine.describe()}{note}")
    print("mean signed error, network 1-ply minus reference, in percentage points (+- standard error)")
    for line in error_table(pred, ref, cls):
        print(line)
    png = plot(pred, ref, cls, args.bins, f"network 1-ply{note} vs {labels.what}", args.png)
    print(f"figure: {png}")
    if args.fit is not None:
        cal = fit_calibration(pred, ref, cls, provenance={
            "reference": labels.what, "network": engine.describe(), "positions": len(ref),
            "command": "python benchmarks/calibration.py " + " ".join(sys.argv[1:]),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        cal.save(args.fit)
        print(f"calibration: {args.fit}: {json.dumps(cal.to_json()['maps'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
