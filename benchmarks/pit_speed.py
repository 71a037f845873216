"""What the pit runner costs: games per minute for a few duels, and references measured in the same run.

Duels (all cubeless money games with duplicate dice unless said otherwise):

* ``pubeval`` vs ``pubeval`` through :func:`bgbot.play.pit.run_pit` (referee, one
  bot call per decision, statistics), with 1 and with ``--workers`` processes;
  reference: the same duel in :func:`bgbot.play.duel.duel`, the lock-step batched
  runner with no referee and no per-decision calls.
* ``bgbot:ply=1`` vs ``gnubg:ply=0`` over gnubg's external-player socket,
  cubeless and cubeful; reference: the bare socket round trip (one board
  line to gnubg 0-ply and its answer, repeated).

Usage::

    python benchmarks/pit_speed.py                       # 200 games a duel, 2 workers
    python benchmarks/pit_speed.py --games 2000 --checkpoint bgbot/data/models/bgbot-default.npz

The figures include starting the workers (a few seconds: they import torch
and start gnubg) and depend on what else runs on the machine; the ratios to
the references are steadier than the absolute numbers.
"""

from __future__ import annotations

import argparse
import sys
import time

from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.eval.pubeval import choose
from bgbot.play.bots.gnubg import GnubgBot
from bgbot.play.duel import duel
from bgbot.play.pit import PitConfig, run_pit
from bgbot.play.table import Rules
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position


def socket_round_trip_ms(n: int = 500) -> float:
    """Mean milliseconds for gnubg 0-ply to answer one move board over its socket."""
    bot = GnubgBot(0)
    try:
        pos, dice = Position.start(), (6, 2)
        state = MatchState(dice=dice)
        for _ in range(20):
            bot.move(pos, dice, state)
        t0 = time.perf_counter()
        for _ in range(n):
            bot.move(pos, dice, state)
        return 1000.0 * (time.perf_counter() - t0) / n
    finally:
        bot.close()


def main(argv: list[str] | None = None) -> int:
    """Run the duels and print one line per figure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=200, help="games per duel (default 200)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes for the parallel runs (default 2)")
    ap.add_argument("--checkpoint", help="bgbot network (default: the shipped model)")
    ap.add_argument("--skip-gnubg", action="store_true", help="only the pubeval duels")
    args = ap.parse_args(argv)
    bgbot = "bgbot:ply=1" + (f",checkpoint={args.checkpoint}" if args.checkpoint else "")

    def show(label: str, games: int, seconds: float, extra: str = "") -> float:
        gpm = 60.0 * games / seconds
        print(f"{label:<52} {games:>6} games {seconds:8.1f} s {gpm:9.0f} games/min {extra}", flush=True)
        return gpm

    print(f"pit runner speed, {args.games} games a duel (duplicate dice, seed 1)")
    t0 = time.perf_counter()
    ref = duel(choose, choose, (args.games + 1) // 2, seed=1)
    ref_gpm = show("reference: bgbot.play.duel lock-step pubeval vs pubeval", ref.games, time.perf_counter() - t0)
    for workers in sorted({1, args.workers}):
        r = run_pit("pubeval", "pubeval", PitConfig(games=args.games, seed=1, rules=Rules(cube=False), workers=workers))
        show(f"pit pubeval vs pubeval, {workers} worker{'s' * (workers > 1)}", r.games, r.elapsed_s,
             f"(x{gpm_ratio(r.games_per_minute, ref_gpm)} of lock-step; {r.ms_per_decision['A']:.2f} ms/decision)")
    if args.skip_gnubg:
        return 0
    rt = socket_round_trip_ms()
    print(f"{'reference: gnubg 0-ply socket round trip (move board)':<52} {rt:.2f} ms")
    for cube in (False, True):
        cfg = PitConfig(games=args.games, seed=1, rules=Rules(cube=cube), workers=args.workers)
        r = run_pit(bgbot, "gnubg:ply=0", cfg)
        show(f"pit {bgbot} vs gnubg:ply=0, {'cubeful' if cube else 'cubeless'}, {args.workers} workers",
             r.games, r.elapsed_s,
             f"(bgbot {r.ms_per_decision['A']:.2f} ms, gnubg {r.ms_per_decision['B']:.2f} ms a decision; "
             f"A ppg {r.ppg:+.3f})")
        if r.forfeits["A"] or r.forfeits["B"] or r.stopped:
            print(f"  faults: {r.forfeits} {r.stopped or ''}")
    return 0


def gpm_ratio(a: float, b: float) -> str:
    """``a / b`` with two decimals."""
    return f"{a / b:.2f}" if b else "n/a"


if __name__ == "__main__":
    sys.exit(main())
