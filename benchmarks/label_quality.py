"""How close refinement labels are to GNU Backgammon's 2-ply evaluation, and how much of the gap is noise.

Takes the first ``--limit`` rows of a labelled folder (``training.refine generate``'s ``DIR/data/chunk-*``),
and for each position (before its side on roll rolls) compares, with gnubg 2-ply (``gnubg_nn``, XG 3-ply:
bgbot's 3-ply depth) as the reference:

* the stored label;
* bgbot's own 1-, 2- and 3-ply values from the model (``--checkpoint``, default the folder's);
* two cubeless rollouts of the position with other seeds (``--seed`` and ``--seed + 1``), with the folder's
  own rollout settings or those of ``--trials``/``--truncate``/``--luck``: the difference between two
  independent rollouts gives a rollout's noise, and its mean squared error minus that noise its squared
  bias (``--no-rollout`` skips them).

All equities are cubeless money equities of the side on roll.  Printed per kind: the mean difference to
gnubg (bias, with its standard error), the root mean square difference, and for rollouts the noise sd and
the root of (mean square - noise variance): the error a network fitted to many such labels can approach.

    python benchmarks/label_quality.py --data runs/ro --limit 300
    python benchmarks/label_quality.py --data runs/ro --limit 120 --luck   # luck-adjusted rollouts instead
    python benchmarks/label_quality.py --data runs/ro --from-chunk 480 --limit 800 --no-rollout --checkpoint M
        # a fitted model on chunks its fit never saw
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from _common import ROOT  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.engine.rollout import rollout_probs
from bgbot.engine.search import lookahead_probs
from bgbot.eval.evaluate import equity
from bgbot.rules.position import Position
from training.refine import GenerateConfig, load_chunks, rollout_settings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="a training.refine generate folder")
    ap.add_argument("--checkpoint", help="model for the 1-, 2- and 3-ply values (default: the folder's model)")
    ap.add_argument("--limit", type=int, default=400, help="rows compared (default 400)")
    ap.add_argument("--from-chunk", type=int, default=0,
                    help="compare rows of this chunk and later only (chunks a fit held out; default 0)")
    ap.add_argument("--seed", type=int, default=7, help="seeds of the two rollouts: this and the next (default 7)")
    ap.add_argument("--trials", type=int, help="rollout trials (default: the folder's, else 36)")
    ap.add_argument("--truncate", type=int, help="rollout truncation in plies (default: the folder's, else 7)")
    ap.add_argument("--luck", action="store_true", help="luck-adjusted rollouts")
    ap.add_argument("--no-rollout", action="store_true", help="compare the label and bgbot's values only")
    args = ap.parse_args(argv)
    try:
        import gnubg_nn
    except ImportError:
        print("gnubg_nn is not installed (pip install gnubg-nn, or .[ref]): nothing to compare with", file=sys.stderr)
        return 2
    meta = json.loads((args.data / "generate.json").read_text())
    cfg = GenerateConfig(**{**GenerateConfig().__dict__, **meta["config"]})
    model = args.checkpoint or meta["model"]
    boards, labels, chunk = load_chunks(args.data)
    keep = chunk >= args.from_chunk
    boards, labels = boards[keep][: args.limit], labels[keep][: args.limit]
    if len(boards) == 0:
        print(f"no rows in chunk {args.from_chunk} or later under {str(args.data)!r}", file=sys.stderr)
        return 2
    engine = Engine.load(model if Path(model).is_absolute() else ROOT / model)
    t = time.perf_counter()
    ref = np.array([gnubg_nn.probabilities(gnubg_nn.board_from_position_id(Position.from_array(b).gnubg_id()), 2)
                    for b in boards])
    t_ref = time.perf_counter() - t
    kinds: dict[str, np.ndarray] = {"label": equity(labels)}
    kinds["bgbot 1-ply"] = equity(engine.evaluator(boards))
    kinds["bgbot 2-ply"] = equity(lookahead_probs(engine.evaluator, boards, 1))
    t = time.perf_counter()
    kinds["bgbot 3-ply"] = equity(lookahead_probs(engine.evaluator, boards, 2))
    t_3 = time.perf_counter() - t
    noise = None
    if not args.no_rollout:
        rc = dataclasses.replace(cfg, label="rollout", luck=args.luck or (cfg.luck and cfg.label == "rollout"),
                                 **{k: v for k in ("trials", "truncate") if (v := getattr(args, k)) is not None})
        t = time.perf_counter()
        ros = [equity(rollout_probs(engine.evaluator, boards, dataclasses.replace(rollout_settings(rc, 0), seed=s),
                                    dice_per_row=True))
               for s in (args.seed, args.seed + 1)]
        t_ro = (time.perf_counter() - t) / 2
        kinds["rollout A"], kinds["rollout B"] = ros
        noise = float(np.var(ros[0] - ros[1]) / 2.0)  # two independent estimates of one value
    gnubg = equity(ref)
    n = len(boards)
    print(f"data: {args.data} ({meta['config'].get('label', 'lookahead')} labels), model: {model}, {n} positions")
    print(f"reference: gnubg_nn 2-ply ({t_ref / n * 1000:.1f} ms a position); bgbot 3-ply {t_3 / n * 1000:.1f} ms",
          end="")
    print(f", rollout {t_ro / n * 1000:.1f} ms" if noise is not None else "")
    print(f"{'kind':<16} {'bias':>8} {'se':>7} {'rms':>7} {'rms - noise':>12}")
    for name, eq in kinds.items():
        d = eq - gnubg
        rms = math.sqrt(float(np.mean(d**2)))
        line = f"{name:<16} {d.mean():+8.4f} {d.std(ddof=1) / math.sqrt(n):7.4f} {rms:7.4f}"
        if noise is not None and name.startswith("rollout"):
            line += f" {math.sqrt(max(rms**2 - noise, 0.0)):12.4f}"
        print(line)
    if noise is not None:
        print(f"rollout noise: sd {math.sqrt(noise):.4f} equity ({rc.trials} trials, truncated after {rc.truncate} "
              f"plies, {'luck-adjusted' if rc.luck else 'no luck adjustment'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
