"""Cheap changes to 2-ply checker play, measured against gnubg 2-ply without training anything.

* **Blend**: choose among the candidates that reached 2-ply by ``w * (1-ply equity) + (1 - w) * (2-ply
  equity)`` instead of the 2-ply equity alone (an odd/even-ply average: 1-ply values a play with the
  opponent on roll, 2-ply with us on roll, and a network's bias can differ between the two).
* **Filters**: the move filter after 1-ply (which candidates go on to 2-ply), by gnubg's preset names
  (``bgbot.engine.search.FILTER_PRESETS``; "normal" is bgbot's default).
* **Soft reply**: in the 2-ply value of each candidate, the opponent's reply to each roll is not only its
  best by the network but a softmax over all its replies, weight ``exp(-(e - e_min) / tau)`` where ``e`` is
  our equity after the reply (the opponent minimises it): a hedge against the "winner's curse" of taking the
  minimum of noisy values.  ``tau`` -> 0 is the default 2-ply value (the script checks it is reproduced).

Both from the side on roll's view, cubeless money equity, as ``checker_error.py`` measures 2-ply.  For each
variant the script prints the mean error against the file's gnubg 2-ply values in millipoints and its
difference from the default (w = 0, "normal"), paired by position, with a standard error.  The reference
is gnubg 2-ply (XG's 3-ply), not play: a variant that lowers this error still has to win a pit.

    python benchmarks/twoply_variants.py --data tests/data/benchmark/checker-3000.jsonl
    python benchmarks/twoply_variants.py --blend --filters --soft 0.005 0.01 0.02 0.04
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _common import ROOT
from numpy.typing import NDArray

from bgbot.engine.api import Engine
from bgbot.engine.search import DEFAULT_FILTERS, FILTER_PRESETS, Analysis
from bgbot.errors import BgbotError
from bgbot.eval.evaluate import Evaluator, equity, evaluate_distinct, terminal_probs
from bgbot.rules.dice import ROLL_WEIGHTS, ROLLS
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position
from training.gate import checker_losses, choice_loss, read_benchmark


def two_ply(engine: Engine, rows: Sequence[dict]) -> list[Analysis]:
    """Each row's cubeless 2-ply analysis (the default search), which the blend and soft-reply variants re-rank."""
    return [engine.best_move(Position.from_id(row["position"]), row["dice"], 2, cubeless=True) for row in rows]


def blend_losses(engine: Engine, rows: Sequence[dict], twos: Sequence[Analysis],
                 weights: Sequence[float]) -> dict[float, list[float]]:
    """Per weight ``w``, the loss of each row's choice by ``w * 1-ply + (1 - w) * 2-ply`` among 2-ply's candidates
    (``twos``: :func:`two_ply`)."""
    out: dict[float, list[float]] = {w: [] for w in weights}
    for row, two in zip(rows, twos, strict=True):
        pos = Position.from_id(row["position"])
        one = {c.result.gnubg_id(): c.equity for c in engine.best_move(pos, row["dice"], 1, cubeless=True).candidates}
        kept = [(c.result.gnubg_id(), c.equity) for c in two.candidates if c.ply == 2]
        if not kept:  # one legal play (or none): nothing went deeper
            kept = [(two.best.result.gnubg_id(), 0.0)]
        for w in weights:
            out[w].append(choice_loss(row, max(kept, key=lambda t: w * one[t[0]] + (1 - w) * t[1])[0]))
    return out


def filter_losses(model: str | None, rows: Sequence[dict], name: str) -> list[float]:
    """The loss of each row's 2-ply choice with the named first move filter."""
    engine = Engine.load(model, filters=(FILTER_PRESETS[name], *DEFAULT_FILTERS[1:]))
    return [x for *_, x in checker_losses(engine, rows, 2)]


