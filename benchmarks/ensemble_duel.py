"""Does averaging several networks' outputs play better than one?  A 1-ply duplicate duel against a reference.

The ensemble answers each position with the (weighted) mean of its networks' probabilities (each from the
side on roll's view, so the mean is consistent too); it and the reference (default: the shipped model)
choose their plays greedily at 1-ply, cubeless, with duplicate dice (``bgbot.play.duel``)::

    python benchmarks/ensemble_duel.py checkpoints/bgbot-default.pt runs/g7td/refined.pt --pairs 10000 --seed 5

Prints the ensemble's ppg against the reference with its standard error over the duplicate pairs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from _common import ROOT  # puts the checkout on sys.path
from numpy.typing import NDArray

from bgbot.engine.search import greedy_chooser
from bgbot.errors import BgbotError
from bgbot.eval.evaluate import NetEvaluator
from bgbot.play.duel import duel


class MeanEvaluator:
    """The weighted mean of several evaluators' probabilities (side on roll's view, before the roll)."""

    def __init__(self, evaluators: list[NetEvaluator], weights: list[float]) -> None:
        w = np.asarray(weights, dtype=np.float64)
        self.evaluators, self.weights = evaluators, (w / w.sum()).astype(np.float32)

    def __call__(self, boards: NDArray[np.int8]) -> NDArray[np.float32]:
        out = np.zeros((len(boards), 5), dtype=np.float32)
        for w, e in zip(self.weights, self.evaluators, strict=True):
            out += w * e(boards)
        return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="the ensemble's checkpoints")
    ap.add_argument("--weights", type=float, nargs="+", help="one per model (default equal)")
    ap.add_argument("--against", default=str(ROOT / "checkpoints" / "bgbot-default.pt"))
    ap.add_argument("--pairs", type=int, default=10000, help="duplicate pairs (games = 2 x pairs)")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args(argv)
    weights = args.weights or [1.0] * len(args.models)
    if len(weights) != len(args.models) or any(not w > 0 for w in weights):
        raise SystemExit(f"--weights needs one positive weight per model, got {args.weights!r}")
    if args.pairs < 2:
        raise SystemExit(f"--pairs must be at least 2, got {args.pairs!r}")
    try:
        ens = MeanEvaluator([NetEvaluator.from_checkpoint(m) for m in args.models], weights)
        ref = NetEvaluator.from_checkpoint(args.against)
    except BgbotError as e:
        raise SystemExit(str(e)) from None
    t0 = time.perf_counter()
    r = duel(greedy_chooser(ens), greedy_chooser(ref), args.pairs, seed=args.seed, progress=True)
    print(json.dumps({"models": args.models, "weights": weights, "against": args.against, "games": 2 * args.pairs,
                      "seed": args.seed, "ppg": r.ppg, "se": r.se, "seconds": round(time.perf_counter() - t0)}))


if __name__ == "__main__":
    sys.exit(main())
