"""Time per checker-play (and cube) decision of bgbot at each ply.

Times :meth:`bgbot.engine.api.Engine.best_move` (the full ranked analysis, move
texts excluded: they are worked out only when read) over a fixed set of
positions from ``tests/data/benchmark/checker.jsonl`` and prints the median,
the 90th percentile and the mean per decision.  As a reference measured in
the same run it also times one network call on a batch of 21 positions (one
position's candidates) and prints each median as a multiple of it, so runs on
a loaded machine can be compared.  With ``--cube`` it times the cube
decision at each ply too.

Reference engines, when installed, are timed on the same positions in the same
run, interleaved position by position with bgbot so that a change of load hits
all of them alike: Open Sage (``bgsage``, XG plies like bgbot) at 1- and 2-ply
for checker play (cubeless, one thread) and the cube, and gnubg's network
(``gnubg_nn.best_move``, its 0-ply = XG 1-ply).  The figures end with the
ratios bgbot / reference of the medians per ply (below 1: bgbot is faster).
``--no-ref`` leaves them out.

The machines this project runs on have 2 cores shared with training runs:
a torch checkpoint plays on one torch thread (a second thread only adds
waiting when the other core is busy); the shipped numpy model runs in
bgbot's compiled pass and starts no BLAS threads, so ``OPENBLAS_NUM_THREADS``
changes nothing for it (it did for bgbot's numpy forward pass before the
compiled one: set it to 1 when comparing with those figures).  The load average is printed with the figures.

Usage::

    python benchmarks/decision_time.py --checkpoint runs/full/checkpoint.pt
    python benchmarks/decision_time.py --positions 200 --three-ply 10 --cube
    python benchmarks/decision_time.py --positions 40 --no-ref
    python benchmarks/decision_time.py --positions 200 --three-ply 0 --filter tiny   # also the tiny move filter
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import REFDATA, network_args, start  # puts the checkout on sys.path

from bgbot.engine.api import Engine
from bgbot.engine.search import parse_filters
from bgbot.rules.matchstate import MatchState
from bgbot.rules.position import Position


def _rows(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (what ``_common.start`` reads, without setting torch's threads)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def timings(fn: Callable[[], object], repeat: int = 1) -> float:
    """Best of ``repeat`` wall-clock seconds for one call of ``fn``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def summary(seconds: Sequence[float]) -> tuple[float, float, float]:
    """Median, 90th percentile and mean, in milliseconds."""
    ms = np.asarray(seconds) * 1000.0
    return float(np.median(ms)), float(np.percentile(ms, 90)), float(ms.mean())


Item = tuple[Position, tuple[int, int]]


def time_each(
    items: Sequence[Item], contenders: dict[str, Callable[[Item], object]], repeat: int
) -> dict[str, list[float]]:
    """Seconds per decision of every contender on every item, interleaved item by item (best of ``repeat``)."""
    out: dict[str, list[float]] = {name: [] for name in contenders}
    for item in items:
        for name, fn in contenders.items():
            out[name].append(timings(lambda fn=fn, item=item: fn(item), repeat))
    return out


