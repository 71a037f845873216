"""Fit the one-roll lookahead's cube correction (``bgbot.engine.cube_lookahead.ONE_ROLL_SHIFT``) and measure it.

A 2-ply cube decision looks one roll ahead, and each roll's best play is picked by the values that score it, so
the side on roll's double/take figure comes out high and its no-double figure low: 2-ply doubles too often.  This
script fits the correction without gnubg's answers: it draws positions from the label bank (contact, crashed and
race positions whose label equity is between 0.1 and 1.6 for the side on roll, half with the cube centred and
half owned by the side on roll at 2; seeded), decides each at 2-ply uncorrected and at 3-ply, and searches a grid
of shifts of the 2-ply no-double and double/take equities (cube-normalised, side on roll) for the one whose
decisions agree most with 3-ply's.  Then, on gnubg's money cube files (gnubg 2-ply's decisions, never used for the
fit), it prints 2-ply's agreement uncorrected, with the fitted shift and with the shipped one.

Usage::

    python benchmarks/cube_odd_ply.py                       # 2 x 3,000 positions, seeds 7 and 8
    python benchmarks/cube_odd_ply.py --positions 500 --seeds 1
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bgbot.engine.api import Engine
from bgbot.engine.cube import money_decision_from_equities
from bgbot.engine.cube_lookahead import NO_SHIFT, ONE_ROLL_SHIFT, CubeShift
from bgbot.rules.matchstate import CubeState
from bgbot.rules.position import Position

DATA = ROOT / "tests" / "data" / "benchmark"
GRID_ND = np.round(np.arange(0.0, 0.0401, 0.005), 3)
GRID_DT = np.round(np.arange(-0.05, 0.0001, 0.005), 3)
# one decision: (probs at 2-ply, no double, double/take, cube state) uncorrected, and the reference action
Row = tuple[list[float], float, float | None, CubeState, float, str]


def sample(bank: Path, n: int, seed: int) -> list[tuple[str, CubeState]]:
    """``n`` bank positions (seeded) whose label equity is in the doubling range, with alternating cube states."""
    from bgbot.eval.evaluate import equity
    from bgbot.labels.bank import load_bank

    labels = load_bank(bank, verify=False)
    e = equity(labels.probs.astype(np.float64))
    ok = np.flatnonzero((e > 0.1) & (e < 1.6) & (labels.cls >= 2))
    pick = np.random.default_rng(seed).choice(ok, n, replace=False)
    return [(str(labels.position_id[i]), CubeState() if k % 2 == 0 else CubeState(cube=2, owner="me"))
            for k, i in enumerate(pick)]


def decide(engine: Engine, items: Sequence[tuple[str, CubeState]], reference: Sequence[str] | None,
           desc: str) -> list[Row]:
    """Each position's uncorrected 2-ply figures and its reference action (3-ply's when ``reference`` is None)."""
    rows: list[Row] = []
    for k, (pid, state) in enumerate(tqdm(items, desc=desc, unit="position", leave=False)):
        pos = Position.from_id(pid)
        two = engine.cube_action(pos, state, ply=2)
        want = engine.cube_action(pos, state, ply=3).action if reference is None else reference[k]
        probs = engine.evaluate(pos, 2).tolist()
        rows.append((probs, two.equity_no_double, two.equity_double_take, state, engine.cube_efficiency(pos), want))
    return rows


def agreement(rows: Sequence[Row], shift: CubeShift) -> float:
    """Share of ``rows`` whose 2-ply decision with ``shift`` is the reference action."""
    hits = 0
    for probs, nd, dt, state, x, want in rows:
        if dt is None:  # no double is legal: nothing to shift
            act = "no_double"
        else:
            act = money_decision_from_equities(probs, nd + shift.no_double, dt + shift.double_take,
                                               cube_value=state.cube, owner=state.owner, x=x).action
        hits += act == want
    return hits / len(rows)


def fit(rows: Sequence[Row]) -> tuple[CubeShift, float]:
    """The grid's shift whose decisions agree most with the reference (ties: the smallest shift)."""
    scored = [(agreement(rows, CubeShift(float(a), float(b))), -abs(a) - abs(b), float(a), float(b))
              for a in GRID_ND for b in GRID_DT]
    best = max(scored)
    return CubeShift(best[2], best[3]), best[0]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=3000, help="bank positions a seed (default 3000)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[7, 8])
    ap.add_argument("--bank", type=Path, default=ROOT / "training" / "labels")
    ap.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT or the shipped model)")
    args = ap.parse_args(argv)
    engine = Engine.load(args.checkpoint, cube_shift=NO_SHIFT)
    rows: list[Row] = []
    for seed in args.seeds:
        part = decide(engine, sample(args.bank, args.positions, seed), None, f"bank seed {seed}")
        print(f"bank seed {seed}: {len(part)} positions; 2-ply agrees with 3-ply {100 * agreement(part, NO_SHIFT):.1f}%"
              f" uncorrected, {100 * agreement(part, ONE_ROLL_SHIFT):.1f}% with the shipped shift")
        rows += part
    shift, best = fit(rows)
    print(f"all {len(rows)}: uncorrected {100 * agreement(rows, NO_SHIFT):.1f}%; fitted shift no double "
          f"{shift.no_double:+.3f}, double/take {shift.double_take:+.3f}: {100 * best:.1f}%; shipped "
          f"({ONE_ROLL_SHIFT.no_double:+.3f}, {ONE_ROLL_SHIFT.double_take:+.3f}): "
          f"{100 * agreement(rows, ONE_ROLL_SHIFT):.1f}%")
    owner = {"center": "center", "on_roll": "me"}
    for name in ("cube-1000.jsonl", "cube.jsonl"):
        file_rows = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
        items = [(r["position"], CubeState(cube=r["cube"]["value"], owner=owner[r["cube"]["owner"]]))
                 for r in file_rows]
        ref = decide(engine, items, [r["decision"] for r in file_rows], name)
        print(f"{name} ({len(ref)} positions), 2-ply against gnubg 2-ply: uncorrected "
              f"{100 * agreement(ref, NO_SHIFT):.1f}%, fitted {100 * agreement(ref, shift):.1f}%, shipped "
              f"{100 * agreement(ref, ONE_ROLL_SHIFT):.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
