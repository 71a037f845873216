"""Match play against gnubg 2-ply: checker plays where the score decides, and match cube decisions.

Reads ``tests/data/match/checker.jsonl`` (plays where gnubg's best move at the
match state differs from its money best: double match point, 2-away/1-away
Crawford, 4-away/2-away, cube owned, ...) and ``tests/data/match/cube.jsonl``
(match cube decisions at varied scores), both made with gnubg 1.07 at 2-ply
(``tests/data/README.md``).  For each play it prints how often bgbot picks
gnubg's best move, how often it picks the money best instead, and its mean
MWC loss against gnubg's ranking (in percent, ``moves[0].mwc -
mwc(choice)``; a choice outside the listed moves counts the worst listed),
at each ply, cubeful (the default ranking) and cubeless (what bgbot did before
match-aware play) side by side.  For the cube it prints the agreement of
bgbot's decision with gnubg's (``no_double_legal`` is agreement when bgbot
cannot double either, ``optional_double_take`` when bgbot says no double or
double/take), at each ply, and with gnubg's own probabilities.

Usage::

    python benchmarks/match_play.py [--plies 1,2] [--checkpoint C]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from _common import ROOT, network_args, start  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.rules.matchstate import CubeState

DATA = ROOT / "tests" / "data" / "match"


def cube_state(s: dict) -> CubeState:
    """A record's match state (side on roll's view) as a :class:`CubeState`."""
    return CubeState(cube=s["cube"]["value"], owner=s["cube"]["owner"], match=s["match"],
                     score=tuple(s["score"]), crawford=s["crawford"])


def checker(engine: Engine, rows: list[dict], ply: int, cubeless: bool) -> tuple[float, float, float, int]:
    """(share of gnubg's best, share of gnubg's money best, mean MWC loss in %, positions)."""
    best = money = 0
    losses = []
    for r in rows:
        a = engine.best_move(r["position"], r["dice"], ply, cube_state(r["state"]), cubeless=cubeless)
        choice = a.best.result.gnubg_id()
        mwc = {m["result"]: m["mwc"] for m in r["moves"]}
        best += choice == r["moves"][0]["result"]
        money += choice == r["money_best"]
        if r["moves"][0]["mwc"] is not None:
            worst = min(mwc.values())
            losses.append(100.0 * (r["moves"][0]["mwc"] - mwc.get(choice, worst)))
    n = len(rows)
    return best / n, money / n, statistics.fmean(losses) if losses else float("nan"), n


def agrees(decision: str, gnubg: str, can_double: bool) -> bool:
    """Whether bgbot's action matches gnubg's decision label (see the module docstring)."""
    if gnubg == "no_double_legal":
        return not can_double
    if gnubg == "optional_double_take":
        return decision in ("no_double", "double_take")
    return decision == gnubg


def cube(engine: Engine, rows: list[dict], ply: int | None) -> float:
    """Share of gnubg's decisions bgbot agrees with at ``ply`` (None: from gnubg's own probabilities)."""
    hits = 0
    for r in rows:
        probs = r["probs"] if ply is None else None
        d = engine.cube_action(r["position"], cube_state(r["state"]), ply=ply or 1, probs=probs)
        hits += agrees(d.action, r["decision"], d.can_double)
    return hits / len(rows)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    network_args(ap, DATA / "checker.jsonl", "the match checker file", "torch threads (default 1)")
    ap.add_argument("--cube-data", default=str(DATA / "cube.jsonl"), help="the match cube file")
    ap.add_argument("--plies", default="1,2", help="plies to run (default 1,2)")
    args = ap.parse_args(argv)
    rows = start(args)
    args.data = type(args.data)(args.cube_data)
    cube_rows = start(args)
    engine = Engine.load(args.checkpoint)
    plies = [int(p) for p in args.plies.split(",")]
    print(f"engine: {engine.describe()}")
    print(f"checker plays where the score decides: {len(rows)} positions (gnubg 2-ply reference)")
    print(f"{'ranking':<10} {'ply':>3}  {'gnubg best':>10}  {'money best':>10}  {'MWC loss %':>10}")
    for ply in plies:
        for cubeless in (False, True):
            b, m, loss, _ = checker(engine, rows, ply, cubeless)
            name = "cubeless" if cubeless else "match"
            print(f"{name:<10} {ply:>3}  {100 * b:9.1f}%  {100 * m:9.1f}%  {loss:10.3f}")
    print(f"match cube decisions: {len(cube_rows)} positions (gnubg 2-ply reference)")
    for ply in plies:
        print(f"  bgbot {ply}-ply probabilities: {100 * cube(engine, cube_rows, ply):.1f}% agree")
    print(f"  gnubg's own probabilities:  {100 * cube(engine, cube_rows, None):.1f}% agree")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