def reference_engines(threads: int) -> tuple[Any, Any, list[str]]:
    """``(bgsage bots by ply or None, gnubg_nn module or None, notes)``: the references installed here."""
    from bgbot.errors import EngineError
    from bgbot.play.bots.bgsage import BgsageBot

    notes: list[str] = []
    sage = None
    try:
        sage = {ply: BgsageBot(ply, threads=threads) for ply in (1, 2)}
        # bgsage ranking by its cubeful equity (money, cube centred): the reference of bgbot's cubeful ranking
        sage.update({-ply: BgsageBot(ply, threads=threads, cubeful=True) for ply in (1, 2)})
        notes.append(f"reference: {sage[2].describe()}; checker play times BgsageBot.move (analysis + conversion)")
    except EngineError as exc:
        notes.append(f"no bgsage reference: {exc}")
    try:
        import gnubg_nn
    except ImportError:
        gnubg_nn = None
        notes.append("no gnubg_nn reference: pip install gnubg-nn (or .[ref])")
    else:
        # gnubg_nn caches evaluations, so a repeated call would time a cache hit: its net is reloaded uncached
        weights = Path(gnubg_nn.__file__).parent / "data" / "gnubg.weights"
        cache = "its evaluation cache on"
        if weights.is_file():
            gnubg_nn.net_use(gnubg_nn.net_load(str(weights), 0))
            cache = "evaluation cache off"
        version = getattr(getattr(gnubg_nn, "__version__", None), "version", "?")
        notes.append(f"reference: gnubg_nn {version} best_move at 0-ply (= XG 1-ply), {cache}")
    return sage, gnubg_nn, notes


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    network_args(ap, REFDATA / "checker.jsonl", "checker.jsonl to take positions from", "torch threads (default 1)")
    ap.add_argument("--positions", type=int, default=100, help="positions timed at 1- and 2-ply (default 100)")
    ap.add_argument("--three-ply", type=int, default=10, metavar="N", help="positions timed at 3-ply (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="time each decision this often, keep the best")
    ap.add_argument("--cube", action="store_true", help="also time cube decisions at 1, 2 (and 3) ply")
    ap.add_argument("--no-ref", action="store_true", help="skip the reference engines (bgsage, gnubg_nn)")
    ap.add_argument(
        "--filter", action="append", default=[], metavar="NAME",
        help="also time 2-/3-ply checker play with this move filter (tiny, narrow, large, huge or KEEP:MARGIN; "
        "repeatable); the default engine uses normal",
    )
    args = ap.parse_args(argv)

    import importlib.util

    # a .pt checkpoint plays through torch (one thread by --threads); the shipped .npz model never imports it
    rows = start(args) if importlib.util.find_spec("torch") else _rows(args.data)
    # a fixed, spread-out set: every k-th position of the file
    step = max(1, len(rows) // args.positions)
    chosen = rows[::step][: args.positions]
    items = [(Position.from_id(r["position"]), tuple(r["dice"])) for r in chosen]
    engine = Engine.load(args.checkpoint)
    # the same network with other move filters (the deeper plies' candidates): name -> engine
    filtered = {name: Engine.load(args.checkpoint, filters=parse_filters(name)) for name in args.filter}

    sage, gnubg_nn, notes = (None, None, ["references skipped (--no-ref)"]) if args.no_ref else reference_engines(
        args.threads
    )
    money = MatchState()
    gboards = {}
    if gnubg_nn is not None:
        # gnubg_nn's own board (2 x 25), made once per position outside the timing
        gboards = {p: gnubg_nn.board_from_position_id(p.gnubg_id()) for p, _ in items}

    # warm up: numba compilation, torch's first calls, the bear-off database
    for pos, dice in items[:5]:
        for ply in (1, 2):
            engine.best_move(pos, dice, ply, cubeless=True)
            if sage is not None:
                sage[ply].move(pos, dice, money)
                sage[-ply].move(pos, dice, money)
        if gnubg_nn is not None:
            gnubg_nn.best_move(gboards[pos], *dice)
    engine.evaluate(Position.from_points({6: 2, 1: 1}, {2: 2}))

    batch = np.stack([p.array() for p, _ in items[:21]])
    ref = statistics.median(timings(lambda: engine.base(batch), 1) for _ in range(200)) * 1000.0

    load = os.getloadavg()
    print(f"engine: {engine.describe()}")
    for note in notes:
        print(note)
    torch = sys.modules.get("torch")
    print(
        f"torch {'not loaded' if torch is None else f'threads {torch.get_num_threads()}'}, "
        f"{os.cpu_count()} CPUs, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"reference: one network call on 21 positions, median {ref:.3f} ms")
    print(f"{'decision':<22} {'positions':>9} {'median ms':>10} {'p90 ms':>8} {'mean ms':>8} {'x ref':>7}")

    def line(name: str, seconds: Sequence[float]) -> None:
        med, p90, mean = summary(seconds)
        print(f"{name:<22} {len(seconds):>9} {med:>10.2f} {p90:>8.2f} {mean:>8.2f} {med / ref:>7.1f}")

    # (what, bgbot's row, reference's row) -> the ratio of their medians, printed at the end
    ratios: list[tuple[str, str, str]] = []
    medians: dict[str, float] = {}

    def rows(times: dict[str, list[float]]) -> None:
        for name, secs in times.items():
            line(name, secs)
            medians[name] = float(np.median(secs))

    for ply in (1, 2, 3):
        subset = items if ply < 3 else items[:: max(1, len(items) // max(args.three_ply, 1))][: args.three_ply]
        if not subset:
            continue
        contenders: dict[str, Callable[[Item], object]] = {
            f"move {ply}-ply": lambda it, k=ply: engine.best_move(it[0], it[1], k, cubeless=True),
            f"move {ply}-ply cubeful": lambda it, k=ply: engine.best_move(it[0], it[1], k),
        }
        if ply > 1:
            for name, other in filtered.items():
                contenders[f"move {ply}-ply {name}"] = lambda it, k=ply, e=other: e.best_move(
                    it[0], it[1], k, cubeless=True
                )
                if sage is not None and ply in sage:
                    ratios.append((f"move {ply}-ply {name}", f"move {ply}-ply {name}", f"bgsage move {ply}-ply"))
        if sage is not None and ply in sage:
            contenders[f"bgsage move {ply}-ply"] = lambda it, b=sage[ply]: b.move(it[0], it[1], money)
            ratios.append((f"move {ply}-ply", f"move {ply}-ply", f"bgsage move {ply}-ply"))
            contenders[f"bgsage move {ply}-ply cubeful"] = lambda it, b=sage[-ply]: b.move(it[0], it[1], money)
            ratios.append((f"move {ply}-ply cubeful", f"move {ply}-ply cubeful", f"bgsage move {ply}-ply cubeful"))
        if gnubg_nn is not None and ply == 1:
            contenders["gnubg_nn move 0-ply"] = lambda it: gnubg_nn.best_move(gboards[it[0]], *it[1])
            ratios.append(("move 1-ply", "move 1-ply", "gnubg_nn move 0-ply"))
        rows(time_each(subset, contenders, args.repeat))
        if ply == 1:
            # the same with every candidate's notation read, as the CLI table does
            def with_text(p: Position, d: tuple[int, int]) -> list[str]:
                return [c.move for c in engine.best_move(p, d, 1, cubeless=True).candidates]

            secs = [timings(lambda p=p, d=d: with_text(p, d), args.repeat) for p, d in subset]
            line("move 1-ply+text", secs)
    if args.cube:
        for ply in (1, 2, 3):
            subset = items if ply < 3 else items[: args.three_ply]
            if not subset:
                continue
            contenders = {f"cube {ply}-ply": lambda it, k=ply: engine.cube_action(it[0], ply=k)}
            if sage is not None and ply in sage:
                contenders[f"bgsage cube {ply}-ply"] = lambda it, b=sage[ply]: b.decision(it[0], money)
                ratios.append((f"cube {ply}-ply", f"cube {ply}-ply", f"bgsage cube {ply}-ply"))
            rows(time_each(subset, contenders, args.repeat))

    if ratios:
        print("\nbgbot / reference, ratio of the medians (below 1: bgbot is faster)")
        for what, mine, theirs in ratios:
            print(f"{what:<12} bgbot {medians[mine] * 1000:8.2f} ms / {theirs:<20} {medians[theirs] * 1000:8.2f} ms"
                  f" = {medians[mine] / medians[theirs]:6.2f}")
    else:
        print("\nno reference ratios (see the reference lines above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
