"""Two candidates' pits against the same opponent on the same seeds, paired: mean ppg of each and of the difference.

Each argument is a glob of ``bgbot pit --out`` JSON files, one per seed (``--seed S`` in the pit; the seed is
read from the JSON).  Pits with the same seed and game count dealt the same dice, so the per-seed difference
of the two candidates' ppg cancels most of the dice's noise::

    for s in $(seq 1 14); do bgbot pit bgbot:ply=1,checkpoint=M gnubg:ply=0 --no-cube --games 2000 \\
        --workers 2 --seed $s --out runs/pits/M/s$s.json; done
    python benchmarks/pit_pairs.py 'runs/pits/M/s*.json' 'runs/pits/default/s*.json'

Prints each side's mean ppg over the seeds both have, with its standard error over seeds, and the mean
paired difference (first minus second) with its standard error.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
from collections.abc import Sequence
from pathlib import Path


def by_seed(pattern: str) -> dict[tuple[int, int], tuple[float, str, str]]:
    """``(seed, games) -> (ppg, bot a, bot b)`` of the pit JSONs matching ``pattern``."""
    out: dict[tuple[int, int], tuple[float, str, str]] = {}
    for path in sorted(glob.glob(pattern)):
        try:
            d = json.loads(Path(path).read_text())
            out[(int(d["seed"]), int(d["games"]))] = (float(d["ppg"]), str(d["a"]), str(d["b"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{path!r} is not a bgbot pit report: {e}") from None
    if not out:
        raise SystemExit(f"no pit reports match {pattern!r}")
    return out


def se(xs: Sequence[float]) -> float:
    """Standard error of the mean (0 for fewer than two values)."""
    return statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", help="glob of the first candidate's pit JSONs")
    ap.add_argument("second", help="glob of the second candidate's pit JSONs")
    args = ap.parse_args(argv)
    a, b = by_seed(args.first), by_seed(args.second)
    common = sorted(set(a) & set(b))
    if not common:
        raise SystemExit(f"no (seed, games) in common between {args.first!r} and {args.second!r}")
    opponents = {a[k][2] for k in common} | {b[k][2] for k in common}
    if len(opponents) > 1:
        raise SystemExit(f"the pits have different opponents: {sorted(opponents)}")
    pa = [a[k][0] for k in common]
    pb = [b[k][0] for k in common]
    diff = [x - y for x, y in zip(pa, pb, strict=True)]
    games = sum(k[1] for k in common)
    seeds = ", ".join(str(k[0]) for k in common)
    print(f"{len(common)} seeds ({seeds}), {games} games in all for each candidate, against {opponents.pop()}")
    print(f"first  {a[common[0]][1]:<50} {statistics.fmean(pa):+.4f} ± {se(pa):.4f}")
    print(f"second {b[common[0]][1]:<50} {statistics.fmean(pb):+.4f} ± {se(pb):.4f}")
    print(f"first - second, paired by seed{'':<27} {statistics.fmean(diff):+.4f} ± {se(diff):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
