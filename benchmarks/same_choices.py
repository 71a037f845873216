"""Record or check the moves bgbot chooses on the 400 benchmark positions (speed work must not change them).

``--record FILE`` writes, for every position of ``tests/data/benchmark/checker.jsonl``,
the best play's result (gnubg Position ID, opponent's view) at 1- and 2-ply,
cubeless and cubeful (money, cube centred), with the model's SHA-256;
``--check FILE`` (the default: ``tests/data/speed/choices.jsonl``) compares the
current engine against such a record and prints every difference with the
equity gap between the two plays (a near tie may flip with float rounding).

Usage::

    python benchmarks/same_choices.py --record tests/data/speed/choices.jsonl
    python benchmarks/same_choices.py            # check
    python benchmarks/same_choices.py --modes 3,3c --check tests/data/speed/choices3.jsonl   # 3-ply (slower)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from _common import REFDATA, ROOT  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.rules.position import Position

DEFAULT = ROOT / "tests" / "data" / "speed" / "choices.jsonl"
MODES = {"1": (1, True), "1c": (1, False), "2": (2, True), "2c": (2, False), "3": (3, True), "3c": (3, False)}
# name -> (ply, cubeless)


def choices(engine: Engine, rows: Sequence[dict], modes: Sequence[str]) -> list[dict]:
    """For each row, each mode's best result and its equity margin over the second-best play."""
    out = []
    for r in rows:
        pos = Position.from_id(r["position"])
        item: dict = {"position": r["position"], "dice": r["dice"]}
        for name in modes:
            ply, cubeless = MODES[name]
            a = engine.best_move(pos, tuple(r["dice"]), ply, cubeless=cubeless)
            c = a.candidates
            item[name] = c[0].result.gnubg_id()
            same_ply = len(c) > 1 and c[1].ply == c[0].ply
            item[name + "_margin"] = round(c[0].equity - c[1].equity, 6) if same_ply else None
        out.append(item)
    return out


def model_sha(engine: Engine) -> str:
    """SHA-256 of the engine's model file."""
    assert engine.checkpoint is not None
    return hashlib.sha256(Path(engine.checkpoint).read_bytes()).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", type=Path, help="write the current choices to this file")
    ap.add_argument("--check", type=Path, default=DEFAULT, help=f"compare against this record (default {DEFAULT})")
    ap.add_argument("--modes", default="1,1c,2,2c", help="which of 1, 1c, 2, 2c, 3, 3c (c: cubeful)")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    rows = [json.loads(line) for line in (REFDATA / "checker.jsonl").read_text().splitlines() if line.strip()]
    engine = Engine.load()
    sha = model_sha(engine)
    got = choices(engine, rows, modes)
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps({"model_sha256": sha, "modes": modes})] + [json.dumps(g) for g in got]
        tmp = args.record.with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n")
        tmp.replace(args.record)
        print(f"recorded {len(got)} positions x {len(modes)} modes in {args.record}")
        return 0
    head, *recorded = [json.loads(line) for line in args.check.read_text().splitlines() if line.strip()]
    if head["model_sha256"] != sha:
        print(f"the record is of model {head['model_sha256'][:12]}, the engine's is {sha[:12]}: not comparable")
        return 1
    bad = 0
    for want, have in zip(recorded, got, strict=True):
        for name in modes:
            if want[name] != have[name]:
                bad += 1
                print(
                    f"{want['position']} {want['dice']} {name}: was {want[name]} (margin {want[name + '_margin']}),"
                    f" now {have[name]} (margin {have[name + '_margin']})"
                )
    print(f"{len(got)} positions x {len(modes)} modes: {bad} different choices")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
