"""Self-play training throughput: games per hour and positions evaluated per second.

Run from the repository root::

    .venv/bin/python benchmarks/train_speed.py [--hidden 80] [--seconds 30] [--repeat 3]

A fresh trainer (the full preset, with ``--hidden`` and ``--parallel`` overrides)
plays and learns for ``--seconds`` after a warm-up that pays for numba's
compilation and lets the first games finish; each of ``--repeat`` rounds reports
games finished per hour (learning included), candidate positions evaluated
per second and the share of time spent in each stage (one profiled round).
The median round is printed last.  No reference trainer exists on this
machine; the anchors of the issue are ~20,000 games/hour for numpy TD-Gammon
re-implementations and ~4,000 for plain Python.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.config import load_config
from bgbot.eval.nets import load_checkpoint
from training.config import TrainConfig
from training.selfplay import Trainer


def one_round(cfg: TrainConfig, seconds: float, profile: bool, start: str | None) -> tuple[float, float, str]:
    trainer = Trainer(cfg, tempfile.mkdtemp())
    if start:  # a trained network plays realistic games (their length sets the games/hour)
        trainer.net.load_state_dict(load_checkpoint(start).net.state_dict())
    evaluated = 0
    orig_eval = trainer.net.forward_probs

    def counting(x):  # type: ignore[no-untyped-def]
        nonlocal evaluated
        evaluated += x.shape[0]
        return orig_eval(x)

    warm_until = time.perf_counter() + min(10.0, seconds / 2)
    while time.perf_counter() < warm_until:  # compile, and reach a steady mix of game lengths
        trainer.step()
    trainer.net.forward_probs = counting  # type: ignore[method-assign]
    prof = cProfile.Profile() if profile else None
    g0 = trainer.games_done
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    while time.perf_counter() - t0 < seconds:
        trainer.step()
    if prof:
        prof.disable()
    dt = time.perf_counter() - t0
    games_h = (trainer.games_done - g0) / dt * 3600
    report = ""
    if prof:
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        rows = sorted(stats.items(), key=lambda kv: -kv[1][3])[:10]
        report = "\n".join(f"  {100 * v[3] / dt:5.1f}%  {k[2]} ({Path(k[0]).name})" for k, v in rows)
    return games_h, evaluated / dt, report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=None, help="hidden units (default: the full preset's)")
    ap.add_argument("--parallel", type=int, default=None, help="parallel games (default: the full preset's)")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--from", dest="start", help="start from this checkpoint's weights (same network size)")
    args = ap.parse_args()
    over = ["eval_every=0"]
    if args.hidden:
        over.append(f"hidden={args.hidden}")
    if args.parallel:
        over.append(f"parallel_games={args.parallel}")
    cfg = load_config(TrainConfig, Path(__file__).resolve().parents[1] / "configs" / "full.toml", over)
    print(f"network: encoding v{cfg.encoding_version}, hidden {cfg.hidden}, {cfg.parallel_games} parallel games, "
          f"weights {'from ' + args.start if args.start else 'fresh'}")
    results = []
    for r in range(args.repeat):
        games_h, evals, report = one_round(cfg, args.seconds, profile=(r == 0), start=args.start)
        results.append((games_h, evals))
        print(f"round {r + 1}: {games_h:,.0f} games/hour, {evals:,.0f} positions evaluated/s")
        if report:
            print("where the time goes (cumulative, profiled round):\n" + report)
    print(f"median: {statistics.median(g for g, _ in results):,.0f} games/hour, "
          f"{statistics.median(e for _, e in results):,.0f} positions evaluated/s")


if __name__ == "__main__":
    main()
