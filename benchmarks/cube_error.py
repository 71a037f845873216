"""How well bgbot's money cube model reproduces gnubg's 2-ply cube decisions.

Reads ``tests/data/benchmark/cube.jsonl`` (200 money positions, Jacoby and
beavers off, cube centred at 1 or owned by the side on roll at 2) and runs
:func:`bgbot.engine.cube.money_cube_decision` on probabilities from an *evaluator*.
The default evaluator ``file`` uses the file's own gnubg 2-ply cubeless
probabilities, which isolates the cube model (Janowski at 0-ply) from any
network.  Prints the agreement with gnubg's decision, a confusion table and
the mean absolute error of the no-double, double/take and optimal equities
in millipoints (thousandths of the current cube value).

Usage::

    python benchmarks/cube_error.py                 # x = 0.68 everywhere
    python benchmarks/cube_error.py --x 0.7
    python benchmarks/cube_error.py --x gnubg       # gnubg's x: 0.68 contact, pip-based in races
    python benchmarks/cube_error.py --search-x      # scan x for the best agreement / error
    python benchmarks/cube_error.py --evaluator bgbot2 --probs   # where the probabilities differ from gnubg's
    python benchmarks/cube_error.py --engine 2      # Engine.cube_action at 2-ply: the cubeful lookahead
    python benchmarks/cube_error.py --engine 2 --gnubg-net   # the same cube code on gnubg's 0-ply networks

``--engine PLY`` scores the engine's own money decisions
(:meth:`bgbot.engine.api.Engine.cube_action`): Janowski on the network's
probabilities at 1-ply, gnubg's cubeful lookahead (a cube decision at every
node of the tree) above it, with gnubg's cube efficiencies; ``--evaluator``
instead applies Janowski once to probabilities averaged ``PLY - 1`` rolls deep.

To plug in another evaluator (for example bgbot's network), add a function
``(rows) -> list of 5 probabilities per row`` to :data:`EVALUATORS`.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import REFDATA  # puts the checkout on sys.path

from bgbot.engine.cube import ACTIONS, CONTACT_X, CubeDecision, cube_efficiency, money_cube_decision
from bgbot.rules.position import Position

DEFAULT_DATA = REFDATA / "cube.jsonl"

Row = dict
Evaluator = Callable[[Sequence[Row]], list[Sequence[float]]]


def file_probs(rows: Sequence[Row]) -> list[Sequence[float]]:
    """gnubg's 2-ply cubeless probabilities stored in the file (side on roll, before the roll)."""
    return [row["probs"] for row in rows]


def bgbot_probs(ply: int) -> Evaluator:
    """bgbot's own cubeless probabilities at ``ply`` (XG numbering: gnubg's 2-ply is bgbot's 3-ply).

    The network is ``--checkpoint`` (passed on as ``$BGBOT_CHECKPOINT``), else
    the shipped model; bear-off positions use the bear-off database.
    """

    def probs(rows: Sequence[Row]) -> list[Sequence[float]]:
        from bgbot.engine.api import Engine

        engine = Engine.load()
        return [engine.evaluate(position_from_id(row["position"]), ply).tolist() for row in rows]

    return probs


EVALUATORS: dict[str, Evaluator] = {
    "file": file_probs,
    "bgbot1": bgbot_probs(1),
    "bgbot2": bgbot_probs(2),
    "bgbot3": bgbot_probs(3),
}


