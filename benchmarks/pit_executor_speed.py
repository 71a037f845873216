"""The pit on the executor: games per second with 1 and 2 local workers and on a local Ray cluster.

Each duel (``--a`` vs ``--b``, ``--games`` money games with the cube, duplicate dice, seed ``--seed``) is
played on each executor after a short warm-up on it (8 games: worker processes started, numba compiled,
the Ray cluster up), so the figure is the steady speed, not the start.  The reports of every executor
must be equal (checked and printed).  Bytes per task: a pit task pickled (what goes to a worker) and its
result as JSON (what comes back and what a ``--resume`` folder stores).

Usage::

    python benchmarks/pit_executor_speed.py                          # bgbot:ply=1 vs pubeval, 400 games
    python benchmarks/pit_executor_speed.py --a pubeval --b random --games 2000
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time

from _common import ROOT  # noqa: F401  (puts the checkout on sys.path)

from bgbot.engine.executor import run_tasks
from bgbot.play.bots import parse_bot_spec
from bgbot.play.pit import PitConfig, PitReport, pit_tasks, run_pit


def figures(r: PitReport) -> tuple[object, ...]:
    return (r.games, r.ppg, r.ppg_se, r.win_rate, r.cube, r.mean_turns, r.decisions)


def main(argv: list[str] | None = None) -> int:
    """Run the duel on each executor and print one line per executor."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", default="bgbot:ply=1")
    ap.add_argument("--b", default="pubeval")
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pairs-per-task", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args(argv)
    print(
        f"{args.a} vs {args.b}: {args.games} money games with the cube, seed {args.seed}, "
        f"{args.pairs_per_task} pairs a task; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    runs = [("local, 1 worker (this process)", "local", 1), ("local, 2 workers", "local", 2)]
    if not args.no_ray:
        runs.append(("Ray, local cluster of 2 CPUs", "ray", 2))
    base: float | None = None
    first: tuple[object, ...] | None = None
    for label, executor, workers in runs:
        if executor == "ray":
            import ray

            t0 = time.perf_counter()
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            print(f"  (ray.init: {time.perf_counter() - t0:.1f} s)")
        run_pit(args.a, args.b, PitConfig(games=8, seed=args.seed + 1, executor=executor, workers=workers))
        cfg = PitConfig(
            games=args.games, seed=args.seed, executor=executor, workers=workers, pairs_per_task=args.pairs_per_task
        )
        r = run_pit(args.a, args.b, cfg)
        gps = r.games / r.elapsed_s
        base = base or gps
        first = first or figures(r)
        same = "same results" if figures(r) == first else "DIFFERENT RESULTS"
        print(
            f"{label:<34} {r.games:>5} games {r.elapsed_s:7.1f} s {gps:7.2f} games/s  x{gps / base:.2f}  "
            f"A ppg {r.ppg:+.3f} +- {r.ppg_se:.3f}  {same}",
            flush=True,
        )
    tasks, blobs = pit_tasks(
        parse_bot_spec(args.a), parse_bot_spec(args.b), PitConfig(games=2 * args.pairs_per_task, seed=args.seed)
    )
    result = dict(run_tasks(tasks, None, workers=1, models=blobs, inline=True))[0]
    print(
        f"a task: {len(pickle.dumps(tasks[0], protocol=pickle.HIGHEST_PROTOCOL))} bytes pickled; its result "
        f"({2 * args.pairs_per_task} games) {len(json.dumps(result))} bytes as JSON; models shipped: "
        f"{[len(b.data) for b in blobs]} bytes"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
