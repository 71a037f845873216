"""How far a network's 1-, 2- and 3-ply values of one roll's plays are from a rollout's, relative to each other.

A checker play reads only the differences between the plays of one roll.  This takes positions from
saved games (`bgbot pit ... --save-games DIR`, contact positions, as ``generate --records DIR --candidates K``
with ``common_dice`` labels them), gives each a random roll, keeps its best plays by 1-ply
(``--candidates``), and rolls every
play out twice on common dice within the roll (two seeds, ``--trials`` each, 1-ply play, truncated after
``--truncate`` plies at the network's value).  Each value is measured from its roll's mean (the mover's
equity, millipoints are thousandths of a point).  It prints the rollout's own noise (from the two
halves), each ply's rms distance from the rollout (and with the noise taken out), and how often that
ply's best play is the rollout's.  The rollout is bgbot's own (its play and its network at the leaves),
so this says how much a rollout label corrects each search's ranking, not which is right.

    python benchmarks/sibling_rollout.py runs/recs --positions 200 --trials 288
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Sequence

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.errors import BgbotError, ConfigError


def deviations(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each value minus the mean of its group's values."""
    n = int(group.max()) + 1
    mean = np.bincount(group, values, minlength=n) / np.bincount(group, minlength=n)
    return values - mean[group]


def run(records: str, checkpoint: str, positions: int, candidates: int, trials: int, truncate: int, seed: int,
        skip: int) -> None:
    """Print the comparison for ``positions`` record positions (after the first ``skip`` of the shuffled pool)."""
    from bgbot.engine.rollout import rollout_probs
    from bgbot.engine.search import BearoffEvaluator, lookahead_probs
    from bgbot.eval.bearoff import get_bearoff_db
    from bgbot.eval.evaluate import NetEvaluator, equity, segment_argmax
    from bgbot.eval.models import load_model
    from training.refine import GenerateConfig, record_candidates, record_positions, rollout_settings

    ev = BearoffEvaluator(NetEvaluator(load_model(checkpoint).net))
    cfg = GenerateConfig(seed=seed, classes="contact", label="rollout", trials=trials, truncate=truncate,
                         records=records, candidates=candidates)
    pool = record_positions(cfg, get_bearoff_db())[skip:skip + positions]
    boards, raw = record_candidates(ev, pool, candidates, np.random.default_rng(seed))
    if len(boards) == 0:
        raise ConfigError(f"--positions {positions!r} --skip {skip!r} --candidates {candidates!r}: no roll with two "
                          f"or more plays to compare ({len(pool)} positions taken from {records!r})")
    _, group = np.unique(raw, return_inverse=True)
    print(f"{records}: {len(pool)} positions, {int(group.max()) + 1} rolls with 2 or more plays, {len(boards)} plays; "
          f"{checkpoint}; rollouts of {trials} trials twice, truncated after {truncate} plies, seed {seed}")
    halves = []
    for s in (seed * 2 + 1, seed * 2 + 2):
        t0 = time.perf_counter()
        st = dataclasses.replace(rollout_settings(cfg, 0), seed=s)
        halves.append(deviations(-equity(rollout_probs(ev, boards, st, dice_groups=group)), group))
        print(f"  rollout seed {s}: {time.perf_counter() - t0:.0f} s, "
              f"{(time.perf_counter() - t0) / len(boards) * 1000:.1f} ms a play")
    truth = (halves[0] + halves[1]) / 2
    noise = float(np.std(halves[0] - halves[1]) / 2)  # sd of the mean of the two halves
    print(f"  rollout noise (both halves, {2 * trials} trials): {noise * 1000:.1f} mp rms; "
          f"one {trials}-trial rollout: {noise * math.sqrt(2) * 1000:.1f} mp")
    rolls = int(group.max()) + 1
    for ply in (1, 2, 3):
        dev = deviations(-equity(lookahead_probs(ev, boards, ply - 1)), group)
        rms = float(np.sqrt(np.mean((dev - truth) ** 2)))
        agree = np.mean(segment_argmax(dev, group, rolls) == segment_argmax(truth, group, rolls))
        clean = math.sqrt(max(rms ** 2 - noise ** 2, 0))
        print(f"  {ply}-ply: {rms * 1000:.1f} mp rms from the rollout, {clean * 1000:.1f} without its noise; "
              f"the same best play in {agree * 100:.0f}% of rolls")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", help="a folder of saved games (.mat / .sgf)")
    ap.add_argument("--checkpoint", default="checkpoints/bgbot-default.pt")
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--skip", type=int, default=1000, help="start this far into the pool (shuffled by --seed)")
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--trials", type=int, default=288, help="trials a rollout (a multiple of 36), two rollouts a play")
    ap.add_argument("--truncate", type=int, default=7)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    try:
        run(args.records, args.checkpoint, args.positions, args.candidates, args.trials, args.truncate, args.seed,
            args.skip)
    except (BgbotError, OSError) as exc:
        sys.exit(f"sibling_rollout: {exc}")


if __name__ == "__main__":
    main()
