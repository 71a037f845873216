"""How often a network's 1-ply choice among a roll's best plays is its teacher's deeper choice.

Reads a label folder made with ``candidates`` (``python -m training.refine generate --config
configs/refine/2ply-rank.toml ...``: the six best plays by 1-ply of rolls of self-play, each labelled
at 2-ply, stored by roll) and, for every checkpoint given, picks in each roll the play its own 1-ply
equity likes best (from the mover's view: minus the network's equity of the position after the
play, which is from the opponent's view).  Prints the share of rolls where that is the label's best
play and the mean equity the pick gives up against the label's best, in millipoints, with its
standard error; with two or more checkpoints, each one's loss minus the first's, paired by roll.
The labels are one network's 2-ply (or, from configs/refine/3ply-rank.toml, 3-ply) values, so this
measures how well a network's search copies a deeper search's choices, not strength: a pit or the gate
judges that.  With ``--ply 2`` each play is valued by the checkpoint's own 2-ply search instead (the
opponent's 21 rolls, its reply by 1-ply, then the network; bear-offs from the database, as play does):
how much of 3-ply's choice a 2-ply player makes.

    python benchmarks/sibling_agreement.py runs/rank-test checkpoints/bgbot-gen11.pt checkpoints/bgbot-default.pt
    python benchmarks/sibling_agreement.py --ply 2 runs/rank3 checkpoints/bgbot-default.pt
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

import numpy as np
from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.engine.search import BearoffEvaluator, lookahead_probs
from bgbot.errors import BgbotError, ConfigError
from bgbot.eval.evaluate import NetEvaluator, equity, segment_argmax
from bgbot.eval.models import load_model


def losses(
    boards: np.ndarray, labels: np.ndarray, group: np.ndarray, checkpoint: str, ply: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Per roll: whether the checkpoint's pick at ``ply`` (1 or 2) is the label's best, and the equity it gives up."""
    evaluate = NetEvaluator(load_model(checkpoint).net)  # each position's class network, as play routes it
    if ply == 1:
        probs = np.asarray(evaluate(boards), dtype=np.float64)
    else:  # the position after each play looked at one roll (the opponent's) ahead, as 2-ply play does
        probs = lookahead_probs(BearoffEvaluator(evaluate), boards, ply - 1)
    mine = -equity(probs)  # mover's view
    theirs = -equity(labels.astype(np.float64))
    n = int(group.max()) + 1
    pick = segment_argmax(mine, group, n)
    best = segment_argmax(theirs, group, n)
    return pick == best, theirs[best] - theirs[pick]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="a label folder stored by roll (generate with candidates)")
    ap.add_argument("checkpoints", nargs="+", help="networks to compare (.pt or .npz)")
    ap.add_argument("--ply", type=int, choices=(1, 2), default=1, help="the search that picks (default 1: the network)")
    args = ap.parse_args(argv)
    try:
        run(args.data, args.checkpoints, args.ply)
    except (BgbotError, OSError) as exc:
        sys.exit(f"sibling_agreement: {exc}")


def run(data: str, checkpoints: Sequence[str], ply: int = 1) -> None:
    """Print each checkpoint's agreement (its pick at ``ply``) with the labels' best play of each roll in ``data``."""
    from training.refine import load_chunks, load_groups

    boards, labels, _ = load_chunks(data)
    raw = load_groups(data)
    sizes = np.bincount(raw)
    keep = sizes[raw] >= 2  # a roll with one stored play has no choice
    if not keep.any():
        raise ConfigError(f"{data!r} stores no roll with two or more plays: generate it with candidates")
    boards, labels = boards[keep], labels[keep]
    _, group = np.unique(raw[keep], return_inverse=True)
    order = np.argsort(group, kind="stable")  # segment_argmax wants each roll's rows together
    boards, labels, group = boards[order], labels[order], group[order]
    print(f"{data}: {int(group.max()) + 1} rolls with 2 or more plays, {len(group)} plays; picks at {ply}-ply")
    first: np.ndarray | None = None
    for ckpt in checkpoints:
        agree, loss = losses(boards, labels, group, ckpt, ply)
        se = loss.std(ddof=1) / math.sqrt(len(loss)) * 1000
        line = f"{ckpt}: agrees {agree.mean() * 100:.1f}%, gives up {loss.mean() * 1000:.3f} +- {se:.3f} mp a roll"
        if first is None:
            first = loss
        else:
            d = loss - first
            line += f"; minus the first {d.mean() * 1000:+.3f} +- {d.std(ddof=1) / math.sqrt(len(d)) * 1000:.3f}"
        print(line)


if __name__ == "__main__":
    main()