def position_from_id(pid: str) -> Position:
    """A gnubg Position ID as a :class:`Position` (side on roll's view)."""
    try:
        return Position.from_id(pid)
    except ImportError:
        pass  # bgbot.formats not there yet: decode the 80-bit key here
    raw = base64.b64decode(pid + "==")[:10]
    bits = [(raw[k // 8] >> (k % 8)) & 1 for k in range(80)]
    counts = [[0] * 25, [0] * 25]  # [player][point-1], point 25 = bar; the player on roll comes first
    player = point = 0
    for bit in bits:
        if player > 1:
            break
        if bit:
            counts[player][point] += 1
        else:
            point += 1
            if point == 25:
                player, point = player + 1, 0
    board = [0] * 26
    for k in range(25):
        board[k + 1] += counts[0][k]
        board[24 - k] -= counts[1][k]
    return Position(board)


def gnubg_x(row: Row) -> float:
    """gnubg's cube efficiency for the row's position: 0.68 with contact, pip-based in races."""
    pos = position_from_id(row["position"])
    return cube_efficiency(contact=pos.has_contact(), pips_on_roll=pos.pips()[0])


@dataclass
class Report:
    n: int
    agree: int
    confusion: Counter[tuple[str, str]]
    mae_nd: float
    mae_dt: float
    mae_opt: float
    bias_nd: float
    bias_dt: float

    @property
    def agreement(self) -> float:
        return self.agree / self.n


def janowski_decisions(
    rows: Sequence[Row], probs: Sequence[Sequence[float]], xs: Sequence[float]
) -> list[CubeDecision]:
    """money_cube_decision on ``probs`` (one per row, side on roll) with cube efficiency ``xs``."""
    return [money_cube_decision(p, cube_value=row["cube"]["value"], owner=_owner(row), x=x)
            for row, p, x in zip(rows, probs, xs, strict=True)]


def engine_decisions(rows: Sequence[Row], ply: int, gnubg_net: bool = False) -> list[CubeDecision]:
    """The engine's own money decisions at ``ply`` (``--checkpoint`` or the shipped model).

    With ``gnubg_net`` the engine's search and cube code run on gnubg's 0-ply networks instead of
    bgbot's (the bear-off database still answers bear-offs): what the cube code gives with gnubg's
    probabilities, apart from any network of ours.
    """
    from bgbot.engine.api import Engine
    from bgbot.rules.matchstate import CubeState

    if gnubg_net:
        from _common import gnubg_net_evaluator

        engine = Engine(gnubg_net_evaluator())
    else:
        engine = Engine.load()
    return [engine.cube_action(position_from_id(row["position"]),
                               CubeState(cube=row["cube"]["value"], owner=_owner(row)), ply=ply) for row in rows]


def _owner(row: Row) -> str:
    return {"center": "center", "on_roll": "me"}[row["cube"]["owner"]]


def evaluate(rows: Sequence[Row], decisions: Sequence[CubeDecision]) -> Report:
    """Compare ``decisions`` (one per row) with gnubg's figures in ``rows``."""
    confusion: Counter[tuple[str, str]] = Counter()
    d_nd, d_dt, d_opt = [], [], []
    for row, d in zip(rows, decisions, strict=True):
        confusion[(row["decision"], d.action)] += 1
        assert d.equity_double_take is not None  # the side on roll always has access here
        d_nd.append(d.equity_no_double - row["equity_no_double"])
        d_dt.append(d.equity_double_take - row["equity_double_take"])
        d_opt.append(d.equity_optimal - row["equity_optimal"])
    agree = sum(c for (g, o), c in confusion.items() if g == o)
    return Report(
        n=len(rows),
        agree=agree,
        confusion=confusion,
        mae_nd=statistics.fmean(map(abs, d_nd)),
        mae_dt=statistics.fmean(map(abs, d_dt)),
        mae_opt=statistics.fmean(map(abs, d_opt)),
        bias_nd=statistics.fmean(d_nd),
        bias_dt=statistics.fmean(d_dt),
    )


def print_report(rep: Report, label: str) -> None:
    print(f"== {label}: {rep.n} positions")
    print(f"agreement with gnubg 2-ply: {rep.agree}/{rep.n} = {100 * rep.agreement:.1f}%")
    print(
        f"mean abs error (millipoints): no double {1000 * rep.mae_nd:.1f}, "
        f"double/take {1000 * rep.mae_dt:.1f}, optimal {1000 * rep.mae_opt:.1f}"
    )
    print(
        f"mean signed error (bgbot - gnubg): no double {1000 * rep.bias_nd:+.1f}, "
        f"double/take {1000 * rep.bias_dt:+.1f}"
    )
    short = {
        "no_double": "ND",
        "double_take": "D/T",
        "double_pass": "D/P",
        "too_good_take": "TG/T",
        "too_good_pass": "TG/P",
    }
    print("confusion (rows: gnubg, columns: bgbot)")
    print("        " + "".join(f"{short[a]:>7}" for a in ACTIONS))
    for g in ACTIONS:
        print(f"{short[g]:>7} " + "".join(f"{rep.confusion.get((g, o), 0):>7}" for o in ACTIONS))


def print_prob_errors(rows: Sequence[Row], probs: Sequence[Sequence[float]]) -> None:
    """Mean and rms of (evaluator - gnubg 2-ply) per output, over all rows and over gnubg's "too good" ones."""
    names = ("win", "win_g", "win_bg", "lose_g", "lose_bg")
    diffs = [[p - g for p, g in zip(mine, row["probs"], strict=True)] for mine, row in zip(probs, rows, strict=True)]
    good = [d for d, row in zip(diffs, rows, strict=True) if row["decision"].startswith("too_good")]
    print("== probabilities minus gnubg 2-ply's (side on roll, before the roll)")
    print("             " + "".join(f"{n:>9}" for n in names))
    for label, ds in (("mean, all", diffs), ("rms, all", diffs), (f"mean, TG ({len(good)})", good)):
        if not ds:
            continue
        cols = list(zip(*ds, strict=True))
        vals = [statistics.fmean(c) for c in cols] if label.startswith("mean") else [
            statistics.fmean(x * x for x in c) ** 0.5 for c in cols]
        sign = "+" if label.startswith("mean") else ""
        print(f"{label:<13}" + "".join(f"{v:>{sign}9.4f}" for v in vals))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="cube.jsonl to read")
    ap.add_argument("--x", default=str(CONTACT_X), help="cube efficiency: a number in [0, 1], or 'gnubg'")
    ap.add_argument(
        "--evaluator", choices=sorted(EVALUATORS), default="file", help="where probabilities come from"
    )
    ap.add_argument("--engine", type=int, choices=(1, 2, 3), metavar="PLY",
                    help="score Engine.cube_action at PLY (the cubeful lookahead above 1-ply) instead")
    ap.add_argument("--search-x", action="store_true", help="also scan constant x from 0.40 to 1.00")
    ap.add_argument("--checkpoint", help="network for the bgbot evaluators (default: $BGBOT_CHECKPOINT or shipped)")
    ap.add_argument("--probs", action="store_true", help="also print the probabilities' errors per output")
    ap.add_argument("--gnubg-net", action="store_true",
                    help="with --engine: run the engine on gnubg's 0-ply networks (needs gnubg-nn, .[ref])")
    args = ap.parse_args(argv)

    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    if args.checkpoint:
        import os

        os.environ["BGBOT_CHECKPOINT"] = args.checkpoint
    if args.engine is not None:
        if args.search_x or args.probs:
            ap.error("--search-x and --probs go with --evaluator, not --engine")
        net = "gnubg's 0-ply networks" if args.gnubg_net else "bgbot's network"
        print_report(evaluate(rows, engine_decisions(rows, args.engine, args.gnubg_net)),
                     f"Engine.cube_action at {args.engine}-ply on {net}, gnubg's x")
        return 0
    if args.gnubg_net:
        ap.error("--gnubg-net goes with --engine")
    probs = EVALUATORS[args.evaluator](rows)
    if args.x == "gnubg":
        xs = [gnubg_x(r) for r in rows]
        label = "x = gnubg (0.68 contact, 0.55 + 0.00125 * pips in races, clamped to [0.6, 0.7])"
    else:
        try:
            x = float(args.x)
        except ValueError:
            ap.error(f"--x must be a number or 'gnubg', got {args.x!r}")
        xs = [x] * len(rows)
        label = f"x = {x:g}"
    print_report(evaluate(rows, janowski_decisions(rows, probs, xs)), f"{label}, evaluator {args.evaluator}")
    if args.probs:
        print_prob_errors(rows, probs)

    if args.search_x:
        scan = [(x100 / 100, evaluate(rows, janowski_decisions(rows, probs, [x100 / 100] * len(rows))))
                for x100 in range(40, 101)]
        best_agree = max(scan, key=lambda t: (t[1].agree, -t[1].mae_opt))
        best_nd = min(scan, key=lambda t: t[1].mae_nd)
        best_dt = min(scan, key=lambda t: t[1].mae_dt)
        print("== x scan (constant x)")
        print("    x  agree  ND mp  DT mp  opt mp")
        for x, rep in scan[::5]:
            errors = f"{1000 * rep.mae_nd:5.1f}  {1000 * rep.mae_dt:5.1f}  {1000 * rep.mae_opt:6.1f}"
            print(f" {x:4.2f}  {100 * rep.agreement:5.1f}  {errors}")
        print(f"best agreement: x = {best_agree[0]:.2f} ({100 * best_agree[1].agreement:.1f}%)")
        print(f"lowest no-double error: x = {best_nd[0]:.2f} ({1000 * best_nd[1].mae_nd:.1f} mp)")
        print(f"lowest double/take error: x = {best_dt[0]:.2f} ({1000 * best_dt[1].mae_dt:.1f} mp)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
