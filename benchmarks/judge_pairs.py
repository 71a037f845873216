"""Two graded pits on the same dice, paired by game record: each player's loss per game by position class.

``benchmarks/loss_by_class.py RECORDS --decisions FILE`` writes every graded checker play of saved pit games as
a JSON line (record, player name, position class, equity error against the judge). Two pits with the same seed
and game count dealt the same dice, so record ``pair00012-1.mat`` of one is the same deal as in the other; the
per-record difference of a player's summed error cancels much of the dice's noise::

    bgbot pit "bgbot:ply=2,checkpoint=A" gnubg:ply=0 --no-cube --games 800 --seed 101 --save-games runs/ra
    python benchmarks/loss_by_class.py runs/ra --decisions runs/ra.jsonl     # the same for B -> runs/rb.jsonl
    python benchmarks/judge_pairs.py runs/ra.jsonl --against runs/rb.jsonl

Each side may be several decision files (a grading split in parts). Prints, per class and per player (the bgbot
player, named ``bgbot...``, and its opponent), the loss per game in each pit and the mean paired difference
(first minus ``--against``) with its standard error over records. Errors are the mover's equity given away,
cubeless, as the judge values it.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

CLASSES = ("all", "contact", "crashed", "race")


def per_record(paths: Sequence[str]) -> tuple[dict[str, Counter[tuple[str, str]]], Counter[tuple[str, str]]]:
    """``record -> (player, class) -> summed error`` and ``(player, class) -> moves`` of the decision files.

    ``player`` is ``"bgbot"`` for a player whose name starts with ``bgbot`` and ``"opponent"`` otherwise.
    """
    per: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    moves: Counter[tuple[str, str]] = Counter()
    for path in paths:
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise SystemExit(f"cannot read the decision file {path!r}: {exc}") from None
        for n, line in enumerate(text.splitlines(), 1):
            try:
                r = json.loads(line)
                if not r["counted"]:
                    continue
                who = "bgbot" if str(r["name"]).startswith("bgbot") else "opponent"
                err, cls, rec = float(r["error"]), str(r["class"]), str(r["record"])
            except (ValueError, KeyError, TypeError) as exc:
                raise SystemExit(f"{path}:{n}: not a loss_by_class decision line ({exc}): {line[:80]!r}") from None
            for c in (cls, "all"):
                per[rec][(who, c)] += err
                moves[(who, c)] += 1
    return per, moves


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("first", nargs="+", help="decision files of the first pit")
    ap.add_argument("--against", nargs="+", required=True, help="decision files of the second pit (same dice)")
    args = ap.parse_args(argv)
    a, ma = per_record(args.first)
    b, mb = per_record(args.against)
    recs = sorted(set(a) & set(b))
    if len(recs) < 2:
        raise SystemExit(f"only {len(recs)} records in both: were the pits played on the same seed?")
    print(f"{len(recs)} records in both; loss per game (equity), first minus second paired by record, 1 se")
    print(f"{'class':9s} {'player':9s} {'first':>8s} {'moves':>6s} {'second':>8s} {'moves':>6s} {'difference':>18s}")
    for cls in CLASSES:
        for who in ("bgbot", "opponent"):
            d = [a[r][(who, cls)] - b[r][(who, cls)] for r in recs]
            mean = sum(d) / len(d)
            se = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1) / len(d))
            fa = sum(a[r][(who, cls)] for r in recs) / len(recs)
            fb = sum(b[r][(who, cls)] for r in recs) / len(recs)
            n_a, n_b = ma[(who, cls)], mb[(who, cls)]
            print(f"{cls:9s} {who:9s} {fa:8.4f} {n_a:6d} {fb:8.4f} {n_b:6d} {mean:+10.4f} ± {se:.4f}")


if __name__ == "__main__":
    main()
