"""Checker-play error of bgbot's search against gnubg's 2-ply reference.

Reads ``tests/data/benchmark/checker.jsonl`` (400 positions: 280 contact, 120
race) and lets bgbot choose a move at 1-ply and 2-ply (and 3-ply on a subset,
``--three-ply N``).  The equity loss of a choice is ``moves[0].equity -
equity(choice)`` with gnubg's 2-ply cubeless equities from the file; the
figures are mean losses per position in millipoints (thousandths of a point),
split contact / race, printed beside gnubg's own 0-ply choice
(``gnubg0_choice``) measured the same way.  When Open Sage (``pip install
bgsage``) is installed, its cubeless choices at 1-ply and 2-ply (XG plies, as
bgbot's; one thread) are scored the same way and printed as reference rows
(``--no-ref`` leaves them out).

Where a position has more than 40 legal moves the file lists only the 40 best
by gnubg 0-ply; a bgbot choice outside that list is counted with the worst
listed equity (a lower bound on its loss), and the number of such choices is
printed.

Usage::

    python benchmarks/checker_error.py --checkpoint runs/full/checkpoint.pt
    python benchmarks/checker_error.py --plies 1,2 --three-ply 40 --limit 200
    python benchmarks/checker_error.py --gnubg-net --plies 1,2,3 --no-ref   # bgbot's search on gnubg's networks
    python benchmarks/checker_error.py --plies "" --values [--gnubg-net]   # how far the values are, by class
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from _common import REFDATA, gnubg_net_evaluator, network_args, start  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.engine.search import parse_filters
from bgbot.errors import EngineError
from bgbot.play.bots import Bot
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position, PositionClass, classify


@dataclass
class Tally:
    """Losses of one player (a ply, or gnubg 0-ply) over the positions it was asked about."""

    losses: dict[str, list[float]] = field(default_factory=lambda: {"contact": [], "race": []})
    crashed: list[float] = field(default_factory=list)  # the contact positions that classify calls crashed
    best: int = 0  # chose gnubg's 2-ply best move (or one of equal equity)
    unlisted: int = 0  # chose a move the file does not list (counted at the worst listed equity)
    seconds: float = 0.0

    def add(self, row: dict, choice: str) -> None:
        eqs = {m["result"]: m["equity"] for m in row["moves"]}
        top = row["moves"][0]["equity"]
        if choice in eqs:
            eq = eqs[choice]
        else:
            if row["n_legal"] <= len(row["moves"]):
                raise SystemExit(f"move {choice} is not legal in {row['position']} {row['dice']}: bug")
            self.unlisted += 1
            eq = min(eqs.values())
        loss = top - eq
        self.losses[row["class"]].append(loss)
        if classify(Position.from_id(row["position"])) is PositionClass.CRASHED:
            self.crashed.append(loss)
        self.best += loss <= 1e-9

    def n(self, cls: str | None = None) -> int:
        return sum(len(v) for k, v in self.losses.items() if cls in (None, k))

    def mean_mp(self, cls: str | None = None) -> float:
        values = [x for k, v in self.losses.items() if cls in (None, k) for x in v]
        return 1000.0 * statistics.fmean(values) if values else float("nan")


def run(engine: Engine, rows: Sequence[dict], ply: int) -> Tally:
    """bgbot's choice at ``ply`` in every row."""
    t = Tally()
    start = time.perf_counter()
    for row in rows:
        a = engine.best_move(Position.from_id(row["position"]), row["dice"], ply, cubeless=True)  # vs cubeless 2-ply
        t.add(row, a.best.result.gnubg_id())
    t.seconds = time.perf_counter() - start
    return t


def run_bot(bot: Bot, rows: Sequence[dict]) -> Tally:
    """A bot's choice (money game, cube centred) in every row."""
    t = Tally()
    state = MatchState()
    start = time.perf_counter()
    for row in rows:
        t.add(row, bot.move(Position.from_id(row["position"]), tuple(row["dice"]), state).gnubg_id())
    t.seconds = time.perf_counter() - start
    return t


def bgsage_bots(threads: int) -> dict[int, Bot]:
    """Open Sage at 1- and 2-ply, or nothing (with a note) when it is not installed."""
    from bgbot.play.bots.bgsage import BgsageBot

    try:
        bots: dict[int, Bot] = {ply: BgsageBot(ply, threads=threads) for ply in (1, 2)}
    except EngineError as exc:
        print(f"no bgsage reference rows: {exc}")
        return {}
    print(f"reference: {bots[2].describe()}")  # type: ignore[attr-defined]
    return bots


def gnubg0(rows: Sequence[dict]) -> Tally:
    """gnubg's 0-ply choice (from the file) in every row."""
    t = Tally()
    for row in rows:
        t.add(row, row["gnubg0_choice"])
    return t


