"""What a CPU-hour of labels buys: the shipped model fitted to each kind at equal cost, scored on new positions.

``benchmarks/label_cost.py`` measures a label's noise per CPU-second; this measures what training needs, the
error of a network fitted to the labels.  Each ``--arm NAME=BANK[:luck|:noluck]`` is a label bank (or the
shards of it made with or without luck adjustment).  An arm takes its bank's shards in the manifest's order
until their CPU seconds (finding the positions and rolling them out) reach ``--cpu-seconds``, the last shard
cut to a proportional prefix (a shard's rows are shuffled, so any prefix is a fair sample); it combines
repeated positions and refits the shipped model's main network to them (:func:`training.refine.fit`,
``--lr``, ``--epochs``, a cosine course, the best epoch on a 5% hold-out of the arm's own rows).

The yardstick is independent of every label: ``--positions`` new positions drawn the way ``bgbot label``
draws them (:func:`bgbot.labels.generate.sample_pool`, seed ``--seed``, none in any arm's bank), valued by
gnubg 2-ply (``gnubg_nn``, the ``ref`` extra).  Printed per arm, for the contact positions (the main
network's): the rms error of the cubeless equity of the side on roll against gnubg 2-ply, and the change of
the mean squared error against the shipped model on the same positions, with its standard error (paired).
Finding a position is timed here too, for shards that did not record it.

    python benchmarks/label_value.py --arm luck=training/labels:luck --arm noluck=training/labels:noluck \\
        --cpu-seconds 1500
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.eval.evaluate import equity
from bgbot.labels.bank import bank_ids, combine, read_manifest, read_shard
from bgbot.labels.generate import LabelSettings, sample_pool
from bgbot.rules.position import PositionClass, classify_boards

SHIPPED = ROOT / "checkpoints" / "bgbot-default.pt"


def parse_arm(spec: str) -> tuple[str, Path, str]:
    """``NAME=BANK[:luck|:noluck]`` -> (name, bank, kind)."""
    name, _, rest = spec.partition("=")
    bank_s, _, kind = rest.partition(":")
    if not name or not bank_s or kind not in ("", "luck", "noluck"):
        raise SystemExit(f"--arm {spec!r}: expected NAME=BANK, NAME=BANK:luck or NAME=BANK:noluck")
    return name, Path(bank_s), kind


def arm_rows(spec: str, cpu_seconds: float, sample_cost: float) -> dict[str, Any]:
    """An arm's combined rows and what they cost: each shard's labelling CPU seconds and the finding of its
    positions (the shard's ``sample_cpu_seconds``, or ``sample_cost`` a position where it has none)."""
    _, bank, kind = parse_arm(spec)
    cols: dict[str, list[np.ndarray]] = {"position_id": [], "board": [], "probs": [], "se": []}
    spent = 0.0
    for e in read_manifest(bank)["shards"]:
        if kind and e["settings"].get("luck", True) != (kind == "luck"):
            continue
        if cpu_seconds and spent >= cpu_seconds:
            break
        cost = e["cpu_seconds"] + e.get("sample_cpu_seconds", sample_cost * e["count"])
        take = e["count"]
        if cpu_seconds and spent + cost > cpu_seconds:
            take = int(e["count"] * (cpu_seconds - spent) / cost)
        arrays = read_shard(bank / e["file"], e["sha256"])
        for k in cols:
            cols[k].append(arrays[k][:take])
        spent += cost * take / e["count"]
    if not cols["position_id"]:
        raise SystemExit(f"--arm {spec!r}: no shard of that kind in {str(bank)!r}")
    a = {k: np.concatenate(v) for k, v in cols.items()}
    c = combine(a["position_id"], a["probs"], a["se"])
    return {"bank": bank, "board": a["board"][c.first], "probs": c.probs, "se": c.se, "labels": len(a["se"]),
                  "cpu_seconds": spent}


def fit_arm(rows: dict[str, Any], lr: float, epochs: int, work: Path) -> Path | None:
    """Refit the shipped main network to ``rows``; the checkpoint, or None when no epoch improved it."""
    from bgbot.errors import CheckpointError
    from bgbot.fileio import atomic_open
    from training.refine import fit

    data = work / "src" / "data"
    data.mkdir(parents=True)
    order = np.random.default_rng(7).permutation(len(rows["probs"]))
    for k, i in enumerate(range(0, len(order), 4096)):
        part = order[i:i + 4096]
        with atomic_open(data / f"chunk-{k:05d}.npz") as f:
            np.savez(f, boards=rows["board"][part], labels=rows["probs"][part],
                     groups=np.arange(len(part), dtype=np.int64), se=rows["se"][part])
    try:
        fit(SHIPPED, work / "src", work, epochs=epochs, lr=lr, batch=128, holdout=0.05, seed=1, progress=False,
            schedule="cosine")
    except CheckpointError:
        return None
    return work / "refined.pt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arm", action="append", required=True, help="NAME=BANK[:luck|:noluck] (repeat)")
    ap.add_argument("--cpu-seconds", type=float, default=0.0, help="each arm's labelling budget (0: all of it)")
    ap.add_argument("--positions", type=int, default=3000, help="held-out positions (default 3000)")
    ap.add_argument("--seed", type=int, default=424242, help="held-out positions' seed (default 424242)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=12)
    args = ap.parse_args()
    try:
        import gnubg_nn
    except ImportError:
        raise SystemExit("the yardstick is gnubg 2-ply: pip install gnubg-nn (or the .[ref] extra)") from None

    shipped = Engine.load(SHIPPED, threads=1)
    skip: set[str] = set()
    for spec in args.arm:
        skip |= bank_ids(parse_arm(spec)[1])
    t0, c0 = time.perf_counter(), time.process_time()
    rng = np.random.default_rng(args.seed)
    boards, ids, _ = sample_pool(shipped.evaluator, LabelSettings(pool=args.positions), rng, skip)
    sample_cost = (time.process_time() - c0) / len(ids)  # finding a position, for shards that did not time it
    arms = {parse_arm(spec)[0]: arm_rows(spec, args.cpu_seconds, sample_cost) for spec in args.arm}
    ref = np.array([gnubg_nn.probabilities(gnubg_nn.board_from_position_id(str(i)), 2) for i in ids])
    contact = classify_boards(boards) == PositionClass.CONTACT
    ref_eq = equity(ref[contact])
    base_err = equity(shipped.evaluator(boards[contact])) - ref_eq
    print(f"held out: {contact.sum()} contact positions of {len(ids)} (seed {args.seed}), gnubg 2-ply, "
          f"{time.perf_counter() - t0:.0f} s (finding one: {1000 * sample_cost:.1f} CPU ms); shipped model rms "
          f"{math.sqrt(float(np.mean(base_err ** 2))):.4f}")
    budget = f"{args.cpu_seconds:.0f} CPU s of labels an arm" if args.cpu_seconds else "every label of each arm"
    print(f"fit: the main network, lr {args.lr}, {args.epochs} epochs; {budget}")
    results = []
    for name, rows in arms.items():
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = fit_arm(rows, args.lr, args.epochs, Path(tmp))
            err = base_err if ckpt is None else equity(Engine.load(ckpt, threads=1).evaluator(boards[contact])) - ref_eq
        d = err ** 2 - base_err ** 2
        row = {"arm": name, "labels": rows["labels"], "positions": len(rows["probs"]),
               "cpu_seconds": round(rows["cpu_seconds"]), "rms_se": float(np.sqrt(np.mean(rows["se"] ** 2))),
               "rms": float(np.sqrt(np.mean(err ** 2))), "dmse": float(d.mean()),
               "dmse_se": float(d.std(ddof=1) / math.sqrt(len(d))), "fitted": ckpt is not None}
        results.append(row)
        print(f"  {name:12s} {row['labels']:>8,} labels ({row['positions']:,} positions, {row['cpu_seconds']:,} CPU s, "
              f"label rms se {row['rms_se']:.3f}): rms {row['rms']:.4f}, mse change "
              f"{row['dmse'] * 1e4:+.2f} +- {row['dmse_se'] * 1e4:.2f} e-4"
              + ("" if row["fitted"] else " (no epoch improved)"))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
