"""Checker play by rollout against gnubg 2-ply, beside bgbot's own 2-ply and 3-ply choices.

For the first ``--limit`` contact positions of ``tests/data/benchmark/checker.jsonl`` (gnubg 1.07 2-ply
cubeless equities of every play), bgbot picks a play three ways: its 2-ply and 3-ply search (cubeless
ranking), and the best of the top ``--top`` plays of a ``--preselect``-ply pre-selection by a cubeless
rollout (``--trials`` trials, ``--truncate`` plies, checker play 1-ply).  The loss of a choice is gnubg's
best equity minus gnubg's equity of the choice (millipoints, mean over positions; a play the file does
not list counts at the worst listed equity).  ``ceiling``: the loss if the rollout always found the best
of its candidates by gnubg's figures (what the pre-selection allows).  ``--out`` writes one JSON line per
position.

Usage::

    python benchmarks/rollout_checker.py --limit 50 --trials 1296 --truncate 7 --workers 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _common import REFDATA  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.engine.rollout import RolloutSettings
from training.gate import choice_loss

DATA = REFDATA / "checker.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--truncate", type=int, default=7)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--preselect", type=int, default=2)
    ap.add_argument("--luck", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["class"] == "contact"][: args.limit]
    engine = Engine.load()
    st = RolloutSettings(
        trials=args.trials,
        truncate=args.truncate,
        cubeful=False,
        luck=args.luck,
        seed=args.seed,
        trials_per_task=max(1, args.trials // 8),
    )
    print(f"{len(rows)} contact positions; rollout: top {args.top} of {args.preselect}-ply, {st.describe()}")
    losses: dict[str, list[float]] = {"2-ply": [], "3-ply": [], "rollout": [], "ceiling": []}
    seconds = {"2-ply": 0.0, "3-ply": 0.0, "rollout": 0.0}
    out = args.out.open("w") if args.out else None
    for n, row in enumerate(rows, 1):
        dice = tuple(row["dice"])
        picks = {}
        for ply in (2, 3):
            t0 = time.perf_counter()
            picks[f"{ply}-ply"] = engine.best_move(row["position"], dice, ply, cubeless=True).best.result.gnubg_id()
            seconds[f"{ply}-ply"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        r = engine.rollout(
            row["position"], dice, settings=st, top=args.top, preselect_ply=args.preselect, workers=args.workers
        )
        seconds["rollout"] += time.perf_counter() - t0
        picks["rollout"] = r.entries[0].result.gnubg_id()
        for k, v in picks.items():
            losses[k].append(choice_loss(row, v))
        losses["ceiling"].append(min(choice_loss(row, e.result.gnubg_id()) for e in r.entries))
        rec = {
            "position": row["position"],
            "dice": row["dice"],
            **{k: 1000 * v[-1] for k, v in losses.items()},
            "rollout_lines": [(e.label, e.mean[5], e.se[5]) for e in r.entries],
        }
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        means = "  ".join(f"{k} {1000 * statistics.mean(v):5.1f}" for k, v in losses.items())
        print(f"[{n:>3}/{len(rows)}] {row['position']} {dice[0]}{dice[1]}: mean loss (mp) {means}", flush=True)
    print()
    print(f"{'choice':<10} {'mean loss mp':>13} {'se':>6} {'best':>5} {'s/position':>11}")
    for k, v in losses.items():
        se = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else 0.0
        best = sum(1 for x in v if x <= 1e-9)
        secs = f"{seconds[k] / len(v):11.2f}" if k in seconds else f"{'':>11}"
        print(f"{k:<10} {1000 * statistics.mean(v):13.1f} {1000 * se:6.1f} {best:>5} {secs}")
    diffs = {k: [a - b for a, b in zip(losses["rollout"], losses[k], strict=True)] for k in ("2-ply", "3-ply")}
    for k, d in diffs.items():
        se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
        print(f"rollout minus {k}: {1000 * statistics.mean(d):+.1f} ± {1000 * se:.1f} mp (paired over positions)")


if __name__ == "__main__":
    main()
