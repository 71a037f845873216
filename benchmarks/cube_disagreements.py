"""Where and why bgbot's money cube decisions differ from gnubg 2-ply's: categories, classes and causes.

Runs :meth:`bgbot.engine.api.Engine.cube_action` at ``--ply`` (default 2: one roll of gnubg's cubeful
lookahead, the same tree as gnubg's 1-ply) on the cube benchmark (``tests/data/benchmark/cube-1000.jsonl``;
money, Jacoby and beavers off) with four evaluators, the same search and cube code each time:

* ``bgbot``: the network (``--checkpoint`` or the shipped model);
* ``gnubg``: gnubg's 0-ply networks (gnubg-nn, the ``ref`` extra);
* ``bgbot win, gnubg gammons``: bgbot's P(win) with gnubg's gammon and backgammon *shares* (wg / win,
  wbg / win, lg / loss, lbg / loss), and ``gnubg win, bgbot gammons`` the other way round.

Each disagreement with gnubg's decision is put in one category: bgbot doubles where gnubg does not,
misses a double, takes / passes the other way, or "too good" the other way; the count per position class
follows.  Where ``bgbot`` errs and ``gnubg`` does not, the network's probabilities are the cause; where
both err, the cube model or the lookahead's depth is (the same code on gnubg's nets).  Swapping the win
and gammon parts says which of the probabilities matter.  Last, the static cubeless probabilities the cube
code starts from (0-ply in gnubg's numbering, bgbot's 1-ply value of the position: the network, or the
bear-off database) against the file's gnubg 2-ply ones, by class: the rms error and mean of the win
probability and of the cubeless equity, from the side on roll.

Usage::

    python benchmarks/cube_disagreements.py                 # needs gnubg-nn for the gnubg rows
    python benchmarks/cube_disagreements.py --only bgbot    # without gnubg-nn
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bgbot.rules.position import Position, PositionClass, classify_boards

DEFAULT_DATA = ROOT / "tests" / "data" / "benchmark" / "cube-1000.jsonl"
Probs = NDArray[np.float32]
CATEGORIES = ("doubles, gnubg does not", "misses a double", "take/pass the other way", "too good the other way")


def category(gnubg: str, mine: str) -> str | None:
    """The kind of disagreement between gnubg's decision and bgbot's (None when they agree)."""
    if gnubg == mine:
        return None
    doubles = ("double_take", "double_pass")
    if gnubg.startswith("too_good") or mine.startswith("too_good"):
        return CATEGORIES[3]
    if gnubg == "no_double":
        return CATEGORIES[0]
    if mine == "no_double":
        return CATEGORIES[1]
    assert gnubg in doubles and mine in doubles
    return CATEGORIES[2]


def mixed(win_from: Callable[[NDArray[np.int8]], Probs], shares_from: Callable[[NDArray[np.int8]], Probs]
          ) -> Callable[[NDArray[np.int8]], Probs]:
    """An evaluator with ``win_from``'s P(win) and ``shares_from``'s gammon and backgammon shares (side on roll)."""

    def evaluate(boards: NDArray[np.int8]) -> Probs:
        a = np.asarray(win_from(boards), dtype=np.float64)
        b = np.asarray(shares_from(boards), dtype=np.float64)
        win, loss = b[:, :1], 1.0 - b[:, :1]
        out = np.empty_like(a)
        out[:, 0] = a[:, 0]
        out[:, 1:3] = a[:, :1] * np.divide(b[:, 1:3], win, out=np.zeros_like(b[:, 1:3]), where=win > 1e-9)
        out[:, 3:5] = (1.0 - a[:, :1]) * np.divide(b[:, 3:5], loss, out=np.zeros_like(b[:, 3:5]), where=loss > 1e-9)
        return out.astype(np.float32)

    return evaluate


def decisions(evaluator: Callable[[NDArray[np.int8]], Probs], rows: Sequence[dict], ply: int) -> list[str]:
    """Engine.cube_action's money action at ``ply`` for every row (side on roll), on ``evaluator``."""
    from bgbot.engine.api import Engine
    from bgbot.rules.matchstate import CubeState

    engine = Engine(evaluator)
    owner = {"center": "center", "on_roll": "me"}
    return [engine.cube_action(Position.from_id(r["position"]), CubeState(cube=r["cube"]["value"],
                                                                         owner=owner[r["cube"]["owner"]]),
                               ply=ply).action for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ply", type=int, default=2, choices=(1, 2, 3))
    ap.add_argument("--checkpoint", help="network (default: $BGBOT_CHECKPOINT or the shipped model)")
    ap.add_argument("--only", choices=("bgbot",), help="bgbot's network alone (no gnubg-nn needed)")
    args = ap.parse_args(argv)

    from bgbot.eval.evaluate import NetEvaluator
    from bgbot.eval.models import load_model

    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    boards = np.stack([Position.from_id(r["position"]).array() for r in rows]).astype(np.int8)
    cls = [PositionClass(int(c)).name.lower() for c in classify_boards(boards)]
    net = NetEvaluator(load_model(args.checkpoint).net)
    evaluators: dict[str, Callable[[NDArray[np.int8]], Probs]] = {"bgbot": net}
    if args.only is None:
        from _common import gnubg_net_evaluator

        gn = gnubg_net_evaluator()
        evaluators |= {"gnubg": gn, "bgbot win, gnubg gammons": mixed(net, gn),
                       "gnubg win, bgbot gammons": mixed(gn, net)}
    print(f"{args.data.name}: {len(rows)} positions; classes {dict(Counter(cls))}; Engine.cube_action at "
          f"{args.ply}-ply")
    actions = {}
    head = f"{'evaluator':<26}{'agree':>7}" + "".join(f"{c[:14]:>16}" for c in CATEGORIES)
    print(head)
    for name, ev in evaluators.items():
        acts = decisions(ev, rows, args.ply)
        actions[name] = acts
        cats = [category(r["decision"], a) for r, a in zip(rows, acts, strict=True)]
        count = Counter(c for c in cats if c)
        by_class = Counter(k for k, c in zip(cls, cats, strict=True) if c)
        print(f"{name:<26}{sum(c is None for c in cats):>7}" + "".join(f"{count[c]:>16}" for c in CATEGORIES)
              + f"   wrong by class: {dict(by_class)}")
    if "gnubg" in actions:
        ok_b = [a == r["decision"] for a, r in zip(actions["bgbot"], rows, strict=True)]
        ok_g = [a == r["decision"] for a, r in zip(actions["gnubg"], rows, strict=True)]
        both = sum(not b and not g for b, g in zip(ok_b, ok_g, strict=True))
        only_b = sum(not b and g for b, g in zip(ok_b, ok_g, strict=True))
        only_g = sum(b and not g for b, g in zip(ok_b, ok_g, strict=True))
        print(f"wrong on both networks (cube code / lookahead depth): {both}; only on bgbot's network: {only_b}; "
              f"only on gnubg's: {only_g}")
    from bgbot.engine.api import Engine

    ref = np.array([r["probs"] for r in rows], dtype=np.float64)
    print("static probabilities (the engine's: the network, bear-offs from the database) against gnubg 2-ply's "
          "(side on roll): win rms / mean error, cubeless equity rms / mean error")
    for name in ("bgbot", "gnubg"):
        if name in evaluators:
            static = np.asarray(Engine(evaluators[name]).evaluator(boards), dtype=np.float64)
            print(f"{name:<7}" + "; ".join(f"{k} ({n}): {v}" for k, n, v in static_errors(static, ref, cls)))
    return 0


def static_errors(probs: NDArray[np.float64], ref: NDArray[np.float64], cls: Sequence[str]
                  ) -> list[tuple[str, int, str]]:
    """Per class (and ``all``): ``(class, count, "win rms / mean, equity rms / mean")`` of ``probs`` against ``ref``.

    Both ``(N, 5)`` cubeless probabilities of the same positions from the side on roll.
    """
    from bgbot.eval.evaluate import equity

    dw = probs[:, 0] - ref[:, 0]
    de = equity(probs) - equity(ref)
    names = np.asarray(cls)
    out = []
    for k in ("all", *sorted(set(cls))):
        m = np.ones(len(names), bool) if k == "all" else names == k
        out.append((k, int(m.sum()), f"{np.sqrt(np.mean(dw[m] ** 2)):.4f} / {dw[m].mean():+.4f}, "
                                     f"{np.sqrt(np.mean(de[m] ** 2)):.4f} / {de[m].mean():+.4f}"))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
