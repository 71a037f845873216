"""Label noise against cost: which rollout settings buy the most label quality per CPU-second.

Positions are those ``bgbot label`` would label (:func:`bgbot.labels.generate.sample_pool`, seed
``--seed``), each before its side on roll rolls.  Each candidate setting labels them once (its own dice),
and a reference rollout labels them again with other dice (``--ref-trials`` trials to the end, luck
adjusted).  Printed per setting, with cubeless equities of the side on roll:

* CPU seconds a label (this process, one thread);
* the rms standard error the labels report (their noise);
* the mean difference to the reference (bias, with its standard error) and the rms difference that is
  left once both sides' noise is taken out (``excess``: the error that more labels do not average away,
  what truncation at the network's value costs);
* ``noise efficiency`` ``1 / (se**2 * seconds)``: labels of equal noise bought per CPU-second, relative
  to the first setting, and ``error efficiency`` ``1 / ((se**2 + excess**2) * seconds)``, the same with
  the excess counted as noise.

    python benchmarks/label_cost.py --positions 48 --seed 7
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.engine.rollout import rollout_probs
from bgbot.engine.search import BearoffEvaluator
from bgbot.eval.evaluate import NetEvaluator, equity
from bgbot.eval.models import load_model
from bgbot.labels.generate import LabelSettings, rollout_settings, sample_pool

CANDIDATES = [
    ("36 trials, to the end, no luck", LabelSettings(trials=36, truncate=0, luck=False)),
    ("36 trials, to the end, luck", LabelSettings(trials=36, truncate=0, luck=True)),
    ("36 trials, truncated at 11 plies, luck", LabelSettings(trials=36, truncate=11, luck=True)),
    ("36 trials, truncated at 7 plies, luck", LabelSettings(trials=36, truncate=7, luck=True)),
    ("72 trials, truncated at 7 plies, no luck", LabelSettings(trials=72, truncate=7, luck=False)),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=48)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ref-trials", type=int, default=144)
    ap.add_argument("--checkpoint", help="labelling model (default the shipped one)")
    args = ap.parse_args()

    ev = BearoffEvaluator(NetEvaluator(load_model(args.checkpoint).net))
    boards, _, _ = sample_pool(ev, LabelSettings(pool=args.positions), np.random.default_rng(args.seed))
    t0 = time.process_time()
    ref_st = rollout_settings(LabelSettings(trials=args.ref_trials, truncate=0, luck=True), args.seed + 1000)
    ref, ref_se = rollout_probs(ev, boards, ref_st, dice_per_row=True, with_se=True)
    ref_eq = equity(ref)
    print(f"{len(boards)} positions (seed {args.seed}); reference: {args.ref_trials} trials to the end, luck "
          f"adjusted, rms se {math.sqrt(float((ref_se ** 2).mean())):.4f}, {time.process_time() - t0:.0f} CPU s")
    rows = []
    for name, st in CANDIDATES:
        t0 = time.process_time()
        probs, se = rollout_probs(ev, boards, dataclasses.replace(rollout_settings(st, args.seed)),
                                  dice_per_row=True, with_se=True)
        cost = (time.process_time() - t0) / len(boards)
        d = equity(probs) - ref_eq
        noise = float((se.astype(np.float64) ** 2).mean())
        excess2 = max(0.0, float((d ** 2).mean()) - noise - float((ref_se.astype(np.float64) ** 2).mean()))
        bias_se = float(d.std(ddof=1) / math.sqrt(len(d)))
        rows.append((name, cost, math.sqrt(noise), float(d.mean()), bias_se, math.sqrt(excess2),
                     1.0 / (noise * cost), 1.0 / ((noise + excess2) * cost)))
    base_n, base_e = rows[0][6], rows[0][7]
    print("| setting | CPU s a label | rms se | bias vs reference | excess rms | noise efficiency | error efficiency |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, cost, se, bias, bse, ex, eff_n, eff_e in rows:
        print(f"| {name} | {cost:.3f} | {se:.4f} | {bias:+.4f} ± {bse:.4f} | {ex:.4f} | {eff_n / base_n:.1f}x | "
              f"{eff_e / base_e:.1f}x |")


if __name__ == "__main__":
    main()