def soft_reply_values(evaluator: Evaluator, boards: NDArray[np.int8], taus: Sequence[float]) -> NDArray[np.float64]:
    """2-ply values of the plays ``boards`` (positions after our play, the opponent on roll, from its view) with a
    soft opponent reply: ``(N, len(taus))``, our cubeless equity, one column per temperature (0: its best reply)."""
    nr = len(ROLLS)
    rep = np.repeat(boards, nr, axis=0)
    succ, parent = successors_batch(rep, np.tile(np.array(ROLLS, dtype=np.int64), (boards.shape[0], 1)))
    ours = equity(np.asarray(evaluate_distinct(evaluator, succ), dtype=np.float64))  # we are on roll after the reply
    n = rep.shape[0]
    low = np.full(n, np.inf)
    np.minimum.at(low, parent, ours)
    weights = np.asarray(ROLL_WEIGHTS, dtype=np.float64)
    out = np.empty((boards.shape[0], len(taus)))
    for j, tau in enumerate(taus):
        if tau <= 0:
            per_roll = low
        else:
            w = np.exp(-(ours - low[parent]) / tau)
            total, weighted = np.zeros(n), np.zeros(n)
            np.add.at(total, parent, w)
            np.add.at(weighted, parent, w * ours)
            per_roll = weighted / total
        out[:, j] = per_roll.reshape(-1, nr) @ weights / weights.sum()
    return out


def soft_losses(engine: Engine, rows: Sequence[dict], twos: Sequence[Analysis],
                taus: Sequence[float]) -> dict[float, list[float]]:
    """Per temperature, the loss of each row's choice among 2-ply's candidates (``twos``: :func:`two_ply`) by the
    soft-reply 2-ply value."""
    out: dict[float, list[float]] = {t: [] for t in taus}
    worst = 0.0  # how far tau = 0 is from the engine's own 2-ply values
    for row, two in zip(rows, twos, strict=True):
        kept = [c for c in two.candidates if c.ply == 2]
        if not kept:
            for t in taus:
                out[t].append(choice_loss(row, two.best.result.gnubg_id()))
            continue
        boards = np.stack([c.result.array() for c in kept]).astype(np.int8)
        values = soft_reply_values(engine.evaluator, boards, [0.0, *taus])
        engine_values = np.array([c.equity for c in kept])
        done, _ = terminal_probs(boards)
        values[done] = engine_values[done, None]
        worst = max(worst, float(np.max(np.abs(values[:, 0] - engine_values))))
        for j, t in enumerate(taus, 1):
            out[t].append(choice_loss(row, kept[int(np.argmax(values[:, j]))].result.gnubg_id()))
    if worst > 1e-9:
        raise BgbotError(f"the soft-reply value at tau = 0 is {worst:.2e} from the engine's 2-ply value")
    return out


def line(label: str, values: list[float], base: list[float]) -> str:
    diff = [a - b for a, b in zip(values, base, strict=True)]
    se = statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else 0.0
    mean = 1000 * statistics.fmean(values)
    return f"{label:<16} {mean:6.3f} mp   minus default {1000 * statistics.fmean(diff):+.3f} ± {1000 * se:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tests/data/benchmark/checker-3000.jsonl")
    ap.add_argument("--model", default=None, help="checkpoint or .npz (default: the shipped model)")
    ap.add_argument("--blend", type=float, nargs="*", default=[0.1, 0.2, 0.3, 0.5],
                    help="1-ply weights to try (none: skip)")
    ap.add_argument("--filters", nargs="*", default=["tiny", "large", "huge"], choices=sorted(FILTER_PRESETS),
                    help="first filters to try (none: skip)")
    ap.add_argument("--soft", type=float, nargs="*", default=[], help="soft-reply temperatures to try (default: none)")
    args = ap.parse_args(argv)
    bad = [t for t in args.soft if not t > 0]  # also NaN
    if bad:
        ap.error(f"--soft takes temperatures above 0 (0 is the default 2-ply, always printed), got {bad[0]!r}")
    try:
        rows = read_benchmark(args.data, "checker")  # the gate's reader: the same checks, the same errors
        start = time.perf_counter()
        engine = Engine.load(args.model)
        twos = two_ply(engine, rows)
        blends = blend_losses(engine, rows, twos, [0.0, *args.blend])
        base = blends[0.0]
        model = args.model or "shipped"
        print(f"{len(rows)} positions of {args.data}, model {model}; error against gnubg 2-ply, 1 se paired")
        print(line("2-ply (default)", base, base))
        for w in args.blend:
            print(line(f"blend w={w:g}", blends[w], base))
        for name in args.filters:
            print(line(f"filter {name}", filter_losses(args.model, rows, name), base))
        if args.soft:
            soft = soft_losses(engine, rows, twos, args.soft)
            for t in args.soft:
                print(line(f"soft tau={t:g}", soft[t], base))
        print(f"({time.perf_counter() - start:.0f} s)")
    except BgbotError as exc:
        print(f"twoply_variants: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