def value_errors(engine: Engine, rows: Sequence[dict]) -> None:
    """How far the engine's 1-ply equity of gnubg's best play is from gnubg 2-ply's, by class.

    The play's result is valued by the network (from the opponent's view, negated: the mover's cubeless
    equity) and compared with the file's gnubg 2-ply equity of that play.  Prints the rms, the mean
    (bias) and the 50th / 90th / 99th percentiles of the absolute difference.
    """
    import numpy as np

    from bgbot.eval.evaluate import equity

    diffs: dict[str, list[float]] = {"contact": [], "crashed": [], "race": []}
    for row in rows:
        best = row["moves"][0]
        probs = np.asarray(engine.evaluator(Position.from_id(best["result"]).array()[None, :]), dtype=np.float64)
        d = -float(equity(probs)[0]) - best["equity"]
        diffs[row["class"]].append(d)
        if classify(Position.from_id(row["position"])) is PositionClass.CRASHED:
            diffs["crashed"].append(d)
    print("\n== 1-ply equity of gnubg 2-ply's best play minus gnubg 2-ply's (mover's view, cubeless)")
    print(f"{'class':<8} {'n':>4} {'rms':>7} {'bias':>8} {'p50':>7} {'p90':>7} {'p99':>7}")
    for cls, ds in diffs.items():
        if not ds:
            continue
        a = np.asarray(ds)
        p50, p90, p99 = np.percentile(np.abs(a), [50, 90, 99])
        print(f"{cls:<8} {a.size:>4} {np.sqrt(np.mean(a**2)):7.4f} {a.mean():+8.4f} {p50:7.4f} {p90:7.4f} {p99:7.4f}")


def report(title: str, rows: Sequence[dict], tallies: list[tuple[str, Tally]]) -> None:
    n_c = sum(r["class"] == "contact" for r in rows)
    n_cr = sum(classify(Position.from_id(r["position"])) is PositionClass.CRASHED for r in rows)
    print(f"\n== {title}: {len(rows)} positions ({n_c} contact, {n_cr} of them crashed; {len(rows) - n_c} race)")
    print("mean equity loss per position vs gnubg 2-ply, millipoints (lower is better)")
    print(f"{'player':<22} {'all':>7} {'contact':>8} {'crashed':>8} {'race':>7}  {'best move':>9}  {'unlisted':>8}"
          f"  {'s/pos':>7}")
    for name, t in tallies:
        per = f"{t.seconds / max(t.n(), 1):7.3f}" if t.seconds else f"{'-':>7}"
        crashed = 1000.0 * statistics.fmean(t.crashed) if t.crashed else float("nan")
        print(
            f"{name:<22} {t.mean_mp():7.1f} {t.mean_mp('contact'):8.1f} {crashed:8.1f} {t.mean_mp('race'):7.1f}  "
            f"{100.0 * t.best / max(t.n(), 1):8.1f}%  {t.unlisted:>8}  {per}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    network_args(ap, REFDATA / "checker.jsonl", "checker.jsonl to read", "torch threads (default 1; the CPU is shared)")
    ap.add_argument("--plies", default="1,2", help="plies to run on every position (default 1,2)")
    ap.add_argument(
        "--three-ply",
        type=int,
        default=0,
        metavar="N",
        help="also run 3-ply on every (400/N)-th position, N positions in all (default 0: skip)",
    )
    ap.add_argument("--limit", type=int, help="only the first LIMIT positions")
    ap.add_argument("--no-bearoff", action="store_true", help="network only, no bear-off database")
    ap.add_argument("--no-ref", action="store_true", help="leave out the bgsage reference rows")
    ap.add_argument("--filter", default="normal", help="move filter of the 2-/3-ply search (default normal)")
    ap.add_argument("--values", action="store_true",
                    help="also compare the 1-ply equity of gnubg's best play with gnubg 2-ply's, by class")
    ap.add_argument("--gnubg-net", action="store_true",
                    help="run bgbot's search on gnubg's 0-ply networks instead of bgbot's (needs gnubg-nn, .[ref])")
    args = ap.parse_args(argv)

    rows = start(args)
    if args.limit:
        rows = rows[: args.limit]
    filters = parse_filters(args.filter)
    if args.gnubg_net:
        engine = Engine(gnubg_net_evaluator(), bearoff=not args.no_bearoff, filters=filters)
    else:
        engine = Engine.load(args.checkpoint, bearoff=not args.no_bearoff, filters=filters)
    what = "bgbot's search on gnubg's 0-ply networks (gnubg_nn)" if args.gnubg_net else engine.describe()
    print(f"engine: {what}; bear-off database {'off' if args.no_bearoff else 'on'}; "
          f"move filter {args.filter} {engine.filters[0]}")
    sage = {} if args.no_ref else bgsage_bots(args.threads)
    plies = [int(p) for p in args.plies.split(",") if p.strip()]  # "" runs only the 3-ply subset
    if plies:
        tallies = [("gnubg 0-ply", gnubg0(rows))]
        tallies += [(f"bgsage {ply}-ply", run_bot(bot, rows)) for ply, bot in sage.items()]
        for ply in plies:
            tallies.append((f"bgbot {ply}-ply", run(engine, rows, ply)))
        report("all positions", rows, tallies)
        if any(t.unlisted for _, t in tallies):
            print("(unlisted: choices outside the 40 listed moves, counted at the worst listed equity)")

    if args.values:
        value_errors(engine, rows)

    if args.three_ply > 0:
        step = max(1, len(rows) // args.three_ply)
        subset = rows[::step][: args.three_ply]
        sub = [("gnubg 0-ply", gnubg0(subset))]
        sub += [(f"bgsage {ply}-ply", run_bot(bot, subset)) for ply, bot in sage.items()]
        for ply in (1, 2, 3):
            sub.append((f"bgbot {ply}-ply", run(engine, subset, ply)))
        report(f"3-ply subset (every {step}-th position)", subset, sub)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
